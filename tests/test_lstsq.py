"""np.linalg.lstsq through LAPACK's dgelsd (zgelsd) against NumPy: tall, wide, square and
empty matrices, 1-D and 2-D right-hand sides (none too), float32/float64/integer/complex
operands, any layout, rcond values, rank-deficient systems; the residuals of a
rank-deficient tall system (NumPy's empty array, whose shape fusejit cannot know when
compiling) raise LinAlgError only when the program uses them; NumPy's errors for bad shapes
and dtypes; the refusals (traced rcond, gradients, targets without SciPy)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_same, assert_unmodified, examples, run_both, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit
from fusejit.errors import UnsupportedError

pytestmark = pytest.mark.c_only  # LAPACK from compiled code: the CUDA backend refuses it
LinAlgError = np.linalg.LinAlgError


def _tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 1e-5, "atol": 1e-5} if np.dtype(dtype) in (np.float32, np.complex64) else \
        {"rtol": 1e-8, "atol": 1e-10}


def _matrix(rng: np.random.Generator, m: int, n: int, rank: int, dtype: Any, how: str
            ) -> np.ndarray:
    """An m x n matrix of the given rank (at most min(m, n)) in layout `how`."""
    r = min(rank, m, n)
    a = rng.standard_normal((m, r)) @ rng.standard_normal((r, n)) if r else np.zeros((m, n))
    if np.dtype(dtype).kind == "c" and r:
        a = a + 1j * (rng.standard_normal((m, r)) @ rng.standard_normal((r, n)))
    if np.dtype(dtype).kind == "i":
        a = np.round(a * 2)
    a = a.astype(dtype)
    if how == "fortran":
        return np.asfortranarray(a)
    if how == "reversed":
        return np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1]
    if how == "strided":
        big = np.zeros((m, 2 * n), dtype)
        big[:, ::2] = a
        return big[:, ::2]
    return a


cases = st.tuples(st.integers(0, 6), st.integers(0, 6), st.sampled_from([None, 0, 1, 3]),
                  st.sampled_from([np.float64, np.float32, np.int32, np.complex128,
                                   np.complex64]),
                  st.sampled_from([np.float64, np.float32, np.complex64]),
                  st.sampled_from(["c", "fortran", "reversed", "strided"]),
                  st.sampled_from(["full", "deficient"]), st.integers(0, 2 ** 31))


@settings(max_examples=examples(15), deadline=None)  # each example compiles two programs
@given(cases)
def test_lstsq_matches_numpy(case: tuple) -> None:
    m, n, k, adt, bdt, how, kind, seed = case
    rng = np.random.default_rng(seed)
    rank = min(m, n) if kind == "full" else max(min(m, n) - 1, 0)
    a = _matrix(rng, m, n, rank, adt, how)
    shape = (m,) if k is None else (m, k)
    b = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(bdt) \
        if np.dtype(bdt).kind == "c" else rng.standard_normal(shape).astype(bdt)
    # a clear gap between kept and cut singular values, so both LAPACK builds cut the same
    rcond = None if kind == "full" else 1e-8
    snap = snapshot((a, b))
    want = np.linalg.lstsq(a, b, rcond=rcond)
    tol = _tol(want[0].dtype)

    def whole(a, b):
        return np.linalg.lstsq(a, b, rcond=rcond)

    def parts(a, b):
        x, _, r, s = np.linalg.lstsq(a, b, rcond=rcond)
        return x * 2, r, s

    assert_same(fusejit.jit(parts)(a, b), parts(a, b), **tol)
    if m > n and want[2] < n and k != 0:  # NumPy's residuals are empty, fusejit's (K,)
        with pytest.raises(LinAlgError, match="rank-deficient"):
            fusejit.jit(whole)(a, b)
    else:
        assert_same(fusejit.jit(whole)(a, b), want, **tol)
    assert_unmodified(snap)


@pytest.mark.parametrize("rcond", [None, -1, 0.0, 0.5, np.float32(0.25)])
def test_rcond_cuts_singular_values_as_numpy_does(rcond: Any) -> None:
    a = np.diag([4.0, 2.0, 1.0, 0.5])[:, :3].copy()
    a = np.vstack([a, np.ones((2, 3))])
    b = np.arange(6.0).reshape(6, 1)
    f = lambda a, b: np.linalg.lstsq(a, b, rcond=rcond)[::2]  # noqa: E731
    assert_same(fusejit.jit(f)(a, b), f(a, b), rtol=1e-10, atol=1e-12)


def test_fused_neighbours_and_residuals_of_a_full_rank_system() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((8, 3)), rng.standard_normal((8, 2))

    def f(a, b):
        x, res, rank, s = np.linalg.lstsq(a.T.T * 2 + 1, np.exp(b))
        return x.sum(axis=0) + res, rank + 1, s / s[0]

    assert_same(fusejit.jit(f)(a, b), f(a, b), rtol=1e-9, atol=1e-12)


def test_residuals_of_a_rank_deficient_system_raise_only_when_used() -> None:
    a = np.ones((5, 3))
    b = np.arange(5.0)
    x = fusejit.jit(lambda a, b: np.linalg.lstsq(a, b)[0])(a, b)
    assert_same(x, np.linalg.lstsq(a, b)[0], rtol=1e-10, atol=1e-12)
    with pytest.raises(LinAlgError, match="rank-deficient .*leave the residuals unused"):
        fusejit.jit(lambda a, b: np.linalg.lstsq(a, b)[1])(a, b)


def test_svd_failure_raises_numpys_error() -> None:
    a = np.ones((4, 2))
    a[0, 0] = np.nan
    f = lambda a: np.linalg.lstsq(a, np.ones(4))[0]  # noqa: E731
    with pytest.raises(LinAlgError, match="SVD did not converge in Linear Least Squares"):
        f(a)
    with pytest.raises(LinAlgError, match="SVD did not converge in Linear Least Squares"):
        fusejit.jit(f)(a)


@pytest.mark.parametrize("f, shapes", [
    (lambda a, b: np.linalg.lstsq(a, b), [(3,), (3,)]),
    (lambda a, b: np.linalg.lstsq(a, b), [(2, 3, 2), (3,)]),
    (lambda a, b: np.linalg.lstsq(a, b), [(3, 2), (4,)]),
    (lambda a, b: np.linalg.lstsq(a, b), [(3, 2), (3, 2, 2)]),
    (lambda a, b: np.linalg.lstsq(a, b), [(3, 2), ()]),
    (lambda a, b: np.linalg.lstsq(a.astype(np.float16), b), [(3, 2), (3,)]),
])
def test_bad_input_raises_numpys_error(f: Any, shapes: list) -> None:
    run_both(f, *[np.ones(s) for s in shapes])


def test_refusals_say_why() -> None:
    a, b = np.eye(3), np.ones(3)
    with pytest.raises(UnsupportedError, match="rcond must be a constant"):
        fusejit.jit(lambda a, b, r: np.linalg.lstsq(a, b, rcond=r))(a, b, 0.1)
    with pytest.raises(UnsupportedError, match="differentiate through np.linalg.lstsq"):
        fusejit.jit(fusejit.grad(lambda a, b: np.linalg.lstsq(a, b)[0].sum()))(a, b)
    text = str(fusejit.jit(lambda a, b: np.linalg.lstsq(a, b)[0]).explain(a, b))
    assert "dgelsd" in text
    with pytest.raises(UnsupportedError, match=r"np\.linalg\.lstsq .*cannot run it"):
        fusejit.export(lambda a, b: np.linalg.lstsq(a, b)[0], a, b, path="/tmp/wt-cplx-ls.so")
