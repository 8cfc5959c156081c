"""A list of traced arrays passed where NumPy takes one array: ``np.mean([a, b, c], axis=0)``,
``np.maximum.reduce([a, b, c])``, ``np.max([x.sum(), y.sum()])``, ``np.maximum([a, b], 0)``.

NumPy finds no traced operand in such a call (a list has no ``__array_function__``), so it
would convert the list itself, and a traced array cannot become concrete. The call hook
(``control.call``) gives these calls the list as one array first, made by the traced
``np.array`` (``creation.array``), which is what NumPy's own conversion does. Functions that
take a sequence of arrays as such (``np.concatenate``, ``np.stack``, ``np.select``,
``np.einsum``...) see the traced items through their dispatchers; an item that is itself a
list holding traced values (``np.stack([[x[0], x[1]], [x[2], m]])``) hides them from the
dispatcher, so for the joining functions (``SEQUENCES``) such items become arrays first.

In: the function called and its positional arguments. Out: the arguments to call it with.
"""
from __future__ import annotations

import inspect

import numpy as np

ONE_ARRAY = frozenset({"a", "x", "p", "arr", "ary", "array", "x1", "m", "v"})
"""Names of a NumPy function's first parameter that take one array-like."""
SEQUENCES = frozenset({"concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
                       "row_stack"})
"""NumPy functions whose first parameter is a sequence of array-likes."""
UFUNC_METHODS = ("reduce", "accumulate", "reduceat", "outer", "at")


def one_array_arguments(f, args: tuple) -> tuple:
    if not args or not any(isinstance(a, (list, tuple)) for a in args):
        return args
    from .creation import array, holds_proxy
    as_array = lambda v: array(v, original=np.asarray) \
        if isinstance(v, (list, tuple)) and holds_proxy(v) else v
    if isinstance(f, np.ufunc):                 # every operand of a ufunc is one array
        return tuple(as_array(a) for a in args)
    if getattr(f, "__name__", "") in SEQUENCES and f is getattr(np, f.__name__, None) and \
            isinstance(args[0], (list, tuple)):
        return (type(args[0])(as_array(a) for a in args[0]),) + args[1:]
    owner = getattr(f, "__self__", None)
    if isinstance(owner, np.ufunc) and getattr(f, "__name__", "") in UFUNC_METHODS:
        return (as_array(args[0]),) + args[1:]
    if not (getattr(f, "__module__", None) or "").startswith("numpy"):
        return args
    try:
        first = next(iter(inspect.signature(f).parameters), None)
    except (TypeError, ValueError):
        return args
    return (as_array(args[0]),) + args[1:] if first in ONE_ARRAY else args
