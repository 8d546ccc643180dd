"""scipy.ndimage's linear filters of traced arrays, bit for bit SciPy's (installed by
frontend/scipy_api.py): correlate1d, convolve1d, gaussian_filter1d, gaussian_filter,
uniform_filter1d, uniform_filter, sobel, prewitt, laplace, correlate, convolve,
gaussian_laplace and gaussian_gradient_magnitude.

SciPy's functions write into an output array from compiled code, so a traced value cannot
flow through them; with a traced argument these build the same arithmetic from traced
operations. Each pass along an axis extends the line as SciPy's boundary mode does (np.pad:
reflect is NumPy's symmetric, mirror its reflect, nearest its edge, wrap, constant with cval;
the grid- modes alike), computes in float64 in SciPy's order and casts to the output dtype
(the input's unless `output=` names one), as SciPy stores each pass into its output array:
- correlate1d: SciPy's NI_Correlate1D, which for odd symmetric (antisymmetric) weights adds
  (x[i-j] +- x[i+j]) w[j] to x[i] w[0], and otherwise sums the taps from the last, then
  the first up; convolve1d reverses the weights and the origin as SciPy does.
- uniform_filter1d: the running sum of NI_UniformFilter1D (the first window summed in
  order, then each next one by adding the entering and subtracting the leaving value: a
  cumulative sum), each divided by the size.
- gaussian_filter1d: correlate1d with SciPy's own kernel (its `_gaussian_kernel1d`), and
  the n-d filters as SciPy chains their passes (axes, sequences of sizes, sigmas, modes).
- correlate, convolve (n-d weights): NI_Correlate, 0.0 plus w * x over the taps in C order
  whose weight exceeds DBL_EPSILON (SciPy's footprint; its weights must be values).
Arguments are checked by SciPy's own function, called on stand-ins (ones of the input's dtype
and the shape cut to three along each axis): its errors for a bad axis, origin, size, mode
or weights. Complex values and an output array (`output=` an ndarray) are refused by name;
so are traced sizes, sigmas, modes and origins. Weights of correlate1d may be traced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..errors import UnsupportedError
from . import tracer as T
from .numpy_lib import holds_tracer, quietly

# SciPy's boundary modes as np.pad's
PAD_MODES = {"reflect": "symmetric", "grid-mirror": "symmetric", "mirror": "reflect",
             "nearest": "edge", "wrap": "wrap", "grid-wrap": "wrap", "constant": "constant",
             "grid-constant": "constant"}


def refuse(what: str) -> UnsupportedError:
    """The error for something of scipy.ndimage fusejit does not compile."""
    return UnsupportedError(f"scipy.ndimage {what} is not supported by fusejit{T.where_msg()}")


def _ones_like(key: Any, v: Any) -> Any:
    return np.ones(v.shape, v.dtype) if isinstance(v, T.Tracer) else v


def checked(name: str, x: Any, args: tuple, kwargs: dict, complex_ok: bool = False,
            traced_ok: Any = None, stand_in: Callable[[Any, Any], Any] = _ones_like,
            cut: bool = True) -> tuple[Any, np.dtype]:
    """`x` as a traced array and the output dtype, after SciPy's own checks on stand-ins:
    ones of the input's dtype, its shape cut to three along each axis (`cut`; else whole:
    for a mask that must have the input's shape), and `stand_in(key, value)` for the other
    arguments (ones for traced ones). `complex_ok`: complex values are
    left to SciPy's own function; `traced_ok`: the argument keys (positions, names) that may
    be traced (default: the weights of correlate1d, correlate and convolve); any other
    traced argument, or an output array, is refused by name."""
    from scipy import ndimage

    t = x if isinstance(x, T.Tracer) else np.asarray(x)
    if t.dtype.kind == "c" and not complex_ok:
        raise refuse(f"{name} of complex values")
    output = kwargs.get("output")
    if isinstance(output, (np.ndarray, T.Tracer)):
        raise refuse(f"{name}(..., output=<an array>) (pass a dtype, or use the result)")
    if traced_ok is None:
        traced_ok = {0} if name in ("correlate1d", "correlate", "convolve") else set()
    for key, value in (*enumerate(args), *kwargs.items()):
        if (isinstance(value, T.Tracer) or holds_tracer(value)) and key not in traced_ok:
            raise refuse(f"{name} with a traced {key if isinstance(key, str) else 'argument'}")
    small = np.ones(tuple(min(n, 3) if cut else n for n in t.shape), t.dtype)
    got = quietly(getattr(ndimage, name), small, *(stand_in(k, v) for k, v in enumerate(args)),
                  **{k: stand_in(k, v) for k, v in kwargs.items()})
    if not isinstance(t, T.Tracer):
        t = T.Tracer(T.to_node(t, t.dtype))
    return t, np.dtype(got.dtype)


def line_along(x: Any, axis: int, start: int, n: int) -> Any:
    """x[start:start + n] along `axis`."""
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, start + n)
    return x[tuple(index)]


def extended(x: Any, axis: int, before: int, after: int, mode: str, cval: float) -> Any:
    """x extended along `axis` by `before` and `after` points as SciPy's boundary `mode`."""
    pads = [(0, 0)] * x.ndim
    pads[axis] = (before, after)
    pad = PAD_MODES[mode]
    extra = {"constant_values": cval} if pad == "constant" else {}
    return np.pad(x, pads, mode=pad, **extra)


