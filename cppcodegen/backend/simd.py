"""C++ for a loop whose iterations are independent and whose body is element code: SIMD lanes.

In: the ``for`` kernel of a LoopProgram whose iterations are known to be independent (the
front end proved it, ``auto``, or the user promised it with ``prange``: ``frontend/parallel.py``)
and whose body is element code (kernels over a few elements and branches, no loops of their
own). Out: C++ lines running a range of its iterations several at once.

``#pragma omp simd`` tells the compiler that the iterations are independent, so it may run
several in the lanes of one vector (the body's kernels are small static functions that it
inlines). Every lane computes the same operations as the scalar loop in the same order, so
the results are the same bits. Inside the lanes each iteration has its own copy of the
values the body assigns (``t = a[i] * 2``, a branch's condition, the loop's index); the last
iteration runs on its own after them, on the real buffers, so after the loop they hold its
values, as in Python (a body that assigns no such value runs every iteration in lanes: a
127-iteration remainder loop cost more than the 15 vectors before it). Not taken: a body that checks indices or values (the first error in
Python's order must be the one reported), draws random numbers, combines a float reduction
(integer and bool ones combine exactly in any order: each lane keeps a share), or needs
memory of its own per iteration.

The loop is a lambda of its own (taking what it reads by value) compiled with the loop
vectorizer on: the build turns the
vectorizer off everywhere else (``pipeline.build_flags``), and GCC's explicit
``-fno-tree-loop-vectorize`` turns it off for ``omp simd`` loops too.
"""
from __future__ import annotations

import math
import re

from .cexpr import LIBM, cindex, ctype
from .combine import COMBINE, identity, lane_reduction
from ..ir.loopir import Gather, Load, LoopProgram, Op, Scalar, control_reads, nested, walk
from ..runtime.compiled import stops


def serial_lines(program: LoopProgram, k, body) -> list | None:
    """The loop of the ``for`` kernel ``k`` on this thread, in SIMD lanes, or None when its
    iterations cannot run in lanes. ``body(kernels, inside)``: the lines of the body's
    kernels."""
    private = lane_privates(program, k)
    if private is None:
        return None
    c = k.stages[0].control
    lines = body(k.regions[0], True)
    head = ("{   // iterations that read ahead of their stores: in SIMD lanes, whose loads "
            "come before their stores; no threads, which would race" if c.get("lanes") else
            "{   // iterations proved independent")
    last = f"{c['var']} = ccg_lo + (ccg_trip - 1) * ({cindex(c['step'])});"
    # (a body that keeps no value of its own: every iteration in lanes, then the index)
    tail = [f"    if (ccg_trip > 0) {last}   // the index Python keeps after the loop"] \
        if not private else \
        ["    if (ccg_trip > 0) {   // the last iteration: the values Python keeps after the loop",
         f"        {last}", *["    " + line for line in lines], "    }"]
    return [head,
            *["    " + line for line in trip_lines(c)],
            *["    " + line for line in lane_loop(program, k, lane_lines(k, body, lines), private,
                                                  "ccg_lo", "0",
                                                  "ccg_trip - 1" if private else "ccg_trip")],
            *tail,
            "}"]


def lane_lines(k, body, lines) -> tuple:
    """(lines before the lanes, the body's lines for its SIMD lanes): its first checks of
    values made before the loop (``leading_checks``) once, then the rest with its branches
    flattened into predicated stores where every kernel in them allows it (``predicate.py``),
    else as they are (``lines``, when there are no such checks)."""
    kernels = k.regions[0]
    n = leading_checks(kernels)
    rest = kernels[n:]
    lanes = body(rest, True, flat=True) or (body(rest, True) if n else lines)
    return (body(kernels[:n], True) if n else []), lanes


def leading_checks(kernels) -> int:
    """How many of a body's first kernels check values no kernel of the body writes
    (``c * dt / dx`` of scalar arguments, made before the loop: ``ir/graph.py``) and record
    their error without stopping: the same in every iteration, so tested once before the
    lanes (Python's first iteration would fail at them, before any store of the body)."""
    stored = _stored(kernels)
    n = 0
    for k in kernels:
        s = k.stages[0]
        if k.form != "control" or s.kind != "check" or stops(s.control["code"]) or \
                set(control_reads(s)) & stored:
            break
        n += 1
    return n


def trip_lines(c) -> list:
    """``ccg_lo`` and ``ccg_trip``: a loop's first value and its number of iterations."""
    return [f"const int64_t ccg_lo = {cindex(c['start'])};",
            f"const int64_t ccg_trip = ccg::trip_count(ccg_lo, {cindex(c['stop'])}, "
            f"{cindex(c['step'])});"]


