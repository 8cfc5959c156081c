"""Where OpenMP's workers run (include/cppcodegen/placement.h): off the calling thread's core
during a compiled call, and the calling thread's own CPU mask as it was when the call returns."""
import os
import threading

import numpy as np
import pytest

import cppcodegen
from cppcodegen.runtime import openmp

CPUS = os.sched_getaffinity(0)
pytestmark = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs")


def _big_sum(a):
    return (a * 2.0 + 1.0).sum(axis=1)


def _masks():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            out[int(tid)] = os.sched_getaffinity(int(tid))
        except OSError:
            pass
    return out


def test_wait_setting_is_what_libgomp_was_given():
    setting = openmp.prepare()
    if "OMP_WAIT_POLICY" not in setting and "GOMP_SPINCOUNT" not in setting:
        pytest.fail(f"no OpenMP wait setting recorded: {setting!r}")


def test_calling_thread_keeps_its_mask_and_workers_leave_it_a_core():
    f = cppcodegen.compile(_big_sum, options={"parallel_threshold": 0})
    a = np.random.default_rng(0).standard_normal((512, 512))
    before = os.sched_getaffinity(0)
    for _ in range(5):
        np.testing.assert_allclose(f(a), _big_sum(a), rtol=1e-12)
    assert os.sched_getaffinity(0) == before
    if any(k in os.environ for k in ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY")):
        return                  # the user places threads: we do not
    me = threading.get_native_id()
    narrowed = [m for tid, m in _masks().items() if tid != me and m != before]
    if os.environ.get("OMP_NUM_THREADS") == "1":
        assert narrowed == []
        return
    # each worker may run anywhere in the mask but on one CPU (the caller's core)
    assert narrowed, "no OpenMP worker was placed"
    assert all(len(before - m) == 1 and m < before for m in narrowed), narrowed


def test_a_thread_with_its_own_mask_gets_it_back():
    f = cppcodegen.compile(_big_sum, options={"parallel_threshold": 0})
    a = np.ones((256, 256))
    result, masks = {}, {}
    one = {min(CPUS)}

    def run():
        os.sched_setaffinity(0, CPUS)
        os.sched_setaffinity(0, one | {max(CPUS)})
        masks["before"] = os.sched_getaffinity(0)
        result["value"] = f(a)
        masks["after"] = os.sched_getaffinity(0)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert masks["after"] == masks["before"]
    np.testing.assert_array_equal(result["value"], _big_sum(a))


_FORK_SCRIPT = """
import multiprocessing as mp
import numpy as np
import cppcodegen
f = cppcodegen.compile(lambda a: (a * 2.0 + 1.0).sum(axis=1), options={"parallel_threshold": 0})
a = np.arange(512 * 512, dtype=np.float64).reshape(512, 512) / 1000.0
expect = float(f(a).sum())                       # kernels (and OpenMP's threads) in the parent


def work(_):
    return float(f(a).sum())


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:
        got = pool.map(work, range(2))
    assert got == [expect, expect], (got, expect)
    print("ok")
"""


def test_a_pool_forked_after_kernels_ran_computes_instead_of_hanging(tmp_path):
    """libgomp's threads do not survive fork: a child runs its kernels on its one thread
    (runtime/openmp.py) instead of waiting forever for workers that do not exist."""
    import subprocess
    import sys
    script = tmp_path / "pool.py"
    script.write_text(_FORK_SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")
