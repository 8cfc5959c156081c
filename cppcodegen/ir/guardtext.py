"""Sizes and guards as text: for people (``guard_text``: ``n0 - 2 >= 3``, in recompile
messages) and for the runtime (``pyexpr``: Python source the runtime evaluates with the sizes
bound to names, without sympy)."""
from __future__ import annotations

import numpy as np
import sympy

from ..errors import UnsupportedError


def guard_text(rel) -> str:
    """A guard for people: ``n0 - 2 >= 3`` rather than ``n0 - 5 >= 0``."""
    ops = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Ge: ">=", sympy.Gt: ">"}
    op = next((o for cls, o in ops.items() if isinstance(rel, cls)), None)
    if op is None or rel.rhs != 0:
        return str(rel)
    const, rest = sympy.expand(rel.lhs).as_coeff_Add()
    if rest == 0:
        return str(rel)
    if rest.could_extract_minus_sign():
        rest, const = -rest, -const
        op = {">=": "<=", ">": "<"}.get(op, op)
    return f"{sympy.sstr(rest)} {op} {sympy.sstr(-const)}"


def pyexpr(expr) -> str:
    """Python source for a size expression or a guard, evaluated by the runtime with the sizes
    bound to names (``runtime.compiled.size_eval``): no sympy there."""
    if isinstance(expr, (int, np.integer)):
        return str(int(expr))
    if expr is sympy.true:
        return "True"
    if expr is sympy.false:
        return "False"
    if expr.is_Integer:
        return str(int(expr))
    if expr.is_Rational:
        return f"Fraction({expr.p}, {expr.q})"
    if expr.is_Symbol:
        return expr.name
    if isinstance(expr, sympy.Add):
        return "(" + " + ".join(pyexpr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Mul):
        return "(" + " * ".join(pyexpr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer:
        e = int(expr.exp)
        base = pyexpr(expr.base)
        return f"({base} ** {e})" if e > 0 else f"Fraction(1, {base} ** {-e})"
    if isinstance(expr, sympy.floor):
        return f"floor({pyexpr(expr.args[0])})"
    if isinstance(expr, sympy.ceiling):
        return f"ceil({pyexpr(expr.args[0])})"
    if isinstance(expr, sympy.Max):
        return "max(" + ", ".join(pyexpr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Min):
        return "min(" + ", ".join(pyexpr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Mod):
        return f"({pyexpr(expr.args[0])} % {pyexpr(expr.args[1])})"
    ops = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Ge: ">=", sympy.Gt: ">", sympy.Le: "<=",
           sympy.Lt: "<"}
    for cls, op in ops.items():
        if isinstance(expr, cls):
            return f"({pyexpr(expr.lhs)} {op} {pyexpr(expr.rhs)})"
    raise UnsupportedError(f"size expression {expr} cannot be evaluated at run time")

