"""Gemm epilogues: elementwise work on a BLAS product done by the gemm kernel, block by block
of rows (lowering/epilogue.py, lowering/matmul.py, codegen/cgemm_epilogue.py).

NumPy's results (values to float tolerance, dtype, shape) for several epilogues, both
product placements (per-thread scratch, the output's own rows), odd sizes where the rows
divide neither the block size nor the thread count, batches; the in-place handover of a
value the epilogue reads to the value it writes, proved by the plan checker; the cases that
keep today's separate kernels, and what explain says about both. Never asserts on time."""

from __future__ import annotations

import resource
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_same, assert_unmodified, c_structure, snapshot

import fusejit
from fusejit.frontend.trace import trace
from fusejit.lowering import matmul as lmatmul
from fusejit.lowering.loop_ir import SCRATCH, GemmKernel, Kernel, Program, Store
from fusejit.lowering.lower import contiguous_strides, lower
from fusejit.lowering.memplan import check_plan, plan, rewrites_in_place, shared_pairs, summary
from fusejit.lowering.pipeline import optimise

RNG = np.random.default_rng(11)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def tol(dtype, k):
    eps = float(np.finfo(dtype).eps)
    return {"rtol": 8 * eps * max(k, 1) ** 0.5, "atol": 8 * eps * max(k, 1)}


def check(f, *args, k=8):
    """Compile `f`, compare with NumPy, check the plan; return the Program."""
    snap = snapshot(args)
    exp = f(*args)
    jf = fusejit.jit(f)
    got = jf(*args)
    dt = np.asarray(exp[0] if isinstance(exp, tuple) else exp).dtype
    assert_same(got, exp, **(tol(dt, k) if dt.kind == "f" else {}))
    assert_unmodified(snap)
    program = jf.lower_for(*args).program
    check_plan(program)
    return program


def epilogues(program: Program) -> list[GemmKernel]:
    return [k for k in program.kernels if isinstance(k, GemmKernel) and k.epilogue is not None]


def lowered(fn, *args, blas: bool = True) -> Program:
    graph, _ = trace(fn, list(args))
    return plan(lower(optimise(graph), [contiguous_strides(np.shape(a)) for a in args], blas))


