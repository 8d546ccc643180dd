"""The math module in traced code (frontend/pymath.py): math functions of Python-scalar
arguments are Python's, run at each call in the prelude (value, type and errors), so an
optimizer's step counter `t` stays an argument (one compile) instead of a static one."""

from __future__ import annotations

import math
from math import floor, sqrt

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit.errors import UnsupportedError

RNG = np.random.default_rng(8)
W, G = RNG.standard_normal(6), RNG.standard_normal(6)


def adam_like(w, g, m, v, t, lr):
    b1, b2 = 0.9, 0.999
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    step = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    return w - step * m / (np.sqrt(v) + 1e-8), m, v


def test_bias_corrected_step_compiles_once_across_steps() -> None:
    jf = fusejit.jit(adam_like)
    m, v = np.zeros(6), np.zeros(6)
    jm, jv = m.copy(), v.copy()
    w = jw = W.copy()
    for t in range(1, 6):
        w, m, v = adam_like(w, G, m, v, t, 1e-3)
        jw, jm, jv = jf(jw, G, jm, jv, t, 1e-3)
        assert_same((jw, jm, jv), (w, m, v))
    assert jf.compile_count == 1  # t and lr are arguments, not static


def _mixed(a, s, n):
    return (a * sqrt(s) + floor(s) + math.pi * math.exp(-s) + math.log(s, 2)
            + math.gcd(n, 12) + math.copysign(1.0, -s) + math.hypot(s, 3.0))


@pytest.mark.parametrize("s, n", [(2.5, 8), (9.0, 7), (0.125, 0)])
def test_math_functions_of_python_scalars_match_python(s, n) -> None:
    jf = fusejit.jit(_mixed)
    assert_same(jf(W, s, n), _mixed(W, s, n))
    assert_same(fusejit.jit(lambda s: math.floor(s) * 2)(s), math.floor(s) * 2)  # an int


def test_python_errors_are_raised_when_the_call_runs() -> None:
    jf = fusejit.jit(lambda a, s: a * math.sqrt(s))
    assert_same(jf(W, 4.0), W * 2.0)
    with pytest.raises(ValueError, match="math domain error"):
        jf(W, -1.0)
    with pytest.raises(OverflowError):
        fusejit.jit(lambda a, s: a * math.exp(s))(W, 1000.0)
    assert_same(jf(W, 9.0), W * 3.0)  # and computes again


def test_math_of_an_array_value_is_refused_at_the_line() -> None:
    def f(a):
        return math.sqrt(a.sum())  # MARK

    with pytest.raises(UnsupportedError, match="np.sqrt") as info:
        fusejit.jit(f)(W)
    assert "test_pymath.py" in str(info.value)
    with pytest.raises(UnsupportedError, match="scipy.special.gammaln"):
        fusejit.jit(lambda a: math.lgamma(a[0]))(W)


def test_prelude_shows_the_math_call() -> None:
    text = str(fusejit.jit(adam_like).explain(W, G, W, W, 3, 1e-3))
    assert "math.sqrt(" in text and "_math" not in text
