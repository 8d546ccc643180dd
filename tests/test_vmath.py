"""fusejit's own float32 exp, tanh and erf (codegen/include/fj_vmath_f32.h), and the tile
functions exp, tanh, erf and log of codegen/include/fj_vtile.h (AVX-512 vector code; loops over
the scalar functions elsewhere).

Checks, in C: accuracy (<= 2 ULP against double libm), special values, exact oddness and
monotonicity (exp, tanh; erf nearly) on a sample (2^20 random bit patterns, special values,
and runs of consecutive floats around every threshold of each function), via
benchmarks/vmath_accuracy.c built with -DFJ_SAMPLED (without it, the same file checks all 2^32
inputs: see its header); that the loops using them vectorise with no calls left in them; and,
end to end, that compiled NumPy functions using them match NumPy / SciPy, NaN, infinities,
signed zeros and subnormals included.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.special as sc
from conftest import MARCH_FLAG, assert_same

import fusejit

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "codegen" / "include"
CHECKER = ROOT / "benchmarks" / "vmath_accuracy.c"
GCC = shutil.which("gcc")
FLAGS = ["-O3", MARCH_FLAG, "-fopenmp", "-fno-math-errno", "-fwrapv", "-std=gnu11"]
FUNCS = ("exp", "tanh", "erf", "exp_tile", "tanh_tile", "erf_tile", "log_tile")
F32 = np.float32
# Subnormal results carry fewer bits: allow them 2 ULP (2^-149 each) in absolute terms.
SUBNORMAL_ULPS = 2 * 2.0 ** -149

needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc not found on PATH")


def _fast_fma() -> bool:
    """Whether gcc targets FMA here (otherwise the header falls back to libm)."""
    res = subprocess.run([GCC, MARCH_FLAG, "-dM", "-E", "-x", "c", "/dev/null"],
                         capture_output=True, text=True, check=True)
    return "__FP_FAST_FMAF" in res.stdout


def _runs(centres: list[float], half: int = 2000) -> np.ndarray:
    """`2 * half` consecutive float32 values around each centre (and around its negation)."""
    out = []
    for c in centres:
        for v in (c, -c):
            u = np.array([v], F32).view(np.int32)[0]
            if v < 0 or (v == 0 and np.signbit(v)):
                continue  # consecutive negative floats: their bit patterns, descending values
            lo = max(int(u) - half, 0)
            bits = np.arange(lo, int(u) + half, dtype=np.int64).astype(np.uint32)
            out.append(bits.view(F32))
            out.append((bits | np.uint32(0x80000000)).view(F32))
    return np.concatenate(out)


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1e-40, -1e-40,
                     1.1754944e-38, -1.1754944e-38, 3.4028235e38, -3.4028235e38, 1.0, -1.0,
                     0.5, 2.0, 88.72283, 88.722839, -88.72283, -88.722839, -87.33654, -103.97208,
                     -103.97209, -104.0, 89.0, 9.01, 3.9192059, 3.92, 10.0, -10.0], F32)
# Where a piece, a clamp, the overflow / underflow / subnormal boundary or a rounding boundary
# of the result lies (positive; the runs cover both signs).
THRESHOLDS = [0.0, 2.0 ** -12, 2.0 ** -30, 0.34657359, 0.5, 0.984375, 1.0, 2.0, 3.9192059, 3.9375,
              9.0109, 87.33654, 88.72283935546875, 89.0, 103.97208, 104.0]


def _sample() -> np.ndarray:
    rng = np.random.default_rng(2024)
    bits = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(F32)
    sorted_ranges = [np.sort(rng.uniform(-lim, lim, 1 << 15)).astype(F32)
                     for lim in (1.5, 5.0, 12.0, 110.0)]
    return np.concatenate([SPECIALS, bits, *sorted_ranges, _runs(THRESHOLDS)])


def _check(tmp_path: Path, extra: list[str]) -> dict[str, dict[str, float]]:
    exe = tmp_path / "vmath_check"
    cmd = [GCC, *FLAGS, *extra, "-DFJ_SAMPLED", f"-I{INCLUDE}", str(CHECKER), "-lm", "-o",
           str(exe)]
    subprocess.run(cmd, check=True, capture_output=True)
    res = subprocess.run([str(exe)], input=_sample().tobytes(), capture_output=True)
    results: dict[str, dict[str, float]] = {}
    for line in res.stdout.decode().splitlines():
        name = line.split()[0]
        results[name] = {k: float(re.search(rf"\b{k} (\S+)", line).group(1)) for k in (
            "inputs", "max_ulp", "special_mismatch", "odd_mismatch", "monotonic_violations")}
    assert set(results) == set(FUNCS), res.stdout.decode() + res.stderr.decode()
    assert res.returncode == 0, res.stdout.decode()
    return results


@needs_gcc
@pytest.mark.parametrize("contract", ["off", "fast"])
def test_sampled_accuracy_specials_oddness_monotonicity(tmp_path: Path, contract: str) -> None:
    """<= 2 ULP, exact specials, exact oddness, monotone (erf: nearly; exhaustively 11403
    violations in 2^31 inputs, libmvec's erff 3449752); with and without FMA contraction
    (jit(fastmath=True) compiles with -ffp-contract=fast)."""
    results = _check(tmp_path, [f"-ffp-contract={contract}"])
    for name, r in results.items():
        assert r["inputs"] > 1 << 20
        assert r["max_ulp"] <= 2.0, (name, r)
        assert r["special_mismatch"] == 0, (name, r)
        assert r["odd_mismatch"] == 0, (name, r)
        if name.startswith("erf"):
            assert r["monotonic_violations"] <= r["inputs"] * 1e-3, (name, r)
        else:
            assert r["monotonic_violations"] == 0, (name, r)


@needs_gcc
def test_loops_vectorise_without_calls(tmp_path: Path) -> None:
    if platform.machine() not in ("x86_64", "AMD64") or not _fast_fma():
        pytest.skip("expectations are for x86_64 with FMA")
    src = tmp_path / "loops.c"
    names = {"exp": "fj_vm_exp_f32", "tanh": "fj_vm_tanh_f32", "erf": "fj_vm_erf_f32"}
    body = ['#include "fj_vmath_f32.h"']
    for name, fn in names.items():
        body += [f"void loop_{name}(const float *restrict x, float *restrict y, int n) {{",
                 "#pragma omp simd", f"    for (int i = 0; i < n; i++) y[i] = {fn}(x[i]);", "}"]
    src.write_text("\n".join(body) + "\n")
    report, obj = tmp_path / "vec.txt", tmp_path / "loops.o"
    subprocess.run([GCC, *FLAGS, "-ffp-contract=off", f"-I{INCLUDE}", "-c", str(src), "-o",
                    str(obj), f"-fopt-info-vec-optimized={report}"], check=True)
    text = report.read_text()
    for i, name in enumerate(names):
        line = 4 + 4 * i
        assert re.search(rf"loops\.c:{line}:\d+: optimized: loop vectorized", text), (name, text)
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm not found")
    undefined = subprocess.run([nm, "-u", str(obj)], capture_output=True, text=True,
                               check=True).stdout
    assert not re.search(r"\b(expf?|tanhf?|erff?|fmaf?)\b", undefined), undefined


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.concatenate([
        SPECIALS, rng.uniform(-12, 12, 5000).astype(F32),
        rng.uniform(-110, 110, 5000).astype(F32),
        rng.integers(0, 1 << 32, 5000, dtype=np.uint64).astype(np.uint32).view(F32),
        _runs([0.984375, 1.0, 3.9375, 88.72283935546875, 103.97208], half=50)])


def test_compiled_functions_match_numpy_and_scipy() -> None:
    f = fusejit.jit(lambda x: (np.exp(x), np.tanh(x), sc.erf(x), sc.expit(x)))
    x = _inputs()
    with np.errstate(all="ignore"):
        want = (np.exp(x), np.tanh(x), sc.erf(x), sc.expit(x))
    got = f(x)
    assert_same(got, want, atol=SUBNORMAL_ULPS)
    for g, w in zip(got, want):  # NaN, inf, zeros and their signs exactly
        special = ~np.isfinite(w) | (w == 0)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(g[special & ~np.isnan(w)], w[special & ~np.isnan(w)])
        np.testing.assert_array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0]))


def test_subnormal_results_and_signed_zeros() -> None:
    f = fusejit.jit(lambda x: (np.exp(x), np.tanh(x), sc.erf(x), sc.expit(x)))
    x = np.array([-0.0, 0.0, -1e-45, 1e-45, -3e-39, 3e-39, -87.5, -100.0, -103.9, -103.98,
                  -88.7, -88.72283, -88.722839], F32)
    got = f(x)
    with np.errstate(all="ignore"):
        want = (np.exp(x), np.tanh(x), sc.erf(x), sc.expit(x))
    assert_same(got, want, atol=SUBNORMAL_ULPS)
    e, t, r, s = got
    assert e[7] != 0 and e[7] < 1.2e-38 and e[9] == 0  # subnormal e^-100, e^-103.98 -> 0
    np.testing.assert_array_equal(t.view(np.uint32)[:6], x.view(np.uint32)[:6])  # tanh(x) = x
    assert np.signbit(r[0]) and not np.signbit(r[1]) and np.signbit(t[0])


def test_float64_is_unchanged() -> None:
    f = fusejit.jit(lambda x: (np.exp(x), np.tanh(x), sc.erf(x), sc.expit(x)))
    with np.errstate(invalid="ignore"):  # signalling NaNs among the random bit patterns
        x = _inputs().astype(np.float64)
    with np.errstate(all="ignore"):
        want = (np.exp(x), np.tanh(x), sc.erf(x), sc.expit(x))
    assert_same(f(x), want)


def test_renderers_pick_the_vectorisable_float32_functions() -> None:
    from fusejit.frontend.ops import OPS

    for op, fn in (("exp", "fj_exp_f32"), ("tanh", "fj_tanh_f32"), ("erf", "fj_erf_f32")):
        assert OPS[op].c(["f32"], "f32") == fn + "({0})"
        assert fn not in OPS[op].c(["f64"], "f64")
