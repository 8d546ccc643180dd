"""Device arrays fusejit reads in place: pycuda GPUArrays and any object with
`__cuda_array_interface__` (CuPy arrays, PyTorch CUDA tensors, numba device arrays).

This module owns what a device array is to fusejit (`read` -> DeviceArg: pointer, a Layout of
dtype, shape and byte strides checked once per distinct layout, read-only flag, stream, the
GPU its type states), its part of the call signature (read once per call: the executable
takes the reading the signature left), the host stand-in it is traced through (same strides,
no memory touched), and the rules a call with device arrays follows, each with the exception
a NumPy/CuPy user expects:

- an unsupported dtype (or byte strides that are not whole elements): TypeError / ValueError;
- a device array on another GPU than the one fusejit runs on: ValueError, as CuPy's. The GPU
  is the one PyTorch tensors and CuPy arrays state, and a pycuda allocation's on a machine
  with one GPU; other exporters' pointers are asked of the driver (cuPointerGetAttribute,
  which also refuses an address that is not device memory);
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
import sys
import threading
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple, NoReturn

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


class Layout(NamedTuple):
    """A device array's dtype, shape and byte strides, checked once and shared by every
    array of that (typestr, shape, strides) (`_layout`): calls compare it by identity."""

    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # bytes (C-contiguous ones filled in when the array gave None)
    key: Hashable  # the array's part of the call signature (arg_key)


# DeviceArg.device: a pycuda allocation, on the GPU of the context it was made in (the
# executable's when the machine has one GPU; the driver is asked otherwise).
ON_CONTEXT = -2


class DeviceArg(NamedTuple):
    """One call's reading of a device array: its address, layout, read-only flag, producer
    stream, and the GPU its own type says it lives on (None: ask the driver)."""

    ptr: int
    layout: Layout
    readonly: bool
    stream: int | None
    device: int | None


_SCALARS = frozenset({int, float, complex, bool, type(None)})
# type -> whether the type itself exports the interface or is GPUArray-like (instances may
# still carry an interface of their own in __dict__)
_DEVICE_TYPES: dict[type, bool] = {}


def is_device_array(a: Any) -> bool:
    """True for a pycuda GPUArray or an object exporting `__cuda_array_interface__` (looked
    up on the type, so no interface dict is built; `describe` says when an instance does not
    export it after all, as a PyTorch CPU tensor)."""
    t = type(a)
    if t is np.ndarray or t in _SCALARS:
        return False
    known = _DEVICE_TYPES.get(t)
    if known is None:
        known = _DEVICE_TYPES[t] = not issubclass(t, np.ndarray) and (
            hasattr(t, "__cuda_array_interface__")
            or (hasattr(t, "gpudata") and hasattr(t, "shape") and hasattr(t, "dtype")))
    return known or (not isinstance(a, np.ndarray) and (
        "__cuda_array_interface__" in getattr(a, "__dict__", ())
        or (hasattr(a, "gpudata") and hasattr(a, "shape") and hasattr(a, "dtype"))))


def type_keyer(t: type) -> Callable[[Any], Hashable] | None:
    """`arg_key` when every instance of `t` is a device array by its type (the type exports
    the interface or is GPUArray-like; `is_device_array` has seen one), else None."""
    return arg_key if _DEVICE_TYPES.get(t) else None


@functools.lru_cache(maxsize=256)
def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    out, step = [], itemsize
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


_LAYOUTS: dict[tuple[Any, ...], Layout] = {}
_MAX_LAYOUTS = 4096


def _new_layout(typestr: Any, shape: tuple[int, ...], given: Any) -> Layout:
    """Check and build the Layout of (typestr, shape, strides as the array gave them)."""
    try:
        dtype = np.dtype(typestr)
    except TypeError as e:
        raise ArgumentTypeError(f"device array of typestr {typestr!r}: {e}") from None
    if dtype not in SUPPORTED_DTYPES or dtype.byteorder == ">":
        raise ArgumentTypeError(f"device array of dtype {dtype} is not supported by fusejit "
                                "(bool, int8..int64, uint8..uint64, float16, float32, float64)")
    want = _c_strides(shape, dtype.itemsize)
    strides = want if given is None else tuple(int(s) for s in given)
    if any(s % dtype.itemsize for s, n in zip(strides, shape) if n > 1):
        raise ValueError(f"device array {dtype}{list(shape)} has byte strides {strides} (or an "
                         "address) that are not whole elements; pass a contiguous copy")
    if all(s == w for s, w, n in zip(strides, want, shape) if n > 1):
        key: Hashable = (dtype, shape)
    else:
        key = (dtype, shape, tuple(s if n > 1 else 0 for s, n in zip(strides, shape)))
    return Layout(dtype, shape, strides, key)


def _layout(typestr: Any, shape: Any, strides: Any) -> Layout:
    """The shared Layout of an array described by these interface fields."""
    if type(shape) is not tuple:
        shape = tuple(int(n) for n in shape)
    if strides is not None and type(strides) is not tuple:
        strides = tuple(strides)
    probe = (typestr, shape, strides)
    try:
        lay = _LAYOUTS.get(probe)
    except TypeError:  # an unhashable field (not one of the interface's plain types)
        lay, probe = None, None
    if lay is None:
        lay = _new_layout(typestr, tuple(int(n) for n in shape), strides)
        if probe is not None:
            if len(_LAYOUTS) >= _MAX_LAYOUTS:
                _LAYOUTS.clear()
            _LAYOUTS[probe] = lay
    return lay


_ASK, _TORCH, _CUPY, _PYCUDA, _GPUARRAY = range(5)
_OWNER: dict[type, int] = {}  # type -> which of the above says where its arrays live


def _owner(t: type, a: Any) -> int:
    """_GPUARRAY: pycuda's own GPUArray class (read from its attributes: its interface
    property builds them into a dict, ~1 µs a call); the others say where arrays live."""
    mod = t.__module__.partition(".")[0]
    if mod == "torch":
        return _TORCH
    if mod == "cupy":
        return _CUPY
    gpuarray = sys.modules.get("pycuda.gpuarray")
    if gpuarray is not None and t is getattr(gpuarray, "GPUArray", None):
        return _GPUARRAY
    return _PYCUDA if mod == "pycuda" or hasattr(a, "gpudata") else _ASK


def _own_device(a: Any, owner: int) -> int | None:
    """The GPU a device array's own type says it is on, where that type guarantees device
    memory: PyTorch CUDA tensors, CuPy arrays, pycuda allocations (ON_CONTEXT). None for
    other exporters: the driver is asked (cuPointerGetAttribute)."""
    try:
        if owner == _PYCUDA or owner == _GPUARRAY:
            data = a.gpudata
            return None if isinstance(data, int) else ON_CONTEXT  # an int: a user pointer
        if owner == _TORCH:
            return int(a.get_device())
        if owner == _CUPY:
            return int(a.data.device_id)
    except (AttributeError, TypeError, ValueError):
        pass
    return None


_tuple_new = tuple.__new__  # (a NamedTuple's own __new__ is slower, and reads run per call)


def _not_whole(lay: Layout) -> NoReturn:
    raise ValueError(f"device array {lay.dtype}{list(lay.shape)} has byte strides "
                     f"{lay.strides} (or an address) that are not whole elements; pass a "
                     "contiguous copy")


def read(a: Any) -> DeviceArg:
    """`a` as a DeviceArg; TypeError for an unsupported dtype, a masked array or an object
    that exports no interface after all, ValueError for strides that are not whole
    elements."""
    t = type(a)
    owner = _OWNER.get(t)
    if owner is None:
        owner = _OWNER[t] = _owner(t, a)
    if owner == _GPUARRAY:  # the fields pycuda's __cuda_array_interface__ gives
        data = a.gpudata
        probe = (a.dtype, a.shape, a.strides)
        try:
            lay = _LAYOUTS[probe]
        except (KeyError, TypeError):
            lay = _layout(probe[0].str, probe[1], probe[2])
            if len(_LAYOUTS) < _MAX_LAYOUTS:
                _LAYOUTS[probe] = lay
        ptr = 0 if data is None else int(data)
        if ptr % lay.dtype.itemsize:
            _not_whole(lay)
        return _tuple_new(DeviceArg, (ptr, lay, False, None,
                                      None if isinstance(data, int) else ON_CONTEXT))
    else:
        try:
            cai = a.__cuda_array_interface__
        except AttributeError:  # (PyTorch CPU tensors raise it)
            cai = None
        if cai is not None:
            get = cai.get
            if get("mask") is not None:
                raise ArgumentTypeError("masked device arrays (__cuda_array_interface__ "
                                        "'mask') are not supported")
            strides = get("strides")
            try:
                lay = _LAYOUTS[(cai["typestr"], cai["shape"], strides)]
            except (KeyError, TypeError):
                lay = _layout(cai["typestr"], cai["shape"], strides)
            ptr, readonly = cai["data"]
            stream = get("stream")
        elif not hasattr(a, "gpudata"):
            raise ArgumentTypeError(f"a {t.__module__}.{t.__name__} that exports no "
                                    "__cuda_array_interface__ (a CPU tensor?): pass a NumPy "
                                    "array or a device array")
        else:  # an older pycuda GPUArray without the interface
            lay = _layout(np.dtype(a.dtype).str, tuple(a.shape), tuple(a.strides))
            ptr, readonly, stream = int(a.gpudata) if a.size else 0, False, None
        if type(ptr) is not int:
            ptr = int(ptr or 0)
    if ptr % lay.dtype.itemsize:
        _not_whole(lay)
    return _tuple_new(DeviceArg, (ptr, lay, readonly is True or bool(readonly),
                                  stream if stream is None else int(stream),
                                  None if owner == _ASK else _own_device(a, owner)))


def describe(a: Any) -> DeviceView:
    """`a` as a DeviceView (errors as `read`)."""
    d = read(a)
    lay = d.layout
    return DeviceView(d.ptr, lay.shape, lay.dtype, lay.strides, d.readonly, d.stream)


# One call reads each device argument once: `arg_key` (the signature, computed by jit.py
# before anything runs) leaves its reading here, and the executable's run uses it
# (`readings`), then `release`s them all. Every call path computes the signature of all its
# arguments before it runs, so an entry is never older than the call that uses it.
class _Readings(threading.local):
    """Each thread's readings: id(array) -> (array, its DeviceArg)."""

    def __init__(self) -> None:
        self.last: dict[int, tuple[Any, DeviceArg]] = {}


