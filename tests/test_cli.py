"""The treedyn command (python/treedyn/cli.py)."""
import json

import pytest

from treedyn.cli import main


def test_solvers_lists_the_builtins(capsys):
    assert main(["solvers", "-v"]) == 0
    out = capsys.readouterr().out
    assert "aba" in out and "crba-cholesky" in out and "batch" in out


@pytest.mark.parametrize("spec", ["chain:12", "tree:15", "tree-all:10", "chain-fb:6"])
def test_compare_runs_every_solver_and_they_agree(capsys, spec):
    assert main(["compare", spec, "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    lines = [l for l in out.splitlines() if l.startswith(("aba ", "crba-cholesky "))]
    assert len(lines) == 2 and all(l.rstrip().endswith("yes") for l in lines)


def test_compare_batched(capsys):
    assert main(["compare", "chain:8", "--batch", "16", "--repeat", "2", "--threads", "2"]) == 0
    assert "batch of 16" in capsys.readouterr().out


def test_bad_model_spec_is_a_clear_error(capsys):
    assert main(["compare", "blob:3"]) == 2
    assert "unknown kind 'blob'" in capsys.readouterr().err
    assert main(["compare", "chain:x"]) == 2


def test_info_is_json(capsys):
    assert main(["info"]) == 0
    assert json.loads(capsys.readouterr().out)["eigen_version"].startswith("3.4")
