"""np.conj / np.conjugate, np.real, np.imag and ndarray.real / .imag / .conj() on the real
dtypes fusejit traces, as NumPy defines them there: conjugate is an elementwise copy in the
dtype NumPy's ufunc loop gives (bool -> int8), `.real` and `.conj()` are the array itself,
`.imag` is zeros of the same dtype and shape (read-only in NumPy)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .views import broadcast_to


def conjugate(x: Any, /, out: Any = None, *, where: Any = True, dtype: Any = None,
              **kwargs: Any) -> T.Tracer:
    """np.conjugate(x) of a real Tracer: a copy, with the ufunc's result dtype."""
    if out is not None or where is not True or kwargs:
        raise UnsupportedError(f"np.conjugate(out=/where=/{sorted(kwargs)}) is not supported "
                               f"by fusejit{T.where_msg()}")
    t = x if isinstance(x, T.Tracer) else T.Tracer(T.const_node(np.asarray(x)))
    want = np.conjugate(np.zeros(0, t.dtype), dtype=dtype).dtype  # NumPy's loop and errors
    node = (T.make_node("copy", [t.node], t.shape, t.dtype) if want == t.dtype
            else T.cast_node(t.node, want))
    return T.Tracer(node, scalar=t.ndim == 0)


def real_of(t: T.Tracer) -> T.Tracer:
    """`t.real` of a real array: `t` itself."""
    return t


def imag_of(t: T.Tracer) -> T.Tracer:
    """`t.imag` of a real array: zeros of its dtype and shape."""
    zero = T.Tracer(T.const_node(np.zeros((), t.dtype)))
    z = broadcast_to(zero, t.shape) if t.shape else zero
    return T.Tracer(z.node, scalar=t.scalar)


# np.real and np.imag run NumPy's own code (`val.real`), frontend/numpy_lib.py.
UFUNCS = {np.conjugate: conjugate}
