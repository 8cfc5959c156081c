"""Python ints in a compiled function: int64 values whose ``+``, ``-``, ``*`` and negation
raise ``OverflowError`` where the result leaves int64.

Python's ints have no limit, so a wrapped int64 (``p = 1; for i in range(1, 30): p *= i``,
a linear congruential generator's ``a * seed``) would be a wrong result. The operators of a
Python int (a weak int64 proxy, ``proxy.weak``) are followed by a check
(``raises.error_check``) that fails when the wrapped result differs from the exact one:

- ``a + b``: the operands have one sign and the result the other (not for a constant operand
  of at most 2^20 in magnitude: ``_small``);
- ``a - b``: the operands differ in sign and the result's differs from ``a``'s;
- ``a * b``: ``r // a != b`` (the product wrapped), or ``a == -1`` and ``b`` is int64's minimum;
- ``-a``: ``a`` is int64's minimum.

NumPy integers (``np.int64(5)``, an element of an int array) wrap as NumPy wraps them: no check.
"""
from __future__ import annotations

import numpy as np

from ..errors import IntOverflow, user_location
from .proxy import Proxy, wrap
from .raises import error_check

INT64_MIN = np.int64(np.iinfo(np.int64).min)

# Python operator -> (operation, operands reflected)
CHECKED = {"__add__": ("add", False), "__radd__": ("add", True), "__iadd__": ("add", False),
           "__sub__": ("sub", False), "__rsub__": ("sub", True), "__isub__": ("sub", False),
           "__mul__": ("mul", False), "__rmul__": ("mul", True), "__imul__": ("mul", False),
           "__neg__": ("neg", False)}


def _ok(kind, a, r, b=None):
    """1 where ``r`` is the exact result of ``a <kind> b``."""
    if kind == "add":
        return np.greater_equal(np.bitwise_and(np.bitwise_xor(a, r), np.bitwise_xor(b, r)), 0)
    if kind == "sub":
        return np.greater_equal(np.bitwise_and(np.bitwise_xor(a, b), np.bitwise_xor(a, r)), 0)
    if kind == "mul":
        exact = np.logical_and(np.equal(np.floor_divide(r, a), b),
                               np.logical_not(np.logical_and(np.equal(a, -1),
                                                             np.equal(b, INT64_MIN))))
        return np.logical_or(np.equal(a, 0), exact)
    return np.not_equal(a, INT64_MIN)


SMALL = 2 ** 20


def _small(v) -> bool:
    """A constant step (``c += 1``, ``i - 2``): a sum of it and a value that is itself exact
    would need 2^43 steps to leave int64 (hours of a loop doing nothing else): not checked,
    so a counter under a branch stays a select, not a branch on every element."""
    return (type(v) is int or isinstance(v, np.integer)) and -SMALL <= int(v) <= SMALL


def checked_int(name: str, args: tuple, result):
    """``result`` of the Python operator ``name`` on ``args``, behind an overflow check when
    it is a Python int (see the module docstring)."""
    kind, reflected = CHECKED.get(name, (None, False))
    if kind is None or not isinstance(result, Proxy) or not result.weak or \
            result.dtype.kind != "i" or result.shape != () or \
            kind in ("add", "sub") and any(_small(v) for v in args):
        return result
    ops = tuple(np.int64(v) if type(v) is int else v for v in args)
    if any(isinstance(v, Proxy) and v.dtype != np.int64 for v in ops):
        return result                   # (a bool operand: its sums stay small)
    a, b = (ops[1], ops[0]) if reflected else (ops + (None,))[:2]
    where = user_location()
    error = (IntOverflow, (f"Python int arithmetic at {where} leaves int64, where the "
                             "compiled function keeps Python ints (Python's have no limit); "
                             "compute it with np.int64 values to wrap as NumPy does, or "
                             "with floats",))
    return wrap(error_check(result, _ok(kind, a, result, b), error, where).node, weak=True)
