"""``python -m cppcodegen cache info|list|clear`` (through subprocess), the compiler search,
and the noexec error."""
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

# the precompiled header may still be being written in the background: never copy it
_NO_PCH = shutil.ignore_patterns("pch")

import cppcodegen
from cppcodegen.runtime import build, cachedir, loader
from cppcodegen.runtime.locks import exclusive_lock

REAL_CXX = shutil.which("g++") or shutil.which("clang++")
needs_cxx = pytest.mark.skipif(REAL_CXX is None, reason="no C++ compiler")


def cli(*args, cache=None, **kw):
    env = dict(os.environ)
    if cache is not None:
        env["CPPCODEGEN_CACHE_DIR"] = str(cache)
    return subprocess.run([sys.executable, "-m", "cppcodegen", *args], env=env,
                          capture_output=True, text=True, timeout=60, **kw)


@pytest.fixture(scope="module")
def populated(tmp_path_factory):
    """A cache with two kernels and their graph entries."""
    root = tmp_path_factory.mktemp("cli")
    with cppcodegen.fresh_cache(dir=root, delete=False) as cache:
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        cppcodegen.compile(lambda v: v * 2 + 1)(x)
        cppcodegen.compile(lambda v: v.sum(axis=0))(x)
    return cache


@needs_cxx
def test_info_and_list(populated, tmp_path):
    cache = tmp_path / "c"
    shutil.copytree(populated, cache, ignore=_NO_PCH)
    info = cli("cache", "info", cache=cache)
    assert info.returncode == 0, info.stderr
    assert f"location: {cache} (CPPCODEGEN_CACHE_DIR)" in info.stdout
    assert "2 kernels, 2 graphs" in info.stdout and "KiB" in info.stdout
    listing = cli("cache", "list", cache=cache)
    assert listing.returncode == 0, listing.stderr
    kernels = [line for line in listing.stdout.splitlines() if line.startswith("kernel ")]
    assert len(kernels) == 2 and all("<lambda>" in k or "_lambda_" in k for k in kernels)
    assert sum(line.startswith("graph ") for line in listing.stdout.splitlines()) == 2


@needs_cxx
def test_clear_removes_every_entry_and_the_next_call_rebuilds(populated, tmp_path):
    cache = tmp_path / "c"
    shutil.copytree(populated, cache, ignore=_NO_PCH)
    out = cli("cache", "clear", cache=cache)
    assert out.returncode == 0, out.stderr
    assert "removed 2 kernels and 2 graphs" in out.stdout
    assert not list(cache.glob("??/*")) and not list(cache.glob("graphs/??/*"))
    assert "0 kernels, 0 graphs" in cli("cache", "info", cache=cache).stdout
    with cppcodegen.fresh_cache(dir=tmp_path):        # still a usable cache afterwards
        os.environ["CPPCODEGEN_CACHE_DIR"] = str(cache)
        x = np.arange(4, dtype=np.float32)
        np.testing.assert_array_equal(cppcodegen.compile(lambda v: v - 3)(x), x - 3)


@needs_cxx
def test_clear_waits_for_a_build_in_progress(populated, tmp_path):
    cache = tmp_path / "c"
    shutil.copytree(populated, cache, ignore=_NO_PCH)
    entry = build.kernel_entries(cache)[0]
    with exclusive_lock(entry.parent / f"{entry.name}.lock"):     # "someone is building"
        proc = subprocess.Popen([sys.executable, "-m", "cppcodegen", "cache", "clear"],
                                env=dict(os.environ, CPPCODEGEN_CACHE_DIR=str(cache)),
                                stdout=subprocess.PIPE, text=True)
        time.sleep(1.5)
        assert proc.poll() is None, "clear must not remove an entry while it is locked"
        assert (entry / "build.json").exists()
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "removed 2 kernels" in out
    assert not entry.exists()


