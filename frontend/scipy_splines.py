"""The arithmetic of scipy.ndimage's spline interpolation, on traced or concrete arrays
(frontend/scipy_ndinterp.py calls it): the B-spline prefilter along an axis, SciPy's mapping
of coordinates and taps by the boundary mode, its interpolation weights, the sum over the taps
and the store into the output's dtype. What each does, and how closely it follows SciPy, is
in frontend/scipy_ndinterp.py's docstring.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .scipy_filter import lfilter

# SciPy's mode names -> its NI_ExtendMode codes
NEAREST, WRAP, REFLECT, MIRROR, CONSTANT, GRID_WRAP, GRID_CONSTANT = range(7)
MODES = {"nearest": NEAREST, "wrap": WRAP, "reflect": REFLECT, "grid-mirror": REFLECT,
         "mirror": MIRROR, "constant": CONSTANT, "grid-wrap": GRID_WRAP,
         "grid-constant": GRID_CONSTANT}
# the poles of each order's B-spline prefilter (the roots of its symmetric polynomial)
POLES = {2: (-0.171572875253809902396622551580603843,),  # sqrt(8) - 3
         3: (-0.267949192431122706472553658494127633,),  # sqrt(3) - 2
         4: (-0.361341225900220177092212841325675255, -0.013725429297339121360331226939128204),
         5: (-0.430575347099973791851434783493520110, -0.043096288203264653822712376822550182)}
NPAD = 12  # SciPy's padding before prefiltering for 'nearest' and 'grid-constant'
_BIG = float(2 ** 53)  # coordinates are clipped here before their floor becomes an index


def mode_code(mode: Any) -> int:
    if mode not in MODES:
        raise RuntimeError("boundary mode not supported")  # (SciPy's own check said so)
    return MODES[mode]


def _filter_init(mode: int) -> str:
    """The boundary condition SciPy's prefilter starts each pass from, for a mode."""
    if mode == GRID_WRAP:
        return "wrap"
    return "reflect" if mode in (NEAREST, REFLECT) else "mirror"


def _powers(z: float, n: int) -> np.ndarray:
    """z**0 .. z**(n-1) (SciPy multiplies a running z_i: the same to rounding)."""
    return z ** np.arange(n, dtype=np.float64)


