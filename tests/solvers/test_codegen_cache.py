"""treedyn.solvers.codegen_cache and the failure paths of treedyn.codegen: a cached library runs
only if this user's treedyn built it for this very model, generator and compiler; every other
case (a planted, swapped, damaged entry; a bad, missing or hanging compiler; an unusable or open
cache folder; a model too large) warns (CodegenWarning) and leaves a solver whose results are
the generic kernel's. The reproducers of issue 31, and a fuzzer of the entry check."""

import os
import re
import shutil
import stat
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_same_accelerations, random_state
from hypothesis import assume, given
from hypothesis import strategies as st

import treedyn as td
import treedyn.solvers.codegen as codegen
import treedyn.solvers.codegen_cache as cache
from treedyn import _core
from treedyn.scenes import chain

#: the tests that compile a kernel (the others run a fake $CXX, or none)
needs_compiler = pytest.mark.skipif(codegen.compiler() is None, reason="no C++ compiler on this machine")

MODEL = chain(2)  # the smallest kernels: a fifth of a second to compile
OTHER = chain(2, mass=3.0)  # another model of the same nq and nv

PLANTED = r"""
#include <cstdio>
#include <cstdlib>
__attribute__((constructor)) static void ran() {  // what a planted library does first
  if (const char* p = std::getenv("TREEDYN_TEST_PLANTED_RAN")) std::fclose(std::fopen(p, "w"));
}
extern "C" {
int treedyn_generated_version() { return VERSION; }
int treedyn_generated_lanes() { return 1; }
int treedyn_generated_scratch() { return 1; }
int treedyn_generated_sizes(int* nq, int* nv) { *nq = NQ; *nv = NV; return sizeof(double); }
int treedyn_generated_fd(const double*, const double*, const double*, double* qdd, double*) {
  for (int i = 0; i < NV; ++i) qdd[i] = 42;
  return 0;
}
void treedyn_generated_fd_batch(int B, const double*, const double*, const double*, double* qdd,
                                unsigned char* bad, double*) {
  for (int i = 0; i < B * NV; ++i) qdd[i] = 42;
  for (int b = 0; b < B; ++b) bad[b] = 0;
}
}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A cache made under umask 0, in folders that did not exist, holding MODEL's and OTHER's
    kernels (each compiled once for the module): its root."""
    if codegen.compiler() is None:
        pytest.skip("no C++ compiler on this machine")
    root = tmp_path_factory.mktemp("built") / "made" / "here"
    mp = pytest.MonkeyPatch()
    mp.setenv("TREEDYN_CACHE", str(root))
    before = os.umask(0)
    try:
        assert codegen.compiled_aba(MODEL) and codegen.compiled_aba(OTHER)
    finally:
        os.umask(before)
        mp.undo()
    return root


@pytest.fixture
def kernels(built, tmp_path, monkeypatch):
    """A copy of the built cache for one test: its kernels folder."""
    root = tmp_path / "cache"
    shutil.copytree(built, root)
    monkeypatch.setenv("TREEDYN_CACHE", str(root))
    return root / "kernels"


def entry(model) -> Path:
    """The model's entry (the kernels are cached: this compiles nothing)."""
    return Path(codegen.compiled_aba(model))


def expected(path: Path) -> tuple[bytes, bytes]:
    """(fingerprint, marker) a good entry carries in its trailer and its body."""
    fp = path.read_bytes()[-2 * 32 : -32]
    return fp, b"treedyn-fingerprint:" + fp.hex().encode()


def assert_generic_results(solver, model, rng):
    """The solver's q̈ is the generic kernel's: bit for bit when it runs it, up to rounding when
    it runs a (rebuilt, trusted) kernel of this model."""
    ref = td.make_solver("aba", model)
    for _ in range(2):
        q, v, tau = random_state(model, rng)
        out, want = solver.forward_dynamics(q, v, tau), ref.forward_dynamics(q, v, tau)
        if solver.specialised:
            assert_same_accelerations(model, q, v, tau, out, want)
        else:
            np.testing.assert_array_equal(out, want)


