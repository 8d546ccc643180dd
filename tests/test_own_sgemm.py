"""fusejit's own AVX-512 sgemm (codegen/include/fj_sgemm.c, runtime/blas_own.py): when it
replaces SciPy's sgemm, its values against a float64 product over every transpose, edge tile,
leading dimension, alpha/beta (0 included) and NaN/inf as BLAS gives them, and jitted programs
(matmul, an in-place gemm update, the MLP training step) with it forced on. The direct tests
are skipped where the CPU or the compile target has no AVX-512."""

from __future__ import annotations

import ctypes
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit import config
from fusejit.runtime import blas, blas_core, blas_own, targets

AVX2 = frozenset(targets.TARGETS["x86-64-v3"][1])
AVX512 = AVX2 | frozenset(blas_core.AVX512)
_F = ctypes.POINTER(ctypes.c_float)
_I = ctypes.POINTER(ctypes.c_int)
SGEMM = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, _I, _I, _I, _F, _F, _I, _F,
                         _I, _F, _F, _I)


def test_decide() -> None:
    v3 = "x86-64-v3"
    assert blas_own.decide(AVX512, AVX512, "native", "Haswell", "auto").own
    assert blas_own.decide(AVX512, AVX512, "x86-64-v4", "Zen", "auto").own
    assert blas_own.decide(AVX512, AVX512, "native", None, "1").own  # forced
    assert blas_own.decide(AVX512, AVX512, "native", "SkylakeX", "1").own
    for cpu, target, march, core, mode in (
            (AVX2, AVX2, "native", "Haswell", "auto"),  # no AVX-512 (CI's AVX2 machines)
            (AVX2, AVX2, "native", "Haswell", "1"),  # forcing cannot give it one
            (AVX512 - {"avx512vl"}, AVX512, "native", "Haswell", "auto"),
            (frozenset(), AVX512, "native", "Haswell", "auto"),  # features unreadable
            (AVX512, AVX2, v3, "Haswell", "auto"),  # the target has none
            (AVX512, AVX2, v3, "Haswell", "1"),
            (AVX512, frozenset(targets.TARGETS["x86-64"][1]), "x86-64", "Haswell", "1"),
            (AVX512, AVX512, "native", "SkylakeX", "auto"),  # OpenBLAS runs AVX-512
            (AVX512, AVX512, "native", "Cooperlake", "auto"),
            (AVX512, AVX512, "native", None, "auto"),  # not an OpenBLAS that says
            (AVX512, AVX512, "native", "Haswell", "0"),  # switched off
            (AVX512, AVX512, "native", "Haswell", "off")):
        chosen = blas_own.decide(cpu, target, march, core, mode)
        assert not chosen.own, (cpu, target, march, core, mode, chosen)
    assert "Haswell kernels" in blas_own.decide(AVX512, AVX512, "native", "Haswell",
                                                "auto").why
    assert "x86-64-v3 has no AVX-512" in blas_own.decide(AVX512, AVX2, v3, "Haswell",
                                                         "1").why


def test_config_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FUSEJIT_OWN_SGEMM", raising=False)
    assert config.current().own_sgemm == "auto"
    monkeypatch.setenv("FUSEJIT_OWN_SGEMM", " 1 ")
    assert config.current().own_sgemm == "1"


def _allowed() -> bool:
    cfg = config.current()
    return blas_own.decide(targets.cpu_features(), targets.target_features(cfg.march),
                           cfg.march, None, "1").own


needs_avx512 = pytest.mark.skipif(not _allowed(), reason="the CPU or the compile target "
                                  "(FUSEJIT_MARCH) has no AVX-512")


def _sgemm() -> SGEMM:
    return SGEMM(blas_own._build(config.current().march))


