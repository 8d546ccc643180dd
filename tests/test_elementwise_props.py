"""Property tests: compiled elementwise programs equal NumPy.

Hypothesis draws programs (random expression trees, and sweeps that apply every supported
unary/binary/ternary op and cast to one drawn set of operands), shapes (0-d, size 1, zero-size,
broadcasting), dtypes, argument kinds (arrays in any layout: permuted axes, steps, negative
steps, stride 0; 0-d arrays; NumPy scalars; Python scalars, weak per NEP 50) and data. Each
example checks `jit(f)(*xs)` against `f(*xs)` (exception type, structure, leaf types, dtype,
shape, values), that the arguments are unmodified, and that a second call does not retrace.

A sweep applies many ops to the same operands in ONE function (one C compile per example),
so every op meets every dtype and layout without a compile per op.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from exprgen import (
    BINARY,
    DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    LAYOUTS,
    UNARY,
    ArgSpec,
    DrawChooser,
    Expr,
    Generator,
    check_program,
    describe,
)
from hypothesis import given, note, settings
from hypothesis import strategies as st

DIMS = [1, 2, 3, 4, 5, 7]


@st.composite
def shapes(draw: st.DrawFn, max_ndim: int = 3) -> tuple[int, ...]:
    ndim = draw(st.integers(0, max_ndim))
    zero = draw(st.integers(0, 9)) == 0  # zero-size arrays, now and then
    dims = [draw(st.sampled_from(DIMS)) for _ in range(ndim)]
    if zero and dims:
        dims[draw(st.integers(0, ndim - 1))] = 0
    return tuple(dims)


dtypes = st.sampled_from(DTYPES)
# float16 is a storage type (computed in float32, as NumPy does): swept too
sweep_dtypes = st.sampled_from([*DTYPES, np.dtype(np.float16)])


def broadcast_partner(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts with `shape` (dims dropped or set to 1 on either side)."""
    drop = draw(st.integers(0, len(shape)))
    rest = list(shape[drop:])
    for i in range(len(rest)):
        if draw(st.integers(0, 3)) == 0:
            rest[i] = 1
    if drop == 0 and len(rest) < 3 and draw(st.integers(0, 3)) == 0:
        rest = [draw(st.sampled_from([1, 2]))] + rest
    return tuple(rest)


def operand(draw: st.DrawFn, gen: Generator, dtype: np.dtype, shape: tuple[int, ...],
            kinds: tuple[str, ...] = ("array",)) -> Expr:
    kind = draw(st.sampled_from(kinds))
    if kind == "array":
        layout = draw(st.sampled_from(LAYOUTS))
        return gen.arg(ArgSpec("array", dtype, shape, layout), np.zeros((), dtype))
    if kind == "npscalar":
        return gen.arg(ArgSpec("npscalar", dtype), np.zeros((), dtype))
    value = draw(st.sampled_from({"b": [True, False], "i": [0, 1, 2, 3, 7, 100, 127],
                                  "f": [0.5, -0.0, 2.5, 1e10, float("nan"), -3.25]}[
        draw(st.sampled_from("bif"))]))
    return gen.arg(ArgSpec("pyscalar", value=value), value)


def test_generator_produces_every_feature() -> None:
    """Sanity check of the test generator itself: the drawn programs do exercise views,
    casts, scalars and every layout (so the properties below are not vacuous)."""
    from exprgen import SeededChooser, leaves

    kinds, layouts, ops = set(), set(), set()
    for seed in range(60):
        gen = Generator(SeededChooser(seed), DTYPES, max_depth=4)
        e = gen.expr((3, 4))
        stack = leaves(e)
        while stack:
            x = stack.pop()
            kinds.add(x.kind)
            if x.kind == "ufunc":
                ops.add(x.param[0])
            stack.extend(x.children)
        layouts |= {a.layout for a in gen.args if a.kind == "array"}
        kinds |= {a.kind for a in gen.args}
    assert {"ufunc", "where", "clip", "astype", "view", "arg", "lit", "npscalar",
            "pyscalar", "array"} <= kinds
    assert set(LAYOUTS) <= layouts
    assert len(ops) > 40


