"""A cache of compiled units for builds without ccache, run as the compiler launcher (CMakeLists.txt):

    python compile_cache.py <cache dir> <salt> -- <the compile command...>

pip builds in a new isolated environment each time, and scikit-build-core then deletes CMakeFiles/
(the objects) of the build directory it reuses (pyproject.toml's build-dir), so that the README's
second command (`pip install ".[test]"`) would compile every unit again. Here each unit's output (an
object, or the precompiled header) is kept in <cache dir>, outside CMakeFiles/, keyed by the salt
(the toolchain), the command line and the source's bytes; with it the headers the compiler read
(its depfile) and their hashes. A later compile with the same key whose headers all still hash the
same gets the output and the depfile back without compiling (ccache's "direct mode"); any difference
compiles, and stores the new output. The newest KEEP entries per unit are kept.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

KEEP = 2


def _hash_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _depfile_inputs(path: str) -> list:
    """The prerequisites of a Makefile-style depfile (target: a b \\ c ...), backslash-escaped spaces kept."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read().replace("\\\n", " ")
    _, _, deps = text.partition(": ")
    out, word, chars = [], "", iter(deps)
    for c in chars:
        if c == "\\":
            word += next(chars, "")
        elif c.isspace():
            if word:
                out.append(word)
            word = ""
        else:
            word += c
    if word:
        out.append(word)
    return out


def _option(cmd: list, flag: str):
    return cmd[cmd.index(flag) + 1] if flag in cmd[:-1] else None


def main(argv: list) -> int:
    cache, salt = argv[1], argv[2]
    cmd = argv[argv.index("--") + 1 :]
    out, dep, src = _option(cmd, "-o"), _option(cmd, "-MF"), _option(cmd, "-c")
    if not (out and dep and src and os.path.isfile(src)):  # (not a unit this cache knows: just run it)
        return subprocess.call(cmd)
    key = hashlib.sha256("\0".join([salt, *cmd, _hash_file(src)]).encode()).hexdigest()
    unit = os.path.join(cache, hashlib.sha256(out.encode()).hexdigest()[:16])
    entry = os.path.join(unit, key)
    manifest = os.path.join(entry, "manifest.json")
    if os.path.isfile(manifest):
        try:
            with open(manifest, encoding="utf-8") as f:
                headers = json.load(f)
            if all(os.path.isfile(p) and _hash_file(p) == h for p, h in headers.items()):
                shutil.copyfile(os.path.join(entry, "output"), out)
                shutil.copyfile(os.path.join(entry, "depfile"), dep)
                os.utime(entry)
                return 0
        except (OSError, ValueError):
            pass  # (a broken entry: compile, and store it again)
    rc = subprocess.call(cmd)
    if rc != 0 or not (os.path.isfile(out) and os.path.isfile(dep)):
        return rc
    try:
        headers = {p: _hash_file(p) for p in _depfile_inputs(dep) if os.path.isfile(p) and p != src}
        tmp = entry + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        shutil.copyfile(out, os.path.join(tmp, "output"))
        shutil.copyfile(dep, os.path.join(tmp, "depfile"))
        with open(os.path.join(tmp, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump(headers, f)
        shutil.rmtree(entry, ignore_errors=True)
        os.replace(tmp, entry)  # (a build interrupted above leaves no partial entry)
        kept = sorted(
            (e for e in os.listdir(unit) if not e.endswith(".tmp")),
            key=lambda e: -os.path.getmtime(os.path.join(unit, e)),
        )
        for old in kept[KEEP:]:
            shutil.rmtree(os.path.join(unit, old), ignore_errors=True)
    except OSError as e:  # (the cache is an optimisation: the compile itself succeeded)
        print(f"compile_cache: not stored ({e})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
