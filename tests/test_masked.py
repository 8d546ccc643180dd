"""Boolean masks (frontend/mask_index.py, frontend/masked.py, frontend/masked_calls.py):
`x[mask]` by a traced mask reduced, computed on and written back; `x[mask] = v` and
`x[mask] op= v` through it; masks known while tracing as gathers and scatters; np.extract and
np.compress; NumPy's errors (the same types), and clear refusals where the selection's
length would have to be known."""

from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np
import pytest
from conftest import assert_same, examples, run_both
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit
from fusejit.errors import ConcretizationError, UnsupportedError

RNG = np.random.default_rng(11)
V = RNG.standard_normal(30)
Y = RNG.standard_normal(30)
X = RNG.standard_normal((6, 5))
W = RNG.standard_normal(5)
INTS = RNG.integers(0, 7, (5, 4))
NANS = np.where(RNG.random(20) < 0.15, np.nan, RNG.integers(0, 5, 20).astype(float))


def _quiet(f):
    """`f` with NumPy's RuntimeWarnings (the mean of nothing) silenced."""
    @functools.wraps(f)
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return f(*args)

    return run


READS = {
    "sum": (lambda v: v[v > 0.2].sum(), (V,)),
    "sum_int": (lambda v: (v * 10).astype(np.int32)[v > 0.2].sum(), (V,)),
    "masked_mse": (lambda p, y: ((p - y)[y > 0] ** 2).mean(), (V, Y)),
    "max": (lambda v: np.max(v[v > 0.2]), (V,)),
    "min_method": (lambda v: v[v > 0.2].min(), (V,)),
    "ptp": (lambda v: np.ptp(v[v > 0.2]), (V,)),
    "std_ddof": (lambda v: v[v > 0.2].std(ddof=1), (V,)),
    "var_f32": (lambda v: v.astype(np.float32)[v > 0].var(), (V,)),
    "prod": (lambda v: np.prod(v[np.abs(v) < 1.5]), (V,)),
    "any_all": (lambda v: ((v > 1)[v > 0].any(), (v > 0)[v > 0.1].all()), (V,)),
    "median": (lambda v: np.median(v[v > 0.2]), (V,)),
    "median_int": (lambda v: np.median((v * 10).astype(np.int64)[v > -0.5]), (V,)),
    "percentile": (lambda v: np.percentile(v[v > 0.2], [10, 90]), (V,)),
    "quantile": (lambda v: np.quantile(v[v > 0.2], 0.3), (V,)),
    "nan_functions": (lambda v: (np.nanmax(v[v > 0.2]), np.nanmean(v[v > 0.2]),
                                 np.nanmedian(v[v < 0.5])), (V,)),
    "count_nonzero": (lambda v: np.count_nonzero(v[v > 0.2] > 1), (V,)),
    "average_weighted": (lambda v, y: np.average(v[v > 0.2], weights=np.abs(y)[v > 0.2]),
                         (V, Y)),
    "average_returned": (lambda v: np.average(v[v > 0.2], returned=True), (V,)),
    "average_rows_weighted": (lambda x, w, v: (
        np.average(x[x[:, 0] > -0.5], axis=0, weights=np.abs(v)[x[:, 0] > -0.5]),
        np.average(x[:, x[0] > -5], axis=1, weights=np.abs(w)[x[0] > -5], returned=True)),
        (X, W, V[:6])),
    "norm": (lambda v: np.linalg.norm(v[v > 0.2]), (V,)),
    "dot_operator": (lambda v, y: v[v > 0] @ y[v > 0], (V, Y)),
    "np_dot": (lambda v, y: np.dot(v[v > 0], y[v > 0]), (V, Y)),
    "cumsum": (lambda v: np.cumsum(v[v > 0.2]).max(), (V,)),
    "cumsum_2d_mask": (lambda x: (np.cumsum(x[x > 0]) * x[x > 0]).sum(), (X,)),
    "ravel_fortran": (lambda x: (np.cumsum(x[x[:, 0] > 0].ravel(order="F")) < 1).sum(), (X,)),
    "order_stats_of_rows": (lambda x: (np.median(x[x[:, 0] > -1], axis=1).sum(),
                                       np.quantile(x[:, x[0] > -1], 0.3, axis=0).sum()),
                            (np.where(X > 1, np.nan, X),)),
    "percentile_of_nothing": (lambda v: np.percentile(v[v > 10], [10, 50]), (V,)),
    "quantile_of_nothing_int": (lambda v: np.quantile((v * 10).astype(int)[v > 10], 0.5), (V,)),
    "ufunc_reduce": (lambda v: (np.add.reduce(v[v > 0]), np.maximum.reduce(v[v > 0])), (V,)),
    "rows_sum0": (lambda x: x[x[:, 0] > 0].sum(axis=0), (X,)),
    "rows_mean_positional": (lambda x: x[x[:, 0] > 0].mean(0), (X,)),
    "rows_max1": (lambda x: x[x[:, 0] > 0].max(axis=1).sum(), (X,)),
    "rows_matmul": (lambda x, w: (x[x[:, 0] > 0] @ w).sum(), (X, W)),
    "columns": (lambda x: x[:, x[0] > -0.5].sum(axis=1), (X,)),
    "columns_ellipsis": (lambda x: x[..., x[0] > -0.5].mean(), (X,)),
    "mask_2d": (lambda x: x[x > 0].sum(), (X,)),
    "mask_2d_mean": (lambda x: np.mean(x[x > 0] ** 2), (X,)),
    "mask_2d_rows": (lambda x: (x[x[..., 0] > 0].sum(axis=1) * x[..., 1][x[..., 0] > 0]).sum(),
                     (X.reshape(2, 3, 5),)),
    "where": (lambda v: np.where(v[v > 0] > 1, v[v > 0], 0).sum(), (V,)),
    "clip": (lambda v: np.clip(v[v > 0], 0, 1).sum(), (V,)),
    "shape_and_size": (lambda v: v[v > 0].sum() / v[v > 0].shape[0] + v[v > 0].size, (V,)),
    "size_keeps_float32": (lambda v: v.astype(np.float32)[v > 0].sum() / v[v > 0].size, (V,)),
    "rows_size": (lambda x: x[x[:, 0] > 0].sum() / x[x[:, 0] > 0].size, (X,)),
    "histogram": (lambda v: np.histogram(v[v > 0], bins=5, range=(0, 3))[0], (V,)),
    "extract": (lambda v: np.extract(v > 0, v).sum(), (V,)),
    "compress": (lambda x: np.compress(x[:, 1] > 0, x, axis=0).sum(0), (X,)),
    "compress_short": (lambda x: np.compress(x[:3, 1] > 0, x, axis=0).sum(0), (X,)),
    "constant_mask": (lambda x: x[np.array([True, False, True, False, False, True])] * 2,
                      (X,)),
    "constant_compress": (lambda x: np.compress([True, False, True], x, axis=1), (X,)),
    "known_mask": (lambda v: v[np.arange(30) % 3 == 0] + 1, (V,)),
    "flag_0d": (lambda x, f: x[f].sum(axis=0), (X, np.bool_(True))),
    "flag_0d_false": (lambda x, f: x[f].sum(axis=0), (X, np.bool_(False))),
    "unselected_nan_inf": (lambda v: (np.sum(v[np.isfinite(v)]), np.max(v[np.isfinite(v)])),
                           (np.array([1.0, np.nan, np.inf, 2.0]),)),
    "median_of_nan": (lambda v: np.median(v[v != 2.0]), (np.array([1.0, np.nan, 3.0, 2.0]),)),
    "empty_sum_mean": (lambda v: (np.sum(v[v > 5]), np.mean(v[v > 5]), np.median(v[v > 5])),
                       (V,)),
    "strided_input": (lambda v: v[v > 0].sum(), (V[::3],)),
    "nonzero_last_first": (lambda v: (np.nonzero(v > 0)[0].max(), np.flatnonzero(v > 0).min(),
                                      np.nonzero(v > 0)[0].mean()), (V,)),
    "where_one_argument": (lambda v: (v[np.where(v > 0)].sum(), v[np.where(v > 0)[0]].sum()),
                           (V,)),
    "flatnonzero_gather": (lambda v, y: y[np.flatnonzero(v > 0)].sum(), (V, Y)),
    "nonzero_rows": (lambda x: x[np.nonzero(x[:, 0] > 0)[0]].sum(axis=0), (X,)),
    "where_columns": (lambda x: x[:, np.where(x[0] > 0)[0]].sum(axis=1), (X,)),
    "nonzero_2d": (lambda x: x[np.nonzero(x > 0)].mean(), (X,)),
    "argwhere": (lambda x: np.argwhere(x > 0).sum(axis=0), (X,)),
    "nonzero_method": (lambda v: v[(v > 0).nonzero()].sum() / np.nonzero(v > 0)[0].size,
                       (V,)),
    "nonzero_known": (lambda v: v[np.nonzero(np.arange(30) % 4 == 0)] + 1, (V,)),
    "positions_out_of_range": (lambda v, w: w[np.flatnonzero(v > 0)].sum(), (V, Y[:10])),
    "nonzero_0d": (lambda v: np.nonzero(v[0] > 0), (V,)),
    "unique_count_sum": (lambda x: (np.unique(x).size, np.unique(x).sum()), (INTS,)),
    "unique_nan": (lambda x: (np.unique(x).size, np.unique(x, equal_nan=False).size,
                              np.nanmax(np.unique(x))), (NANS,)),
    "unique_inverse": (lambda x: np.unique(x, return_inverse=True)[1], (INTS,)),
    "unique_mode": (lambda x: (lambda u, c: (np.max(np.where(c == c.max(), u, -1)),
                                             u[c == c.max()].min()))(
        *np.unique(x, return_counts=True)), (INTS,)),
    "mask_and_integers": (lambda x: (x.reshape(3, 2, 5)[x[::2, 0] > -1, 1].sum(axis=0),
                                     x.reshape(3, 2, 5)[1, x[:2, 0] > -1].sum(),
                                     x.reshape(3, 2, 5)[:, x[:2, 1] > 0, 2].sum()), (X,)),
    "rows_then_columns": (lambda x: (x[x[:, 0] > 0][:, 1].sum(), x[x[:, 0] > 0][..., 2:].max(),
                                     x[:, x[0] > 0][1:3].sum(axis=0).mean(),
                                     x[x > 0].reshape(-1).sum()), (X,)),
    "selection_of_selection": (lambda v: (v[v > 0][v[v > 0] < 1].sum(),
                                          np.mean(v[v > 0][v[v > 0] > 0.5] ** 2)), (V,)),
    "unique_index": (lambda x: np.unique(x, return_index=True)[1].max(), (NANS,)),
    "unique_array_api": (lambda x: (np.unique_values(x).max(),
                                    np.unique_inverse(x).inverse_indices,
                                    np.unique_counts(x).counts.min()), (INTS,)),
    "unique_empty": (lambda x: np.unique(x[:0], return_counts=True), (NANS,)),
    "bincount_selected": (lambda x, v: (np.bincount(x.ravel()[v[:20] > 0], minlength=7),
                                        np.bincount(x.ravel()[v[:20] > 0],
                                                    weights=v[:20][v[:20] > 0], minlength=7)),
                          (INTS, V)),
    "zero_size": (lambda v: (v[v > 0].sum(), v[v > 0].mean()), (np.zeros(0),)),
}