def lane_privates(program: LoopProgram, k) -> list | None:
    """The 0-d (or one-element) buffers each iteration of the ``for`` kernel ``k`` has its own
    copy of in SIMD lanes, as (buffer, reduction op or None), or None when its iterations
    cannot run in lanes. A reduction's copy starts at the op's identity and is combined into the lanes'
    partial results after the iteration (integers and bools only: ``combine.py``)."""
    c = k.stages[0].control
    roles = dict(c.get("parallel") or {})
    reduce = {b: r[1] for b, r in roles.items() if r[0] == "reduce"}
    if not roles and not c.get("auto") or c.get("up") is None or c.get("test") \
            or program.counters or any(lane_reduction(op, program.buffers[b].dtype) is None
                                       for b, op in reduce.items()):
        return None
    kernels = k.regions[0][leading_checks(k.regions[0]):]
    if not _element_code(kernels) or _checks(kernels) or _naive_products(kernels):
        return None
    shared = {b for b, r in roles.items() if r[0] in ("array", "shared")}
    private = [b for b in written_buffers(program, kernels) if b not in shared]
    if any(program.buffers[b].shape not in ((), (1,)) or program.buffers[b].role == "local"
           for b in private):
        return None
    return [(b, reduce.get(b)) for b in private]


def lane_loop(program: LoopProgram, k, lines, private, base: str, first: str,
              end: str) -> list:
    """Iterations ``first`` to ``end`` (exclusive) of ``k``'s loop, counted from ``base``,
    in SIMD lanes; ``lines``: the body's lines."""
    c = k.stages[0].control
    before, lines = lines           # (lane_lines)
    own, start, fold, finish, clauses = [], [], [], [], ""
    for b, op in private:
        t = ctype(program.buffers[b].dtype)
        if op is None:
            own.append(f"{t} ccg_own_{b}{{}};")
        else:           # a reduction: partial results in lanes, added to the buffer after
            zero = identity(op, program.buffers[b].dtype)
            own.append(f"{t} ccg_own_{b} = {zero};")
            start.append(f"    {t} ccg_acc_{b} = {zero};")
            clauses += f" reduction({lane_reduction(op, program.buffers[b].dtype)}:ccg_acc_{b})"
            fold.append(f"        ccg_acc_{b} = {COMBINE[op].format(a=f'ccg_acc_{b}', b=f'ccg_own_{b}')};")
            finish.append(f"    {b}[0] = {COMBINE[op].format(a=f'{b}[0]', b=f'ccg_acc_{b}')};")
        own.append(f"{t}* {b} = &ccg_own_{b};   // this iteration's")
    declared = set(re.findall(r"\bconst bool (\w+) =", " ".join(lines)))    # (predicates)
    names = _names_read(before + lines,
                        {c["var"]} | declared | {b for b, op in private if op is None})
    # a value the body reads and no iteration writes (2 * L of ``x[i] = 2 * L - x[i]``): a
    # copy of its own, which every lane may read whatever its branch (from the buffer, a read
    # under a branch is a masked load of one address, and the loop stayed scalar)
    written = set(written_buffers(program, k.regions[0]))
    fixed = [n for n in names if n in program.buffers and program.buffers[n].shape == ()
             and n not in written]
    # an array no iteration writes: a restrict pointer, as in the kernels, so that a value
    # read from it at a position every lane shares (``W[u, v]``'s ``u = order[k]``) is read
    # once, not again after each store through another pointer (a gather per vector)
    params = ", ".join(["const int64_t ccg_base", "const int64_t ccg_first",
                        "const int64_t ccg_end"] + [
        f"auto {'ccg_at_' * (n in fixed)}{n}" if n in fixed or n in written or
        n not in program.buffers else f"auto* __restrict__ {n}" for n in names])
    return [f'[]({params}) __attribute__((optimize("tree-loop-vectorize"))) {{   // several at once',
            *[f"    auto ccg_fixed_{n} = ccg_at_{n}[0];   // the same in every iteration\n"
              f"    auto* {n} = &ccg_fixed_{n};" for n in fixed],
            *start,
            *(["    if (ccg_first < ccg_end) {"] + ["    " + line for line in before] + ["    }"]
              if before else []),
            f"    #pragma omp simd{clauses}",
            "    for (int64_t ccg_i = ccg_first; ccg_i < ccg_end; ++ccg_i) {",
            f"        const int64_t {c['var']} = ccg_base + ccg_i * ({cindex(c['step'])});",
            *["        " + line for line in own],
            *["    " + line for line in lines],
            *fold,
            "    }",
            *finish,
            f"}}({', '.join([base, first, end] + names)});"]


