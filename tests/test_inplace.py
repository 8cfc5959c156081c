"""In-place updates of arguments: the caller sees exactly NumPy's mutation.

Every test runs the plain function with NumPy on copies of the arguments and the compiled
function on other copies, then compares the results and every argument afterwards (shape,
dtype, values), including calls where arguments alias each other.
"""
import warnings

import numpy as np
import pytest

import cppcodegen
from helpers import assert_matches_numpy


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def check_inplace(fn, *args, compiled=None, **tol):
    """NumPy on copies vs compiled on other copies: results and mutated arguments."""
    np_args, cc_args = _copies(args), _copies(args)
    want = fn(*np_args)
    got = (compiled or cppcodegen.compile(fn))(*cc_args)
    for k, (a, b) in enumerate(zip(np_args, cc_args)):
        if isinstance(a, np.ndarray):
            assert b.dtype == a.dtype and b.shape == a.shape, f"argument {k}"
            assert_matches_numpy(b, a, **tol)
    _same_result(got, want, np_args, cc_args, **tol)
    return got


def _same_result(got, want, np_args, cc_args, **tol):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same_result(g, w, np_args, cc_args, **tol)
        return
    if want is None:
        assert got is None
        return
    for a, b in zip(np_args, cc_args):        # NumPy returned an argument: the same object
        if want is a:
            assert got is b
            return
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    assert_matches_numpy(got, want, **tol)


R = np.random.default_rng(7)
A = R.standard_normal((9, 13))
B = R.standard_normal((9, 13))
V = R.standard_normal(13)


# --------------------------------------------------------------- assignments into arguments

def out_assign(out, a, b):
    out[...] = a * b + 1


def out_slice_assign(out, a):
    out[1:-1, 2:] = np.exp(a[1:-1, 2:])
    return out


def stencil_same_array(u):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                           + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])


def shift_overlap(x):
    x[1:] = x[:-1]            # NumPy reads the old values: a shift, not a smear


def shift_overlap_back(x):
    x[:-1] = x[1:] * 2


def reverse_in_place(x):
    x[...] = x[::-1]


def transpose_in_place(x):
    x[...] = x.T


def int_index_and_steps(x, v):
    x[3] = v
    x[::2, ::-3] = -1.5
    x[-1, -1] = 7


def several_assignments(x):
    x[0] = 1
    x[1:] = x[:-1] + x[1:]
    x[:, 0] = x[:, 1]
    return x[0] + x[-1]


def same_element_update(x):
    x[2:5] = 2 * x[2:5] + 1


def broadcast_value(x, v):
    x[1:4] = v


def cast_on_assignment(x, y):
    x[...] = y * 100.7         # float into int: unsafe cast like NumPy's setitem


@pytest.mark.parametrize("fn,args", [
    (out_assign, (np.zeros((9, 13)), A, B)),
    (out_slice_assign, (np.zeros((9, 13)), A)),
    (stencil_same_array, (A,)),
    (shift_overlap, (A,)),
    (shift_overlap_back, (A,)),
    (reverse_in_place, (A,)),
    (transpose_in_place, (A[:9, :9].copy(),)),
    (int_index_and_steps, (A, V)),
    (several_assignments, (A,)),
    (same_element_update, (A,)),
    (broadcast_value, (A, V)),
    (cast_on_assignment, (np.zeros((9, 13), np.int32), A)),
])
def test_assignment_into_argument(fn, args):
    check_inplace(fn, *args)


def test_stencil_reads_old_values():
    """The direct rule must send a stencil through a temporary (it reads neighbours it also
    writes), and send `x += y` straight into the argument."""
    ex = cppcodegen.explain(stencil_same_array, A.copy())
    assert "buf" in str(ex.program)                    # a temporary
    ex = cppcodegen.explain(iadd, A.copy(), B)
    text = str(ex.program)
    assert "temp" not in text and "pointwise in0" in text


