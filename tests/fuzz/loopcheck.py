"""Check random loop programs (tests/fuzz/loops.py) against plain Python, and the CLI.

``python -m tests.fuzz --loops --count N --seed S`` (or ``python -m tests.fuzz.loopcheck``);
``--family dataslice`` draws the programs of tests/fuzz/dataslices.py instead (slices whose
bounds come from array values); ``FAMILIES`` maps a family to its module (``generate``,
``twin``, ``KNOWN_LIMITS``).

Each program is written to a real module file (the capture re-reads a function's source)
and imported. The oracle is the same function run as plain Python/NumPy on copies of the
arguments:

* Python returns: the compiled call must return a tuple of the same length whose leaves
  have Python's shape and dtype (``np.asarray`` of each: a Python int is int64, a float
  float64), ints and bools exactly, floats within the fuzzer's measured tolerances
  (tests/fuzz/oracle.py: the module is re-run with every transcendental result and float
  reduction perturbed by its allowed error; elements that move discontinuously, e.g. a
  branch on ``x.sum() > 0`` that flips, are not compared), NaN where Python has NaN; every
  array argument must end as Python leaves it;
* Python raises: the compiled call must raise an exception of the same class (never return
  a value).

A returned scalar whose Python type depends on the path taken (``s = 0`` then ``s += x[i]``
with float32 ``x``: Python's 0 when the loop never runs, an ``np.float32`` otherwise;
``s -= M[i, 0] if c else 1.5`` with float64 ``M`` and a float32 ``s``) is unified to one dtype
by the compiler, as the README says; for the scalars the generator marks as such
(``LoopProgram.mixed``) a dtype-only difference with equal values is counted as
``known-type``, not as a failure.

Every program also gets a metamorphic twin (a loop unrolled over a tuple of its values, or
rewritten as a ``while``); the twin must pass the same check and agree with the compiled
original. Each program runs in a forked child (a crash or a hang of compiled code is a
``crash``/``timeout`` of that program); ``--jobs`` children run at once. A failure is shrunk
(greedy deletion of statements, smaller arrays, simpler values) and printed with its seed,
index, source, arguments and a ready-to-paste xfail regression test.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import math
import os
import pickle
import re
import select
import signal
import sys
import tempfile
import textwrap
import time
import traceback
import types
import warnings

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    __package__ = "tests.fuzz"

from . import dataslices, loops  # noqa: E402
from .oracle import (K_RUNS, SAFETY, Perturber, _arrays, _copy, _leaves, _run,  # noqa: E402
                     compare_leaf, perturbed_source)

# program families: modules with generate(seed, index, avoid), twin(p, seed, index, avoid)
# (None: no twin) and KNOWN_LIMITS (constructs left out unless --known)
FAMILIES = {"loops": loops, "dataslice": dataslices}

OK = ("ok", "ok-raise", "known-type")
FAIL = ("mismatch", "error", "no-raise", "raise-mismatch", "crash", "timeout", "twin-invalid")

# ----------------------------------------------------------------------------- modules
_DIR = None
_N = [0]


def _module_dir():
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="ccg_loopfuzz_")
    return _DIR


def load_module(src, tag="m"):
    """``src`` written to a fresh module file and imported (the capture needs real source)."""
    _N[0] += 1
    name = f"ccg_loopfuzz_{re.sub(r'[^0-9A-Za-z_]', '_', tag)}_{os.getpid()}_{_N[0]}"
    path = os.path.join(_module_dir(), name + ".py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


# ----------------------------------------------------------------------------- oracle
class LoopReference:
    """Python's result of ``fn`` (or its exception) with per-element tolerances."""

    def __init__(self, module_src, fn, name, args, seed=0):
        self.exc = None
        try:
            expected, after = _run(fn, args)
        except Exception as e:           # the oracle raises: compiled must raise the same
            self.exc = e
            return
        self.expected = expected
        self.py_leaves = _leaves(expected)
        self.n_results = len(self.py_leaves)
        self.leaves = [np.asarray(x) for x in self.py_leaves] + after
        self.written = [not _same(a, b) for a, b in zip(_arrays(args), after)]
        psrc = perturbed_source(module_src)
        self.fragile = False
        runs = []
        for k in range(K_RUNS + 5):
            sign = (1, -1, 0, "value", "-value")[k - K_RUNS] if k >= K_RUNS else 0
            snap = "all" if k == K_RUNS + 2 else (k % 2 == 1 and not sign)
            pert = Perturber([seed, k], snap=snap, sign=sign)
            ns = {"__name__": "ccg_loopfuzz_perturbed", "_tr": pert.tr, "_red": pert.red,
                  "_mm": pert.mm, "_scan": pert.scan, "_cmul": pert.cmul}
            try:
                exec(compile(psrc, "<loopfuzz perturbed>", "exec"), ns)
                out, after = _run(ns[name], args)
                leaves = [np.asarray(x) for x in _leaves(out)] + after
            except Exception:             # a legitimate rounding difference changes the path
                self.fragile = True
                continue
            if len(leaves) != len(self.leaves):
                self.fragile = True
                continue
            runs.append(leaves)
        self.bounds, self.unstable = [], []
        for i, e in enumerate(self.leaves):
            unstable = np.full(e.shape, self.fragile)
            dev = np.zeros(e.shape, np.float64)
            for r in runs:
                p = r[i]
                if p.shape != e.shape or p.dtype != e.dtype:
                    unstable[...] = True
                    continue
                if e.dtype.kind == "f":
                    with np.errstate(all="ignore"):
                        en, pn = np.isnan(e), np.isnan(p)
                        unstable |= en != pn
                        inf = (np.isinf(e) | np.isinf(p)) & ~en & ~pn
                        unstable |= inf & (e != p)
                        d = np.abs(p.astype(np.float64) - e.astype(np.float64))
                        dev = np.maximum(dev, np.where(np.isfinite(d), d, 0.0))
                else:
                    unstable |= p != e
            self.bounds.append(SAFETY * dev if e.dtype.kind == "f" else None)
            self.unstable.append(unstable)


