"""C++ for a ``prange`` loop: blocks of iterations run by the OpenMP threads.

In: the ``for`` kernel of a LoopProgram whose control has ``parallel`` (carry buffer -> role,
``frontend/parallel.py``) and a function rendering the body's kernels. Out: C++ lines.

The iterations are cut into ``BLOCKS`` contiguous blocks at most (as many as there are
iterations when fewer), whatever the thread count, and the threads share the blocks out
(static schedule: each thread's iterations are contiguous). Every buffer the body writes is
private to a thread (declared again inside the parallel region under the same name), except
the arrays the body updates element-wise (shared: the user promised that iterations do not
touch each other's elements). A reduction's carry buffer starts each block at the identity
of its operation; after the loop, the blocks' results are combined into it in block order, so
the result does not depend on the thread count. A private value read after the loop (the
loop's index, a variable the body assigns) is copied out of the block that ran the last
iteration. Kernels the body calls have their own OpenMP loops: inside the parallel region
they run on the thread that calls them (nested parallelism is off).
"""
from __future__ import annotations


from .cexpr import cindex, ctype
from .memory import element_count, scratch_lines
from .combine import COMBINE, identity
from .simd import lane_lines, lane_loop, lane_privates, trip_lines, written_buffers
from .writer import team_if
from ..ir.loopir import STATUS, LoopProgram, nested
from ..passes.schedule import Kernel

BLOCKS = 256            # blocks of iterations at most: enough to balance 64+ threads

def prange_lines(program: LoopProgram, k: Kernel, body, always=False) -> list:
    """``body(kernels, inside)``: the lines of the body's kernels (``inside``: loops in it
    stay serial; true for a body written here). A ``prange`` runs in blocks on
    the threads; a loop the compiler proved independent (``auto``) starts on this thread and
    goes on in blocks only when its first iterations show that the rest is worth it
    (``include/cppcodegen/probe.h``), or from the start with ``always`` (a parallel
    threshold of 0)."""
    c = k.stages[0].control
    step = cindex(c["step"])
    head = ["    " + line for line in trip_lines(c)]
    if not c.get("auto"):
        return (["{   // prange: blocks of iterations on the threads", *head]
                + _blocks(program, k, body, "ccg_lo", "ccg_trip", "static",
                          lane_privates(program, k)) + ["}"])
    # (proved loops inside stay serial: the code grows no more than twice)
    serial = body(k.regions[0], True)
    private = lane_privates(program, k)
    if private is None:
        here = ["    for (; ccg_k < ccg_trip; ++ccg_k) {",
                "        if (ccg_probe.threads_from(ccg_k)) break;",
                f"        {c['var']} = ccg_lo + ccg_k * ({step});",
                *["    " + line for line in serial],
                "    }"]
    else:       # SIMD lanes from one clock reading to the next, the last iteration alone
        here = ["    while (ccg_k < ccg_trip - 1 && !ccg_probe.threads_from(ccg_k)) {",
                "        const int64_t ccg_upto = std::min<int64_t>(ccg_probe.next(), ccg_trip - 1);",
                *["        " + line for line in lane_loop(program, k, lane_lines(k, body, serial),
                                                        private, "ccg_lo", "ccg_k", "ccg_upto")],
                "        ccg_k = ccg_upto;",
                "    }",
                "    if (ccg_k == ccg_trip - 1) {   // the last iteration: the values Python keeps",
                f"        {c['var']} = ccg_lo + ccg_k * ({step});",
                *["    " + line for line in serial],
                "        ccg_k = ccg_trip;",
                "    }"]
    return ["{   // iterations proved independent: on this thread until they are seen to take "
            "long enough, then in blocks on the threads", *head,
            "    static ccg::LoopCost ccg_cost;   // (what earlier runs of this loop measured)",
            f"    ccg::LoopProbe ccg_probe(ccg_trip, {'true' if always else 'false'}, &ccg_cost);",
            "    int64_t ccg_k = 0;",
            *here,
            "    ccg_probe.finish(ccg_k);",
            "    if (ccg_k < ccg_trip) {",
            f"        const int64_t ccg_from = ccg_lo + ccg_k * ({step});",
            "        const int64_t ccg_rest = ccg_trip - ccg_k;",
            *["    " + line for line in _blocks(program, k, body, "ccg_from", "ccg_rest",
                                               "guided", private)],
            "    }",
            "}"]


