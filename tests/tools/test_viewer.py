"""The 3D viewer (python/treedyn/tools/viewer/, treedyn view): what it plays, that a run keeps its
contacts for it, and — in a real browser, headless Chromium — that the page draws the robot where
the camera looks, the exported page plays without Python, and the command's stills and pages.

The browser tests need viser (treedyn[viewer], in the test extras) and Chromium (Debian's package;
.ci/run installs it and sets TREEDYN_REQUIRE_BROWSER=1, so that in CI a missing browser fails
instead of skipping)."""

import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import treedyn as td
from treedyn.tools.viewer.playback import contact_arrows, playback_of

# ------------------------------------------------------------------ without a browser


def test_importing_treedyn_or_simulating_never_imports_the_viewer_library():
    code = (
        "import sys, treedyn as td\n"
        "sc = td.scenes.centipede(2)\n"
        "td.ContactSimulator(sc.model, sc.h).run(sc.state.copy(), 0.01, sc.tau, record_contacts=True)\n"
        "assert 'viser' not in sys.modules, 'viser imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def resting_box(mass=2.0):
    """A 0.2 m box on a free joint, 1 mm above a plane (it settles on its four corners)."""
    m = td.Model()
    m.add_body("box", None, td.Free(), inertia=td.Inertia(mass, inertia=np.diag([0.01, 0.01, 0.01])))
    m.add_geom("box", td.Box((0.1, 0.1, 0.1)))
    m.add_geom(None, td.Plane())
    q = td.neutral(m)
    q[2] = 0.101
    return m, td.State(q, np.zeros(m.nv))


@pytest.mark.parametrize("contact_solver", ["admm", "proxqp"])
def test_a_run_keeps_each_kept_states_contacts_the_same_as_its_steps(contact_solver):
    """run(record_contacts=True): one RecordedContacts per kept state (none for the first), those
    of the step that led to it: the same points and impulses as stepping by hand (to rounding: the
    run and step pass τ = 0 differently), and keeping them changes nothing of the run (the C++ step:
    bit for bit)."""
    model, state = resting_box()
    sim = td.ContactSimulator(model, 1e-3, contact_solver=contact_solver)
    traj = sim.run(state.copy(), 0.2, record_every=5, record_contacts=True)
    assert len(traj.contacts) == len(traj.t) and len(traj.contacts[0]) == 0
    plain = td.ContactSimulator(model, 1e-3, contact_solver=contact_solver).run(state.copy(), 0.2, record_every=5)
    if contact_solver == "admm":  # (the C++ step is deterministic; proxsuite's QPs differ by rounding run to run)
        np.testing.assert_array_equal(traj.q, plain.q)
        np.testing.assert_array_equal(traj.v, plain.v)
    np.testing.assert_allclose(traj.q, plain.q, rtol=0, atol=1e-12)
    assert plain.contacts is None  # (not asked for: nothing kept)
    by_hand, s = [], state.copy()
    for k in range(200):
        step = sim.step(s)
        if (k + 1) % 5 == 0:
            by_hand.append(step)
    assert len(by_hand) == len(traj.t) - 1
    for kept, step in zip(traj.contacts[1:], by_hand):
        np.testing.assert_allclose(kept.points, step.contacts.points, rtol=0, atol=1e-12)
        scale = np.abs(step.impulses).max(initial=0.0)
        # (proxsuite's runs differ by its tolerance, 1e-9 m/s, in the friction impulses: ~1e-12 N·s here)
        rel = 1e-9 if contact_solver == "admm" else 1e-6
        np.testing.assert_allclose(kept.impulses, step.impulses, rtol=0, atol=rel * scale)
        assert abs(kept.h - 1e-3) < 1e-15  # (the last step lands on t_end: h to rounding)


def test_the_drawn_forces_hold_the_box_up_and_split_into_normal_and_friction():
    """At rest the forces the viewer draws on the box (contact_arrows) point up, their normal parts
    add up to its weight m g (to the solver's tolerance) and each normal plus friction part is the
    contact's whole force; arrows start at the contact points, scale metres per newton."""
    model, state = resting_box(mass=2.0)
    traj = td.ContactSimulator(model, 1e-3).run(state, 0.5, record_every=100, record_contacts=True)
    c = traj.contacts[-1]
    assert len(c) == 4
    P, normal, friction, fn, ft = contact_arrows(c, scale=0.01)
    np.testing.assert_array_equal(normal[:, 0], P)
    up = (normal[:, 1] - normal[:, 0]) / 0.01  # newtons
    assert np.all(up[:, 2] > 0)
    assert abs(up[:, 2].sum() - 2.0 * 9.81) < 1e-3 * 2.0 * 9.81
    np.testing.assert_allclose(np.linalg.norm(up, axis=1), fn, rtol=1e-12)
    whole = up + (friction[:, 1] - friction[:, 0]) / 0.01
    sign = np.where(c.bodies[:, 1] == 0, -1.0, 1.0)[:, None]
    np.testing.assert_allclose(whole, sign * c.impulses / c.h, rtol=1e-12, atol=1e-12)
    assert np.all(ft < 1e-6 * fn)  # (at rest on a flat plane: no friction force)


def test_what_the_viewer_plays_is_read_from_every_kind_of_run():
    model = td.scenes.chain(3)
    q = np.array([[0.0, 0.1, 0.2], [0.3, 0.4, 0.5]])
    for given in ((np.array([0.0, 0.5]), q), {"t": np.array([0.0, 0.5]), "q": q}):
        pb = playback_of(model, given)
        np.testing.assert_array_equal(pb.q, q)
        assert pb.index(0.49) == 0 and pb.index(0.5) == 1 and pb.index(-1.0) == 0 and pb.index(9.0) == 1
    assert len(playback_of(model, q)) == 2  # an array of configurations: one per 1/30 s
    res = td.simulate(model, "aba", np.zeros(3), np.zeros(3), 0.05)
    assert len(playback_of(model, res)) == len(res.t)
    one = playback_of(model, None, q=[0.1, 0.2, 0.3])
    assert one.q.shape == (1, 3) and one.contacts is None
    given = q.copy()
    playback_of(model, (np.array([0.0, 0.5]), given)).q[0, 0] = 9.0
    assert given[0, 0] == 0.0  # (the user's arrays are copied)


@pytest.mark.parametrize(
    "trajectory, q, error, match",
    [
        ((np.zeros(2), np.zeros((2, 4))), None, ValueError, r"nq = 3"),
        ((np.array([0.0, -1.0]), np.zeros((2, 3))), None, ValueError, "non-decreasing"),
        ((np.zeros(3), np.zeros((2, 3))), None, ValueError, "shape"),
        ((np.zeros(1), np.full((1, 3), np.nan)), None, ValueError, "NaN"),
        ("run.npz", None, TypeError, "trajectory must be"),
        ((np.zeros(1), np.zeros((1, 3))), np.zeros(3), TypeError, "not both"),
        (None, np.zeros(4), ValueError, "shape"),
    ],
)
def test_bad_trajectories_are_refused_naming_the_problem(trajectory, q, error, match):
    with pytest.raises(error, match=match):
        playback_of(td.scenes.chain(3), trajectory, q)


# ------------------------------------------------------------------ with viser (no browser)


@pytest.fixture
def viser():
    return pytest.importorskip("viser", reason="the viewer's tests need viser (pip install 'treedyn[viewer]')")


def centipede_run(n=4, t_end=0.6):
    scene = td.scenes.centipede(n)
    sim = td.ContactSimulator(scene.model, scene.h)
    traj = sim.run(scene.state.copy(), t_end, scene.tau, record_every=20, record_contacts=True)
    return scene.model, traj


def test_the_timeline_moves_every_body_to_its_pose_at_the_time_asked(viser):
    model, traj = centipede_run()
    with td.view(model, traj, play=False, verbose=False) as v:
        for t in (0.0, 0.3, 0.31, traj.t[-1]):
            v.show_time(t)
            k = v.playback.index(t)
            assert traj.t[k] <= t < (traj.t[k + 1] if k + 1 < len(traj.t) else np.inf)
            R, p = model.body_poses(traj.q[k])
            for i, h in v._bodies.items():
                np.testing.assert_allclose(h.position, p[i], atol=1e-12)
                w, x, y, z = h.wxyz
                np.testing.assert_allclose(np.abs(np.dot(h.wxyz, _wxyz(R[i]))), 1.0, atol=1e-9)
        assert v.url.startswith("http://127.0.0.1:")


def test_playing_moves_along_the_run_and_pausing_stops_it(viser):
    model, traj = centipede_run()
    with td.view(model, traj, verbose=False) as v:  # (plays at first)
        deadline = time.monotonic() + 10
        while v._index == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert v._index > 0 and v._play_button.label == "Pause"
        v.pause()
        time.sleep(0.1)
        k = v._index
        time.sleep(0.3)
        assert v._index == k and v._play_button.label == "Play"
        v._speed.value = 4.0
        v.play()
        time.sleep(1.0)  # (4x: the 0.6 s run passes in 0.15 s; looping, it goes round)
        assert v._playing


def _wxyz(R):
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return np.array([w, x, y, z])


def test_visuals_are_drawn_and_hide_their_bodys_collision_geoms_at_first(viser, tmp_path):
    """A body with a visual shows it (in its colour) and hides its collision geoms until asked; a
    body whose visual cannot be read shows its collision geoms, and the viewer says why."""
    import trimesh

    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(tmp_path / "cube.stl")
    (tmp_path / "broken.stl").write_bytes(b"\x01" * 80 + (7).to_bytes(4, "little") + b"\x02" * 33)
    m = td.Model()
    for name, mesh in (("a", "cube.stl"), ("b", "broken.stl")):
        m.add_body(name, None if name == "a" else "a", td.Revolute((0, 0, 1)))
        m.add_geom(name, td.Sphere(0.05))
        m.add_visual(name, td.MeshFile(str(tmp_path / mesh)), rgba=(1, 0, 0, 1))
    with td.view(m, verbose=False) as v:
        (a_geom, a_hidden), (b_geom, b_hidden) = v._collision
        assert a_hidden and not a_geom.visible and not b_hidden and b_geom.visible
        (why,) = v.left_out
        assert "broken.stl" in why
        assert [h.name for h in v._visuals] == ["/robot/body1/visual0"]


def test_bad_viewer_arguments_are_refused(viser):
    with pytest.raises(TypeError, match="model"):
        td.view("not a model")
    model = td.scenes.chain(2)
    with pytest.raises(ValueError, match="force_scale"):
        td.view(model, force_scale=-1.0, verbose=False)


# ------------------------------------------------------------------ in a browser


@pytest.fixture
def browser(viser):
    from treedyn.tools.viewer import BrowserNotFound, find_browser

    try:
        return find_browser()
    except BrowserNotFound as e:
        if os.environ.get("TREEDYN_REQUIRE_BROWSER"):
            raise
        pytest.skip(str(e))


def coloured(img, box=None):
    """The fraction of pixels (in box = (top, bottom, left, right) fractions) of a saturated colour:
    the robot's (the page's background is white, the ground and grid grey)."""
    h, w, _ = img.shape
    t, b, l, r = box or (0, 1, 0, 1)
    part = img[int(t * h) : int(b * h), int(l * w) : int(r * w), :3].astype(int)
    return float(np.mean(part.max(axis=2) - part.min(axis=2) > 60))


def test_the_page_draws_the_walking_centipede_and_its_forces_where_the_camera_looks(browser, tmp_path):
    model, traj = centipede_run()
    assert sum(map(len, traj.contacts)) > 0
    with td.view(model, traj, play=False, verbose=False, com=True) as v:
        v.show_time(traj.t[-1])
        img = v.screenshot(tmp_path / "centipede.png", width=640, height=480)
        position, look_at = v.camera_default()
        away = v.screenshot(
            width=640, height=480, position=look_at + [0, 0, 5 * v.size], look_at=look_at + [0, 0, 10 * v.size]
        )
    assert img.shape == (480, 640, 3) and (tmp_path / "centipede.png").stat().st_size > 5000
    assert coloured(img, (0.25, 0.75, 0.25, 0.75)) > 0.02  # the robot's pixels where the camera looks
    grey = np.mean((np.abs(img[..., 0].astype(int) - img[..., 2]) < 12) & (img[..., 0] < 235) & (img[..., 0] > 150))
    assert grey > 0.2  # the ground
    assert coloured(away) == 0.0  # looking up at the sky: none (the pixels were the robot's)


def test_chromium_opens_the_live_page_with_the_robot_and_its_controls(browser, tmp_path):
    """The page as Chromium itself shows it (its own screenshot of the viewer's URL, not a render
    asked of the page): the robot left of the controls' panel, where the camera looks."""
    from PIL import Image

    from treedyn.tools.viewer import page_screenshot

    model, traj = centipede_run()
    with td.view(model, traj, play=False, verbose=False) as v:
        v.show_time(traj.t[-1])
        png = page_screenshot(v.url, tmp_path / "live.png", width=800, height=600)
    img = np.asarray(Image.open(png).convert("RGB"))
    assert coloured(img, (0.3, 0.9, 0.05, 0.55)) > 0.02  # (the panel takes the right third)


def test_the_page_draws_a_urdf_robot(browser, tmp_path):
    from treedyn.tools.peers import example_robot_path

    try:
        path = example_robot_path("solo_description/robots/solo12.urdf")
    except FileNotFoundError as e:
        pytest.skip(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.Model.from_urdf(path, floating_base=True)
    model.add_geom(None, td.Plane())
    q = model.reference_configuration if model.reference_configuration is not None else td.neutral(model)
    q = np.array(q)
    q[2] = 0.4
    with td.view(model, q=q, verbose=False) as v:
        assert len(v._visuals) == 17 and not v.left_out  # (its STL visual meshes)
        img = v.screenshot(tmp_path / "solo.png", width=640, height=480)
        for h in v._bodies.values():
            h.visible = False
        bare = v.screenshot(width=640, height=480)
    robot = np.abs(img.astype(int) - bare).max(axis=2) > 30  # the pixels the robot (and its shadow) changed
    h, w = robot.shape
    assert robot[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4].mean() > 0.1  # where the camera looks
    assert robot[: h // 8].mean() < 0.01 and robot[:, : w // 10].mean() < 0.01  # not everywhere


def test_the_exported_page_plays_the_run_without_python(browser, tmp_path):
    """save_html: one file that draws the run from disk (no server: the viewer is closed), with the
    recording inside and nothing fetched from elsewhere."""
    from treedyn.tools.viewer import page_screenshot

    model, traj = centipede_run()
    with td.view(model, traj, play=False, verbose=False) as v:
        page = v.save_html(tmp_path / "run.html", max_frames=10)
    text = page.read_text(encoding="utf-8")
    assert "playbackPath" in text and "<script src=" not in text and 'rel="stylesheet" href="http' not in text
    png = page_screenshot(page, tmp_path / "run.png", width=800, height=600)
    from PIL import Image

    img = np.asarray(Image.open(png).convert("RGB"))
    assert coloured(img, (0.25, 0.75, 0.25, 0.75)) > 0.01


def test_the_commands_write_a_still_and_a_page(browser, tmp_path, capsys):
    from treedyn.tools.cli import main

    assert main(["view", "centipede:3", "--png", str(tmp_path / "c.png")]) == 0
    assert (tmp_path / "c.png").stat().st_size > 5000
    out = tmp_path / "run.html"
    assert main(["simulate", "centipede:3", "--steps", "100", "--every", "10", "--html", str(out)]) == 0
    assert "page:" in capsys.readouterr().out and out.stat().st_size > 100_000


def test_the_view_command_names_a_bad_trajectory_file(tmp_path, capsys):
    from treedyn.tools.cli import main

    assert main(["view", "chain:3", "--trajectory", str(tmp_path / "none.npz")]) == 2
    assert "none.npz: No such file" in capsys.readouterr().err
    np.savez(tmp_path / "x.npz", x=np.zeros(3))
    assert main(["view", "chain:3", "--trajectory", str(tmp_path / "x.npz")]) == 2
    assert "no arrays 't' and 'q'" in capsys.readouterr().err


def test_a_trajectory_file_that_lies_about_its_size_is_refused_unread(tmp_path, capsys):
    """An npz whose q declares 1e9 x 3 doubles (24 GB) in a few bytes: refused by its header, never
    allocated; so are other shapes, dtypes and lengths."""
    import io
    import zipfile

    from numpy.lib import format as npy

    from treedyn.tools.cli import main

    def npz(path, header_shape, dtype="<f8"):
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("t.npy", _npy(np.zeros(2)))
            buf = io.BytesIO()
            npy.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": header_shape})
            z.writestr("q.npy", buf.getvalue() + b"\0" * 128)

    def _npy(a):
        buf = io.BytesIO()
        np.save(buf, a)
        return buf.getvalue()

    for shape, dtype, message in (((10**9, 3), "<f8", "more than the file holds"), ((2, 5), "<f8", "want real numbers"),
                                  ((2, 3), "|O", "want real numbers"), ((3, 3), "<f8", "'t' has 2 frames, 'q' 3")):  # fmt: skip
        path = tmp_path / "lie.npz"
        npz(path, shape, dtype)
        assert main(["view", "chain:3", "--trajectory", str(path)]) == 2
        assert message in capsys.readouterr().err
