"""What a call's arguments contribute before anything runs: the signature key of each
argument, element strides of non-contiguous arrays, read-only and aliasing checks for
functions that write arguments in place, and how Python ints reach C (idle or converted
inputs; frontend.trace decides their C types)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from ..frontend.ir import Graph
from . import cuda_jit

SCALAR_TYPES = (bool, int, float, complex)


def element_strides(a: np.ndarray) -> tuple[int, ...] | None:
    """Element strides of a non-contiguous array, or None when it must be copied first."""
    item = a.itemsize
    if any(s % item for s in a.strides):
        return None
    return tuple(0 if n == 1 else s // item for s, n in zip(a.strides, a.shape))


def same_view(a: np.ndarray, b: np.ndarray) -> bool:
    """True when `a` and `b` are the very same elements (one array passed twice)."""
    return a is b or (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
                      and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype)


def check_writeable(args: tuple, updated: tuple[int, ...]) -> None:
    for p in updated:
        if isinstance(args[p], np.ndarray) and not args[p].flags.writeable:
            raise ValueError(f"output array is read-only (argument {p} is updated in place)")


def updates_need_slow_path(args: tuple, updated: tuple[int, ...]) -> bool:
    """Raise NumPy's error for a read-only updated argument; True when an updated argument
    may overlap another argument (the aliasing-aware path must run)."""
    check_writeable(args, updated)
    for p in updated:
        a = args[p]
        if not isinstance(a, np.ndarray):  # a device array: written on the device
            continue
        for i, b in enumerate(args):
            if i != p and isinstance(b, np.ndarray) and np.may_share_memory(a, b):
                return True
    return False


# device array types (pycuda GPUArray, CuPy, PyTorch...) -> their signature function, once
# one of them has been seen: a call's arguments skip the checks below
_DEVICE_KEYERS: dict[type, Callable[[Any], Hashable]] = {}


def arg_key(a: Any) -> Hashable:
    """The part of the signature that one argument contributes (dtype, shape, layout)."""
    t = type(a)
    if t is np.ndarray or isinstance(a, np.ndarray):
        if a.flags.c_contiguous or a.size == 0:
            return (a.dtype, a.shape)
        return (a.dtype, a.shape, a.strides)
    if t in SCALAR_TYPES:
        return t
    keyer = _DEVICE_KEYERS.get(t)
    if keyer is not None:
        return keyer(a)
    if isinstance(a, np.generic):
        return (a.dtype,)
    if cuda_jit.is_device_array(a):
        keyer = cuda_jit.device_type_keyer(t)
        if keyer is not None:
            _DEVICE_KEYERS[t] = keyer
        return cuda_jit.device_arg_key(a)
    return ("other", t)


def idle_python_ints(g: Graph) -> frozenset[int]:
    """Python-int inputs that no node reads and that are only returned unchanged (the caller's
    own object comes back): never passed to C. An output that optimisation reduced to the
    input (`np.positive(a)`, `a + 0`) is a new value in NumPy, so prelowering copies it in a
    kernel, and that input is passed."""
    read = {i.id for n in g.nodes() for i in n.inputs}
    returned = g.out_input or [-1] * len(g.outputs)
    read |= {o.id for o, k in zip(g.outputs, returned) if k < 0}
    return frozenset(k for k, n in enumerate(g.inputs)
                     if n.attrs.get("weak") == "int" and n.id not in read)


def python_int_conversions(g: Graph) -> dict[int, Callable[[Any], Any]]:
    """Python-int inputs held as uint64 or float64 (frontend.trace._retype_int_leaves)."""
    convert = {np.dtype(np.uint64): np.uint64, np.dtype(np.float64): float}
    return {k: convert[n.dtype] for k, n in enumerate(g.inputs)
            if n.attrs.get("weak") == "int" and n.dtype in convert}