@pytest.mark.parametrize("name", list(READS))
def test_selection_reads_match_numpy(name: str) -> None:
    f, args = READS[name]
    run_both(_quiet(f), *args)


def _set_scalar(x):
    y = x.copy()
    y[y > 0] = 0.0
    return y


def _set_selection(x):
    y = x.copy()
    y[x > 0] = x[x > 0] * 2  # (the mask computed twice: the same value)
    return y


def _augmented(x):
    y = x.copy()
    y[y < 0] *= 3
    y[y > 1] += 1
    return y


def _augmented_int(x):
    y = (x * 10).astype(np.int64)
    y[y > 0] //= 3
    return y


def _set_one_value_array(x):
    y = x.copy()
    y[y > 0] = x[0, :1]  # (one value, broadcast over the selection, as NumPy's)
    return y


def _set_rows(x):
    y = x.copy()
    y[x[:, 0] > 0] = np.arange(5.0)
    return y


def _set_columns(x):
    y = x.copy()
    y[:, x[0] > 0] = 0
    y[:, x[1] > 0] = np.sqrt(np.abs(y[:, x[1] > 0]))
    return y


def _set_flag(x, f):
    y = x.copy()
    y[f] = 5
    return y


def _set_constant_mask(x):
    y = x.copy()
    y[np.array([True, False, True, False, False, True])] = x[:3] * 2
    return y