# --- correctness ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", [(37, 19, 23), (2, 5, 7), (6, 3, 2), (101, 64, 50)])
def test_bias_relu_is_one_kernel(dtype, m, k, n):
    def dense(x, w, b):
        return np.maximum(x @ w + b, 0)

    p = check(dense, rand(m, k, dtype=dtype), rand(k, n, dtype=dtype), rand(n, dtype=dtype),
              k=k)
    if not c_structure():
        return
    assert len(p.kernels) == 1
    (g,) = epilogues(p)
    assert g.blas and not g.scratch  # the output's own rows hold the product


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scratch_bytes", [64, 4096, 1 << 18])
@pytest.mark.parametrize("mode", ["rows", "scratch"])
def test_odd_blocks_and_thread_splits(monkeypatch, dtype, scratch_bytes, mode):
    """Blocks of 1, a few and many rows; 203 rows split over the threads divide neither.
    A float value of the product's dtype takes the product in its own rows; bool values
    only: the product goes to scratch."""
    monkeypatch.setattr(lmatmul, "SCRATCH_BYTES", scratch_bytes)
    x, w, b = rand(203, 64, dtype=dtype), rand(64, 50, dtype=dtype), rand(50, dtype=dtype)
    col = rand(203, 1, dtype=dtype)

    def f(x, w, b, col):
        t = np.tanh(x @ w + b) * col - 0.5  # bias row, column vector, scalar
        return t if mode == "rows" else (t > 0.1, (x @ w) > 0.25)

    p = check(f, x, w, b, col, k=64)
    if not c_structure():
        return
    (g,) = epilogues(p)
    assert g.scratch == (mode == "scratch")
    assert g.rows == max(1, min(203, scratch_bytes // (50 * np.dtype(dtype).itemsize)))
    assert 203 * 64 * 50 >= 1 << 18  # split over the program's threads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_and_transposed_operands(dtype):
    x, w = rand(40, 16, dtype=dtype), rand(16, 24, dtype=dtype)
    full, trans, row = rand(40, 24, dtype=dtype), rand(24, 40, dtype=dtype), rand(1, 24,
                                                                                  dtype=dtype)

    def f(x, w, full, trans, row):
        return (x @ w) * full + trans.T - row + 2.0

    p = check(f, x, w, full, trans, row, k=16)
    assert not c_structure() or (len(p.kernels) == 1 and epilogues(p))


def test_batched_products_with_epilogue():
    a, b = rand(3, 37, 16), rand(16, 20)
    bias = rand(3, 1, 20)

    def f(a, b, bias):
        return np.exp(a @ b * 0.1) + bias

    p = check(f, a, b, bias, k=16)
    if c_structure():
        (g,) = epilogues(p)
        assert g.batch == (3,)
    c = rand(2, 5, 16)
    d = rand(2, 16, 9)
    check(lambda c, d: np.abs(c @ d) + 1, c, d, k=16)


def test_several_values_from_one_epilogue_and_mixed_dtypes():
    x, w = rand(33, 12), rand(12, 17)

    def f(x, w):
        y = x @ w
        return y * 2, (y + 1).astype(np.float64), y < 0

    p = check(f, x, w, k=12)
    if not c_structure():
        return
    values = [s for s in epilogues(p)[0].epilogue if isinstance(s, Store)]
    assert len(p.kernels) == 1 and len(values) == 3


def test_runtime_error_check_in_an_epilogue():
    x, w = np.abs(rand(8, 4)) + 1, np.abs(rand(4, 6)) + 1

    def f(x, w, e):
        return ((x @ w).astype(np.int32)) ** e

    p = check(f, x, w, 2)
    if c_structure():
        assert epilogues(p) and epilogues(p)[0].scratch  # int32 values: scratch
    with pytest.raises(ValueError, match="negative integer powers"):
        fusejit.jit(f)(x, w, -1)


# --- in-place handover --------------------------------------------------------------------------


def _backprop(x, w1, w2, y):
    h = np.maximum(x @ w1, 0)
    dz = (h @ w2) - y
    dw2 = h.T @ dz
    dh = (dz @ w2.T) * (h > 0)
    return dw2, x.T @ dh


def test_mask_multiply_takes_h_block_in_place():
    args = (rand(96, 40), rand(40, 64), rand(64, 5), rand(96, 5))
    # x.T @ dh ends a chain of products (k 40, 64, 5, then 96): a BLAS that sums in another
    # order than NumPy's (fusejit's own sgemm, runtime/blas_own.py) differs by the chain's
    # rounding, not one product's
    p = check(_backprop, *args, k=96 * 64)
    if not c_structure():
        return
    (late,) = [g for g in epilogues(p) if g.product_node >= 0 and g.k == 5]
    assert late.scratch  # h is read by the epilogue and could take its value's block
    pairs = shared_pairs(p)
    assert len(pairs) == 1
    dying, new = pairs[0]
    at = next(i for i, k in enumerate(p.kernels) if k is late)
    assert rewrites_in_place(p.kernels[at], dying, new)
    bufs = {b.index: b for b in p.buffers}
    assert bufs[dying].offset == bufs[new].offset and bufs[dying].nbytes == 96 * 64 * 4
    s = summary(p)
    assert s.inplace == 1 and s.arena_bytes == s.lower_bound
    # no bool mask is stored: the temps are h/dh, dz, dw2 (and nothing 96 x 64 else)
    assert sum(b.nbytes == 96 * 64 * 4 for b in p.buffers if b.kind == "temp") == 2
    assert not any(b.dtype == np.bool_ for b in p.buffers if b.kind == "temp")


def test_checker_refuses_handover_into_rows_the_gemm_writes():
    """If the late gemm wrote its product into dh's rows (= h's block) before the epilogue
    read h, h would be overwritten first: the checker must refuse that plan."""
    p = lowered(_backprop, rand(96, 40), rand(40, 64), rand(64, 5), rand(96, 5))
    check_plan(p)
    (dying, new), = shared_pairs(p)
    at = next(i for i, k in enumerate(p.kernels) if isinstance(k, GemmKernel) and k.scratch)
    kern = p.kernels[at]
    store = next(s for s in kern.epilogue if isinstance(s, Store) and s.access.buf == new)
    direct = replace(kern, c=store.access)
    assert not rewrites_in_place(direct, dying, new)
    broken = replace(p, kernels=[direct if i == at else k for i, k in enumerate(p.kernels)])
    with pytest.raises(AssertionError, match="overlap"):
        check_plan(broken)
    # nor when the gemm reads the dying buffer as an operand
    assert not rewrites_in_place(replace(kern, a=replace(kern.a, buf=dying)), dying, new)


def test_mlp_train_step_plan_arena_drops():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from workloads_train import _train_inputs, mlp_train_step

    args = _train_inputs(0, False)
    p = lowered(mlp_train_step, *args)
    check_plan(p)
    s = summary(p)
    h = 2048 * 1024 * 4
    # was 10 706 944 B (h, a bool mask and the product of dz @ w2.T): now h/dh and the
    # small temps (z, dz, two row statistics, dw2)
    assert s.arena_bytes == s.lower_bound
    assert h < s.arena_bytes <= h + 200_000
    assert s.inplace == 1
    kinds = [(k.epilogue is not None) for k in p.kernels if isinstance(k, GemmKernel)]
    assert sum(kinds) == 3  # h = relu(x @ w1 + b1), z = h @ w2 + b2, dh = (dz @ w2.T) * mask
    assert all(b.dtype != np.bool_ for b in p.buffers if b.kind == "temp")


def test_mlp_train_step_matches_numpy_quick():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from workloads_train import _train_inputs, mlp_train_step

    inputs = _train_inputs(5, True)
    mine, theirs = [a.copy() for a in inputs], [a.copy() for a in inputs]
    jf = fusejit.jit(mlp_train_step)
    for _ in range(3):
        assert_same(jf(*mine), mlp_train_step(*theirs), rtol=1e-4)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


# --- refusals: today's kernels, and why -------------------------------------------------------


@pytest.mark.parametrize("fn,why", [
    (lambda x, w: (x @ w).T + 1, "another index"),
    (lambda x, w: (x @ w).sum(axis=1) + 1, "reduces the product"),
    (lambda x, w: (x @ w, np.maximum(x @ w, 0)), "returned"),
    (lambda x, w: (x @ w)[::-1] * 2, "another index"),
    (lambda x, w: (x @ w) @ w.T, "gemm operand"),
    (lambda x, w: (x @ w)[:, :, None] * np.ones(3, np.float32), "another index"),
])
def test_fallbacks_keep_separate_kernels(fn, why):
    x, w = rand(12, 12), rand(12, 12)
    p = check(fn, x, w, k=12)
    assert not epilogues(p)
    text = str(fusejit.jit(fn).explain(x, w))
    assert "has no epilogue" in text and why in text


def test_integer_products_and_no_blas_keep_separate_kernels():
    a, b = RNG.integers(-5, 5, (6, 7)).astype(np.int32), RNG.integers(-5, 5, (7, 4)).astype(
        np.int32)
    p = check(lambda a, b: a @ b + 1, a, b)
    assert not epilogues(p) and len(p.kernels) == 2
    assert "generated loops, which take no epilogue" in str(
        fusejit.jit(lambda a, b: a @ b + 1).explain(a, b))

    def dense(x, w, b):
        return np.maximum(x @ w + b, 0)

    args = (rand(9, 5), rand(5, 4), rand(4))
    loops = lowered(dense, *args, blas=False)  # the CUDA backend and exports lower this way
    assert not epilogues(loops)
    assert [type(k) for k in loops.kernels] == [GemmKernel, Kernel]
    assert not loops.kernels[0].blas


def test_in_place_gemm_updates_still_take_the_update():
    def step(w, x, dh):
        w -= 0.1 * (x.T @ dh)
        return w.sum()

    w, x, dh = rand(16, 8), rand(32, 16), rand(32, 8)
    mine, theirs = w.copy(), w.copy()
    jf = fusejit.jit(step)
    np.testing.assert_allclose(jf(mine, x, dh), step(theirs, x, dh), rtol=1e-4)
    np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)
    (g,) = [k for k in jf.lower_for(w, x, dh).program.kernels if isinstance(k, GemmKernel)]
    assert g.beta == 1.0 and g.epilogue is None


def test_epilogue_writes_an_argument_in_place():
    def f(w, x, v):
        np.copyto(w, np.maximum(x @ v, 0) * 0.5)
        return w.sum()

    w, x, v = rand(16, 8), rand(16, 4), rand(4, 8)
    mine, theirs = w.copy(), w.copy()
    jf = fusejit.jit(f)
    np.testing.assert_allclose(jf(mine, x, v), f(theirs, x, v), rtol=1e-5)
    # the product's rounding, bounded by its terms (a GPU's sum order differs from NumPy's;
    # one element of the H100's cuBLAS result, 0.0024 from terms near 1, was 4.7e-6 apart)
    bound = 4 * np.finfo(np.float32).eps * (np.abs(x) @ np.abs(v)) * 0.5
    assert np.all(np.abs(mine - theirs) <= bound), np.max(np.abs(mine - theirs) - bound)
    # w is an operand: the epilogue must not write it while the gemm reads it
    sq, mine, theirs = rand(8, 8), None, None
    mine, theirs = sq.copy(), sq.copy()

    def g(w, x):
        np.copyto(w, np.maximum(w @ x, 0))
        return w.sum()

    x8 = rand(8, 8)
    np.testing.assert_allclose(fusejit.jit(g)(mine, x8), g(theirs, x8), rtol=1e-5)
    np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


# --- explain, costs, scratch ------------------------------------------------------------------


@pytest.mark.c_only
def test_explain_names_the_epilogue():
    def dense(x, w, b):
        return np.maximum(x @ w + b, 0)

    args = (rand(9, 5), rand(5, 4), rand(4))
    text = fusejit.jit(dense).explain(*args).kernels_report()
    assert "BLAS gemm + elementwise epilogue" in text
    assert "epilogue: %" in text and "add" in text and "maximum" in text
    assert "the product has no buffer of its own" in text
    text = fusejit.jit(_backprop).explain(rand(16, 8), rand(8, 12), rand(12, 3),
                                          rand(16, 3)).kernels_report()
    assert "per-thread scratch" in text and "multiply" in text


def test_profile_costs_count_the_epilogue():
    from fusejit.runtime.costs import kernel_cost

    p = lowered(lambda x, w, b: np.maximum(x @ w + b, 0), rand(10, 6), rand(6, 5), rand(5))
    (g,) = p.kernels
    c = kernel_cost(g, p)
    assert c.bytes_loaded == (10 * 6 + 6 * 5 + 5) * 4 and c.bytes_stored == 10 * 5 * 4
    assert c.flops > 2 * 10 * 6 * 5


@pytest.mark.c_only
def test_scratch_blocks_are_reused_across_calls():
    """Scratch comes from the library's pool: steady calls fault no fresh pages (a malloc and
    free per call faulted the 256 KiB block in again on every call)."""
    def f(x, w):
        return ((x @ w) > 0).sum()  # the bool value is stored by the epilogue: scratch

    x, w = rand(512, 64), rand(64, 256)
    jf = fusejit.jit(f)
    (g,) = epilogues(jf.lower_for(x, w).program)
    assert g.scratch and g.c.buf == SCRATCH
    for _ in range(5):
        jf(x, w)
    counts = []  # per window of 10 calls; the fewest, since the whole process's faults are
    for _ in range(3):  # counted (a worker thread's first block can land in any one window)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(10):
            jf(x, w)
        counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    faults = min(counts)
    assert faults < 64, counts  # one 256 KiB block is 64 pages
    assert jf(x, w) == f(x, w)


def test_a_value_of_two_products_has_one_epilogue():
    x, w1, w2 = rand(20, 8), rand(8, 6), rand(8, 6)

    def f(x, w1, w2):
        return np.maximum(x @ w1 + x @ w2, 0)

    p = check(f, x, w1, w2)
    if not c_structure():
        return
    assert len(epilogues(p)) == 1 and len(p.kernels) == 2
    assert "is computed by the epilogue of matmul" in str(fusejit.jit(f).explain(x, w1, w2))