def fake_compiler(tmp_path, body: str) -> str:
    """A $CXX that answers --version and then runs ``body`` ($out: the -o argument)."""
    script = tmp_path / "fake-c++"
    script.write_text(
        '#!/bin/sh\nif [ "$1" = --version ]; then echo fake 1.0; exit 0; fi\n'
        'for a; do [ "$prev" = -o ] && out="$a"; prev="$a"; done\n' + body + "\n"
    )
    script.chmod(0o755)
    return str(script)


def warned_generic(model, match, rng):
    """make_solver with specialise=True warns ``match`` and runs the generic kernel."""
    with pytest.warns(codegen.CodegenWarning, match=match):
        solver = td.make_solver("aba", model, specialise=True)
    assert not solver.specialised
    assert_generic_results(solver, model, rng)
    return solver


def healed(model, match, rng, monkeypatch):
    """make_solver with specialise=True refuses the entry (``match``), builds it once, and runs it."""
    compiles = []
    real = codegen._compile
    monkeypatch.setattr(codegen, "_compile", lambda *a: compiles.append(1) or real(*a))
    with pytest.warns(codegen.CodegenWarning, match=match):
        solver = td.make_solver("aba", model, specialise=True)
    assert solver.specialised and len(compiles) == 1
    assert_generic_results(solver, model, rng)
    fp, marker = expected(entry(model))
    assert cache.check(entry(model), fp, cache.key(entry(model).parent), marker) is None


def leftovers(kernels: Path) -> set:
    return {p.name for p in kernels.iterdir()} - {"key"}


def test_folders_and_files_are_private_whatever_the_umask(built):
    """Made under umask 0: every folder treedyn made 0700, the key and the libraries 0600, no
    temporary file left."""
    kernels = built / "kernels"
    for folder in (built.parent, built, kernels):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    names = sorted(p.name for p in kernels.iterdir())
    assert names[-1] == "key" and len(names) == 3 and all(n.endswith(".so") for n in names[:2])
    for name in names:
        assert stat.S_IMODE((kernels / name).stat().st_mode) == 0o600, name


def planted_library(tmp_path, model, marker: bytes) -> Path:
    """The attacker's library for ``model`` (holding the string ``marker``), compiled."""
    version = re.search(r"#define TREEDYN_GENERATED_VERSION (\d+)", codegen.aba_source(model)[0]).group(1)
    src, lib = tmp_path / "planted.cpp", tmp_path / "planted.so"
    src.write_text(PLANTED + f'extern "C" const char treedyn_generated_fingerprint[] = "{marker.decode()}";\n')
    cxx = codegen.compiler().split()
    defines = [f"-DVERSION={version}", f"-DNQ={model.nq}", f"-DNV={model.nv}"]
    subprocess.run([*cxx, "-shared", "-fPIC", *defines, "-o", str(lib), str(src)], check=True, timeout=120)
    return lib


@pytest.mark.parametrize("disguise", ["none", "the good entry's trailer and fingerprint"])
def test_a_planted_library_never_runs(kernels, tmp_path, monkeypatch, rng, disguise):
    """A library returning 42 for every q̈ planted at the entry's path — bare, or carrying the
    fingerprint string and, appended, the good entry's trailer (its fingerprint and HMAC), all an
    attacker can read — is refused unmapped: its constructor never runs; the kernel is built again."""
    path = entry(MODEL)
    good = path.read_bytes()
    marker = expected(path)[1] if disguise != "none" else b""
    lib = planted_library(tmp_path, MODEL, marker)
    path.write_bytes(lib.read_bytes() + (good[-cache.TRAILER :] if disguise != "none" else b""))
    ran = tmp_path / "ran"
    monkeypatch.setenv("TREEDYN_TEST_PLANTED_RAN", str(ran))
    healed(MODEL, "HMAC does not match" if disguise != "none" else "refused", rng, monkeypatch)
    assert not ran.exists()
    # the control: loaded as it is, the planted library runs its constructor and answers 42
    engine = _core.ABA64(MODEL.core, str(lib))
    assert ran.exists()
    np.testing.assert_array_equal(engine.forward_dynamics(np.zeros(2), np.zeros(2), np.zeros(2)), [42.0, 42.0])


