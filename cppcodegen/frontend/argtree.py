"""Arguments that are lists, tuples or dicts holding arrays: a model's weights
(``for W, b in zip(weights, biases)``), a dict of parameters (``p["dt"]``), a namedtuple of
fields.

``pack(args)`` splits such a call into its structure (the containers' kinds, lengths and
dict keys: a ``Tree``) and the leaves (the arrays, numbers and strings in them, in order).
The compiled function of one structure is an ordinary compiled function of the leaves
(``Tree.function``): each leaf is an argument with its own guards (an array's layout, a
float a run-time value), so a new call with the same structure and other values runs the
same kernel. Inside, the containers are rebuilt around the traced leaves and the user's
function, its control flow captured (``capture.convert`` unwraps the function of leaves),
runs on them.

The containers the function sees while tracing are new ones; a function that changes them
(``weights.append``, ``p["n"] = 3``) cannot be compiled (Python would change the caller's),
and where it runs as plain Python it runs on the caller's own containers.
"""
from __future__ import annotations

import keyword
import re
import threading
import types

from . import containers

MAX_LEAVES = 256        # (one C parameter each; past that, Python runs the function)
CALLING = threading.local()     # .args: the caller's arguments and their leaves (plain runs)
_FLAT = (list, tuple, dict)
_NUMBERS = frozenset((int, bool, str, float))


def _kind(a):
    """The structure kind of ``a`` (list, dict, tuple or a namedtuple class), or None."""
    t = type(a)
    if t in _FLAT or isinstance(a, tuple) and hasattr(t, "_fields"):
        return t
    return None


def _spec(value, leaves: list):
    t = type(value)
    if t is list or t is tuple:
        return (t, None, tuple([_spec(v, leaves) for v in value]))
    if t is dict:
        return (dict, tuple(value), tuple([_spec(v, leaves) for v in value.values()]))
    if isinstance(value, tuple) and hasattr(t, "_fields"):
        return (t, None, tuple([_spec(v, leaves) for v in value]))
    leaves.append(value)
    return None


def _numbers(a) -> bool:
    # a flat list or tuple of Python numbers and strings: a constant argument already
    # (``signature.classify``), not a tree
    t = type(a)
    return (t is list or t is tuple) and {type(v) for v in a} <= _NUMBERS


def pack(args):
    """(structure, leaves) for a call with at least one container argument, or None: the
    structure (hashable) is the key of ``Tree(structure)``."""
    leaves: list = []
    specs = []
    tree = False
    for a in args:
        if _kind(a) is None or _numbers(a):    # (a flat tuple of numbers: one leaf)
            leaves.append(a)
            specs.append(None)
        else:
            specs.append(_spec(a, leaves))
            tree = True
    if not tree or len(leaves) > MAX_LEAVES:
        return None
    return tuple(specs), leaves


def _build(spec, it):
    if spec is None:
        return next(it)
    kind, keys, parts = spec
    items = [_build(p, it) for p in parts]
    if kind is dict:
        return dict(zip(keys, items))
    if kind is list or kind is tuple:
        return kind(items)
    return kind(*items)                 # (a namedtuple)


def _boxes(value, out: list) -> list:
    """The lists and dicts in ``value``, at every depth."""
    if _kind(value) is not None:
        if isinstance(value, (list, dict)):
            out.append(value)
        for v in (value.values() if isinstance(value, dict) else value):
            _boxes(v, out)
    return out


class Tree:
    """The structure of a call's arguments (``pack``): per argument None (a leaf) or (kind,
    dict keys, the parts' structures)."""

    def __init__(self, specs: tuple):
        self.specs = specs

    def unflatten(self, leaves) -> tuple:
        it = iter(leaves)
        return tuple(_build(spec, it) for spec in self.specs)

    def names(self, params) -> list:
        """A parameter name per leaf: ``weights_0``, ``p_dt`` (the argument's name, then
        its position or key), unique."""
        out = []
        for name, spec in zip(params, self.specs):
            if spec is None:
                out.append(name)
            else:
                _names(spec, name, out)
        seen = set()
        for i, n in enumerate(out):
            n = re.sub(r"\W", "_", n)
            while n in seen or not n.isidentifier() or keyword.iskeyword(n):
                n = f"_{n}"
            seen.add(n)
            out[i] = n
        return out

    def function(self, fn, params):
        """A function of the leaves that rebuilds the containers and calls ``fn``, named as
        ``fn`` and in its module (its errors and warnings name the user's function)."""
        names = self.names(params)
        tree = self

        def call(leaves):
            caller = getattr(CALLING, "args", None)
            if caller is not None and len(caller[1]) == len(leaves) and all(
                    a is b for a, b in zip(caller[1], leaves)):
                return fn(*caller[0])   # (run as Python: on the caller's own containers)
            return tree.run(fn, fn, leaves)
        env = {"__ccg_call": call}
        exec(f"def flat({', '.join(names)}):\n"
             f"    return __ccg_call(({''.join(n + ', ' for n in names)}))", env)
        flat = env["flat"]
        flat.__name__, flat.__qualname__ = fn.__name__, getattr(fn, "__qualname__", fn.__name__)
        flat.__module__, flat.__doc__ = fn.__module__, fn.__doc__
        flat.__ccg_packed__ = (fn, self)
        return flat

    def around(self, fn, converted):
        """``converted`` (the user's function with its control flow captured) as a function
        of the leaves: the function the trace runs."""
        def run(*leaves):
            return self.run(fn, converted, leaves)
        run.__name__ = getattr(fn, "__name__", "run")
        return run

    def run(self, fn, body, leaves):
        """``body`` (``fn`` or its converted form) on the containers rebuilt around
        ``leaves``. A change to a rebuilt list or dict is an error: Python would change the
        caller's."""
        args = self.unflatten(leaves)
        snaps = containers.snapshot(_boxes(args, []))
        result = body(*args)
        changed = containers.undo_changes(snaps)
        if changed:
            raise containers.changed_argument(fn, args, changed[0][0])
        return result


def _names(spec, prefix, out):
    if spec is None:
        out.append(prefix)
        return
    kind, keys, parts = spec
    for i, p in enumerate(parts):
        key = keys[i] if keys is not None else (kind._fields[i] if hasattr(kind, "_fields")
                                                else i)
        _names(p, f"{prefix}_{key}", out)


def packed_parts(fn):
    """(user's function, Tree) of a function ``Tree.function`` made, else None."""
    return getattr(fn, "__ccg_packed__", None) if isinstance(fn, types.FunctionType) else None