# --------------------------------------------------------------- in-place operators and out=

def iadd(x, y):
    x += y
    return x


def imul_chain(x):
    x *= 2
    x -= 1
    x /= 3
    return x


def iop_int(x, y):
    x += y
    x *= 3
    x //= 2


def iop_on_view(x):
    v = x[1:-1]
    v *= 10
    x[:, 0] += 1
    return v[:, 0] * 2


def ufunc_out(a, b, c):
    r = np.add(a, b, out=c)
    return r


def ufunc_out_aliasing_input(a, b):
    np.multiply(a, b, out=a)
    np.subtract(b, a, out=b)
    return a, b


def ufunc_out_view(a, b):
    np.exp(a[1::2], out=b[1::2])
    np.maximum(a, 0, out=a)


def ufunc_out_broadcast(a, v):
    np.add(a, v, out=a)
    return np.sqrt(np.abs(a), out=a)


def matmul_out(a, b, c):
    np.matmul(a, b, out=c)
    c += 1


def argument_and_result(x):
    y = x * 2
    x += 1
    return y, x * 3


@pytest.mark.parametrize("fn,args", [
    (iadd, (A, B)),
    (imul_chain, (A,)),
    (iop_int, (np.arange(20, dtype=np.int64).reshape(4, 5), np.ones((4, 5), np.int64))),
    (iop_on_view, (A,)),
    (ufunc_out, (A, B, np.empty((9, 13)))),
    (ufunc_out_aliasing_input, (A, B)),
    (ufunc_out_view, (A, B)),
    (ufunc_out_broadcast, (A, V)),
    (matmul_out, (A[:, :9].copy(), B[:, :9].T.copy(), np.zeros((9, 9)))),
    (argument_and_result, (A,)),
])
def test_inplace_operators_and_out(fn, args):
    check_inplace(fn, *args)


def test_same_kind_casting_refused():
    def bad(x, y):
        x += y
    with pytest.raises(TypeError, match="same_kind"):
        cppcodegen.compile(bad)(np.zeros(4, np.int32), np.ones(4))


# --------------------------------------------------------------- views of arguments

def view_write_through(x):
    v = x[2:, ::2]
    v[0] = 5                     # writes x[2, ::2]
    return x[2].copy(), v * 1


def view_sees_later_update(x):
    v = x[1:]
    x[...] = 0.5
    return v * 2                 # NumPy: the view shows the new values


def transposed_view_write(x):
    t = x.T
    t[0] = 1                     # x[:, 0]
    t[1:3] += 2


def reshaped_view_write(x):
    r = x.reshape(-1)
    r[::5] = 3


def copy_is_not_a_view(x):
    c = x.copy()
    d = np.copy(x)
    x += 1
    return c, d


def swap_arguments(a, b):
    t = a.copy()
    a[...] = b
    b[...] = t


@pytest.mark.parametrize("fn,args", [
    (view_write_through, (A,)),
    (view_sees_later_update, (A,)),
    (transposed_view_write, (A,)),
    (reshaped_view_write, (A,)),
    (copy_is_not_a_view, (A,)),
    (swap_arguments, (A, B)),
])
def test_views_of_arguments(fn, args):
    check_inplace(fn, *args)


def test_argument_view_passed_by_caller():
    """The caller passes non-contiguous views: writes land in the right elements."""
    base_np, base_cc = A.copy(), A.copy()
    iadd(base_np[::2, 1::3], 1.0 + base_np[::2, ::3][:, :4])
    cppcodegen.compile(iadd)(base_cc[::2, 1::3], 1.0 + base_cc[::2, ::3][:, :4])
    np.testing.assert_array_equal(base_cc, base_np)
    t_np, t_cc = A.copy(), A.copy()
    stencil_same_array(t_np.T)
    cppcodegen.compile(stencil_same_array)(t_cc.T)
    np.testing.assert_allclose(t_cc, t_np, rtol=1e-15, atol=0)