def test_another_models_library_of_the_same_size_is_refused(kernels, monkeypatch, rng):
    """OTHER's good entry (its own trailer, the same key) copied over MODEL's: same nq, nv and
    scalar, another fingerprint: refused, and MODEL's kernel is built again."""
    q, v, tau = random_state(MODEL, rng)
    differ = td.make_solver("aba", OTHER).forward_dynamics(q, v, tau) - td.make_solver("aba", MODEL).forward_dynamics(
        q, v, tau
    )
    assert np.abs(differ).max() > 1e-3  # the swap would be visible
    shutil.copyfile(entry(OTHER), entry(MODEL))
    healed(MODEL, "another model", rng, monkeypatch)


def damage(path: Path, kind: str, tmp_path: Path) -> None:
    good = path.read_bytes()
    path.unlink()
    if kind == "garbage":
        path.write_bytes(b"\x7fELF" + bytes(range(256)) * 8)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "a folder":
        (path / "inside").mkdir(parents=True)
    elif kind == "a link to a good copy":
        (tmp_path / "copy.so").write_bytes(good)
        path.symlink_to(tmp_path / "copy.so")
    elif kind == "a fifo":
        os.mkfifo(path)
    elif kind == "writable by others":
        path.write_bytes(good)
        path.chmod(0o666)


DAMAGES = ["garbage", "empty", "truncated", "a folder", "a link to a good copy", "a fifo", "writable by others"]


@pytest.mark.parametrize("kind", DAMAGES)
def test_a_damaged_entry_is_removed_and_built_again_once(kernels, tmp_path, monkeypatch, rng, kind):
    """Never mapped (a truncated library would raise SIGBUS in dlopen), never a RuntimeError for
    good: the entry is removed and rebuilt, with a warning saying so."""
    damage(entry(MODEL), kind, tmp_path)
    healed(MODEL, "refused", rng, monkeypatch)
    assert stat.S_IMODE(entry(MODEL).lstat().st_mode) == 0o600


def test_a_damaged_entry_that_cannot_be_rebuilt_gives_the_generic_kernel(kernels, tmp_path, monkeypatch, rng):
    path = entry(MODEL)
    damage(path, "garbage", tmp_path)

    def broken(*args):
        raise codegen._Failure("the compiler broke")

    monkeypatch.setattr(codegen, "_compile", broken)
    warned_generic(MODEL, "refused .*rebuilding it failed: the compiler broke", rng)
    assert not path.exists()


@needs_compiler
def test_a_library_the_loader_refuses_is_rebuilt_once_then_the_generic_kernel(tmp_path, monkeypatch, rng):
    """A compiler whose library lacks an entry point (here: renamed): built by us, so it is
    loaded, refused by the loader, built again once, refused again; then the generic kernel."""
    real = codegen.compiler()
    body = 'for a; do src="$a"; done\nsed -i s/treedyn_generated_fd_batch/renamed_batch/ "$src"\nexec ' + real + ' "$@"'
    monkeypatch.setenv("CXX", fake_compiler(tmp_path, body))
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path / "cache"))
    with pytest.warns(codegen.CodegenWarning) as record:
        solver = td.make_solver("aba", MODEL, specialise=True)
    said = [str(w.message) for w in record]
    assert any("built again" in m for m in said) and "refused by the loader" in said[-1], said
    assert not solver.specialised
    assert_generic_results(solver, MODEL, rng)
    assert leftovers(tmp_path / "cache" / "kernels") == set()


@pytest.mark.parametrize("body", ['echo garbage > "$out"', "", 'mkfifo "$out"', 'ln -s /bin/sh "$out"'])
def test_a_compiler_that_exits_0_without_the_library(tmp_path, monkeypatch, rng, body):
    monkeypatch.setenv("CXX", fake_compiler(tmp_path, body))
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path / "cache"))
    warned_generic(MODEL, "exited 0 but wrote", rng)
    assert leftovers(tmp_path / "cache" / "kernels") == set()  # nothing cached, no temporary left


def test_a_missing_cxx_is_named_not_replaced(tmp_path, monkeypatch, rng):
    monkeypatch.setenv("CXX", "/no/such/c++")
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path))
    warned_generic(MODEL, re.escape("$CXX='/no/such/c++' is not found"), rng)
    assert codegen.compiler() is None


