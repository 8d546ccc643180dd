"""fusejit's own float32 exp, tanh, erf and log (codegen/include/fj_vmath_f32.h), the tile
functions exp, tanh, erf and log of codegen/include/fj_vtile.h (AVX-512 and AVX2+FMA vector code;
loops over the scalar functions without FMA), and np.power of floats (codegen/include/fj_vpow.h).

Checks, in C, for each x86-64 target (the host's -march=native, x86-64-v3 = AVX2+FMA, and
baseline x86-64 = SSE2, where the fj_vm_* functions are libm's): accuracy (<= 2 ULP against
double libm; power <= 0.51), special values, exact oddness and monotonicity (exp, tanh, log, odd
powers; erf nearly) on a sample (2^20 random bit patterns, special values, and runs of
consecutive floats around every threshold of each function), via benchmarks/vmath_accuracy.c
built with -DFJ_SAMPLED (without it, the same file checks all 2^32 inputs: see its header); which
loops vectorise with no calls left in them, per target; and, end to end, that compiled NumPy
functions using them match NumPy / SciPy, NaN, infinities, signed zeros and subnormals included,
and power's special values (every pair of special bases and exponents) exactly.
"""

from __future__ import annotations

import functools
import platform
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.special as sc
from conftest import MARCH, assert_same

import fusejit
from fusejit.runtime.targets import missing_features

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "codegen" / "include"
CHECKER = ROOT / "benchmarks" / "vmath_accuracy.c"
GCC = shutil.which("gcc")
FLAGS = ["-O3", "-fopenmp", "-fno-math-errno", "-fwrapv", "-std=gnu11"]
FUNCS = ("exp", "tanh", "erf", "log", "exp_tile", "tanh_tile", "erf_tile", "log_tile",
         "pow3", "powm2", "pow7", "powr3", "pow25", "powm15")
# The targets every test in C runs on: what the suite builds for (FUSEJIT_MARCH, default native),
# AVX2+FMA and SSE2.
TARGETS = tuple(dict.fromkeys((MARCH, "x86-64-v3", "x86-64")))
# glibc's scalar tanhf (what fj_vm_tanh_f32 is without FMA) is a 2.16-ULP function.
LIBM_MAX_ULP = 2.5
F32 = np.float32
# Subnormal results carry fewer bits: allow them 2 ULP (2^-149 each) in absolute terms.
SUBNORMAL_ULPS = 2 * 2.0 ** -149

needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc not found on PATH")


@functools.cache
def _macros(march: str) -> str:
    """gcc's predefined macros for `-march=march` ("" when gcc does not know the target)."""
    res = subprocess.run([GCC, f"-march={march}", "-dM", "-E", "-x", "c", "/dev/null"],
                         capture_output=True, text=True)
    return res.stdout if res.returncode == 0 else ""


def _target(march: str) -> list[str]:
    """-march=march, or a skip where this machine or compiler cannot build or run it."""
    if march != "native" and platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the targets are x86-64 levels")
    if not _macros(march):
        pytest.skip(f"gcc does not know -march={march}")
    if march != "native" and missing_features(march):
        pytest.skip(f"this CPU cannot run -march={march}: no {missing_features(march)}")
    return [f"-march={march}"]


def _fast_fma(march: str = MARCH) -> bool:
    """Whether gcc targets FMA there (otherwise the header falls back to libm)."""
    return "__FP_FAST_FMAF" in _macros(march)


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
              9.0109, 87.33654, 88.72283935546875, 89.0, 103.97208, 104.0,
              # interval ends of fj_vtile.h's AVX2 tables (tanh, erf; log's m: 0.75 .. 1.5)
              0.0625, 0.125, 0.25, 0.375, 0.75, 0.8125, 0.875, 0.9375, 1.125, 1.25, 1.375, 1.5,
              3.0, 4.0, 8.0, 9.125]


def _sample() -> np.ndarray:
    rng = np.random.default_rng(2024)
    bits = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(F32)
    sorted_ranges = [np.sort(rng.uniform(-lim, lim, 1 << 15)).astype(F32)
                     for lim in (1.5, 5.0, 12.0, 110.0)]
    return np.concatenate([SPECIALS, bits, *sorted_ranges, _runs(THRESHOLDS)])


