"""GEMM into in-place updates (issue 4): `w -= lr * (a @ b)` and its relatives compile to one
BLAS gemm with alpha = -lr and beta = 1 writing `w`'s memory; values match NumPy to float
tolerance (gemm rounds `alpha * sum + w` its own way), with NumPy's errors, and fall back to
a product temporary where writing `w` early would be wrong. Also: the narrow mask stored for
`(dz @ w2.T) * (h > 0)`, matmul operands read in place through a merging reshape, and the
mlp training step end to end."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from conftest import assert_same, on_cuda

import fusejit
from fusejit.frontend.ir import users
from fusejit.lowering import fusion
from fusejit.lowering.gemm_update import find_gemm_updates
from fusejit.lowering.loop_ir import GemmKernel, Kernel, format_program
from fusejit.lowering.memplan import check_plan
from fusejit.lowering.pipeline import optimise
from fusejit.lowering.schedule import dependencies

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

RNG = np.random.default_rng(7)


def _arr(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def _tol(w, a, b, lr=1.0):
    """Absolute tolerance for `w ± lr * (a @ b)`: a few ulps of the terms' magnitudes."""
    dt = np.result_type(w.dtype, a.dtype)
    mag = np.abs(w).max() + abs(float(lr)) * (np.abs(a) @ np.abs(b)).max()
    return float(16 * np.finfo(dt).eps * mag)


def run_both(f, *args, atol=0.0):
    """NumPy's f and the compiled f on copies: same result and arguments; the plan checks."""
    np_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    fj_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    exp = f(*np_args)
    jf = fusejit.jit(f)
    got = jf(*fj_args)
    if exp is not None or got is not None:
        assert_same(got, exp, atol=atol)
    for g, e in zip(fj_args, np_args):
        if isinstance(e, np.ndarray):
            assert_same(g, e, atol=atol)
    program = jf.lower_for(*args).program
    check_plan(program)
    return program


def gemms(program):
    return [k for k in program.kernels if isinstance(k, GemmKernel)]


def sgd(w, a, b, lr):
    w -= lr * (a @ b)


def sgd_t(w, a, b, lr):
    w -= lr * (a.T @ b)


def sgd_right(w, a, b, lr):
    w -= (a @ b) * lr


def sgd_out(w, a, b, lr):
    np.subtract(w, lr * (a.T @ b.T), out=w)


def acc(w, a, b, lr):
    w += a @ b


def acc_neg(w, a, b, lr):
    w -= a @ b


def neg_prod(w, a, b, lr):
    w += -(a @ b) * lr


FORMS = [sgd, sgd_t, sgd_right, sgd_out, acc, acc_neg, neg_prod]


