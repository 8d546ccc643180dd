"""Everyday NumPy calls found by benchmarks/survey_calls.py to be wrong, crashing or refused,
checked against NumPy (values, dtype, shape, exception type): one jitted function checks
several calls where it can, since each compiled program costs a C compile."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, run_both

import fusejit
from fusejit.errors import UnsupportedError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_round_with_many_decimals_scales_by_numpys_power_of_ten():
    # NumPy's factor for |decimals| >= 9 is 1e9 times 10 repeated in double, not the
    # correctly rounded 10.0 ** n: for n = 23 they differ, and so did ~94% of the results
    rng = np.random.default_rng(1)
    x = rng.standard_normal(400) * 1e-20
    x32 = (rng.standard_normal(40) * 1e-20).astype(np.float32)
    big = rng.integers(-10**17, 10**17, 40)

    def f(x, x32, big):
        return (np.round(x, 23), np.round(x * 1e30, -25), np.round(x, 400), np.round(x, -400),
                np.round(x32, 23), np.round(x32, 40), np.round(big, -23), np.round(big, -309))

    run_both(f, x, x32, big)


def test_split_and_block_forms():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 6))
    t = rng.standard_normal((2, 3, 4)).astype(np.float32)
    v = np.arange(6)

    def f(a, t, v):
        return (np.hsplit(a, 3), np.hsplit(a, [1, 4]), np.vsplit(a, [3]), np.dsplit(t, 2),
                np.hsplit(v, [2, 5]), np.block([[a, a], [a, a]]), np.block([v, 1.5, v]),
                np.block([[[t]], [[t]]]), np.block(t), np.block([[a[:, :2], a], [v]]))

    run_both(f, a, t, v)
    run_both(lambda v: np.vsplit(v, 2), v)  # NumPy's ValueError (1-D)
    run_both(lambda a: np.dsplit(a, 2), a)
    run_both(lambda a: np.block([[a], a]), a)  # depths differ: ValueError
    run_both(lambda a: np.hsplit(a, 4), a)


def test_i0_diagflat_and_order_f():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4)) * 6
    x32 = x.astype(np.float32)
    i = rng.integers(-9, 9, (3, 4)).astype(np.int16)

    def f(x, x32, i):
        return (np.i0(x), np.i0(x32), np.i0(i), np.i0(x[0, 0]), np.diagflat(x[:2]),
                np.diagflat(i[0], -2), np.diagflat(x32[0, 0], 1), np.ravel(x, "F"),
                x.flatten("F"), x.T.ravel("F"), np.reshape(x, (2, 6), order="F"),
                x.reshape(2, 2, 3, order="F") * 2, np.reshape(i, -1, order="F"))

    run_both(f, x, x32, i)


def test_reshape_order_f_is_a_view_where_numpys_is():
    def f(x):
        y = x.reshape((2, 2, 5), order="F")  # splits axis 0: a view, as in NumPy
        y[0, 1] = -1.0
        return x

    x = np.arange(20.0).reshape(4, 5)
    assert_same(fusejit.jit(f)(x.copy()), f(x.copy()))


def test_ufuncs_float_power_divmod_modf():
    rng = np.random.default_rng(4)
    x = np.array([-2.5, -0.0, 0.0, 0.5, 3.75, np.inf, -np.inf, np.nan, 1e300, -7.0])
    y = np.array([2.0, 3.0, -1.5, 0.0, -0.0, 2.0, 3.0, 1.0, 1e-300, 2.5])
    i8 = rng.integers(-9, 9, 10).astype(np.int8)
    j = rng.integers(-4, 5, 10)
    f32 = x.astype(np.float32)

    def f(x, y, i8, j, f32):
        return (np.float_power(x, y), np.float_power(i8, 2), np.float_power(f32, 0.5),
                np.float_power(j, -1), np.float_power(x, 0.5), np.float_power(x * 1j, 0.5),
                np.float_power(x, 2), np.float_power(x, 1.0), np.divmod(x, y), np.divmod(i8, 3),
                np.divmod(j, 7),
                np.divmod(f32, 1.5), np.modf(x), np.modf(f32), np.modf(i8), np.modf(j),
                divmod(x, 2.0))

    run_both(f, x, y, i8, j, f32)


def test_fill_diagonal_place_and_fill_write_in_place():
    rng = np.random.default_rng(5)

    def f(sq, tall, cube, ints, p, m):
        np.fill_diagonal(sq, 7.0)
        np.fill_diagonal(tall, np.array([1.0, 2.0, 3.0]), wrap=True)
        np.fill_diagonal(cube, -1)
        np.fill_diagonal(ints, 2.9)
        q = p.copy()
        np.place(q, q > 0, [10.0, 20.0, 30.0])
        r = p.copy()
        np.place(r, m, p[0, 0])
        s = np.empty_like(ints)
        s.fill(-3.7)
        t = np.zeros_like(p[:2, :3])
        t.fill(p[1, 1])
        return q, r, s, t

    args = (rng.standard_normal((4, 4)), rng.standard_normal((11, 3)),
            rng.standard_normal((3, 3, 3)), rng.integers(0, 9, (3, 5)),
            rng.standard_normal((4, 5)), rng.random((4, 5)) > 0.5)
    want_args = [a.copy() for a in args]
    want = f(*want_args)
    got_args = [a.copy() for a in args]
    assert_same(fusejit.jit(f)(*got_args), want)
    for g, w in zip(got_args, want_args):
        assert_same(g, w)
    run_both(lambda a: np.fill_diagonal(a[:, :, :2], 0), rng.standard_normal((3, 3, 3)))
    run_both(lambda a: np.place(a, np.ones(3, bool), 1.0), rng.standard_normal((2, 2)))


def test_put_along_axis_and_clip_method():
    rng = np.random.default_rng(6)

    def f(x, i):
        y = x.copy()
        np.put_along_axis(y, np.argmax(y, axis=1)[:, None], 0.0, axis=1)
        z = np.zeros_like(x)
        np.put_along_axis(z, i, x[:, :2] * 2, axis=1)
        np.put_along_axis(x, np.array([[0], [3], [1]]), -5.0, axis=-1)
        return (y, z, x, x.clip(0), x.clip(None, 0.5), x.clip(max=0.1), x.clip(min=-0.1),
                i.clip(1), x.clip(), i.clip(-10**30))

    x = rng.standard_normal((3, 4))
    i = rng.integers(0, 4, (3, 2))
    assert_same(fusejit.jit(f)(x.copy(), i), f(x.copy(), i))
    run_both(lambda x: x.clip(0, 1, min=2), x)  # NumPy's TypeError
    with pytest.raises(UnsupportedError, match="axis=None"):
        fusejit.jit(lambda x: np.put_along_axis(x, np.array([0, 7]), -5.0, None))(x)


def test_pad_statistic_ramp_and_odd_modes_run_numpys_code():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 5))
    i = rng.integers(-50, 50, (3, 4)).astype(np.int16)
    v = rng.standard_normal(5).astype(np.float32)

    def f(x, i, v):
        return (np.pad(x, 2, "maximum"), np.pad(x, ((1, 2), (0, 3)), "minimum", stat_length=2),
                np.pad(x, 1, "mean"), np.pad(i, 2, "mean", stat_length=((1, 3), (2, 2))),
                np.pad(i, (1, 2), "median"), np.pad(x, 2, "median", stat_length=3),
                np.pad(v, 3, "linear_ramp"), np.pad(i, 2, "linear_ramp", end_values=(5, -7)),
                np.pad(x, ((2, 1), (1, 3)), "linear_ramp", end_values=1.5),
                np.pad(v, (2, 3), "reflect", reflect_type="odd"),
                np.pad(v, 12, "reflect", reflect_type="odd"),
                np.pad(x, 2, "symmetric", reflect_type="odd"),
                np.pad(i, 9, "symmetric", reflect_type="odd"),
                np.pad(x[:1], 2, "reflect", reflect_type="odd"),
                np.pad(v, 1, "reflect", reflect_type="other"),
                np.pad(x, {1: (1, 2)}), np.pad(i, {-1: 2, 0: (0, 1)}, "mean"))

    run_both(f, x, i, v)
    run_both(lambda x: np.pad(x, 1, "maximum", stat_length=0), x)  # NumPy's ValueError
    run_both(lambda x: np.pad(x, 1, "mean", end_values=0), x)
    run_both(lambda x: np.pad(x[:0], 1, "median"), x)
    run_both(lambda x: np.pad(x, {0: 1.5}), x)


def test_average_with_traced_weights_raises_numpys_error_when_run():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 4))
    w = rng.random(4) + 0.1
    w2 = rng.random((3, 4))
    i = rng.integers(0, 9, (3, 4))

    def f(x, w, w2, i):
        return (np.average(x, axis=1, weights=w), np.average(x, weights=w2),
                np.average(i, axis=-1, weights=w, returned=True),
                np.average(x, weights=w2, returned=True),
                np.average(x.astype(np.float32), axis=(0, 1), weights=w2.astype(np.float32),
                           keepdims=True),
                np.average(x, axis=0, weights=w2[:, 0], returned=True, keepdims=True))

    run_both(f, x, w, w2, i)
    jf = fusejit.jit(lambda x, w: np.average(x, axis=1, weights=w))
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        jf(x, np.array([1.0, -1.0, 0.0, 0.0]))
    run_both(lambda x, w: np.average(x, weights=w), x, w)  # NumPy's TypeError (no axis)
    run_both(lambda x, w: np.average(x, axis=0, weights=w), x, w)  # ValueError (shape)
    run_both(lambda x, w: np.average(x, axis=0, weights=w), np.ones((0, 3)), np.ones(0))


def test_put_flat_indices_constant_and_traced():
    rng = np.random.default_rng(9)

    def f(x, i, v, t):
        y = x.copy()
        np.put(y, [0, 7, -1, 7], [1.0, 2.0])  # cycled values, repeated index: the last wins
        z = x.copy()
        z.put(i, v * 10)
        w = x.copy()
        np.put(w, i * 5 - 20, -1.0, mode="wrap")
        u = x.copy()
        np.put(u, i * 5 - 20, v, mode="clip")
        np.put(t, 0, x[0, 0])
        n = (x * 0).astype(np.int32)
        np.put(n, [3], 2.7)
        return y, z, w, u, t, n

    args = (rng.standard_normal((3, 4)), rng.integers(-12, 12, 5), rng.standard_normal(5),
            np.array(1.5))
    want_t = args[3].copy()
    want = f(args[0], args[1], args[2], want_t)
    got_t = args[3].copy()
    assert_same(fusejit.jit(f)(args[0], args[1], args[2], got_t), want)
    assert_same(got_t, want_t)
    jf = fusejit.jit(lambda x, i: np.put(x, i, 0.0))
    for bad in (np.array([12]), np.array([-13])):
        with pytest.raises(IndexError):
            jf(args[0].copy(), bad)
    run_both(lambda x: np.put(x.copy(), [12], 1.0), args[0])
    run_both(lambda x: np.put(x.copy(), [1], 1.0, mode="other"), args[0])


def test_refusals_name_the_line_and_the_way_out():
    x = np.ones((2, 3))
    for f, what in ((lambda x: np.array_equal(x, x), r"\(a == b\).all\(\)"),
                    (lambda x: np.polyfit(x[0], x[1], 1), "lstsq"),
                    (lambda x: np.put_along_axis(x, np.array([0]), 1.0, None), "axis=None"),
                    (lambda x: x.reshape(6, order="A"), "order='A'"),
                    (lambda x: np.lib.stride_tricks.as_strided(x, (2, 2), (8, 8)),
                     "sliding_window_view")):
        with pytest.raises(UnsupportedError, match=what) as info:
            fusejit.jit(f)(x)
        assert "test_tail_calls.py:" in str(info.value)


def test_float_to_integer_casts_give_numpys_results_out_of_range():
    # NumPy (x86): int32 and narrower through the 32-bit truncation (INT_MIN for NaN and out
    # of range, then wrapped); uint64 through int64 (also on AVX-512, whose unsigned
    # conversion gives all ones for negative values); uint32 as NumPy's scalar loop
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 1e10, -1e10, 3e9, -3e9, 2.0**31,
                  -2.0**31, -2.0**31 - 1, 2.0**32, 2.0**63, -2.0**63, 2.0**64, 1e300, -1e300,
                  -1.0, -129.5, 255.7, 300.0, 65535.9, 65536.0, -32769.0, 0.5, -0.5, 7.0])
    dtypes = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64, np.uint64)

    def f(x):
        x32 = x.astype(np.float32)
        return tuple(x.astype(d) for d in dtypes) + tuple(x32.astype(d) for d in dtypes) + (
            x[-7:].astype(np.uint32), x[:2].astype(np.uint32))

    with np.errstate(invalid="ignore"):
        run_both(f, x)


def test_unravel_index_sliding_windows_choose_and_round():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((3, 4))
    v = rng.standard_normal(9).astype(np.float32)
    i = rng.integers(0, 2, (3, 4))
    swv = np.lib.stride_tricks.sliding_window_view

    def f(x, v, i):
        return (np.unravel_index(np.argmax(x), x.shape), np.unravel_index(x.argmin(1), (2, 2)),
                np.unravel_index(i * 5, (3, 2, 2), order="F"), np.unravel_index(i[0], 7),
                swv(v, 4).mean(axis=-1), swv(x, (2, 3)) * 2, swv(x, 2, axis=0).sum(-1),
                swv(x, (2, 2), axis=(1, 1)), i.choose([x, -x]), i.choose((x, 0.5), mode="wrap"),
                round(x.sum(), 2), round(v[0], -1), round(i.sum(), -1))

    run_both(f, x, v, i)
    jf = fusejit.jit(lambda i: np.unravel_index(i, (3, 4)))
    for bad in (np.array([12]), np.array([-1, 2])):
        with pytest.raises(ValueError, match="unravel_index"):
            jf(bad)
    run_both(lambda x: np.unravel_index(x, (3, 4)), x)  # NumPy's TypeError (float indices)
    run_both(lambda v: swv(v, 10), v)  # NumPy's ValueError (window too large)
    run_both(lambda x: round(x, 2), x)  # TypeError: arrays have no __round__
    run_both(lambda x: round(x[0, 0] > 0, 2), x)  # nor NumPy bools
    run_both(lambda v: swv(v, 3, writeable=True).sum(-1), v)  # read: as NumPy

    def write(v):
        w = swv(v, 3, writeable=True)
        w[0, 0] = 1.0  # (NumPy writes v[0], seen by windows 0 only; v[2] by three)
        return w

    with pytest.raises(UnsupportedError, match="writeable"):
        fusejit.jit(write)(v)


def test_frexp_and_ldexp_are_numpys_bits():
    """np.frexp (mantissa, int32 exponent; inf/NaN exponent 0, subnormals' true exponent)
    and np.ldexp (an int32 or int64 exponent, int64 ones beyond int's range clamped as
    NumPy's long loop; overflow to inf, underflow through subnormals to 0), every float
    dtype and integer inputs, and frexp's parts put back together by ldexp."""
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.standard_normal(50) * 10.0 ** rng.integers(-300, 300, 50),
                        [np.inf, -np.inf, np.nan, 0.0, -0.0, 5e-324, -2.2e-308, 1.7e308]])
    e64 = np.array([0, 1, -1, 1100, -1100, 2**40, -2**40, 127, -149, -1074, 2000, -3000])
    e32 = rng.integers(-300, 300, 12).astype(np.int32)
    i8 = np.arange(-4, 5, dtype=np.int8)

    def f(x, e64, e32, i8):
        x32, x16 = x.astype(np.float32), x.astype(np.float16)
        m, e = np.frexp(x)
        return (np.frexp(x), np.frexp(x32), np.frexp(x16), np.frexp(i8), np.frexp(x[0]),
                np.ldexp(m, e), np.ldexp(x[:12], e64), np.ldexp(x32[:12], e64),
                np.ldexp(x16[:12], e32), np.ldexp(x[:12], e32), np.ldexp(x32[:12], 3),
                np.ldexp(1.5, e32))

    run_both(f, x, e64, e32, i8)
    with pytest.raises(TypeError):
        fusejit.jit(lambda a: np.ldexp(a, 2.0))(x)