def _check(tmp_path: Path, extra: list[str]) -> dict[str, dict[str, float]]:
    exe = tmp_path / "vmath_check"
    cmd = [GCC, *FLAGS, *extra, "-DFJ_SAMPLED", f"-DFJ_MAX_ULP={LIBM_MAX_ULP}", f"-I{INCLUDE}",
           str(CHECKER), "-lm", "-o", str(exe)]
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
@pytest.mark.parametrize("march", TARGETS)
@pytest.mark.parametrize("contract", ["off", "fast"])
def test_sampled_accuracy_specials_oddness_monotonicity(tmp_path: Path, contract: str,
                                                        march: str) -> None:
    """<= 2 ULP (power: 0.51, computed in double), exact specials, exact oddness, monotone
    (erf: nearly; exhaustively 11403 violations in 2^31 inputs, libmvec's erff 3449752); with
    and without FMA contraction (jit(fastmath=True) compiles with -ffp-contract=fast)."""
    fma = _fast_fma(march)
    results = _check(tmp_path, [*_target(march), f"-ffp-contract={contract}"])
    for name, r in results.items():
        assert r["inputs"] > 1 << 20
        bound = 0.51 if name.startswith("pow") else (2.0 if fma else LIBM_MAX_ULP)
        assert r["max_ulp"] <= bound, (name, march, r)
        assert r["special_mismatch"] == 0, (name, r)
        assert r["odd_mismatch"] == 0, (name, r)
        if name.startswith("erf"):
            assert r["monotonic_violations"] <= r["inputs"] * 1e-3, (name, r)
        else:
            assert r["monotonic_violations"] == 0, (name, r)


# Each loop: its C body over x[i] (and e[i]: an exponent read from memory), and the predefined
# macro of the ISA feature it needs to vectorise.  Without FMA the fj_vm_* are libm calls (not
# vectorised unless libmvec is linked), and so is fj_pow_f64; power's integer path is plain
# double arithmetic and vectorises with SSE2, its general path needs SSE4.1's blends.
_LOOPS = {
    "exp": ("fj_vm_exp_f32(x[i])", "__FP_FAST_FMAF"),
    "tanh": ("fj_vm_tanh_f32(x[i])", "__FP_FAST_FMAF"),
    "erf": ("fj_vm_erf_f32(x[i])", "__FP_FAST_FMAF"),
    "log": ("fj_vm_log_f32(x[i])", "__FP_FAST_FMAF"),
    "pow3": ("fj_pow_f32(x[i], 3.0f)", "__SSE2__"),
    "powm2": ("fj_pow_f32(x[i], -2.0f)", "__SSE2__"),
    "powxy": ("fj_pow_f32(x[i], e[i])", "__SSE4_1__"),
    "pow25": ("fj_pow_f32(x[i], 2.5f)", "__SSE4_1__"),
    "pow3_f64": ("(float)fj_pow_f64((double)x[i], 3.0)", "__FP_FAST_FMA"),
}
_CALLS = r"\b(expf?|tanhf?|erff?|logf?|powf?|fmaf?)\b"


