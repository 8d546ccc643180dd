"""scipy.ndimage's minimum, maximum, median, rank and percentile filters and
scipy.signal.medfilt of traced arrays (installed by frontend/scipy_api.py).

Each output point is one of the values in its window (extended at the edges as SciPy's
boundary mode does: np.pad, as frontend/scipy_ndimage.py), so for data without NaN the
values are SciPy's exactly: the minimum or maximum is a running np.minimum/np.maximum over
the window's shifted views (one fused kernel per axis: SciPy filters a size= or all-true
footprint one axis after another, storing each pass in the output's dtype), a rank is the
rank-th wire of a sorting network over the window's views (Batcher's odd-even merge sort,
only the compare-exchanges that wire depends on: one fused kernel of compares and selects)
for windows of up to NETWORK_MAX values, else of the views sorted along a new axis. SciPy
compares values as doubles (its line buffers) and stores the result in the output dtype; so
does this (int64 beyond 2**53 included), except SciPy's 1-d rank filter, which works in
float32, int64 or float64. Where +0.0 and -0.0 tie, the zero's sign may differ from
SciPy's (which one its algorithm keeps is not reproduced).

With a NaN in the data SciPy's answer depends on the order its algorithm compares values
in: the program then fails when it runs (status RANK_FILTER_NAN) rather than answer
differently. Arguments are checked by SciPy's own function on stand-ins (its errors); traced
sizes, footprints, ranks, modes or origins and output arrays are refused by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import tracer as T
from .numpy_lib import guarded, quietly
from .scipy_ndimage import PAD_MODES, checked, extended, line_along, per_axis, refuse


def no_nan(x: Any) -> Any:
    """x, failing when the program runs if it holds a NaN (see the module)."""
    if x.dtype.kind != "f":
        return x
    return guarded(x, np.isnan(x).any(), "check_rank_filter_nan")


def _extreme_line(x: Any, size: int, axis: int, mode: str, cval: float, origin: int,
                  minimum: bool) -> Any:
    """One minimum_filter1d / maximum_filter1d pass over float64 `x`."""
    n = x.shape[axis]
    size1 = size // 2
    xp = extended(x, axis, size1 + origin, size - size1 - 1 - origin, mode, cval)
    pick = np.minimum if minimum else np.maximum
    out = line_along(xp, axis, 0, n)
    for k in range(1, size):
        out = pick(out, line_along(xp, axis, k, n))
    return out


def windows(x: Any, footprint: np.ndarray, origins: list[int], mode: str,
             cval: float) -> list[Any]:
    """The shifted views of extended `x`, one per true point of `footprint` (C order)."""
    pads = [(k // 2 + o, k - k // 2 - 1 - o) for k, o in zip(footprint.shape, origins)]
    extra = {"constant_values": cval} if PAD_MODES[mode] == "constant" else {}
    xp = np.pad(x, pads, mode=PAD_MODES[mode], **extra)
    return [xp[tuple(slice(i, i + n) for i, n in zip(idx, x.shape))]
            for idx in np.ndindex(*footprint.shape) if footprint[idx]]


def _footprint(x: Any, size: Any, footprint: Any, axes: Any) -> np.ndarray:
    """The footprint over every axis (SciPy's: size= as an all-true box; axes not filtered
    get length 1)."""
    ax, (sizes,) = per_axis(x, axes, 1 if size is None else size)
    fp = np.ones(sizes, bool) if footprint is None else np.asarray(footprint, bool)
    full = [1] * x.ndim
    for a, k in zip(ax, fp.shape):
        full[a] = k
    return fp.reshape(full)


def _origins(x: Any, axes: Any, origin: Any) -> list[int]:
    ax, (origins,) = per_axis(x, axes, origin)
    full = [0] * x.ndim
    for a, o in zip(ax, origins):
        full[a] = int(o)
    return full


def _min_or_max(name: str, input: Any, size: Any, footprint: Any, output: Any, mode: Any,
                cval: float, origin: Any, axes: Any, minimum: bool) -> Any:
    x, dtype = checked(name, input, (size, footprint), {
        "output": output, "mode": mode, "cval": cval, "origin": origin, "axes": axes},
        complex_ok=True)
    x = no_nan(x)
    fp = None if footprint is None else np.asarray(footprint, bool)
    if fp is None or fp.all():  # separable: one axis after another, in the output dtype
        ax, (sizes, origins, modes) = per_axis(
            x, axes, size if fp is None else fp.shape, origin, mode)
        for a, s, o, m in zip(ax, sizes, origins, modes):
            if s > 1:
                x = _extreme_line(x.astype(np.float64), int(s), a, m, cval, int(o),
                                  minimum).astype(dtype)
        return x.astype(dtype)
    views = windows(x.astype(np.float64), _footprint(x, None, fp, axes),
                     _origins(x, axes, origin), mode, cval)
    pick = np.minimum if minimum else np.maximum
    out = views[0]
    for v in views[1:]:
        out = pick(out, v)
    return out.astype(dtype)


def _extreme1d(name: str, input: Any, size: int, axis: int, output: Any, mode: str,
               cval: float, origin: int) -> Any:
    x, dtype = checked(name, input, (size, axis),
                       {"output": output, "mode": mode, "cval": cval, "origin": origin},
                       complex_ok=True)
    ax = normalize_axis_index(axis, x.ndim)
    x = no_nan(x).astype(np.float64)
    return _extreme_line(x, int(size), ax, mode, cval, origin,
                         name.startswith("min")).astype(dtype)


def minimum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None,
                     mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    return _extreme1d("minimum_filter1d", input, size, axis, output, mode, cval, origin)


def maximum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None,
                     mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    return _extreme1d("maximum_filter1d", input, size, axis, output, mode, cval, origin)


def minimum_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None,
                   mode: Any = "reflect", cval: float = 0.0, origin: Any = 0, *,
                   axes: Any = None) -> Any:
    return _min_or_max("minimum_filter", input, size, footprint, output, mode, cval, origin,
                       axes, True)


def maximum_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None,
                   mode: Any = "reflect", cval: float = 0.0, origin: Any = 0, *,
                   axes: Any = None) -> Any:
    return _min_or_max("maximum_filter", input, size, footprint, output, mode, cval, origin,
                       axes, False)


def _rank(name: str, input: Any, rank: Any, size: Any, footprint: Any, output: Any,
          mode: Any, cval: float, origin: Any, axes: Any, extra: tuple) -> Any:
    x, dtype = checked(name, input, extra, {
        "size": size, "footprint": footprint, "output": output, "mode": mode,
        "cval": cval, "origin": origin, "axes": axes}, complex_ok=True)
    fp = _footprint(x, size, footprint, axes)
    count = int(fp.sum())
    if name == "median_filter":
        rank = count // 2
    elif name == "percentile_filter":
        pct = float(rank) + (100.0 if rank < 0 else 0.0)
        rank = count - 1 if pct == 100.0 else int(float(count) * pct / 100.0)
    rank = int(rank) + (count if rank < 0 else 0)
    if rank == 0 or rank == count - 1:  # (SciPy's minimum and maximum filters)
        return _min_or_max("minimum_filter" if rank == 0 else "maximum_filter", x, None, fp,
                           output, mode, cval, _origins(x, axes, origin), None, rank == 0)
    x = no_nan(x)
    one_d = x.ndim == 1 and (x.size - ((fp.size - 1) // 2 - int(np.ravel(origin)[0])) >= 0
                             or x.size == 1)
    work = np.dtype(np.float64)
    if one_d:  # (SciPy's 1-d rank filter works in float32, int64 or float64)
        work = (x.dtype if x.dtype in (np.int64, np.float64, np.float32) else
                np.dtype(np.float32) if x.dtype == np.float16 else np.dtype(np.int64))
        cval = work.type(cval)
    views = windows(x.astype(work), fp, _origins(x, axes, origin), mode, cval)
    if len(views) <= NETWORK_MAX:
        return _select(views, rank).astype(dtype)
    return np.sort(np.stack(views, axis=-1), axis=-1)[..., rank].astype(dtype)


NETWORK_MAX = 64  # windows up to this many values select by a sorting network, larger sort


def _network(n: int) -> list[tuple[int, int]]:
    """Batcher's odd-even merge sort of n (a power of two) wires: its compare-exchanges
    (i, j), i < j, in order; afterwards wire k holds the k-th smallest value."""
    pairs = []
    p = 1
    while p < n:
        k = p
        while k >= 1:
            for j in range(k % p, n - k, 2 * k):
                for i in range(min(k, n - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        pairs.append((i + j, i + j + k))
            k //= 2
        p *= 2
    return pairs


def _select(views: list[Any], rank: int) -> Any:
    """The rank-th smallest of `views` at each point: the compare-exchanges of a sorting
    network (elementwise minimum and maximum, one fused kernel) that wire `rank` depends on,
    the wires past the views above every value (their compare-exchanges move nothing)."""
    n = 1 << max(len(views) - 1, 0).bit_length()
    pairs = _network(n)
    needed, kept = {rank}, []
    for i, j in reversed(pairs):
        if i in needed or j in needed:
            kept.append((i, j))
            needed |= {i, j}
    wires: list[Any] = [*views, *[None] * (n - len(views))]  # None: above every value
    for i, j in reversed(kept):
        a, b = wires[i], wires[j]
        if b is None:
            continue  # (min(a, top) = a, max(a, top) = top: nothing moves)
        if a is None:
            wires[i], wires[j] = b, None
            continue
        swap = b < a  # (no NaN here: a compare and two selects vectorise and compile fast)
        wires[i], wires[j] = np.where(swap, b, a), np.where(swap, a, b)
    return wires[rank]


def median_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None,
                  mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *,
                  axes: Any = None) -> Any:
    return _rank("median_filter", input, 0, size, footprint, output, mode, cval, origin,
                 axes, ())


def rank_filter(input: Any, rank: int, size: Any = None, footprint: Any = None,
                output: Any = None, mode: str = "reflect", cval: float = 0.0,
                origin: Any = 0, *, axes: Any = None) -> Any:
    return _rank("rank_filter", input, rank, size, footprint, output, mode, cval, origin,
                 axes, (rank,))


def percentile_filter(input: Any, percentile: float, size: Any = None, footprint: Any = None,
                      output: Any = None, mode: str = "reflect", cval: float = 0.0,
                      origin: Any = 0, *, axes: Any = None) -> Any:
    return _rank("percentile_filter", input, percentile, size, footprint, output, mode, cval,
                 origin, axes, (percentile,))


def medfilt(volume: Any, kernel_size: Any = None) -> Any:
    """scipy.signal.medfilt: SciPy's checks, then its rank filter with zero padding."""
    from scipy import signal

    x = volume if isinstance(volume, T.Tracer) else np.asarray(volume)
    if isinstance(kernel_size, T.Tracer):
        raise refuse("medfilt with a traced kernel_size")
    quietly(signal.medfilt, np.zeros(tuple(min(n, 3) for n in x.shape) or (1,), x.dtype),
            kernel_size)
    if x.ndim == 0:
        x = x.reshape(1)
    sizes = [3] * x.ndim if kernel_size is None else np.broadcast_to(
        np.asarray(kernel_size), (x.ndim,)).tolist()
    size = int(np.prod(sizes))
    return rank_filter(x, size // 2, size=sizes, mode="constant")