def test_broadcast_view_write_refused():
    def bad(x):
        v = np.broadcast_to(x[0], (3, 13))
        v[...] = 1
    with pytest.raises(ValueError, match="read-only"):
        cppcodegen.compile(bad)(A.copy())


# --------------------------------------------------------------- arguments aliasing each other

def test_same_array_twice():
    def f(a, b):
        a += b
        return b * 1

    def g(a, b):
        a[1:] = b[:-1] + 1
    for fn in (f, g):
        cf = cppcodegen.compile(fn)
        x_np, x_cc = A.copy(), A.copy()
        want = fn(x_np, x_np)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = cf(x_cc, x_cc)
        np.testing.assert_array_equal(x_cc, x_np)
        if want is not None:
            np.testing.assert_array_equal(got, want)
        # the same variant, now without aliasing, is compiled code again
        check_inplace(fn, A, B, compiled=cf)


def test_overlapping_views_as_arguments():
    def f(a, b):
        a += b
        b *= 2
    cf = cppcodegen.compile(f)
    x_np, x_cc = A.copy(), A.copy()
    f(x_np[:-1], x_np[1:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf(x_cc[:-1], x_cc[1:])
    np.testing.assert_array_equal(x_cc, x_np)


# --------------------------------------------------------------- errors and fresh arrays

def test_read_only_argument_raises():
    x = A.copy()
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        cppcodegen.compile(iadd)(x, B)
    np.testing.assert_array_equal(x, A)
    with pytest.raises(ValueError, match="read-only"):
        cppcodegen.compile(iadd, backend="numpy")(x, B)


def test_unmutated_arguments_untouched():
    def f(x, y):
        z = x * 2
        z += y
        z[0] = 1
        return z
    x, y = A.copy(), B.copy()
    check_inplace(f, x, y)
    cppcodegen.compile(f)(x, y)
    np.testing.assert_array_equal(x, A)
    np.testing.assert_array_equal(y, B)


def test_numpy_backend_and_check_mode_mutate_like_numpy():
    for backend in ("numpy", "check"):
        check_inplace(stencil_same_array, A, compiled=cppcodegen.compile(
            stencil_same_array, backend=backend))
        check_inplace(ufunc_out_aliasing_input, A, B, compiled=cppcodegen.compile(
            ufunc_out_aliasing_input, backend=backend))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint8])
def test_dtypes(dtype):
    def f(x, y):
        x[1:-1] += y[1:-1]
        x[0] = y[-1]
    x = (np.arange(40) % 7).astype(dtype)
    y = (np.arange(40) % 5).astype(dtype)
    check_inplace(f, x, y)