def compile_and_run(fn, args, options=None, compiled=None):
    """(result, arguments after the call, exception) of the compiled ``fn`` (``compiled``:
    a ``cppcodegen.compile`` of it to call again, e.g. with other sizes)."""
    import cppcodegen
    copies = _copy(args)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            f = compiled if compiled is not None else cppcodegen.compile(fn, options=options)
            return f(*copies), copies, None
        except Exception as e:
            return None, copies, e


def _args_source(args):
    return "[" + ", ".join(a.source() for a in args) + "]"


def _exc_text(e):
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {first[:400]}"


def judge(ref, got, exc, args_after, mixed=()):
    """(status, message) of a compiled call against the reference. ``mixed``: indices of
    result leaves whose Python type may depend on the path (known-type when only the dtype
    differs and the values are equal)."""
    if ref.exc is not None:
        if exc is None:
            return "no-raise", (f"Python raises {_exc_text(ref.exc)}; the compiled call returned "
                                f"{_short(got)}")
        if isinstance(exc, type(ref.exc)):
            return "ok-raise", ""
        return "raise-mismatch", f"Python raises {_exc_text(ref.exc)}; compiled raises {_exc_text(exc)}"
    if exc is not None:
        return "error", _exc_text(exc)
    gl = _leaves(got)
    if not isinstance(got, tuple) or len(gl) != ref.n_results:
        return "mismatch", f"result {_short(got)}: expected a tuple of {ref.n_results} leaves"
    known = False
    for i, g in enumerate(gl):
        try:
            compare_leaf(np.asarray(g), ref.leaves[i], ref.bounds[i], ref.unstable[i], f"result[{i}]")
        except AssertionError as err:
            pv = ref.py_leaves[i]
            if (i in mixed and "dtype" in str(err) and np.ndim(pv) == 0
                    and np.asarray(g).shape == () and _value_equal(g, pv)):
                known = True
                continue
            return "mismatch", f"{err} (Python {pv!r}, compiled {g!r})"
    for j, g in enumerate(_arrays(args_after)):
        i = ref.n_results + j
        try:
            compare_leaf(g, ref.leaves[i], ref.bounds[i], ref.unstable[i],
                         f"array argument {j} after the call")
        except AssertionError as err:
            return "mismatch", str(err)
    return ("known-type" if known else "ok"), ""


