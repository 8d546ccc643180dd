"""scipy.linalg's common functions of traced arrays (frontend/scipy_linalg.py): SciPy's results
(vectors up to sign), the triangle each reads, SciPy's errors (check_finite, singular, not
positive definite, shapes), batches, complex, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit.errors import UnsupportedError

L = pytest.importorskip("scipy.linalg")

RNG = np.random.default_rng(29)
M = RNG.standard_normal((5, 5))
S = M @ M.T + 5 * np.eye(5)  # symmetric positive definite
U = np.triu(M) + 3 * np.eye(5)
V = RNG.standard_normal(5)
B = RNG.standard_normal((5, 3))
Z = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
H = Z @ Z.conj().T + 4 * np.eye(4)  # Hermitian positive definite

CASES = {
    "inv": (lambda a: L.inv(a), S),
    "inv of ints": (lambda a: L.inv(a), np.array([[2, 1], [1, 3]])),
    "inv of a batch": (lambda a: L.inv(a), np.stack([S, 2 * S])),
    "det": (lambda a: L.det(a), M),
    "solve": (lambda a: L.solve(a, V), M),
    "solve, columns": (lambda a: L.solve(a, B), M),
    "solve sym reads the lower triangle": (lambda a: L.solve(a, V, assume_a="sym", lower=True),
                                           M),
    "solve sym reads the upper triangle": (lambda a: L.solve(a, B, assume_a="sym"), M),
    "solve pos": (lambda a: L.solve(a, B, assume_a="pos"), S),
    "solve transposed": (lambda a: L.solve(a, V, transposed=True), M),
    "solve_triangular": (lambda a: L.solve_triangular(a, V), U),
    "solve_triangular lower, T, unit": (
        lambda a: L.solve_triangular(a, B, trans=1, lower=True, unit_diagonal=True), M),
    "lstsq": (lambda a: L.lstsq(a[:, :3], V)[0], M),
    "cholesky (upper)": (lambda a: L.cholesky(a), S),
    "cholesky lower": (lambda a: L.cholesky(a, lower=True), S),
    "cholesky reads one triangle": (lambda a: L.cholesky(a + np.triu(M, 1)), S),
    "cho_factor keeps the other triangle": (lambda a: L.cho_factor(a)[0], S + np.tril(M, -1)),
    "cho_solve": (lambda a: L.cho_solve(L.cho_factor(a, lower=True), B), S),
    "eigh values": (lambda a: L.eigh(a)[0], S),
    "eigvalsh upper": (lambda a: L.eigvalsh(a, lower=False), S + np.triu(M, 1)),
    "eigh subset_by_index": (lambda a: L.eigh(a, eigvals_only=True, subset_by_index=[1, 3]),
                             S),
    "svdvals": (lambda a: L.svdvals(a), M[:, :3]),
    "svd values": (lambda a: L.svd(a)[1], M),
    "norm": (lambda a: L.norm(a), M),
    "norm along an axis": (lambda a: L.norm(a, axis=0, keepdims=True), M),
    "norm 2": (lambda a: L.norm(a, 2), M),
    "inv float32": (lambda a: L.inv(a), S.astype(np.float32)),  # (SciPy's LAPACK: float32)
    "pinv": (lambda a: L.pinv(a), M[:, :3]),
    "pinv, rank-deficient": (lambda a: L.pinv(a), np.outer(M[:, 0], M[0])),
    "pinv's rank": (lambda a: L.pinv(a, return_rank=True)[1], np.outer(M[:, 0], M[0])),
    "pinv atol": (lambda a: L.pinv(a, atol=1.0, rtol=0.0), M),
    "pinv float32": (lambda a: L.pinv(a), M.astype(np.float32)),
    "qr's R up to sign": (lambda a: np.abs(L.qr(a)[1]), M[:, :3]),
    "qr economic, Q up to sign": (lambda a: np.abs(L.qr(a, mode="economic")[0]), M[:, :3]),
    "qr mode r": (lambda a: np.abs(L.qr(a, mode="r")[0]), M[:3]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_scipy(name: str) -> None:
    f, a = CASES[name]
    want = f(a)
    got = fusejit.jit(f)(a)
    tight = np.asarray(want).dtype not in (np.float32, np.complex64)
    assert_same(got, want, rtol=1e-11 if tight else 2e-6, atol=1e-12 if tight else 1e-6)


def _same_columns_up_to_sign(got: np.ndarray, want: np.ndarray) -> None:
    phase = np.sum(np.conj(want) * got, axis=-2, keepdims=True)
    np.testing.assert_allclose(got, want * phase / np.abs(phase), rtol=1e-10, atol=1e-10)


def test_vectors_up_to_sign() -> None:
    for f, a in ((lambda a: L.eigh(a), S), (lambda a: L.eigh(a, lower=False), S + M)):
        (w, v), (wg, vg) = f(a), fusejit.jit(f)(a)
        assert_same(wg, w, rtol=1e-12, atol=1e-12)
        _same_columns_up_to_sign(vg, v)
    (u, s, vh), (ug, sg, vhg) = L.svd(M[:, :4]), fusejit.jit(lambda a: L.svd(a))(M[:, :4])
    assert ug.shape == u.shape and vhg.shape == vh.shape
    assert_same(sg, s, rtol=1e-12)
    _same_columns_up_to_sign(ug[:, :4], u[:, :4])
    np.testing.assert_allclose((ug[:, :4] * sg) @ vhg, M[:, :4], atol=1e-12)


ERRORS = {
    "not finite": (lambda a: L.inv(a), np.where(np.eye(5, dtype=bool), np.nan, S)),
    "singular": (lambda a: L.inv(a), np.ones((3, 3))),
    "not square": (lambda a: L.inv(a), M[:3]),
    "not positive definite": (lambda a: L.cholesky(a), -S),
    "solve pos, not positive definite": (lambda a: L.solve(a, V, assume_a="pos"), -S),
    "shapes": (lambda a: L.solve(a, V[:3]), M),
    "solve_triangular, zero diagonal": (lambda a: L.solve_triangular(a * 0, V), U),
    "norm of inf": (lambda a: L.norm(a * np.inf), M),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_scipys_errors(name: str) -> None:
    f, a = ERRORS[name]
    with pytest.raises(Exception) as want:
        with np.errstate(all="ignore"):
            f(a)
    with pytest.raises(type(want.value)):
        fusejit.jit(f)(a)


def test_qr_full_is_orthogonal_and_reconstructs() -> None:
    q, r = fusejit.jit(lambda a: L.qr(a))(M[:, :3])
    assert q.shape == (5, 5) and r.shape == (5, 3)
    np.testing.assert_allclose(q.T @ q, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(q @ r, M[:, :3], atol=1e-12)


def test_check_finite_false_computes_on() -> None:
    x = np.where(np.eye(5, dtype=bool), np.nan, S)
    assert np.isnan(fusejit.jit(lambda a: L.det(a, check_finite=False))(x))


@pytest.mark.parametrize("case,words", [
    (lambda a: L.eigh(a, a), "generalized"),
    (lambda a: L.eigh(a, subset_by_value=(0.0, 1.0)), "subset_by_value"),
    (lambda a: L.solve(a, a[0], assume_a="banded"), "assume_a"),
    (lambda a: L.qr(a, pivoting=True), "pivoting"),
    (lambda a: L.pinv(a, atol=a[0, 0]), "traced atol"),
])
def test_refusals_name_what_is_missing(case, words: str) -> None:
    with pytest.raises(UnsupportedError, match=words) as info:
        fusejit.jit(case)(S)
    assert "test_scipy_linalg.py" in str(info.value)


@pytest.mark.parametrize("case", [lambda a: L.solve(a, a[0], assume_a="her"),
                                  lambda a: L.cholesky(a, lower=True),
                                  lambda a: L.solve_triangular(a, a[0], trans="C")])
def test_complex_matrices_are_refused_as_np_linalg_refuses_them(case) -> None:
    with pytest.raises(UnsupportedError, match="complex"):
        fusejit.jit(case)(H)


def test_gradient_through_solve() -> None:
    """d/db of sum(c * solve(a, b)) is solve(a.T, c)."""
    c = RNG.standard_normal(5)
    g = fusejit.grad(lambda b: np.sum(c * L.solve(M, b)))(V)
    assert_same(g, np.linalg.solve(M.T, c), rtol=1e-10, atol=1e-12)
