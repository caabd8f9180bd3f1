"""python -m benchmarks ascher (benchmarks/ascher.py): --quick runs Table 1 at QUICK_R only and
draws the same figure (here at two easy r values, for two chain lengths: two panels sharing y).
The counts themselves are checked in tests/test_aba_modified.py."""

import csv
import importlib.util

from figcheck import assert_readable

from benchmarks import ascher


def test_quick_runs_table1_at_quick_r_and_draws_a_readable_figure(tmp_path, monkeypatch, saved_figures, capsys):
    monkeypatch.setattr(ascher, "QUICK_R", (0.1, 0.05))  # fast stand-ins for (0.1, 0.01, 0.0025)
    assert ascher.main(["--quick", "--table", "1", "--links", "2", "3", "--out", str(tmp_path)]) == 0
    with open(tmp_path / "ascher_table1.csv") as f:
        rows = list(csv.DictReader(f))
    assert {(int(r["links"]), float(r["r"])) for r in rows} == {(n, r) for n in (2, 3) for r in (0.1, 0.05)}
    assert all(int(r[m]) > 0 for r in rows for m in ascher.METHODS)  # every run reached 10 s
    has_mpl = importlib.util.find_spec("matplotlib") is not None
    assert (tmp_path / "ascher_table1.png").exists() == has_mpl
    assert_readable(saved_figures, 1 if has_mpl else 0)  # units, legends, nothing clipped (tests/figcheck.py)
