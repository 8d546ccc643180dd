"""np.packbits and np.unpackbits of traced arrays, written from traced operations: packing is a
sum of the 0/1 bits (nonzero elements) times their place values 128, 64, ... 1 (or 1 ... 128
for bitorder='little') over groups of eight along the axis, the last group padded with
zeros; unpacking shifts each byte right by 7 ... 0 (or 0 ... 7) and keeps the low bit, then
cuts or zero-pads the axis to `count`. Results are uint8 with NumPy's shapes; NumPy's
TypeErrors (a float input; unpackbits of anything but uint8) and ValueErrors (a bad bitorder,
a negative count beyond the bits) are raised at trace time.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import tracer as T
from .numpy_lib import asarray

U8 = np.dtype(np.uint8)


def _order(bitorder: Any) -> bool:
    """True for 'little', False for 'big' (NumPy compares the first letter, any case)."""
    if not isinstance(bitorder, str) or bitorder[:1].lower() not in ("l", "b"):
        raise ValueError("'order' must be either 'little' or 'big'")
    return bitorder[:1].lower() == "l"


def _along_last(a: T.Tracer, axis: Any) -> tuple[T.Tracer, int | None]:
    """`a` with `axis` moved last (None: flattened), and that axis normalised."""
    if axis is None:
        return np.reshape(a, (-1,)), None
    axis = normalize_axis_index(operator.index(axis), a.ndim)
    return np.moveaxis(a, axis, -1), axis


def _back(out: T.Tracer, axis: int | None) -> T.Tracer:
    return out if axis is None else np.moveaxis(out, -1, axis)


def packbits(a: Any, axis: Any = None, bitorder: str = "big") -> T.Tracer:
    t = asarray(a)
    if not isinstance(t, T.Tracer):
        t = T.Tracer(T.to_node(np.asarray(t), np.asarray(t).dtype))
    if t.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    little = _order(bitorder)
    if t.ndim == 0:
        axis = None
    t, axis = _along_last(t, axis)
    n = t.shape[-1]
    groups = -(-n // 8)
    bits = np.not_equal(t, 0).astype(U8)
    if groups * 8 != n:
        pad = [(0, 0)] * (bits.ndim - 1) + [(0, groups * 8 - n)]
        bits = np.pad(bits, pad)
    bits = np.reshape(bits, bits.shape[:-1] + (groups, 8))
    places = (1 << np.arange(8)) if little else (1 << np.arange(7, -1, -1))
    packed = np.sum(np.multiply(bits, places.astype(U8)), axis=-1, dtype=U8)
    return _back(packed, axis)


def unpackbits(a: Any, axis: Any = None, count: Any = None, bitorder: str = "big") -> T.Tracer:
    t = asarray(a)
    if not isinstance(t, T.Tracer):
        t = T.Tracer(T.to_node(np.asarray(t), np.asarray(t).dtype))
    if t.dtype != U8:
        raise TypeError("Expected an input array of unsigned byte data type")
    little = _order(bitorder)
    if t.ndim == 0:
        axis = None
    t, axis = _along_last(t, axis)
    nbits = t.shape[-1] * 8
    shifts = (np.arange(8) if little else np.arange(7, -1, -1)).astype(U8)
    bits = np.bitwise_and(np.right_shift(t[..., None], shifts), U8.type(1))
    bits = np.reshape(bits, t.shape[:-1] + (nbits,))
    if count is not None:
        count = operator.index(count)
        if count < 0:
            if -count > nbits:
                raise ValueError("-count larger than number of elements")
            count += nbits
        if count <= nbits:
            bits = bits[..., :count]
        else:
            bits = np.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, count - nbits)])
    return _back(bits, axis)


HANDLERS = {np.packbits: packbits, np.unpackbits: unpackbits}