@pytest.mark.parametrize("where", ["a file", "a folder under a file", "kernels is a file", "unwritable"])
def test_an_unusable_cache_gives_the_generic_kernel(tmp_path, monkeypatch, rng, where):
    monkeypatch.setenv("CXX", fake_compiler(tmp_path, "exit 1"))  # never reached
    root = tmp_path / "cache"
    if where == "a file":
        root.write_text("")
    elif where == "a folder under a file":
        root.write_text("")
        root = root / "sub"
    elif where == "kernels is a file":
        root.mkdir()
        (root / "kernels").write_text("")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes to any folder")
        root.mkdir(mode=0o500)
    monkeypatch.setenv("TREEDYN_CACHE", str(root))
    warned_generic(MODEL, "kernel cache .* (cannot be used|is not a folder)", rng)


def ended(pid: int) -> bool:
    """The process is gone (or a zombie: ended, not yet reaped), within a second or two."""
    for _ in range(40):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in "ZX":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("hangs", ["compiling", "on --version"])
def test_a_hanging_compiler_is_ended_after_the_timeout(tmp_path, monkeypatch, rng, hangs):
    """It and what it started (a sleep holding the output pipe) are ended after the timeout."""
    started = tmp_path / "pid"
    script = fake_compiler(tmp_path, f"sleep 60 &\necho $! > {started}\nwait")
    if hangs == "on --version":
        Path(script).write_text(f"#!/bin/sh\nsleep 60 &\necho $! > {started}\nwait\n")
    monkeypatch.setenv("CXX", script)
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TREEDYN_CODEGEN_TIMEOUT", "0.5")
    start = time.monotonic()
    warned_generic(MODEL, "did not finish in 0.5 s", rng)
    assert time.monotonic() - start < 10  # 0.5 s and the solver: a generous bound
    assert ended(int(started.read_text()))


@pytest.mark.parametrize("how", ["world-writable", "group-writable", "owned by another user"])
def test_an_open_or_foreign_cache_folder_is_refused(kernels, monkeypatch, rng, how):
    before = leftovers(kernels)
    if how == "owned by another user":
        monkeypatch.setattr(cache, "_uid", lambda: os.geteuid() + 1)
    else:
        kernels.chmod(0o777 if how == "world-writable" else 0o770)
    warned_generic(MODEL, "kernel cache .*(writable by group or others|owned by another user)", rng)
    assert leftovers(kernels) == before  # nothing read, written or removed


def test_a_parent_folder_anyone_can_write_is_refused(kernels, rng):
    kernels.parent.chmod(0o777)  # no sticky bit: anyone could swap the kernels folder
    warned_generic(MODEL, "parent folder .* writable by others", rng)


def test_a_parent_folder_with_the_sticky_bit_is_fine(kernels, rng):
    kernels.parent.chmod(0o1777)  # as /tmp
    assert td.make_solver("aba", MODEL, specialise=True).specialised


def test_folders_and_the_key_are_private_under_any_umask(tmp_path, monkeypatch):
    """Under umask 0777 mkdir and open would give mode 0: chmod, not the umask, decides."""
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path / "made" / "here"))
    before = os.umask(0o777)
    try:
        kernels = cache.open_folder()
        cache.key(kernels)
    finally:
        os.umask(before)
    for path in (tmp_path / "made", kernels.parent, kernels):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    assert stat.S_IMODE((kernels / "key").stat().st_mode) == 0o600


def test_a_readable_cache_folder_is_made_private(kernels):
    """An older treedyn made the folder under the umask (0755): ours, so it is tightened."""
    kernels.chmod(0o755)
    assert td.make_solver("aba", MODEL, specialise=True).specialised
    assert stat.S_IMODE(kernels.stat().st_mode) == 0o700


@pytest.mark.parametrize("how", ["readable by others", "owned by another user", "a link"])
def test_a_key_others_may_have_read_is_refused(kernels, tmp_path, monkeypatch, rng, how):
    key = kernels / "key"
    if how == "readable by others":
        key.chmod(0o644)
    elif how == "a link":
        (tmp_path / "their-key").write_bytes(bytes(32))
        key.unlink()
        key.symlink_to(tmp_path / "their-key")
    else:
        monkeypatch.setattr(cache, "_check_key_file", _as_foreign(cache._check_key_file, monkeypatch, os.geteuid()))
    warned_generic(MODEL, "key", rng)


