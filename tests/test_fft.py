"""np.fft of traced arrays (frontend/fft.py): every function against NumPy's pocketfft over
lengths with small, large and prime factors (four-step splits, DFT-matrix leaves, Bluestein),
real and complex transforms, `n` cutting and padding, axes, `norm`, dtypes (float16 and integers
computed in complex128 as NumPy's loop, float32 in complex64), the n-D functions with `s`/`axes`,
`out=`, NumPy's exceptions, gradients, and a hypothesis property over all of it.
"""

from __future__ import annotations

import shutil

import cuda_fake
import numpy as np
import pytest
from conftest import assert_same, examples, run_both
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ to emulate with")
RNG = np.random.default_rng(7)


def _close(got, want) -> None:
    """FFT errors grow with the transform's norm, not each element's size: an absolute
    tolerance of a few ulps of the largest result (pocketfft and fusejit round differently,
    and the sign of a zero imaginary part is the rounding's: README, complex numbers)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.size == 0:
        return
    eps = np.finfo(want.dtype).eps
    scale = max(float(np.abs(want).max()), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=64 * eps * scale)


def _both(f, *args):
    """jit(f) against f; a tuple of results (several transforms in one compile) each."""
    got, want = fusejit.jit(f)(*args), f(*args)
    for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,))),
                    strict=True):
        _close(g, w)


def _complex(shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


# lengths: 1, powers of two, DFT-matrix leaves (<= LEAF = 64), four-step composites, primes
# below and above LEAF (Bluestein)
LENGTHS = [1, 2, 3, 5, 8, 12, 16, 17, 30, 64, 67, 97, 100, 128, 210, 509, 1024, 1031]


@pytest.mark.parametrize("n", LENGTHS)
def test_fft_and_ifft_of_each_length(n: int) -> None:
    _both(lambda x: (np.fft.fft(x), np.fft.ifft(x)), _complex((3, n)))


@pytest.mark.parametrize("n", [1, 2, 7, 8, 33, 100, 257])
def test_real_transforms(n: int) -> None:
    r = RNG.standard_normal((2, n))
    _both(lambda x, h: (np.fft.rfft(x), np.fft.irfft(h, n), np.fft.ihfft(x)), r,
          np.fft.rfft(r))
    if n > 1:
        _both(lambda h: (np.fft.irfft(h), np.fft.hfft(h)), np.fft.rfft(r))


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_norms(norm) -> None:
    def f(a):
        return (np.fft.fft(a, norm=norm), np.fft.ifft(a, norm=norm),
                np.fft.rfft(a.real, norm=norm), np.fft.ihfft(a.real, norm=norm),
                np.fft.irfft(a, 30, norm=norm), np.fft.hfft(a, 31, norm=norm))

    _both(f, _complex((4, 30)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64,
                                   np.int8, np.int64, np.uint16, np.bool_])
def test_dtypes_as_numpys_loops(dtype) -> None:
    x = (RNG.standard_normal((3, 24)) * 4).astype(dtype) if dtype != np.complex64 else (
        _complex((3, 24), np.complex64))
    _both(lambda a: (np.fft.fft(a, norm="ortho"),
                     np.fft.rfft(a) if a.dtype.kind != "c" else np.fft.irfft(a)), x)


def test_n_cut_and_padded_along_any_axis() -> None:
    x = RNG.standard_normal((4, 6, 10))
    _both(lambda a: tuple(f(a, n=n, axis=axis) for n in (1, 3, 20) for axis in (0, -2)
                          for f in (np.fft.fft, np.fft.rfft)), x)
    _both(lambda h: tuple(np.fft.irfft(h, n=n, axis=axis) for n in (5, 10, 30)
                          for axis in (-1, 0)), np.fft.rfft(x))


def test_n_dimensional_functions() -> None:
    x = RNG.standard_normal((4, 6, 10))
    c = _complex((4, 6, 10))

    def complex_in(a):
        return (np.fft.fft2(a), np.fft.ifft2(a), np.fft.fftn(a), np.fft.ifftn(a, axes=(0, 2)),
                np.fft.fftn(a, s=(3, 8), axes=(1, 2)), np.fft.fft2(a, s=(5, -1)),
                np.fft.fftn(a, axes=(1, 1)))

    _both(complex_in, x)
    _both(complex_in, c)
    _both(lambda a, h, h2: (np.fft.rfftn(a), np.fft.rfft2(a, s=(4, 7)),
                            np.fft.irfftn(h, s=(4, 6, 10), axes=(0, 1, 2)), np.fft.irfft2(h2)),
          x, np.fft.rfftn(x), np.fft.rfft2(x))
    _both(lambda a: np.fft.irfftn(a), c)


def test_zero_size_batches() -> None:
    _both(lambda a: np.fft.fft(a), np.ones((0, 8)))
    _both(lambda a: np.fft.rfft(a, axis=0), np.ones((6, 0)))
    _both(lambda a: np.fft.irfft(a, 10, axis=0), np.ones((6, 0), complex))


def test_fused_with_what_surrounds_it() -> None:
    """A power spectrum, a filter and a convolution by the convolution theorem."""
    x = RNG.standard_normal((8, 64)).astype(np.float32)
    k = RNG.standard_normal(64).astype(np.float32)
    _both(lambda a: np.abs(np.fft.rfft(a * np.hanning(64).astype(np.float32))) ** 2, x)
    _both(lambda a: np.fft.irfft(np.fft.rfft(a) * (np.arange(33) < 10), 64), x)
    _both(lambda a, b: np.fft.irfft(np.fft.rfft(a, 128) * np.fft.rfft(b, 128), 128)[:, :127],
          x, k)
    _both(lambda a: np.fft.fftshift(np.fft.fft([a[0], a[1]]), axes=-1), x)


def test_out_writes_the_argument() -> None:
    def f(a, o):
        np.fft.fft(a, out=o)
        return o.sum()

    x = _complex((3, 16))
    got, want = np.zeros((3, 16), complex), np.zeros((3, 16), complex)
    assert_same(fusejit.jit(f)(x, got), f(x, want), rtol=1e-12)
    _close(got, want)


@pytest.mark.parametrize("f", [
    lambda a: np.fft.fft(a, n=0), lambda a: np.fft.fft(a, norm="bad"),
    lambda a: np.fft.fft(a, axis=5), lambda a: np.fft.irfft(a[:, :1]),
    lambda a: np.fft.fftn(a, s=(3,), axes=(0, 1)), lambda a: np.fft.fft(a[0, 0]),
    lambda a: np.fft.rfft(a.astype(complex)),
], ids=["n=0", "norm", "axis", "irfft of one term", "s and axes", "0-d", "rfft complex"])
def test_numpys_exceptions(f) -> None:
    run_both(f, RNG.standard_normal((4, 6)))


def test_out_of_the_wrong_dtype_raises_numpys_error() -> None:
    def f(a, o):
        return np.fft.fft(a, out=o)

    with pytest.raises(TypeError) as numpy_error:
        f(np.ones(4), np.zeros(4))
    with pytest.raises(type(numpy_error.value)):
        fusejit.jit(f)(np.ones(4), np.zeros(4))


@needs_gxx
def test_on_the_cuda_backend_as_generated(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same traced operations rendered as CUDA and run on the CPU (tests/cuda_emu.py):
    a four-step length, a Bluestein one, the packed real transforms, float32 and float64."""
    cuda_fake.install(monkeypatch, emulate=True)

    def f(c, r):
        return (np.fft.fft(c), np.fft.ifft(c[:, :67], norm="ortho"), np.fft.rfft(r),
                np.fft.irfft(np.fft.rfft(r) * 0.5, 100), np.fft.fft2(r[:, :12]))

    jf = fusejit.jit(f, backend="cuda")
    for dt in (np.float64, np.float32):
        c, r = _complex((3, 96), np.result_type(dt, np.complex64)), RNG.standard_normal(
            (3, 100)).astype(dt)
        for got, want in zip(jf(c, r), f(c, r), strict=True):
            _close(got, want)