def _selection_is_a_copy(x):
    y = x.copy()
    s = y[y > 0]
    s += 1
    y[0] = 7.0  # (later writes into y do not reach s either)
    t = s.copy()
    t *= 3  # (nor into a copy of s)
    return y, s.sum(), t.sum()


def _set_with_integers(x):
    y = x.reshape(3, 2, 5).copy()
    y[y[:, 0, 0] > -1, 1] = 0.0
    y[1, y[0, :, 0] > -10] *= 2
    return y


def _set_positions(x):
    y = x.copy()
    y[np.nonzero(y > 0)] = 0
    y[np.where(x[:, 0] > 0)] *= 2
    return y


def _set_flat_positions(v):
    y = v.copy()
    y[np.flatnonzero(v > 0)] = -1
    return y


def _at_selected(labels, v):
    h = np.zeros(7)
    np.add.at(h, labels[v > 0], 1)
    top = np.full(7, -np.inf)
    np.maximum.at(top, labels[v > 0], v[v > 0])
    c = np.zeros(7, dtype=np.int64)
    np.add.at(c, labels[v < 0], 2)
    return h, top, c


def _fill_nan_with_column_mean(x):
    x = np.where(x > 1, np.nan, x)
    mu = np.nanmean(x, axis=0)
    idx = np.where(np.isnan(x))
    x[idx] = np.take(mu, idx[1])
    return x, np.take(x, np.flatnonzero(x > 0)).sum() + x.take(np.flatnonzero(x > 0.5)).sum()


