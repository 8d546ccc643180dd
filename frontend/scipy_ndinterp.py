"""scipy.ndimage's spline interpolation of traced arrays (installed by frontend/scipy_api.py):
spline_filter1d, spline_filter, map_coordinates, affine_transform, geometric_transform (its
mapping traced once on the output coordinates), shift, zoom and rotate.

SciPy interpolates in compiled code that writes into an output array, so a traced value cannot
flow through it; these build SciPy's computation from traced operations:
- The prefilter (order > 1): along each axis, in float64, SciPy's gain and, for each pole of
  the order's B-spline, a causal pass `c[i] += z c[i-1]` and an anticausal pass
  `c[i] = z (c[i+1] - c[i])`, each started from SciPy's boundary value for the mode (mirror,
  reflect or wrap: a weighted sum along the line). The passes are lfilter scans
  (frontend/scipy_filter.py), the anticausal one over the reversed line as
  `-z c[i] + z c[i+1]`: SciPy's values to rounding, not to the bit. 'nearest' and
  'grid-constant' pad the input by 12 first, as SciPy does.
- The interpolation: each output point's coordinate along each axis is mapped into the input
  by the mode (SciPy's map_coordinate, operation for operation), its (order + 1) taps are
  mapped by the mode's spline boundary (mirror for 'constant' and 'wrap'), read by gathers and
  weighted by SciPy's B-spline weights (its formulas, the last weight one minus the others), the
  taps in SciPy's order (C order, each value times the weights axis by axis, summed from 0.0):
  SciPy's bits where no prefilter ran. A point outside ('constant': outside [0, n-1] along an
  axis) is cval; 'grid-constant' reads cval for each tap outside. A coordinate that is NaN or
  infinite gives cval (SciPy's result there is undefined for some modes).
- Output dtypes are SciPy's (its own function on stand-ins also gives its errors for bad
  arguments); integer outputs round half away from zero and saturate, as SciPy stores them.
Coordinates (map_coordinates), shifts and affine matrices and offsets may be traced; zoom
factors, orders, modes, output shapes and rotation angles are values. Complex input is split
into its real and imaginary parts, as SciPy does. `output=` an array is refused by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import tracer as T
from .numpy_lib import holds_tracer
from .scipy_ndimage import checked, refuse
from .scipy_splines import along, filter_axis, interpolate, mode_code, prefiltered


def _as_array(v: Any) -> Any:
    """A traced array, or a list or tuple holding traced values as one, or np.asarray."""
    if isinstance(v, T.Tracer):
        return v
    if holds_tracer(v):
        return T.array_operand(v)
    return np.asarray(v)


def _stand_in(key: Any, v: Any) -> Any:
    """A concrete stand-in for SciPy's own checks (an identity-like matrix for `matrix`)."""
    if isinstance(v, T.Tracer):
        if key == "matrix" and v.ndim == 2:
            return np.eye(*v.shape, dtype=v.dtype)
        return np.ones(v.shape, v.dtype)
    return v


def _checked(name: str, x: Any, traced_ok: set, **kwargs: Any) -> tuple[Any, np.dtype]:
    """scipy_ndimage.checked with these functions' stand-ins (and `x` a list of traced
    values too)."""
    return checked(name, _as_array(x), (), kwargs, complex_ok=True, traced_ok=traced_ok,
                   stand_in=_stand_in)


def _complex(x: Any, dtype: np.dtype, call: Any, cval: Any) -> Any:
    """A complex input as SciPy interpolates it: its real and imaginary parts apart."""
    part = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
    re = call(x.real, part, float(np.real(cval)))
    im = call(x.imag, part, float(np.imag(cval)))
    return (re + 1j * im).astype(dtype) if dtype.kind == "c" else re


def _spline_order(order: Any) -> int:
    if not isinstance(order, (int, np.integer)) or not 0 <= order <= 5:
        raise RuntimeError("spline order not supported")
    return int(order)


