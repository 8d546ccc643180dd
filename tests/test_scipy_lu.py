"""scipy.linalg.lu, lu_factor and lu_solve of traced matrices (codegen/clapack_lu.py) against
SciPy: the same LAPACK routines in the same precision, so the factors and pivots are SciPy's
to the bit; shapes (square, wide, tall, batched, empty), layouts, dtypes, every mode of lu,
lu_solve's trans and right-hand sides, and the errors (SciPy's for bad shapes and arguments,
check_finite's ValueError, an IndexError for pivots outside the matrix, refusals by name).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, run_both

import fusejit

sl = pytest.importorskip("scipy.linalg")
pytestmark = pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")
RNG = np.random.default_rng(37)


def _lu_all(a):
    return (sl.lu_factor(a), sl.lu(a), sl.lu(a, p_indices=True), sl.lu(a, permute_l=True))


@pytest.mark.parametrize("shape", [(5, 5), (3, 6), (6, 3), (2, 4, 4), (2, 1, 3, 2), (1, 1)])
def test_factors_are_scipys(shape) -> None:
    a = RNG.standard_normal(shape)
    run_both(lambda a: _lu_all(a[0]) if len(shape) == 4 else sl.lu(a), a)
    if len(shape) == 2:
        run_both(_lu_all, a)
        run_both(lambda a: _lu_all(a.T), a)  # a transposed (strided) operand
        run_both(lambda a: _lu_all(a.astype(np.float32)), a)  # sgetrf, as SciPy
    else:
        run_both(lambda a: sl.lu(a, p_indices=True), a)


def test_dtypes_special_matrices_and_errors() -> None:
    a = RNG.standard_normal((4, 4))
    run_both(lambda a: _lu_all(a.astype(np.float16)), a)  # float32 results
    run_both(lambda a: _lu_all((a * 4).astype(np.int64)), a)  # float64 results
    singular = a.copy()
    singular[2] = singular[0] * 2  # exactly singular: factored, no error (SciPy warns)
    run_both(_lu_all, singular)
    run_both(lambda a: _lu_all(np.zeros((3, 3)) * a[0, 0]), a)
    run_both(lambda a: sl.lu(a[:0]), a)  # (0, 4)
    run_both(lambda a: sl.lu_factor(a[:0, :0]), a)
    run_both(lambda a: sl.lu(a[0]), a)  # ValueError: not 2-d
    bad = a.copy()
    bad[1, 1] = np.nan
    run_both(lambda a: sl.lu_factor(a), bad)  # check_finite: ValueError
    got = fusejit.jit(lambda a: sl.lu_factor(a, check_finite=False))(bad)[0]
    assert np.isnan(got).any()
    with pytest.raises(fusejit.UnsupportedError, match="lu of complex"):
        fusejit.jit(lambda a: sl.lu(a * 1j))(a)


def test_lu_solve_matches_scipy() -> None:
    a, b = RNG.standard_normal((5, 5)), RNG.standard_normal((5, 3))
    def solving(trans):
        return lambda a, b: (sl.lu_solve(sl.lu_factor(a), b, trans=trans),
                             sl.lu_solve(sl.lu_factor(a), b[:, 0], trans=trans))

    for trans in (0, 1, 2):
        run_both(solving(trans), a, b)
    lu, piv = sl.lu_factor(a)  # factored outside, solved inside
    run_both(lambda lu, piv, b: sl.lu_solve((lu, piv), b * 2), lu, piv, b)
    run_both(lambda lu, piv, b: sl.lu_solve((lu.astype(np.float32), piv),
                                            b.astype(np.float32)), lu, piv, b)
    run_both(lambda lu, piv, b: sl.lu_solve((lu, piv), b[:4]), lu, piv, b)  # ValueError
    run_both(lambda lu, piv, b: sl.lu_solve((lu, piv), b, trans=5), lu, piv, b)  # its error
    f = fusejit.jit(lambda lu, piv, b: sl.lu_solve((lu, piv), b))
    for wrong in (piv + 5, piv - 9):
        with pytest.raises(IndexError):  # SciPy reads past its memory here
            f(lu, wrong, b)
    assert_same(f(lu, piv, b), sl.lu_solve((lu, piv), b))
    run_both(lambda a: sl.lu_solve(sl.lu_factor(a), a[:, :, 0]), np.stack([a, a]))  # its error
    with pytest.raises(fusejit.UnsupportedError, match="batch of factorisations"):
        fusejit.jit(lambda a: sl.lu_solve(sl.lu_factor(a), a[:, :, :1]))(np.stack([a, a]))


def test_explain_and_cuda_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    a = RNG.standard_normal((4, 6))
    text = str(fusejit.jit(lambda a: sl.lu(a)).explain(a))
    assert "scipy.linalg.lu/lu_factor [4x6] float64: SciPy LAPACK dgetrf" in text
    import cuda_fake

    cuda_fake.install(monkeypatch)
    with pytest.raises(fusejit.UnsupportedError, match="lu_factor.*CUDA backend"):
        fusejit.jit(lambda a: sl.lu_factor(a), backend="cuda")(a)
