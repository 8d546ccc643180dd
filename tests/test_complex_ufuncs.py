"""The complex transcendental ufuncs against NumPy, bit for bit: sin ... arctanh (libm's
csin ... catanh, which NumPy's loops call), log2/log10/exp2/log1p/expm1 (NumPy's own
formulas over libm), sign (NumPy 2's z/|z|), rint, and np.power with any exponent (NumPy's
nc_pow: its integer and zero branches, then libm's cpow) on the grid of special values (Inf
and NaN in either part, signed zeros, huge and tiny parts) and on random values of every
magnitude; real operands keep their real loops.

On a CUDA run the functions are the device's (codegen/include/fj_complex_cuda.h over the
GPU's libm, not glibc's): the same special values, the other values to float tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, cancellation_atol, match_mask, on_cuda
from test_complex import CDTYPES, quiet_numpy, special_grid

import fusejit

UNARY = ("sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh",
         "arccosh", "arctanh", "log2", "log10", "exp2", "log1p", "expm1", "sign", "rint")


def _values(dtype: np.dtype, n: int, seed: int) -> np.ndarray:
    """Random complex values whose parts span magnitudes 1e-8 .. 1e8 (and some exact ones)."""
    rng = np.random.default_rng(seed)
    mag = lambda: np.exp(rng.uniform(-18, 18, n)) * rng.choice([-1, 1], n)  # noqa: E731
    z = mag() + 1j * mag()
    z[: n // 4] = rng.integers(-3, 4, n // 4) + 0.5j * rng.integers(-3, 4, n // 4)
    return z.astype(dtype)


def _exact() -> float | None:
    """rtol of a bit-for-bit check: 0, or on a CUDA run the dtype's float tolerance."""
    return None if on_cuda() else 0.0


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_unary_bit_for_bit(dtype: np.dtype) -> None:
    z = np.concatenate([special_grid(dtype), _values(dtype, 3000, 0)])

    def f(z):
        return {name: getattr(np, name)(z) for name in UNARY}

    want = quiet_numpy(f, z)
    got = fusejit.jit(f)(z)
    for name in UNARY:
        if name in _CANCELLING and on_cuda():
            g, w = got[name], want[name]
            with np.errstate(all="ignore"):
                bound = 8 * np.finfo(w.real.dtype).eps * _CANCELLING[name](z.astype(complex))
                near = np.abs(g.real - w.real.astype(float)) <= bound
            assert (near | match_mask(g.real, w.real)).all(), f"{name}: real parts"
            assert_same(g.imag, w.imag, path=name)
            continue
        assert_same(got[name], want[name], rtol=_exact(), path=name)


# NumPy's formulas whose real part cancels for small z (log1p: log(hypot(1 + x, y)); expm1:
# expm1(x) cos(y) - 2 sin(y/2)^2): on a CUDA run, where the device's libm differs from
# glibc's by an ulp, the real part is compared to eps times the size of its terms
_CANCELLING = {
    "log1p": lambda z: np.ones(z.shape),
    "expm1": lambda z: np.abs(np.expm1(z.real) * np.cos(z.imag)) + 2 * np.sin(z.imag / 2) ** 2,
}


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_power_bit_for_bit(dtype: np.dtype) -> None:
    g = special_grid(dtype)
    exps = np.array([0, 1, 2, 3, -1, -2, 5, -7, 99, -99, 100, -100, 2.5, 0.5, -0.5, 1e30,
                     1 + 1j, -2j], dtype)
    a = np.concatenate([np.repeat(g, len(g)), np.repeat(g, len(exps)), _values(dtype, 2000, 1)])
    b = np.concatenate([np.tile(g, len(g)), np.tile(exps, len(g)), _values(dtype, 2000, 2) / 8])

    def f(a, b):
        return {"power": np.power(a, b), "pow_op": a ** b, "real_exp": a ** b.real,
                "float_const": a ** 2.5, "complex_const": a ** (0.5 - 1j),
                "real_base": b.real ** a, "int_const": a ** 7}

    want = quiet_numpy(f, a, b)
    got = fusejit.jit(f)(a, b)
    operands = {"power": (a, b), "pow_op": (a, b), "real_exp": (a, b.real),
                "float_const": (a, 2.5), "complex_const": (a, 0.5 - 1j), "real_base": (b.real, a),
                "int_const": (a, 7)}
    for name in want:
        if on_cuda():
            _conditioned(got[name], want[name], *operands[name], path=name)
        else:
            assert_same(got[name], want[name], rtol=0.0, path=name)


