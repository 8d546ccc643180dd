"""`isinstance` on traced values in the user's code answers as for NumPy's values
(frontend/apparent_class.py): np.ndarray for arrays, the dtype's scalar type for NumPy
scalars, so helpers that branch on it take NumPy's branch."""

from __future__ import annotations

import functools

import numpy as np
from conftest import assert_same

import fusejit


def _as_array(v):
    if not isinstance(v, np.ndarray):
        raise TypeError("expected an ndarray")
    return v


@functools.singledispatch
def _scale(v):
    raise NotImplementedError(f"_scale of {type(v).__name__}")


@_scale.register
def _(v: np.ndarray):
    return v * 2


def _kinds(v):
    """Which of NumPy's classes `v` is an instance of, as a tuple of bools."""
    return (isinstance(v, np.ndarray), isinstance(v, np.generic), isinstance(v, np.floating),
            isinstance(v, float), isinstance(v, np.integer), v.__class__ is np.ndarray)


def user_code(x, i, s):
    total = x.sum()  # a NumPy scalar
    shown = _kinds(x) + _kinds(total) + _kinds(i) + _kinds(i[0]) + _kinds(s)
    flags = np.array(shown)
    y = _as_array(x) + _scale(x)
    z = total if isinstance(total, np.generic) else float(total)
    return y * z, flags


def test_isinstance_in_user_code_answers_as_numpy() -> None:
    args = (np.arange(6.0).reshape(2, 3), np.arange(3), np.float32(1.5))
    want = user_code(*args)
    assert_same(fusejit.jit(user_code)(*args), want)
    assert want[1].tolist()[:6] == [True, False, False, False, False, True]
