"""`out=` on compiled calls (NumPy ufunc rules, `same_kind` casting, aliasing), and the output
pool's safety: a returned array is never overwritten while the caller can still see it."""

from __future__ import annotations

import threading
import weakref

import numpy as np
import pytest
from conftest import assert_same
from hypothesis import given
from hypothesis import strategies as st

from fusejit import jit
from fusejit.runtime.executor import POOL_MIN_BYTES
from fusejit.runtime.outarg import direct_outs

F32 = np.float32
RNG = np.random.default_rng(11)


def _f(x, y):
    return np.exp(x) * (y * y) + 1


def _args(shape=(64, 48), dtype=F32):
    return RNG.standard_normal(shape).astype(dtype), RNG.standard_normal(shape).astype(dtype)


@pytest.mark.c_only
def test_out_exact_dtype_is_written_directly() -> None:
    x, y = _args()
    f = jit(_f)
    buf = np.full(x.shape, np.nan, F32)
    assert f(x, y, out=buf) is buf
    assert_same(buf, _f(x, y))
    compiled = f.lower_for(x, y)
    assert direct_outs(compiled.executable, [buf], (x, y)) == [buf]


def test_out_none_is_a_plain_call() -> None:
    x, y = _args()
    assert_same(jit(_f)(x, y, out=None), _f(x, y))


@pytest.mark.c_only
@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.complex64])
def test_out_same_kind_casts_like_numpy(dtype) -> None:
    x, y = _args()
    buf = np.empty(x.shape, dtype)
    want = np.empty(x.shape, dtype)
    np.copyto(want, _f(x, y), casting="same_kind")
    f = jit(_f)
    assert f(x, y, out=buf) is buf
    assert_same(buf, want, rtol=4e-6)  # float32 arithmetic, then the cast
    assert direct_outs(f.lower_for(x, y).executable, [buf], (x, y)) is None  # cast: copied


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_out_unsafe_cast_raises_type_error_like_numpy(dtype) -> None:
    x, y = _args()
    buf = np.zeros(x.shape, dtype)
    with pytest.raises(TypeError):
        np.add(x, y, out=buf)
    with pytest.raises(TypeError, match="same_kind"):
        jit(_f)(x, y, out=buf)
    assert not buf.any()


@pytest.mark.parametrize("shape", [(64, 1), (48,), (1, 64, 48), (48, 64)])
def test_out_shape_must_match_exactly(shape) -> None:
    x, y = _args()
    with pytest.raises(ValueError, match="shape"):
        jit(_f)(x, y, out=np.empty(shape, F32))


def test_out_read_only_raises_value_error() -> None:
    x, y = _args()
    buf = np.zeros(x.shape, F32)
    buf.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        jit(_f)(x, y, out=buf)


def test_out_bad_types_and_arity() -> None:
    x, y = _args()
    f = jit(_f)
    with pytest.raises(TypeError):
        f(x, y, out=[np.empty_like(x)])
    with pytest.raises(ValueError):
        f(x, y, out=(np.empty_like(x), np.empty_like(x)))
    g = jit(lambda x: (x + 1, x * 2))
    with pytest.raises(TypeError, match="tuple"):
        g(x, out=np.empty_like(x))
    with pytest.raises(ValueError):
        g(x, out=(np.empty_like(x),))
    h = jit(lambda x: {"a": x + 1})
    with pytest.raises(TypeError, match="tuple of arrays"):
        h(x, out=np.empty_like(x))


def test_out_one_tuple_for_one_result() -> None:
    x, y = _args()
    buf = np.empty_like(x)
    assert jit(_f)(x, y, out=(buf,)) is buf
    assert_same(buf, _f(x, y))


def test_out_tuple_for_several_results() -> None:
    x, _ = _args()
    fn = lambda x: (np.sin(x) + 2, np.abs(x).sum(axis=0), x.max())  # noqa: E731
    outs = (np.empty_like(x), np.empty(x.shape[1], F32), np.empty((), F32))
    got = jit(fn)(x, out=outs)
    assert type(got) is tuple and all(g is o for g, o in zip(got, outs))
    want = fn(x)
    for o, w in zip(outs, want):
        assert_same(o, np.asarray(w), rtol=1e-5)  # the sum's order differs from NumPy's


@pytest.mark.parametrize("alias", ["x", "y", "x.T", "x[::-1]"])
def test_out_aliasing_an_input_gives_numpys_answer(alias) -> None:
    fn = lambda x, y: np.exp(x) * (y.T * y.T) + np.abs(x[::-1])  # noqa: E731
    x, y = _args((40, 40))
    want = fn(x.copy(), y.copy())
    buf = {"x": x, "y": y, "x.T": x.T, "x[::-1]": x[::-1]}[alias]
    got = jit(fn)(x, y, out=buf)
    assert got is buf
    assert_same(np.array(buf), want)


def test_out_non_contiguous_view() -> None:
    x, y = _args()
    big = np.zeros((64, 96), F32)
    view = big[:, ::2]
    assert jit(_f)(x, y, out=view) is view
    assert_same(np.array(view), _f(x, y))
    assert not big[:, 1::2].any()


def test_out_for_a_returned_argument_is_a_copy() -> None:
    x, y = _args()
    buf = np.empty_like(x)
    assert jit(lambda x, y: x)(x, y, out=buf) is buf
    assert_same(buf, x)
    buf[0, 0] = 42
    assert x[0, 0] != 42


def test_out_with_in_place_updates() -> None:
    def step(w, g):
        w -= 0.5 * g
        return (w * w).sum()

    w, g = _args((32, 8))
    w2 = w.copy()
    want = step(w2, g)
    buf = np.empty((), F32)
    assert jit(step)(w, g, out=buf) is buf
    assert_same(buf, np.asarray(want))
    assert_same(w, w2)


