"""cmake/compile_cache.py, the compiler launcher of builds without ccache, with a stand-in compiler (a
script that writes its object and depfile and counts its runs): a unit compiled once is taken from
the cache the second time, and compiled again when its source, a header it read or its command line
changes — never a stale object."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "cmake" / "compile_cache.py"

# the stand-in: "compile" src into out (its bytes and its headers' bytes), write the depfile, count the run
COMPILER = """import sys
args = sys.argv[1:]
out, dep, src = (args[args.index(f) + 1] for f in ("-o", "-MF", "-c"))
headers = [a[2:] for a in args if a.startswith("-H")]
with open(out, "w") as f:
    f.write(open(src).read() + "".join(open(h).read() for h in headers) + " ".join(a for a in args if a.startswith("-D")))
with open(dep, "w") as f:
    f.write(out + ": " + src + " " + " \\\\\\n ".join(h.replace(" ", "\\\\ ") for h in headers) + "\\n")
with open("runs", "a") as f:
    f.write("x")
"""


@pytest.fixture
def unit(tmp_path):
    os.chdir(tmp_path)
    (tmp_path / "cc.py").write_text(COMPILER)
    (tmp_path / "a.cpp").write_text("int a;")
    (tmp_path / "my header.h").write_text("#define A 1")

    def compile_(*extra):
        cmd = [sys.executable, str(LAUNCHER), str(tmp_path / "cache"), "gcc 12", "--", sys.executable, "cc.py"]
        cmd += [*extra, "-H" + str(tmp_path / "my header.h"), "-o", "a.o", "-MD", "-MF", "a.o.d", "-c", "a.cpp"]
        assert subprocess.call(cmd) == 0
        runs = (tmp_path / "runs").read_text().count("x") if (tmp_path / "runs").exists() else 0
        return runs, (tmp_path / "a.o").read_text(), (tmp_path / "a.o.d").read_text()

    return tmp_path, compile_


def test_a_unit_is_compiled_once_then_taken_from_the_cache(unit):
    path, compile_ = unit
    first = compile_()
    assert first[0] == 1 and first[1] == "int a;#define A 1"
    (path / "a.o").unlink(), (path / "a.o.d").unlink()  # (scikit-build-core's wipe of CMakeFiles/)
    again = compile_()
    assert again == first  # not compiled: the same object and depfile back


def test_a_changed_source_header_or_flag_compiles_again(unit):
    path, compile_ = unit
    compile_()
    (path / "my header.h").write_text("#define A 2")  # (a header it read: its name has a space)
    runs, obj, _ = compile_()
    assert runs == 2 and obj.endswith("#define A 2")
    (path / "a.cpp").write_text("int b;")
    runs, obj, _ = compile_()
    assert runs == 3 and obj.startswith("int b;")
    runs, obj, _ = compile_("-DFAST")
    assert runs == 4 and obj.endswith("-DFAST")
    runs, obj, _ = compile_()  # (back to an earlier key whose header and source still match: from the cache)
    assert runs == 4 and obj == "int b;#define A 2"


def test_a_failed_compile_fails_and_stores_nothing(tmp_path):
    os.chdir(tmp_path)
    (tmp_path / "a.cpp").write_text("int a;")
    (tmp_path / "fail.py").write_text("raise SystemExit(3)")
    cmd = [sys.executable, str(LAUNCHER), str(tmp_path / "cache"), "gcc", "--", sys.executable, "fail.py"]
    assert subprocess.call(cmd + ["-o", "a.o", "-MF", "a.o.d", "-c", "a.cpp"]) == 3
    assert not (tmp_path / "cache").exists()
