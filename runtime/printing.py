"""The user's ``print`` calls in a compiled function, written when the program reaches them.

In: a print's spec (JSON text made by ``frontend/printing.py``: its arguments as literal text,
values, or f-string pieces; ``sep``, ``end``, the stream, ``flush``) and the values it prints,
each in 8-byte slots (a complex one in two) as the program holds them. Out: the text Python's
``print`` writes for the same arguments, written by Python's ``print`` to ``sys.stdout`` or
``sys.stderr`` as they are now (a redirected or captured stream gets it), with each value the
kind of number the plain function would print (a Python int or float, a NumPy scalar, a 0-d
array: ``repr`` and ``str`` differ between them).

The compiled program calls ``callback_for(ffi)``'s function (a cffi callback, which takes the
GIL) at each print; the NumPy reference interpreter calls ``emit``. The spec is in the C++
source as a string, so the program carries its own prints and nothing is looked up per
function.
"""
from __future__ import annotations

import builtins
import json
import sys

import numpy as np

SLOT = 8                    # bytes per slot
_SPECS: dict = {}           # spec text -> parsed spec
_CALLBACKS: dict = {}       # id(ffi) -> (ffi, its callback): kept alive while loaded


def slots_of(dtype) -> int:
    """Slots a value of ``dtype`` takes."""
    return -(-np.dtype(dtype).itemsize // SLOT)


def parse(text: str) -> dict:
    """The spec of ``text``, with ``layout``: (kind, dtype, byte offset) per value, and
    ``nbytes`` in all (worked out once per print statement, not per print)."""
    spec = _SPECS.get(text)
    if spec is None:
        spec, at, layout = json.loads(text), 0, []
        for kind, dtype in spec["values"]:
            layout.append((kind, dtype, at))
            at += slots_of(dtype) * SLOT
        spec["layout"], spec["nbytes"] = tuple(layout), at
        _SPECS[text] = spec
    return spec


def value_of(kind: str, v):
    """``v`` (a NumPy scalar or 0-d array) as the plain function has it: a Python number
    ("py"), a NumPy scalar ("np") or a 0-d array ("0d")."""
    v = np.asarray(v)
    return v.item() if kind == "py" else v if kind == "0d" else v[()]


def _convert(v, conv: str):
    return repr(v) if conv == "r" else ascii(v) if conv == "a" else str(v) if conv == "s" \
        else v


def items(spec: dict, values: list) -> list:
    """The objects Python's print gets for ``spec`` with ``values``."""
    out = []
    for kind, what in spec["args"]:
        if kind == "s":
            out.append(what)
        elif kind == "v":
            out.append(values[what])
        else:           # an f-string: literal pieces and [value, conversion, format spec]
            out.append("".join(p if isinstance(p, str) else
                               format(_convert(values[p[0]], p[1]), p[2]) for p in what))
    return out


def emit(spec: dict, values: list) -> None:
    stream = sys.stderr if spec["file"] == "stderr" else sys.stdout
    builtins.print(*items(spec, values), sep=spec["sep"], end=spec["end"], file=stream,
                   flush=spec["flush"])


def emit_raw(spec: dict, raw: bytes) -> None:
    """The compiled program's print: ``raw`` holds the values' slots in order."""
    emit(spec, [value_of(kind, np.frombuffer(raw, dtype, 1, at)[0])
                for kind, dtype, at in spec["layout"]])


def callback_for(ffi):
    """The ``ccg_print_fn`` a program of ``ffi`` calls at each print."""
    found = _CALLBACKS.get(id(ffi))
    if found is None or found[0] is not ffi:
        def printed(text, slots):
            spec = parse(ffi.string(text).decode())
            emit_raw(spec, bytes(ffi.buffer(slots, spec["nbytes"])))
        found = _CALLBACKS[id(ffi)] = (ffi, ffi.callback("ccg_print_fn", printed))
    return found[1]
