"""compile_cached / invalidate / load_library against a real C++ compiler."""

import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from cppcodegen.runtime import build, cachedir, loader
from cppcodegen.runtime.build import (
    CompileError, compile_cached, explain_miss, invalidate)
from cppcodegen.runtime.cachedir import CacheWarning
from cppcodegen.runtime.loader import LoadError, load_built, load_library

REAL_CXX = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
pytestmark = pytest.mark.skipif(REAL_CXX is None, reason="no C++ compiler")

SOURCE = 'extern "C" int add1(int x) { return x + 1; }\n'
CDEF = "int add1(int);"


def kwargs(cache_dir, cxx=REAL_CXX, **over):
    kw = dict(name="add", cache_dir=Path(cache_dir), cxx=cxx,
              flags=["-O1", "-std=c++17"], include_dir=Path(cache_dir) / "inc",
              libs=[], package_version="0.0-test")
    kw.update(over)
    Path(kw["include_dir"]).mkdir(parents=True, exist_ok=True)
    return kw


def counting_cxx(tmp_path, delay=0.0):
    """A compiler wrapper that logs one line per compile (not --version)."""
    log = tmp_path / "compiles.log"
    script = tmp_path / "cxx-wrapper"
    script.write_text(
        "#!/bin/sh\n"
        f'case "$1" in --version) exec {REAL_CXX} --version;; esac\n'
        f'echo "$$" >> "{log}"\n'
        f"sleep {delay}\n"
        f'exec {REAL_CXX} "$@"\n')
    script.chmod(0o755)
    return str(script), log


def compiles(log):
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture(autouse=True)
def _clear_memos():
    cachedir.clear_caches()
    yield
    cachedir.clear_caches()


def test_build_load_and_call(tmp_path):
    r = compile_cached(SOURCE, **kwargs(tmp_path / "c"))
    assert not r.cached and r.build_seconds > 0
    assert r.so_path.name == "add.so" and r.source_path.read_text() == SOURCE
    entry = r.so_path.parent
    assert entry == tmp_path / "c" / r.key[:2] / r.key
    meta = json.loads((entry / "build.json").read_text())
    assert meta["completed"] is True and meta["command"] == r.command
    assert set(r.key_parts) == {"source", "name", "command", "compiler_version",
                                "include_dir", "package_version"}
    lib = load_library(r.so_path, CDEF)
    assert lib.lib.add1(41) == 42
    assert load_library(str(r.so_path), CDEF) is lib  # memoized
    assert not [p for p in entry.iterdir() if ".tmp-" in p.name]


def test_second_call_runs_no_compiler(tmp_path, monkeypatch):
    kw = kwargs(tmp_path / "c")
    first = compile_cached(SOURCE, **kw)

    def boom(*a, **k):
        raise AssertionError("subprocess used on the warm path")

    monkeypatch.setattr(subprocess, "run", boom)
    monkeypatch.setattr(subprocess, "Popen", boom)
    second = compile_cached(SOURCE, **kw)
    assert second.cached and second.so_path == first.so_path
    assert second.key == first.key and second.command == first.command
    # A new process has empty memos: the compiler version comes from disk.
    cachedir.clear_caches()
    third = compile_cached(SOURCE, **kw)
    assert third.cached and third.key == first.key


def test_warm_path_is_fast(tmp_path):
    kw = kwargs(tmp_path / "c")
    compile_cached(SOURCE, **kw)
    n = 200
    t = time.perf_counter()
    for _ in range(n):
        compile_cached(SOURCE, **kw)
    per_call = (time.perf_counter() - t) / n
    assert per_call < 1e-3, f"warm compile_cached took {per_call * 1e6:.0f} us"


def test_key_parts_explain_misses(tmp_path):
    kw = kwargs(tmp_path / "c")
    base = compile_cached(SOURCE, **kw)
    variants = {
        "source": dict(source=SOURCE + "// changed\n"),
        "command": dict(flags=["-O2", "-std=c++17"]),
        "package_version": dict(package_version="0.0-other"),
        "extra:target": dict(extra_key={"target": "x"}),
    }
    for part, change in variants.items():
        source = change.pop("source", SOURCE)
        r = compile_cached(source, **{**kw, **change})
        assert r.key != base.key and not r.cached
        assert explain_miss(base, r) == [part]
    (Path(kw["include_dir"]) / "h.h").write_text("#define X 1\n")
    r = compile_cached(SOURCE, **kw)
    assert explain_miss(base, r) == ["include_dir"]


