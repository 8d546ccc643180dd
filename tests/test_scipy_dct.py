"""scipy.fft's and scipy.fftpack's dct, idct, dst, idst of traced arrays
(frontend/scipy_dct.py): every type, norm and orthogonalize against SciPy, to rounding."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import fusejit

sf = pytest.importorskip("scipy.fft")
fp = pytest.importorskip("scipy.fftpack")
RNG = np.random.default_rng(0)
COMBOS = list(itertools.product(["dct", "idct", "dst", "idst"], [1, 2, 3, 4],
                                [None, "ortho", "forward", "backward"], [None, True, False]))


def _close(got, want, rtol: float = 1e-12) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * float(np.max(np.abs(want))))


@pytest.mark.parametrize("kind", ["dct", "idct", "dst", "idst"])
def test_every_type_norm_and_orthogonalize(kind: str) -> None:
    """scipy.fft: types 1-4, the four norms, orthogonalize None/True/False, lengths 2, 3, 5
    and 8; scipy.fftpack: its norms (None, 'ortho'; unnormalised inverses)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for (k, typ, norm, orth), n in itertools.product(
                [c for c in COMBOS if c[0] == kind], [2, 3, 5, 8]):
            x = RNG.standard_normal((3, n))

            def f(x, k=k, typ=typ, norm=norm, orth=orth):
                return getattr(sf, k)(x, type=typ, norm=norm, orthogonalize=orth)

            try:
                want = f(x)
            except ValueError:  # (SciPy's: DCT-I of fewer than 2 points and such)
                with pytest.raises(ValueError):
                    fusejit.jit(f)(x)
                continue
            _close(fusejit.jit(f)(x), want)
            if norm in (None, "ortho") and orth is None:
                def g(x, k=k, typ=typ, norm=norm):
                    return getattr(fp, k)(x, type=typ, norm=norm)

                _close(fusejit.jit(g)(x), g(x))


@pytest.mark.parametrize("name", ["axis 0", "padded n", "truncated n, ortho", "float32",
                                  "complex", "integers"])
def test_axes_lengths_and_dtypes(name: str) -> None:
    x = RNG.standard_normal((4, 6))
    f = {"axis 0": lambda x: sf.dct(x, axis=0),
         "padded n": lambda x: sf.dst(x, n=9),
         "truncated n, ortho": lambda x: sf.idct(x, n=4, axis=0, norm="ortho"),
         "float32": lambda x: sf.dct(x.astype(np.float32)),
         "complex": lambda x: sf.dst(x + 1j * x[::-1], type=2),
         "integers": lambda x: sf.dct((x * 10).astype(np.int32), type=4)}[name]
    want = f(x)
    _close(fusejit.jit(f)(x), want, 1e-5 if want.dtype == np.float32 else 1e-12)


def test_round_trip_and_errors() -> None:
    x = RNG.standard_normal(16)
    f = fusejit.jit(lambda x: sf.idct(sf.dct(x, norm="ortho"), norm="ortho"))
    np.testing.assert_allclose(f(x), x, rtol=1e-13, atol=1e-14)
    with pytest.raises(ValueError):
        fusejit.jit(lambda x: sf.dct(x, type=5))(x)
    with pytest.raises(ValueError):
        fusejit.jit(lambda x: sf.dct(x, norm="bogus"))(x)


@pytest.mark.parametrize("name", ["axes, ortho", "s and axes", "type 1, every axis",
                                  "fftpack shape", "idstn forward", "s alone", "round trip"])
def test_n_dimensional(name: str) -> None:
    x = RNG.standard_normal((4, 5, 6))
    f = {"axes, ortho": lambda x: sf.dctn(x, axes=(1, 2), norm="ortho"),
         "s and axes": lambda x: sf.dctn(x, s=(3, 7), axes=(0, 2)),
         "type 1, every axis": lambda x: sf.dctn(x, type=1),
         "fftpack shape": lambda x: fp.dctn(x, shape=(3, 7), axes=(0, 2)),
         "idstn forward": lambda x: sf.idstn(x, type=3, norm="forward"),
         "s alone": lambda x: sf.dctn(x, s=(4, 4)),
         "round trip": lambda x: sf.idctn(sf.dctn(x, norm="ortho"), norm="ortho")}[name]
    _close(fusejit.jit(f)(x), f(x))


def test_cuda_emulated(monkeypatch: pytest.MonkeyPatch) -> None:
    """dct/dst on the CUDA backend (its FFT kernels, run on the CPU by the emulator)."""
    import cuda_fake

    cuda_fake.install(monkeypatch, emulate=True)
    x = RNG.standard_normal((3, 8))
    for f in (lambda x: sf.dct(x, norm="ortho"), lambda x: sf.idst(x, type=1),
              lambda x: sf.dctn(x, type=4)):
        _close(fusejit.jit(f, backend="cuda")(x), f(x))