def along(w: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = len(w)
    return w.reshape(shape)


def _take(c: Any, axis: int, start: int | None, stop: int | None = None, step: int = 1) -> Any:
    index = [slice(None)] * c.ndim
    index[axis] = slice(start, stop, step)
    return c[tuple(index)]


def _weighted(c: Any, w: np.ndarray, axis: int) -> Any:
    """sum(c * w) along `axis` (keepdims), over the weights that are not zero: powers of a
    pole underflow to exactly 0 within ~1100 terms (SciPy's running products too), so a long
    line's middle is not read (and its weights are not a constant as long as the line)."""
    nz = np.flatnonzero(w)
    if len(nz) == len(w) or not len(nz):
        return (c * along(w, axis, c.ndim)).sum(axis, keepdims=True)
    gaps = np.flatnonzero(np.diff(nz) > 1)
    if len(gaps) != 1:  # (not one zero run in the middle: all of it)
        return (c * along(w, axis, c.ndim)).sum(axis, keepdims=True)
    head, tail = nz[gaps[0]] + 1, nz[gaps[0] + 1]
    return ((_take(c, axis, 0, head) * along(w[:head], axis, c.ndim)).sum(axis, keepdims=True)
            + (_take(c, axis, tail) * along(w[tail:], axis, c.ndim)).sum(axis, keepdims=True))


def _causal_start(c: Any, z: float, axis: int, how: str) -> Any:
    """The first value of the causal pass (keepdims along `axis`)."""
    n = c.shape[axis]
    p = _powers(z, 2 * n + 1)
    j = np.arange(n)
    if how == "mirror":
        w = p[j] + p[2 * n - 2 - j]
        w[0], w[n - 1] = 1.0, p[n - 1]
        return _weighted(c, w, axis) / (1 - p[n - 1] ** 2)
    if how == "reflect":  # (SciPy's last step reads c[0] as it has summed it so far)
        w = p[j] + p[2 * n - 1 - j]
        w[0], w[n - 1] = 1.0, p[n]
        acc = _weighted(c, w, axis)
        s = acc + p[n - 1] * (_take(c, axis, n - 1, n) + p[n] * acc)
        return s * (z / (1 - p[n] * p[n])) + _take(c, axis, 0, 1)
    w = np.concatenate([[1.0], p[1:n][::-1]])  # wrap: c[0] + sum z**i c[n-i]
    return _weighted(c, w, axis) / (1 - p[n])


def _anticausal_start(c: Any, z: float, axis: int, how: str) -> Any:
    """The last value of the anticausal pass, from the causal pass's result (keepdims)."""
    n = c.shape[axis]
    last = _take(c, axis, n - 1, n)
    if how == "mirror":
        return (z * _take(c, axis, n - 2, n - 1) + last) * (z / (z * z - 1))
    if how == "reflect":
        return last * (z / (z - 1))
    p = _powers(z, n + 1)  # wrap: (c[n-1] + sum z**(i+1) c[i]) z / (z**n - 1)
    w = np.concatenate([p[1:n], [1.0]])
    return _weighted(c, w, axis) * (z / (p[n] - 1))


def filter_axis(c: Any, order: int, axis: int, mode: int) -> Any:
    """SciPy's spline_filter1d of float64 `c` along `axis` (a line of one point is kept)."""
    n = c.shape[axis]
    if n <= 1 or c.size == 0:
        return c
    gain = 1.0
    for z in POLES[order]:
        gain *= (1.0 - z) * (1.0 - 1.0 / z)
    c = c * gain
    how = _filter_init(mode)
    for z in POLES[order]:
        first = _causal_start(c, z, axis, how)
        c = lfilter([1.0], [1.0, -z], np.concatenate([first, _take(c, axis, 1)], axis), axis)
        last = _anticausal_start(c, z, axis, how)
        back = _take(c, axis, n - 2, None, -1)  # c[n-2], ..., c[0]
        back = lfilter([-z], [1.0, -z], back, axis, zi=last * z)[0]
        c = np.concatenate([_take(back, axis, None, None, -1), last], axis)
    return c


def prefiltered(x: Any, order: int, mode: int, axes: list[int], mode_name: str,
                 cval: float) -> tuple[Any, int]:
    """float64 spline coefficients of `x` along `axes` (SciPy's _prepad_for_spline_filter
    and spline_filter), and the padding added before each of them."""
    npad = 0
    c = x.astype(np.float64)
    if mode_name in ("nearest", "grid-constant"):
        npad = NPAD
        pads = [(NPAD, NPAD) if a in axes else (0, 0) for a in range(c.ndim)]
        c = (np.pad(c, pads, mode="edge") if mode_name == "nearest"
             else np.pad(c, pads, mode="constant", constant_values=cval))
    for a in axes:
        c = filter_axis(c, order, a, mode)
    return c, npad


def _map_coordinate(cc: Any, n: int, mode: int) -> Any:
    """SciPy's map_coordinate: a float coordinate outside [0, n-1] mapped by the mode."""
    if mode == CONSTANT:
        return np.where((cc < 0) | (cc > n - 1), -1.0, cc)
    if mode == NEAREST:
        return np.clip(cc, 0, n - 1)
    if n <= 1:
        return np.where((cc < 0) | (cc > n - 1), 0.0, cc)
    if mode == MIRROR:
        s = 2 * n - 2
        lo = s * np.trunc(-cc / s) + cc
        lo = np.where(lo <= 1 - n, lo + s, -lo)
        hi = cc - s * np.trunc(cc / s)
        hi = np.where(hi >= n, s - hi, hi)
    elif mode == REFLECT:
        s = 2 * n
        lo = np.where(cc < -s, s * np.trunc(-cc / s) + cc, cc)
        lo = np.where(lo < -n, lo + s, np.where(lo > -1e-15, 1e-15, -lo) - 1)
        hi = cc - s * np.trunc(cc / s)
        hi = np.where(hi >= n, s - hi - 1, hi)
    elif mode == WRAP:
        s = n - 1
        lo = cc + s * (np.trunc(-cc / s) + 1)
        hi = cc - s * np.trunc(cc / s)
    else:  # GRID_WRAP
        lo = cc + n * (np.trunc((-1 - cc) / n) + 1)
        hi = cc - n * np.trunc(cc / n)
    return np.where(cc < 0, lo, np.where(cc > n - 1, hi, cc))


def _map_index(i: Any, n: int, mode: int) -> Any:
    """A tap's integer index mapped by the spline boundary `mode` (SciPy's map_coordinate on
    whole numbers, in integer arithmetic)."""
    if mode == NEAREST:
        return np.clip(i, 0, n - 1)
    if n <= 1:
        return np.zeros_like(i)
    if mode == MIRROR:
        s = 2 * n - 2
        lo = s * (-i // s) + i
        lo = np.where(lo <= 1 - n, lo + s, -lo)
        hi = i - s * (i // s)
        hi = np.where(hi >= n, s - hi, hi)
    elif mode == REFLECT:
        s = 2 * n
        lo = np.where(i < -s, s * (-i // s) + i, i)
        lo = np.where(lo < -n, lo + s, -lo - 1)
        hi = i - s * (i // s)
        hi = np.where(hi >= n, s - hi - 1, hi)
    else:  # GRID_WRAP
        lo = i + n * ((-1 - i) // n + 1)
        hi = i - n * (i // n)
    return np.where(i < 0, lo, np.where(i > n - 1, hi, i))


def _weights(cc: Any, order: int) -> list[Any]:
    """SciPy's B-spline interpolation weights of each tap (get_spline_interpolation_weights)."""
    x = cc - np.floor(cc if order & 1 else cc + 0.5)
    y, z = x, 1.0 - x
    if order == 1:
        w = [1.0 - x]
    elif order == 2:
        w = [0.5 * (0.5 - x) * (0.5 - x), 0.75 - x * x]
    elif order == 3:
        w = [z * z * z / 6.0, (y * y * (y - 2.0) * 3.0 + 4.0) / 6.0,
             (z * z * (z - 2.0) * 3.0 + 4.0) / 6.0]
    elif order == 4:
        t = x * x
        y1, u = 1.0 + x, 0.5 - x
        t0 = u * u
        w = [t0 * t0 / 24.0,
             y1 * (y1 * (y1 * (5.0 - y1) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0,
             t * (t * 0.25 - 0.625) + 115.0 / 192.0,
             z * (z * (z * (5.0 - z) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0]
    else:
        ty, tz = y * y, z * z
        y1, z1, u = y + 1.0, z + 1.0, 1.0 - x
        tu = u * u
        w = [u * tu * tu / 120.0,
             y1 * (y1 * (y1 * (y1 * (y1 / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425,
             ty * (ty * (0.25 - y / 12.0) - 0.5) + 0.55,
             tz * (tz * (0.25 - z / 12.0) - 0.5) + 0.55,
             z1 * (z1 * (z1 * (z1 * (z1 / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425]
    last = 1.0
    for v in w:
        last = last - v
    return [*w, last]


class _Axis:
    """One input axis's taps for every output point: their indices, weights (None for order
    0), and where a tap reads cval ('grid-constant') or the point is cval."""

    def __init__(self, cc: Any, n: int, order: int, mode: int) -> None:
        bad = ~np.isfinite(cc)
        if mode not in (GRID_CONSTANT, NEAREST):
            cc = _map_coordinate(cc, n, mode)
            bad = bad | ~(cc > -1.0)
        cc = np.where(bad, 0.0, np.clip(cc, -_BIG, _BIG))
        start = (np.floor(cc if order & 1 else cc + 0.5) - order // 2).astype(np.int64)
        spline = MIRROR if mode in (CONSTANT, WRAP) else mode
        self.index, self.cval_at = [], []
        for k in range(order + 1):
            i = start + k
            if mode == GRID_CONSTANT:
                outside = (i < 0) | (i >= n)
                self.cval_at.append(outside)
                self.index.append(np.where(outside, 0, i))
            else:
                self.index.append(_map_index(i, n, spline))
        self.weights = _weights(cc, order) if order else None
        self.bad = bad


def interpolate(data: Any, coords: list[Any], order: int, mode: int, cval: float,
                 npad: int, dtype: np.dtype) -> Any:
    """SciPy's NI_GeometricTransform / NI_ZoomShift over the last len(coords) axes of `data`
    (the others are kept: rotate's planes), each output point at coordinates `coords`
    (float64, one per axis, broadcasting to the output's shape over those axes), in `dtype`."""
    lead = data.ndim - len(coords)
    axes = [_Axis(c + float(npad) if npad else c, data.shape[lead + h], order, mode)
            for h, c in enumerate(coords)]
    t: Any = 0.0
    for taps in np.ndindex(*([order + 1] * len(coords))):
        coeff = data[(Ellipsis, *(a.index[k] for a, k in zip(axes, taps)))]
        coeff = coeff.astype(np.float64)
        if mode == GRID_CONSTANT:
            out = axes[0].cval_at[taps[0]]
            for a, k in zip(axes[1:], taps[1:]):
                out = out | a.cval_at[k]
            coeff = np.where(out, cval, coeff)
        if order:
            for a, k in zip(axes, taps):
                coeff = coeff * a.weights[k]
        t = t + coeff
    bad = axes[0].bad
    for a in axes[1:]:
        bad = bad | a.bad
    return _stored(np.where(bad, cval, t), dtype)


def _stored(t: Any, dtype: np.dtype) -> Any:
    """float64 `t` stored as SciPy stores an interpolated value in an array of `dtype`."""
    if dtype.kind == "f":
        return t.astype(dtype)
    if dtype.kind == "b":
        return t != 0
    info = np.iinfo(dtype)
    if dtype.kind == "u":
        t = np.where(t > 0, t + 0.5, 0.0)
    else:
        t = np.where(t > 0, t + 0.5, t - 0.5)
    return np.clip(np.trunc(t), float(info.min), float(info.max)).astype(dtype)