def test_key_ignores_cache_location(tmp_path):
    a = compile_cached(SOURCE, **kwargs(tmp_path / "a", include_dir=tmp_path / "i1"))
    b = compile_cached(SOURCE, **kwargs(tmp_path / "b", include_dir=tmp_path / "i2"))
    assert a.key == b.key


def test_compile_error(tmp_path):
    kw = kwargs(tmp_path / "c")
    with pytest.raises(CompileError) as info:
        compile_cached('extern "C" int f( { oops }', **kw)
    e = info.value
    assert e.source_path.exists() and "oops" in e.source_path.read_text()
    assert "error" in e.stderr.lower()
    msg = str(e)
    assert str(e.source_path) in msg and e.command[0] in msg and "error" in msg
    assert not (e.source_path.parent / "build.json").exists()
    assert not [p for p in e.source_path.parent.iterdir() if ".tmp-" in p.name]
    with pytest.raises(CompileError):  # failures are not cached as successes
        compile_cached('extern "C" int f( { oops }', **kw)


def test_long_stderr_is_trimmed(tmp_path):
    bad = "\n".join(f"int f{i}() {{ return undefined_{i}; }}" for i in range(400))
    with pytest.raises(CompileError) as info:
        compile_cached(bad, **kwargs(tmp_path / "c"))
    assert len(info.value.stderr) > build.STDERR_LIMIT
    assert len(str(info.value)) < build.STDERR_LIMIT + 2000


def test_missing_compiler(tmp_path):
    with pytest.raises(CompileError, match="CXX") as info:
        compile_cached(SOURCE, **kwargs(tmp_path / "c", cxx="/nonexistent/c++"))
    assert "/nonexistent/c++" in str(info.value)


def test_truncated_so_without_build_json_is_rebuilt(tmp_path):
    ref = compile_cached(SOURCE, **kwargs(tmp_path / "ref"))
    # Same key in another cache: plant a half-written .so under the final name.
    cache = tmp_path / "c"
    entry = cache / ref.key[:2] / ref.key
    entry.mkdir(parents=True)
    (entry / "add.so").write_bytes(ref.so_path.read_bytes()[:100])
    with pytest.warns(CacheWarning, match="build.json is missing"):
        r = compile_cached(SOURCE, **kwargs(cache))
    assert not r.cached and r.so_path == entry / "add.so"
    assert load_library(r.so_path, CDEF).lib.add1(1) == 2