def _operands(f, dtype, m=12, n=7, k=9):
    w = _arr((m, n), dtype)
    if f is sgd_t:
        return w, _arr((k, m), dtype), _arr((k, n), dtype)
    if f is sgd_out:
        return w, _arr((k, m), dtype), _arr((n, k), dtype)
    return w, _arr((m, k), dtype), _arr((k, n), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_forms_match_numpy_with_one_gemm(f, dtype):
    w, a, b = _operands(f, dtype)
    lr = 0.05
    a_op = a.T if f in (sgd_t, sgd_out) else a
    b_op = b.T if f is sgd_out else b
    program = run_both(f, w, a, b, lr, atol=_tol(w, a_op, b_op, lr))
    (gemm,) = gemms(program)
    assert gemm.beta == 1.0 and gemm.blas != on_cuda()  # CUDA: the generated tiled kernel
    assert gemm.c.buf == next(b.index for b in program.buffers if b.kind == "input" and b.ref == 0)
    assert len(program.kernels) == 1, format_program(program)  # no update kernel
    assert program.arena_bytes == 0  # no product temporary


@pytest.mark.parametrize("lr", [0.1, np.float32(0.1), np.float64(0.1), np.array(0.1, np.float32),
                                np.array(0.25)], ids=["py", "f32", "f64", "arr32", "arr64"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lr_kinds_read_at_run_time(lr, dtype):
    w, a, b = _operands(sgd, dtype)
    program = run_both(sgd, w, a, b, lr, atol=_tol(w, a, b, lr))
    (gemm,) = gemms(program)
    assert gemm.beta == 1.0 and gemm.alpha_from is not None and gemm.alpha == -1.0
    # the same compiled code, another learning rate: alpha is not baked in
    jf = fusejit.jit(sgd)
    for value in (0.5, -2.0):
        lr2 = type(lr)(value) if not isinstance(lr, np.ndarray) else np.array(value, lr.dtype)
        got, exp = w.copy(), w.copy()
        jf(got, a, b, lr2)
        sgd(exp, a, b, lr2)
        assert_same(got, exp, atol=_tol(w, a, b, value))


def test_constant_and_expression_factors():
    w, a, b = _operands(sgd, np.float32)

    def const(w, a, b):
        w -= 0.125 * (a @ b)

    program = run_both(const, w, a, b, atol=_tol(w, a, b, 0.125))
    (gemm,) = gemms(program)
    assert gemm.alpha == -0.125 and gemm.alpha_from is None and len(program.kernels) == 1

    def scaled(w, a, b, lr, n):
        w -= (lr / n) * (a @ b)

    program = run_both(scaled, w, a, b, 0.5, 4.0, atol=_tol(w, a, b, 0.125))
    gemm = gemms(program)[0]
    assert gemm.beta == 1.0 and gemm.alpha_from is not None  # lr / n stored in a 0-d temp


def test_batched_update():
    w, a, b = _arr((3, 5, 4), np.float64), _arr((3, 5, 6), np.float64), _arr((3, 6, 4),
                                                                               np.float64)
    program = run_both(sgd, w, a, b, 0.3, atol=1e-12)
    assert gemms(program)[0].beta == 1.0 and len(program.kernels) == 1


def test_aliasing_falls_back():
    """w is also an operand: the gemm must not write w while reading it."""
    w, g = _arr((6, 6), np.float32), _arr((6, 6), np.float32)

    def f(w, g, lr):
        w -= lr * (w.T @ g)

    program = run_both(f, w, g, 0.1, atol=_tol(w, w.T, g, 0.1))
    assert all(k.beta == 0 for k in gemms(program))
    assert any(isinstance(k, Kernel) for k in program.kernels)  # the update kernel


def test_old_value_read_later_falls_back():
    """A kernel that reads w's old value after the gemm would write it: no in-place gemm
    before it (the hazard check), still NumPy's values."""
    w, a, b = _operands(sgd, np.float64)

    def f(w, a, b, lr):
        old = w * 2.0
        w -= lr * (a @ b)
        return old + 1.0

    run_both(f, w, a, b, 0.1, atol=_tol(w, a, b, 0.1))


def test_returned_product_is_stored_not_fused():
    """Was a crash (KeyError in lowering): the product, or the scaled product, is both the
    update's term and a result, so the gemm cannot write it into w alone."""
    w, a, b = _operands(sgd, np.float32)

    def f(w, a, b):
        w -= 0.1 * (a @ b)
        return a @ b

    def g(w, a, b):
        step = 0.1 * (a @ b)
        w -= step
        return step

    for fn in (f, g):
        run_both(fn, w, a, b, atol=_tol(w, a, b, 0.1))


def test_layouts_fall_back_or_stay_exact():
    w, a, b = _operands(sgd, np.float32)
    # BLAS writes C row-major only: falls back; the CUDA kernel writes any layout in place
    beta = 1.0 if on_cuda() else 0.0
    wf = np.asfortranarray(w)
    program = run_both(sgd, wf, a, b, 0.1, atol=_tol(w, a, b, 0.1))
    assert all(k.beta == beta for k in gemms(program))
    big = _arr((12, 14), np.float32)
    program = run_both(sgd, big[:, ::2], a, b, 0.1, atol=_tol(w, a, b, 0.1))
    assert all(k.beta == beta for k in gemms(program))
    program = run_both(sgd, big[:, :7], a, b, 0.1, atol=_tol(w, a, b, 0.1))
    assert gemms(program)[0].beta == 1.0  # a leading dimension of 14 is fine for BLAS


def test_integer_and_promoting_updates_are_not_gemms():
    w, a, b = np.ones((3, 4), np.int64), np.ones((3, 5), np.int64), np.ones((5, 4), np.int64)
    program = run_both(sgd, w, a, b, 2)
    assert all(k.beta == 0 for k in gemms(program))


def test_read_only_raises_and_modifies_nothing():
    w, a, b = _operands(sgd, np.float32)
    w.flags.writeable = False
    before = w.copy()
    with pytest.raises(ValueError, match="read-only"):
        sgd(w, a, b, 0.1)
    with pytest.raises(ValueError, match="read-only"):
        fusejit.jit(sgd)(w, a, b, 0.1)
    assert np.array_equal(w, before)


def test_empty_contraction_is_not_fused():
    w, a, b = _arr((3, 4), np.float64), np.ones((3, 0)), np.ones((0, 4))
    program = run_both(sgd, w, a, b, 0.1)
    assert all(k.beta == 0 for k in gemms(program))


def test_generated_loops_accumulate_too():
    """Without BLAS (exported libraries) the loops start from C and scale A by alpha."""
    from fusejit.codegen.c import COptions, render
    from fusejit.lowering.lower import contiguous_strides, lower
    from fusejit.lowering.memplan import plan

    w, a, b = _operands(sgd, np.float64)
    jf = fusejit.jit(sgd)
    g = jf.lower_for(w, a, b, 0.1).optimised
    program = plan(lower(g, [contiguous_strides(x.shape) for x in (w, a, b)] + [()],
                         blas=False))
    (gemm,) = gemms(program)
    assert gemm.beta == 1.0 and not gemm.blas
    src = render(program, COptions())
    assert "fj_alpha * fj_a[" in src and "fj_c[fj_j * 1] = 0" not in src


def test_pattern_is_pure_and_idempotent():
    w, a, b = _operands(sgd, np.float32)
    graph = optimise(fusejit.jit(sgd).lower_for(w, a, b, 0.1).optimised)
    text = str(graph.nodes())
    first = find_gemm_updates(graph)
    assert str(graph.nodes()) == text  # the graph is not changed
    second = find_gemm_updates(graph)
    assert list(first) == list(second) and len(first) == 1
    (upd,) = first.values()
    assert upd.sign == -1 and upd.arg == 0 and upd.matmul.op == "matmul"
    groups, materialised, _ = fusion.partition(graph)
    assert upd.matmul.id not in materialised
    (group,) = [g for g in groups if g.matmul]
    assert group.update == upd and group.roots == [upd.update]
    assert find_gemm_updates(graph, frozenset(first)) == {}


def test_narrow_mask_is_stored():
    """`(dz @ w2.T) * (h > 0)` read after `h.T @ dz`: without BLAS (no gemm epilogue) the
    bool mask is stored with h, so h is not needed by the late kernel. With BLAS the late
    product's gemm epilogue reads h itself and its value takes h's block in place: no mask."""
    def f(x, w1, w2, y):
        h = np.maximum(x @ w1, 0)
        dz = (h @ w2) - y
        dw2 = h.T @ dz
        dh = (dz @ w2.T) * (h > 0)
        return dw2, x.T @ dh

    args = (_arr((16, 8), np.float32), _arr((8, 12), np.float32), _arr((12, 3), np.float32),
            _arr((16, 3), np.float32))
    jf = fusejit.jit(f)
    graph = jf.lower_for(*args).optimised
    _, materialised, reasons = fusion.partition(graph, blas=False)
    masks = [n for n in graph.nodes() if n.op == "greater"]
    assert masks and masks[0].id in materialised and "narrow" in reasons[masks[0].id]
    h = masks[0].inputs[0]
    late = [u for u in users(graph.nodes())[masks[0].id]]
    assert late and all(h not in u.inputs for u in late)
    groups, materialised, _ = fusion.partition(graph)
    assert masks[0].id not in materialised
    (dh,) = [g for g in groups if g.gemm is not None and g.gemm.inputs[0].op != "input"
             and g.gemm.shape == h.shape]
    assert dh.roots[0].op == "multiply"
    run_both(f, *args, atol=1e-4)


def test_reshape_operand_read_in_place():
    w = _arr((16, 5), np.float32)

    def f(x, w):
        return x.reshape(-1, 16) @ w

    x = _arr((4, 8, 16), np.float32)
    program = run_both(f, x, w, atol=1e-5)
    assert len(program.kernels) == 1 and isinstance(program.kernels[0], GemmKernel)
    sliced = _arr((4, 8, 16), np.float32)[:, ::2]  # merged axes still contiguous to each other
    program = run_both(f, sliced, w, atol=1e-5)
    assert len(program.kernels) == 1
    program = run_both(f, x.transpose(1, 0, 2), w, atol=1e-5)  # NumPy copies: so do we
    assert len(program.kernels) == 2


def test_mlp_train_step_three_steps():
    from workloads_train import _train_inputs, mlp_train_step

    inputs = _train_inputs(3, True)
    np_args = [a.copy() for a in inputs]
    fj_args = [a.copy() for a in inputs]
    jf = fusejit.jit(mlp_train_step)
    for _ in range(3):
        exp = mlp_train_step(*np_args)
        got = jf(*fj_args)
        assert_same(got, exp, rtol=1e-4)
        for g, e in zip(fj_args, np_args):
            assert_same(g, e, atol=1e-5)
    program = jf.lower_for(*inputs).program
    check_plan(program)
    fused = [k for k in gemms(program) if k.beta]
    assert len(fused) == 1  # dw1 into w1 (dw2 stays a temp so h can die early)
    deps = dependencies(program)
    assert len(deps) == len(program.kernels)


@pytest.mark.parametrize("lr", [np.float16(0.5), np.int64(2), np.array(3, np.int32), True],
                         ids=["f16", "i64", "arr_i32", "bool"])
def test_unusual_factor_dtypes(lr):
    """Factors NumPy casts (half, integers, bool) give NumPy's values; a half factor is
    stored in a float 0-d buffer first (C cannot cast the half storage type)."""
    w, a, b = _operands(sgd, np.float32)
    program = run_both(sgd, w, a, b, lr, atol=_tol(w, a, b, 3.0))
    assert any(k.beta for k in gemms(program)) or np.result_type(w, lr) != w.dtype
