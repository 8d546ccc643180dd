"""Row kernels' float32 exp by fj_vtile.h's vector exp (codegen/crowexp.py): the exp writing
the row it is stored to (softmax, the cross-entropy gradient with its scatter), the exp into
a chunk array folded by a second loop (a log-sum-exp, a weighted sum), rows of several chunks
with a tail of less than a vector and rows shorter than one; NaN, infinities, rows of -inf,
results that underflow to subnormals and to zero. The same bits as the loop over fj_exp_f32
that other builds run, and NumPy's values."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import assert_same

import fusejit
import fusejit.codegen.creduce as creduce
import fusejit.runtime.source_cache as source_cache
from fusejit.runtime.targets import cpu_features

RNG = np.random.default_rng(20)


def _exps(x, labels):
    n = x.shape[0]
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=1, keepdims=True)
    d = e / s
    d[np.arange(n), labels] -= 1.0
    lse = np.log(np.exp(0.5 * (x - m)).sum(axis=1))
    w = (np.exp(x - m - 1.0) * x).sum(axis=1)
    return d, lse, w


def _inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    x = (RNG.standard_normal((7, n)) * 4).astype(np.float32)
    x[1, n // 2] = np.nan
    x[2, 0] = np.inf
    x[3] = -np.inf
    x[4, : n // 2] = np.linspace(-200, -80, n // 2, dtype=np.float32)  # subnormal, zero
    x[5, n - 1] = 60.0  # the rest underflows
    return x, RNG.integers(0, n, 7)


@pytest.mark.c_only  # the C source's row exp
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_row_exp_has_fj_exp_f32_bits_and_numpy_values(monkeypatch: pytest.MonkeyPatch) -> None:
    staged = fusejit.jit(_exps)
    src = staged.lower_for(*_inputs(1100)).source
    # into the stored row (softmax, the gradient), prefetching a row ahead as it runs
    # (cprefetch.tile_prefetch), or into a chunk array (the log-sum-exp, the sum)
    assert re.search(r"fj_row_exp(_pf)?_f32\(&", src)
    assert re.search(r"fj_row_exp(_pf)?_f32\(fj_te_", src)
    monkeypatch.setattr(creduce, "plan_exp", lambda *a, **k: None)
    ident = source_cache.code_identity()  # the rendered-source cache keys on the code only
    monkeypatch.setattr(source_cache, "code_identity", lambda: ident + "-plain")
    plain = fusejit.jit(_exps)
    assert "fj_row_exp" not in plain.lower_for(*_inputs(1100)).source.split("fj_k0")[1]
    for n in (1100, 13):  # a tail of 12 (4) points after whole vectors; no whole vector
        x, labels = _inputs(n)
        got, ref = staged(x, labels), plain(x, labels)
        for a, b in zip(got, ref):
            assert np.array_equal(a, b, equal_nan=True)
        with np.errstate(all="ignore"):
            assert_same(got, _exps(x, labels))


def _signed_exp_sums(x, y):
    d = np.exp(x) * y
    s = d.sum(axis=1, keepdims=True)  # of d, which the phase stores for the next one
    return d - s * np.float32(0.0), s[:, 0]


def _lane_order_sum(row: np.ndarray) -> np.float32:
    """fj_row_sum_f32's order (fj_reduce.h) in Python doubles: lane l of 16 adds the points
    16 i + l of the whole groups, lane 0 the rest, then 0.0 + lane 0 + ... + lane 15."""
    lane = [0.0] * 16
    whole = len(row) // 16 * 16
    for j, v in enumerate(row.tolist()):
        lane[j % 16 if j < whole else 0] += v
    total = 0.0
    for v in lane:
        total += v
    return np.float32(total)


@pytest.mark.c_only  # the C backend's row sums
def test_row_sums_of_stored_values_have_one_order_on_avx512_and_avx2(
        monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.full((3, 45), -np.inf, np.float32)
    y = np.ones((3, 45), np.float32)
    x[:, 0], x[:, 8], y[:, 8], x[:, 16] = 69.0776, 69.0776, -1.0, 0.0  # 1e30, -1e30, 1
    x[1, 40:] = 1.0  # the tail (into lane 0)
    x[2] = RNG.standard_normal(45).astype(np.float32) * 20  # 8 lanes: 1 survives; 16: not
    builds = ["native"]
    if {"avx2", "fma"} <= cpu_features():
        builds.append("x86-64-v3")
    for march in builds:
        monkeypatch.setenv("FUSEJIT_MARCH", march)
        jf = fusejit.jit(_signed_exp_sums)
        assert "fj_row_sum_f32(&" in jf.lower_for(x, y).source
        with np.errstate(all="ignore"):
            d, s = jf(x, y)
        assert s.tolist() == [_lane_order_sum(r) for r in d], (march, s.tolist())
        assert s[0] == 0.0 and s[1] == 0.0, s  # 1.0 and the tail lost in lane 0 (with 8 lanes
        # lane 0 would hold 1e30 - 1e30 + 1 ...)
