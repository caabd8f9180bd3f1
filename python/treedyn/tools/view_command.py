"""``treedyn view`` and ``treedyn simulate ... --view / --html``: a model, a scene or a run in the
3D browser viewer (treedyn.tools.viewer), served until Ctrl-C or written to a file."""

from __future__ import annotations

import numpy as np

__all__ = ["add_view_parser", "add_run_options", "show_run"]


def add_view_parser(sub) -> None:
    v = sub.add_parser(
        "view",
        help="open a model, a scene or a saved run in the 3D viewer in the browser (treedyn[viewer])",
        description="Serves the 3D viewer (viser) and prints its URL; Ctrl-C stops it. With --html or --png it "
        "writes the page or a still and exits.",
    )
    v.add_argument("model", help="a URDF or MJCF file, or a scene (centipede:10, chain:5, bridge:20,20, ...)")
    v.add_argument("--trajectory", metavar="RUN.npz", help="play a run written by treedyn simulate --out")
    v.add_argument("--floating-base", action="store_true", help="URDF: a free joint at the root link")
    add_output_options(v)
    v.add_argument("--frames", action="store_true", help="show the body frames")
    v.add_argument("--named-frames", action="store_true", help="show the model's named frames (links, sites)")
    v.add_argument("--com", action="store_true", help="show the centre of mass and its path")
    v.set_defaults(func=cmd_view)


def add_output_options(p) -> None:
    p.add_argument("--html", metavar="FILE.html", help="write a self-contained page of the scene or run, then exit")
    p.add_argument("--png", metavar="FILE.png", help="write a still (headless Chromium), then exit")
    p.add_argument("--host", default="127.0.0.1", help="where the viewer listens (0.0.0.0: any address)")
    p.add_argument("--port", type=int, default=None, help="the viewer's port (default: a free one)")


def add_run_options(p) -> None:
    """simulate's: --view serves the run when it ends; --html / --png write it."""
    p.add_argument("--view", action="store_true", help="open the run in the 3D viewer when it ends (until Ctrl-C)")
    add_output_options(p)


def _model_and_state(args):
    from ..model import Model
    from ..scenes import scene_from_spec

    spec = args.model
    if spec.lower().endswith((".urdf", ".xml")):
        load = Model.from_mjcf if spec.lower().endswith(".xml") else Model.from_urdf
        kw = {"floating_base": True} if args.floating_base and spec.lower().endswith(".urdf") else {}
        model = load(spec, **kw)
        return model, None, spec
    scene = scene_from_spec(spec)
    return scene.model, scene.state.q.copy(), scene.name


def read_trajectory(path: str, nq: int) -> tuple:
    """(t (T,), q (T, nq)) of an npz (treedyn simulate --out), each array's header checked before it is
    read: a file that declares more data than it holds (an array of 7.6 GiB in 7.9 MB), another dtype
    than real numbers or other shapes is refused by name (ValueError), never allocated."""
    import zipfile

    from numpy.lib import format as npy

    what = f"--trajectory {path}"
    headers = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}
    try:
        with zipfile.ZipFile(path) as z:
            members = {info.filename.removesuffix(".npy"): info for info in z.infolist()}
            if "t" not in members or "q" not in members:
                raise ValueError(f"{what}: no arrays 't' and 'q' (treedyn simulate --out writes them)")
            for key, want in (("t", 1), ("q", 2)):
                with z.open(members[key]) as f:
                    version = npy.read_magic(f)
                    if version not in headers:
                        raise ValueError(f"{what}: {key!r} is an .npy of format {version}, not 1.0 or 2.0")
                    shape, _, dtype = headers[version](f)
                if dtype.kind not in "fi" or len(shape) != want or (want == 2 and shape[1] != nq):
                    raise ValueError(
                        f"{what}: {key!r} is {dtype} of shape {shape}; want real numbers, (T,) and (T, {nq})"
                    )
                if int(np.prod(shape)) * dtype.itemsize > members[key].file_size:
                    raise ValueError(f"{what}: {key!r} declares {shape} ({dtype}), more than the file holds")
        with np.load(path) as run:
            t, q = np.asarray(run["t"], dtype=float), np.asarray(run["q"], dtype=float)
    except (OSError, zipfile.BadZipFile) as e:
        raise ValueError(f"{what}: {getattr(e, 'strerror', None) or e}") from None
    if len(t) != len(q):
        raise ValueError(f"{what}: 't' has {len(t)} frames, 'q' {len(q)}")
    return t, q


def cmd_view(args) -> int:
    model, q, name = _model_and_state(args)
    trajectory = None
    if args.trajectory:
        trajectory = read_trajectory(args.trajectory, model.nq)
        q = None
    opts = dict(frames=args.frames, named_frames=args.named_frames, com=args.com)
    return _serve_or_write(model, trajectory, q, name, args, **opts)


def show_run(model, trajectory, name: str, args) -> None:
    """After treedyn simulate: the run in the viewer (--view) or written (--html, --png)."""
    if args.view or args.html or args.png:
        _serve_or_write(model, trajectory, None, name, args, com=True)


def _serve_or_write(model, trajectory, q, name, args, **opts) -> int:
    from .viewer import Viewer

    write = bool(args.html or args.png)
    viewer = Viewer(model, trajectory, q=q, host=args.host, port=args.port, play=not write, verbose=not write, **opts)
    try:
        if args.html:
            print(f"  page: {viewer.save_html(args.html, title=f'treedyn: {name}')}")
        if args.png:
            if len(viewer.playback) > 1:
                viewer.show_index(len(viewer.playback) - 1)  # (the run's last state)
            viewer.screenshot(args.png)
            print(f"  still: {args.png}")
        if write and not getattr(args, "view", False):
            return 0
        print("  serving the viewer; Ctrl-C to stop", flush=True)
        viewer.wait()
    finally:
        viewer.close()
    return 0