@given(data=st.data())
def test_random_expressions(data: st.DataObject) -> None:
    """Random expression trees over random operands equal NumPy."""
    pool = data.draw(st.lists(dtypes, min_size=1, max_size=3, unique=True))
    shape = data.draw(shapes())
    gen = Generator(DrawChooser(data), pool, max_depth=3)
    n_out = data.draw(st.integers(1, 2))
    exprs = [gen.expr(shape) for _ in range(n_out)]
    result = exprs[0] if n_out == 1 else tuple(exprs)
    seed = data.draw(st.integers(0, 2**32 - 1))
    note(describe(result, gen.args))
    check_program(result, gen.args, seed)


def _all_ops(gen: Generator, table: dict, operands: list[Expr]) -> list[Expr]:
    """Every op of `table` that NumPy accepts for these operands (and the operator form)."""
    out = []
    for name, spec in table.items():
        forms = ["fn", "op"] if spec.operator else ["fn"]
        for form in forms:
            if form == "op" and all(o.weak or o.shape == () for o in operands):
                continue  # Python-operator form on scalars only: covered by the fn form
            args = list(operands)
            if name == "power" and all(o.dtype.kind in "iub" for o in args):
                args[1] = _nonneg(gen, args[1])
            e = gen.node("ufunc", args, (name, form))
            if e is not None:
                out.append(e)
    return out


def _nonneg(gen: Generator, e: Expr) -> Expr:
    """`e & 3`: integer exponents NumPy accepts."""
    three = Expr("lit", (), 3, np.dtype(np.int64), (), weak=True, probe=3)
    if e.weak:
        return Expr("lit", (), 2, np.dtype(np.int64), (), weak=True, probe=2)
    masked = gen.node("ufunc", [e, three], ("bitwise_and", "op"))
    assert masked is not None
    return masked


def _casts(gen: Generator, x: Expr) -> list[Expr]:
    out = []
    for target in [*DTYPES, np.dtype(np.float16)]:
        if x.dtype.kind == "f" and target.kind in "iu":
            lo, hi = (-100, 100) if target.kind == "i" else (0, 200)
            e = gen.node("safecast", [x], (lo, hi, target))
        else:
            e = gen.node("astype", [x], target)
        if e is not None:
            out.append(e)
    return out


