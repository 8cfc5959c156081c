"""A list a compiled loop appends one item to in every iteration, kept as an array.

``history = []; for t in range(steps): ...; history.append(energy)`` then
``np.array(history)``: traced once, the body would append one placeholder. When the first
trace of a ``for`` loop (a range with an int step, no ``break``) shows a list that grew by
exactly one item (a traced value or a number), the loop is traced again with the name bound
to an ``Appender``: ``append(v)`` stores ``v`` at the iteration's position of an array of
(trip count,) + the item's shape, made before the loop and carried by it. After the loop the
name is a ``ListBuffer``: ``np.array``/``np.asarray``/``len``/indexing/``for`` and NumPy
functions see the items before the loop followed by that array; returned, it is a list of
the array's items (``frontend/trace.py``). Any other use of it (list arithmetic, appending
after the loop) raises TraceError: with the fallback on,
Python runs the function. Hooks: ``carried.Carried`` (``plan``, ``bind``, ``finish``).

A list appended to under a branch on array values (``if sieve[i]: primes.append(i)``) is
*counted*: the branch raises ``CountAppends``, and the innermost ``for`` loop whose names hold
the list (its trip count known when it starts) traces its body again with the list counted:
``append(v)`` stores ``v`` at a run-time count (a 0-d int64 array the loop updates in place)
in an array of the trip count times the appends one iteration traced, and adds one to the
count. After the loop the list is that array's first ``count`` items (a slice whose length
the run decides: ``dataslice.py``). An append in a loop nested in that one is refused.
"""
from __future__ import annotations

import numpy as np

from ..errors import EmptyList, TraceError, user_location
from .proxy import asproxy, Proxy, python_number, wrap


class Retrace(Exception):
    """The loop is traced again, its appended lists bound to ``Appender``s."""


class CountAppends(Retrace, TraceError):
    """A branch on array values appended to lists (``changed``: (list, items before, items
    after)): the innermost compiled ``for`` loop holding them counts them (``count``); met
    by no such loop, it is the branch's error (``message``)."""

    def __init__(self, message, changed):
        super().__init__(message)
        self.changed = changed


LOOPS = []      # the compiled loops being traced, innermost last (carried.Carried.run)


class _Plan:
    def __init__(self, prefix, buf, index, counter=None, per=1, loop=None):
        self.prefix, self.buf, self.index = prefix, buf, index
        self.counter, self.per, self.loop = counter, per, loop    # (counted lists)
        self.item = None            # (counted: an item the trace appended, for its dtype)
        self.appender = None
        self.held = []              # names bound to the last item at the end of the body


def plan(loop, changed) -> bool:
    """``changed``: (list, items before, items after) of the containers the body changed.
    True (and raises Retrace) when each grew by one item in a loop that can keep them."""
    if not loop.loop or loop.induction is None or not changed:
        return False
    spec, var = loop.induction
    plans = {}
    for box, before, after in changed:
        names = [n for n, v in zip(loop.names, loop.init_state) if v is box]
        if type(box) is not list or len(names) != 1 or names[0] not in loop.private or \
                len(after) != len(before) + 1 or \
                any(a is not b for a, b in zip(before, after)):
            return False
        item = _traced(after[-1])
        buf = None if item is None else _buffer(spec, item, before)
        if buf is None:
            return False
        plans[names[0]] = _Plan(list(before), buf, _position(spec, var))
    loop.lists = plans
    raise Retrace()


def growing(changed) -> bool:
    """Did each changed container only have items appended (a list that grew)?"""
    return all(type(box) is list and len(after) > len(before) and
               all(a is b for a, b in zip(before, after)) for box, before, after in changed)


def count(loop, error) -> bool:
    """Does ``loop`` count the lists a branch in it appended to (``CountAppends``)? Then
    they are planned and the loop is traced again; False when an outer loop or nobody
    can (the list is not among its names, a while loop, appends before the branch)."""
    if not loop.loop or loop.induction is None:
        return False
    spec, _ = loop.induction
    plans = {}
    for box, before, after in error.changed:
        names = [n for n, v in zip(loop.names, loop.init_state) if v is box]
        if len(names) != 1 or names[0] not in loop.private or list(box) != before or not all(
                a is b for a, b in zip(box, before)):
            return False
        item = _traced(after[len(before)])
        p = _Plan(list(before), None, None, None, len(after) - len(before), loop)
        if item is None or not _counted_arrays(p, spec, item):
            return False
        plans[names[0]] = p
    loop.lists.update(plans)
    _renew(loop)
    return True


