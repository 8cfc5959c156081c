"""The traced program as plain data.

In: nodes created by the tracer. Out: a ``Graph`` (inputs, nodes in topological order,
an output tree) with a canonical text form that is printable and hashed into cache keys.
No sympy here: a warm start traces and hashes without it.

Node ops:
  input(index)            an array argument           scalar(index)   a runtime float argument
  const(value)            a 0-d constant              constant(key)   a constant array (passed in)
  <ufunc name>            pointwise op, inputs already cast to the loop dtype
  cast, where             pointwise
  reduce(kind, axes)      reduction over ``axes`` (reduced dims removed)
  reshape, transpose(perm), broadcast_to, slice(spec)      views: index rewrites, no copies
  iota                    arange along the last axis (np.arange with a symbolic bound)
  gather(axis)            src[..., i0, i1, ..., :]: inputs src and integer index arrays that
                          broadcast together and select src's axes axis, axis+1, ...
  scatter(axis, accumulate)   base with value stored at the positions the index arrays give
                          (inputs base, value, indices; as gather's), in C order of the value;
                          ``accumulate`` ('add', ...) combines instead of storing (np.add.at)
  size(expr)              a symbolic element count as an int64 value (mean over dynamic sizes)
  bind(sym)               an int64 0-d value that sets data symbol ``sym`` where it runs (a
                          slice's start or length from array values); slice and setitem
                          nodes that use the symbol take their binds as trailing inputs
  check(code)             its first input's value, once its second (an element count known
                          only at run time) is checked to be > 0 (np.max of an empty array)

Structured control flow (``Region``, below; built by ``frontend/control.py``):
  for(var, start, stop, step, body, ncarry, test)
                          a loop over induction variable ``var`` (a size symbol the body's
                          index expressions use; start/stop/step are sizes); inputs: the carried
                          values' initial values, then the outer nodes the body reads; with
                          ``test`` the body's last result says whether to go on (``break``)
  while(cond, body, ncarry)   as ``for``; ``cond`` is a region whose one result is a 0-d bool
  if(then, orelse, ncarry)    inputs: the 0-d bool condition, the initial values, outer nodes
  carry(index)            a region's parameter: carried value ``index`` as the region starts
  loop_out(index)         carried value ``index`` after the construct
A region's nodes are not in the outer graph's node list.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from .ufuncs import OPS


@dataclass(frozen=True, eq=False)
class Node:
    op: str
    inputs: tuple
    attrs: tuple            # sorted (name, value) pairs; values are hashable plain data
    shape: tuple
    dtype: np.dtype
    where: str = ""

    def attr(self, name, default=None):
        for k, v in self.attrs:
            if k == name:
                return v
        return default

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self):
        if all(type(d) is int for d in self.shape):
            return int(np.prod(self.shape, dtype=np.int64))
        from .shapes import prod          # symbolic sizes (dynamic shapes)
        return prod(self.shape)

    def __repr__(self):
        return f"Node({self.op}, shape={self.shape}, dtype={self.dtype})"


EFFECTS: list = []  # while a function is traced: its constructs whose regions can raise NumPy's
                    # errors (an index out of range, np.max of an empty array), kept in the graph
                    # where nothing reads their values (``for ...: if a[lo:hi][-1] > t: break``)
RANGES: list = []   # while a function is traced: (argument index, lowest, highest) of the Python
                    # int arguments a narrower int dtype takes (``pyints._fitting``): checked as
                    # a call starts (one outside runs as Python, which raises NumPy's error)
RAISES: list = []   # while a function is traced: the (type, args) of each exception its own
                    # ``raise`` statements in branches on array values raise (check code
                    # runtime/compiled.USER_CODES + position)
NODES_MADE = [0]    # nodes made by this process so far (how much a loop run by Python adds)
NODE_BUDGET = [None]  # while a function without source is traced: (the NODES_MADE past which
                      # the trace stops, why): its loops run in Python, one step per trip
EXTERN_WEIGHT = 50  # ... a NumPy call between kernels counting as this many: each splits the
                    # build into another entry (a 1000-row loop of np.bincount took minutes)
STEPS: list = []    # while a function is traced: its own checks, control nodes and element
                    # reads at checked positions (outside every region), in the order made
MADE: list = []     # while a region is traced: one dict per open region, id -> node, of the
                    # nodes made since it opened (frontend/carried.py reads them; the dict
                    # keeps them alive, so an id is never reused for another node meanwhile)
REGION_EFFECTS: list = []   # one list per region being traced: its nodes kept for their errors
TRYING: list = []   # while a function is traced: the file:line of each of its try statements
                    # with handlers being run (no node is made in one: control.TraceOps)


def keep_for_errors(node) -> None:
    """``node`` computed where it is made even when nothing reads its value, for the errors
    it may raise: in the region being traced, or in the function's graph."""
    if not MADE:
        EFFECTS.append(node)
    elif REGION_EFFECTS:
        REGION_EFFECTS[-1].append(node)


