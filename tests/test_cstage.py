"""Call staging (codegen/cstage.py): the plan of loops, the C it renders, and compiled results.

The plan is checked structurally on hand-written and lowered bodies: every statement runs once
(loads and constants may be re-emitted), each call loop holds one call, every tile value is
written by an earlier loop than the ones that read it, and loads after the first store are read
up front. End to end, staged programs give NumPy's results, and exactly the bits of unstaged
ones where every point runs in a full vector of both: contiguous rows whose length is a multiple
of the tile. (A loop's remainder, or a loop gcc does not vectorise, such as one with strided
loads, calls another libmvec variant or scalar libm, each within its own ULP bound; staging
changes which points fall there.)
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.special as sc
from conftest import assert_same, target_features

import fusejit
from fusejit.codegen import c as c_backend
from fusejit.codegen import cstage
from fusejit.codegen.c import COptions, render
from fusejit.codegen.cstage import Segment, is_vector_call, stage_body, tile_fn
from fusejit.codegen.cstage import plan as stage_plan
from fusejit.frontend.trace import trace
from fusejit.lowering.loop_ir import Access, Compute, Const, Load, Stmt, Store
from fusejit.lowering.lower import contiguous_strides, lower
from fusejit.lowering.memplan import plan
from fusejit.lowering.pipeline import optimise
from fusejit.runtime import toolchain

F32 = np.dtype(np.float32)


def _load(var: str, buf: int) -> Load:
    return Load(var, Access(buf, 0, (1,)), F32)


def _op(var: str, op: str, *args: str) -> Compute:
    return Compute(var, op, tuple(args), (F32,) * len(args), F32)


def _uses(s: Stmt) -> tuple[str, ...]:
    return s.args if isinstance(s, Compute) else ((s.var,) if isinstance(s, Store) else ())


def check_plan(body: list[Stmt], segments: list[Segment]) -> None:
    """The invariants every staged plan keeps. Every statement runs once, but loads, constants
    and cheap arithmetic on them (cstage.RECOMPUTED), which run in each loop that uses them."""
    leaves = {s.var for s in body if isinstance(s, (Load, Const))}
    again = {id(s) for s in body if isinstance(s, Compute) and s.op in cstage.RECOMPUTED
             and all(a in leaves for a in s.args)}
    once = [s for s in body if not isinstance(s, (Load, Const)) and id(s) not in again]
    ran = [s for seg in segments for s in seg.body
           if not isinstance(s, (Load, Const)) and id(s) not in again]
    assert sorted(map(id, ran)) == sorted(map(id, once))
    for seg in segments:
        mine = [s for s in seg.body if id(s) in again]
        assert len(mine) == len({id(s) for s in mine})
    written: set[str] = set()
    for seg in segments:
        calls = [s for s in seg.body if is_vector_call(s)]
        assert len(calls) == (1 if seg.kind == "call" else 0)
        assert set(seg.reads) <= written, f"{seg.reads} read before written"
        here = {s.var for s in seg.body if isinstance(s, (Load, Const, Compute))}
        for s in seg.body:
            for a in _uses(s):
                assert a in here or a in seg.reads, f"{a} not available"
        assert set(seg.writes) <= here
        written |= set(seg.writes)


def lstm_like() -> list[Stmt]:
    return [_load("v0", 0), _load("v1", 1), Const("v2", 1.0, F32), _load("v3", 2),
            _op("v4", "add", "v1", "v2"), _op("v5", "negative", "v4"), _op("v6", "exp", "v5"),
            _op("v7", "add", "v2", "v6"), _op("v8", "divide", "v2", "v7"),
            _op("v9", "tanh", "v3"), _op("v10", "multiply", "v8", "v9"),
            _op("v11", "add", "v0", "v10"), Store(Access(3, 0, (1,)), "v11"),
            _op("v12", "tanh", "v11"), _op("v13", "multiply", "v12", "v8"),
            Store(Access(4, 0, (1,)), "v13")]


def test_fewer_than_two_calls_are_not_staged():
    body = [_load("v0", 0), _op("v1", "exp", "v0"), _op("v2", "add", "v1", "v0"),
            Store(Access(1, 0, (1,)), "v2")]
    assert stage_body(body) is None
    assert stage_body([_load("v0", 0), Store(Access(1, 0, (1,)), "v0")]) is None


def test_plan_orders_calls_by_depth():
    body = lstm_like()
    segments = stage_body(body)
    assert segments is not None
    check_plan(body, segments)
    assert [s.kind for s in segments] == ["call", "call", "compute", "call", "compute"]
    # -(x + 1) only feeds the exp: it runs in the exp's loop, not in a loop of its own
    assert [s.var for s in segments[0].body if isinstance(s, Compute)] == ["v4", "v5", "v6"]
    assert segments[2].reads == ("v6", "v9") and segments[2].writes == ("v8", "v11")
    assert segments[4].reads == ("v8", "v12")


def test_loads_after_the_first_store_are_read_up_front():
    # out[...] = exp(exp(x)) * x where out is x (an in-place update): the store of level 1
    # comes before the second exp's loop, whose consumer still needs the old x.
    body = [_load("v0", 0), _op("v1", "exp", "v0"), Store(Access(0, 0, (1,)), "v1"),
            _op("v2", "exp", "v1"), _op("v3", "multiply", "v2", "v0"),
            Store(Access(1, 0, (1,)), "v3")]
    segments = stage_body(body)
    assert segments is not None
    check_plan(body, segments)
    first_store = next(i for i, s in enumerate(segments)
                       if any(isinstance(t, Store) for t in s.body))
    for seg in segments[first_store + 1:]:
        assert not any(isinstance(s, Load) for s in seg.body)
    assert segments[0].kind == "compute" and "v0" in segments[0].writes


def _program(fn, args):
    graph, _ = trace(fn, list(args))
    return plan(lower(optimise(graph), [contiguous_strides(a.shape) for a in args]))


def black_scholes(S, K, T, r, sigma):
    def cdf(z):
        return 0.5 * (1 + sc.erf(z / 1.4142135623730951))
    sst = sigma * np.sqrt(T)
    d1 = (np.log(S / K) + (r + 0.5 * sigma * sigma) * T) / sst
    d2 = d1 - sst
    kd = K * np.exp(-r * T)
    return S * cdf(d1) - kd * cdf(d2), kd * cdf(-d2) - S * cdf(-d1)


def test_lowered_bodies_keep_the_invariants():
    args = [np.ones(100, np.float32)] * 5
    for k in _program(black_scholes, args).kernels:
        segments = stage_body(k.body)
        assert segments is not None
        check_plan(k.body, segments)
        assert sum(s.kind == "call" for s in segments) == 4  # log, exp, 2 erf (shared by -d)


def test_render_stages_only_with_libmvec():
    program = _program(black_scholes, [np.ones(100, np.float32)] * 5)
    staged = render(program, COptions(libmvec=True))
    assert "call staging" in staged and staged.count("/* call */") == 4
    assert "call staging" not in render(program, COptions(libmvec=False))


def test_render_tiles_with_vtile():
    """On AVX-512 builds the four calls go through tile functions, even without libmvec, and a
    single tile-function call is staged too."""
    program = _program(black_scholes, [np.ones(100, np.float32)] * 5)
    text = render(program, COptions(libmvec=False, vtile=True))
    calls = re.findall(r"(fj_tile_\w+_f32)\(fj_tv\d+, fj_av\d+, fj_e - fj_t\);", text)
    assert sorted(calls) == ["fj_tile_erf_f32", "fj_tile_erf_f32", "fj_tile_exp_f32",
                             "fj_tile_log_f32"]
    # tiles of VTILE points with tile functions, TILE with libmvec calls only
    assert f"fj_t += {cstage.VTILE})" in text and f"[{cstage.VTILE}] __attribute__" in text
    mvec = render(program, COptions(libmvec=True))
    assert f"fj_t += {cstage.TILE})" in mvec and f"[{cstage.VTILE}]" not in mvec
    one = render(_program(lambda x: np.tanh(x) * 2, [np.ones(100, np.float32)]),
                 COptions(vtile=True))
    assert one.count("fj_tile_tanh_f32(fj_tv") == 1
    f64 = render(_program(lambda x: np.tanh(x) * 2, [np.ones(100)]), COptions(vtile=True))
    assert "call staging" not in f64  # float64 has no tile functions


def test_deep_kernels_take_smaller_tiles_on_avx512(monkeypatch):
    """A kernel of DEEP_TILES tile arrays or more over DEEP_BYTES (black_scholes at full size)
    runs tiles of VTILE_DEEP points on AVX-512 builds, chosen by the preprocessor so that one
    source serves every target; a small one, one of few tile arrays (gelu) or libmvec staging
    keep theirs. The bits are those of VTILE tiles where both run full vectors."""
    k = _program(black_scholes, [np.ones(100, np.float32)] * 5).kernels[0]
    bs = stage_plan(k.body, libmvec=False, vtile=True)
    assert bs is not None
    big = cstage.DEEP_BYTES
    assert cstage.tile_points(bs, True, big) == (cstage.VTILE_DEEP, cstage.VTILE)
    assert cstage.tile_points(bs, True, big - 1) == (cstage.VTILE, cstage.VTILE)
    assert cstage.tile_points(bs, False, big) == (cstage.TILE, cstage.TILE)
    gelu = stage_plan([_load("v0", 0), _op("v1", "tanh", "v0"), _op("v2", "multiply", "v0", "v1"),
                       Store(Access(1, 0, (1,)), "v2")], libmvec=False, vtile=True)
    assert gelu is not None and cstage.tile_points(gelu, True, big) == (cstage.VTILE,) * 2
    full = [np.empty(1 << 22, np.float32)] * 5  # only their shapes are used
    text = render(_program(black_scholes, full), COptions(vtile=True))
    assert (f"#if defined(__AVX512F__)\n    #define FJ_TILE_k0 {cstage.VTILE_DEEP}\n    #else\n"
            f"    #define FJ_TILE_k0 {cstage.VTILE}\n    #endif") in text
    assert "fj_t += FJ_TILE_k0)" in text and "fj_tv5[FJ_TILE_k0]" in text
    rng = np.random.default_rng(3)
    args = [rng.uniform(lo, hi, 2048).astype(np.float32)
            for lo, hi in ((10, 200), (10, 200), (0.05, 2), (0, 0.08), (0.1, 0.6))]
    want = fusejit.jit(black_scholes)(*args)
    from fusejit.runtime import source_cache
    monkeypatch.setattr(source_cache, "render_source", source_cache._render)  # render afresh
    monkeypatch.setattr(cstage, "DEEP_BYTES", 0)
    deep = fusejit.jit(black_scholes)
    got = deep(*args)
    from fusejit.runtime.toolchain import detect
    if detect().vtile:  # (baseline x86-64 has no tile functions: nothing is staged there)
        assert "#define FJ_TILE_k0" in deep.lower_for(*args).source
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_float_cubes_give_the_double_paths_bits(monkeypatch):
    """`x ** 3` in a loop that only fills tiles takes the float32 fma cube (codegen/ccube.py) on
    AVX2 + FMA builds, and runs the loop again with fj_pow_f32 for a tile that holds a value it
    may get wrong (2^-50 <= |x| < 2^-33, huge, inf, NaN): the same bits as the loop without it,
    in tiles of normal values, of zeros and of each kind of special value alike (tanh(y) = y
    for the tiny cubes, so their bits reach the output)."""
    def f(x):
        return np.tanh(x ** 3) * 0.5 + np.tanh(x)

    rng = np.random.default_rng(5)
    x = rng.normal(0, 2, 128 * 12).astype(np.float32)
    x[128:256] = 0.0
    x[129] = -0.0
    x[256:768] = np.ldexp(rng.uniform(1, 2, 512), rng.integers(-50, -33, 512)).astype(np.float32)
    x[800], x[801], x[1000], x[1200] = 2.0 ** 45, -np.inf, np.nan, 2.0 ** 42
    jf = fusejit.jit(f)
    assert "= fj_cube_fma_f32(v" in jf.lower_for(x).source or not toolchain.detect().vtile
    fast = jf(x)
    with np.errstate(invalid="ignore", over="ignore"):
        assert_same(fast, f(x), rtol=2e-6, atol=0)
    from fusejit.codegen import ccube
    from fusejit.runtime import source_cache
    monkeypatch.setattr(source_cache, "render_source", source_cache._render)  # render afresh
    monkeypatch.setattr(ccube, "cubes", lambda body, consts: [])
    plain = fusejit.jit(f)
    assert "= fj_cube_fma_f32(v" not in plain.lower_for(x).source
    np.testing.assert_array_equal(fast, plain(x))


def test_cheap_values_are_recomputed_not_tiled():
    """gelu: 0.5 * x is evaluated again in the last loop, as x is loaded again there, instead of
    a loop of its own that stores it in a tile; a value used after the first store keeps its
    tile (its load would see that store when the output is the input's memory)."""
    body = [_load("v0", 0), Const("v1", 0.5, F32), _op("v2", "multiply", "v1", "v0"),
            _op("v3", "multiply", "v0", "v0"), _op("v4", "tanh", "v3"),
            _op("v5", "multiply", "v2", "v4"), Store(Access(1, 0, (1,)), "v5")]
    segments = stage_plan(body, libmvec=False, vtile=True)
    assert segments is not None and [s.kind for s in segments] == ["call", "compute"]
    check_plan(body, segments)
    assert segments[1].reads == ("v4",) and body[2] in segments[1].body
    late = body[:6] + [Store(Access(0, 0, (1,)), "v5"), _op("v6", "exp", "v5"),
                       _op("v7", "add", "v6", "v2"), Store(Access(1, 0, (1,)), "v7")]
    segments = stage_plan(late, libmvec=False, vtile=True)
    assert segments is not None
    check_plan(late, segments)
    assert "v2" in segments[-1].reads and all(late[2] not in s.body for s in segments[2:])


def test_tile_fn_and_plan():
    x = Load("v0", Access(0, 0, (1,)), np.dtype(np.float32))
    e32 = Compute("v1", "exp", ("v0",), (np.dtype(np.float32),), np.dtype(np.float32))
    e64 = Compute("v1", "exp", ("v0",), (np.dtype(np.float64),), np.dtype(np.float64))
    s32 = Compute("v1", "sin", ("v0",), (np.dtype(np.float32),), np.dtype(np.float32))
    assert tile_fn(e32) == "fj_tile_exp_f32"
    assert tile_fn(e64) is None and tile_fn(s32) is None and tile_fn(x) is None
    body = [x, e32, Store(Access(1, 0, (1,)), "v1")]
    assert stage_plan(body, libmvec=True, vtile=False) is None  # one libmvec call: not staged
    segments = stage_plan(body, libmvec=False, vtile=True)
    assert segments is not None and [s.kind for s in segments] == ["call", "compute"]
    check_plan(body, segments)


def _cases():
    rng = np.random.default_rng(3)

    def f32(*shape, lo=-3.0, hi=3.0):
        return rng.uniform(lo, hi, shape).astype(np.float32)

    def lstm(concat, c):
        i, j, f, o = np.split(concat, 4, axis=1)
        sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
        new_c = c * sig(f + 1.0) + sig(i) * np.tanh(j)
        return new_c, np.tanh(new_c) * sig(o)

    def trig(x, y):
        return np.sin(x) * np.cos(y) + np.exp(np.sin(x + y)), np.log1p(np.abs(x)) * np.tanh(y)

    def power_check(a, b):  # an error check inside a staged kernel
        return np.exp(a) + np.sin(b), a.astype(np.int64) ** b.astype(np.int64)

    pos = rng.uniform(0.5, 2.0, (5, 1024)).astype(np.float32)
    return [
        ("lstm", lstm, [f32(7, 4 * 128), f32(7, 128)]),
        ("lstm_strided", lstm, [f32(8, 4 * 64)[::2], f32(64, 4).T]),
        ("black_scholes", black_scholes, [pos[0] * 100, pos[1] * 100, pos[2], pos[3] / 20,
                                          pos[4] / 4]),
        ("trig_bcast_f64", trig, [rng.normal(size=(33, 1)), rng.normal(size=(1, 192))]),
        ("trig_zero_size", trig, [f32(0, 5), f32(1, 5)]),
        ("trig_0d", trig, [np.float32(0.5), np.float32(-2.0)]),
        ("power_check", power_check, [f32(320), np.full(320, 2, np.float32)]),
    ]


@pytest.mark.parametrize("name,fn,args", _cases(), ids=[c[0] for c in _cases()])
def test_staged_matches_numpy_and_unstaged(name, fn, args, monkeypatch):
    expected = fn(*args)
    staged = fusejit.jit(fn)(*args)
    # float32 sums cancel: an absolute margin scaled to the inputs (prices around 100)
    f64 = name == "trig_bcast_f64"
    atol = 1e-12 if f64 else (1e-4 if name == "black_scholes" else 2e-6)
    assert_same(staged, expected, rtol=1e-13 if f64 else 2e-6, atol=atol)
    monkeypatch.setattr(c_backend, "plan", lambda body, libmvec, vtile: None)
    plain = fusejit.jit(fn)(*args)
    # What is guaranteed per ISA: on AVX-512 targets a kernel vectorises the same math calls
    # staged or not, so the bits are equal, except that staged kernels call fj_vtile.h's tanh,
    # erf and log (other algorithms, within their ULP bounds; so do AVX2+FMA targets, whose
    # tests/test_vmath.py checks exp's bits and the bounds). Elsewhere gcc may leave an
    # unstaged loop with many calls scalar, calling libm where the staged one calls libmvec:
    # both within the documented ULP bounds, so equal within the tolerance, not in every bit.
    wide = "avx512f" in target_features()
    if wide and name != "lstm_strided" and name not in ("lstm", "black_scholes"):
        for a, b in zip(staged, plain):
            np.testing.assert_array_equal(a, b)
    else:
        assert_same(staged, plain, rtol=2e-6, atol=atol)


def test_staged_in_place_update_reads_old_values():
    def update(x, y):
        x[...] = np.exp(np.sin(x)) * np.cos(x) + y
        y[...] = np.exp(np.exp(x * 0.01)) * y
        return x, y

    def update2(x, y):  # x * 2 (recomputable) is read after x is stored
        h = x * 2.0
        x[...] = np.exp(x)
        y[...] = np.tanh(x + y) + h
        return x, y

    rng = np.random.default_rng(5)
    x0, y0 = rng.normal(size=1000).astype(np.float32), rng.normal(size=1000).astype(np.float32)
    for f in (update, update2):
        want = f(x0.copy(), y0.copy())
        got = fusejit.jit(f)(x0.copy(), y0.copy())
        assert_same(got, want, rtol=2e-6, atol=2e-6)


def test_staged_error_check_raises_like_numpy():
    def f(a, b):
        return np.exp(a) + np.sin(a), a.astype(np.int64) ** b

    a = np.ones(200, np.float32)
    b = np.full(200, 2, np.int64)
    b[150] = -1
    with pytest.raises(ValueError, match="negative integer powers"):
        f(a, b)
    with pytest.raises(ValueError, match="negative integer powers"):
        fusejit.jit(f)(a, b)


def test_toolchain_with_libmvec_stages_the_benchmark_kernels():
    if not toolchain.detect().libmvec:
        pytest.skip("no libmvec on this toolchain: nothing is staged")
    program = _program(black_scholes, [np.ones(5000, np.float32)] * 5)
    assert all(stage_body(k.body) for k in program.kernels)


@pytest.mark.parametrize("seed", range(40))
def test_random_bodies_keep_the_invariants(seed):
    """Seeded random SSA bodies: loads, constants, calls, arithmetic and stores in any mix."""
    rng = np.random.default_rng(seed)
    body: list[Stmt] = [_load("v0", 0), Const("v1", 2.0, F32)]
    for i in range(2, int(rng.integers(4, 40))):
        kind = rng.choice(["load", "call", "unary", "binary", "store"], p=[.1, .3, .2, .3, .1])
        defined = [s.var for s in body if not isinstance(s, Store)]
        pick = str(rng.choice(defined))
        if kind == "load":
            body.append(_load(f"v{i}", int(rng.integers(0, 3))))
        elif kind == "call":
            body.append(_op(f"v{i}", str(rng.choice(["exp", "tanh", "sin", "log"])), pick))
        elif kind == "unary":
            body.append(_op(f"v{i}", "negative", pick))
        elif kind == "binary":
            body.append(_op(f"v{i}", "add", pick, str(rng.choice(defined))))
        else:
            body.append(Store(Access(int(rng.integers(0, 5)), 0, (1,)), pick))
    segments = stage_body(body)
    if sum(is_vector_call(s) for s in body) < cstage.MIN_CALLS:
        assert segments is None
        return
    assert segments is not None
    check_plan(body, segments)
    seen_store = False
    for seg in segments:  # no load of any buffer after the loop of the first store
        if seen_store:
            assert not any(isinstance(s, Load) for s in seg.body)
        seen_store |= any(isinstance(s, Store) for s in seg.body)
