"""The errors cppcodegen raises, and how they find the user's file:line."""
from __future__ import annotations

import os
import sys

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIP = (_PKG_DIR, os.path.dirname(os.path.abspath(os.__file__)))


class CppCodegenError(Exception):
    """Base class of every error cppcodegen raises on purpose."""


class UnsupportedError(CppCodegenError, NotImplementedError):
    """The traced function uses a NumPy feature the compiler does not support."""


class DataDependentError(CppCodegenError):
    """Python control flow or a conversion needs the value of a traced array."""


class TraceError(CppCodegenError, TypeError):
    """The traced function did something invalid (bad shapes, bad dtypes, ...)."""


def user_location() -> str:
    """file:line of the innermost frame outside cppcodegen and NumPy (the user's code)."""
    import numpy
    np_dir = os.path.dirname(os.path.abspath(numpy.__file__))
    frame = sys._getframe(1)
    while frame is not None:
        fname = frame.f_code.co_filename
        path = os.path.abspath(fname) if not fname.startswith("<") else fname
        if not (path.startswith(_PKG_DIR) or path.startswith(np_dir) or fname.startswith("<frozen")):
            return f"{fname}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>:0"
