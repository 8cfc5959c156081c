"""``np.<ufunc>.reduceat``: segment reductions (CSR row sums: ``np.add.reduceat(v, indptr[:-1])``).

In: a ufunc, the array (1-D) and the segment starts (a traced integer array, a list or a NumPy
array), NumPy's keywords. Out: a ``segment`` node: element i is the ufunc's reduction of
``a[idx[i]:idx[i+1]]`` (the last one runs to the end), or ``a[idx[i]]`` alone where
``idx[i] >= idx[i+1]``, as NumPy defines it. Lowered to a loop over the segments whose body
(the array's expression, gathers included) is computed inside it (``passes/lower.py``);
sums are NumPy's pairwise sums (``include/cppcodegen/segment.h``); an index outside
``[0, len(a))`` raises NumPy's IndexError.

Other cases (N-D arrays, ``out=``, other ufuncs, complex or float16 values) run NumPy's own
reduceat between kernels.
"""
from __future__ import annotations

import numpy as np

from ..errors import user_location
from ..ir.graph import make_node
from .externs import extern_call
from .proxy import Proxy, asproxy, cast_node, wrap

KINDS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}
CODES = tuple(KINDS)        # the error report's code for each ufunc (runtime/compiled.py)


def reduceat(ufunc, inputs, kwargs):
    if len(inputs) != 2:
        return extern_call(ufunc.reduceat, inputs, kwargs)
    a, indices = inputs
    axis = kwargs.get("axis", 0)
    dtype = kwargs.get("dtype")
    a = asproxy(a)
    idx = indices if isinstance(indices, Proxy) else np.asarray(indices)
    kind = KINDS.get(ufunc.__name__)
    native = (kind is not None and set(kwargs) <= {"axis", "dtype"} and a.ndim == 1
              and axis in (0, -1) and idx.ndim == 1 and idx.dtype.kind in "iu")
    if native:
        out_dtype = ufunc.reduceat(np.zeros(1, a.dtype), [0], dtype=dtype).dtype
        native = out_dtype.kind in "iuf" and out_dtype.itemsize >= 4 and a.dtype.kind in "biuf"
    if not native:
        return extern_call(ufunc.reduceat, (a, indices), kwargs)
    src = cast_node(a.node, out_dtype)
    ix = cast_node(asproxy(idx).node, np.dtype(np.int64))
    return wrap(make_node("segment", (src, ix), ix.shape, out_dtype, user_location(),
                          kind=kind, code=CODES.index(ufunc.__name__)))
