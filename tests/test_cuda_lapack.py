"""np.linalg on the CUDA backend (codegen/cuda_lapack.py, cuda_jacobi.py): the generated
kernels run on the CPU (tests/cuda_emu.py) against NumPy: batched, strided and transposed
operands, float32 and float64 inputs (computed in float64 as NumPy does), matrices whose
working copy is in global scratch, pivot ties, eigenvalues of graded, repeated and NaN
matrices, singular and non-positive-definite matrices (NumPy's LinAlgError, from the replay
with host inputs and from the status word with device inputs, and slogdet's (0, -inf));
eigh and lstsq refused naming the call's line; the kernels compiled for sm_90 by nvcc
without spills."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import cuda_fake
import numpy as np
import pytest
from conftest import assert_same
from test_cuda_codegen import needs_nvcc, program_of

import fusejit
from fusejit.codegen import cuda_lapack
from fusejit.codegen.cuda import render_cuda
from fusejit.errors import UnsupportedError
from fusejit.runtime import backend_cuda

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ to emulate with")
LinAlgError = np.linalg.LinAlgError
TOL = {"rtol": 1e-10, "atol": 1e-12}


def solvers(a, b, v, s):
    """Each kernel kind, its operands read through views (transposed, reversed, sliced)."""
    at = np.swapaxes(a, -1, -2)
    return (np.linalg.solve(at, b[..., ::-1, :]), np.linalg.solve(a[1], v),
            np.linalg.inv(at[:, ::-1]), np.linalg.det(a), tuple(np.linalg.slogdet(at)),
            np.linalg.cholesky(s), np.linalg.cholesky(s[..., ::-1, ::-1], upper=True),
            np.linalg.eigvalsh(at), np.linalg.eigvalsh(s[0].T, UPLO="U"))


def _cases(rng: np.random.Generator) -> list[tuple]:
    def well(shape, dtype):
        return (rng.standard_normal(shape) + 2 * np.eye(shape[-1])).astype(dtype)

    def spd(shape, dtype):
        x = rng.standard_normal(shape)
        return (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)

    return [(well((4, 5, 5), dt), rng.standard_normal((4, 5, 3)).astype(dt),
             rng.standard_normal(5).astype(dt), spd((3, 5, 5), dt))
            for dt in (np.float64, np.float32)]


@needs_gxx
def test_linalg_runs_as_generated(monkeypatch: pytest.MonkeyPatch) -> None:
    images, driver = cuda_fake.install(monkeypatch, emulate=True)
    driver.Device(0).get_attribute = lambda attr: 1  # one SM: grids of 32 blocks at most
    rng = np.random.default_rng(21)
    jf = fusejit.jit(solvers, backend="cuda")
    for args in _cases(rng):
        tol = TOL if args[0].dtype == np.float64 else {"rtol": 2e-6, "atol": 1e-6}
        assert_same(jf(*args), solvers(*args), **tol)
    # ties for the pivot (the first row of largest |a|, as getrf)
    ties = np.array([[[1.0, 2.0, 0.0], [-1.0, 4.0, 1.0], [1.0, 0.0, 2.0]],
                     [[2.0, 0.0, 0.0], [0.0, -2.0, 0.0], [0.0, 0.0, 2.0]]])
    exact = fusejit.jit(lambda a: (np.linalg.inv(a), np.linalg.slogdet(a)[0]), backend="cuda")
    assert_same(exact(ties), (np.linalg.inv(ties), np.linalg.slogdet(ties)[0]), **TOL)
    many = rng.standard_normal((45, 3, 3))  # more matrices than blocks: each block loops
    assert_same(exact(many), (np.linalg.inv(many), np.linalg.slogdet(many)[0]), **TOL)
    # n = 48: the working copy (48 x 96 and the pivots) is larger than the shared memory
    # a kernel keeps, so it lives in the module's scratch area
    big = rng.standard_normal((2, 48, 48)) + 8 * np.eye(48)
    monkeypatch.setattr(cuda_lapack, "MAX_BLOCKS", 1)  # one block's scratch: it does both
    driver.launches.clear()
    big_f = fusejit.jit(lambda a: (np.linalg.inv(a), np.linalg.solve(a, a[0, 0])),
                        backend="cuda")
    assert_same(big_f(big), (np.linalg.inv(big), np.linalg.solve(big, big[0, 0])), **TOL)
    launches = [k for _, m in images.values() for k in m.kernels if k.role == "lapack"]
    assert any(k.scratch and k.units == 1 and k.name in driver.launches for k in launches)
    # eigenvalues: graded (tiny off-diagonals beside large and tiny diagonals), repeated,
    # n = 70 (its 70 x 70 copy in scratch), NaN (NaN values, as NumPy's; no error)
    graded = np.diag([1.0, 1e-20, 3.0, -1e3, 3.0])
    graded[0, 1] = graded[1, 0] = 1e-12
    graded[2, 3] = graded[3, 2] = 5.0
    sym = rng.standard_normal((70, 70))
    eig = fusejit.jit(lambda g, o, s: (np.linalg.eigvalsh(g), np.linalg.eigvalsh(o),
                                       np.linalg.eigvalsh(s + s.T)), backend="cuda")
    args = graded, np.ones((2, 4, 4)), sym
    want = (np.linalg.eigvalsh(graded), np.linalg.eigvalsh(args[1]),
            np.linalg.eigvalsh(sym + sym.T))
    assert_same(eig(*args), want, rtol=1e-12, atol=1e-12 * 60)
    nan = np.array([[1.0, np.nan], [np.nan, 1.0]])
    assert np.isnan(fusejit.jit(np.linalg.eigvalsh, backend="cuda")(nan)).all()


@needs_gxx
def test_singular_and_not_positive_definite(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda_fake.install(monkeypatch, emulate=True)
    a = np.stack([np.eye(3), [[1.0, 2, 3], [2, 4, 6], [1, 1, 1]], 2 * np.eye(3)])
    for f in (lambda a: np.linalg.solve(a, a[:, 0]), lambda a: np.linalg.inv(a) * 2,
              lambda a: np.linalg.cholesky(a - np.eye(3))):
        with pytest.raises(LinAlgError) as want:
            f(a)
        with pytest.raises(LinAlgError) as got:
            fusejit.jit(f, backend="cuda")(a)
        assert str(got.value) == str(want.value)
        device = sys.modules["pycuda.gpuarray"].to_gpu(a)  # no replay: the status word's
        with pytest.raises(LinAlgError, match=str(want.value)):
            fusejit.jit(f, backend="cuda")(device)
    logdet = lambda a: tuple(np.linalg.slogdet(a)) + (np.linalg.det(a),)  # noqa: E731
    assert_same(fusejit.jit(logdet, backend="cuda")(a), logdet(a), **TOL)
    empty = fusejit.jit(lambda a: tuple(np.linalg.slogdet(a)), backend="cuda")
    assert_same(empty(np.ones((2, 0, 0))), tuple(np.linalg.slogdet(np.ones((2, 0, 0)))))


def test_explain_and_refusals(monkeypatch: pytest.MonkeyPatch) -> None:
    """explain says which kernel runs; eigh and lstsq are refused naming the call's line."""
    cuda_fake.install(monkeypatch)
    a = np.eye(3) * 2
    text = str(fusejit.jit(lambda a: np.linalg.inv(a) + 1, backend="cuda").explain(a))
    assert "np.linalg inv [3x3] float64: the backend's own kernel" in text, text
    assert "CUDA: a block of 32 threads per matrix, LU with getrf's partial pivoting" in text
    for f, what in ((lambda a: np.linalg.lstsq(a, a[0])[0], "np.linalg.lstsq"),
                    (lambda a: np.linalg.eigh(a)[1], "np.linalg.eigh")):
        with pytest.raises(UnsupportedError) as e:
            fusejit.jit(f, backend="cuda")(a)
        msg = str(e.value)
        assert what in msg and "test_cuda_lapack.py:" in msg, msg
        assert "not supported by the CUDA backend" in msg, msg


