"""The C++ SDK (treedyn.sdk, docs/plugins.md): the installed headers and CMake package, and the model
capsule a plugin reads, named after the ABI and keeping the model alive."""

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import treedyn as td
from treedyn import _core, sdk


def _installed():
    try:
        return td.get_include(), td.get_cmake_dir()
    except FileNotFoundError as e:  # a source tree on PYTHONPATH has no SDK: say why, never pass silently
        pytest.skip(f"treedyn is not installed here: {e}")


def test_headers_and_cmake_package_are_installed():
    include, cmake_dir = _installed()
    assert os.path.isfile(os.path.join(include, "treedyn", "sdk", "abi.hpp"))
    assert os.path.isfile(os.path.join(include, "treedyn", "abi.hpp"))  # the ABI 1 path, forwarding to sdk/
    assert os.path.isfile(os.path.join(include, "treedyn", "algorithms", "aba.hpp"))
    assert os.path.isfile(os.path.join(cmake_dir, "treedynConfig.cmake"))
    assert os.path.isfile(os.path.join(cmake_dir, "treedynConfigVersion.cmake"))
    with open(os.path.join(include, "treedyn", "sdk", "abi.hpp"), encoding="utf-8") as f:
        assert f"#define TREEDYN_ABI_VERSION {sdk.ABI_VERSION}\n" in f.read()


def test_capsule_is_named_after_the_abi_and_holds_the_model():
    model = td.scenes.chain(4)
    capsule = sdk.model_capsule(model, sdk.ABI_VERSION)
    assert type(capsule).__name__ == "PyCapsule"
    assert sdk.MODEL_CAPSULE_NAME.startswith(f"treedyn.Model<double>;abi={sdk.ABI_VERSION};stdlib=")
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    assert get_name(capsule).decode() == sdk.MODEL_CAPSULE_NAME


def test_capsule_keeps_the_core_model_alive():
    core = td.scenes.chain(3).core
    before = sys.getrefcount(core)
    capsule = _core.model_capsule(core)
    assert sys.getrefcount(core) == before + 1
    del capsule
    assert sys.getrefcount(core) == before


def test_capsule_refuses_another_abi_and_non_models():
    model = td.scenes.chain(2)
    with pytest.raises(
        RuntimeError, match=rf"ABI {sdk.ABI_VERSION + 1}, the installed treedyn has ABI {sdk.ABI_VERSION}"
    ):
        sdk.model_capsule(model, sdk.ABI_VERSION + 1)
    with pytest.raises(TypeError, match="treedyn.Model"):
        sdk.model_capsule(model.core)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_find_package_gives_the_headers_target(tmp_path):
    # configure a project that uses treedyn::headers: the CMake package resolves (Eigen included)
    # and the headers compile (abi.hpp's version checked against Python's by a static_assert)
    include, cmake_dir = _installed()
    (tmp_path / "CMakeLists.txt").write_text(
        textwrap.dedent(f"""
        cmake_minimum_required(VERSION 3.18)
        project(uses_treedyn LANGUAGES CXX)
        find_package(treedyn 0.1 CONFIG REQUIRED)
        if(NOT treedyn_ABI_VERSION EQUAL {sdk.ABI_VERSION})
          message(FATAL_ERROR "treedyn_ABI_VERSION ${{treedyn_ABI_VERSION}}")
        endif()
        add_library(uses OBJECT uses.cpp)
        target_link_libraries(uses PRIVATE treedyn::headers)
        """)
    )
    (tmp_path / "uses.cpp").write_text(
        textwrap.dedent(f"""
        #include "treedyn/abi.hpp"
        #include "treedyn/model/model.hpp"
        static_assert(TREEDYN_ABI_VERSION == {sdk.ABI_VERSION}, "ABI");
        int bodies() {{ return treedyn::Model<double>().N; }}
        """)
    )
    build = tmp_path / "build"
    env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL="2")
    r = subprocess.run(
        [
            "cmake",
            "-S",
            str(tmp_path),
            "-B",
            str(build),
            f"-Dtreedyn_DIR={cmake_dir}",
            f"-DPython_EXECUTABLE={sys.executable}",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    if r.returncode != 0 and "Eigen3" in r.stdout + r.stderr:
        pytest.skip("no Eigen for a plugin build here (pip install cmeel-eigen)")
    assert r.returncode == 0, r.stdout + r.stderr
    assert include in r.stdout  # the package's status line names the include dir
    r = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
