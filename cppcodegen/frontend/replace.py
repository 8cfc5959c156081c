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

_NP_DIR = os.path.dirname(os.path.abspath(np.__file__))
_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__))
_NOT_USER = {"numpy", "cppcodegen", "sympy", "mpmath", "cffi", "dask", "distributed", "_pytest",
             "pytest", "pluggy"}
_TABLES: list = []          # (module, {name: replacement}, pass_original)
_OWNER = [None]             # the thread tracing


def register(module, table: dict, pass_original: bool = False):
    """Replace ``module.<name>`` by ``table[name]`` during traces; with ``pass_original`` the
    replacement gets NumPy's function as ``original=`` (to fall back on concrete values)."""
    _TABLES.append((module, table, pass_original))


def _from_user(depth: int = 2) -> bool:
    """Whether the caller ``depth`` frames up is the user's code on the tracing thread."""
    if _OWNER[0] != threading.get_ident():
        return False
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


def _replacement(name, fn, original, pass_original: bool):
    extra = {"original": original} if pass_original else {}

    def replacement(*args, **kwargs):
        if not _from_user():
            return original(*args, **kwargs)
        return fn(*args, **kwargs, **extra)
    replacement.__name__ = replacement.__qualname__ = name
    replacement.__wrapped__ = original
    return replacement


@contextlib.contextmanager
def replaced():
    """Every registered replacement installed while the block runs (NumPy's back after)."""
    saved = [(module, name, getattr(module, name)) for module, table, _ in _TABLES
             for name in table]
    previous, _OWNER[0] = _OWNER[0], threading.get_ident()
    originals = {(id(m), n): f for m, n, f in saved}
    for module, table, pass_original in _TABLES:
        for name, fn in table.items():
            setattr(module, name, _replacement(name, fn, originals[id(module), name],
                                               pass_original))
    try:
        yield
    finally:
        for module, name, fn in reversed(saved):
            setattr(module, name, fn)
        _OWNER[0] = previous
