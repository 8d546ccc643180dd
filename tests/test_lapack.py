"""np.linalg through SciPy's LAPACK: solve, inv, cholesky, det, slogdet, eigh, eigvalsh against
NumPy over batch shapes (0-d batches, zero-size, broadcast), dtypes and layouts; NumPy's
LinAlgError for singular / non-positive-definite matrices, raised after the call with the
arguments untouched; NumPy's errors for bad shapes; explain and the refusing backends."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_same, assert_unmodified, examples, run_both, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit
from fusejit.errors import UnsupportedError

LinAlgError = np.linalg.LinAlgError
DTYPES = [np.float64, np.float32, np.int32]
BATCHES = [(), (0,), (1,), (3,), (2, 2)]


def _tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 2e-3, "atol": 2e-3} if np.dtype(dtype) == np.float32 else \
        {"rtol": 1e-9, "atol": 1e-9}


def _well_conditioned(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any
                      ) -> np.ndarray:
    n = shape[-1]
    a = rng.integers(-3, 4, shape) if np.dtype(dtype).kind == "i" else \
        rng.standard_normal(shape)
    return (a + 3 * n * np.eye(n) if n else a).astype(dtype)


def _spd(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    a = rng.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _layout(x: np.ndarray, how: str) -> np.ndarray:
    """`x` as a contiguous, a transposed-and-back (F-order) or a reversed (negative strides)
    array with the same values."""
    if how == "fortran":
        return np.asfortranarray(x)
    if how == "reversed":
        return np.ascontiguousarray(x[..., ::-1, ::-1])[..., ::-1, ::-1]
    return x


def _check(f: Any, *args: Any, tol: dict[str, float]) -> None:
    snap = snapshot(args)
    want = f(*args)
    jf = fusejit.jit(f)
    assert_same(jf(*args), want, **tol)
    assert_same(jf(*args), want, **tol)
    assert_unmodified(snap)


cases = st.tuples(st.sampled_from(BATCHES), st.sampled_from([0, 1, 2, 5]),
                  st.sampled_from(DTYPES), st.sampled_from(["c", "fortran", "reversed"]),
                  st.integers(0, 2 ** 31))


@settings(max_examples=examples(10))  # each example compiles five programs
@given(cases)
def test_solve_inv_det_slogdet(case: tuple) -> None:
    batch, n, dtype, how, seed = case
    rng = np.random.default_rng(seed)
    a = _layout(_well_conditioned(rng, batch + (n, n), dtype), how)
    b = rng.standard_normal(batch + (n, 2)).astype(dtype)
    v = rng.standard_normal(n).astype(dtype)
    tol = _tol(np.linalg.inv(np.eye(1, dtype=dtype)).dtype)
    _check(lambda a, b: np.linalg.solve(a, b), a, b, tol=tol)
    _check(lambda a, v: np.linalg.solve(a, v) * 2 + 1, a, v, tol=tol)
    _check(lambda a: np.linalg.inv(a), a, tol=tol)
    _check(lambda a: np.linalg.det(a), a, tol=tol)
    _check(lambda a: tuple(np.linalg.slogdet(a)), a, tol=tol)


@settings(max_examples=examples(10))  # each example compiles five programs
@given(cases)
def test_cholesky_eigh(case: tuple) -> None:
    batch, n, dtype, how, seed = case
    rng = np.random.default_rng(seed)
    a = _layout(_spd(rng, batch + (n, n), dtype), how)
    tol = _tol(np.linalg.inv(np.eye(1, dtype=dtype)).dtype)
    _check(lambda a: np.linalg.cholesky(a), a, tol=tol)
    _check(lambda a: np.linalg.cholesky(a, upper=True), a, tol=tol)
    _check(lambda a: np.linalg.eigvalsh(a), a, tol=tol)
    _check(lambda a: np.linalg.eigvalsh(a, UPLO="U"), a, tol=tol)
    _check(lambda a: np.linalg.eigh(a)[0], a, tol=tol)
    # Eigenvectors are unique up to sign: compare |v| (distinct eigenvalues here) and check
    # that they diagonalise a.
    _check(lambda a: np.abs(np.linalg.eigh(a, UPLO="U").eigenvectors), a, tol=tol)
    w, v = fusejit.jit(lambda a: np.linalg.eigh(a))(a)
    back = (v * w[..., None, :]) @ np.swapaxes(v, -1, -2)
    assert np.allclose(back, a, **tol)


def test_broadcast_batches_and_fused_neighbours() -> None:
    rng = np.random.default_rng(1)
    a = _well_conditioned(rng, (3, 1, 4, 4), np.float64)
    b = rng.standard_normal((2, 4, 3))
    f = lambda a, b: np.linalg.solve(np.exp(a * 0.1) + a, b - 1.0).sum(axis=-1)  # noqa: E731
    _check(f, a, b, tol=_tol(np.float64))
    _check(lambda a: np.linalg.inv(np.broadcast_to(a[0, 0], (5, 4, 4))), a,
           tol=_tol(np.float64))
    _check(lambda a: np.linalg.det(a.reshape(3, 2, 8)[:, :, :2].reshape(3, 2, 2) + 1), a,
           tol=_tol(np.float64))
    mixed = rng.standard_normal((4, 2)).astype(np.float32)
    _check(lambda a, b: np.linalg.solve(a[0, 0], b), a, mixed, tol=_tol(np.float64))
    _check(lambda a: np.linalg.inv([[2.0, 1.0], [1.0, 3.0]]) + a[0, 0, :2, :2], a,
           tol=_tol(np.float64))


def test_float32_is_computed_in_float64_as_numpy_does() -> None:
    # Entries near float32's largest value: sgesv's elimination overflows to inf (and NaN
    # results), NumPy's dgesv of the same matrices does not; results equal NumPy's bits.
    a = np.array([[[-7.9099263e37, 3.3810276e38], [3.2696804e38, 1.2616855e38]],
                  [[2.9380058e38, -2.6184581e38], [2.9064827e38, 3.1818981e38]]], np.float32)
    b = np.array([[3.0091855e37, 3.7689347e37], [-2.3884046e38, 3.2138760e38]], np.float32)

    def f(a, b):
        return (np.linalg.solve(a, b[..., None])[..., 0], np.linalg.inv(a), np.linalg.det(a),
                np.linalg.slogdet(a * 1e-38)[1], np.linalg.eigvalsh(a * 1e-38))

    with np.errstate(over="ignore"):  # det overflows float32 in NumPy too: inf
        assert_same(fusejit.jit(f)(a, b), f(a, b), rtol=0.0)


@pytest.mark.parametrize("fn", ["solve", "inv", "cholesky", "eigh", "det"])
def test_linalg_errors_after_the_call(fn: str) -> None:
    a = np.zeros((3, 3, 3))
    a[:] = np.eye(3)
    a[1] = [[1, 2, 3], [2, 4, 6], [1, 1, 1]]  # singular, and not positive definite
    b = np.ones((3, 3, 1))
    f = {"solve": lambda a, b: np.linalg.solve(a, b),
         "inv": lambda a, b: np.linalg.inv(a) + b,
         "cholesky": lambda a, b: np.linalg.cholesky(a) * b,
         "eigh": lambda a, b: np.linalg.eigh(a)[0] + b[..., 0],
         "det": lambda a, b: np.linalg.det(a) + b[:, 0, 0]}[fn]
    run_both(f, a, b)  # eigh and det succeed; the others raise LinAlgError
    if fn in ("solve", "inv", "cholesky"):
        with pytest.raises(LinAlgError) as got:
            fusejit.jit(f)(a, b)
        with pytest.raises(LinAlgError) as want:
            f(a, b)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("f, shapes", [
    (lambda a: np.linalg.inv(a), [(3,)]),
    (lambda a: np.linalg.inv(a), [(2, 3)]),
    (lambda a: np.linalg.det(a), [(4, 2, 3)]),
    (lambda a: np.linalg.cholesky(a), [()]),
    (lambda a, b: np.linalg.solve(a, b), [(2, 2), (3,)]),
    (lambda a, b: np.linalg.solve(a, b), [(2, 2), (3, 1)]),
    (lambda a, b: np.linalg.solve(a, b), [(3, 2, 2), (2, 2, 1)]),
    (lambda a, b: np.linalg.solve(a, b), [(2, 2), ()]),
    (lambda a: np.linalg.eigh(a, UPLO="X"), [(2, 2)]),
    (lambda a: np.linalg.inv(a.astype(np.float16)), [(2, 2)]),
])
def test_bad_input_raises_numpys_error(f: Any, shapes: list) -> None:
    run_both(f, *[np.ones(s) for s in shapes])


def test_explain_cuda_and_export_refuse() -> None:
    a = _spd(np.random.default_rng(2), (4, 3, 3), np.float32)
    jf = fusejit.jit(lambda a: np.linalg.cholesky(a * 2) + 1, backend="c")  # (LAPACK: C only)
    text = str(jf.explain(a))
    # float32 in, float64 LAPACK (NumPy's linalg computes in double and casts back)
    assert "np.linalg cholesky batch [4] x [3x3] float64: SciPy LAPACK dpotrf" in text
    from fusejit.frontend.trace import trace
    from fusejit.lowering.lower import contiguous_strides, lower
    from fusejit.lowering.pipeline import optimise

    graph = optimise(trace(lambda a: np.linalg.inv(a), [a])[0])
    with pytest.raises(UnsupportedError, match="np.linalg.inv .*cannot run it"):
        lower(graph, [contiguous_strides(a.shape)], blas=False)


def test_unsupported_linalg_is_named_with_its_module() -> None:
    with pytest.raises(UnsupportedError, match=r"np\.linalg\.eig is not supported.*dtype "
                                               r"of its result depends on the values.*eigh"):
        fusejit.jit(lambda a: np.linalg.eig(a))(np.eye(2))
    with pytest.raises(UnsupportedError, match=r"np\.linalg\.eigvals is not supported"):
        fusejit.jit(lambda a: np.linalg.eigvals(a))(np.eye(2))


@pytest.mark.parametrize("case", ["assign", "assign_then_scatter", "add"])
def test_singular_leaves_updated_arguments_untouched(case: str) -> None:
    def f(a, w):
        if case == "add":
            w += np.linalg.solve(a, w)
            return None
        w[...] = np.linalg.inv(a)
        if case == "assign_then_scatter":
            w[0, 0] = 5.0
        return w * 2

    a = np.stack([np.eye(3), np.ones((3, 3)), 2 * np.eye(3)])
    w = np.full((3, 3, 3), 7.0)
    with pytest.raises(LinAlgError, match="Singular matrix"):
        fusejit.jit(f)(a, w)
    assert (w == 7.0).all()  # nothing half-written, not even the matrices before the bad one
    a[1] = 4 * np.eye(3)
    w2 = w.copy()
    assert_same(fusejit.jit(f)(a, w), f(a, w2), rtol=1e-12)
    assert_same(w, w2, rtol=1e-12)


def test_export_refuses_with_a_clear_error(tmp_path: Any) -> None:
    a = _spd(np.random.default_rng(4), (3, 3), np.float64)
    with pytest.raises(UnsupportedError, match=r"np\.linalg\.solve .*cannot run it"):
        fusejit.export(lambda a: np.linalg.solve(a, a[0]), a, path=str(tmp_path / "libs.so"))


def test_explain_shows_the_lines_of_composites() -> None:
    x = np.linspace(-1.0, 4.0, 9)
    jf = fusejit.jit(lambda x: np.interp(x, [0.0, 1.0, 2.0], [1.0, 3.0, 2.0]) + x.imag)
    assert "np.interp(x, [0.0, 1.0, 2.0]" in str(jf.explain(x))


def test_large_matrices_run_one_at_a_time_on_lapacks_threads() -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 150, 150)) + 150 * np.eye(150)  # n > clapack.PAR_MAX_N
    tol = {"rtol": 1e-8, "atol": 1e-10}
    _check(lambda a: np.linalg.inv(a), a, tol=tol)
    _check(lambda a: np.linalg.det(a / 150), a, tol=tol)
    _check(lambda a: np.linalg.eigvalsh(a + np.swapaxes(a, -1, -2)), a, tol=tol)
