"""C-level NumPy semantics: tests for codegen/include/fj_scalar.h and fj_vmath.h.

This module owns the checks that the C helpers the code generator emits calls
to reproduce NumPy (integers bit for bit, floats within 2 ULP with NaN
positions and signed zeros matching) and that their loops auto-vectorise,
including libm calls through glibc's libmvec (probe_libmvec.c decides whether
that is usable).  Each C library is compiled once per module with gcc and the
kernel flags, and loaded with cffi.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cffi
import numpy as np
import pytest
import scipy.special
from conftest import MARCH_FLAG, examples, target_features
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

INCLUDE_DIR = Path(__file__).resolve().parent.parent / "codegen" / "include"
CFLAGS = ["-O3", MARCH_FLAG, "-fopenmp", "-fno-math-errno", "-fwrapv", "-fno-trapping-math"]
GCC = shutil.which("gcc")

INT_TYPES: dict[str, tuple[str, type[np.integer]]] = {
    "i8": ("int8_t", np.int8),
    "i16": ("int16_t", np.int16),
    "i32": ("int32_t", np.int32),
    "i64": ("int64_t", np.int64),
    "u8": ("uint8_t", np.uint8),
    "u16": ("uint16_t", np.uint16),
    "u32": ("uint32_t", np.uint32),
    "u64": ("uint64_t", np.uint64),
}
FLOAT_TYPES: dict[str, tuple[str, type[np.floating]]] = {
    "f32": ("float", np.float32),
    "f64": ("double", np.float64),
}
ALL_TYPES = {**INT_TYPES, **FLOAT_TYPES}


def _np_power_int(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.power for ints; negative exponents (NumPy raises) give 0 like fj_power_*."""
    neg = b < 0
    return np.where(neg, 0, np.power(a, np.where(neg, 0, b))).astype(a.dtype)


INT_BINARY: dict[str, Callable[..., np.ndarray]] = {
    "floordiv": np.floor_divide,
    "remainder": np.remainder,
    "fmod": np.fmod,
    "power": _np_power_int,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
    "maximum": np.maximum,
    "minimum": np.minimum,
}
INT_UNARY: dict[str, Callable[..., np.ndarray]] = {
    "abs": np.abs,
    "sign": np.sign,
    "square": np.square,
    "reciprocal": np.reciprocal,
}
FLOAT_BINARY: dict[str, Callable[..., np.ndarray]] = {
    "floordiv": np.floor_divide,
    "remainder": np.remainder,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "logaddexp": np.logaddexp,
    "logaddexp2": np.logaddexp2,
    "heaviside": np.heaviside,
}
FLOAT_UNARY: dict[str, Callable[..., np.ndarray]] = {
    "sign": np.sign,
    "expit": scipy.special.expit,
    "rint": np.rint,
    "spacing": np.spacing,
    "square": np.square,
    "reciprocal": np.reciprocal,
    "deg2rad": np.deg2rad,
    "rad2deg": np.rad2deg,
}
BOOL_OPS: dict[str, tuple[int, Callable[..., np.ndarray]]] = {
    "maximum": (2, np.maximum),
    "minimum": (2, np.minimum),
    "abs": (1, np.abs),
}

# fj_scalar.h loops that are NOT expected to vectorise on x86_64: 64-bit
# integer division (no SIMD divide), identity abs (becomes memcpy), and float
# ops calling libm fmod/exp/log1p (no libmvec in the plain library).
NOT_VECTORISED = {
    *(f"{op}_{s}" for op in ("floordiv", "remainder", "fmod") for s in ("i64", "u64")),
    *(f"abs_{s}" for s in ("u8", "u16", "u32", "u64", "b")),
    *(f"{op}_{s}" for op in ("floordiv", "remainder") for s in FLOAT_TYPES),
    *(f"{op}_{s}" for op in ("logaddexp", "logaddexp2", "expit") for s in FLOAT_TYPES),
}

# Loops that are legitimately scalar on a target without the instructions they need.
_SHIFTS = ("lshift", "rshift")
_V3_SCALAR = {  # AVX2 has no variable 8/16-bit right shift; AVX-512BW's vpsravw widens them
    f"rshift_{s}" for s in ("i8", "i16")}
_V2_SCALAR = {  # SSE4.2: no variable shifts at all, no 64-bit multiply or min/max
    *(f"{op}_{s}" for op in _SHIFTS for s in INT_TYPES),
    *(f"{op}_{s}" for op in ("power", "square") for s in ("i64", "u64")), "reciprocal_i64"}
