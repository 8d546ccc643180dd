"""scipy.linalg's structured matrices, squareform (frontend/scipy_matrices.py) and
scipy.signal's convolve2d/correlate2d and argrelextrema (frontend/scipy_peaks.py) of traced
arrays, against SciPy: values, dtypes, shapes, SciPy's errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import run_both

import fusejit
from fusejit.errors import UnsupportedError

sla = pytest.importorskip("scipy.linalg")
sg = pytest.importorskip("scipy.signal")
ssd = pytest.importorskip("scipy.spatial.distance")

RNG = np.random.default_rng(21)
B, C = RNG.standard_normal(6), RNG.standard_normal(4)
A = RNG.standard_normal((3, 3))
P = RNG.standard_normal((5, 2))
IMG = RNG.standard_normal((7, 6))


@pytest.mark.parametrize("f, args", [
    (lambda b: sla.toeplitz(b), (B,)),
    (lambda b, c: sla.toeplitz(b, c), (B, C)),
    (lambda b: sla.toeplitz(b + 1j * b[::-1]), (B,)),  # r = conj(c), c[0] on the diagonal
    (lambda a: sla.toeplitz(a), (A,)),  # a batch of vectors (SciPy 1.17)
    (lambda b: sla.toeplitz((b * 10).astype(int)), (B,)),
    (lambda b: sla.hankel(b), (B,)),
    (lambda b, c: sla.hankel(b, c), (B, C)),
    (lambda b: sla.circulant(b), (B,)),
    (lambda a, b: sla.block_diag(a, b, [5], np.zeros((0,)), 3 * np.ones((1, 3), int)), (A, B)),
    (lambda p: ssd.squareform(ssd.pdist(p)), (P,)),
    (lambda p: ssd.squareform(ssd.squareform(ssd.pdist(p)), checks=False), (P,)),
    (lambda b: ssd.squareform(b[:4]), (B,)),  # SciPy's ValueError: not n choose 2
])
def test_structured_matrices_match_scipy(f, args) -> None:
    run_both(f, *args)


def test_squareform_checks_of_a_traced_matrix_are_refused() -> None:
    with pytest.raises(UnsupportedError, match="checks=False"):
        fusejit.jit(lambda a: ssd.squareform(a + a.T - 2 * np.diag(np.diag(a))))(A)


@pytest.mark.parametrize("fn, mode, boundary, kshape", [
    (fn, mode, boundary, kshape) for fn, mode, boundary, kshape in itertools.product(
        ("convolve2d", "correlate2d"), ("full", "same", "valid"), ("fill", "wrap", "symm"),
        ((2, 3), (3, 3)))
    if not (mode == "valid" and boundary != "fill")])
def test_2d_convolutions_match_scipy(fn, mode, boundary, kshape) -> None:
    k = RNG.standard_normal(kshape)
    run_both(lambda a, b: getattr(sg, fn)(a, b, mode=mode, boundary=boundary, fillvalue=1.5),
             IMG, k)


@pytest.mark.parametrize("fn", [sg.convolve2d, sg.correlate2d])
def test_2d_convolutions_swap_integers_complex(fn) -> None:
    k = RNG.standard_normal((3, 3))
    run_both(lambda a, b: fn(a, b, mode="valid"), k, IMG)  # (the kernel is the larger)
    run_both(lambda a, b: fn(a, b, mode="same", boundary="wrap"), (IMG * 10).astype(int),
             (k * 5).astype(int))
    run_both(lambda a, b: fn(a, b, boundary="symm"), IMG + 1j * IMG[::-1], k)
    run_both(lambda a, b: fn(a, b, mode="same"), IMG[:2, :2], k)  # kernel > image
    run_both(lambda a, b: fn(a[0], b), IMG, k)  # SciPy's ValueError: not 2-D


@pytest.mark.parametrize("f", [
    lambda v: v[sg.argrelmax(v)].sum(),
    lambda v: sg.argrelmin(v, order=3)[0].max(),
    lambda v: sg.argrelmax(v, mode="wrap")[0].size,
    lambda v: sg.argrelmax(v, order=0),  # SciPy's ValueError
])
def test_relative_extrema_match_scipy(f) -> None:
    run_both(f, RNG.standard_normal(40))
    run_both(lambda a: sg.argrelextrema(a, np.greater_equal, axis=1)[1].sum(), IMG)
