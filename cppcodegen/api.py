"""The public entry points: ``compile``, ``explain`` and the compiled function object.

The driver reads like the pipeline: classify the arguments (guards), trace a Graph, lower it
to loop IR, schedule kernels, generate C++, build (or find) the shared object, load it, run.
``explain`` runs the same stages and hands back every intermediate.
"""
from __future__ import annotations

import functools
import inspect
import logging
import threading
import types
from pathlib import Path

import numpy as np

from . import autotune, autotune_threshold, config
from .checking.backends import lookup_backend, register_backend
from .checking.callback import CompileTrigger, callback_handler
from .checking.check import CheckError, CheckReport
from .frontend import argtree, signature
from .errors import DataDependentError, TraceError, UnsupportedError, fall_back
from .frontend.capture import positional
from .frontend.control import python_of, trace_function
from .frontend.proxy import Proxy
from .pipeline import Explanation, build_stages, compile_stages
from .runtime import fastcall
from .variants import (choose_specs, fits, Recompile, RecompileLimitWarning, value_sizes,
                       values_text)

log = logging.getLogger("cppcodegen")
class CompiledFunction:
    """What ``cppcodegen.compile`` returns: one compiled variant per input signature.

    When the C call path is built (``runtime/fastcall.py``) the object is of a subclass
    whose base is its ``Dispatcher``: a call whose arguments have the layout of a recent
    call runs from C, any other comes to ``_call_slow`` (this class's ``__call__``)."""

    def __new__(cls, *args, **kwargs):
        base = fastcall.dispatcher()
        if base is None or cls is not CompiledFunction:
            return object.__new__(cls)
        fast = _FAST_CLASSES.get(base)
        if fast is None:
            fast = _FAST_CLASSES[base] = type("CompiledFunction", (base, CompiledFunction),
                                              {"__module__": __name__, "__doc__": cls.__doc__})
        return base.__new__(fast)

    def __init__(self, fn, backend: str = "cpp", options: dict | None = None,
                 dynamic: bool | None = None):
        if not callable(fn):
            raise TypeError(f"cppcodegen.compile expects a function, got {type(fn).__name__}")
        if dynamic not in (None, True, False):
            raise TypeError(f"cppcodegen.compile: dynamic must be None, True or False, got {dynamic!r}")
        self.fn = positional(fn)    # (keyword-only parameters: after the others, in order)
        self.dynamic, self.backend, self._limit_warned = dynamic, backend, False
        self.dynamic_variants: list = []   # (specs, ((guard text, code), ...), values, variant),
        self.recompiles: list = []         # newest first; why each compile after the first
        self._families: list = []          # variants of one signature traced for other sizes
        self._backend = lookup_backend(backend)
        self.options = dict(options or {})
        config.get_options(self.options)            # validate option names now
        self.variants: dict = {}
        self._fast: dict = {}          # (type, dtype, shape, strides) per argument -> variant
        self._lock = threading.Lock()
        self._sig = inspect.signature(fn)
        self._simple = all(p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty
                           for p in self._sig.parameters.values())
        self._nargs = len(self._sig.parameters)
        params = list(self._sig.parameters.values())
        self._kwonly = tuple(p.name for p in params if p.kind == p.KEYWORD_ONLY)
        # positional calls that leave parameters to their defaults bind without inspect
        # (its bind costs ~20 us a call): the defaults that fill them, in order
        ordered = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                   p.POSITIONAL_OR_KEYWORD)]
        fixed = len(ordered) + len(self._kwonly) == len(params)
        self._required = sum(p.default is p.empty for p in ordered)
        self._filled = tuple(p.default for p in ordered) + tuple(
            p.default for p in params if p.kind == p.KEYWORD_ONLY) if fixed and all(
            p.default is not p.empty for p in params[self._required:]) else None
        self._layout_key = None     # chosen by the first call (its Python floats: by type)
        # calls with keywords: per (positional count, keyword names) the position of each
        # keyword's argument, learned from the first such call inspect binds
        self._names = tuple(p.name for p in ordered) + self._kwonly
        self._keyword_plans: dict = {}
        self._trees: dict = {}      # per structure of container arguments: its function
        # a bound method: its object's attributes when the builds were made (read as
        # constants: a change makes new builds)
        self._owner = signature.attributes_of(fn) if isinstance(fn, types.MethodType) and \
            hasattr(fn.__self__, "__dict__") else None
        functools.update_wrapper(self, fn)
        if self._filled is not None and not self._kwonly and hasattr(self, "_fast_defaults") \
                and len(self._filled) <= fastcall.MAX_ARGS:
            self._fast_defaults(self._filled, self._required)   # (f(x) of f(x, tol=1e-12))

    def _bind(self, args, kwargs):
        if not kwargs and self._simple and len(args) == self._nargs:
            return args
        if not kwargs and self._filled is not None and \
                self._required <= len(args) <= self._nargs - len(self._kwonly):
            return args + self._filled[len(args):]
        plan = self._keyword_plans.get((len(args), tuple(kwargs)))
        if plan is not None:
            out = list(args) + list(self._filled[len(args):])
            for k, value in zip(plan, kwargs.values()):
                out[k] = value
            return tuple(out)
        bound = self._sig.bind(*args, **kwargs)
        bound.apply_defaults()
        if self.fn is not self.__wrapped__:         # keyword-only parameters: positional
            out = bound.args + tuple(bound.kwargs[k] for k in self._kwonly)
        elif any(k in kwargs for k in bound.kwargs):    # (defaults: the function's own)
            raise UnsupportedError(
                f"cppcodegen: keyword arguments bound to keyword-only parameters after "
                f"*args, to **kwargs, or to keyword-only parameters of a method or callable "
                f"object ({', '.join(bound.kwargs)} of {self.fn.__name__}) are not compiled")
        else:
            out = bound.args
        if kwargs and self._filled is not None and len(self._keyword_plans) < 64:
            self._keyword_plans[(len(args), tuple(kwargs))] = tuple(
                self._names.index(k) for k in kwargs)
        return out

    def __call__(self, *args, **kwargs):
        # fast path: arrays and NumPy scalars only; equal (type, dtype, shape, strides) give
        # equal guards, so the variant found for them last time is the right one again
        key = None
        if kwargs or not self._simple or len(args) != self._nargs:
            try:
                args, kwargs = self._bind(args, kwargs), None
            except UnsupportedError as e:   # (def f(*xs, w=1.0) called with w=: Python's)
                fall_back(self.fn, e, config.get_options(self.options).fallback)
                return self.__wrapped__(*args, **kwargs)
        if self._owner is not None:
            owner = signature.attributes_of(self.__wrapped__)
            if owner != self._owner:        # (o.k = 2.0: the builds are of o.k = 0.5)
                self._owner = owner
                self._forget_builds()
        if self._trees and (packed := argtree.pack(args)) is not None:
            return self._packed(*packed, args)      # (containers, as before)
        if len(args) == self._nargs:
            if self._layout_key is None:
                self._layout_key = signature.layout_key(args)
            try:
                key = self._layout_key(*args)
                fast = self._fast.get(key)
            except (AttributeError, TypeError):     # (not an array, or an array where the
                key = None                          # first call passed an int)
            except UnsupportedError:    # traced arrays: a call from a function being traced
                return self.fn(*args)   # (a compiled helper, or one passed as an argument)
            else:
                if fast is not None:
                    return fast(args)
        try:
            specs = signature.classify(args)
        except TypeError as e:      # e.g. dask arrays in: a dask array out (integrations/dask.py)
            if any(isinstance(a, Proxy) for a in args):     # (traced values: inlined)
                return self.fn(*args)
            for dispatch in ARRAY_DISPATCH:
                result = dispatch(self, args)
                if result is not NotImplemented:
                    return result
            packed = argtree.pack(args)     # (lists, tuples, dicts of arrays)
            if packed is not None:
                return self._packed(*packed, args)
            error = TypeError(f"{e} (parameter '{self._parameter_of(args)}' of "
                              f"{self.fn.__qualname__})")       # (a list of arrays: Python runs it)
            return fall_back(self.fn, error, config.get_options(self.options).fallback)(args)
        variant = self.variants.get(specs)
        if variant is None and self.dynamic_variants:
            variant = self._find_dynamic(specs, args)
        if variant is None:
            variant = self._compile(specs, args)
            if variant is None:             # past the recompile limit: plain NumPy
                return self.fn(*args)
        # (the key holds the ints' values, no float's; a NumPy scalar where the first call
        # had a float: the key holds its class, which says its dtype)
        if key is not None and all(
                type(args[i]) is int and i in self._layout_key.ints
                for _, i in value_sizes(variant)) and all(
                type(args[i]) in (float, complex) or isinstance(args[i], np.generic)
                for i in self._layout_key.scalars) and all(
                isinstance(args[i], (np.ndarray, np.generic)) for i in self._layout_key.arrays):
            if len(self._fast) >= FAST_PATH_ENTRIES:
                self._fast.clear()
            self._fast[key] = getattr(variant, "fast", variant)
            self._add_c_entry(variant, args, self._layout_key)
        return variant(args)

    _call_slow = __call__       # (the C path's way back for calls it cannot run)

    def _forget_builds(self):
        self.variants, self._fast, self.dynamic_variants = {}, {}, []
        self._families, self._trees = [], {}

    def _packed(self, tree, leaves, args):
        """A call with container arguments: the compiled function of their leaves, one per
        structure (``frontend/argtree.py``)."""
        inner = self._tree_function(tree)
        calling = argtree.CALLING       # (where it runs as Python: on the caller's containers)
        saved, calling.args = getattr(calling, "args", None), (args, leaves)
        try:
            return inner(*leaves)
        finally:
            calling.args = saved

    def _tree_function(self, tree):
        inner = self._trees.get(tree)
        if inner is None:
            inner = self._trees[tree] = CompiledFunction(
                argtree.Tree(tree).function(self.fn, self._names), self.backend,
                self.options, self.dynamic)
        return inner

    def _add_c_entry(self, variant, args, key):
        """Give the C call path (when this object has one) an entry for ``args``' layout,
        checked as the layout ``key`` checks it."""
        add = getattr(self, "_fast_add", None)
        slots_fn = getattr(variant, "slots_fn", None)
        if add is not None and slots_fn is not None and self._owner is None:
            address = int(variant.ffi.cast("uintptr_t", slots_fn))
            entry = fastcall.entry(variant, args, key, address, variant)
            if entry is not None:
                add(entry)

    def _parameter_of(self, args) -> str:
        """The name of the first parameter whose argument ``signature.classify`` refuses."""
        names = list(self._sig.parameters)
        for i, a in enumerate(args):
            try:
                signature.classify((a,))
            except TypeError:
                return names[min(i, len(names) - 1)]
        return "?"

    def _find_dynamic(self, specs, args):
        """The newest dynamic variant whose guards this call passes, or None."""
        return next((variant for dspecs, guards, values, variant in self.dynamic_variants
                     if fits(dspecs, guards, values, specs, args)[0]), None)

    def _compile(self, specs, args):
        with self._lock:
            variant = self.variants.get(specs) or self._find_dynamic(specs, args)
            if variant is not None:
                return variant
            opts = config.get_options(self.options)
            if len(self.variants) >= opts.recompile_limit:
                if not self._limit_warned:
                    import warnings
                    self._limit_warned = True
                    warnings.warn(
                        f"cppcodegen: {self.fn.__qualname__} reached the recompile limit "
                        f"({opts.recompile_limit} variants; option recompile_limit); calls that "
                        f"fit none of them run as plain NumPy. Last reason: "
                        f"{self._why_not(specs, args)}", RecompileLimitWarning, stacklevel=3)
                return None
            cspecs = self._choose_specs(specs, args)
            if cspecs != specs and self.dynamic is None and any(
                    d == cspecs for d, _, _, _ in self.dynamic_variants):
                cspecs = specs      # automatic: a variant of these dims failed its guards here
            if self.variants:
                reason = Recompile(self.fn.__qualname__, self._why_not(specs, args),
                                   dynamic=cspecs != specs, variants=len(self.variants) + 1)
                self.recompiles.append(reason)
                log.info("%s", reason)
            trigger = CompileTrigger.RECOMPILE if self.variants else CompileTrigger.FIRST_TRACE
            # an automatic dynamic variant (sizes or ints read at each call) that does not
            # trace: this call's static specs instead
            attempts = [cspecs, specs] if cspecs != specs and self.dynamic is None else [cspecs]
            for k, cs in enumerate(attempts):
                try:
                    with callback_handler.install_callbacks(trigger) as compilation:
                        variant = self._backend(self.fn, cs, args, opts, compilation)
                    cspecs = cs
                    break
                except Exception as e:      # noqa: BLE001 -- the static attempt's error counts
                    if k + 1 < len(attempts):
                        continue
                    if isinstance(e, RecursionError):   # (a helper calling itself)
                        e = UnsupportedError(f"recursion too deep while compiling "
                                             f"{self.fn.__qualname__}: a function that calls "
                                             "itself, or a long chain of values from a loop "
                                             "that ran in Python while tracing")
                    if not isinstance(e, (UnsupportedError, DataDependentError, TraceError,
                                          AssertionError)) and not _rejected(e):
                        raise
                    self._newest = (specs, None, ())    # (the next call's reason names it)
                    return self.variants.setdefault(specs, fall_back(self.fn, e, opts.fallback))
            self._adopt(variant, cspecs, [variant])
            values = value_sizes(variant)
            if cspecs == specs and not values:
                self.variants[cspecs] = variant
                self._newest = (cspecs, None, ())
            else:       # keyed with its guards: one pattern may be traced under other guards
                from .runtime.sizes import compile_expr
                texts = tuple(getattr(variant.plan, "guards", ()))
                plan = variant.plan
                traced = values_text(dict(plan.traced))
                guards = tuple((f"{t} (traced with {traced})", compile_expr(g))
                               for g, t in zip(texts, plan.guard_texts or texts))
                self.variants[(cspecs, texts)] = variant
                self.dynamic_variants.insert(0, (cspecs, guards, values, variant))
                self._newest = (cspecs, guards, values)
            return variant

    def _adopt(self, variant, cspecs, family: list):
        """Let ``variant`` hand a call whose array sizes computed from scalar arguments
        differ from its own (``np.arange(-r, r + 1)`` with ``r = int(3 * sigma)``:
        ``errors.ScalarSizeChanged``) to a sibling traced for that call (``family``)."""
        if hasattr(variant, "attempt"):
            variant.respecialize = functools.partial(self._respecialize, family, cspecs)

    def _respecialize(self, family: list, cspecs, args):
        """The call by the first variant of ``family`` (the variants traced for ``cspecs``
        with other sizes computed from scalar arguments) whose sizes it has; else by a new
        one traced with this call's values, the same compile as for new argument types
        (counted by ``recompile_limit``; past it, or where the trace fails, the call runs as
        Python)."""
        from .errors import ScalarSizeChanged
        from .runtime.compiled import MISS
        for variant in list(family):
            out = variant.attempt(args)
            if out is not MISS:
                return out
        with self._lock:
            opts = config.get_options(self.options)
            count = len(self.variants) + sum(len(f) - 1 for f in self._families)
            try:
                if count >= opts.recompile_limit:
                    raise UnsupportedError(f"recompile limit ({opts.recompile_limit}) reached")
                reason = Recompile(self.fn.__qualname__, ScalarSizeChanged.reason, dynamic=False,
                                   variants=count + 1)
                self.recompiles.append(reason)
                log.info("%s", reason)
                with callback_handler.install_callbacks(CompileTrigger.RECOMPILE) as compilation:
                    variant = self._backend(self.fn, cspecs, args, opts, compilation)
            except (UnsupportedError, DataDependentError, TraceError) as e:
                log.info("%s: runs as Python (%s)", self.fn.__qualname__, e)
                return family[0].run_fallback(args, ScalarSizeChanged.reason, respecialize=False)
            family.insert(0, variant)
            if len(family) == 2:
                self._families.append(family)
            self._adopt(variant, cspecs, family)
        out = variant.attempt(args)
        return family[1].run_fallback(args, ScalarSizeChanged.reason, respecialize=False) \
            if out is MISS else out

    def _choose_specs(self, specs, args):
        return choose_specs(self.variants, self.dynamic, self.backend, specs, args)

    def _why_not(self, specs, args) -> str:
        """Why the newest variant does not serve this call: the guard that failed."""
        newest, guards, values = self._newest
        if guards is not None:
            return fits(newest, guards, values, specs, args)[1]
        return signature.describe_change(newest, specs)

    @property
    def recompile_reasons(self) -> list:
        """Why each compile after the first happened (``Recompile`` records, oldest first)."""
        return list(self.recompiles)

    def explain(self, *args, **kwargs):
        args = self._bind(args, kwargs)
        packed = argtree.pack(args)
        if packed is not None:
            return self._tree_function(packed[0]).explain(*packed[1])
        specs = self._choose_specs(signature.classify(args), args)
        opts = config.get_options(self.options)
        from .runtime import cachedir
        with callback_handler.install_callbacks(CompileTrigger.EXPLAIN), autotune.tuning(opts):
            graph = trace_function(self.fn, specs, args)
            opts = autotune_threshold.resolve(opts, graph)
            cache_dir = Path(config.cache_dir_setting(opts) or cachedir.default_cache_dir())
            ex = build_stages(self.fn, graph, specs, opts, cache_dir, {})
            ex.recompiles = self.recompile_reasons
            return ex

    # __reduce__ and __dask_tokenize__ (pickling by reference) come from integrations/pickling.py

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self):
        return f"<cppcodegen compiled {self.fn.__qualname__} ({len(self.variants)} variants)>"