_V1_SCALAR = {  # SSE2 adds: no integer divide-by-multiply for narrow types, no 64-bit
    # compares, no roundps (rint calls libm)
    *(f"{op}_{s}" for op in ("floordiv", "remainder", "fmod")
      for s in ("i8", "i16", "i32", "u8", "u16", "u32")),
    *(f"{op}_{s}" for op in ("maximum", "minimum", "sign") for s in ("i64", "u64")),
    "abs_i64", "reciprocal_u64", "rint_f32", "rint_f64"}


def not_vectorised_on_target(features: frozenset[str]) -> set[str]:
    """The loops gcc cannot vectorise for a target with these CPU features (empty on
    AVX-512BW)."""
    out: set[str] = set()
    if "avx512bw" not in features:
        out |= _V3_SCALAR
    if "avx2" not in features:
        out |= _V2_SCALAR
    if "sse4_1" not in features:
        out |= _V1_SCALAR
    return out


# libm functions fj_vmath.h declares (name, arity, NumPy/SciPy reference,
# f32 range, f64 range).
VMATH: list[tuple[str, int, Callable[..., np.ndarray], tuple[float, float]]] = [
    ("exp", 1, np.exp, (-100.0, 100.0)),
    ("exp2", 1, np.exp2, (-140.0, 130.0)),
    ("exp10", 1, lambda x: np.power(x.dtype.type(10), x), (-40.0, 40.0)),
    ("expm1", 1, np.expm1, (-20.0, 90.0)),
    ("log", 1, np.log, (0.0, 1e6)),
    ("log2", 1, np.log2, (0.0, 1e6)),
    ("log10", 1, np.log10, (0.0, 1e6)),
    ("log1p", 1, np.log1p, (-1.0, 1e6)),
    ("sin", 1, np.sin, (-1e4, 1e4)),
    ("cos", 1, np.cos, (-1e4, 1e4)),
    ("tan", 1, np.tan, (-1e4, 1e4)),
    ("asin", 1, np.arcsin, (-1.0, 1.0)),
    ("acos", 1, np.arccos, (-1.0, 1.0)),
    ("atan", 1, np.arctan, (-100.0, 100.0)),
    ("sinh", 1, np.sinh, (-90.0, 90.0)),
    ("cosh", 1, np.cosh, (-90.0, 90.0)),
    ("tanh", 1, np.tanh, (-10.0, 10.0)),
    ("asinh", 1, np.arcsinh, (-1e6, 1e6)),
    ("acosh", 1, np.arccosh, (1.0, 1e6)),
    ("atanh", 1, np.arctanh, (-1.0, 1.0)),
    ("cbrt", 1, np.cbrt, (-1e6, 1e6)),
    ("erf", 1, scipy.special.erf, (-5.0, 5.0)),
    ("erfc", 1, scipy.special.erfc, (-5.0, 11.0)),
    ("atan2", 2, np.arctan2, (-100.0, 100.0)),
    ("hypot", 2, np.hypot, (-1e6, 1e6)),
    ("pow", 2, np.power, (0.0, 10.0)),
]
# Max error of the libmvec variants measured over ~1.2e7 arguments per
# function (fj_vmath.h's table) is 4.0 ULP; the tests allow one more.
VMATH_ULPS = 5


# --------------------------------------------------------------------------
# building the C libraries
# --------------------------------------------------------------------------


@dataclass
class CLib:
    """A compiled test library: cffi handle plus what gcc said about it."""

    ffi: cffi.FFI
    lib: Any
    so_path: Path
    vec_report: str
    loop_lines: dict[str, int]

    def vectorised(self, name: str) -> bool:
        line = self.loop_lines[name]
        return (
            re.search(rf"\.c:{line}:\d+: optimized: loop vectorized", self.vec_report) is not None
        )

    def call(self, name: str, ctype: str, *args: np.ndarray) -> np.ndarray:
        arrays = [np.ascontiguousarray(a) for a in args]
        out = np.empty_like(arrays[0])
        ptrs = [self.ffi.from_buffer(f"{ctype}[]", a) for a in arrays]
        optr = self.ffi.from_buffer(f"{ctype}[]", out, require_writable=True)
        getattr(self.lib, f"t_{name}")(optr, *ptrs, len(out))
        return out


def _loop(name: str, ctype: str, arity: int, expr: str) -> tuple[str, str]:
    """C source line and prototype of `out[i] = expr` over arity input arrays."""
    params = ", ".join(f"const {ctype} *restrict {v}" for v in "ab"[:arity])
    proto = f"void t_{name}({ctype} *restrict o, {params}, int64_t n)"
    body = f"{proto} {{ for (int64_t i = 0; i < n; i++) o[i] = {expr}; }}"
    return body, proto + ";"


