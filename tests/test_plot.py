"""treedyn.plot: the outlines of the scenes' shapes."""

import numpy as np
import pytest
from conftest import assert_within_rounding

import treedyn as td
from treedyn.plot import _corners, _hull, draw, frame_indices


def test_box_corners_and_their_hull():
    c = _corners({"shape": "box", "size": (2.0, 4.0, 6.0), "centre": (1, 0, 0), "axes": np.eye(3)})
    assert c.shape == (8, 3)
    # centre ± half sizes along the axes: a few roundings of the 6 m box (n = 3 terms)
    assert_within_rounding(c.min(axis=0), (0, -2, -3), 6, 3, what="box min")
    assert_within_rounding(c.max(axis=0), (2, 2, 3), 6, 3, what="box max")
    h = _hull(c[:, :2])  # the x-y outline: a closed rectangle
    assert len(h) == 5 and np.array_equal(h[0], h[-1])
    assert {tuple(p) for p in h} == {(0, -2), (2, -2), (2, 2), (0, 2)}


def test_cylinder_corners_bound_the_cylinder():
    c = _corners({"shape": "cylinder", "size": (0.5, 3.0), "centre": (0, 0, 1.5), "axes": np.eye(3)})
    assert_within_rounding(c.min(axis=0), (-0.5, -0.5, 0), 3, 3, what="cylinder min")
    assert_within_rounding(c.max(axis=0), (0.5, 0.5, 3), 3, 3, what="cylinder max")


def test_draw_a_scene_with_its_shapes(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    scene = td.scenes.bridge(5, 3)
    ax = draw(scene.model, scene.state.q, shapes=scene.info["shapes"])
    # one filled outline per shaped body, one line per spring
    assert len(ax.patches) == len(scene.info["shapes"])
    assert len(ax.lines) >= len(scene.model.springs)
    plt.close(ax.figure)


def test_draw_a_simplified_model_whose_bodies_have_no_centre_of_mass():
    plt = pytest.importorskip("matplotlib.pyplot")
    model = td.simplify(td.scenes.random_tree(6, 4, joints=("revolute", "spherical")))
    assert any(not I.has_com for I in model.inertias)  # mass 0, first moment ≠ 0: drawn at the origin
    ax = draw(model, td.neutral(model))
    assert np.isfinite(ax.dataLim.get_points()).all()
    plt.close(ax.figure)


def test_draw_shows_the_geoms_and_the_ground_in_a_side_view():
    plt = pytest.importorskip("matplotlib.pyplot")
    from matplotlib.patches import Circle

    scene = td.scenes.centipede(2)
    ax = draw(scene.model, scene.state.q, axes=(0, 2))
    # one circle per foot (radius 0.02 m, touching z = 0), the ground plane as a line; units on the axes
    circles = [p for p in ax.patches if isinstance(p, Circle)]
    assert len(circles) == 4 and all(abs(c.center[1] - c.radius) < 2e-4 for c in circles)
    assert "plane (ground)" in ax.get_legend_handles_labels()[1]
    assert ax.get_xlabel() == "x [m]" and ax.get_ylabel() == "z [m]"
    top = draw(scene.model, scene.state.q, axes=(0, 1))  # seen from above, the plane fills the view: no line
    assert "plane (ground)" not in top.get_legend_handles_labels()[1]
    plt.close("all")


@pytest.mark.parametrize("n,frames,expected", [(1, 5, [0]), (5, 100, [0, 1, 2, 3, 4]), (13, 5, [0, 3, 6, 9, 12]),
                                               (12, 5, [0, 3, 6, 9, 11])])  # fmt: skip
def test_frame_indices_every_kth_and_the_last(n, frames, expected):
    idx = frame_indices(n, frames)
    assert list(idx) == expected and len(idx) <= frames