def spline_filter1d(input: Any, order: int = 3, axis: int = -1, output: Any = np.float64,
                    mode: str = "mirror") -> Any:
    x, dtype = _checked("spline_filter1d", input, set(), order=order, axis=axis,
                        output=output, mode=mode)
    if x.dtype.kind == "c":
        return _complex(x, dtype,
                        lambda v, d, _: spline_filter1d(v, order, axis, d, mode), 0)
    if order in (0, 1):
        return x.astype(dtype)
    axis = normalize_axis_index(axis, x.ndim)
    return filter_axis(x.astype(np.float64), order, axis, mode_code(mode)).astype(dtype)


def spline_filter(input: Any, order: int = 3, output: Any = np.float64,
                  mode: str = "mirror") -> Any:
    x, dtype = _checked("spline_filter", input, set(), order=order, output=output, mode=mode)
    if x.dtype.kind == "c":
        return _complex(x, dtype,
                        lambda v, d, _: spline_filter(v, order, d, mode), 0)
    if order in (0, 1) or x.ndim == 0:
        return x.astype(dtype)
    c = x.astype(np.float64)
    for a in range(x.ndim):  # (each pass stored in the output's dtype, as SciPy's)
        c = filter_axis(c.astype(np.float64), order, a, mode_code(mode)).astype(dtype)
    return c


def _transform(x: Any, dtype: np.dtype, coords: Any, order: int, mode: str, cval: float,
               prefilter: bool, axes: list[int] | None = None) -> Any:
    """Prefilter (order > 1) and interpolate over `axes` (all, last ones first moved)."""
    code = mode_code(mode)
    if prefilter and order > 1:
        axes = list(range(x.ndim)) if axes is None else axes
        data, npad = prefiltered(x, order, code, axes, mode, cval)
    else:
        data, npad = x, 0
    return interpolate(data, coords, order, code, cval, npad, dtype)


def map_coordinates(input: Any, coordinates: Any, output: Any = None, order: int = 3,
                    mode: str = "constant", cval: float = 0.0, prefilter: bool = True) -> Any:
    c = _as_array(coordinates)
    x, dtype = _checked("map_coordinates", input, {"coordinates"}, coordinates=c,
                        output=output, order=order, mode=mode, cval=cval,
                        prefilter=prefilter)
    if x.dtype.kind == "c":
        return _complex(x, dtype, lambda v, d, cv: map_coordinates(
            v, c, d, order, mode, cv, prefilter), cval)
    if not isinstance(c, T.Tracer):
        c = T.Tracer(T.to_node(c, c.dtype))
    c = c.astype(np.float64)
    return _transform(x, dtype, [c[h] for h in range(x.ndim)], _spline_order(order), mode,
                      float(cval), prefilter)


def _grid(shape: tuple[int, ...], h: int) -> Any:
    """The output coordinate along axis h (float64), shaped to broadcast over `shape`."""
    return along(np.arange(shape[h], dtype=np.float64), h, len(shape))


def _scalar(v: Any) -> Any:
    return v if isinstance(v, T.Tracer) else float(v)


def _zoom_shift(x: Any, dtype: np.dtype, out_shape: tuple[int, ...], zoom: Any, shift: Any,
                order: int, mode: str, cval: float, prefilter: bool,
                grid_mode: bool = False) -> Any:
    """SciPy's NI_ZoomShift coordinates: (k + shift) * zoom along each axis."""
    coords = []
    for h in range(x.ndim):
        cc = _grid(out_shape, h)
        if shift is not None:
            cc = cc + _scalar(shift[h])
        if zoom is not None:
            cc = (cc + 0.5) * _scalar(zoom[h]) - 0.5 if grid_mode else cc * _scalar(zoom[h])
        coords.append(cc)
    return _transform(x, dtype, coords, order, mode, cval, prefilter)