# Each example of the sweep builds one kernel of every unary op (~1 s of gcc): half the
# profile's examples (25 in CI, where this file runs under five targets/backends).
@settings(max_examples=max(10, settings().max_examples // 2))
@given(data=st.data())
def test_unary_sweep(data: st.DataObject) -> None:
    """Every unary op, cast, round, copy and *_like on one operand equals NumPy."""
    dtype = data.draw(st.sampled_from(DTYPES + [np.dtype(np.float16)]))
    shape = data.draw(shapes())
    gen = Generator(DrawChooser(data), [dtype])
    x = operand(data.draw, gen, dtype, shape, ("array", "array", "array", "npscalar"))
    outs = _all_ops(gen, UNARY, [x]) + _casts(gen, x)
    for extra in [("round", 0), ("round", 2), ("copy", "fn"), ("copy", "method"),
                  ("like", ("ones", None, None)), ("like", ("zeros", None, np.float32)),
                  ("like", ("full", 3, None)), ("clip", "fn")]:
        kind, param = extra
        if kind == "clip":
            lo = Expr("lit", (), 1, np.dtype(np.int64), (), weak=True, probe=1)
            hi = Expr("lit", (), 5, np.dtype(np.int64), (), weak=True, probe=5)
            e = gen.node("clip", [x, lo, hi], "fn")
        else:
            e = gen.node(kind, [x], param)
        if e is not None:
            outs.append(e)
    assert len(outs) > 15
    seed = data.draw(st.integers(0, 2**32 - 1))
    note(describe(tuple(outs), gen.args))
    check_program(tuple(outs), gen.args, seed)


@given(data=st.data())
def test_binary_sweep(data: st.DataObject) -> None:
    """Every binary op (function and operator forms) on one pair of operands equals NumPy:
    mixed dtypes, broadcasting, NumPy and Python scalars (NEP 50)."""
    da, db = data.draw(sweep_dtypes), data.draw(sweep_dtypes)
    sa = data.draw(shapes())
    sb = broadcast_partner(data.draw, sa)
    gen = Generator(DrawChooser(data), [da, db])
    a = operand(data.draw, gen, da, sa, ("array", "array", "array", "npscalar"))
    b = operand(data.draw, gen, db, sb, ("array", "array", "npscalar", "pyscalar"))
    if data.draw(st.booleans()):
        a, b = b, a
    if a.weak and b.weak:
        return
    outs = _all_ops(gen, BINARY, [a, b])
    assert outs, "no binary op accepts these operands"
    seed = data.draw(st.integers(0, 2**32 - 1))
    note(describe(tuple(outs), gen.args))
    check_program(tuple(outs), gen.args, seed)


@given(data=st.data())
def test_where_clip_sweep(data: st.DataObject) -> None:
    """np.where and np.clip (function and method) with three broadcasting operands of any
    dtypes, including NumPy and Python scalars."""
    shape = data.draw(shapes())
    ds = [data.draw(sweep_dtypes) for _ in range(3)]
    gen = Generator(DrawChooser(data), ds)
    ops = [operand(data.draw, gen, d, broadcast_partner(data.draw, shape),
                   ("array", "array", "npscalar", "pyscalar")) for d in ds]
    if all(o.weak for o in ops):
        return
    outs = []
    for e in [gen.node("where", ops, None), gen.node("clip", ops, "fn"),
              gen.node("clip", ops, "method")]:
        if e is not None:
            outs.append(e)
    cond = gen.node("ufunc", [ops[1], ops[2]], ("less", "fn"))
    if cond is not None:
        e = gen.node("where", [cond, ops[1], ops[2]], None)
        if e is not None:
            outs.append(e)
    if not outs:
        return
    seed = data.draw(st.integers(0, 2**32 - 1))
    note(describe(tuple(outs), gen.args))
    check_program(tuple(outs), gen.args, seed)


@given(dtype=st.sampled_from(INT_DTYPES + FLOAT_DTYPES), data=st.data())
def test_same_signature_new_data_does_not_retrace(dtype: np.dtype, data: st.DataObject) -> None:
    """New values with the same signature reuse the compiled code and still match NumPy."""
    from conftest import assert_same
    from exprgen import layout_array, random_values

    import fusejit

    shape = data.draw(shapes())
    layout = data.draw(st.sampled_from(LAYOUTS))

    def f(x, y):
        return np.maximum(x * 3 - y, y // 2), np.where(x > y, x, -y)

    jf = fusejit.jit(f)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        # new values, same layout (the layout's own random choices are fixed)
        x = layout_array(random_values(rng, dtype, shape), layout, np.random.default_rng(0))
        y = layout_array(random_values(rng, dtype, shape), layout, np.random.default_rng(0))
        with np.errstate(all="ignore"):
            expected = f(x, y)
        assert_same(jf(x, y), expected)
    assert jf.trace_count == 1


# --- known bugs (the generators steer around them: exprgen.known_bug) -------------------------


def test_known_bug_list_is_pinned() -> None:
    from exprgen import SeededChooser, known_bug

    assert known_bug("ufunc", ("nextafter", "fn"), np.dtype(np.float16))
    assert not known_bug("ufunc", ("nextafter", "fn"), np.dtype(np.float32))
    assert known_bug("ufunc", ("spacing", "fn"), np.dtype(np.float16))
    gen = Generator(SeededChooser(0), [np.dtype(np.float32)])
    x = gen.array_leaf((3,))
    i64 = gen.node("safecast", [x], (-100, 100, np.dtype(np.int64)))
    i32 = gen.node("safecast", [x], (-100, 100, np.dtype(np.int32)))
    assert i64 is not None and i32 is not None
    assert gen.node("astype", [i64], np.dtype(np.float32)) is not None  # fixed: no exclusion
    assert gen.node("astype", [i32], np.dtype(np.float32)) is not None
    assert gen.node("astype", [i64], np.dtype(np.int8)) is not None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_int64_float_round_trip_keeps_the_sign_of_zero(dtype: type) -> None:
    """Was a bug: under -fno-trapping-math gcc folded (double)(int64_t)x into trunc(x), giving
    -0.0 for values in (-1, 0) where NumPy gives 0.0. fusejit no longer passes that flag."""
    from conftest import assert_same

    import fusejit

    def f(x):
        return x.astype(np.int64).astype(dtype)

    x = np.array([-0.3, -0.7, 0.5, 2.5] * 4, dtype)
    assert_same(fusejit.jit(f)(x), f(x))


def test_float_where_keeps_nan_payloads_and_signed_zeros() -> None:
    """np.where of float32/float64 (fj_where_T, a bitwise blend on x86-64-v3) returns each
    chosen element's bits: NaN payloads and signs, -0.0, infinities and subnormals, from a
    compare, a stored bool array and a computed arm, in one program."""
    import fusejit

    def f(x, y, m, x64, y64):
        return (np.where(x > y, x, y), np.where(m, -x, y), np.where(m, y64, x64),
                np.where(x64 != 0, x64 * 1, -y64), np.where(m, x.astype(np.int32), 7))

    specials = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1e-40, -1.5, 2.0, 3.0]
    x = np.array(specials * 3, np.float32)
    x.view(np.uint32)[[0, 10, 20]] = [0x7FC01234, 0xFFD00001, 0x7FFFFFFF]  # payloads
    y = np.roll(x, 3)
    m = (np.arange(x.size) % 3 == 0)
    x64 = np.array(specials * 3, np.float64)
    x64.view(np.uint64)[[1, 11]] = [0xFFF8000000ABCDEF, 0x7FF8DEAD00000001]
    y64 = np.roll(x64, 4)
    with np.errstate(invalid="ignore"):
        got, want = fusejit.jit(f)(x, y, m, x64, y64), f(x, y, m, x64, y64)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))


