"""A small slice of the cache torture (tests/torture.py; ``make torture`` runs the whole):
processes racing on a cold cache, and compiles killed with SIGKILL at random moments, after
which the next compile of the same function must load a good entry or rebuild it."""
import shutil

import pytest

import torture

pytestmark = pytest.mark.skipif(shutil.which("g++") is None and shutil.which("clang++") is None,
                                reason="no C++ compiler")


def test_processes_on_a_cold_cache(tmp_path):
    bad = torture.cold_round(tmp_path, procs=6, k=1.5)
    assert not bad, "\n".join(bad)


def test_killed_compiles_leave_no_bad_entry(tmp_path):
    import random
    rng = random.Random(7)
    cache = tmp_path / "kill-cache"
    bad = []
    for i in range(3):      # delays up to 2 s: importing, tracing, compiling, writing
        bad += torture.kill_round(tmp_path, cache, k=2.0 + i // 2, rng=rng, max_delay=2.0)
    assert not bad, "\n".join(bad)
