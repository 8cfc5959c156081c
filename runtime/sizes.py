"""Sizes at run time for kernels compiled with symbolic (dynamic) shapes.

A dynamic variant's argument specs name some dimensions and strides (``'s0'``, ``'t0_1'``);
``bind`` reads their values from a call's arrays (and checks the parts that are fixed), and
``evaluate`` computes the output shapes and guards that the compiler wrote as Python
expression text over those names. No sympy, no compiler.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

NAMES = {"Fraction": Fraction, "floor": math.floor, "ceil": math.ceil, "max": max, "min": min,
         "__builtins__": {}}


def compile_expr(text: str):
    return compile(text, "<size expression>", "eval")


def evaluate(code, env: dict):
    return eval(code, NAMES, env)          # noqa: S307 -- compiler-written arithmetic only


def bind(specs, args):
    """(env, None) when ``args`` fit the dynamic ``specs``: env maps each size/stride name to
    its value; else (None, the first reason they do not). Static specs are not checked here."""
    env = {}
    for i, (spec, a) in enumerate(zip(specs, args)):
        if spec[0] != "darray":
            continue
        _, dtype, shape, strides = spec
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != len(shape):
            got = f"{a.dtype}, {a.ndim}-d" if isinstance(a, np.ndarray) else type(a).__name__
            return None, f"argument {i}: expected a {len(shape)}-d {np.dtype(dtype)} array, got {got}"
        inner = a.itemsize
        for d in range(a.ndim - 1, -1, -1):
            size, want = a.shape[d], shape[d]
            if isinstance(want, str):
                old = env.setdefault(want, size)
                if old != size:
                    return None, (f"argument {i} dim {d}: size {size} differs from {want} = "
                                  f"{old} (these sizes were equal when traced)")
            elif size != want:
                return None, f"argument {i} dim {d}: size {size}, compiled for {want}"
            want_st, st = strides[d], a.strides[d]
            if a.size == 0:                 # nothing is read: any layout fits
                if isinstance(want_st, str) and want_st != "c":
                    env[want_st] = 0
            elif want_st == "c":
                if st != inner and size > 1:
                    return None, f"argument {i} dim {d}: stride {st}, compiled for contiguous"
            elif isinstance(want_st, str):
                if st % a.itemsize:
                    return None, f"argument {i} dim {d}: stride {st} is not a multiple of the itemsize"
                env[want_st] = st // a.itemsize
            inner *= size
    return env, None
