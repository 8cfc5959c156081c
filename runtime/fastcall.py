"""The C call path of compiled functions (``fastcall.cpp``): built once, used when there.

In:  the compiler (``g++`` or ``$CXX``), Python's and NumPy's headers, this user's cache
     directory. Out: :func:`dispatcher` -> the C base type of ``CompiledFunction`` objects
     (or None: the Python path alone), :func:`entry` -> what a ``CompiledVariant`` registers
     with it for one argument layout (or None when its calls need Python's path).

Why: a call through the Python path costs 2-4 us on top of the kernel (the layout key, a
dict lookup, one cffi ``from_buffer`` per array, libffi's call at ~0.1 us an argument), and
Numba's dispatcher ~0.5 us; small calls in a user's Python loop pay it every time. The C
path checks the arguments against the entries of the last layouts seen, allocates the
outputs and calls the kernel's ``ccg_slots0`` wrapper (backend/program.py) directly.

The module is built by the compiler that builds kernels, against the running Python and
NumPy, into ``<user cache>/fastcall/<key>/`` (``key``: the source, Python's ABI tag, NumPy's
version and the compiler's version line), published by rename, so a half-written module is
never loaded. :func:`dispatcher` only loads; :func:`start` builds it in a background thread
(the first compile of a process calls it), and :func:`build` builds it now (tests).
Functions compiled before it is there take the Python path for their whole life. Without
a usable compiler, headers or cache directory there is no C path, and nothing else changes.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

import numpy as np

from . import device, sizes
from .build import compiler_version, resolve_compiler
from .cachedir import ensure_cache_dir, user_cache_dir
from ..errors import PythonOnly
from .compiled import _index_error, _view

SOURCE = Path(__file__).with_name("fastcall.cpp")
NAME = "ccg_fastcall"
MAX_ARGS, MAX_SLOTS, MAX_OUTS, MAX_DIMS = 32, 64, 16, 8     # (as fastcall.cpp's k* limits)
# NumPy scalars the C path passes by value (PyFloat_AsDouble / PyLong_AsLongLong /
# PyComplex_*AsDouble read them exactly): floats, ints that int64 holds, complex128
BY_VALUE = frozenset(c for c in "efdbhilqBHILQD" if np.dtype(c).kind != "u" or
                     np.dtype(c).itemsize < 8)
SLOT = {"arg": 0, "out": 1, "fixed": 2, "double": 3, "int": 4, "re": 5, "im": 6, "status": 7}

_state = {"module": None, "tried": False, "thread": None, "off": False}
_lock = threading.Lock()


def _cxx() -> str:
    return resolve_compiler(os.environ.get("CXX", ""))     # (g++ or clang++, as kernels)


def _target() -> Path:
    tag = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    root = user_cache_dir()     # (the compiler's version memoized there: no process to run)
    key = hashlib.sha256("\0".join([SOURCE.read_text(), tag, np.__version__,
                                    compiler_version(_cxx(), root), sys.version]).encode())
    return root / "fastcall" / key.hexdigest()[:24] / (NAME + tag)


def _load(path: Path):
    loader = importlib.machinery.ExtensionFileLoader(NAME, str(path))
    spec = importlib.util.spec_from_file_location(NAME, str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    module.set_paused(device.output_empty is not np.empty)
    return module


def allocator_changed() -> None:
    """Device hooks with their own output allocator were registered (or the CPU's are back):
    while they are, every call takes the Python path, which allocates with them."""
    module = _state["module"]
    if module is not None:
        module.set_paused(device.output_empty is not np.empty)


def dispatcher():
    """The C base type ``Dispatcher``, when the module is built and loads; else None."""
    if _state["off"]:
        return None
    if _state["module"] is None and not _state["tried"]:
        with _lock:
            if not _state["tried"]:
                _state["tried"] = True
                try:
                    path = _target()
                    if path.exists():
                        _state["module"] = _load(path)
                except Exception:            # (a stale or foreign file: the Python path)
                    _state["module"] = None
    module = _state["module"]
    return None if module is None else module.Dispatcher


def build():
    """Build (when missing) and load the module now; the module, or None."""
    if _state["off"]:
        return None
    if dispatcher() is not None:
        return _state["module"]
    try:
        path = _target()
        if not path.exists():
            ensure_cache_dir(path.parent.parent.parent)
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
            command = [_cxx(), "-O2", "-std=c++17", "-shared", "-fPIC", "-w",
                       f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}",
                       str(SOURCE), "-o", str(tmp)]
            proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                tmp.unlink(missing_ok=True)
                return None
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
            os.replace(tmp, path)
        with _lock:
            if _state["module"] is None:
                _state["module"] = _load(path)
            _state["tried"] = True
    except Exception:
        return None
    return _state["module"]


def start() -> None:
    """Build the module in a background thread, once per process, unless it is there."""
    if _state["off"] or _state["thread"] is not None or dispatcher() is not None:
        return
    with _lock:
        if _state["thread"] is None:
            _state["thread"] = threading.Thread(target=build, name="cppcodegen-fastcall",
                                                daemon=True)
            _state["thread"].start()


def set_enabled(on: bool) -> None:
    """Turn the C path on or off for functions compiled from now on (tests compare both)."""
    _state["off"] = not on


def entry(variant, args, key, address: int, keep):
    """The C entry of ``variant`` for calls whose arguments have the layout of ``args``
    (``c_plan``'s slots), or None. Each argument is checked as the Python path's layout
    ``key`` (``frontend/signature.layout_key``) checks it: an array by its type, dtype, shape
    and strides, a float or complex by its type, anything else by its type and value. An
    array the function updates in place must also be writeable and share no byte range with
    another array argument, or the call takes the Python path (which raises, or runs NumPy).
    ``address``: the kernel's ``ccg_slots0`` wrapper; ``keep``: what must outlive the entry."""
    module = _state["module"]
    plan = c_plan(variant, args) if module is not None else None
    if plan is None:
        return None
    guards = []
    for i, a in enumerate(args):
        if i in key.arrays and isinstance(a, np.generic):
            if a.dtype.char not in BY_VALUE:
                return None         # (a bool, uint64, complex64, ...: the Python path)
            guards.append((1, type(a)))     # (passed by value, as a Python number)
        elif i in key.arrays:
            if type(a) is not np.ndarray or a.ndim > MAX_DIMS:
                return None
            guards.append((0, a.dtype, a.shape, a.strides))
        elif i in key.scalars:
            guards.append((1, type(a)))
        else:
            guards.append((2, type(a), a))
    slots, outputs, result, on_error = plan
    if any(i not in key.arrays for i in variant.mutates):
        return None
    if len(args) > MAX_ARGS or len(slots) > MAX_SLOTS or len(outputs) > MAX_OUTS or any(
            len(shape) > MAX_DIMS for _, shape in outputs):
        return None
    return module.make_entry(address, tuple(guards), slots, outputs, result,
                             tuple(variant.mutates), on_error, keep)


def c_plan(v, args):
    """What the C call path (``fastcall.py``) needs to run variant ``v`` on arguments of the
    layout of ``args`` (their shapes and ints fix every run-time size): (the kernel's
    arguments as slots, the arrays to allocate, how the result is made of them (``RESULT``),
    the function raising a reported error), or None where only the Python path can run it
    (extern steps, random draws, a result of other kinds). While device hooks allocate the
    outputs, the module sends every call to the Python path (``allocator_changed``)."""
    if not v.c_ready:
        return None
    try:
        params = [t.cname for t in v.ffi.typeof(v.fn).args]
    except (AttributeError, TypeError):
        return None
    env = v.size_env(args) if v.plan.sizes else {}
    slots, outputs, made = [], [], {}
    for j, (kind, a, b) in enumerate(v.steps):
        if kind in (0, 4):
            slots.append((SLOT["arg"], a, 0))
        elif kind == 1:
            slots.append((SLOT["fixed"], 0, a.__array_interface__["data"][0]))
        elif kind in (2, 7):
            shape = a if kind == 2 else tuple(int(sizes.evaluate(c, env)) for c in a)
            made[j] = len(outputs)
            slots.append((SLOT["out"], len(outputs), 0))
            outputs.append((b, shape))
        elif kind == 8:
            slots.append((SLOT["status"], 0, 0))
        elif kind == 9:
            slots += [(SLOT["re"], a, 0), (SLOT["im"], a, 0)]
        elif kind == 6:
            slots.append((SLOT["fixed"], 0, int(env[a]) % 2 ** 64))
        elif kind == 3 and len(slots) < len(params):
            slots.append((SLOT["double" if params[len(slots)] == "double" else "int"], a, 0))
        else:
            return None
    result = _result_spec(v.plan.outputs, made, env if v.plan.sizes else None)
    if result is None or len(slots) != len(params):
        return None
    raises, sites = v.plan.raises, v.plan.sites
    return (tuple(slots), tuple(outputs), result,
            lambda status, args: _reported(v, status, args, raises, sites))


def _reported(v, status, args, raises, sites):
    """The error the kernel reported raised as Python raises it, or where a Python value left
    its compiled type (``PythonOnly``: an int past int64; the call wrote no argument) the
    call's result as Python computes it, as ``(result,)``."""
    try:
        _index_error(status, raises, sites)
    except PythonOnly as e:
        if v.mutates:
            raise
        return (v.run_fallback(args, e.reason),)


# How fastcall.cpp builds a call's result: (code, value) trees, as runtime/compiled._build
# builds the Python path's from the plan's outputs
RESULT = {"buf": 0, "arr": 1, "py": 2, "arg": 3, "constant": 4, "tuple": 5, "list": 6, "py?": 7,
          "none?": 8, "view": 9}
_CONSTANTS = (type(None), bool, int, float, str)


def _result_spec(tree, made: dict, env=None):
    """The C form of the result ``tree`` (``Plan.outputs``; ``made``: step -> output;
    ``env``: the sizes of the entry's layout), or None for what only the Python path builds
    (a constant array, a dict, a list a loop appended to, a view with run-time bounds)."""
    if type(tree) is tuple and tree and isinstance(tree[0], str):
        tag, v = tree
        if tag == "view":       # a view of an argument: its steps, for this layout's sizes
            arg, steps = v
            return (RESULT["view"], (arg, lambda a: _view(a, steps, env)))
        if tag in ("buf", "arr", "py"):     # (a constant buffer is copied: Python's path)
            return (RESULT[tag], made[v]) if v in made else None
        if tag == "arg":
            return (RESULT["arg"], v)
        if tag == "py?":        # (the flag's output, the value's)
            return (RESULT[tag], tuple(made[b] for b in v)) if all(b in made for b in v) \
                else None
        if tag == "none?":      # (the flag's output, the result where it is not set)
            inner = _result_spec(v[1], made, env)
            return (RESULT[tag], (made[v[0]], inner)) if v[0] in made and inner is not None \
                else None
        return (RESULT["constant"], v) if tag == "value" and type(v) in _CONSTANTS else None
    if type(tree) in (tuple, list):
        items = [_result_spec(t, made, env) for t in tree]
        if any(i is None for i in items):
            return None
        return (RESULT["tuple" if type(tree) is tuple else "list"], tuple(items))
    return None
