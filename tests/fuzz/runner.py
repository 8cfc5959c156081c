"""Run many programs as one compiled function and judge every program on its own.

In: a list of ``Program``. Out: one ``Outcome`` per program: ``ok``, ``mismatch`` (a
compiled value, shape or dtype differs from NumPy beyond the oracle's tolerance, or an
input was modified), ``error`` (cppcodegen raised while tracing, compiling or running) or
``invalid`` (NumPy itself refused the program; a generator/shrinker artefact, not a bug).

One g++ build serves a whole batch: the programs' statements are concatenated (variables
prefixed ``p<k>_``) into one function returning a tuple of per-program output tuples. When
that batch raises, it is bisected until each failing program is isolated, so one bad
program costs ~2*log2(batch) extra builds and every other program is still checked.
"""
from __future__ import annotations

import re
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np

import cppcodegen
import helpers

from .oracle import Reference, compare
from .program import Program, batch_source, exec_function, merge


@dataclass
class Outcome:
    status: str                  # ok | mismatch | error | invalid
    message: str = ""
    got: object = None
    ref: Reference | None = None
    leaf: int | None = None      # index of the first failing output leaf (mismatch)
    extra: dict = field(default_factory=dict)

    @property
    def failed(self):
        return self.status in ("mismatch", "error")

    def signature(self) -> str:
        """What kind of failure (for 'does the shrunk program still fail the same way')."""
        if self.status == "error":
            first = self.message.strip().splitlines()[0] if self.message.strip() else ""
            sig = "error:" + first.split(":")[0]
            errs = [ln for ln in self.message.splitlines() if " error: " in ln]
            if errs:        # the first g++ error, without paths, line numbers, temporaries
                e = errs[0].split(" error: ", 1)[1]
                sig += ":" + re.sub(r"\b(t|v|buf|kernel)\d+\w*|\d+", "#", e)
            return sig
        return self.status


class Stats:
    def __init__(self):
        self.builds = 0
        self.build_seconds = 0.0


STATS = Stats()
# programs that fail only together, as merged programs: [(Program, Outcome)]
INTERACTIONS = []


def _err_text(e):
    return f"{type(e).__name__}: {e}"


def _invoke(programs, arg_lists, options=None):
    """Compile + run the batch of ``programs``; return its per-program results or raise."""
    import time
    name = "fuzz_batch"
    src = batch_source(programs, name)
    fn = exec_function(src, name, f"<fuzz batch {programs[0].label} +{len(programs)}>")
    flat = [a for args in arg_lists for a in args]
    pristine = [a.copy() if isinstance(a, np.ndarray) else a for a in flat]
    t0 = time.perf_counter()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cppcodegen.compile(fn, options=options, dynamic=DYNAMIC)(*flat)
    STATS.builds += 1
    STATS.build_seconds += time.perf_counter() - t0
    if not isinstance(res, tuple) or len(res) != len(programs):
        raise AssertionError(f"batch returned {type(res).__name__} of length "
                             f"{len(res) if isinstance(res, tuple) else '-'}; expected a "
                             f"tuple of {len(programs)}")
    modified = []
    pos = 0
    for k, args in enumerate(arg_lists):
        j = 0
        for a in args:
            if isinstance(a, np.ndarray):
                if not helpers._same_bits(a, pristine[pos]):
                    modified.append((k, j))     # (program, its j-th array argument)
                j += 1
            pos += 1
    return list(res), modified


DEFAULT_OPTIONS = None     # compile options used when none are given (set by the CLI)
DYNAMIC = None             # compile(..., dynamic=): True runs every size symbolically (--dynamic)