def test_gradients_are_refused_by_name() -> None:
    """fusejit.grad differentiates real values only: a transform's complex result is refused
    with the line that makes it (complex autodiff is not built)."""
    def loss(a):
        return np.sum(np.abs(np.fft.rfft(a)) ** 2)

    with pytest.raises(fusejit.errors.UnsupportedError, match="test_fft.py.*complex"):
        fusejit.grad(loss)(RNG.standard_normal(12))


@settings(max_examples=examples(25), deadline=None)
@given(shape=st.lists(st.integers(1, 12), min_size=1, max_size=3),
       kind=st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]),
       n=st.one_of(st.none(), st.integers(1, 20)), axis=st.integers(-3, 2),
       norm=st.sampled_from([None, "ortho", "forward"]),
       dtype=st.sampled_from([np.float32, np.float64, np.complex64, np.complex128]),
       data=st.data())
def test_property_one_dimensional(shape, kind, n, axis, norm, dtype, data) -> None:
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    x = x.astype(dtype)
    if data.draw(st.booleans()) and x.ndim > 1:
        x = x.swapaxes(0, -1)  # non-contiguous
    f = getattr(np.fft, kind)

    def g(a):
        return f(a, n=n, axis=axis, norm=norm)

    try:
        want = g(x)
    except Exception as e:  # noqa: BLE001 - the compiled function must raise the same type
        with pytest.raises(type(e)):
            fusejit.jit(g)(x)
        return
    _close(fusejit.jit(g)(x), want)
