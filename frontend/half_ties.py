"""The sign of a zero that float16 max/min reductions and scans return, as NumPy's half loops.

NumPy's float16 maximum/minimum/fmax/fmin loops are scalar and keep the accumulated operand on
a tie (`acc >= v ? acc : v`), so where +0.0 and -0.0 tie, a reduction or an accumulate keeps
the FIRST zero it met in index order. fusejit computes float16 in float32, whose kernels
(lane folds, selects) may keep either; the value is right, only the sign of a zero result can
differ. So a float16 max/min result that is zero takes the sign of the first zero of its
slice here:

    reduce:      first = argmax(x == 0) along the slice; the result is -0.0 where
                 signbit(x[first]) (read through a one-hot mask, as complex_order does)
    accumulate:  the first zero of each prefix is where x == 0 and cumsum(x == 0) == 1; its
                 sign spreads along the axis by logical_or.accumulate

A zero result implies every element before the first zero was strictly below (above) it or
NaN (fmax/fmin, which then take the zero), so the first zero is the one the scalar loop kept.
Float32/float64 loops are SIMD in NumPy, and their +-0 choice depends on the array's length
and alignment (not matched anywhere; see the README's notes on NaN and signed zeros).
"""

from __future__ import annotations

import math

import numpy as np

from . import tracer as T

HALF = np.dtype(np.float16)


def _zero_sign(result: T.Tracer, negative: T.Tracer) -> T.Tracer:
    """`result` with each zero given the sign `negative` says (float16)."""
    zeros = np.where(negative, np.float16(-0.0), np.float16(0.0))
    out = np.where(np.equal(result, 0), zeros, result)
    return T.Tracer(T.cast_node(out.node, HALF), scalar=result.scalar)


def reduce_sign(t: T.Tracer, result: T.Tracer, axes: tuple[int, ...],
                keepdims: bool) -> T.Tracer:
    """The float16 max/min `result` of `t` over `axes` with a zero's sign from the first zero
    of its slice (C order over several axes)."""
    if math.prod(t.shape[d] for d in axes) == 0:
        return result
    kept = [d for d in range(t.ndim) if d not in axes]
    if len(axes) == 1:
        rows, ax = t, axes[0]
    else:
        k = math.prod(t.shape[d] for d in axes)
        rows = np.reshape(np.transpose(t, kept + list(axes)), [t.shape[d] for d in kept] + [k])
        ax = rows.ndim - 1
    n = rows.shape[ax]
    first = np.argmax(np.equal(rows, 0), axis=ax, keepdims=True)
    iota = np.arange(n).reshape([n if d == ax else 1 for d in range(rows.ndim)])
    negative = np.any(np.equal(iota, first) & np.signbit(rows), axis=ax)
    negative = np.reshape(negative, result.shape)
    return _zero_sign(result, negative)


def scan_sign(x: T.Tracer, result: T.Tracer, axis: int) -> T.Tracer:
    """The float16 maximum/minimum/fmax/fmin.accumulate `result` of `x` along `axis` with each
    zero's sign from the first zero of its prefix."""
    zero = np.equal(x, 0)
    first = zero & np.equal(np.cumsum(zero, axis=axis), 1)
    negative = np.logical_or.accumulate(first & np.signbit(x), axis=axis)
    return _zero_sign(result, negative)