def test_repeated_calls_keep_updating():
    cf = cppcodegen.compile(stencil_same_array)
    u_np, u_cc = A.copy(), A.copy()
    for _ in range(3):
        stencil_same_array(u_np)
        cf(u_cc)
    np.testing.assert_allclose(u_cc, u_np, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("fn,make", [
    (stencil_same_array, lambda n: (R.standard_normal((n, n + 3)),)),
    (out_slice_assign, lambda n: (np.zeros((n, 6)), R.standard_normal((n, 6)))),
    (iadd, lambda n: (R.standard_normal((n, 4)), R.standard_normal((n, 4)))),
    (shift_overlap, lambda n: (R.standard_normal(n),)),
    (ufunc_out_aliasing_input, lambda n: (R.standard_normal(n), R.standard_normal(n))),
])
def test_dynamic_shapes(fn, make):
    """One variant for several sizes (dynamic=True): writes still land where NumPy's do."""
    cf = cppcodegen.compile(fn, dynamic=True)
    for n in (5, 12, 29):
        check_inplace(fn, *make(n), compiled=cf)
    assert len(cf.variants) == 1


def strided_fill(x):
    v = x.copy()
    v[::3, 1:4] = 7
    return v


@pytest.mark.parametrize("shape", [(2, 1), (7, 5), (11, 6), (0, 3)])
def test_dynamic_strided_region_with_symbolic_length(shape):
    """Found by the fuzzer (seed 79 #256, dynamic): a step-3 region's length is floor((n0 -
    1) / 3) + 1, a symbol; choosing which elements lie outside it asked sympy whether that
    is <= 1 and crashed. Undecidable now means "copy the whole base, then overwrite"."""
    cf = cppcodegen.compile(strided_fill, dynamic=True)
    check_inplace(strided_fill, R.integers(-9, 9, shape), compiled=cf)


def negative_index_fill(x):
    v = x.copy()
    v[:, -10] = 100
    return v


def test_dynamic_negative_index_assignment():
    """Found by the fuzzer (seed 82 #10, dynamic): ``v[:, -10] = 100`` stores at column
    n1 - 10, a symbol, which the lowering passed to sympy.Integer and crashed. One variant
    serves every width; a row too short raises NumPy's IndexError."""
    cf = cppcodegen.compile(negative_index_fill, dynamic=True)
    for n in (10, 13, 25):
        check_inplace(negative_index_fill, R.integers(-9, 9, (2, n)).astype(np.int32),
                      compiled=cf)
    assert len(cf.variants) == 1
    with pytest.raises(IndexError, match="out of bounds"):
        cf(np.zeros((2, 5), np.int32))


def reversed_empty_region(x):
    v = np.logical_xor(0.0, x)
    np.multiply(v[:, :, ::-1, 1], False, out=v[:, :, ::-1, 1])
    return v


@pytest.mark.parametrize("dynamic", [False, True])
def test_reversed_empty_region_writes_nothing(dynamic):
    """Found by the fuzzer (seed 82 #754, under AddressSanitizer): ``v[:, :, ::-1, 1]`` of an
    axis of size 0 is an empty region whose lowest element was computed as start + 1 = 1, so
    the copy of the elements around it looped over a size-1 axis of an empty buffer and wrote
    past its end. The lowering now checks every partial store's range (``_check_stores``)."""
    cf = cppcodegen.compile(reversed_empty_region, dynamic=dynamic)
    for n in (5, 12):
        check_inplace(reversed_empty_region, np.ones((1, n, 0, 3)), compiled=cf)


def element_then_write(x):
    s = x[0, 1]                  # a NumPy scalar: a copy of the element
    x[0, 1] = 5
    return s, x[0, 1]


def element_op_assign(x, f):
    v = x.copy()
    v[1, 0] += f                 # v[1, 0] = v[1, 0] + f: a float scalar, cast back unsafely
    v[-1, -1] *= 2.5
    return v


def reduction_op_assign(x):
    s = x.sum()                  # an int64 scalar; s += 1.5 makes a float64 one
    s += 1.5
    m = x.max(axis=None)
    m //= 2
    return s, m


@pytest.mark.parametrize("fn,args", [
    (element_then_write, (np.arange(6).reshape(2, 3),)),
    (element_op_assign, (np.arange(6).reshape(3, 2), 2.75)),
    (element_op_assign, (np.arange(6, dtype=np.int32).reshape(3, 2), -1.5)),
    (reduction_op_assign, (np.arange(7),)),
])
def test_numpy_scalars_are_values(fn, args):
    """Found by the fuzzer (seed 20240 #793): ``v[1, 0] += 2.75`` on an int array raised a
    same_kind casting error, and ``s = x[0, 1]; x[0, 1] = 5`` returned 5. NumPy returns a
    scalar for an element and for a 0-d ufunc or reduction result: a copy, and ``op=`` on
    it makes a new value (of the promoted dtype) instead of writing in place."""
    check_inplace(fn, *args)


def astype_then_update(x):
    v = x.astype(np.int64)          # the same dtype: still a copy
    np.add(x[17::-2], 31, out=x[17::-2])
    return v, x.astype(np.int64, copy=False)


@pytest.mark.parametrize("n", [1, 31])
def test_astype_to_the_same_dtype_copies(n):
    """Found by the fuzzer (seed 9005 #12367): ``x.astype(x.dtype)`` was x itself, so an
    update of the argument x afterwards showed in the 'copy'. copy=False still aliases."""
    check_inplace(astype_then_update, np.arange(n, dtype=np.int64))


def zero_d_element_then_update(x):
    s = x[()]
    x += 1
    return s


def scalar_results_are_values(a, b, v):
    d = np.heaviside(a, b)          # 0-d ufunc results, a vector product: NumPy scalars
    t = d
    t += 1
    p = v @ v
    q = p
    q += 1
    c = np.copy(v.sum())            # np.copy of a scalar: a 0-d array, updated in place
    e = c
    e += 1
    return d, p, c


def test_zero_d_results_are_numpy_scalars_or_arrays_as_in_numpy():
    """From review: x[()] of a 0-d argument was the argument itself (a later x += 1 showed),
    np.floor of ints returned the caller's array, heaviside/logaddexp of 0-d inputs and
    v @ v were not scalars (t = d; t += 1 wrote into d), np.copy of a scalar was."""
    check_inplace(zero_d_element_then_update, np.array(1.0))
    check_inplace(scalar_results_are_values, np.array(0.0), np.array(0.5), np.arange(3.0))
    x = np.arange(4)
    assert cppcodegen.compile(lambda x: np.floor(x))(x) is not x


def test_warm_start_from_the_graph_cache_still_writes_arguments():
    """A second process loads the kernel and its plan from the disk cache: the arguments it
    updates, its read-only check and its NumPy fallback for overlapping arguments come back."""
    from helpers import run_isolated
    code = """
        import warnings
        import numpy as np
        import cppcodegen

        def step(u, v):
            u[1:-1] = u[1:-1] + 0.5 * (u[:-2] - 2 * u[1:-1] + u[2:])
            v += 1

        def check():
            cf = cppcodegen.compile(step)
            u, v = np.linspace(0, 1, 50) ** 2, np.arange(50.0)
            a, b = u.copy(), v.copy()
            step(a, b)
            cf(u, v)
            assert np.array_equal(u, a) and np.array_equal(v, b)
            w = np.arange(50.0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cf(w, w)
            x = np.arange(50.0)
            step(x, x)
            assert np.array_equal(w, x)
            v.flags.writeable = False
            try:
                cf(u, v)
            except ValueError as e:
                assert "read-only" in str(e)
            else:
                raise AssertionError("read-only argument written")
        check()
        print("ok")
    """
    assert "ok" in run_isolated(code)
    assert "ok" in run_isolated(code)          # the second process starts warm


def _triangular_update(C, A):
    C = C.copy()
    for i in range(C.shape[0]):
        C[i, :i + 1] *= 1.2
        for k in range(A.shape[1]):
            C[i, :i + 1] += 1.5 * A[i, k] * A[:i + 1, k]
    return C


def test_augmented_slice_assignment_in_a_loop_stores_its_region_only():
    """``C[i, :i+1] += v``: Python updates C through the view, then assigns the view back;
    the assignment of a view to itself is dropped, so each step writes i+1 elements (it
    rewrote all of C: polybench syrk ran as n**4)."""
    rng = np.random.default_rng(3)
    C, A = rng.standard_normal((30, 30)), rng.standard_normal((30, 20))
    f = cppcodegen.compile(_triangular_update)
    np.testing.assert_allclose(f(C, A), _triangular_update(C, A), rtol=1e-12, atol=1e-12)
    loop_ir = str(f.explain(C, A)).split("== loop IR ==")[1].split("== kernels")[0]
    inner = [ln for ln in loop_ir.split("for lv", 2)[2].splitlines() if ln.startswith(" " * 8)]
    assert inner and not any("over [30, 30]" in ln for ln in inner), loop_ir


def test_reduction_after_a_box_assignment_is_split_by_region():
    """err = |u - un|.max() after u[1:-1, 1:-1] = stencil(un): reduced over the box (the
    stencil, vector loops) and the frame (the old values) separately, combined; the same
    values as NumPy for max, min, sum, any, all, NaN included."""
    def f(u):
        v = u.copy()
        v[2:-3, 1:] = np.sqrt(u[:-5, :-1] + 1.0)
        return (v * 2).sum(), np.abs(v - u).max(), (v > 0.5).any(), (v < 3).all(), np.min(v - u)
    x = np.random.default_rng(1).random((20, 30))
    for nan in (False, True):
        if nan:
            x[5, 5] = np.nan
        got, want = cppcodegen.compile(f)(x), f(x)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-13)
    src = cppcodegen.explain(f, x).source
    box = src.split("reduction max over [15, 29]")[1].split("\n}\n")[0]   # the box's part:
    assert "ccg::Vec<double, L>::load" in box and "std::min<int64_t>" not in box   # vectors


