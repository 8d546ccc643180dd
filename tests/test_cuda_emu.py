"""The generated CUDA itself, run on the CPU (tests/cuda_emu.py: g++ with a shim, a host
thread per GPU thread, barriers for __syncthreads and the warp shuffles) through the fake
pycuda: results against NumPy for each kind of kernel the CUDA backend renders. The fake's
usual mode interprets the loop IR instead, so only this checks the CUDA text's indexing,
vector paths, team and split reductions, the tiled matmul with its in-place update epilogue
(the form that ran wrong on the first H100) and the device error word. `.ci/run` also runs
several whole test files this way (FUSEJIT_TEST_FAKE_CUDA=emulate)."""

from __future__ import annotations

import math
import os
import shutil

import cuda_fake
import numpy as np
import pytest

import fusejit

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ to emulate with")
f32 = np.float32


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_kernels_run_as_generated(monkeypatch: pytest.MonkeyPatch) -> None:
    _, driver = cuda_fake.install(monkeypatch, emulate=True)
    rng = np.random.default_rng(11)
    x = rng.standard_normal(1003).astype(f32)  # the vector path and a scalar tail
    np.testing.assert_allclose(fusejit.jit(gelu, backend="cuda")(x), gelu(x), rtol=2e-6,
                               atol=1e-7)
    rows = rng.standard_normal((40, 300)).astype(f32)  # a team per row, rows in registers
    np.testing.assert_allclose(fusejit.jit(softmax, backend="cuda")(rows), softmax(rows),
                               rtol=2e-6, atol=1e-9)
    big = rng.standard_normal(70001)  # a split reduction: parts, then a finishing kernel
    total = fusejit.jit(lambda v: (v * v).sum(), backend="cuda")(big)
    assert total == pytest.approx(float((big * big).sum()), rel=1e-12)
    cols = rng.standard_normal((33, 20)).astype(f32)
    np.testing.assert_allclose(fusejit.jit(lambda a: a.max(axis=0), backend="cuda")(cols),
                               cols.max(axis=0))
    half = rng.standard_normal(257).astype(np.float16)
    np.testing.assert_array_equal(fusejit.jit(lambda h: h * 2 + 1, backend="cuda")(half),
                                  half * 2 + 1)
    assert any(n.startswith("fj_") for n in driver.launches)


def test_tiled_matmul_and_in_place_update(monkeypatch: pytest.MonkeyPatch) -> None:
    """`w -= lr * (a @ b)`: the tiled kernel's product scaled and added in place (on the H100
    the product alone was stored once; the epilogue's alpha and beta are checked here)."""
    cuda_fake.install(monkeypatch, emulate=True)
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((12, 9)).astype(f32), rng.standard_normal((9, 7)).astype(f32)
    w = rng.standard_normal((12, 7)).astype(f32)

    def step(w, a, b, lr):
        w -= lr * (a @ b)
        return w.sum()

    mine, theirs = w.copy(), w.copy()
    got = fusejit.jit(step, backend="cuda")(mine, a, b, 0.25)
    want = step(theirs, a, b, 0.25)
    np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)
    assert got == pytest.approx(float(want), rel=1e-5)
    bat = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 4, 6))
    np.testing.assert_allclose(fusejit.jit(lambda p, q: np.maximum(p @ q, 0),
                                           backend="cuda")(*bat),
                               np.maximum(bat[0] @ bat[1], 0), rtol=1e-12)


