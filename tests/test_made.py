"""Arrays the traced function makes with NumPy, indexed by traced values
(frontend/made.py): one-hot rows from np.eye(k)[labels], lookup tables, and the errors for
what cannot trace (writing traced values into such an array, np.float32(traced))."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit.errors import ConcretizationError, UnsupportedError

RNG = np.random.default_rng(28)
X = RNG.standard_normal((6, 4))
LABELS = np.array([0, 3, 1, 2, 3, 0])


def one_hot_loss(x, labels):
    p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    return -(np.eye(4)[labels] * np.log(p)).sum() / len(x)


def test_one_hot_from_eye_matches_numpy() -> None:
    assert_same(fusejit.jit(lambda lab: np.eye(4)[lab])(LABELS), np.eye(4)[LABELS])
    f32 = fusejit.jit(lambda lab: np.eye(4, dtype=np.float32)[lab])(LABELS)
    assert_same(f32, np.eye(4, dtype=np.float32)[LABELS])
    assert_same(fusejit.jit(one_hot_loss)(X, LABELS), one_hot_loss(X, LABELS))


def test_one_hot_loss_gradient_matches_the_index_form() -> None:
    def picked(x, labels):
        p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
        return -np.log(p[np.arange(len(x)), labels]).sum() / len(x)

    g = fusejit.grad(one_hot_loss)(X, LABELS)
    assert_same(g, fusejit.grad(picked)(X, LABELS))


def _tables(codes, x):
    table = np.array([1.5, 2.0, 5.0, 7.0])
    squares = np.arange(8) ** 2  # ufuncs of a made array keep it one
    grid = np.arange(12.0).reshape(3, 4)
    return table[codes] * x[:, 0], squares[codes + 1], grid[codes % 3, codes], grid[codes % 3]


def test_lookup_tables_made_inside_the_function() -> None:
    codes = np.array([0, 3, 1, 2, 3, 0])
    assert_same(fusejit.jit(_tables)(codes, X), _tables(codes, X))
    neg = -codes - 1  # negative indices count from the end, as in NumPy
    assert_same(fusejit.jit(_tables)(neg, X)[0], _tables(neg, X)[0])


def test_out_of_range_index_raises_numpys_error() -> None:
    jf = fusejit.jit(lambda i: np.array([1.0, 2.0, 3.0])[i])
    with pytest.raises(IndexError):
        np.array([1.0, 2.0, 3.0])[np.array([0, 3])]
    with pytest.raises(IndexError):
        jf(np.array([0, 3]))
    assert_same(jf(np.array([2, -3])), np.array([3.0, 1.0]))


def test_bound_names_and_masks() -> None:
    from numpy import arange, eye

    def f(lab, x):
        return eye(4)[lab], arange(6)[x[:, 0] > 0].sum()

    assert_same(fusejit.jit(f)(LABELS, X), f(LABELS, X))


def test_made_arrays_stay_numpy_arrays_elsewhere() -> None:
    def f(x):
        c = np.linspace(0.0, 1.0, 4)
        assert isinstance(c, np.ndarray) and repr(c).startswith("array(")
        assert type(c.sum()) is np.float64 and type(np.exp(c)[0]) is np.float64
        return x * c, c[1:3], c.tolist()[2], np.arange(3), c.max(), np.cumsum(c)[-1]

    got, expect = fusejit.jit(f)(X), f(X)
    assert_same(got, expect)
    assert type(got[1]) is np.ndarray and type(got[3]) is np.ndarray
    assert type(got[4]) is type(expect[4]) and type(got[5]) is type(expect[5])


def test_writing_traced_values_into_a_made_array_is_refused_at_the_line() -> None:
    def f(x):
        a = np.zeros_like(np.eye(4))
        a[0] = x[0]
        return a

    with pytest.raises(UnsupportedError, match=r"test_made.py:\d+.*np.zeros, np.ones"):
        fusejit.jit(f)(X)

    def g(x, i):
        a = np.arange(4.0)
        a[i] = 1.0
        return a * x[0]

    with pytest.raises(UnsupportedError, match="at a traced index"):
        fusejit.jit(g)(X, np.array(2))


def test_numpy_scalar_type_of_a_traced_value_says_what_to_write() -> None:
    with pytest.raises(ConcretizationError, match=r"np.asarray\(lr, dtype=np.float32\)"):
        fusejit.jit(lambda x, lr: np.float32(lr) * x)(X.astype(np.float32), 0.1)
    jf = fusejit.jit(lambda x, lr: np.asarray(lr, dtype=np.float32) * x)
    x32 = X.astype(np.float32)
    assert_same(jf(x32, 0.1), np.float32(0.1) * x32)