def make_node(op, inputs, shape, dtype, where="", **attrs) -> Node:
    if TRYING:
        TRYING[-1].refuse()
    if op == "cast" and inputs[0].dtype.kind == "c" and np.dtype(dtype).kind in "iuf":
        complex_warning()
    node = Node(op, tuple(inputs), tuple(sorted(attrs.items())), tuple(map(_dim, shape)),
                np.dtype(dtype), where)
    invariant = bool(MADE) and (op == "const" or _invariant(node))
    if MADE and not invariant and op != "check" and \
            any(isinstance(i, Node) and i.op == "check" for i in node.inputs):  # (``dt /
        past = Node(op, tuple(map(_past_check, node.inputs)), node.attrs, node.shape,
                    node.dtype, where)          # dx ** 2``: the power checked for overflow)
        if _invariant(past):
            node, invariant = past, True
    if invariant:                       # made once, before every loop and branch
        object.__setattr__(node, "invariant", True)
    else:
        for made in MADE:
            made[id(node)] = node
    if not MADE and is_step(node):
        STEPS.append(node)
    NODES_MADE[0] += EXTERN_WEIGHT if op == "extern" else 1
    if NODE_BUDGET[0] is not None and NODES_MADE[0] > NODE_BUDGET[0][0]:
        from ..errors import UnsupportedError
        raise UnsupportedError(NODE_BUDGET[0][1])
    return node


# Loop-invariant code motion while tracing: a number computed from the function's scalar
# arguments and constants alone (``c * dt / dx`` in a stencil's inner loop) is the same in
# every iteration of every construct, so it belongs to no region: it is computed once before
# them (a region's free input), not per element as a kernel of the innermost loop. Only pure
# element ops (no random draws; a check stays where Python runs it, testing the value made
# before the loop).
_IMPURE = frozenset({"random_uniform", "random_normal"})


def _invariant(node) -> bool:
    if node.shape or not node.inputs:
        return False
    if node.op != "cast" and (node.op in _IMPURE or node.op not in OPS):
        return False
    return all(i.op == "scalar" or getattr(i, "invariant", False) for i in node.inputs)


def _past_check(node):
    """The value a check passes on, where that value is invariant: a node made of it is
    computed before the loop, the check (kept for its error) staying where Python runs it;
    a value that fails its check is never used (the error stops the program)."""
    if isinstance(node, Node) and node.op == "check" and (node.inputs[0].op == "scalar" or
                               getattr(node.inputs[0], "invariant", False)):
        return node.inputs[0]
    return node


def complex_warning():
    """NumPy's warning for a complex -> real cast (which keeps the real part), naming the
    user's line; the trace warns once, when it compiles (NumPy: on every call)."""
    import warnings
    from ..errors import user_location
    warnings.warn(f"Casting complex values to real discards the imaginary part (at "
                  f"{user_location()})", np.exceptions.ComplexWarning, stacklevel=3)


def _dim(d):
    """A size: an int, or (dynamic shapes) a sympy expression of size symbols."""
    if type(d) is int:
        return d
    if isinstance(d, (np.integer, bool)):
        return int(d)
    from .shapes import canon
    return canon(d)


VIEW_OPS = frozenset({"reshape", "transpose", "broadcast_to", "slice"})
CONTROL_OPS = frozenset({"for", "while", "if"})
LEAF_OPS = frozenset({"input", "scalar", "const", "constant"})


