"""The user's ``try``/``except`` statements: Python runs them while tracing, with no array
work inside them.

In: the calls ``rewrite.Converter.guarded_try`` puts around each ``try`` with handlers
(``enter_try`` before it, ``try_handler`` first in each handler, ``leave_try`` after it).
Out: an UnsupportedError naming the statement as soon as its body or a handler would make a
node (``ir/graph.make_node``). The compiled program cannot catch the errors its operations
raise when it runs, so the handler the first call's values chose while tracing would stand
for every call (a positive-definiteness test by ``np.linalg.cholesky`` gave the first call's
answer to later calls). The refusal stands even where a handler catches it (``except
Exception``, a bare ``except``): the handler and the end of the statement raise it again,
for every statement around it too.
"""
from __future__ import annotations

from ..errors import UnsupportedError
from ..ir.graph import TRYING
from .sizes import is_dim


class _Try:
    def __init__(self, where: str):
        self.where, self.error = where, None

    def refuse(self):
        _refuse(self.where)


def _refuse(where: str):
    error = UnsupportedError(
        f"array operations inside try/except (at {where}): the compiled program cannot catch "
        "the errors they raise when it runs, so the except clause would be the one the first "
        "call took; move the array work out of the try, or test for the failure with a value "
        "(np.all(np.linalg.eigvalsh(A) > 0), b == 0)")
    for t in TRYING:            # (the statements around it: refused too)
        t.error = t.error or error
    raise error


def enter_try(where: str, names=(), scope=None) -> None:
    """A try statement starts; ``names``: the names its body reads, bound in ``scope``."""
    from .creation import holds_proxy
    if scope is not None and any(holds_proxy(scope[n]) or is_dim(scope[n])
                                 for n in names if n in scope):
        _refuse(where)              # (a traced value read: its errors come when it runs)
    TRYING.append(_Try(where))


def try_handler() -> None:
    if TRYING and TRYING[-1].error is not None:
        raise TRYING[-1].error


def leave_try() -> None:
    t = TRYING.pop()
    if t.error is not None:
        raise t.error
