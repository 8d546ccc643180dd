"""scipy.fft's dct, idct, dst and idst (and scipy.fftpack's) of traced arrays (installed by
frontend/scipy_api.py).

SciPy computes them with pocketfft in compiled code. Here each is the FFT of an extended
sequence (fusejit's np.fft, in double precision), values to rounding of SciPy's:
- DCT-I: the real FFT of the even extension x, x[-2:0:-1]; DCT-II: the FFT of x, x[::-1]
  turned by exp(-i pi k / 2N); DCT-III: 2N times the inverse FFT of w x exp(i pi n / 2N)
  (w = 1, 2, 2, ...); DCT-IV: twice the real part of exp(-i pi (2k+1) / 4N) times the FFT
  of x exp(-i pi n / 2N), zero-padded to 2N;
- DST-I: minus the imaginary part of the FFT of the odd extension 0, x, 0, -x[::-1];
  DST-II, -III, -IV from DCT-II, -III, -IV of x with alternating signs or reversed
  (DST-II(x)[k] = DCT-II((-1)^n x)[N-1-k], DST-III(x)[k] = (-1)^k DCT-III(x[::-1])[k], and
  so DST-IV from DCT-IV);
then SciPy's normalisation: 'backward' (None) none, 'forward' 1/M, 'ortho' 1/sqrt(M) (M = 2N,
2(N-1) for DCT-I, 2(N+1) for DST-I), and with `orthogonalize` SciPy's first/last element
factors of sqrt(2). An inverse is the transform of the inverse type (I, III, II, IV) with the
norm's direction swapped (scipy.fftpack's unnormalised inverses keep it). `n` pads or
truncates along `axis`; complex inputs transform their real and imaginary parts. The output
dtype and argument errors are SciPy's own, from its function on a stand-in. dctn, idctn,
dstn and idstn transform along each axis in turn, as SciPy does. Traced `n`, `type`,
`norm` are refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import tracer as T
from .numpy_lib import quietly

_INVERSE = {1: 1, 2: 3, 3: 2, 4: 4}
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _raw(kind: str, typ: int, x: Any) -> Any:
    """The unnormalised transform of float64 `x` along its last axis."""
    n = x.shape[-1]
    k = np.arange(n)
    if kind == "dst" and typ != 1:  # from the DCT of the same type
        sign = np.where(k % 2 == 1, -1.0, 1.0)
        if typ == 2:
            return np.flip(_raw("dct", 2, x * sign), -1)
        return _raw("dct", typ, np.flip(x, -1)) * sign
    if kind == "dst":  # type I
        zero = np.zeros(x.shape[:-1] + (1,))
        v = np.concatenate([zero, x, zero, -np.flip(x, -1)], axis=-1)
        return -np.imag(np.fft.fft(v, axis=-1))[..., 1:n + 1]
    if typ == 1:
        v = np.concatenate([x, np.flip(x[..., 1:-1], -1)], axis=-1)
        return np.real(np.fft.fft(v, axis=-1))[..., :n]
    if typ == 2:
        v = np.concatenate([x, np.flip(x, -1)], axis=-1)
        turn = np.exp(-1j * np.pi * k / (2 * n))
        return np.real(np.fft.fft(v, axis=-1)[..., :n] * turn)
    if typ == 3:
        w = np.where(k == 0, 1.0, 2.0) * np.exp(1j * np.pi * k / (2 * n))
        return np.real(np.fft.ifft(x * w, n=2 * n, axis=-1)[..., :n]) * (2 * n)
    turn = np.exp(-1j * np.pi * (2 * k + 1) / (4 * n))
    u = x * np.exp(-1j * np.pi * k / (2 * n))
    return 2.0 * np.real(turn * np.fft.fft(u, n=2 * n, axis=-1)[..., :n])


def _normalised(kind: str, typ: int, x: Any, norm: str, ortho: bool) -> Any:
    """SciPy's normalisation around the raw transform (see the module)."""
    n = x.shape[-1]
    m = 2 * (n - 1) if (kind, typ) == ("dct", 1) else 2 * (n + 1) if (kind, typ) == (
        "dst", 1) else 2 * n
    root2 = np.sqrt(2.0)
    k = np.arange(n)
    first, last = k == 0, k == n - 1
    if ortho:  # the input's scaled elements
        if (kind, typ) == ("dct", 1):
            x = x * np.where(first | last, root2, 1.0)
        elif (kind, typ) == ("dct", 3):
            x = x * np.where(first, root2, 1.0)
        elif (kind, typ) == ("dst", 3):
            x = x * np.where(last, root2, 1.0)
    y = _raw(kind, typ, x)
    if ortho:
        if (kind, typ) == ("dct", 1):
            y = y / np.where(first | last, root2, 1.0)
        elif (kind, typ) == ("dct", 2):
            y = y / np.where(first, root2, 1.0)
        elif (kind, typ) == ("dst", 2):
            y = y / np.where(last, root2, 1.0)
    if norm == "forward":
        y = y / float(m)
    elif norm == "ortho":
        y = y / np.sqrt(float(m))
    return y