def _mask_changed_after(x, y):
    m = x > 0
    s = x[m]
    idx = np.nonzero(m)[0]
    m &= y > 0  # (the selections made before keep the mask's value then)
    return s.mean(), x[m].mean(), idx.sum(), np.median(s), s.max()


def _argument_in_place(x, m):
    x[m] = np.minimum(x[m], 0.5)
    return x.sum()


@pytest.mark.parametrize("f, args", [
    (_set_scalar, (X,)), (_set_one_value_array, (X,)), (_set_selection, (X,)),
    (_augmented, (X,)), (_augmented_int, (X,)),
    (_set_rows, (X,)), (_set_columns, (X,)), (_set_flag, (X, np.bool_(True))),
    (_set_flag, (X, np.bool_(False))), (_set_constant_mask, (X,)),
    (_selection_is_a_copy, (X,)), (_set_positions, (X,)), (_set_flat_positions, (V,)),
    (_at_selected, (INTS.ravel()[:20], V[:20])), (_fill_nan_with_column_mean, (X,)),
    (_set_with_integers, (X,)),
    (_mask_changed_after, (V, Y)),
])
def test_writes_through_a_mask_match_numpy(f, args) -> None:
    run_both(f, *args)


def test_argument_updated_through_a_mask() -> None:
    m = X > 0
    want_x = X.copy()
    want = _argument_in_place(want_x, m)
    got_x = X.copy()
    assert_same(fusejit.jit(_argument_in_place)(got_x, m), want)
    assert_same(got_x, want_x)


