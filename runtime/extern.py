"""NumPy functions called between compiled kernels ("extern" steps).

In: a function and the structure of its arguments, with ``Slot(k)`` where the k-th traced
array goes. Out: a picklable, hashable ``ExternCall`` that the runtime calls with the step's
input arrays and whose result it copies into the step's output buffer. Used for matrix
products and for NumPy functions the compiler does not lower itself (sort, cumsum,
concatenate, median, ...). No compiler imports: a warm process unpickles these from the
graph cache.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np


class Slot:
    """Where the k-th input array of an extern call goes in its argument structure; ``py``:
    as the Python number it holds (a Python float argument, weak in NumPy's promotion: a
    float32 array's np.histogram range or np.percentile q keep float32, NEP 50)."""
    __slots__ = ("k", "py")

    def __init__(self, k: int, py: bool = False):
        self.k, self.py = k, py

    def __repr__(self):
        return f"<in{self.k}>" + (".item()" if self.py else "")

    def __eq__(self, other):
        return isinstance(other, Slot) and other.k == self.k and other.py == self.py

    def __hash__(self):
        return hash(("slot", self.k, self.py))

    def __reduce__(self):
        return (Slot, (self.k, self.py))


def filler(template):
    """``arrays -> template`` with its Slots filled, decided once (a call's arguments are
    mostly its arrays and constants: walking the template at every call cost microseconds);
    None where the template holds no Slot (it is its own value)."""
    if isinstance(template, Slot):
        k = template.k
        return (lambda arrays: arrays[k].item()) if template.py else (lambda arrays: arrays[k])
    if isinstance(template, dict):
        parts = {k: filler(v) for k, v in template.items()}
        if all(p is None for p in parts.values()):
            return None
        return lambda arrays: {k: v if p is None else p(arrays)
                               for (k, v), p in zip(template.items(), parts.values())}
    if isinstance(template, (tuple, list)):
        parts = [filler(t) for t in template]
        if all(p is None for p in parts):
            return None
        kind = type(template)
        return lambda arrays: kind([t if p is None else p(arrays)
                                    for t, p in zip(template, parts)])
    return None


def fill(template, arrays):
    f = filler(template)
    return template if f is None else f(arrays)


@functools.lru_cache(maxsize=None)
def _none_by_default(func) -> frozenset:
    """The keywords ``func`` takes None for by default (np.sort's kind, order, stable)."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return frozenset()
    return frozenset(k for k, p in params.items() if p.default is None)


def qualified_name(func) -> str:
    owner = getattr(func, "__self__", None)
    if isinstance(owner, np.ufunc):     # np.maximum.accumulate: the ufunc's name in it (the
        return f"numpy.{owner.__name__}.{func.__name__}"    # method alone is ufunc.accumulate)
    module = getattr(func, "__module__", None) or "numpy"
    module = module.replace("numpy._core", "numpy").replace("numpy.lib._", "numpy.")
    return f"{module}.{getattr(func, '__qualname__', getattr(func, '__name__', repr(func)))}"


class ShapeChanged(RuntimeError):
    """A NumPy call between kernels gave another shape than the traced one (its output shape
    depends on the values: np.nonzero, x[mask], ...). ``respecialize``: a count the build
    took as it was (0 or 1), or one that breaks a guard: the function is traced again for
    it (``api.CompiledFunction._respecialize``), else the call runs with NumPy."""

    def __init__(self, message: str, respecialize: bool = False):
        super().__init__(message)
        self.respecialize = respecialize


def advanced_index(a, key):
    """``a[key]`` with integer or boolean arrays in ``key`` (NumPy's indexing)."""
    return a[key]


def axis_slice(a, axis, start, stop, step):
    """A copy of ``a[start:stop:step]`` along ``axis`` (a slice whose bounds come from array
    values, outside every compiled loop: ``np.sort(out[:k])``); C-ordered, its own memory."""
    return a[(slice(None),) * axis + (slice(start, stop, step),)].copy()


def sized(n):
    """An array of ``n`` elements, none of them read: a size computed from array values
    (``np.empty(lens.sum())``), whose length the runtime reads as a count
    (``frontend/creation.py``). NumPy's error for a negative size."""
    n = int(n)
    if n < 0:
        raise ValueError("negative dimensions are not allowed")
    return np.empty(n, dtype=np.bool_)


sized.quiet = True      # (no warning: the step computes nothing)
# how a step of these is named in warnings (externs.extern_call)
advanced_index.shown = "indexing with an index array (x[idx] with np.newaxis, x[mask] read)"
axis_slice.shown = "a slice outside every loop with bounds from array values (a copy)"


class ExternCall:
    """``func(*args, **kwargs)`` with Slots filled in; ``item`` picks one of a tuple result."""

    def __init__(self, func, args: tuple, kwargs: dict, item=None, writes_out: bool = False,
                 guarded: bool = False, counted: tuple = (), recount: bool = False):
        """``writes_out``: ``func`` takes ``out=`` (a ufunc such as np.matmul) and writes the
        step's output buffer itself, with no temporary. ``guarded``: the call is on one side
        of ``x if c else y`` and its last array is that side's condition; where it is false
        the call does not run (NumPy's error there is not Python's) and the output is 0.
        ``counted``: ((count name, axis),) where the output's length along that axis is a
        count of the values (``x[mask]``): the step makes the output array (``fresh``) and the
        runtime reads the count from it. ``recount``: a count of 0 or 1 the build is for;
        another count traces the function again (``ShapeChanged.respecialize``)."""
        self.func, self.args, self.kwargs, self.item = func, args, dict(kwargs), item
        self.writes_out, self.guarded, self.counted = writes_out, guarded, tuple(counted)
        self.recount = recount
        self.name = qualified_name(func)
        # what the call passes: each keyword costs the call time (np.sort's four None ones
        # took it from 0.8 to 1.5 us), so those that are None by default are left out
        try:
            none = _none_by_default(func)
        except TypeError:               # (an unhashable callable: every keyword passed)
            none = frozenset()
        self._passed = (tuple(args), {k: v for k, v in self.kwargs.items()
                                      if not (v is None and k in none)})
        self._fill = tuple(filler(t) for t in self._passed)
        shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        self._call = f"{self.name}({', '.join(shown)})"
        self._repr = self._call + ("" if item is None else f"[{item}]") + \
            (" where its side is taken" if guarded else "") + \
            "".join(f" (axis {a}: {n})" for n, a in self.counted) + \
            (" (a count of 0 or 1)" if recount else "")

    def __repr__(self):
        return self._repr

    def __eq__(self, other):
        return isinstance(other, ExternCall) and other.func == self.func and other._repr == self._repr

    def __hash__(self):
        return hash(self._repr)

    def __reduce__(self):
        return (ExternCall, (self.func, self.args, self.kwargs, self.item, self.writes_out,
                             self.guarded, self.counted, self.recount))

    def _arguments(self, arrays) -> tuple:
        """(args, kwargs) of the call on ``arrays``."""
        (args, kwargs), (fa, fk) = self._passed, self._fill
        return (args if fa is None else fa(arrays)), (kwargs if fk is None else fk(arrays))

    def _skipped(self, arrays, out) -> bool:
        """On the side of a conditional expression not taken (``guarded``): ``out`` zeroed."""
        if self.guarded and not arrays[-1]:
            out[...] = 0
            return True
        return False

    def _compute(self, arrays, memo=None):
        """The function's result (the picked item of a tuple), NumPy's warnings silenced.
        ``memo`` (one run of a program): the whole result of a call with several outputs, so
        the step of each output does not call it again (``np.unique(x, return_counts=True)``
        is one call)."""
        key = None if memo is None or self.item is None else \
            (self._call, tuple(id(a) for a in arrays))     # (the call, whatever item)
        result = memo[key][0] if key is not None and key in memo else None
        if result is None:
            args, kwargs = self._arguments(arrays)
            with np.errstate(all="ignore"):
                result = self.func(*args, **kwargs)
            if key is not None:         # (the arrays kept alive with it: a temporary freed
                memo[key] = (result, arrays)    # after the call would give its id to the
        return result if self.item is None else result[self.item]  # next call's operand)

    def fresh(self, *arrays, dtype, ndim: int, memo=None):
        """The result as a new C-contiguous array of ``dtype`` that no argument shares (a
        counted output: its length is this call's count)."""
        result = np.asarray(self._compute(arrays, memo))
        if result.ndim != ndim:
            raise ShapeChanged(f"{self.name} returned {result.ndim} dimensions where "
                               f"{ndim} were traced", self.recount)
        if result.dtype != dtype or not result.flags.c_contiguous or not result.flags.writeable \
                or any(np.may_share_memory(result, a) for a in arrays):
            result = np.array(result, dtype=dtype, order="C")
        return result

    def any_shape(self, *arrays, out, memo=None):
        """The call into ``out`` when the result has its shape, else the result as a new array
        of ``out``'s dtype (an output nothing else reads: a returned ``x[mask]`` whose count
        changed); returns the array holding it."""
        if self.writes_out or self._skipped(arrays, out):
            self(*arrays, out=out)
            return out
        arrays = arrays[:-1] if self.guarded else arrays
        result = np.asarray(self._compute(arrays, memo))
        if result.shape == out.shape and not _own(result, out.dtype, arrays):
            np.copyto(out, result, casting="unsafe")
            return out
        if result.ndim != out.ndim:
            raise ShapeChanged(f"{self.name} returned {result.ndim} dimensions where "
                               f"{out.ndim} were traced", self.recount)
        return result.astype(out.dtype, copy=False)

    def __call__(self, *arrays, out, memo=None):
        if self._skipped(arrays, out):
            return
        arrays = arrays[:-1] if self.guarded else arrays
        if self.writes_out:
            args, kwargs = self._arguments(arrays)
            self.func(*args, **kwargs, out=out)
            return
        result = self._compute(arrays, memo)
        if np.shape(result) != out.shape:
            raise ShapeChanged(
                f"{self.name} returned shape {np.shape(result)} where {out.shape} was traced: "
                "its output shape depends on the values", self.recount)
        np.copyto(out, result, casting="unsafe")


def _own(result, dtype, arrays) -> bool:
    """Is ``result`` an array of ``dtype`` in C order that nothing else holds, so an output
    nothing after the step reads can be it (``np.sort(x, axis=1)`` returned: no copy of its
    result into the buffer made for it, a third of the call)?"""
    # (an array that owns its memory and is no argument: no argument is a view of it)
    flags = result.flags if type(result) is np.ndarray else None
    return flags is not None and result.dtype == dtype and flags.c_contiguous and \
        flags.writeable and flags.owndata and not any(result is a for a in arrays)
