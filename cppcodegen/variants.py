"""Which compiled variant serves a call: the specs a new variant is compiled for (static,
or with the sizes and Python ints in which calls differ read at each call: "automatic
dynamic"), whether a call passes a guarded variant's guards, and the records of recompiles.
"""
from __future__ import annotations

from dataclasses import dataclass

from .frontend import signature


class RecompileLimitWarning(UserWarning):
    """A function reached ``recompile_limit`` and now runs uncompiled for new signatures."""


@dataclass(frozen=True)
class Recompile:
    function: str
    reason: str            # the guard that failed, with old and new values
    dynamic: bool          # the new variant has symbolic sizes
    variants: int          # variants after this compile

    def __str__(self):
        kind = "with symbolic sizes" if self.dynamic else "specialized"
        return (f"cppcodegen: recompiling {self.function} ({kind}; variant {self.variants}): "
                f"{self.reason}")


def value_sizes(variant) -> tuple:
    """(name, argument index) of the integer arguments a variant reads as sizes."""
    plan = getattr(variant, "plan", None)
    return tuple((name, i) for name, i, _, kind in getattr(plan, "sizes", ()) if kind == 2)


def fits(dspecs, guards, values, specs, args):
    """(True, "") when this call fits a guarded variant (symbolic sizes, or integer
    arguments read as sizes: ``values``), else (False, why not)."""
    from .runtime.sizes import bind, evaluate
    for i, (d, s) in enumerate(zip(dspecs, specs)):
        if d[0] != "darray" and d != s and not (d == signature.DYNAMIC_INT and
                                                 signature.python_int(s)):
            return False, signature.describe_change((d,), (s,), first=i)
    if len(dspecs) != len(specs):
        return False, f"{len(specs)} arguments, compiled for {len(dspecs)}"
    env, why = bind(dspecs, args)
    if env is None:
        return False, why
    env.update((name, int(args[i])) for name, i in values)
    for text, code in guards:
        if not evaluate(code, env):
            return False, f"guard {text} failed with {values_text(env)}"
    return True, ""


def values_text(env) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sorted(env.items()) if not k.startswith("t"))


def choose_specs(variants: dict, dynamic, backend: str, specs, args):
    """The specs to compile for: static, or with symbolic sizes (``dynamic=True``; dims
    marked with ``mark_dynamic``; or, by default, the dims in which this call differs from
    an earlier variant of the same dtypes and ranks: "automatic dynamic")."""
    if dynamic is False or backend != "cpp":
        return specs
    if dynamic:
        return signature.classify_dynamic(args)
    dims = {i: set(d) for i, a in enumerate(args) if (d := signature.marked_dims(a))}
    ints = set()                # Python ints of another value: read at each call
    for old in variants:
        if old and not isinstance(old[0][0], str):      # a dynamic key: (specs, guards)
            old = old[0]
        if not signature.same_structure(old, specs):
            continue
        ints |= signature.dynamic_ints(old, specs)
        for i, (o, n) in enumerate(zip(old, specs)):
            if n[0] == "array" and o[0] in ("array", "darray"):
                dims.setdefault(i, set()).update(
                    d for d, (x, y) in enumerate(zip(o[2], n[2])) if x != y)
    dims = {i: d for i, d in dims.items() if d}
    out = signature.classify_dynamic(args, dims) if dims else specs
    return tuple(signature.DYNAMIC_INT if i in ints else s for i, s in enumerate(out))
