"""Python's boolean expressions on traced values: ``not``, ``and``/``or``, chained comparisons
and ``a if c else b``, as the rewritten source calls them (``rewrite.py``: each operand a
thunk, evaluated only where Python would evaluate it).

In: operands (concrete Python values or traced proxies). Out: Python's value while every truth
is concrete; once one is traced, selects over the traced truths (``np.where``), with the
operands evaluated under a guard of the truths before them (``indexing.guarded``: a check in
an operand counts only where Python would have evaluated it).
"""
from __future__ import annotations

import operator

import numpy as np

from . import pyflags
from .indexing import guarded
from .proxy import Proxy, wrap
from .truth import truth


class BoolOps:
    """Methods of ``control.TraceOps`` for boolean expressions (mixed in)."""

    def not_(self, x):
        """Python's ``not``: a Python bool, whatever ``x`` is (weak: returned as ``bool``)."""
        t = truth(x)
        return (not t) if isinstance(t, bool) else wrap(np.logical_not(t).node, weak=True)

    def and_(self, *thunks):
        """``a and b``: Python's value while operands are concrete; once one is traced, the
        bool of them all (every operand is evaluated: no short circuit on traced values)."""
        return self._boolop(thunks, np.logical_and, stop=False)

    def or_(self, *thunks):
        return self._boolop(thunks, np.logical_or, stop=True)

    @staticmethod
    def _boolop(thunks, combine, stop: bool):
        """Python's value of ``and`` (``stop`` False) / ``or`` (``stop`` True): the first
        operand whose truth is ``stop``, else the last. Once a truth is traced: of bools,
        their ``combine``; of other values (``n and k`` of ints), the operand chosen where
        each truth is known (a chain of selects)."""
        acc = value = None
        pairs = []                  # (value, truth) from the first traced truth on
        for thunk in thunks:
            if acc is None:
                value = thunk()
            else:                   # evaluated where Python would evaluate it
                with guarded(np.logical_not(acc) if stop else acc):
                    value = thunk()
            t = truth(value)
            if acc is not None or not isinstance(t, bool):
                pairs.append((value, t))
            if isinstance(t, bool):
                if t is stop:
                    return value if acc is None else _chosen(pairs, stop, stop)
            else:
                acc = t if acc is None else combine(acc, t)
        return value if acc is None else _chosen(pairs, stop, acc)

    def compare(self, ops, first, *rest):
        """``a < b <= c``: ``(a < b) and (b <= c)`` with ``b`` evaluated once, and ``c`` only
        where Python would evaluate it."""
        left = [first()]

        def step(op, thunk):
            def run():
                right = thunk()
                out = getattr(operator, op)(left[0], right)
                left[0] = right
                return out
            return run
        return self._boolop([step(op, t) for op, t in zip(ops, rest)], np.logical_and,
                            stop=False)

    def seq_eq(self, negate, left, right):
        """``(r, c) == goal`` / ``!=``, a tuple or list display on one side: Python compares
        two tuples (or two lists) item by item, asking the truth of each item's ``==``; with
        traced items, the ``and`` of their equalities (an item that is the other side's
        very object is equal, as in Python). Anything else: Python's ``==``."""
        a, b = left(), right()
        if type(a) is not type(b) or type(a) not in (tuple, list) or \
                not any(isinstance(v, Proxy) for v in (*a, *b)):
            return (a != b) if negate else (a == b)
        if len(a) != len(b):
            return negate
        same = self._boolop([(lambda x=x, y=y: True if x is y else x == y)
                             for x, y in zip(a, b)], np.logical_and, stop=False)
        if isinstance(same, Proxy):         # (a Python bool, as == of two tuples gives)
            same = wrap(same.node, weak=True)
        return self.not_(same) if negate else same

    def if_exp(self, test, then, orelse, where=""):
        t = truth(test)
        if isinstance(t, bool):
            return then() if t else orelse()
        with guarded(t):
            yes = then()
        with guarded(np.logical_not(t)):
            no = orelse()
        out = np.where(t, yes, no)[()]
        if all(_weak(v) for v in (yes, no)) and isinstance(out, Proxy):
            out = wrap(out.node, weak=True, scalar=True)    # one of two Python numbers: still
        elif isinstance(out, Proxy):        # (a Python number on one side only: pyflags.py)
            out = pyflags.chosen(t, yes, no, out)
        arrays = [v for v in (yes, no) if isinstance(v, Proxy) and v.ndim and not v.scalar]
        if arrays and isinstance(out, Proxy):   # (one of two arrays: the values are right,
            for v in arrays + [out]:            # an update through either name is not)
                v._sides = f"an array the conditional expression at {where} chose"
        return out                                          # a Python number (NEP 50)


def _chosen(pairs, stop: bool, combined):
    """The value of ``and``/``or`` over traced truths: ``combined`` (their bool) when every
    operand is a bool, else the operand Python would return, selected by the truths (a list
    kept as arrays, ``while stack and ...``: its truth)."""
    pairs = [(t if hasattr(type(v), "traced_truth") else v, t) for v, t in pairs]
    if any(isinstance(v, Proxy) and v.ndim for v, _ in pairs):
        return combined
    if all(isinstance(v, (bool, np.bool_)) or isinstance(v, Proxy) and v.dtype == np.bool_
           for v, _ in pairs):
        return _bool_kind(combined, pairs, stop)
    out = pairs[-1][0]
    for v, t in reversed(pairs[:-1]):
        if not isinstance(t, bool):
            out = np.where(t, v, out)[()] if stop else np.where(t, out, v)[()]
    return out


def _bool_kind(out, pairs, stop: bool):
    """``out``, the bool of traced truths, with the kind of bool Python returns: the operand
    it stops at, a Python bool (``x is not None``) or NumPy's (``x[i] < t``), which may
    depend on the values (``best is not None and best < t``: False where best is None)."""
    flags = [pyflags.flag(v) for v, _ in pairs]
    if not isinstance(out, Proxy) or out.node.shape or all(f is False for f in flags):
        return out
    f = flags[-1]
    for (v, t), fv in zip(reversed(pairs[:-1]), reversed(flags[:-1])):
        if not isinstance(t, bool):
            f = pyflags.either(t, fv, f) if stop else pyflags.either(t, f, fv)
    if f is True:
        return wrap(out.node, weak=True)
    if pyflags.dynamic(f):
        out = wrap(out.node)
        out.pyflag = f if isinstance(f, Proxy) else wrap(f, scalar=True)
    return out


def _weak(v) -> bool:
    """A Python number, or a traced value that stands for one (NumPy's promotion: weak)."""
    return type(v) in (int, float, complex) or (isinstance(v, Proxy) and v.weak)
