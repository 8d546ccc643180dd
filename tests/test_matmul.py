"""Matmul, dot and einsum (issue 3): NumPy's results, shapes, dtypes and errors; BLAS calls
for float products, generated loops for the rest, layouts BLAS cannot read packed first."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, assert_unmodified, c_structure, snapshot
from hypothesis import given
from hypothesis import strategies as st

import fusejit
from fusejit.errors import UnsupportedError
from fusejit.lowering.loop_ir import GemmKernel
from fusejit.lowering.matmul import blas_layout
from fusejit.lowering.memplan import check_plan

RNG = np.random.default_rng(7)


def data(shape, dtype, rng=RNG):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -50, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def tol(exp, k):
    """Float products: the BLAS may sum in another order than NumPy's; errors grow with k."""
    dt = np.asarray(exp).dtype
    if dt.kind != "f":
        return {}
    eps = float(np.finfo(dt).eps)
    return {"rtol": 8 * eps * max(k, 1) ** 0.5, "atol": 8 * eps * max(k, 1)}


def check(f, *args, k=8):
    snap = snapshot(args)
    exp = f(*args)
    got = fusejit.jit(f)(*args)
    assert_same(got, exp, **tol(exp, k))
    assert_unmodified(snap)
    return got


def gemms(f, *args):
    prog = fusejit.jit(f).lower_for(*args).program
    check_plan(prog)
    return [k for k in prog.kernels if isinstance(k, GemmKernel)]


SHAPES = [
    ((3, 4), (4, 5)), ((1, 4), (4, 1)), ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (4,)),
    ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((0, 4), (4, 3)),
    ((3, 0), (0, 5)), ((3, 4), (4, 0)), ((2, 3, 4), (2, 4, 6)), ((7, 33), (33, 65)),
]


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matmul_shapes(sa, sb, dtype):
    a, b = data(sa, dtype), data(sb, dtype)
    check(lambda x, y: x @ y, a, b, k=sa[-1])


@pytest.mark.parametrize("da,db", [("int8", "int8"), ("uint8", "int8"), ("bool", "bool"),
                                   ("float16", "float16"), ("float32", "float64"),
                                   ("int32", "float32"), ("bool", "int16"), ("uint64", "uint64"),
                                   ("int32", "int32")])
def test_matmul_dtypes(da, db):
    a, b = data((5, 17), da), data((17, 6), db)
    check(lambda x, y: np.matmul(x, y), a, b, k=17)


def test_int8_matmul_wraps_like_numpy():
    a = np.full((2, 40), 100, np.int8)
    b = np.full((40, 3), 3, np.int8)
    check(lambda x, y: x @ y, a, b)


def test_layouts_read_in_place_or_packed():
    x, w = data((64, 48), "float32"), data((48, 32), "float32")
    # Transposed operands are read by BLAS as they are ('T'), not copied.
    f = lambda x, w: x.T.T @ w.T.T  # noqa: E731
    check(f, x, w, k=48)
    g = lambda x, w: (w.T @ x.T).T  # noqa: E731
    check(g, x, w, k=48)
    kernels = fusejit.jit(g).lower_for(x, w).program.kernels
    c_struct = c_structure()  # BLAS's layouts (the CUDA kernel reads any strides)
    assert not c_struct or (len(kernels) == 2 and isinstance(kernels[0], GemmKernel)
                            and kernels[0].blas)
    # A reversed operand cannot be read by BLAS: it is packed by one copy kernel first.
    h = lambda x, w: x[::-1] @ w  # noqa: E731
    check(h, x, w, k=48)
    prog = fusejit.jit(h).lower_for(x, w).program
    assert not c_struct or (len(prog.kernels) == 2 and prog.kernels[1].blas)
    # Non-contiguous arguments: strided columns, a Fortran-ordered matrix.
    check(lambda x, w: x @ w, x[:, ::2], w[::2], k=24)
    check(lambda x, w: x @ w, np.asfortranarray(x), np.asfortranarray(w), k=48)
    # A broadcast row operand (stride 0) is packed too.
    check(lambda x, w: np.broadcast_to(w[0], (5, 32)) @ w.T, x, w, k=32)


def test_operands_computed_in_the_function():
    x, w = data((16, 8), "float64"), data((8, 4), "float64")
    check(lambda x, w: np.exp(x * 0.1) @ (w + 1), x, w)
    check(lambda x, w: (x @ w) @ (w.T @ np.ones((8, 3))), x, w)
    const = data((4, 3), "float64")
    check(lambda x, w: x @ w @ const, x, w)
    check(lambda x, w: const.T @ (x @ w).T, x, w)
    check(lambda x, w: np.ones((2, 16)) @ x, x, w)


