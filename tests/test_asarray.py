"""np.asarray, np.asanyarray, np.array, np.ascontiguousarray, np.asfortranarray,
np.asarray_chkfinite, np.full, np.r_ and np.c_ of traced values (frontend/conversion.py,
frontend/numpy_patch.py):
jit(f) against f for each keyword, nested lists and NumPy's dtype discovery, copy semantics
(writes through the result reach the argument exactly when NumPy returns it), NumPy's
exception types, and the patching itself: numpy restored exactly after a trace (an exception
included), nested traces, plain calls in another thread during a trace.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from conftest import assert_same, examples, run_both
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy import asarray as bound_asarray  # a name bound at import (frontend/captures.py)

import fusejit
from fusejit.errors import ConcretizationError, UnsupportedError
from fusejit.frontend import numpy_patch
from fusejit.frontend.trace import trace

NAMES = numpy_patch.NAMES


def _numpy_untouched() -> None:
    for name in NAMES:
        assert getattr(np, name) is numpy_patch.ORIGINALS[name], name


def _constructors(x, i, s):
    return (np.asarray(x), np.asarray(x, dtype=np.float32), np.asarray(x, np.int32, "C"),
            np.asanyarray(x, dtype=complex), np.array(x), np.array(x, dtype=np.int8, ndmin=4),
            np.array(x, copy=None, ndmin=3), np.ascontiguousarray(x[:, ::2]),
            np.asfortranarray(x.T, dtype=np.float32), np.ascontiguousarray(x.sum()),
            np.asarray(x.sum()), np.asanyarray(x[0, 0], order="F"), np.array(x.max(), ndmin=2),
            np.asarray(i), np.array(i, dtype=np.uint8), np.asarray(s, dtype=np.float32),
            np.ascontiguousarray(s), np.array(x, order="F", subok=True),
            np.asarray(x, device="cpu"), np.asarray([1.0, 2.0, 3.0, 4.0], like=x) + x[0],
            np.array(x[0], like=x), np.asarray_chkfinite(np.round(x).astype(np.int16)),
            bound_asarray(x, dtype=np.float32), np.asarray(x, order="A", copy=None))


def test_each_constructor_and_keyword_matches_numpy() -> None:
    x = np.arange(12.0).reshape(3, 4) - 4.5
    f = fusejit.jit(_constructors)
    assert_same(f(x, 7, 2.5), _constructors(x, 7, 2.5))
    _numpy_untouched()


def _lists(x32, a, n, f, b):
    return (np.array([x32.sum(), a, 1]), np.array([[a, f], [n, 1.5]]),
            np.array([x32, x32 * 2]), np.array([x32, [1.0, 2.0, 3.0]]),
            np.array([x32[0], 1]), np.array((x32, x32), dtype=np.float16, ndmin=4),
            np.asarray([a, b]), np.array([b, True]), np.array([n, 2]), np.array([f, n]),
            np.asanyarray([[1, 2, 3], x32]), np.ascontiguousarray([x32.max()]),
            np.asfortranarray([[a], [a]]), np.array([np.float32(1.0), x32[1]]),
            np.array([[x32[0], x32[1]], (x32[2], 0)], dtype=np.int64),
            np.array([a, a], ndmin=1), np.array([x32]),
            np.concatenate([x32, [a, 1.0]]), np.stack([x32[:2], (n, a)]))


def test_nested_lists_with_numpy_dtype_discovery() -> None:
    """Python scalars in a list are not weak (np.array([float32, 1.0]) is float64), arrays
    keep their dtype; nesting mixes traced arrays, scalars and constants."""
    x32 = np.array([1.5, -2.0, 3.25], np.float32)
    args = (x32, np.float32(0.5), 3, 2.5, True)
    assert_same(fusejit.jit(_lists)(*args), _lists(*args))


@pytest.mark.parametrize("case", [
    lambda x: np.array([x, x[:2]]),  # ragged: ValueError
    lambda x: np.array([[x[0], x[1]], [x[2]]]),
    lambda x: np.array([x, 1.0]),
    lambda x: np.asarray(x, dtype="no such dtype"),  # TypeError
    lambda x: np.array([x, x], copy=False),  # a list always needs a copy: ValueError
    lambda x: np.asarray(x, dtype=np.int32, copy=False),
    lambda x: np.asarray(x.sum(), copy=False),  # a scalar becomes an array: a copy
    lambda x: np.array(x, order="Q"),
    lambda x: np.array(x, ndmin=65),
    lambda x: np.asarray(x, like=object()),
    lambda x: np.asarray(x, unknown=1),
    lambda x: np.ascontiguousarray(x, copy=False),
    lambda x: np.asarray(x, device="gpu"),
    lambda x: np.array([x[0], 300], dtype=np.int8),  # OverflowError (Python int 300)
    lambda x: np.asfortranarray(np.reshape(x, (2, 2)), copy=False),
])
def test_errors_have_numpy_types(case) -> None:
    x = np.arange(4.0)
    with pytest.raises(Exception) as want:
        case(x)
    with pytest.raises(type(want.value)):
        fusejit.jit(case)(x)
    _numpy_untouched()


@pytest.mark.parametrize("case", [
    lambda a, i: np.full(3, a[0]),
    lambda a, i: np.full((2, 3), a),
    lambda a, i: np.full((2, 3), a * 7.6, dtype=np.int16),  # NumPy's unsafe cast
    lambda a, i: np.full(shape=(4,), fill_value=i[1]),
    lambda a, i: np.full((2, 2), [a[0], 1.5]),
    lambda a, i: np.full((3, 3), a, np.float32, "F"),
    lambda a, i: (np.full((0, 3), a), np.full((), a[2]), np.full(2, a[0] > 0)),
    lambda a, i: np.full((2, 2), a),  # ValueError: (3,) does not broadcast to (2, 2)
    lambda a, i: np.full(-1, a[0]),  # ValueError
    lambda a, i: np.full((2,), a[0], order="X"),  # ValueError
])
def test_full_with_a_traced_fill(case) -> None:
    """np.full copies its fill into a real array, which a traced value cannot fill: while
    a trace runs it is the traced value broadcast to the shape (frontend/conversion._full)."""
    a, i = np.arange(3.0) - 0.5, np.arange(3, dtype=np.int32)
    run_both(case, a, i)
    _numpy_untouched()
    with pytest.raises(UnsupportedError, match="np.full"):  # NumPy's is an object array
        fusejit.jit(lambda a: np.full(2, a[0], dtype=object))(a)


@pytest.mark.parametrize("case", [
    lambda a, b, i, m: np.r_[a, b],
    lambda a, b, i, m: np.r_[0, np.cumsum(a)],  # a Python scalar: weak
    lambda a, b, i, m: np.r_[a, 0:3, b, 0:1:5j],  # aranges and linspaces
    lambda a, b, i, m: (np.r_[i, 1.5], np.r_[b, 2.0], np.r_[a.sum(), a], np.r_[a]),
    lambda a, b, i, m: (np.c_[a, i], np.c_[m, m * 2], np.c_[a, a[0] * np.ones(3)]),
    lambda a, b, i, m: (np.r_["-1", m, m], np.r_["0,2", a, a], np.r_["0,2,0", a, a]),
    lambda a, b, i, m: np.r_[m, a],  # ValueError: dimensions differ
    lambda a, b, i, m: np.r_[a, "0"],  # ValueError: a directive must come first
])
def test_r_and_c_of_traced_values(case) -> None:
    """np.r_[...] / np.c_[...] run NumPy's own AxisConcatenator, whose `array` is wrapped
    while a trace runs (frontend/numpy_patch.py), and then the traced np.concatenate."""
    a, b = np.arange(3.0), np.ones(4, np.float32)
    run_both(case, a, b, np.arange(3, dtype=np.int32), np.arange(6.0).reshape(2, 3))
    _numpy_untouched()
    assert numpy_patch._TRICKS.array is numpy_patch.ORIGINALS["array"]


def test_nditer_of_a_traced_value_is_refused_by_name() -> None:
    """np.nditer over a traced operand (alone or in a list) is an UnsupportedError naming the
    line (NumPy's iterator would fail with an unrelated TypeError); over NumPy's arrays it
    is NumPy's iterator, and np.nditer is NumPy's type again after the trace."""
    x = np.arange(4.0).reshape(2, 2)
    for fn in (lambda a: [v for v in np.nditer(a)], lambda a: list(np.nditer([a, a]))):
        with pytest.raises(UnsupportedError, match=r"np.nditer over a traced array.*"
                                                   r"test_asarray.py:\d+"):
            fusejit.jit(fn)(x)
    table = np.array([1.0, 2.0, 4.0])
    got = fusejit.jit(lambda a: a * sum(float(v) for v in np.nditer(table)))(x)
    assert_same(got, x * 7.0)
    assert np.nditer is numpy_patch.NDITER
    _numpy_untouched()


def _writes(x):
    y = np.asarray(x)
    y[0] = 7.0  # x itself: the caller's array changes, as in NumPy
    z = np.array(x)
    z[1] = 9.0  # a copy
    w = np.array(x, copy=None, ndmin=3)  # a view with leading axes
    w[0, 2, 1] = -1.0
    c = np.ascontiguousarray(x)  # x itself when the caller's x is C-contiguous, else a copy
    c[1] += 100.0
    return z, y is x, c


@pytest.mark.parametrize("order", ["C", "F"])
def test_copy_semantics_follow_the_arguments_layout(order: str) -> None:
    x = np.asarray(np.arange(6.0).reshape(3, 2), order=order)
    want_x = x.copy(order="K")
    want = _writes(want_x)
    got_x = x.copy(order="K")
    got = fusejit.jit(_writes)(got_x)
    assert_same(got, want)
    assert_same(got_x, want_x)


def test_layout_unknown_for_computed_arrays() -> None:
    """np.ascontiguousarray of a computed array: NumPy copies or not by its layout; reads
    work, a write through it (or a read after the source changed) is refused."""
    x = np.ones((2, 3))

    def reads(x):
        return np.ascontiguousarray(x * 2).sum() + np.asfortranarray(x.T).T + np.asarray(
            x[:, ::-1], order="C")

    assert_same(fusejit.jit(reads)(x), reads(x))

    def write_through(x):
        y = np.ascontiguousarray(x * 2)
        y[0] = 5.0
        return y

    def read_after_source_written(x):
        t = x * 2
        y = np.asarray(t, order="F")
        t[0] = 0.0
        return y + 1

    def copy_false(x):
        return np.array(x.T * 2, order="C", copy=False)

    for f in (write_through, read_after_source_written, copy_false):
        with pytest.raises(UnsupportedError, match="layout"):
            fusejit.jit(f)(x)
    _numpy_untouched()


def _chkfinite(x, z):
    return (np.asarray_chkfinite(x) * 2, np.asarray_chkfinite(x[:2], dtype=np.float32),
            np.asarray_chkfinite([x[0], 1.0]), np.asarray_chkfinite(z), np.asarray_chkfinite(x))


def test_chkfinite_raises_numpys_valueerror_when_it_runs() -> None:
    """Finite values pass (fused with their consumers); inf, -inf or NaN anywhere, in a
    float or complex array, a converted copy or a list, raise NumPy's ValueError."""
    f = fusejit.jit(_chkfinite)
    x, z = np.arange(4.0) - 1.5, np.array([1 + 2j, -1j])
    assert_same(f(x, z), _chkfinite(x, z))
    cases = [(x, z * np.nan), (x, z * np.inf)]
    for k, v in ((0, np.inf), (1, np.nan), (3, -np.inf)):
        bad = x.copy()
        bad[k] = v
        cases.append((bad, z))
    for a, b in cases:
        with pytest.raises(ValueError) as want:
            _chkfinite(a, b)
        with pytest.raises(ValueError) as got:
            f(a, b)
        assert str(got.value) == str(want.value) == "array must not contain infs or NaNs"
    compiled = f.lower_for(x, z)  # the check runs in the kernel of `* 2`, fused
    mul = next(n for n in compiled.optimised.nodes() if n.op == "multiply")
    check = mul.inputs[0].inputs[0]
    assert check.op == "check_finite"
    assert any({mul.id, check.id} <= set(k.nodes) for k in compiled.program.kernels)


def test_chkfinite_refusals() -> None:
    def unused(x):
        np.asarray_chkfinite(x)
        return x * 2

    def written(x):
        y = np.asarray_chkfinite(x)
        y[0] = 1.0
        return y

    for fn in (unused, written):
        with pytest.raises(UnsupportedError, match="asarray_chkfinite"):
            fusejit.jit(fn)(np.ones(3))
    assert_same(fusejit.jit(lambda i: np.asarray_chkfinite(i) + 1)(np.arange(3)),
                np.arange(3) + 1)  # integers: nothing to check


def test_switch_off_and_bound_names(monkeypatch: pytest.MonkeyPatch) -> None:
    def f(x):
        assert np.asarray is numpy_patch.ORIGINALS["asarray"]
        return np.asarray(x) * 2

    def g(x):
        return bound_asarray(x) * 2

    monkeypatch.setenv("FUSEJIT_PATCH_NUMPY", "0")
    for fn in (f, g):
        with pytest.raises(ConcretizationError, match="FUSEJIT_PATCH_NUMPY=0"):
            fusejit.jit(fn)(np.ones(2))
    # a function traced for export reads no globals, but its names bound to NumPy's
    # functions are shadowed as in jit
    monkeypatch.delenv("FUSEJIT_PATCH_NUMPY")
    trace(g, [np.ones(2)])
    trace(lambda x: np.asarray(x) * 2, [np.ones(2)])  # through the module: traced


def test_restored_after_an_exception_and_nested_traces() -> None:
    inner = fusejit.jit(lambda a: np.asarray(a, dtype=np.float32) * 2)

    def outer(x):
        assert np.asarray is not numpy_patch.ORIGINALS["asarray"]
        c = inner(np.ones(3))  # a trace inside this one (concrete argument)
        assert np.asarray is not numpy_patch.ORIGINALS["asarray"]
        return np.asarray([c.sum(), 1.0]), inner(x) + np.array(c)

    x = np.arange(3.0)
    assert_same(fusejit.jit(outer)(x), (np.array([6.0, 1.0]), (x * 2).astype(np.float32) + 2))
    _numpy_untouched()

    def fails(x):
        np.asarray(x)
        raise KeyError("boom")

    with pytest.raises(KeyError):
        trace(fails, [x])
    _numpy_untouched()


def test_what_numpy_held_is_put_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A function put in numpy's place before the trace (a spy; another copy of fusejit) is
    what the wrapper calls, and what numpy holds again afterwards."""
    calls: list = []

    def spy(*args, **kwargs):
        calls.append(args[0])
        return numpy_patch.ORIGINALS["asarray"](*args, **kwargs)

    monkeypatch.setattr(np, "asarray", spy)

    def f(x):
        assert np.asarray is not spy
        return np.asarray(x) + np.asarray(2.0)

    trace(f, [np.ones(2)])
    assert np.asarray is spy
    assert len(calls) >= 2 and any(type(c) is float for c in calls)


def test_plain_calls_in_another_thread_during_a_trace() -> None:
    """Another thread's np.asarray & co give NumPy's results (identity, dtype, errors) while
    this one traces; two threads tracing at once both see the wrappers; numpy is restored."""
    started, done = threading.Event(), threading.Event()
    barrier = threading.Barrier(2, timeout=60)
    seen: list = []
    errors: list = []
    a = np.arange(4.0)

    def plain() -> None:
        try:
            assert started.wait(60)
            seen.append(np.asarray is not numpy_patch.ORIGINALS["asarray"])
            for _ in range(200):
                assert np.asarray(a) is a and np.asanyarray(a) is a
                assert np.array([1, 2.5]).dtype == np.float64
                assert np.asarray([[1, 2]], dtype=np.int8, order="F").flags.f_contiguous
                assert np.array(a, ndmin=2).shape == (1, 4)
                assert np.ascontiguousarray(a[::2]).flags.c_contiguous
                with pytest.raises(ValueError):
                    np.array([a, a[:2]])
                with pytest.raises(ValueError):
                    np.asarray(a, dtype=np.int8, copy=False)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)
        finally:
            done.set()

    def traced(x):
        started.set()
        assert done.wait(60)
        return np.asarray(x, dtype=np.float32)

    def both(x):
        barrier.wait()
        y = np.array([x, x])
        barrier.wait()
        return y

    def trace_in_thread() -> None:
        try:
            trace(both, [a])
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=plain)
    t.start()
    trace(traced, [a])
    t.join()
    t2 = threading.Thread(target=trace_in_thread)
    t2.start()
    trace(both, [a])
    t2.join()
    assert not errors, errors
    assert seen == [True]
    _numpy_untouched()


DTYPES = [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float32, np.float64,
          np.complex64]


@settings(max_examples=examples(12), deadline=None)
@given(st.data())
def test_property_constructors(data) -> None:
    shape = data.draw(st.sampled_from([(), (1,), (3,), (2, 3), (0, 2), (2, 1, 2)]))
    src = data.draw(st.sampled_from(DTYPES))
    dst = data.draw(st.sampled_from([None] + DTYPES))
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 5 - 2).astype(src)
    if data.draw(st.booleans()) and x.ndim >= 2:
        x = np.asfortranarray(x)
    kind = data.draw(st.sampled_from(["asarray", "array", "contig", "fortran", "list"]))
    ndmin = data.draw(st.integers(0, 3))

    def f(x):
        if kind == "asarray":
            return np.asarray(x, dtype=dst) * 1
        if kind == "array":
            return np.array(x, dtype=dst, ndmin=ndmin)
        if kind == "contig":
            return np.ascontiguousarray(x, dtype=dst)
        if kind == "fortran":
            return np.asfortranarray(x, dtype=dst)
        return np.array([x, x, np.ones_like(x)], dtype=dst, ndmin=ndmin)

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        run_both(f, x)


@settings(max_examples=examples(10), deadline=None)
@given(st.data())
def test_property_lists(data) -> None:
    """Lists and tuples of traced arrays of two dtypes, Python scalars and constants: NumPy's
    dtype discovery, shape, dtype= casts (OverflowError for a Python int out of range),
    ndmin=, and its ValueError for ragged nesting."""
    shape = data.draw(st.sampled_from([(), (2,), (2, 3)]))
    da, db = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    a = (np.arange(int(np.prod(shape))).reshape(shape) % 3 - 1).astype(da)
    b = (np.arange(int(np.prod(shape))).reshape(shape) % 4).astype(db)
    py = data.draw(st.sampled_from([True, 3, -2.5, 2**40, 1j]))
    const = py if shape == () else np.full(shape, py)
    dst = data.draw(st.sampled_from([None, np.float32, np.int16, np.uint8, np.complex128]))
    nest = data.draw(st.sampled_from(["flat", "tuple", "nested", "ragged"]))
    ndmin = data.draw(st.integers(0, 3))

    def f(a, b):
        if nest == "flat":
            obj = [a, b, const]
        elif nest == "tuple":
            obj = (b, const, a * 2)
        elif nest == "nested":
            obj = [[a, const], (b, b)]
        else:
            obj = [a, [b, b]]
        return np.array(obj, dtype=dst, ndmin=ndmin)

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        run_both(f, a, b)