def test_known_bug_nextafter_float16() -> None:
    """A float16 nextafter cannot be computed in float32 (the step is a float16 ulp): fusejit
    refuses it at trace time instead of returning a different answer."""
    import fusejit

    def f(x, y):
        return np.nextafter(x, y)

    x = np.array([0.0, 1.0, -2.0], np.float16)
    y = np.array([1.0, 2.0, 0.0], np.float16)
    with pytest.raises(fusejit.UnsupportedError, match="nextafter"):
        fusejit.jit(f)(x, y)
    with pytest.raises(fusejit.UnsupportedError, match="spacing"):
        fusejit.jit(lambda v: np.spacing(v))(x)
    with pytest.raises(fusejit.UnsupportedError, match="spacing"):
        fusejit.jit(lambda v: np.spacing(v))(np.arange(3, dtype=np.int8))  # (NumPy's loop: float16)


def test_float16_extremes_and_clip_keep_numpys_ties() -> None:
    """NumPy's float16 maximum/minimum/fmax/fmin/clip compare plainly, so of +0 and -0 the
    first operand wins (its float32 loops differ, and fusejit computes float16 in float32);
    found by test_binary_sweep: np.minimum(False, float16(-0.0)) is +0.0."""
    from conftest import assert_same

    import fusejit

    v = np.array([np.nan, -np.inf, -1.0, -0.0, 0.0, 1.0, np.inf], np.float16)
    x, lo, hi = (a.ravel() for a in np.meshgrid(v, v, v, indexing="ij"))

    def f(x, lo, hi, m):
        return (np.minimum(x, lo), np.maximum(x, lo), np.fmin(x, lo), np.fmax(x, lo),
                np.clip(x, lo, hi), np.minimum(m, np.float16(-0.0)))

    with np.errstate(invalid="ignore"):
        want = f(x, lo, hi, x > 0)
        got = fusejit.jit(f)(x, lo, hi, x > 0)
    assert_same(got, want)
    for g, w in zip(got, want):  # +0 and -0 compare equal: the signs too
        assert (np.signbit(g) == np.signbit(w)).all()


