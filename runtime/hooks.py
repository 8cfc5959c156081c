"""Intermediate hooks: see every buffer a compiled function materializes.

In: functions ``fn(name, value)`` registered with ``intermediate_hook``. Out: while one is
registered, code compiled with the option ``generate_intermediate_hooks`` calls it once per
materialized buffer, right after the C++ entry returns, in the execution order of the
stages that wrote them::

    f = cppcodegen.compile(fn, options={"generate_intermediate_hooks": True})
    seen = {}
    with cppcodegen.hooks.intermediate_hook(lambda name, value: seen.setdefault(name, value.copy())):
        f(x)

Names are stable and tied to the graph: ``"<buffer>:<node>:<op>"``, e.g. ``"buf3:%7:exp"``
(the loop-IR buffer, the graph node label as printed by ``print(graph)`` / ``explain``, and
the node's op; a reduction shows its kind, ``"buf1:%2:max"``). The same function, arguments
and options give the same names in every process.

What is reported: every kernel output and every temporary buffer written to memory, as a
read-only ``numpy.ndarray`` (copy it to keep it past the hook). Not reported: pointwise
values fused into their consumers (they never exist as arrays), reductions that a kernel
keeps in a local variable (e.g. the row max of a fused softmax), inputs, constants, and
outputs that are just an input passed through. With the option off, the compiled code
carries no hook calls at all.

The hook list is process-wide (not per thread). While the hooks run it is emptied, so a
hook that itself calls compiled code does not recurse into hooks; it is restored afterwards,
also when a hook raises.
"""
from __future__ import annotations

import contextlib
import threading

__all__ = ["intermediate_hook", "run_intermediate_hooks", "active"]

INTERMEDIATE_HOOKS: list = []
_lock = threading.Lock()


@contextlib.contextmanager
def intermediate_hook(fn):
    """Append ``fn(name, value)`` to the process-wide hook list for the ``with`` block."""
    if not callable(fn):
        raise TypeError(f"intermediate_hook expects a callable, got {type(fn).__name__}")
    with _lock:
        INTERMEDIATE_HOOKS.append(fn)
    try:
        yield fn
    finally:
        with _lock:
            # remove this registration (the last one, if fn was registered twice)
            for i in range(len(INTERMEDIATE_HOOKS) - 1, -1, -1):
                if INTERMEDIATE_HOOKS[i] is fn:
                    del INTERMEDIATE_HOOKS[i]
                    break


def active() -> bool:
    """Is any hook registered (and not currently running)?"""
    return bool(INTERMEDIATE_HOOKS)


def run_intermediate_hooks(name: str, value) -> None:
    """Call every registered hook with ``(name, value)``, in registration order."""
    global INTERMEDIATE_HOOKS
    if not INTERMEDIATE_HOOKS:
        return
    with _lock:
        hooks = INTERMEDIATE_HOOKS
        INTERMEDIATE_HOOKS = []
    try:
        for fn in list(hooks):
            fn(name, value)
    finally:
        with _lock:
            # hooks registered by a hook while it ran are kept, after the restored ones
            INTERMEDIATE_HOOKS = hooks + INTERMEDIATE_HOOKS