def test_mlp_epilogue_is_fused():
    def mlp(x, w1, b1, w2, b2):
        return np.maximum(x @ w1 + b1, 0) @ w2 + b2

    args = [data(s, "float32") for s in [(64, 32), (32, 48), (48,), (48, 10), (10,)]]
    check(mlp, *args, k=48)
    prog = fusejit.jit(mlp).lower_for(*args).program
    check_plan(prog)
    if not c_structure():
        return
    kinds = ["gemm" if isinstance(k, GemmKernel) else "elementwise" for k in prog.kernels]
    # bias + relu run in the first gemm's epilogue, the bias in the second's: no other pass.
    assert kinds == ["gemm", "gemm"]
    assert all(k.blas and k.epilogue is not None for k in prog.kernels)
    assert "fj_sgemm(" in fusejit.jit(mlp).lower_for(*args).source


def test_integer_products_use_generated_loops():
    a, b = data((6, 5), "int32"), data((5, 4), "int32")
    (k,) = gemms(lambda x, y: x @ y, a, b)
    assert not k.blas


def test_reflected_and_method_forms():
    x, w = data((3, 4), "float64"), data((4, 2), "float64")
    const = data((5, 3), "float64")
    check(lambda x: const @ x, x)
    check(lambda x, w: x.dot(w), x, w)
    check(lambda x, w: np.matmul(x, w), x, w)
    check(lambda x, w: np.dot(x, w), x, w)


def test_vector_products_return_numpy_scalars():
    v, u = data((6,), "float32"), data((6,), "float32")
    got = check(lambda a, b: a @ b, v, u)
    assert isinstance(got, np.float32)
    check(lambda a, b: np.dot(a, b), v, u)
    check(lambda a, b: np.dot(a, 2.0) + np.dot(3, b), v, u)