def _blocks(program: LoopProgram, k: Kernel, body, lo: str, trip: str, schedule: str,
            lanes) -> list:
    """Iterations ``lo``, ``lo + step``, ... (``trip`` of them) in at most BLOCKS blocks on
    the threads, ``schedule``: static (each thread's iterations contiguous) or guided (runs
    of blocks to whichever thread is free, long runs first: for iterations of unequal cost).
    Guided, not dynamic: one block at a time puts neighbouring blocks on the two threads at
    once, and a row that does not start on a cache line shares its last line with the next
    block's first. The i-k-j product of two 256x256 arrays took 4.5-5.7 ms on 2 threads
    that way (3.0 on one) in most processes, depending on where NumPy put the result;
    guided runs take 1.4-2.0 ms in every process. An index error is
    kept per block and the first block's reported, as running them in order would."""
    c = k.stages[0].control
    var, step = c["var"], cindex(c["step"])
    roles = dict(c["parallel"])
    shared = {b for b, r in roles.items() if r[0] in ("array", "shared")}
    reduce = {b: r[1] for b, r in roles.items() if r[0] == "reduce"}
    private = [b for b in written_buffers(program, k.regions[0])
               if b not in shared and program.buffers[b].role != "local"]
    private += [b for b, r in roles.items() if r[0] in ("private", "reduce") and b not in private]
    last = [b for b, r in roles.items() if r[0] == "private"]
    loopvars = sorted(_loopvars(k.regions[0]))
    errors = STATUS in program.buffers
    block = c.get("block", 1)   # (iterations writing one cache line: few, larger blocks)
    blocks = trip if block == 1 else f"std::max<int64_t>(({trip}) / {block}, 1)"
    out = [f"    const int64_t ccg_nb = std::min<int64_t>({blocks}, {BLOCKS});"]
    for b in sorted(reduce):
        out += ["    " + line for line in scratch_lines(
            ctype(program.buffers[b].dtype), f"ccg_part_{b}", "ccg_nb", "each block's result")]
    if errors:
        out += ["    " + line for line in scratch_lines(
            "int64_t", "ccg_errs", "4 * ccg_nb", "each block's first index error")]
    for b in sorted(set(reduce) | set(last)):
        t = ctype(program.buffers[b].dtype)
        out.append(f"    {t}* const ccg_shared_{b} = {b};")
    out.append("    #pragma omp parallel" + team_if("ccg_nb > 1"))
    out.append("    {")
    inner = []
    for b in private:
        buf = program.buffers[b]
        t = ctype(buf.dtype)
        if buf.shape == ():             # a local variable: in a register once inlined
            inner.append(f"{t} ccg_own_{b}{{}};")
            inner.append(f"{t}* {b} = &ccg_own_{b};   // this thread's")
            continue
        inner += scratch_lines(t, b, element_count(buf.shape), "this thread's")
    for v in loopvars:
        inner.append(f"int64_t {v} = 0;   // this thread's")
    inner.append(f"#pragma omp for schedule({schedule})")
    inner.append("for (int64_t ccg_b = 0; ccg_b < ccg_nb; ++ccg_b) {")
    if errors:
        inner.append(f"    int64_t* const {STATUS} = ccg_errs + 4 * ccg_b;   // this block's")
    for b, op in sorted(reduce.items()):
        inner.append(f"    {b}[0] = {identity(op, program.buffers[b].dtype)};")
    inner.append(f"    const int64_t ccg_end = {trip} * (ccg_b + 1) / ccg_nb;")
    lines = body(k.regions[0], True)
    if lanes is None:
        inner.append(f"    for (int64_t ccg_i = {trip} * ccg_b / ccg_nb; ccg_i < ccg_end; ++ccg_i) {{")
        inner.append(f"        const int64_t {var} = {lo} + ccg_i * ({step});")
        inner += ["    " + line for line in lines]
        inner.append("    }")
    else:       # SIMD lanes, then the block's last iteration on this thread's buffers
        inner += ["    " + line for line in lane_loop(program, k, lane_lines(k, body, lines),
                                                     lanes, lo, f"{trip} * ccg_b / ccg_nb",
                                                     "ccg_end - 1")]
        inner.append("    {")
        inner.append(f"        const int64_t {var} = {lo} + (ccg_end - 1) * ({step});")
        inner += ["    " + line for line in lines]
        inner.append("    }")
    for b in sorted(reduce):
        inner.append(f"    ccg_part_{b}[ccg_b] = {b}[0];")
    if last:
        inner.append("    if (ccg_b == ccg_nb - 1) {   // the last iteration's values")
        for b in last:
            size = element_count(program.buffers[b].shape)
            inner.append(f"        std::copy({b}, {b} + ({size}), ccg_shared_{b});")
        inner.append("    }")
    inner.append("}")
    out += ["        " + line for line in inner]
    out.append("    }")
    for b, op in sorted(reduce.items()):
        acc = f"ccg_shared_{b}[0]"
        out.append("    for (int64_t ccg_b = 0; ccg_b < ccg_nb; ++ccg_b)   // in block order")
        out.append(f"        {acc} = {COMBINE[op].format(a=acc, b=f'ccg_part_{b}[ccg_b]')};")
    if errors:
        out += ["    for (int64_t ccg_b = 0; ccg_b < ccg_nb; ++ccg_b) {   // the first in order",
                "        if (ccg_errs[4 * ccg_b] == 0) continue;",
                f"        if ({STATUS}[0] == 0) std::copy(ccg_errs + 4 * ccg_b, "
                f"ccg_errs + 4 * ccg_b + 4, {STATUS});",
                "        break;",
                "    }"]
    return out


def _loopvars(kernels) -> set:
    """The induction variables and data symbols the kernels set: each thread has its own."""
    out = set()
    for k in nested(kernels):
        if k.form == "control" and k.stages[0].kind == "for":
            out.add(k.stages[0].control["var"])
        elif k.form == "control" and k.stages[0].kind == "bind":
            out |= {sym for sym, _ in k.stages[0].control["bounds"]}
    return out