def shift(input: Any, shift: Any, output: Any = None, order: int = 3, mode: str = "constant",
          cval: float = 0.0, prefilter: bool = True) -> Any:
    s = _as_array(shift)
    x, dtype = _checked("shift", input, {"shift"}, shift=s if isinstance(s, T.Tracer)
                        else shift, output=output, order=order, mode=mode, cval=cval,
                        prefilter=prefilter)
    if x.dtype.kind == "c":
        return _complex(x, dtype, lambda v, d, cv: _SHIFT(
            v, s, d, order, mode, cv, prefilter), cval)
    if isinstance(s, T.Tracer):
        s = np.broadcast_to(s.astype(np.float64), (x.ndim,))
        s = [-s[h] for h in range(x.ndim)]
    else:
        from scipy.ndimage import _ni_support
        s = [-float(v) for v in _ni_support._normalize_sequence(shift, x.ndim)]
    return _zoom_shift(x, dtype, x.shape, None, s, _spline_order(order), mode, float(cval),
                       prefilter)


_SHIFT = shift  # (the function, which its own argument `shift` hides inside it)


def zoom(input: Any, zoom: Any, output: Any = None, order: int = 3, mode: str = "constant",
         cval: float = 0.0, prefilter: bool = True, *, grid_mode: bool = False) -> Any:
    from scipy.ndimage import _ni_support

    x, dtype = _checked("zoom", input, set(), zoom=zoom, output=output, order=order,
                        mode=mode, cval=cval, prefilter=prefilter, grid_mode=grid_mode)
    factors = _ni_support._normalize_sequence(zoom, x.ndim)
    out_shape = tuple(int(round(n * f)) for n, f in zip(x.shape, factors))
    if all(f == 1 for f in factors) and prefilter:
        return x.astype(dtype)
    if x.dtype.kind == "c":
        return _complex(x, dtype, lambda v, d, cv: _ZOOM(
            v, zoom, d, order, mode, cv, prefilter, grid_mode=grid_mode), cval)
    div = np.array(out_shape) - (0 if grid_mode else 1)
    num = np.array(x.shape) - (0 if grid_mode else 1)
    z = np.divide(num, div, out=np.ones(x.ndim), where=div != 0)
    return _zoom_shift(x, dtype, out_shape, [float(v) for v in z], None, _spline_order(order),
                       mode, float(cval), prefilter, grid_mode)


_ZOOM = zoom


def affine_transform(input: Any, matrix: Any, offset: Any = 0.0, output_shape: Any = None,
                     output: Any = None, order: int = 3, mode: str = "constant",
                     cval: float = 0.0, prefilter: bool = True) -> Any:
    m, o = _as_array(matrix), _as_array(offset)
    x, dtype = _checked("affine_transform", input, {"matrix", "offset"}, matrix=m, offset=o,
                        output_shape=output_shape, output=output, order=order, mode=mode,
                        cval=cval, prefilter=prefilter)
    if x.dtype.kind == "c":
        return _complex(x, dtype, lambda v, d, cv: affine_transform(
            v, m, o, output_shape, d, order, mode, cv, prefilter), cval)
    out_shape = x.shape if output_shape is None else tuple(int(n) for n in output_shape)
    d = x.ndim
    if m.ndim == 2 and m.shape[1] == d + 1 and m.shape[0] in (d, d + 1):
        if m.shape[0] == d + 1 and isinstance(m, T.Tracer):
            raise refuse("affine_transform with a traced homogeneous matrix of d + 1 rows "
                         "(pass its first d rows)")
        o, m = m[:d, d], m[:d, :d]
    o = np.broadcast_to(o.astype(np.float64) if isinstance(o, T.Tracer)
                        else np.asarray(o, np.float64), (d,))
    m = m.astype(np.float64) if isinstance(m, T.Tracer) else np.asarray(m, np.float64)
    order = _spline_order(order)
    if m.ndim == 1:
        return _zoom_shift(x, dtype, out_shape, [m[h] for h in range(d)],
                           [o[h] / m[h] for h in range(d)], order, mode, float(cval),
                           prefilter)
    grid = [_grid(out_shape, k) for k in range(len(out_shape))]
    if not isinstance(m, T.Tracer) and not isinstance(o, T.Tracer):  # (computed in loops)
        grid = [T.Tracer(T.to_node(g, g.dtype)) for g in grid]
    coords = []
    for h in range(d):
        tmp = _scalar(o[h])
        for k, g in enumerate(grid):
            tmp = tmp + g * _scalar(m[h, k])
        coords.append(np.broadcast_to(tmp, out_shape))
    return _transform(x, dtype, coords, order, mode, float(cval), prefilter)


