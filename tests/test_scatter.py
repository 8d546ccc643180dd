"""Scatters (issue 20): assignment and in-place operators through index arrays, ufunc.at.

Property tests draw targets (argument or computed, zero-size included, non-contiguous),
dtypes, one or two index arrays beside slices (repeated and negative values, constant or
traced) and values (broadcast, constant or traced), and compare jit(f) with NumPy: the
result and every argument afterwards, or the same exception with the arguments as NumPy
left them. Unit tests cover ufunc.at's accumulation and casting, out-of-range indices
(IndexError, nothing written), the cross-entropy gradient, and the serial kernel explain
shows.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, examples, on_cuda
from hypothesis import given, note, settings
from hypothesis import strategies as st

import fusejit

# (test bodies read drawn constants from their closures)
pytestmark = pytest.mark.filterwarnings("ignore::fusejit.frontend.captures.CapturedWarning")
RNG = np.random.default_rng(20)
DTYPES = [np.float32, np.float64, np.int32, np.uint8, np.int64, np.int8, np.float16]


def check(f, *args):
    """jit(f)(*args) against f(*args) on copies: the same result, the same arguments
    afterwards (f may write them), or the same exception type with them as NumPy left them."""
    mine = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    theirs = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    # Keep the layouts of the arguments (non-contiguous ones stay non-contiguous).
    mine = [_like(a, m) for a, m in zip(args, mine)]
    theirs = [_like(a, t) for a, t in zip(args, theirs)]
    try:
        with np.errstate(all="ignore"):
            want = f(*theirs)
    except Exception as e:  # noqa: BLE001 - the compiled function must raise the same type
        with pytest.raises(type(e)):
            fusejit.jit(f)(*mine)
        # (the CUDA backend copies updated host arguments back only after a call that
        # succeeds: they are as passed, where NumPy keeps its earlier statements' writes)
        for m, t, a in zip(mine, theirs, args):
            as_passed = _like(a, np.array(a, copy=True)) if isinstance(a, np.ndarray) else a
            assert_same(m, as_passed if on_cuda() else t)
        return
    got = fusejit.jit(f)(*mine)
    assert_same(got, want)
    for m, t in zip(mine, theirs):
        assert_same(m, t)


def _like(orig, copy):
    """`copy`'s values in an array laid out like `orig` (same strides pattern)."""
    if not isinstance(orig, np.ndarray) or orig.flags.c_contiguous or orig.ndim == 0:
        return copy
    out = np.empty(orig.shape[::-1], orig.dtype).T  # Fortran-like, non-contiguous
    out[...] = copy
    return out


