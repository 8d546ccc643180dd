"""NumPy functions composed from traced operations (frontend/composite.py) and masked means:
np.linalg.norm, np.isclose, np.average, np.mean/var/std(where=), np.outer, np.diff, np.triu,
np.tril.

Property tests draw shapes (0-d, size-1, zero-size), dtypes (bool, ints, float32/64) and
layouts (contiguous, transposed, strided, reversed) and compare `jit(f)` with NumPy through
conftest's `run_both` (values, dtype, shape, NumPy scalar vs array, or the same exception
type); unit tests cover the errors fusejit raises where NumPy's answer needs what compiled code
cannot do.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_same, examples, run_both
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit
from fusejit.errors import UnsupportedError

RNG = np.random.default_rng(0)
DTYPES = [np.bool_, np.int8, np.int32, np.uint16, np.int64, np.float32, np.float64]

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def values(shape: tuple[int, ...], dtype) -> np.ndarray:
    if np.dtype(dtype) == np.bool_:
        return RNG.standard_normal(shape) > 0
    if np.dtype(dtype).kind == "u":
        return RNG.integers(0, 7, shape).astype(dtype)
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-6, 7, shape).astype(dtype)
    return (RNG.standard_normal(shape) * 3).astype(dtype)


def layout(draw, shape: tuple[int, ...], dtype) -> np.ndarray:
    """An array of `shape` and `dtype` with a drawn memory layout."""
    kind = draw(st.sampled_from(["c", "t", "step", "rev"]))
    if kind == "t" and len(shape) >= 2:
        return values(shape[::-1], dtype).T
    if kind == "step" and shape:
        return values(shape[:-1] + (2 * shape[-1],), dtype)[..., ::2]
    if kind == "rev" and shape:
        return values(shape, dtype)[::-1]
    return values(shape, dtype)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


def axis_for(draw, ndim: int, allow_tuple: bool = True):
    options = [None] + list(range(-ndim, ndim))
    if allow_tuple and ndim >= 2:
        options += [(0, ndim - 1), (ndim - 1, 0)]
    return draw(st.sampled_from(options))


@settings(max_examples=examples(25), deadline=None)
@given(shapes, st.sampled_from(DTYPES), st.sampled_from(
    [None, 1, -1, np.inf, -np.inf, 0, 3, 0.5, 2, -2, "fro", "nuc"]), st.booleans(), st.data())
def test_norm_property(shape, dtype, ord, keepdims, data) -> None:
    axis = axis_for(data.draw, len(shape))
    matrix = isinstance(axis, tuple) or (axis is None and len(shape) == 2 and ord is not None)
    if matrix and ord in (2, -2, "nuc"):  # the SVD norms: refused (test_norm_errors)
        ord = "fro"
    x = layout(data.draw, shape, dtype)
    run_both(lambda x: np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims), x)


def test_norm_errors_and_fusion() -> None:
    x = RNG.standard_normal((3, 4))
    for ord in (2, -2, "nuc"):  # the singular values' max, min, sum (tests/test_svd.py)
        got = fusejit.jit(lambda x: np.linalg.norm(x, ord=ord))(x)  # noqa: B023 - called now
        assert_same(got, np.linalg.norm(x, ord=ord), rtol=1e-12)
    for f in (lambda x: np.linalg.norm(x, ord=3),                   # bad matrix ord
              lambda x: np.linalg.norm(x, ord="fro", axis=1),       # 'fro' of vectors
              lambda x: np.linalg.norm(x, axis=(1, -1)),            # duplicate axes
              lambda x: np.linalg.norm(x[None], ord=1),             # 3-D without axis
              lambda x: np.linalg.norm(x, axis=(0, 1, 0)),
              lambda x: np.linalg.norm(x, axis=2),                  # AxisError
              lambda x: np.linalg.norm(x, axis=1.5)):               # TypeError
        run_both(f, x)
    # The norm of a difference is one fused reduction: the difference is never stored.
    jf = run_both(lambda a, b: np.linalg.norm(a - b, axis=1), x, x[::-1])
    assert len(jf.lower_for(x, x[::-1]).program.kernels) == 1


@st.composite
def isclose_case(draw):
    sa = draw(shapes)
    sb = sa[draw(st.integers(0, len(sa))):]  # b broadcasts against a
    a = layout(draw, sa, draw(st.sampled_from(DTYPES)))
    b = layout(draw, sb, draw(st.sampled_from(DTYPES)))
    if a.dtype.kind == "f" and b.dtype.kind == "f" and a.size and b.size:
        b = (np.broadcast_to(b, a.shape) if draw(st.booleans()) else b).copy()
        flat = b.reshape(-1)
        flat[:: 2] = np.broadcast_to(a, b.shape).reshape(-1)[::2] * (1 + 3e-6)
        special = np.array([np.nan, np.inf, -np.inf, 0.0, 1e-9], b.dtype)
        flat[1::3] = special[: len(flat[1::3])] if len(flat[1::3]) <= 5 else flat[1::3]
        if a.flags.writeable and a.ndim and draw(st.booleans()):
            a = a.copy()
            a.reshape(-1)[::3] = np.nan
    return a, b


@settings(max_examples=examples(25), deadline=None)
@given(isclose_case(), st.booleans(), st.sampled_from([(1e-5, 1e-8), (0.0, 1e-3), (1e-2, 0.0)]))
def test_isclose_property(case, equal_nan, tols) -> None:
    a, b = case
    rtol, atol = tols
    run_both(lambda a, b: np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan), a, b)


def test_isclose_scalars_and_allclose() -> None:
    x = np.array([1.0, 1.0 + 1e-6, np.nan, np.inf])
    # 0-d inputs give a NumPy bool scalar; Python scalars stay weak (y = float(y) for an int).
    run_both(lambda a, b: np.isclose(a, b), np.float32(1.0), np.float64(1.0 + 1e-9))
    run_both(lambda a, b: np.isclose(a, b), np.array(1), np.array(2))
    run_both(lambda a, b: np.isclose(a, b, atol=b), x, 1e-3)
    run_both(lambda a, b: np.isclose(a, b), x, 1)
    run_both(lambda a, b: np.isclose(a, b), np.arange(4, dtype=np.int8), 2)
    run_both(lambda a: np.isclose(a, 1, rtol=np.array([1e-3, 0, 1, 0])), x)
    run_both(lambda a, b: np.isclose(a, b).all(), x, x)
    with pytest.raises(UnsupportedError, match=r"np\.isclose\(a, b, rtol, atol, equal_nan\)"):
        fusejit.jit(lambda a, b: np.allclose(a, b))(x, x)
    with warnings.catch_warnings():  # NumPy's check of rtol/atol, at trace time
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="rtol or atol is not valid"):
            fusejit.jit(lambda a: np.isclose(a, a, atol=np.inf))(x)


@st.composite
def average_case(draw):
    shape = draw(shapes)
    x = layout(draw, shape, draw(st.sampled_from(DTYPES)))
    axis = axis_for(draw, len(shape))
    kind = draw(st.sampled_from(["none", "full", "axis"]))
    weights = None
    if kind == "full":
        weights = RNG.uniform(0.5, 2.0, shape).astype(draw(st.sampled_from(
            [np.float32, np.float64, np.int64])))
    elif kind == "axis" and axis is not None:
        ax = axis if isinstance(axis, tuple) else (axis,)
        weights = RNG.integers(1, 4, tuple(shape[a] for a in ax)).astype(np.int16)
    return x, axis, weights


@settings(max_examples=examples(25), deadline=None)
@given(average_case(), st.booleans(), st.sampled_from([np._NoValue, False, True]))
def test_average_property(case, returned, keepdims) -> None:
    x, axis, weights = case
    run_both(lambda x: np.average(x, axis=axis, weights=weights, returned=returned,
                                  keepdims=keepdims), x)


def test_average_errors() -> None:
    """np.average with weights that sum to zero: NumPy raises ZeroDivisionError after checking
    `np.any(scl == 0.0)`, a test of the data. fusejit makes that check at trace time for
    weights that are NumPy arrays (constants, globals, static arguments), so it raises exactly
    where NumPy does; for traced weights (an argument of the compiled function) the compiled
    code checks and raises the same ZeroDivisionError (tests/test_tail_calls.py)."""
    x = RNG.standard_normal((3, 4))
    run_both(lambda x: np.average(x, axis=1, weights=np.array([1.0, -1.0, 0.0, 0.0])), x)
    run_both(lambda x: np.average(x, weights=np.zeros((3, 4))), x)
    run_both(lambda x: np.average(x, weights=np.ones(4)), x)              # TypeError: no axis
    run_both(lambda x: np.average(x, axis=0, weights=np.ones(4)), x)      # ValueError: shape
    run_both(lambda x: np.average(x, axis=3), x)                          # AxisError
    run_both(lambda x: np.average(x, axis=1, returned=True), np.ones((0, 3)))  # 0 / 0 in Python
    with pytest.raises(ZeroDivisionError):
        fusejit.jit(lambda x, w: np.average(x, axis=1, weights=w))(x, np.zeros(4))


@st.composite
def masked_case(draw):
    shape = draw(shapes)
    x = layout(draw, shape, draw(st.sampled_from(DTYPES)))
    axis = axis_for(draw, len(shape))
    mshape = shape[draw(st.integers(0, len(shape))):]
    mask = RNG.random(mshape) < draw(st.sampled_from([0.0, 0.5, 1.0]))
    return x, axis, mask


@settings(max_examples=examples(25), deadline=None)
@given(masked_case(), st.sampled_from(["mean", "method", "var", "std", "const"]),
       st.booleans())
def test_masked_mean_property(case, fn, keepdims) -> None:
    x, axis, mask = case
    if fn == "const":  # the mask is a constant of the function, not an argument
        run_both(lambda x: np.mean(x, axis=axis, keepdims=keepdims, where=mask), x)
    elif fn == "method":
        run_both(lambda x, m: x.mean(axis=axis, keepdims=keepdims, where=m), x, mask)
    elif fn == "mean":
        run_both(lambda x, m: np.mean(x, axis=axis, keepdims=keepdims, where=m), x, mask)
    else:
        f = np.var if fn == "var" else np.std
        run_both(lambda x, m: f(x, axis=axis, keepdims=keepdims, where=m, ddof=1), x, mask)


def test_masked_mean_dtypes_and_errors() -> None:
    x = RNG.standard_normal((3, 4))
    m = x > 0
    run_both(lambda x, m: np.mean(x, axis=0, where=m), x.astype(np.float16), m)
    run_both(lambda x, m: np.mean(x, axis=1, where=m, dtype=np.float32), x, m)
    run_both(lambda x, m: np.mean(x, where=m, dtype=np.int64), (x * 10).astype(np.int16), m)
    run_both(lambda x: np.mean(x, where=False), x)                       # nan
    run_both(lambda x: x.var(axis=0, where=True), x)
    run_both(lambda x, m: np.mean(x, where=m), x, m.astype(np.int8))     # TypeError
    run_both(lambda x, m: np.mean(x, where=m), x, m[:2])                 # ValueError
    run_both(lambda x, m: np.mean(x, where=m, axis=2), x, m)             # AxisError


@st.composite
def rearranged_case(draw):
    fn = draw(st.sampled_from(["outer", "diff", "diff_ends", "triu", "tril", "batched"]))
    shape = draw(shapes)
    dtype = draw(st.sampled_from(DTYPES))
    if fn == "batched":
        shape = (2,) + shape
    return fn, layout(draw, shape, dtype), draw(st.integers(-2, 2)), draw(st.data())


@settings(max_examples=examples(25), deadline=None)
@given(rearranged_case())
def test_outer_diff_trilu_property(case) -> None:
    fn, x, k, data = case
    if fn == "outer":
        y = layout(data.draw, data.draw(shapes), data.draw(st.sampled_from(DTYPES)))
        run_both(lambda a, b: np.outer(a, b), x, y)
    elif fn == "diff":
        n = data.draw(st.integers(0, 3))
        axis = data.draw(st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1))
        run_both(lambda a: np.diff(a, n=n, axis=axis), x)
    elif fn == "diff_ends":
        pre = values(x.shape[:-1] + (1,), x.dtype) if x.ndim and data.draw(st.booleans()) \
            else 0
        run_both(lambda a, b: np.diff(a, n=max(k, 1), prepend=pre, append=b), x, 7)
    else:
        f = np.triu if fn == "triu" else np.tril
        run_both(lambda a: f(a, k=k), x)


def test_trilu_and_diff_values() -> None:
    x = np.arange(1.0, 13.0).reshape(3, 4)
    got = fusejit.jit(lambda a: (np.triu(a), np.tril(a, 1), np.diff(a > 5, axis=0)))(x)
    assert_same(got, (np.triu(x), np.tril(x, 1), np.diff(x > 5, axis=0)))
    run_both(lambda a: np.diff(a, n=-1), x)                              # ValueError
    run_both(lambda a: np.triu(a), x[0, 0])                              # 0-d: TypeError
    with pytest.raises(UnsupportedError, match="out="):
        fusejit.jit(lambda a: np.outer(a, a, out=np.empty((12, 12))))(x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_ufunc_outer_matches_numpy() -> None:
    """ufunc.outer(a, b): shape a.shape + b.shape, NumPy's dtypes (a Python float is a 0-d
    float64 array there), both results of a two-output ufunc."""
    rng = np.random.default_rng(5)
    x, i = rng.standard_normal((3, 4)), rng.integers(-5, 9, (2, 3))
    run_both(lambda x, i: (np.add.outer(x, x[0]), np.subtract.outer(x[0, 0], x),
                           np.multiply.outer(x.astype(np.float32), 2.0),
                           np.maximum.outer(i, i[0]), np.equal.outer(i[0], i[1]),
                           np.divmod.outer(i[0], np.array([3, -2])),
                           np.hypot.outer(x[0], [1.0, 2.0]), np.add.outer(x, x[:0])), x, i)
    with pytest.raises(ValueError, match="outer"):
        fusejit.jit(lambda x: np.negative.outer(x, x))(x)
