"""scipy.ndimage's binary and grey morphology of traced arrays (installed by
frontend/scipy_api.py): binary_erosion, binary_dilation, grey_erosion and grey_dilation, and
through them SciPy's own binary_opening, binary_closing, grey_opening, grey_closing,
morphological_gradient, morphological_laplace, white_tophat and black_tophat (SciPy's Python
composes them from these names).

- Binary erosion is SciPy's NI_BinaryErosion: a point is true where every point of the
  structure, placed at it (origins as SciPy's filters), is true, a point outside the input
  counting as `border_value`; dilation is SciPy's: the erosion's complement ("invert") with
  the structure reflected and the origin negated (moved by one along even axes), that is the
  OR of the reflected structure's points. Where `mask` is false a point keeps its value.
  `iterations` repeats the pass (SciPy's result; iterations < 1, repeating until nothing
  changes, is refused: the count depends on the data). The output is bool unless `output=`
  names a dtype.
- Grey erosion (dilation) is SciPy's minimum (maximum) filter over the footprint (`size=` a
  box: frontend/scipy_rankfilt.py's separable filter; `structure=` a non-flat structuring
  element: input minus (plus) the structure's value at each point, as SciPy sums them: the
  first point's in double, the others' in the input's type, wrapping for integers), the input
  extended by `mode`/`cval`, compared in double and cast to the input's dtype; dilation
  reflects the footprint and structure and negates the origin as SciPy does. Values are SciPy's
  exactly; a NaN in the data fails at run time (the status of the rank filters: SciPy's answer
  depends on its comparison order).
Arguments are checked by SciPy's own function on stand-ins. Traced structures, footprints,
sizes, origins and iteration counts are refused by name; masks may be traced.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .scipy_ndimage import PAD_MODES, checked, per_axis, refuse
from .scipy_rankfilt import maximum_filter, minimum_filter, no_nan, windows


def _full_ndim(x: Any, axes: Any, structure: np.ndarray, origin: Any
               ) -> tuple[np.ndarray, list[int]]:
    """The structure and origins over every axis of x (axes not named get length 1, 0)."""
    ax, (origins,) = per_axis(x, axes, origin)
    shape, full_origin = [1] * x.ndim, [0] * x.ndim
    for a, k, o in zip(ax, structure.shape, origins):
        shape[a], full_origin[a] = k, int(o)
    return structure.reshape(shape), full_origin


def _binary(name: str, input: Any, structure: Any, iterations: Any, mask: Any,
            output: Any, border_value: Any, origin: Any, brute_force: Any, axes: Any,
            dilate: bool) -> Any:
    from scipy.ndimage import generate_binary_structure

    x, dtype = checked(name, input, (), {
        "structure": structure, "iterations": iterations, "mask": mask, "output": output,
        "border_value": border_value, "origin": origin, "brute_force": brute_force,
        "axes": axes}, complex_ok=True, traced_ok={"mask"}, cut=mask is None)
    if int(iterations) < 1:
        raise refuse(f"{name} with iterations < 1 (repeated until nothing changes: the "
                     "number of passes depends on the data)")
    ax, _ = per_axis(x, axes)
    s = (generate_binary_structure(len(ax), 1) if structure is None
         else np.asarray(structure, bool))
    s, origins = _full_ndim(x, axes, s, origin)
    if dilate:  # (SciPy's: the reflected structure, the negated origin)
        s = s[tuple(slice(None, None, -1) for _ in range(s.ndim))]
        origins = [-o - (0 if k & 1 else 1) for o, k in zip(origins, s.shape)]
    keep = None if mask is None else np.not_equal(mask, 0)
    cur = np.not_equal(x, 0)
    border = bool(border_value)
    for _ in range(int(iterations)):
        views = windows(cur, s, origins, "constant", border)
        out = views[0]
        for v in views[1:]:
            out = (out | v) if dilate else (out & v)
        cur = out if keep is None else np.where(keep, out, cur)
    return cur.astype(dtype)


def binary_erosion(input: Any, structure: Any = None, iterations: int = 1, mask: Any = None,
                   output: Any = None, border_value: int = 0, origin: Any = 0,
                   brute_force: bool = False, *, axes: Any = None) -> Any:
    return _binary("binary_erosion", input, structure, iterations, mask, output,
                   border_value, origin, brute_force, axes, dilate=False)


def binary_dilation(input: Any, structure: Any = None, iterations: int = 1, mask: Any = None,
                    output: Any = None, border_value: int = 0, origin: Any = 0,
                    brute_force: bool = False, *, axes: Any = None) -> Any:
    return _binary("binary_dilation", input, structure, iterations, mask, output,
                   border_value, origin, brute_force, axes, dilate=True)


def _grey(name: str, input: Any, size: Any, footprint: Any, structure: Any, output: Any,
          mode: Any, cval: float, origin: Any, axes: Any, dilate: bool) -> Any:
    x, dtype = checked(name, input, (), {
        "size": size, "footprint": footprint, "structure": structure, "output": output,
        "mode": mode, "cval": cval, "origin": origin, "axes": axes},
        complex_ok=True, traced_ok=set())
    if isinstance(mode, (list, tuple)) or mode not in PAD_MODES:
        raise refuse(f"{name} with a mode for each axis")
    x = no_nan(x)
    ax, (sizes,) = per_axis(x, axes, 1 if size is None else size)
    if footprint is not None:
        fp = np.asarray(footprint, bool)
    elif structure is not None:
        fp = np.ones(np.shape(structure), bool)
    else:
        fp = np.ones(sizes, bool)
    st = None if structure is None else np.asarray(structure, np.float64)
    fp, origins = _full_ndim(x, axes, fp, origin)
    if st is not None:
        st = st.reshape(fp.shape)
    if dilate:  # (SciPy's: reflected footprint and structure, negated origin)
        flip = tuple(slice(None, None, -1) for _ in range(fp.ndim))
        fp = fp[flip]
        st = None if st is None else st[flip]
        origins = [-o - (0 if k & 1 else 1) for o, k in zip(origins, fp.shape)]
    if st is None and fp.all():  # a flat box: separable, one axis after another
        box = maximum_filter if dilate else minimum_filter
        return box(x, size=fp.shape, mode=mode, cval=cval, origin=origins).astype(dtype)
    if st is None:
        views = windows(x.astype(np.float64), fp, origins, mode, cval)
    else:  # (SciPy's sums: the first point's in double, the others' in the input's type)
        ss = st[fp] if dilate else -st[fp]
        raw = windows(x, fp, origins, mode, cval)
        with np.errstate(all="ignore"):
            typed = [np.asarray(w).astype(x.dtype) for w in ss]
        views = [raw[0].astype(np.float64) + ss[0]] + [
            (v + t).astype(np.float64) for v, t in zip(raw[1:], typed[1:])]
    pick = np.maximum if dilate else np.minimum
    out = views[0]
    for v in views[1:]:
        out = pick(out, v)
    return out.astype(dtype)


def grey_erosion(input: Any, size: Any = None, footprint: Any = None, structure: Any = None,
                 output: Any = None, mode: str = "reflect", cval: float = 0.0,
                 origin: Any = 0, *, axes: Any = None) -> Any:
    return _grey("grey_erosion", input, size, footprint, structure, output, mode, cval,
                 origin, axes, dilate=False)


def grey_dilation(input: Any, size: Any = None, footprint: Any = None, structure: Any = None,
                  output: Any = None, mode: str = "reflect", cval: float = 0.0,
                  origin: Any = 0, *, axes: Any = None) -> Any:
    return _grey("grey_dilation", input, size, footprint, structure, output, mode, cval,
                 origin, axes, dilate=True)