def _build(
    tmp: Path,
    stem: str,
    loops: list[tuple[str, str, int, str]],
    defines: list[str],
    libs: list[str],
) -> CLib:
    header = [
        "#define _GNU_SOURCE",
        "#include <stdint.h>",
        "#include <math.h>",
        '#include "fj_vmath.h"',
        '#include "fj_scalar.h"',
    ]
    src_lines = list(header)
    protos: list[str] = []
    loop_lines: dict[str, int] = {}
    for name, ctype, arity, expr in loops:
        body, proto = _loop(name, ctype, arity, expr)
        src_lines.append(body)
        loop_lines[name] = len(src_lines)
        protos.append(proto)
    src = tmp / f"{stem}.c"
    src.write_text("\n".join(src_lines) + "\n")
    so = tmp / f"lib{stem}.so"
    report = tmp / f"{stem}.vec.txt"
    assert GCC is not None
    cmd = [
        GCC,
        *CFLAGS,
        *defines,
        "-shared",
        "-fPIC",
        f"-I{INCLUDE_DIR}",
        "-Werror=implicit-function-declaration",
        f"-fopt-info-vec-optimized={report}",
        "-o",
        str(so),
        str(src),
        *libs,
    ]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"
    ffi = cffi.FFI()
    ffi.cdef("\n".join(protos))
    return CLib(ffi, ffi.dlopen(str(so)), so, report.read_text(), loop_lines)


def _scalar_loops() -> list[tuple[str, str, int, str]]:
    loops: list[tuple[str, str, int, str]] = []
    for suf, (ctype, _) in INT_TYPES.items():
        loops += [(f"{op}_{suf}", ctype, 2, f"fj_{op}_{suf}(a[i], b[i])") for op in INT_BINARY]
        loops += [(f"{op}_{suf}", ctype, 1, f"fj_{op}_{suf}(a[i])") for op in INT_UNARY]
    for suf, (ctype, _) in FLOAT_TYPES.items():
        loops += [(f"{op}_{suf}", ctype, 2, f"fj_{op}_{suf}(a[i], b[i])") for op in FLOAT_BINARY]
        loops += [(f"{op}_{suf}", ctype, 1, f"fj_{op}_{suf}(a[i])") for op in FLOAT_UNARY]
    for op, (arity, _) in BOOL_OPS.items():
        args = "a[i], b[i]" if arity == 2 else "a[i]"
        loops.append((f"{op}_b", "uint8_t", arity, f"fj_{op}_b({args})"))
    return loops


def _vmath_loops() -> list[tuple[str, str, int, str]]:
    loops: list[tuple[str, str, int, str]] = []
    for name, arity, _, _ in VMATH:
        args = "a[i], b[i]" if arity == 2 else "a[i]"
        loops.append((f"{name}_f32", "float", arity, f"{name}f({args})"))
        loops.append((f"{name}_f64", "double", arity, f"{name}({args})"))
        # long double libm as the reference for the f64 variants
        loops.append((f"{name}_ref", "long double", arity, f"{name}l({args})"))
    for suf, (ctype, _) in FLOAT_TYPES.items():
        loops += [
            (f"{op}_{suf}", ctype, 2, f"fj_{op}_{suf}(a[i], b[i])")
            for op in ("logaddexp", "logaddexp2")
        ]
        loops.append((f"expit_{suf}", ctype, 1, f"fj_expit_{suf}(a[i])"))
        loops.append((f"sincos_{suf}", ctype, 1, f"fj_sin_{suf}(a[i]) + fj_cos_{suf}(a[i])"))
    return loops


@pytest.fixture(scope="module")
def clib(tmp_path_factory: pytest.TempPathFactory) -> CLib:
    if GCC is None:
        pytest.skip("gcc not found on PATH")
    return _build(tmp_path_factory.mktemp("fj_scalar"), "fjscalar", _scalar_loops(), [], ["-lm"])


@pytest.fixture(scope="module")
def vlib(tmp_path_factory: pytest.TempPathFactory) -> CLib:
    if GCC is None:
        pytest.skip("gcc not found on PATH")
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("libmvec through __attribute__((simd)) is only validated on x86_64")
    tmp = tmp_path_factory.mktemp("fj_vmath")
    exe = tmp / "probe"
    cmd = [
        GCC,
        *CFLAGS,
        "-DFJ_LIBMVEC",
        str(INCLUDE_DIR / "probe_libmvec.c"),
        "-lmvec",
        "-lm",
        "-o",
        str(exe),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"libmvec unusable (probe does not build): {res.stderr.strip()[-300:]}")
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    if run.returncode != 0:
        pytest.skip(f"libmvec unusable (probe run failed): {run.stderr.strip()[-300:]}")
    return _build(tmp, "fjvmath", _vmath_loops(), ["-DFJ_LIBMVEC"], ["-lmvec", "-lm"])


