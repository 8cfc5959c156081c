"""The output shapes of a NumPy call between kernels when the sizes are symbolic.

In: a NumPy function called on traced arrays of symbolic sizes (a dynamic trace), and the
output shapes it gave on this call's values. Out: each output axis as the input size it
follows (``np.gradient(x)``: ``(n0,)``; ``np.pad(x, 2)``: ``(n0 + 4,)``): the input size of
that length or the nearest one within a few elements, when a second run on stand-ins whose
sizes are all 3 larger gives the shapes this predicts (an axis that stays as it is there is
a constant: ``bins=10``; large sizes are probed at about half, to keep it cheap); otherwise
None, and the caller pins the sizes to this call's (a build per size, as before). The
runtime checks every call's output shape anyway (``runtime.extern.ShapeChanged``: NumPy runs the function instead), so a
wrong guess costs speed, never a wrong result.
"""
from __future__ import annotations

import warnings

import numpy as np

from .sizes import current_env

PROBE = 3           # the stand-ins' sizes: every size symbol this much larger (from SMALL
SMALL = 32          # on, half as large and this much more: a cheap run)
OFFSET = 16         # how far an output axis may be from the input size it follows


def symbolic_shapes(func, targs, tkwargs, proxies, shapes):
    """``shapes`` (this call's, ints) with axes that follow an input size as that size's
    expression (the others constant); None when the probe disagrees."""
    env = current_env()
    if env is None:
        return None
    sizes = {d for p in proxies for d in p.node.shape if not isinstance(d, int)}
    if not sizes:
        return None
    hints = {d: env.hint(d) for d in sizes}
    guess = [tuple(_follows(v, hints) for v in s) for s in shapes]
    probe = {sym: v + PROBE if v < SMALL else v // 2 + PROBE for sym, v in env.hints.items()}
    try:
        got = _run(func, targs, tkwargs, proxies, probe)
    except Exception:       # noqa: BLE001 -- stand-ins that break a precondition: pinned
        return None
    out = []
    for s, g, now in zip(guess, got, shapes):
        if len(g) != len(s):
            return None
        dims = []
        for d, seen, v in zip(s, g, now):
            if not isinstance(d, int) and int(d.xreplace(probe)) == seen:
                dims.append(d)          # follows the size
            elif seen == v:
                dims.append(v)          # the same whatever the sizes (bins=10)
            else:
                return None
        out.append(tuple(dims))
    return out


def _follows(v: int, hints: dict):
    """The input size ``v`` is likely to follow: one of that length, else the nearest one
    within a few elements (np.pad's ``n + 4``, np.diff's ``n - 1``), unless two are as near;
    else ``v`` itself."""
    near = sorted((abs(v - h), str(d), d) for d, h in hints.items() if abs(v - h) <= OFFSET)
    if not near or len(near) > 1 and near[1][0] == near[0][0]:
        return v
    d = near[0][2]
    return d + (v - hints[d])


def _run(func, targs, tkwargs, proxies, sizes) -> list:
    shapes = [tuple(d if isinstance(d, int) else int(d.xreplace(sizes)) for d in p.node.shape)
              for p in proxies]
    result = stand_in_call(func, targs, tkwargs, proxies, shapes)
    results = result if isinstance(result, (tuple, list)) else (result,)
    return [np.shape(r) for r in results]


def stand_in_call(func, targs, tkwargs, proxies, shapes):
    """``func`` run on stand-ins of the traced arrays with ``shapes`` (zeros, then random
    values in [1, 5)); the last error when neither runs."""
    from ..runtime.extern import fill
    rng = np.random.default_rng(0)
    error = None
    for make in (lambda p, s: np.zeros(s, p.dtype),
                 lambda p, s: (rng.random(s) * 4 + 1).astype(p.dtype)):
        arrays = [make(p, s) for p, s in zip(proxies, shapes)]
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return func(*fill(targs, arrays), **fill(tkwargs, arrays))
        except Exception as e:          # noqa: BLE001 -- raised below
            error = e
    raise error
