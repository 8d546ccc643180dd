"""Complex scans against NumPy: np.cumsum, np.cumprod, np.nancumsum, np.nancumprod,
np.cumulative_sum/prod and `ufunc.accumulate` of complex64/complex128 along every axis, over
shapes (0-d, zero-size, broadcast views), layouts and special values: sums bit for bit
(NumPy's sequential fold), products to float tolerance (NumPy's own accumulate rounds a
product with or without fma depending on the layout); one long vector (the blocked parallel
scan) to float tolerance."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_same, assert_unmodified, examples, match_mask, on_cuda, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st
from test_complex import CDTYPES, quiet_numpy, special_grid

import fusejit

SCANS = {
    "cumsum": lambda z, ax: np.cumsum(z, axis=ax),
    "cumprod": lambda z, ax: np.cumprod(z, axis=ax),
    "nancumsum": lambda z, ax: np.nancumsum(z, axis=ax),
    "nancumprod": lambda z, ax: np.nancumprod(z, axis=ax),
    "method": lambda z, ax: z.cumsum(axis=ax) * 2,
    "subtract_acc": lambda z, ax: np.subtract.accumulate(z, axis=0 if ax is None else ax),
    "divide_acc": lambda z, ax: np.divide.accumulate(z, axis=0 if ax is None else ax),
    "power_acc": lambda z, ax: np.power.accumulate(z / 4, axis=0 if ax is None else ax),
    "cumulative_sum": lambda z, ax: np.cumulative_sum(z, axis=ax, include_initial=True),
    "cumulative_prod": lambda z, ax: np.cumulative_prod(z, axis=ax),
    "to_complex128": lambda z, ax: np.cumsum(z, axis=ax, dtype=np.complex128),
}


def _compiled(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fusejit.jit(f)(*args)


def _normwise(got: np.ndarray, want: np.ndarray, path: str) -> None:
    """A CUDA run's complex products (nvcc contracts them into fma as it likes) and powers
    (exp(b log a) over the device's log, atan2 and exp) are within a few ulp of |result|:
    a part much smaller than the other cancels, so they are compared normwise; NaN and Inf
    parts where NumPy has them."""
    assert got.dtype == want.dtype and got.shape == want.shape, path
    eps = np.finfo(want.real.dtype).eps
    with np.errstate(all="ignore"):
        near = np.abs(got - want) <= 64 * eps * np.abs(want)
    ok = near | match_mask(got, want)
    assert ok.all(), f"{path}: {got[~ok][:4]} vs NumPy's {want[~ok][:4]}"


shapes = st.sampled_from([(5,), (0,), (3, 4), (4, 0), (2, 3, 5), (1, 6), (6, 1)])


@settings(max_examples=examples(20), deadline=None)
@given(shapes, st.sampled_from(CDTYPES), st.sampled_from(["c", "transposed", "reversed"]),
       st.data())
def test_scans_bit_for_bit(shape: tuple[int, ...], dtype: np.dtype, how: str,
                           data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 31)))
    z = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if z.size:
        z.flat[data.draw(st.integers(0, z.size - 1))] = complex(np.nan, 1)
    if how == "transposed":
        z = np.ascontiguousarray(z.T).T
    elif how == "reversed":
        z = z[::-1]
    axes = [None] + list(range(-z.ndim, z.ndim))
    ax = data.draw(st.sampled_from(axes))
    names = [n for n in SCANS if ax is not None or not n.endswith("_acc")]
    if ax is None and z.ndim > 1:
        names.remove("cumulative_sum")
        names.remove("cumulative_prod")  # NumPy requires axis for more than 1-D

    def f(z):
        return {n: SCANS[n](z, ax) for n in names}

    snap = snapshot((z,))
    got, want = _compiled(f, z), quiet_numpy(f, z)
    for n in names:  # products: NumPy rounds some with fma, depending on the layout
        exact = "prod" not in n and "power" not in n
        if not exact and on_cuda():
            _normwise(got[n], want[n], n)
            continue
        assert_same(got[n], want[n], rtol=0.0 if exact else None, path=n)
    assert_unmodified(snap)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_special_values(dtype: np.dtype) -> None:
    g = special_grid(dtype).reshape(12, 12)

    def f(g):
        return [SCANS[n](g, ax) for n in ("cumsum", "cumprod", "nancumsum", "nancumprod")
                for ax in (0, 1)]

    assert_same(_compiled(f, g), quiet_numpy(f, g), rtol=0.0)


def test_zero_d_and_broadcast_operand() -> None:
    z = np.complex64(1 - 2j)
    assert_same(_compiled(lambda z: np.cumprod(z), z), np.cumprod(z), rtol=0.0)
    w = np.array([1 + 1j, 2, -1j], np.complex128)
    f = lambda w: np.cumsum(np.broadcast_to(w, (4, 3)), axis=0)  # noqa: E731
    assert_same(_compiled(f, w), f(w), rtol=0.0)


def test_long_vector_runs_blocked_to_float_tolerance() -> None:
    rng = np.random.default_rng(7)
    z = rng.standard_normal(70_000) + 1j * rng.standard_normal(70_000)
    assert_same(_compiled(lambda z: np.cumsum(z), z), np.cumsum(z), rtol=1e-9, atol=1e-9)


def test_ordering_scans_of_long_vectors_bit_for_bit() -> None:
    # blocked scans carry each block's running extreme across: NaN in either part wins
    # (maximum) or loses (fmin), ties keep the first, as NumPy's sequential loop
    rng = np.random.default_rng(3)
    z = (rng.integers(-3, 4, 70_000) + 1j * rng.integers(-3, 4, 70_000)).astype(np.complex128)
    z[[5_000, 40_000, 40_001]] = [complex(np.nan, 1), complex(2, np.nan), complex(0, -0.0)]

    def f(z):
        return np.maximum.accumulate(z), np.fmin.accumulate(z[::-1])

    assert_same(_compiled(f, z), f(z), rtol=0.0)
