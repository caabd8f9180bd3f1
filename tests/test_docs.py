"""The documentation runs: every ```python block of README.md and of docs/**/*.md is executed on its
own, in a fresh namespace and a temporary working directory, as a reader would paste it into a new
session. A failure names the file and the line of the block.

Two markers, on the line right before a block, change that (they apply to that block only):

- ``<!-- not-run: reason -->``: the block is not run here (it starts processes, or is a fragment
  of a larger program); the reason is required, and such blocks are kept few.
- ``<!-- requires: torch, jax -->``: the block runs only where those modules import, and is
  skipped otherwise (``pytest.importorskip``), as for an optional extra.

Bash and other blocks are not run; relative links between the pages must lead to files that exist.
"""

import os
import re
import signal
import sys
import warnings

import pytest
from support.docs import MAX_NOT_RUN, MAX_README_LINES, README, ROOT, TIMEOUT_S, blocks, doc_files, parse

import treedyn as td
from treedyn.io import IgnoredElementWarning


def _all_blocks():
    return [
        (path.relative_to(ROOT).as_posix(), *block) for path in doc_files() for block in parse(path.read_text("utf-8"))
    ]


ALL = _all_blocks()


def test_the_markers_apply_to_the_next_block_only():
    text = (
        "# t\n```python\na = 1\n```\n<!-- not-run: needs a GPU -->\n```python\nb = 2\n```\n"
        "<!-- not-run: x -->\n\nsome words\n```python\nc = 3\n```\n```bash\nls\n```\n"
        "<!-- requires: torch, jax -->\n```python\nd = 4\n```\n"
    )
    assert parse(text) == [
        (3, "a = 1\n", None, ()),
        (7, "b = 2\n", "needs a GPU", ()),
        (13, "c = 3\n", None, ()),
        (20, "d = 4\n", None, ("torch", "jax")),
    ]
    assert blocks(text)[1] == (7, "b = 2\n", "needs a GPU")


def test_every_python_block_is_found_and_few_are_not_run():
    for path in doc_files():
        text = path.read_text("utf-8")
        assert len(parse(text)) == text.count("```python"), path  # the pattern misses no block
    assert len(ALL) >= 30
    not_run = [(f"{name}:{line}", reason) for name, line, _, reason, _ in ALL if reason is not None]
    assert all(reason for _, reason in not_run), "a not-run marker must give its reason"
    assert len(not_run) <= MAX_NOT_RUN, not_run


def test_the_readme_fits_on_a_screen_or_two_and_starts_with_the_two_commands():
    lines = README.read_text("utf-8").splitlines()
    assert len(lines) < MAX_README_LINES, len(lines)
    assert lines[2] == "```bash"
    assert lines[3].startswith("pip install . && treedyn compare chain:100")
    assert lines[4].startswith('pip install ".[test]" && pytest -n auto')


LINK = re.compile(r"\]\((?!https?://|mailto:)(?P<target>[^)#\s]*)(?:#(?P<anchor>[^)\s]*))?\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(?P<title>.+?)[ \t]*#*$", re.M)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def anchors(text):
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to
    hyphens, "-1", "-2", ... after repeats (headings inside code blocks are not headings)."""
    seen, found = {}, set()
    for m in HEADING.finditer(FENCE.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", m.group("title").strip().lower().replace("`", "")).replace(" ", "-")
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def test_relative_links_lead_to_files_and_headings_that_exist():
    broken = []
    for path in doc_files():
        for m in LINK.finditer(FENCE.sub("", path.read_text("utf-8"))):
            target = path.parent / m.group("target") if m.group("target") else path
            if not target.exists():
                broken.append(f"{path.relative_to(ROOT)}: {m.group('target')}")
            elif (
                m.group("anchor")
                and target.suffix == ".md"
                and m.group("anchor") not in anchors(target.read_text("utf-8"))
            ):
                broken.append(f"{path.relative_to(ROOT)}: {m.group('target')}#{m.group('anchor')}")
    assert broken == []


def test_anchors_follow_github():
    text = (
        "# A `td.simulate` page\n## The derivatives' C++ side\n## 5. Look at it\n## Notes\n## Notes\n```\n# not\n```\n"
    )
    assert anchors(text) == {"a-tdsimulate-page", "the-derivatives-c-side", "5-look-at-it", "notes", "notes-1"}


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout(f"the block ran longer than {TIMEOUT_S} s")


@pytest.mark.parametrize(
    "name, line, code, reason, requires",
    [pytest.param(*block, id=f"{block[0]}:{block[1]}") for block in ALL],
)
def test_the_python_block_runs(name, line, code, reason, requires, tmp_path, monkeypatch):
    if reason is not None:
        pytest.skip(f"not run: {reason}")
    for module in requires:
        pytest.importorskip(module)
    monkeypatch.chdir(tmp_path)  # a block may write files: never into the repository
    monkeypatch.setenv("MPLBACKEND", "Agg")  # figures are drawn, never shown
    namespace = {"__name__": "__docs__"}
    threads = td.get_num_threads()  # a block may set the process-wide thread count: put it back
    use_alarm = hasattr(signal, "SIGALRM") and os.name == "posix"
    if use_alarm:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(TIMEOUT_S)
    try:
        with warnings.catch_warnings():
            # an example must not fail quietly: a simulation that stops early is an error here
            warnings.simplefilter("error", td.SimulationWarning)
            warnings.simplefilter("ignore", IgnoredElementWarning)  # URDFs' <gazebo> tags, said once
            exec(compile(code, f"{name}, line {line}", "exec"), namespace)
    except Exception as e:  # noqa: BLE001 - report which block failed and how
        pytest.fail(f"the python block at {name}:{line} raised {type(e).__name__}: {e}")
    finally:
        td.set_num_threads(threads)
        if use_alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
