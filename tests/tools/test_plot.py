"""treedyn.tools.plot: the outlines of the scenes' shapes."""

import numpy as np
import pytest
from conftest import assert_within_rounding
from figcheck import assert_readable

import treedyn as td
from treedyn.tools.plot import _corners, _hull, draw, frame_indices


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


# ------------------------------------------------------------ figures read as pictures (issue 17)


def test_figcheck_finds_what_a_reader_would_miss():
    """tests/figcheck.py, the check every figure test relies on, on a figure with every defect:
    no units, two series without a legend, crowded tick labels and a suptitle wider than the figure;
    and on the same figure repaired."""
    plt = pytest.importorskip("matplotlib.pyplot")
    from figcheck import figure_problems

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2], [1, 2])
    ax.plot([1, 2], [2, 1])
    ax.set_xlabel("time")
    ax.set_xticks(np.linspace(1, 2, 40))  # 40 labels on 3 inches
    fig.suptitle("a title far too long for a figure three inches wide, cut at both ends")
    problems = "\n".join(figure_problems(fig))
    assert "x label 'time' names no unit" in problems and "no y label" in problems
    assert "2 series and no legend" in problems
    assert "suptitle" in problems and "clipped by the figure's edge" in problems
    assert "x tick label" in problems and "overlaps" in problems
    ax.set_xlabel("t [s]")
    ax.set_ylabel("x (m)")
    ax.set_xticks([1, 1.5, 2])
    ax.legend(["up", "down"])
    fig.suptitle("short")
    fig.tight_layout()
    assert figure_problems(fig) == []
    plt.close(fig)


def test_moving_force_points_follow_the_deck_like_the_redmax_step():
    """The car of bridge:...,car=car: at t = 0 on the top of anchor L (-12, 3), at the end of its 5 s
    crossing on the top of anchor R (12, 3), where the loop closure holds the deck's end (the
    scenes' geometry: docs/scenes.md), and gone after it."""
    from treedyn.tools.plot import moving_force_points

    scene = td.scenes.bridge(6, 2, car="car")
    q = scene.state.q
    (start, f0), *rest = moving_force_points(scene.model, 0.0, q=q)
    assert rest == [] and np.array_equal(f0, [0.0, -4800.0, 0.0])
    # a few roundings of the 24 m deck's block lengths (6 blocks, the arch's rotations)
    assert_within_rounding(start, (-12.0, 3.0, 0.0), 24, 6, what="car at t = 0")
    (end, _), *_ = moving_force_points(scene.model, 5.0, q=q)
    # the deck's end closes on anchor R to the construction's closing gap (< 1e-12, scene.info)
    assert np.abs(end - (12.0, 3.0, 0.0)).max() <= 1e-9
    (mid, _), *_ = moving_force_points(scene.model, 2.5, q=q)
    assert abs(mid[0]) < 24 / 6 / 2  # half-way along the path: on the middle block (the arch is symmetric)
    assert moving_force_points(scene.model, 5.01, q=q) == []
    assert moving_force_points(td.scenes.bridge(6, 2).model, 1.0, q=q) == []  # no car


def test_draw_shows_the_car_with_a_legend_and_units(saved_figures, tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    scene = td.scenes.bridge(6, 2, car="car")
    ax = draw(scene.model, scene.state.q, shapes=scene.info["shapes"], t=1.0, title="bridge at t = 1 s")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "car (4.8 kN moving load)" in labels and "springs" in labels and "body shapes" in labels
    car = [l for l in ax.lines if l.get_label().startswith("car")][0]
    # a fifth of the 24 m crossing after 1 s: x ≈ -12 + 4.8 along the shallow arch (cos θ ≥ 0.99)
    assert abs(car.get_xdata()[0] - (-7.2)) < 0.05 and car.get_ydata()[0] > 3.0
    ax.figure.savefig(tmp_path / "bridge.png")
    assert_readable(saved_figures, 1)
    after = draw(scene.model, scene.state.q, shapes=scene.info["shapes"], t=6.0)  # the car has crossed
    assert not any(l.get_label().startswith("car") for l in after.lines)
    heavy = td.scenes.bridge(6, 2, car="heavy")  # 500 × 4800 N
    heavy_labels = draw(heavy.model, heavy.state.q, t=1.0).get_legend_handles_labels()[1]
    assert "car (2.4 MN moving load)" in heavy_labels
    plt.close("all")


def test_trajectory_figure_and_animation_are_readable_with_fixed_limits(saved_figures, tmp_path):
    """The contact figure (views and the centre of mass over time) and an animation: every frame has
    units, a legend inside the figure and the same axes limits (a stable view, not autoscaled)."""
    plt = pytest.importorskip("matplotlib.pyplot")
    from treedyn.tools.plot import animate, trajectory_figure

    scene = td.scenes.centipede(2)
    model = scene.model
    t = np.linspace(0.0, 0.3, 7)
    q = np.stack([scene.state.q] * 7)
    q[:, 0] += np.linspace(0.0, 0.5, 7)  # the root slides 0.5 m along x
    fig = trajectory_figure(model, t, q, title="centipede:2", max_aspect=8.0)
    fig.savefig(tmp_path / "walk.png")
    plt.close(fig)
    assert animate(model, t, q, tmp_path / "walk.gif", views=((0, 2), (0, 1)), title="centipede:2", com=True) == 7
    assert_readable(saved_figures, 1 + 7)
    frames = [limits for _, _, limits in saved_figures[1:]]
    assert all(f == frames[0] for f in frames)
    # the view holds the whole run: the slid root is inside the limits of the first frame
    (x0, x1), _ = frames[0][0]
    assert x0 < q[:, 0].min() and q[:, 0].max() < x1


def test_a_body_at_rest_is_not_plotted_at_the_scale_of_its_rounding():
    """The centre of mass moving by 1e-17 m (a model at rest, rounding only): its panel spans a millimetre,
    not the 1e-17 m that autoscaling would draw as full-scale motion; 0.5 m of motion keeps its own scale."""
    plt = pytest.importorskip("matplotlib.pyplot")
    from treedyn.tools.plot import trajectory_figure

    scene = td.scenes.centipede(2)
    t = np.linspace(0.0, 0.3, 7)
    for moved, span in ((1e-17, 1e-3), (0.5, 0.5)):
        q = np.stack([scene.state.q] * 7)
        q[:, 0] += np.linspace(0.0, moved, 7)
        fig = trajectory_figure(scene.model, t, q)
        (ax,) = [a for a in fig.axes if a.get_ylabel().startswith("centre of mass")]
        lo, hi = ax.get_ylim()
        plt.close(fig)
        assert span <= hi - lo < 3 * span, (moved, hi - lo)
