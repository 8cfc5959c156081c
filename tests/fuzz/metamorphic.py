"""Metamorphic twins: a program rewritten into an equivalent one.

In: a ``Program``. Out: a twin ``Program`` (same inputs, same outputs' shapes and dtypes)
where 1-3 variables were routed through an identity: a double transpose (``.T.T``, a
permutation and its inverse, swapaxes twice), a reshape round trip (flat and back, or via
another factorization), ``[::-1]`` twice along an axis, an identity op (``x * 1``,
``x - 0`` (not ``x + 0``: -0.0 + 0 is +0.0), ``x / 1``, ``x | False``, ``~~x``), or
reassociated / distributed integer arithmetic (``(x + y) - y``, ``x*k -> x*(k-1) + x``,
``(x ^ y) ^ y``; exact in wrap-around arithmetic, operands of one dtype). Every statement's
dtype and shape must be unchanged, which ``evaluate`` checks under NumPy.

``check_pair`` then asks the two compiled results to agree: bit-equal for integers and
bools, floats within the sum of both programs' oracle tolerances (each compiled program
may legitimately sit that far from NumPy, on either side).
"""
from __future__ import annotations

import numpy as np

from .generator import evaluate
from .oracle import _leaves, compare_leaf
from .program import Stmt


def _identity_templates(v, r):
    kind = v.dtype.kind
    nd = v.ndim
    out = []
    if kind == "b":
        out += [["{0} | False"], ["np.logical_not(np.logical_not({0}))"], ["~{0}", "~{0}"],
                ["{0} & True"]]
    elif kind == "i":
        out += [["{0} * 1"], ["{0} + 0"], ["{0} | 0"], ["np.positive({0})"], ["~{0}", "~{0}"],
                ["{0} + 7", "{0} - 7"], ["{0} - 100", "{0} + 100"], ["{0} ^ 5", "{0} ^ 5"],
                ["np.negative({0})", "-{0}"]]
    elif kind == "c":           # (z * 1.0 is no identity: (x + inf j) * (1 + 0j) has a NaN)
        out += [["{0} - 0.0"], ["np.positive({0})"], ["-{0}", "np.negative({0})"],
                ["np.fmax({0}, {0})"], ["np.conj({0})", "np.conj({0})"]]
    else:
        out += [["{0} * 1.0"], ["{0} - 0.0"], ["{0} / 1"], ["np.positive({0})"],
                ["-{0}", "np.negative({0})"], ["np.fmax({0}, {0})"]]
    if nd >= 2:
        p = tuple(int(i) for i in r.permutation(nd))
        inv = tuple(int(i) for i in np.argsort(p))
        i, j = (int(x) for x in r.choice(nd, 2, replace=False))
        out += [["{0}.T", "{0}.T"], [f"np.transpose({{0}}, {p!r})", f"np.transpose({{0}}, {inv!r})"],
                [f"np.swapaxes({{0}}, {i}, {j})", f"{{0}}.swapaxes({i}, {j})"],
                [f"np.moveaxis({{0}}, {i}, {j})", f"np.moveaxis({{0}}, {j}, {i})"]] * 2
    if nd >= 1:
        ax = int(r.integers(0, nd))
        sl = ", ".join([":"] * ax + ["::-1"])
        out += [[f"{{0}}[{sl}]", f"{{0}}[{sl}]"]] * 2
        out += [["{0}.reshape(-1)", f"{{0}}.reshape({tuple(v.shape)!r})"]] * 2
        if v.size > 1:
            from .generator import _factorizations
            mid = _factorizations(v.size, int(r.integers(1, 4)), r)
            out += [[f"np.reshape({{0}}, {mid!r})", f"np.reshape({{0}}, {tuple(v.shape)!r})"]]
    out += [["np.expand_dims({0}, 0)", "np.squeeze({0}, axis=0)"], ["{0}[None]", "{0}[0]"]]
    return out


