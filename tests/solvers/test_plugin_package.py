"""A third-party plugin package (examples/plugin), pip-installed, is found through its entry point
alone and passes the conformance checks: the whole path a plugin author takes."""

import os
import subprocess
import sys

import pytest
from support.packages import pip_installed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGIN = os.path.join(ROOT, "examples", "plugin")

CHECK = r"""
import warnings, numpy as np, treedyn as td
from treedyn.testing import check_solver
from treedyn.solvers.registry import list_solver_classes
with warnings.catch_warnings():
    warnings.simplefilter("error")          # the plugin loads without warnings
    names = td.available_solvers()
assert "example-dense" in names, names
cls = list_solver_classes()["example-dense"]
assert cls.__module__ == "treedyn_example_plugin", cls.__module__
print("checked", check_solver(cls, rtol=None))
m = td.scenes.chain(5)
s = td.make_solver("example-dense", m)
print("qdd", s.forward_dynamics(np.zeros(5), np.zeros(5), np.ones(5)).shape)
"""


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory):
    with pip_installed(PLUGIN, "treedyn-example-plugin", tmp_path_factory.mktemp("plugin")):
        yield


def test_plugin_found_through_its_entry_point_passes_conformance(installed_plugin):
    # a fresh interpreter, with the repository's examples/ not on sys.path
    r = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, cwd=os.path.expanduser("~"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checked 4" in r.stdout and "qdd (5,)" in r.stdout


def test_cli_lists_the_plugin(installed_plugin):
    r = subprocess.run([sys.executable, "-m", "treedyn", "solvers"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "example-dense" in r.stdout and "aba" in r.stdout
