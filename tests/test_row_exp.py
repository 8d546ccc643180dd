"""Row kernels' float32 exp by fj_vtile.h's vector exp (codegen/crowexp.py): the exp writing
the row it is stored to (softmax, the cross-entropy gradient with its scatter), the exp into
a chunk array folded by a second loop (a log-sum-exp, a weighted sum), rows of several chunks
with a tail of less than a vector and rows shorter than one; NaN, infinities, rows of -inf,
results that underflow to subnormals and to zero. The same bits as the loop over fj_exp_f32
that other builds run, and NumPy's values."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same

import fusejit
import fusejit.codegen.creduce as creduce

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
    assert "fj_row_exp_f32(&" in src  # into the stored row (softmax, the gradient)
    assert "fj_row_exp_f32(fj_te_" in src  # into a chunk array (the log-sum-exp, the sum)
    monkeypatch.setattr(creduce, "plan_exp", lambda *a, **k: None)
    plain = fusejit.jit(_exps)
    for n in (1100, 13):  # a tail of 12 (4) points after whole vectors; no whole vector
        x, labels = _inputs(n)
        got, ref = staged(x, labels), plain(x, labels)
        for a, b in zip(got, ref):
            assert np.array_equal(a, b, equal_nan=True)
        with np.errstate(all="ignore"):
            assert_same(got, _exps(x, labels))
