"""treedyn._checks: the one set of argument checks, one behaviour for booleans, strings, NaN and shapes."""

import numpy as np
import pytest

from treedyn import _checks as C

NOT_NUMBERS = [True, np.bool_(False), "1", b"1", None, [1.0], object(), 1 + 2j]


@pytest.mark.parametrize("x", NOT_NUMBERS)
def test_real_refuses_what_is_not_a_real_number(x):
    with pytest.raises(TypeError, match="dt must be a real number"):
        C.real(x, "dt")


@pytest.mark.parametrize("x", [3, 2.5, np.int32(3), np.float32(0.5), np.array(2.0), np.uint8(7)])
def test_real_takes_numbers_and_returns_a_float(x):
    out = C.real(x, "dt")
    assert type(out) is float and out == float(np.asarray(x))


@pytest.mark.parametrize("x", [np.nan, np.inf, -np.inf])
def test_real_refuses_non_finite(x):
    with pytest.raises(ValueError, match="h must be finite"):
        C.real(x, "h")


def test_real_infinity_where_allowed_but_never_nan():
    assert C.real(np.inf, "upper", finite=False) == np.inf
    with pytest.raises(ValueError, match="finite"):
        C.real(np.nan, "upper", finite=False)


def test_real_ranges():
    assert C.real(0.0, "d", nonnegative=True) == 0.0
    with pytest.raises(ValueError, match="d must be non-negative, got -1.0"):
        C.real(-1, "d", nonnegative=True)
    with pytest.raises(ValueError, match="h must be positive, got 0.0"):
        C.real(0, "h", positive=True)
    with pytest.raises(ValueError, match="u must be below 1"):
        C.real(1.0, "u", below=1)


@pytest.mark.parametrize("x", [True, 3.0, "3", np.float64(3), None])
def test_integer_refuses_booleans_floats_and_strings(x):
    with pytest.raises(TypeError, match="max_steps must be an integer"):
        C.integer(x, "max_steps")


def test_integer_minimum():
    assert C.integer(np.int64(5), "n", minimum=1) == 5 and type(C.integer(np.int64(5), "n")) is int
    with pytest.raises(ValueError, match="n must be >= 1, got 0"):
        C.integer(0, "n", minimum=1)


def test_integer_optional():
    assert C.integer(None, "size", optional=True) is None and C.integer(3, "size", optional=True) == 3
    with pytest.raises(TypeError, match="size must be None or an integer, got float"):
        C.integer(2.0, "size", optional=True)
    with pytest.raises(TypeError, match="size must be an integer, got NoneType"):
        C.integer(None, "size")


@pytest.mark.parametrize("x", [0, 1, "True", None, 1.0])
def test_boolean_takes_only_booleans(x):
    with pytest.raises(TypeError, match="jacobian must be True or False"):
        C.boolean(x, "jacobian")
    assert C.boolean(np.bool_(True), "jacobian") is True and C.boolean(False, "jacobian") is False


def test_text_and_choice():
    assert C.text("torso", "name") == "torso"
    with pytest.raises(TypeError, match="name must be a string"):
        C.text(3, "name")
    with pytest.raises(ValueError, match="name must not be empty"):
        C.text("", "name")
    assert C.choice("rk4", "method", ("euler", "rk4")) == "rk4"
    with pytest.raises(ValueError, match="method must be one of 'euler', 'rk4', got 'rk5'"):
        C.choice("rk5", "method", ("euler", "rk4"))
    with pytest.raises(TypeError, match="method must be one of"):
        C.choice(4, "method", ("euler", "rk4"))


def test_arrays_are_new_float64_copies():
    x = np.arange(3, dtype=np.int32)
    a = C.vector(x, "q", 3)
    assert a.dtype == np.float64 and not np.shares_memory(a, x)
    a[0] = 7
    assert x[0] == 0
    f = np.ones(3)
    assert not np.shares_memory(C.vec3(f, "p"), f)


@pytest.mark.parametrize(
    "x", [np.array([True, False]), np.array(["1", "2"]), np.array([1, None], dtype=object), [1 + 1j, 2]]
)
def test_arrays_refuse_booleans_strings_objects_complex(x):
    with pytest.raises(TypeError, match="q must be a real numeric array"):
        C.vector(x, "q")


def test_boolean_arrays_only_where_asked():
    a = C.vector(np.array([True, False]), "q", 2, booleans=True)
    assert a.dtype == np.float64 and a.tolist() == [1.0, 0.0]
    with pytest.raises(TypeError, match="q must be a real numeric array, got dtype bool"):
        C.vector(np.array([True, False]), "q", 2)
    with pytest.raises(TypeError, match="q must be a real numeric array, got dtype <U1"):
        C.vector(np.array(["1", "2"]), "q", 2, booleans=True)


def test_array_shapes_and_nan():
    with pytest.raises(ValueError, match=r"q must have shape \(3,\), got \(2,\)"):
        C.vector([1, 2], "q", 3)
    with pytest.raises(ValueError, match=r"R must have shape \(4, any\), got \(3, 2\)"):
        C.array(np.zeros((3, 2)), "R", (4, None))
    with pytest.raises(ValueError, match="q contains NaN or inf"):
        C.vector([0.0, np.nan], "q")
    assert np.isinf(C.vector([np.inf], "lower", finite=False)[0])


def test_state_checks_both_vectors():
    q, v = C.state(2, 1, [0, 1], [0.5])
    assert q.shape == (2,) and v.shape == (1,)
    with pytest.raises(ValueError, match="v must have shape"):
        C.state(2, 1, [0, 1], [0.5, 1])


def test_float_dtype():
    assert C.float_dtype(np.float32) == np.float32 and C.float_dtype("float64") == np.float64
    assert isinstance(C.float_dtype(np.float64), np.dtype)
    with pytest.raises(TypeError, match="dtype must be float64 or float32, got int32"):
        C.float_dtype(np.int32)


def test_instance_and_finite_result():
    class Model:
        pass

    m = Model()
    assert C.instance(m, Model, "model") is m
    with pytest.raises(TypeError, match="model must be a treedyn.Model, got str 'ur5'"):
        C.instance("ur5", Model, "model")
    out = (np.ones(2), np.zeros(1))
    assert C.finite_result(out, "f") is out
    with pytest.raises(ValueError, match="inverse_mass_matrix overflowed"):
        C.finite_result((np.ones(2), np.array([np.inf])), "inverse_mass_matrix")
