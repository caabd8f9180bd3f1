"""Reading model files (python/treedyn/io/_xml.py and the loaders' error handling): every way a
file can be broken — its encoding, its XML, its numbers, its depth — ends in a ModelFileError
naming the file and the line, or in a usable model; and a seeded mutation test that damages real
files at random to check exactly that."""

import re
import warnings

import numpy as np
import pytest
from support.mjcf import CREATURE, HUMANOID
from support.urdf import ARM

import treedyn as td
from treedyn.io import ModelFileError, load_mjcf, load_urdf

URDF_ONE = (
    '<?xml version="1.0"?>\n<robot name="r">\n<link name="base"/>\n'
    '<link name="l1"><inertial><mass value="1"/>'
    '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>\n'
    '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>\n'
    "</robot>\n"
)


def quiet(load, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(*args, **kwargs)


# ---------------------------------------------------------------- encodings


def test_an_unknown_encoding_names_the_file_and_line(tmp_path):
    path = tmp_path / "bogus.urdf"
    path.write_bytes(URDF_ONE.replace('version="1.0"', 'version="1.0" encoding="bogus"').encode())
    with pytest.raises(ModelFileError, match=f"^{re.escape(str(path))}, line 1: .*encoding.*bogus"):
        load_urdf(str(path))
    # as text (a str) the declaration is moot: the text is already decoded
    assert load_urdf(URDF_ONE.replace('version="1.0"', 'version="1.0" encoding="bogus"')).nv == 1


def test_bytes_that_are_not_utf8_name_the_file_and_line(tmp_path):
    path = tmp_path / "latin.urdf"
    path.write_bytes(URDF_ONE.replace('name="r"', 'name="r\xe9"').encode("latin-1"))
    with pytest.raises(ModelFileError, match=f"^{re.escape(str(path))}, line 2: malformed XML"):
        load_urdf(str(path))
    with pytest.raises(ModelFileError, match="^<URDF string>, line 2: malformed XML"):
        load_urdf(URDF_ONE.replace('name="r"', 'name="r\xe9"').encode("latin-1"))  # bytes given directly
    # with a declaration that says latin-1, expat decodes them
    latin = URDF_ONE.replace('name="r"', 'name="r\xe9"').replace('version="1.0"', 'version="1.0" encoding="latin-1"')
    assert load_urdf(latin.encode("latin-1")).nv == 1


def test_a_lone_surrogate_in_a_string_names_the_line_and_column():
    text = URDF_ONE.replace('<link name="l1">', '<link name="l1\ud800">')
    with pytest.raises(ModelFileError, match=r"^<URDF string>, line 4: the text contains '\\ud800' \(column 15\)"):
        load_urdf(text)
    with pytest.raises(ModelFileError, match=r"^<MJCF string>, line 1: .*'\\udfff'"):
        load_mjcf('<mujoco><worldbody><body name="\udfff"/></worldbody></mujoco>')


# ---------------------------------------------------------------- values the checks must catch


@pytest.mark.parametrize(
    "xml, match",
    [
        (
            '<mujoco><worldbody><body><joint/><geom size="0.1" group="nan"/></body></worldbody></mujoco>',
            r"^<MJCF string>, line 1: .*nan",
        ),
        (
            '<mujoco><worldbody><body><joint/><geom size="0.1" group="1e400"/></body></worldbody></mujoco>',
            r"^<MJCF string>, line 1: .*",
        ),
        (
            '<mujoco><worldbody>\n<body>\n<joint/>\n<geom size="0.1" group="x"/></body></worldbody></mujoco>',
            r"^<MJCF string>, line 4: .*'x'",
        ),
        (
            '<mujoco><worldbody><body><joint/><geom type="box" size="1e300 1e300 1e300"/></body></worldbody></mujoco>',
            r"^<MJCF string>, line 1: ",
        ),
        (
            '<mujoco><worldbody>\n<body>\n<joint/>\n<inertial pos="0 0 0" diaginertia="1 1 1"/></body></worldbody></mujoco>',
            r"^<MJCF string>, line 4: <inertial> has no 'mass' attribute",
        ),
    ],
)
def test_malformed_numbers_and_missing_attributes_are_model_file_errors(xml, match):
    with pytest.raises(ModelFileError, match=match):
        quiet(load_mjcf, xml)


def test_huge_directions_are_normalised_without_overflow():
    # |(1e300, 1e300, 0)|² overflows: the direction must still be (1, 1, 0)/√2, never 0 or NaN
    body = '<mujoco><worldbody><body {}><joint axis="{}"/><geom size="0.1"/></body></worldbody></mujoco>'
    big = load_mjcf(body.format('quat="1e300 1e300 0 0"', "1e300 0 1e300"))
    small = load_mjcf(body.format('quat="1 1 0 0"', "1 0 1"))
    # the same rotation and axis up to rounding in the normalisation (a few ulps)
    np.testing.assert_allclose(big.core.placement(1)[0], small.core.placement(1)[0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(big.joints[1].axis, small.joints[1].axis, rtol=0, atol=1e-15)
    np.testing.assert_allclose(td.Revolute((1e300, 1e300, 0)).axis, [2**-0.5, 2**-0.5, 0], rtol=0, atol=4e-16)
    slide = '<mujoco><worldbody><body><joint type="slide" axis="{}" ref="0.5"/><geom size="0.1"/></body></worldbody></mujoco>'
    big, small = load_mjcf(slide.format("1e300 0 1e300")), load_mjcf(slide.format("1 0 1"))
    np.testing.assert_allclose(big.core.placement(1)[1], small.core.placement(1)[1], rtol=0, atol=1e-15)
    assert np.abs(small.core.placement(1)[1]).max() > 0.3  # the ref offset is there (0.5/√2 per axis)
    with pytest.raises(ModelFileError, match="xyaxes.*a direction must not be zero"):
        load_mjcf(
            '<mujoco><worldbody><body xyaxes="1 0 0 2 0 0"><joint/><geom size="0.1"/></body></worldbody></mujoco>'
        )  # a division and a square root: 2 ulps


def test_urdf_numbers_and_attributes():
    with pytest.raises(ModelFileError, match=r"^<URDF string>, line 4: .*<mass>: attribute 'value' is missing"):
        load_urdf(URDF_ONE.replace('<mass value="1"/>', "<mass/>"))
    with pytest.raises(ModelFileError, match=r"^<URDF string>, line 4: .*ixx=.*not a list of numbers"):
        load_urdf(URDF_ONE.replace('ixx="0.1"', 'ixx="0.1.2"'))
    with pytest.raises(ModelFileError, match=r"^<URDF string>, line 5: joint 'j1' has no <child link=...>"):
        load_urdf(URDF_ONE.replace('<child link="l1"/>', "<child/>"))


# ---------------------------------------------------------------- depth: ropes of thousands of bodies
# (URDF: tests/io/test_io_urdf.py::test_deep_chain_does_not_hit_the_recursion_limit)


def test_a_1100_deep_mjcf_chain_loads():
    n = 1100  # beyond Python's recursion limit (1000): a recursive reader fails here
    body = '<body pos="0 0 -0.01"><joint axis="0 1 0"/><geom size="0.005"/>'
    xml = "<mujoco><worldbody>" + body * n + "</body>" * n + "</worldbody></mujoco>"
    m = load_mjcf(xml)
    assert m.nv == n and m.is_chain
    qdd = td.make_solver("aba", m).forward_dynamics(np.zeros(n), np.zeros(n), np.zeros(n))
    assert np.all(np.isfinite(qdd))


def test_a_1100_deep_mjcf_chain_with_includes_loads(tmp_path):
    n = 1100  # beyond Python's recursion limit (1000): a recursive reader fails here
    (tmp_path / "rope.xml").write_text(
        "<mujoco>" + '<body><joint/><geom size="0.01"/>' * n + "</body>" * n + "</mujoco>"
    )
    (tmp_path / "main.xml").write_text('<mujoco><worldbody><include file="rope.xml"/></worldbody></mujoco>')
    assert td.Model.from_mjcf(str(tmp_path / "main.xml")).nv == n


# ---------------------------------------------------------------- the mutation test

NUMBER = re.compile(r"-?\d+(\.\d*)?(e-?\d+)?")
ATTRIBUTE = re.compile(r'\s[\w:]+="[^"]*"')
BAD_NUMBERS = ["nan", "inf", "-inf", "1e400", "-1e400", "1e300", "1e-400", "0", "-1", "abc", "", "1 2", "0x1p3"]
JUNK = ["<", ">", "&", '"', "/", "<!--", "]]>", "&bogus;", "\ud800", "\x00", "é", " ", "\n"]


def mutate(text: str, rng) -> object:
    """One to three random damages: a span deleted, duplicated or truncated, two characters swapped, a
    number made nan/1e400/garbage, an attribute dropped, junk inserted; or, as bytes, a byte that is
    not UTF-8 or an encoding declaration that does not exist."""
    for _ in range(rng.integers(1, 4)):
        kind = rng.integers(8)
        n = len(text)
        i = int(rng.integers(n)) if n else 0
        if kind == 0:
            text = text[:i] + text[i + int(rng.integers(1, 8)) :]
        elif kind == 1:
            text = text[:i] + text[i : i + int(rng.integers(1, 40))] + text[i:]
        elif kind == 2:
            text = text[:i]
        elif kind == 3 and n > 1:
            i = min(i, n - 2)
            text = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
        elif kind in (4, 5):
            spans = [m.span() for m in NUMBER.finditer(text)]
            if spans:
                a, b = spans[int(rng.integers(len(spans)))]
                text = text[:a] + BAD_NUMBERS[int(rng.integers(len(BAD_NUMBERS)))] + text[b:]
        elif kind == 6:
            spans = [m.span() for m in ATTRIBUTE.finditer(text)]
            if spans:
                a, b = spans[int(rng.integers(len(spans)))]
                text = text[:a] + text[b:]
        else:
            text = text[:i] + JUNK[int(rng.integers(len(JUNK)))] + text[i:]
    as_bytes = rng.integers(6)
    if as_bytes == 0:
        data = text.encode("utf-8", "surrogatepass")
        i = int(rng.integers(len(data))) if data else 0
        return data[:i] + b"\xff\xfe" + data[i:]
    if as_bytes == 1:
        return ('<?xml version="1.0" encoding="bogus"?>\n' + text).encode("utf-8", "surrogatepass")
    return text


def check_usable(model, rng):
    """A model that loaded must compute: a finite result or a ValueError (e.g. SingularInertiaError)."""
    if model.nv == 0:
        return
    q = td.random_configuration(model, rng)
    v = rng.standard_normal(model.nv)
    for f in (
        lambda: td.make_solver("aba", model).forward_dynamics(q, v, np.zeros(model.nv)),
        lambda: td.mass_matrix(model, q),
        lambda: td.rnea(model, q, v, v),
    ):
        try:
            out = f()
        except ValueError:
            continue
        assert np.all(np.isfinite(out))


def sources():
    from treedyn.tools.peers import example_robot_path

    out = [("arm.urdf", load_urdf, ARM), ("creature.xml", load_mjcf, CREATURE), ("humanoid.xml", load_mjcf, HUMANOID)]
    try:
        with open(example_robot_path("ur_description/urdf/ur5_robot.urdf"), encoding="utf-8") as f:
            out.append(("ur5_robot.urdf", load_urdf, f.read()))
    except FileNotFoundError:
        pass  # example-robot-data is a test extra: the inline models still run
    return out


@pytest.mark.parametrize("name, load, text", sources(), ids=lambda x: x if isinstance(x, str) and len(x) < 40 else "")
def test_random_damage_gives_a_model_or_a_model_file_error(name, load, text):
    # seeded: the same 150 damaged files on every run (about a second per source)
    rng = np.random.default_rng(sum(map(ord, name)))
    kind = "URDF" if load is load_urdf else "MJCF"
    outcomes = {"loaded": 0, "ModelFileError": 0}
    for trial in range(150):
        damaged = mutate(text, rng)
        try:
            model = quiet(load, damaged)
        except ModelFileError as e:
            outcomes["ModelFileError"] += 1
            assert str(e).startswith(f"<{kind} string>"), (trial, str(e))
            # the line is known for everything but a document without any element
            assert e.line is not None or any(w in str(e) for w in ("no XML element", "is blank", "is empty")), (
                trial,
                str(e),
            )
            continue
        except Exception as e:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{name}, trial {trial}: {type(e).__name__}: {e}\n--- damaged file:\n{damaged!r}"[:3000])
        outcomes["loaded"] += 1
        check_usable(model, rng)
    # the mutations must exercise both outcomes, or the test tests nothing
    assert outcomes["loaded"] >= 5 and outcomes["ModelFileError"] >= 50, outcomes