@needs_gcc
@pytest.mark.parametrize("march", TARGETS)
def test_loops_vectorise_without_calls(tmp_path: Path, march: str) -> None:
    """Per target: the loops that must vectorise do, and where all do, nothing is called (no
    libm, no fma)."""
    flags = _target(march)
    src = tmp_path / "loops.c"
    body = ['#include "fj_vmath_f32.h"', '#include "fj_vpow.h"']
    lines: dict[str, int] = {}
    for name, (expr, _) in _LOOPS.items():
        body += [f"void loop_{name}(const float *restrict x, const float *restrict e, "
                 "float *restrict y, int n) {", "    (void)e;", "#pragma omp simd"]
        lines[name] = len(body) + 1
        body += [f"    for (int i = 0; i < n; i++) y[i] = {expr};", "}"]
    src.write_text("\n".join(body) + "\n")
    report, obj = tmp_path / "vec.txt", tmp_path / "loops.o"
    subprocess.run([GCC, *FLAGS, *flags, "-ffp-contract=off", f"-I{INCLUDE}", "-c", str(src),
                    "-o", str(obj), f"-fopt-info-vec-optimized={report}"], check=True)
    text = report.read_text()
    macros = _macros(march).split()
    want = {n for n, (_, feature) in _LOOPS.items() if feature in macros}
    got = {n for n, line in lines.items()
           if re.search(rf"loops\.c:{line}:\d+: optimized: loop vectorized", text)}
    assert want <= got, (march, sorted(want - got), text)
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm not found")
    if want == set(_LOOPS):
        undefined = subprocess.run([nm, "-u", str(obj)], capture_output=True, text=True,
                                   check=True).stdout
        assert not re.search(_CALLS, undefined), undefined


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

    for op, fn in (("exp", "fj_exp_f32"), ("tanh", "fj_tanh_f32"), ("erf", "fj_erf_f32"),
                   ("log", "fj_log_f32")):
        assert OPS[op].c(["f32"], "f32") == fn + "({0})"
        assert fn not in OPS[op].c(["f64"], "f64")
    assert OPS["power"].c(["f32", "f32"], "f32") == "fj_pow_f32({0}, {1})"
    assert OPS["power"].c(["f64", "f64"], "f64") == "fj_pow_f64({0}, {1})"
    assert OPS["power"].c(["i32", "i32"], "i32") == "fj_power_i32({0}, {1})"


# --- np.power ------------------------------------------------------------------------------

POW_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0,
                2.5, -2.5, 1e-45, -1e-45, 1e-40, 3e38, -3e38, 1e30, -1e30, 1e-30, 16777216.0,
                16777217.0, -16777216.0, 33554432.0, 7.0, -7.0, 0.75, 1.0000001, 0.99999994]


def _ulps_from_double(got: np.ndarray, x: np.ndarray, y: np.ndarray | float) -> np.ndarray:
    """|got - x^y| in float32 ULPs of the double-precision result (2^-149 below 2^-126)."""
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), np.asarray(y, np.float64))
        ulp = np.exp2(np.maximum(np.floor(np.log2(np.abs(ref))), -126.0) - 23)
        return np.abs(got.astype(np.float64) - ref) / ulp


def _same_specials(got: np.ndarray, want: np.ndarray) -> None:
    """NaN where NumPy has NaN; infinities and zeros (with their signs) exactly."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    exact = ~np.isnan(want) & (np.isinf(want) | (want == 0))
    np.testing.assert_array_equal(got[exact].view(np.uint32), want[exact].view(np.uint32))


def test_power_every_special_pair_matches_numpy() -> None:
    """Array exponents (fj_pow_f32's general path): C99/NumPy's table of special cases for every
    pair of special bases and exponents, the finite results within 0.51 ULP of x^y."""
    sp = np.array(POW_SPECIALS, F32)
    x, y = (a.ravel() for a in np.meshgrid(sp, sp))
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    got = fusejit.jit(lambda a, b: a ** b)(x, y)
    _same_specials(got, want)
    finite = np.isfinite(want) & (want != 0)
    assert _ulps_from_double(got[finite], x[finite], y[finite]).max() <= 0.51


@pytest.mark.parametrize("e", [3, -3, 2, 0, -1, 7, 0.5, 2.5, -1.5, 64, 65, -64, 1e-3, 24.5])
def test_power_by_a_scalar_matches_numpy(e: float) -> None:
    """`x ** e` for a constant e (integer ones through fj_pow_f32's integer path): NumPy's
    specials exactly, the rest within 0.51 ULP of x^e, and NumPy's own (a pow/powf or its SIMD
    version) within 1 ULP of that."""
    rng = np.random.default_rng(11)
    x = np.concatenate([np.array(POW_SPECIALS, F32), (rng.standard_normal(20000) * 3).astype(F32),
                        rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32)
                        .view(F32)])
    with np.errstate(all="ignore"):
        want = x ** e
        got = fusejit.jit(lambda a: a ** e)(x)
    assert got.dtype == want.dtype == np.float32
    _same_specials(got, want)
    finite = np.isfinite(want) & (want != 0)
    assert _ulps_from_double(got[finite], x[finite], F32(e)).max() <= 0.51
    assert _ulps_from_double(want[finite], x[finite], F32(e)).max() <= 1.5  # NumPy's own


def test_power_scalar_exponent_array_and_fused_gelu() -> None:
    """A scalar exponent passed in, and x ** 3 inside a fused (staged) kernel, as gelu writes it."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(5000) * 3).astype(F32)
    got = fusejit.jit(lambda a, b: a ** b)(x, F32(3.0))
    _same_specials(got, x ** F32(3.0))
    assert _ulps_from_double(got, x, 3.0).max() <= 0.51

    def gelu(v):
        return 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))

    got, want = fusejit.jit(gelu)(x), gelu(x)
    # 1 + tanh(..) cancels for negative x: a few ULPs of 1 (tanh's), times 0.5 |x|
    tol = 0.5 * np.abs(x) * 4 * 2.0 ** -24 + 4e-7 * np.abs(want)
    assert (np.abs(got.astype(np.float64) - want) <= tol).all()


