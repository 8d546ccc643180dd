"""scipy.signal's convolve2d/correlate2d and argrelextrema/argrelmax/argrelmin with traced
arrays (installed by frontend/scipy_api.py).

convolve2d's boundaries (fill with `fillvalue`, wrap, symm) are the first input padded by the
kernel's size less one on each side (np.pad constant, wrap, symmetric: SciPy's extensions),
then the valid convolution (scipy.signal.convolve, frontend/scipy_signal.py), cropped for
'same' as SciPy centres it; 'valid' reads no boundary. correlate2d is convolve2d with the
kernel reversed and conjugated (SciPy's identity, its 'valid' swap included). SciPy's
argument errors and result dtype come from SciPy itself on stand-ins.

argrelextrema compares each element with its neighbours up to `order` away (np.take with
SciPy's `mode`, clip or wrap) and gives np.nonzero of the result: selections of positions
(frontend/masked_index.py), which index the data (`x[argrelmax(x)]`) and reduce.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tracer as T
from .numpy_lib import quietly, value_or_traced

_PAD = {"fill": "constant", "wrap": "wrap", "symm": "symmetric"}
_BOUNDARY = {"fill": "fill", "pad": "fill", "wrap": "wrap", "circular": "wrap",
             "symm": "symm", "symmetric": "symm"}


def _stand_in(x: Any) -> np.ndarray:
    return np.ones(np.shape(x), value_or_traced(x).dtype)


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: Any = 0) -> Any:
    import scipy.signal

    if isinstance(fillvalue, T.Tracer):
        raise T.UnsupportedError(f"scipy.signal.convolve2d with a traced fillvalue is not "
                                 f"supported by fusejit{T.where_msg()}")
    want = quietly(scipy.signal.convolve2d, _stand_in(in1), _stand_in(in2), mode, boundary,
                   fillvalue)
    a, k = value_or_traced(in1), value_or_traced(in2)
    if mode == "valid" or a.size == 0 or k.size == 0:
        return scipy.signal.convolve(a, k, mode=mode, method="direct").astype(want.dtype)
    kind = _BOUNDARY[boundary]
    pads = [(n - 1, n - 1) for n in k.shape]
    if kind == "fill":
        fill = np.asarray(fillvalue).astype(want.dtype).item() if a.dtype.kind != "c" or \
            np.iscomplexobj(fillvalue) else complex(fillvalue)
        padded = np.pad(a.astype(want.dtype), pads, mode="constant", constant_values=fill)
    else:
        padded = np.pad(a.astype(want.dtype), pads, mode=_PAD[kind])
    full = scipy.signal.convolve(padded, k.astype(want.dtype), mode="valid", method="direct")
    if mode == "same":
        (r0, c0), (m, n) = (((s - 1) // 2) for s in k.shape), a.shape
        full = full[r0:r0 + m, c0:c0 + n]
    return full.astype(want.dtype, copy=False)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: Any = 0) -> Any:
    import scipy.signal

    quietly(scipy.signal.correlate2d, _stand_in(in1), _stand_in(in2), mode, boundary,
            fillvalue)
    a, k = value_or_traced(in1), value_or_traced(in2)
    swapped = mode == "valid" and all(p <= q for p, q in zip(a.shape, k.shape)) and \
        a.shape != k.shape
    if swapped:  # (SciPy's: the correlation of the larger with the smaller, reversed)
        out = convolve2d(k, np.conjugate(a[::-1, ::-1]), mode, boundary, fillvalue)
        return np.conjugate(out[::-1, ::-1]) if out.dtype.kind == "c" else out[::-1, ::-1]
    flipped = np.conjugate(k[::-1, ::-1])
    if mode != "same":
        return convolve2d(a, flipped, mode, boundary, fillvalue)
    # 'same' centres the correlation's own full output: for an even kernel dim one element
    # later than the flipped kernel's convolution would
    full = convolve2d(a, flipped, "full", boundary, fillvalue)
    (r0, c0), (m, n) = ((s // 2) for s in k.shape), a.shape
    return full[r0:r0 + m, c0:c0 + n]


def argrelextrema(data: Any, comparator: Any, axis: int = 0, order: int = 1,
                  mode: str = "clip") -> tuple[Any, ...]:
    import scipy.signal

    quietly(scipy.signal.argrelextrema, _stand_in(data), comparator, axis, order, mode)
    t = value_or_traced(data)
    locs = np.arange(t.shape[axis])
    results = None
    for shift in range(1, order + 1):
        plus = np.take(t, locs + shift, axis=axis, mode=mode)
        minus = np.take(t, locs - shift, axis=axis, mode=mode)
        step = np.logical_and(comparator(t, plus), comparator(t, minus))
        results = step if results is None else np.logical_and(results, step)
    return np.nonzero(results)


def argrelmax(data: Any, axis: int = 0, order: int = 1, mode: str = "clip") -> tuple[Any, ...]:
    return argrelextrema(data, np.greater, axis, order, mode)


def argrelmin(data: Any, axis: int = 0, order: int = 1, mode: str = "clip") -> tuple[Any, ...]:
    return argrelextrema(data, np.less, axis, order, mode)
