"""CI slice of the loop fuzzer's *dataslice* family (tests/fuzz/dataslices.py): random loops
whose slices take their bounds from array values (``a[lo[i]:hi[i]]``, ``vals[p[i]:p[i + 1]]``,
``a[g[i]:i + 1]``, ``out[lo[i]:hi[i]:2] += ...``) with bounds that are negative, past either
end, reversed, empty or huge, read (sum/mean/dot/@/elementwise of two slices with the same
bounds, max/min with ``initial=``), stored and updated in place, in prange loops, branches
and nested loops, and the same build called again with other sizes. Each is compiled with
``cppcodegen.compile`` and compared with the same function run as plain Python by the loop
fuzzer's oracle (tests/fuzz/loopcheck.py: values within its tolerances, same dtypes, the
same exception class where Python raises, arguments as Python leaves them).

A failure prints the program and the command that reproduces and shrinks it:
``python -m tests.fuzz --loops --family dataslice --seed S --start I --count 1``.
Constructs of the bugs below (``dataslices.KNOWN_LIMITS``) are not drawn here; ``--known``
draws them. The strict xfails at the end are those bugs, minimized.
"""
import math  # noqa: F401  (the programs may use it)

import numpy as np
import pytest

import cppcodegen
from cppcodegen import prange
from fuzz import dataslices, loopcheck
from fuzz.inputs import make_input  # noqa: F401
from fuzz.loopcheck import check_loop_function

SEED = 36378
COUNT = 10
# program index -> the strict xfail below it hits
KNOWN = {}


def test_dataslice_fuzz_slice():
    problems, _ = loopcheck.slice_problems(dataslices, SEED, COUNT, KNOWN, twin=False,
                                           family="dataslice")
    if problems:
        pytest.fail(f"{len(problems)} dataslice fuzz failure(s); reproduce and shrink with "
                    f"`python -m tests.fuzz --loops --family dataslice --seed {SEED} --start <index> "
                    "--count 1`\n\n" + "\n\n".join(problems), pytrace=False)


def test_dataslice_generator_reproducible_and_broad():
    a = [dataslices.generate(7, i).source() for i in range(40)]
    assert a == [dataslices.generate(7, i).source() for i in range(40)]
    feats = {}
    for i in range(300):
        p = dataslices.generate(SEED, i)
        compile(p.module_source(), "<dataslice program>", "exec")
        assert not (p.features & dataslices.KNOWN_LIMITS), (i, p.features)
        for f in p.features:
            feats[f] = feats.get(f, 0) + 1
    want = ("negative-bound past-end reversed empty huge-bound int32-bounds step1 step2 step3 "
            "bounds-lohi bounds-csr bounds-mixed bounds-open bounds-reversed bounds-fixed "
            "bounds-literal bounds-carried bounds-local bounds-offset same-bounds-reused "
            "read-sum read-mean read-max read-min read-dot read-matmul read-mulsum read-count "
            "max-initial min-initial elementwise other-length 2d store store-slice aug-store "
            "view-update write-arg prange branch break continue nested inner-loop trip0 "
            "resized-calls").split()
    missing = [f for f in want if feats.get(f, 0) < 2]
    assert not missing, (missing, feats)
    known = {f for i in range(200) for f in dataslices.generate(SEED, i, set()).features}
    assert set(dataslices.KNOWN_LIMITS) <= known, known


def test_the_oracle_compares_every_element():
    """Python's results of the drawn programs are stable (no perturbed run raised, nearly no
    element left out of the comparison), and a wrong element is a mismatch."""
    n_elems = n_unstable = 0
    for i in range(30):
        p = dataslices.generate(SEED, i)
        src = p.module_source()
        mod = loopcheck.load_module(src, f"oracle{i}")
        ref = loopcheck.LoopReference(src, mod.f, "f", p.make_args())
        if isinstance(ref.exc, IndexError):     # an element of an empty slice: Python raises
            continue
        assert ref.exc is None and not ref.fragile, (i, ref.exc)
        n_elems += sum(u.size for u in ref.unstable)
        n_unstable += sum(int(u.sum()) for u in ref.unstable)
        got = tuple(np.array(x, copy=True) for x in ref.py_leaves)
        after = [np.array(x, copy=True) for x in ref.leaves[ref.n_results:]]
        assert loopcheck.judge(ref, got, None, after)[0] == "ok"
        for k, g in enumerate(got):
            if g.size and g.dtype.kind in "fi" and not ref.unstable[k].all():
                j = np.flatnonzero(~ref.unstable[k].reshape(-1))[0]
                bad = [x.copy() for x in got]
                bad[k].reshape(-1)[j] = 1e9 if g.dtype.kind == "f" else 10**6
                assert loopcheck.judge(ref, tuple(bad), None, after)[0] == "mismatch", (i, k)
    assert n_unstable <= 0.01 * n_elems, (n_unstable, n_elems)