def test_info_on_a_missing_directory_and_usage_errors(tmp_path):
    out = cli("cache", "info", "--dir", str(tmp_path / "nothing"))
    assert out.returncode == 0 and "does not exist yet" in out.stdout
    assert not (tmp_path / "nothing").exists()
    bad = cli("cache", "frobnicate")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_lock_file_removed_by_its_holder_is_not_shared(tmp_path):
    """A waiter that opened the old lock file must not share the lock with a newcomer."""
    lock = tmp_path / "k.lock"
    order = []
    with exclusive_lock(lock):
        waiter = threading.Thread(target=lambda: _hold(lock, order, "waiter"))
        waiter.start()
        time.sleep(0.2)
        lock.unlink()                                  # what `cache clear` does
    with exclusive_lock(lock):                         # newcomer: gets the new file first
        order.append("newcomer-in")
        time.sleep(0.3)
        order.append("newcomer-out")
    waiter.join(10)
    assert order in (["newcomer-in", "newcomer-out", "waiter-in", "waiter-out"],
                     ["waiter-in", "waiter-out", "newcomer-in", "newcomer-out"])


def _hold(lock, order, name):
    with exclusive_lock(lock):
        order.append(f"{name}-in")
        time.sleep(0.3)
        order.append(f"{name}-out")


# -- the compiler search ----------------------------------------------------------------

def _path_with(tmp_path, **tools) -> str:
    """A PATH holding only ``tools`` (name -> target) and the basic shell utilities."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, target in tools.items():
        (bindir / name).symlink_to(target)
    return str(bindir)


def test_missing_compiler_names_what_was_tried(tmp_path, monkeypatch):
    cachedir.clear_caches()
    monkeypatch.setenv("PATH", _path_with(tmp_path))
    with pytest.raises(build.CompileError) as info:
        build.resolve_compiler("")
    msg = str(info.value)
    assert "CXX (not set), g++, clang++" in msg and "apt-get install g++" in msg
    with pytest.raises(build.CompileError) as info:
        build.resolve_compiler("my-c++")
    assert "tried CXX / option cxx = 'my-c++'" in str(info.value)


@needs_cxx
def test_falls_back_to_clang_when_gxx_is_missing(tmp_path, monkeypatch):
    cachedir.clear_caches()
    fake_clang = tmp_path / "fake-clang"                 # g++ in disguise, with its own PATH
    fake_clang.write_text(f'#!/bin/sh\nPATH={os.environ["PATH"]} exec {REAL_CXX} "$@"\n')
    fake_clang.chmod(0o755)
    monkeypatch.setenv("PATH", _path_with(tmp_path, **{"clang++": fake_clang}))
    assert build.resolve_compiler("") == "clang++"
    r = build.compile_cached('extern "C" int one(void) { return 1; }', name="one",
                             cache_dir=tmp_path / "c", cxx="", flags=["-O1"],
                             include_dir=tmp_path, libs=[], package_version="t")
    assert r.command[0] == "clang++" and loader.load_library(r.so_path, "int one(void);").lib.one() == 1
    cachedir.clear_caches()


def test_missing_compiler_end_to_end(tmp_path):
    code = "import numpy as np, cppcodegen; cppcodegen.compile(lambda x: x + 1)(np.ones(3))"
    env = dict(os.environ, PATH=_path_with(tmp_path), CPPCODEGEN_CACHE_DIR=str(tmp_path / "c"))
    env.pop("CXX", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert "no C++ compiler found: tried CXX (not set), g++, clang++" in out.stderr


# -- noexec ---------------------------------------------------------------------------

def test_noexec_cache_dir_is_refused(tmp_path, monkeypatch):
    real = os.statvfs

    class NoExec:
        def __init__(self, st):
            self.st = st

        def __getattr__(self, name):
            return getattr(self.st, name)

        @property
        def f_flag(self):
            return self.st.f_flag | os.ST_NOEXEC
    monkeypatch.setattr(os, "statvfs", lambda p: NoExec(real(p)))
    with pytest.raises(cachedir.CacheDirError) as info:
        cachedir.ensure_cache_dir(tmp_path / "c")
    assert "noexec" in str(info.value) and "CPPCODEGEN_CACHE_DIR" in str(info.value)
    fake = tmp_path / "lib.so"
    fake.write_bytes(b"\x7fELF broken")
    with pytest.raises(cachedir.CacheDirError, match="CPPCODEGEN_CACHE_DIR"):
        loader.load_library(fake, "int f(void);")


def test_fallback_dir_avoids_a_noexec_tempdir(tmp_path, monkeypatch):
    monkeypatch.setattr(cachedir.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(cachedir, "is_noexec", lambda p: Path(p) == tmp_path)
    chosen = cachedir._fallback_dir()
    assert chosen.parent != tmp_path and chosen.name == f"cppcodegen_{os.getuid()}"