def _names_read(lines, inner) -> list:
    """The variables the body's lines name (buffers, scalars, sizes, loop variables), which the
    lambda takes by value: captured by reference, a scalar would be read from memory that
    the body's stores might change, every iteration, and the compiler would not vectorize."""
    code = " ".join(line.split("//")[0] for line in lines)
    names = re.findall(r"\b([A-Za-z_]\w*)\b(?!\s*(?:\(|::))", code)
    return [n for n in dict.fromkeys(names) if n not in inner and n not in _KEYWORDS]


_KEYWORDS = {"if", "else", "true", "false", "const", "int64_t", "bool"}


UNROLL_MAX_ELEMENTS = 4


def few(domain) -> bool:
    """A stage over a few elements (a constant count, at most UNROLL_MAX_ELEMENTS): element
    code, unrolled in serial loops (``program._straight_line``), in lanes here."""
    return all(isinstance(d, int) for d in domain) and math.prod(domain) <= UNROLL_MAX_ELEMENTS


def _element_code(kernels) -> bool:
    """Kernels over a few elements each, and branches and checks of such kernels; no loops."""
    for k in kernels:
        if k.form == "control":
            if k.stages[0].kind not in ("if", "check") or \
                    not all(_element_code(r) for r in k.regions):
                return False
        elif k.form in ("extern", "gemm") or k.locals or not all(
                few(s.domain) and s.kind == "pointwise" for s in k.stages):
            return False
    return True


CHEAP_OPS = 16


def cheap_branch(program: LoopProgram, k, before) -> frozenset | None:
    """Is the kernel ``k`` of a serial loop's body an ``if`` better run with both sides'
    stores predicated (``predicate.py``) than as a branch? (``before``: the body's kernels
    before it.) Yes when its sides are element code (no loops, no index checks, no scratch
    buffers, no random draws, no element of an array stored: only a loop's scalars; a value's
    check, a Python int's overflow, stays a branch taken only where it fails: ``tot +=
    int(v)`` under ``if v > 0`` on random signs 4.4 -> 1.5 ms for 10^6, measured)
    of at most CHEAP_OPS operations and none of the C library's functions, and its
    conditions do not depend on what it writes. Both sides then cost a few cycles, less than
    a mispredicted branch: ``if x[i] > 0: s += x[i]; n += 1`` over random signs 4.9 -> 1.6
    ns an element, measured. A condition computed from a value the branch writes (``if x[i]
    > m: m = x[i]``) is left a branch: the blend would put the compare on the loop's carried
    chain (1.3 -> 4.5 ns measured), and such a branch is rarely taken, so predicted. Only a
    branch that updates values carried from the previous iteration (accumulators, counts,
    flags: none of them written earlier in the body) is flattened: one that adjusts a value
    of this iteration (a minimum image's ``if dx > half: dx -= L``) is mostly predicted, and
    blends only add work (a Lennard-Jones loop with three of them 2.3x slower, measured).
    Writing an element's old value back is safe only where no other thread runs the loop's
    iterations: the caller asks only in serial loops.

    Returns None (a branch), or the ``if``s nested in ``k`` that stay branches inside its
    predicated sides: those whose conditions are on the carried chain when ``k``'s own is
    not (a run length's ``if mask[i]: cur += 1; if cur > best: best = cur; else: cur = 0``:
    the outer branch goes either way, the inner one is rarely taken; on a random mask 2.7
    -> 0.7 ms for 10^6, measured)."""
    if k.form != "control" or k.stages[0].kind != "if" or not _element_code([k]) or \
            _checks([k], checks_ok=True):
        return None
    stored = _stored([k])
    if stored & _stored(before) or any(program.buffers[b].role == "local" or
                                       program.buffers[b].shape != () for b in stored):
        return None             # (an element store: read, blend and write memory per side,
                                # on the chain to the next iteration's load: LCS 1.4 -> 3.6 ms)
    keep = frozenset()
    body = nested(list(before)) + nested([k])
    if _condition_inputs(body, k) & stored:
        if _condition_inputs(body, k, own=True) & stored:
            return None
        keep = frozenset(id(x) for x in nested([k]) if x is not k and x.form == "control"
                         and x.stages[0].kind == "if")
    stages = [m for sub in nested([k]) if sub.form != "control"
              for s in sub.stages for m in (s.members or (s,))]
    exprs = [e for m in stages for e in walk(m.body)]
    ops = [e for e in exprs if isinstance(e, Op)]
    counters = {n for n, _ in program.counters}
    cheap = len(ops) <= CHEAP_OPS and not any(e.name in LIBM or e.name == "power" for e in ops) \
        and not any(isinstance(e, Scalar) and e.name in counters for e in exprs)
    return keep if cheap else None


