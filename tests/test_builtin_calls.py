"""Python's builtin max() and min() of traced values (frontend/builtin_calls.py)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit
from fusejit import UnsupportedError

SPECIAL = [np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 2.5]


def _same(got, want) -> None:
    assert type(got) is type(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def pick3_max(v):
    return max(v[0], v[1], v[2])


def pick3_min(v):
    return min(v[0], v[1], v[2])


def pick_list_max(v):
    return max([v[0], v[1]])


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.sampled_from(SPECIAL), min_size=3, max_size=3),
       st.sampled_from([np.float32, np.float64, np.int32]))
def test_the_builtins_answers_bit_for_bit(vals, dtype) -> None:
    """NaN wins only as the first argument, the first of equal values stays (-0.0 and 0.0):
    the builtin's comparisons, not np.maximum's."""
    if np.dtype(dtype).kind == "i":
        vals = [0 if np.isnan(v) or np.isinf(v) else int(v) for v in vals]
    v = np.array(vals, dtype)
    for f in (pick3_max, pick3_min, pick_list_max):
        _same(fusejit.jit(f)(v), f(v))


def test_reductions_python_ints_and_helpers() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(10), rng.standard_normal(10)

    def scale(a):  # a helper function's max is replaced too
        return a / max(np.abs(a).max(), np.float64(1e-8))

    def f(x, y):
        return scale(x) * max(x.max(), y.max()), min(x.max(), y.min())

    got, want = fusejit.jit(f)(x, y), f(x, y)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-15)
    _same(got[1], want[1])

    def g(x, n):  # a Python int argument and a Python int: a Python int either way
        return x * max(n, 2) + min(x.shape) + max(3, 4)

    for n in (1, 3):
        _same(fusejit.jit(g)(x, n), g(x, n))
        assert fusejit.jit(g)(x.astype(np.float32), n).dtype == np.float32


def test_refusals_and_numpys_error() -> None:
    x, y = np.ones(4, np.float32), np.ones(4, np.float32)
    with pytest.raises(UnsupportedError, match=r"different types \(a Python float, float32\)"):
        fusejit.jit(lambda x: max(x.max(), 1e-8))(x)
    with pytest.raises(UnsupportedError, match="float32, float64"):
        fusejit.jit(lambda x: min(x.max(), x.astype(np.float64).max()))(x)
    with pytest.raises(UnsupportedError, match="np.max"):
        fusejit.jit(lambda x: max(x))(x)
    with pytest.raises(UnsupportedError, match="key="):
        fusejit.jit(lambda x, y: max(x[0], y[0], key=abs))(x, y)
    with pytest.raises(UnsupportedError, match="one-element"):
        fusejit.jit(lambda x, y: max(x[:1], y[:1]))(x, y)
    with pytest.raises(ValueError, match="truth value"):
        max(x, y)  # NumPy's
    with pytest.raises(ValueError, match="truth value"):
        fusejit.jit(lambda x, y: max(x, y))(x, y)
