"""np.meshgrid, np.cross and np.interp at trace time, written with the traced NumPy operations
NumPy's own implementations use (views, broadcasts, elementwise arithmetic, gathers), so
values, dtypes, shapes and errors follow NumPy's. Also routes np.real / np.imag
(frontend/realparts.py).

np.interp finds each x's interval by counting the sample points at or below it (a fused
comparison and sum over xp, then gathers of xp and fp), which is the index NumPy's binary
search finds when xp is strictly increasing, as NumPy requires (it does not check); the
interpolation formula and its NaN fallbacks are NumPy's. `period` needs xp and fp known at
trace time (NumPy sorts them).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T


def _t(x: Any, dtype: Any = None) -> T.Tracer:
    t = T.as_tracer(x)
    return t if dtype is None or t.dtype == dtype else t.astype(dtype)


def _probe(shape: tuple[int, ...]) -> np.ndarray:
    return np.empty(shape, dtype=[])  # itemsize 0: NumPy's shape checks, no memory


# what the running NumPy returns for np.meshgrid(..., sparse=True, copy=False)
_SPARSE_VIEWS = type(np.meshgrid(np.zeros(1), sparse=True, copy=False))


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
             ) -> tuple | list:
    """np.meshgrid: coordinate arrays, as views of the inputs (values are copies anyway)."""
    ndim = len(xi)
    if indexing not in ["xy", "ij"]:
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    s0 = (1,) * ndim
    out = [np.reshape(_t(x), s0[:i] + (-1,) + s0[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:
        out[0] = np.reshape(out[0], (1, -1) + s0[2:])
        out[1] = np.reshape(out[1], (-1, 1) + s0[2:])
    if not sparse:
        shape = np.broadcast_shapes(*(o.shape for o in out))
        out = [np.broadcast_to(o, shape) for o in out]
    # NumPy 2.4: a list of views when sparse without copying, else a tuple (2.5: a tuple)
    return out if sparse and not copy and _SPARSE_VIEWS is list else tuple(out)


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> T.Tracer:
    """np.cross over 2- or 3-vectors along the given axes."""
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    ta, tb = _t(a), _t(b)
    if ta.ndim < 1 or tb.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    axisa = np.lib.array_utils.normalize_axis_index(axisa, ta.ndim, msg_prefix="axisa")
    axisb = np.lib.array_utils.normalize_axis_index(axisb, tb.ndim, msg_prefix="axisb")
    ta, tb = np.moveaxis(ta, axisa, -1), np.moveaxis(tb, axisb, -1)
    na, nb = ta.shape[-1], tb.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if na == 2 or nb == 2:  # the running NumPy's rule: a DeprecationWarning (2.0) or an error
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np.cross(np.zeros(na), np.zeros(nb))
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=3)
    shape = np.broadcast(_probe(ta.shape[:-1]), _probe(tb.shape[:-1])).shape
    if na == 3 or nb == 3:
        axisc = np.lib.array_utils.normalize_axis_index(axisc, len(shape) + 1,
                                                        msg_prefix="axisc")
    dtype = np.promote_types(ta.dtype, tb.dtype)
    ta, tb = _t(ta, dtype), _t(tb, dtype)
    a0, a1, b0, b1 = ta[..., 0], ta[..., 1], tb[..., 0], tb[..., 1]
    cp2 = np.subtract(np.multiply(a0, b1), a1 * b0)
    if na == 2 and nb == 2:
        cp2 = np.broadcast_to(cp2, shape) if cp2.shape != shape else cp2
        return T.Tracer(cp2.node)  # NumPy's `cp` array, 0-d included
    if na == 2:
        b2 = tb[..., 2]
        cp0, cp1 = a1 * b2, np.negative(a0 * b2)
    elif nb == 2:
        a2 = ta[..., 2]
        cp0, cp1 = np.negative(a2 * b1), a2 * b0
    else:
        a2, b2 = ta[..., 2], tb[..., 2]
        cp0, cp1 = np.subtract(a1 * b2, a2 * b1), np.subtract(a2 * b0, a0 * b2)
    cp = np.stack([np.broadcast_to(c, shape) for c in (cp0, cp1, cp2)], axis=-1)
    return np.moveaxis(cp, -1, axisc)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> T.Tracer:
    """np.interp: float64 results, NumPy's left/right/period rules; complex fp (complex128
    results) interpolates its real and imaginary parts apart, as NumPy's loop does."""
    kind = (fp.dtype if isinstance(fp, T.Tracer) else np.asarray(fp).dtype).kind
    if kind == "c" and (xp.dtype if isinstance(xp, T.Tracer) else np.asarray(xp).dtype).kind \
            != "c":
        tf = fp if isinstance(fp, T.Tracer) else np.asarray(fp)
        ends = [(None, None) if v is None else (np.real(v), np.imag(v)) for v in (left, right)]
        re = interp(x, xp, np.real(tf), ends[0][0], ends[1][0], period)
        im = interp(x, xp, np.imag(tf), ends[0][1], ends[1][1], period)
        return np.asarray(re + 1j * im, np.complex128)
    for name, v in (("xp", xp), ("fp", fp)):
        if (v.dtype if isinstance(v, T.Tracer) else np.asarray(v).dtype).kind == "c":
            raise UnsupportedError(f"np.interp with complex {name} is not supported by "
                                   f"fusejit{T.where_msg()}")
    tx = _t(x, np.float64)
    if period is not None:
        if isinstance(xp, T.Tracer) or isinstance(fp, T.Tracer) or isinstance(period,
                                                                             T.Tracer):
            raise UnsupportedError(f"np.interp(period=) needs xp, fp and period known at "
                                   f"trace time (NumPy sorts xp){T.where_msg()}")
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        xp, fp = np.asarray(xp, np.float64), np.asarray(fp, np.float64)
        if xp.ndim != 1 or fp.ndim != 1:
            raise ValueError("Data points must be 1-D sequences")
        if xp.shape[0] != fp.shape[0]:
            raise ValueError("fp and xp are not of the same length")
        tx = np.remainder(tx, period)
        xp = xp % period
        order = np.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = np.concatenate((xp[-1:] - period, xp, xp[0:1] + period))
        fp = np.concatenate((fp[-1:], fp, fp[0:1]))
    txp, tfp = _t(xp, np.float64), _t(fp, np.float64)
    np.interp(np.zeros(1), np.zeros(txp.shape), np.zeros(tfp.shape))  # NumPy's errors
    n = txp.shape[0]
    lval = tfp[0] if left is None else _t(left, np.float64)
    rval = tfp[n - 1] if right is None else _t(right, np.float64)
    if n == 1:
        res = np.where(tx < txp[0], lval, np.where(tx > txp[0], rval, tfp[0]))
    else:
        count = np.sum(txp <= tx[..., None], axis=-1)
        j = np.clip(count - 1, 0, n - 2)
        x0, x1 = np.take(txp, j), np.take(txp, j + 1)
        y0, y1 = np.take(tfp, j), np.take(tfp, j + 1)
        slope = (y1 - y0) / (x1 - x0)
        res = slope * (tx - x0) + y0
        res = np.where(np.isnan(res), slope * (tx - x1) + y1, res)
        res = np.where(np.isnan(res) & (y0 == y1), y0, res)
        res = np.where(tx == x0, y0, res)
        res = np.where(count == 0, lval, res)
        res = np.where(count == n, np.where(tx > txp[n - 1], rval, tfp[n - 1]), res)
        res = np.where(np.isnan(tx), tx, res)  # (one sample point: NaN gets fp[0])
    return T.Tracer(res.node, scalar=res.ndim == 0)


HANDLERS = {np.meshgrid: meshgrid, np.cross: cross, np.interp: interp}