def test_so_with_wrong_size_is_rebuilt(tmp_path):
    kw = kwargs(tmp_path / "c")
    r = compile_cached(SOURCE, **kw)
    data = r.so_path.read_bytes()
    r.so_path.write_bytes(data[: len(data) // 2])
    with pytest.warns(CacheWarning, match="bytes"):
        again = compile_cached(SOURCE, **kw)
    assert not again.cached
    assert again.so_path.stat().st_size == len(data)


def test_same_size_garbage_so_is_caught_by_its_hash(tmp_path):
    kw = kwargs(tmp_path / "c")
    r = compile_cached(SOURCE, **kw)
    info = json.loads((r.so_path.parent / "build.json").read_text())
    assert info["so_sha256"] == hashlib.sha256(r.so_path.read_bytes()).hexdigest()
    r.so_path.write_bytes(b"\0" * info["so_size"])  # same size: only the hash tells
    with pytest.warns(CacheWarning, match="sha256"):
        again = compile_cached(SOURCE, **kw)
    assert not again.cached
    assert load_built(again, CDEF).lib.add1(2) == 3


def test_loader_checks_hash_before_dlopen(tmp_path):
    kw = kwargs(tmp_path / "c")
    r = compile_cached(SOURCE, **kw)
    r.so_path.write_bytes(b"\0" * r.so_path.stat().st_size)
    with pytest.raises(LoadError, match="sha256") as info:
        load_built(r, CDEF)
    assert str(r.so_path) in str(info.value)
    assert not r.so_path.parent.exists()
    again = compile_cached(SOURCE, **kw)
    assert not again.cached
    assert load_built(again, CDEF).lib.add1(2) == 3


def test_invalidate_then_rebuild(tmp_path):
    kw = kwargs(tmp_path / "c")
    r = compile_cached(SOURCE, **kw)
    invalidate(r)
    assert not r.so_path.exists()
    invalidate(r)  # idempotent
    assert not compile_cached(SOURCE, **kw).cached


def test_load_error_names_path(tmp_path):
    bogus = tmp_path / "bogus.so"
    bogus.write_text("not a library")
    with pytest.raises(LoadError) as info:
        load_library(bogus, CDEF)
    assert str(bogus) in str(info.value) and info.value.reason


def test_loader_memo_cleared_by_fresh_cache(tmp_path):
    r = compile_cached(SOURCE, **kwargs(tmp_path / "c"))
    a = load_library(r.so_path, CDEF)
    with cachedir.fresh_cache():
        assert load_library(r.so_path, CDEF) is not a


def test_threads_build_once(tmp_path):
    cxx, log = counting_cxx(tmp_path, delay=0.3)
    kw = kwargs(tmp_path / "c", cxx=cxx)
    results, errors = [], []
    barrier = threading.Barrier(8)

    def work():
        try:
            barrier.wait()
            results.append(compile_cached(SOURCE, **kw))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert compiles(log) == 1
    assert sum(not r.cached for r in results) == 1
    assert len({r.so_path for r in results}) == 1
    assert load_library(results[0].so_path, CDEF).lib.add1(9) == 10


def _process_worker(kw, barrier, queue):
    barrier.wait()
    r = compile_cached(SOURCE, **kw)
    lib = load_library(r.so_path, CDEF)
    queue.put((str(r.so_path), r.cached, lib.lib.add1(os.getpid())
               - os.getpid()))


def test_processes_build_once(tmp_path):
    cxx, log = counting_cxx(tmp_path, delay=0.3)
    kw = kwargs(tmp_path / "c", cxx=cxx)
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(8), ctx.Queue()
    procs = [ctx.Process(target=_process_worker, args=(kw, barrier, queue))
             for _ in range(8)]
    for p in procs:
        p.start()
    out = [queue.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert compiles(log) == 1
    assert len({o[0] for o in out}) == 1
    assert sorted(o[1] for o in out) == [False] + [True] * 7
    assert all(o[2] == 1 for o in out)
    assert len(list(Path(out[0][0]).parent.glob("build.json"))) == 1


def test_bad_name_and_extra_key(tmp_path):
    with pytest.raises(ValueError):
        compile_cached(SOURCE, **kwargs(tmp_path / "c", name="../evil"))
    with pytest.raises(TypeError):
        compile_cached(SOURCE, **kwargs(tmp_path / "c", extra_key={"a": 1}))


def test_unsafe_cache_dir_refused(tmp_path):
    cache = tmp_path / "c"
    cache.mkdir()
    cache.chmod(0o777)
    with pytest.raises(cachedir.CacheDirError):
        compile_cached(SOURCE, **kwargs(cache))


def test_cache_dir_removed_mid_process(tmp_path):
    kw = kwargs(tmp_path / "c")
    r = compile_cached(SOURCE, **kw)
    shutil.rmtree(tmp_path / "c")
    invalidate(r)  # nothing to remove: no error
    again = compile_cached(SOURCE, **kw)
    assert not again.cached and again.so_path.exists()


def test_runtime_modules_import_only_allowed_packages():
    """Warm starts must not pay for sympy or the compiler modules."""
    import ast
    import sys
    runtime = Path(build.__file__).parent
    allowed = set(sys.stdlib_module_names) | {"numpy", "cffi", "_cffi_backend"}
    for name in ("cachedir.py", "build.py", "loader.py", "locks.py", "graphcache.py", "cpu.py",
                 "openmp.py"):
        tree = ast.parse((runtime / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                tops = [node.module.split(".")[0]]
            else:
                continue
            assert set(tops) <= allowed, f"{name} imports {tops}"
