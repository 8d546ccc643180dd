"""The class a traced value shows to the user's code: NumPy's (`isinstance(x, np.ndarray)`).

Code that a jitted function runs (its own helpers, libraries) may branch on
`isinstance(x, np.ndarray)`, `np.generic`, `np.floating` or `float`; with NumPy's value it
takes one branch, and with a Tracer (not an ndarray: making it one would hand NumPy's C code
an object without data) it would take the other, and compute something else or raise an
error that does not say why. `isinstance` consults an object's `__class__` when its type
does not match, so a Tracer's `__class__` (frontend/tracer.py) is the class of the value
NumPy would have there, np.ndarray for an array, the dtype's scalar type for a NumPy
scalar (np.float64 is a float, as in NumPy), the Python type of a Python scalar argument,
whenever it is asked from code outside fusejit, NumPy and SciPy; their own code, which
tells a Tracer from an array, sees the Tracer's real class. `type(x)` cannot be changed:
`type(x) is np.ndarray` stays False (README, limitations).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from types import CodeType
from typing import Any

import numpy as np


def _package_dirs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Directories whose code sees Tracers as they are (fusejit's, NumPy's and SciPy's), and
    those inside them that hold user code (fusejit's tests and benchmarks)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = {here, os.path.realpath(here)}
    dirs = roots | {os.path.dirname(os.path.abspath(np.__file__))}
    spec = importlib.util.find_spec("scipy")
    if spec is not None and spec.submodule_search_locations:
        dirs.update(os.path.abspath(p) for p in spec.submodule_search_locations)
    user = {os.path.join(r, sub, "") for r in roots for sub in ("tests", "benchmarks")}
    return tuple(os.path.join(d, "") for d in dirs), tuple(user)


_INTERNAL, _USER = _package_dirs()
_internal_code: dict[CodeType, bool] = {}


def _internal(code: CodeType) -> bool:
    found = _internal_code.get(code)
    if found is None:
        name = os.path.abspath(code.co_filename)
        found = _internal_code[code] = name.startswith(_INTERNAL) and not name.startswith(
            _USER)
    return found


def apparent_class(t: Any, depth: int = 2) -> type:
    """`t.__class__` asked from the frame `depth` levels up: NumPy's class of the value for
    the user's code, `type(t)` for fusejit's, NumPy's and SciPy's."""
    frame = sys._getframe(depth)
    if _internal(frame.f_code):
        return type(t)
    if t.weak is not None:
        return t.weak
    if t.scalar:
        return t.dtype.type
    return np.ndarray