def rows_from_tuples(x0, y0, n, dt):
    out = np.zeros((n, 2))
    out[0] = (x0, y0)
    x, y = x0, y0
    for i in range(1, n):
        x, y = x + dt * (x - x * y), y + dt * (x * y - y)
        out[i] = (x, y)
    out[n - 1, :] = [out[0, 1], 7.0]
    return out


def test_a_tuple_stored_into_a_row():
    """``out[i] = (x, y)`` of traced scalars (a Lotka-Volterra loop): the row gets the tuple
    as an array, as NumPy does (it raised 'cannot use tuple as an array operand'; found by a
    new user's probe)."""
    got = cppcodegen.compile(rows_from_tuples, fallback=False)(1.0, 0.5, 40, 0.01)
    np.testing.assert_allclose(got, rows_from_tuples(1.0, 0.5, 40, 0.01), rtol=1e-13)


def _add_a_float(a):
    a += 1.5
    return a


def test_same_kind_error_is_numpys():
    """``a += 1.5`` on an int array raises NumPy's own UFuncTypeError (a TypeError), as
    NumPy does, with the user's line as a note (it was a plain TypeError)."""
    with pytest.raises(TypeError) as want:
        _add_a_float(np.arange(3))
    with pytest.raises(TypeError) as got:
        cppcodegen.compile(_add_a_float)(np.arange(3))
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