def counts() -> dict:
    """The appends so far of each list the loops being traced count: {id: [its appender,
    the count, the most a side of a branch left]}. A branch's sides are traced (again, when
    their types change) one after the other, and only one runs: ``restart`` each side at
    the count from before the branch, take the ``most`` of them, ``settle`` on it; summed,
    a state machine's one append got room for six per trip (48 MB for 10^6 samples)."""
    return {id(p.appender): [p.appender, p.appender.count, p.appender.count]
            for loop in LOOPS for p in getattr(loop, "lists", {}).values()
            if p.appender is not None}


def restart(base: dict) -> None:
    for a, count, _ in base.values():
        a.count = count


def most(base: dict) -> None:
    for row in base.values():
        row[2] = max(row[2], row[0].count)


def settle(base: dict) -> None:
    for a, _, top in base.values():
        a.count = top


def _counted_arrays(p, spec, item) -> bool:
    """A counted list's array (room for ``p.per`` items per trip) and count, made anew."""
    from .creation import zeros
    p.item = item
    p.buf = _buffer(spec, item, p.prefix, p.per, counted=True)
    p.counter = zeros((), dtype=np.int64)
    return p.buf is not None


def _renew(loop) -> None:
    """Fresh arrays for every counted list of ``loop``: a trace cut short by ``Retrace``
    may have updated the old ones inside its regions."""
    for p in loop.lists.values():
        if p.counter is not None:
            _counted_arrays(p, loop.induction[0], p.item)


def what_changed(construct, changed) -> str:
    box = changed[0][0]
    name = next((n for n, v in zip(construct.names, construct.init_state) if v is box), "")
    return f"changes the Python {type(box).__name__}" + (f" '{name}'" if name else "")


def refusal(branch, changed) -> str:
    """Why a branch on array values may not change a container (``CountAppends``' words
    when no loop counts the items)."""
    tuples = any(isinstance(v, tuple) for _, before, after in changed
                 for v in list(after)[len(before):] if isinstance(after, list))
    return (f"the branch on array values at {branch.where} {what_changed(branch, changed)}, "
            "which compiled code cannot do here (an append compiles when the list is the "
            "function's own, made by `name = []` and only appended to, read and returned, "
            "in the body of a for loop over a range or an array, not in a while loop or a "
            "loop nested in it"
            + ("; and its items are numbers or arrays, not tuples: append each field to a "
               "list of its own" if tuples else "") +
            "); build an array instead (a mask: np.nonzero(x > t)[0], or "
            "np.zeros(n) filled by index)")


def bind(loop, state) -> None:
    """Each planned list's name bound to a fresh ``Appender`` for one trace of the body."""
    for name, p in getattr(loop, "lists", {}).items():
        p.appender = Appender(p)
        state[loop.names.index(name)] = p.appender


def check(loop, where, state, updated=()) -> None:
    """Each ``Appender`` got exactly one item in the trace just made, a value no later
    update can change: a number, or an array that is not a view and that no name holds at
    the end of the iteration, or that the names holding it never update in place
    (``updated``: the arrays the body updated; Python's list would hold that very array,
    and show what a later ``u[...] = `` writes into it: ``frames.append(u)``;
    ``c = f(c); rows.append(c)`` rebinds ``c`` only)."""
    from .carried import Unroll
    for name, p in getattr(loop, "lists", {}).items():
        a = p.appender
        if a is not None and p.counter is not None and a.count > p.per:
            p.per = a.count             # (appends on more paths: room for each of them)
            _renew(loop)
            raise Retrace()
        if a is not None and p.counter is None and a.count != 1:
            raise Unroll(where, f"list '{name}' is appended to {a.count} times in an iteration")
        item = a.item if a is not None else None
        p.held = [n for n, v in zip(loop.names, state) if v is item] if \
            isinstance(item, Proxy) else []     # (after the loop: not updated, finish)
        if isinstance(item, Proxy) and item.node.shape and (
                item._base is not None or item.arg is not None or
                _held(loop, state, item, updated)):
            raise Unroll(where, f"list '{name}' gets an array that may change after it is "
                         "appended")


def finish(loop, state) -> None:
    from .carried import Unroll
    for name, p in getattr(loop, "lists", {}).items():
        for held in getattr(p, "held", ()):     # the last item: an update through the name
            v = state[loop.names.index(held)]   # that holds it would show in the list
            if isinstance(v, Proxy):
                v.copied_from = Unroll(loop.where, f"the array last appended to list "
                                       f"'{name}' is updated in place after the loop")
        item = p.appender.item if p.appender is not None else None
        head = len(p.prefix) if all(map(python_number, p.prefix)) else 0
        python = -1 if head == len(p.prefix) and python_number(item) else head
        state[loop.names.index(name)] = ListBuffer(p.prefix, p.buf, python, p.counter)


