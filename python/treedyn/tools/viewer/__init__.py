"""``td.view``: a model, a configuration or a trajectory in 3D, in the browser, through viser.

Why viser (docs/guide/viewer.md): a maintained library made for robotics scenes in the browser
(three.js underneath); one pip package with its web client built in; GUI controls (the timeline's
play, pause, scrub and speed) in the same page; a headless server that prints its URL; and its
recordings play back in its own client without Python, which is how ``save_html`` writes one
self-contained page. It is an optional extra (``pip install 'treedyn[viewer]'``): importing
treedyn never imports it, and a simulation never touches the viewer.

The scene: every geom (primitives and convex meshes, in its rgba or by the body's depth in the tree), a
body with mass and no geom as rods from its frame to its children's joints, the ground where the
model has a plane, and on demand the tree as lines, the body frames, the model's named frames, the
centre of mass and its path, and the contacts of each recorded step (``ContactSimulator.run(...,
record_contacts=True)``): points, with the force on the robot's body as two arrows, normal and
friction, scaled and coloured by magnitude.
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import threading
import time
from pathlib import Path

import numpy as np

from ... import _checks
from ...model import Model
from ..plot import tree_segments
from .browser import BrowserNotFound, find_browser, headless_browser, page_screenshot, standalone_html
from .meshes import (
    CONTACT,
    FRICTION,
    body_colours,
    geom_mesh,
    ground_mesh,
    link_meshes,
    magnitude_colours,
    quaternion_wxyz,
    rgb_opacity,
    shape_radius,
)
from .playback import Playback, contact_arrows, playback_of

__all__ = ["view", "Viewer", "BrowserNotFound", "find_browser", "page_screenshot"]


def view(model, trajectory=None, *, q=None, **options) -> Viewer:
    """Open ``model`` in a 3D viewer in the browser and return the Viewer (its ``url`` printed).

    trajectory: a SimulationResult or ContactTrajectory (its contacts drawn when the run recorded
    them), a pair (t, q), an .npz of ``treedyn simulate --out``, or a (K, nq) array; else the one
    configuration ``q`` (default: the model's reference configuration). Options: see Viewer."""
    return Viewer(model, trajectory, q=q, **options)


def _viser():
    try:
        import viser
    except ImportError:
        raise ImportError("the 3D viewer needs viser: pip install 'treedyn[viewer]'") from None
    return viser


class _NoFailedHandshakes(logging.Filter):
    """Drops websockets' "opening handshake failed" (a browser's speculative connection closed
    unused, which headless Chromium makes at every start): not an error of the viewer's."""

    def filter(self, record):
        return "opening handshake failed" not in record.getMessage()


def _quiet_handshakes():
    log = logging.getLogger("websockets.server")
    if not any(isinstance(f, _NoFailedHandshakes) for f in log.filters):
        log.addFilter(_NoFailedHandshakes())


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Viewer:
    """A viser server showing a model (``url``; ``with`` closes it, as does ``close()``).

    host, port: where the server listens (default 127.0.0.1 and a free port; host "0.0.0.0" to
    reach it from another machine). frames / named_frames / com / contacts / tree: what is shown
    at first (each has a checkbox in the page); tree: lines from each body's frame to its
    children's (a body with mass and nothing to show it is drawn as rods to its children's joints
    in any case). force_scale: metres of arrow per newton (default: the run's largest contact
    force, 95th percentile, drawn as a quarter of the model's size). play: start playing.
    verbose: print the URL."""

    def __init__(
        self,
        model,
        trajectory=None,
        *,
        q=None,
        host: str = "127.0.0.1",
        port: int | None = None,
        frames: bool = False,
        named_frames: bool = False,
        com: bool = False,
        contacts: bool = True,
        tree: bool = False,
        force_scale: float | None = None,
        play: bool = True,
        verbose: bool = True,
    ):
        viser = _viser()
        _checks.instance(model, Model, "td.view model")
        self.model = model
        self.playback: Playback = playback_of(model, trajectory, q)
        poses = [model.body_poses(q) for q in self.playback.q]
        self._R = np.array([R for R, _ in poses])  # (K, n, 3, 3): every body's rotation and origin, every state
        self._p = np.array([p for _, p in poses])  # (K, n, 3)
        self._wxyz = quaternion_wxyz(self._R)  # (K, n, 4), once: the frames only read them
        self._extent()
        self._force_scale(force_scale)
        port = _free_port(host) if port is None else _checks.integer(port, "port", minimum=1)
        with contextlib.redirect_stdout(io.StringIO()):  # (viser's banner: the URL is printed below)
            self.server = viser.ViserServer(host=host, port=port, verbose=False)
        _quiet_handshakes()
        self.url = f"http://{'127.0.0.1' if host == '0.0.0.0' else host}:{self.server.get_port()}"
        self._lock = threading.RLock()
        self._closed = threading.Event()
        self._index, self._time, self._playing = 0, float(self.playback.t[0]), bool(play) and len(self.playback) > 1
        self._setting = False  # the slider is being set by the playback (not by the user)
        try:
            self._scene(tree, frames, named_frames, com, contacts)
            self._gui()
            self.show_index(0)
        except BaseException:
            with contextlib.redirect_stdout(io.StringIO()):
                self.server.stop()
            raise
        self._thread = threading.Thread(target=self._run, name="treedyn-viewer", daemon=True)
        self._thread.start()
        if verbose:
            print(f"treedyn viewer: {self.url}", flush=True)

    # ------------------------------------------------------------------ the scene
    def _extent(self):
        """The model's size L (m) and where it is: the box of the body origins and centres of mass
        over the trajectory; the camera looks at its centre from a diagonal, 1.1 L away."""
        model, pts = self.model, [self._p[:, 1:].reshape(-1, 3)]
        if model.n_bodies > 1:
            pts.append(self.playback.com_path(model))
        P = np.concatenate(pts) if model.n_bodies > 1 else np.zeros((1, 3))
        reach = max((shape_radius(g.shape) for g in model.geoms if g.body > 0), default=0.0)
        lo, hi = P.min(axis=0) - reach, P.max(axis=0) + reach  # (the geoms stick out of the frames)
        self._centre = 0.5 * (lo + hi)
        self.size = max(float(np.max(hi - lo)), 0.2)
        g = np.asarray(model.gravity, dtype=float)
        self._up = -g / np.linalg.norm(g) if np.linalg.norm(g) > 0 else np.array([0.0, 0.0, 1.0])

    def camera_default(self) -> tuple[np.ndarray, np.ndarray]:
        """(position, look_at) of the first view: from the front (+x), left (+y) and above, 1.1 sizes away."""
        up = self._up
        side = np.cross(up, [1.0, 0.0, 0.0]) if abs(up[0]) < 0.9 else np.cross(up, [0.0, 1.0, 0.0])
        side /= np.linalg.norm(side)
        front = np.cross(side, up)
        d = 0.8 * front + 0.5 * side + 0.45 * up
        return self._centre + 1.1 * self.size * d / np.linalg.norm(d), self._centre.copy()

    def _force_scale(self, force_scale):
        pb = self.playback
        mags = [contact_arrows(c, 1.0)[3] for c in pb.contacts] if pb.contacts else []
        mags = np.concatenate(mags) if mags and sum(map(len, mags)) else np.zeros(0)
        self.force_top = float(np.percentile(mags, 95)) if len(mags) else 1.0
        if force_scale is None:
            self.force_scale = 0.25 * self.size / max(self.force_top, 1e-9)
        else:
            self.force_scale = _checks.real(force_scale, "force_scale", positive=True)

    def _scene(self, tree, frames, named_frames, com, contacts):
        model, scene = self.model, self.server.scene
        scene.set_up_direction(tuple(float(x) for x in self._up))
        # the default lights only: viser's environment map (an HDRI the page loads after it connects)
        # washes the colours out and makes a still depend on when it is taken
        scene.configure_environment_map(None)
        position, look_at = self.camera_default()
        self.server.initial_camera.position, self.server.initial_camera.look_at = position, look_at
        n, colours = model.n_bodies, body_colours(model)
        self._bodies = {}  # body index -> the handle of its frame node (moved each frame)
        self.left_out, self._visuals = [], []  # the visuals that could not be drawn, and why; those drawn
        seen = np.zeros(n, dtype=bool)  # bodies with a visual: their collision geoms hidden at first
        for k, vis in enumerate(model.visuals):
            try:
                mesh = geom_mesh(vis.shape)
            except ValueError as e:
                self.left_out.append(f"{vis.name}: {e}")
                continue
            colour, opacity = rgb_opacity(vis.rgba) if vis.rgba is not None else (colours[vis.body], None)
            parent = "/world" if vis.body == 0 else self._body_node(vis.body)
            pose = dict(wxyz=quaternion_wxyz(vis.placement.rotation), position=vis.placement.translation)
            self._visuals.append(
                scene.add_mesh_simple(f"{parent}/visual{k}", *mesh, color=colour, opacity=opacity, **pose)
            )
            seen[vis.body] = True
        self._collision = []  # (handle, whether its body has visuals)
        for k, g in enumerate(model.geoms):
            mesh = geom_mesh(g.shape)
            pose = dict(wxyz=quaternion_wxyz(g.placement.rotation), position=g.placement.translation)
            if mesh is None:  # a plane: the ground, where the model moves
                half = 3.0 * self.size + float(np.max(np.abs(self._centre)))
                V, F = ground_mesh(half)
                scene.add_mesh_simple(f"/world/ground{k}", V, F, color=colours[0], **pose)
                cell = float(10 ** np.floor(np.log10(max(self.size / 4, 1e-3))))
                scene.add_grid(
                    f"/world/ground{k}/grid", width=2 * half, height=2 * half, cell_size=cell, section_size=10 * cell
                )
                continue
            parent = "/world" if g.body == 0 else self._body_node(g.body)
            colour, opacity = rgb_opacity(g.rgba) if g.rgba is not None else (colours[g.body], None)
            h = scene.add_mesh_simple(
                f"{parent}/geom{k}", *mesh, color=colour, opacity=opacity, visible=not seen[g.body], **pose
            )
            self._collision.append((h, seen[g.body]))
        for i, mesh in link_meshes(model, self.size).items():  # bodies with no geom: their links as rods
            scene.add_mesh_simple(f"{self._body_node(i)}/link", *mesh, color=colours[i])
        self._tree_on = bool(tree)
        self._frames_on, self._named_on, self._com_on = bool(frames), bool(named_frames), bool(com)
        self._collision_on = False
        self._contacts_on = bool(contacts) and self.playback.contacts is not None
        axis = 0.15 * self.size
        self._axes = [
            scene.add_frame(
                f"{self._body_node(i)}/axes", axes_length=axis, axes_radius=axis / 20, visible=self._frames_on
            )
            for i in range(1, n)
        ]
        self._named = []
        for name, (body, X) in model.frames.items():
            b = model.body_index(body)
            if b == 0:
                node = f"/world/frames/{name}"
            else:
                node = f"{self._body_node(b)}/frames/{name}"
            self._named.append(
                scene.add_frame(
                    node,
                    axes_length=0.6 * axis,
                    axes_radius=axis / 30,
                    wxyz=quaternion_wxyz(X.rotation),
                    position=X.translation,
                    visible=self._named_on,
                )
            )
            self._named.append(scene.add_label(f"{node}/label", name, visible=self._named_on))
        if n > 1:
            path = self._com = self.playback.com_path(model)
            self._com_ball = scene.add_icosphere(
                "/com", radius=0.03 * self.size, color=(20, 20, 20), visible=self._com_on, position=path[0]
            )
            seg = np.stack([path[:-1], path[1:]], axis=1) if len(path) > 1 else np.zeros((0, 2, 3))
            self._com_path = scene.add_line_segments(
                "/com_path", seg, (20, 20, 20), thickness=0.005 * self.size, visible=self._com_on and len(seg) > 0
            )

    def _body_node(self, i: int) -> str:
        """The scene node of body i (a frame moved to the body's pose each frame; its geoms and
        frames hang from it), made on first use."""
        if i not in self._bodies:
            self._bodies[i] = self.server.scene.add_frame(f"/robot/body{i}", show_axes=False)
        return self._bodies[i].name

    # ------------------------------------------------------------------ one frame
    def show_index(self, k: int) -> None:
        """Show the k-th kept state (and its contacts)."""
        k = int(np.clip(k, 0, len(self.playback) - 1))
        with self._lock, self.server.atomic():
            self._index, R, p, wxyz = k, self._R[k], self._p[k], self._wxyz[k]
            for i, h in self._bodies.items():
                h.wxyz, h.position = wxyz[i], p[i]
            self._draw_tree(R, p)
            if self.model.n_bodies > 1 and self._com_on:
                self._com_ball.position = self._com[k]
            self._draw_contacts(k)

    def _draw_tree(self, R, p):
        model = self.model
        if not self._tree_on or model.n_bodies < 2:
            if hasattr(self, "_tree_node"):
                self._tree_node.visible = False
            return
        seg, _ = tree_segments(model, R, p)  # (treedyn.plot's: frame to child frame, a leaf to 2x its centre of mass)
        self._tree_node = self.server.scene.add_line_segments(
            "/tree", seg, (30, 60, 160), thickness=0.012 * self.size, visible=len(seg) > 0
        )

    def _draw_contacts(self, k: int):
        scene, pb = self.server.scene, self.playback
        if pb.contacts is None:
            return
        P, normal, friction, fn, ft = contact_arrows(pb.contacts[k], self.force_scale)
        on = self._contacts_on and len(P) > 0
        if not on:
            for name in ("points", "normal", "friction"):
                if hasattr(self, f"_contact_{name}"):
                    getattr(self, f"_contact_{name}").visible = False
            return
        r = 0.006 * self.size
        self._contact_points = scene.add_point_cloud(
            "/contacts/points", P, np.tile(CONTACT, (len(P), 1)), point_size=3 * r, point_shape="circle"
        )
        self._contact_normal = scene.add_arrows(
            "/contacts/normal",
            normal,
            magnitude_colours(fn, self.force_top),
            shaft_radius=r,
            head_radius=2.5 * r,
            head_length=6 * r,
        )
        strong = ft > 1e-3 * max(self.force_top, 1e-300)  # (no arrow for a friction force of nothing)
        self._contact_friction = scene.add_arrows(
            "/contacts/friction",
            friction[strong] if strong.any() else np.zeros((0, 2, 3)),
            FRICTION,
            shaft_radius=0.7 * r,
            head_radius=1.8 * r,
            head_length=4 * r,
            visible=bool(strong.any()),
        )

    # ------------------------------------------------------------------ the page's controls
    def _gui(self):
        gui, pb = self.server.gui, self.playback
        if len(pb) > 1:
            t0, t1 = float(pb.t[0]), float(pb.t[-1])
            step = float(max(np.min(np.diff(pb.t)) if len(pb) > 1 else 0.0, (t1 - t0) / 10000, 1e-6))
            with gui.add_folder("Playback"):
                self._play_button = gui.add_button("Pause" if self._playing else "Play")
                self._slider = gui.add_slider("time (s)", min=t0, max=max(t1, t0 + step), step=step, initial_value=t0)
                self._speed = gui.add_slider("speed", min=0.05, max=4.0, step=0.05, initial_value=1.0)
                self._loop = gui.add_checkbox("loop", initial_value=True)

            @self._play_button.on_click
            def _(_):
                self.pause() if self._playing else self.play()

            @self._slider.on_update
            def _(_):
                if not self._setting:  # the user scrubbed
                    self._time = float(self._slider.value)
                    self.show_index(pb.index(self._time))

        with gui.add_folder("Show"):
            boxes = {
                "body frames": ("_frames_on", self._axes),
                "named frames": ("_named_on", self._named),
                "centre of mass": ("_com_on", [getattr(self, "_com_ball", None), getattr(self, "_com_path", None)]),
                "tree": ("_tree_on", []),
            }
            if any(shown for _, shown in self._collision):  # (bodies with visuals hide their collision geoms)
                boxes["collision geoms"] = ("_collision_on", [h for h, shown in self._collision if shown])
            if pb.contacts is not None:
                boxes["contacts and forces"] = ("_contacts_on", [])
            for label, (attr, nodes) in boxes.items():
                box = gui.add_checkbox(label, initial_value=getattr(self, attr))

                def toggled(_, box=box, attr=attr, nodes=nodes):
                    setattr(self, attr, bool(box.value))
                    for h in nodes:
                        if h is not None:
                            h.visible = bool(box.value)
                    self.show_index(self._index)

                box.on_update(toggled)

    def play(self) -> None:
        self._playing = len(self.playback) > 1
        if hasattr(self, "_play_button"):
            self._play_button.label = "Pause"

    def pause(self) -> None:
        self._playing = False
        if hasattr(self, "_play_button"):
            self._play_button.label = "Play"

    def show_time(self, t: float) -> None:
        """Show the last kept state at or before time t (s), and move the timeline there."""
        self._time = _checks.real(t, "t")
        k = self.playback.index(self._time)
        if hasattr(self, "_slider"):
            self._setting = True
            try:
                self._slider.value = float(np.clip(self._time, self._slider.min, self._slider.max))
            finally:
                self._setting = False
        self.show_index(k)

    def _run(self):
        """The timeline: while playing, advance the time by the wall clock times the speed, ~30
        frames a second (at the end: back to the start when looping, else pause)."""
        pb, last = self.playback, time.perf_counter()
        while not self._closed.wait(1 / 30):
            now = time.perf_counter()
            dt, last = now - last, now
            if not self._playing:
                continue
            t = self._time + dt * float(self._speed.value)
            if t > pb.t[-1]:
                if self._loop.value:
                    t = float(pb.t[0])
                else:
                    t = float(pb.t[-1])
                    self.pause()
            try:
                self.show_time(t)
            except Exception:  # (the server closed under the thread)
                if self._closed.is_set():
                    return
                raise

    # ------------------------------------------------------------------ out of the browser
    def save_html(self, path, *, max_frames: int = 600, title: str | None = None) -> Path:
        """Write the trajectory (at most ``max_frames`` states, evenly spread in time) as one HTML
        page that plays it with its own timeline, opened from disk with no Python and no server."""
        max_frames = _checks.integer(max_frames, "max_frames", minimum=1)
        pb = self.playback
        with self._lock:
            was, self._playing = self._playing, False
            try:
                keep = _spread(pb.t, max_frames)
                recorder = self.server.get_scene_serializer()
                prev = float(pb.t[keep[0]])
                for k in keep:
                    recorder.insert_sleep(max(float(pb.t[k]) - prev, 0.0))
                    prev = float(pb.t[k])
                    self.show_index(k)
                if len(keep) == 1:
                    recorder.insert_sleep(0.5)  # (a still: some time for the page's player)
                data = recorder.serialize()
            finally:
                self._playing = was
        path = Path(path)
        path.write_text(standalone_html(data, title or f"treedyn: {self.model.n_bodies - 1} bodies"), encoding="utf-8")
        return path

    def screenshot(self, path=None, *, width: int = 1024, height: int = 768, position=None, look_at=None, timeout=60.0):
        """The scene rendered by the page (an (height, width, 3) uint8 RGB array on white) from a
        camera at ``position`` looking at ``look_at`` (world coordinates; default: the first
        view), written as PNG to ``path`` if given. Uses a connected browser, or starts a headless
        Chromium for the shot (BrowserNotFound if there is none)."""
        width = _checks.integer(width, "width", minimum=16)
        height = _checks.integer(height, "height", minimum=16)
        default_position, default_look = self.camera_default()
        position = default_position if position is None else _checks.vec3(position, "position")
        look_at = default_look if look_at is None else _checks.vec3(look_at, "look_at")
        browser = None
        try:
            if not self.server.get_clients():
                browser = headless_browser(self.url, width + 64, height + 160).__enter__()
            deadline = time.monotonic() + float(timeout)
            while not self.server.get_clients():
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no browser connected to {self.url} within {timeout} s")
                time.sleep(0.05)
            client = next(iter(self.server.get_clients().values()))
            if browser is not None:  # a page just opened loads its lights and environment map after connecting:
                client.get_render(64, 64, timeout=float(timeout))  # a first frame, thrown away, and a moment
                time.sleep(1.5)
            client.camera.up_direction = tuple(self._up)
            client.camera.position, client.camera.look_at = position, look_at
            time.sleep(0.3)  # (the page takes the camera, then renders)
            rgba = client.get_render(
                height,
                width,
                wxyz=client.camera.wxyz,
                position=position,
                fov=client.camera.fov,
                transport_format="png",
                timeout=float(timeout),
            )
        finally:
            if browser is not None:
                browser.__exit__(None, None, None)
        rgba = np.asarray(rgba, dtype=float)
        alpha = rgba[..., 3:4] / 255.0 if rgba.shape[-1] == 4 else 1.0
        rgb = (rgba[..., :3] * alpha + 255.0 * (1 - alpha)).round().astype(np.uint8)  # on white
        if path is not None:
            from PIL import Image

            Image.fromarray(rgb).save(path)
        return rgb

    # ------------------------------------------------------------------ lifetime
    def wait(self) -> None:
        """Serve until interrupted (Ctrl-C), then close."""
        try:
            while not self._closed.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            self.close()

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self._thread.join(timeout=5)
            with contextlib.redirect_stdout(io.StringIO()):  # ("Server stopped")
                self.server.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _repr_html_(self) -> str:  # a notebook shows the page in place
        return f'<iframe src="{self.url}" width="100%" height="560" style="border:0"></iframe>'

    def __repr__(self):
        return f"Viewer({self.url}, {self.model.n_bodies - 1} bodies, {len(self.playback)} states)"


def _spread(t: np.ndarray, m: int) -> np.ndarray:
    """At most m indices of t, evenly spread in time, the first and the last included."""
    if len(t) <= m:
        return np.arange(len(t))
    targets = np.linspace(t[0], t[-1], m)
    keep = np.unique(np.clip(np.searchsorted(t, targets, side="left"), 0, len(t) - 1))
    return np.unique(np.r_[0, keep, len(t) - 1])
