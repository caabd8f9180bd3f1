"""The documentation's code blocks: README.md and every page under docs/, and the python blocks of
each with their markers (``<!-- not-run: reason -->``, ``<!-- requires: module -->``), for
tests/test_docs.py and for the tests that run a not-run block themselves (tests/tools/test_distributed.py)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
BLOCK = re.compile(
    r"(?:<!--\s*(?P<marker>not-run|requires):\s*(?P<arg>[^\n]*?)\s*-->[ \t]*\n)?```python[ \t]*\n(?P<code>.*?)^```",
    re.S | re.M,
)
MAX_NOT_RUN = 4
MAX_README_LINES = 200
TIMEOUT_S = 300  # a block that runs longer has lost its way (the longest takes a few seconds)


def doc_files():
    """README.md and every Markdown page under docs/, in a stable order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def parse(text):
    """[(line of the block's first code line, code, reason it is not run or None, modules it
    requires)] of one page's python blocks."""
    found = []
    for m in BLOCK.finditer(text):
        reason = m.group("arg") if m.group("marker") == "not-run" else None
        requires = tuple(r.strip() for r in m.group("arg").split(",")) if m.group("marker") == "requires" else ()
        found.append((text.count("\n", 0, m.start("code")) + 1, m.group("code"), reason, requires))
    return found


def blocks(text=None):
    """[(line, code, reason it is not run or None)] of one text, or of every page (README.md and
    docs/) when text is None: the form tests/tools/test_distributed.py reads to find the Dask example."""
    if text is not None:
        return [(line, code, reason) for line, code, reason, _ in parse(text)]
    return [(line, code, reason) for path in doc_files() for line, code, reason, _ in parse(path.read_text("utf-8"))]