def _transform(name: str, x: Any, type: int, n: Any, axis: int, norm: Any,
               orthogonalize: Any, module: str) -> Any:
    import importlib

    original = getattr(importlib.import_module(module), name)
    t = x if isinstance(x, T.Tracer) else np.asarray(x)
    for value in (type, n, norm, orthogonalize):
        if isinstance(value, T.Tracer):
            raise T.UnsupportedError(f"{module}.{name} with a traced type, n, norm or "
                                     f"orthogonalize is not supported by fusejit"
                                     f"{T.where_msg()}")
    extra = {} if module.endswith("fftpack") else {"orthogonalize": orthogonalize}
    want = np.asarray(quietly(original, np.zeros(t.shape, t.dtype), type, n, axis, norm,
                              **extra))  # SciPy's errors and dtype
    norm = "backward" if norm is None else norm
    ortho = (norm == "ortho") if orthogonalize is None else bool(orthogonalize)
    kind, typ = name.lstrip("i"), int(type)
    if name.startswith("i"):  # (scipy.fftpack's inverses are unnormalised: no swap)
        typ = _INVERSE[typ]
        norm = norm if module.endswith("fftpack") else _SWAP[norm]
    axis = normalize_axis_index(axis, t.ndim)
    v = np.moveaxis(t, axis, -1)
    if n is not None and int(n) != v.shape[-1]:  # pad with zeros or truncate
        n = int(n)
        if n < v.shape[-1]:
            v = v[..., :n]
        else:
            v = np.concatenate([v, np.zeros(v.shape[:-1] + (n - v.shape[-1],), v.dtype)],
                               axis=-1)
    if v.dtype.kind == "c":
        out = (_normalised(kind, typ, np.real(v).astype(np.float64), norm, ortho)
               + 1j * _normalised(kind, typ, np.imag(v).astype(np.float64), norm, ortho))
    else:
        out = _normalised(kind, typ, v.astype(np.float64), norm, ortho)
    return np.moveaxis(out, -1, axis).astype(want.dtype)


def _transform_n(name: str, x: Any, type: int, s: Any, axes: Any, norm: Any,
                 orthogonalize: Any, module: str) -> Any:
    """dctn & co.: the 1-d transform along each axis in turn (SciPy's), `s` its lengths."""
    import importlib

    original = getattr(importlib.import_module(module), name + "n")
    t = x if isinstance(x, T.Tracer) else np.asarray(x)
    extra = {} if module.endswith("fftpack") else {"orthogonalize": orthogonalize}
    quietly(original, np.zeros(t.shape, t.dtype), type, s, axes, norm, **extra)  # errors
    if axes is None:
        axes = list(range(t.ndim)) if s is None else list(range(t.ndim - len(s), t.ndim))
    axes = [axes] if np.ndim(axes) == 0 else list(axes)
    sizes = [None] * len(axes) if s is None else (
        [s] * len(axes) if np.ndim(s) == 0 else list(s))
    for axis, n in zip(axes, sizes):
        t = _transform(name, t, type, n, axis, norm, orthogonalize, module)
    return t


def _entry(name: str, module: str) -> Any:
    def fn(x: Any, type: int = 2, n: Any = None, axis: int = -1, norm: Any = None,
           overwrite_x: bool = False, workers: Any = None, orthogonalize: Any = None) -> Any:
        return _transform(name, x, type, n, axis, norm, orthogonalize, module)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{module}.{name} of a traced array (see the module)."
    return fn


def _entry_n(name: str, module: str) -> Any:
    fftpack = module.endswith("fftpack")

    def fn(x: Any, type: int = 2, s: Any = None, axes: Any = None, norm: Any = None,
           overwrite_x: bool = False, workers: Any = None, *, orthogonalize: Any = None,
           shape: Any = None) -> Any:
        return _transform_n(name, x, type, shape if fftpack else s, axes, norm,
                            orthogonalize, module)

    fn.__name__ = fn.__qualname__ = name + "n"
    fn.__doc__ = f"{module}.{name}n of a traced array (see the module)."
    return fn


dct = _entry("dct", "scipy.fft")
idct = _entry("idct", "scipy.fft")
dst = _entry("dst", "scipy.fft")
idst = _entry("idst", "scipy.fft")
dctn = _entry_n("dct", "scipy.fft")
idctn = _entry_n("idct", "scipy.fft")
dstn = _entry_n("dst", "scipy.fft")
idstn = _entry_n("idst", "scipy.fft")


class FFTPACK:
    """scipy.fftpack's dct, idct, dst, idst and their n-d forms (no `orthogonalize`:
    SciPy's default; `shape` for scipy.fft's `s`)."""

    dct = staticmethod(_entry("dct", "scipy.fftpack"))
    idct = staticmethod(_entry("idct", "scipy.fftpack"))
    dst = staticmethod(_entry("dst", "scipy.fftpack"))
    idst = staticmethod(_entry("idst", "scipy.fftpack"))
    dctn = staticmethod(_entry_n("dct", "scipy.fftpack"))
    idctn = staticmethod(_entry_n("idct", "scipy.fftpack"))
    dstn = staticmethod(_entry_n("dst", "scipy.fftpack"))
    idstn = staticmethod(_entry_n("idst", "scipy.fftpack"))
