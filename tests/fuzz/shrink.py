"""Shrink a failing program to a minimal one that still fails the same way.

In: a ``Program`` and its failing ``Outcome``. Out: a smaller ``Program`` with the same
failure signature (``mismatch``, or ``error:<ExceptionType>``). Greedy: each round lists
candidate simplifications, most reductive first, keeps those NumPy still accepts
(``generator.valid``: no NumPy error, no float->int cast of NaN/inf, allowed dtypes), tests
them in compiled batches of CHUNK and moves to the first that still fails. Candidates:

* keep one output;
* cut the graph at a statement: its value becomes a new contiguous literal input, so
  everything upstream disappears (values downstream are unchanged);
* bypass a statement (its uses read one of its same-shape, same-dtype operands);
* inputs: plain layout (each of perm/neg/step/off/bcast dropped), smaller dims, then
  literal values, zeros, ones, small integers; runtime scalars -> 1.0.
"""
from __future__ import annotations

import numpy as np

from .generator import evaluate, valid
from .inputs import InputSpec
from .program import Program
from . import runner

CHUNK = 8
LITERAL_MAX = 64


def _with_outputs(p, outs):
    q = p.copy()
    q.outputs = list(outs)
    return q.dead_code_eliminated()


def _cut(p, i, env):
    s = p.stmts[i]
    v = np.array(env[s.target], copy=True)
    q = p.copy()
    name = f"x{len(p.inputs) + len(p.stmts) + 10 + i}"
    for t in q.stmts[i + 1:]:
        t.args = tuple(name if a == s.target else a for a in t.args)
    q.outputs = [name if o == s.target else o for o in q.outputs]
    del q.stmts[i]
    q.inputs.append((name, InputSpec(v.dtype.name, v.shape, data=v)))
    return q.dead_code_eliminated()


def _bypass(p, i, env):
    s = p.stmts[i]
    out = []
    v = np.asarray(env[s.target])
    for a in s.args:
        w = env.get(a)
        if isinstance(w, (np.ndarray, np.generic)) and np.shape(w) == v.shape \
                and np.asarray(w).dtype == v.dtype:
            q = p.copy()
            for t in q.stmts[i + 1:]:
                t.args = tuple(a if x == s.target else x for x in t.args)
            q.outputs = [a if o == s.target else o for o in q.outputs]
            del q.stmts[i]
            out.append(q.dead_code_eliminated())
    return out


def _input_variants(p):
    out = []
    for j, (name, spec) in enumerate(p.inputs):
        def repl(**kw):
            q = p.copy()
            s = q.inputs[j][1]
            for k, v in kw.items():
                setattr(s, k, v)
            return q
        if spec.bcast is not None:
            out.append(repl(bcast=None, shape=tuple(spec.bcast), data=None if spec.data is None
                            else np.ascontiguousarray(np.broadcast_to(spec.data, spec.bcast))))
        if spec.perm is not None:
            out.append(repl(perm=None))
        if spec.neg:
            out.append(repl(neg=()))
        if spec.step:
            out.append(repl(step={}))
        if spec.off:
            out.append(repl(off=False))
        # smaller dims
        if spec.bcast is None:
            for ax, d in enumerate(spec.shape):
                for nd in sorted({1, 2, d // 2, d - 1}):
                    if 0 < nd < d:          # (never to 0: empty arrays hide value bugs)
                        shape = spec.shape[:ax] + (nd,) + spec.shape[ax + 1:]
                        data = None if spec.data is None else np.take(
                            np.asarray(spec.data), np.arange(nd), axis=ax)
                        out.append(repl(shape=shape, data=data))
        vals = spec.values()
        if vals.size and vals.size <= 4096:
            kind = vals.dtype.kind
            simpler = [np.zeros_like(vals), np.ones_like(vals)]
            if kind == "f":
                with np.errstate(all="ignore"):
                    simpler.append(np.where(np.isfinite(vals), np.round(vals), vals).astype(vals.dtype))
                    simpler.append(np.round(vals * 4) / 4)
            if kind in "fi":
                simpler.append((np.arange(vals.size) % 7 - 3).reshape(vals.shape).astype(vals.dtype))
                simpler.append((np.arange(vals.size)).reshape(vals.shape).astype(vals.dtype))
            for v in simpler:
                if not np.array_equal(v, vals, equal_nan=True):
                    out.append(repl(data=v, domain="mixed", seed=0))
    for j, (name, val) in enumerate(p.scalars):
        if val != 1.0:
            q = p.copy()
            q.scalars[j] = (name, 1.0)
            out.append(q)
    return out


def candidates(p: Program, leaf=None):
    try:
        env = evaluate(p, partial=bool(p.meta.get("expect")))
    except Exception:
        return []
    out = []
    if len(p.outputs) > 1:
        if leaf is not None and leaf < len(p.outputs):
            out.append(_with_outputs(p, [p.outputs[leaf]]))
        out += [_with_outputs(p, [o]) for o in p.outputs]
    cuts = [_cut(p, i, env) for i in range(len(p.stmts)) if p.stmts[i].target in env]
    cuts.sort(key=lambda q: len(q.stmts))
    out += cuts
    for i in range(len(p.stmts)):
        if p.stmts[i].target in env:
            out += _bypass(p, i, env)
    out += _input_variants(p)
    return out


def _size(p):
    return (len(p.stmts), sum(int(np.prod(s.final_shape)) for _, s in p.inputs),
            len(p.inputs), len(p.scalars))


def shrink(prog: Program, outcome, budget=40, log=None) -> Program:
    sig = outcome.signature()
    cur = prog
    leaf = outcome.leaf
    seen = {cur.source() + cur.args_source()}
    for _round in range(budget):
        cands = []
        for c in candidates(cur, leaf):
            key = c.source() + c.args_source()
            if key in seen:
                continue
            seen.add(key)
            if valid(c):
                cands.append(c)
        leaf = None
        moved = False
        for k in range(0, len(cands), CHUNK):
            chunk = cands[k:k + CHUNK]
            outs = runner.run_programs(chunk)
            for c, o in zip(chunk, outs):
                if o.failed and o.signature() == sig:
                    cur, moved = c, True
                    break
            if moved:
                break
        if log:
            log(f"shrink round {_round}: {'-> ' + str(_size(cur)) if moved else 'done'}")
        if not moved:
            break
    return finalize(cur)


def finalize(p: Program) -> Program:
    """Renumber variables and inline small inputs as literals (values unchanged)."""
    q = p.renumbered()
    names = {}
    new_inputs = []
    for j, (name, spec) in enumerate(q.inputs):
        names[name] = f"x{j}"
        if spec.data is None and int(np.prod(spec.shape)) <= LITERAL_MAX:
            spec.data = spec.values()
        new_inputs.append((f"x{j}", spec))
    for s in q.stmts:
        s.args = tuple(names.get(a, a) for a in s.args)
    q.outputs = [names.get(o, o) for o in q.outputs]
    q.inputs = new_inputs
    return q