_memo = _Readings()


def arg_key(a: Any) -> Hashable:
    """A device array's part of the call signature: the same as a host array's when it is
    C-contiguous, so host and device arguments share one compiled function."""
    d = read(a)
    _memo.last[id(a)] = (a, d)
    return d.layout.key


def readings() -> dict[int, tuple[Any, DeviceArg]]:
    """This thread's readings left by arg_key: id(array) -> (array, its DeviceArg); a
    reading is this call's only when its array `is` the argument."""
    return _memo.last


def release() -> None:
    """Forget this thread's readings (after a call: they hold the caller's arrays)."""
    last = _memo.last
    if last:
        last.clear()


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


def device_flags(inputs: list[Any]) -> list[bool] | None:
    """Which inputs are device arrays (None when none is); TypeError when host arrays are
    mixed in."""
    flags = None
    host = None
    for i, v in enumerate(inputs):
        t = type(v)
        if t is np.ndarray:
            if v.ndim:
                host = [i] if host is None else host + [i]
            continue
        if t in _SCALARS or not (_DEVICE_TYPES.get(t) or is_device_array(v)):
            if isinstance(v, np.ndarray) and v.ndim:
                host = [i] if host is None else host + [i]
            continue
        if flags is None:
            flags = [False] * len(inputs)
        flags[i] = True
    if flags is not None and host is not None:
        device = [i for i, f in enumerate(flags) if f]
        raise ArgumentTypeError(
            f"graph inputs {host} are host NumPy arrays and inputs {device} device arrays: "
            "fusejit does not copy host arrays to the GPU implicitly when device arrays "
            "are passed (as CuPy); move them first (cupy.asarray, gpuarray.to_gpu) or pass "
            "all inputs as NumPy arrays")
    return flags


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


def check_arg(d: DeviceArg, device: int, one_gpu: bool, updated: bool, arg: Any) -> None:
    """Another GPU's array, or a read-only one the function updates: ValueError. The GPU is
    the one the array's type states (DeviceArg.device; a pycuda allocation's is `device`
    when the machine has `one_gpu`), else the driver's answer for its address. A producer's
    stream is waited for. `arg`: the input buffer it is passed as (its name, for errors)."""
    if d.ptr:
        on = d.device
        if on is None or (on == ON_CONTEXT and not one_gpu):
            on = pointer_device(d.ptr)
        elif on == ON_CONTEXT:
            on = device
        if on != device:
            raise ValueError(f"argument {arg.name} is a device array on GPU {on}, but this "
                             f"function runs on GPU {device}; copy it there first")
    if updated and d.readonly:
        raise ValueError(f"argument {arg.name} is a read-only device array, and the function "
                         "updates it in place")
    if d.stream is not None and d.stream not in (1, 2):
        sync_stream(d.stream)
