"""The values a loop or a branch carries (``carried.py``), their slots and their types.

``Slot`` is one carried value: a name the body assigns, or an array it updates in place.

``type_of`` gives a value's carried type: (dtype, weak, shape, scalar) of a number or an
array, None for a name not bound yet, "selection" for a lazy ``x[mask]``, "other" for what
cannot be carried (None, lists, strings). ``unify`` gives the type two paths' values both
fit, as NumPy promotes them (Python scalars weak, NEP 50); shapes must be the same in every
call the trace serves.
"""
from __future__ import annotations

import numpy as np

from ..errors import MixedReturns, TraceError
from .bindings import FLAG
from .capture import UNDEFINED
from .iteration import symbolic_int
from .proxy import Proxy
from .pyflags import flag, int_flag, none_flag
from .selection import is_selection
from .sizes import same_size


class Slot:
    """One carried value: a name the body assigns, or an array it updates in place."""

    def __init__(self, name=None, proxy=None, init=None):
        self.name, self.proxy, self.init = name, proxy, init
        array = isinstance(init, Proxy)
        self.alias = name is not None and array and init._base is None and \
            not (init.scalar or init.weak)     # (a number: no update in place reaches it)
        self.init_node = init.node if array else None
        self.placeholder = None     # the fresh proxy bound to the name (not an alias)
        self.taken = False          # its first array updated in place, then rebound
        self.kept = False           # an alias rebound on some sides of a branch, not all
        self.dropped = False        # made afresh in each iteration: not carried
        self.lengths = None         # a shrinking array's length per axis (shrinking.py)
        self.exit = None            # ... and its lengths after the loop
        self.flags = {}             # kind -> its flag's slot (a Python number on some paths,
                                    # a Python int on some: pyflags.KINDS)
        self.flag_of = None         # (a flag's slot: the value's, pyflags.py)
        self.flag_kind = None       # (... and which kind of flag it is)

    def describe(self, none=False) -> str:
        if self.name and self.name.startswith("__ccg_ret"):
            return "the value returned" + ("" if none else
                                           " (None on a path without a return?)")
        return f"variable '{self.name}'" if self.name else "an array updated in place"


class Snapshot:
    """A traced value as it was when a region ended (later regions rebind the proxies)."""

    def __init__(self, proxy):
        self.proxy, self.node = proxy, proxy.node
        self.dtype, self.weak, self.scalar = proxy.dtype, proxy.weak, proxy.scalar
        self.pyflag = flag(proxy)       # (a Python number then? pyflags.py)
        self.intflag = int_flag(proxy)  # (a Python int then?)
        self.noneflag = none_flag(proxy)    # (a value returned as None then?)


def type_of(value):
    """(dtype, weak, shape, scalar) of a carried value; None for UNDEFINED; "other" for what
    cannot be carried (lists, functions, ...)."""
    if value is UNDEFINED:
        return None
    if is_selection(value):                 # x[mask], its length known when it runs only
        return "selection"
    if isinstance(value, (Snapshot, Proxy)):
        return (value.dtype, bool(value.weak), tuple(value.node.shape), bool(value.scalar))
    if isinstance(value, (bool, np.bool_)):     # (a Python bool: weak, as NEP 50 has it,
        return (np.dtype(bool), isinstance(value, bool), (), True)  # returned as a bool)
    if isinstance(value, np.generic):      # (before float: np.float64 is a float, but a
        return (value.dtype, False, (), True)   # strong one)
    if isinstance(value, int) or symbolic_int(value):
        return (np.dtype(np.int64), True, (), True)
    if isinstance(value, float):
        return (np.dtype(np.float64), True, (), True)
    if isinstance(value, complex):
        return (np.dtype(np.complex128), True, (), True)
    return "other"


def unify(a, b):
    """The type both values fit: NumPy's promotion, Python scalars weak (NEP 50)."""
    if a is None or b is None:
        return a if b is None else b
    (da, wa, sa, ca), (db, wb, sb, cb) = a, b
    if len(sa) != len(sb) or not all(same_size_always(x, y) for x, y in zip(sa, sb)):
        raise ValueError("shape")
    if wa != wb:                    # a weak Python scalar takes the strong dtype's kind rules
        strong, weak = (db, da) if wa else (da, db)
        dt = np.result_type(strong, weak.type(0).item())
    else:
        dt = np.result_type(da, db)
    return (np.dtype(dt), wa and wb, sa, ca or cb)


def holding_ints(t, ends):
    """Type ``t`` (unified) widened to hold the Python ints among ``ends``, the value's
    versions: ``best = -1`` then ``best = img[i, j]`` of a uint8 image is a uint8 by NumPy's
    promotion, but -1 in uint8 is 255, and no pixel was ever brighter. int16 holds both, and
    compares as Python does."""
    if not isinstance(t, tuple) or t[0].kind not in "iu" or t[1]:
        return t
    dt, info = t[0], np.iinfo(t[0])
    for v in ends:
        if isinstance(v, Proxy) and v.weak and v.node.op == "const":
            v = v.node.attr("value")
        if type(v) is int and not info.min <= v <= info.max:
            dt = np.promote_types(dt, np.min_scalar_type(v))
    return t if dt == t[0] else (dt,) + t[1:]