def _as_foreign(check, monkeypatch, uid):
    """The key check run as another user (the folder check as this one)."""

    def foreign(name, st):
        monkeypatch.setattr(cache, "_uid", lambda: uid + 1)
        try:
            check(name, st)
        finally:
            monkeypatch.setattr(cache, "_uid", lambda: uid)

    return foreign


def test_a_damaged_key_is_replaced_and_the_kernels_rebuilt(kernels, monkeypatch, rng):
    (kernels / "key").write_bytes(b"short")
    healed(MODEL, "HMAC does not match", rng, monkeypatch)
    assert len((kernels / "key").read_bytes()) == 32


def test_a_model_over_the_source_budget_is_refused(tmp_path, monkeypatch, rng):
    monkeypatch.setenv("CXX", fake_compiler(tmp_path, "exit 1"))  # never reached
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path))
    monkeypatch.setenv("TREEDYN_CODEGEN_MAX_MB", "0.001")
    size = len(codegen.aba_source(MODEL)[0]) / 1e6
    warned_generic(MODEL, rf"3 bodies, nv = 2\) is {size:.3g} MB, over the budget of 0.001 MB", rng)
    assert not (tmp_path / "kernels").exists()  # refused before anything is written


@pytest.mark.parametrize("value", ["1_000", "abc", "-1", "0", "inf", "nan", "１０"])
@pytest.mark.parametrize("knob", ["TREEDYN_CODEGEN_TIMEOUT", "TREEDYN_CODEGEN_MAX_MB"])
def test_a_bad_knob_is_a_value_error_naming_it(tmp_path, monkeypatch, knob, value):
    monkeypatch.setenv("CXX", fake_compiler(tmp_path, "exit 1"))  # never reached
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path))
    monkeypatch.setenv(knob, value)
    with pytest.raises(ValueError, match=knob):
        td.make_solver("aba", MODEL, specialise=True)


#: random damage of a good entry: a byte flipped anywhere or in the trailer, a cut, bytes inserted
#: or appended, the trailer relabelled with another model's fingerprint, another model's library
#: under this one's trailer
MUTATIONS = st.tuples(
    st.sampled_from(["flip", "flip in the trailer", "cut", "insert", "append", "relabel", "other body"]),
    st.integers(0, 1 << 20),
    st.binary(min_size=1, max_size=64),
)


def mutated(good: bytes, other: bytes, mutation) -> bytes:
    kind, at, data = mutation
    i = at % len(good)
    if kind in ("flip", "flip in the trailer"):
        i = len(good) - 1 - at % cache.TRAILER if kind == "flip in the trailer" else i
        flipped = bytearray(good)
        flipped[i] ^= data[0] or 1
        return bytes(flipped)
    if kind == "cut":
        return good[:i]
    if kind == "insert":
        return good[:i] + data + good[i:]
    if kind == "append":
        return good + data
    if kind == "relabel":
        return good[:-64] + other[-64:-32] + good[-32:]
    return other[: -cache.TRAILER] + good[-cache.TRAILER :]


def test_fuzz_every_damaged_entry_is_refused(built, tmp_path_factory):
    """The entry check (hypothesis: HYPOTHESIS_PROFILE sets the budget) against random damage of a
    good entry: each one is refused, the good entry accepted."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TREEDYN_CACHE", str(built))
        good_path, other_path = entry(MODEL), entry(OTHER)  # cached: nothing compiles
    good, other = good_path.read_bytes(), other_path.read_bytes()
    fp, marker = expected(good_path)
    secret = cache.key(good_path.parent)
    path = tmp_path_factory.mktemp("fuzz") / "entry.so"

    def check(data: bytes):
        path.write_bytes(data)
        path.chmod(0o600)
        return cache.check(path, fp, secret, marker)

    assert check(good) is None

    @given(mutation=MUTATIONS)
    def refused(mutation):
        bad = mutated(good, other, mutation)
        assume(bad != good)
        assert check(bad) is not None

    refused()


def test_an_entry_built_with_another_key_is_refused(kernels, monkeypatch, rng):
    """Another user's (or another cache's) good entry: its HMAC is under another secret."""
    (kernels / "key").unlink()  # a fresh key: every entry made with the old one is foreign now
    healed(MODEL, "HMAC does not match", rng, monkeypatch)