@dataclass
class Graph:
    inputs: list            # input/scalar nodes, in argument order
    nodes: list             # every node, topologically sorted
    outputs: object         # the output tree: nested tuple/list/dict with Node leaves
    leaves: list            # flat list of output nodes (in tree order)
    constants: dict = field(default_factory=dict)   # key -> np.ndarray for 'constant' nodes
    hints: dict = field(default_factory=dict)       # size symbol -> its value when traced
    guards: tuple = ()      # facts about symbolic sizes the trace relied on (sympy relations)
    values: tuple = ()      # (value symbol name, argument index): integer arguments used as sizes
    mutations: list = field(default_factory=list)   # (argument index, its final value node):
                                                    # arguments the function updated in place
    python_leaves: tuple = ()   # flat positions (tree order) of outputs that are Python numbers
                                # in the function (``c = 0; c += 1``): returned as int/float
    array_leaves: tuple = ()    # ... of 0-d outputs that are arrays (np.asarray(x.max()))
    raises: tuple = ()          # the exceptions of the user's raise statements (``RAISES``)
    ranges: tuple = ()          # Python int arguments' ranges (``RANGES``)
    list_leaves: tuple = ()     # (position, how many first items are Python numbers, -1:
                                # all) of outputs that are lists a loop appended to
    python_flags: tuple = ()    # (position, 0-d bool node) of outputs that are Python numbers
                                # where the node is True (frontend/pyflags.py)
    int_flags: tuple = ()       # ... Python ints where the node is True (floats elsewhere)
    none_flags: tuple = ()      # ... None where the node is True (frontend/nones.py)

    def roots(self) -> list:
        """The nodes the program computes for the caller: its outputs, the final values of
        the arguments it updates in place, and the flags of its maybe-Python numbers."""
        return list(self.leaves) + [n for _, n in self.mutations] + \
            [n for _, n in self.python_flags + self.int_flags + self.none_flags]

    def users(self) -> dict:
        out = {id(n): [] for n in self.nodes}
        for n in self.nodes:
            for i in n.inputs:
                out[id(i)].append(n)
        return out

    def names(self) -> dict:
        return {id(n): f"%{i}" for i, n in enumerate(self.nodes)}

    def all_names(self) -> dict:
        """Names of every node, those inside regions too (as ``text`` prints them)."""
        names = self.names()

        def visit(nodes):
            for n in nodes:
                for region in regions(n):
                    region.name(names)
                    visit(region.nodes)
        visit(self.nodes)
        return names

    def text(self, with_locations: bool = False) -> str:
        """Canonical form: one line per node; the cache key hashes it."""
        names = self.names()
        lines = []
        for n in self.nodes:
            lines += node_lines(n, names, with_locations=with_locations)
        lines += [f"write arg{i} = {names[id(n)]}" for i, n in self.mutations]
        lines.append("return " + _tree_text(self.outputs, names))
        if self.python_leaves:
            lines.append(f"python numbers at {self.python_leaves}")
        if self.array_leaves:       # (x[0, 0] and x[0:1, 0:1].reshape(()) trace alike)
            lines.append(f"0-d arrays at {self.array_leaves}")
        if self.list_leaves:
            lines.append(f"lists at {self.list_leaves}")
        if self.python_flags:
            lines.append("python numbers where " + ", ".join(
                f"{k}: {names[id(n)]}" for k, n in self.python_flags))
        if self.int_flags:
            lines.append("python ints where " + ", ".join(
                f"{k}: {names[id(n)]}" for k, n in self.int_flags))
        if self.none_flags:
            lines.append("None where " + ", ".join(
                f"{k}: {names[id(n)]}" for k, n in self.none_flags))
        if self.raises:
            lines.append(f"raises {self.raises!r}")
        if self.ranges:
            lines.append(f"int ranges {self.ranges}")
        if self.guards:
            from .guardtext import guard_text
            lines += [f"guard {guard_text(g)}" for g in self.guards]
        return "\n".join(lines)

    def key(self) -> str:
        return hashlib.sha256(self.text().encode()).hexdigest()

    def __str__(self):
        return self.text(with_locations=True)


