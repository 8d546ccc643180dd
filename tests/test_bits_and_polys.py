"""np.bitwise_count (an op: fj_scalar.h's count of the 1-bits of |a|), np.packbits and
np.unpackbits (frontend/bits.py), np.sort_complex, np.polyadd and np.polysub (NumPy's own code,
traced) against NumPy: values, uint8/complex dtypes, shapes, axes and bit orders, 0-d and
zero-size inputs, and NumPy's exceptions; the polynomial calls whose result length depends on
the values are refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_both

import fusejit
from fusejit.errors import UnsupportedError

RNG = np.random.default_rng(11)
INTS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)


@pytest.mark.parametrize("dt", INTS, ids=lambda d: np.dtype(d).name)
def test_bitwise_count_of_every_integer_type(dt) -> None:
    """The ends of the range (bitwise_count(MIN) counts |MIN|), small and random values;
    fused with arithmetic; a Python int; bools through NumPy's int8 loop."""
    info = np.iinfo(dt)
    x = np.concatenate([np.array([info.min, info.min + 1, 0, 1, 2, 3, info.max - 1, info.max],
                                 dt), RNG.integers(info.min, info.max, 200, dt, endpoint=True)])
    run_both(lambda x: (np.bitwise_count(x), np.bitwise_count(x) + x, np.bitwise_count(x[3]),
                        np.bitwise_count(x > 1), np.bitwise_count(7)), x)


def test_bitwise_count_refuses_floats_as_numpy() -> None:
    with pytest.raises(TypeError) as numpy_error:
        np.bitwise_count(np.ones(3))
    with pytest.raises(type(numpy_error.value)):
        fusejit.jit(lambda x: np.bitwise_count(x))(np.ones(3))


B = RNG.random((3, 13)) > 0.5
I16 = RNG.integers(-3, 3, (4, 5, 9)).astype(np.int16)
U8 = RNG.integers(0, 256, (3, 5)).astype(np.uint8)

PACKING = {
    "packbits, flat": (lambda b: np.packbits(b), B),
    "packbits, axis 1": (lambda b: np.packbits(b, axis=1), B),
    "packbits, axis 0 little": (lambda b: np.packbits(b, axis=0, bitorder="little"), B),
    "packbits of int16, axes": (lambda i: (np.packbits(i, axis=-1), np.packbits(i, axis=1),
                                           np.packbits(i[0, 0, 0])), I16),
    "packbits, zero-size": (lambda i: (np.packbits(i[:, :0], axis=1), np.packbits(i[:, :0])),
                            I16),
    "unpackbits": (lambda u: (np.unpackbits(u), np.unpackbits(u, axis=0),
                              np.unpackbits(u[0, 0])), U8),
    "unpackbits, count": (lambda u: (np.unpackbits(u, axis=1, count=13, bitorder="little"),
                                     np.unpackbits(u, axis=1, count=50),
                                     np.unpackbits(u, count=-5),
                                     np.unpackbits(u, axis=1, count=0)), U8),
    "round trip": (lambda u: np.packbits(np.unpackbits(u, axis=1), axis=1), U8),
}


@pytest.mark.parametrize("name", list(PACKING))
def test_packbits_and_unpackbits(name: str) -> None:
    f, x = PACKING[name]
    run_both(f, x)


@pytest.mark.parametrize("f,x", [
    (lambda x: np.packbits(x), np.ones(3)),  # TypeError: floats
    (lambda x: np.unpackbits(x), np.ones(3, np.int8)),  # TypeError: not uint8
    (lambda u: np.packbits(u, bitorder="middle"), U8),  # ValueError
    (lambda u: np.unpackbits(u, count=-50000), U8),  # ValueError
    (lambda u: np.packbits(u, axis=3), U8),  # AxisError
], ids=["float", "int8", "bitorder", "count", "axis"])
def test_packing_errors_are_numpys(f, x) -> None:
    with pytest.raises(Exception) as numpy_error:
        f(x)
    with pytest.raises(type(numpy_error.value), match=str(numpy_error.value)):
        fusejit.jit(f)(x)


def test_sort_complex_and_polynomial_sums() -> None:
    """sort_complex: complex64 for small integer types, complex128 else, complex kept;
    polyadd/polysub pad the shorter polynomial with leading zeros."""
    a, b = RNG.standard_normal(4), RNG.standard_normal(6)

    def f(a, b):
        return (np.sort_complex(a), np.sort_complex(a.astype(np.float32)),
                np.sort_complex((a * 3).astype(np.int16)),
                np.sort_complex((a * 3).astype(np.int64)),
                np.sort_complex(a + 1j * a[::-1]), np.sort_complex(np.stack([a, a[::-1]])),
                np.polyadd(a, b), np.polysub(b, a), np.polyadd(a, b[:4]), np.polysub(a[0], b))

    run_both(f, a, b)


@pytest.mark.parametrize("call,words", [
    (lambda a: np.polymul(a, a), "np.convolve"), (lambda a: np.polydiv(a, a[:2]), "divisor"),
    (lambda a: np.roots(a), "number of roots"), (lambda a: np.trim_zeros(a), "length"),
    (lambda a: np.setdiff1d(a, a[:2]), "np.isin"), (lambda a: np.union1d(a, a), "distinct"),
    (lambda a: np.shares_memory(a, a), "memory"),
], ids=["polymul", "polydiv", "roots", "trim_zeros", "setdiff1d", "union1d", "shares_memory"])
def test_data_dependent_lengths_are_refused_by_name(call, words: str) -> None:
    with pytest.raises(UnsupportedError, match=words) as e:
        fusejit.jit(call)(np.array([0.0, 1.0, 2.0, 3.0]))
    assert "test_bits_and_polys.py" in str(e.value)
