"""The random-graph fuzzer's programs (tests/test_fuzz.py, complex ones too) and random
in-place matrix-product updates (`w -= lr * (a @ b)` and relatives, lowering/gemm_update.py)
rendered as CUDA and compiled with nvcc, all in one nvcc call: to PTX (nvcc's front end and
optimiser, where the generator's errors show; ptxas is left to the cubin tests of
test_cuda_codegen.py), for the first FUSEJIT_FUZZ_CUDA_SEEDS seeds of each fuzzer (default:
half of test_fuzz.py's). Values
are checked on a GPU (FUSEJIT_BACKEND=cuda runs test_fuzz.py there) and, for the host side,
under FUSEJIT_TEST_FAKE_CUDA=1; here nvcc must accept what the generator renders."""

from __future__ import annotations

import dataclasses
import os
import shutil
import warnings
from typing import Any

import numpy as np
import pytest
from exprgen import SeededChooser, build, make_args
from test_fuzz import N_SEEDS, N_STRUCTURAL, random_program

from fusejit.codegen.cuda import CudaModule, render_cuda
from fusejit.codegen.cuda_lapack import SUPPORTED as CUDA_LAPACK
from fusejit.errors import FusejitError
from fusejit.frontend.trace import trace
from fusejit.lowering.loop_ir import GemmKernel, LapackKernel, Program
from fusejit.lowering.lower import contiguous_strides, lower
from fusejit.lowering.memplan import plan
from fusejit.lowering.pipeline import optimise
from fusejit.runtime import backend_cuda

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None and not os.path.exists(
    "/usr/local/cuda/bin/nvcc"), reason="nvcc (CUDA toolkit) is not installed")

N_CUDA = int(os.environ.get("FUSEJIT_FUZZ_CUDA_SEEDS", str(N_SEEDS // 2)))
N_UPDATES = int(os.environ.get("FUSEJIT_FUZZ_UPDATE_SEEDS", "16"))


def lowered(fn: Any, args: list[Any]) -> Program | None:
    """trace -> optimise -> lower without BLAS -> plan, as jit.py does for backend='cuda';
    None where NumPy or the tracer refuses the program (the fuzzer checks those errors)."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        graph, positions = trace(fn, list(args))
    except (FusejitError, ArithmeticError, ValueError, TypeError, IndexError):
        return None
    strides = []
    for node, pos in zip(graph.inputs, positions):
        a = args[pos] if pos < len(args) else None
        if isinstance(a, np.ndarray) and not a.flags.c_contiguous and a.size:
            strides.append(tuple(0 if n == 1 else s // a.itemsize
                                 for s, n in zip(a.strides, a.shape)))
        else:
            strides.append(contiguous_strides(node.shape))
    program = plan(lower(optimise(graph), strides, blas=False, own_lapack=True))
    if any(isinstance(k, LapackKernel) and k.fn not in CUDA_LAPACK for k in program.kernels):
        return None  # np.linalg.eigh, eigvalsh, lstsq: refused on CUDA (codegen/cuda_lapack.py)
    return program


def fuzz_programs() -> list[Program]:
    """The fuzzer's programs: plain, structural, and (a quarter as many) over complex values
    (fj_complex_cuda.h's type; their headers' include guards keep one copy per source)."""
    programs = []
    for structural, n, cplx in ((False, min(N_CUDA, N_SEEDS), False),
                                (True, min(N_CUDA, N_STRUCTURAL), False),
                                (False, N_CUDA // 4, True)):
        for seed in range(n):
            result, specs, share = random_program(seed, structural or (cplx and seed % 2 == 1),
                                                  complex_ok=cplx)
            fn = build(result, share=share, n_args=len(specs))
            p = lowered(fn, make_args(specs, seed))
            if p is not None:
                name = f"fz{'c' if cplx else int(structural)}_{seed}"
                programs.append(dataclasses.replace(p, name=name))
    return programs


# --- random in-place GEMM updates ---------------------------------------------------------------

def _sgd(w, a, b, lr):
    w -= lr * (a @ b)


def _sgd_right(w, a, b, lr):
    w -= (a @ b) * lr


def _acc(w, a, b, lr):
    w += a @ b


def _acc_neg(w, a, b, lr):
    w += -(a @ b)


def _out(w, a, b, lr):
    np.subtract(w, lr * (a @ b), out=w)


def _sgd_sum(w, a, b, lr):
    w -= lr * (a @ b)
    return w.sum(axis=0)


FORMS = [_sgd, _sgd_right, _acc, _acc_neg, _out, _sgd_sum]


def update_program(seed: int) -> tuple[Program, Any]:
    """A random update: form, float dtype, batch, shapes (odd, tile-straddling), operand
    layouts (transposed, strided, Fortran w) and the kind of lr (Python float, NumPy scalar of
    another dtype, 0-d array)."""
    ch = SeededChooser(seed + (2 << 20))
    rng = np.random.default_rng(seed)
    dt = np.dtype(ch.choice([np.float32, np.float64, np.float16]))
    batch = ch.choice([(), (), (3,)])
    m, k, n = (ch.choice([1, 2, 5, 17, 33, 70]) for _ in range(3))

    def arr(shape: tuple[int, ...], layout: str) -> np.ndarray:
        x = rng.standard_normal(shape).astype(dt)
        if layout == "T":
            return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
        if layout == "step":
            big = np.zeros(shape[:-1] + (2 * shape[-1],), dt)
            big[..., ::2] = x
            return big[..., ::2]
        return x

    layouts = ["C", "T", "step"]
    w = arr(batch + (m, n), ch.choice(layouts))
    a, b = arr(batch + (m, k), ch.choice(layouts)), arr(batch + (k, n), ch.choice(layouts))
    lr = ch.choice([0.05, np.float32(0.25), np.float64(0.5), np.array(0.125, dt)])
    form = ch.choice(FORMS)
    prog = lowered(form, [w, a, b, lr])
    assert prog is not None, (form.__name__, dt, batch, (m, k, n))
    return dataclasses.replace(prog, name=f"up{seed}"), form


@needs_nvcc
def test_fuzz_programs_and_gemm_updates_compile() -> None:
    programs = fuzz_programs()
    assert len(programs) >= N_CUDA  # most programs trace
    updates = [update_program(s) for s in range(N_UPDATES)]
    in_place = [p for p, _ in updates if any(isinstance(k, GemmKernel) and k.beta == 1.0
                                             for k in p.kernels)]
    assert len(in_place) >= N_UPDATES // 3  # the generator does reach the GEMM update
    modules: list[CudaModule] = [render_cuda(p) for p in programs + [p for p, _ in updates]]
    # (the prelude of a program calling scipy.special's functions has their headers too)
    prelude = next((m.prelude for m in modules if "fj_sp_" in m.body), modules[0].prelude)
    source = prelude + "".join(m.body for m in modules)
    ptx = backend_cuda.compile_ptx(source, "compute_90").decode()
    for m in modules:
        for name in m.kernel_names:
            assert f".entry {name}(" in ptx, name
