"""Compile callbacks: triggers, ids, the in-flight counter (nested, threads, errors)."""
import threading
import time

import numpy as np
import pytest

import cppcodegen
from cppcodegen.checking.callback import (CompilationCallbackHandler, CompileTrigger, callback_handler,
                                 on_compile_end, on_compile_start)


@pytest.fixture
def events():
    log = []
    start = lambda trigger, cid: log.append(("start", trigger, cid))
    end = lambda trigger, cid: log.append(("end", trigger, cid))
    on_compile_start(start)
    on_compile_end(end)
    yield log
    callback_handler.remove_start_callback(start)
    callback_handler.remove_end_callback(end)
    assert callback_handler.in_flight == 0


def test_first_trace_recompile_and_cache_load(events):
    def f(x):
        return x * 3 + 1
    g = cppcodegen.compile(f)
    g(np.arange(4.0))
    g(np.arange(4.0))                          # cached variant: no compilation
    g(np.arange(4, dtype=np.int64))            # new signature
    kinds = [(kind, trig) for kind, trig, _ in events]
    assert kinds[0] == ("start", CompileTrigger.FIRST_TRACE)
    assert kinds[2] == ("start", CompileTrigger.RECOMPILE)
    assert len(events) == 4 and [k for k, _ in kinds] == ["start", "end", "start", "end"]
    assert events[0][2] == events[1][2] != events[2][2] == events[3][2]
    events.clear()
    cppcodegen.compile(f)(np.arange(4.0))      # same graph, new object: the disk cache serves it
    assert [(k, t) for k, t, _ in events] == [("start", CompileTrigger.FIRST_TRACE),
                                              ("end", CompileTrigger.CACHE_LOAD)]


def test_nested_compilation_fires_once(events):
    inner = cppcodegen.compile(lambda x: x - 1, backend="numpy")

    def outer_backend(fn, specs, args, opts, compilation):
        inner(np.ones(3))                      # a compile inside a compile
        return lambda args: 0

    cppcodegen.register_backend("nesting_test", replace=True)(outer_backend)
    cppcodegen.compile(lambda x: x, backend="nesting_test")(np.ones(2))
    assert [e[0] for e in events] == ["start", "end"]


def test_concurrent_compilations_in_threads_fire_each_once(events):
    both_inside = threading.Barrier(2, timeout=20)

    def slow_backend(fn, specs, args, opts, compilation):
        both_inside.wait()                     # both compilations are in flight together
        time.sleep(0.05)
        return lambda args: 1

    cppcodegen.register_backend("slow_test", replace=True)(slow_backend)
    funcs = [cppcodegen.compile(lambda x: x, backend="slow_test"),
             cppcodegen.compile(lambda x: x + 1, backend="slow_test")]
    threads = [threading.Thread(target=f, args=(np.ones(2),)) for f in funcs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert [e[0] for e in events] == ["start", "end"]
    assert events[0][2] == events[1][2]


def test_counter_stays_right_when_callbacks_raise():
    handler = CompilationCallbackHandler()
    ends = []

    @handler.register_start_callback
    def bad_start(trigger, cid):
        raise RuntimeError("start callback failed")

    handler.register_end_callback(lambda t, c: ends.append(c))
    with pytest.raises(RuntimeError, match="start callback failed"):
        with handler.install_callbacks(CompileTrigger.FIRST_TRACE):
            pass
    assert handler.in_flight == 0 and len(ends) == 1
    handler.remove_start_callback(bad_start)

    @handler.register_end_callback
    def bad_end(trigger, cid):
        raise ValueError("end callback failed")

    with pytest.raises(ValueError):
        with handler.install_callbacks(CompileTrigger.RECOMPILE):
            pass
    assert handler.in_flight == 0
    handler.clear()
    assert handler.start_callbacks == [] and handler.end_callbacks == []
    with handler.install_callbacks(CompileTrigger.RECOMPILE):
        assert handler.in_flight == 1
    assert handler.in_flight == 0


def test_thread_stress_on_the_counter():
    handler = CompilationCallbackHandler()
    starts, ends = [], []
    handler.register_start_callback(lambda t, c: starts.append(c))
    handler.register_end_callback(lambda t, c: ends.append(c))
    go = threading.Event()

    def work():
        go.wait()
        for _ in range(200):
            with handler.install_callbacks(CompileTrigger.FIRST_TRACE):
                with handler.install_callbacks(CompileTrigger.RECOMPILE):
                    pass

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    go.set()
    for t in threads:
        t.join()
    assert handler.in_flight == 0
    assert len(starts) == len(ends) >= 1 and starts == ends
