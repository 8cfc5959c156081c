"""Lists a ``while`` loop uses as a stack or a queue, kept as arrays.

``stack = [(si, sj)]; while stack: i, j = stack.pop(); ...; stack.append((i + 1, j))``
(flood fill, depth-first search) and ``queue = [s]; head = 0; while head < len(queue): u =
queue[head]; ...; queue.append(v)`` (breadth-first search): the list grows and shrinks with
the values, which a trace cannot follow item by item. A list the function alone sees
(``escapes.py``) whose ``append`` or ``pop`` the loop calls, holding numbers or tuples of
numbers, is bound before the loop to a ``WorkList``: an array per field (an item's number,
or each place of its tuples) with room for ``capacity`` items, and two 0-d int64 arrays, the
end and the start (``pop(0)`` moves the start). Its methods update them in place, so the
loop carries them as it carries any array it updates (``carried.py``):

- ``append(v)`` stores each field at the end and adds one; past the room it has, the program
  stops (``WorkListFull``: a call that wrote no argument runs again as Python);
- ``pop()`` / ``pop(-1)`` takes one off the end, ``pop(0)`` off the start (an empty list:
  Python's IndexError "pop from empty list");
- ``len()``, truth (``while stack:``), ``lst[k]`` (Python's IndexError out of range) and
  ``lst[k] = v``;
- after the loop, ``np.array(lst)`` / ``np.asarray`` are the items between start and end;
  a slice of it (``lower[:-1]``) and ``+`` of such lists are lists of those items
  (``listbuffer.ListBuffer``).

A list an earlier compiled loop filled (``listbuffer.py``: Kahn's queue of the nodes with no
edge in) is kept the same way: its items are copied into the arrays, which have room for the
whole buffer that loop kept and the usual room more.

``heapq.heappush``/``heappop`` on it are ``heaps.py``'s. Anything else a list does
(``extend``, ``insert``, ``sort``, iteration, returning it) raises
a TraceError naming it; with the fallback on, Python runs the function. An item whose dtype
a field cannot hold (a float appended where ints were) is refused, naming the list.
Items that were Python numbers come off as Python numbers (weak); a NumPy scalar appended
to such a field makes it NumPy's and the loop traces again (``Restrengthened``). The room is
four times the array arguments' elements, and ``LEAST_ROOM`` items more (an expression of
their sizes where those are read at each call): the arrays are made with ``np.empty``, so
only the pages the list reaches are ever touched.
"""
from __future__ import annotations

import numpy as np

from ..errors import PythonOnly, TraceError, user_location
from .iteration import size_proxy
from .proxy import Proxy, wrap
from .sizes import is_dim

LEAST_ROOM = 1 << 20    # (items: np.empty's pages are touched only where the list reaches)


class WorkListFull(PythonOnly):
    """A list a compiled loop uses as a stack or a queue outgrew the room it was given."""
    reason = ("a list used as a stack or a queue grew past the items the compiled loop keeps "
              "room for")


def convert(names, get_state, set_state, lists, where, learned=None):
    """Binds each name of ``lists`` (private lists whose append or pop the loop at ``where``
    calls) that holds numbers or tuples of numbers to a ``WorkList`` of its items; an empty
    one to a ``Probe`` (its items' kind is learned from the first append: ``Learned``), or
    to a ``WorkList`` of what ``learned`` (name -> fields) says. Returns the state before."""
    before = tuple(get_state()) if lists else ()
    if not lists:
        return before
    state = list(before)
    bound = False
    for k, name in enumerate(names):
        value = state[k]
        if name in lists and type(value) is list:
            fields = _fields(value) if value else (learned or {}).get(name, Probe)
            if fields is Probe:
                state[k], bound = Probe(name), True
            elif fields is not None:
                state[k] = WorkList(name, value, *fields)
                bound = True
        elif name in lists and _filled(value):
            state[k], bound = WorkList.of_filled(name, value), True
    if bound:
        set_state(tuple(state))
    return before


