"""Gathers: indexing with integer arrays and traced integers, np.take, np.take_along_axis.

Property tests draw source shapes (zero-size included), layouts, dtypes and advanced indices
(one or two index arrays, constant or traced, next to slices, integers and None) and compare
`jit(f)` with NumPy; unit tests cover NumPy's errors (constant indices at trace time, traced
ones when the compiled code runs), view semantics of a traced integer index, fusion (the
gather's kernel, its source stored first) and in-place updates that read through a gather.
"""

from __future__ import annotations

import re
import types

import numpy as np
import pytest
from conftest import assert_same, c_structure, cancellation_atol, examples, run_both
from hypothesis import given, note, settings
from hypothesis import strategies as st

import fusejit
from fusejit.errors import UnsupportedError
from fusejit.lowering.loop_ir import Load
from fusejit.lowering.memplan import check_plan

RNG = np.random.default_rng(7)


def _layout(a: np.ndarray, kind: str) -> np.ndarray:
    if kind == "transposed":
        return np.ascontiguousarray(a.T).T
    if kind == "reversed":
        return a[::-1]
    if kind == "strided":
        return np.repeat(a, 2, axis=0)[::2]
    return a


@st.composite
def gathers(draw):
    """A source array, an index tuple with one or two index arrays, and which are traced."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32, np.uint8, np.int64]))
    src = _layout((RNG.standard_normal(shape) * 10).astype(dtype),
                  draw(st.sampled_from(["contiguous", "transposed", "reversed", "strided"])))
    n_arrays = draw(st.integers(1, min(2, ndim)))
    axes = sorted(draw(st.permutations(range(ndim)))[:n_arrays])
    index_shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    entries, traced = [], []
    for a in range(ndim):
        n = shape[a]
        if a in axes:
            ishape = index_shape[len(index_shape) - draw(st.integers(0, len(index_shape))):]
            if n == 0:
                ishape = (0,) + ishape[1:] if ishape else (0,)
            vals = RNG.integers(-n, n, ishape) if n else np.zeros(ishape, np.int64)
            idt = draw(st.sampled_from([np.int64, np.int32, np.intp]))
            vals = vals.astype(idt)
            form = draw(st.sampled_from(["traced", "const", "list"]))
            if form == "traced":
                traced.append(vals)
                entries.append(("traced", len(traced) - 1))
            else:
                entries.append((form, vals))
        else:
            entries.append(("basic", draw(st.sampled_from(
                [slice(None), slice(None, None, -1), slice(1, None, 2)]
                + ([0, -1] if n else [])))))
        if draw(st.booleans()) and a < ndim - 1 and not draw(st.booleans()):
            entries.append(("basic", None))
    return src, entries, traced


def _index(entries, traced):
    out = []
    for form, v in entries:
        if form == "traced":
            out.append(traced[v])
        elif form == "list":
            out.append(v.tolist())
        else:
            out.append(v)
    return tuple(out)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@settings(max_examples=examples(60), deadline=None)
@given(gathers(), st.booleans())
def test_advanced_indexing_matches_numpy(case, compute) -> None:
    src, entries, traced = case
    note(f"src {src.dtype}{src.shape} strides {src.strides}; index {entries}")

    def body(x, ts):
        g = x[_index(entries, ts)]
        return g * 2 + 1 if compute else g

    fns = [lambda x: body(x, ()), lambda x, a: body(x, (a,)), lambda x, a, b: body(x, (a, b))]
    run_both(fns[len(traced)], src, *traced)


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(1, 3), st.sampled_from(["raise", "wrap", "clip"]), st.booleans(),
       st.sampled_from([None, 0, -1]))
def test_take_matches_numpy(ndim, mode, traced, axis) -> None:
    x = RNG.standard_normal(tuple(RNG.integers(1, 5, ndim))).astype(np.float32)
    n = x.size if axis is None else x.shape[axis]
    lo, hi = (-n, n) if mode == "raise" else (-3 * n, 3 * n)
    idx = RNG.integers(lo, hi, (2, 3))
    if traced:
        run_both(lambda x, i: np.take(x, i, axis=axis, mode=mode) * 3, x, idx)
    else:
        run_both(lambda x: np.take(x, idx, axis=axis, mode=mode) * 3, x)


def test_take_scalar_index_and_take_along_axis() -> None:
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    jf = run_both(lambda x: np.take(x, 7), x)
    assert isinstance(jf(x), np.float32)
    run_both(lambda x: np.take(x, 2, axis=1), x)
    idx = RNG.integers(-5, 5, (4, 3))
    run_both(lambda x, i: np.take_along_axis(x, i, axis=1), x, idx)
    run_both(lambda x, i: np.take_along_axis(x, i[:1], axis=1) + 1, x, idx)
    run_both(lambda x: np.take_along_axis(x, (np.abs(x) * 10).astype(np.int64) % 4, 0), x)
    run_both(lambda x, i: np.take_along_axis(x, i.ravel(), axis=None), x, idx)
    run_both(lambda x, i: np.take_along_axis(x, i, axis=None), x, idx)  # ValueError


def test_index_errors_match_numpy() -> None:
    x = RNG.standard_normal((5, 6))
    bad = np.array([[0, 5], [-6, 1]])
    run_both(lambda x, i: x[i], x, bad)  # traced: raised by the compiled code
    run_both(lambda x: x[[0, 7]], x)  # constant: raised at trace time
    run_both(lambda x: x[:, [-7]], x)
    run_both(lambda x, i: x[i], x, np.array([1.0]))  # float index array
    run_both(lambda x: x[[0, 1], [[0], [1], [2]], None], x)
    run_both(lambda x: x[[0, 1], [0, 1, 2]], x)  # shape mismatch
    run_both(lambda x, i: np.take(x, i, mode="nope"), x, bad)
    run_both(lambda x, i: x[np.array([], np.int64)] * 2, x, bad)
    run_both(lambda x, i: x[:, i] + x[i, :], np.empty((0, 0)), np.empty(0, np.int64))
    with pytest.raises(IndexError):
        fusejit.jit(lambda x, i: x[:, i])(np.empty((3, 0)), np.array([0]))  # empty axis
    with pytest.raises(IndexError):
        fusejit.jit(lambda x, i: np.take(x, i, mode="wrap"))(np.empty(0), np.array([0]))
    # the compiled function raises for bad values and computes again for good ones
    jf = fusejit.jit(lambda x, i: x[i] * 2)
    with pytest.raises(IndexError):
        jf(x, np.array([3, 5]))
    assert_same(jf(x, np.array([3, -5])), x[[3, -5]] * 2)


def test_index_dtypes_convert_like_numpy() -> None:
    x = np.arange(10.0)
    for idx in (np.array([1, 9], np.uint8), np.array([-1, 3], np.int8),
                np.array([2**64 - 1, 2], np.uint64), np.array([2, -10], np.int16)):
        run_both(lambda x, i: x[i], x, idx)
    with pytest.raises(UnsupportedError, match="returns x\\[mask\\]"):
        fusejit.jit(lambda x, i: x[i])(x, np.array([True, False] * 5))


def test_traced_integer_index_is_a_view_as_in_numpy() -> None:
    def f(x, i):
        row = x[i]
        x += 1.0  # NumPy's x[i] is a view: it sees this
        return row * 2, x[i, i % 3]

    x = RNG.standard_normal((4, 3))
    for i in (2, np.int64(-1)):
        xn, xj = x.copy(), x.copy()
        assert_same(fusejit.jit(f)(xj, i), f(xn, i))
        assert_same(xj, xn)
    jf = run_both(lambda x, i: x[i], x[:, 0].copy(), 3)
    assert isinstance(jf(x[:, 0].copy(), 3), np.float64)  # a scalar, as NumPy gives
    run_both(lambda x: x[np.argmax(x.sum(axis=1))] - x.max(), x)
    # Writing through x[i] is a scatter: tests/test_scatter.py.
    with pytest.raises(IndexError):
        fusejit.jit(lambda x, i: x[i])(x, 4)


def test_gathers_meet_reductions_matmuls_and_each_other() -> None:
    E = RNG.standard_normal((50, 8))  # float64: float32 sums of 8 cancel beyond rtol
    W = RNG.standard_normal((8, 6))
    tok = RNG.integers(0, 50, (4, 7))
    run_both(lambda E, t: E[t].sum(axis=-1), E, tok)
    run_both(lambda E, t: (E[t] - E[t].max(axis=-1, keepdims=True)).sum(axis=1), E, tok)
    run_both(lambda E, t, W: np.maximum(E[t] @ W, 0), E, tok, W)
    run_both(lambda E, t, W: (E @ W)[t] + 1, E, tok, W)
    run_both(lambda E, t: E[t][:, 2][tok[0] % 4], E, tok)
    run_both(lambda E, t: np.exp(E)[t % 7] * E[t], E, tok)
    run_both(lambda E, t: (E[t], E[t] * 2), E, tok)  # the gather is an output too
    run_both(lambda E, t: E[t.T] + E[t].transpose(1, 0, 2), E, tok)
    run_both(lambda E: E[[1, 2]] + E[[3, 4]].sum(), E)
    run_both(lambda E, t: E[t].sum(axis=0), E, tok)  # column layout
    run_both(lambda E, t: E[t].sum(axis=1) / E[t].max(axis=1), E, tok)
    run_both(lambda E, t: np.exp(E[t] - E[t].max(axis=-1, keepdims=True)), E, tok)


def test_gathers_fuse_into_reductions_and_gemm_epilogues() -> None:
    rng = np.random.default_rng(5)
    A, W = rng.standard_normal((64, 32)), rng.standard_normal((32, 48))
    E, t = rng.standard_normal((100, 48)), rng.integers(-100, 100, 64)
    jf = run_both(lambda A, W, E, t: np.maximum(A @ W + E[t], 0), A, W, E, t)
    if c_structure():
        (k,) = jf.lower_for(A, W, E, t).program.kernels  # the gather is the gemm's epilogue
        assert any(isinstance(s, Load) and s.index for s in k.body)
    jf = run_both(lambda E, t: (E[t] * 2).sum(axis=1), E, t)
    (k,) = jf.lower_for(E, t).program.kernels  # one reduction kernel, no stored gather
    assert any(isinstance(s, Load) and s.index for s in k.body)
    with pytest.raises(IndexError):
        jf(E, t + 200)


def test_in_place_updates_read_the_old_values() -> None:
    perm = RNG.permutation(12)

    def permute(w, p):
        w[...] = w[p]
        return w

    def add_shifted(w, p):
        w += w[p]
        return w.sum()

    def rows(w, p):
        w.reshape(3, 4)[:] = w.reshape(3, 4)[p[:3] % 3] * 2
        return w

    for f in (permute, add_shifted, rows):
        w = RNG.standard_normal(12)
        wn, wj = w.copy(), w.copy()
        assert_same(fusejit.jit(f)(wj, perm), f(wn, perm))
        assert_same(wj, wn)


def test_gather_kernel_reads_its_source_from_memory() -> None:
    E = RNG.standard_normal((100, 16)).astype(np.float32)
    tok = RNG.integers(0, 100, (8, 5))
    c = fusejit.jit(lambda E, t: E[t] * 2.0).lower_for(E, tok)
    assert len(c.program.kernels) == 1 and c.program.arena_bytes == 0  # no stored gather
    (k,) = c.program.kernels
    (g,) = [s for s in k.body if isinstance(s, Load) and s.index]
    assert g.index[0].extent == 100 and g.index[0].stride == 16
    check_plan(c.program)
    # a computed source is stored by an earlier kernel, never in the gather's own loop
    x, perm = E[:, 0].copy(), RNG.permutation(100)
    jf = fusejit.jit(lambda x, i: np.exp(x)[i] + x)
    c = jf.lower_for(x, perm)
    assert len(c.program.kernels) == 2
    # exp within its ULP bound, then cancelled by + x: an absolute margin from exp's size
    assert_same(jf(x, perm), np.exp(x)[perm] + x, atol=cancellation_atol(np.exp(x)))
    check_plan(c.program)
    text = str(fusejit.jit(lambda E, t: E[t] * 2.0).explain(E, tok))
    assert re.search(r"fuses 2 node\(s\): %\d+ gather", text) and "stored:" not in text


def test_gather_from_const_and_of_constant_indices() -> None:
    table = np.array([1.5, -2.0, 3.25, 0.5])
    run_both(lambda t, i: t[i] * 2, table, RNG.integers(-4, 4, (3, 3)))
    # A closure (or global) array is an implicit input of the compiled function (issue 19):
    # NumPy's own table[i] cannot take a traced i, but the table is traced too.
    for f in (lambda i: table[i], lambda i: np.take(table, i)):
        i = np.array([1, 2])
        assert_same(fusejit.jit(f)(i), f(i))
    holder = types.SimpleNamespace(table=table.copy())  # an attribute is followed too
    for f in (lambda i: holder.table[i], lambda i: np.take(holder.table, i)):
        i = np.array([1, 2])
        jf = fusejit.jit(f)
        assert_same(jf(i), f(i))
        holder.table[1] = 9.0
        assert_same(jf(i), f(i))
    run_both(lambda x: x[np.array([[0, 1], [1, 0]])] + x[np.int64(1)], np.arange(3.0))
    run_both(lambda x: np.take(np.arange(6.0), [5, 0, 2]) * x, np.ones(3))


def test_exported_library_gathers_and_raises_index_error(tmp_path) -> None:
    table = RNG.standard_normal((20, 6)).astype(np.float32)
    tokens = RNG.integers(-20, 20, (3, 4))
    res = fusejit.export(lambda t, i: t[i] * 2.0, table, tokens,
                         path=str(tmp_path / "libgather.so"))
    f = fusejit.load(res.library)
    assert_same(f(table, tokens), table[tokens] * 2.0)
    with pytest.raises(IndexError, match="out of bounds"):
        f(table, tokens + 40)
    assert "IndexError" in open(res.header).read()


def test_cuda_backend_gathers_with_fake_pycuda(monkeypatch: pytest.MonkeyPatch) -> None:
    import cuda_fake

    cuda_fake.install(monkeypatch)
    table = RNG.standard_normal((20, 6)).astype(np.float32)
    tokens = RNG.integers(-20, 20, (3, 4))
    g = lambda t, i: (t[i] * 2.0, np.take(t, i, axis=1, mode="wrap"), t[i].sum(axis=-1))
    f = fusejit.jit(g, backend="cuda")
    assert_same(f(table, tokens), g(table, tokens), rtol=1e-5)
    with pytest.raises(IndexError):
        f(table, tokens + 40)


def test_gathered_temp_never_takes_its_source_block() -> None:
    """exp(x) dies at the gather that reads it in permuted order: the gather's own temp must
    not be written over it in place (memplan refuses gathered loads)."""
    x, p = RNG.standard_normal(1 << 12), RNG.permutation(1 << 12)
    f = lambda x, p: (np.exp(x)[p] * 2).sum(keepdims=True) + np.exp(x)[p][::-1]
    jf = run_both(f, x, p)
    prog = jf.lower_for(x, p).program
    check_plan(prog)
    temps = [b for b in prog.buffers if b.kind == "temp"]
    assert len({b.offset for b in temps}) == len(temps)


def test_a_known_0d_boolean_is_a_new_axis() -> None:
    """x[True] is x[None], x[False] its empty selection; integers beside the boolean are
    advanced indices too: the new axis goes first when they are not adjacent to it."""
    x = np.arange(24.0).reshape(2, 3, 4)
    run_both(lambda x: (x[True], x[False], x[np.True_], x[..., True], x[0, True],
                        x[True, Ellipsis, 1], x[1, None, False, 2], x[slice(1, None), True, None],
                        x[0, 1, 2, True], x[True, 0, :, 1], x[0, :, False]), x)
    run_both(lambda x: x[np.array(False), ::-1] * 2, x)