def test_out_type_error_before_any_update() -> None:
    def step(w, g):
        w -= g
        return w * 2

    w, g = _args((8, 8))
    w0 = w.copy()
    with pytest.raises(TypeError):
        jit(step)(w, g, out=np.empty(w.shape, np.int32))
    assert_same(w, w0)


def test_a_parameter_named_out_is_an_ordinary_argument() -> None:
    fn = lambda x, out: x + out  # noqa: E731
    x, y = _args()
    f = jit(fn)
    assert_same(f(x, out=y), fn(x, y))
    assert_same(f(x, y), fn(x, y))


def test_out_in_a_loop_feeding_the_buffer_back() -> None:
    """x = f(x * 0.5, y, out=buf): the argument is a fresh temporary, the buffer is reused."""
    x, y = _args((256, 256))
    y = y * 0.1
    f = jit(_f)
    buf = np.empty_like(x)
    want = x.copy()
    for _ in range(3):
        x = f(x * 0.5, y, out=buf)
        want = _f(want * 0.5, y)
        assert x is buf
    assert_same(buf, want, rtol=1e-5)


@given(st.sampled_from(["f2", "f4", "f8", "i4", "c8"]), st.sampled_from(["f4", "f8", "i4"]))
def test_out_dtypes_against_numpy(out_dtype: str, in_dtype: str) -> None:
    fn = lambda x, y: x * y - x  # noqa: E731
    x, y = (np.arange(1, 13, dtype=in_dtype).reshape(3, 4), np.full((3, 4), 3, in_dtype))
    res = fn(x, y)
    buf = np.zeros((3, 4), out_dtype)
    if not np.can_cast(res.dtype, buf.dtype, "same_kind"):
        with pytest.raises(TypeError):
            np.multiply(x, y, out=np.zeros((3, 4), out_dtype))
        with pytest.raises(TypeError):
            jit(fn)(x, y, out=buf)
        return
    want = np.zeros((3, 4), out_dtype)
    np.copyto(want, res, casting="same_kind")
    assert jit(fn)(x, y, out=buf) is buf
    assert_same(buf, want)


# --- the output pool (outputs of at least POOL_MIN_BYTES are recycled once dropped) ---

def _big():
    n = POOL_MIN_BYTES // 4 * 2
    return np.arange(n, dtype=F32), np.float32(2.0)


def test_pool_never_overwrites_a_held_result() -> None:
    f = jit(lambda x, a: x * a)
    x, a = _big()
    r1 = f(x, a)
    keep = r1.copy()
    r2 = f(x, np.float32(3.0))
    assert not np.shares_memory(r1, r2)
    assert_same(r1, keep)


@pytest.mark.c_only
@pytest.mark.parametrize("holder", ["view", "tuple", "memoryview"])
def test_pool_respects_indirect_holders(holder) -> None:
    f = jit(lambda x, a: x * a)
    x, a = _big()
    r = f(x, a)
    keep = r.copy()
    if holder == "view":
        held = r[10:]
    elif holder == "tuple":
        held = (r,)
    else:
        held = memoryview(r)
    del r
    r2 = f(x, np.float32(5.0))
    seen = held.base if holder == "view" else held[0] if holder == "tuple" else np.asarray(held)
    assert not np.shares_memory(seen, r2)
    assert_same(np.asarray(seen), keep)


def test_pool_respects_weak_references() -> None:
    """An array only a weak reference can still reach is never reused (the weak reference
    could bring it back): it is left unchanged or freed."""
    f = jit(lambda x, a: x * a)
    x, a = _big()
    r = f(x, a)
    keep = r.copy()
    w = weakref.ref(r)
    del r
    r2 = f(x, np.float32(5.0))
    old = w()
    if old is not None:
        assert not np.shares_memory(old, r2)
        assert_same(old, keep)


@pytest.mark.c_only
def test_pool_reuses_a_dropped_result() -> None:
    f = jit(lambda x, a: x * a)
    x, a = _big()
    f(x, a)  # compile and install the stub
    addr = f(x, a).ctypes.data  # the result is dropped right away
    r = f(x, np.float32(7.0))
    assert r.ctypes.data == addr
    assert_same(r, x * np.float32(7.0))


def test_pool_with_threads() -> None:
    f = jit(lambda x, a: x * a)
    x, _ = _big()
    f(x, np.float32(1.0))
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(30):
                a = np.float32(k * 100 + i)
                r = f(x, a)
                assert np.array_equal(r, x * a)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_matmul_out_writes_the_argument() -> None:
    """np.matmul(a, b, out=c) (frontend/inplace.py gufunc_into): c holds the product and is
    returned; same_kind casting into c (float64 into float32) and NumPy's errors for a
    cast it refuses or a shape that is not the result's; a following update of c sees it."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))

    def f(a, b, c):
        r = np.matmul(a, b, out=c)
        c += 1
        return r is c, np.matmul(a[0], b, out=np.empty(5))

    for dtype in (np.float64, np.float32):
        want_c, got_c = np.zeros((4, 5), dtype), np.zeros((4, 5), dtype)
        want = f(a, b, want_c)
        got = jit(f)(a, b, got_c)
        assert got[0] is want[0] is True
        np.testing.assert_allclose(got_c, want_c, rtol=1e-6 if dtype == np.float32 else 1e-13)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-13)
    for bad, exc in ((np.zeros((4, 4)), ValueError), (np.zeros((4, 5), np.int64), TypeError)):
        with pytest.raises(exc):
            f(a, b, bad.copy())
        with pytest.raises(exc):
            jit(f)(a, b, bad.copy())
