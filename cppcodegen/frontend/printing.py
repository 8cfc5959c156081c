"""``print`` in a compiled function: a step of the program that prints when it runs.

In: the arguments of the user's ``print`` (``builtin_calls.print_``), where f-strings and
``format`` of traced values hold a placeholder per value (``Proxy.__format__`` returns
``placeholder(x, spec)``: a ``__format__`` must return text, and the digits are not known
while tracing). Out: a ``print`` node whose inputs are the printed values (0-d) and whose
``spec`` (JSON) tells ``runtime/printing.py`` what Python's ``print`` gets: literal text,
values, f-string pieces with their conversions and format specs, ``sep``, ``end``, the
stream, ``flush``. The node is a step (``ir/graph.is_step``): it runs where Python runs the
call, in order with the loops, branches and checks around it, in every iteration of a
compiled loop and on every call (not once, while tracing). The program calls back into
Python for each print (``include/cppcodegen/print.h``), so the text is Python's own.

Refused, with the user's line: arrays of one or more dimensions (NumPy's array text;
print the result after the call), a ``file`` other than ``sys.stdout``/``sys.stderr``, a
print in a ``prange`` body (the threads would print in any order), a formatted value used
as anything but print's text (returned, compared, raised).
"""
from __future__ import annotations

import json
import re
import sys

import numpy as np

from ..errors import UnsupportedError, user_location
from ..ir.graph import keep_for_errors, make_node
from .iteration import PARALLEL_BODIES, symbolic_int
from .proxy import asproxy, Proxy

PLACEHOLDERS: list = []     # while a function is traced: (value, conversion, spec) each
PRINTS = [0]                # ... and the prints made so far (each print node is its own)
_MARK = "\x00ccg-value-"
_PLACEHOLDER = re.compile("\x00ccg-value-(\\d+)\x00")


def reset():
    PLACEHOLDERS.clear()
    PRINTS[0] = 0


def placeholder(x, spec: str, conversion: str = "") -> str:
    """The text standing for ``format(x, spec)`` until the program prints it."""
    PLACEHOLDERS.append((x, conversion, spec))
    return f"{_MARK}{len(PLACEHOLDERS) - 1}\x00"


def formatted(text) -> bool:
    """Does ``text`` hold a traced value's placeholder?"""
    return isinstance(text, str) and _MARK in text


def unformatted(text: str) -> str:
    """``text`` with each traced value's placeholder shown as "..."."""
    return _PLACEHOLDER.sub("...", text)


def refuse_formatted(what: str, where: str = ""):
    raise UnsupportedError(
        f"{what} ({where or user_location()}) is text formatted from traced values (an f-string or "
        "format() of an array's value): its digits exist only when the program runs, where "
        "compiled code uses them only to print(); format the compiled function's result")


def print_call(*args, sep=" ", end="\n", file=None, flush=False):
    where = user_location()
    if PARALLEL_BODIES[0]:
        raise UnsupportedError(f"print() in a prange body (at {where}): the threads would "
                               "print in any order; use range()")
    for name, v in (("sep", sep), ("end", end)):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{name} must be None or a string, not {type(v).__name__}")
    stream = "stdout" if file is None or file is sys.stdout else \
        "stderr" if file is sys.stderr else None
    if stream is None:
        raise UnsupportedError(f"print(..., file=...) to a file in a compiled function (at "
                               f"{where}): compiled code prints to sys.stdout or sys.stderr")
    nodes, values = [], []

    def value(x) -> int:
        p = asproxy(x)
        if p.node.shape:
            raise UnsupportedError(
                f"print() of an array of shape {tuple(p.shape)} in a compiled function (at "
                f"{where}): compiled code prints numbers; print the array after the call")
        if p.dtype.kind not in "biufc":
            raise UnsupportedError(f"print() of a {p.dtype} value (at {where})")
        nodes.append(p.node)
        values.append(["py" if p.weak else "np" if p.scalar else "0d", p.dtype.str])
        return len(values) - 1

    parts = []
    for a in args:
        if formatted(a):
            pieces = []
            for k, piece in enumerate(_PLACEHOLDER.split(a)):
                if k % 2 == 0:
                    pieces += [piece] if piece else []
                    continue
                x, conversion, spec = PLACEHOLDERS[int(piece)]
                pieces.append([value(x), conversion, spec])
            parts.append(["f", pieces])
        elif isinstance(a, Proxy) or symbolic_int(a):
            parts.append(["v", value(a)])
        else:
            from .creation import holds_proxy
            if holds_proxy(a):
                raise UnsupportedError(f"print() of a {type(a).__name__} holding traced values "
                                       f"(at {where}): print its numbers one by one")
            parts.append(["s", str(a)])
    spec = json.dumps({"args": parts, "values": values, "file": stream, "flush": bool(flush),
                       "sep": " " if sep is None else sep, "end": "\n" if end is None else end},
                      sort_keys=True)
    PRINTS[0] += 1
    keep_for_errors(make_node("print", nodes, (), np.bool_, where, spec=spec,
                              order=PRINTS[0]))
