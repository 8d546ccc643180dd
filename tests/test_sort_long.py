"""Sorting rows of 32- and 64-bit keys (codegen/include/fj_sort.h fj_rsort*, issue 20): radix
digits over the key bits that differ, insertion sort up to 32 elements, MSD passes down to
cache-sized buckets for long rows, and a single long row sorted over the threads (slices
sorted, then merged stably). Compared with NumPy
bit for bit (stable order of ties, NaN last, -0.0 and 0.0 tied), at the lengths where the
algorithm changes, with the parallel path forced at small lengths (csort.PAR_ROW) and run on
1, 2 and 3 threads."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import examples, run_both
from hypothesis import given, note, settings
from hypothesis import strategies as st

import fusejit
from fusejit.codegen import csort

pytestmark = [pytest.mark.c_only,
              pytest.mark.filterwarnings("ignore::fusejit.frontend.captures.CapturedWarning")]

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint64, np.uint32]
LENGTHS = [0, 1, 2, 3, 31, 32, 33, 34, 100, 2047, 2049]
KINDS = ["normal", "ties", "specials", "small", "constant", "low-bit", "high-bit", "sorted",
         "reversed", "clustered"]


def _values(rng: np.random.Generator, n: int, dtype, kind: str) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = (rng.standard_normal(n) * 1000).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if kind == "ties" and n:
        x = x[rng.integers(0, max(n // 8, 1), n)]
    elif kind == "specials" and n:
        pool = ([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, -1.0, -np.nan] if dtype.kind == "f"
                else [0, 1, np.iinfo(dtype).max, np.iinfo(dtype).min])
        x = x.copy()
        at = rng.random(n) < 0.5
        x[at] = np.array(pool, dtype=dtype)[rng.integers(0, len(pool), int(at.sum()))]
    elif kind == "small":
        x = rng.integers(0, 5, n).astype(dtype)
    elif kind == "constant":
        x = np.full(n, 7, dtype)
    elif kind == "low-bit":  # keys that differ in their lowest bit only
        x = (np.full(n, 1 << 20, np.int64) + rng.integers(0, 2, n)).astype(dtype)
    elif kind == "high-bit" and n:  # keys that differ in their top bit only
        x = np.array([np.iinfo(dtype).min, 0] if dtype.kind == "i" else
                     [-2.0, 2.0] if dtype.kind == "f" else [0, np.iinfo(dtype).max // 2 + 1],
                     dtype=dtype)[rng.integers(0, 2, n)]
    elif kind == "clustered":  # 1024 top buckets; in each, 1% far above the rest, which
        w = 8 * dtype.itemsize  # differ in their low bits only: runs to sort on those bits
        u = np.dtype(f"u{dtype.itemsize}")
        bits = ((rng.integers(0, 1024, n).astype(u) << u.type(w - 12))
                | rng.integers(0, 1 << (w // 4), n).astype(u)
                | ((rng.random(n) < 0.01).astype(u) << u.type(w - 16)))
        x = bits.view(dtype)
    elif kind == "sorted":
        x = np.sort(x)
    elif kind == "reversed":
        x = np.sort(x)[::-1].copy()
    return x


FUNCS = {
    "sort": lambda x: np.sort(x),
    "sort-stable": lambda x: np.sort(x, kind="stable"),
    "argsort-stable": lambda x: np.argsort(x, kind="stable"),
    "fused": lambda x: np.argsort(x * 3, kind="stable") + 1,
}


def _check(name: str, x: np.ndarray) -> None:
    f = FUNCS[name]
    if name != "sort":
        jf = run_both(f, x)
        if name == "sort-stable":  # bit for bit: -0.0 / 0.0 ties in order, NaN payloads
            assert jf(x).tobytes() == f(x).tobytes()
        return
    # NumPy's default (unstable) sort orders -0.0 and 0.0 either way: compared as equal
    got, want = fusejit.jit(f)(x), f(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_rows_match_numpy(data) -> None:
    n = data.draw(st.one_of(st.sampled_from(LENGTHS), st.integers(0, 300)))
    dtype = data.draw(st.sampled_from(DTYPES))
    kind = data.draw(st.sampled_from(KINDS))
    name = data.draw(st.sampled_from(sorted(FUNCS)))
    par = data.draw(st.booleans())
    x = _values(np.random.default_rng(n), n, dtype, kind)
    note(f"{name} {kind} {x.dtype}[{n}] par {par}")
    with pytest.MonkeyPatch.context() as mp:
        if par:
            mp.setattr(csort, "PAR_ROW", 33)  # the threaded path at small lengths
        _check(name, x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("n", [csort.PAR_ROW - 1, csort.PAR_ROW, csort.PAR_ROW + 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_lengths_at_the_threaded_threshold(n, dtype) -> None:
    x = _values(np.random.default_rng(5), n, dtype, "specials" if dtype != np.int64 else "ties")
    for name in ("sort-stable", "argsort-stable"):
        _check(name, x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("kind", KINDS)
def test_rows_past_the_cache_sized_buckets(kind) -> None:
    """Rows past FJ_LEAF_BYTES (512 KiB) per thread: MSD passes down to cache-sized buckets
    over every kind of key spread (one bucket, two, ties, narrow ranges)."""
    for dtype in (np.float64, np.float32, np.int64, np.uint32):
        x = _values(np.random.default_rng(9), 140001, dtype, kind)
        for name in ("sort", "sort-stable", "argsort-stable"):
            _check(name, x)


def test_long_rows_in_several_rows_and_transposed() -> None:
    x = np.random.default_rng(6).standard_normal((3, 70001))
    x[:, ::3] = x[0, 0]
    run_both(lambda x: np.argsort(x, axis=1, kind="stable"), x)
    run_both(lambda x: np.sort(x.T, axis=0, kind="stable"), x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_same_result_on_one_two_and_three_threads(tmp_path) -> None:
    script = (
        "import numpy as np, fusejit\n"
        "rng = np.random.default_rng(7)\n"
        "x = rng.standard_normal(300007)\n"
        "x[rng.integers(0, x.size, 5000)] = np.nan\n"
        "x[rng.integers(0, x.size, 5000)] = -0.0\n"
        "x[rng.integers(0, x.size, 5000)] = 0.0\n"
        "x[::4] = x[1]\n"
        "y = rng.integers(-50, 50, 200003)\n"
        "f = fusejit.jit(lambda x, y: (np.sort(x), np.sort(x, kind='stable'),\n"
        "                              np.argsort(x, kind='stable'),\n"
        "                              np.argsort(y, kind='stable'),\n"
        "                              np.sort(x.astype(np.float32)),\n"
        "                              np.argsort(x.astype(np.float32), kind='stable')))\n"
        "got = f(x, y)\n"
        "want = (np.sort(x), np.sort(x, kind='stable'), np.argsort(x, kind='stable'),\n"
        "        np.argsort(y, kind='stable'), np.sort(x.astype(np.float32)),\n"
        "        np.argsort(x.astype(np.float32), kind='stable'))\n"
        "assert all(np.array_equal(g, w, equal_nan=True) for g, w in zip(got, want))\n"
        "assert got[1].tobytes() == want[1].tobytes()\n"
        "import hashlib\n"
        "print(hashlib.sha256(b''.join(g.tobytes() for g in got)).hexdigest())\n")
    outs = []
    for threads in ("1", "2", "3"):
        env = dict(os.environ, OMP_NUM_THREADS=threads, FUSEJIT_CACHE_DIR=str(tmp_path))
        proc = subprocess.run([sys.executable, "-W", "ignore", "-c", script],
                              capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1] == outs[2]


def test_a_long_row_is_sorted_over_the_threads() -> None:
    x = np.random.default_rng(8).standard_normal(csort.PAR_ROW)
    text = fusejit.jit(lambda x: np.argsort(x, kind="stable")).lower_for(x).source
    assert "#pragma omp parallel reduction" in text and "fj_rcsort64_par(" in text
    assert "fj_rcsort64_next(" in text  # each thread writes out the ranges it sorted
    short = fusejit.jit(lambda x: np.argsort(x, kind="stable")).lower_for(x[:100]).source
    assert "#pragma omp parallel reduction(|:fj_err)" not in short
    assert "fj_rcsort64(" in short
