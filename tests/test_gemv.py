"""Matrix-vector products: BLAS gemv calls (codegen/cgemv.py) or fused reductions
(lowering/matvec.py), compared with NumPy for every layout, batch, epilogue and empty shape."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, assert_unmodified, c_structure, on_cuda, snapshot

import fusejit
from fusejit.lowering.loop_ir import GemmKernel, ReduceKernel
from fusejit.lowering.matvec import GEMV_BLOCK, is_gemv
from fusejit.lowering.memplan import check_plan

RNG = np.random.default_rng(11)


def data(shape, dtype="float32"):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return RNG.integers(-50, 50, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def check(f, *args, k=8):
    """jit(f) returns what f returns (float tolerance growing with the sum length k)."""
    snap = snapshot(args)
    exp = f(*args)
    got = fusejit.jit(f)(*args)
    dt = np.asarray(exp[-1] if isinstance(exp, tuple) else exp).dtype
    tol = {}
    if dt.kind == "f":
        eps = float(np.finfo(dt).eps)
        tol = {"rtol": 8 * eps * max(k, 1) ** 0.5, "atol": 8 * eps * max(k, 1)}
    assert_same(got, exp, **tol)
    assert_unmodified(snap)
    return got


def kernels(f, *args):
    prog = fusejit.jit(f).lower_for(*args).program
    check_plan(prog)
    return prog.kernels


def gemvs(f, *args):
    return [k for k in kernels(f, *args) if isinstance(k, GemmKernel) and is_gemv(k)]


def one_gemv(f, *args):
    """C: the product is one BLAS gemv. CUDA (lowered without BLAS): a fused reduction or
    generated matmul loops (batched)."""
    ks = kernels(f, *args)
    if on_cuda():
        return (not any(isinstance(k, GemmKernel) and k.blas for k in ks)
                and any(isinstance(k, (GemmKernel, ReduceKernel)) for k in ks))
    return len([k for k in ks if isinstance(k, GemmKernel) and is_gemv(k)]) == 1


MATVECS = [((37, 19), (19,)), ((19,), (19, 23)), ((6, 3), (3, 1)), ((1, 5), (5, 7)),
           ((1, 4), (4, 1)), ((4,), (4,)), ((300, 200), (200,)), ((200,), (200, 300)),
           ((1, 1), (1,)), ((5, 1), (1, 1))]


@pytest.mark.parametrize("sa, sb", MATVECS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matvec_calls_gemv(sa, sb, dtype):
    a, b = data(sa, dtype), data(sb, dtype)
    f = lambda x, y: x @ y  # noqa: E731
    check(f, a, b, k=sa[-1])
    assert one_gemv(f, a, b)
    if not c_structure():
        return
    assert not any(isinstance(k, ReduceKernel) for k in kernels(f, a, b))
    source = fusejit.jit(f).lower_for(a, b).source
    assert ("fj_sgemv(" if dtype == "float32" else "fj_dgemv(") in source
    assert "fj_sgemm(" not in source and "fj_dgemm(" not in source


@pytest.mark.parametrize("sa, sb", [((0, 3), (3,)), ((4, 0), (0,)), ((0,), (0,)),
                                    ((3,), (3, 0)), ((0,), (0, 5)), ((2, 0, 3), (3,))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_empty_matvecs(sa, sb, dtype):
    """k = 0 gives zeros (no BLAS call), m = 0 or n = 0 an empty result."""
    got = check(lambda x, y: x @ y, data(sa, dtype), data(sb, dtype), k=1)
    if 0 in sa[-1:]:
        assert not np.any(got)


def test_transposed_and_strided_operands():
    x, v = data((64, 48)), data((64,))
    check(lambda x, v: x.T @ v, x, v, k=64)  # unit stride along the rows: trans 'N'
    check(lambda x, v: v @ x, x, v, k=64)
    check(lambda x, v: v[:48] @ x.T, x, v, k=48)
    check(lambda x, v: x[::2] @ v[:48], x, v, k=48)  # a leading dimension of 96
    check(lambda x, v: x[:, 1:33] @ v[::2], x, v, k=32)  # x read in place, incx = 2
    check(lambda x, v: v[::4] @ x[:16], x, v, k=16)
    check(lambda x, v: x @ v[::-1][:48], x, v, k=48)  # a reversed vector is packed
    check(lambda x, v: x, x, v)
    f = np.asfortranarray(x)
    check(lambda x, v: x @ v[:48], f, v, k=48)
    check(lambda x, v: v @ x, f, v, k=64)
    for g in (lambda x, v: x.T @ v, lambda x, v: x[::2] @ v[:48],
              lambda x, v: x[:, 1:33] @ v[::2]):
        assert one_gemv(g, x, v)


def test_layouts_gemv_cannot_read_become_reductions():
    """A matrix BLAS would have to copy first (negative or two non-unit strides) is read in
    place by a fused reduction instead."""
    x, v = data((64, 48)), data((48,))
    for f in (lambda x, v: x[::-1] @ v, lambda x, v: x[::2, ::2] @ v[:24],
              lambda x, v: v[:32] @ x[::2, ::-1][:32]):
        check(f, x, v, k=48)
        ks = kernels(f, x, v)
        assert not any(isinstance(k, GemmKernel) for k in ks)
        assert any(isinstance(k, ReduceKernel) for k in ks)


def test_elementwise_matrix_fuses_into_a_reduction():
    """`np.exp(x) @ v`: the reduction computes exp on the fly; gemv would store it first."""
    x, v = data((50, 40)), data((40,))
    for f in (lambda x, v: np.exp(x * 0.1) @ v, lambda x, v: v[:20] @ (x[:20] * 2),
              lambda x, v: (v - 1) @ (v + 1)):
        check(f, x, v, k=40)
        assert not any(isinstance(k, GemmKernel) for k in kernels(f, x, v))
    # A computed vector is stored (a small kernel) and the gemv still reads x in place.
    g = lambda x, v: x @ (v * 2)  # noqa: E731
    check(g, x, v, k=40)
    assert one_gemv(g, x, v)
    # A computed matrix that is stored anyway (a result) is read by gemv.
    h = lambda x, v: (np.exp(x * 0.1), np.exp(x * 0.1) @ v)  # noqa: E731
    check(h, x, v, k=40)
    assert one_gemv(h, x, v)


@pytest.mark.parametrize("sa, sb", [((3, 7, 5), (3, 5, 1)), ((3, 7, 5), (5,)),
                                    ((7, 5), (4, 5, 1)), ((2, 3, 1, 5), (3, 5, 6)),
                                    ((4, 1, 5), (5, 6)), ((2, 1, 1, 5), (3, 5, 1))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batched_matvecs(sa, sb, dtype):
    a, b = data(sa, dtype), data(sb, dtype)
    check(lambda x, y: x @ y, a, b, k=5)
    assert one_gemv(lambda x, y: x @ y, a, b)


def test_transposed_batches():
    a, v = data((4, 6, 9)), data((4, 6))
    check(lambda a, v: np.einsum("bkm,bk->bm", a, v), a, v, k=6)
    check(lambda a, v: (a.transpose(0, 2, 1) @ v[:, :, None])[..., 0], a, v, k=6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_matvecs_split_over_threads(dtype):
    """Above GEMM_PAR_MIN the gemv rows are split over the threads; the split crosses batch
    elements (3 x 1001 rows) and, for `v @ x`, runs over x's columns."""
    from fusejit.codegen.cblas import GEMM_PAR_MIN

    a, v = data((3, 1001, 128), dtype), data((3, 128, 1), dtype)
    assert a.size >= GEMM_PAR_MIN
    check(lambda a, v: a @ v, a, v, k=128)
    x, u = data((700, 1500), dtype), data((700,), dtype)
    check(lambda x, u: u @ x, x, u, k=700)
    check(lambda x, u: x.T @ u, x, u, k=700)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_epilogues_after_a_gemv(dtype):
    """Bias and activation on a 2-D product run in the gemv's epilogue, block by block
    (blocks of GEMV_BLOCK elements, several per thread here)."""
    m = 2 * GEMV_BLOCK + 123
    x, w, b = data((m, 24), dtype), data((24, 1), dtype), data((m, 1), dtype)
    f = lambda x, w, b: np.maximum(x @ w + b, 0)  # noqa: E731
    check(f, x, w, b, k=24)
    c_struct = c_structure()
    if c_struct:
        (k,) = gemvs(f, x, w, b)
        assert k.epilogue is not None and 0 < k.rows <= GEMV_BLOCK
        assert len(kernels(f, x, w, b)) == 1
    # One row: v @ W + c, tanh, blocks over the columns; two results.
    v, W, c = data((1, 40), dtype), data((40, m), dtype), data((m,), dtype)
    g = lambda v, W, c: (np.tanh(v @ W + c), (v @ W) * 2)  # noqa: E731
    check(g, v, W, c, k=40)
    if c_struct:
        (k,) = gemvs(g, v, W, c)
        assert k.epilogue is not None
    # Batched, with epilogue values of another dtype only: the product goes to scratch.
    for shape in ((3, 50, 7), (2, m, 7)):
        a, u = data(shape, dtype), data((shape[0], 7, 1), dtype)
        h = lambda a, u: ((a @ u) > 0, (a @ u) < -1)  # noqa: E731
        check(h, a, u, k=7)
        if c_struct:
            (k,) = gemvs(h, a, u)
            assert k.epilogue is not None and k.scratch