def free_conditions(program: LoopProgram) -> frozenset:
    """The temporaries that only hold an ``if``'s condition: written by one stage, read by
    that one ``if`` and loaded by no stage, not an argument or a result. In a flattened
    ``if`` they are computed unpredicated (``predicate.py``): the ``if`` that reads one runs
    only under the predicate, and a blend would carry the old value from one iteration to
    the next (a run length's ``cur > best``: 1.7 -> 0.7 ms for 10^6, measured)."""
    writes, reads, loads = {}, {}, set()
    for s in nested(program.stages):
        if s.control is not None:
            for b in control_reads(s):
                reads[b] = reads.get(b, 0) + (s.kind == "if")
                if s.kind != "if":
                    loads.add(b)
            continue
        for m in (s.members or (s,)):
            writes[m.name] = writes.get(m.name, 0) + 1
            loads |= {e.buf for e in walk(m.body) if isinstance(e, (Load, Gather))}
    return frozenset(b for b, n in reads.items() if n == 1 and writes.get(b) == 1 and
                     b not in loads and b in program.buffers and
                     program.buffers[b].role == "temp" and program.buffers[b].shape == ())


def _condition_inputs(kernels, k, own: bool = False) -> set:
    """The buffers the conditions of the ``if`` ``k`` (its nested ones too) are computed from
    that hold a value from before this iteration reaches them (read before ``kernels``, the
    body's kernels in program order up to and through ``k``, write them): a branch that
    writes one puts its condition on the loop's carried chain. (``own``: ``k``'s condition
    alone, not those nested in it.)"""
    conds = {id(sub): control_reads(sub.stages[0]) for sub in ([k] if own else nested([k]))
             if sub.form == "control" and sub.stages[0].kind == "if"}    # (a check's reads
    # are what it checks, read where it runs: not a condition)
    need = {b for reads in conds.values() for b in reads}
    feeding = set()                     # the stages the conditions are computed with
    for sub in reversed(kernels):       # (and each kernel's stages from its last one; an
        if sub.form == "control" and sub.stages[0].kind == "if" and any(    # earlier branch
                id(m) in feeding for inner in sub.regions for x in nested(inner)   # that
                if x.form != "control" for st in x.stages for m in (st.members or (st,))):
            need |= set(control_reads(sub.stages[0]))       # sets one: its condition too)
        for m in () if sub.form == "control" else reversed(
                [m for s in sub.stages for m in (s.members or (s,))]):
            if m.name in need:
                need |= {e.buf for e in walk(m.body) if isinstance(e, Load)}
                feeding.add(id(m))
    written, carried = set(), set()
    for sub in kernels:
        if sub.form == "control":
            carried |= set(conds.get(id(sub), ())) - written
            continue
        for m in (m for s in sub.stages for m in (s.members or (s,))):
            if id(m) in feeding:
                carried |= {e.buf for e in walk(m.body) if isinstance(e, Load)} - written
            written.add(m.name)
    return carried


def _naive_products(kernels) -> bool:
    """Does the body multiply complex scalars as Python does (``ccg::mul_naive``, two
    roundings per part)? GCC's vectorizer finds the complex product in it and makes it
    fused (vfmaddsub), -ffp-contract=off or not: such a loop stays out of the lanes."""
    return any(isinstance(e, Op) and e.name == "mul_naive" for k in nested(kernels)
               if k.form != "control" for s in k.stages for m in (s.members or (s,))
               for e in walk(m.body))


def _checks(kernels, checks_ok: bool = False) -> bool:
    """Does the body check indices or values (report errors)? (``checks_ok``: value checks
    of their own kernel, a Python int's overflow, do not count: a serial loop's cheap ``if``
    keeps them as branches taken only where they fail.)"""
    for k in nested(kernels):
        if k.form == "control" and k.stages[0].kind not in ("if",) + ("check",) * checks_ok:
            return True
        if any(s.kind == "scatter" or isinstance(e, Gather) and e.checked for s in k.stages
               for m in (s.members or (s,)) for e in walk(m.body)):
            return True
    return False


def _stored(kernels) -> set:
    """The buffers the element kernels among ``kernels`` (nested ones too) store into."""
    return {m.name for k in nested(kernels) if k.form != "control"
            for s in k.stages for m in (s.members or (s,))}


def written_buffers(program: LoopProgram, kernels) -> list:
    """The buffers the kernels (those inside their loops and branches too) write, and those
    a loop, branch or check among them tests that a kernel among them writes (a test of a
    value made before them, ``c * dt / dx != 0`` of scalar arguments, reads a shared one)."""
    stored = _stored(kernels)
    out = []
    for k in nested(kernels):
        names = []
        if k.form == "control":
            names = [n for n in control_reads(k.stages[0]) if n in stored]
        else:
            names = [m.name for s in k.stages for m in (s.members or (s,))
                     if m.name not in k.locals]
        out += [n for n in dict.fromkeys(names) if n and n in program.buffers and n not in out]
    return out
