"""The types a loop's or a branch's carried values settle on after one trace of its
regions (``carried.Carried._attempt``).

In: the construct (its slots, their types so far) and the values each traced region ends
with. Out: the unified type per slot (None: not carried; a value made in each iteration and
dropped), whether a shrinking array's lengths were solved (traced again), and the flag slots
added for Python numbers bound on some paths only; NumPy's rules refuse what cannot be one
type (a branch's two dtypes, a shape that changes).
"""
from __future__ import annotations

from ..errors import TraceError
from . import pyflags, shrinking
from .capture import UNDEFINED
from .carried_types import (holding_ints, internal_name, kind_of, ONE_TYPE, Peel,
                            refuse_dropped_none, same_size_always, shapes_text, Slot, type_of,
                            unify, widened)
from .proxy import wrap
from .sizes import run_time_size


def settle_types(c, bodies, loop: bool):
    """(the types per slot, solved, flags) of the construct ``c`` after ``bodies``."""
    new, solved, flags = [], False, []
    for i, slot in enumerate(c.slots):
        if slot.flag_of is not None:
            new.append(c.types[i])
            continue
        results = [type_of(t[2][i]) for t in bodies]
        fresh = slot.init is UNDEFINED or (loop and slot.name in c.fresh)
        t = c.types[i]
        if not loop and "other" in results and any(isinstance(r, tuple) for r in results):
            kinds = " and ".join(sorted({kind_of(b[2][i]) for b in bodies}))
            raise TraceError(f"{slot.describe(none=True)} is {kinds} on the two sides of "
                             f"the branch at {c.where}; {ONE_TYPE}")
        if fresh and slot.dropped or fresh and any(
                r in ("selection", "other") or isinstance(r, tuple) and (any(
                run_time_size(d) for d in r[2]) or isinstance(t, tuple) and (
                len(r[2]) != len(t[2]) or not all(map(same_size_always, r[2], t[2]))))
                for r in results):
            refuse_dropped_none(slot.name, [b[2][i] for b in bodies], c.names, c.where)
            c.dropped_fresh |= slot.init is not UNDEFINED
            c.dropped_new |= slot.init is UNDEFINED
            slot.dropped = True
            new.append(None)            # `seg = a[lo[i]:hi[i]]`, `j = np.arange(i + 1)`
            continue                    # made in each iteration: not carried (unbound
                                        # after the loop, as a name first bound in it;
                                        # also one of another shape than before it, and
                                        # a tuple: `t = helper(x[i])`)
        dtypes = {r[0] for r in results if isinstance(r, tuple) and not r[3]}
        if not loop and len(dtypes) > 1 and all(r is None or isinstance(r, tuple) and
                                                not r[3] for r in results):
            raise TraceError(         # (img / 257.0 on one side: a float64 array where
                f"{slot.describe()} is an array of "          # Python keeps uint16)
                f"{' and '.join(sorted(map(str, dtypes)))} on the two sides of the "
                f"branch at {c.where}, so its dtype would depend on the values; the "
                "compiled function gives an array one dtype: make both sides one (e.g. "
                ".astype() on one side)")
        results = [shrinking.fitted(c, slot, t, r) for r in results]
        first = t
        try:
            for r in results:
                t = unify(t, r)
        except ValueError:
            if loop and shrinking.shrinks(c, slot, t, results):
                solved = True               # traced again with the solved lengths
                new.append(c.types[i])
                continue
            t = "shape"
        if "other" in results or "selection" in results or t == "shape":
            raise TraceError(f"{slot.describe(none=None not in results)} changes its "
                             f"shape or kind in the loop or branch at {c.where} (shapes "
                             f"{shapes_text(results)}); a carried value keeps one shape")
        if loop and c.induction is not None and not fresh and widened(first, t):
            raise Peel(c.where, slot.describe())    # (NumPy's first iteration:
                                                        # in the narrow dtype)
        if not loop and None in results and not internal_name(slot.name) and \
                slot.name not in c.keep:
            t = None                        # an if that binds it on one way only
        ends = [b[2][i] for b in bodies if b[2][i] is not UNDEFINED] + (
            [slot.init] if slot.init is not UNDEFINED else [])  # (a side that keeps it)
        t = holding_ints(t, ends)
        new.append(t)
        flags += [(slot, kind) for kind in pyflags.needed(t, ends, slot.flags)]
    for slot, kind in flags:    # a Python number (int) on some paths only: a flag too
        start = pyflags.KINDS[kind][0](slot.init) if slot.init is not UNDEFINED else False
        f = Slot(proxy=wrap(pyflags.start_node(start), scalar=True),
                  init=pyflags.start_node(start))
        f.flag_of, f.flag_kind, slot.flags[kind] = slot, kind, f
        c.slots.append(f)
        c.types.append((pyflags.BOOL, False, (), True))
        new.append(c.types[-1])
    return new, solved, flags