def geometric_transform(input: Any, mapping: Any, output_shape: Any = None, output: Any = None,
                        order: int = 3, mode: str = "constant", cval: float = 0.0,
                        prefilter: bool = True, extra_arguments: Any = (),
                        extra_keywords: Any = None) -> Any:
    """SciPy's geometric_transform with the mapping called once, on the output coordinates as
    traced arrays (one per axis, broadcasting over the output's shape) instead of once per
    point with Python ints: a mapping of NumPy arithmetic traces; one that needs a number (an
    `if` on a coordinate, math.sin) fails as it would given NumPy arrays."""
    t = _as_array(input)
    small = tuple(1 for _ in (t.shape if output_shape is None else output_shape))
    x, dtype = _checked("geometric_transform", input, set(), mapping=lambda c, *a, **k: c[
        :t.ndim] + (0,) * (t.ndim - len(c)), output_shape=small, output=output, order=order,
        mode=mode, cval=cval, prefilter=prefilter)
    if x.dtype.kind == "c":
        return _complex(x, dtype, lambda v, d, cv: geometric_transform(
            v, mapping, output_shape, d, order, mode, cv, prefilter, extra_arguments,
            extra_keywords), cval)
    out_shape = x.shape if output_shape is None else tuple(int(n) for n in output_shape)
    grid = tuple(T.Tracer(T.to_node(_grid(out_shape, k), np.dtype(np.float64)))
                 for k in range(len(out_shape)))
    coords = mapping(grid, *extra_arguments, **(extra_keywords or {}))
    if len(coords) != x.ndim:
        raise RuntimeError("function returned coordinate array of incorrect length")
    coords = [np.broadcast_to(_as_array(c).astype(np.float64), out_shape) for c in coords]
    return _transform(x, dtype, coords, _spline_order(order), mode, float(cval), prefilter)


def rotate(input: Any, angle: float, axes: Any = (1, 0), reshape: bool = True,
           output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
           prefilter: bool = True) -> Any:
    from scipy import special

    x, dtype = _checked("rotate", input, set(), angle=angle, axes=axes, reshape=reshape,
                        output=output, order=order, mode=mode, cval=cval,
                        prefilter=prefilter)
    if x.dtype.kind == "c":
        return _complex(x, dtype, lambda v, d, cv: rotate(
            v, angle, axes, reshape, d, order, mode, cv, prefilter), cval)
    plane = sorted(normalize_axis_index(int(a), x.ndim) for a in axes)
    c, s = float(special.cosdg(angle)), float(special.sindg(angle))
    rot = np.array([[c, s], [-s, c]])
    in_plane = np.asarray(x.shape)[plane]
    if reshape:
        iy, ix = in_plane
        bounds = rot @ [[0, 0, iy, iy], [0, ix, 0, ix]]
        out_plane = (np.ptp(bounds, axis=1) + 0.5).astype(int)
    else:
        out_plane = in_plane
    offset = (in_plane - 1) / 2 - rot @ ((out_plane - 1) / 2)
    moved = np.moveaxis(x, plane, [-2, -1])
    grid = [T.Tracer(T.to_node(_grid(tuple(out_plane), k), np.dtype(np.float64)))
            for k in range(2)]
    coords = []
    for h in range(2):
        tmp = float(offset[h])
        for k in range(2):
            tmp = tmp + grid[k] * float(rot[h, k])
        coords.append(np.broadcast_to(tmp, tuple(int(n) for n in out_plane)))
    nd = x.ndim
    out = _transform(moved, dtype, coords, _spline_order(order), mode, float(cval), prefilter,
                     axes=[nd - 2, nd - 1])
    return np.moveaxis(out, [-2, -1], plane)