def test_1d_vector_products_and_their_elementwise_users():
    x, v = data((300, 40)), data((40,))
    check(lambda x, v: np.maximum(x @ v + 1, 0), x, v, k=40)
    check(lambda x, v: 1 / (1 + np.exp(-(x @ v))), x, v, k=40)
    got = check(lambda x, v: v @ v, x, v, k=40)
    assert isinstance(got, np.float32)
    check(lambda x, v: np.dot(x, v).sum(), x, v, k=40 * 300)


def test_gemv_updates_an_argument_in_place():
    """`w -= lr * (x @ v)`: one gemv with alpha = -lr and beta = 1 writing w."""
    x, v = data((64, 32)), data((32, 1))

    def step(w, x, v, lr):
        w -= lr * (x @ v)
        return w

    w = data((64, 1))
    exp = step(w.copy(), x, v, np.float32(0.5))
    got = w.copy()
    fusejit.jit(step)(got, x, v, np.float32(0.5))
    np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-5)
    if c_structure():
        (k,) = gemvs(step, w, x, v, np.float32(0.5))
        assert k.beta == 1.0


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16"])
def test_other_dtypes_use_generated_loops(dtype):
    a, v = data((9, 5), dtype), data((5,), dtype)
    check(lambda a, v: a @ v, a, v, k=5)
    check(lambda a, v: v[:5] @ a[:5], a, v, k=5)
    (k,) = [k for k in kernels(lambda a, v: a @ v, a, v) if isinstance(k, GemmKernel)]
    assert not k.blas


def test_without_blas_matvecs_are_reductions():
    """Lowered without BLAS (AOT export, CUDA), a float matvec is a fused reduction."""
    from fusejit.frontend.trace import trace
    from fusejit.lowering.lower import contiguous_strides, lower
    from fusejit.lowering.pipeline import optimise

    x, v = data((37, 19)), data((19,))
    graph, _ = trace(lambda x, v: x @ v, [x, v])
    strides = [contiguous_strides(a.shape) for a in (x, v)]
    g = optimise(graph)
    assert "matmul" in [n.op for n in g.nodes()]
    without = lower(g, strides, blas=False).kernels
    assert not any(isinstance(k, GemmKernel) for k in without)
    assert any(isinstance(k, ReduceKernel) for k in without)
    assert any(isinstance(k, GemmKernel) and is_gemv(k) for k in lower(g, strides).kernels)


def test_explain_names_the_gemv():
    x, w = data((100, 8)), data((8, 1))
    f = lambda x, w: np.tanh(x @ w)  # noqa: E731
    text = str(fusejit.jit(f).explain(x, w))
    assert "BLAS gemv + elementwise epilogue" in text
    assert "after their gemv call" in text