def _symmetry(w: Any) -> tuple[Any, Any]:
    """Whether odd weights count as symmetric, and as antisymmetric, as NI_Correlate1D finds:
    no pair farther apart (closer to opposite) than DBL_EPSILON, absolutely (a NaN pair
    passes). Python bools for weights given as values, traced bools for traced ones."""
    eps = np.finfo(np.float64).eps
    if not len(w) & 1:
        return False, False
    half = len(w) // 2
    right, left = w[half + 1:], w[:half][::-1]
    sym = np.logical_not(np.any(np.abs(right - left) > eps))
    anti = np.logical_and(np.logical_not(sym),
                          np.logical_not(np.any(np.abs(right + left) > eps)))
    return (sym, anti) if isinstance(w, T.Tracer) else (bool(sym), bool(anti))


def _correlate_line(x: Any, w: Any, axis: int, mode: str, cval: float, origin: int) -> Any:
    """One correlate1d pass over float64 `x`, in NI_Correlate1D's order: for odd symmetric
    (antisymmetric) weights x[i] w[0] plus (x[i-j] +- x[i+j]) w[-j], else the last tap plus
    the others from the first up. Traced weights: all three, chosen when the program runs."""
    n, size = x.shape[axis], len(w)
    size1 = size // 2
    size2 = size - size1 - 1
    xp = extended(x, axis, size1 + origin, size2 - origin, mode, cval)

    def at(k: int) -> Any:  # the input at offset k - size1 from each point
        return line_along(xp, axis, k, n)

    def paired(sign: int) -> Any:
        out = at(size1) * w[size1]
        for j in range(-size1, 0):
            pair = at(size1 + j) + at(size1 - j) if sign > 0 else at(size1 + j) - at(size1 - j)
            out = out + pair * w[size1 + j]
        return out

    def in_order() -> Any:
        out = at(size1 + size2) * w[size1 + size2]
        for j in range(-size1, size2):
            out = out + at(size1 + j) * w[size1 + j]
        return out

    sym, anti = _symmetry(w)
    if isinstance(sym, T.Tracer):
        return np.where(sym, paired(1), np.where(anti, paired(-1), in_order()))
    return paired(1) if sym else paired(-1) if anti else in_order()


def _uniform_line(x: Any, size: int, axis: int, mode: str, cval: float, origin: int) -> Any:
    """One uniform_filter1d pass over float64 `x`: NI_UniformFilter1D's running sum."""
    n = x.shape[axis]
    size1 = size // 2
    xp = extended(x, axis, size1 + origin, size - size1 - 1 - origin, mode, cval)
    first = line_along(xp, axis, 0, 1)
    for k in range(1, size):
        first = first + line_along(xp, axis, k, 1)
    if n <= 1:
        return line_along(first, axis, 0, n) / float(size)
    steps = line_along(xp, axis, size, n - 1) - line_along(xp, axis, 0, n - 1)
    return np.cumsum(np.concatenate([first, steps], axis=axis), axis=axis) / float(size)