# --------------------------------------------------------------------------
# inputs and comparisons
# --------------------------------------------------------------------------


def _seed(*parts: str) -> int:
    """A per-test seed that does not depend on PYTHONHASHSEED."""
    return zlib.crc32("/".join(parts).encode())


def _int_edges(dt: type[np.integer]) -> np.ndarray:
    info = np.iinfo(dt)
    bits = info.bits
    cands = {
        0,
        1,
        2,
        3,
        5,
        7,
        10,
        100,
        bits - 1,
        bits,
        bits + 1,
        2 * bits,
        31,
        32,
        33,
        63,
        64,
        65,
        127,
        128,
        255,
        256,
        info.max,
        info.max - 1,
        info.max // 2,
        info.max // 2 + 1,
    }
    cands |= {-c for c in cands} | {info.min, info.min + 1, info.min // 2}
    return np.array(sorted(c for c in cands if info.min <= c <= info.max), dtype=dt)


def _int_pairs(dt: type[np.integer], seed: int) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dt)
    if info.bits == 8:  # exhaustive
        v = np.arange(info.min, info.max + 1).astype(dt)
        return np.repeat(v, v.size), np.tile(v, v.size)
    rng = np.random.default_rng(seed)
    e = _int_edges(dt)
    n = 20000
    full = rng.integers(info.min, info.max, size=(4, n), dtype=dt, endpoint=True)
    small = rng.integers(
        max(info.min, -80), min(info.max, 80), size=(2, n), dtype=dt, endpoint=True
    )
    mixed_e = rng.choice(e, size=(2, n))
    a = np.concatenate([np.repeat(e, e.size), full[0], full[2], small[0], mixed_e[0], full[3]])
    b = np.concatenate([np.tile(e, e.size), full[1], small[1], small[0][::-1], full[3], mixed_e[1]])
    return a.astype(dt), b.astype(dt)


def _float_edges(dt: type[np.floating]) -> np.ndarray:
    fi = np.finfo(dt)
    base = [
        0.0,
        1.0,
        0.5,
        1.5,
        2.5,
        3.0,
        7.0,
        0.1,
        1e-3,
        100.0,
        1e10,
        1e30,
        1e300,
        180.0,
        np.pi,
        0.49999999999999994,
        88.7,
        89.0,
        104.0,
        709.0,
        710.0,
        745.0,
        2.0**23 + 1,
        2.0**52 + 1,
        float(fi.max),
        float(fi.tiny),
        float(fi.smallest_subnormal),
        3 * float(fi.smallest_subnormal),
        np.inf,
        np.nan,
    ]
    with np.errstate(over="ignore"):
        v = np.array(base, dtype=np.float64).astype(dt)
    return np.concatenate([v, -v])


def _float_randoms(dt: type[np.floating], n: int, rng: np.random.Generator) -> np.ndarray:
    ibits = np.uint32 if dt is np.float32 else np.uint64
    bits = rng.integers(0, np.iinfo(ibits).max, size=n, dtype=ibits, endpoint=True).view(dt)
    logu = np.exp2(rng.uniform(-30, 30, n)) * rng.choice([-1.0, 1.0], n)
    normal = rng.standard_normal(n) * 10
    halves = np.round(rng.uniform(-20, 20, n) * 2) / 2
    return np.concatenate([bits, logu.astype(dt), normal.astype(dt), halves.astype(dt)])


