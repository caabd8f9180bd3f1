"""The treedyn command (python/treedyn/tools/cli.py)."""

import json

import numpy as np
import pytest
from figcheck import assert_readable

from treedyn.tools.cli import EXIT_DIVERGED, main


def test_solvers_lists_the_builtins(capsys):
    assert main(["solvers", "-v"]) == 0
    out = capsys.readouterr().out
    assert "aba" in out and "crba-cholesky" in out and "batch" in out


@pytest.mark.parametrize("spec", ["chain:12", "random:15", "random-all:10", "chain-fb:6"])
def test_compare_runs_every_solver_and_they_agree(capsys, spec):
    assert main(["compare", spec, "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    lines = [l for l in out.splitlines() if l.startswith(("aba ", "crba-cholesky "))]
    assert len(lines) == 2 and all(l.rstrip().endswith("yes") for l in lines)


def test_compare_batched(capsys):
    assert main(["compare", "chain:8", "--batch", "16", "--repeat", "2", "--threads", "2"]) == 0
    assert "batch of 16" in capsys.readouterr().out


def test_bad_model_spec_is_a_clear_error(capsys):
    assert main(["compare", "blob:3"]) == 2
    assert "unknown scene 'blob'" in capsys.readouterr().err
    assert main(["compare", "chain:x"]) == 2


def test_info_is_json(capsys, monkeypatch):
    assert main(["info"]) == 0
    assert json.loads(capsys.readouterr().out)["eigen_version"].startswith("3.4")
    # an Eigen from pip's temporary build environment (gone after the build) is said to be that
    import treedyn._core as core

    built = dict(
        core.build_info(), eigen_dir="/tmp/pip-build-env-*/overlay/lib/site-packages/cmeel.prefix/share/eigen3"
    )
    monkeypatch.setattr(core, "build_info", lambda: built)
    assert main(["info"]) == 0
    assert json.loads(capsys.readouterr().out)["eigen_dir"].startswith(
        "cmeel-eigen in pip's temporary build environment"
    )


PENDULUM_URDF = """<robot name="p">
<link name="base"><inertial><mass value="2"/><inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
<link name="a"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<link name="b"><inertial><origin xyz="0 0 -0.4"/><mass value="0.5"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
<joint name="j2" type="continuous"><parent link="a"/><child link="b"/><origin xyz="0 0 -1"/><axis xyz="1 1 0"/></joint>
</robot>"""

PENDULUM_MJCF = """<mujoco><worldbody><body name="a"><joint name="j1" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0 0 -1" size="0.05"/>
<body name="b" pos="0 0 -1"><joint name="j2" type="ball"/><geom type="sphere" pos="0 0 -0.4" size="0.1"/></body>
</body></worldbody></mujoco>"""


@pytest.mark.parametrize("name,text", [("pendulum.urdf", PENDULUM_URDF), ("pendulum.xml", PENDULUM_MJCF)])
def test_compare_loads_urdf_and_mjcf_files(capsys, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert main(["compare", str(path), "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert f"model {path}:" in out
    lines = [l for l in out.splitlines() if l.startswith(("aba ", "crba-cholesky "))]
    assert len(lines) == 2 and all(l.rstrip().endswith("yes") for l in lines)


@pytest.mark.parametrize(
    "name,text,peer,module",
    [
        ("pendulum.urdf", PENDULUM_URDF, "pinocchio (URDF)", "pinocchio"),
        ("pendulum.xml", PENDULUM_MJCF, "mujoco (MJCF)", "mujoco"),
    ],
)
def test_compare_peers_parse_the_file_themselves(capsys, tmp_path, name, text, peer, module):
    pytest.importorskip(module)
    path = tmp_path / name
    path.write_text(text)
    args = ["compare", str(path), "--repeat", "2", "--peers"] + (["--floating-base"] if name.endswith(".urdf") else [])
    assert main(args) == 0
    row = [l for l in capsys.readouterr().out.splitlines() if l.startswith(peer)]
    assert len(row) == 1 and row[0].rstrip().endswith("yes")


def test_a_peer_that_refuses_the_file_is_skipped_not_a_traceback(capsys, tmp_path, monkeypatch):
    """Pinocchio's own parser refusing a file treedyn loads (iCub: "The 3d inertia should be positive")
    is said on stderr, and the comparison of the others stands."""
    pytest.importorskip("pinocchio")
    from treedyn.tools import peers

    def refuse(*args, **kwargs):
        raise ValueError("The 3d inertia should be positive")

    monkeypatch.setattr(peers, "PinocchioFromFile", refuse)
    path = tmp_path / "pendulum.urdf"
    path.write_text(PENDULUM_URDF)
    assert main(["compare", str(path), "--repeat", "2", "--peers"]) == 0
    out = capsys.readouterr()
    assert "skipped: ValueError: The 3d inertia should be positive" in out.err and "pinocchio.aba" in out.out


def test_compare_file_errors_are_clear(capsys, tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='r'>\n<link name='a'>\n</robot>")
    assert main(["compare", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"treedyn: error: {bad}, line 3: malformed XML" in err
    fixed = tmp_path / "rigid.urdf"
    fixed.write_text("<robot name='r'><link name='a'/></robot>")
    assert main(["compare", str(fixed)]) == 2
    assert "no moving joints (nv = 0)" in capsys.readouterr().err
    mimic = tmp_path / "mimic.urdf"
    mimic.write_text(PENDULUM_URDF.replace('<axis xyz="1 1 0"/>', '<axis xyz="1 1 0"/><mimic joint="j1"/>'))
    assert main(["compare", str(mimic), "--repeat", "2", "--mimic", "error"]) == 2
    assert "--mimic independent" in capsys.readouterr().err
    assert main(["compare", str(mimic), "--repeat", "2", "--mimic", "independent"]) == 0
    assert main(["compare", str(mimic), "--repeat", "2"]) == 0  # coupled, the default


def test_compare_reads_a_file_by_its_root_element(capsys, tmp_path):
    urdf_as_xml = tmp_path / "robot.xml"
    urdf_as_xml.write_text(PENDULUM_URDF)
    assert main(["compare", str(urdf_as_xml), "--repeat", "2"]) == 0
    assert "nq = 2" in capsys.readouterr().out
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    assert main(["compare", str(other)]) == 2
    assert "not a URDF" in capsys.readouterr().err


@pytest.mark.parametrize("solver", ["redmax-direct", "redmax-pcg"])
def test_simulate_writes_the_trajectory_and_a_picture(capsys, tmp_path, solver, saved_figures):
    out, png = tmp_path / "bridge.npz", tmp_path / "bridge.png"
    assert (
        main(
            [
                "simulate",
                "bridge:5,3",
                "--steps",
                "20",
                "--every",
                "5",
                "--solver",
                solver,
                "--out",
                str(out),
                "--plot",
                str(png),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "loop-closure residual" in text and "20 steps" in text
    data = np.load(out)
    assert data["q"].shape == (5, 11) and abs(data["t"][-1] - 0.2) <= 20 * 0.2 * 2**-53  # 20 additions of h
    # Baumgarte-stabilised loops: position drift O(h²·|v|²) per step, pulled back at rate 1/h (as in
    # tests/scenes/test_scenes_redmax.py); 1e-3 m is that drift's size, not rounding
    assert data["position_residual"].shape == (20,) and np.all(data["position_residual"] < 1e-3)
    if solver == "redmax-pcg":
        assert np.all(data["iterations"] > 0)
    pytest.importorskip("matplotlib")
    assert png.stat().st_size > 1000
    assert_readable(saved_figures, 1)  # units, a legend, nothing clipped (tests/figcheck.py)


def test_simulate_bad_scene_is_a_clear_error(capsys):
    assert main(["simulate", "bridge:2"]) == 2
    assert "n_deck" in capsys.readouterr().err
    assert main(["simulate", "nosuchscene"]) == 2
    assert "unknown scene" in capsys.readouterr().err


def test_compare_takes_the_scene_names_of_simulate_and_compares_like_with_like(capsys):
    # tree:2 is the RedMax tree scene (springs, damping, point forces) in both commands: the solvers
    # that model those terms are compared with each other, the tree solvers are skipped with the reason
    assert main(["compare", "tree:2", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert "10 bodies" in out
    rows = [l for l in out.splitlines() if l.startswith(("redmax-direct ", "redmax-pcg "))]
    assert len(rows) == 2 and all(l.rstrip().endswith("yes") for l in rows)
    assert [l for l in out.splitlines() if l.startswith("aba ")][0].count(
        "springs, point forces, which this solver leaves out"
    )


@pytest.mark.parametrize("command", ["compare", "simulate"])
def test_an_unknown_name_lists_the_grammar(capsys, command):
    assert main([command, "tre:4"]) == 2
    err = capsys.readouterr().err
    assert "unknown scene 'tre'" in err and "random:N" in err and "tree[:LEVELS" in err


def test_simulate_centipede_runs_with_contact_and_writes_plot_animation_and_trajectory(capsys, tmp_path, saved_figures):
    png, gif, out = tmp_path / "walk.png", tmp_path / "walk.gif", tmp_path / "walk.npz"
    args = ["simulate", "centipede:2", "--steps", "20", "--plot", str(png), "--animate", str(gif), "--out", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    # the summary: steps, simulated time, wall time and the solver; contacts, penetration, QP; the walk
    assert "centipede:2: 25 DOF, 20 steps of h = 0.001 (0.02 s simulated) in " in text
    assert "with the C++ step (semi-implicit, contact solver admm)" in text
    assert "contacts per step: mean" in text and "max penetration" in text and "QP iterations per step" in text
    assert "centre of mass walked" in text and "m along x" in text
    data = np.load(out)
    assert data["q"].shape[0] == 21 and data["v"].shape == (21, 25)  # nv = 11 n + 3
    assert data["n_contacts"].shape == (20,) and np.all(data["n_contacts"] >= 1)  # feet on the ground
    assert data["com"].shape == (21, 3) and str(data["integrator"]) == "semi-implicit"
    assert np.all(np.isfinite(data["q"])) and abs(data["t"][-1] - 0.02) <= 20 * 0.02 * 2**-53
    image = pytest.importorskip("matplotlib.image")
    assert image.imread(png).ndim == 3
    from PIL import Image

    with Image.open(gif) as im:
        assert im.format == "GIF" and im.n_frames == 21  # every recorded state: 21 <= --frames 100
    assert_readable(saved_figures, 1 + 21)  # the plot and every frame: units, legend, nothing clipped
    frames = [limits for _, _, limits in saved_figures[1:]]
    assert all(f == frames[0] for f in frames)  # the views stay put over the animation


def test_simulate_animation_keeps_at_most_frames_and_works_for_redmax_scenes(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    gif = tmp_path / "bridge.gif"
    assert main(["simulate", "bridge:5,3", "--steps", "12", "--animate", str(gif), "--frames", "5"]) == 0
    assert "(5 frames of 13 recorded states" in capsys.readouterr().out  # states 0, 3, 6, 9, 12
    with Image.open(gif) as im:
        assert im.n_frames == 5


def test_simulate_contact_options(capsys, tmp_path):
    out = tmp_path / "euler.npz"
    assert main(["simulate", "centipede:1", "--steps", "3", "--integrator", "euler", "--contact-solver", "proxqp", "--solver", "aba", "--h", "1e-4",
                 "--every", "2", "--out", str(out)]) == 0  # fmt: skip
    assert "3 steps of h = 0.0001" in capsys.readouterr().out
    data = np.load(out)
    assert str(data["solver"]) == "aba" and str(data["integrator"]) == "euler" and data["t"].shape == (3,)


def test_simulate_reports_the_constraints_of_a_file(capsys, tmp_path):
    """An MJCF four-bar closed by <equality connect>, its crank leaning back onto the lower end of
    its range (gravity holds it there; upright, it would stand at an unstable equilibrium): the
    report gives the rows, the largest |C| over the run (the soft connect's: MuJoCo's own stretch
    over the same 200 steps of its default 0.002 s) and the limits in the problem."""
    path = tmp_path / "four_bar.xml"
    path.write_text(
        xml := """<mujoco><worldbody>
      <body name="crank"><joint name="j1" axis="0 1 0" range="0 20"/><geom type="capsule" fromto="0 0 0 -0.05 0 0.1" size="0.01"/>
        <body name="coupler" pos="-0.05 0 0.1"><joint name="j2" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.45 0 0.1" size="0.01"/>
          <body name="rocker" pos="0.45 0 0.1"><joint name="j3" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.01"/>
    </body></body></body></worldbody>
    <equality><connect body1="rocker" body2="world" anchor="0 0 -0.2"/></equality></mujoco>"""
    )
    assert main(["simulate", str(path), "--steps", "200"]) == 0
    out = capsys.readouterr().out
    assert "constraints (loop closures, couplings): 3 rows, max |C(q)|" in out
    worst = float(out.split("max |C(q)| ")[1].split()[0])
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_string(xml)
    d, stretch = mujoco.MjData(m), 0.0
    for _ in range(200):
        mujoco.mj_step(m, d)
        stretch = max(stretch, np.abs(d.efc_pos[: d.ne]).max())
    assert abs(worst - stretch) < 1e-3 * stretch  # (the report's 4 digits)
    assert "joint limits in the problem per step" in out


@pytest.mark.parametrize(
    "args,message",
    [
        (["centipede:1", "--steps", "0"], "--steps must be >= 1"),
        (["centipede:1", "--every", "0"], "--every must be >= 1"),
        (["centipede:1", "--h", "-1"], "--h must be positive"),
        (["centipede:1", "--animate", "walk.mp4"], "give a .gif file"),
        (["centipede:1", "--animate", "walk.gif", "--frames", "1"], "--frames must be >= 2"),
        (["centipede:1", "--contact-solver", "proxqp", "--solver", "nosuch"], "unknown solver 'nosuch'"),
        (["centipede:1", "--solver", "aba"], "add --contact-solver proxqp or drop --solver"),
        (
            ["centipede:1", "--contact-solver", "lcp"],
            "--contact-solver must be one of 'auto', 'admm', 'newton', 'proxqp'",
        ),
        (["bridge:5,3", "--integrator", "euler"], "--integrator is for scenes with contact"),
        (["bridge:5,3", "--contact-solver", "admm"], "--contact-solver is for scenes with contact"),
        (["chain:2", "--out", "/no/such/folder/run"], "--out /no/such/folder/run.npz: the folder /no/such/folder"),
        (["chain:2", "--plot", "/no/such/folder/a.png"], "the folder /no/such/folder does not exist"),
        (["chain:100000000"], "n = 100000000 is more than a spec builds (at most 100000)"),
        (["centipede:2,friction=lots"], "friction must be a number, got 'lots'"),
    ],
)
def test_simulate_bad_options_are_clear_errors(capsys, args, message):
    assert main(["simulate", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_simulate_out_writes_the_file_it_names(capsys, tmp_path):
    """--out run (no suffix) writes run.npz and says so; a documented scene option (friction) is taken."""
    assert main(["simulate", "centipede:1,friction=0.5", "--steps", "3", "--out", str(tmp_path / "run")]) == 0
    assert f"trajectory: {tmp_path / 'run.npz'}" in capsys.readouterr().out and (tmp_path / "run.npz").exists()


@pytest.mark.parametrize(
    "args,message", [(["--port", "70000"], "--port must be in 0..65535"), (["--host", "bad..host"], "--host")]
)
def test_view_bad_port_or_host_is_a_clear_error(capsys, args, message):
    assert main(["view", "chain:2", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_simulate_unknown_integrator_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["simulate", "centipede:1", "--integrator", "leapfrog"])
    assert e.value.code == 2 and "invalid choice: 'leapfrog'" in capsys.readouterr().err
    assert main(["simulate", "centipede:1", "--integrator", "rk4"]) == 2  # (hard contacts: no RK4)
    assert "needs soft=True" in capsys.readouterr().err


def test_simulate_bridge_with_the_car_draws_it(capsys, tmp_path, saved_figures):
    pytest.importorskip("matplotlib")
    png, gif = tmp_path / "bridge.png", tmp_path / "bridge.gif"
    args = ["simulate", "bridge:5,3,car=car", "--steps", "10", "--plot", str(png), "--animate", str(gif)]
    assert main([*args, "--frames", "3"]) == 0
    assert_readable(saved_figures, 1 + 3)
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []  # the command closes what it opens


def test_simulate_that_diverges_suggests_a_smaller_h(capsys):
    # a 5-link chain at h = 10 s: the implicit RedMax step overflows after a few steps
    assert main(["simulate", "chain:5", "--h", "10", "--steps", "50"]) == EXIT_DIVERGED == 3
    captured = capsys.readouterr()
    err = captured.err
    assert "treedyn: error: chain:5: the simulation diverged at t = " in err
    assert "try a smaller one, e.g. --h 1 (now h = 10)" in err and "Traceback" not in err + captured.out


def test_simulate_with_contact_that_diverges_suggests_a_smaller_h(capsys, tmp_path):
    """A double pendulum started horizontal, over a floor it never reaches (a scene with contact),
    stepped by explicit Euler at h = 1 s: the swing gains energy every step until |v| passes 1e10."""
    path = tmp_path / "pendulum.xml"
    path.write_text(PENDULUM_MJCF.replace('<body name="a">', '<body name="a" euler="0 90 0">').replace(
        "<worldbody>", '<worldbody><geom type="plane" pos="0 0 -50" size="10 10 0.1"/>'))  # fmt: skip
    assert main(["simulate", str(path), "--integrator", "euler", "--h", "1", "--steps", "400"]) == EXIT_DIVERGED
    err = capsys.readouterr().err
    assert "the simulation diverged at t = " in err and "past 1e10" in err and "singular" not in err.lower()
    assert "e.g. --h 0.1 (now h = 1)" in err and "Traceback" not in err


def test_progress_bar_only_on_a_terminal_or_when_asked(capsys):
    """stderr here is captured (not a terminal): no bar unless --progress, and then a short one."""
    assert main(["simulate", "bridge:5,3", "--steps", "5"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["simulate", "bridge:5,3", "--steps", "5", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "bridge:5,3,params=sim (11 DOF, redmax-direct):" in err and "0/5" in err


def test_version_prints_treedyns_version(capsys):
    import treedyn

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"treedyn {treedyn.__version__}"


def test_help_ends_with_examples_that_parse(capsys):
    from treedyn.tools.cli import EXAMPLES, build_parser

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "examples:" in out and all(cmd in out for cmd, _ in EXAMPLES)
    assert 4 <= len(EXAMPLES) <= 6
    for cmd, _ in EXAMPLES:
        build_parser().parse_args(cmd.split()[1:])  # every example is a valid command line


def test_every_example_of_the_help_runs(capsys, tmp_path, monkeypatch):
    """Each example of ``treedyn --help``, run in a folder with its robot.urdf, shortened: 2 steps,
    1 timing sample."""
    from treedyn.tools.cli import EXAMPLES

    monkeypatch.chdir(tmp_path)
    (tmp_path / "robot.urdf").write_text(PENDULUM_URDF)
    for cmd, _ in EXAMPLES:
        argv = cmd.split()[1:]
        if "--steps" in argv:
            argv[argv.index("--steps") + 1] = "2"
        if argv[0] == "compare":
            argv += ["--repeat", "1"]
        assert main(argv) == 0, cmd
    capsys.readouterr()
    assert (tmp_path / "bridge.npz").exists() and (tmp_path / "walk.png").exists()


def test_a_redmax_run_keeps_every_kth_state_and_the_steps_statistics(tmp_path):
    out = tmp_path / "tree.npz"
    assert main(["simulate", "tree:3", "--steps", "7", "--every", "3", "--out", str(out)]) == 0
    z = np.load(out)
    assert np.allclose(z["t"], [0.0, 0.03, 0.06, 0.07])  # states 0, 3, 6 and the last
    assert z["q"].shape[0] == 4 and z["position_residual"].shape == (7,) and z["seconds"].shape == (7,)
