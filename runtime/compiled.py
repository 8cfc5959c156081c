"""The compiled callable: everything a call needs, without the compiler.

In: a loaded library's entry point and a plain-data ``Plan`` (the entry's arguments in order,
how to produce each one from the call's arguments, and the output tree). Out: a callable
that allocates outputs and temporaries, passes pointers and scalars, runs the kernels and
returns NumPy arrays. Built from JSON-able data so a warm start needs no lowering.

A plan built with the option ``generate_intermediate_hooks`` lists the buffers to report
(``Plan.hooks``); ``make_variant`` then returns a ``HookedVariant``, which hands each of
them to ``hooks.run_intermediate_hooks`` after the C++ entry returns. Plans
without hooks get the plain ``CompiledVariant``, whose call path has no hook check at all.
Outputs and temporaries come from the registered device hooks' output allocator
(``device.output_empty``; ``numpy.empty`` on the CPU).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import device as _device
from . import sizes
from ..errors import FallbackWarning, OutOfRange, PythonOnly, ScalarSizeChanged
from ..ir.graph import as_list, SliceOut
from .counts import Counts
from .extern import ShapeChanged
from .hooks import INTERMEDIATE_HOOKS, run_intermediate_hooks


@dataclass(frozen=True)
class Plan:
    args: tuple        # per entry argument: ('input', arg index) | ('constant', key)
                       # | ('output'|'temp', shape, dtype str) | ('scalar', arg index)
                       # | ('cscalar', arg index): a complex scalar, passed as (re, im)
    outputs: object    # tree with leaves ('buf', position in args) | ('py', position: a 0-d
                       # buffer returned as a Python number) | ('py?', (position of a 0-d
                       # bool, position): ... where that bool is True) | ('arg', i) |
                       # ('value', v)
    hooks: tuple = ()  # (report name, position in args) per materialized buffer, in stage order
    steps: tuple = (("call", 0),)   # ('call', entry i) | ('extern', ExternCall, (arg positions), out position)
    sizes: tuple = ()  # symbolic sizes: (name, arg index, dim, 0 for its size | 1 for its stride
                       # | 2 for the value of an integer argument)
    guards: tuple = () # symbolic sizes: Python expressions over the names that must hold
    traced: tuple = () # symbolic sizes: (name, value in the traced call), for messages
    guard_texts: tuple = ()  # the guards as people read them, for messages
    mutates: tuple = ()  # indices of the array arguments the function updates in place
    raises: tuple = ()   # (type, args) of the user's raise statements (check codes USER_CODES+)
    sites: tuple = ()    # the user's file:line of each indexing (an index error's axis // SITE - 1)
    ranges: tuple = ()   # (argument index, lowest, highest): Python int arguments a narrower
                         # int dtype takes; a call outside runs as Python (NumPy's error)
    late_guards: tuple = ()  # (Python expression, text) of the guards on counts (``m0 >= 1``):
                             # checked after the step that gives the count (counts.py)


CHECK_MESSAGES = {       # a check stage's codes: frontend/reductions.py EMPTY_CODES
    5: "zero-size array to reduction operation maximum which has no identity",
    6: "zero-size array to reduction operation minimum which has no identity",
    7: "attempt to get argmax of an empty sequence",
    8: "attempt to get argmin of an empty sequence",
    9: "slice step cannot be zero",     # frontend/dataslice.py STEP_ZERO, STEP_NEGATIVE
    10: "a negative slice step computed from array values is not compiled (cppcodegen "
        "compiles a run-time step > 0)",
    11: "Weights sum to zero, can't be normalized",     # frontend/statistics.py WEIGHTS_ZERO
    12: "operands could not be broadcast together: slices whose bounds come from array "
        "values have different lengths",    # frontend/dataslice.py LENGTHS_DIFFER
    13: "index out of bounds in np.unravel_index",    # frontend/composed.py INDEX_RANGE
    14: "range() arg 3 must not be zero",       # a run-time step (backend/program.py)
    15: "index out of bounds: an index of an integer-array assignment (x[idx] = v, "
        "np.add.at, np.put) is outside its axis; nothing was written"}   # indexing.py
RETURN_CODES = (12, 14, 15)   # checks after which the program stops at once (sizes it relies on,
                              # indices checked before any store)
CHECK_TYPES = {11: ZeroDivisionError, 15: IndexError}      # the others are ValueError
STEP_ZERO = 14
SITE = 256                  # an index error's axis + SITE * (1 + the position of its line in
                            # Plan.sites): the user's line of a gather or scatter (passes/lower.py)
USER_CODES = 1000           # and up: the user's raise statements (frontend/raises.py), in
                            # order; the program stops at once there too
RECORDED_CODES = 500        # to 999: Python's errors of Python's operations (ZeroDivisionError,
                            # math domain errors: frontend/pyints.py, pymath.py), in RAISES's
                            # order; the program goes on (a prange loop may hold them) and
                            # raises the first one recorded when it returns


def check_error(code: int, error=None, where: str = "") -> Exception:
    """The exception NumPy raises where a check stage with this code failed; ``error``:
    the (type, args) of the user's raise a check of a user code stands for; ``where``: the
    user's file:line of the check (its site, ``count_error``'s value), added to NumPy's
    message."""
    if error is not None:
        return error[0](*error[1])
    return CHECK_TYPES.get(code, ValueError)(CHECK_MESSAGES[code] +
                                             (f" (at {where})" if where else ""))


def stops(code: int) -> bool:
    """Does the program return at once when a check of this code fails?"""
    return code in RETURN_CODES or code >= USER_CODES


def _index_error(status, raises=(), sites=()):
    """The error a compiled program reported (``loopir.STATUS``), raised as NumPy raises it."""
    index, size, axis = int(status[1]), int(status[2]), int(status[3])
    if -1 - axis >= USER_CODES:         # the user's raise (frontend/raises.py)
        raise check_error(-1 - axis, raises[-1 - axis - USER_CODES])
    if -1 - axis >= RECORDED_CODES:     # Python's error of a Python operation
        raise check_error(-1 - axis, raises[-1 - axis - RECORDED_CODES])
    if axis == -5:      # np.bincount of a negative value (cppcodegen/frontend/counts.py)
        raise ValueError("'list' argument must have no negative elements")
    if -1 - axis in CHECK_MESSAGES:     # np.max of an empty array, a run-time slice step
        raise check_error(-1 - axis, where=sites[index - 1] if 0 < index <= len(sites) else "")
    if axis < 0:        # np.<ufunc>.reduceat's start (cppcodegen/frontend/segments.py CODES)
        name = ("add", "multiply", "maximum", "minimum")[-1 - axis]
        raise IndexError(f"index {index} out-of-bounds in {name}.reduceat [0, {size})")
    site = axis // SITE - 1
    where = sites[site] if 0 <= site < len(sites) else "an integer-array index in the compiled function"
    raise IndexError(f"index {index} is out of bounds for axis {axis % SITE} with size {size} "
                     f"(at {where})")


def _run_steps(fns, steps, counts=None):
    """A runner for plans with extern steps: entry points and NumPy calls in order.
    ``counts`` (``counts.Counts``): what a step whose output length is a count of the values
    settles (sizes, buffers, guards)."""
    def run(cargs, values, env=None):
        memo = {}           # calls with several outputs: one call (ExternCall._compute),
        for st in steps:    # while their inputs hold what they held (buffers are reused;
                            # an entry says what it writes)
            if st[0] == "call":
                fns[st[1]](*cargs)
                for key in [k for k, (_, read) in memo.items() if len(st) < 3 or any(
                        np.may_share_memory(a, values[p]) for a in read for p in st[2]
                        if values[p] is not None)]:
                    del memo[key]           # (what the entry wrote: another call's inputs)
            else:       # (st[4]: each argument's axes order, a transposed view, or None)
                args = [values[p] for p in st[2]] if not st[4] else [
                    values[p] if v is None else values[p].transpose(v)
                    for p, v in zip(st[2], st[4])]
                out = values[st[3]]
                if st[1].counted:           # x[mask]: its count read from the new array
                    counts.settle(st, args, memo, cargs, values, env)
                elif len(st) > 5 and st[5]:     # nothing after it reads it: any shape
                    values[st[3]] = st[1].any_shape(*args, out=out, memo=memo)
                else:
                    st[1](*args, out=out, memo=memo)
                for key in [k for k, (_, read) in memo.items()
                            if any(np.may_share_memory(a, out) for a in read)]:
                    del memo[key]
    return run


def _from_buffer(ffi):
    """``fb(array)``: a ``char[]`` cdata over the array's memory. cffi's own ``from_buffer``
    minus its Python-level argument handling (a third of its cost), where the backend
    function is there; the public method otherwise."""
    backend = getattr(getattr(ffi, "_backend", None), "from_buffer", None)
    if backend is None:
        return ffi.from_buffer
    return functools.partial(backend, ffi.typeof("char[]"))


class CompiledVariant:
    """Runs one compiled specialization (fixed dtypes, shapes and layouts).

    The variant's guards fix every input's layout, so whether an input is contiguous (passed
    with ``ffi.from_buffer``) or strided (passed by address) is decided once, here.
    """

    def __init__(self, ffi, fn, plan: Plan, constants: dict, contiguous=None, hook=None):
        """``fn``: the entry point, or a tuple of them when the plan has extern steps."""
        self.ffi, self.fn, self.plan = ffi, fn, plan
        self.counts = Counts.of(plan)      # (None: no step gives a count)
        self.multi = _run_steps(fn, plan.steps, self.counts) if isinstance(fn, tuple) else None
        self.constants = constants
        self.hook = hook
        contiguous = contiguous or {}
        steps = []
        self.draws = []             # (slot, source) of each random op
        later = self.counts.later if self.counts is not None else set()
        for j, spec in enumerate(plan.args):
            if j in later:          # its size is a count: made after that step (counts.py)
                steps.append((10, j, None))
            elif spec[0] == "input":
                steps.append((0 if contiguous.get(spec[1], True) else 4, spec[1], None))
            elif spec[0] == "constant":
                steps.append((1, constants[spec[1]], None))
            elif spec[0] == "status":       # the program's error report (gathers' indices)
                steps.append((8, None, None))
            elif spec[0] in ("output", "temp") and any(isinstance(d, str) for d in spec[1]):
                shape = tuple(sizes.compile_expr(str(d)) for d in spec[1])
                steps.append((7, shape, np.dtype(spec[2])))
            elif spec[0] in ("output", "temp"):
                steps.append((2, tuple(spec[1]), np.dtype(spec[2])))
            elif spec[0] == "size":
                steps.append((6, spec[1], None))
            elif spec[0] == "cscalar":
                steps.append((9, spec[1], None))
            elif spec[0] == "rng":          # ('rng', slot, 'seed'|'off', source): one draw
                if spec[2] == "seed":       # gives both arguments, which are adjacent
                    steps.append((5, spec[1], None))
                    self.draws.append((spec[1], spec[3]))
            else:
                steps.append((3, spec[1], None))
        self.steps = tuple(steps)
        out = plan.outputs
        single = type(out) is tuple and len(out) == 2 and out[0] == "buf"
        self.single = out[1] if single and plan.args[out[1]][0] == "output" else None
        self.mutates = plan.mutates
        self.fallback = None        # the Python function, for calls it cannot run compiled
        self.respecialize = None    # args -> result: the call by a sibling variant (run_fallback)
        self.run, fast = self._marshalling()
        # ``fast(args) -> result``: the whole call, for callers that found this variant by
        # the arguments' layouts (CompiledFunction's fast path); one Python frame instead
        # of three where nothing is written in place and no NumPy step runs between kernels
        plain = type(self) is CompiledVariant and not self.mutates and self.multi is None
        python_only = any(issubclass(e[0], PythonOnly) for e in plan.raises) or bool(plan.ranges)
        if plain and python_only:
            fast = _or_python(fast, self.__call__)
        self.fast = fast if plain else self.__call__
        self.slots_fn = None        # the entry's ``ccg_slots0`` (pipeline._variant sets it)
        # the C call path (runtime/fastcall.py) runs what needs no Python between the
        # kernel's steps: no extern steps, hooks or Python-only values (arguments written in
        # place are checked there as ``overlapping`` checks them)
        self.c_ready = type(self) is CompiledVariant and self.multi is None and not (
            python_only and self.mutates) and not plan.ranges

    def _marshalling(self):
        """(``run(args) -> values``, ``fast(args) -> result``): marshal the arguments, run the
        entry point(s), return every entry argument's value (arrays for buffers, None for
        scalars) in order, or the function's result. Written once per variant as
        straight-line Python from ``steps``: a loop that branched on each argument's kind
        cost about a microsecond per call, a third of a small kernel's call."""
        lines, cargs, values = [], [], []
        env = {"_device": _device, "fb": _from_buffer(self.ffi), "cast": self.ffi.cast,
               "fn": self.fn, "multi": self.multi, "size_env": self.size_env,
               "evaluate": sizes.evaluate, "rng": _random_args, "zeros": np.zeros,
               "sources": tuple(self.draws),
               "failed": lambda status: _index_error(status, self.plan.raises,
                                                              self.plan.sites)}
        checks = []
        for i, lo, hi in self.plan.ranges:     # before anything runs: outside, Python runs it
            lines.append(f"if not {lo} <= args[{i}] <= {hi}: raise OutOfRange()")
        env["OutOfRange"] = OutOfRange
        sized = bool(self.plan.sizes) or self.counts is not None   # (an env of sizes)
        if sized:
            lines.append("env = size_env(args)" if self.plan.sizes else "env = {}")
        env["NULL"] = self.ffi.NULL
        for j, (kind, a, b) in enumerate(self.steps):
            v = f"v{j}"
            if self.counts is not None:     # (values: one per plan argument)
                self.counts.position[len(values)] = len(cargs)
            if kind == 10:                      # set after the step that gives its count
                cargs.append("0" if self.plan.args[a][0] == "size" else "NULL")
                values.append("None")
                continue
            if kind in (0, 4):                  # an input: contiguous, or strided by address
                lines.append(f"{v} = args[{a}]")
                cargs.append(f"fb({v})" if kind == 0 else
                             f"cast('void*', {v}.__array_interface__['data'][0])")
            elif kind in (2, 7):                # an output or temporary (7: symbolic shape)
                env[f"shape{j}"], env[f"dtype{j}"] = a, b
                shape = (f"shape{j}" if kind == 2 else
                         f"tuple(int(evaluate(c, env)) for c in shape{j})")
                lines.append(f"{v} = empty({shape}, dtype{j})")
                cargs.append(f"fb({v})")
            elif kind == 1:                     # a constant: its pointer made once
                env[v], env[f"c{j}"] = a, self.ffi.from_buffer(a)
                cargs.append(f"c{j}")
            elif kind == 8:                     # the error report: checked after the call
                lines.append(f"{v} = zeros(4, 'i8')")
                cargs.append(f"fb({v})")
                checks.append(f"if {v}[0]: failed({v})")
            elif kind == 9:                     # a complex scalar: two doubles
                cargs += [f"args[{a}].real", f"args[{a}].imag"]
                values.append("None")
                continue
            elif kind == 5:                     # a random op's (seed, offset): two arguments
                lines.append(f"r{j} = draws[{a!r}]")
                cargs += [f"r{j}[0]", f"r{j}[1]"]
                values += ["None", "None"]
                continue
            else:                               # a Python scalar (3) or a size (6)
                cargs.append(f"args[{a}]" if kind == 3 else f"env[{a!r}]")
                values.append("None")
                continue
            values.append(v)
        if self.draws:          # every random op's (seed, offset), reserved at once
            lines.insert(0, "draws = rng(sources, args)")
        call = (f"fn({', '.join(cargs)})" if self.multi is None else
                f"multi([{', '.join(cargs)}], values{', env' if sized else ''})")
        if self.single is not None:
            result = [f"out = v{self.single}", "return out if out.ndim else out[()]"]
        elif (expr := _build_expr(self.plan.outputs)) is not None:   # (written out once:
            env["res"], env["owned"] = _result, _owned                  # no walk per call)
            result = [f"return {expr}"]
        else:
            env["build"], env["outputs"] = _build, self.plan.outputs
            result = [f"return build(outputs, values, args{', env' if sized else ''})"]
        head = ["empty = _device.output_empty", *lines]
        listed = [f"values = [{', '.join(values)}]"]
        src = "\n    ".join(["def run(args):", *head, *listed, call, *checks, "return values"])
        if self.single is not None and self.multi is None:
            listed = []             # one buffer is the result: no list of the values
        src += "\n" + "\n    ".join(["def fast(args):", *head, *listed, call, *checks, *result])
        exec(compile(src, "<cppcodegen call>", "exec"), env)
        if self.counts is not None:
            self.counts.bind(env["fb"], _device.output_empty)
        return env["run"], env["fast"]

    def overlapping(self, args) -> bool:
        """Are the arrays written in place overlapping any other array argument? Then the
        compiled code (which reads every argument's old value and writes the updated ones
        last) is not what NumPy would do, and the caller gets NumPy's own run instead.
        A read-only array to be written raises, as in NumPy."""
        arrays = [(i, a) for i, a in enumerate(args) if isinstance(a, np.ndarray)]
        for i in self.mutates:
            a = args[i]
            if not a.flags.writeable:
                raise ValueError(
                    f"argument {i} of the compiled function is updated in place, but the "
                    "array passed is read-only (flags.writeable is False); pass a writeable "
                    "array (e.g. a copy)")
            for j, b in arrays:
                if j != i and np.may_share_memory(a, b) and np.shares_memory(a, b):
                    return True
        return False

    def run_fallback(self, args, why="arguments updated in place overlap other arguments",
                     respecialize: bool = True):
        """The call as NumPy runs it (the compiled code has not written any argument yet), or
        where an array's size computed from scalars changed (``ScalarSizeChanged``), the call run by
        a variant traced for this call's values (``respecialize``, set by the compiled
        function: ``api.CompiledFunction._respecialize``): sizes computed from scalar arguments
        take few values (a filter's radius from its sigma); those from array values (a
        histogram's ``x.max() + 1``) many, and run as Python."""
        if respecialize and why == ScalarSizeChanged.reason and self.respecialize is not None:
            return self.respecialize(args)
        if self.fallback is None:
            raise ValueError(f"{why}: compiled code cannot run this call as NumPy would")
        name = getattr(self.fallback, '__qualname__', 'the function')
        if (name, why) not in _WARNED:
            _WARNED.add((name, why))
            import warnings
            warnings.warn(f"cppcodegen: {why} (in {name}); such calls run as plain Python",
                          FallbackWarning, stacklevel=4)
        return self.fallback(*args)

    def run_checked(self, args):
        """``run``, or the reason NumPy must run the call instead: a NumPy step between
        kernels gave another shape; a Python value the compiled types cannot hold
        (``errors.PythonOnly``: an int past int64, frontend/pyints.py) in a call that writes
        no argument (Python computes it exactly)."""
        try:
            return self.run(args)
        except ShapeChanged as e:       # (a count: traced again; other shapes: NumPy)
            return ScalarSizeChanged.reason if e.respecialize else SHAPE_CHANGED
        except PythonOnly as e:
            if self.mutates and not isinstance(e, OutOfRange):    # (written: too late)
                raise
            return e.reason

    def size_env(self, args) -> dict:
        """The values of the symbolic sizes and strides in this call."""
        return {name: (args[i].shape[d] if kind == 0 else int(args[i]) if kind == 2 else
                       args[i].strides[d] // args[i].itemsize)
                for name, i, d, kind in self.plan.sizes}

    def __call__(self, args):
        if self.mutates and self.overlapping(args):
            return self.run_fallback(args)
        values = self.run_checked(args)
        if isinstance(values, str):
            return self.run_fallback(args, values)
        return self.result(values, args)

    def attempt(self, args):
        """The call's result, or ``MISS`` where an array's size computed from scalar
        arguments is not the one this variant was traced with (a sibling may hold it)."""
        if self.mutates and self.overlapping(args):
            return self.run_fallback(args)
        values = self.run_checked(args)
        if values == ScalarSizeChanged.reason:
            return MISS
        if isinstance(values, str):
            return self.run_fallback(args, values, respecialize=False)
        return self.result(values, args)

    def result(self, values, args):
        """What the call returns, from the buffers ``values`` the program filled."""
        if self.single is not None:
            out = values[self.single]
            return out if out.ndim else out[()]
        return _build(self.plan.outputs, values, args,
                      self.size_env(args) if self.plan.sizes else None)


MISS = object()     # (``CompiledVariant.attempt``: not this variant's sizes)


class HookedVariant(CompiledVariant):
    """A variant that reports every materialized buffer to the intermediate hooks."""

    def result(self, values, args):
        if INTERMEDIATE_HOOKS:              # (nobody listening: the plain result)
            for name, pos in self.plan.hooks:
                view = values[pos].view()
                view.flags.writeable = False
                run_intermediate_hooks(name, view)
        return _build(self.plan.outputs, values, args,
                      self.size_env(args) if self.plan.sizes else None)


_WARNED: set = set()
SHAPE_CHANGED = ("a NumPy step between kernels (np.nonzero, x[mask], ...) gave another output "
                 "shape than on the call the function was compiled for")


def _random_args(sources, args) -> dict:
    """slot -> (seed, offset) of each random op for this call, as signed 64-bit ints
    (``device.reservations``)."""
    return {slot: tuple(v - (1 << 64) if v >= 1 << 63 else v for v in pair)
            for slot, pair in _device.reservations(sources, args).items()}


def _or_python(fast, call):
    """``fast``, or where a Python scalar left its compiled type (``PythonOnly``: an int
    left int64; it wrote no argument) the whole call
    again through ``call``, which runs it as Python."""
    def fast_or_python(args):
        try:
            return fast(args)
        except PythonOnly:
            return call(args)
    return fast_or_python


def make_variant(ffi, fn, plan: Plan, constants: dict, contiguous=None) -> CompiledVariant:
    """The right variant for ``plan``: hooked when it lists buffers to report."""
    cls = HookedVariant if plan.hooks else CompiledVariant
    return cls(ffi, fn, plan, constants, contiguous)


def _result(arr):
    return arr[()] if arr.ndim == 0 else arr


def _owned(out):
    """An output buffer as returned: a constant's copy (the caller's own, each call)."""
    return out if out is None or out.flags.writeable else out.copy()


def _build_expr(tree) -> str | None:
    """``_build(tree, values, ...)`` as one Python expression of ``values`` (a result of
    numbers with flags: a tuple of a Python int or a NumPy scalar as the run says), or None
    for trees with views, lists a loop appended to and the like (``_build`` runs those)."""
    if isinstance(tree, tuple) and tree and isinstance(tree[0], str):
        tag, v = tree
        if tag == "buf":
            return f"res(owned(values[{v}]))"
        if tag == "arr":
            return f"owned(values[{v}])"
        if tag == "py":
            return f"values[{v}].item()"
        if tag == "py?":
            flag, v = v
            return f"(values[{v}].item() if values[{flag}][()] else res(values[{v}]))"
        if tag in ("none?", "int?"):
            flag, sub = v
            inner = _build_expr(sub)
            if inner is None:
                return None
            return f"(None if values[{flag}][()] else {inner})" if tag == "none?" else \
                f"(int({inner}) if values[{flag}][()] else {inner})"
        return None
    if isinstance(tree, SliceOut):      # ``return out[:k]``: the view, written out
        return _slice_expr(tree)
    if type(tree) is tuple or type(tree) is list:
        parts = [_build_expr(t) for t in tree]
        if any(p is None for p in parts):
            return None
        return f"({', '.join(parts)},)" if type(tree) is tuple else f"[{', '.join(parts)}]"
    return None



def _slice_expr(tree: SliceOut) -> str | None:
    """``SliceOut.take`` as an expression of ``values`` (``ia[:k]`` returned: 12.6 -> 1.5 us
    a call of a small merge, where the walk of ``_build`` cost more than the kernel), or
    None where the tree is a list's or its index holds other objects."""
    base, bounds = _build_expr(tree.base), [_build_expr(b) for b in tree.bounds]
    if tree.listed is not None or base is None or None in bounds:
        return None

    def fill(k):
        if isinstance(k, tuple) and len(k) == 2 and k[0] == "bound":
            return f"int({bounds[k[1]]})"
        if isinstance(k, slice):
            parts = [fill(x) for x in (k.start, k.stop, k.step)]
            return None if None in parts else f"slice({', '.join(parts)})"
        return repr(k) if k is None or k is Ellipsis or type(k) is int else None
    items = [fill(k) for k in tree.key]
    return None if None in items else f"{base}[({', '.join(items)},)]"


def _view(a, steps, env):
    """``a`` seen through the slices, transposes and reshapes of a result that is a view of
    an argument (``passes/lower.argument_view``; in a variant of symbolic sizes, ``env``, a
    size may be text: evaluated with the call's sizes, compiled once)."""
    def size(x):
        return x if type(x) is int else int(sizes.evaluate(_size_code(x), env))
    for op, arg in steps:
        if op == "slice":
            a = a[_slices(tuple(tuple(map(size, sp)) for sp in arg) if env is not None
                          else arg)]
        elif op == "transpose":
            a = a.transpose(arg)
        else:
            a = a.reshape(arg if env is None else tuple(map(size, arg)))
    return a


_size_code = functools.lru_cache(maxsize=512)(sizes.compile_expr)


@functools.lru_cache(maxsize=512)
def _slices(spec) -> tuple:
    """The index of a view's slice step: (start, step, length) per axis (made once)."""
    return tuple(slice(s, s + st * n if s + st * n >= 0 else None, st) for s, st, n in spec)


def _build(tree, values, args, env=None):
    if type(tree) is tuple and tree and isinstance(tree[0], str):
        tag, v = tree
        if tag in ("buf", "arr"):       # (arr: a 0-d array returned as one)
            out = values[v]
            if out is not None and not out.flags.writeable:     # a constant: hand out a copy
                out = out.copy()
            return out if tag == "arr" else _result(out)
        if tag == "copy":               # (an argument's value after an update in place)
            return _result(values[v].copy())
        if tag == "py":
            return values[v].item()
        if tag == "py?":        # a Python number on the paths that set its flag
            flag, v = v
            return values[v].item() if values[flag][()] else _result(values[v])
        if tag == "none?":      # None on the paths that set its flag
            flag, tree = v
            return None if values[flag][()] else _build(tree, values, args, env)
        if tag == "int?":       # a Python int on the paths that set its flag
            flag, tree = v
            out = _build(tree, values, args, env)
            return int(out) if values[flag][()] else out
        if tag.startswith("list:"):     # a list a compiled loop appended to
            return as_list(values[v], int(tag[5:]))
        if tag == "arg":
            return args[v]
        if tag == "view":               # x[::2], x.T of an argument: a view of it, as NumPy's
            return _view(args[v[0]], v[1], env)
        return v.copy() if isinstance(v, np.ndarray) else v  # (a constant result: the
                                                             # caller's own, each call)
    if isinstance(tree, SliceOut):      # out[:k]: a view with bounds of this run
        return tree.take(_build(tree.base, values, args, env),
                         [_build(b, values, args, env) for b in tree.bounds])
    if isinstance(tree, dict):
        return {k: _build(v, values, args, env) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_build(v, values, args, env) for v in tree]
    return tuple(_build(v, values, args, env) for v in tree)
