"""An example package (examples/...) pip-installed for a test module: the path a plugin author takes."""

import shutil
import subprocess
import sys
from contextlib import contextmanager

import pytest


@contextmanager
def pip_installed(source, distribution: str, workdir):
    """``source`` (a folder with a pyproject.toml) installed from a copy in ``workdir`` (setuptools writes
    its egg-info next to the sources, and a test run writes nothing into the repository), uninstalled
    after. A failed install fails the test, naming pip's output (setuptools, a test extra, builds it)."""
    copy = workdir / "package"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    pip = [sys.executable, "-m", "pip"]
    r = subprocess.run(
        pip + ["install", "--no-deps", "--no-build-isolation", "--quiet", str(copy)], capture_output=True, text=True
    )
    if r.returncode != 0:
        pytest.fail(f"could not pip-install {distribution}:\n{r.stdout}\n{r.stderr}")
    try:
        yield
    finally:
        subprocess.run(pip + ["uninstall", "--yes", "--quiet", distribution], capture_output=True)