def _scaled(src):
    return ("def f(acc, lo, hi):\n    for i in range(lo.shape[0]):\n"
            f"        {src}\n    return (acc,)\n")


def test_the_oracle_runs_in_place_products():
    """``acc[lo:hi] *= c`` (the perturbed oracle rewrites it as a call of _cmul): compared."""
    src = _scaled("acc[lo[i]:hi[i]] *= 0.5")
    mod = loopcheck.load_module("import numpy as np\n" + src, "cmul")
    args = [np.arange(1.0, 6.0), np.array([0, 2]), np.array([3, 5])]
    ref = loopcheck.LoopReference("import numpy as np\n" + src, mod.f, "f", args)
    assert not ref.fragile
    assert loopcheck.judge(ref, (np.arange(1.0, 6.0),), None, loopcheck._copy(args))[0] == "mismatch"


# ----------------------------------------------------------------------------- known bugs
# Found by this family (``--known`` draws them); minimized. Module-level on purpose: the
# capture re-reads the functions' source.

_LO = np.array([2, -1, 5, 0, 7, -9], dtype=np.int64)
_HI = np.array([4, 3, 3, 9, 7, 2], dtype=np.int64)


# -- length-value: the length of a value slice used as a value or in a condition.
# ``.shape[0]`` / ``.size`` stored, added or compared in an ``if``: the C++ reads the length's
# data symbol where its bind never ran ("'dv3' was not declared in this scope", a
# CompileError; a named slice that is also read or updated works, as in test_data_slices);
# ``len(...)``: the loop is not compiled (LoopDependent: dv1), then refused as a slice
# outside a loop; ``max(seg.shape[0], 1)``: "bool() of a traced array".
def f_length_stored(a, lo, hi):
    out = np.zeros(lo.shape[0])
    for i in range(lo.shape[0]):
        out[i] = a[lo[i]:hi[i]].shape[0]
    return (out,)


def f_length_condition(a, lo, hi):
    out = np.zeros(lo.shape[0])
    for i in range(lo.shape[0]):
        if a[lo[i]:hi[i]].shape[0] > 1:
            out[i] = a[lo[i]:hi[i]].sum()
    return (out,)


def f_length_len(a, lo, hi):
    c = np.int64(0)
    for i in range(lo.shape[0]):
        c += len(a[lo[i]:hi[i]])
    return (c,)


@pytest.mark.parametrize("fn", [f_length_stored, f_length_condition])
def test_length_of_a_value_slice_as_a_value(fn):
    check_loop_function(fn, [np.arange(1.0, 8.0), _LO, _HI])


def test_len_of_a_value_slice():
    check_loop_function(f_length_len, [np.arange(1.0, 8.0), _LO, _HI])


# -- while: a value slice in a while loop is refused as if outside any loop ("this compiles
# inside a compiled for/while loop ... not outside one"): data_slice looks for an enclosing
# *for* loop only.
def f_while_slice(a, lo, hi):
    out = np.zeros(lo.shape[0])
    i = 0
    while i < lo.shape[0]:
        out[i] = a[lo[i]:hi[i]].sum()
        i += 1
    return (out,)


def test_value_slice_in_a_while_loop():
    check_loop_function(f_while_slice, [np.arange(1.0, 8.0), _LO, _HI])


# -- reslice: a value slice sliced again with constant bounds (``[1:]``, ``[:-1]``,
# ``[::-1]``, ``[::2]``): the loop is not compiled (LoopDependent: dv1 - 1 > 0), then refused.
def f_reslice(a, lo, hi):
    out = np.zeros(lo.shape[0])
    for i in range(lo.shape[0]):
        out[i] = a[lo[i]:hi[i]][1:].sum() + a[lo[i]:hi[i]][::-1][:1].sum()
    return (out,)