def learning(names, get_state, set_state, lists, where, traced):
    """``traced()`` (a loop's trace) with ``lists`` bound as ``convert`` binds them; where an
    empty one learns its items' kind (``Learned``), the names as they were and again."""
    learned = {}
    while True:
        before = convert(names, get_state, set_state, lists, where, learned)
        try:
            return traced()
        except Learned as e:
            if e.name not in lists or e.name in learned:
                raise
            set_state(before)
            learned[e.name] = e.fields


class Learned(Exception):
    """The first item appended to a list that was empty when its loop started: the loop is
    traced again with the list kept as arrays of that kind (``control.TraceOps``)."""

    def __init__(self, name, fields):
        super().__init__(name)
        self.name, self.fields = name, fields


class Probe:
    """An empty list a loop appends to, until its first item says what its fields hold."""

    def __init__(self, name):
        self.name = name

    def append(self, item):
        fields = _fields([item])
        if fields is None:
            raise TraceError(f"an item that is not a number or a tuple of numbers is appended "
                             f"to the list '{self.name}' (at {user_location()})")
        raise Learned(self.name, fields)

    def traced_truth(self):
        return False

    def length(self):
        return 0

    def __len__(self):
        return 0

    def pop(self, index=-1):
        raise TraceError(f"the list '{self.name}' is popped before anything is appended to "
                         f"it (at {user_location()})")

    def __getattr__(self, name):
        if not hasattr(list, name) or name.startswith("__"):
            raise AttributeError(f"'list' object has no attribute '{name}'")
        raise TraceError(f"list.{name} of the list '{self.name}' before anything is appended "
                         f"to it (at {user_location()})")


def _fields(items):
    """(dtype per field, tupled) of ``items``, or None when they are not numbers (or 0-d
    traced values), or tuples of them of one length."""
    tupled = type(items[0]) is tuple
    width = len(items[0]) if tupled else 1
    columns = [[] for _ in range(width)]
    weak = [True] * width
    for item in items:
        values = item if tupled else (item,)
        if (type(item) is tuple) != tupled or len(values) != width:
            return None
        for f, (column, v) in enumerate(zip(columns, values)):
            if isinstance(v, Proxy) and not v.node.shape:
                column.append(v.dtype)
                weak[f] = weak[f] and v.weak
            elif is_dim(v):                 # (a size, a loop's index: ``[i * w + j]``)
                column.append(np.dtype(np.int64))
            elif isinstance(v, (bool, int, float)):
                column.append(np.asarray(v).dtype)
            elif isinstance(v, (np.bool_, np.integer, np.floating)):
                column.append(v.dtype)
                weak[f] = False
            else:
                return None
    return [np.result_type(*c) for c in columns], tupled, weak


def _filled(value) -> bool:
    """Is ``value`` a list an earlier compiled loop filled with numbers (``listbuffer.py``:
    Kahn's queue of the nodes with no edge in, then drained by a ``while``)?"""
    from .listbuffer import ListBuffer
    return isinstance(value, ListBuffer) and value.buf.ndim == 1 and \
        (not value.prefix or _fields(value.prefix) is not None)


class Restrengthened(Exception):
    """An item a NumPy scalar was appended to a list whose items were Python numbers: its
    field's values are NumPy's from now on, and the loop holding the list traces again."""

    def __init__(self, worklist):
        super().__init__(worklist.name)
        self.worklist = worklist


def _room():
    """Four times the elements of the array arguments, and LEAST_ROOM more: an int, or an
    expression of their sizes where those are read at each call (a larger image gets a
    larger room, without another build)."""
    from .externs import TraceState
    room = LEAST_ROOM
    for node in TraceState.inputs or ():
        if node.op == "input" and node.shape:
            count = 1
            for d in node.shape:
                count = count * d
            room = room + 4 * count
    return room


