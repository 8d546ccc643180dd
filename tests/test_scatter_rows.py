"""One element per row (lowering/scatter_rows.py): `d[np.arange(n), idx] op= v` into a
computed array becomes an elementwise select fused into the kernel that computes d.

Compared with NumPy over dtypes, shapes (trailing dims, zero-size), negative and
out-of-range indices, values that read d at the scattered positions, other rows and
scalars; the forms it must leave alone (an argument, rows that are not arange, a value
that reduces the gathered elements) stay scatters and stay correct.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples, run_both
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit

pytestmark = pytest.mark.filterwarnings("ignore::fusejit.frontend.captures.CapturedWarning")
RNG = np.random.default_rng(23)


def _kernels(f, *args) -> str:
    """explain's kernel list, the nodes they fuse only (no source lines)."""
    text = str(fusejit.jit(f).explain(*args)).split("== kernels")[1].split("== memory")[0]
    return "\n".join(line for line in text.splitlines()
                     if line.startswith("k") or "fuses" in line)


def xent_grad(logits, labels):
    n = logits.shape[0]
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(axis=1, keepdims=True)
    loss = (np.log(e.sum(axis=1)) + m[:, 0] - logits[np.arange(n), labels]).mean()
    d = p.copy()
    d[np.arange(n), labels] -= 1.0
    return loss, d / n


def test_cross_entropy_gradient_is_one_row_kernel() -> None:
    logits = RNG.standard_normal((300, 37)).astype(np.float32)
    labels = RNG.integers(-37, 37, 300)
    run_both(xent_grad, logits, labels)
    text = _kernels(xent_grad, logits, labels)
    assert " scatter" not in text.split("k1:")[0] and " where" in text.split("k1:")[0]
    assert text.count("\nk") == 1  # k0: the row kernel (scatter fused); k1: the loss
    run_both(xent_grad, logits, np.concatenate([labels[:-1], [37]]))  # IndexError
    run_both(xent_grad, logits, np.concatenate([labels[:-1], [-38]]))


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 9), st.integers(0, 6), st.sampled_from([(), (3,)]),
       st.sampled_from([np.float32, np.float64, np.int32, np.int8]),
       st.sampled_from(["sub", "set", "set_scalar", "mixed", "int_idx"]))
def test_rows_match_numpy(n, k, rest, dtype, form) -> None:
    x = (RNG.standard_normal((n, k) + rest) * 10).astype(dtype)
    idx = RNG.integers(-k, k, n) if k else np.zeros(n, np.int64)
    w = (RNG.standard_normal((n,) + rest) * 3).astype(dtype)

    def f(x, idx, w):
        d = x * 2
        rows = np.arange(d.shape[0])
        if form == "sub":
            d[rows, idx] -= 1
        elif form == "set":
            d[rows, idx] = w
        elif form == "set_scalar":
            d[rows, idx] = 7
        elif form == "mixed":  # the value reads d there, another row-shaped array, a scalar
            d[rows, idx] = d[rows, idx] * w + w[::-1] - 1
        else:
            d[rows, idx.astype(np.int16)] += 1
        return d + 1

    run_both(f, x, idx, w)


def test_forms_left_as_scatters() -> None:
    x = RNG.standard_normal((20, 8))
    idx = RNG.integers(0, 8, 20)

    def into_argument(x, idx):
        x[np.arange(20), idx] = 0.0
        return x.sum()

    x1, x2 = x.copy(), x.copy()
    got = fusejit.jit(into_argument)(x1, idx)
    assert got == pytest.approx(into_argument(x2, idx), rel=1e-13) and np.array_equal(x1, x2)
    assert " scatter" in _kernels(into_argument, x.copy(), idx)

    def reversed_rows(x, idx):
        d = x * 2
        d[np.arange(20)[::-1], idx] += 1
        return d

    run_both(reversed_rows, x, idx)
    assert " scatter" in _kernels(reversed_rows, x, idx)

    def reduces_gathered(x, idx):
        d = x * 2
        d[np.arange(20), idx] = d[np.arange(20), idx].sum()
        return d

    run_both(reduces_gathered, x, idx)
    assert " scatter" in _kernels(reduces_gathered, x, idx)

    def later_read(x, idx):  # the old value is used again: the select leaves it intact
        d = x * 2
        e = d.copy()
        e[np.arange(20), idx] = -1.0
        return e, d

    run_both(later_read, x, idx)


def test_value_that_can_raise_stays_a_scatter() -> None:
    """An integer power raises for a negative exponent: computed over the whole array it
    would raise for elements the scatter does not write."""
    x = np.array([[1, -1, -2], [3, -4, 2]])

    def f(x, idx):
        d = x * 1
        d[np.arange(2), idx] = 2 ** d[np.arange(2), idx]
        return d

    run_both(f, x, np.array([0, 2]))
    assert " scatter" in _kernels(f, x, np.array([0, 2]))