def test_a_value_slice_sliced_again():
    check_loop_function(f_reslice, [np.arange(1.0, 8.0), _LO, _HI])


# -- slice-element: an element of a value slice at a constant index (``row[0]``, ``row[-1]``;
# NumPy's IndexError for an empty one): the loop is not compiled (LoopDependent: dv1 > 0),
# then refused as a slice outside a loop. Here every slice is non-empty.
def f_slice_element(a, lo, hi):
    out = np.zeros(lo.shape[0])
    for i in range(lo.shape[0]):
        out[i] = a[lo[i]:hi[i]][0] - a[lo[i]:hi[i]][-1]
    return (out,)


def test_an_element_of_a_value_slice():
    check_loop_function(f_slice_element, [np.arange(1.0, 8.0), np.array([0, 2, -3, 1]),
                                          np.array([3, 7, -1, 2])])


# -- segment copy: a store between two value slices with other bounds
# (``out[p[i]:p[i + 1]] = src[q[i]:q[i + 1]]``): their lengths are taken as equal, as
# broadcasting needs, and checked when the program runs (NumPy's ValueError otherwise).
def f_segment_copy(out, src, p, q):
    for i in range(p.shape[0] - 1):
        out[p[i]:p[i + 1]] = src[q[i]:q[i + 1]]
    return (out,)


def test_a_segment_copied_between_value_slices():
    check_loop_function(f_segment_copy, [np.zeros(6), np.arange(10.0), np.array([0, 2, 2, 5]),
                                         np.array([3, 5, 5, 8])])
    f = cppcodegen.compile(f_segment_copy)
    with pytest.raises(ValueError, match="different lengths"):
        f(np.zeros(6), np.arange(10.0), np.array([0, 2, 2, 5]), np.array([3, 5, 5, 9]))


# -- named-slice-carried: a name bound to a value slice in a loop that carries a scalar:
# "variable 'seg' changes its shape or kind in the loop" (the name is taken for a carried
# value), the loop is not compiled, then refused as a slice outside a loop. Without the
# carried scalar (out[i] = seg.sum()), or without the name (s += a[lo:hi].sum()), it
# compiles; so does a name for a slice bounded by the loop index (seg = a[i:]).
def f_named_slice_carried(a, lo, hi):
    s = 0.0
    for i in range(lo.shape[0]):
        seg = a[lo[i]:hi[i]]
        s += seg.sum()
    return (s,)


def f_inner_loop_carried(a, lo, hi):
    s = 0.0
    for i in range(lo.shape[0]):
        seg = a[lo[i]:hi[i]]
        for j in range(seg.shape[0]):
            s += seg[j] * (j + 1)
    return (s,)


@pytest.mark.parametrize("fn", [f_named_slice_carried, f_inner_loop_carried])
def test_a_named_value_slice_with_a_carried_scalar(fn):
    check_loop_function(fn, [np.arange(1.0, 8.0), _LO, _HI])


# -- float32-into-float64 (not specific to value slices): ``s = np.float64(0.0)`` updated in
# a loop with float32 values comes back float32 (and summed in float32), where NumPy keeps
# float64 (np.float64 + np.float32 -> float64; the same statement outside a loop compiles
# right). Also ``m = np.maximum(m, x[i])``.
def f_float32_into_float64(x):
    s = np.float64(0.0)
    for i in range(x.shape[0]):
        s += x[i]
    return (s,)


def test_float32_values_into_a_float64_scalar():
    check_loop_function(f_float32_into_float64, [np.linspace(0.1, 3.0, 7, dtype=np.float32)])


# -- prange (not specific to value slices): two stores to out[i] in one iteration were refused
# with "writes all of an array it shares between iterations", though each iteration writes
# only its own element; a chain of one-element stores is now two element stores.
def f_prange_two_stores(x, lo, hi):
    out = np.zeros(lo.shape[0])
    for i in prange(lo.shape[0]):
        out[i] = x[lo[i]:hi[i]].sum()
        out[i] += 1.0
    return (out,)


def test_prange_two_stores_to_its_own_element():
    check_loop_function(f_prange_two_stores, [np.arange(1.0, 8.0), _LO, _HI])