def same_size_always(x, y) -> bool:
    """Sizes equal in every call this trace serves: the same expression, or two symbols
    equal in this call (``a.shape[0]`` and ``b.shape[0]`` of ``np.where(nz, b, a)``: guarded,
    as broadcasting them is); a size that changes with a loop's index never is."""
    if x == y:
        return True
    try:
        return same_size(x, y)
    except Exception:       # noqa: BLE001 -- loop-dependent or data sizes: not provably equal
        return False


ONE_TYPE = ("compiled values keep one type on every path: use a value that stands for none "
            "(np.nan, -1), with a flag if needed, or raise an exception")


def exact_in(node, dtype, where):
    """``node``, an int carried in float ``dtype`` (``m = -np.inf`` then ``m = x[i]`` of an
    int64 array): behind a check that the float holds it exactly, else the call runs as
    Python (``InexactCarry``), which keeps the int; ints the float always holds as they are."""
    from ..errors import InexactCarry
    from .proxy import wrap
    from .raises import error_check
    if node.dtype.kind not in "iu" or np.dtype(dtype).kind != "f":
        return node
    limit = 2 ** (np.finfo(dtype).nmant + 1)
    if np.iinfo(node.dtype).max <= limit:
        return node
    v = wrap(node, scalar=True)
    ok = np.less_equal(v, limit)
    if node.dtype.kind == "i":
        ok = np.logical_and(ok, np.greater_equal(v, -limit))
    error = (InexactCarry, (f"{InexactCarry.reason} (at {where})",))
    return error_check(v, ok, error, where, stop=False).node


def kind_of(v) -> str:
    """What a value is, in an error's words."""
    if v is None:
        return "None"
    return "a number or an array" if isinstance(v, (Snapshot, Proxy, int, float, complex,
                                                   np.generic)) else f"a {type(v).__name__}"


def refuse_dropped_none(name, values, names, where):
    """A name bound to None in a loop or branch (``values``: its value at each end) and read
    where it may be unbound (its bound-flag among the construct's ``names``), or the value
    returned: not carried, the read would take a placeholder (a zero array where Python has
    None), so it is refused; so is a value returned that a loop cannot carry (a tuple where
    another return gives a number: an ``if`` after the loop would bind it on one side only)."""
    if name and name.startswith("__ccg_ret") and not any(v is None for v in values):
        kinds = " and ".join(sorted({kind_of(v) for v in values if v is not UNDEFINED}))
        raise MixedReturns(f"the value returned in the loop at {where} is {kinds}, which a "
                           "compiled loop does not carry (a return elsewhere gives it "
                           f"another kind or shape); {ONE_TYPE}")
    if not name or not any(v is None for v in values):
        return
    if name.startswith("__ccg_ret"):
        raise MixedReturns(f"the value returned is None on a path through the loop or branch "
                           f"at {where} and a value on another; {ONE_TYPE}")
    if FLAG + name in names:
        raise TraceError(f"variable '{name}' is None on a path through the loop or branch at "
                         f"{where}; {ONE_TYPE}")


def internal_name(name) -> bool:
    """A variable of the rewritten code (``__ccg_ret``), read only where it was bound: an
    ``if`` that binds it on one way only still carries it (unread on the other way)."""
    return bool(name) and name.startswith("__ccg_")


class Peel(Exception):
    """A ``for`` loop whose first iteration widens a NumPy value it carries (``z = z * z +
    c`` of a complex64 ``z`` and a complex128 ``c``): NumPy computes that iteration's ``z *
    z`` in the narrow dtype, a loop carrying the wide one would not. The trace runs again
    with the loop's first iteration run by Python before it (``control.for_stmt``), or its
    first few (``alpha`` widened by the first, ``beta = alpha * beta`` by the second: PEELS)."""

    def __init__(self, where: str, what: str = "a carried value"):
        super().__init__(f"each of the first {PEELS} iterations of the loop at {where} widens "
                         f"{what} (a float32 or complex64 value mixed with wider ones): "
                         "give it its final dtype before the loop (np.float64(...))")
        self.where = where


PEELS = 4           # the most iterations Python runs before a loop whose carried dtypes widen


def shapes_text(results) -> str:
    """The shapes or kinds of a carried value's versions, for an error message."""
    return ", ".join(dict.fromkeys(f"{r[0]} {r[2]}" if isinstance(r, tuple) and len(r) == 4
                                   else str(r) for r in results))     # (type_of: dtype, shape)


def taken_over(slot) -> bool:
    """May the loop carry ``slot``'s name by value although its body updates the array the
    name starts bound to before rebinding it (``C[:i + 1] = f(C); C = C[:-1]``)? When that
    array was made in the function (not an argument, not a view): the carry buffer holds it
    and the update, and a read of the array after the loop unrolls the loop instead."""
    init = slot.init
    return isinstance(init, Proxy) and init.arg is None and init._base is None and \
        slot.init_node is not None and slot.init_node.op != "input"


def widened(before, after) -> bool:
    """Does a carried NumPy value (not a Python number) of type ``before`` take another
    dtype, ``after``, after an iteration?"""
    return isinstance(before, tuple) and isinstance(after, tuple) and not before[1] and \
        before[0] != after[0]
