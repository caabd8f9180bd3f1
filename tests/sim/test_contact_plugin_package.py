"""A third-party contact solver package (examples/contact_plugin), pip-installed, is found through
its entry point alone, runs under its name and passes treedyn.testing.check_contact_solver: the
whole path a contact-solver author takes."""

import os
import subprocess
import sys

import pytest
from support.packages import pip_installed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGIN = os.path.join(ROOT, "examples", "contact_plugin")

CHECK = r"""
import warnings, numpy as np, treedyn as td
from treedyn.sim.contact_solvers import CONTACT_SOLVERS
from treedyn.testing import check_contact_solver
with warnings.catch_warnings():
    warnings.simplefilter("error")          # the plugin loads without warnings
    names = td.available_contact_solvers()
assert "example-osqp" in names, names
cls = CONTACT_SOLVERS["example-osqp"]
assert cls.__module__ == "treedyn_example_contact_plugin", cls.__module__
print("checked", check_contact_solver("example-osqp"))
scene = td.scenes.centipede(2)
sim = td.ContactSimulator(scene.model, 1e-3, contact_solver="example-osqp")
state = scene.initial_state()
step = sim.step(state, tau=scene.tau(0.0, state.q, state.v))
print("contacts", step.n_contacts, type(sim.contact_solver).__name__)
"""


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory):
    with pip_installed(PLUGIN, "treedyn-example-contact-plugin", tmp_path_factory.mktemp("contact_plugin")):
        yield


def test_contact_plugin_found_through_its_entry_point_passes_conformance(installed_plugin):
    # a fresh interpreter outside the repository; one BLAS thread (the plugin factors matrices of tens of
    # rows, where a second BLAS thread on a busy 2-core machine only waits)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    r = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, cwd=os.path.expanduser("~"), env=env
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checked 9" in r.stdout and "contacts 4 OsqpAdmmContactSolver" in r.stdout, r.stdout


def test_cli_lists_the_contact_plugin(installed_plugin):
    r = subprocess.run([sys.executable, "-m", "treedyn", "solvers"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "example-osqp" in r.stdout and "proxqp" in r.stdout


def test_the_plugins_own_tests_pass_installed(installed_plugin, tmp_path):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    tests = os.path.join(PLUGIN, "tests")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), tests],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert r.returncode == 0 and " passed" in r.stdout and "skipped" not in r.stdout, r.stdout + r.stderr
