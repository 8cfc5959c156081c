"""Compilation callbacks: run user code when compilation starts and when it ends.

In: functions registered with ``on_compile_start`` / ``on_compile_end`` (decorators) or
``callback_handler.register_start_callback`` / ``register_end_callback``. Out: each is called
as ``fn(trigger, compile_id)`` around compilations::

    @cppcodegen.callback.on_compile_start
    def started(trigger, compile_id):
        print("compiling", trigger.name, compile_id)

The compiler wraps every compilation in ``callback_handler.install_callbacks(trigger)``, a
context manager with a lock-protected counter of compilations in flight: the start
callbacks run when it goes 0 -> 1, the end callbacks when it goes back 1 -> 0. Nested
compilations (a compile inside a callback or inside another compile) and concurrent ones
(threads) therefore fire each list once per busy period. Start and end callbacks receive the
trigger and id of the compilation that opened the period; ``compile_id`` counts from 0 in
this process.

Triggers: ``FIRST_TRACE`` (first call of a compiled function), ``RECOMPILE`` (a new input
signature), ``EXPLAIN`` (``cppcodegen.explain``), ``CACHE_LOAD`` (seen by the end callbacks
when the compilation was served by the graph-level disk cache: no lowering, no C++ compiler;
the start callbacks cannot know that yet and see the cause, ``FIRST_TRACE`` or
``RECOMPILE``). A callback that raises propagates its exception to the caller of the
compiled function; the counter is still restored.
"""
from __future__ import annotations

import contextlib
import enum
import itertools
import threading
from dataclasses import dataclass

__all__ = ["CompileTrigger", "CompilationCallbackHandler", "callback_handler",
           "on_compile_start", "on_compile_end"]


class CompileTrigger(enum.Enum):
    FIRST_TRACE = "first_trace"
    RECOMPILE = "recompile"
    CACHE_LOAD = "cache_load"
    EXPLAIN = "explain"


@dataclass
class Compilation:
    """One compilation inside ``install_callbacks``; the compiler may refine ``trigger``."""
    trigger: CompileTrigger
    compile_id: int


class CompilationCallbackHandler:
    def __init__(self):
        self.start_callbacks: list = []
        self.end_callbacks: list = []
        self._lock = threading.RLock()      # reentrant: a callback may compile
        self._in_flight = 0
        self._opener: Compilation | None = None
        self._ids = itertools.count()

    # -- registration
    def register_start_callback(self, fn):
        with self._lock:
            self.start_callbacks.append(fn)
        return fn

    def register_end_callback(self, fn):
        with self._lock:
            self.end_callbacks.append(fn)
        return fn

    def remove_start_callback(self, fn) -> None:
        with self._lock:
            self.start_callbacks.remove(fn)

    def remove_end_callback(self, fn) -> None:
        with self._lock:
            self.end_callbacks.remove(fn)

    def clear(self) -> None:
        with self._lock:
            self.start_callbacks.clear()
            self.end_callbacks.clear()

    @property
    def in_flight(self) -> int:
        return self._in_flight

    # -- running
    @contextlib.contextmanager
    def install_callbacks(self, trigger: CompileTrigger):
        """Count one compilation in flight; fire start on 0 -> 1 and end on 1 -> 0."""
        comp = Compilation(CompileTrigger(trigger), next(self._ids))
        try:
            with self._lock:        # start callbacks finish before any other compile proceeds
                self._in_flight += 1
                if self._in_flight == 1:
                    self._opener = comp
                    for fn in list(self.start_callbacks):
                        fn(comp.trigger, comp.compile_id)
            yield comp
        finally:
            with self._lock:
                try:
                    if self._in_flight == 1:
                        opener = self._opener or comp
                        for fn in list(self.end_callbacks):
                            fn(opener.trigger, opener.compile_id)
                finally:
                    self._in_flight -= 1
                    if self._in_flight == 0:
                        self._opener = None


callback_handler = CompilationCallbackHandler()


def on_compile_start(fn):
    """Decorator: call ``fn(trigger, compile_id)`` when compilation starts."""
    return callback_handler.register_start_callback(fn)


def on_compile_end(fn):
    """Decorator: call ``fn(trigger, compile_id)`` when compilation ends."""
    return callback_handler.register_end_callback(fn)
