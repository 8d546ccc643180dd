"""NumPy functions traced through NumPy's own code (frontend/numpy_lib.py) or written from
traced operations (frontend/numpy_more.py), and SciPy's array-API functions
(scipy.special.softmax, log_softmax, scipy.stats.zscore) through `__array_namespace__`.

Property tests draw shapes (0-d, size-1, zero-size where NumPy allows), dtypes and layouts
(contiguous, transposed, strided, reversed) and compare `jit(f)` with NumPy through
conftest's `run_both` (values, dtype, shape, scalar vs array, or the same exception type).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import assert_same, examples, run_both, subprocess_env
from hypothesis import given, settings
from hypothesis import strategies as st
from test_composite import layout

import fusejit
from fusejit.errors import UnsupportedError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FLOATS = [np.float32, np.float64]
NUMERIC = [np.bool_, np.int8, np.int32, np.uint16, np.int64, np.float32, np.float64]
small = st.integers(0, 4)


@settings(max_examples=examples(25))
@given(st.data())
def test_cov_corrcoef(data):
    dtype = data.draw(st.sampled_from([np.int32, np.float32, np.float64]))
    shape = data.draw(st.sampled_from([(3,), (2, 4), (3, 5), (1, 3), (4, 2)]))
    x = layout(data.draw, shape, dtype)
    rowvar = data.draw(st.booleans())
    ddof = data.draw(st.sampled_from([None, 0, 2]))
    run_both(lambda a: np.cov(a, rowvar=rowvar, ddof=ddof), x)
    if shape[-1] > 1:
        run_both(lambda a: np.corrcoef(a, rowvar=rowvar), x)


def _cov_cases():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 6))
    fw, aw = np.array([1, 2, 0, 3, 1, 1]), rng.random(6) + 0.1
    return x, fw, aw, [
        (lambda x, f: np.cov(x, fweights=f), (x, fw)),
        (lambda x, a: np.cov(x, aweights=a), (x, aw)),
        (lambda x, f, a: np.cov(x, fweights=f, aweights=a), (x, fw, aw)),
        (lambda x, f, a: np.cov(x, fweights=f, aweights=a, ddof=0), (x, fw, aw)),
        (lambda x, f, a: np.cov(x, fweights=f, aweights=a, bias=True), (x, fw, aw)),
        (lambda x, a: np.cov(x.T, rowvar=False, aweights=a), (x, aw)),
        (lambda x, a: np.cov(x[0], y=x[1], aweights=a), (x, aw)),
        (lambda x, a: np.cov(x, aweights=a, dtype=np.float32), (x, aw)),
        (lambda x, a: np.cov(x.astype(np.float32), aweights=a), (x, aw)),
        (lambda x, a: np.cov(x[0], aweights=a), (x, aw)),
        (lambda x, a: np.cov(x, aweights=a, ddof=3), (x, aw)),
        (lambda x, f: np.cov(x, fweights=f, ddof=9), (x, fw)),  # no degrees of freedom: inf
        (lambda x: np.cov(x, aweights=np.arange(1.0, 7.0)), (x,)),
        (lambda x: np.cov(x, fweights=[1, 1, 2, 1, 1, 1]), (x,)),
    ]


@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
def test_cov_with_weights():
    """np.cov(..., fweights=, aweights=) (frontend/covariance.py: NumPy's code branches on
    the weights' values), traced or constant weights, against NumPy."""
    *_, cases = _cov_cases()
    for f, args in cases:
        assert_same(fusejit.jit(f)(*args), f(*args))


def test_cov_weight_errors_are_numpys():
    """Non-integer or negative fweights, negative aweights and weights summing to zero raise
    NumPy's exceptions when the program runs (traced weights) or at trace time (constant);
    wrong shapes at trace time."""
    x, fw, aw, _ = _cov_cases()
    bad = [(lambda x, f: np.cov(x, fweights=f), (x, fw + 0.5), TypeError),
           (lambda x, f: np.cov(x, fweights=f), (x, -fw), ValueError),
           (lambda x, a: np.cov(x, aweights=a), (x, -aw), ValueError),
           (lambda x, a: np.cov(x, aweights=a), (x, aw * 0), ZeroDivisionError),
           (lambda x, f, a: np.cov(x, fweights=f, aweights=a), (x, -fw + 0.5, -aw), TypeError),
           (lambda x, f: np.cov(x, fweights=f), (x, fw[:5]), RuntimeError),
           (lambda x, f: np.cov(x, fweights=f), (x, fw[None]), RuntimeError),
           (lambda x: np.cov(x, aweights=-np.ones(6)), (x,), ValueError),
           (lambda x: np.cov(x, fweights=np.full(6, 0.5)), (x,), TypeError),
           (lambda x, a: np.cov(x, aweights=a, ddof=1.5), (x, aw), ValueError)]
    for f, args, exc in bad:
        with pytest.raises(exc):
            f(*args)
        with pytest.raises(exc) as got:
            fusejit.jit(f)(*args)
        assert type(got.value) is exc
    jf = fusejit.jit(lambda x, a: np.cov(x, aweights=a))
    with pytest.raises(ValueError, match="aweights cannot be negative"):
        jf(x, -aw)
    assert_same(jf(x, aw), np.cov(x, aweights=aw))  # the same program, good weights


@settings(max_examples=examples(20))
@given(st.data())
def test_polyval_sinc_fix_nan_to_num(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(st.lists(small, max_size=3).map(tuple))
    x = layout(data.draw, shape, dtype)
    run_both(lambda a: np.polyval(np.array([2.0, -1.0, 0.5]), a), x)
    run_both(lambda a: np.polyval([3, 1], a), x)
    if dtype != np.bool_:
        run_both(lambda a: np.sinc(a), x)
        run_both(lambda a: np.fix(a), x)
    if np.dtype(dtype).kind == "f":
        y = x.copy()
        if y.size:
            y.flat[0] = np.nan
            y.flat[-1] = -np.inf
        run_both(lambda a: np.nan_to_num(a), y)
        run_both(lambda a: np.nan_to_num(a, nan=-1.0, posinf=7.0), y)


def test_polyval_traced_coefficients():
    p, x = np.array([1.0, -2.0, 3.0]), np.linspace(-2, 2, 9)
    run_both(np.polyval, p, x)


@settings(max_examples=examples(20))
@given(st.data())
def test_trapezoid_gradient(data):
    dtype = data.draw(st.sampled_from([np.int32, np.float32, np.float64]))
    shape = data.draw(st.lists(st.integers(2, 4), min_size=1, max_size=3).map(tuple))
    x = layout(data.draw, shape, dtype)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    run_both(lambda a: np.trapezoid(a, axis=axis), x)
    run_both(lambda a: np.trapezoid(a, dx=0.5, axis=axis), x)
    coords = np.cumsum(np.arange(1, shape[axis] + 1, dtype=np.float64))
    run_both(lambda a: np.trapezoid(a, coords, axis=axis), x)
    run_both(lambda a: np.gradient(a, axis=axis), x)
    run_both(lambda a: np.gradient(a, 2.0, axis=axis, edge_order=2) if shape[axis] > 2
             else np.gradient(a, 2.0, axis=axis), x)
    run_both(lambda a: np.gradient(a, coords, axis=axis), x)
    run_both(lambda a: np.gradient(a), x)


@settings(max_examples=examples(20))
@given(st.data())
def test_products(data):
    dtype = data.draw(st.sampled_from([np.int32, np.float32, np.float64]))
    m, k, n = data.draw(small), data.draw(st.integers(1, 4)), data.draw(small)
    a = layout(data.draw, (m, k), dtype)
    b = layout(data.draw, (n, k), dtype)
    c = layout(data.draw, (k, 3), dtype)
    run_both(lambda x, y: np.tensordot(x, y, axes=([1], [1])), a, b)
    run_both(lambda x, y: np.tensordot(x, y, axes=1), a, c)
    run_both(lambda x, y: np.tensordot(x, y, axes=0), a, c)
    run_both(np.inner, a, b)
    run_both(np.inner, a[0] if m else c[:, 0], c[:, 0])
    run_both(lambda x: np.inner(x, 2), a)
    run_both(np.inner, a, c)  # mismatched last axes: NumPy's ValueError
    run_both(np.kron, a, c)
    run_both(np.kron, a[:, 0], c)
    run_both(lambda x, y, z: np.linalg.multi_dot([x, y, z]), a, c, c.T)
    run_both(lambda x, y, z, w: np.linalg.multi_dot([x[0], y, z, w]) if m else x, a, c,
             c.T, a.T)


@settings(max_examples=examples(20))
@given(st.data())
def test_rot90_and_diagonals(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(st.lists(small, min_size=2, max_size=3).map(tuple))
    x = layout(data.draw, shape, dtype)
    k = data.draw(st.integers(-5, 5))
    run_both(lambda a: np.rot90(a, k), x)
    run_both(lambda a: np.rot90(a, k, axes=(1, 0)), x)
    off = data.draw(st.integers(-3, 3))
    run_both(lambda a: np.diagonal(a, off), x)
    run_both(lambda a: a.diagonal(off, -1, 0), x)
    if len(shape) == 2:
        run_both(lambda a: np.diag(a, off), x)
        run_both(lambda a: np.diag(a[0], off), x)


@settings(max_examples=examples(20))
@given(st.data())
def test_correlate_convolve(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    a = layout(data.draw, (data.draw(st.integers(0, 7)),), dtype)
    v = layout(data.draw, (data.draw(st.integers(0, 5)),), dtype)
    mode = data.draw(st.sampled_from(["valid", "same", "full"]))
    run_both(lambda x, y: np.correlate(x, y, mode), a, v)
    run_both(lambda x, y: np.convolve(x, y, mode), a, v)
    run_both(lambda x: np.convolve(x, np.array([0.25, 0.5, 0.25]), "same"), a)


def test_correlate_errors():
    run_both(lambda x: np.correlate(x, x, "bogus"), np.ones(3))
    run_both(lambda x: np.correlate(x, x[0]), np.ones((2, 2)))


@settings(max_examples=examples(20))
@given(st.data())
def test_vander_count_nonzero_select_choose(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    x = layout(data.draw, (data.draw(small),), dtype)
    n = data.draw(st.sampled_from([None, 0, 1, 3]))
    inc = data.draw(st.booleans())
    run_both(lambda a: np.vander(a, n, inc), x)
    shape = data.draw(st.lists(small, max_size=3).map(tuple))
    y = layout(data.draw, shape, dtype)
    run_both(lambda a: np.count_nonzero(a), y)
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    run_both(lambda a: np.count_nonzero(a, axis=axis, keepdims=True), y)
    if dtype != np.bool_:
        run_both(lambda a: np.select([a > 1, a < 0], [a, a * 2], 7), y)
        idx = (np.arange(y.size).reshape(shape) % 5 - 1) if y.ndim else np.int64(4)
        mode = data.draw(st.sampled_from(["wrap", "clip", "raise"]))
        run_both(lambda i, a: np.choose(i, [a, -a, a + 1], mode=mode), idx, y)


@settings(max_examples=examples(25))
@given(st.data())
def test_nan_statistics(data):
    dtype = data.draw(st.sampled_from([np.int32] + FLOATS))
    shape = data.draw(st.lists(small, min_size=1, max_size=3).map(tuple))
    x = layout(data.draw, shape, dtype)
    if x.dtype.kind == "f" and x.size:
        x = x.copy()
        x.flat[:: max(x.size // 2, 1)] = np.nan
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    ddof = data.draw(st.sampled_from([0, 1]))
    keep = data.draw(st.booleans())
    run_both(lambda a: np.nanvar(a, axis=axis, ddof=ddof, keepdims=keep), x)
    run_both(lambda a: np.nanstd(a, axis=axis, ddof=ddof), x)
    run_both(lambda a: np.nanprod(a, axis=axis), x)
    if dtype != np.int32:
        run_both(lambda a: np.nanvar(a, axis=axis, dtype=np.float64), x)


@settings(max_examples=examples(25))
@given(st.data())
def test_digitize_searchsorted(data):
    dtype = data.draw(st.sampled_from([np.int32] + FLOATS))
    shape = data.draw(st.lists(small, max_size=2).map(tuple))
    x = layout(data.draw, shape, dtype)
    if x.dtype.kind == "f" and x.size:
        x = x.copy()
        x.flat[0] = np.nan
    bins = np.array(sorted(data.draw(st.lists(st.integers(-6, 6), max_size=5))), dtype)
    right = data.draw(st.booleans())
    run_both(lambda a: np.digitize(a, bins, right), x)
    run_both(lambda a: np.digitize(a, bins[::-1], right), x)
    run_both(lambda a: np.searchsorted(bins, a, "right" if right else "left"), x)


def test_searchsorted_nan_values():
    bins = np.array([-1.0, 0.0, 2.0, np.nan, np.nan])
    x = np.array([-2.0, 0.0, 1.0, 5.0, np.nan, np.inf])
    run_both(lambda a: np.searchsorted(bins, a), x)
    run_both(lambda a: np.searchsorted(bins, a, side="right"), x)


@settings(max_examples=examples(20))
@given(st.data())
def test_nanargmax_nanargmin(data):
    dtype = data.draw(st.sampled_from([np.int32] + FLOATS))
    shape = data.draw(st.lists(small, min_size=1, max_size=3).map(tuple))
    x = layout(data.draw, shape, dtype)
    if x.dtype.kind == "f" and x.size:
        x = x.copy()
        x.flat[:: max(x.size // 3, 1)] = np.nan
        if data.draw(st.booleans()):
            x[..., 0] = np.nan  # maybe an all-NaN slice: NumPy's ValueError at run time
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    keep = data.draw(st.booleans())
    run_both(lambda a: np.nanargmax(a, axis=axis, keepdims=keep), x)
    run_both(lambda a: np.nanargmin(a, axis=axis), x)


def test_run_time_errors_of_nanargmax_and_choose():
    f = fusejit.jit(lambda a: np.nanargmax(a, axis=1))
    x = np.array([[1.0, np.nan], [np.nan, 2.0]])
    assert_same(f(x), np.nanargmax(x, axis=1))
    x[1, 1] = np.nan
    with pytest.raises(ValueError, match="All-NaN slice"):
        f(x)
    g = fusejit.jit(lambda i, a: np.choose(i, [a, -a]))
    a = np.arange(4.0)
    assert_same(g(np.array([0, 1, 1, 0]), a), np.choose(np.array([0, 1, 1, 0]), [a, -a]))
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        g(np.array([0, 2, 1, 0]), a)
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        g(np.array([0, -1, 1, 0]), a)


@settings(max_examples=examples(15))
@given(st.data())
def test_more_functions_through_numpy_code(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(st.lists(small, min_size=2, max_size=3).map(tuple))
    x = layout(data.draw, shape, dtype)
    for f in (np.angle, np.real, np.imag, lambda a: np.append(a, a[0]),
              lambda a: np.resize(a, (3, 5)), np.matrix_transpose, np.unstack,
              lambda a: np.linalg.vector_norm(a, axis=-1), np.linalg.diagonal,
              lambda a: np.linalg.matmul(a, np.swapaxes(a, -1, -2)),
              lambda a: np.linalg.outer(a.reshape(-1), a[0, 0]), np.trace,
              lambda a: a.trace(1, -1, 0), lambda a: np.linalg.trace(a, offset=-1),
              lambda a: np.vdot(a, a), lambda a: np.histogram_bin_edges(a, 3, (0, 1)),
              lambda a: np.triu_indices_from(a[0] if a.ndim == 3 else a)):
        if dtype == np.bool_ and f is np.angle:
            continue
        run_both((lambda g: lambda a: g(a))(f), x)
    if shape[-1] and shape[-2]:
        run_both(lambda a: np.linalg.matrix_norm(a), x)


def test_broadcast_arrays():
    run_both(lambda a, b: np.broadcast_arrays(a, b), np.ones((3, 1)), np.arange(4.0))
    run_both(lambda a, b: np.broadcast_arrays(a, b), np.ones((3, 2)), np.arange(4.0))


def test_mask_assignment_of_one_value():
    def f(x):
        y = x.copy()
        y[y > 0.5] = -1.0
        y[(np.isnan(y),)] = 0
        return y

    x = np.array([[0.1, 0.7, np.nan], [2.0, -3.0, 0.5]])
    run_both(f, x)
    run_both(f, x.astype(np.float32)[:, ::-1])


def test_refusals_name_what_is_missing():
    for f, word in [(lambda x: np.histogram(x, bins="auto"), "string bin rules"),
                    (lambda x: np.histogram2d(x, x, bins=x), "traced bins"),
                    (lambda x: np.unique(x), "returns np.unique.*depends on the data")]:
        with pytest.raises(UnsupportedError, match=word):
            fusejit.jit(f)(np.ones(4))


@pytest.mark.parametrize("shape,axis", [((50,), -1), ((4, 30), 1), ((30, 4), 0), ((0,), -1),
                                        ((3, 1), -1), ((), None)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_unwrap_through_numpy_code(shape, axis, dtype):
    """np.unwrap: NumPy's own code (diff, mod, copyto(where=), a cumsum scan) on tracers."""
    rng = np.random.default_rng(11)
    x = (rng.normal(size=shape) * 4).cumsum(axis=axis) if len(shape) else rng.normal(size=())
    x = np.asarray(x).astype(dtype)
    if axis is None:  # NumPy raises for a 0-d array: so must the compiled function
        with pytest.raises(ValueError):
            np.unwrap(x)
        with pytest.raises(ValueError):
            fusejit.jit(lambda p: np.unwrap(p))(x)
        return
    def unwrap_with(discont=None, period=2 * np.pi):
        return lambda p: np.unwrap(p, discont, axis, period=period)

    for kw in ({}, {"period": 6}, {"discont": 1.0}):
        run_both(unwrap_with(**kw), x)
    run_both(lambda p: np.unwrap(p[..., ::-1], axis=axis), x)  # non-contiguous


def test_explain_names_numpy_code():
    text = str(fusejit.jit(lambda x: np.cov(x) + 1).explain(np.ones((3, 4))))
    assert "(np.cov, NumPy's own code)" in text


def test_numpy_code_leaves_numpy_alone():
    """Running NumPy's code on tracers copies its globals; NumPy itself is unchanged."""
    fusejit.jit(lambda x: np.cov(x))(np.ones((2, 3)))
    with pytest.raises(TypeError):
        np.asarray(object(), dtype=np.float64)
    assert_same(np.cov(np.eye(3)), np.cov(np.eye(3).copy()))


def test_tracer_attributes_and_namespace():
    def f(x):
        xp = x.__array_namespace__()
        return xp.sum(xp.asarray(x) * x.real, axis=0) + x.imag.sum() + x.conj().mT[:, 0]

    x = np.arange(6.0).reshape(2, 3)
    assert_same(fusejit.jit(f)(x), (x * x).sum(0) + x[0])


# Array-API code: f(xp, x) run with a traced array's namespace vs with NumPy's.
ARRAY_API_CALLS = [
    lambda xp, x: xp.abs(x) + xp.acos(xp.clip(x, -1, 1)) * xp.pow(x, 2),
    lambda xp, x: xp.asarray(x, copy=True) * 2 + xp.astype(x, xp.float32),
    lambda xp, x: xp.concat([x, xp.flip(x, axis=0)], axis=0),
    lambda xp, x: xp.stack([x, x], axis=-1),
    lambda xp, x: xp.permute_dims(xp.expand_dims(x, axis=0), (1, 0, 2)),
    lambda xp, x: xp.matrix_transpose(x) @ x,
    lambda xp, x: xp.sum(x, axis=1, keepdims=True) / xp.max(x) - xp.min(x, axis=0),
    lambda xp, x: xp.std(x, axis=0, correction=1) + xp.var(x, correction=0),
    lambda xp, x: xp.mean(x, axis=(0, 1)) + xp.prod(x[:2], axis=1)[0],
    lambda xp, x: xp.where(xp.isnan(x) | (x > 0), x, xp.zeros_like(x)),
    lambda xp, x: xp.reshape(x, (-1,))[::2] + xp.roll(xp.reshape(x, (-1,)), 3)[::2],
    lambda xp, x: xp.squeeze(xp.take(x, xp.asarray([0]), axis=1), axis=1),
    lambda xp, x: xp.broadcast_to(x[:1], x.shape) - xp.full_like(x, 0.5),
    lambda xp, x: xp.logaddexp(x, -x) + xp.sign(x) * xp.round(x) - xp.trunc(x),
    lambda xp, x: (xp.argmax(x, axis=1), xp.any(x > 1, axis=0), xp.all(x < 3)),
    lambda xp, x: xp.tensordot(x, x, axes=([0], [0])),
    lambda xp, x: xp.linalg.vector_norm(x, axis=1) + xp.linalg.matrix_norm(x),
    lambda xp, x: xp.astype(x, xp.result_type(x.dtype, xp.int64)) + xp.finfo(x.dtype).eps,
]


@pytest.mark.parametrize("k", range(len(ARRAY_API_CALLS)))
def test_array_api_namespace(k):
    f = ARRAY_API_CALLS[k]
    x = np.random.default_rng(k).standard_normal((4, 5))
    x[1, 2] = np.nan
    run_both(lambda a: f(a.__array_namespace__() if not isinstance(a, np.ndarray) else np,
                         a), x)


def test_array_api_namespace_is_numpys_while_tracing():
    seen = []

    def f(x):
        xp = x.__array_namespace__(api_version="2023.12")
        seen.append((xp.__name__, x.device, xp.float32 is np.float32, xp.isdtype(x.dtype,
                                                                                "real floating")))
        return xp.asarray(x) + 1

    fusejit.jit(f)(np.ones(3))
    assert seen == [("fusejit.array_api", "cpu", True, True)]
    with pytest.raises(ValueError, match="array API version"):
        fusejit.jit(lambda x: x.__array_namespace__(api_version="1999.01"))(np.ones(3))


# --- SciPy ------------------------------------------------------------------------------------

scipy_special = pytest.importorskip("scipy.special")
scipy_stats = pytest.importorskip("scipy.stats")


@settings(max_examples=examples(20))
@given(st.data())
def test_scipy_array_api_functions(data):
    dtype = data.draw(st.sampled_from([np.int32] + FLOATS))
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    x = layout(data.draw, shape, dtype)
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    run_both(lambda a: scipy_special.softmax(a, axis=axis), x)
    run_both(lambda a: scipy_special.log_softmax(a, axis=axis), x)
    run_both(lambda a: scipy_stats.zscore(a, axis=axis), x)
    run_both(lambda a: scipy_stats.zscore(a, axis=axis, ddof=1), x)


def test_scipy_softmax_is_the_hand_written_kernel():
    """SciPy's softmax traces into the very graph of the hand-written NumPy softmax."""
    def hand(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    x = np.ones((64, 32), np.float32)
    ops = [[n.op for n in fusejit.jit(f).explain(x).optimised.nodes()]
           for f in (hand, lambda a: scipy_special.softmax(a, axis=1))]
    assert ops[0] == ops[1]


def test_scipy_log_softmax_infinities():
    x = np.array([[np.inf, 1.0], [-np.inf, -np.inf], [1000.0, 1.0]])
    run_both(lambda a: scipy_special.log_softmax(a, axis=1), x)


_SCRIPT = textwrap.dedent("""
    import numpy as np, fusejit, scipy.special as sp, scipy.stats as st
    from scipy._lib._array_api import SCIPY_ARRAY_API
    assert SCIPY_ARRAY_API
    x = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    for f in (lambda a: sp.softmax(a, axis=1), lambda a: sp.log_softmax(a, axis=0),
              lambda a: st.zscore(a, axis=1)):
        got, want = fusejit.jit(f)(x), f(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    print("ok")
""")


def test_scipy_under_scipy_array_api():
    """SCIPY_ARRAY_API=1 is read when SciPy is imported: a fresh interpreter."""
    env = subprocess_env(SCIPY_ARRAY_API="1")
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")