class WorkList:
    """A list a compiled ``while`` loop pushes to and pops from: arrays and two counters."""

    def __init__(self, name, items, dtypes, tupled, weak, more=0):
        from .creation import empty, full
        self.name, self.tupled = name, tupled
        self.weak = list(weak)      # per field: items Python numbers (NEP 50's weak scalars)
        self.room = _room() + len(items) + more
        self.fields = [empty((self.room,), dtype=dt) for dt in dtypes]
        for k, item in enumerate(items):
            for buf, v in zip(self.fields, item if tupled else (item,)):
                buf[k] = size_proxy(v) if is_dim(v) else v
        self.end = full((), len(items), dtype=np.int64)
        self.start = full((), 0, dtype=np.int64)

    @classmethod
    def of_filled(cls, name, filled):
        """The list ``filled`` (a ``ListBuffer``) as a WorkList: its items before the loop
        that filled it, then those the loop appended (as many as its count says), with room
        for the whole buffer that loop kept (a length of sizes) and ``_room()`` more."""
        prefix, buf = filled.prefix, filled.buf
        dtype = buf.dtype if not prefix else np.result_type(buf.dtype, *_fields(prefix)[0])
        self = cls(name, prefix, [dtype], False, [filled.python == -1], more=buf.shape[0])
        start = len(prefix)
        self.fields[0][start:start + buf.shape[0]] = buf
        self.end[()] = start + (filled.counter[()] if filled.counter is not None
                                else buf.shape[0])
        return self

    # -- what the loop does
    def append(self, item):
        values = item if self.tupled and type(item) is tuple else (item,)
        if len(values) != len(self.fields) or (type(item) is tuple) != self.tupled:
            raise TraceError(f"an item of another form is appended to the list '{self.name}' "
                             f"(at {user_location()}): a compiled loop keeps lists whose items "
                             "are all numbers, or all tuples of numbers of one length")
        weaks = [isinstance(v, (bool, int, float)) or is_dim(v) or   # (a loop's index, a
                 isinstance(v, Proxy) and v.weak for v in values]       # size: Python ints)
        values = tuple(size_proxy(v) if is_dim(v) else v for v in values)
        for f, (buf, v, weak) in enumerate(zip(self.fields, values, weaks)):
            dt = v.dtype if isinstance(v, Proxy) else np.asarray(v).dtype
            held = np.can_cast(dt, buf.dtype, "safe") or \
                weak and dt.kind in "iub" and buf.dtype.kind in "iu"     # (range-checked)
            if not held:
                raise TraceError(f"an item of dtype {dt} is appended to the list '{self.name}' "
                                 f"(at {user_location()}), whose items are {buf.dtype}: start "
                                 "the list with items of the type it will hold")
            if self.weak[f] and not weak:
                self.weak[f] = False
                raise Restrengthened(self)
        from .raises import error_check
        where = user_location()
        end = self.end[()]      # (the index a copy of the count, as counted lists keep it)
        error_check(end, end < self.room, (WorkListFull, (
            f"the list '{self.name}' grew past the {self.room} items the compiled loop keeps "
            f"room for (at {where}); this call already updated an argument",)), where)
        for buf, v in zip(self.fields, values):
            buf[end] = v
        self.end[()] = end + 1

    def pop(self, index=-1, empty="pop from empty list"):
        from .raises import error_check
        where = user_location()
        if not isinstance(index, (int, np.integer)) or index not in (0, -1):
            raise TraceError(f"pop({index!r}) of the list '{self.name}' (at {where}): a compiled "
                             "loop takes items off a list's end (pop()) or start (pop(0))")
        at = (self.start if index == 0 else self.end)[()]
        error_check(at, self.end > self.start, (IndexError, (empty,)), where)
        if index == 0:
            self.start[()] = at + 1
        else:
            at = at - 1
            self.end[()] = at
        return self._item(at)

    def _item(self, at):
        values = []
        for buf, weak in zip(self.fields, self.weak):
            v = buf[at]
            values.append(wrap(v.node, weak=True, scalar=True) if weak else v)
            v.scalar = True
        return tuple(values) if self.tupled else values[0]

    def at(self, k):
        """The item ``k`` places after the start, unchecked (``heaps.py``: a position the
        heap's own arithmetic keeps inside, or read where it is not used)."""
        return self._item(self.start + k)

    def put(self, k, item):
        at = self.start + k
        for buf, v in zip(self.fields, item if self.tupled else (item,)):
            buf[at] = v

    def _position(self, index, where):
        from .raises import error_check
        if isinstance(index, slice) or not isinstance(index, (int, np.integer, Proxy)):
            raise TraceError(f"the list '{self.name}' indexed by {type(index).__name__} (at "
                             f"{where}): a compiled loop reads one item of it at an int")
        at = np.where(np.less(index, 0), self.end + index, self.start + index)
        inside = np.logical_and(at >= self.start, at < self.end)
        return error_check(at, inside, (IndexError, ("list index out of range",)), where)

    def __getitem__(self, index):
        if isinstance(index, slice):        # (after the loop: the hull's lower[:-1])
            from .listbuffer import ListBuffer
            return ListBuffer([], self._items()[index], -1 if self.weak[0] else 0)
        return self._item(self._position(index, user_location()))

    def __add__(self, other):               # lower[:-1] + upper[:-1], lower + upper
        from .listbuffer import joined
        return joined(self, other)

    def __radd__(self, other):
        from .listbuffer import joined
        return joined(other, self)

    def _items(self):
        """The items between start and end as an array (its length the run's)."""
        if self.tupled:
            raise TraceError(f"the list '{self.name}' of tuples a compiled loop kept as arrays "
                             f"is sliced or joined (at {user_location()}): a list of numbers "
                             "only")
        return self.fields[0][self.start[()]:self.end[()]]

    def __setitem__(self, index, item):
        at = self._position(index, user_location())
        for buf, v in zip(self.fields, item if self.tupled else (item,)):
            buf[at] = v

    def traced_truth(self):
        return np.greater(self.end, self.start)

    def length(self):
        return wrap((self.end - self.start).node, weak=True, scalar=True)

    def __len__(self):
        raise TraceError(f"len() of the list '{self.name}' outside the rewritten code (at "
                         f"{user_location()})")

    # -- after the loop
    def traced_array(self, dtype=None, listed=False):
        if listed or self.tupled:
            raise TraceError(f"the list '{self.name}' a compiled loop used as a stack or a "
                             f"queue is {'returned' if listed else 'made an array of tuples'} "
                             f"(at {user_location()}): return np.array of a list of numbers")
        buf = self.fields[0] if dtype is None else self.fields[0].astype(dtype)
        start, end = self.start[()], self.end[()]
        if dtype is None and buf.dtype != np.float64:   # (np.array([]) is float64: a call
            from ..errors import EmptyList              # left with no item runs as Python)
            from .raises import error_check
            where = user_location()
            end = error_check(end, end > start, (EmptyList, (
                f"the list '{self.name}' was left with no item (at {where}): NumPy's array "
                f"of it is float64, the compiled one {buf.dtype}; this call already updated "
                "an argument",)), where)
        return buf[start:end]

    def __iter__(self):
        raise TraceError(f"the list '{self.name}' a compiled loop used as a stack or a queue "
                         f"is iterated (at {user_location()}): index it, or np.array(it)")

    def __getattr__(self, name):
        if not hasattr(list, name) or name.startswith("__"):   # (the tracer's own questions)
            raise AttributeError(f"'list' object has no attribute '{name}'")
        raise TraceError(f"list.{name} of the list '{self.name}' (at {user_location()}): a "
                         "compiled loop keeps a list it uses as a stack or a queue as arrays, "
                         "and does append, pop(), pop(0), len, indexing and np.array of it")


from . import heaps     # noqa: E402 -- (heapq on these lists: registered with ``replace``)
heaps.REGISTERED = True
