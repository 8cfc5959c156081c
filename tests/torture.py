"""Cache torture: many processes on a cold cache, and compiles killed at random moments.

    python -m tests.torture [--rounds 50] [--procs 16] [--kills 100] [--seed 0]

``cold`` rounds: a fresh, empty cache directory; ``--procs`` processes start at the same
instant (a start file), each compiles and runs the same function and checks the result
against NumPy. Every process must exit 0 with the right values: 0 failures.

``kill`` rounds: one cache directory for all; each round starts a process that compiles a
function (a new one every few rounds, so most kills land inside a build) and sends it
SIGKILL after a random delay between 0 and about two compile times (sometimes the whole
process group, so the compiler dies too; sometimes only Python, so an orphaned compiler
finishes writing its temporary files later). The next process then compiles the same
function and must get a correct result: either it rebuilds the entry or it loads a good
one. An entry that loads wrong (a truncated .so, a build.json naming a missing file, a
half-written ffi module ...) shows up as an exception or as wrong values.

tests/test_cache_torture.py runs a small slice of both under ``make test``.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

CHILD = textwrap.dedent("""
    import os, sys, time, warnings
    import numpy as np
    import cppcodegen

    K = {k!r}

    def f(x, y):
        z = np.sin(x) * y + K
        return z, (z * x).sum(axis=0), np.maximum(x, y).astype(np.int64) // 3

    x = np.linspace(-3, 3, 7 * 37).reshape(7, 37)
    y = np.cos(x) * 5
    start = sys.argv[1]
    while start and not os.path.exists(start):        # everyone imported: go
        time.sleep(0.001)
    warnings.simplefilter("ignore")                   # CacheWarning: a damaged entry rebuilt
    got = cppcodegen.compile(f)(x, y)
    want = f(x, y)
    ok = (np.allclose(got[0], want[0], rtol=1e-13, atol=1e-13) and np.allclose(got[1], want[1], rtol=1e-12, atol=1e-9)
          and np.array_equal(got[2], want[2]) and got[2].dtype == want[2].dtype)
    print("ok" if ok else f"WRONG {{got}} {{want}}", flush=True)
    sys.exit(0 if ok else 3)
""")


def _env(cache: Path) -> dict:
    env = dict(os.environ)
    env["CPPCODEGEN_CACHE_DIR"] = str(cache)
    env.pop("CPPCODEGEN_DEBUG", None)
    return env


def _script(workdir: Path, k: float) -> Path:
    path = workdir / f"child_{str(k).replace('.', '_').replace('-', 'm')}.py"
    if not path.exists():
        path.write_text(CHILD.format(k=k))
    return path


def cold_round(workdir: Path, procs: int, k: float) -> list[str]:
    """``procs`` processes on an empty cache at once; returns failure descriptions."""
    cache = workdir / "cold-cache"
    shutil.rmtree(cache, ignore_errors=True)
    start = workdir / "start"
    start.unlink(missing_ok=True)
    script = _script(workdir, k)
    children = [subprocess.Popen([sys.executable, str(script), str(start)], env=_env(cache),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(procs)]
    time.sleep(0.3)
    start.touch()
    failures = []
    for i, c in enumerate(children):
        out, err = c.communicate(timeout=600)
        if c.returncode != 0 or out.strip() != "ok":
            failures.append(f"process {i}: exit {c.returncode}: {out.strip()[-500:]} "
                            f"{err.strip()[-1500:]}")
    return failures


def run_child(script: Path, cache: Path, timeout=600) -> tuple[int, str]:
    p = subprocess.run([sys.executable, str(script), ""], env=_env(cache), capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, (p.stdout + p.stderr).strip()


def kill_round(workdir: Path, cache: Path, k: float, rng: random.Random,
               max_delay: float) -> list[str]:
    """Start a compile of f(K=k), SIGKILL it after a random delay, then compile again."""
    script = _script(workdir, k)
    c = subprocess.Popen([sys.executable, str(script), ""], env=_env(cache),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    time.sleep(rng.uniform(0, max_delay))
    try:
        if rng.random() < 0.5:
            os.killpg(c.pid, signal.SIGKILL)       # Python and its compiler
        else:
            os.kill(c.pid, signal.SIGKILL)         # Python only: the compiler is orphaned
    except ProcessLookupError:
        pass
    c.wait()
    if rng.random() < 0.3:
        time.sleep(rng.uniform(0, max_delay))     # let an orphaned compiler finish meanwhile
    code, out = run_child(script, cache)
    if code != 0 or out.splitlines()[-1:] != ["ok"]:
        return [f"after a kill (K={k}): exit {code}: {out[-2000:]}"]
    return []


def compile_seconds(workdir: Path) -> float:
    cache = workdir / "probe-cache"
    t = time.perf_counter()
    code, out = run_child(_script(workdir, -1.0), cache)
    if code != 0:
        raise SystemExit(f"torture: the probe compile failed: {out}")
    shutil.rmtree(cache, ignore_errors=True)
    return time.perf_counter() - t


def torture(rounds=50, procs=16, kills=100, seed=0, workdir=None, log=print) -> dict:
    rng = random.Random(seed)
    own = workdir is None
    workdir = Path(workdir or tempfile.mkdtemp(prefix="ccg-torture-"))
    try:
        seconds = compile_seconds(workdir)
        log(f"torture: one cold compile takes {seconds:.2f}s")
        failures = []
        for r in range(rounds):
            bad = cold_round(workdir, procs, k=float(seed * 1000 + r))
            failures += [f"cold round {r}: {b}" for b in bad]
            log(f"cold round {r + 1}/{rounds}: {procs} processes, {len(bad)} failures")
        cache = workdir / "kill-cache"
        kill_failures = []
        for i in range(kills):
            k = float(seed * 1000 + 500 + i // 3)       # three kills per function
            bad = kill_round(workdir, cache, k, rng, max_delay=2 * seconds)
            kill_failures += bad
            if (i + 1) % 10 == 0 or bad:
                log(f"kill {i + 1}/{kills}: {len(kill_failures)} failures so far"
                    + (f"\n  {bad[0]}" if bad else ""))
        return {"cold_rounds": rounds, "procs": procs, "cold_failures": failures,
                "kills": kills, "kill_failures": kill_failures}
    finally:
        if own:
            shutil.rmtree(workdir, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--procs", type=int, default=16)
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    t = time.perf_counter()
    res = torture(a.rounds, a.procs, a.kills, a.seed)
    for f in res["cold_failures"] + res["kill_failures"]:
        print("FAILURE:", f)
    print(f"torture: {res['cold_rounds']} cold rounds x {res['procs']} processes: "
          f"{len(res['cold_failures'])} failures; {res['kills']} killed compiles: "
          f"{len(res['kill_failures'])} bad next runs ({time.perf_counter() - t:.0f}s)")
    return 1 if res["cold_failures"] or res["kill_failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