def compile(fn=None, *, backend: str = "cpp", options: dict | None = None,
            dynamic: bool | None = None, **option_values):
    """Compile a NumPy function. Use bare (``@compile``) or with arguments. Options
    (``config.Options``) go in ``options`` or as keywords (``parallel_threshold=0``).
    ``backend`` names a registered backend (``cppcodegen.list_backends()``): 'cpp' (default),
    'numpy' (the NumPy reference interpreter) or 'check' (both, compared buffer by buffer).
    ``dynamic``: True compiles one variant whose array sizes (other than 0 and 1) are symbolic;
    False specializes every size; None (default) specializes first and, when a call differs
    from a variant only in sizes, recompiles once with those sizes symbolic.
    """
    lookup_backend(backend)                 # unknown names fail here, listing the known ones
    options = {**(options or {}), **option_values}      # (checked by CompiledFunction)
    make = lambda f: CompiledFunction(python_of(f), backend, options, dynamic)   # noqa: E731
    return make if fn is None else make(fn)


# --------------------------------------------------------------------------- dynamic shapes

FAST_PATH_ENTRIES = 256       # exact (dtype, shape, strides) keys remembered per function
_FAST_CLASSES: dict = {}      # the C call path's Dispatcher -> CompiledFunction's subclass


def check(fn, *args, raise_on_mismatch: bool = True, options: dict | None = None,
          tolerances: dict | None = None, **kwargs) -> CheckReport:
    """Run ``fn(*args, **kwargs)`` compiled (with hooks) and in the reference; compare buffers.

    ``fn`` is a plain function or a ``cppcodegen.compile`` result (its options are kept).
    Returns the ``CheckReport`` (see ``checking/check.py``); raises ``CheckError`` on a
    mismatch unless ``raise_on_mismatch=False``.
    """
    base = fn.fn if isinstance(fn, CompiledFunction) else fn
    merged = dict(fn.options if isinstance(fn, CompiledFunction) else {}, **(options or {}))
    cf = CompiledFunction(base, backend="check", options=merged)
    args = cf._bind(args, kwargs)
    packed = argtree.pack(args)     # (lists, tuples, dicts of arrays: their leaves)
    if packed is not None:
        cf, args = cf._tree_function(packed[0]), tuple(packed[1])
    variant = cf._compile(signature.classify(args), args)
    variant.tolerances = tolerances
    _, report = variant.run(args)
    if raise_on_mismatch and not report.ok:
        raise CheckError(report)
    return report


