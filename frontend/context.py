"""The trace in progress: which graph this thread is recording (TraceContext), where in the
user's code an operation comes from (user_location, where_msg), and how nodes are made
(make_node stamps the user's file:line; const_node, cast_node)."""

from __future__ import annotations

import linecache
import os
import sys
import threading
from typing import Any

import numpy as np

from ..errors import TraceError
from . import ops as O
from .ir import Node, TensorType
from .ops_complex import check_complex_node

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PKG_DIRS = frozenset({_PKG_DIR, os.path.realpath(_PKG_DIR)})
# fusejit's own sources: the modules at the package root and its sub-packages. Other files
# under the package directory (tests/, a user's scripts in a checkout) are user code.
_SKIP_DIRS = tuple(os.path.join(d, sub) + os.sep for d in _PKG_DIRS
                   for sub in ("frontend", "lowering", "codegen", "runtime", "kernels_cache")
                   ) + (os.path.dirname(np.__file__),)
_state = threading.local()


# SciPy's package directory (not any path naming scipy; Cython's frames name theirs relative)
_SCIPY = f"{os.sep}scipy{os.sep}"


def _internal(fname: str) -> bool:
    return (fname.startswith(_SKIP_DIRS) or os.path.dirname(fname) in _PKG_DIRS
            or _SCIPY in fname or fname.startswith(_SCIPY[1:]) or "<frozen" in fname)


def is_user_file(fname: str) -> bool:
    """Whether a source file is user code (not fusejit's, NumPy's or SciPy's)."""
    return not _internal(fname)


def user_location(skip: int = 1) -> str | None:
    """file:line of the innermost frame that is user code (not fusejit, NumPy or SciPy)."""
    frame = sys._getframe(skip)
    while frame is not None:
        fname = frame.f_code.co_filename
        if not _internal(fname):
            return f"{fname}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def user_expression() -> str | None:
    """The source text the innermost user frame is evaluating (the span of its current
    instruction: `np.float32(lr)` while NumPy converts lr), or None."""
    frame = sys._getframe(1)
    while frame is not None and _internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    try:
        line, end, col, end_col = list(frame.f_code.co_positions())[frame.f_lasti // 2]
    except (IndexError, ValueError):
        return None
    if line is None or line != end or col is None or end_col is None:
        return None
    text = linecache.getline(frame.f_code.co_filename, line).encode()
    return text[col:end_col].decode("utf-8", "replace")  # (offsets count UTF-8 bytes)


class TraceContext:
    """The graph being built by one trace; entered with `with`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.inputs: list[Node] = []
        self.sources: list[int] = []  # the value each input is (frontend.trace)
        self.created: list[Node] = []
        self.prelude: Any = None  # frontend.pyscalar.Prelude: Python scalar arithmetic

    def __enter__(self) -> TraceContext:
        self.prev = getattr(_state, "ctx", None)
        _state.ctx = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.ctx = self.prev


def tracing() -> bool:
    """Whether this thread is tracing a function now."""
    return getattr(_state, "ctx", None) is not None


def current() -> TraceContext:
    ctx = getattr(_state, "ctx", None)
    if ctx is None:
        raise TraceError("a fusejit Tracer was used outside of the function being traced")
    return ctx


def where_msg() -> str:
    loc = user_location(2)
    ctx = getattr(_state, "ctx", None)
    fn = f" in {ctx.name}()" if ctx is not None else ""
    return f"{fn} at {loc}" if loc else fn


def make_node(op: str, inputs: list[Node], shape: tuple[int, ...], out_dtype: np.dtype,
              **attrs: Any) -> Node:
    """Create a node, stamped with the user's source location."""
    if np.dtype(out_dtype).kind == "c" or any(i.dtype.kind == "c" for i in inputs):
        check_complex_node(op, [i.dtype for i in inputs] + [np.dtype(out_dtype)], attrs,
                           where_msg())
    node = Node(op, tuple(inputs), TensorType(tuple(int(s) for s in shape), np.dtype(out_dtype)),
                attrs, user_location(2))
    ctx = getattr(_state, "ctx", None)
    if ctx is not None:
        ctx.created.append(node)
    return node


def const_node(value: Any, dtype: np.dtype | None = None) -> Node:
    if dtype is not None and type(value) is int and np.dtype(dtype).kind in "fc":
        value = np.array(value, np.float64)  # NumPy converts a Python int through a double
    arr = np.asarray(value) if dtype is None else np.asarray(value).astype(dtype)
    if not isinstance(arr, np.ndarray):  # a list holding traced values: a traced array
        return arr.node  # (np.asarray of it while tracing: frontend/conversion.py)
    O.check_dtype(arr.dtype, "a constant")
    arr = np.array(arr, copy=True)
    arr.setflags(write=False)
    return make_node("const", [], arr.shape, arr.dtype, value=arr)


def cast_node(node: Node, dtype: np.dtype) -> Node:
    if node.dtype == dtype:
        return node
    if node.op == "const":
        return const_node(node.attrs["value"], dtype)
    return make_node("cast", [node], node.shape, dtype, dtype=np.dtype(dtype))
