"""The compiled-kernel cache of the code generator: a library in it is loaded only if this user's
treedyn built it for exactly this model, generator and compiler.

A kernel's file name is a hash of things any local user can compute (the generated source, the
compiler, its flags, the CPU), so the name proves nothing. What does:

- the folder ``$TREEDYN_CACHE/kernels`` (default ``~/.cache/treedyn/kernels``) is made 0700 and
  refused (``CacheError``) when it is not a folder of this user, when group or others may write
  to it, or when a folder above it may be written by others without the sticky bit (they could
  swap it between the check and the load);
- a per-user secret, ``kernels/key`` (32 random bytes, 0600, refused when another user owns it or
  others may read it), keys an HMAC-SHA256 over the library's bytes and its fingerprint, the
  SHA-256 of everything that made it (codegen.py: the model's whole generated source, the
  generator's and treedyn's versions, the compiler and its flags, the CPU);
- the fingerprint and the HMAC are appended to the library file as a trailer (the dynamic loader
  ignores bytes past its segments), so one ``os.replace`` publishes both: a reader never pairs a
  library with another build's tag, nor sees a half-written file;
- an entry's bytes are read and checked (its trailer's fingerprint is this model's, its HMAC is
  right, it is a regular file of this user that only this user may write) before it is handed to
  ``dlopen``: a planted library, another model's library of the same size, a truncated, empty or
  garbage file, a link or a folder at that name are never mapped, so none of their code runs and a
  truncated file cannot raise SIGBUS. Such an entry is removed and built again.

What this cannot stop: this user (or root) rewriting a checked library between the check and
``dlopen``; whoever can do that can already run code as this user.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

__all__ = ["CacheError", "folder", "open_folder", "key", "check", "discard", "store", "fingerprint", "read_regular"]

#: the trailer: MAGIC, the 32-byte fingerprint, the 32-byte HMAC
MAGIC = b"\0treedyn-kernel-v1\0"
_DIGEST = 32
TRAILER = len(MAGIC) + 2 * _DIGEST
#: a larger entry is refused unread (the source budget keeps real libraries far below it)
MAX_LIBRARY_BYTES = 1 << 30
_KEY = "key"


class CacheError(Exception):
    """The kernel cache cannot be used or trusted (the message says why)."""


def _uid() -> int:
    """The user the cache must belong to (tests replace it to act as another user)."""
    return os.geteuid()


def folder() -> Path:
    """``$TREEDYN_CACHE/kernels``, by default ``~/.cache/treedyn/kernels``."""
    root = os.environ.get("TREEDYN_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "treedyn")
    return Path(os.path.abspath(root)) / "kernels"


def fingerprint(*parts: str | bytes) -> bytes:
    """SHA-256 of ``parts``, each length-prefixed (no two lists of parts give one byte string)."""
    h = hashlib.sha256(b"treedyn-kernel-fingerprint-v1")
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little") + data)
    return h.digest()


def open_folder() -> Path:
    """The kernels folder, made 0700 (with any missing folder above it) whatever the umask, and
    checked; CacheError saying why it cannot be used."""
    path = folder()
    try:
        _make_folders(path)
        _check_folder(path)
        _check_ancestors(path)
    except OSError as e:
        raise CacheError(f"the kernel cache {path} cannot be used ({e.strerror or e})") from e
    return path


def _make_folders(path: Path) -> None:
    missing = []
    for p in (path, *path.parents):
        if os.path.lexists(p):
            break
        missing.append(p)
    for p in reversed(missing):
        try:
            os.mkdir(p, 0o700)
        except FileExistsError:  # made meanwhile by a concurrent process: checked below
            continue
        os.chmod(p, 0o700)  # mkdir's mode is masked by the umask; chmod's is not


def _check_folder(path: Path) -> None:
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise CacheError(f"the kernel cache {path} is not a folder")
    if st.st_uid != _uid():
        raise CacheError(f"the kernel cache {path} is owned by another user (uid {st.st_uid})")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheError(
            f"the kernel cache {path} is writable by group or others (mode {stat.S_IMODE(st.st_mode):o}); "
            "another user could have planted a library there: remove it or make it 0700"
        )
    if st.st_mode & 0o077:  # an older treedyn made it under the umask: ours, so tighten it
        os.chmod(path, 0o700)


def _check_ancestors(path: Path) -> None:
    for p in path.parents:
        st = os.stat(p)
        if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
            raise CacheError(
                f"the kernel cache's parent folder {p} is writable by others without the sticky bit: "
                "anyone could swap the cache folder"
            )


def key(path: Path) -> bytes:
    """The secret of the kernels folder ``path``, made on first use (0600); CacheError when it is
    not a regular file of this user that only this user may read."""
    name = path / _KEY
    try:
        for _ in range(3):  # a damaged key is replaced; a concurrent maker's key is read
            try:
                st, data = read_regular(name, _DIGEST)
            except FileNotFoundError:
                _new_key(path, name)
                continue
            _check_key_file(name, st)
            if data is not None and len(data) == _DIGEST:
                return data
            _new_key(path, name, replace=True)
    except OSError as e:
        raise CacheError(f"the kernel cache's key {name} cannot be used ({e.strerror or e})") from e
    raise CacheError(f"the kernel cache's key {name} keeps changing")


def read_regular(path, limit: int) -> tuple[os.stat_result, bytes | None]:
    """(its stat, its bytes) of the file ``path``, opened without following a link or waiting on
    a FIFO; the bytes are None unless it is a regular file of at most ``limit`` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return st, None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(limit + 1 - size, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return st, b"".join(chunks) if size <= limit else None
    finally:
        os.close(fd)


def _check_key_file(name: Path, st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise CacheError(f"the kernel cache's key {name} is not a regular file")
    if st.st_uid != _uid():
        raise CacheError(f"the kernel cache's key {name} is owned by another user (uid {st.st_uid})")
    if st.st_mode & 0o077:
        raise CacheError(
            f"the kernel cache's key {name} is readable or writable by others (mode {stat.S_IMODE(st.st_mode):o}): "
            "remove it (a new one is made, and the kernels are built again)"
        )


def _new_key(path: Path, name: Path, replace: bool = False) -> None:
    """Write a fresh key beside ``name``, then link it into place: a concurrent reader finds no
    key or a whole one; of two concurrent makers the first link wins and both use its key."""
    tmp = _write_private(path, secrets.token_bytes(_DIGEST))
    try:
        if replace:
            os.replace(tmp, name)
        else:
            with contextlib.suppress(FileExistsError):
                os.link(tmp, name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _write_private(path: Path, data: bytes) -> str:
    """A new file in ``path`` holding ``data``, mode 0600 whatever the umask; its name."""
    fd, tmp = tempfile.mkstemp(dir=path, prefix=".part-")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def _tag(secret: bytes, fp: bytes, body: bytes) -> bytes:
    return hmac.new(secret, MAGIC + fp + body, hashlib.sha256).digest()


def check(path: Path, fp: bytes, secret: bytes, marker: bytes) -> str | None:
    """None when the entry ``path`` is a library this user's treedyn built for the fingerprint
    ``fp`` (and holds ``marker``, the fingerprint the generated source embeds), else the reason
    it is not: "missing", or what is wrong. Reads the file; maps nothing."""
    try:
        st, data = read_regular(path, MAX_LIBRARY_BYTES)
    except FileNotFoundError:
        return "missing"
    except OSError as e:  # a link (ELOOP), or unreadable
        return f"cannot be opened as a file ({e.strerror or e})"
    reason = _check_entry_stat(st)
    if reason:
        return reason
    return _check_entry_bytes(data, fp, secret, marker)


def _check_entry_stat(st: os.stat_result) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != _uid():
        return f"owned by another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "writable by group or others"
    if st.st_size > MAX_LIBRARY_BYTES:
        return f"{st.st_size} bytes, over {MAX_LIBRARY_BYTES}"
    return None


def _check_entry_bytes(data: bytes, fp: bytes, secret: bytes, marker: bytes) -> str | None:
    if len(data) <= TRAILER or data[-TRAILER : -2 * _DIGEST] != MAGIC:
        return "no treedyn trailer (empty, truncated or not built by treedyn)"
    body, theirs_fp, theirs_tag = data[:-TRAILER], data[-2 * _DIGEST : -_DIGEST], data[-_DIGEST:]
    if not hmac.compare_digest(theirs_fp, fp):
        return "built for another model, generator or compiler"
    if not hmac.compare_digest(theirs_tag, _tag(secret, fp, body)):
        return "its HMAC does not match: not built by this user's treedyn, or altered since"
    if marker not in body:
        return "it lacks the fingerprint of its source"
    return None


def discard(path: Path) -> None:
    """Remove the entry ``path``, whatever it is (a file, a link, a folder); CacheError if it stays."""
    try:
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise CacheError(f"the bad cache entry {path} cannot be removed ({e.strerror or e})") from e


def store(path: Path, body: bytes, fp: bytes, secret: bytes) -> None:
    """Publish the library ``body`` at ``path`` with its trailer: written to a private file in the
    same folder, then renamed over ``path`` (atomic: readers see the old entry or the whole new
    one)."""
    try:
        tmp = _write_private(path.parent, body + MAGIC + fp + _tag(secret, fp, body))
        try:
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as e:
        raise CacheError(f"the kernel cannot be stored at {path} ({e.strerror or e})") from e