# what a call does with arguments signature.classify refuses (TypeError): each entry is
# ``dispatch(compiled_function, args) -> result or NotImplemented``; the package registers
# the Dask one (cppcodegen/__init__.py), so this module never imports an integration
ARRAY_DISPATCH: list = []


@register_backend("cpp")
def cpp_backend(fn, specs, args, opts, compilation):
    """The C++ pipeline (``compile_stages``): the default backend."""
    if opts._testing_miscompile:            # testing only: the renderer breaks one op
        from .backend.cexpr import TESTING_MISCOMPILE   # lazy: sympy, only for this test hook
        token = TESTING_MISCOMPILE.set(opts._testing_miscompile)
        try:
            ex, variant = compile_stages(fn, specs, args, opts)
        finally:
            TESTING_MISCOMPILE.reset(token)
    else:
        ex, variant = compile_stages(fn, specs, args, opts)
    if ex is None:                          # served by the graph-level disk cache
        compilation.trigger = CompileTrigger.CACHE_LOAD
    variant.fallback = fn       # for calls whose arrays overlap an argument it updates in place
    return variant


def explain(fn, *args, **kwargs) -> Explanation:
    """Trace, lower, schedule, generate and build ``fn`` for these arguments; return it all."""
    if not isinstance(fn, CompiledFunction):
        fn = CompiledFunction(fn)
    return fn.explain(*args, **kwargs)


def _rejected(error) -> bool:
    """Did the C++ compiler run and reject the code cppcodegen wrote (a bug of ours: with the
    fallback on, the call runs as Python, the compiler's message in the warning)? A missing
    or broken compiler is the user's to fix and raises."""
    from .runtime.build import CompileError
    return isinstance(error, CompileError) and error.source_path is not None and \
        bool(error.stderr) and " error: " in error.stderr
