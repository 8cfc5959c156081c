"""``python3 -m tests.fuzz --count N --seed S``: fuzz cppcodegen against NumPy.

Programs ``(S, start) .. (S, start + N - 1)`` are generated, run in compiled batches of
``--batch`` programs, and compared with NumPy; every ``--pair-every``-th program is also
rewritten into a metamorphic twin that must agree with it. Each failure is shrunk to a
minimal program (unless ``--no-shrink``) and printed as a pytest regression test; the
summary line counts graphs, pairs, failures and g++ builds. Exit status 1 on any failure.

Reproduce one program: ``python3 -m tests.fuzz --seed S --start I --count 1``.

``--loops``: random programs with loops and branches instead (tests/fuzz/loopcheck.py; its
own options, e.g. ``python3 -m tests.fuzz --loops --count 100 --seed S --jobs 2``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    __package__ = "tests.fuzz"

from . import generator, metamorphic, report, runner, shrink  # noqa: E402


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--loops" in argv:
        from . import loopcheck
        return loopcheck.main([x for x in argv if x != "--loops"])
    ap = argparse.ArgumentParser(prog="python3 -m tests.fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=2000, help="random graphs to run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0, help="first program index")
    ap.add_argument("--batch", type=int, default=24, help="programs per compiled function")
    ap.add_argument("--pair-every", type=int, default=3,
                    help="also build a metamorphic twin of every k-th program (0: never)")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--shrink-budget", type=int, default=40, help="max shrink rounds per bug")
    ap.add_argument("--avoid", default="", help="comma-separated template substrings never "
                    "to generate (known bugs), e.g. 'np.fmod('")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="cppcodegen compile option for every build, e.g. parallel_threshold=64 "
                    "(OpenMP paths on small arrays) or fuse=0")
    ap.add_argument("--dynamic", action="store_true",
                    help="compile with dynamic=True: every size a symbol, passed at run time")
    ap.add_argument("--log", help="append JSON lines (progress, failures) to this file")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)

    log = open(a.log, "a") if a.log else None
    generator.AVOID.update(x for x in a.avoid.split(",") if x)

    def emit(rec):
        if log:
            log.write(json.dumps(rec) + "\n")
            log.flush()

    options = dict(o.split("=", 1) for o in a.option) or None
    runner.DEFAULT_OPTIONS = options
    runner.DYNAMIC = True if a.dynamic else None
    t0 = time.time()
    n_graphs = n_pairs = 0
    failures = []
    seen = set()
    seen_sigs = set()
    for b0 in range(a.start, a.start + a.count, a.batch):
        idx = list(range(b0, min(b0 + a.batch, a.start + a.count)))
        emit({"event": "batch", "seed": a.seed, "start": b0, "n": len(idx), "t": time.time() - t0})
        items = []                      # (label, program, twin or None)
        for i in idx:
            p = generator.generate(a.seed, i)
            twin = None
            if a.pair_every and i % a.pair_every == 0:
                twin = metamorphic.twin(p, a.seed, i)
            items.append((i, p, twin))
        progs = [p for _, p, _ in items] + [t for _, _, t in items if t is not None]
        outs = runner.run_programs(progs, options)
        res = dict(zip([id(p) for p in progs], outs))
        for i, p, twin in items:
            n_graphs += 1
            o = res[id(p)]
            bad = []
            if o.failed:
                bad.append(("graph", p, o))
            if twin is not None:
                n_pairs += 1
                ot = res[id(twin)]
                if ot.failed:
                    bad.append(("twin", twin, ot))
                elif not o.failed:
                    msg = metamorphic.check_pair(o, ot)
                    if msg:
                        bad.append(("pair", (p, twin), runner.Outcome("mismatch", msg)))
            if i == idx[-1]:
                while runner.INTERACTIONS:
                    mp, mo = runner.INTERACTIONS.pop()
                    bad.append(("interaction", mp, mo))
            for what, prog, out in bad:
                rec = {"event": "failure", "kind": what, "seed": a.seed, "index": i,
                       "status": out.status, "message": out.message[:3000]}
                if what == "pair":
                    rec["source"], rec["twin"] = prog[0].source(), prog[1].source()
                    rec["args"] = prog[0].args_source()
                else:
                    rec["source"], rec["args"] = prog.source(), prog.args_source()
                sig = out.signature()
                rec["signature"] = sig
                if sig != "mismatch" and sig in seen_sigs:
                    rec["duplicate"] = True
                elif what in ("graph", "twin") and not runner.run_one(prog, options).failed:
                    rec["batch_only"] = True        # fails only next to other programs
                elif not a.no_shrink and what != "pair":
                    seen_sigs.add(sig)
                    small = shrink.shrink(prog, out, budget=a.shrink_budget)
                    rec["shrunk"] = small.source()
                    rec["shrunk_args"] = small.args_source()
                    key = (sig, small.source())
                    rec["duplicate"] = key in seen
                    seen.add(key)
                    rec["test"] = report.regression_test(small, out, f"s{a.seed}_{i}")
                failures.append(rec)
                emit(rec)
                if not a.quiet:
                    print(f"--- FAIL ({what}, {out.status}) seed {a.seed} #{i}: "
                          f"{out.message.splitlines()[0] if out.message else ''}", flush=True)
                    print(rec.get("test") or (rec["source"] + rec["args"]), flush=True)
        if not a.quiet:
            el = time.time() - t0
            print(f"[{n_graphs}/{a.count} graphs, {n_pairs} pairs, {len(failures)} failures, "
                  f"{runner.STATS.builds} builds, {el:.0f}s]", flush=True)
    el = time.time() - t0
    summary = {"event": "done", "seed": a.seed, "options": options, "start": a.start, "graphs": n_graphs,
               "pairs": n_pairs, "failures": len(failures), "builds": runner.STATS.builds,
               "seconds": round(el, 1)}
    emit(summary)
    print(f"fuzz: {n_graphs} graphs, {n_pairs} metamorphic pairs, {len(failures)} failures, "
          f"{runner.STATS.builds} g++ builds, {el:.0f}s (seed {a.seed}, start {a.start})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
