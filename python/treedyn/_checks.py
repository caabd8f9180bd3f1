"""The argument checks every public function runs at its entry (one module, one behaviour).

Each check takes the value and the name the user knows it by, and returns the value in the form the
caller computes with (a Python ``float``/``int``/``bool``/``str``, or a new float64 array: the
user's array is never modified nor kept). Errors name the argument: ``TypeError`` for a value of the
wrong kind, ``ValueError`` for one of the right kind out of range or of the wrong shape.

One behaviour for every function:
- booleans are not numbers: ``True`` is refused where a number is asked for (and a number where a
  boolean is), as are boolean arrays where real arrays are (``booleans=True``: taken as 0/1, as
  the C++ kernels take them, only where the API promises so: ``td.State``, ``contact_inertia``);
- strings are never numbers: ``"1"`` is refused (numpy would convert it);
- NaN and ±inf are refused unless the check says ``finite=False``;
- a number is a Python ``int``/``float`` or a numpy integer/floating scalar (or a 0-d array of one).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from . import _core

__all__ = [
    "INT_MAX",
    "real",
    "integer",
    "boolean",
    "text",
    "choice",
    "vector",
    "vec3",
    "array",
    "state",
    "configuration",
    "finite_result",
    "instance",
    "float_dtype",
]

_REAL_KINDS = "iuf"
_F64, _F32 = (
    np.dtype(np.float64),
    np.dtype(np.float32),
)  # numpy dtype kinds taken as real numbers: signed, unsigned, floating


def _scalar_of(x):
    """A numpy 0-d array's scalar, else x itself."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]
    return x


def real(
    x,
    name: str,
    *,
    positive: bool = False,
    nonnegative: bool = False,
    finite: bool = True,
    below: float | None = None,
) -> float:
    """``x`` as a float. positive: > 0; nonnegative: ≥ 0; below: < that bound; finite: not NaN or ±inf."""
    x = _scalar_of(x)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {_kind(x)}")
    value = float(x)
    if math.isnan(value) or (finite and not math.isfinite(value)):
        raise ValueError(f"{name} must be finite, got {value}")
    if positive and not value > 0:
        raise ValueError(f"{name} must be positive, got {value}")
    if nonnegative and not value >= 0:
        raise ValueError(f"{name} must be non-negative, got {value}")
    if below is not None and not value < below:
        raise ValueError(f"{name} must be below {below}, got {value}")
    return value


#: the largest count the C++ kernels take (a C++ int): a larger one is refused here, by name
INT_MAX = 2**31 - 1


def integer(
    x, name: str, *, minimum: int | None = None, maximum: int | None = None, optional: bool = False
) -> int | None:
    """``x`` as an int (a float with an integral value is refused too: 3.0 is not a count).
    maximum: the largest accepted (``INT_MAX`` for a count handed to C++).
    optional: None is let through (returned as is), and the error says it may be None."""
    if optional and x is None:
        return None
    x = _scalar_of(x)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be {'None or ' if optional else ''}an integer, got {_kind(x)}")
    value = int(x)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def boolean(x, name: str) -> bool:
    """``x`` as a bool: only ``True``/``False`` (or numpy's), not 0, 1 or a string."""
    x = _scalar_of(x)
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {_kind(x)}")
    return bool(x)


def text(x, name: str) -> str:
    """``x`` if it is a non-empty string."""
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a string, got {_kind(x)}")
    if not x:
        raise ValueError(f"{name} must not be empty")
    return x


def choice(x, name: str, choices: Iterable[str]) -> str:
    """``x`` if it is one of ``choices`` (strings); the error lists them."""
    choices = tuple(choices)
    if not isinstance(x, str):
        raise TypeError(f"{name} must be one of {', '.join(map(repr, choices))}, got {_kind(x)}")
    if x not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {x!r}")
    return x


def array(
    x, name: str, shape: Sequence[int | None] | None = None, *, finite: bool = True, booleans: bool = False
) -> np.ndarray:
    """A new float64 array of ``x``: real numbers (no booleans, strings or objects), of ``shape``
    where given (None in it: any length on that axis), finite unless ``finite=False``. The
    message for a wrong dtype is the C++ kernels' ("must be a real numeric array")."""
    a = np.asarray(x)
    if a.dtype.kind not in _REAL_KINDS and not (booleans and a.dtype.kind == "b"):
        raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if shape is not None and (a.ndim != len(shape) or any(n is not None and n != m for n, m in zip(shape, a.shape))):
        want = "(" + ", ".join("any" if n is None else str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    a = np.array(a, dtype=np.float64)
    if finite and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    return a


def vector(x, name: str, n: int | None = None, *, finite: bool = True, booleans: bool = False) -> np.ndarray:
    """A new float64 vector of ``x``, of length ``n`` where given."""
    return array(x, name, (n,), finite=finite, booleans=booleans)


def vec3(x, name: str) -> np.ndarray:
    """A new float64 3-vector of ``x``, finite."""
    return array(x, name, (3,))


def instance(x, cls: type, name: str):
    """``x`` if it is a ``cls`` (the error calls it ``treedyn.<cls name>``)."""
    if not isinstance(x, cls):
        raise TypeError(f"{name} must be a treedyn.{cls.__name__}, got {_kind(x)}")
    return x


def float_dtype(x, name: str = "dtype") -> np.dtype:
    """``x`` as a numpy dtype, float64 or float32 (the precisions the kernels have)."""
    dt = np.dtype(x)
    if dt not in (_F64, _F32):
        raise TypeError(f"{name} must be float64 or float32, got {dt}")
    return dt


def state(nq: int, nv: int, q, v) -> tuple[np.ndarray, np.ndarray]:
    """New float64 copies of a configuration q (nq,) and a velocity v (nv,), finite."""
    return vector(q, "q", nq), vector(v, "v", nv)


def configuration(core, q, name: str = "q") -> np.ndarray:
    """A new float64 copy of one configuration q (nq,) of the C++ model ``core``, checked as every
    solver checks it (shape, real and finite numbers, unit quaternions): the C++ boundary's check
    (cpp/bindings/arrays.hpp), without computing anything."""
    q, _, _, batch = _core.check_state(core, q, np.zeros(core.nv), np.zeros(core.nv))
    if batch:
        raise ValueError(f"{name} must have shape (nq,) = ({core.nq},), got {q.shape}")
    return q


def finite_result(x, what: str):
    """``x`` (an array or a tuple of them) if every entry is finite, a plugin's results included,
    else a ValueError naming the function ``what``: an overflow is an error, never a NaN handed back."""
    for a in x if isinstance(x, tuple) else (x,):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{what} overflowed to inf/NaN: the inputs are too large for this precision")
    return x


def _kind(x) -> str:
    """How a wrong value is named in an error: its type, and the value itself when short."""
    if isinstance(x, (str, bool, np.bool_)) or x is None:
        return f"{type(x).__name__} {x!r}"
    return type(x).__name__
