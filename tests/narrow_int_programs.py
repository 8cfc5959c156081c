"""Programs on 8-, 16- and unsigned integer arrays (image-style code), compiled by
tests/test_narrow_ints.py: rows long enough that the vector loops run, not only their tails."""
import numpy as np

from benchmarks.program_workloads import life_u8 as life_step  # noqa: F401 (one Life step)


def arith(a, b):
    return a + b, a - b, a * b, -a, np.abs(a), a & b, a | b, a ^ b, ~a


def division(a, b):
    return a // b, a % b, a // 3, a % 7, np.floor_divide(a, -1 if a.dtype.kind == "i" else 1)


def compare(a, b):
    return (a < b, a <= b, a == b, a != b, a > b, a >= b, np.maximum(a, b),
            np.minimum(a, b), np.where(a > b, a, b), np.clip(a, 10, 100))


def casts(a, f):
    return (a.astype(np.float32) * 0.5, a.astype(np.float64) + f, a.astype(np.int64) * 3,
            np.abs(f * 40).astype(a.dtype), (a > 5).astype(a.dtype), a.astype(np.int8),
            a.astype(np.uint16), a.sum(), a.max(axis=1), a.min())


def box_blur(img):
    f = img.astype(np.float32)
    out = (f[:-2, :-2] + f[:-2, 1:-1] + f[:-2, 2:] + f[1:-1, :-2] + f[1:-1, 1:-1]
           + f[1:-1, 2:] + f[2:, :-2] + f[2:, 1:-1] + f[2:, 2:]) / 9.0
    return np.clip(out, 0, 255).astype(np.uint8)


def frame_scale(x, s):
    out = np.zeros(x.shape, np.float32)
    out[1:-1, 1:-1] = x[1:-1, 1:-1] * s + x[0, 0]
    return out
