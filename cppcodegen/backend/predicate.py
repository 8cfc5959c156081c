"""The body of a loop in SIMD lanes with its ``if``s flattened: every kernel runs, its stores
selected by a predicate (``x = when ? value : x``).

In: the kernels of a lane loop's body (``simd.py``: element code, every access in bounds for
every iteration of the loop, no checks) and ``call(kernel, when)``, which renders a kernel
and returns its call (``when``: the name of its predicate, the kernel then taking it first).
Out: the body's lines, or None when a kernel cannot be predicated.

Why: in an ``if`` inside an ``omp simd`` loop GCC stores with masks, and on x86 it branches
around a masked store whose mask is all false (``optimize_mask_stores``; no option turns it
off). On data whose branch goes either way (Game of Life's cells) that branch is
mispredicted half the time: the step took twice as long as with the stores unconditional.
Here each branch's kernels run under their predicate (``then``: the enclosing predicate and
the condition; ``else``: and its negation; both computed before either runs, as the branch
may assign the condition's variable), and each store writes the new value or the old one
back. That is safe in lanes: the body reads and writes only elements in bounds for every
iteration (an access that needs a check keeps the loop out of lanes), its arithmetic does
not trap (integer division by zero is NumPy's 0, float errors are values), and an iteration
writes only elements no other iteration touches (the loop was proved independent), so
writing one back unchanged races with nothing.

``predicated`` derives the predicated function from the kernel's rendered text: it accepts
only the shapes element kernels are written in (declarations ``auto tN = ...;``, element
stores ``buf[index] = value;``, loops over a constant range, braces and comments) and
refuses anything else, so a store it does not understand is never left unconditional.
"""
from __future__ import annotations

import itertools
import re

_HEAD = re.compile(r"^static void (\w+)\(")
_STORE = re.compile(r"^(\s*)(\w+)\[([^=;]+)\] = ([^;]+);$")
_SAFE = (re.compile(r"^\s*[{}]?\s*$"),                                  # braces, blank
         re.compile(r"^\s*//"),                                          # comments
         re.compile(r"^\s*auto t\d+ = [^;]+;$"),                         # a value
         re.compile(r"^\s*for \(int64_t i\d+ = -?\d+; i\d+ < -?\d+; \+\+i\d+\)( \{)?$"))


class NotPredicable(Exception):
    """A kernel of the body is not element code ``predicated`` understands."""


def twin(name: str, blend: bool) -> str:
    """The name of ``name``'s predicated twin."""
    return name + ("_sel" if blend else "_when")


def predicated(text: str, name: str, blend: bool = False) -> str:
    """``name``'s function text made ``name_when(const bool ccg_when, ...)``: its stores
    select between the new value and the element's old one. NotPredicable otherwise.

    ``blend`` (``name_sel``): for a serial loop, where the select must not become a branch
    again (``ccg::select``, a blend), and a store of ``old + v`` / ``old - v`` adds ``v`` or
    the add's identity (``ccg::add_if``): a loop summing under a condition waits for one add
    per iteration, not an add and a blend."""
    lines = text.split("\n")
    head = next((i for i, line in enumerate(lines) if _HEAD.match(line)), None)
    if head is None or _HEAD.match(lines[head]).group(1) != name:
        raise NotPredicable(name)
    out = lines[:head] + [lines[head].replace(
        f"static void {name}(", f"static void {twin(name, blend)}(const bool ccg_when, ", 1)]
    values, stored = {}, set()          # tN -> its expression; the elements stored so far
    for line in lines[head + 1:]:
        m = _STORE.match(line)
        if m:
            pad, buf, index, value = m.groups()
            target = f"{buf}[{index}]"
            update = _update(values, value, target) if blend and target not in stored \
                else None
            stored.add(target)
            if update is not None:
                fn, old, v = update
                out.append(f"{pad}{target} = static_cast<std::remove_reference_t<"
                           f"decltype({target})>>(ccg::{fn}(ccg_when, {old}, {v}));")
                continue
            select = "ccg::select(ccg_when, {}, ccg_old)" if blend else \
                "ccg::lane_select(ccg_when, {}, ccg_old)"
            out.append(f"{pad}{{ auto& ccg_e = {target}; const auto ccg_old = ccg_e; "
                       f"ccg_e = {select.format(f'static_cast<decltype(ccg_old)>({value})')}; }}")
        elif any(p.match(line) for p in _SAFE) or not line.strip():
            d = _VALUE.match(line)
            if d:
                values[d.group(1)] = d.group(2)
            out.append(line)
        else:
            raise NotPredicable(line)
    return "\n".join(out)


