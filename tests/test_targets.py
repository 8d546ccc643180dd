"""Instruction-set targets (FUSEJIT_MARCH): every level compiles and agrees with NumPy, the
cache keys on the target, and a bad target fails before anything is compiled or cached."""

from __future__ import annotations

import os
import shutil
import stat

import numpy as np
import pytest
import scipy.special as sc
from conftest import assert_same, cancellation_atol

import fusejit
from fusejit.errors import TargetError
from fusejit.runtime import targets, toolchain
from fusejit.runtime.backend_c import program_key

LEVELS = ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4")
x86 = pytest.mark.skipif(not targets.cpu_features() or "sse2" not in targets.cpu_features(),
                         reason="x86-64 levels need an x86-64 CPU")


def _math(x, y):
    g = 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
    return g + np.exp(-x * x) * sc.erf(y) - np.log1p(y * y), (x * y).sum(axis=-1)


@x86
@pytest.mark.parametrize("march", LEVELS)
def test_every_level_this_cpu_runs_agrees_with_numpy(march, monkeypatch) -> None:
    if targets.missing_features(march):
        pytest.skip(f"this CPU lacks {targets.missing_features(march)}")
    monkeypatch.setenv("FUSEJIT_MARCH", march)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((33, 70)).astype(np.float32)
    y = rng.standard_normal((33, 70)).astype(np.float32)
    f = fusejit.jit(_math)
    got, want = f(x, y), _math(x, y)
    assert_same(got, want, rtol=2e-5, atol=cancellation_atol(x, 16))
    tc = toolchain.detect()
    assert tc.march == march and f"-march={march}" in tc.cflags
    assert tc.vtile is (march in ("x86-64-v3", "x86-64-v4"))  # AVX2+FMA or AVX-512


@x86
@pytest.mark.c_only  # FUSEJIT_MARCH: the C compiler's target
@pytest.mark.parametrize("march", ["x86-64", "x86-64-v2"])
def test_calls_leave_long_double_working(march, monkeypatch) -> None:
    """gcc moved 64-bit vectors through MMX registers for these levels and left the x87
    unit in MMX state: NumPy's long double arithmetic gave NaN after the call."""
    if targets.missing_features(march):
        pytest.skip(f"this CPU lacks {targets.missing_features(march)}")
    monkeypatch.setenv("FUSEJIT_MARCH", march)
    x = np.array([[3, -7, 2, 9, 0], [1, 1, -4, 6, 8], [5, 2, 2, 0, -1]], np.int32)
    f = fusejit.jit(lambda x: np.ptp(x, axis=1))
    assert "-mno-mmx" in toolchain.detect().cflags
    np.testing.assert_array_equal(f(x), np.ptp(x, axis=1))
    y = np.arange(1.0, 5.0)
    assert float(np.sum(y.astype(np.longdouble))) == 10.0  # a NaN in MMX state


def test_cache_keys_on_the_target() -> None:
    keys = {program_key("int x;", toolchain.Toolchain("cc", "1", True, True, (), march=m)).key()
            for m in ("native", *LEVELS)}
    assert len(keys) == 5
    named = program_key("int x;", toolchain.Toolchain("cc", "1", True, True, (),
                                                      march="x86-64-v3"))
    assert dict(named.parts)["target"] == "x86-64-v3"  # not this machine: the cache travels


def _entries(cache: str) -> list[str]:
    return [f for _, _, fs in os.walk(cache) for f in fs if f.endswith((".so", ".json"))]


@pytest.mark.c_only  # FUSEJIT_MARCH: the C compiler's target
def test_unknown_target_fails_before_any_compile(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("FUSEJIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FUSEJIT_MARCH", "x86-64-v9")
    f = fusejit.jit(lambda x: x + 1)
    with pytest.raises(TargetError, match="unknown target 'x86-64-v9'.*x86-64-v3"):
        f(np.ones(3))
    assert isinstance(TargetError("x"), (fusejit.CompileError, ValueError))
    assert not _entries(str(tmp_path))


@pytest.mark.c_only  # FUSEJIT_MARCH: the C compiler's target
@x86
def test_target_the_compiler_does_not_know(monkeypatch, tmp_path) -> None:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler")
    fake = tmp_path / "oldcc"  # a compiler from before the x86-64 levels existed
    fake.write_text("#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in -march=x86-64-v2) "
                    "echo \"cc1: error: bad value '${a#-march=}' for '-march='\" >&2; exit 1;;"
                    f" esac; done\nexec {gcc} \"$@\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    cache = tmp_path / "cache"
    monkeypatch.setenv("FUSEJIT_CACHE_DIR", str(cache))
    monkeypatch.setenv("FUSEJIT_CC", str(fake))
    monkeypatch.setenv("FUSEJIT_MARCH", "x86-64-v2")
    with pytest.raises(TargetError, match="does not know the target 'x86-64-v2'.*bad value"):
        fusejit.jit(lambda x: x * 2)(np.ones(3))
    assert not [e for e in _entries(str(cache)) if e.endswith(".so")]


@pytest.mark.c_only  # FUSEJIT_MARCH: the C compiler's target
def test_a_target_this_cpu_cannot_run_is_refused(monkeypatch) -> None:
    v2 = frozenset(targets.TARGETS["x86-64-v2"][1])
    monkeypatch.setattr(targets, "cpu_features", lambda: v2)
    monkeypatch.setenv("FUSEJIT_MARCH", "x86-64-v3")
    with pytest.raises(TargetError, match="avx, avx2.*illegal instruction"):
        fusejit.jit(lambda x: x - 1)(np.ones(3))
    assert targets.missing_features("x86-64-v2") == []
    assert targets.missing_features("x86-64-v4", v2)[:2] == ["avx", "avx2"]
    assert targets.missing_features("native", frozenset({"sse2"})) == []


def test_levels_nest_and_name_builtin_features() -> None:
    sets = [set(targets.TARGETS[m][1]) for m in LEVELS]
    assert all(a < b for a, b in zip(sets, sets[1:]))
    assert {"avx2", "fma"} <= sets[2] and "avx512f" in sets[3]
    assert set(targets.CPU_SUPPORTS) <= sets[3]