def _buffer(spec, item, before, per=1, counted=False):
    """Room for ``per`` items per trip: not filled where every row gets an item, zeros where
    a count of them is (the rows past it are read by a cast to ``np.array``'s dtype)."""
    from .creation import empty, zeros
    from .sizes import symbolic
    if all(type(v) is int for v in (spec.start, spec.stop, spec.step)):
        trips = len(range(spec.start, spec.stop, spec.step))
    else:
        sh = symbolic()
        span = spec.stop - spec.start if spec.step > 0 else spec.start - spec.stop
        step = abs(spec.step)
        trips = sh.SymInt.wrap(sh.canon(span)) if step == 1 else \
            sh.SymInt.wrap(sh.canon(sh.floordiv(span + step - 1, step)))
        if not before and item.dtype != np.float64:
            try:                # (no trip: NumPy's np.array([]) is float64, not the items'
                if not sh.less(0, trips):   # dtype: a call without a trip is guarded out,
                    return None             # and builds with Python running the loop)
            except sh.LoopDependent:        # (in a loop: as it is)
                pass
    return (zeros if counted else empty)((trips * per,) + tuple(item.shape), dtype=item.dtype)


def _position(spec, var):
    from .sizes import symbolic
    sh = symbolic()
    k = var - spec.start if spec.step > 0 else spec.start - var
    step = abs(spec.step)
    return sh.SymInt.wrap(sh.canon(k if step == 1 else sh.floordiv(k, step)))


class Appender:
    """The list's name inside the loop body: ``append`` stores at the iteration's row."""

    def __init__(self, p):
        self.p, self.count, self.item = p, 0, None

    def append(self, value):
        self.count += 1
        self.item = value
        value = _traced(value)
        if value is None:
            raise TraceError(f"an item appended at {user_location()} is not a number or an "
                             "array")
        if tuple(value.shape) != tuple(self.p.buf.shape[1:]):
            raise TraceError(f"an item appended at {user_location()} has shape "
                             f"{tuple(value.shape)}, not {tuple(self.p.buf.shape[1:])}")
        if self.p.counter is None:
            self.p.buf[self.p.index] = value
            return
        if LOOPS[-1] is not self.p.loop:
            raise TraceError(f"a list appended to under a branch on array values is appended "
                             f"to in a nested loop (at {user_location()}); only appends in the "
                             "loop's own body (and its branches) compile")
        k = self.p.counter[()]          # (the count: items appended so far)
        self.p.buf[k] = value
        self.p.counter[()] = k + 1

    def __getattr__(self, name):
        if not hasattr(list, name):     # (what a list has not: the tracer's own questions)
            raise AttributeError(f"'list' object has no attribute '{name}'")
        raise TraceError(f"a list a compiled loop appends to is used in it other than by "
                         f"append ('{name}', at {user_location()})")