def test_empty_and_masked_reductions_and_the_error_word(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    cuda_fake.install(monkeypatch, emulate=True)
    empty = np.ones((3, 0), f32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(
            fusejit.jit(lambda e: e.std(axis=1), backend="cuda")(empty), empty.std(axis=1))
    x = np.arange(24, dtype=np.float64).reshape(4, 6)
    mask = x % 3 == 0
    np.testing.assert_allclose(
        fusejit.jit(lambda x, m: np.mean(x, axis=1, where=m), backend="cuda")(x, mask),
        np.mean(x, axis=1, where=mask))
    take = fusejit.jit(lambda v, i: v[i] * 2, backend="cuda")
    np.testing.assert_array_equal(take(x[0], np.array([1, 5, 0])), x[0][[1, 5, 0]] * 2)
    with pytest.raises(IndexError):
        take(x[0], np.array([1, 9]))


def test_float64_sums_are_compensated(monkeypatch: pytest.MonkeyPatch) -> None:
    """float64 sums keep each thread's rounding errors (the prelude's fj_ksum, as the C
    backend's FJ_KADD): a sum whose halves cancel to 1e-12 of their size, a whole-array sum
    split into parts and row sums come out as the exactly rounded sum (math.fsum)."""
    cuda_fake.install(monkeypatch, emulate=True)
    rng = np.random.default_rng(13)
    x = rng.standard_normal(50001) * 1e3
    x[25000:] = -x[:25001] * (1 + 1e-12 * rng.standard_normal(25001))
    total = fusejit.jit(lambda v: v.sum(), backend="cuda")(x)
    assert abs(float(total) - math.fsum(x)) <= 2.3e-16 * abs(math.fsum(x))
    rows = rng.standard_normal((6, 3001)) + 1e7
    got = fusejit.jit(lambda r: r.sum(axis=1), backend="cuda")(rows)
    np.testing.assert_array_equal(got, [math.fsum(r) for r in rows])
    assert fusejit.jit(lambda v: v.mean(), backend="cuda")(np.linspace(-2, 5, 1000)) == 1.5
    special = np.array([np.inf, 1.0, 2.0])
    assert fusejit.jit(lambda v: v.sum(), backend="cuda")(special) == np.inf


def test_held_rows_read_and_written_a_vector_at_a_time(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    """Row kernels whose rows stay in registers read them, and write their results, 16 bytes
    at a time (each thread owns runs of consecutive elements), with an element-by-element
    path of the same mapping for arrays that are not 16-byte aligned: float32 (4 a vector),
    float64 (2), an input updated in place, and a misaligned device array; float16 and a
    layernorm with weights (one-phase row accesses: element by element) for their values."""
    images, driver = cuda_fake.install(monkeypatch, emulate=True)
    rng = np.random.default_rng(13)

    def norm(x, g):
        m = x.mean(axis=1, keepdims=True)
        return (x - m) / np.sqrt(((x - m) ** 2).mean(axis=1, keepdims=True) + 1e-5) * g

    def center(x):
        x -= x.mean(axis=1, keepdims=True)
        return x.max(axis=1)

    for dt, tol, n in ((f32, 2e-6, 1024), (np.float64, 1e-13, 1024), (np.float16, 2e-3, 2048)):
        x = rng.standard_normal((3, n)).astype(dt)
        g = rng.standard_normal(n).astype(dt)
        np.testing.assert_allclose(fusejit.jit(softmax, backend="cuda")(x), softmax(x),
                                   rtol=tol, atol=tol / 100)
        np.testing.assert_allclose(fusejit.jit(norm, backend="cuda")(x, g), norm(x, g),
                                   rtol=tol * 10, atol=tol * 10)
    bodies = [m.body for _, m in images.values()]
    for v, t in ((4, "float"), (2, "double")):  # (float16 softmax reads a row index too)
        assert any(f"*(const fj_vec<{t}, {v}> *)" in b and f"*(fj_vec<{t}, {v}> *)" in b
                   for b in bodies), t
    x = rng.standard_normal((2, 2048)).astype(f32)
    want, got = x.copy(), x.copy()
    np.testing.assert_allclose(fusejit.jit(center, backend="cuda")(got), center(want),
                               rtol=1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    # a device array 4 bytes past a 16-byte boundary takes the element-by-element path
    host = rng.standard_normal(2 * 1024 + 1).astype(f32)
    gpuarray = __import__("sys").modules["pycuda.gpuarray"]
    driver.Device(0).retain_primary_context().push()
    try:
        dev = gpuarray.to_gpu(host)
        odd = host[1:].reshape(2, 1024)
        iface = {"shape": odd.shape, "typestr": odd.dtype.str, "data": (dev.ptr + 4, False),
                 "version": 3, "strides": None}
        arg = type("Cai", (), {"__cuda_array_interface__": iface})()
        got = fusejit.jit(softmax, backend="cuda")(arg).get()
    finally:
        driver.Context.pop()
    np.testing.assert_allclose(got, softmax(odd), rtol=2e-6, atol=1e-9)


def test_scans_sorts_searches_and_scatters(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CUDA scan (a thread per row, NumPy's order), sort (a block per row, a bitonic sort
    of keys carrying positions), search (a binary search per point) and scatter (one thread,
    checks first) kernels, run as generated: NumPy's values to the bit, NumPy's errors."""
    _, driver = cuda_fake.install(monkeypatch, emulate=True)
    rng = np.random.default_rng(14)
    x = rng.standard_normal((5, 37)).astype(f32)
    x[1, ::4], x[2, 3], x[2, 9], x[3, :5] = np.nan, -0.0, 0.0, 1.5  # NaNs, signed zeros, ties

    def scans(x):
        return (np.cumsum(x, axis=1), np.cumprod(x[:, :6], axis=0),
                np.cumsum(x.astype(np.float16), axis=1), np.maximum.accumulate(x, axis=1))

    def sorts(x):
        return (np.sort(x, axis=1), np.argsort(x, axis=1, kind="stable"),
                np.sort(x.astype(np.float64), axis=0, kind="stable"),
                np.argsort(x[0].astype(np.int8), kind="stable"),
                np.searchsorted(np.sort(x[4]), x[:3]),
                np.searchsorted(np.sort(x[4]), x[0], side="right"))

    def scatters(w, i, v):
        w[i] = v  # repeated positions: the last assignment wins
        np.add.at(w, i[::-1], v * 2)
        return w, np.bincount(i, minlength=9)

    for f, args in ((scans, (x,)), (sorts, (x,)),
                    (scatters, (rng.standard_normal(9), np.array([3, 1, 3, 8, 1]),
                                rng.standard_normal(5)))):
        want = f(*[a.copy() for a in args])
        got = fusejit.jit(f, backend="cuda")(*[a.copy() for a in args])
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True), f.__name__
    with pytest.raises(IndexError):
        fusejit.jit(scatters, backend="cuda")(np.zeros(4), np.array([1, 4]), np.ones(2))
    # one long vector: a blocked scan (segment totals, their carries, the segments rescanned)
    v = rng.integers(-9, 9, (1 << 15) + 3).astype(np.int32)
    driver.launches.clear()
    got = fusejit.jit(lambda v: (np.cumsum(v * 2), np.maximum.accumulate(v)), backend="cuda")(v)
    assert [n[-2:] for n in driver.launches] == ["_t", "_c", "_s"] * 2
    for g, w in zip(got, (np.cumsum(v * 2), np.maximum.accumulate(v))):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    f = rng.uniform(-1, 1, (1 << 15) + 3)
    np.testing.assert_allclose(fusejit.jit(np.cumsum, backend="cuda")(f), np.cumsum(f),
                               rtol=0, atol=1e-12)


def test_complex_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """complex64/complex128 (fj_complex_cuda.h's fj_c64/fj_c128) through each kind of kernel:
    elementwise with casts and transcendental functions, a row product (team shuffles of
    both parts), a split sum and mean, a blocked cumsum (16-byte values in its scratch), a
    cumprod (plain products, as NumPy), np.add.at, the tiled matmul, sorts by comparison and
    a search."""
    cuda_fake.install(monkeypatch, emulate=True)
    rng = np.random.default_rng(14)

    def f(z, w, idx, acc):
        np.add.at(acc, idx, w[:idx.size])
        return (np.exp(z) * w / (z + 2) + np.sqrt(w) - np.log(z).real, np.tan(w[:64]),
                (z[:300].reshape(30, 10) * 0.9).prod(axis=1), z.sum(), w.mean(),
                np.cumsum(z), np.cumprod(w[:40] * 0.5), acc,
                z[:48].reshape(6, 8) @ w[:40].reshape(8, 5), np.sort(z[:1000]),
                np.argsort(w[:100].reshape(10, 10), axis=0, kind="stable"),
                np.searchsorted(np.sort(z[:50]), w[:20]))

    for dt, tol in ((np.complex64, 2e-5), (np.complex128, 1e-12)):
        z = (rng.standard_normal(70001) + 1j * rng.standard_normal(70001)).astype(dt)
        w = (rng.standard_normal(70001) - 1j * rng.standard_normal(70001)).astype(dt)
        idx, acc = rng.integers(0, 5, 50), np.zeros(5, dt)
        got = fusejit.jit(f, backend="cuda")(z, w, idx, acc.copy())
        want = f(z, w, idx, acc)
        for g, e in zip(got, want):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol * float(np.abs(e).max()))


_CFUNCS = ("exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin",
           "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "log1p", "expm1", "sign",
           "reciprocal", "square", "absolute")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_functions_on_drawn_values(dtype, monkeypatch: pytest.MonkeyPatch) -> None:
    """fj_complex_cuda*.h's functions against NumPy's (glibc's) on hypothesis-drawn parts of
    every magnitude, subnormals, signed zeros, Inf and NaN: one compiled program per dtype,
    to float tolerance (a subnormal result to a few of its units)."""
    from conftest import assert_same
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    cuda_fake.install(monkeypatch, emulate=True)
    part = np.float32 if dtype == np.complex64 else np.float64
    width = 32 if part == np.float32 else 64
    f = fusejit.jit(lambda z: {n: getattr(np, n)(z) for n in _CFUNCS}, backend="cuda")
    top = float(np.finfo(part).max) / 4  # (|z| near the largest float: NumPy's SIMD abs
    # overflows a last bit earlier than hypot)
    parts = hnp.arrays(part, 16, elements=st.one_of(
        st.floats(-top, top, width=width), st.sampled_from([np.inf, -np.inf, np.nan, -np.nan])))

    @settings(max_examples=int(os.environ.get("FJ_CPLX_N", "15")), deadline=None)
    @given(parts, parts)
    def check(re, im):
        z = np.empty(16, dtype)
        z.real, z.imag = re, im
        with np.errstate(all="ignore"):
            want = {n: getattr(np, n)(z) for n in _CFUNCS}
        got = f(z)
        for n in _CFUNCS:  # (a subnormal part: within a few of its units)
            assert_same(got[n], want[n], atol=4 * float(np.finfo(part).smallest_subnormal),
                        path=f"{n}{z.tolist()}")

    check()


def test_bessel_functions_beyond_eight(monkeypatch: pytest.MonkeyPatch) -> None:
    """scipy.special j0, j1, y0, y1 in the CUDA prelude, which computes them from |x| = 8 by
    Hankel's form (fj_special_bessel.h: an H200's own lost digits there, relative 1e-12 at
    x = 30 and 1e-9 at 3e8): mpmath's values at large x (as the C backend's test), and the C
    backend's (glibc's, a few ulp) across 8..1e6 to a few ulp of sqrt(2/(pi x)), the
    functions' envelope (near their zeros the error is absolute, as SciPy's own)."""
    sp = pytest.importorskip("scipy.special")
    from test_special import BESSEL_REF

    def bessel(a):
        return sp.j0(a), sp.j1(a), sp.y0(a), sp.y1(a)

    ref = np.array(BESSEL_REF)
    x = np.concatenate([ref[:, 0], np.linspace(8.0, 60.0, 1001), np.geomspace(60.0, 1e6, 400),
                        [np.nextafter(8.0, 0.0), 7.0, 1e-300, 0.0, np.inf, -np.inf, np.nan,
                         1.7e308]])
    want = fusejit.jit(bessel, backend="c")(x)  # glibc's (also under FUSEJIT_BACKEND=cuda)
    cuda_fake.install(monkeypatch, emulate=True)
    got = fusejit.jit(bessel, backend="cuda")(x)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g[:len(ref)], ref[:, k + 1], rtol=4e-15, atol=0)
        with np.errstate(all="ignore"):
            envelope = np.sqrt(2.0 / np.pi) / np.sqrt(np.abs(x))
            ok = (np.abs(g - w) <= 8e-16 * envelope) | (g == w) | (np.isnan(g) & np.isnan(w))
        assert ok.all(), (k, x[~ok][:4], g[~ok][:4], w[~ok][:4])
    # j0 even, j1 odd; y0 and y1 NaN below 0, as SciPy's
    part = slice(len(ref), len(ref) + 50)
    neg = fusejit.jit(bessel, backend="cuda")(-x[part])
    np.testing.assert_array_equal(neg[0], got[0][part])
    np.testing.assert_array_equal(neg[1], -got[1][part])
    assert np.isnan(neg[2]).all() and np.isnan(neg[3]).all()