def _values(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return (RNG.standard_normal(shape) * 10).astype(dtype)
    return RNG.integers(-20 if np.dtype(dtype).kind == "i" else 0, 100, shape).astype(dtype)


@st.composite
def scatters(draw):
    """A target, an index (1-2 index arrays among slices), a value, and the op."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(DTYPES))
    n_arrays = draw(st.integers(1, min(2, ndim)))
    axes = sorted(draw(st.permutations(range(ndim)))[:n_arrays])
    ishape = tuple(draw(st.lists(st.integers(0, 4), max_size=2)))
    if any(shape[a] == 0 for a in axes):
        ishape = (0,)
    index = []
    for a in range(ndim):
        n = shape[a]
        if a in axes:
            index.append(RNG.integers(-n, n, ishape) if n else np.zeros(ishape, np.int64))
        else:
            index.append(draw(st.sampled_from([slice(None), slice(None, None, -1),
                                               slice(1, None, 2)])))
    region = np.empty(shape)[tuple(index)].shape
    vshape = region[len(region) - draw(st.integers(0, len(region))):]
    if vshape and draw(st.booleans()):
        vshape = (1,) + vshape[1:]
    value = _values(vshape, draw(st.sampled_from([dtype, np.float64, np.int64])))
    op = draw(st.sampled_from(["=", "+=", "-=", "*=", "add.at", "subtract.at",
                               "multiply.at", "maximum.at", "minimum.at"]))
    where = draw(st.sampled_from(["argument", "computed"]))
    traced = draw(st.sampled_from(["none", "index", "value", "both"]))
    layout = draw(st.sampled_from(["contiguous", "transposed"]))
    x = _values(shape, dtype)
    if layout == "transposed" and ndim > 1:
        x = np.asfortranarray(x)
    return x, tuple(index), value, op, where, traced


def _apply(x, index, value, op):
    if op == "=":
        x[index] = value
    elif op == "+=":
        x[index] += value
    elif op == "-=":
        x[index] -= value
    elif op == "*=":
        x[index] *= value
    else:
        getattr(np, op[:-3]).at(x, index, value)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@settings(max_examples=examples(80), deadline=None)
@given(scatters())
def test_scatter_matches_numpy(case) -> None:
    x, index, value, op, where, traced = case
    note(f"x {x.dtype}{x.shape}; index {index}; value {value.dtype}{value.shape}; {op} "
         f"{where} {traced}")
    arrays = [i for i in index if isinstance(i, np.ndarray)]
    k = len(arrays)

    def rebuild(ix_arrays):
        it = iter(ix_arrays)
        return tuple(next(it) if isinstance(i, np.ndarray) else i for i in index)

    def target(x):
        return x if where == "argument" else x * 2

    def body(x, ix, v):
        t = target(x)
        _apply(t, rebuild(ix), v, op)
        return t

    if traced == "none":
        def f(x):
            t = target(x)
            _apply(t, index, value, op)
            return t
        check(f, x)
    elif traced == "value":
        def f(x, v):
            t = target(x)
            _apply(t, index, v, op)
            return t
        check(f, x, value)
    elif traced == "index":
        fs = [lambda x, a: body(x, (a,), value), lambda x, a, b: body(x, (a, b), value)]
        check(fs[k - 1], x, *arrays)
    else:
        fs = [lambda x, v, a: body(x, (a,), v), lambda x, v, a, b: body(x, (a, b), v)]
        check(fs[k - 1], x, value, *arrays)
    assert k >= 1


def test_repeated_indices_follow_numpy() -> None:
    x = np.zeros(5)
    idx = np.array([1, 1, 3, -2, 1])
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0])

    def assign(x, i, v):
        x[i] = v  # the last assignment wins
        return x

    def buffered(x, i, v):
        x[i] += v  # one update per position: NumPy's buffered rule
        return x

    def accumulate(x, i, v):
        np.add.at(x, i, v)  # every occurrence

    for f in (assign, buffered, accumulate):
        check(f, x, idx, v)
    got = x.copy()
    fusejit.jit(accumulate)(got, idx, v)
    assert got.tolist() == [0.0, 8.0, 0.0, 7.0, 0.0]
    got = x.copy()
    fusejit.jit(buffered)(got, idx, v)
    assert got.tolist() == [0.0, 5.0, 0.0, 4.0, 0.0]


def test_ufunc_at_casting_and_wrapping() -> None:
    i = np.array([0, 0, 2, 0])
    check(lambda x, i: np.add.at(x, i, 100), np.zeros(3, np.int8), i)  # wraps like NumPy
    check(lambda x, i: np.multiply.at(x, i, 0.5), np.full(3, 3, np.int32), i)  # float loop
    check(lambda x, i, v: np.add.at(x, i, v), np.ones(3, np.float32), i,
          np.array([1e-8, 1.0, 2.0, 3e-8]))
    check(lambda x, i, v: np.maximum.at(x, i, v), np.zeros(3), i,
          np.array([np.nan, 1.0, -1.0, 2.0]))
    check(lambda x, i, v: np.minimum.at(x, i, v), np.zeros(3, np.uint8), i,
          np.array([5, 1, 7, 3], np.uint8))
    check(lambda x, i: np.subtract.at(x, (i, slice(None)), 1), np.zeros((3, 2), np.uint8), i)
    check(lambda x: np.add.at(x, 1, 5.0), np.zeros(3))  # a basic index
    check(lambda x: np.add.at(x, slice(0, 2), np.array([1.0, 2.0])), np.zeros(3))
    check(lambda x, i: np.add.at(x, i, np.ones(5)), np.zeros(3), i)  # shape mismatch


def test_out_of_range_raises_before_writing() -> None:
    def f(x, i, v):
        x[i] = v

    def g(x, i, v):
        np.add.at(x, i, v)

    def h(x, i):
        x[:, i] -= 1.0

    x = np.arange(6.0)
    for fn in (f, g):
        for bad in ([1, 6], [-7, 0], [0, 2**40]):
            check(fn, x, np.array(bad), np.array([5.0, 7.0]))
    check(h, np.ones((2, 3)), np.array([[0], [3]]))
    check(f, x, np.array([-1, -6]), np.array([5.0, 7.0]))  # negative: from the end
    check(lambda x: x.__setitem__([0, 9], 1.0), x)  # constant: at trace time


def test_cross_entropy_gradient() -> None:
    def xent_grad(logits, labels):
        n = logits.shape[0]
        m = logits.max(axis=1, keepdims=True)
        e = np.exp(logits - m)
        p = e / e.sum(axis=1, keepdims=True)
        loss = -np.log(p[np.arange(n), labels]).mean()
        d = p.copy()
        d[np.arange(n), labels] -= 1.0
        return loss, d / n

    logits = RNG.standard_normal((64, 10)).astype(np.float32)
    labels = RNG.integers(0, 10, 64)
    check(xent_grad, logits, labels)
    check(xent_grad, logits, np.concatenate([labels[:-1], [10]]))  # IndexError
    text = str(fusejit.jit(xent_grad).explain(logits, labels))
    assert "_fill" not in text  # the row kernel writes d where the scatter updates it

    def reads_old_later(x, i):
        y = np.exp(x)
        z = y.copy()
        z[i] += 1.0
        return z, y * 2  # the old value is still needed: nothing shared

    check(reads_old_later, RNG.standard_normal(6), np.array([1, 1, 4]))


def test_forms_and_traced_scalar_index() -> None:
    def set_list(x):
        x[[0, 2]] = 1.0
        return x

    def set_reshaped(x):
        x.reshape(2, 3)[:, np.array([0, 2])] = 1.0
        return x

    def set_traced_int(x):
        x[x.argmax()] = 0.0
        return x

    def add_traced(x):
        x[(x > 0).astype(np.int64)] += 1.0
        return x

    def rows(x, i, v):
        x[i] = v  # whole rows, repeated: the last one wins
        return x.sum()

    def zero_size(x, i):
        x[i] = 3.0
        return x

    def write_through_traced_int(x):
        row = x.reshape(2, 3)[x.argmax() % 2]  # a view in NumPy
        row += 1.0
        x[x.argmin()] -= 5.0
        return x

    def counts(c, labels):
        for k in range(3):
            c[labels[k]] += 1  # one traced integer at a time

    x = RNG.standard_normal(6)
    for f in (set_list, set_reshaped, set_traced_int, add_traced, write_through_traced_int):
        check(f, x)
    check(counts, np.zeros(4, np.int64), np.array([1, 3, 1]))
    check(counts, np.zeros(4, np.int64), np.array([1, 3, 4]))  # IndexError
    check(rows, RNG.standard_normal((4, 3)), np.array([3, 1, 3]),
          RNG.standard_normal((3, 3)))
    check(rows, RNG.standard_normal((4, 3)), np.array([3, 1, 3]), RNG.standard_normal((1, 3, 3)))
    check(zero_size, np.zeros((0, 2)), np.zeros(0, np.int64))
    check(zero_size, np.zeros(3), np.zeros((2, 0), np.int64))
    check(zero_size, np.zeros(3), np.array(1))  # a 0-d index array


def test_explain_shows_the_serial_scatter_kernel() -> None:
    def f(x, i, v):
        np.add.at(x, i, v * 2.0)

    text = str(fusejit.jit(f).explain(np.zeros(8), np.array([1, 2]), np.ones(2)))
    assert "scatter, serial in index order" in text
    assert "multiply" in text  # the value's work is fused into the scatter kernel


def test_cuda_renders_scatter_kernels_serially() -> None:
    from fusejit.codegen.cuda import render_cuda

    def f(x, i, v):
        x[i] = v

    program = fusejit.jit(f).lower_for(np.zeros(4), np.array([1]), np.ones(1)).program
    assert "one thread, the points in NumPy's order" in render_cuda(program).body


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 40), st.integers(1, 12), st.sampled_from([np.int64, np.int32, np.uint8,
                                                                np.int8, np.bool_]),
       st.sampled_from(["none", "float64", "float32", "int32", "computed"]), st.integers(0, 5))
def test_bincount_matches_numpy(n, m, dtype, weights, extra) -> None:
    from conftest import run_both

    if dtype == np.bool_:
        m = max(m, 2)  # True is 1: below minlength (fusejit's output length), as other values
    x = RNG.integers(0, m, n).astype(dtype)
    length = m + extra
    if weights == "none":
        run_both(lambda x: np.bincount(x, minlength=length), x)
        run_both(lambda x: np.bincount(np.asarray([3, 0, 3]), minlength=2) + x.sum(), x)
    elif weights == "computed":
        w = RNG.standard_normal(n)
        run_both(lambda x, w: np.bincount(x, np.exp(w), minlength=length), x, w)
    else:
        w = (RNG.standard_normal(n) * 5).astype(weights)
        run_both(lambda x, w: np.bincount(x, w, minlength=length), x, w)


def test_bincount_errors() -> None:
    from conftest import run_both

    from fusejit.errors import UnsupportedError

    x = np.array([0, 3, 3, 1])
    run_both(lambda x: np.bincount(x - 2, minlength=4), x)  # negative: NumPy's ValueError
    run_both(lambda x: np.bincount(x.reshape(2, 2), minlength=4), x)
    run_both(lambda x: np.bincount(x * 1.0, minlength=4), x)  # TypeError: float input
    run_both(lambda x: np.bincount(x, minlength=-1), x)
    run_both(lambda x: np.bincount(x, np.ones(3), minlength=4), x)  # weights' length
    run_both(lambda x: np.bincount(x, x * 1j, minlength=4), x)  # complex weights: TypeError
    with pytest.raises(ValueError, match="not below minlength"):
        fusejit.jit(lambda x: np.bincount(x, minlength=3))(x)  # NumPy: a longer result
    with pytest.raises(UnsupportedError, match="minlength="):
        fusejit.jit(lambda x: np.bincount(x))(x)
    got = fusejit.jit(lambda w: np.bincount(np.array([1, 1, 4]), w))(np.ones(3))  # constant x
    assert got.tolist() == [0.0, 2.0, 0.0, 0.0, 1.0]


# --- accumulating scatters in parallel pieces (codegen/cscatter_par.py) ------------------------

_PIECES = """
import numpy as np, fusejit
rng = np.random.default_rng(7)
n = (1 << 19) + 3
idx = rng.integers(-300, 300, n)
w = (rng.standard_normal(n) * 1e3).astype(np.float32)
def hist(i, w):
    return np.bincount(i + 300, weights=w * 3.0, minlength=600)
def counts(i):
    return np.bincount(i + 300, minlength=600)
def addat(x, i, v):
    np.add.at(x, i, v)
    np.maximum.at(x[:, 0], i, v[:, 0] * 7)
    return x
x = rng.integers(-9, 9, (300, 3)).astype(np.int32)
v = rng.integers(-(1 << 30), 1 << 30, (n, 3)).astype(np.int32)
big = rng.standard_normal(1 << 19)  # 4 MiB: scattered into by owners of its elements
bidx = rng.integers(-(1 << 19), 1 << 19, n)
def assign(y, i, w):
    y[i] = w * 2.0  # repeated indices: the last assignment wins
    return y
def bigat(y, i, w):
    np.add.at(y, i, w)
    return y
"""
_PIECES_RUN = """
outs = [fusejit.jit(hist)(idx, w), fusejit.jit(counts)(idx), fusejit.jit(addat)(x, idx, v),
        fusejit.jit(assign)(big.copy(), bidx, w), fusejit.jit(bigat)(big.copy(), bidx, w)]
print(repr(tuple(o.tobytes() for o in outs)))
"""


@pytest.mark.c_only  # the C backend's OpenMP threads
@pytest.mark.filterwarnings("ignore")
def test_parallel_accumulation_does_not_depend_on_thread_count(tmp_path) -> None:
    """np.bincount and ufunc.at run in pieces fixed by the shapes alone, scatters into large
    arrays by owners of their elements: 1, 2 and 3 threads give bit-identical results, the
    integer ones and the owners' ones NumPy's exactly."""
    import os
    import subprocess
    import sys

    outs = []
    for threads in ("1", "2", "3"):
        env = dict(os.environ, OMP_NUM_THREADS=threads, FUSEJIT_CACHE_DIR=str(tmp_path))
        proc = subprocess.run([sys.executable, "-c", _PIECES + _PIECES_RUN], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1] == outs[2]
    ns: dict = {}
    exec(_PIECES, ns)  # the same inputs here, against NumPy
    hist, counts, addat, idx, w, x, v = (ns[k] for k in "hist counts addat idx w x v".split())
    np.testing.assert_allclose(fusejit.jit(hist)(idx, w), hist(idx, w), rtol=1e-9, atol=1e-6)
    check(counts, idx)
    check(addat, x, idx, v)
    big, bidx = ns["big"], ns["bidx"]
    for f in (ns["assign"], ns["bigat"]):  # by owners: NumPy's own results, bit for bit
        assert "by owners" in str(fusejit.jit(f).explain(big.copy(), bidx, w))
        assert np.array_equal(fusejit.jit(f)(big.copy(), bidx, w), f(big.copy(), bidx, w))
    bad = bidx.copy()
    bad[-1] = 1 << 19
    y = big.copy()
    with pytest.raises(IndexError):
        fusejit.jit(ns["assign"])(y, bad, w)
    assert np.array_equal(y, big)  # nothing written before the error


def test_parallel_accumulation_in_explain_and_errors() -> None:
    def f(i, w):
        return np.bincount(i, weights=w, minlength=64)

    i = RNG.integers(0, 64, 1 << 18)
    w = RNG.standard_normal(1 << 18)
    text = str(fusejit.jit(f).explain(i, w))
    assert "accumulating in 8 pieces in parallel" in text
    np.testing.assert_allclose(fusejit.jit(f)(i, w), f(i, w), rtol=1e-12, atol=1e-9)
    bad = i.copy()
    bad[-1] = 64  # in the last piece: nothing may be written before the error
    with pytest.raises(ValueError, match="not below minlength"):
        fusejit.jit(f)(bad, w)

    def g(x, i, v):
        np.add.at(x, i, v)

    x = np.arange(50.0)
    i2 = RNG.integers(-50, 50, 1 << 18)
    i2[123456] = 50
    before = x.copy()
    with pytest.raises(IndexError):
        fusejit.jit(g)(x, i2, np.ones(1 << 18))
    assert np.array_equal(x, before)
    i2[123456] = -50
    check(g, x, i2, RNG.standard_normal(1 << 18))
    # -0.0 stays where no update lands (the float copies start at -0.0)
    z = np.full(8, -0.0)
    fusejit.jit(g)(z, np.zeros(1 << 18, np.int64), np.ones(1 << 18))
    assert np.signbit(z[1:]).all() and z[0] == 1 << 18


def test_parallel_accumulation_lanes() -> None:
    """Pieces whose values are computed a block ahead, or loaded and converted at once, and
    read from vector lanes (codegen/cscatter_lanes.py): 1-, 2-, 4- and 8-byte values, a
    domain that ends in a partial block, negative indices; an out-of-range index inside a
    block still raises with nothing written."""
    def f(x8, x16, x32, x64, i, a, a32, wf):
        np.add.at(x8, i, (a * 3).astype(np.int8))  # 16 lanes of 1 byte, wrapping
        np.multiply.at(x16, i, (a & 1).astype(np.uint16) + 1)
        np.add.at(x32, i, (a % 64).astype(np.float32) * 0.0625)  # exact in any order
        np.maximum.at(x64, i, a32)  # int32 lanes loaded and widened at once
        return (np.bincount(i & 63, weights=wf, minlength=64),  # float32 lanes widened
                np.bincount(i & 63, weights=a * 0.25, minlength=64))

    n = (1 << 17) + 77
    i = RNG.integers(-40, 40, n)
    a = RNG.integers(-1000, 1000, n)
    args = (i, a, a.astype(np.int32), (a % 64).astype(np.float32) / 16)
    xs = (np.zeros(40, np.int8), np.ones(40, np.uint16), np.full(40, 0.5, np.float32),
          np.zeros(40, np.int64))
    assert "in 4 pieces in parallel" in str(fusejit.jit(f).explain(*xs, *args))
    check(f, *xs, *args)  # every sum here is exact, so NumPy's results bit for bit
    bad = i.copy()
    bad[n // 2 + 5] = 40
    mine = [x.copy() for x in xs]
    with pytest.raises(IndexError):
        fusejit.jit(f)(*mine, bad, *args[1:])
    assert all(np.array_equal(m, x) for m, x in zip(mine, xs))


def test_parallel_accumulation_into_strided_argument() -> None:
    """A strided argument keeps the serial kernel (copies of its span would touch memory
    outside the view) and gives NumPy's result."""
    def g(x, i, v):
        np.add.at(x, i, v)

    base = np.arange(200, dtype=np.int64)
    i = RNG.integers(-100, 100, 1 << 18)
    v = RNG.integers(-5, 5, 1 << 18)
    check(g, base[::2], i, v)
    text = str(fusejit.jit(g).explain(base[::2], i, v))
    assert "serial in index order" in text
    check(g, base[:100], i, v)
    assert "pieces in parallel" in str(fusejit.jit(g).explain(base[:100].copy(), i, v))