def _correlating(w: Any, axis: int, mode: str, cval: float, origin: int
                 ) -> Callable[[Any], Any]:
    """One correlate1d pass as a step of _passes."""
    return lambda v: _correlate_line(v, w, axis, mode, cval, origin)


def _passes(x: T.Tracer, dtype: np.dtype, steps: list[Callable[[Any], Any]]) -> Any:
    """Each step on the previous result in float64, stored in `dtype` as SciPy's output."""
    for step in steps:
        x = step(x.astype(np.float64, copy=False)).astype(dtype, copy=False)
    return x


def _weights(weights: Any) -> Any:
    if isinstance(weights, T.Tracer):
        return weights.astype(np.float64, copy=False)
    return np.asarray(weights, dtype=np.float64)


def correlate1d(input: Any, weights: Any, axis: int = -1, output: Any = None,
                mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    x, dtype = checked("correlate1d", input, (weights, axis),
                        {"output": output, "mode": mode, "cval": cval, "origin": origin})
    w, ax = _weights(weights), normalize_axis_index(axis, x.ndim)
    return _passes(x, dtype, [_correlating(w, ax, mode, cval, origin)])


def convolve1d(input: Any, weights: Any, axis: int = -1, output: Any = None,
               mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    w = _weights(weights)[::-1]
    origin = -origin - (0 if w.shape[0] & 1 else 1)
    return correlate1d(input, w, axis, output, mode, cval, origin)


def uniform_filter1d(input: Any, size: int, axis: int = -1, output: Any = None,
                     mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    x, dtype = checked("uniform_filter1d", input, (size, axis),
                        {"output": output, "mode": mode, "cval": cval, "origin": origin})
    ax = normalize_axis_index(axis, x.ndim)
    return _passes(x, dtype, [lambda v: _uniform_line(v, int(size), ax, mode, cval, origin)])


def per_axis(x: Any, axes: Any, *values: Any) -> tuple[list[int], list[list[Any]]]:
    """SciPy's axes (checked) and each of `values` as one entry per axis."""
    from scipy.ndimage import _ni_support

    axes = _ni_support._check_axes(axes, x.ndim)
    return axes, [_ni_support._normalize_sequence(v, len(axes)) for v in values]


def uniform_filter(input: Any, size: Any = 3, output: Any = None, mode: Any = "reflect",
                   cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    x, dtype = checked("uniform_filter", input, (size,), {
        "output": output, "mode": mode, "cval": cval, "origin": origin, "axes": axes})
    axes, (sizes, origins, modes) = per_axis(x, axes, size, origin, mode)
    steps = [(lambda v, a=a, s=int(s), o=o, m=m: _uniform_line(v, s, a, m, cval, o))
             for a, s, o, m in zip(axes, sizes, origins, modes) if s > 1]
    return _passes(x, dtype, steps or [lambda v: v])


def _gaussian_weights(sigma: float, order: int, truncate: float, radius: Any) -> np.ndarray:
    from scipy.ndimage import _filters

    lw = int(truncate * float(sigma) + 0.5) if radius is None else radius
    return _filters._gaussian_kernel1d(sigma, order, lw)[::-1]


def gaussian_filter1d(input: Any, sigma: float, axis: int = -1, order: int = 0,
                      output: Any = None, mode: str = "reflect", cval: float = 0.0,
                      truncate: float = 4.0, *, radius: Any = None) -> Any:
    x, dtype = checked("gaussian_filter1d", input, (sigma, axis, order), {
        "output": output, "mode": mode, "cval": cval, "truncate": truncate, "radius": radius})
    w, ax = _gaussian_weights(sigma, order, truncate, radius), normalize_axis_index(axis, x.ndim)
    return _passes(x, dtype, [_correlating(w, ax, mode, cval, 0)])


def gaussian_filter(input: Any, sigma: Any, order: Any = 0, output: Any = None,
                    mode: Any = "reflect", cval: float = 0.0, truncate: float = 4.0, *,
                    radius: Any = None, axes: Any = None) -> Any:
    x, dtype = checked("gaussian_filter", input, (sigma, order), {
        "output": output, "mode": mode, "cval": cval, "truncate": truncate,
        "radius": radius, "axes": axes})
    axes, (sigmas, orders, modes, radii) = per_axis(x, axes, sigma, order, mode, radius)
    steps = [_correlating(_gaussian_weights(s, o, truncate, r), a, m, cval, 0)
             for a, s, o, m, r in zip(axes, sigmas, orders, modes, radii) if s > 1e-15]
    return _passes(x, dtype, steps or [lambda v: v])


def _correlate_nd(x: Any, w: np.ndarray, origins: list[int], mode: str, cval: float) -> Any:
    """NI_Correlate over float64 `x`: 0.0 plus w * x over the weights in C order whose size
    exceeds DBL_EPSILON (SciPy's footprint), the array extended along each axis by `mode`."""
    pads = [(k // 2 + o, k - k // 2 - 1 - o) for k, o in zip(w.shape, origins)]
    extra = {"constant_values": cval} if PAD_MODES[mode] == "constant" else {}
    xp = np.pad(x, pads, mode=PAD_MODES[mode], **extra)
    out: Any = np.zeros(x.shape)  # (SciPy's sum starts from 0.0: -0.0 terms give +0.0)
    for idx in np.ndindex(*w.shape):
        if abs(w[idx]) > np.finfo(np.float64).eps:
            tap = xp[tuple(slice(i, i + n) for i, n in zip(idx, x.shape))]
            out = out + w[idx] * tap
    return out


def _correlate_or_convolve(name: str, input: Any, weights: Any, output: Any, mode: Any,
                           cval: float, origin: Any, axes: Any, flip: bool) -> Any:
    from scipy.ndimage import _filters

    x, dtype = checked(name, input, (weights,), {"output": output, "mode": mode, "cval": cval,
                                                  "origin": origin, "axes": axes})
    if isinstance(weights, T.Tracer):
        raise refuse(f"{name} with traced weights (SciPy's footprint is the weights that are "
                      "not zero)")
    axes = _filters._ni_support._check_axes(axes, x.ndim)
    w = np.asarray(weights, np.float64)
    if hasattr(_filters, "_expand_footprint"):  # (SciPy >= 1.15: weights over `axes` only)
        w = _filters._expand_footprint(x.ndim, axes, w, "weights")
        origins = list(_filters._expand_origin(x.ndim, axes, origin))
    else:
        origins = list(_filters._ni_support._normalize_sequence(origin, x.ndim))
    if flip:
        w = w[(slice(None, None, -1),) * w.ndim]
        origins = [-o - (0 if k & 1 else 1) for o, k in zip(origins, w.shape)]
    return _passes(x, dtype, [lambda v: _correlate_nd(v, w, origins, mode, cval)])


def correlate(input: Any, weights: Any, output: Any = None, mode: str = "reflect",
              cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    return _correlate_or_convolve("correlate", input, weights, output, mode, cval, origin,
                                  axes, False)


def convolve(input: Any, weights: Any, output: Any = None, mode: str = "reflect",
             cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    return _correlate_or_convolve("convolve", input, weights, output, mode, cval, origin,
                                  axes, True)


def _derivative_pair(name: str, smooth: list[float]) -> Callable[..., Any]:
    def edge(input: Any, axis: int = -1, output: Any = None, mode: Any = "reflect",
             cval: float = 0.0) -> Any:
        from scipy.ndimage import _ni_support

        x, dtype = checked(name, input, (axis,), {"output": output, "mode": mode,
                                                   "cval": cval})
        ax = normalize_axis_index(axis, x.ndim)
        modes = _ni_support._normalize_sequence(mode, x.ndim)
        diff, flat = np.array([-1.0, 0.0, 1.0]), np.array(smooth)
        steps = [_correlating(diff, ax, modes[ax], cval, 0)]
        steps += [_correlating(flat, a, modes[a], cval, 0) for a in range(x.ndim) if a != ax]
        return _passes(x, dtype, steps)

    edge.__name__ = edge.__qualname__ = name
    edge.__doc__ = f"scipy.ndimage.{name}: [-1, 0, 1] along axis, {smooth} along the others."
    return edge


sobel = _derivative_pair("sobel", [1.0, 2.0, 1.0])
prewitt = _derivative_pair("prewitt", [1.0, 1.0, 1.0])


def laplace(input: Any, output: Any = None, mode: Any = "reflect", cval: float = 0.0, *,
            axes: Any = None) -> Any:
    """scipy.ndimage.laplace: [1, -2, 1] along each axis, each stored in the output dtype and
    added to the first in it (SciPy's `output += tmp`)."""
    x, dtype = checked("laplace", input, (), {"output": output, "mode": mode, "cval": cval,
                                               "axes": axes})
    axes, (modes,) = per_axis(x, axes, mode)
    if not axes:
        return x.astype(dtype)
    second = np.array([1.0, -2.0, 1.0])
    return _summed(dtype, (_passes(x, dtype, [_correlating(second, a, m, cval, 0)])
                           for a, m in zip(axes, modes)))


def _order(ndim: int, axis: int, n: int) -> list[int]:
    order = [0] * ndim
    order[axis] = n
    return order


def _setup(name: str, input: Any, sigma: Any, output: Any, mode: Any, cval: float, axes: Any,
           kwargs: dict[str, Any]) -> tuple[Any, np.dtype, list[int], list[Any]]:
    """The checked input, output dtype, axes and a mode per axis (SciPy's generic_laplace and
    generic_gradient_magnitude)."""
    from scipy.ndimage import _ni_support

    x, dtype = checked(name, input, (sigma,), {"output": output, "mode": mode, "cval": cval,
                                                "axes": axes, **kwargs})
    axes = _ni_support._check_axes(axes, x.ndim)
    return x, dtype, axes, _ni_support._normalize_sequence(mode, len(axes)) if axes else []


def _summed(dtype: np.dtype, parts: Any) -> Any:
    """The parts added in `dtype` (SciPy's `output += tmp`)."""
    total = None
    for part in parts:
        total = part if total is None else np.add(total, part, dtype=dtype)
    return total


def gaussian_laplace(input: Any, sigma: Any, output: Any = None, mode: Any = "reflect",
                     cval: float = 0.0, *, axes: Any = None, **kwargs: Any) -> Any:
    """scipy.ndimage.gaussian_laplace: gaussian_filter with order 2 along each axis (sigma 0
    on the axes not filtered), each stored in the output dtype and summed in it."""
    from scipy.ndimage import _ni_support

    x, dtype, axes, modes = _setup("gaussian_laplace", input, sigma, output, mode, cval, axes,
                                   kwargs)
    if not axes:
        return x.astype(dtype)
    sigmas = _ni_support._normalize_sequence(sigma, len(axes))
    if len(axes) < x.ndim:
        full = [0] * x.ndim
        for s, ax in zip(sigmas, axes):
            full[ax] = s
        sigmas = full
    return _summed(dtype, (gaussian_filter(x, sigmas, _order(x.ndim, ax, 2), dtype, m, cval,
                                           **kwargs) for ax, m in zip(axes, modes)))


def gaussian_gradient_magnitude(input: Any, sigma: Any, output: Any = None,
                                mode: Any = "reflect", cval: float = 0.0, *, axes: Any = None,
                                **kwargs: Any) -> Any:
    """scipy.ndimage.gaussian_gradient_magnitude: the square root of the sum of the squared
    first-order gaussian_filter along each axis, each step in the output dtype (SciPy's
    in-place multiply, add and sqrt into its output)."""
    x, dtype, axes, modes = _setup("gaussian_gradient_magnitude", input, sigma, output, mode,
                                   cval, axes, kwargs)
    if not axes:
        return x.astype(dtype)

    def squared(ax: int, m: str) -> Any:
        part = gaussian_filter(x, sigma, _order(x.ndim, ax, 1), dtype, m, cval, **kwargs)
        return np.multiply(part, part, dtype=dtype)

    return np.sqrt(_summed(dtype, (squared(ax, m) for ax, m in zip(axes, modes)))).astype(
        dtype, copy=False)