@needs_nvcc
def test_kernels_compile_for_sm90_without_spills() -> None:
    rng = np.random.default_rng(22)
    a, b, v, s = _cases(rng)[0]
    big = rng.standard_normal((300, 300))
    modules = [render_cuda(program_of(solvers, a, b, v, s, name="lin")),
               render_cuda(program_of(lambda x: (np.linalg.inv(x), np.linalg.det(x),
                                                 np.linalg.cholesky(x), np.linalg.eigvalsh(x)),
                                      big, name="big"))]
    assert modules[1].scratch_bytes > 0  # (the 300 x 600 working copy: global scratch)
    source = modules[0].prelude + "".join(m.body for m in modules)
    nvcc = backend_cuda.find_nvcc()
    path = os.path.join(os.environ["FUSEJIT_CACHE_DIR"], "cuda_lapack_test.cu")
    with open(path, "w") as f:
        f.write(source)
    proc = subprocess.run([nvcc.path, "-cubin", "-arch=sm_90", "-Xptxas", "-v", "-o",
                           path + ".cubin", path], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    spills = re.findall(r"(\d+) bytes spill stores", proc.stderr)
    assert spills and all(n == "0" for n in spills), proc.stderr[-3000:]
    cubin = open(path + ".cubin", "rb").read()
    for m in modules:
        for k in m.kernels:
            assert k.name.encode() in cubin
