"""The long tail of NumPy calls (frontend/numpy_tail.py, frontend/spaces.py, np.ediff1d and
np.logspace through NumPy's own code, np.round of integers with negative decimals) against
NumPy: drawn dtypes, shapes (0-d, zero-size where NumPy allows), layouts (contiguous,
transposed, strided, reversed) and arguments, compared by conftest's `run_both` (values,
dtype, shape, scalar vs array, or the same exception type).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, examples, run_both
from hypothesis import given, settings
from hypothesis import strategies as st
from test_composite import layout

import fusejit
from fusejit.errors import UnsupportedError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning",
                                        "ignore::DeprecationWarning")

NUMERIC = [np.bool_, np.int8, np.int32, np.uint16, np.int64, np.float32, np.float64]
shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_delete(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(shapes)
    x = layout(data.draw, shape, dtype)
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape) - 1, len(shape) + 1))))
    obj = data.draw(st.sampled_from([0, -1, 2, 5, [0, 2], [1, 1, -1], slice(None, None, 2),
                                     slice(1, 3), [], np.array([True, False, True, False])]))
    run_both(lambda a: np.delete(a, obj, axis=axis), x)


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_insert(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(shapes)
    x = layout(data.draw, shape, dtype)
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape) - 1, len(shape) + 1))))
    obj = data.draw(st.sampled_from([0, -1, 1, 5, [0, 2], [1, 1], [2, 0], slice(None, None, 2),
                                     []]))
    value = data.draw(st.sampled_from([7, -2.5, [1, 2], [[3], [4]], True, "traced"]))
    if value == "traced":  # values that are traced too: elements of the array itself
        run_both(lambda a: np.insert(a, obj, a.reshape(-1)[:1] * 2, axis=axis), x)
    else:
        run_both(lambda a: np.insert(a, obj, value, axis=axis), x)


def test_insert_delete_refuse_traced_indices():
    x = np.arange(6.0)
    with pytest.raises(UnsupportedError, match="traced indices"):
        fusejit.jit(lambda a, i: np.delete(a, i))(x, np.array([1]))
    with pytest.raises(UnsupportedError, match="traced indices"):
        fusejit.jit(lambda a, i: np.insert(a, i, 0.0))(x, np.array([1]))


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_piecewise(data):
    dtype = data.draw(st.sampled_from([np.int32, np.int64, np.float32, np.float64]))
    shape = data.draw(shapes)
    x = layout(data.draw, shape, dtype)
    case = data.draw(st.integers(0, 4))
    if case == 0:  # functions and an "otherwise"
        run_both(lambda a: np.piecewise(a, [a < 0, a > 2], [lambda t: -t, lambda t: t * t,
                                                             lambda t: t + 1]), x)
    elif case == 1:  # constants, overlapping conditions (the later wins)
        run_both(lambda a: np.piecewise(a, [a < 3, a > 0], [-1.5, 2]), x)
    elif case == 2:  # extra arguments to the functions
        run_both(lambda a: np.piecewise(a, [a >= 0], [lambda t, k: t * k], 3), x)
    elif case == 3:  # a wrong number of functions
        run_both(lambda a: np.piecewise(a, [a < 0, a > 0], [1.0]), x)
    else:  # a single condition array, not in a list
        run_both(lambda a: np.piecewise(a, a > 1, [lambda t: t / 2, 0]), x)


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_linspace_logspace_geomspace(data):
    dtype = data.draw(st.sampled_from([np.int32, np.int64, np.float32, np.float64]))
    shape = data.draw(st.sampled_from([(), (3,), (2, 3), (0,)]))
    a = layout(data.draw, shape, dtype)
    b = layout(data.draw, shape, dtype)[::-1] + 3 if shape else layout(data.draw, shape,
                                                                       dtype) + 3
    num = data.draw(st.sampled_from([0, 1, 2, 5, 50]))
    endpoint = data.draw(st.booleans())
    axis = data.draw(st.sampled_from([0, -1]))
    out_dtype = data.draw(st.sampled_from([None, np.float32, np.int64]))
    run_both(lambda s, e: np.linspace(s, e, num, endpoint=endpoint, axis=axis,
                                      dtype=out_dtype), a, b)
    run_both(lambda s, e: np.linspace(s, e, num, endpoint=endpoint, retstep=True), a, b)
    run_both(lambda s, e: np.logspace(s / 4, e / 4, num, endpoint=endpoint, base=2.0,
                                      axis=axis), a, b)
    geom = lambda s, e: np.geomspace(s - 1.5, e, num, endpoint=endpoint, axis=axis)  # noqa
    if num == 0 and not (np.all(a - 1.5 != 0) and np.all(b != 0)):
        # known difference: an empty result runs no code, so the zero check cannot raise
        assert fusejit.jit(geom)(a, b).size == 0
    else:
        run_both(geom, a, b)


def test_linspace_scalars_and_errors():
    jf = fusejit.jit(lambda v: np.linspace(v[0], 2.5, 7))
    x = np.array([1.0, 3.0], np.float32)
    assert_same(jf(x), np.linspace(x[0], 2.5, 7))
    assert_same(fusejit.jit(lambda v: np.linspace(v[0], v[0], 4))(x),
                np.linspace(x[0], x[0], 4))  # step zero: NumPy's other arithmetic
    tiny = np.array([0.0, 5e-324])
    assert_same(fusejit.jit(lambda v: np.linspace(v[0], v[1], 3))(tiny),
                np.linspace(tiny[0], tiny[1], 3))
    run_both(lambda v: np.linspace(v[0], v[1], -1), x)
    # geomspace with a zero endpoint raises NumPy's ValueError when the program runs
    jg = fusejit.jit(lambda v: np.geomspace(v[0], v[1], 4))
    assert_same(jg(np.array([1.0, 8.0])), np.geomspace(1.0, 8.0, 4))
    with pytest.raises(ValueError, match="Geometric sequence cannot include zero"):
        jg(np.array([0.0, 8.0]))


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_vecdot_matvec_vecmat(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    n, m = data.draw(st.integers(0, 4)), data.draw(st.integers(1, 4))
    batch = data.draw(st.sampled_from([(), (2,), (3, 1)]))
    other = data.draw(st.sampled_from([(), (1,), batch]))
    k = data.draw(st.sampled_from([n, n + 1]))  # n + 1: NumPy's core-dimension ValueError
    x1 = layout(data.draw, batch + (n,), dtype)
    x2 = layout(data.draw, other + (k,), dtype)
    a = layout(data.draw, batch + (m, n), dtype)
    run_both(lambda u, v: np.vecdot(u, v), x1, x2)
    run_both(lambda u, v: np.vecdot(u, v, axis=0), x1, x2)
    run_both(lambda mat, v: np.matvec(mat, v), a, x2)
    run_both(lambda mat, v: np.vecmat(v, np.swapaxes(mat, -1, -2)), a, x2)


def test_gufunc_errors():
    x = np.ones((3, 4))
    run_both(lambda a: np.matvec(a[0], a[0]), x)  # too few dimensions: ValueError
    with pytest.raises(UnsupportedError, match="out"):
        fusejit.jit(lambda a: np.vecdot(a, a, out=a[:, 0]))(x)


@settings(max_examples=examples(30), deadline=None)
@given(st.data())
def test_ediff1d(data):
    dtype = data.draw(st.sampled_from(NUMERIC[1:]))
    x = layout(data.draw, data.draw(shapes), dtype)
    begin = data.draw(st.sampled_from([None, 0, [1, 2], -1.5]))
    end = data.draw(st.sampled_from([None, 3, [4]]))
    run_both(lambda a: np.ediff1d(a, to_end=end, to_begin=begin), x)


@settings(max_examples=examples(30), deadline=None)
@given(st.data())
def test_round_integers_negative_decimals(data):
    dtype = data.draw(st.sampled_from([np.int8, np.uint8, np.int32, np.uint32, np.int64,
                                       np.uint64]))
    x = layout(data.draw, data.draw(shapes), dtype)
    info = np.iinfo(dtype)
    if x.size:  # the range's ends: NumPy's float64 round trip wraps them
        x = x.copy()
        x.reshape(-1)[0] = info.max
        x.reshape(-1)[-1] = info.min + 5
    decimals = data.draw(st.sampled_from([-1, -2, -3, -19, -25]))
    run_both(lambda a: np.round(a, decimals), x)
    run_both(lambda a: np.around(a[..., :1], decimals), x)


def test_apply_along_axis_calls_the_function_per_slice():
    """A scalar, a vector and a matrix per slice, on each axis, extra arguments, an integer
    result cast to the first slice's dtype as NumPy's buffer casts it; NumPy's errors; more
    than APPLY_SLICES slices refused by name."""
    x = np.random.default_rng(4).standard_normal((3, 4, 5))

    def f(x):
        return (np.apply_along_axis(lambda v: np.sum(v ** 2) / len(v), 1, x),
                np.apply_along_axis(lambda v, k: np.sort(v)[::-1][:k], 2, x, 2),
                np.apply_along_axis(lambda v: np.outer(v, v)[:2], 0, x),
                np.apply_along_axis(np.median, -1, x[0]),
                np.apply_along_axis(lambda v: v.argmax(), 0, x[:, 0]))

    run_both(f, x)
    run_both(lambda x: np.apply_along_axis(np.sum, 1, x[:, :, :0]), x)  # (a zero-size slice)
    run_both(lambda x: np.apply_along_axis(np.sum, 1, x[:0]), x)  # ValueError
    run_both(lambda x: np.apply_along_axis(np.sum, 3, x), x)  # AxisError
    with pytest.raises(UnsupportedError, match=r"apply_along_axis over 100 slices.*axis="):
        fusejit.jit(lambda a: np.apply_along_axis(np.sum, 1, a))(np.ones((100, 3)))


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_isin(data):
    dtype = data.draw(st.sampled_from([np.int8, np.int64, np.float32, np.float64]))
    x = layout(data.draw, data.draw(shapes), dtype)
    tests = layout(data.draw, data.draw(shapes), dtype)
    if np.dtype(dtype).kind == "f" and x.size:
        x = x.copy()
        x.reshape(-1)[0] = np.nan  # NaN is in nothing
    invert = data.draw(st.booleans())
    run_both(lambda a, b: np.isin(a, b, invert=invert), x, tests)
    run_both(lambda a: np.isin(a, [1, 2, 3]), x)
    run_both(lambda a: np.isin(a, [1, 2], kind="bogus"), x)


@settings(max_examples=examples(30), deadline=None)
@given(st.data())
def test_clip_min_max_keywords(data):
    dtype = data.draw(st.sampled_from([np.int32, np.float32, np.float64]))
    x = layout(data.draw, data.draw(shapes), dtype)
    run_both(lambda a: np.clip(a, min=-1, max=2), x)
    run_both(lambda a: np.clip(a, max=0.5), x)
    run_both(lambda a: np.clip(a, -1, max=1), x)


@settings(max_examples=examples(30), deadline=None)
@given(st.data())
def test_linalg_array_api_functions(data):
    """np.linalg's Array API functions through NumPy's own code (frontend/numpy_lib.py)."""
    dtype = data.draw(st.sampled_from([np.int32, np.float32, np.float64]))
    n = data.draw(st.integers(0, 4))
    batch = data.draw(st.sampled_from([(), (2,)]))
    a = layout(data.draw, batch + (n, n), dtype)
    b = layout(data.draw, batch + (n, 3), dtype)
    run_both(lambda m: np.linalg.matrix_transpose(m), b)
    run_both(lambda m, v: np.linalg.tensordot(m, v, axes=1), a, b)
    run_both(lambda m, v: np.linalg.vecdot(m, m[..., :1]), a, b)
    run_both(lambda u, v: np.linalg.cross(v, v[..., ::-1]), a, b)
    power = data.draw(st.sampled_from([0, 1, 2, 3, 5]))
    run_both(lambda m: np.linalg.matrix_power(m, power), a)


def _t(n: int = 20) -> np.ndarray:
    """Sample points made inside the traced function: values (a global array would be read
    at every call, a traced input)."""
    return np.linspace(0.0, 1.0, n)


_Y = np.sin(3 * _t()) + 0.1 * np.cos(17 * _t())
POLYFIT = {
    "degree 3": (lambda y: np.polyfit(_t(), y, 3), _Y),
    "columns of y": (lambda y: np.polyfit(_t(), y, 2), np.stack([_Y, _Y ** 2], 1)),
    "weights": (lambda y: np.polyfit(_t(), y, 2, w=np.linspace(1.0, 2.0, 20)), _Y),
    "integer y": (lambda y: np.polyfit(_t(), y, 1), np.arange(20)),
    "float32 y": (lambda y: np.polyfit(_t(), y, 2), _Y.astype(np.float32)),
    "fit then polyval": (lambda y: np.polyval(np.polyfit(_t(), y, 4), _t()), _Y),
    "negative degree": (lambda y: np.polyfit(_t(), y, -1), _Y),
    "lengths differ": (lambda y: np.polyfit(_t(5), y, 1), _Y),
}


@pytest.mark.parametrize("name", list(POLYFIT))
def test_polyfit_of_traced_y(name: str) -> None:
    """np.polyfit with sample points given as values: the constant solution operator times
    y, NumPy's coefficients to rounding (relative to the largest); NumPy's errors."""
    f, y = POLYFIT[name]
    try:
        want = f(y)
    except Exception as e:  # noqa: BLE001 - the compiled function raises the same type
        with pytest.raises(type(e)):
            fusejit.jit(f)(y)
        return
    got = fusejit.jit(f)(y)
    assert_same(got, want, rtol=1e-12, atol=1e-12 * float(np.abs(want).max()))


def test_polyfit_rank_warning_and_refusals() -> None:
    f = fusejit.jit(lambda y: np.polyfit(_t(3), y[:3], 5))
    with pytest.warns(np.exceptions.RankWarning):
        got = f(_Y)
    with pytest.warns(np.exceptions.RankWarning):
        want = np.polyfit(_t(3), _Y[:3], 5)
    assert_same(got, want, rtol=1e-9)  # (a rank-deficient fit: the minimum-norm solution)
    for g, words in ((lambda y: np.polyfit(y, y, 1), "traced x"),
                     (lambda y: np.polyfit(_t(), y, 1, full=True), "full=True")):
        with pytest.raises(UnsupportedError, match=words):
            fusejit.jit(g)(_Y)


@pytest.mark.parametrize("options", [{}, {"mode": "mirror"}, {"deriv": 1},
                                     {"deriv": 2, "delta": 0.5, "mode": "nearest"}],
                         ids=["interp", "mirror", "interp deriv 1", "nearest deriv 2"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=str)
def test_savgol_filter(options: dict, dtype) -> None:
    """scipy.signal.savgol_filter runs SciPy's own code: convolve1d (bit for bit) and, in
    mode='interp', np.polyfit of the edges (float32 fitted in float64)."""
    signal = pytest.importorskip("scipy.signal")
    x = np.stack([_Y, 2 * _Y[::-1], _Y ** 2]).astype(dtype)
    f = lambda a: signal.savgol_filter(a, 7, 3, **options)  # noqa: E731
    want, got = f(x), fusejit.jit(f)(x)
    if options.get("mode", "interp") != "interp":
        np.testing.assert_array_equal(got, want)
    assert_same(got, want, rtol=1e-13 if dtype == np.float64 else 2e-5,
                atol=1e-13 if dtype == np.float64 else 2e-5)