def test_max_of_nothing_raises_numpy_error_when_run() -> None:
    f = fusejit.jit(lambda v, t: (np.max(v[v > t]), v[v > t].min()))
    assert_same(f(V, 0.0), (np.max(V[V > 0]), V[V > 0].min()))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        f(V, 10.0)
    assert_same(f(V, 1.0), (np.max(V[V > 1]), V[V > 1].min()))  # (and computes again)
    rows = fusejit.jit(lambda x, t: x[x[:, 0] > t].min(axis=0))
    with pytest.raises(ValueError, match="minimum"):
        rows(X, 10.0)
    assert_same(fusejit.jit(lambda v: np.max(v[v > 5], initial=-1.0))(V), np.float64(-1.0))


def test_gradient_of_a_masked_loss() -> None:
    rng = np.random.default_rng(1)
    x, y, w = rng.standard_normal((20, 3)), rng.standard_normal(20), rng.standard_normal(3)
    valid = rng.random(20) > 0.3

    def loss(w, x, y, valid):
        r = (x @ w - y)[valid]
        return (r ** 2).mean()

    g = fusejit.grad(loss)(w, x, y, valid)
    r = x[valid] @ w - y[valid]
    np.testing.assert_allclose(g, 2 * x[valid].T @ r / valid.sum(), rtol=1e-12)

    def robust(w, x, y):  # max, std and norm of selections, by central differences
        d = x @ w - y
        return (np.max(np.abs(d)[y > 0]) + np.std((d * 2)[y < 0.5])
                + np.linalg.norm(d[y > -1]))

    eps = 1e-6
    fd = [(robust(w + eps * e, x, y) - robust(w - eps * e, x, y)) / (2 * eps)
          for e in np.eye(3)]
    np.testing.assert_allclose(fusejit.grad(robust)(w, x, y), fd, rtol=1e-6)

    def missing(p, y):  # NaN targets left out: no NaN in the gradient (0 where not valid)
        valid = ~np.isnan(y)
        return ((p - y)[valid] ** 2).mean() + np.log(p[p > 1] - 1).sum()

    p, yn = np.array([0.5, 1.5, 2.0, 3.0]), np.array([1.0, np.nan, 2.5, 4.0])
    np.testing.assert_allclose(fusejit.grad(missing)(p, yn),
                               [-1 / 3, 2.0, -1 / 3 + 1.0, -2 / 3 + 0.5], rtol=1e-12)


def _mark_line(f) -> list[int]:
    lines, start = inspect.getsourcelines(f)
    return [start + k for k, t in enumerate(lines) if "# MARK" in t]