def _run(fn: SGEMM, ta: str, tb: str, m: int, n: int, k: int, alpha: float, a: np.ndarray,
         b: np.ndarray, beta: float, c: np.ndarray) -> None:
    """The Fortran call on column-major a, b, c (Fortran-ordered arrays, maybe views whose
    leading dimension is their first stride)."""
    def ld(x: np.ndarray) -> ctypes.c_int:
        return ctypes.c_int(max(x.strides[1] // 4, 1))

    i = ctypes.c_int
    fn(ta.encode(), tb.encode(), i(m), i(n), i(k), ctypes.c_float(alpha),
       a.ctypes.data_as(_F), ld(a), b.ctypes.data_as(_F), ld(b), ctypes.c_float(beta),
       c.ctypes.data_as(_F), ld(c))


def _operand(rng: np.random.Generator, rows: int, cols: int, pad: int) -> np.ndarray:
    """A column-major rows x cols float32 view with leading dimension rows + pad."""
    full = np.asfortranarray(rng.standard_normal((rows + pad, cols)).astype(np.float32))
    return full[:rows]


def _check(fn: SGEMM, rng: np.random.Generator, ta: str, tb: str, m: int, n: int, k: int,
           alpha: float, beta: float, pad: int = 0, poison: bool = False) -> None:
    a = _operand(rng, k if ta == "T" else m, m if ta == "T" else k, pad)
    b = _operand(rng, n if tb == "T" else k, k if tb == "T" else n, pad)
    c = _operand(rng, m, n, pad + 1)
    if poison:  # beta 0 must not read C
        c[...] = np.nan
    c0 = c.astype(np.float64)
    opa = (a.T if ta == "T" else a).astype(np.float64)
    opb = (b.T if tb == "T" else b).astype(np.float64)
    ref = alpha * (opa @ opb) + (beta * c0 if beta != 0 else 0.0)
    bound = abs(alpha) * (np.abs(opa) @ np.abs(opb)) + abs(beta) * np.abs(np.nan_to_num(c0))
    before = c.base.copy()
    _run(fn, ta, tb, m, n, k, alpha, a, b, beta, c)
    err = np.abs(c - ref)
    assert np.all(err <= 4 * (k + 2) * np.finfo(np.float32).eps * bound + 1e-30), (
        ta, tb, m, n, k, alpha, beta, pad, float(np.max(err - 4 * (k + 2) * 6e-8 * bound)))
    # the rows past m (leading-dimension padding) stay untouched
    assert np.array_equal(c.base[m:], before[m:], equal_nan=True)


@pytest.mark.c_only
@needs_avx512
def test_values_every_transpose_and_edge() -> None:
    fn, rng = _sgemm(), np.random.default_rng(0)
    sizes = ((1, 1, 1), (7, 17, 33), (33, 7, 1), (100, 257, 17), (257, 100, 400),
             (32, 12, 384), (31, 13, 385), (64, 24, 5))
    for ta in "NT":
        for tb in "NT":
            for m, n, k in sizes:
                _check(fn, rng, ta, tb, m, n, k, 1.0, 0.0)
            _check(fn, rng, ta, tb, 45, 30, 70, -0.5, 1.0, pad=3)
            _check(fn, rng, ta, tb, 33, 25, 9, 2.0, 0.25, pad=1)
            _check(fn, rng, ta, tb, 40, 14, 11, 1.5, 0.0, pad=2, poison=True)
    # blocks past KC, MC and NC (the B block of 1536 columns), on the calling thread
    _check(fn, rng, "N", "N", 200, 1600, 20, 1.0, 0.5)
    _check(fn, rng, "T", "N", 390, 30, 800, 1.0, 1.0)
    # large enough to be split over the OpenMP threads, by columns then by rows
    _check(fn, rng, "N", "T", 130, 301, 70, 1.0, 0.0, pad=1, poison=True)
    _check(fn, rng, "T", "T", 301, 130, 70, -1.0, 1.0)
    _check(fn, rng, "T", "N", 10, 3000, 80, 1.0, 0.5, pad=1)  # as C^T (few rows), split
    # from Python threads that then exit (each packs in its own buffers, freed at its exit)
    with ThreadPoolExecutor(3) as pool:
        jobs = [pool.submit(_check, fn, np.random.default_rng(i), "N", "T", 40, 50, 60, 1.0,
                            0.0) for i in range(3)]
        for job in jobs:
            job.result()


@pytest.mark.c_only
@needs_avx512
def test_zero_sizes_alpha_zero_and_nan_inf() -> None:
    fn, rng = _sgemm(), np.random.default_rng(1)
    a, b = _operand(rng, 9, 5, 0), _operand(rng, 5, 6, 0)
    c = _operand(rng, 9, 6, 0)
    keep = c.copy()
    for m, n in ((0, 6), (9, 0), (0, 0)):  # nothing to write
        _run(fn, "N", "N", m, n, 5, 1.0, a, b, 0.0, c)
    assert np.array_equal(c, keep)
    _run(fn, "N", "N", 9, 6, 0, 1.0, a, b, 2.0, c)  # k 0: C = beta * C
    np.testing.assert_array_equal(c, 2 * keep)
    a[0, 0] = np.nan  # alpha 0: A and B are not read, C = beta * C
    _run(fn, "N", "N", 9, 6, 5, 0.0, a, b, 0.5, c)
    np.testing.assert_array_equal(c, keep)
    c[...] = np.nan
    _run(fn, "N", "N", 9, 6, 5, 0.0, a, b, 0.0, c)  # beta 0: zeros, the NaN in C not read
    assert not np.any(c) and not np.isnan(c).any()
    b[1, 2], b[2, 4], b[3, 4] = np.inf, np.inf, -np.inf  # NaN in A's row 0, inf in B
    c[...] = np.nan
    _run(fn, "N", "N", 9, 6, 5, 1.0, a, b, 0.0, c)
    with np.errstate(invalid="ignore"):
        ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.array_equal(np.isnan(c), np.isnan(ref)) and np.array_equal(np.isinf(c),
                                                                         np.isinf(ref))
    assert np.isnan(c[0]).all() and np.isinf(c[1:, 2]).all()
    fin = np.isfinite(ref)
    np.testing.assert_allclose(c[fin], ref[fin], rtol=1e-5, atol=1e-5)


@pytest.mark.c_only
@needs_avx512
def test_jitted_programs_with_it_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSEJIT_OWN_SGEMM", "1")
    assert blas.program_pointers()[0] == blas_own._build(config.current().march)
    assert "fusejit's own AVX-512 sgemm (FUSEJIT_OWN_SGEMM=1)" in blas.blas_report()
    rng = np.random.default_rng(2)

    def products(a, b, c, w, lr):
        p = a @ b  # plain
        q = np.maximum(a.T[:, :33] @ c + 1, 0)  # transposed operand, epilogue
        w -= lr * (c.T @ a[:33])  # in-place update: alpha -lr, beta 1
        return p, q, np.stack([a, a]) @ b  # batched

    a = rng.standard_normal((57, 45), dtype=np.float32)
    b = rng.standard_normal((45, 19), dtype=np.float32)
    c = rng.standard_normal((33, 101), dtype=np.float32)
    w = rng.standard_normal((101, 45), dtype=np.float32)
    f = fusejit.jit(products)
    assert "fusejit's own AVX-512 sgemm" in str(f.explain(a, b, c, w.copy(), np.float32(0.1)))
    w1, w2 = w.copy(), w.copy()
    assert_same(f(a, b, c, w1, np.float32(0.1)), products(a, b, c, w2, np.float32(0.1)),
                rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w1, w2, rtol=1e-4, atol=1e-4)

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from workloads_train import _train_inputs, mlp_train_step

    inputs = _train_inputs(3, True)
    mine, theirs = [x.copy() for x in inputs], [x.copy() for x in inputs]
    jf = fusejit.jit(mlp_train_step)
    for _ in range(2):
        assert_same(jf(*mine), mlp_train_step(*theirs), rtol=1e-4)
    for x, y in zip(mine, theirs):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-6)


def test_report_says_which_sgemm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSEJIT_OWN_SGEMM", "0")
    assert blas.program_pointers()[0] == blas.blas_pointers()[0]
    assert "float32 gemm: SciPy's sgemm (FUSEJIT_OWN_SGEMM=0)" in blas.blas_report()
    monkeypatch.setattr(blas_own, "decide", lambda *a: blas_own.Choice(False, "faked"))
    monkeypatch.setenv("FUSEJIT_OWN_SGEMM", "auto")
    assert blas.program_pointers()[0] == blas.blas_pointers()[0]
    assert "SciPy's sgemm (faked)" in blas.blas_report()
