"""The precompiled header (runtime/pch.py): shared between cache directories (by default in the
user's own cache directory; CPPCODEGEN_PCH_DIR names another, or says off: each cache directory
keeps its own), built after the kernel that found it missing, never needed for a correct
build, never used half-written, foreign or damaged.

Measured on the 2-core AMD EPYC with AVX-512 (g++ 12, a softmax kernel): g++ 0.83-0.85 s
without the header, 0.21-0.24 s with it (CPPCODEGEN_ISA=avx2 flags: 1.12-1.30 s vs 0.31-0.32 s;
the header itself takes 2.2-2.5 s, in the background); the first call in a fresh_cache()
(trace, lower, compile, load) 0.60-0.75 s with the enclosing cache's header vs 1.46-1.89 s
with CPPCODEGEN_PCH_DIR=off, its second kernel 0.16-0.22 s vs 0.76-1.61 s. On the loaded
AVX2 box, first kernel in a new cache directory: 1.63 s vs 0.33-0.50 s."""
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import cppcodegen
from cppcodegen.runtime import build, cachedir, pch

INCLUDE = Path(build.__file__).resolve().parents[1] / "include"
FLAGS = ["-O3", "-std=c++17", "-fPIC"]
REAL_CXX = shutil.which("g++")
needs_gxx = pytest.mark.skipif(REAL_CXX is None, reason="needs g++")


@pytest.fixture
def started(monkeypatch):
    """Background builds recorded instead of run: the roots they would build into."""
    roots = []
    monkeypatch.setattr(pch, "_start", lambda cxx, flags, inc, root, env: roots.append(root))
    monkeypatch.setattr(pch, "_ROOTS", pch.MemoDict())
    return roots


def _find(cache):
    return build.precompiled_header("g++", FLAGS, INCLUDE, cache)


def _plant(root):
    gch = root / (pch.HEADER + ".gch")
    gch.parent.mkdir(parents=True, exist_ok=True)
    gch.write_bytes(b"")
    gch.chmod(0o600)
    return gch


def _private(path):
    path.mkdir(mode=0o700, parents=True)
    return path


