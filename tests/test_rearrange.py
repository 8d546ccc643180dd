"""np.flip/fliplr/flipud, np.roll, np.tile, np.repeat and np.pad (frontend/rearrange.py):
hypothesis draws shapes (0-d, size-1, zero-size), dtypes and layouts and compares `jit(f)`
with NumPy; unit tests cover NumPy's errors, the view semantics of flip and fusion."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, examples, run_both
from hypothesis import given, note, settings
from hypothesis import strategies as st

import fusejit
from fusejit.errors import UnsupportedError

RNG = np.random.default_rng(3)


@st.composite
def arrays(draw, min_dims: int = 0):
    ndim = draw(st.integers(min_dims, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int16, np.uint8, np.bool_]))
    a = (RNG.standard_normal(shape) * 5).astype(dtype)
    if ndim and draw(st.booleans()):
        a = np.ascontiguousarray(a.T).T if draw(st.booleans()) else a[::-1]
    return a


@settings(max_examples=examples(40), deadline=None)
@given(arrays(), st.data())
def test_flip_and_roll_match_numpy(a, data) -> None:
    nd = a.ndim
    axes = data.draw(st.one_of(st.none(), st.integers(-max(nd, 1), max(nd, 1) - 1)))
    note(f"{a.dtype}{a.shape} axis={axes}")
    run_both(lambda a: np.flip(a, axes) if nd or axes is None else np.flip(a), a)
    shift = data.draw(st.integers(-9, 9))
    run_both(lambda a: np.roll(a, shift, axes), a)
    if nd >= 2:
        run_both(lambda a: (np.fliplr(a), np.flipud(a), np.roll(a, (1, -2), (0, -1))), a)


@settings(max_examples=examples(40), deadline=None)
@given(arrays(), st.lists(st.integers(0, 3), min_size=1, max_size=4), st.data())
def test_tile_and_repeat_match_numpy(a, reps, data) -> None:
    note(f"{a.dtype}{a.shape} reps={reps}")
    run_both(lambda a: np.tile(a, reps), a)
    run_both(lambda a: np.tile(a, reps[0]), a)
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1))) if a.ndim \
        else None
    n = a.size if axis is None else a.shape[axis]
    counts = data.draw(st.one_of(st.integers(0, 3),
                                 st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    run_both(lambda a: np.repeat(a, counts, axis), a)


@settings(max_examples=examples(40), deadline=None)
@given(arrays(min_dims=1), st.sampled_from(["constant", "edge", "wrap", "reflect",
                                            "symmetric"]), st.data())
def test_pad_matches_numpy(a, mode, data) -> None:
    widths = [(data.draw(st.integers(0, 5)), data.draw(st.integers(0, 5))) for _ in a.shape]
    kw = {}
    if mode == "constant" and data.draw(st.booleans()):
        kw["constant_values"] = [(data.draw(st.integers(-3, 3)), 1.5) for _ in a.shape]
    note(f"{a.dtype}{a.shape} {mode} {widths} {kw}")
    run_both(lambda a: np.pad(a, widths, mode=mode, **kw), a)
    run_both(lambda a: np.pad(a, widths[0][0], mode=mode), a)


def test_errors_match_numpy() -> None:
    x = RNG.standard_normal((3, 4))
    for f in (lambda x: np.flip(x, 2), lambda x: np.flip(x, (0, 0)), lambda x: np.fliplr(x[0]),
              lambda x: np.roll(x, (1, 2), axis=(0, 1, 1)), lambda x: np.roll(x, 1, axis=3),
              lambda x: np.tile(x, -1), lambda x: np.repeat(x, -1),
              lambda x: np.repeat(x, [1, 2], axis=1), lambda x: np.pad(x, -1),
              lambda x: np.pad(x, 1.5), lambda x: np.pad(x, ((1, 2), (3, 4), (5, 6))),
              lambda x: np.pad(x, 1, mode="edge", constant_values=3),
              lambda x: np.pad(x[:0], 1, mode="wrap")):
        run_both(f, x)
    for f, what in ((lambda x: np.pad(x, 1, mode=lambda *a: None), "mode=<function"),
                    (lambda x, r: np.repeat(x, r), "traced repeats")):
        with pytest.raises(UnsupportedError, match=f"{what}.*test_rearrange.py"):
            fusejit.jit(f)(x, np.array(2)) if f.__code__.co_argcount == 2 else \
                fusejit.jit(f)(x)


def test_flip_is_a_view_and_the_rest_copy() -> None:
    def f(x):
        v = np.flip(x, 0)
        v[0] = 0.0  # NumPy's flip is a view: this writes x's last row
        t = np.tile(x, 2)
        t[0] = 5.0  # a copy: x is not changed
        return t

    x = RNG.standard_normal((3, 4))
    xn, xj = x.copy(), x.copy()
    assert_same(fusejit.jit(f)(xj), f(xn))
    assert_same(xj, xn)


def test_rearranged_values_fuse_into_their_consumer() -> None:
    x = RNG.standard_normal((64, 32)).astype(np.float32)
    for f in (lambda x: np.tile(x, (2, 3)) * 2 + 1, lambda x: np.pad(x, 2, "reflect") - 1,
              lambda x: np.repeat(x, 2, axis=0) + np.flip(np.repeat(x, 2, axis=0), 1)):
        jf = run_both(f, x)
        assert len(jf.lower_for(x).program.kernels) == 1
