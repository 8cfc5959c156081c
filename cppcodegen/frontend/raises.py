"""The user's own ``raise`` statements in branches on array values: checks that raise when
the program runs.

In: ``raise E`` of the user's function (``rewrite.py`` passes ``E`` through ``user_error``,
which marks it with the statement's file:line). Out: a branch on traced values whose body
raises while it is traced (``if np.any(x < 0): raise ValueError("negative")``) ends there
with a ``check`` node that fails whenever the branch runs, kept as one of its region's
effects (``ir.graph.REGION_EFFECTS``); the compiled program stops at it and the runtime
raises the same exception type with the same arguments (``runtime/compiled.py``
``USER_CODES``; the NumPy reference raises it too). A raise Python reaches while tracing
(a branch on a Python value, or outside every branch) raises as it did.
"""
from __future__ import annotations

import numpy as np

from ..errors import RAISE_MARK, RerunRaise
from ..ir.graph import keep_for_errors, RAISES, REGION_EFFECTS
from .capture import UNDEFINED
from .indexing import checked
from .printing import formatted, unformatted
from .proxy import asproxy, Proxy
from .sizes import is_dim

def user_error(exc, where=""):
    """``raise E``: ``E`` (an instance; a class is instantiated, as ``raise`` does) marked
    as raised by the user's statement at ``where``."""
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    if isinstance(exc, BaseException):
        try:
            setattr(exc, RAISE_MARK, where)
        except Exception:       # noqa: BLE001 -- an exception type without attributes
            pass
    return exc


def catching(branch):
    """``branch`` (a traced ``if``'s side) run so that the user's raise in it ends it with a
    check that fails when the side is taken."""
    def run():
        try:
            return branch()
        except Exception as e:
            where = getattr(e, RAISE_MARK, None)
            if where is None or not REGION_EFFECTS:
                raise
            REGION_EFFECTS[-1].append(_failing_check(e, where))
            return None
    return run


def _failing_check(exc, where):
    """A check that fails whenever it runs, raising ``exc``'s type with its arguments."""
    error = (type(exc), exc.args)
    if any(isinstance(a, Proxy) or is_dim(a) or formatted(a) for a in exc.args):
        # the message holds values known only when the program runs: there, Python runs the
        # call again and raises it as written (a call that wrote an argument cannot be run
        # again: it raises the type with the text, its values left out)
        error = (RerunRaise, (type(exc), tuple(_text(a) for a in exc.args)))
    zero = asproxy(np.int64(0))
    return error_check(zero, zero, error, where, ends=True).node


def _text(a):
    if isinstance(a, Proxy) or is_dim(a):
        return "..."
    return unformatted(a) if formatted(a) else a


def error_check(value, ok, error, where, stop=True, **attrs):
    """``value`` behind a check that raises ``error`` (its type and arguments) where ``ok`` is
    0 when it runs: the program stops there, or without ``stop`` goes on and raises the first
    such error when it returns (``ends``: always, the region ends there)."""
    from ..runtime.compiled import RECORDED_CODES, USER_CODES
    code = (USER_CODES if stop else RECORDED_CODES) + len(RAISES)
    RAISES.append(error)
    return checked(value, ok, code, where, error=error, **attrs)


def require(ok, error, where) -> None:
    """A check that raises ``error`` where ``ok`` (a traced bool or int) is False when the
    program runs, kept in the region it is made in although no value reads it."""
    ok = asproxy(ok)
    keep_for_errors(error_check(asproxy(np.int64(0)), ok if ok.dtype == np.int64 else
                                ok.astype(np.int64), error, where).node)


def bound(value, flag, name, where):
    """A read of ``name`` where some path may not have bound it (``bindings.py``): its value,
    and a check that raises UnboundLocalError where ``flag`` is False when the program runs
    (kept in the region the read is in, so it counts only where the read runs)."""
    message = (f"cannot access local variable '{name}' where it is not associated with a "
               f"value (at {where})")
    if value is UNDEFINED or not isinstance(flag, Proxy) and not flag:
        e = UnboundLocalError(message)      # (a construct that did not carry it: tried
        e.name = name                       # again carrying it, control.py, or with the
        raise e                             # type its other side gives, carried.py)
    if isinstance(flag, Proxy):
        require(flag, (UnboundLocalError, (message,)), where)
    return value