def _int_rewrites(env, name, r, avail):
    """Reassociated/distributed integer arithmetic: (x+y)-y, x*k -> x*(k-1)+x, (x^y)^y."""
    v = np.asarray(env[name])
    same = [n for n, w in env.items() if isinstance(w, (np.ndarray, np.generic)) and n in avail
            and np.asarray(w).dtype == v.dtype and n != name
            and _bcast_into(np.shape(w), v.shape)]
    y = str(r.choice(same)) if same else None
    k = int(r.choice([3, 5, -7, 1000003]))
    out = [[("({0} * %d) - {0} * %d" % (k, k - 1), ())]]      # x*k - x*(k-1) == x
    if y is not None:
        out += [[("({0} + {1}) - {1}", (y,))], [("{0} + ({1} - {1})", (y,))],
                [("({0} ^ {1}) ^ {1}", (y,))], [("({1} + {0}) - {1}", (y,))],
                [("{0} * 2 - ({0} + {1}) + {1}", (y,))]]
    return out


def _bcast_into(small, big):
    try:
        return np.broadcast_shapes(small, big) == tuple(big)
    except ValueError:
        return False


def _insert(prog, at, name, chain):
    """Route ``name`` through ``chain`` (list of (template, extra_args)) right after
    statement ``at`` (-1: before all); later uses of ``name`` read the result."""
    p = prog.copy()
    new_stmts, cur = [], name
    for n, (tpl, extra) in enumerate(chain):
        t = f"{name}_m{len(p.stmts)}_{n}"
        new_stmts.append(Stmt(t, tpl, (cur,) + tuple(extra)))
        cur = t
    for s in p.stmts[at + 1:]:
        s.args = tuple(cur if a == name else a for a in s.args)
    p.outputs = [cur if o == name else o for o in p.outputs]
    p.stmts[at + 1:at + 1] = new_stmts
    return p


def twin(prog, seed, index, n_rewrites=None):
    """An equivalent rewrite of ``prog`` (reproducible from seed/index)."""
    if prog.meta.get("expect"):     # raises under NumPy: nothing to compare
        return None
    r = np.random.default_rng([int(seed), int(index), 0x7717])
    env = evaluate(prog)
    ref_shapes = [(np.shape(env[o]), np.asarray(env[o]).dtype) for o in prog.outputs]
    n_rewrites = n_rewrites or int(r.integers(1, 4))
    cur = prog
    done = 0
    for _ in range(n_rewrites * 8):
        if done >= n_rewrites:
            break
        defs = [(-1, n) for n, _ in cur.inputs] + [(i, s.target) for i, s in enumerate(cur.stmts)]
        at, name = defs[int(r.integers(0, len(defs)))]
        cenv = evaluate(cur)
        v = np.asarray(cenv[name])
        if v.dtype.kind == "i" and r.random() < 0.4:
            avail = {n for n, _ in cur.inputs} | {s.target for s in cur.stmts[:at + 1]}
            opts = _int_rewrites(cenv, name, r, avail)
        else:
            opts = [[(t, ()) for t in c] for c in _identity_templates(v, r)]
        chain = opts[int(r.integers(0, len(opts)))]
        cand = _insert(cur, at, name, chain)
        try:
            cenv2 = evaluate(cand)
        except Exception:
            continue
        ok = all(np.shape(cenv2[o]) == s and np.asarray(cenv2[o]).dtype == d
                 for o, (s, d) in zip(cand.outputs, ref_shapes))
        ok = ok and all(np.shape(cenv2[s.target]) == np.shape(cenv[s.target]) and
                        np.asarray(cenv2[s.target]).dtype == np.asarray(cenv[s.target]).dtype
                        for s in cur.stmts)
        if ok:
            cur = cand
            done += 1
    cur = cur.copy()
    cur.label = prog.label + " (twin)"
    cur.meta = dict(prog.meta, twin=True)
    return cur


def check_pair(o1, o2):
    """None when the compiled results of a program and its twin agree, else a message."""
    l1, l2 = _leaves(o1.got), _leaves(o2.got)
    if len(l1) != len(l2):
        return f"metamorphic pair: {len(l1)} vs {len(l2)} outputs"
    for i, (a, b) in enumerate(zip(l1, l2)):
        r1, r2 = o1.ref, o2.ref
        unstable = r1.unstable[i] | r2.unstable[i]
        try:
            compare_leaf(b, np.asarray(a), r1.bounds[i], unstable, f"twin[{i}] vs original",
                         bound2=r2.bounds[i])
        except AssertionError as e:
            return f"metamorphic pair disagrees: {e}"
    return None
