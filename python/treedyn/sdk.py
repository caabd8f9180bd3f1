"""The C++ SDK for solver plugins (docs/plugins.md): where treedyn's headers and CMake package are,
and the model handed to C++ as a capsule checked against the plugin's ABI.

>>> import treedyn
>>> treedyn.get_cmake_dir()       # doctest: +SKIP
'.../site-packages/treedyn/share/cmake/treedyn'
"""

from __future__ import annotations

import os

from . import _checks, _core

__all__ = ["ABI_VERSION", "MODEL_CAPSULE_NAME", "get_include", "get_cmake_dir", "model_capsule"]

ABI_VERSION: int = _core.ABI_VERSION  # TREEDYN_ABI_VERSION of the headers this treedyn was built from
MODEL_CAPSULE_NAME: str = _core.MODEL_CAPSULE_NAME  # e.g. "treedyn.Model<double>;abi=1;stdlib=libstdc++-cxx11"

_HERE = os.path.dirname(os.path.abspath(__file__))


def _installed(*parts: str) -> str:
    path = os.path.join(_HERE, *parts)
    if not os.path.isdir(path):
        raise FileNotFoundError(
            f"{path} does not exist: the C++ SDK ships with an installed treedyn (pip install treedyn, "
            "or pip install . from a checkout), not with a source tree on PYTHONPATH"
        )
    return path


def get_include() -> str:
    """The directory holding treedyn's C++ headers (``#include "treedyn/..."``)."""
    return _installed("include")


def get_cmake_dir() -> str:
    """The directory of treedyn's CMake package config: ``-Dtreedyn_DIR=`` this, then
    ``find_package(treedyn CONFIG)`` gives the target ``treedyn::headers``."""
    return _installed("share", "cmake", "treedyn")


def model_capsule(model, abi_version: int | None = None):
    """The model for a C++ plugin: a PyCapsule named :data:`MODEL_CAPSULE_NAME` holding a
    ``const treedyn::Model<double>*``, which stays valid for as long as the capsule lives (the
    capsule holds a reference to the model's C++ side). Read it with ``treedyn::model_from_capsule``
    (treedyn/sdk/capsule.hpp), which refuses a capsule of another ABI or standard library.

    ``abi_version``: the ``TREEDYN_ABI_VERSION`` the plugin was compiled with; a RuntimeError
    names both versions when it is not this treedyn's.
    """
    from .model import Model

    if abi_version is not None and abi_version != ABI_VERSION:
        raise RuntimeError(
            f"this plugin was built against treedyn's C++ ABI {abi_version}, the installed treedyn has ABI "
            f"{ABI_VERSION}: rebuild the plugin against the installed treedyn (docs/plugins.md)"
        )
    _checks.instance(model, Model, "model")
    return _core.model_capsule(model.core)