class ListBuffer:
    """The list after the loop: its items before it, then the array of those appended."""

    def __init__(self, prefix, buf, python=0, counter=None):
        self.prefix, self.buf = prefix, buf
        self.python = python        # how many first items are Python numbers (-1: all)
        self.counter = counter      # counted: how many of buf's items were appended

    def traced_array(self, dtype=None, listed=False) -> Proxy:
        """The list's items as an array (``listed``: returned as a list, trace.py)."""
        from .concat import join
        if self.counter is not None:        # (a slice the run decides the length of)
            n = self.counter[()]
            if not (listed or self.prefix or dtype is not None or
                    self.buf.dtype == np.float64):  # (np.array([]) is float64: Python runs
                from .raises import error_check     # a call that appends nothing)
                where = user_location()
                n = error_check(n, n > 0, (EmptyList, (
                    f"a list filled under a branch got no item (at {where}): NumPy's array "
                    "of it is float64, the compiled one "
                    f"{self.buf.dtype}; this call already updated an argument",)), where)
            buf = self.buf if dtype is None else self.buf.astype(dtype)
            out = buf[:n]       # (cast first: a slice of run-time length is only returned)
            if self.prefix:
                from .creation import array
                out = join([array(self.prefix, dtype=dtype, original=np.array), out], 0)
            return out
        if self.prefix:
            from .creation import array
            head = array(self.prefix, original=np.array)
            out = join([head, self.buf], 0)
        else:
            out = self._nonempty(listed, dtype)
        return out if dtype is None else out.astype(dtype)

    def _nonempty(self, listed, dtype):
        """The buffer of a list with an item per iteration and none before, behind a check
        that it got one where NumPy's array of an empty list differs from the buffer's empty
        rows: ``np.array([])`` is float64 of shape (0,), whatever the items would have been
        (``frames.append(u.copy())`` over a loop of no trips); such a call runs as Python."""
        n = self.buf.shape[0]
        if listed or (self.buf.ndim == 1 and (dtype is not None or self.buf.dtype == np.float64)) \
                or isinstance(n, int) and n > 0:
            return self.buf
        if isinstance(n, int):
            return asproxy(np.zeros(0))
        from .raises import error_check
        from .proxy import size_operand
        where = user_location()
        count = size_operand(n)
        return wrap(error_check(self.buf, count > 0, (EmptyList, (
            f"a list a compiled loop filled got no item (at {where}): NumPy's array of it is "
            f"float64 of shape (0,), the compiled one {self.buf.dtype} of shape (0, ...); this "
            "call already updated an argument",)), where).node)

    def __len__(self):
        raise TraceError(f"len() of a list a compiled loop filled, outside the rewritten code "
                         f"(at {user_location()})")

    def length(self):
        if self.counter is not None:        # (a Python int in the plain function)
            n = len(self.prefix) + self.counter[()]
            return wrap(n.node, weak=True, scalar=True)
        return len(self.prefix) + self.buf.shape[0]

    def __getitem__(self, index):
        if isinstance(index, slice):        # (a list: a slice of it is a list)
            return ListBuffer([], self.traced_array(listed=True)[index], self.python)
        return self.traced_array()[index]

    def __add__(self, other):
        return joined(self, other)

    def __radd__(self, other):
        return joined(other, self)

    def __iter__(self):
        return iter(self.traced_array())

    def __array_function__(self, func, types, args, kwargs):    # np.mean(history)
        return func(*_arrays(args), **dict(zip(kwargs, _arrays(kwargs.values()))))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):   # np.sqrt(history)
        return getattr(ufunc, method)(*_arrays(inputs), **kwargs)

    def __getattr__(self, name):
        if not hasattr(list, name):     # (what a list has not: no list method of the user's)
            raise AttributeError(f"'list' object has no attribute '{name}'")
        raise TraceError(f"a list a compiled loop filled is used as a list ('{name}', at "
                         f"{user_location()}): only np.array/np.asarray/len/indexing/iteration "
                         "of it compile")


def joined(a, b) -> ListBuffer:
    """``a + b`` of lists a compiled loop filled or kept (``ListBuffer``, ``WorkList``) and
    Python lists of numbers: a list of the items of both, in order."""
    from .concat import join
    from .creation import array

    def items(x):
        if isinstance(x, list):
            return array(x, original=np.array) if x else None, \
                all(map(python_number, x))
        if isinstance(x, ListBuffer):
            return x.traced_array(listed=True), x.python == -1
        if hasattr(type(x), "_items"):      # (a WorkList)
            return x._items(), x.weak[0]
        raise TypeError(f'can only concatenate list (not "{type(x).__name__}") to list '
                        f"(at {user_location()})")
    parts = [items(a), items(b)]
    arrays = [p for p, _ in parts if p is not None]
    if any(p.ndim != 1 for p in arrays):
        raise TraceError(f"lists of arrays a compiled loop filled are joined with + (at "
                         f"{user_location()}): np.concatenate their arrays instead")
    out = arrays[0] if len(arrays) == 1 else join(arrays, 0)
    return ListBuffer([], out, -1 if all(w for _, w in parts) else 0)


def _traced(item):
    """An appended item as a traced value (a loop index: its int64 value), or None."""
    from .iteration import size_proxy
    from .sizes import is_dim, symbolic
    if is_dim(item):
        return size_proxy(symbolic().canon(item))
    if isinstance(item, bool) or not isinstance(item, (Proxy, int, float, complex,
                                                       np.generic)):
        return None
    return asproxy(item)


def _arrays(values) -> list:
    return [v.traced_array() if isinstance(v, ListBuffer) else v for v in values]


def grown(init, now) -> str:
    """Why an array rebound to one of another shape is refused, and what compiles."""
    if not isinstance(init, np.ndarray) or np.shape(now) == init.shape:
        return ""
    return (f" to an array of shape {tuple(np.shape(now))} (it was {init.shape}): an array "
            "grown in a loop (np.append, np.concatenate) is not compiled; append to a list "
            "and call np.array after the loop, or fill a buffer made before it (out = "
            "np.empty(n); out[k] = v; k += 1) and use out[:k]")


def _held(loop, state, item, updated) -> bool:
    """Is ``item`` bound to a name at the end of the iteration that the body updates in
    place (the array itself, or the array the name starts the body bound to)?"""
    names = {n for n, v in zip(loop.names, state) if v is item}
    if not names:
        return False
    hit = {id(p) for p, _ in updated}
    return id(item) in hit or any(id(s.placeholder) in hit for s in loop.slots
                                  if s.name in names and s.placeholder is not None)