def _float16_ties() -> np.ndarray:
    rng = np.random.default_rng(7)
    pool = np.array([0.0, -0.0, -1.0, np.nan, -np.inf], np.float16)
    x = rng.choice(pool, size=(6, 4, 9), p=[0.4, 0.4, 0.1, 0.05, 0.05])
    x[0] = -0.0
    x[1, :, 0] = 0.0
    return x


def _same_with_zero_signs(f, x: np.ndarray) -> None:
    import fusejit

    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmax of an all-NaN slice
        want = f(x)
        got = fusejit.jit(f)(x)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
        assert (np.signbit(g) == np.signbit(w)).all()


def test_float16_reductions_keep_the_first_zero() -> None:
    """NumPy's float16 max/min reductions keep the first of tied +0/-0 (its half loops are
    scalar, `acc >= v ? acc : v`); fusejit fixes a zero result's sign from the first zero of
    its slice (frontend/half_ties.py). Rows hold zeros of both signs in random order, with -1,
    NaN and -inf, over one and several axes, initial=."""
    def f(x):
        return (np.max(x, axis=2), np.min(x, axis=0), np.max(x, axis=(0, 2)), np.max(x[1]),
                np.nanmax(x, axis=2), np.nanmin(x, axis=1), np.max(x, axis=2, initial=-0.0),
                np.maximum.reduce(x, axis=1))

    _same_with_zero_signs(f, _float16_ties())


@pytest.mark.c_only  # the CUDA backend refuses scans
def test_float16_scans_keep_the_first_zero() -> None:
    """The same for maximum/minimum/fmax/fmin.accumulate: each zero takes the sign of the
    first zero of its prefix."""
    def f(x):
        return (np.maximum.accumulate(x, axis=2), np.minimum.accumulate(x, axis=0),
                np.fmax.accumulate(x, axis=2), np.fmin.accumulate(x, axis=1))

    _same_with_zero_signs(f, _float16_ties())


def test_float_clip_ties_follow_numpys_loop() -> None:
    """NumPy's float32/float64 clip with bounds of stride 0 (Python floats, 0-d arrays,
    size-1 arrays broadcast) keeps the value on a tie of +0 and -0 with a bound; with array
    bounds its loop gives the bound. Found by the fuzzer (np.clip(np.floor(-0.0), lo, hi));
    a float16 clip with 0-d bounds and an array one failed to compile (an IRError)."""
    from conftest import assert_same

    import fusejit

    def s(a):
        return np.signbit(np.asarray(a)).tolist()

    for dt in (np.float64, np.float32, np.float16):
        z = np.array([-0.0, 0.0, 0.5, np.nan], dt)
        cases = [(lambda x: np.clip(x, 0.0, 1.0), (z,)),
                 (lambda x: np.clip(x, -0.0, 0.0), (z,)),
                 (lambda x, lo: np.clip(x, lo, 1.0), (z, np.zeros(4, dt))),
                 (lambda x, lo, hi: np.clip(x, lo, hi), (z, np.array(0.0, dt), np.zeros((1,), dt))),
                 (lambda x, lo, hi: x.clip(lo, hi), (z[:, None], np.full((1, 1), -0.0, dt),
                                                     np.full(3, 0.0, dt))),
                 (lambda x: np.clip(x[0], 0.0, 1.0), (z,))]
        for f, args in cases:
            want, got = f(*args), fusejit.jit(f)(*args)
            assert_same(got, want)
            assert s(got) == s(want), (dt, s(got), s(want))
