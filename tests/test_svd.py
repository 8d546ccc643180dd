"""np.linalg.svd (LAPACK dgesdd, as NumPy calls it: codegen/csvd.py) and what is built on it
(np.linalg.pinv, cond, matrix_rank, norm with ord 2, -2 and 'nuc'), and np.linalg.qr (dgeqrf
and dorgqr: codegen/cqr.py), against NumPy: tall, wide, square, batched, strided and
transposed operands, float32 / float64 / integer inputs, empty matrices, NaN (NumPy's
LinAlgError for the SVD, NaN results for QR), hermitian=True (from eigh), the tensor
solvers, and the refusals (complex, mode='raw')."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, run_both

import fusejit
from fusejit.errors import UnsupportedError

RNG = np.random.default_rng(11)


def _aligned(u, vh, u_ref, vh_ref):
    """u's columns and vh's rows with the signs of NumPy's (a singular vector pair is
    unique up to its sign; the same dgesdd gives NumPy's, but another build may not)."""
    k = min(u.shape[-1], vh.shape[-2])
    sign = np.sign(np.sum(u[..., :k] * u_ref[..., :k], axis=-2))
    sign[sign == 0] = 1
    u, vh = u.copy(), vh.copy()
    u[..., :k] *= sign[..., None, :]
    vh[..., :k, :] *= sign[..., :, None]
    return u, vh


def _check_svd(got, want, rtol: float) -> None:
    u, s, vh = got
    assert type(got) is type(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
    atol = rtol * max(1.0, float(np.abs(want[1]).max(initial=0)))
    np.testing.assert_allclose(s, want[1], rtol=rtol, atol=atol)
    u, vh = _aligned(u, vh, want[0], want[2])
    np.testing.assert_allclose(u, want[0], rtol=rtol, atol=rtol * 10)
    np.testing.assert_allclose(vh, want[2], rtol=rtol, atol=rtol * 10)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (3, 7, 4), (2, 1, 5)])
def test_svd_matches_numpy(shape) -> None:
    x = RNG.standard_normal(shape)

    def f(a):
        return (np.linalg.svd(a), np.linalg.svd(a, full_matrices=False),
                np.linalg.svd(a, compute_uv=False), np.linalg.svd(a.swapaxes(-1, -2)[..., ::-1, :]))

    got, want = fusejit.jit(f)(x), f(x)
    for g, w in zip(got[:2] + got[3:], want[:2] + want[3:]):
        _check_svd(g, w, 1e-12)
    assert_same(got[2], want[2], rtol=1e-12, atol=1e-12 * np.abs(want[2]).max())


def test_svd_dtypes_empty_and_errors() -> None:
    x32 = RNG.standard_normal((5, 3)).astype(np.float32)
    f = fusejit.jit(lambda a: np.linalg.svd(a))
    _check_svd(f(x32), np.linalg.svd(x32), 2e-6)
    xi = RNG.integers(-5, 5, (4, 4)).astype(np.int32)
    _check_svd(f(xi), np.linalg.svd(xi), 1e-12)
    for shape in [(0, 3), (3, 0), (2, 0, 0)]:
        for full in (True, False):
            g = fusejit.jit(lambda a, full=full: np.linalg.svd(a, full_matrices=full))
            for got, want in zip(g(np.zeros(shape)), np.linalg.svd(np.zeros(shape), full)):
                assert_same(got, want)
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        f(np.full((3, 3), np.nan))
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        fusejit.jit(lambda a: np.linalg.svd(a))(np.ones(3))
    with pytest.raises(TypeError):
        fusejit.jit(lambda a: np.linalg.svd(a))(np.ones((2, 2), np.float16))
    with pytest.raises(UnsupportedError, match="complex"):
        fusejit.jit(lambda a: np.linalg.svd(a))(np.ones((2, 2), complex))


def test_cond_of_every_order() -> None:
    """np.linalg.cond's 1, -1, inf, -inf and 'fro' orders: norm(x) * norm(inv(x)) with the
    inverse's errors ignored (inf for a singular matrix, as NumPy; no LinAlgError)."""
    s = RNG.standard_normal((3, 4, 4))
    s[1, 2] = s[1, 0]  # singular
    def conds(p):
        return lambda s: (np.linalg.cond(s, p), np.linalg.cond(s[0], p),
                          np.linalg.cond(s.astype(np.float32), p))

    for p in (1, -1, np.inf, -np.inf, "fro", None, -2):
        run_both(conds(p), s)
    run_both(lambda s: np.linalg.cond(s, 3), s)  # NumPy's ValueError


