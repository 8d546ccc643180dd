"""Device arrays fusejit reads in place: pycuda GPUArrays and any object with
`__cuda_array_interface__` (CuPy arrays, PyTorch CUDA tensors, numba device arrays).

This module owns what a device array is to fusejit (`describe` -> DeviceView: pointer, shape,
dtype, byte strides, read-only flag, stream), its part of the call signature, the host
stand-in it is traced through (same strides, no memory touched), and the rules a call with
device arrays follows, each with the exception a NumPy/CuPy user expects:

- an unsupported dtype (or byte strides that are not whole elements): TypeError / ValueError;
- a device array on another GPU than the one fusejit runs on (the pointer's device, asked of
  the driver with cuPointerGetAttribute): ValueError, as CuPy's;
- a host NumPy array of one or more dimensions in a call that also has device arrays:
  TypeError, as CuPy's `cupy_array + numpy_array` (no silent host-to-device copies: pass
  `cupy.asarray(x)` / `gpuarray.to_gpu(x)`); scalars and 0-d arrays mix freely;
- a read-only device array (CAI `data = (ptr, True)`) the function updates: ValueError;
- a CAI `stream` other than the legacy or per-thread default stream is synchronised before
  fusejit's launches (which run on the legacy default stream).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Hashable
from typing import Any, NamedTuple

import numpy as np

from ..errors import ArgumentTypeError
from ..frontend.ops import SUPPORTED_DTYPES

_POINTER_DEVICE_ORDINAL = 9  # CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL (cuda.h)


class DeviceView(NamedTuple):
    """What fusejit needs of a device array (a NamedTuple: built on every call, cheaply)."""

    ptr: int  # address of element 0
    shape: tuple[int, ...]
    dtype: np.dtype
    strides: tuple[int, ...]  # bytes
    readonly: bool
    stream: int | None  # CAI v3: the stream the producer's work is on (None: nothing to wait)


def _interface(a: Any) -> dict[str, Any] | None:
    try:
        return a.__cuda_array_interface__  # type: ignore[no-any-return]
    except AttributeError:  # (PyTorch CPU tensors raise it)
        return None


def is_device_array(a: Any) -> bool:
    """True for a pycuda GPUArray or an object exporting `__cuda_array_interface__` (looked
    up on the type, so no interface dict is built; `describe` says when an instance does not
    export it after all, as a PyTorch CPU tensor)."""
    t = type(a)
    if t is np.ndarray or t in _SCALARS or isinstance(a, np.ndarray):
        return False
    return (hasattr(t, "__cuda_array_interface__")
            or "__cuda_array_interface__" in getattr(a, "__dict__", ())
            or (hasattr(a, "gpudata") and hasattr(a, "shape") and hasattr(a, "dtype")))


_SCALARS = frozenset({int, float, complex, bool, type(None)})


@functools.lru_cache(maxsize=256)
def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    out, step = [], itemsize
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


def describe(a: Any) -> DeviceView:
    """`a` as a DeviceView; TypeError for an unsupported dtype or a masked array, ValueError
    for strides that are not whole elements."""
    cai = _interface(a)
    if cai is not None:
        if cai.get("mask") is not None:
            raise ArgumentTypeError("masked device arrays (__cuda_array_interface__ 'mask') "
                                    "are not supported")
        shape = tuple(int(n) for n in cai["shape"])
        try:
            dtype = np.dtype(cai["typestr"])
        except TypeError as e:
            raise ArgumentTypeError(f"device array of typestr {cai['typestr']!r}: {e}") from None
        ptr, readonly = cai["data"]
        strides = cai.get("strides")
        stream = cai.get("stream")
    elif not hasattr(a, "gpudata"):
        raise ArgumentTypeError(f"a {type(a).__module__}.{type(a).__name__} that exports no "
                                "__cuda_array_interface__ (a CPU tensor?): pass a NumPy array "
                                "or a device array")
    else:  # an older pycuda GPUArray without the interface
        shape, dtype = tuple(a.shape), np.dtype(a.dtype)
        ptr, readonly, strides, stream = int(a.gpudata) if a.size else 0, False, a.strides, None
    if dtype not in SUPPORTED_DTYPES or dtype.byteorder == ">":
        raise ArgumentTypeError(f"device array of dtype {dtype} is not supported by fusejit "
                                "(bool, int8..int64, uint8..uint64, float16, float32, float64)")
    strides = _c_strides(shape, dtype.itemsize) if strides is None else tuple(
        int(s) for s in strides)
    if any(s % dtype.itemsize for s, n in zip(strides, shape) if n > 1) or (
            ptr % dtype.itemsize):
        raise ValueError(f"device array {dtype}{list(shape)} has byte strides {strides} (or an "
                         "address) that are not whole elements; pass a contiguous copy")
    return DeviceView(int(ptr or 0), shape, dtype, strides, bool(readonly),
                      None if stream is None else int(stream))


def arg_key(a: Any) -> Hashable:
    """A device array's part of the call signature: the same as a host array's when it is
    C-contiguous, so host and device arguments share one compiled function."""
    v = describe(a)
    want = _c_strides(v.shape, v.dtype.itemsize)
    if all(s == w for s, w, n in zip(v.strides, want, v.shape) if n > 1):
        return (v.dtype, v.shape)
    return (v.dtype, v.shape, tuple(s if n > 1 else 0 for s, n in zip(v.strides, v.shape)))


def stand_in(a: Any) -> np.ndarray:
    """A host array with `a`'s shape, dtype and strides to trace with (np.empty: its pages
    are never touched)."""
    v = describe(a)
    item = v.dtype.itemsize
    if 0 in v.shape:
        return np.empty(v.shape, v.dtype)
    strides = tuple(s if n > 1 else item for s, n in zip(v.strides, v.shape))
    lo = -sum(s * (n - 1) for s, n in zip(strides, v.shape) if s < 0)
    hi = sum(s * (n - 1) for s, n in zip(strides, v.shape) if s > 0)
    base = np.empty((lo + hi) // item + 1, v.dtype)
    return np.lib.stride_tricks.as_strided(base[lo // item:], v.shape, strides)


def check_mixed(inputs: list[Any]) -> bool:
    """Whether any input is a device array; TypeError when host arrays are mixed in."""
    device = [i for i, v in enumerate(inputs) if is_device_array(v)]
    if device:
        host = [i for i, v in enumerate(inputs) if isinstance(v, np.ndarray) and v.ndim]
        if host:
            raise ArgumentTypeError(
                f"graph inputs {host} are host NumPy arrays and inputs {device} device arrays: "
                "fusejit does not copy host arrays to the GPU implicitly when device arrays "
                "are passed (as CuPy); move them first (cupy.asarray, gpuarray.to_gpu) or pass "
                "all inputs as NumPy arrays")
    return bool(device)


@functools.lru_cache(maxsize=1)
def _libcuda() -> Any:
    name = ctypes.util.find_library("cuda") or "libcuda.so.1"
    lib = ctypes.CDLL(name)
    lib.cuPointerGetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]
    lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
    return lib


def pointer_device(ptr: int) -> int:
    """The ordinal of the GPU whose memory `ptr` points into (cuPointerGetAttribute);
    ValueError for an address that is not device memory."""
    ordinal = ctypes.c_int(-1)
    status = _libcuda().cuPointerGetAttribute(ctypes.byref(ordinal), _POINTER_DEVICE_ORDINAL,
                                              ptr)
    if status:
        raise ValueError(f"address {ptr:#x} of a device array is not CUDA device memory "
                         f"(cuPointerGetAttribute returned {status})")
    return ordinal.value


def sync_stream(stream: int) -> None:
    """Wait for a producer's stream (CAI v3 `stream`) before fusejit launches."""
    status = _libcuda().cuStreamSynchronize(stream)
    if status:
        raise RuntimeError(f"cuStreamSynchronize({stream:#x}) failed with CUDA error {status}")


def check_view(v: DeviceView, device: int, updated: bool, what: str) -> None:
    """Another GPU's array, or a read-only one the function updates: ValueError. A
    producer's stream is waited for."""
    if v.ptr:
        on = pointer_device(v.ptr)
        if on != device:
            raise ValueError(f"{what} is a device array on GPU {on}, but this function runs on "
                             f"GPU {device}; copy it there first")
    if updated and v.readonly:
        raise ValueError(f"{what} is a read-only device array, and the function updates it in "
                         "place")
    if v.stream not in (None, 1, 2):
        sync_stream(v.stream)