def column_sweep(p, q):
    """ADI's column sweep: two boundary elements of column i, then a recurrence up it."""
    n = p.shape[0]
    v = np.zeros_like(p)
    for i in range(1, n - 1):
        v[0, i] = 1.0
        v[n - 1, i] = -1.0
        for j in range(n - 2, 0, -1):
            v[j, i] = p[i, j] * v[j + 1, i] + q[i, j]
    return v


@pytest.mark.parametrize("n", [2, 3, 9, 40])
def test_element_stores_before_a_loop_stay_in_place(n):
    """The two stores of each outer iteration went into a select over the whole array and
    a copy back after the inner loop (n**2 work per iteration): each is now one store into
    the loop's array, as written."""
    rng = np.random.default_rng(n)
    p, q = rng.random((n, n)) * 0.5, rng.random((n, n))
    np.testing.assert_array_equal(cppcodegen.compile(column_sweep)(p, q), column_sweep(p, q))
    src = cppcodegen.explain(column_sweep, p, q).source
    assert "where" not in src, src
    assert cppcodegen.check(column_sweep, p, q).ok          # (hooks see the same values)


def negate_through_a_view(x):
    y = x[1:]
    for i in range(y.shape[0]):
        y[i] = -y[i]
    z = x[::2]
    for i in range(z.shape[0]):
        z[i] = z[i] * 2.0
    return x