def test_default_is_the_users_own_cache_dir(tmp_path, monkeypatch, started):
    """Unset: every cache directory (an explicit CPPCODEGEN_CACHE_DIR too) shares the header
    in the user's own cache directory."""
    monkeypatch.delenv("CPPCODEGEN_PCH_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    user = tmp_path / "xdg" / "cppcodegen" / "pch"
    assert cachedir.pch_dir_setting() == user
    cache = _private(tmp_path / "cache")
    assert _find(cache) is None
    (root,) = started
    assert root.parent == user and not (cache / "pch").exists()
    _plant(root)
    other = _private(tmp_path / "other")
    assert _find(other) == root and len(started) == 1


def test_unusable_default_falls_back_to_the_cache_dir_quietly(tmp_path, monkeypatch, started):
    monkeypatch.delenv("CPPCODEGEN_PCH_DIR", raising=False)
    xdg = tmp_path / "xdg"
    (xdg / "cppcodegen" / "pch").mkdir(parents=True)
    (xdg / "cppcodegen" / "pch").chmod(0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    cache = _private(tmp_path / "cache")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _find(cache) is None
    assert started[0].parent == cache / "pch"


@pytest.mark.parametrize("off", ["off", "0", "none"])
def test_sharing_disabled(tmp_path, monkeypatch, started, off):
    monkeypatch.setenv("CPPCODEGEN_PCH_DIR", off)
    assert cachedir.pch_dir_setting() is None
    cache = _private(tmp_path / "cache")
    _find(cache)
    assert started[0].parent == cache / "pch"
    _plant(started[0])
    assert _find(cache) == started[0]


def test_shared_dir_serves_every_cache_dir(tmp_path, monkeypatch, started):
    shared = tmp_path / "shared"
    monkeypatch.setenv("CPPCODEGEN_PCH_DIR", str(shared))
    first = _private(tmp_path / "a")
    assert _find(first) is None                     # missing: built into the shared dir
    (root,) = started
    assert root.parent == shared and not (first / "pch").exists()
    assert (shared.stat().st_mode & 0o077) == 0     # private like a cache directory
    _plant(root)
    other = _private(tmp_path / "b")
    assert _find(other) == root and not (other / "pch").exists()
    assert len(started) == 1


def test_unsafe_shared_dir_is_not_used(tmp_path, monkeypatch, started):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("CPPCODEGEN_PCH_DIR", str(shared))
    cache = _private(tmp_path / "cache")
    with pytest.warns(cachedir.CacheWarning, match="writable by group or others"):
        assert _find(cache) is None
    assert started[0].parent == cache / "pch"


def test_foreign_or_writable_header_is_not_used(tmp_path, monkeypatch, started):
    monkeypatch.setenv("CPPCODEGEN_PCH_DIR", "off")
    cache = _private(tmp_path / "cache")
    _find(cache)
    gch = _plant(started[0])
    gch.chmod(0o666)
    with pytest.warns(cachedir.CacheWarning, match="not writable by others"):
        assert _find(cache) is None


def test_fresh_cache_uses_the_shared_header(tmp_path, monkeypatch):
    monkeypatch.setenv("CPPCODEGEN_CACHE_DIR", str(tmp_path / "outer"))
    monkeypatch.delenv("CPPCODEGEN_PCH_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with cppcodegen.fresh_cache(dir=tmp_path) as fresh:
        assert os.environ["CPPCODEGEN_CACHE_DIR"] == str(fresh)
        assert cachedir.pch_dir_setting() == tmp_path / "xdg" / "cppcodegen" / "pch"
    assert "CPPCODEGEN_PCH_DIR" not in os.environ
    monkeypatch.setenv("CPPCODEGEN_PCH_DIR", "off")                   # an explicit choice wins
    with cppcodegen.fresh_cache(dir=tmp_path):
        assert cachedir.pch_dir_setting() is None
    assert os.environ["CPPCODEGEN_PCH_DIR"] == "off"


SOURCE = '#include "cppcodegen/kernel.h"\nextern "C" int ccg_answer() { return 42; }\n'


def _compile(cache, source=SOURCE, name="answer"):
    return build.compile_cached(source, name=name, cache_dir=cache, cxx="g++", flags=FLAGS,
                                include_dir=INCLUDE, libs=[], package_version="test")


@needs_gxx
def test_header_is_started_after_the_kernel_build_and_never_needed(tmp_path, monkeypatch):
    """A kernel whose header is missing is built without it (a working library), and the
    header's background build starts only once that kernel is built."""
    monkeypatch.setenv("CPPCODEGEN_PCH_DIR", str(tmp_path / "shared"))
    monkeypatch.setattr(pch, "_ROOTS", pch.MemoDict())
    events = []
    real = build._run_compiler
    monkeypatch.setattr(build, "_run_compiler",
                        lambda *a: (events.append("kernel"), real(*a))[1])
    monkeypatch.setattr(pch, "_start", lambda *a: events.append("header"))
    cache = _private(tmp_path / "cache")
    result = _compile(cache)
    assert events == ["kernel", "header"]
    assert not any(f.startswith("-I") and "shared" in f for f in result.command)
    import ctypes
    assert ctypes.CDLL(str(result.so_path)).ccg_answer() == 42
    assert _compile(cache).cached and events == ["kernel", "header"]


def _wait_gone(path, seconds=120):
    deadline = time.monotonic() + seconds
    while path.exists():
        assert time.monotonic() < deadline, f"{path} still there"
        time.sleep(0.05)


def _fake_cxx(tmp_path, body):
    cxx = tmp_path / "fake-g++"
    cxx.write_text("#!/bin/sh\n" + body)
    cxx.chmod(0o755)
    return str(cxx)


def test_header_appears_only_complete(tmp_path):
    root = tmp_path / "pch" / "k"
    gch = root / (pch.HEADER + ".gch")
    # writes half its output, then dies: nothing appears, nothing stays behind
    cxx = _fake_cxx(tmp_path, 'for a; do out="$a"; done\nprintf half > "$out"\nexit 1\n')
    pch._start(cxx, FLAGS, INCLUDE, root, dict(os.environ))
    _wait_gone(root / ".building")
    assert not gch.exists() and not list(gch.parent.iterdir())
    # a slow, successful build: the name appears only once the whole file is written
    cxx = _fake_cxx(tmp_path, 'for a; do out="$a"; done\nprintf half > "$out"\nsleep 1\n'
                              'printf -- "-complete" >> "$out"\n')
    pch._start(cxx, FLAGS, INCLUDE, root, dict(os.environ))
    pch._start(cxx, FLAGS, INCLUDE, root, dict(os.environ))   # a builder is at work: no second
    while (root / ".building").exists():
        assert not gch.exists() or gch.read_bytes() == b"half-complete"
        time.sleep(0.02)
    assert gch.read_bytes() == b"half-complete"
    assert (gch.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in gch.parent.iterdir()] == [gch.name]


def test_stale_builder_is_taken_over(tmp_path):
    root = tmp_path / "pch" / "k"
    gch = root / (pch.HEADER + ".gch")
    gch.parent.mkdir(parents=True)
    marker = root / ".building"
    marker.touch()
    old = time.time() - 2 * pch.STALE_SECONDS
    os.utime(marker, (old, old))
    leftover = gch.with_name(f".{gch.name}.tmp-999999")
    leftover.write_bytes(b"half")
    cxx = _fake_cxx(tmp_path, 'for a; do out="$a"; done\nprintf ok > "$out"\n')
    pch._start(cxx, FLAGS, INCLUDE, root, dict(os.environ))
    _wait_gone(marker)
    assert gch.read_bytes() == b"ok" and not leftover.exists()


@needs_gxx
def test_damaged_header_is_dropped_and_the_kernel_built(tmp_path, monkeypatch):
    """A .gch cut short (on disk after a crash, say) makes g++ fail outright: the kernel is
    built again without it, once, with a warning, and the .gch is removed."""
    monkeypatch.setenv("CPPCODEGEN_PCH_DIR", "off")
    monkeypatch.setattr(pch, "_start", lambda *a: None)
    cache = _private(tmp_path / "cache")
    version = build.compiler_version("g++", cache)
    key = pch.key(version, FLAGS, build._include_digest(INCLUDE))
    gch = cache / "pch" / key / (pch.HEADER + ".gch")
    gch.parent.mkdir(parents=True)
    cmd = ["g++", *FLAGS, "-x", "c++-header", f"-I{INCLUDE}", str(INCLUDE / pch.HEADER),
           "-o", str(gch)]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(gch, "r+b") as f:
        f.truncate(gch.stat().st_size // 2)
    gch.chmod(0o600)
    source = '#include "cppcodegen/kernel.h"\nextern "C" int ccg_answer() { return 42; }\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = build.compile_cached(source, name="answer", cache_dir=cache, cxx="g++",
                                      flags=FLAGS, include_dir=INCLUDE, libs=[],
                                      package_version="test")
    assert result.so_path.exists() and not result.cached
    assert f"-I{gch.parents[1]}" not in result.command
    msgs = [str(w.message) for w in caught if issubclass(w.category, cachedir.CacheWarning)]
    assert len(msgs) == 1 and "damaged" in msgs[0] and str(gch) in msgs[0], msgs
    assert not gch.exists()


def test_builder_that_died_is_taken_over_at_once(tmp_path):
    """A young marker naming a process that is gone: the build starts again now."""
    root = tmp_path / "pch" / "k"
    gch = root / (pch.HEADER + ".gch")
    gch.parent.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (root / ".building").write_text(str(dead.pid))
    cxx = _fake_cxx(tmp_path, 'for a; do out="$a"; done\nprintf ok > "$out"\n')
    pch._start(cxx, FLAGS, INCLUDE, root, dict(os.environ))
    _wait_gone(root / ".building")
    assert gch.read_bytes() == b"ok"
    (root / ".building").write_text(str(os.getpid()))          # alive: left alone
    gch.unlink()
    pch._start(cxx, FLAGS, INCLUDE, root, dict(os.environ))
    time.sleep(0.3)
    assert not gch.exists()


CHILD = """
import sys
from pathlib import Path
from cppcodegen.runtime import build
i, cache, flags, include = sys.argv[1], Path(sys.argv[2]), sys.argv[3].split(), sys.argv[4]
src = '#include "cppcodegen/kernel.h"\\nextern "C" int ccg_answer() { return %s; }\\n' % i
r = build.compile_cached(src, name="answer", cache_dir=cache, cxx=sys.argv[5], flags=flags,
                         include_dir=include, libs=[], package_version="test")
import ctypes
print(ctypes.CDLL(str(r.so_path)).ccg_answer())
"""


@needs_gxx
def test_two_processes_compiling_at_once_start_one_header_build(tmp_path):
    """Two processes, two new kernels, one empty shared header directory: both libraries
    are right, and the header is built once (the second finds the marker or the header)."""
    log = tmp_path / "log"
    cxx = _fake_cxx(tmp_path, f'case "$*" in *c++-header*) echo header >> "{log}"; sleep 1;;\n'
                              f'  --version) ;;\n  *) echo kernel >> "{log}";; esac\n'
                              f'exec {REAL_CXX} "$@"\n')
    env = dict(os.environ, CPPCODEGEN_PCH_DIR=str(tmp_path / "shared"))
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(i), str(_private(tmp_path / f"c{i}")),
                               " ".join(FLAGS), str(INCLUDE), cxx],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in (1, 2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [o.strip() for o, _ in outs] == ["1", "2"], outs
    for marker in (tmp_path / "shared").glob("*/.building"):
        _wait_gone(marker, 300)
    lines = log.read_text().split()
    assert lines.count("kernel") == 2 and lines.count("header") == 1, lines
    (gch,) = (tmp_path / "shared").glob(f"*/{pch.HEADER}.gch")
    assert gch.stat().st_size > 0


def test_old_headers_are_pruned_and_nothing_else(tmp_path):
    """Starting a build keeps the KEEP most recently used headers of its root and those used in
    the last two days: never the one being built, one whose builder is at work, or a directory
    that is not one of ours."""
    root = tmp_path / "pch"
    made = []
    for i in range(pch.KEEP + 3):
        gch = _plant(root / f"{i:024x}")
        os.utime(gch, (1000 + i, 1000 + i))
        made.append(gch.parents[1])
    busy = made[0]
    (busy / ".building").write_text(str(os.getpid()))
    foreign = root / "my-notes"
    foreign.mkdir()
    new = root / ("f" * 24)
    recent = made[2] / (pch.HEADER + ".gch")
    os.utime(recent)                                           # used just now: kept
    removed = pch.prune(root, keep=new)
    assert sorted(removed) == sorted([made[1], made[3], made[4]])   # the least recently used
    assert all(d.exists() for d in made[5:]) and busy.exists() and foreign.exists()
    assert made[2].exists()
    assert pch.prune(root, keep=new) == []