def _pow_by(e: float):
    """jit(x ** e) for this e."""
    return fusejit.jit(lambda a: a ** e)


def test_float64_and_integer_power() -> None:
    """float64 x ** 3 (double-double in fj_pow_f64) within 0.51 ULP with NumPy's specials, other
    float64 exponents through pow, and integer power unchanged (exact, wrap-around)."""
    rng = np.random.default_rng(3)
    x = np.concatenate([np.array(POW_SPECIALS), rng.standard_normal(20000) * 3,
                        rng.integers(0, 1 << 64, 20000, dtype=np.uint64).view(np.float64)])
    with np.errstate(all="ignore"):
        for e in (3, -3, 5, 2.5):
            got, want = _pow_by(e)(x), x ** e
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            exact = ~np.isnan(want) & (np.isinf(want) | (want == 0))
            np.testing.assert_array_equal(got[exact], want[exact])
            np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]))
            fin = np.isfinite(want) & (want != 0) & (np.abs(want) > 1e-300)
            assert (np.abs(got[fin] - want[fin]) <= np.spacing(np.abs(want[fin]))).all(), e
    i = rng.integers(-50, 50, 1000).astype(np.int32)
    for e in (3, 7):
        assert_same(_pow_by(e)(i), i ** e)


def test_staged_and_unstaged_agree_on_fma_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Built for AVX2+FMA (x86-64-v3) or AVX-512, a staged kernel calls fj_vtile.h's tile
    functions: exp gives fj_vm_exp_f32's bits (what the unstaged kernel runs), tanh, erf and log
    other algorithms within their documented ULP bounds (fj_vtile.h)."""
    from conftest import target_features

    from fusejit.codegen import c as c_backend

    features = target_features()
    if "avx512f" not in features and not {"avx2", "fma"} <= features:
        pytest.skip("for targets with fj_vtile.h's tile functions (AVX2+FMA or AVX-512)")

    def black_scholes(s, k, t, r, v):
        d1 = (np.log(s / k) + (r + 0.5 * v ** 2) * t) / (v * np.sqrt(t))
        d2 = d1 - v * np.sqrt(t)
        nd1, nd2 = 0.5 * (1 + sc.erf(d1 / np.sqrt(2))), 0.5 * (1 + sc.erf(d2 / np.sqrt(2)))
        return (s * nd1 - k * np.exp(-r * t) * nd2, np.tanh(t * 3 - 4.5) * sc.erf(v * 2 - 1),
                np.exp(t * 40 - 60) * np.exp(-v))

    rng = np.random.default_rng(2)
    args = [rng.uniform(lo, hi, 1000).astype(F32) for lo, hi in
            ((10, 200), (10, 200), (0.1, 3), (0.0, 0.1), (0.05, 0.9))]
    staged = fusejit.jit(black_scholes)(*args)
    monkeypatch.setattr(c_backend, "plan", lambda body, libmvec, vtile: None)
    plain = fusejit.jit(black_scholes)(*args)
    assert_same(staged[0], plain[0], rtol=2e-6, atol=1e-4)  # prices around 100: cancellation
    assert_same(staged[1], plain[1], rtol=1e-6, atol=0)  # tanh, erf: about 1 ULP each way
    np.testing.assert_array_equal(staged[2], plain[2])  # exp only: the same bits