def lu_by_row_views(a):
    a = a.copy()
    n = a.shape[0]
    for k in range(n):
        piv = a[k]
        for i in range(k + 1, n):
            row = a[i]
            f = row[k] / piv[k]
            row[k:] -= f * piv[k:]
    return a


def test_element_stores_through_a_view_are_stores_into_the_array():
    """``y = x[1:]; y[i] = -y[i]`` and a row ``r = A[i]`` updated ``r[k:] -= f * p[k:]`` store
    into the array under the view, where the store lands (each store rebuilt the whole
    view and copied it back: an element loop took time quadratic in the length, LU by row
    views 400 ms at n=200 against 0.8 ms written A[i, k:])."""
    x = R.standard_normal(501)
    want = negate_through_a_view(x.copy())
    got = x.copy()
    f = cppcodegen.compile(negate_through_a_view, fallback=False)
    np.testing.assert_array_equal(f(got), want)
    np.testing.assert_array_equal(got, want)
    ir = str(cppcodegen.explain(f, x.copy()).program)
    assert "over [500]" not in ir and "over [251]" not in ir, ir    # (no whole-view pass)
    a = R.standard_normal((30, 30)) + 30 * np.eye(30)
    g = cppcodegen.compile(lu_by_row_views, fallback=False)
    np.testing.assert_allclose(g(a), lu_by_row_views(a), rtol=1e-12, atol=1e-12)
    ir = str(cppcodegen.explain(g, a).program)
    assert "over [30, 30]" not in ir.split("for lv0")[1], ir        # (no whole-matrix pass)


def _row_reduce(A):                 # textbook elimination without pivoting: the multipliers
    A = A.copy()                    # read column k of the rows the update writes
    n = A.shape[0]
    for k in range(n - 1):
        f = A[k + 1:, k] / A[k, k]
        A[k + 1:, k:] -= np.outer(f, A[k, k:])
    return A


def test_an_update_that_reads_its_region_through_a_vector_computes_the_vector_first():
    """``A[k+1:, k:] -= np.outer(A[k+1:, k] / A[k, k], A[k, k:])`` reads column ``k`` of
    the rows it writes. The quotient (a vector) and the pivot row are computed first, then
    the update is stored in place in one pass; it was computed into a temporary of the
    region's size and copied back (two passes per column)."""
    import re
    A = np.random.default_rng(5).random((30, 30)) + 30 * np.eye(30)
    f = cppcodegen.compile(_row_reduce, fallback=False)
    np.testing.assert_allclose(f(A), _row_reduce(A), rtol=1e-12, atol=1e-12)
    ir = str(cppcodegen.explain(f, A).program)
    copies = [ln for ln in ir.splitlines()
              if re.search(r"^ {4,}pointwise buf\d+\[.*\] over \[.+, .+\]:  buf\d+\[i0, i1\]$", ln)]
    assert not copies, ir


def central_diff_loop(f, h):
    n = f.shape[0]
    d = np.zeros(n)
    for i in range(1, n - 1):
        d[i] = (f[i + 1] - f[i - 1]) / (2 * h)
    if n > 1:
        d[0] = (f[1] - f[0]) / h
        d[-1] = (f[-1] - f[-2]) / h
    return d


def test_edge_stores_after_a_loop_go_into_its_array():
    """Two element stores after the loop that filled ``d`` (its edges), ``d`` returned: both
    into the loop's array. The first took the array as the result, so the second copied all
    of it into a new one (12x the loop's time at 10^6 elements)."""
    f = np.sin(np.linspace(0, 6, 1001))
    for x in (f, f[:2], f[:1]):
        np.testing.assert_array_equal(cppcodegen.compile(central_diff_loop)(x, 0.01),
                                      central_diff_loop(x, 0.01))
    program = str(cppcodegen.explain(central_diff_loop, f, 0.01).program)
    assert "buf3" not in program and "buf1[1000] over [1]" in program
