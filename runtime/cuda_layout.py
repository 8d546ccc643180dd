"""Where a compiled CUDA function's buffers live in its one device arena (`device_layout`),
the bytes of a host array as one of those buffers expects them (`host_bytes`), and how a
kernel's parameters are laid out in its launch's parameter buffer (`arg_format`,
`value_param`: the `fj_val<T>` of a 0-d input taken by value)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import RuntimeFailure
from ..lowering.loop_ir import Buffer, Program

SMALL_INPUT = 1 << 16  # host inputs up to this size are packed into one transfer
_ALIGN = 256


@dataclass(frozen=True)
class DeviceLayout:
    """Byte offsets in the device arena: temps (at their Program offsets), the reductions'
    scratch, constants, large inputs, small inputs (one host->device transfer), then the
    error word and the outputs (one device->host transfer)."""

    total: int
    slots: dict[int, int]  # buffer index -> offset of its slot
    shift: dict[int, int]  # buffer index -> bytes from slot start to element 0 (neg. strides)
    small: tuple[int, int]  # [lo, hi) of the packed small inputs
    out: tuple[int, int]  # [lo, hi) of the error word and the outputs
    err: int
    scratch: int = 0  # offset of the scratch area (CudaModule.scratch_bytes)
    scalars: int = 0  # bytes at the start of the packed area holding every 0-d input


def span(b: Buffer) -> tuple[int, int]:
    """(bytes spanned by a buffer's elements, bytes from the lowest address to element 0)."""
    if 0 in b.shape:
        return 0, 0
    ext = [s * (n - 1) for s, n in zip(b.strides, b.shape)]
    lo = -sum(e for e in ext if e < 0)
    return (sum(abs(e) for e in ext) + 1) * b.dtype.itemsize, lo * b.dtype.itemsize


def _up(n: int, a: int = _ALIGN) -> int:
    return (n + a - 1) // a * a


def device_layout(program: Program, scratch_bytes: int = 0,
                  values: frozenset[int] = frozenset()) -> DeviceLayout:
    """Where every buffer of `program` (and `scratch_bytes` of scratch) lives in its device
    arena; the inputs in `values` (passed to the kernels by value) have no place there."""
    slots: dict[int, int] = {b.index: b.offset for b in program.by_kind("temp")}
    shift: dict[int, int] = {}
    scratch = _up(program.arena_bytes)
    top = _up(scratch + scratch_bytes)

    def place(b: Buffer, align: int) -> None:
        nonlocal top
        nbytes, lo = span(b)
        top = _up(top, align)
        slots[b.index], shift[b.index] = top, lo
        top += nbytes

    for b in program.by_kind("const"):
        place(b, _ALIGN)
    inputs = [b for b in program.by_kind("input") if b.index not in values]
    for b in inputs:
        if span(b)[0] > SMALL_INPUT:
            place(b, _ALIGN)
    top = small_lo = _up(top)
    scalars_hi = small_lo
    # 0-d inputs first: a call with device arrays sends only them (`scalars` bytes)
    small = [b for b in inputs if span(b)[0] <= SMALL_INPUT]
    for b in sorted(small, key=lambda b: len(b.shape) > 0):
        place(b, 16)
        if not b.shape:
            scalars_hi = top
    small_hi = top
    err = _up(top)
    top = err + 16
    for b in program.by_kind("output"):
        place(b, _ALIGN)
    return DeviceLayout(max(top, 1), slots, shift, (small_lo, small_hi), (err, top), err,
                        scratch, scalars_hi - small_lo)


def value_param(dtype: np.dtype) -> tuple[int, int, int]:
    """(offset of the value, size, alignment) of the kernel parameter `fj_val<T>` holding a
    value of `dtype` (program.cu.j2: the device address `p` first, then the value `v`; every
    type the kernels hold is aligned to its size, complex128's fj_c128 to 16 bytes)."""
    size = np.dtype(dtype).itemsize
    at, align = _up(8, size), max(8, size)
    return at, _up(at + size, align), align


def arg_format(params: list[np.dtype | None]) -> str:
    """The struct format (native alignment, as pycuda's prepare takes it) of a launch's
    parameters, each a pointer (None: "P", an int) or the fj_val of a value of a dtype (its
    bytes, a `bytes` of value_param's size at its alignment, as the CUDA ABI places it)."""
    fmt, at = [], 0
    for dt in params:
        if dt is None:
            fmt.append("P")
            at = _up(at, 8) + 8
            continue
        _, size, align = value_param(dt)
        pad = _up(at, align) - at
        fmt.append(f"{pad}x{size}s" if pad else f"{size}s")
        at += pad + size
    return "".join(fmt)


def host_bytes(a: np.ndarray, b: Buffer) -> np.ndarray:
    """The bytes of host array `a` as laid out for buffer `b` (a 1-D uint8 view, no copy when
    possible); `a`'s strides must be the ones the program was compiled for."""
    if a.shape != b.shape or a.dtype != b.dtype:
        raise RuntimeFailure(f"argument for {b.name} is {a.dtype}{list(a.shape)}, the compiled "
                             f"function expects {b.dtype}{list(b.shape)}")
    nbytes, _ = span(b)
    if nbytes == 0:
        return np.empty(0, np.uint8)
    want = [s * a.itemsize for s, n in zip(b.strides, b.shape) if n > 1]
    if [s for s, n in zip(a.strides, a.shape) if n > 1] != want:
        raise RuntimeFailure(f"argument for {b.name} has strides {a.strides}, the compiled "
                             f"function expects element strides {b.strides}")
    flip = tuple(slice(None, None, -1) if s < 0 else slice(None) for s in a.strides)
    low = a[flip] if flip else a  # data pointer at the lowest address
    flat = np.lib.stride_tricks.as_strided(low, (nbytes // a.itemsize,), (a.itemsize,))
    return flat.view(np.uint8)