def _conditioned(got: np.ndarray, want: np.ndarray, base, exp, path: str) -> None:
    """np.power on a CUDA run: exp(b log a) amplifies the last bit of log(a) by |b log a|,
    and the device's log and atan2 round differently from glibc's (and NumPy's own results
    differ from platform to platform as much): finite results within that condition number
    of NumPy's, normwise (so the signs of zero parts that sin/cos of a huge argument give
    are not compared); Inf and NaN parts exactly where NumPy has them, an Inf's sign where
    the angle decides it."""
    assert got.dtype == want.dtype and got.shape == want.shape, path
    with np.errstate(all="ignore"):
        base, exp = np.broadcast_arrays(np.asarray(base, np.complex128), np.asarray(exp))
        cond = 1 + np.abs(exp) * (np.abs(np.log(np.abs(base))) + np.pi)
        tol = 8 * np.finfo(want.real.dtype).eps * cond
        g, w = got.astype(np.complex128), want.astype(np.complex128)
        fin = np.isfinite(w)
        near = (g == w) | (np.abs(g - w) <= tol * np.abs(w))
        # an overflowing result is Inf * (cos t, sin t), t = Im(b log a): where t's error bound
        # (tol, in radians) reaches a part's |cos t| or |sin t|, that Inf's sign is noise
        # (a ** 1e30); special operands (t not finite) take Annex G's signs exactly
        t = np.imag(exp * np.log(base))
        special = ~np.isfinite(t)
        decided = (special | (np.abs(np.cos(t)) > tol), special | (np.abs(np.sin(t)) > tol))
    for part, sure in zip((np.real, np.imag), decided):
        assert_same(np.isnan(part(got)), np.isnan(part(want)), path=f"{path} (NaN parts)")
        inf = ~fin & np.isinf(part(want))
        assert_same(np.isinf(part(got)[inf]), np.ones(int(inf.sum()), bool),
                    path=f"{path} (Inf parts)")
        assert_same(part(got)[inf & sure], part(want)[inf & sure], path=f"{path} (Inf signs)")
    bad = np.flatnonzero(fin & ~near)
    assert not bad.size, (f"{path}: {bad.size} finite results beyond the condition number, "
                          f"e.g. {base[bad[0]]} ** {exp[bad[0]]}: {got[bad[0]]} vs {want[bad[0]]}")


def test_real_operands_keep_real_loops_and_mixed_programs() -> None:
    x = np.linspace(-0.9, 3.0, 41)
    z = (x + 0.25j * x[::-1]).astype(np.complex64)

    def f(x, z):
        return np.sin(x) + np.arctanh(x / 4), np.tanh(z * 2) * np.log10(z + 1), np.sign(z - 1)

    want = quiet_numpy(f, x, z)
    got = fusejit.jit(f)(x, z)
    assert_same(got[0], want[0])  # real loops: NumPy's SIMD sin, to float tolerance
    # (on a CUDA run tanh and log10 are the device's: the complex product's real part cancels)
    atol = cancellation_atol(want[1]) if on_cuda() else 0.0
    assert_same(got[1:], want[1:], rtol=_exact(), atol=atol)


def test_fastmath_keeps_expm1_parts() -> None:
    z = _values(np.dtype(np.complex128), 500, 3)
    f = lambda z: np.expm1(z)  # noqa: E731
    assert_same(fusejit.jit(f, fastmath=True)(z), quiet_numpy(f, z), rtol=_exact())


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_negated_parts_of_products_keep_signed_zeros(dtype: np.dtype) -> None:
    """-np.real(z * w) where the product's real part is +0: NumPy gives -0. gcc folded `-x`
    of the product's inlined fma into one fnmsub, which gives +0; real negation now flips
    the sign bit (fj_neg_T), as it does for NaN's sign."""
    z = np.array([0, 1, 0j, 1j, -1j, complex(0, -0.0)], dtype)
    w = np.array([0, 0, 1, 1j, 0j, 1], dtype)

    def f(z, w):
        p = z * w
        return -np.real(p), -np.imag(p), -(np.real(p) * 2), -np.abs(p)

    with np.errstate(all="ignore"):
        want = f(z, w)
    got = fusejit.jit(f)(z, w)
    for g, v in zip(got, want):
        np.testing.assert_array_equal(np.signbit(g), np.signbit(v))
        assert_same(g, v)
    part = np.array([np.nan, -np.nan, 0.0, -0.0], np.zeros(1, dtype).real.dtype)
    assert np.signbit(fusejit.jit(lambda a: -a)(part)).tolist() == [True, False, True, False]