def _tree_text(tree, names) -> str:
    if isinstance(tree, Node):
        return names[id(tree)]
    if isinstance(tree, SliceOut):
        bounds = ", ".join(_tree_text(b, names) for b in tree.bounds)
        return f"{_tree_text(tree.base, names)}[{tree.key!r} with ({bounds})]"
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_tree_text(v, names)}" for k, v in tree.items()) + "}"
    if isinstance(tree, (tuple, list)):
        inner = ", ".join(_tree_text(v, names) for v in tree)
        return f"({inner},)" if isinstance(tree, tuple) else f"[{inner}]"
    return repr(tree)


@dataclass(frozen=True)
class SliceOut:
    """A result ``base[key]`` whose slice bounds are known only when the program runs
    (``return out[:k]`` after a loop counted ``k``): ``base`` and the ``bounds`` are the
    program's outputs, leaves of the output tree like any other, and the view is taken
    from their values after it runs (``frontend/dataslice.py``), sharing ``base``'s
    memory as NumPy's slice does. ``key`` is the index with ``("bound", j)`` where bound
    ``j`` goes. ``listed``: the result is a list of the view's items (a list a loop appended
    to under a branch: ``as_list``'s ``python``), else None."""
    base: object
    bounds: tuple
    key: tuple
    listed: object = None

    def parts(self) -> tuple:
        return (self.base,) + self.bounds

    def mapped(self, fn) -> "SliceOut":
        return SliceOut(fn(self.base), tuple(fn(b) for b in self.bounds), self.key, self.listed)

    def take(self, base, bounds):
        """NumPy's ``base[key]`` with the bounds' values (Python ints) in their places."""
        def fill(v):
            if isinstance(v, tuple) and len(v) == 2 and v[0] == "bound":
                return int(bounds[v[1]])
            if isinstance(v, slice):
                return slice(fill(v.start), fill(v.stop), fill(v.step))
            return v
        view = np.asarray(base)[tuple(fill(k) for k in self.key)]
        return view if self.listed is None else as_list(view, self.listed)


def as_list(items: np.ndarray, python: int) -> list:
    """A list a compiled loop appended to: its first ``python`` items (-1: all) Python
    numbers, the others NumPy scalars or arrays, as the plain function's list holds them."""
    if python < 0:
        return items.tolist()
    return items[:python].tolist() + list(items[python:])


def take_views(tree):
    """A tree of values with each ``SliceOut`` of values replaced by its view."""
    if isinstance(tree, SliceOut):
        return tree.take(tree.base, tree.bounds)
    if isinstance(tree, dict):
        return {k: take_views(v) for k, v in tree.items()}
    if isinstance(tree, tuple):
        return tuple(take_views(v) for v in tree)
    if isinstance(tree, list):
        return [take_views(v) for v in tree]
    return tree


def flatten_tree(tree, leaf_type=Node):
    """Leaves of a nested tuple/list/dict in order."""
    if isinstance(tree, leaf_type):
        return [tree]
    if isinstance(tree, SliceOut):
        return [x for v in tree.parts() for x in flatten_tree(v, leaf_type)]
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in flatten_tree(v, leaf_type)]
    if isinstance(tree, (tuple, list)):
        return [x for v in tree for x in flatten_tree(v, leaf_type)]
    return []


def map_tree(tree, fn, leaf_type=Node):
    if isinstance(tree, leaf_type):
        return fn(tree)
    if isinstance(tree, SliceOut):
        return tree.mapped(lambda v: map_tree(v, fn, leaf_type))
    if isinstance(tree, dict):
        return {k: map_tree(v, fn, leaf_type) for k, v in tree.items()}
    if isinstance(tree, tuple):
        return tuple(map_tree(v, fn, leaf_type) for v in tree)
    if isinstance(tree, list):
        return [map_tree(v, fn, leaf_type) for v in tree]
    return tree


def postorder(roots, children) -> list:
    """Every node reachable from ``roots`` once, each after its children (iterative DFS, so
    deep graphs do not hit the recursion limit). ``children(node)`` lists a node's operands."""
    order, seen = [], set()
    stack = [(n, False) for n in reversed(list(roots))]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(children(node)) if id(c) not in seen)
    return order


def reachable(nodes) -> set:
    """ids of ``nodes`` and of every node they are computed from (their inputs, transitively)."""
    return {id(n) for n in postorder(nodes, lambda n: n.inputs)}


def toposort(outputs: list) -> list:
    return postorder(outputs, lambda n: n.inputs)


# --------------------------------------------------------------------------- regions

