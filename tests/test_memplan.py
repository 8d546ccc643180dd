"""The memory planner: allocation heuristics, in-place block handover (and where it must not
happen), kernel reordering, the independent plan checker, and random chains of operations
whose every plan passes the checker and computes NumPy's results."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from conftest import assert_same, c_structure, examples
from hypothesis import given, settings
from hypothesis import strategies as st

from fusejit import jit
from fusejit.frontend.trace import trace
from fusejit.lowering.loop_ir import Access, Buffer, Check, Kernel, Load, Program, Store
from fusejit.lowering.lower import contiguous_strides, lower
from fusejit.lowering.memplan import (
    HEURISTICS,
    check_plan,
    largest_first_offsets,
    lifetimes,
    online_offsets,
    plan,
    rewrites_in_place,
    shared_pairs,
    summary,
)
from fusejit.lowering.pipeline import optimise
from fusejit.lowering.schedule import candidate_orders, dependencies, is_valid_order

F32 = np.dtype(np.float32)
RNG = np.random.default_rng(3)


def _lowered(fn, *args) -> Program:
    graph, _ = trace(fn, list(args), frozenset(), "f", None)
    return lower(optimise(graph), [contiguous_strides(np.shape(a)) for a in args])


def _rand(*shape):
    return (RNG.standard_normal(shape) * 0.5).astype(np.float32)


def _same_offsets(p: Program, a: int, b: int) -> bool:
    bufs = {x.index: x for x in p.buffers}
    return bufs[a].offset == bufs[b].offset


def _no_overlap(items, offs) -> None:
    for i, (lo, hi, sz) in enumerate(items):
        for j, (lo2, hi2, sz2) in enumerate(items[:i]):
            if lo <= hi2 and lo2 <= hi:
                assert offs[i] + sz <= offs[j] or offs[j] + sz2 <= offs[i], (i, j)


# --- allocation heuristics on blocks (first kernel, last kernel, bytes) ---

# Best fit puts D into the exact 64-byte hole, so E fits where A was; first fit puts D at 0
# and must grow the arena for E.
BEST_BEATS_FIRST = [(0, 1, 128), (0, 3, 64), (0, 1, 64), (2, 3, 64), (3, 3, 128)]
# In kernel order X and Y are placed first and Z cannot use X's hole; placed biggest first,
# Z goes to 0 and X (dead before Z is born) shares its bytes.
LARGEST_BEATS_ONLINE = [(0, 0, 64), (0, 2, 64), (1, 2, 128)]


def test_best_fit_beats_first_fit() -> None:
    for best, arena in ((True, 256), (False, 320)):
        offs, top = online_offsets(BEST_BEATS_FIRST, 4, best)
        _no_overlap(BEST_BEATS_FIRST, offs)
        assert top == arena


def test_online_grows_the_free_block_at_the_top() -> None:
    # A dies, B is born bigger: B starts where A started instead of past A.
    offs, top = online_offsets([(0, 0, 64), (1, 1, 128)], 2, best=True)
    assert offs == [0, 0] and top == 128


def test_largest_first_beats_kernel_order() -> None:
    _, online = online_offsets(LARGEST_BEATS_ONLINE, 3, best=True)
    offs, top = largest_first_offsets(LARGEST_BEATS_ONLINE, tightest=False)
    _no_overlap(LARGEST_BEATS_ONLINE, offs)
    assert (online, top) == (256, 192)


ITEM = st.tuples(st.integers(0, 5), st.integers(0, 3), st.sampled_from([64, 128, 192, 512]))


@given(st.lists(ITEM, max_size=12))
def test_every_heuristic_places_random_blocks_without_overlap(raw) -> None:
    items = [(lo, min(lo + d, 5), sz) for lo, d, sz in raw]
    peak = max((sum(sz for lo, hi, sz in items if lo <= k <= hi) for k in range(6)), default=0)
    for name, alloc in HEURISTICS.items():
        offs, top = alloc(items, 6)
        _no_overlap(items, offs)
        assert all(o % 64 == 0 and o + sz <= top for o, (_, _, sz) in zip(offs, items)), name
        assert top >= peak


@pytest.mark.parametrize("name", sorted(HEURISTICS))
def test_each_heuristic_alone_gives_a_checked_plan(name: str) -> None:
    p = _lowered(_mlp_step, *_mlp_args(64, 32, 32, 10))
    planned = plan(p, heuristics=(name,))
    check_plan(planned)
    assert summary(planned).lower_bound <= planned.arena_bytes
    assert plan(p).arena_bytes <= planned.arena_bytes


# --- hand-built programs: reordering and in-place handover ---

def _buf(index, kind, n, ref=-1, dtype=F32, shape=None):
    shape = shape or (n,)
    strides = contiguous_strides(shape)
    return Buffer(index, kind, np.dtype(dtype), shape, strides, n * np.dtype(dtype).itemsize,
                  ref)


def _ew(name, n, loads, stores, strides=(1,)):
    """An elementwise kernel over n elements: loads buffers, stores v0 into others."""
    body = [Load(f"v{i}", Access(b, 0, strides if i == 0 else (1,)), F32)
            for i, b in enumerate(loads)]
    body += [Store(Access(b, 0, (1,)), "v0") for b in stores]
    return Kernel(name, (n,), body)


def _two_branches() -> Program:
    """k0: t2 = f(in0); k1: t3 = f(in0); k2: out0 = f(t2); k3: out1 = f(t3)."""
    n = 1024
    bufs = [_buf(0, "input", n, 0), _buf(1, "output", n, 0), _buf(2, "temp", n),
            _buf(3, "temp", n), _buf(4, "output", n, 1)]
    kernels = [_ew("k0", n, [0], [2]), _ew("k1", n, [0], [3]), _ew("k2", n, [2], [1]),
               _ew("k3", n, [3], [4])]
    return Program("two", bufs, kernels, [], [])


def test_reordering_lowers_the_peak() -> None:
    p = _two_branches()
    kept = plan(p, reorder=False)
    assert kept.arena_bytes == 2 * 4096 and summary(kept).lower_bound == 2 * 4096
    best = plan(p)
    assert best.arena_bytes == 4096 and summary(best).lower_bound == 4096
    order = [int(k.name[1:]) for k in best.kernels]
    assert is_valid_order(dependencies(p), order) and order != [0, 1, 2, 3]


def test_dependencies_keep_reads_and_writes_in_order() -> None:
    p = _two_branches()
    assert dependencies(p) == [set(), set(), {0}, {1}]
    # A kernel writing an input (an update edge) waits for every reader of it, and kernels
    # with effects (checks, updates) keep their relative order.
    upd = Kernel("k4", (1024,), [Load("v0", Access(2, 0, (1,)), F32), Store(Access(0, 0, (1,)),
                                                                           "v0")])
    chk = Kernel("k5", (1024,), [Load("v0", Access(0, 0, (1,)), F32),
                                 Check(1, "divide", ("v0",), (F32,))])
    p2 = replace(p, kernels=p.kernels + [upd, chk])
    deps = dependencies(p2)
    assert deps[4] == {0, 1}  # reads t2 after k0 wrote it, overwrites in0 read by k0, k1
    assert deps[5] == {4}
    for order in candidate_orders(p2):
        assert is_valid_order(deps, order)
    assert not is_valid_order(deps, [0, 4, 1, 2, 3, 5])  # in0 overwritten before k1 reads it
    assert not is_valid_order(deps, [0, 1, 2, 3, 5, 4])  # the check overtakes the update


def _chain(strides=(1,), dtype_new=F32) -> Program:
    """k0: t2 = f(in0); k1: t3 = g(t2) through `strides`; k2: out = h(t3)."""
    n = 64
    shape = (8, 8)
    bufs = [_buf(0, "input", n, 0, shape=shape), _buf(1, "output", n, 0, shape=shape),
            _buf(2, "temp", n, shape=shape), _buf(3, "temp", n, dtype=dtype_new, shape=shape)]
    k1 = Kernel("k1", (8, 8), [Load("v0", Access(2, 0, strides), F32),
                               Store(Access(3, 0, (8, 1)), "v0")])
    kernels = [Kernel("k0", (8, 8), [Load("v0", Access(0, 0, (8, 1)), F32),
                                     Store(Access(2, 0, (8, 1)), "v0")]),
               k1,
               Kernel("k2", (8, 8), [Load("v0", Access(3, 0, (8, 1)), F32),
                                     Store(Access(1, 0, (8, 1)), "v0")])]
    return Program("chain", bufs, kernels, [], [])


def test_in_place_handover_on_the_same_index_map() -> None:
    p = plan(_chain((8, 1)))
    assert _same_offsets(p, 2, 3) and shared_pairs(p) == [(2, 3)]
    assert p.arena_bytes == 256 and summary(p).inplace == 1 and summary(p).lower_bound == 256


@pytest.mark.parametrize("strides", [(1, 8), (0, 1), (8, 0), (4, 1)],
                         ids=["transpose", "broadcast-rows", "broadcast-cols", "overlapping"])
def test_no_handover_when_index_maps_differ(strides) -> None:
    p = plan(_chain(strides))
    assert not _same_offsets(p, 2, 3) and shared_pairs(p) == []
    assert p.arena_bytes == 512


def test_no_handover_between_different_element_sizes() -> None:
    p = plan(_chain((8, 1), np.dtype(np.float64)))
    assert not _same_offsets(p, 2, 3)


def test_no_handover_when_a_load_follows_the_store() -> None:
    p = _chain((8, 1))
    k1 = p.kernels[1]
    k1.body.append(Load("v1", Access(2, 0, (8, 1)), F32))  # reads t2 after writing t3
    assert not rewrites_in_place(k1, 2, 3)
    assert not _same_offsets(plan(p), 2, 3)


def test_inputs_outputs_and_state_are_never_handed_over() -> None:
    # `w -= lr * g` on an argument: the updated input keeps its own memory; only temps move.
    def step(w, g):
        w -= 0.5 * np.exp(g @ g)
        return w.sum()

    p = plan(_lowered(step, _rand(16, 16), _rand(16, 16)))
    for d, n in shared_pairs(p):
        kinds = {b.index: b.kind for b in p.buffers}
        assert kinds[d] == kinds[n] == "temp"
    assert all(b.offset == 0 for b in p.buffers if b.kind != "temp")


def test_compiled_in_place_chain_matches_numpy() -> None:
    # The product is also reduced (no gemm epilogue): it is stored, and exp writes over it
    # once the reduction has run.
    fn = lambda x, w: (np.exp(x @ w) @ w, (x @ w).sum(axis=0))  # noqa: E731
    x, w = _rand(48, 32), _rand(32, 32)
    f = jit(fn)
    p = f.lower_for(x, w).program
    assert summary(p).inplace == 1 and p.arena_bytes == 48 * 32 * 4
    assert_same(f(x, w), fn(x, w), rtol=1e-4, atol=1e-5)
    # Read only elementwise, the product is computed by its gemm's epilogue straight into
    # the temp that exp(...) + 1 becomes: one block, no handover needed.
    ep = lambda x, w: (np.exp(x @ w) + 1) @ w  # noqa: E731
    e = jit(ep)
    p = e.lower_for(x, w).program
    # (CUDA: no epilogues, the product is a temp of its own)
    assert not c_structure() or (p.arena_bytes == 48 * 32 * 4
                                 and p.kernels[0].epilogue is not None)
    assert_same(e(x, w), ep(x, w), rtol=1e-4, atol=1e-5)
    tf = lambda x, w: np.exp((x @ w).T) @ x  # noqa: E731
    g = jit(tf)
    assert summary(g.lower_for(x, w).program).inplace == 0
    assert_same(g(x, w), tf(x, w), rtol=1e-4, atol=1e-5)


# --- the checker ---

def test_checker_catches_broken_plans() -> None:
    good = plan(_chain((8, 1)))
    check_plan(good)
    bufs = {b.index: b for b in good.buffers}
    shifted = replace(good, buffers=[replace(b, offset=64) if b.index == 3 else b
                                     for b in good.buffers], arena_bytes=512)
    with pytest.raises(AssertionError, match="overlap"):
        check_plan(shifted)  # a handover must start at the same offset
    transposed = _chain((1, 8))
    forced = replace(transposed, buffers=[replace(b, offset=0) for b in transposed.buffers],
                     arena_bytes=256)
    with pytest.raises(AssertionError, match="overlap"):
        check_plan(forced)  # the transpose reads elements already overwritten
    two = plan(_two_branches(), reorder=False)
    clash = replace(two, buffers=[replace(b, offset=0) for b in two.buffers])
    with pytest.raises(AssertionError, match="overlap"):
        check_plan(clash)
    with pytest.raises(AssertionError, match="overflows"):
        check_plan(replace(good, arena_bytes=bufs[2].nbytes - 1))


# --- the MLP training step at small sizes: reordering + handover, NumPy's results ---

def _mlp_step(x, y, w1, b1, w2, b2, lr):
    h = np.maximum(x @ w1 + b1, 0)
    z = h @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    loss = -np.sum(y * (z - np.log(e.sum(axis=1, keepdims=True)))) / x.shape[0]
    dz = (p - y) / x.shape[0]
    dw2 = h.T @ dz
    db2 = dz.sum(axis=0)
    dh = (dz @ w2.T) * (h > 0)
    dw1 = x.T @ dh
    db1 = dh.sum(axis=0)
    w1 -= lr * dw1
    b1 -= lr * db1
    w2 -= lr * dw2
    b2 -= lr * db2
    return loss


def _mlp_args(b, d, h, c):
    y = np.eye(c, dtype=np.float32)[RNG.integers(0, c, b)]
    return (_rand(b, d), y, _rand(d, h) * 0.1, _rand(h), _rand(h, c) * 0.1, _rand(c), 0.1)


def test_mlp_step_plan_is_tight_and_correct() -> None:
    args = _mlp_args(256, 128, 128, 10)
    f = jit(_mlp_step)
    p = f.lower_for(*args).program
    s = summary(p)
    kept = plan(_lowered(_mlp_step, *args), reorder=False)
    assert s.inplace >= 1
    assert s.arena_bytes <= 1.1 * s.lower_bound
    assert s.arena_bytes < kept.arena_bytes  # reordering found a smaller arena
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    for _ in range(3):
        assert_same(f(*mine), _mlp_step(*theirs), rtol=1e-4)
    for a, b in zip(mine, theirs):
        if isinstance(a, np.ndarray):
            assert_same(a, b, rtol=1e-4, atol=1e-6)


# --- random chains: every plan passes the checker and computes NumPy's results ---

UNARY = {"exp": lambda a: np.exp(a * 0.1), "tanh": np.tanh, "relu": lambda a: np.maximum(a, 0),
         "neg": lambda a: -a, "T": lambda a: a.T, "sq": lambda a: a * a}


def _apply(step, vals, w):
    kind, i, j, op = step
    a, b = vals[i % len(vals)], vals[j % len(vals)]
    if kind == "unary":
        return UNARY[op](a)
    if kind == "matmul":
        return (a @ w) * 0.2
    if kind == "add":
        return a + b.T if op == "T" else a + b
    return a - a.max(axis=1, keepdims=True)


STEP = st.tuples(st.sampled_from(["unary", "matmul", "add", "rowmax"]),
                 st.integers(0, 7), st.integers(0, 7), st.sampled_from(sorted(UNARY)))


@settings(max_examples=examples(25))
@given(st.lists(STEP, min_size=2, max_size=7), st.integers(0, 3))
def test_random_chains_plan_and_run(steps, nout) -> None:
    def fn(x, w):
        vals = [x]
        for s in steps:
            vals.append(_apply(s, vals, w))
        return tuple(vals[-1 - k] for k in range(min(nout + 1, len(vals) - 1)))

    x, w = _rand(24, 24), _rand(24, 24)
    p = _lowered(fn, x, w)
    for reorder in (False, True):
        planned = plan(p, reorder=reorder)
        check_plan(planned)
        s = summary(planned)
        assert s.lower_bound <= s.arena_bytes
        assert set(lifetimes(planned)) == {b.index for b in p.buffers if b.kind == "temp"
                                           and b.index in lifetimes(p)}
    f = jit(fn)
    check_plan(f.lower_for(x, w).program)
    with np.errstate(all="ignore"):
        want = fn(x, w)
    assert_same(f(x, w), want, rtol=1e-4, atol=1e-5)
