"""scipy.interpolate's PPoly and subclasses (CubicSpline, PchipInterpolator,
Akima1DInterpolator) evaluated at traced points (frontend/scipy_interp.py): SciPy's bits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fusejit
from fusejit import UnsupportedError

si = pytest.importorskip("scipy.interpolate")

XS = np.linspace(0, 10, 11)
Y = np.sin(XS)
Y2 = np.stack([np.sin(XS), np.cos(XS)], axis=1)
CS = si.CubicSpline(XS, Y)
CS2 = si.CubicSpline(XS, Y2)
PERIODIC = si.CubicSpline(XS, np.append(Y[:-1], Y[0]), bc_type="periodic")
PCHIP = si.PchipInterpolator(XS, Y)
AKIMA = si.Akima1DInterpolator(XS, Y)
AXIS1 = si.CubicSpline(XS, Y2.T, axis=1)
POINTS = np.array([-1.0, 0.0, 0.5, 3.3, 10.0, 11.5, np.nan])
GRID = np.linspace(-2, 12, 12).reshape(3, 4)

CASES = {
    "CubicSpline": (lambda t: CS(t), POINTS),
    "first derivative": (lambda t: CS(t, 1), POINTS),
    "second derivative": (lambda t: CS(t, nu=2), POINTS),
    "vector values": (lambda t: CS2(t), POINTS),
    "periodic": (lambda t: PERIODIC(t), POINTS),
    "no extrapolation": (lambda t: CS(t, extrapolate=False), POINTS),
    "pchip": (lambda t: PCHIP(t), POINTS),
    "akima": (lambda t: AKIMA(t), POINTS),
    "axis 1": (lambda t: AXIS1(t), POINTS),
    "2-d points": (lambda t: CS(t), GRID),
    "derivative object": (lambda t: CS.derivative()(t), POINTS),
    "PPoly": (lambda t: si.PPoly(CS.c, CS.x)(t), POINTS),
    "float32 points": (lambda t: CS(t), POINTS.astype(np.float32)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_scipys_bits(name: str) -> None:
    f, x = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = f(x)
        got = fusejit.jit(f)(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True)


def test_fused_and_refused() -> None:
    f = fusejit.jit(lambda t: np.exp(CS(t * 2.0)).sum())
    x = np.linspace(0, 5, 50)
    assert f(x) == pytest.approx(np.exp(CS(x * 2.0)).sum(), rel=1e-14)
    with pytest.raises(UnsupportedError, match="antiderivative"):
        fusejit.jit(lambda t: CS(t, -1))(x)
    with pytest.raises(fusejit.TraceError):  # a spline of traced data: SciPy's checks
        fusejit.jit(lambda y: si.CubicSpline(XS, y)(2.5))(Y)


XN = np.array([0.5, 3.3, 9.5, 0.0, 10.0])
XO = np.array([-1.0, 3.3, 11.0])
INTERP1D = {
    "linear": (si.interp1d(XS, Y), XN),
    "linear, 2-d values, axis 1": (si.interp1d(XS, Y2.T), XN),
    "linear, NaN outside": (si.interp1d(XS, Y, bounds_error=False), XO),
    "linear, fill values below and above": (
        si.interp1d(XS, Y, bounds_error=False, fill_value=(-5, 5)), XO),
    "linear extrapolate": (si.interp1d(XS, Y, fill_value="extrapolate"), XO),
    "nearest": (si.interp1d(XS, Y, kind="nearest"), XN),
    "nearest-up": (si.interp1d(XS, Y, kind="nearest-up", bounds_error=False), XO),
    "previous": (si.interp1d(XS, Y, kind="previous"), XN),
    "next, extrapolate": (si.interp1d(XS, Y, kind="next", fill_value="extrapolate"), XO),
    "float32": (si.interp1d(XS.astype(np.float32), Y.astype(np.float32)), XN),
    "2-d points": (si.interp1d(XS, Y), XN[:4].reshape(2, 2)),
}


@pytest.mark.parametrize("name", list(INTERP1D))
def test_interp1d_at_traced_points(name: str) -> None:
    f, x = INTERP1D[name]
    want, got = f(x), fusejit.jit(lambda t: f(t))(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True)


def test_interp1d_errors() -> None:
    f = INTERP1D["linear"][0]
    with pytest.raises(ValueError, match="interpolation range"):
        fusejit.jit(lambda t: f(t))(XO)  # when the program runs, as SciPy's
    cubic = si.interp1d(XS, Y, kind="cubic")
    with pytest.raises(UnsupportedError, match="BSpline"):
        fusejit.jit(lambda t: cubic(t))(XN)


_RNG = np.random.default_rng(5)
_XS = np.sort(_RNG.random(20)) * 10
_V = _RNG.standard_normal(20)


@pytest.mark.parametrize("kind", ["linear", "nearest", "nearest-up", "previous", "next"])
def test_interp1d_built_from_traced_data(kind: str) -> None:
    """interp1d(x, traced y) and interp1d(traced x, traced y): SciPy's own constructor and
    evaluation on traced arrays (its `array` copy takes them), at constant or traced points,
    unsorted x, 2-d values along an axis, fill values and extrapolation."""
    from conftest import run_both

    q = np.linspace(-1, 11, 17)
    run_both(lambda y: si.interp1d(_XS, y, kind=kind)(np.linspace(_XS[0], _XS[-1], 9)), _V)
    run_both(lambda x, y, q: si.interp1d(x, y, kind=kind, bounds_error=False,
                                         fill_value=(-1.0, 2.0))(q), _XS, _V, q)
    run_both(lambda x, y, q: si.interp1d(x, np.stack([y, 2 * y]), kind=kind, axis=1,
                                         fill_value="extrapolate")(q), _XS[::-1].copy(), _V, q)