@dataclass(frozen=True, eq=False)
class Region:
    """The body of a loop, a branch or a while-condition: its parameters (``carry`` nodes),
    its own nodes (operands first; no parameters, no outer nodes) and its results (the carried
    values at its end; a while-condition: its bool)."""
    params: tuple
    nodes: tuple
    results: tuple
    effects: tuple = ()     # nodes kept for the errors they raise, not for a value (a
                            # ``raise`` in a branch: a check; a construct that may raise)

    def name(self, names: dict) -> None:
        """Adds this region's nodes to ``names`` (numbered after those already there)."""
        base = len(names)
        for k, p in enumerate(self.params):
            names[id(p)] = f"%c{base}.{k}"
        for k, n in enumerate(self.nodes):
            names[id(n)] = f"%{base}.{k}"

    def text(self, names: dict, indent: str, with_locations=False) -> list:
        self.name(names)
        lines = [indent + "(" + ", ".join(f"{names[id(p)]} : {p.dtype}{list(p.shape)}"
                                          for p in self.params) + ") ->"]
        for n in self.nodes:
            lines += node_lines(n, names, indent + "  ", with_locations)
        lines.append(indent + "  yield " + ", ".join(names[id(r)] for r in self.results))
        if self.effects:
            lines.append(indent + "  effects " + ", ".join(names[id(e)] for e in self.effects))
        return lines


def node_lines(n: Node, names: dict, indent: str = "", with_locations: bool = False) -> list:
    """One node's canonical text; a control node's regions follow it, indented."""
    args = ", ".join(names[id(i)] for i in n.inputs)
    attrs = "".join(f", {k}={v!r}" for k, v in n.attrs if not isinstance(v, Region))
    loc = f"   # {n.where}" if with_locations and n.where else ""
    lines = [f"{indent}{names[id(n)]} = {n.op}({args}{attrs}) : {n.dtype}{list(n.shape)}{loc}"]
    for k, v in n.attrs:
        if isinstance(v, Region):
            lines.append(f"{indent}  {k}:")
            lines += v.text(names, indent + "    ", with_locations)
    return lines


RUN_TIME = ("lv", "dv")     # symbols of loop indices and of values read where they run
COUNTED = "m"               # symbols of counts a NumPy step gives (``x[mask]``'s length: ``m0``),
                            # read by the runtime after that step (frontend/counted.py)


def run_time_size(d) -> bool:
    """A size known only where it runs: of a compiled loop's index (``lv<k>``) or of array
    values (``dv<k>``): its buffers are made inside the loop, never passed in."""
    return any(s.name.startswith(RUN_TIME) for s in getattr(d, "free_symbols", ()))


def regions(node: Node) -> list:
    """The regions a control node holds, in attribute order."""
    return [v for _, v in node.attrs if isinstance(v, Region)]


def walk(nodes):
    """``nodes`` and the nodes inside their regions (loop bodies, branches), depth first."""
    for n in nodes:
        yield n
        for region in regions(n):
            yield from walk(region.nodes)


def is_step(n) -> bool:
    """Does ``n`` keep its place among the statements (an error it raises comes where Python
    raises it): a check, a print, a loop or branch, an element read at a checked position."""
    return n.op in ("check", "print") or n.op in CONTROL_OPS or (n.op == "gather" and
                                                                  not n.shape)


def region_order(results, params, outer, made=None) -> list:
    """A region's own nodes, operands first: those between ``params`` (and the nodes
    ``outer(node)`` says are computed outside) and ``results``. With ``made`` (the region's
    nodes in the order the trace made them), its checks, control nodes and element reads at
    checked positions run in that order where their operands allow (``if d <= 0: raise E``
    before ``math.sqrt(d)``'s domain check, ``a[idx[i]]``'s IndexError before a later
    ``raise``: Python's first error is the one raised)."""
    stop = {id(p) for p in params}

    def inside(n):
        return id(n) not in stop and not outer(n)

    def operands(n):
        return [i for i in n.inputs if inside(i)]
    roots = [r for r in results if inside(r)]
    order = postorder(roots, operands)
    if made:
        mine = {id(n) for n in order}
        steps = [n for n in made.values() if id(n) in mine and is_step(n)]
        if len(steps) > 1:
            order = postorder(steps + roots, operands)
    return order
