"""Concurrency end to end: 8 processes, and 8 threads, calling the same compiled function at
once on an empty cache produce exactly one compiler run and correct results everywhere."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import cppcodegen

REAL_CXX = shutil.which("g++") or shutil.which("clang++")
pytestmark = pytest.mark.skipif(REAL_CXX is None, reason="no C++ compiler")

CHILD = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    import cppcodegen

    @cppcodegen.compile
    def softmax(x):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)

    x = np.linspace(-2, 2, 48, dtype=np.float32).reshape(6, 8) * (1 + int(sys.argv[2]))
    while not os.path.exists(sys.argv[1]):          # start line: everyone imported
        time.sleep(0.002)
    y = softmax(x)
    e = np.exp(x - x.max(-1, keepdims=True))
    print(json.dumps(bool(np.allclose(y, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7))))
""")


def counting_wrapper(tmp_path):
    log = tmp_path / "compiles.log"
    wrapper = tmp_path / "cxx"
    wrapper.write_text("#!/bin/sh\n"
                       f'case "$1" in --version) exec {REAL_CXX} --version;; esac\n'
                       f'case "$*" in *c++-header*) exec {REAL_CXX} "$@";; esac\n'   # the PCH
                       f'echo "$$ $(date +%s.%N)" >> "{log}"\n'
                       f'exec {REAL_CXX} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, log


def compiles(log) -> int:
    return len(Path(log).read_text().splitlines()) if Path(log).exists() else 0


def test_eight_processes_build_once(tmp_path):
    wrapper, log = counting_wrapper(tmp_path)
    script, go = tmp_path / "child.py", tmp_path / "go"
    script.write_text(CHILD)
    env = dict(os.environ, CPPCODEGEN_CACHE_DIR=str(tmp_path / "cache"), CXX=str(wrapper))
    env.pop("CPPCODEGEN_ISA", None)
    procs = [subprocess.Popen([sys.executable, str(script), str(go), str(i)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(8)]
    time.sleep(0.5)
    go.touch()
    results = [p.communicate(timeout=180) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
        assert json.loads(out.strip().splitlines()[-1]) is True
        assert "Warning" not in err, err                 # nobody saw a partial entry
    assert compiles(log) == 1, log.read_text()
    assert len(list((tmp_path / "cache").glob("??/*/*.so"))) == 1


def _softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _run_threads(target, n=8):
    barrier, errors = threading.Barrier(n), []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:        # collected, re-raised below
            errors.append(e)
    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not errors, errors


def test_eight_threads_share_one_compiled_function(tmp_path, monkeypatch):
    from cppcodegen.runtime import graphcache
    wrapper, log = counting_wrapper(tmp_path)
    lookups = []
    real_lookup = graphcache.lookup

    def counting_lookup(*a):                        # once per compilation of a variant
        lookups.append(threading.get_ident())
        time.sleep(0.2)                              # widen the race window
        return real_lookup(*a)
    monkeypatch.setattr(graphcache, "lookup", counting_lookup)
    with cppcodegen.fresh_cache(dir=tmp_path):
        fn = cppcodegen.compile(_softmax, options={"cxx": str(wrapper)})

        def call(i):
            x = np.linspace(-1, 1, 48, dtype=np.float32).reshape(6, 8) * (i + 1)
            np.testing.assert_allclose(fn(x), _softmax(x), rtol=1e-5, atol=1e-7)
        _run_threads(call)
        assert compiles(log) == 1
        assert len(lookups) == 1, "the CompiledFunction lock lets exactly one thread compile"
        assert len(fn.variants) == 1


def test_eight_threads_with_separate_compiled_functions(tmp_path):
    """No shared CompiledFunction lock: the build lock alone keeps it to one compile."""
    wrapper, log = counting_wrapper(tmp_path)
    with cppcodegen.fresh_cache(dir=tmp_path):
        def call(i):
            fn = cppcodegen.compile(_softmax, options={"cxx": str(wrapper)})
            x = np.linspace(-1, 1, 48, dtype=np.float32).reshape(6, 8) * (i + 1)
            np.testing.assert_allclose(fn(x), _softmax(x), rtol=1e-5, atol=1e-7)
        _run_threads(call)
        assert compiles(log) == 1
