"""np.max / np.min / np.argmax / np.argmin of complex values, composed from real reductions.

NumPy orders complex numbers lexicographically (real part, then imaginary part) and lets a
NaN in either part win: max / min return the first element (in index order) that has a NaN
part, else the first lexicographic extreme (the first of exact ties, which can differ in the
signs of zeros); argmax / argmin return its position (NumPy's CFLOAT_argmax: the first NaN,
else the first strict extreme). Each `reduce` node here is a real one, so every backend and
every reduce path runs it unchanged:

    nan  = isnan(re) | isnan(im)
    rx   = max of re over the non-NaN elements        (min for min / argmin)
    cand = ~nan & (re == rx);   ix = max of im over cand
    sel  = nan where the row has a NaN, else cand & (im == ix)
    pos  = argmax(sel)  (the first selected element)
    max  = each part's max over the one-hot mask iota == pos (-inf elsewhere)

Several reduced axes are moved last and merged into one (C order), so `pos` is the position
NumPy's argmax returns and the element at `pos` is the first selected one in index order.
(NumPy's max over several axes of an array that is not C-contiguous walks memory order, so
there, with two different NaN elements or +0/-0 ties, it can return a different one of them.)
"""

from __future__ import annotations

import math

import numpy as np

from . import tracer as T

ORDERING = ("max", "min", "argmax", "argmin")


def lexicographic(t: T.Tracer, fn: str, axes: tuple[int, ...], keepdims: bool,
                  out_dtype: np.dtype) -> T.Tracer:
    """`fn` (max, min, argmax, argmin) of complex tracer `t` over `axes`, as NumPy."""
    kept = [d for d in range(t.ndim) if d not in axes]
    k = math.prod(t.shape[d] for d in axes)
    shape = [1 if d in axes else n for d, n in enumerate(t.shape) if keepdims or d not in axes]
    if k == 0:  # max/min of nothing with initial= (NumPy raises otherwise): the identity
        inf = -np.inf if fn == "max" else np.inf
        return T.Tracer(T.const_node(np.full(shape, complex(inf, inf), out_dtype)),
                        scalar=not shape)
    if len(axes) == 1:  # in place: no transpose or reshape (a Dask axis may stay chunked)
        rows, ax = t, axes[0]
    else:
        rows = np.reshape(np.transpose(t, kept + list(axes)),
                          [t.shape[d] for d in kept] + [k])
        ax = rows.ndim - 1
    part = np.dtype(np.float32 if t.dtype == np.complex64 else np.float64)
    re, im = np.real(rows), np.imag(rows)
    nan = np.isnan(re) | np.isnan(im)
    big = fn in ("max", "argmax")
    ext, fill = (np.max, -np.inf) if big else (np.min, np.inf)
    far = np.asarray(fill, part)
    rx = ext(np.where(nan, far, re), axis=ax, keepdims=True)
    cand = ~nan & (re == rx)
    ix = ext(np.where(cand, im, far), axis=ax, keepdims=True)
    sel = np.where(np.any(nan, axis=ax, keepdims=True), nan, cand & (im == ix))
    pos = np.argmax(sel, axis=ax, keepdims=True)
    if fn in ("argmax", "argmin"):
        out = T.Tracer(T.cast_node(pos.node, out_dtype))
    else:  # the parts at `pos`: each the max over a one-hot mask (-inf elsewhere), exactly
        n = rows.shape[ax]
        iota = np.arange(n).reshape([n if d == ax else 1 for d in range(rows.ndim)])
        at = np.equal(pos, iota)
        neg = np.asarray(-np.inf, part)
        val = [np.max(np.where(at, p, neg), axis=ax, keepdims=True) for p in (re, im)]
        out = T.Tracer(T.make_node("complex_pack", [v.node for v in val], val[0].shape,
                                   out_dtype))
    res = np.reshape(out, shape)
    return T.Tracer(res.node, scalar=not shape)