def _value_equal(g, pv):
    """Equal values; a float32 Python value (the path that stayed float32) against the
    compiled float64 (the unified dtype: the same sums in double) within float32's
    rounding of a few steps."""
    try:
        a, b = float(np.asarray(g)), float(pv)
    except (TypeError, ValueError, OverflowError):
        return False
    if a == b or (math.isnan(a) and math.isnan(b)):
        return True
    narrow = getattr(pv, "dtype", None) == np.float32 and np.asarray(g).dtype == np.float64
    return narrow and math.isfinite(a) and abs(a - b) <= 1e-5 * max(abs(a), abs(b), 1.0)


def _short(v, n=300):
    s = repr(v)
    return s if len(s) <= n else s[:n] + "..."


def pair_message(ref, got1, got2, mixed=()):
    """None when the compiled original and the compiled twin agree (within both bounds; a
    ``mixed`` scalar may come back with another dtype and the same value)."""
    l1, l2 = _leaves(got1), _leaves(got2)
    if len(l1) != len(l2):
        return f"{len(l1)} vs {len(l2)} outputs"
    for i, (a, b) in enumerate(zip(l1, l2)):
        try:
            compare_leaf(np.asarray(b), np.asarray(a), ref.bounds[i], ref.unstable[i],
                         f"twin[{i}] vs original", bound2=ref.bounds[i])
        except AssertionError as e:
            if (i in mixed and "dtype" in str(e) and np.ndim(a) == 0 and np.ndim(b) == 0
                    and _value_equal(b, a)):
                continue
            return str(e)
    return None


# ----------------------------------------------------------------------------- one program
def check(p, tw=None, options=None):
    """Everything about program ``p`` (and its twin): a list of findings
    [{"kind": program|twin|pair, "status", "message"}] and the statuses."""
    names = [("f_twin", tw)] if tw is not None else []
    src = p.module_source(("f",), names)
    mod = load_module(src, p.label)
    args = p.make_args()
    ref = LoopReference(src, mod.f, "f", args)
    mixed = {i for i, n in enumerate(p.ret) if n in p.mixed}
    t0 = time.perf_counter()
    import cppcodegen
    try:
        compiled = cppcodegen.compile(mod.f, options=options)
    except Exception:           # (bad options: compile_and_run reports it)
        compiled = None
    got, after, exc = compile_and_run(mod.f, p.make_args(), options, compiled)
    res = {"status": None, "twin_status": None, "findings": [], "python_raises": ref.exc is not None,
           "seconds": 0.0}
    st, msg = judge(ref, got, exc, after, mixed)
    res["status"] = st
    if st not in OK:
        res["findings"].append({"kind": "program", "status": st, "message": msg,
                                "traceback": _tb(exc)})
    # further calls of the same compiled function with other arguments (``p.calls``: lists
    # of Arg; other sizes reach a new build, then one with symbolic sizes): each judged alone
    for k, call in enumerate(getattr(p, "calls", ()) if exc is None else ()):
        cargs = [a.make() for a in call]
        cref = LoopReference(src, mod.f, "f", cargs)
        cgot, cafter, cexc = compile_and_run(mod.f, [a.make() for a in call], options, compiled)
        cst, cmsg = judge(cref, cgot, cexc, cafter, mixed)
        if cst not in OK:
            res["status"] = cst if res["status"] in OK else res["status"]
            res["findings"].append({"kind": "program", "status": cst,
                                    "message": f"{cmsg} (call {k + 2} of the compiled function, "
                                               f"args = {_args_source(call)})",
                                    "traceback": _tb(cexc)})
    if tw is not None:
        # the twin is the same Python function: the oracle must not see a difference
        tref = LoopReference(src, mod.f_twin, "f_twin", args) if ref.exc is None else None
        if tref is not None and (tref.exc is not None or len(tref.leaves) != len(ref.leaves) or not all(
                _same(a, b) for a, b in zip(tref.leaves, ref.leaves))):
            res["twin_status"] = "twin-invalid"
            res["findings"].append({"kind": "twin", "status": "twin-invalid",
                                    "message": "the twin differs from the program under Python "
                                               "(a generator bug)"})
        else:
            tgot, tafter, texc = compile_and_run(mod.f_twin, p.make_args(), options)
            tst, tmsg = judge(ref, tgot, texc, tafter, mixed)
            res["twin_status"] = tst
            if tst not in OK:
                res["findings"].append({"kind": "twin", "status": tst, "message": tmsg,
                                        "traceback": _tb(texc)})
            elif st in ("ok", "known-type") and tst in ("ok", "known-type"):
                m = pair_message(ref, got, tgot, mixed)
                if m:
                    res["findings"].append({"kind": "pair", "status": "mismatch",
                                            "message": "metamorphic pair disagrees: " + m})
    res["seconds"] = time.perf_counter() - t0
    return res


