"""np.conj / np.conjugate and ndarray.real / .imag / .conj() (np.real, np.imag and np.angle
run NumPy's own code over these, frontend/numpy_lib.py). On real dtypes as NumPy defines them:
conjugate is an elementwise copy in the dtype NumPy's ufunc loop gives (bool -> int8), `.real`
and `.conj()` are the array itself, `.imag` is zeros of the same dtype and shape (read-only in
NumPy). On complex dtypes `.real` / `.imag` are elementwise reads of one part (NumPy's are
writable views: writing through them is refused at trace time), conjugate is the ufunc
(frontend/ops_complex.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .views import broadcast_to


def conjugate(x: Any, /, out: Any = None, *, where: Any = True, dtype: Any = None,
              **kwargs: Any) -> T.Tracer:
    """np.conjugate(x) of a real Tracer: a copy, with the ufunc's result dtype; `out=`
    assigned as NumPy's ufuncs do (frontend/inplace.py)."""
    if where is not True or kwargs:
        raise UnsupportedError(f"np.conjugate(where=/{sorted(kwargs)}) is not supported "
                               f"by fusejit{T.where_msg()}")
    if out is not None:
        from .inplace import ufunc_into

        return ufunc_into(np.conjugate, (x,), out, conjugate(x, dtype=dtype))
    t = T.as_tracer(x)
    if t.dtype.kind == "c" or dtype is not None and np.dtype(dtype).kind == "c":
        from .ufuncs import apply_ufunc

        return apply_ufunc(np.conjugate, x, **({} if dtype is None else {"dtype": dtype}))
    want = np.conjugate(np.zeros(0, t.dtype), dtype=dtype).dtype  # NumPy's loop and errors
    node = (T.make_node("copy", [t.node], t.shape, t.dtype) if want == t.dtype
            else T.cast_node(t.node, want))
    return T.Tracer(node, scalar=t.ndim == 0)


_PART_READONLY = ("writing through {part} of a complex array is not supported by fusejit "
                  "(it is read as a copy of the part there); build the new array with "
                  "re + 1j * im instead")


def _part(t: T.Tracer, op: str) -> T.Tracer:
    dtype = np.dtype(np.float32 if t.dtype == np.complex64 else np.float64)
    out = T.Tracer(T.make_node(op, [t.node], t.shape, dtype), scalar=t.scalar)
    out.readonly = _PART_READONLY.format(part="." + op)
    return out


def real_of(t: T.Tracer) -> T.Tracer:
    """`t.real`: of a real array `t` itself, of a complex one its real parts."""
    return _part(t, "real") if t.dtype.kind == "c" else t


def imag_of(t: T.Tracer) -> T.Tracer:
    """`t.imag`: of a real array zeros of its dtype and shape, of a complex one its
    imaginary parts."""
    if t.dtype.kind == "c":
        return _part(t, "imag")
    zero = T.Tracer(T.const_node(np.zeros((), t.dtype)))
    z = broadcast_to(zero, t.shape) if t.shape else zero
    return T.Tracer(z.node, scalar=t.scalar)


# np.real and np.imag run NumPy's own code (`val.real`), frontend/numpy_lib.py.
UFUNCS = {np.conjugate: conjugate}