def test_hermitian_svd_and_tensor_solvers() -> None:
    """svd(hermitian=True) from eigh as NumPy computes it (magnitudes descending, signs in
    Vh); np.linalg.tensorsolve (frontend/linalg_more.py) and tensorinv (NumPy's code)."""
    s = RNG.standard_normal((2, 4, 4))
    h = s + np.swapaxes(s, 1, 2)
    run_both(lambda h: (np.linalg.svd(h, hermitian=True), np.linalg.svd(h[0], hermitian=True),
                        np.linalg.svd(h.astype(np.float32), hermitian=True, compute_uv=False),
                        np.linalg.matrix_rank(h, hermitian=True)), h)
    k = np.kron(s[0], s[1]).reshape(4, 4, 4, 4) + 6 * np.eye(16).reshape(4, 4, 4, 4)
    run_both(lambda k, b: (np.linalg.tensorsolve(k, b), np.linalg.tensorsolve(k, b, (0, 2)),
                           np.linalg.tensorinv(k), np.linalg.tensorsolve(k[0, 0], b[0])),
             k, s[0])
    run_both(lambda k, b: np.linalg.tensorsolve(k, b[0, :3]), k, s[0])  # LinAlgError


def test_pinv_cond_rank_and_norms() -> None:
    x = RNG.standard_normal((2, 5, 3))
    deficient = np.outer(RNG.standard_normal(4), RNG.standard_normal(6))  # rank 1

    def f(a, d):
        return (np.linalg.pinv(a), np.linalg.pinv(d), np.linalg.pinv(d, rtol=None),
                np.linalg.pinv(a, rcond=0.3), np.linalg.cond(a), np.linalg.cond(a, -2),
                np.linalg.cond(d[:4, :4]), np.linalg.matrix_rank(d), np.linalg.matrix_rank(a),
                np.linalg.norm(a, 2, axis=(1, 2)), np.linalg.norm(d, "nuc"),
                np.linalg.norm(a, -2, axis=(2, 1), keepdims=True))

    got, want = fusejit.jit(f)(x, deficient), f(x, deficient)
    for g, w in zip(got, want):
        assert_same(g, w, rtol=1e-10, atol=1e-10 * max(1.0, float(np.abs(w).max())))
    zero = np.zeros((3, 3))
    g = fusejit.jit(lambda a: (np.linalg.cond(a), np.linalg.pinv(a), np.linalg.pinv(a[:0])))
    for got, want in zip(g(zero), (np.linalg.cond(zero), np.linalg.pinv(zero),
                                   np.linalg.pinv(zero[:0]))):
        assert_same(got, want)
    with pytest.raises(np.linalg.LinAlgError, match="empty"):
        fusejit.jit(lambda a: np.linalg.cond(a))(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="both set"):
        fusejit.jit(lambda a: np.linalg.pinv(a, rcond=0.1, rtol=0.1))(zero)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5), (3, 1)])
def test_qr_matches_numpy(shape) -> None:
    x = RNG.standard_normal(shape)

    def f(a):
        return (np.linalg.qr(a), np.linalg.qr(a, mode="complete"), np.linalg.qr(a, "r"),
                np.linalg.qr(a.swapaxes(-1, -2)[..., ::-1, :]))

    got, want = fusejit.jit(f)(x), f(x)
    assert type(got[0]) is type(want[0])
    for g, w in zip(got[0] + got[1] + (got[2],) + got[3], want[0] + want[1] + (want[2],) + want[3]):
        assert g.shape == w.shape and g.dtype == w.dtype
        # (the same dgeqrf: NumPy's signs; tolerance for another build's last bits)
        assert_same(g, w, rtol=1e-12, atol=1e-12)


def test_qr_dtypes_empty_and_errors() -> None:
    f = fusejit.jit(lambda a: np.linalg.qr(a))
    x32 = RNG.standard_normal((5, 3)).astype(np.float32)
    for got, want in zip(f(x32), np.linalg.qr(x32)):
        assert_same(got, want, rtol=2e-6, atol=2e-6)
    for shape in [(0, 3), (3, 0), (2, 0, 0)]:
        for mode in ("reduced", "complete"):
            g = fusejit.jit(lambda a, mode=mode: np.linalg.qr(a, mode))
            for got, want in zip(g(np.zeros(shape)), np.linalg.qr(np.zeros(shape), mode)):
                assert_same(got, want)
    got = f(np.full((2, 2), np.nan))  # no error, as NumPy
    assert np.isnan(got.Q).all()
    with pytest.raises(ValueError, match="Unrecognized mode 'bad'"):
        fusejit.jit(lambda a: np.linalg.qr(a, "bad"))(np.eye(2))
    with pytest.raises(UnsupportedError, match="raw"):
        fusejit.jit(lambda a: np.linalg.qr(a, "raw"))(np.eye(2))
    with pytest.raises(UnsupportedError, match="complex"):
        f(np.eye(2, dtype=complex))