def _tb(e):
    if e is None:
        return ""
    return "".join(traceback.format_exception(type(e), e, e.__traceback__))[-3000:]


def signature(status, message):
    if status in ("error", "raise-mismatch"):
        return status + ":" + message.split(":")[0] + ":" + _norm(message)[:60]
    return status


def _norm(m):
    return re.sub(r"\d+|/\S+", "#", m.split(":", 1)[1] if ":" in m else m)


# ----------------------------------------------------------------------------- children
def _child(fn, payload, timeout):
    """Start ``fn(*payload)`` in a forked child; returns (pid, read fd, deadline)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # child
        os.close(r)
        try:
            try:
                data = pickle.dumps(("ok", fn(*payload)))
            except BaseException:
                data = pickle.dumps(("exc", traceback.format_exc()[-4000:]))
            with os.fdopen(w, "wb") as f:
                f.write(data)
        finally:
            os._exit(0)
    os.close(w)
    return pid, r, time.time() + timeout


def slice_problems(gen, seed, count, known=(), twin=True, family=None):
    """The failures of programs 0..count-1 of generator module ``gen`` (``loops``,
    ``dataslices``; its KNOWN_LIMITS avoided), checked in this process (a test's CI slice),
    each with its source to paste; and how many had a twin."""
    avoid = set(gen.KNOWN_LIMITS)
    idx = [i for i in range(count) if i not in known]
    extra = (family,) if family else ()
    results = run_in_process([(i, _check_task, (seed, i, twin, avoid, None) + extra)
                              for i in idx])
    problems, n_twins = [], 0
    for i in idx:
        res = _as_result(results[i])
        n_twins += res.get("twin_status") is not None
        for f in res["findings"]:
            p = gen.generate(seed, i, avoid)
            calls = p.calls_source() if hasattr(p, "calls_source") else ""
            problems.append(f"seed {seed} #{i} ({f['kind']}): {f['status']}: "
                            f"{f['message'][:1500]}\n{p.source()}args = {p.args_source()}{calls}")
    return problems, n_twins


def run_in_process(tasks):
    """``run_parallel``'s results, each task run here, in order: for callers that have run
    compiled code already (a test process). A child forked from a process whose OpenMP
    threads exist can wait forever in its first parallel region (libgomp is not fork-safe):
    a prange program hung the CI slice that way."""
    results = {}
    for key, fn, payload in tasks:
        try:
            results[key] = ("ok", fn(*payload))
        except Exception:                   # noqa: BLE001 -- reported as the child's would be
            results[key] = ("exc", traceback.format_exc()[-4000:])
    return results


def run_parallel(tasks, jobs=2, timeout=300.0, on_done=None):
    """Run ``tasks`` ([(key, fn, payload)]) in forked children, ``jobs`` at a time; returns
    {key: ("ok", value) | ("exc", text) | ("crash", text) | ("timeout", text)}."""
    results = {}
    todo = list(tasks)
    live = {}                                       # fd -> [key, pid, deadline, chunks]
    while todo or live:
        while todo and len(live) < max(1, jobs):
            key, fn, payload = todo.pop(0)
            pid, fd, dl = _child(fn, payload, timeout)
            live[fd] = [key, pid, dl, []]
        now = time.time()
        wait = max(0.05, min(v[2] for v in live.values()) - now)
        ready, _, _ = select.select(list(live), [], [], min(wait, 5.0))
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                live[fd][3].append(chunk)
                continue
            key, pid, _, chunks = live.pop(fd)
            os.close(fd)
            _, status = os.waitpid(pid, 0)
            data = b"".join(chunks)
            if data:
                try:
                    results[key] = pickle.loads(data)
                except Exception as e:
                    results[key] = ("crash", f"unreadable result: {e}")
            else:
                sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
                results[key] = ("crash", f"child died (signal {sig}, status {status})")
            if on_done:
                on_done(key, results[key])
        now = time.time()
        for fd, (key, pid, dl, _) in list(live.items()):
            if now > dl:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os.close(fd)
                del live[fd]
                results[key] = ("timeout", f"no result after {timeout:.0f} s")
                if on_done:
                    on_done(key, results[key])
    return results


def _check_task(seed, index, with_twin, avoid, options, family="loops"):
    fam = FAMILIES[family]
    p = fam.generate(seed, index, avoid)
    tw = fam.twin(p, seed, index, avoid) if with_twin else None
    return check(p, tw, options)


def _check_prog_task(p, tw, options):
    return check(p, tw, options)


def _as_result(r):
    """A child's (kind, value) as a check() result."""
    kind, val = r
    if kind == "ok":
        return val
    st = "crash" if kind in ("crash", "exc") else "timeout"
    return {"status": st, "twin_status": None, "python_raises": False, "seconds": 0.0,
            "findings": [{"kind": "program", "status": st, "message": val}]}


# ----------------------------------------------------------------------------- shrinking
def _nodes_with_parent(body):
    res = []

    def visit(lst):
        for pos, n in enumerate(lst):
            res.append((lst, pos))
            for b in loops._children(n):
                visit(b)
    visit(body)
    return res


def candidates(p):
    """Simpler variants of ``p``, most reductive first."""
    out = []
    n_nodes = len(_nodes_with_parent(p.body))
    for idx in range(n_nodes):                       # delete one statement
        q = p.copy()
        lst, pos = _nodes_with_parent(q.body)[idx]
        del lst[pos]
        out.append(q)
    for idx in range(n_nodes):                       # an if by one of its branches
        lst, pos = _nodes_with_parent(p.body)[idx]
        n = lst[pos]
        if n.kind != "if":
            continue
        for b in [b for _, b in n.branches] + ([n.orelse] if n.orelse else []):
            q = p.copy()
            qlst, qpos = _nodes_with_parent(q.body)[idx]
            qlst[qpos:qpos + 1] = [x for x in loops.copy.deepcopy(b)]
            out.append(q)
        if len(n.branches) > 1 or n.orelse:          # fewer branches
            q = p.copy()
            qn = _nodes_with_parent(q.body)[idx]
            qn = qn[0][qn[1]]
            if qn.orelse:
                qn.orelse = None
            else:
                qn.branches = qn.branches[:-1]
            out.append(q)
    if len(p.ret) > 1:                               # fewer results
        for k in range(len(p.ret)):
            q = p.copy()
            del q.ret[k]
            out.append(q)
    src = p.function_source()
    for k, a in enumerate(p.args):                   # unused arguments
        if not re.search(rf"\b{a.name}\b", src.split(":", 1)[1]):
            q = p.copy()
            del q.args[k]
            for call in getattr(q, "calls", ()):     # (further calls: the same arguments)
                del call[k]
            out.append(q)
    out += _arg_variants(p)
    return out


def _arg_variants(p):
    out = []
    arrays = [a for a in p.args if a.kind == "array"]
    # shorter 1-D arrays (x and w together: loops read both at one index)
    vec = [a for a in arrays if len(a.spec.shape) == 1]
    if vec:
        n = vec[0].spec.shape[0]
        for m in sorted({1, 2, 3, n // 2, n - 1}):
            if 0 < m < n:
                q = p.copy()
                for a in q.args:
                    if a.kind == "array" and len(a.spec.shape) == 1 and a.spec.shape[0] == n:
                        v = a.spec.values()[:m]
                        a.spec.shape, a.spec.data = (m,), v
                    if a.kind in ("int64", "int") and a.value > m:
                        a.value = m
                out.append(q)
    for j, a in enumerate(p.args):
        if a.kind == "array":
            sp = a.spec
            if sp.neg or sp.perm is not None:
                q = p.copy()
                q.args[j].spec.neg, q.args[j].spec.perm = (), None
                out.append(q)
            if len(sp.shape) == 2:
                for ax in (0, 1):
                    d = sp.shape[ax]
                    for m in sorted({1, 2, d // 2}):
                        if 0 < m < d:
                            q = p.copy()
                            s2 = q.args[j].spec
                            v = np.take(s2.values(), np.arange(m), axis=ax)
                            s2.shape, s2.data = v.shape, v
                            out.append(q)
            vals = sp.values()
            if 0 < vals.size <= 256:
                simpler = [np.zeros_like(vals), np.ones_like(vals)]
                if vals.dtype.kind == "f":
                    with np.errstate(all="ignore"):
                        simpler.append(np.where(np.isfinite(vals), np.round(vals), vals).astype(vals.dtype))
                if vals.dtype.kind in "fi":
                    simpler.append((np.arange(vals.size) % 5 - 2).reshape(vals.shape).astype(vals.dtype))
                for v in simpler:
                    if not np.array_equal(v, vals, equal_nan=True):
                        q = p.copy()
                        q.args[j].spec.data = v
                        out.append(q)
        elif a.kind in ("int64", "int") and a.value not in (0, 1):
            for v in (0, 1, a.value // 2):
                q = p.copy()
                q.args[j].value = v
                out.append(q)
        elif a.kind == "float" and a.value != 0.0:
            q = p.copy()
            q.args[j].value = 0.0
            out.append(q)
    return out


def _finding_sig(res, kind):
    for f in res.get("findings", []):
        if f["kind"] == kind:
            return signature(f["status"], f["message"])
    return None


def shrink(p, sig, kind="program", jobs=2, budget=120, timeout=300.0, log=None):
    """A smaller program with the same failure signature (``kind``: program; a twin is
    shrunk as a program of its own)."""
    cur = p
    seen = {cur.source() + cur.args_source()}
    tried = 0
    while tried < budget:
        cands = []
        for c in candidates(cur):
            key = c.source() + c.args_source()
            if key not in seen:
                seen.add(key)
                cands.append(c)
        cands.sort(key=lambda c: c.size())
        moved = False
        for k in range(0, len(cands), max(1, jobs)):
            chunk = cands[k:k + max(1, jobs)]
            tried += len(chunk)
            res = run_parallel([(i, _check_prog_task, (c, None, None)) for i, c in enumerate(chunk)],
                               jobs=jobs, timeout=timeout)
            for i, c in enumerate(chunk):
                r = _as_result(res[i])
                if _finding_sig(r, "program") == sig:
                    cur, moved = c, True
                    break
            if moved or tried >= budget:
                break
        if log:
            log(f"  shrink: {cur.size()} after {tried} tries")
        if not moved:
            break
    return finalize(cur)


def finalize(p):
    q = p.copy()
    for a in q.args:
        if a.kind == "array" and a.spec.data is None and int(np.prod(a.spec.shape)) <= 64:
            a.spec.data = a.spec.values()
    q.mixed = {n for n in q.mixed if n in q.ret}
    return q


# ----------------------------------------------------------------------------- reports
def regression_test(p, finding, tag, reason="TODO: diagnose"):
    """A pytest function for tests/test_fuzz_loops_regressions.py (module-level functions:
    the capture needs their source)."""
    ren = {"f": f"f_{tag}"}
    ren.update({h: f"{h}_{tag}" for h in p.used_helpers()})
    first = (finding.get("message") or "").strip().splitlines()
    first = first[0][:150] if first else ""
    body = p.helpers_source(ren) + p.function_source(f"f_{tag}", ren)
    mixed = sorted(i for i, n in enumerate(p.ret) if n in p.mixed)
    lines = [f"# found by the loop fuzzer ({p.label}); {finding['kind']} {finding['status']}: {first}",
             body.rstrip("\n"), "", "",
             f"@pytest.mark.xfail(strict=True, reason={reason!r})",
             f"def test_loops_{tag}():",
             f"    args = {p.args_source()}",
             f"    check_loop_function(f_{tag}, args{', mixed=' + repr(tuple(mixed)) if mixed else ''})",
             ""]
    return "\n".join(lines)


def function_module_source(fn):
    """The source of ``fn`` and of the module-level functions it calls (transitively)."""
    seen, order, todo = set(), [], [fn]
    while todo:
        g = todo.pop(0)
        if g.__name__ in seen:
            continue
        seen.add(g.__name__)
        order.append(g)
        for name in g.__code__.co_names:
            h = g.__globals__.get(name)
            if isinstance(h, types.FunctionType) and h.__module__ == fn.__module__:
                todo.append(h)
    parts = ["import math\nimport numpy as np\n\n"]
    for g in reversed(order):
        parts.append(textwrap.dedent(inspect.getsource(g)) + "\n\n")
    if any(re.search(r"\bprange\(", x) for x in parts):
        parts.insert(1, "from cppcodegen import prange\n\n")
    return "".join(parts)


def check_loop_function(fn, args, mixed=(), options=None):
    """For regression tests: plain ``fn`` vs compiled ``fn`` (the fuzzer's oracle); raises
    AssertionError unless they agree."""
    src = function_module_source(fn)
    ref = LoopReference(src, fn, fn.__name__, args)
    got, after, exc = compile_and_run(fn, args, options)
    st, msg = judge(ref, got, exc, after, set(mixed))
    if st not in OK:
        raise AssertionError(f"{st}: {msg}\n{_tb(exc)}")


# ----------------------------------------------------------------------------- CLI
def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz --loops",
                                 description="fuzz cppcodegen's loops and branches against plain Python")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2, help="programs checked at once (forked children)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per program")
    ap.add_argument("--no-twin", action="store_true")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--shrink-budget", type=int, default=120, help="candidate programs per failure")
    ap.add_argument("--family", choices=sorted(FAMILIES), default="loops",
                    help="the programs drawn: loops (loops.py) or dataslice (dataslices.py: "
                    "slices with bounds from array values)")
    ap.add_argument("--known", action="store_true",
                    help="also draw constructs of known limitations (loops: "
                    f"{sorted(loops.KNOWN_LIMITS)}, dataslice: {sorted(dataslices.KNOWN_LIMITS)})")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--show", action="store_true", help="print every program's source")
    ap.add_argument("--log", help="append JSON lines (one per program, failures) to this file")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    fam = FAMILIES[a.family]
    avoid = set() if a.known else set(fam.KNOWN_LIMITS)
    options = dict(o.split("=", 1) for o in a.option) or None
    log = open(a.log, "a") if a.log else None
    t0 = time.time()
    idx = list(range(a.start, a.start + a.count))
    counts, twin_counts, feats = {}, {}, {}
    failures = []

    def done(i, r):
        res = _as_result(r)
        counts[res["status"]] = counts.get(res["status"], 0) + 1
        if res.get("twin_status"):
            twin_counts[res["twin_status"]] = twin_counts.get(res["twin_status"], 0) + 1
        p = fam.generate(a.seed, i, avoid)
        for f in p.features:
            feats[f] = feats.get(f, 0) + 1
        if a.show:
            print(f"# {p.label}: {res['status']} / twin {res.get('twin_status')}\n{p.source()}", flush=True)
        for fnd in res["findings"]:
            failures.append((i, fnd))
            if not a.quiet:
                print(f"--- FAIL seed {a.seed} #{i} ({fnd['kind']}, {fnd['status']}): "
                      f"{fnd['message'][:500]}", flush=True)
        if log:
            log.write(json.dumps({"event": "program", "seed": a.seed, "index": i,
                                  "status": res["status"], "twin": res.get("twin_status"),
                                  "features": sorted(p.features), "seconds": round(res["seconds"], 2),
                                  "findings": res["findings"]}) + "\n")
            log.flush()
        n = sum(counts.values())
        if not a.quiet and n % 10 == 0:
            print(f"[{n}/{a.count} programs, {len(failures)} failures, {time.time() - t0:.0f}s]", flush=True)

    run_parallel([(i, _check_task, (a.seed, i, not a.no_twin, avoid, options, a.family)) for i in idx],
                 jobs=a.jobs, timeout=a.timeout, on_done=done)
    # report (and shrink) each failure; one shrink per signature
    shrunk_sigs = {}
    for i, fnd in sorted(failures, key=lambda x: x[0]):
        p = fam.generate(a.seed, i, avoid)
        tw = fam.twin(p, a.seed, i, avoid)
        sig = signature(fnd["status"], fnd["message"])
        prog = tw if fnd["kind"] == "twin" else p
        print(f"\n=== seed {a.seed} #{i}: {fnd['kind']} {fnd['status']} [{sig}]\n{fnd['message'][:2000]}")
        calls = p.calls_source() if hasattr(p, "calls_source") else ""
        print(f"--- program ({p.label}):\n{p.source()}args = {p.args_source()}{calls}")
        if fnd["kind"] != "program" and tw is not None:
            print(f"--- twin:\n{tw.function_source('f_twin')}")
        rec = {"event": "failure", "seed": a.seed, "index": i, "kind": fnd["kind"],
               "status": fnd["status"], "signature": sig, "message": fnd["message"][:3000],
               "source": p.source(), "args": p.args_source(),
               "twin": tw.function_source("f_twin") if tw is not None else None}
        if not a.no_shrink and fnd["kind"] != "pair" and fnd["status"] not in ("timeout",) \
                and (fnd["kind"], sig) not in shrunk_sigs:
            small = shrink(prog, sig, jobs=a.jobs, budget=a.shrink_budget, timeout=a.timeout,
                           log=None if a.quiet else print)
            shrunk_sigs[(fnd["kind"], sig)] = i
            test = regression_test(small, fnd, f"s{a.seed}_{i}")
            rec["shrunk"], rec["shrunk_args"], rec["test"] = small.source(), small.args_source(), test
            print(f"--- shrunk:\n{test}")
        elif (fnd["kind"], sig) in shrunk_sigs:
            rec["duplicate_of"] = shrunk_sigs[(fnd["kind"], sig)]
            print(f"(same signature as #{rec['duplicate_of']})")
        if log:
            log.write(json.dumps(rec) + "\n")
            log.flush()
    el = time.time() - t0
    summary = {"event": "done", "seed": a.seed, "start": a.start, "programs": a.count,
               "status": counts, "twin_status": twin_counts, "failures": len(failures),
               "seconds": round(el, 1), "features": feats}
    if log:
        log.write(json.dumps(summary) + "\n")
    print(f"\nloop fuzz: {a.count} programs (seed {a.seed}, start {a.start}): "
          f"{json.dumps(counts, sort_keys=True)}; twins {json.dumps(twin_counts, sort_keys=True)}; "
          f"{len(failures)} failures, {el:.0f}s")
    if not a.quiet:
        print("features drawn: " + ", ".join(f"{k} {v}" for k, v in sorted(feats.items())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
