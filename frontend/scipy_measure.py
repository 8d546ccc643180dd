"""scipy.ndimage's measurements over labelled regions on traced values (installed by
frontend/scipy_api.py): sum_labels (and its alias sum), mean, variance, standard_deviation,
minimum, maximum and center_of_mass.

SciPy gathers each region's elements (`input[labels == i]`, a data-dependent length) and
reduces them. Here the regions are masks of the whole array, one per label of `index` (given as
values: its length is the result's), so each statistic is a masked reduction over every
element: labels None is the whole input, index None the elements with labels > 0 (SciPy's
single region), a scalar index gives NumPy scalars, a list or array an array in its order.
Values and dtypes are SciPy's: a single region's sum in NumPy's sum dtype (SciPy's
`input[mask].sum()`), several labels' sums and every mean and variance in float64 (the
population variance about each region's mean, as SciPy's centred pass), minimum/maximum in the
input's dtype with 0 for a label no element has (SciPy's), NaN means and variances there, and
center_of_mass as SciPy's tuple (a list of tuples for several labels) of float64 scalars. A
traced `index` is refused by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tracer as T
from .numpy_lib import asarray


def _traced(x: Any) -> T.Tracer:
    t = asarray(x)
    if isinstance(t, T.Tracer):
        return t
    a = np.asarray(t)
    return T.Tracer(T.to_node(a, a.dtype))


def _masks(input: Any, labels: Any, index: Any, name: str) -> tuple[T.Tracer, Any, Any]:
    """The input (broadcast against labels), the region masks (the last axis runs over the
    labels of `index`; None: the whole input) and the labels as SciPy indexes its result
    (None: a scalar result)."""
    x = _traced(input)
    if labels is None:
        return x, None, None
    if isinstance(index, T.Tracer) or (isinstance(index, (list, tuple)) and any(
            isinstance(i, T.Tracer) for i in index)):
        raise T.UnsupportedError(
            f"scipy.ndimage.{name} with a traced index is not supported by fusejit"
            f"{T.where_msg()}: the result has one value per label in index, so give the "
            "labels as values (a list, np.arange(1, n + 1) with n known)")
    lab = _traced(labels)
    shape = np.broadcast_shapes(x.shape, lab.shape)
    x, lab = np.broadcast_to(x, shape), np.broadcast_to(lab, shape)
    if index is None:
        return x, np.greater(lab, 0)[..., np.newaxis], None
    idx = np.asarray(index)
    return x, np.equal(lab[..., np.newaxis], idx.reshape(-1)), idx


def _axes(x: T.Tracer) -> tuple[int, ...]:
    return tuple(range(x.ndim))


def _shaped(values: Any, idx: Any) -> Any:
    """The per-label results as SciPy returns them: one value (index None or a scalar), else
    an array of index's shape."""
    if idx is None or idx.ndim == 0:
        out = values[0]
        out.scalar = True
        return out
    return np.reshape(values, idx.shape)


def _sums(x: T.Tracer, mask: Any, idx: Any) -> tuple[Any, Any]:
    """(per-label sums, per-label counts in float64) over the masks' regions. A single
    region's sum is SciPy's `input[mask].sum()`, in NumPy's sum dtype (int64 for integers,
    float32 for float32); several labels' are its bincount's float64."""
    if mask is None:
        return np.sum(x).reshape((1,)), np.float64(x.size) * np.ones((1,))
    count = np.sum(mask, axis=_axes(x)).astype(np.float64)
    if idx is None or idx.ndim == 0:
        zero = np.zeros((), x.dtype)
        return np.sum(np.where(mask[..., 0], x, zero)).reshape((1,)), count
    xf = x.astype(np.float64)
    return np.sum(np.where(mask, xf[..., np.newaxis], 0.0), axis=_axes(x)), count


def sum_labels(input: Any, labels: Any = None, index: Any = None) -> Any:
    x, mask, idx = _masks(input, labels, index, "sum_labels")
    total, _ = _sums(x, mask, idx)
    return _shaped(total, idx)


def mean(input: Any, labels: Any = None, index: Any = None) -> Any:
    x, mask, idx = _masks(input, labels, index, "mean")
    total, count = _sums(x, mask, idx)
    return _shaped(total / count, idx)


def variance(input: Any, labels: Any = None, index: Any = None) -> Any:
    x, mask, idx = _masks(input, labels, index, "variance")
    total, count = _sums(x, mask, idx)
    centre = total / count
    xf = x.astype(np.float64)
    if mask is None:
        squares = np.sum((xf - centre[0]) ** 2).reshape((1,))
    else:
        dev = xf[..., np.newaxis] - centre
        squares = np.sum(np.where(mask, dev * dev, 0.0), axis=_axes(x))
    return _shaped(squares / count, idx)


def standard_deviation(input: Any, labels: Any = None, index: Any = None) -> Any:
    out = np.sqrt(variance(input, labels, index))
    if np.ndim(out) == 0:
        out.scalar = True
    return out


def _extreme(input: Any, labels: Any, index: Any, name: str) -> Any:
    x, mask, idx = _masks(input, labels, index, name)
    reduce = np.min if name == "minimum" else np.max
    if mask is None:
        return _shaped(reduce(x).reshape((1,)), idx)
    if x.dtype.kind == "f":
        fill = np.inf if name == "minimum" else -np.inf
    elif x.dtype.kind == "b":
        fill = name == "minimum"
    else:
        info = np.iinfo(x.dtype)
        fill = info.max if name == "minimum" else info.min
    picked = reduce(np.where(mask, x[..., np.newaxis], x.dtype.type(fill)), axis=_axes(x))
    present = np.any(mask, axis=_axes(x))
    return _shaped(np.where(present, picked, x.dtype.type(0)), idx)


def minimum(input: Any, labels: Any = None, index: Any = None) -> Any:
    return _extreme(input, labels, index, "minimum")


def maximum(input: Any, labels: Any = None, index: Any = None) -> Any:
    return _extreme(input, labels, index, "maximum")


def center_of_mass(input: Any, labels: Any = None, index: Any = None) -> Any:
    """Each region's sum of input times each coordinate over its sum: a tuple of float64
    scalars per label (a list of them for a list or array index)."""
    x, mask, idx = _masks(input, labels, index, "center_of_mass")
    total, _ = _sums(x.astype(np.float64), mask, idx)
    coords = []
    for axis, n in enumerate(x.shape):
        grid = np.arange(n, dtype=np.float64).reshape((n,) + (1,) * (x.ndim - axis - 1))
        moment, _ = _sums(x.astype(np.float64) * grid, mask, idx)
        coords.append(moment / total)
    per_label = np.stack(coords, axis=-1)  # (labels, ndim)
    if idx is None or idx.ndim == 0:
        row = per_label[0]
        return tuple(_scalar(row[d]) for d in range(x.ndim))
    return [tuple(_scalar(per_label[k, d]) for d in range(x.ndim))
            for k in range(per_label.shape[0])]


def _scalar(t: Any) -> Any:
    t.scalar = True
    return t


sum = sum_labels  # noqa: A001 - scipy.ndimage.sum, the older name