def _float_pairs(dt: type[np.floating], seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    e = _float_edges(dt)
    r1, r2 = _float_randoms(dt, 5000, rng), _float_randoms(dt, 5000, rng)
    with np.errstate(all="ignore"):  # inf + -inf in the near-r1 partners
        near = r1 + rng.standard_normal(r1.size).astype(dt)
    a = np.concatenate([np.repeat(e, e.size), r1, r1, rng.choice(e, r2.size)])
    b = np.concatenate([np.tile(e, e.size), r2, near, r2])
    return a.astype(dt), b.astype(dt)


def _ordered(x: np.ndarray) -> np.ndarray:
    """Map floats to integers whose difference is the ULP distance (+-0 -> 0)."""
    if x.dtype == np.float32:
        i = x.view(np.int32).astype(np.int64)
        return np.where(i < 0, np.int64(np.iinfo(np.int32).min) - i, i)
    i = x.view(np.int64)
    return np.where(i < 0, np.iinfo(np.int64).min - i, i)


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in ULP between finite-or-infinite floats of the same dtype."""
    return np.abs(_ordered(got).astype(np.longdouble) - _ordered(want).astype(np.longdouble))


def assert_floats_match(
    got: np.ndarray,
    want: np.ndarray,
    ulps: float,
    what: str,
    inputs: tuple[np.ndarray, ...],
    atol: np.ndarray | None = None,
) -> None:
    """NaN positions equal, infinities and zeros (with sign) exact, else within ulps.

    atol optionally gives a per-element absolute tolerance accepted as well.
    """
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    both = ~nan_g & ~nan_w
    dist = np.zeros(got.shape, dtype=np.longdouble)
    dist[both] = ulp_distance(got[both], want[both])
    exact = both & ((want == 0) | np.isinf(want))
    bad = nan_g != nan_w
    bad |= exact & ((got != want) | (np.signbit(got) != np.signbit(want)))
    close = dist <= ulps
    if atol is not None:
        with np.errstate(invalid="ignore"):
            close |= np.abs(got.astype(np.float64) - want.astype(np.float64)) <= atol
    bad |= both & ~exact & ~close
    if bad.any():
        idx = np.flatnonzero(bad)[:8]
        rows = [
            f"  in={tuple(x[i] for x in inputs)} got={got[i]!r} want={want[i]!r} ulp={dist[i]}"
            for i in idx
        ]
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} differ\n" + "\n".join(rows))


def assert_ints_match(
    got: np.ndarray, want: np.ndarray, what: str, inputs: tuple[np.ndarray, ...]
) -> None:
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    bad = got != want
    if bad.any():
        idx = np.flatnonzero(bad)[:8]
        rows = [
            f"  in={tuple(int(x[i]) for x in inputs)} got={int(got[i])} want={int(want[i])}"
            for i in idx
        ]
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} differ\n" + "\n".join(rows))


def _reference(fn: Callable[..., np.ndarray], dt: type, *args: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(fn(*args)).astype(dt)


# --------------------------------------------------------------------------
# fj_scalar.h: integers
# --------------------------------------------------------------------------


@pytest.mark.parametrize("suf", INT_TYPES)
@pytest.mark.parametrize("op", INT_BINARY)
def test_int_binary(clib: CLib, op: str, suf: str) -> None:
    ctype, dt = INT_TYPES[suf]
    a, b = _int_pairs(dt, seed=_seed(op, suf))
    got = clib.call(f"{op}_{suf}", ctype, a, b)
    assert_ints_match(got, _reference(INT_BINARY[op], dt, a, b), f"fj_{op}_{suf}", (a, b))


@pytest.mark.parametrize("suf", INT_TYPES)
@pytest.mark.parametrize("op", INT_UNARY)
def test_int_unary(clib: CLib, op: str, suf: str) -> None:
    ctype, dt = INT_TYPES[suf]
    info = np.iinfo(dt)
    if info.bits <= 16:
        a = np.arange(info.min, info.max + 1).astype(dt)
    else:
        rng = np.random.default_rng(7)
        a = np.concatenate(
            [_int_edges(dt), rng.integers(info.min, info.max, 50000, dtype=dt, endpoint=True)]
        )
    got = clib.call(f"{op}_{suf}", ctype, a)
    assert_ints_match(got, _reference(INT_UNARY[op], dt, a), f"fj_{op}_{suf}", (a,))


@pytest.mark.parametrize("op", BOOL_OPS)
def test_bool(clib: CLib, op: str) -> None:
    arity, fn = BOOL_OPS[op]
    a, b = np.array([0, 0, 1, 1], np.uint8), np.array([0, 1, 0, 1], np.uint8)
    args = (a, b)[:arity]
    got = clib.call(f"{op}_b", "uint8_t", *args)
    want = fn(*(x.astype(bool) for x in args)).astype(np.uint8)
    assert_ints_match(got, want, f"fj_{op}_b", args)


def test_int_documented_edges(clib: CLib) -> None:
    """The edge cases spelled out in fj_scalar.h, as literal values."""
    i64 = np.iinfo(np.int64)
    a = np.array([i64.min, i64.min, 7, -7], np.int64)
    b = np.array([-1, 0, 0, -1], np.int64)
    assert clib.call("floordiv_i64", "int64_t", a, b).tolist() == [i64.min, 0, 0, 7]
    assert clib.call("remainder_i64", "int64_t", a, b).tolist() == [0, 0, 0, 0]
    assert clib.call("abs_i64", "int64_t", a[:1]).tolist() == [i64.min]
    z = np.zeros(1, np.int32)
    assert clib.call("reciprocal_i32", "int32_t", z).tolist() == [np.iinfo(np.int32).min]
    assert clib.call("reciprocal_i16", "int16_t", z.astype(np.int16)).tolist() == [0]
    sh = np.array([-1, 7, 8, 100], np.int8)
    assert clib.call("lshift_i8", "int8_t", np.ones(4, np.int8), sh).tolist() == [0, -128, 0, 0]
    assert clib.call("rshift_i8", "int8_t", np.full(4, -5, np.int8), sh).tolist() == [
        -1,
        -1,
        -1,
        -1,
    ]


# --------------------------------------------------------------------------
# fj_scalar.h: floats
# --------------------------------------------------------------------------


def _logaddexp_atol(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """logaddexp2 = m + LOG2E*log1p(...) may be contracted into an FMA by gcc
    (-ffp-contract=fast is gcc's default), NumPy's is not: allow 2 ULP of
    the log term's scale where the result cancels towards 0."""
    if op != "logaddexp2":
        return None
    eps = float(np.finfo(a.dtype).eps)
    with np.errstate(all="ignore"):
        return 2 * eps * np.maximum(np.maximum(np.abs(a), np.abs(b)).astype(np.float64), 1.0)


@pytest.mark.parametrize("suf", FLOAT_TYPES)
@pytest.mark.parametrize("op", FLOAT_BINARY)
def test_float_binary(clib: CLib, op: str, suf: str) -> None:
    ctype, dt = FLOAT_TYPES[suf]
    a, b = _float_pairs(dt, seed=_seed(op, suf))
    got = clib.call(f"{op}_{suf}", ctype, a, b)
    want = _reference(FLOAT_BINARY[op], dt, a, b)
    assert_floats_match(got, want, 2, f"fj_{op}_{suf}", (a, b), _logaddexp_atol(op, a, b))


@pytest.mark.parametrize("suf", FLOAT_TYPES)
@pytest.mark.parametrize("op", FLOAT_UNARY)
def test_float_unary(clib: CLib, op: str, suf: str) -> None:
    ctype, dt = FLOAT_TYPES[suf]
    rng = np.random.default_rng(11)
    a = np.concatenate([_float_edges(dt), _float_randoms(dt, 20000, rng)])
    got = clib.call(f"{op}_{suf}", ctype, a)
    assert_floats_match(got, _reference(FLOAT_UNARY[op], dt, a), 2, f"fj_{op}_{suf}", (a,))


def test_float_documented_edges(clib: CLib) -> None:
    """Signed zeros and NaN handling spelled out in fj_scalar.h."""
    z, nz = np.array([0.0, -0.0]), np.array([-0.0, 0.0])
    assert np.signbit(clib.call("maximum_f64", "double", z, nz)).tolist() == [True, False]
    assert np.signbit(clib.call("minimum_f64", "double", z, nz)).tolist() == [True, False]
    assert np.signbit(clib.call("sign_f64", "double", nz)).tolist() == [False, False]
    assert np.isnan(
        clib.call("maximum_f64", "double", np.array([np.nan, 1.0]), np.array([1.0, np.nan]))
    ).all()
    fd = clib.call(
        "floordiv_f64",
        "double",
        np.array([1.0, -1.0, 0.0, -0.0]),
        np.array([0.0, np.inf, 5.0, 5.0]),
    )
    assert fd[0] == np.inf and fd[1] == -1.0 and fd[2] == 0 and np.signbit(fd[3])


# --------------------------------------------------------------------------
# hypothesis
# --------------------------------------------------------------------------


@settings(max_examples=examples(150), deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_hypothesis_int_ops(clib: CLib, data: st.DataObject) -> None:
    suf = data.draw(st.sampled_from(["i16", "i32", "i64", "u16", "u32", "u64"]))
    ctype, dt = INT_TYPES[suf]
    info = np.iinfo(dt)
    elems = st.one_of(
        st.integers(int(info.min), int(info.max)), st.sampled_from(_int_edges(dt).tolist())
    )
    n = data.draw(st.integers(1, 33))
    a = data.draw(hnp.arrays(dt, n, elements=elems))
    b = data.draw(hnp.arrays(dt, n, elements=elems))
    for op, fn in INT_BINARY.items():
        assert_ints_match(
            clib.call(f"{op}_{suf}", ctype, a, b), _reference(fn, dt, a, b), op, (a, b)
        )


@settings(max_examples=examples(150), deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_hypothesis_float_ops(clib: CLib, data: st.DataObject) -> None:
    suf = data.draw(st.sampled_from(list(FLOAT_TYPES)))
    ctype, dt = FLOAT_TYPES[suf]
    width = 32 if suf == "f32" else 64
    n = data.draw(st.integers(1, 33))
    a = data.draw(hnp.arrays(dt, n, elements=st.floats(width=width)))
    b = data.draw(hnp.arrays(dt, n, elements=st.floats(width=width)))
    for op, fn in FLOAT_BINARY.items():
        want = _reference(fn, dt, a, b)
        got = clib.call(f"{op}_{suf}", ctype, a, b)
        assert_floats_match(got, want, 2, op, (a, b), _logaddexp_atol(op, a, b))


# --------------------------------------------------------------------------
# vectorisation
# --------------------------------------------------------------------------


def test_scalar_loops_vectorise(clib: CLib) -> None:
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("vectorisation expectations are for x86_64")
    skip = NOT_VECTORISED | not_vectorised_on_target(target_features())
    missing = [n for n in clib.loop_lines if n not in skip and not clib.vectorised(n)]
    assert not missing, f"loops gcc did not vectorise: {missing}"


@pytest.mark.c_only  # gcc's vectoriser report on np.where's C rendering
@pytest.mark.parametrize("march", ["x86-64-v2", "x86-64-v3"])
def test_float_where_vectorises_with_trapping_math(tmp_path: Path, march: str) -> None:
    """A float np.where whose arm computes vectorises under the kernel flags (default
    -ftrapping-math): rendered as `c ? a : b`, gcc 12 left it scalar on x86-64-v3 (it will not
    speculate the arm's float add); fj_where_T blends both arms' bits."""
    if GCC is None or platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("needs gcc on x86_64")
    from fusejit.frontend.ops import OPS
    from fusejit.runtime.toolchain import BASE_FLAGS

    lines = ["#include <stdint.h>", '#include "fj_scalar.h"']
    for suf, (ctype, _) in FLOAT_TYPES.items():
        for cond in ("a[i] > 0", "m[i]"):  # a compare, and a stored bool array
            expr = OPS["where"].c(["b", suf, suf], suf).format(cond, "a[i] * 2 - 1", "a[i]")
            lines.append(f"void t_{suf}_{len(lines)}({ctype} *restrict o, const {ctype} "
                         f"*restrict a, const uint8_t *restrict m, int64_t n) {{ (void)m; "
                         f"for (int64_t i = 0; i < n; i++) o[i] = {expr}; }}")
    assert not any("trapping" in f for f in BASE_FLAGS)
    src, report = tmp_path / "where.c", tmp_path / "vec.txt"
    src.write_text("\n".join(lines) + "\n")
    flags = [f for f in BASE_FLAGS if f != "-shared"]
    res = subprocess.run([GCC, *flags, f"-march={march}", f"-I{INCLUDE_DIR}", "-c", str(src),
                          "-o", str(tmp_path / "where.o"), f"-fopt-info-vec-optimized={report}"],
                         capture_output=True, text=True)
    if res.returncode != 0 and "march" in res.stderr:
        pytest.skip(f"gcc does not know -march={march}")
    assert res.returncode == 0, res.stderr
    text = report.read_text()
    missing = [n for n in range(3, len(lines) + 1)
               if not re.search(rf"where\.c:{n}:\d+: optimized: loop vectorized", text)]
    assert not missing, (march, [lines[n - 1] for n in missing], text)


def test_probe_requires_flag(tmp_path: Path) -> None:
    if GCC is None:
        pytest.skip("gcc not found on PATH")
    cmd = [GCC, *CFLAGS, str(INCLUDE_DIR / "probe_libmvec.c"), "-lm", "-o", str(tmp_path / "p")]
    assert subprocess.run(cmd, capture_output=True).returncode != 0


def test_libmvec_loops_vectorise(vlib: CLib) -> None:
    for name in ("exp_f32", "tanh_f32", "log_f32"):
        assert vlib.vectorised(name), f"{name} loop not vectorised:\n{vlib.vec_report}"
    missing = [n for n in vlib.loop_lines if not n.endswith("_ref") and not vlib.vectorised(n)]
    assert not missing, f"loops gcc did not vectorise with FJ_LIBMVEC: {missing}"
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm not found")
    syms = subprocess.run(
        [nm, "-D", "--undefined-only", str(vlib.so_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for fn in ("expf", "tanhf", "logf", "exp", "sin", "cos", "powf"):
        assert re.search(rf"_ZGV[bcde]N\d+v+_{fn}\b", syms), (
            f"no libmvec variant of {fn} referenced"
        )


@pytest.mark.parametrize("suf", FLOAT_TYPES)
@pytest.mark.parametrize("entry", VMATH, ids=[v[0] for v in VMATH])
def test_libmvec_accuracy(vlib: CLib, entry: tuple[Any, ...], suf: str) -> None:
    """Vector variants vs a higher-precision reference (NumPy float64 for
    f32, glibc's long double libm for f64), within VMATH_ULPS."""
    name, arity, fn, (lo, hi) = entry
    ctype, dt = FLOAT_TYPES[suf]
    rng = np.random.default_rng(3)
    n = 4000
    args = []
    for k in range(arity):
        l2, h2 = (lo, hi) if not (name == "pow" and k == 1) else (-30.0, 30.0)
        scale = max(abs(l2), abs(h2))
        mag = scale * np.exp2(-rng.uniform(0, 40, n))
        logu = np.where((l2 < 0) & (rng.random(n) < 0.5), -mag, mag)
        vals = np.concatenate([rng.uniform(l2, h2, n), logu])
        args.append(np.concatenate([vals.astype(dt), _float_randoms(dt, n // 16, rng)]))
    if arity == 2:
        args[1] = rng.permutation(args[1])
    got = vlib.call(f"{name}_{suf}", ctype, *args)
    if suf == "f32":
        with np.errstate(invalid="ignore"):  # signalling NaNs among the random bit patterns
            wide_args = [a.astype(np.float64) for a in args]
        want = _reference(fn, dt, *wide_args)
    else:
        wide = vlib.call(f"{name}_ref", "long double", *(a.astype(np.longdouble) for a in args))
        want = _reference(lambda v: v, dt, wide)
    assert_floats_match(got, want, VMATH_ULPS, f"{name} ({suf})", tuple(args))


@pytest.mark.parametrize("suf", FLOAT_TYPES)
@pytest.mark.parametrize("entry", VMATH, ids=[v[0] for v in VMATH])
def test_libmvec_special_values(vlib: CLib, entry: tuple[Any, ...], suf: str) -> None:
    """NaN / +-Inf / +-0 / denormal / huge arguments behave as in NumPy."""
    name, arity, fn, _ = entry
    ctype, dt = FLOAT_TYPES[suf]
    fi = np.finfo(dt)
    sp = np.array(
        [
            np.nan,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            2.0,
            -2.0,
            fi.smallest_subnormal,
            -fi.smallest_subnormal,
            fi.tiny,
            -fi.tiny,
            fi.max,
            -fi.max,
            1e4,
            -1e4,
        ],
        dtype=dt,
    )
    args = (sp,) if arity == 1 else (np.repeat(sp, sp.size), np.tile(sp, sp.size))
    got = vlib.call(f"{name}_{suf}", ctype, *args)
    want = _reference(fn, dt, *args)
    assert_floats_match(got, want, 2 * VMATH_ULPS, f"{name} ({suf}) special values", args)


@pytest.mark.parametrize("suf", FLOAT_TYPES)
def test_libmvec_fj_functions(vlib: CLib, suf: str) -> None:
    """logaddexp(2)/expit/sin+cos built on vectorised exp/log1p/exp2 stay close to NumPy."""
    ctype, dt = FLOAT_TYPES[suf]
    a, b = _float_pairs(dt, seed=5)
    eps = float(np.finfo(dt).eps)
    with np.errstate(all="ignore"):
        atol = 8 * eps * np.maximum(np.maximum(np.abs(a), np.abs(b)).astype(np.float64), 1.0)
    for op in ("logaddexp", "logaddexp2"):
        want = _reference(FLOAT_BINARY[op], dt, a, b)
        got = vlib.call(f"{op}_{suf}", ctype, a, b)
        assert_floats_match(got, want, VMATH_ULPS, op, (a, b), atol=atol)
    got = vlib.call(f"expit_{suf}", ctype, a)
    assert_floats_match(got, _reference(scipy.special.expit, dt, a), VMATH_ULPS, "expit", (a,))
    x = np.linspace(-50, 50, 1001).astype(dt)
    got = vlib.call(f"sincos_{suf}", ctype, x)
    want = _reference(lambda v: np.sin(v) + np.cos(v), dt, x.astype(np.float64))
    assert np.max(np.abs(got.astype(np.float64) - want)) <= 8 * eps


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint64])
def test_constant_out_of_range_cast_to_int_is_x86s(dtype) -> None:
    """NaN, inf and out-of-range values converted to integers give NumPy's (x86's)
    indefinite integer also where the compiler sees a constant (np.where(c, nan, x), a
    maximum or clip bound): gcc folded `(int)NaN` to 0 and inf to INT_MAX there."""
    from conftest import run_both

    x = np.array([1.0, -1, 2, 0, 3e9, -3e9, 1e19, -1e19, np.nan, np.inf, -np.inf, 2.7, -2.7,
                  2147483647.5, -2147483648.7, -2147483648.0, 9.3e18, -9.3e18])
    with np.errstate(invalid="ignore"):
        run_both(lambda x: (x.astype(dtype), np.where(x > 0, np.nan, x).astype(dtype),
                            np.where(x > 0, np.inf, x).astype(dtype),
                            np.maximum(x, 1e10).astype(dtype),
                            np.clip(x * 1e10, -1, 1e10).astype(dtype),
                            x.astype(np.float32).astype(dtype)), x)