@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ji,jk->ki", [(4, 3), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->kbi", [(2, 3, 4), (2, 4, 5)]),
    ("i,ij->j", [(4,), (4, 5)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("i,i->", [(4,), (4,)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ijk->j", [(2, 3, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,jk->i", [(3, 4), (4, 5)]),
    ("ijk,jkl->il", [(2, 3, 4), (3, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
])
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_einsum_products(spec, shapes, dtype):
    ops = [data(s, dtype) for s in shapes]
    check(_einsum(spec, len(ops)), *ops)


def _einsum(spec, nops):
    if nops == 1:
        return lambda a: np.einsum(spec, a)
    if nops == 2:
        return lambda a, b: np.einsum(spec, a, b)
    return lambda a, b, c: np.einsum(spec, a, b, c)


@pytest.mark.parametrize("spec,shapes", [
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ii", [(0, 0)]), ("iij->ji", [(3, 3, 2)]),
    ("iii->i", [(2, 2, 2)]), ("ij,jj->i", [(2, 3), (3, 3)]), ("ii,jj", [(3, 3), (2, 2)]),
    ("ijk,kl,ii->jl", [(3, 3, 2), (2, 4), (3, 3)]), ("...ij,...jk", [(2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (1, 3, 4)]), ("...", [(2, 3)]),
    ("...ii->...i", [(2, 3, 3)]), ("a...,...b->...ab", [(2, 3), (1, 4)]),
    ("ij...,jk", [(2, 3, 4), (3, 4)]), ("...i,...i", [(2, 3, 4), (4,)]),
    ("...j,jk->...k", [(4,), (4, 5)]), ("i...->i...", [(0, 2)])])
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_einsum_diagonals_and_ellipsis(spec, shapes, dtype):
    """Repeated indices in one operand (its diagonal) and '...' (broadcast dims)."""
    check(_einsum(spec, len(shapes)), *[data(s, dtype) for s in shapes])


@pytest.mark.parametrize("spec,shapes", [
    ("ii->i", [(3, 4)]), ("i...->i", [(2, 3)]), ("...->", [(2,)]), ("i.j", [(3, 3)]),
    ("ij...,jk", [(2, 3), (3, 4), (4,)]), ("ijk...", [(2, 3)])])
def test_einsum_diagonal_and_ellipsis_errors_are_numpys(spec, shapes):
    ops = [data(s, "float64") for s in shapes]
    with pytest.raises(ValueError):
        _einsum(spec, len(ops))(*ops)
    with pytest.raises(ValueError):
        fusejit.jit(_einsum(spec, len(ops)))(*ops)


@pytest.mark.parametrize("f,args", [
    (lambda a, b: a @ b, [(3, 4), (5, 6)]),
    (lambda a, b: a @ b, [(2, 3, 4), (3, 4, 5)]),
    (lambda a, b: np.matmul(a, b), [(3,), (4,)]),
    (lambda a, b: np.dot(a, b), [(3, 4), (5,)]),
    (lambda a, b: a @ b[0, 0], [(3, 4), (4, 4)]),
    (lambda a, b: np.einsum("ij,jk->ik", a, b), [(3, 4), (5, 6)]),
])
def test_bad_shapes_raise_numpy_errors(f, args):
    xs = [data(s, "float64") for s in args]
    with pytest.raises(Exception) as expected:
        f(*xs)
    with pytest.raises(type(expected.value)):
        fusejit.jit(f)(*xs)


def test_dot_with_3d_second_operand_is_refused_clearly():
    with pytest.raises(UnsupportedError, match="np.dot"):
        fusejit.jit(lambda a, b: np.dot(a, b))(data((2, 3), "float64"), data((2, 3, 4), "float64"))


def test_blas_layout_rule():
    assert blas_layout(3, 4, 4, 1) == (True, 4)
    assert blas_layout(3, 4, 1, 3) == (False, 3)
    assert blas_layout(3, 4, 8, 1) == (True, 8)  # a column slice keeps its leading dimension
    assert blas_layout(1, 4, 0, 1) == (True, 4)  # a single row: its row stride is irrelevant
    assert blas_layout(3, 4, -4, 1) is None
    assert blas_layout(3, 4, 0, 1) is None
    assert blas_layout(3, 4, 8, 2) is None


@given(st.data())
def test_matmul_property(d):
    m, n, k = (d.draw(st.integers(0, 9)) for _ in range(3))
    batch_a = tuple(d.draw(st.lists(st.sampled_from([1, 2, 3]), max_size=2)))
    batch_b = batch_a[len(batch_a) - d.draw(st.integers(0, len(batch_a))):]
    dtype = d.draw(st.sampled_from(["float32", "float64", "int32", "int16", "bool"]))
    a_vec = not batch_a and d.draw(st.booleans())
    b_vec = not batch_b and d.draw(st.booleans())
    sa = (k,) if a_vec else batch_a + (m, k)
    sb = (k,) if b_vec else batch_b + (k, n)
    rng = np.random.default_rng(d.draw(st.integers(0, 2**16)))
    a, b = data(sa, dtype, rng), data(sb, dtype, rng)
    if d.draw(st.booleans()) and a.ndim >= 2:
        a = np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2)  # column-major operand
    epilogue = d.draw(st.sampled_from([None, "bias", "relu"]))
    if epilogue is None:
        f = lambda x, y: x @ y  # noqa: E731
    elif epilogue == "bias":
        f = lambda x, y: x @ y + 1  # noqa: E731
    else:
        f = lambda x, y: np.maximum(x @ y, 0)  # noqa: E731
    check(f, a, b, k=k)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_gemm_split_over_threads_matches_numpy(dtype):
    """Products above GEMM_PAR_MIN run as row blocks on the program's threads, BLAS
    single-threaded in each; the blocks cross batch boundaries (3 x 101 rows over 2
    threads) and read transposed operands in place."""
    from fusejit.codegen.cblas import GEMM_PAR_MIN

    a = data((3, 101, 64), dtype)
    b = data((3, 50, 64), dtype)
    assert 3 * 101 * 64 * 50 >= GEMM_PAR_MIN
    f = lambda a, b: a @ b.transpose(0, 2, 1) + 1
    check(f, a, b, k=64)
    assert not c_structure() or gemms(f, a, b)[0].blas


def test_blas_thread_count_is_restored_even_with_concurrent_calls():
    """A split gemm sets OpenBLAS to one thread while it runs; the first entrant saves the
    count and the last leaver restores it, also when several Python threads run compiled
    gemms at once (the count is process-wide in SciPy's pthreads OpenBLAS)."""
    import ctypes
    import threading

    from fusejit.runtime.blas import thread_control

    get, put, state = thread_control()
    if not state:
        pytest.skip("no OpenBLAS thread control found")
    get_n = ctypes.CFUNCTYPE(ctypes.c_int)(get)
    put_n = ctypes.CFUNCTYPE(None, ctypes.c_int)(put)
    before = get_n()
    put_n(2)
    try:
        fs = [fusejit.jit(lambda a, b: a @ b), fusejit.jit(lambda a, b: (a @ b) * 2)]
        a, b = data((256, 128), np.float32), data((128, 256), np.float32)
        want = [a @ b, (a @ b) * 2]
        for f in fs:
            f(a, b)  # compile first
        errors = []

        def work(k: int) -> None:
            for _ in range(20):
                got = fs[k % 2](a, b)
                if not np.allclose(got, want[k % 2], rtol=1e-4, atol=1e-4):
                    errors.append(k)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert get_n() == 2
    finally:
        put_n(before)