def run_programs(programs, options=None, bisect=True):
    """Outcomes for ``programs`` (same order)."""
    options = options if options is not None else DEFAULT_OPTIONS
    outcomes = [None] * len(programs)
    live = []
    for k, p in enumerate(programs):
        if p.meta.get("expect"):        # raises under NumPy: compiled and run on its own
            outcomes[k] = run_expecting(p, options)
            continue
        try:
            args = p.args()
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = Reference(p.source(), "f", args)
        except Exception as e:
            outcomes[k] = Outcome("invalid", _err_text(e))
            continue
        outcomes[k] = Outcome("pending", ref=ref)
        live.append(k)

    def attempt(idx):
        progs = [programs[k] for k in idx]
        args = [p.args() for p in progs]    # fresh: a program may write its arguments
        try:
            res, modified = _invoke(progs, args, options)
        except Exception as e:
            if len(idx) == 1 or not bisect:
                tb = traceback.format_exc()[-2500:]
                for k in idx:
                    outcomes[k] = Outcome("error", _err_text(e), ref=outcomes[k].ref,
                                          extra={"traceback": tb})
                return
            h = len(idx) // 2
            attempt(idx[:h])
            attempt(idx[h:])
            if not any(outcomes[k].status == "error" or k in in_interaction for k in idx):
                _interaction(idx, e)
            return
        bad_inputs = {}
        for j, i in modified:           # written by the compiled code, not by NumPy
            if not outcomes[idx[j]].ref.written[i]:
                bad_inputs.setdefault(idx[j], []).append(i)
        for j, k in enumerate(idx):
            ref = outcomes[k].ref
            out = Outcome("ok", got=res[j], ref=ref)
            if k in bad_inputs:
                out = Outcome("mismatch", f"compiled code modified array argument(s) "
                              f"{bad_inputs[k]}, which NumPy leaves alone", got=res[j], ref=ref)
            else:
                try:
                    compare(res[j], ref, args[j])
                except Exception as e:         # AssertionError, or a comparator crash
                    msg = str(e) if isinstance(e, AssertionError) else f"comparator: {_err_text(e)}"
                    leaf = None
                    if msg.startswith("result["):
                        try:
                            leaf = int(msg[7:msg.index("]")])
                        except ValueError:
                            pass
                    out = Outcome("mismatch", msg, got=res[j], ref=ref, leaf=leaf)
            outcomes[k] = out

    in_interaction = set()

    def _interaction(idx, err):
        """The batch ``idx`` fails but each half passes: find a small failing subset
        (greedy removal of chunks) and record it as one merged program."""
        cur = list(idx)
        size = len(cur) // 2
        while size >= 1:
            j = 0
            while j < len(cur) and len(cur) > 1:
                trial = cur[:j] + cur[j + size:]
                try:
                    _invoke([programs[k] for k in trial],
                            [programs[k].args() for k in trial], options)
                    j += size
                except Exception:
                    cur = trial
            size //= 2
        in_interaction.update(idx)
        merged = merge([programs[k] for k in cur],
                       label=" + ".join(programs[k].label for k in cur))
        INTERACTIONS.append((merged, Outcome("error", _err_text(err),
                                             extra={"members": [programs[k].label for k in cur]})))

    if live:
        attempt(live)
    return outcomes


def run_expecting(p: Program, options=None) -> Outcome:
    """A program NumPy answers with an exception (``p.meta['expect']``, e.g. IndexError of
    an out-of-range index): the compiled call must raise that type too."""
    from .oracle import expected_exception
    try:
        want = expected_exception(p.source(), "f", p.args())
    except Exception as e:
        return Outcome("invalid", f"NumPy's run: {_err_text(e)}")
    if want is None or type(want).__name__ != p.meta["expect"]:
        return Outcome("invalid", f"NumPy raised {want!r}, not {p.meta['expect']}")
    fn = exec_function(p.source(), "f", f"<fuzz {p.label}>")
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cppcodegen.compile(fn, options=options, dynamic=DYNAMIC)(*p.args())
    except type(want) as e:
        return Outcome("ok", _err_text(e))
    except Exception as e:
        return Outcome("error", f"{_err_text(e)} (NumPy raises {_err_text(want)})",
                       extra={"traceback": traceback.format_exc()[-2500:]})
    finally:
        STATS.builds += 1
    return Outcome("mismatch", f"NumPy raises {_err_text(want)}; the compiled call returned")


def run_one(program: Program, options=None) -> Outcome:
    return run_programs([program], options)[0]
