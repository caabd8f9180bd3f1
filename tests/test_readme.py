"""README.md: every ```python block runs, top to bottom in one namespace (as a reader would type
them in one session), except a block right after a ``<!-- not-run: reason -->`` line; those are
counted and kept few."""

import os
import re
import warnings

import pytest

import treedyn as td
from treedyn.io import IgnoredElementWarning

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "README.md")
BLOCK = re.compile(r"(?:<!--\s*not-run:\s*(?P<reason>[^\n]*?)\s*-->[ \t]*\n)?```python\n(?P<code>.*?)^```", re.S | re.M)
MAX_NOT_RUN = 2


def blocks(text=None):
    """[(line of the block's first code line, code, reason it is not run or None)]"""
    if text is None:
        with open(README, encoding="utf-8") as f:
            text = f.read()
    return [
        (text.count("\n", 0, m.start("code")) + 1, m.group("code"), m.group("reason")) for m in BLOCK.finditer(text)
    ]


def test_the_not_run_marker_applies_to_the_next_block_only():
    text = (
        "# t\n```python\na = 1\n```\n<!-- not-run: needs a GPU -->\n```python\nb = 2\n```\n"
        "<!-- not-run: x -->\n\nsome words\n```python\nc = 3\n```\n```bash\nls\n```\n"
    )
    assert blocks(text) == [(3, "a = 1\n", None), (7, "b = 2\n", "needs a GPU"), (13, "c = 3\n", None)]


def test_the_readme_has_python_blocks_and_few_are_not_run():
    found = blocks()
    with open(README, encoding="utf-8") as f:
        assert len(found) == f.read().count("```python")  # the pattern misses no block
    assert len(found) >= 5
    not_run = [(line, reason) for line, _, reason in found if reason is not None]
    assert all(reason for _, reason in not_run), "a not-run marker must give its reason"
    assert len(not_run) <= MAX_NOT_RUN, not_run


def test_every_python_block_of_the_readme_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a block may write files
    namespace = {"__name__": "readme"}
    ran = 0
    for line, code, reason in blocks():
        if reason is not None:
            continue
        with warnings.catch_warnings():
            # a README example must not fail quietly: a simulation that stops early is an error here
            warnings.simplefilter("error", td.SimulationWarning)
            warnings.simplefilter("ignore", IgnoredElementWarning)  # UR5's <gazebo> tags, said once
            try:
                exec(compile(code, f"README.md, line {line}", "exec"), namespace)
            except Exception as e:  # noqa: BLE001 - report which block failed and how
                pytest.fail(f"the README's python block at line {line} raised {type(e).__name__}: {e}")
        ran += 1
    assert ran >= 5
    assert namespace["res"].success  # the simulate example reached t_end
