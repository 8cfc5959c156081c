"""Module functions replaced while a trace runs.

Some functions never see a traced array's protocols, so they cannot be routed through it:
NumPy's constructors (``np.zeros(n)``, ``creation.py``), ``np.random``'s module functions
(``random.py``) and Python's ``math`` functions (``pymath.py``). Their modules ``register``
a table of replacements here; ``replaced()`` installs every table for the duration of a
trace (the trace lock is held).
A replacement acts only for calls from the user's code on the tracing thread: NumPy's own
internals (``np.histogram`` calls ``np.zeros``), the compiler and other threads get NumPy's
function.

In: tables {name: function} per module. Out: the context manager ``replaced``.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading

import numpy as np

from ..errors import DataDependentError, TraceError, UnsupportedError, user_location
from .pystate import record

_NP_DIR = os.path.dirname(os.path.abspath(np.__file__))
_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__))
_NOT_USER = {"numpy", "cppcodegen", "sympy", "mpmath", "cffi", "dask", "distributed", "_pytest",
             "pytest", "pluggy"}
_TABLES: list = []          # (module, {name: replacement}, pass_original)
LAZY: list = []             # callables run when a trace starts: tables of modules the user
                            # may have imported since (scipy.stats: ``scipy_stats.py``)
_OWNER = [None]             # the thread tracing
_IN_NUMPY = [0]             # > 0 while one of NumPy's own functions runs (_numpy_call)
_ACTIVE: dict = {}          # id(a replaced function) -> (it, its replacement) during a trace
_USER_CALL = [False]        # the next replacement called is called by the user's code


def register(module, table: dict, pass_original: bool = False):
    """Replace ``module.<name>`` by ``table[name]`` during traces; with ``pass_original`` the
    replacement gets NumPy's function as ``original=`` (to fall back on concrete values)."""
    _TABLES.append((module, table, pass_original))


def _from_user(depth: int = 2) -> bool:
    """Whether the caller ``depth`` frames up is the user's code on the tracing thread."""
    if _OWNER[0] != threading.get_ident() or _IN_NUMPY[0]:
        return False
    if _USER_CALL[0]:                   # (``by_name``: called from the tracer's call op)
        _USER_CALL[0] = False
        return True
    frame = sys._getframe(depth)
    module = frame.f_globals.get("__name__") or ""
    if module.split(".")[0] in _NOT_USER:
        return False
    fname = frame.f_code.co_filename
    if fname.startswith("<"):
        return not fname.startswith("<frozen")
    path = os.path.abspath(fname)
    return not (path.startswith(_NP_DIR) or (path.startswith(_STDLIB_DIR) and
                                             "site-packages" not in path))


def from_user() -> bool:
    """Is the caller of the function calling this the user's code on the tracing thread?
    (An object replaced while a trace runs, ``np.mgrid``: its ``__getitem__`` asks.)"""
    return _from_user(3)


def by_name(f):
    """``f`` as the user's code calls it by a name of its own (``from random import random``,
    ``from numpy import zeros``, ``from math import sqrt``): while a trace runs, a replaced
    function's replacement (``replaced`` sets module attributes, which such a name, bound at
    import, does not read; run as NumPy's, a draw would be made once, at trace time, and
    repeated by every call)."""
    hit = _ACTIVE.get(id(f))
    if hit is None or hit[0] is not f:
        return f
    replacement = hit[1]

    def user_call(*args, **kwargs):
        _USER_CALL[0] = True
        try:
            return replacement(*args, **kwargs)
        finally:
            _USER_CALL[0] = False
    return user_call


def _replacement(name, fn, original, pass_original: bool):
    extra = {"original": original} if pass_original else {}

    def replacement(*args, **kwargs):
        if not _from_user():
            return original(*args, **kwargs)
        return fn(*args, **kwargs, **extra)
    replacement.__name__ = replacement.__qualname__ = name
    replacement.__wrapped__ = original
    return replacement


_NOT_DRAWS = {"seed", "get_state", "set_state", "default_rng", "get_bit_generator",
              "set_bit_generator"}


def _numpy_call(name, fn):
    """``np.random.<name>`` while a trace runs: its draws would be made once, at trace time,
    and repeated by every call, so the user's call is refused; NumPy's own calls of it run,
    marked as NumPy's (a compiled function with no Python frame in between when it calls
    ``np.empty``)."""
    def call(*args, **kwargs):
        if name not in _NOT_DRAWS and _from_user():
            raise UnsupportedError(
                f"np.random.{name} is not compiled (its draws would be made once and repeated "
                f"by every call) (at {user_location()}); draw outside the compiled function "
                "and pass the array, or use np.random.random/normal/uniform/standard_normal "
                "or a Generator argument")
        if name in _GENERATORS and _from_user():
            return _seeded_generator(name, fn, args, kwargs)
        _IN_NUMPY[0] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _IN_NUMPY[0] -= 1
    call.__wrapped__ = fn
    return call


_GENERATORS = {"default_rng"}   # (classes stay: NumPy's own isinstance checks use them)


