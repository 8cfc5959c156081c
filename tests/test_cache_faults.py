"""End-to-end fault injection: damage a populated cache, call the compiled function again in a
NEW process, and check the result is right, a warning names the damage, and exactly what had
to be rebuilt was rebuilt (compiles are counted by a CXX wrapper script)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import cppcodegen

# the precompiled header may still be being written in the background: never copy it
_NO_PCH = shutil.ignore_patterns("pch")

REAL_CXX = shutil.which("g++") or shutil.which("clang++")
pytestmark = pytest.mark.skipif(REAL_CXX is None, reason="no C++ compiler")

CHILD = textwrap.dedent("""
    import json, sys, warnings
    import numpy as np
    import cppcodegen

    def softmax(x):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)

    x = np.linspace(-3, 3, 40, dtype=np.float32).reshape(5, 8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = cppcodegen.compile(softmax)(x)
    e = np.exp(x - x.max(-1, keepdims=True))
    print(json.dumps({
        "ok": bool(np.allclose(y, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)),
        "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
        "sympy": "sympy" in sys.modules, "codegen": "cppcodegen.backend.program" in sys.modules,
        "pycparser": "pycparser" in sys.modules}))
""")


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory):
    """The child script, a compile-counting compiler wrapper and a populated template cache."""
    root = tmp_path_factory.mktemp("faults")
    script = root / "child.py"
    script.write_text(CHILD)
    wrapper = root / "cxx"
    wrapper.write_text("#!/bin/sh\n"
                       f'case "$1" in --version) exec {REAL_CXX} --version;; esac\n'
                       f'case "$*" in *c++-header*) exec {REAL_CXX} "$@";; esac\n'   # the PCH
                       'echo "$$" >> "$CCG_TEST_CXX_LOG"\n'
                       '[ -n "$CCG_TEST_CXX_SLEEP" ] && sleep "$CCG_TEST_CXX_SLEEP"\n'
                       f'exec {REAL_CXX} "$@"\n')
    wrapper.chmod(0o755)
    template = root / "template"
    box = {"script": script, "wrapper": wrapper, "template": template}
    out = run_child(box, template, root / "template.log")
    assert out["ok"] and out["sympy"] and not out["warnings"], out
    assert compiles(root / "template.log") == 1
    return box


def child_env(box, cache, log, **env) -> dict:
    """The environment of every child: the same ISA for all of them (the template's), else
    a child would look up another kernel than the one the test damaged or interrupted."""
    full = dict(os.environ, CPPCODEGEN_CACHE_DIR=str(cache), CXX=str(box["wrapper"]),
                CCG_TEST_CXX_LOG=str(log), **env)
    full.pop("CPPCODEGEN_ISA", None)
    return full


def run_child(box, cache, log, check=True, **env):
    proc = subprocess.run([sys.executable, str(box["script"])], env=child_env(box, cache, log, **env),
                          capture_output=True, text=True, timeout=120)
    if not check:
        return proc
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compiles(log) -> int:
    return len(Path(log).read_text().splitlines()) if Path(log).exists() else 0


@pytest.fixture
def cache(toolbox, tmp_path):
    """A private copy of the populated template cache (entries are location independent)."""
    dst = tmp_path / "cache"
    shutil.copytree(toolbox["template"], dst, symlinks=True, ignore=_NO_PCH)
    return dst


def kernel_entry(cache) -> Path:
    (entry,) = [p for p in cache.glob("??/*") if p.is_dir()]
    return entry


def test_copy_of_populated_cache_is_warm(toolbox, cache, tmp_path):
    out = run_child(toolbox, cache, tmp_path / "log")
    assert out == {"ok": True, "warnings": [], "sympy": False, "codegen": False,
                   "pycparser": False}
    assert compiles(tmp_path / "log") == 0


def _truncate(entry):
    so = next(entry.glob("*.so"))
    so.write_bytes(so.read_bytes()[:1000])


def _garbage_same_size(entry):
    so = next(entry.glob("*.so"))
    so.write_bytes(os.urandom(so.stat().st_size))


def _no_build_json(entry):
    (entry / "build.json").unlink()


def _corrupt_build_json(entry):
    (entry / "build.json").write_text('{"completed": tru')


@pytest.mark.parametrize("damage, why", [
    (_truncate, "bytes, build.json recorded"),
    (_garbage_same_size, "sha256"),
    (_no_build_json, "build.json is missing"),
    (_corrupt_build_json, "build.json is corrupt"),
])
def test_damaged_kernel_is_rebuilt_with_a_warning(toolbox, cache, tmp_path, damage, why):
    damage(kernel_entry(cache))
    log = tmp_path / "log"
    out = run_child(toolbox, cache, log)
    assert out["ok"], out
    assert len(out["warnings"]) == 1 and "CacheWarning" in out["warnings"][0], out
    assert why in out["warnings"][0] and "rebuilding" in out["warnings"][0]
    assert compiles(log) == 1
    again = run_child(toolbox, cache, log)          # repaired: warm, silent, no compiler
    assert again["ok"] and not again["warnings"] and not again["sympy"], again
    assert compiles(log) == 1


def test_corrupt_graph_entry_is_rebuilt_without_the_compiler(toolbox, cache, tmp_path):
    (graph,) = cache.glob("graphs/??/*.pkl")
    graph.write_bytes(b"\x80\x05not a pickle at all")
    log = tmp_path / "log"
    out = run_child(toolbox, cache, log)
    assert out["ok"], out
    assert len(out["warnings"]) == 1 and "graph cache entry" in out["warnings"][0], out
    assert compiles(log) == 0                      # the kernel entry was intact
    again = run_child(toolbox, cache, log)
    assert again["ok"] and not again["warnings"] and not again["sympy"], again


def test_corrupt_ffi_memo_is_reparsed(toolbox, cache, tmp_path):
    (memo,) = kernel_entry(cache).glob("ffi-*.py")
    memo.write_text("import os; os._exit(3)\n")     # never executed: read as literals only
    out = run_child(toolbox, cache, tmp_path / "log")
    assert out["ok"] and out["pycparser"], out
    assert "_cffi_backend.FFI" in memo.read_text()   # rewritten
    assert compiles(tmp_path / "log") == 0


def test_builder_killed_mid_compile_leaves_no_stale_lock(toolbox, tmp_path):
    cache, log = tmp_path / "cache", tmp_path / "log"
    env = child_env(toolbox, cache, log, CCG_TEST_CXX_SLEEP="60")
    victim = subprocess.Popen([sys.executable, str(toolbox["script"])], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while compiles(log) == 0:                  # it holds the build lock now
            assert victim.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait()
    assert list(cache.glob("??/*.lock")), "the killed builder's lock file stays behind"
    out = run_child(toolbox, cache, log)
    assert out["ok"], out
    assert len(out["warnings"]) == 1 and f"process {victim.pid} was interrupted" in \
        out["warnings"][0], out
    assert compiles(log) == 2


def test_foreign_owned_kernel_is_refused(toolbox, cache, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to chown")
    so = next(kernel_entry(cache).glob("*.so"))
    os.chown(so, 12345, 12345)
    proc = run_child(toolbox, cache, tmp_path / "log", check=False)
    assert proc.returncode != 0
    assert "CacheDirError" in proc.stderr and "owned by uid 12345" in proc.stderr
    assert "CPPCODEGEN_CACHE_DIR" in proc.stderr


def test_group_writable_graph_entry_is_refused(toolbox, cache, tmp_path):
    (graph,) = cache.glob("graphs/??/*.pkl")
    graph.chmod(0o664)
    proc = run_child(toolbox, cache, tmp_path / "log", check=False)
    assert proc.returncode != 0
    assert "refusing to load" in proc.stderr and "mode 664" in proc.stderr


def test_noexec_cache_dir_is_named_in_the_error(toolbox, tmp_path):
    mnt = tmp_path / "noexec"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "noexec,size=8m", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a noexec tmpfs here (see the unit test below)")
    try:
        proc = run_child(toolbox, mnt / "cache", tmp_path / "log", check=False)
        assert proc.returncode != 0
        assert "mounted noexec" in proc.stderr and "CPPCODEGEN_CACHE_DIR" in proc.stderr
        assert compiles(tmp_path / "log") == 0         # refused before compiling anything
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def element(x):
    return x[0, 0]


def zero_d_view(x):
    return x[0:1, 0:1].reshape(())


def test_graphs_alike_but_for_the_result_kind_are_two_entries():
    """x[0, 0] (a NumPy scalar) and x[0:1, 0:1].reshape(()) (a 0-d array) trace to the same
    nodes: the graph cache's key tells them apart, so neither takes the other's result kind,
    in either order (the second one compiled returned the first one's kind)."""
    x = np.arange(24.0).reshape(4, 6)
    for order in ((element, zero_d_view), (zero_d_view, element)):
        with cppcodegen.fresh_cache():
            for fn in order:
                got, want = cppcodegen.compile(fn)(x), fn(x)
                assert type(got) is type(want), (fn.__name__, type(got))
                assert got == want
