"""float32 `x ** 3` is the correctly rounded cube (README, codegen/include/fj_vpow.h): checked
against the cube rounded in exact integer arithmetic, on random bit patterns and on the ranges
where cheaper float32 formulas go wrong (subnormal and tiny results, overflow), in the fused
gelu loop too. benchmarks/vpow_cube_exact.c checks all 2^32 inputs."""

from __future__ import annotations

import numpy as np

import fusejit

F32 = np.float32


def exact_cube_bits(u: int) -> int:
    """Bits of the correctly rounded (to nearest even) float32 cube of the float32 with bits u."""
    sign, mag = u & 0x80000000, u & 0x7FFFFFFF
    if mag >= 0x7F800000:  # inf, NaN: not used here
        raise ValueError("finite inputs only")
    ex, m = mag >> 23, mag & 0x7FFFFF
    e = -149 if ex == 0 else ex - 150
    if ex:
        m |= 0x800000
    if m == 0:
        return sign
    m3, e3 = m ** 3, 3 * e  # the cube is m3 * 2^e3 exactly
    q = m3.bit_length() - 1 + e3  # in [2^q, 2^(q+1))
    if q >= 128:
        return sign | 0x7F800000
    shift = m3.bit_length() - 24 if q >= -126 else -149 - e3  # bits below the result's grid
    if shift > 0:
        k, rem = m3 >> shift, m3 & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        k += rem > half or (rem == half and k & 1)
        m3, e3 = k, e3 + shift
    value = float(np.ldexp(np.float64(m3), e3))  # exact or beyond float32's range
    return sign | int(np.array(value, F32).view(np.uint32)) if value < 2.0 ** 128 else (
        sign | 0x7F800000)


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(16)
    bits = rng.integers(0, 0x7F800000, 6000, dtype=np.uint32)
    # |x| in [2^-50, 2^-33) (results subnormal or below 2^-100) and [2^42, 2^52) (overflow)
    tiny = np.ldexp(rng.uniform(1, 2, 6000), rng.integers(-50, -33, 6000))
    huge = np.ldexp(rng.uniform(1, 2, 2000), rng.integers(42, 52, 2000))
    edges = np.array([0.0, 2.0 ** -50, 2.0 ** -42, 2.0 ** (128 / 3), 3e38, 1e-45, 257.0, 322.0])
    x = np.concatenate([bits.view(F32), tiny.astype(F32), huge.astype(F32), edges.astype(F32),
                        (rng.standard_normal(4000) * 3).astype(F32)])
    return np.concatenate([x, -x])


def test_cube_is_correctly_rounded() -> None:
    x = _inputs()
    want = np.array([exact_cube_bits(int(u)) for u in x.view(np.uint32)], np.uint32)
    with np.errstate(all="ignore"):
        got = fusejit.jit(lambda a: a ** 3)(x)
        got_pow = fusejit.jit(lambda a: np.power(a, F32(3)))(x)
    assert got.dtype == np.float32
    assert np.array_equal(got.view(np.uint32), want)
    assert np.array_equal(got_pow.view(np.uint32), want)


def test_cube_in_the_fused_gelu_loop() -> None:
    """x ** 3 inside gelu's loop (with tanh) gives the same bits as the cube alone."""
    x = _inputs()
    with np.errstate(all="ignore"):
        got = fusejit.jit(lambda a: (a ** 3, np.tanh(0.7978846 * (a + 0.044715 * a ** 3))))(x)
    want = np.array([exact_cube_bits(int(u)) for u in x.view(np.uint32)], np.uint32)
    assert np.array_equal(got[0].view(np.uint32), want)
