"""The viewer's two ways out of the browser: a self-contained HTML page of a recorded scene (viser's
own client with the recording embedded: it opens from a file, with no Python and no server), and a
headless Chromium to render stills (PNG) and to test that the page draws."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["BrowserNotFound", "find_browser", "headless_browser", "page_screenshot", "standalone_html"]

# the browsers tried, in order (TREEDYN_BROWSER first): Debian's package, then Chrome's names
_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


class BrowserNotFound(RuntimeError):
    """No Chromium or Chrome to render with (set TREEDYN_BROWSER to one)."""


def find_browser() -> str:
    """The path of a Chromium or Chrome executable (TREEDYN_BROWSER, else the first on PATH)."""
    given = os.environ.get("TREEDYN_BROWSER")
    if given:
        path = shutil.which(given)
        if path is None:
            raise BrowserNotFound(f"TREEDYN_BROWSER={given!r} is not an executable")
        return path
    for name in _BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise BrowserNotFound(
        "rendering a still needs Chromium or Chrome (headless): install it (Debian/Ubuntu: apt-get install "
        "chromium) or set TREEDYN_BROWSER to its executable"
    )


def _flags(profile: str, width: int, height: int) -> list[str]:
    # software WebGL (SwiftShader): a server has no GPU; no sandbox: CI runs as root
    return [
        "--headless=new",
        "--no-sandbox",
        "--use-angle=swiftshader",
        "--enable-unsafe-swiftshader",
        "--hide-scrollbars",
        "--mute-audio",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ]


def _clean_env() -> dict:
    """The environment without the sanitizers' preloads (CI runs the suite under ASan: a browser
    started from it must not load the runtime)."""
    return {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}


class headless_browser:
    """A headless Chromium showing ``url`` while the ``with`` block runs (it connects to the
    viewer's server like any browser); closed, with its profile folder, on exit."""

    def __init__(self, url: str, width: int = 1280, height: int = 960):
        self.url, self.width, self.height = url, width, height

    def __enter__(self):
        self._profile = tempfile.mkdtemp(prefix="treedyn-browser-")
        self._proc = subprocess.Popen(
            [find_browser(), *_flags(self._profile, self.width, self.height), self.url],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_clean_env(),
            start_new_session=True,
        )
        return self

    def __exit__(self, *exc):
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        shutil.rmtree(self._profile, ignore_errors=True)
        return False


def page_screenshot(
    page: str | os.PathLike, png: str | os.PathLike, *, width=1024, height=768, wait_ms=8000, timeout=120
):
    """A PNG of a page (a file path or URL) as headless Chromium draws it after ``wait_ms`` of the
    page's (virtual) time: how the tests and the docs look at an exported HTML file."""
    url = str(page) if "://" in str(page) else Path(page).resolve().as_uri()
    profile = tempfile.mkdtemp(prefix="treedyn-browser-")
    try:
        r = subprocess.run(
            [
                find_browser(),
                *_flags(profile, width, height),
                f"--virtual-time-budget={int(wait_ms)}",
                f"--screenshot={Path(png).resolve()}",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_clean_env(),
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if r.returncode != 0 or not Path(png).exists():
        raise RuntimeError(f"the browser could not take the screenshot (exit {r.returncode}): {r.stderr[-800:]}")
    return Path(png)


# The page: viser's client (one self-contained index.html in the viser package) with a script put
# first in its <head> that turns the embedded recording into a blob: URL and hands it to the client
# as its ?playbackPath= (the client's way to play a .viser recording, with its own timeline: play,
# pause, scrub, speed). A blob URL needs no server: the file opens from disk.
_LOADER = (
    "<script>(function(){{var b=atob('{data}');var u=new Uint8Array(b.length);"
    "for(var i=0;i<b.length;i++)u[i]=b.charCodeAt(i);"
    "var url=URL.createObjectURL(new Blob([u],{{type:'application/octet-stream'}}));"
    "var p=new URLSearchParams(location.search);if(!p.has('playbackPath')){{p.set('playbackPath',url);"
    "history.replaceState(null,'',location.pathname+'?'+p.toString()+location.hash);}}}})();</script>"
)


def standalone_html(recording: bytes, title: str) -> str:
    """One HTML page: viser's client and the recording (a .viser file's bytes), nothing to fetch."""
    import viser

    client = Path(viser.__file__).parent / "client" / "build" / "index.html"
    if not client.is_file():
        raise RuntimeError(f"this viser has no built client at {client}: the HTML export needs viser >= 1.0")
    html = client.read_text(encoding="utf-8")
    head = html.find("<head>")
    if head < 0:
        raise RuntimeError("viser's client page has no <head>: the HTML export does not know this viser")
    head += len("<head>")
    loader = _LOADER.format(data=base64.b64encode(recording).decode("ascii"))
    html = html[:head] + loader + html[head:]
    return html.replace("<title>Viser</title>", f"<title>{_escape(title)}</title>", 1)


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
