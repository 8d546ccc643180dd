"""The toolchain probe overlapping the first compile: a wrong guess is rebuilt before use."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import fusejit
from fusejit.runtime import toolchain


@pytest.mark.c_only  # the C toolchain's guess and rebuild
def test_wrong_toolchain_guess_is_rebuilt_before_it_runs(monkeypatch) -> None:
    real = toolchain.detect()
    wrong = dataclasses.replace(real, libmvec=not real.libmvec)
    monkeypatch.setattr(toolchain, "guess", lambda: (wrong, False))  # read by build_program
    f = fusejit.jit(lambda x: np.tanh(x) * 3)
    x = np.linspace(-2, 2, 50, dtype=np.float32)
    np.testing.assert_allclose(f(x), np.tanh(x) * 3, rtol=1e-6)
    assert ("#define FJ_LIBMVEC 1" in f.lower_for(x).source) == real.libmvec


def test_guess_is_exact_once_the_probe_is_cached() -> None:
    toolchain.detect()
    tc, exact = toolchain.guess()
    assert exact and tc == toolchain.detect()


def test_wide_vectors_only_on_avx512_targets() -> None:
    """512-bit vectors (and the matching math functions) exactly when the target has AVX-512:
    the x86-64 levels decide it by their definition, "native" by this CPU."""
    from fusejit.runtime import targets

    for march in ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "native"):
        tc = toolchain.Toolchain("cc", "1", True, True, (), march=march)
        wide = set(toolchain.WIDE_VECTOR_FLAGS) <= set(tc.cflags)
        features = targets.target_features(march)
        assert wide is ("avx512f" in features)
        assert tc.vtile is (wide or {"avx2", "fma"} <= features)  # fj_vtile.h's tile functions
        assert f"-march={march}" in tc.cflags
    assert toolchain.Toolchain("cc", "1", True, True, (), march="x86-64-v4").wide
    assert not toolchain.Toolchain("cc", "1", True, True, (), march="x86-64-v3").wide
