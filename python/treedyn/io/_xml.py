"""Reading an XML model file (or string) into an ElementTree, keeping each element's line.

The parsing itself is the standard library's expat parser feeding ElementTree's TreeBuilder; the
only addition is the line where each element starts, so that loaders can say *where* a problem is
("panda.urdf, line 120: joint 'j1' ..."), and a ValueError naming the file instead of expat's bare
error when the XML is malformed. The lines are found when first asked for, by parsing the text
again (element k of the document, in document order, starts on the k-th start tag's line): a
load that goes well never asks, and recording a line per element during the parse was a tenth
of the time of loading a large URDF.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from xml.parsers import expat

from ._errors import ModelFileError
from ._files import Budget

__all__ = ["ModelFileError", "XMLDocument", "read_xml", "parse_xml_text", "file_errors"]


class XMLDocument:
    """A parsed file: its root element, a display name (the path, or "<URDF string>"), the folder
    relative file names are resolved against, and the line where each element starts."""

    def __init__(self, root: ET.Element, source: str, base_dir: str, data: bytes, utf8: bool):
        self.root = root
        self.source = source
        self.base_dir = base_dir
        # the elements in document order as parsed (the loaders move some later; the list also
        # keeps each one alive, so that no other object takes its id), and what was parsed
        self._elements = list(root.iter())
        self._data, self._utf8 = data, utf8
        self._lines: dict[int, int] | None = None

    def line(self, element: ET.Element) -> int | None:
        if self._lines is None:
            starts = _start_lines(self._data, self._utf8)
            self._lines = dict(zip(map(id, self._elements), starts))
        return self._lines.get(id(element))

    def error(self, message: str, element: ET.Element | None = None) -> ModelFileError:
        return ModelFileError(message, self.source, self.line(element) if element is not None else None)


@contextmanager
def file_errors(err, where):
    """Inside a loader: an unexpected ValueError / ArithmeticError / LookupError (a value the checks
    missed) or RecursionError (a structure nested too deeply) becomes a ModelFileError made by
    ``err(message, element)`` for ``where()``, the element being read, so that every failure of a
    load names the file and the line."""
    try:
        yield
    except ModelFileError:
        raise
    except RecursionError:
        raise err("the elements are nested too deeply to read", where()) from None
    except (ValueError, ArithmeticError, LookupError) as e:
        raise err(f"{type(e).__name__}: {e}", where()) from e


def _looks_like_xml(text: str) -> bool:
    return text.lstrip().startswith(("<", "\ufeff<"))


def _exists(path: str) -> bool:
    try:
        return os.path.exists(path)
    except (ValueError, OSError):  # a NUL byte, a name too long
        return False


_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def _looks_like_xml_bytes(data: bytes) -> bool:
    return data.lstrip().startswith((b"<",) + _BOMS)


def read_xml(path_or_xml, kind: str, budget: Budget | None = None) -> XMLDocument:
    """Parse ``path_or_xml``: a path (str or os.PathLike), or the XML text itself (a str or bytes
    starting with '<' after whitespace). ``kind`` ("URDF", "MJCF") only names things in messages.
    A path is read through ``budget`` (the load's: treedyn.io._files; a new one when None): a
    regular file only, within the size limit.
    """
    if isinstance(path_or_xml, (bytes, bytearray)):
        data = bytes(path_or_xml)
        if _looks_like_xml_bytes(data):  # XML bytes: expat honours their encoding declaration
            return parse_xml_text(data, f"<{kind} string>", os.getcwd())
        path_or_xml = os.fsdecode(data)
    if isinstance(path_or_xml, os.PathLike):
        path_or_xml = os.fspath(path_or_xml)
    if not isinstance(path_or_xml, str):
        raise TypeError(f"{kind} source must be a file path or an XML string, got {type(path_or_xml).__name__}")
    text_source = f"<{kind} string>"
    if _looks_like_xml(path_or_xml) or ("<" in path_or_xml and not _exists(path_or_xml)):
        return parse_xml_text(path_or_xml, text_source, os.getcwd())
    path = path_or_xml
    if not path.strip():
        raise ModelFileError(
            f"the {kind} source is {'empty' if not path else 'blank'} (expected a file path or XML text)", text_source
        )
    data = (budget or Budget()).read_xml(path, f"{kind} file")
    return parse_xml_text(data, path, os.path.dirname(os.path.abspath(path)))


def parse_xml_text(data, source: str, base_dir: str) -> XMLDocument:
    """Parse XML text (str or bytes) with expat into an ElementTree, recording element lines."""
    text = data
    if isinstance(data, str):
        # the text is handed to expat as UTF-8, whatever its encoding declaration says
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError as e:  # a lone surrogate such as '\ud800'
            line = data.count("\n", 0, e.start) + 1
            column = e.start - (data.rfind("\n", 0, e.start) + 1) + 1
            raise ModelFileError(
                f"the text contains {data[e.start]!r} (column {column}), which is not a "
                f"character (a lone surrogate): {e.reason}",
                source,
                line,
            ) from None
    parser = _parser(isinstance(text, str))
    builder = ET.TreeBuilder()
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise ModelFileError(
            f"malformed XML: {expat.ErrorString(e.code)} (column {e.offset + 1})", source, e.lineno
        ) from None
    except LookupError as e:  # encoding="bogus" in the XML declaration
        raise ModelFileError(
            f"the XML declaration names an encoding Python does not know: {e}", source, parser.CurrentLineNumber
        ) from None
    except (UnicodeError, ValueError) as e:  # bytes the declared encoding cannot decode; multi-byte codecs
        raise ModelFileError(
            f"the text cannot be decoded in its declared encoding: {e}", source, parser.CurrentLineNumber
        ) from None
    root = builder.close()
    if root is None:
        raise ModelFileError("no XML element found", source)
    return XMLDocument(root, source, base_dir, data, isinstance(text, str))


def _parser(utf8: bool):
    """An expat parser; ``utf8``: the text was a str, handed over as UTF-8 whatever its declaration."""
    return expat.ParserCreate("utf-8") if utf8 else expat.ParserCreate()


def _start_lines(data: bytes, utf8: bool) -> list[int]:
    """The line of each start tag of ``data`` (parsed once already), in document order."""
    parser, lines = _parser(utf8), []
    parser.StartElementHandler = lambda tag, attrs: lines.append(parser.CurrentLineNumber)
    parser.Parse(data, True)
    return lines
