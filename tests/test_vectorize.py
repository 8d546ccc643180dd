"""np.vectorize with traced arguments (frontend/vectorize.py): NumPy's values, dtypes, shapes
and result kinds where the function is elementwise, clear refusals where it is not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit.errors import ConcretizationError, UnsupportedError

X = np.linspace(-2.0, 3.0, 12).reshape(3, 4)
X32 = np.linspace(-2.0, 3.0, 12, dtype=np.float32)
ROW = np.arange(4.0)
SQUARE = np.vectorize(lambda v: v ** 2)  # made before any trace


def _gap(v, w):
    return np.where(v > w, v - w, np.exp(v))


CASES = {
    "one argument": (lambda a: np.vectorize(lambda v: v * 2 + 1)(a), (X,)),
    "broadcast pair": (lambda a, b: np.vectorize(_gap)(a, b), (X, ROW)),
    "tuple result": (lambda a: np.vectorize(lambda v: (v, v > 0))(a), (X,)),
    "made before the trace": (lambda a: SQUARE(a), (X,)),
    "otypes": (lambda a: np.vectorize(lambda v: v * 2 + 1, otypes=[np.float32])(a), (X,)),
    "constant result": (lambda a: np.vectorize(lambda v: 3)(a), (X,)),
    "excluded": (lambda a: np.vectorize(lambda v, k: v * k, excluded={1})(a, 3), (X,)),
    "0-d": (lambda a: np.vectorize(lambda v: v * 2 + 1)(a), (np.float64(2.0),)),
    # float32 elements reach the function as Python floats: double arithmetic, then float32
    "float32 in double": (lambda a: np.vectorize(lambda v: v * v * v + 0.1)(a), (X32,)),
    "float32 scalar inside": (lambda a: np.vectorize(lambda v: v * np.float32(3) + 1)(a),
                              (X32,)),
    "python int argument": (lambda a: np.vectorize(lambda v, k: v * k)(a, 3), (X32,)),
    "numpy scalar argument": (lambda a: np.vectorize(lambda v, k: v * k)(a, np.float32(0.1)),
                              (X,)),
    "complex": (lambda a: np.vectorize(lambda v: v * 1j + 2)(a), (X32,)),
    "list argument": (lambda a: np.vectorize(lambda v, w: v - w)(a, [1.0, 2.0, 3.0, 4.0]), (X,)),
    "keyword": (lambda a: np.vectorize(lambda v, w=1.0: v - w)(a, w=a[0]), (X,)),
    "size 0 with otypes": (lambda a: np.vectorize(lambda v: v + 1, otypes="d")(a),
                           (np.zeros((0, 3)),)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_numpy(name: str) -> None:
    f, args = CASES[name]
    want = f(*args)
    got = fusejit.jit(f)(*args)
    for g, w in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, want))):
        assert type(g) is type(w) is np.ndarray
        assert_same(g, w)  # (dtype and shape too; exp of an element: a few ulp)
    # (NumPy's own again after the trace)
    assert not hasattr(np.vectorize.__call__, "__fusejit_original__")


REFUSED = {
    "reduction": (lambda a: np.vectorize(lambda v: v.sum())(a), (X,), UnsupportedError, "`reduce`"),
    "constant array": (lambda a: np.vectorize(lambda v: v * np.array([1.0, 2, 3, 4]))(a), (X,),
                       UnsupportedError, "constant array"),
    "signature": (lambda a: np.vectorize(np.sum, signature="(n)->()")(a), (X,),
                  UnsupportedError, "signature"),
    "integers": (lambda a: np.vectorize(lambda v: v * 2)(a), (np.arange(5),), UnsupportedError,
                 "Python int"),
    "branch": (lambda a: np.vectorize(lambda v: v if v > 0 else -v)(a), (X,),
               ConcretizationError, "np.where"),
    "math module": (lambda a: np.vectorize(math.sqrt)(a), (X,), UnsupportedError, "np.sqrt"),
    # a branch on a value the trace knows, whole (NumPy would pass one element of it)
    "branch on a known array": (lambda a: np.vectorize(
        lambda v, lo: v if lo == 0 else -v)(a, np.zeros(X.shape)), (X,), UnsupportedError,
        "branches on their values"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_refusals_name_the_reason(name: str) -> None:
    f, args, error, words = REFUSED[name]
    with pytest.raises(error, match=f".*{words}") as info:
        fusejit.jit(f)(*args)
    assert "test_vectorize.py" in str(info.value)


def test_size_0_without_otypes_raises_numpys_error() -> None:
    f = lambda a: np.vectorize(lambda v: v + 1)(a)  # noqa: E731
    with pytest.raises(ValueError, match="size 0 inputs") as numpy_error:
        f(np.zeros((0, 3)))
    with pytest.raises(ValueError, match=str(numpy_error.value)):
        fusejit.jit(f)(np.zeros((0, 3)))


def test_untraced_calls_stay_numpys() -> None:
    """Inside a traced function, a call with no traced argument is NumPy's own (per element,
    a constant of the compiled function)."""
    def f(a):
        table = np.vectorize(lambda k: k * 3 if k % 2 else -k)(np.arange(5))
        return a + table

    a = np.ones(5)
    assert_same(fusejit.jit(f)(a), f(a))