def test_gcd_and_lcm_are_numpys_with_its_wrap_around():
    # every int8 and uint8 pair; for wider types the ends of the range, small values and
    # random ones: gcd(MIN, 0) == MIN and an lcm beyond the type wraps, as NumPy's loops
    def f(a, b):
        return np.gcd(a, b), np.lcm(a, b), np.gcd(a, 6), np.lcm(12, b)

    for dt in (np.int8, np.uint8):
        info = np.iinfo(dt)
        a, b = np.meshgrid(np.arange(info.min, info.max + 1, dtype=dt),
                           np.arange(info.min, info.max + 1, dtype=dt))
        assert_same(fusejit.jit(f)(a, b), f(a, b))
    rng = np.random.default_rng(3)
    for dt in (np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        info = np.iinfo(dt)
        ends = np.array([info.min, info.min + 1, 0, 1, 2, 3, info.max - 1, info.max], dt)
        ends = np.unique(np.concatenate([ends, -ends[:4]]).astype(dt)) if info.min else ends
        rand = rng.integers(info.min, info.max, 3000, dtype=dt, endpoint=True)
        small = rng.integers(max(info.min, -900), 900, 3000).astype(dt)
        a = np.concatenate([np.repeat(ends, len(ends)), rand, small, small])
        b = np.concatenate([np.tile(ends, len(ends)), small, rand, small[::-1]])
        assert_same(fusejit.jit(f)(a, b), f(a, b))
    # no float or bool loop in NumPy: the same UFuncTypeError
    for bad in (np.ones(3), np.ones(3, bool)):
        with pytest.raises(TypeError) as e:
            fusejit.jit(lambda x: np.gcd(x, x))(bad)
        with pytest.raises(type(e.value)):
            np.gcd(bad, bad)


def test_flat_reads_and_writes_as_numpys_flat_iterator():
    x = np.arange(12.0).reshape(3, 4)

    def f(x):
        y = x.copy()
        y.flat[2:7] = np.array([-1.0, -2.0])  # values cycled over the indices
        y.flat[[0, 5]] = 100
        z = x.copy()
        z.flat = [7, 8, 9]
        return (x.flat[3] + x.flat[-1], x.T.flat[[1, 2]] * 2, x.flat[2:5], y, z,
                sum(v for v in x[:1].flat), len(x.flat), x.flat[np.array([[1, 2], [3, 4]])])

    run_both(f, x)
    run_both(lambda x: x.T.flat[5:], x)  # a transposed view: C order of its own indices

    def g(w, i):  # an argument updated in place through its flat iterator, traced indices
        w.flat[i] = -1.0
        return w

    w, i = np.ones((2, 3)), np.array([4, 0])
    got = fusejit.jit(g)(w.copy(), i)
    assert_same(got, g(w.copy(), i))
    for bad in (lambda x: x.flat[100], lambda x: x.flat[1, 2]):
        with pytest.raises(IndexError):
            fusejit.jit(bad)(x)


def test_view_as_another_dtype_reinterprets_the_bits():
    # floats with NaN payloads, -0.0, infinities and subnormals; ints of both signs
    f32 = np.array([0.0, -0.0, 1.5, -np.inf, np.inf, 1e-45, -3e-39, 3.4e38], np.float32)
    f32 = np.concatenate([f32, np.array([0x7FC00001, 0xFFC12345, 0x7F800001], np.uint32)
                          .view(np.float32)]).reshape(1, -1)
    f64 = np.array([0.0, -0.0, -2.5, np.nan, 5e-324, -1e308], np.float64)
    i8 = np.array([-128, -1, 0, 1, 127], np.int8)
    i16 = np.array([-32768, -1, 0, 7, 32767], np.int16)

    def f(f32, f64, i8, i16):
        i = f32.view(np.int32)
        return (i, f32.view(np.uint32) >> 23, (i & 0x7FFFFFFF).view(np.float32),
                f32.T.view(np.int32), f32[0, 3].view(np.uint32), f64.view(np.int64),
                f64[::-1].view(np.uint64) + 1, (f64.view(np.uint64) ^ (1 << 63)).view(np.float64),
                i8.view(np.uint8), i16.view(np.uint16), i16.view(np.uint16).view(np.int16),
                f32[:0].view(np.int32), f32.view(), f32.view(np.ndarray), f32.view(np.float32))

    got = fusejit.jit(f)(f32, f64, i8, i16)
    want = f(f32, f64, i8, i16)
    assert len(got) == len(want)
    for g, w in zip(got, want):  # bits, NaN payloads included
        assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
    for bad, what in ((lambda x: x.view(np.float64), "item size"),
                      (lambda x: x.view(np.float16), "item size"),
                      (lambda x: x.view(np.int16), "item size"),
                      (lambda x: x.view(np.recarray), "subclass")):
        with pytest.raises(UnsupportedError, match=what):
            fusejit.jit(bad)(f32)

    def write_through(x):
        v = x.view(np.int32)
        v[0] = 0
        return x

    with pytest.raises(UnsupportedError, match="test_tail_calls.py:"):
        fusejit.jit(write_through)(f32.copy())
