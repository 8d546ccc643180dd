"""np.fft of traced arrays: NumPy's own Python code (argument checks, `n`, `axis`, `s`/`axes`,
`norm` and its scale factor, dtypes, `out=`) over transforms written as traced operations.

Every np.fft function is Python code in numpy/fft/_pocketfft.py that ends in one of five
gufuncs of pocketfft (`fft`, `ifft`, `rfft_n_even`, `rfft_n_odd`, `irfft`), called with the
input, a scale factor and an `out` array of the result's shape. The functions are traced through
NumPy's code (frontend/numpy_lib.py `numpy_code`), and the gufuncs are `UFUNCS` handlers here:
a transform along one axis, computed in the gufunc's loop dtype (NumPy's `resolve_dtypes`:
float16 and integers in complex128, float32 in complex64) and written into `out`.

The transform is a discrete Fourier transform along the last axis, built from operations that
fusejit already fuses, differentiates and renders for C and CUDA (no new op): a length up to
LEAF is a product with its DFT matrix (a constant); a longer one is split n = n1 * n2 (n1 the
largest divisor <= sqrt(n)) into DFTs of length n1 over the columns, a twiddle product and DFTs
of length n2 over the rows (the "four-step" FFT, recursively), O(n (n1 + n2)) work on matrix
products; a prime length beyond LEAF goes through Bluestein's chirp convolution with
power-of-two transforms. Constants are computed in float64 from exactly reduced angles
(j k mod n) and rounded once to the loop dtype. A real transform of even length n packs its
values in pairs into one complex transform of length n / 2 (rfft: z = x_even + i x_odd, then
the halves' spectra separated; irfft the reverse); an odd one computes the complex transform
and keeps its first n // 2 + 1 terms (rfft), or extends the half spectrum to the whole
Hermitian one and keeps the real part (irfft). As in pocketfft, irfft ignores the imaginary
parts of the zero and Nyquist terms, and rfft's are exactly +0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.fft import _pocketfft_umath as pfu

from ..errors import UnsupportedError
from . import tracer as T
from .numpy_lib import numpy_code

LEAF = 64  # lengths up to this: one product with the DFT matrix; longer primes: Bluestein


def _turns(r: np.ndarray, n: int, sign: int) -> np.ndarray:
    """exp(sign 2 pi i r / n) in complex128 for integers 0 <= r < n: exactly 1, i, -1, -i at
    the quarter turns (a real input's zero and Nyquist terms come out exactly real)."""
    w = np.exp((sign * 2.0 * np.pi / n) * 1j * r)
    quarter = (4 * r) % n == 0
    exact = np.array([1, sign * 1j, -1, -sign * 1j])[(4 * r // n) % 4]
    return np.where(quarter, exact, w)


def _roots(n: int, sign: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """exp(sign 2 pi i rows cols / n), the angle reduced exactly first."""
    return _turns(np.multiply.outer(rows.astype(np.int64), cols.astype(np.int64)) % n, n, sign)


def _split(n: int) -> int | None:
    """The largest divisor of n in [2, sqrt(n)], or None (n prime)."""
    d = int(np.sqrt(n))
    while d >= 2:
        if n % d == 0:
            return d
        d -= 1
    return None


def _dft(x: Any, n: int, sign: int, dtype: np.dtype) -> Any:
    """The unscaled DFT of complex `x` (..., n) along its last axis: sum_j x_j w^(sign j k)."""
    if n == 1:
        return x
    if n <= LEAF:
        k = np.arange(n)
        return x @ _roots(n, sign, k, k).astype(dtype)
    n1 = _split(n)
    if n1 is None:
        return _bluestein(x, n, sign, dtype)
    n2 = n // n1
    batch = x.shape[:-1]
    # x[j1 n2 + j2] -> X[k1 + n1 k2] = sum_j2 w2^(j2 k2) w^(j2 k1) sum_j1 w1^(j1 k1) x[j1, j2]
    y = np.swapaxes(x.reshape(batch + (n1, n2)), -1, -2)  # (..., j2, j1)
    y = _dft(y, n1, sign, dtype) * _roots(n, sign, np.arange(n2), np.arange(n1)).astype(dtype)
    y = _dft(np.swapaxes(y, -1, -2), n2, sign, dtype)  # (..., k1, k2)
    return np.swapaxes(y, -1, -2).reshape(batch + (n,))  # index k1 + n1 k2


def _bluestein(x: Any, n: int, sign: int, dtype: np.dtype) -> Any:
    """The DFT of a prime length n as a circular convolution of length m (a power of two)
    with the chirp w_j = exp(sign pi i j^2 / n): X_k = w_k sum_j (x_j w_j) conj(w_(k-j))."""
    m = 1 << (2 * n - 2).bit_length()
    j = np.arange(n, dtype=np.int64)
    chirp = _turns((j * j) % (2 * n), 2 * n, sign)
    kernel = np.zeros(m, np.complex128)
    kernel[:n] = np.conj(chirp)
    kernel[m - n + 1:] = np.conj(chirp[1:])[::-1]
    spectrum = np.fft.fft(kernel)  # a constant of the program (NumPy's own FFT, float64)
    a = _resized(x * chirp.astype(dtype), m, dtype)
    conv = _dft(_dft(a, m, -1, dtype) * spectrum.astype(dtype), m, 1, dtype)
    return conv[..., :n] * (chirp / m).astype(dtype)


def _resized(x: Any, n: int, dtype: np.dtype) -> Any:
    """`x` cut or zero-padded to length n along its last axis (as pocketfft copies it in)."""
    have = x.shape[-1]
    if have >= n:
        return x[..., :n]
    zeros = np.zeros(x.shape[:-1] + (n - have,), dtype)
    return np.concatenate([x, zeros], axis=-1)


def _gufunc(kind: str):
    def handler(a: Any, fct: Any, axes: Any = None, out: Any = None, **kwargs: Any) -> Any:
        if kwargs or axes is None or out is None or len(out) != 1 or out[0] is None:
            raise UnsupportedError(f"np.fft's {kind} gufunc called other than as np.fft's "
                                   f"own code calls it is not supported{T.where_msg()}")
        dest = out[0]
        axis = axes[0][0] % max(dest.ndim, 1)
        spec = int if type(fct) is int else float if type(fct) is float else np.asarray(
            fct).dtype
        ufunc, a = getattr(pfu, kind), T.array_operand(a)
        loop = ufunc.resolve_dtypes((a.dtype, spec, dest.dtype))  # NumPy's loop, or its error
        if not np.can_cast(loop[2], dest.dtype, "same_kind"):  # out= of another kind
            ufunc(np.zeros(1, a.dtype), fct, axes=[(0,), (), (0,)],
                  out=np.empty(dest.shape[axis], dest.dtype))  # raises NumPy's error
        dest[...] = _transform(kind, a, loop[1].type(fct), axis, dest.shape[axis], loop[0],
                               loop[2])
        return dest

    handler.__name__ = kind
    return handler


def _edges(n_out: int, n: int) -> np.ndarray:
    """The zero and (n even) Nyquist terms of a half spectrum of n_out = n // 2 + 1 terms."""
    edges = np.arange(n_out) == 0
    if n % 2 == 0:
        edges[-1] = True
    return edges


def _rfft_packed(x: Any, n: int, ctype: np.dtype) -> Any:
    """The half spectrum (n // 2 + 1 terms) of real `x` (..., n), n even, from one complex
    DFT of length m = n / 2 of z = x_even + i x_odd: with Z_k its terms and Z'_k =
    conj(Z_(m - k) mod m), X_k = (Z_k + Z'_k) / 2 - i e^(-2 pi i k / n) (Z_k - Z'_k) / 2."""
    m = n // 2
    pairs = x.reshape(x.shape[:-1] + (m, 2))
    big = _dft(pairs[..., 0] + pairs[..., 1] * 1j, m, -1, ctype)
    first = big[..., :1]
    zk = np.concatenate([big, first], axis=-1)
    zr = np.conj(np.concatenate([first, big[..., :0:-1], first], axis=-1))
    twist = (-0.5j * _turns(np.arange(m + 1), n, -1)).astype(ctype)
    return (zk + zr) * np.asarray(0.5, ctype) + (zk - zr) * twist


def _irfft_packed(half: Any, n: int, ctype: np.dtype) -> Any:
    """The unscaled inverse (length n, even) of the half spectrum `half` (..., n / 2 + 1),
    the inverse of _rfft_packed: Z_k = (X_k + X'_k) + i e^(2 pi i k / n) (X_k - X'_k) with
    X'_k = conj(X_(m - k)), one inverse DFT of length m = n / 2, its real and imaginary parts
    interleaved."""
    m = n // 2
    xr = np.conj(half[..., ::-1])
    twist = (1j * _turns(np.arange(m), n, 1)).astype(ctype)
    big = (half[..., :m] + xr[..., :m]) + (half[..., :m] - xr[..., :m]) * twist
    z = _dft(big, m, 1, ctype)
    return np.stack([np.real(z), np.imag(z)], axis=-1).reshape(z.shape[:-1] + (n,))


def _transform(kind: str, a: Any, scale: np.generic, axis: int, n_out: int, in_dtype: np.dtype,
               out_dtype: np.dtype) -> Any:
    """pocketfft's gufunc `kind` of `a` along `axis`, `n_out` results, times `scale` (a scalar
    of the loop's real dtype)."""
    ctype = np.result_type(in_dtype, np.complex64)
    rtype = np.dtype(ctype.char.lower())
    x = np.moveaxis(T.array_operand(a), axis, -1)
    if kind in ("fft", "ifft"):
        y = _dft(_resized(x.astype(ctype), n_out, ctype), n_out, -1 if kind == "fft" else 1,
                 ctype)
    elif kind in ("rfft_n_even", "rfft_n_odd"):
        n = 2 * (n_out - 1) if kind == "rfft_n_even" else 2 * n_out - 1
        if n % 2 == 0:
            y = _rfft_packed(_resized(x.astype(rtype), n, rtype), n, ctype)
        else:
            y = _dft(_resized(x.astype(ctype), n, ctype), n, -1, ctype)[..., :n_out]
        # pocketfft's real transform gives the zero and Nyquist terms an imaginary part of
        # exactly +0 (the complex one's rounding can leave -0, which ihfft's conj shows)
        y = np.where(_edges(n_out, n), np.real(y).astype(ctype), y)
    else:  # irfft: the half spectrum's first n // 2 + 1 terms, whose zero and Nyquist terms'
        # imaginary parts pocketfft ignores, as the Hermitian extension's real part does
        half = _resized(x.astype(ctype), n_out // 2 + 1, ctype)
        if n_out % 2 == 0:
            half = np.where(_edges(n_out // 2 + 1, n_out), np.real(half).astype(ctype), half)
            y = _irfft_packed(half, n_out, ctype)
        else:
            mirrored = np.conj(half[..., 1:(n_out + 1) // 2][..., ::-1])
            y = np.real(_dft(np.concatenate([half, mirrored], axis=-1), n_out, 1, ctype))
    if scale != 1:
        y = y * scale
    return np.moveaxis(y.astype(out_dtype), -1, axis)


UFUNCS = {getattr(pfu, k): _gufunc(k)
          for k in ("fft", "ifft", "rfft_n_even", "rfft_n_odd", "irfft")}

# The np.fft functions that take arrays, each traced through NumPy's own code.
HANDLERS = {f: numpy_code(f) for f in (
    np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft,
    np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft2, np.fft.irfft2,
    np.fft.rfftn, np.fft.irfftn)}
