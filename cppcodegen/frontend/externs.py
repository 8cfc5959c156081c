"""Any other NumPy function on traced arrays: NumPy's own call between compiled kernels.

In: a NumPy function and its arguments (proxies among them). Out: ``extern`` nodes (one per
array the function returns) holding a ``runtime.extern.ExternCall``: the call with slots
where the traced arrays go. Output shapes and dtypes are learned by running the function on
the values of this call (the trace so far run with NumPy: ``np.linalg.cholesky`` sees the
user's SPD matrix), or on stand-in arrays where those are not known (a loop body). For
functions whose output shape depends on the values (``np.nonzero``, ``x[mask]``) the shape is
this call's (speculated, checked at run time).
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import DataDependentError, UnsupportedError, user_location
from ..ir.graph import COUNTED, keep_for_errors, MADE, make_node, toposort
from .counted import COUNT, counted_shapes
from .proxy import asproxy, Proxy, unsupported, wrap
from .extern_shapes import stand_in_call, symbolic_shapes
from .sizes import current_env


# functions whose output shape depends on the values: compiled for the shape they give on
# the first call's values (``extern_call(speculate=True)``)
SPECULATED = {"nonzero", "argwhere", "flatnonzero", "extract", "compress", "unique",
              "unique_values", "trim_zeros", "axis_slice", "bincount"}
# other functions never run as extern steps
DATA_DEPENDENT = {"unique_counts", "unique_inverse", "unique_all",
                  "delete", "insert", "select", "histogram_bin_edges", "place",
                  "put", "putmask", "copyto", "fill_diagonal", "save", "savez", "savetxt",
                  "array_equal", "array_equiv", "allclose", "isclose", "array2string",
                  "array_repr", "array_str", "shape", "ndim", "size"}
# functions whose output shapes and dtypes follow from their inputs' for every value (a
# value may make them raise, when the program runs): learned on stand-ins, without running
# the trace so far with NumPy (which runs its loops in Python: seconds for a loop of 10^5
# trips before an np.sort)
VALUE_FREE = {f"numpy.{f}" for f in (
    "sort argsort partition argpartition lexsort median percentile quantile nanmedian "
    "nanpercentile nanquantile convolve correlate interp searchsorted digitize polyval "
    "cross kron trapezoid gradient linalg.norm linalg.det linalg.slogdet linalg.inv "
    "linalg.solve linalg.matrix_power linalg.qr linalg.svd linalg.eigh linalg.eigvalsh "
    "linalg.svdvals").split()}
WARNED: set = set()


def extern_call(func, args, kwargs, speculate=False, where=None):
    """Any other NumPy function on traced arrays: a call to NumPy itself between compiled
    kernels, when its output shapes and dtypes follow from its inputs' (found by running it
    once on this call's values, the trace so far evaluated with NumPy, so preconditions on
    values hold; on stand-in arrays where those are not known). Warns once per function.

    With ``speculate`` (``np.nonzero``, ``x[mask]``, ...: the output shape depends on the
    values) the shapes are those of this call: the traced graph so far is run with NumPy on
    the call's arguments. The compiled code is right for every call whose values give the
    same shapes; a call that gives others is detected at the step and runs the whole function
    with NumPy instead (``runtime.compiled``), with a warning. ``where``: the user's line the
    call is made for (a lazy ``x[mask]`` computed later: the line that wrote it)."""
    from ..runtime.extern import ExternCall, Slot, qualified_name
    from .iteration import symbolic_int
    name = qualified_name(func)
    speculate = speculate or func.__name__ in SPECULATED
    # (np.linalg.eig/eigvals: a complex or a real result, as the values say; eigh/eigvalsh
    # are real whatever the values)
    if func.__name__ in DATA_DEPENDENT or "random" in name or \
            name.endswith(("linalg.eig", "linalg.eigvals")):
        raise UnsupportedError(f"{name} is not supported by cppcodegen "
                               f"(called at {user_location()})")
    proxies = []

    def template(x):
        if isinstance(x, Proxy):
            proxies.append(x)
            return Slot(len(proxies) - 1, py=x.weak and not x.shape)
        if isinstance(x, np.ndarray) and x.size > 16:
            proxies.append(asproxy(x))
            return Slot(len(proxies) - 1)
        if isinstance(x, tuple):
            return tuple(template(v) for v in x)
        if isinstance(x, list):
            return [template(v) for v in x]
        if isinstance(x, dict):
            return {k: template(v) for k, v in x.items()}
        if callable(x) and not isinstance(x, (np.dtype, type)):
            unsupported(f"{name} with a function argument")
        if symbolic_int(x):             # a size NumPy's call takes as an int (np.bincount's
            return int(x)               # minlength=k of a dynamic shape): this call's, guarded
        return x
    targs, tkwargs = template(tuple(args)), template(dict(kwargs))
    from .indexing import GUARDS        # (indexing imports this module)
    guard = GUARDS[-1] if GUARDS else None  # one side of `x if c else y`: run where taken
    env = current_env()
    symbolic = env is not None and any(not isinstance(d, int) for p in proxies
                                       for d in p.node.shape)
    rule = None if not speculate or MADE or guard is not None or TraceState.args is None \
        else counted_shapes(name, targs, tkwargs, proxies)     # (its count: a symbol)
    if rule is not None:
        symbolic = False
    if symbolic and (speculate or TraceState.args is None):
        _pin(proxies)
        symbolic = False
    result = None
    if (name in VALUE_FREE or name.startswith("numpy.fft.")) and not speculate:
        try:                            # (shapes that follow from the inputs': stand-ins)
            result = stand_in_call(func, targs, tkwargs, proxies, [
                tuple(env.hint(d) if env is not None else d for d in p.node.shape)
                for p in proxies])      # (symbolic sizes: this call's, not pinned)
        except Exception:               # noqa: BLE001 -- NumPy's error for these values:
            pass                        # from a run on them, below
    if result is None and rule is not None and _after_loops(proxies):
        result = stand_in_call(func, targs, tkwargs, proxies, [     # (a count: no values
            tuple(env.hint(d) if env is not None else d for d in p.node.shape)  # needed; the
            for p in proxies])          # loops before it would run in Python; this call's
        count_hint = 2                  # sizes, not pinned)
    else:
        count_hint = None
    if result is None:
        arrays = values_now(proxies)
        if arrays is not None:          # this call's values: a precondition on them holds
            try:                                            # (np.linalg.cholesky of SPD A)
                result = _run(func, targs, tkwargs, arrays)
            except Exception:           # noqa: BLE001 -- on a side not taken: stand-ins
                if guard is None:
                    raise
                result = _stand_in_call(func, name, targs, tkwargs, proxies)
        elif speculate:
            raise DataDependentError(f"{name} of random or unknown values has a data-"
                                     f"dependent output shape (at {user_location()}); call "
                                     "it outside the compiled function")
        else:
            result = _stand_in_call(func, name, targs, tkwargs, proxies)
    several = isinstance(result, (tuple, list))     # np.array_split, np.meshgrid: a list
    results = result if several else (result,)
    shapes = [np.shape(r) for r in results]
    count = None if rule is None else _count_symbol(rule, results, count_hint)  # (one for all:
    recount = rule is not None and count is None    # np.nonzero's; a count of 0 or 1 stays
    if count is not None:                           # this call's, as sizes 0 and 1 do, and
        shapes = [tuple(count if d == COUNT else d for d in s) for s in rule]   # another
                                                    # count traces again)
    if symbolic:                        # axes that follow an input size (extern_shapes.py);
        found = symbolic_shapes(func, targs, tkwargs, proxies, shapes)   # else pinned
        if found is None:
            _pin(proxies)
        shapes = found or shapes
    outs = []
    for k, r in enumerate(results):
        r = np.asarray(r)
        if r.dtype.kind not in "biufc" or r.dtype.itemsize > 16:
            unsupported(f"{name} returning {r.dtype}")
        call = ExternCall(func, targs, tkwargs, k if several else None,
                          guarded=guard is not None,
                          counted=() if count is None else ((count.name, rule[k].index(COUNT)),),
                          recount=recount)
        inputs = [p.node for p in proxies] + ([asproxy(guard).node] if guard is not None else [])
        node = make_node("extern", inputs, shapes[k], r.dtype, where or user_location(),
                         call=call)
        if count is not None and current_env().counts.get(count) is None:
            current_env().counts[count] = node      # (what uses the count runs after it)
        if speculate:       # run in every call, its shape checked, though only that shape
            keep_for_errors(node)   # be used (``y.shape[0]`` of y = x[mask]: this call's)
        outs.append(wrap(node, scalar=not r.shape))
    if name not in WARNED and not getattr(func, "quiet", False):
        WARNED.add(name)
        extra = (" (its output shape depends on the values: compiled for this call's shape, "
                 "other shapes run the function with NumPy)") if speculate and count is None \
            else ""
        warnings.warn(f"cppcodegen: {getattr(func, 'shown', name)} runs as a NumPy call "
                      f"between compiled kernels"
                      f"{extra} (at {where or user_location()})", stacklevel=3)
    if not several:
        return outs[0]
    return type(result)(*outs) if hasattr(result, "_fields") else type(result)(outs)


def _count_symbol(rule, results, hint=None):
    """The count symbol of a call whose outputs' ``rule`` axes (COUNT) are NumPy's count of the
    values (``counted.py``), with this call's count as its hint (or ``hint``, where this
    call's values are not computed); None for a count of 0 or 1 (broadcasting depends on
    them: the build is for that count)."""
    from .iteration import _env
    from .sizes import symbolic
    count = int(np.shape(results[0])[rule[0].index(COUNT)]) if hint is None else hint
    if count < 2:
        return None
    env = _env()
    k = len(env.counts)
    sym = symbolic().size_symbol(f"{COUNTED}{k}")
    env.hints[sym] = count
    env.counts[sym] = None
    return sym


def _after_loops(proxies) -> bool:
    """Do the traced arrays come from a compiled loop or branch? (Their values now would be
    the reference interpreter's run of it in Python: minutes for a sieve of 10^6.)"""
    from ..ir.graph import CONTROL_OPS
    return any(n.op in CONTROL_OPS for n in toposort([p.node for p in proxies]))


def values_now(proxies):
    """The values the traced arrays have in this call (the trace so far run with NumPy on
    the call's arguments), or None where they are not known: random numbers, a loop body's
    carried values, no arguments at hand."""
    from ..checking.reference import evaluate_node
    roots = [p.node for p in proxies]
    nodes = toposort(roots)
    if TraceState.args is None or any(n.op in ("random", "carry") for n in nodes):
        return None
    values = {}
    env = current_env()             # symbolic sizes and integer arguments: this call's values
    sizes = {str(sym): int(v) for sym, v in env.hints.items()} if env is not None else {}
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for n in nodes:
                values[id(n)] = evaluate_node(n, [values[id(i)] for i in n.inputs],
                                              TraceState.args, sizes)
    except IndexError as e:             # an index the plain function reads is out of range
        if n.op != "gather":            # (a gather reads only what Python reads: NumPy's
            return None                 # error, at the line that indexed)
        raise IndexError(f"{e} (at {n.where})") from None
    except Exception:                   # noqa: BLE001 -- not evaluable here: stand-ins
        return None
    return [values[id(r)] for r in roots]


def _run(func, targs, tkwargs, arrays):
    """``func`` on ``arrays``; its error (NumPy's for these values) names the user's line."""
    from ..runtime.extern import fill
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return func(*fill(targs, arrays), **fill(tkwargs, arrays))
    except Exception as e:
        try:
            error = type(e)(f"{e} (at {user_location()})")
        except Exception:               # noqa: BLE001 -- an error type with other arguments
            raise e from None
        raise error from None


def _pin(proxies):
    """The arrays' symbolic sizes pinned to this call's (guarded): NumPy's call gets ints."""
    for p in proxies:
        tuple(int(d) for d in p.shape)


class TraceState:
    args = None         # the arguments of the call being traced (for speculated shapes)
    inputs = ()         # ... their input nodes


def _stand_in_call(func, name, targs, tkwargs, proxies):
    """Run ``func`` on stand-ins of the traced arrays (zeros, then random values) to learn
    its output shapes and dtypes, where this call's values are not known (in a loop body)."""
    try:
        return stand_in_call(func, targs, tkwargs, proxies, [p.shape for p in proxies])
    except Exception as e:              # noqa: BLE001 -- reported with the user's line
        raise UnsupportedError(f"{name} could not be run on traced arrays ({e}) "
                               f"(at {user_location()})") from None