def _seeded_generator(name, fn, args, kwargs):
    """``np.random.default_rng(42)`` in the user's function: the same draws at every call,
    so they are made once, now, by NumPy's own Generator (its numbers, bit for bit), and
    enter the program as constants. No seed, or a seed known only when the function runs,
    is refused (its draws differ per call)."""
    from .proxy import Proxy
    from .iteration import concrete_int, symbolic_int
    seed = args[0] if args else kwargs.get("seed")
    if symbolic_int(seed) or isinstance(seed, Proxy) and not seed.shape and \
            seed.dtype.kind in "iu":    # an integer argument: this call's, guarded (a build
        try:                            # per seed, as the draws are constants of it)
            seed = concrete_int(seed) if symbolic_int(seed) else int(seed)
        except (TraceError, DataDependentError):    # (from array values: refused below)
            pass
        args, kwargs = (seed,) + tuple(args[1:]) if args else (), dict(kwargs, **(
            {} if args else {"seed": seed}))
    if seed is None or isinstance(seed, Proxy) or not isinstance(
            seed, (int, np.integer, tuple, list)):
        raise UnsupportedError(
            f"np.random.{name}({'' if seed is None else 'seed'}) inside a compiled function "
            f"(at {user_location()}): its draws change from call to call; create the "
            "Generator outside and pass it as an argument (its draws then happen in the "
            "kernels), or seed it with a constant")
    _IN_NUMPY[0] += 1
    try:
        gen = fn(*args, **kwargs)
    finally:
        _IN_NUMPY[0] -= 1
    stream = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]) >> 1
    return _ConstantDraws(gen, ("rng", stream))


class _ConstantDraws:
    """A Generator seeded with a constant inside the traced function: each method runs
    NumPy's own (marked as NumPy's, so its np.empty is NumPy's) on concrete arguments. In a
    compiled loop or branch (where a draw made now would be made once and repeated), its
    draws are the kernels' (``random.TracedGenerator``) from a stream of the seed's own: the
    same numbers at every call, not NumPy's."""

    def __init__(self, gen, source):
        self._gen, self._source = gen, source

    def __getattr__(self, attr):
        method = getattr(self._gen, attr)
        if not callable(method):
            return method
        from ..ir.graph import MADE
        from .random import TracedGenerator         # (it imports this module)
        if MADE and not attr.startswith("_") and attr in vars(TracedGenerator):
            return getattr(TracedGenerator(self._source), attr)     # (its draws: compiled)

        def draw(*args, **kwargs):
            from .iteration import concrete_int, symbolic_int
            from .proxy import Proxy
            args = [concrete_int(a) if symbolic_int(a) else a for a in args]   # sizes: this
            kwargs = {k: concrete_int(v) if symbolic_int(v) else v          # call's, guarded
                      for k, v in kwargs.items()}
            if any(isinstance(a, Proxy) for a in list(args) + list(kwargs.values())):
                raise UnsupportedError(
                    f"a constant-seeded Generator's {attr} with traced arguments (at "
                    f"{user_location()}): pass the Generator as an argument instead")
            record(f"a Generator seeded inside the function draws ({attr})")
            _IN_NUMPY[0] += 1
            try:
                return method(*args, **kwargs)
            finally:
                _IN_NUMPY[0] -= 1
        return draw


@contextlib.contextmanager
def replaced():
    """Every registered replacement installed while the block runs (NumPy's back after)."""
    for install in LAZY:
        install()
    saved = [(module, name, getattr(module, name)) for module, table, _ in _TABLES
             for name in table]
    previous, _OWNER[0] = _OWNER[0], threading.get_ident()
    active = dict(_ACTIVE)
    originals = {(id(m), n): f for m, n, f in saved}
    for module, table, pass_original in _TABLES:
        for name, fn in table.items():
            original = originals[id(module), name]
            rep = fn if getattr(fn, "replaces_object", False) else \
                _replacement(name, fn, original, pass_original)     # (np.r_: an object)
            setattr(module, name, rep)
            _ACTIVE[id(original)] = (original, rep)
            _ACTIVE[id(rep)] = (rep, rep)       # (np.array read as an attribute: the call
                                                # hook calls it for the user, ``by_name``)
    # np.random's other functions (choice, permutation, ...) are compiled code that calls
    # np.empty with no Python frame of its own: marked, so that call gets NumPy's function
    mine = {name for module, table, _ in _TABLES if module is np.random for name in table}
    wrapped = [(name, fn) for name, fn in vars(np.random).items()
               if callable(fn) and not name.startswith("_") and name not in mine
               and not isinstance(fn, type) and type(fn).__name__ in (
                   "builtin_function_or_method", "cython_function_or_method", "method")]
    saved += [(np.random, name, fn) for name, fn in wrapped]
    for name, fn in wrapped:
        setattr(np.random, name, _numpy_call(name, fn))
        _ACTIVE[id(fn)] = (fn, getattr(np.random, name))
    try:
        yield
    finally:
        for module, name, fn in reversed(saved):
            setattr(module, name, fn)
        _OWNER[0] = previous
        _ACTIVE.clear()
        _ACTIVE.update(active)