_VALUE = re.compile(r"^\s*auto (t\d+) = ([^;]+);$")
_SUM = re.compile(r"^\((t\d+) ([+-]) ([^()]+|\(.*\)|[\w:]+\([^()]*\))\)$")
_INT_CAST = re.compile(r"^static_cast<u?int(?:64|32)_t>\((\(.*\))\)$")


def _update(values: dict, value: str, target: str):
    """(``add_if`` or ``sub_if``, old, addend) when the stored ``value`` is the element's
    value read in this kernel plus or minus an addend (``s += x[i]``), else None."""
    text = values.get(value, "")
    cast = _INT_CAST.match(text)        # (``n += 1`` of an int64: the sum cast to its type)
    m = _SUM.match(cast.group(1) if cast else text)
    if m is None or values.get(m.group(1)) != target:
        return None
    return ("add_if" if m.group(2) == "+" else "sub_if"), m.group(1), m.group(3)


def flat_lines(kernels, call, check=None, keep=frozenset(), free=frozenset()) -> list | None:
    """The lines of a lane body (or a serial loop's cheap ``if``: ``call`` renders blends)
    with its ``if``s flattened (see the module's docstring), or None when some kernel cannot
    be predicated. ``check(kernel, when)``, where given, renders a check kernel under its
    predicate (a serial loop's: a branch that is taken only where the check fails). The
    ``if``s whose ids are in ``keep`` stay branches, taken where their predicate and
    condition hold (their kernels then run as they are). A kernel that computes only
    buffers of ``free`` (conditions no one else reads, ``simd.free_conditions``) runs
    unpredicated."""
    names = itertools.count()
    try:
        return _flat(kernels, call, "", names, check, keep, free)
    except NotPredicable:
        return None


def _flat(kernels, call, when: str, names, check=None, keep=frozenset(), free=()) -> list:
    lines = []
    for k in kernels:
        if k.form != "control" and when and {st.name for st in k.stages} <= free:
            lines.append(call(k, ""))   # (it computes only conditions, read only under the
            continue                    # predicate: a blend would carry their old values)
        if id(k) in keep:       # (one branch per side, on predicate & condition: rarely
            s = k.stages[0]     # taken, so predicted, where the predicate is not)
            n = next(names)
            cond, outer = f"{s.control['cond']}[0]", f"{when} & " if when else ""
            lines += [f"// if at {s.where or 'no source line'} (graph {s.nodes}), a branch",
                      f"const bool ccg_then{n} = {outer}{cond};",
                      f"const bool ccg_else{n} = {outer}!{cond};"]
            for side, region in (("then", k.regions[0]), ("else", k.regions[1])):
                inner = _flat(region, call, "", names, check, keep, free)
                if inner:
                    lines += [f"if (ccg_{side}{n}) {{"] + ["    " + line for line in inner] \
                        + ["}"]
            continue
        if k.form != "control":
            lines.append(call(k, when) if when else call(k))
            continue
        s = k.stages[0]
        if s.kind == "check" and check is not None:
            lines.append(check(k, when))
            continue
        if s.kind != "if":
            raise NotPredicable(s.kind)
        n = next(names)
        cond, outer = f"{s.control['cond']}[0]", f"{when} & " if when else ""   # (& of bools:
        # no short circuit, so no branch)
        lines += [f"// if at {s.where or 'no source line'} (graph {s.nodes}), flattened",
                  f"const bool ccg_then{n} = {outer}{cond};",
                  f"const bool ccg_else{n} = {outer}!{cond};"]
        lines += _flat(k.regions[0], call, f"ccg_then{n}", names, check, keep, free)
        lines += _flat(k.regions[1], call, f"ccg_else{n}", names, check, keep, free)
    return lines
