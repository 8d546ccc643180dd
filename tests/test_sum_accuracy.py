"""Issue 19 (6): float sums are at least as accurate as NumPy's, measured against math.fsum
(the exactly rounded sum) over random and adversarial inputs, and bit-identical from call to
call and on any number of threads.

float64 sums are compensated (fj_reduce.h FJ_KADD): the exact sum rounded once, up to an error
of about (n eps)^2 sum|x| (see _check_sum); float32 sums accumulate in double."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from conftest import examples, subprocess_env
from hypothesis import given, settings
from hypothesis import strategies as st

from fusejit import jit

SUM = jit(lambda x: x.sum())
ROWS = jit(lambda x: x.sum(axis=1))
MEAN = jit(lambda x: np.mean(x))
# sizes: sequential NumPy (< 8), one block, many blocks, several chunks, split for threads
EPS = 2.0 ** -53
SIZES = (3, 7, 64, 1000, 5000, (1 << 17) + 3)


def _err(v: float, exact: float) -> float:
    return abs(float(v) - exact)


def _check_sum(x: np.ndarray) -> None:
    """fusejit's float64 sum is the exact sum plus the compensation's own error (at most about
    (n eps)^2 sum|x|: far below an ulp unless the sum is ill-conditioned beyond ~1e25 / n^2),
    rounded once. So it is never less accurate than NumPy's, except where a rounding boundary
    lies within that slack of the exact sum (a near-tie, where NumPy's rounding can be the
    lucky one)."""
    values = x.tolist()
    exact = math.fsum(values)
    slack = (x.size + 64) ** 2 * EPS * EPS * math.fsum(np.abs(x).tolist())
    lo, hi = math.fsum(values + [-slack]), math.fsum(values + [slack])
    near_tie = lo != hi  # a rounding boundary within the slack
    got, numpy = SUM(x), x.sum()
    assert lo <= got <= hi, (got, exact, slack)
    assert near_tie or _err(got, exact) <= _err(numpy, exact), (got, numpy, exact)
    # rows: the same claim for each row of a 2-D sum
    two = np.stack([x, x[::-1]])
    rows, numpy_rows = ROWS(two), two.sum(axis=1)
    for r in range(2):
        assert lo <= rows[r] <= hi
        assert near_tie or _err(rows[r], exact) <= _err(numpy_rows[r], exact)


def test_linspace_mean_is_numpys() -> None:
    x = np.linspace(-2, 5, 1000)
    assert MEAN(x) == x.mean() == 1.5


@pytest.mark.parametrize("n", SIZES)
def test_random_float64_sums_against_fsum(n: int) -> None:
    rng = np.random.default_rng(n)
    for k in range(12):
        x = rng.standard_normal(n) * 10.0 ** int(rng.integers(-8, 8))
        if k % 4 == 1:  # heavy cancellation
            x[n // 2:] = -x[: n - n // 2] * (1 + 1e-12 * rng.standard_normal(n - n // 2))
        elif k % 4 == 2:  # a large offset: every partial sum rounds
            x = x + 1e7
        elif k % 4 == 3:  # magnitudes spread over 60 orders
            x = x * 10.0 ** rng.integers(-30, 30, n)
        _check_sum(x)


_FLOATS = (st.floats(min_value=-1e290, max_value=1e290, allow_nan=False, allow_infinity=False)
           | st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e16, -1e16, 2.0 ** -60, 1e-300]))


@pytest.mark.parametrize("n", (3, 64))
@settings(max_examples=examples(60))
@given(data=st.data())
def test_adversarial_float64_sums_against_fsum(n: int, data: st.DataObject) -> None:
    values = data.draw(st.lists(_FLOATS, min_size=n, max_size=n))
    _check_sum(np.array(values, dtype=np.float64))


@pytest.mark.parametrize("n", (1000, 5000))
@settings(max_examples=examples(40))
@given(values=st.lists(_FLOATS, min_size=1, max_size=40), seed=st.integers(0, 2**32 - 1))
def test_adversarial_long_float64_sums_against_fsum(n: int, values: list[float],
                                                    seed: int) -> None:
    rng = np.random.default_rng(seed)  # the drawn values, and their negations, shuffled
    x = np.array(values)[rng.integers(0, len(values), n)] * rng.choice([-1.0, 1.0], n)
    _check_sum(x)


@pytest.mark.parametrize("n", (7, 1000, 5000))
def test_float32_sums_against_fsum(n: int) -> None:
    rng = np.random.default_rng(7 + n)
    for k in range(10):
        x = (rng.standard_normal(n) * 10.0 ** int(rng.integers(-4, 4))).astype(np.float32)
        if k % 2:
            x = (x + np.float32(1000)).astype(np.float32)
        exact = math.fsum(x.astype(np.float64).tolist())
        assert _err(SUM(x), exact) <= _err(x.sum(), exact)


def test_special_values_and_dtype() -> None:
    for values in ([np.inf, 1.0], [np.inf, -np.inf], [np.nan, 1.0], [1e308, 1e308],
                   [-1e308, -1e308], [0.5, -0.5]):
        x = np.array(values * 40)
        with np.errstate(all="ignore"):
            expected = x.sum()
        got = SUM(x)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_sums_are_the_same_bits_on_every_call_and_thread_count(tmp_path) -> None:
    script = (
        "import numpy as np, fusejit\n"
        "x = np.random.default_rng(5).standard_normal((1 << 20) + 7) * 1e3 + 1e5\n"
        "f = fusejit.jit(lambda x: (x.sum(), (x * x).mean(), x[:4096].reshape(64, 64)"
        ".sum(axis=1)))\n"
        "a = f(x); b = f(x)\n"
        "assert all(np.array_equal(u, v) for u, v in zip(a, b))\n"
        "print(repr(tuple(np.asarray(v).tobytes() for v in a)))\n")
    outs = []
    for threads in ("1", "2"):
        env = subprocess_env(OMP_NUM_THREADS=threads, FUSEJIT_CACHE_DIR=str(tmp_path))
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]


COLS = jit(lambda x: x.sum(axis=0))


@pytest.mark.parametrize("shape", [(7, 5), (1000, 24), (300, 2000), (1 << 17, 8)],
                         ids=["small", "blocks", "wide", "split"])
def test_float64_column_sums_against_fsum(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[1])
    for offset in (0.0, 1e6):
        x = rng.standard_normal(shape) * 10.0 ** int(rng.integers(-6, 6)) + offset
        exact = [math.fsum(c) for c in x.T.tolist()]
        got, numpy = COLS(x), x.sum(axis=0)
        for j, e in enumerate(exact):
            assert _err(got[j], e) <= _err(numpy[j], e)
            assert _err(got[j], e) <= math.ulp(e) / 2
