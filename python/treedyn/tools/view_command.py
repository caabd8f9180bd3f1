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


def cmd_view(args) -> int:
    model, q, name = _model_and_state(args)
    trajectory = None
    if args.trajectory:
        try:
            with np.load(args.trajectory) as run:
                if "t" not in run or "q" not in run:
                    raise ValueError(
                        f"--trajectory {args.trajectory}: no arrays 't' and 'q' (treedyn simulate --out writes them)"
                    )
                trajectory = (run["t"].copy(), run["q"].copy())
        except OSError as e:
            raise ValueError(f"--trajectory {args.trajectory}: {e.strerror or e}") from None
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