@pytest.mark.parametrize("form, error, message", [
    ("return", UnsupportedError, "returns x\\[mask\\].*whose length depends on the data"),
    ("len", ConcretizationError, "np.count_nonzero"),
    ("index", UnsupportedError, "indexing the selection"),
    ("two_masks", UnsupportedError, "different masks"),
    ("same_length", UnsupportedError, "shape \\(30,\\)"),
    ("argmax", UnsupportedError, "np.argmax of x\\[mask\\]"),
    ("sort", UnsupportedError, "np.sort of x\\[mask\\]"),
    ("asarray", UnsupportedError, "converting to a NumPy array"),
    ("if", ConcretizationError, "truth value of x\\[mask\\]"),
    ("int_index", UnsupportedError, "boolean mask"),
    ("positions_elsewhere", UnsupportedError, "not the positions of this array"),
])
def test_what_needs_the_length_is_refused_at_the_line(form, error, message) -> None:
    def f(v):
        if form == "return":
            return v[v > 0]  # MARK
        if form == "len":
            return len(v[v > 0])  # MARK
        if form == "index":
            return v[v > 0][0]  # MARK
        if form == "two_masks":
            return (v[v > 0] + v[v < 0.5]).sum()  # MARK
        if form == "same_length":
            return (v[v > 0] + np.ones(30)).sum()  # MARK
        if form == "argmax":
            return v[v > 0].argmax()  # MARK
        if form == "sort":
            return np.sort(v[v > 0])  # MARK
        if form == "asarray":
            return np.asarray(v[v > 0]).sum()  # MARK
        if form == "if":
            return 1.0 if v[v > 0] else 0.0  # MARK
        if form == "int_index":
            return v.reshape(5, 2, 3)[v[:5] > 0, :, 1]  # MARK
        y = v.copy()
        y[np.flatnonzero(v[:10] > 0) + 1] = 0.0  # MARK
        return y

    with pytest.raises(error, match=message) as info:
        fusejit.jit(f)(V)
    assert any(f"{__file__}:{n}" in str(info.value) for n in _mark_line(f)), str(info.value)


def test_mask_shape_and_cast_errors_are_numpys() -> None:
    run_both(lambda v: v[v[:3] > 0].sum(), V)  # IndexError
    run_both(lambda x: x[:, x[:, 0] > 0].sum(), X)  # IndexError, axis 1

    def widen(v):
        y = (v * 10).astype(np.int64)
        s = y[y > 0]
        s += 0.5  # UFuncTypeError (a TypeError): same_kind casting
        return s.sum()

    run_both(widen, V)


REDUCTIONS = {
    "sum": lambda s: s.sum(), "mean": lambda s: s.mean(), "max": lambda s: np.max(s),
    "min": lambda s: np.min(s), "std": lambda s: s.std(), "any": lambda s: np.any(s > 0),
    "median": lambda s: np.median(s), "count": lambda s: np.count_nonzero(s),
    "sum0": lambda s: s.sum(axis=0), "cumsum_last": lambda s: np.cumsum(s).max(),
}


@settings(max_examples=examples(40), deadline=None)
@given(shape=st.sampled_from([(7,), (0,), (1,), (4, 3), (3, 0), (2, 3, 2)]),
       dtype=st.sampled_from([np.float64, np.float32, np.int32, np.uint8]),
       reduction=st.sampled_from(sorted(REDUCTIONS)), rows=st.booleans(),
       strided=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_random_masked_reductions(shape, dtype, reduction, rows, strided, seed) -> None:
    """A random reduction of x[mask] (a mask over every element, or over x's rows) equals
    NumPy's, over dtypes, empty and non-contiguous inputs; nothing selected included."""
    rng = np.random.default_rng(seed)
    base = (rng.standard_normal((2,) + shape) * 4).astype(dtype)
    x = base[0] if not strided else base.swapaxes(0, -1).copy().swapaxes(0, -1)[0]
    t = float(rng.choice([-10.0, 0.0, 1.0, 10.0]))
    red = REDUCTIONS[reduction]
    if reduction == "cumsum_last" and len(shape) > 1:
        reduction, red = "sum", REDUCTIONS["sum"]  # (np.cumsum of a 2-d selection: refused)

    def f(x, t):
        m = (x[..., 0] > t) if rows and x.ndim > 1 else (x > t)
        return red(x[m])

    run_both(_quiet(f), x, t)


@pytest.mark.c_only
def test_masked_reduction_is_one_fused_loop() -> None:
    """The README's masked mean squared error: one kernel, no temporary (no compaction)."""
    jf = run_both(lambda p, y: ((p - y)[y > 0] ** 2).mean(), V, Y)
    program = jf.lower_for(V, Y).program
    assert len(program.kernels) == 1 and program.arena_bytes == 0
