"""Tests of the simplification passes (lowering/simplify.py, simplify_views.py, fastmath.py,
patterns.fuse_sigmoid) and of `jit(fastmath=True)`.

For every pass: a before/after test through the IR printer, an idempotence test, and (for the
exact passes) compiled results equal to NumPy's bit for bit on -0.0, inf and NaN. A hypothesis
property test checks that the exact pipeline never changes what the interpreter computes.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fusejit
from fusejit.frontend.interpret import interpret
from fusejit.frontend.ir import Graph, Node, TensorType, format_graph
from fusejit.frontend.trace import trace
from fusejit.lowering import fastmath, passes, patterns, simplify, simplify_views
from fusejit.lowering.pipeline import DEFAULT_PASSES, FASTMATH_PASSES, optimise
from fusejit.lowering.rewriting import same_type_as

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
SPECIAL = [-0.0, 0.0, np.inf, -np.inf, np.nan, -np.nan, 1.5, -2.25, 3e38, -1e-40, 7.0, 0.1]

SAFE = [("simplify", simplify.simplify), ("simplify_arith", simplify.simplify_arith),
        ("simplify_casts", simplify.simplify_casts),
        ("simplify_views", simplify_views.simplify_views)]
UNSAFE = [("fastmath_arith", fastmath.fastmath_arith), ("fuse_sigmoid", patterns.fuse_sigmoid)]


def canon(g: Graph) -> str:
    """format_graph with ids renumbered in order of appearance and locations dropped."""
    text = re.sub(r"  # .*", "", format_graph(g))
    names: dict[str, str] = {}
    return re.sub(r"%\d+", lambda m: names.setdefault(m.group(0), f"%{len(names)}"), text)


def traced(fn, *args) -> Graph:
    return trace(fn, list(args))[0]


def body(g: Graph) -> list[str]:
    """The printed nodes after the inputs, without the graph header and return line."""
    return [line.strip() for line in canon(g).splitlines()[1:-2]
            if "= input()" not in line]


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return simplify.same_bits(np.asarray(a), np.asarray(b))


def specials(dtype: np.dtype, shape: tuple[int, ...] = (12,)) -> np.ndarray:
    with np.errstate(all="ignore"):
        v = np.array(SPECIAL).astype(dtype)
    return np.resize(v, shape)


# --- arithmetic: before/after ------------------------------------------------------------------


def test_float_identities_become_the_input() -> None:
    g = traced(lambda x: ((x * 1) / 1 - 0.0) * np.float32(1), np.ones(4, F32))
    assert body(g) == [
        "%1 = const() {value=1.} : float32[]", "%2 = multiply(%0, %1) : float32[4]",
        "%3 = const() {value=1.} : float32[]", "%4 = divide(%2, %3) : float32[4]",
        "%5 = const() {value=0.} : float32[]", "%6 = subtract(%4, %5) : float32[4]",
        "%7 = const() {value=1.} : float32[]", "%8 = multiply(%6, %7) : float32[4]"]
    after = passes.verify(simplify.simplify_arith(g))
    assert after.outputs[0] is after.inputs[0]
    assert body(after) == []


def test_adding_zero_keeps_plus_zero_and_drops_minus_zero() -> None:
    g = traced(lambda x: (x + 0.0, x + np.float32(-0.0), np.float32(-0.0) + x, x - (-0.0),
                          0.0 - x), np.ones(3, F32))
    after = simplify.simplify(g)
    out = after.outputs
    assert out[1] is after.inputs[0] and out[2] is after.inputs[0]
    assert [o.op for o in (out[0], out[3], out[4])] == ["add", "subtract", "subtract"]


def test_integer_identities_and_exact_integer_rewrites() -> None:
    def f(i):
        return (i + 0, 0 + i, i * 1, i // 1, 0 - i, i * 0, i - i, (i + 3) + 4, 2 * (i * 5))

    g = traced(f, np.arange(5, dtype=np.int16))
    after = passes.verify(simplify.simplify(g))
    x = after.inputs[0]
    out = after.outputs
    assert all(o is x for o in out[:4])
    assert out[4].op == "negative" and out[4].inputs == (x,)
    for zero in out[5:7]:
        assert zero.op == "view" and int(zero.inputs[0].attrs["value"]) == 0
    assert [o.op for o in out[7:]] == ["add", "multiply"]
    assert [o.inputs[0] for o in out[7:]] == [x, x]
    assert [int(o.inputs[1].attrs["value"]) for o in out[7:]] == [7, 10]
    assert [o.type for o in out] == [o.type for o in g.outputs]


def test_bool_identities() -> None:
    g = traced(lambda b: (b * True, b + False, b * False), np.array([True, False]))
    after = simplify.simplify(g)
    assert after.outputs[0] is after.inputs[0] and after.outputs[1] is after.inputs[0]
    zero = after.outputs[2]
    assert zero.op == "view" and zero.inputs[0].attrs["value"].dtype == np.bool_


def test_float_rewrites_that_are_not_exact_are_left_alone() -> None:
    def f(x):
        return x * 0, x - x, x + 0.0, (x + 1) + 2, x / 3, np.power(x, np.full(4, 2, F32))

    g = traced(f, np.ones(4, F32))
    assert canon(simplify.simplify(g)) == canon(passes.dce(g))


def test_division_by_a_power_of_two_is_a_multiplication() -> None:
    g = traced(lambda x: (x / 4, x / np.array([0.5, -2.0, 8.0], F32), x / 3), np.ones(3, F32))
    after = simplify.simplify(g)
    a, b, c = after.outputs
    assert a.op == "multiply" and float(a.inputs[1].attrs["value"]) == 0.25
    assert b.op == "multiply" and list(b.inputs[1].attrs["value"]) == [2.0, -0.5, 0.125]
    assert c.op == "divide"


def test_scalar_powers_follow_numpy() -> None:
    g = traced(lambda x: (np.power(x, 1.0), np.power(x, 2.0), np.power(x, 0.5),
                          np.power(x, 3.0)), np.ones(3, F64))
    after = simplify.simplify(g)
    x = after.inputs[0]
    assert after.outputs[0] is x
    assert after.outputs[1].op == "multiply" and after.outputs[1].inputs == (x, x)
    assert after.outputs[3].op == "power"
    # x ** 0.5 is sqrt(x) exactly when NumPy itself computes it that way (NumPy 2.x does).
    v = specials(F64)
    with np.errstate(all="ignore"):
        numpy_takes_sqrt = same_bits(np.power(v, 0.5), np.sqrt(v))
    assert simplify.numpy_power_is_exact(0.5, F64) == numpy_takes_sqrt
    assert after.outputs[2].op == ("sqrt" if numpy_takes_sqrt else "power")


def test_identity_constant_of_any_shape_keeps_the_node_type() -> None:
    ones = np.ones((2, 3), F32)  # (made outside: np.ones inside would be a traced array)
    g = traced(lambda x: (x * ones, x * np.array([1, 1, 2], F32)), np.ones(3, F32))
    after = passes.verify(simplify.simplify(g))
    bcast, kept = after.outputs
    assert bcast.op == "view" and bcast.inputs[0] is after.inputs[0]
    assert bcast.type == g.outputs[0].type
    assert kept.op == "multiply"


def test_same_type_as_refuses_other_dtypes() -> None:
    x = Node("input", (), TensorType((3,), F32), {"index": 0})
    node = Node("cast", (x,), TensorType((3,), F64), {"dtype": F64})
    assert same_type_as(x, node) is node


def test_double_negation_of_integers() -> None:
    g = traced(lambda i: np.negative(-i), np.arange(3, dtype=np.int8))
    after = simplify.simplify(g)
    assert after.outputs[0] is after.inputs[0]


# --- casts ----------------------------------------------------------------------------------


def test_cast_chains() -> None:
    def f(x, i):
        return (x.astype(F64).astype(F32), x.astype(F32), i.astype(np.int32).astype(np.int64),
                x.astype(F64).astype(np.float16), x.astype(np.float16).astype(F64),
                x.astype(F64).astype(np.int32), i.astype(F64).astype(np.int16),
                i.astype(F64).astype(np.int8))

    g = traced(f, np.ones(3, F32), np.ones(3, np.int8))
    after = passes.verify(simplify.simplify_casts(g))
    x, i = after.inputs
    out = after.outputs
    assert out[0] is x
    assert out[1].op == "copy" and out[1].inputs == (x,)  # astype copies
    assert out[2].op == "cast" and out[2].inputs[0] is i and out[2].dtype == np.int64
    assert out[3].op == "cast" and out[3].inputs[0] is x  # f32 -> f64 exact, -> f16 once
    assert out[4].inputs[0].op == "cast"  # f32 -> f16 rounds: kept
    assert out[5].inputs[0].op == "cast"  # float -> int: undefined out of range, kept
    assert out[6].inputs[0] is i  # int8 -> f64 -> int16: every int8 fits int16
    assert out[7] is i  # ... and back to int8: nothing at all
    for a, b in zip(out, g.outputs):
        assert a.type == b.type


def test_integer_through_float_that_rounds_is_kept() -> None:
    """int64 -> float64 is a NumPy "safe" cast but rounds beyond 2**53: the chain stays."""
    def f(i, j):
        return (i.astype(F64).astype(np.int64), i.astype(F64).astype(F32),
                j.astype(F64).astype(F32), j.astype(F32).astype(F64))

    g = traced(f, np.ones(3, np.int64), np.ones(3, np.int32))
    after = passes.verify(simplify.simplify_casts(g))
    i, j = after.inputs
    out = after.outputs
    assert out[0].inputs[0].op == "cast" and out[0].inputs[0].inputs[0] is i
    assert out[1].inputs[0].op == "cast"
    assert out[2].op == "cast" and out[2].inputs[0] is j  # int32 fits a double: one cast
    assert out[3].inputs[0].op == "cast"  # int32 -> float32 rounds: kept
    v = np.array([2**60 + 1, 2**60 + 2**36 + 1, -(2**53) - 1], np.int64)
    w = np.array([2**31 - 1, -(2**24) - 1, 7], np.int32)
    for a, b in zip(interpret(g, [v, w]), interpret(after, [v, w])):
        assert same_bits(a, b)


def test_exact_jit_of_int64_through_double() -> None:
    x = np.array([2**60 + 1, 2**53 + 1, 2**60 + 2**36 + 1], np.int64)
    got = fusejit.jit(lambda x: (x.astype(F64).astype(np.int64), x.astype(F64).astype(F32)))(x)
    assert same_bits(got[0], x.astype(F64).astype(np.int64))
    assert same_bits(got[1], x.astype(F64).astype(F32))


# --- views ----------------------------------------------------------------------------------


def _view(x: Node, start, dims, shape) -> Node:
    return Node("view", (x,), TensorType(shape, x.dtype), {"start": start, "dims": dims})


def test_view_of_view_composes_and_transpose_of_transpose_vanishes() -> None:
    x = Node("input", (), TensorType((3, 4), F32), {"index": 0})
    t = _view(x, (0, 0), ((1, 1), (0, 1)), (4, 3))
    tt = _view(t, (0, 0), ((1, 1), (0, 1)), (3, 4))
    s = _view(x, (0, 1), ((1, 2), (0, 1)), (2, 3))  # s[i, j] = x[j, 1 + 2i]
    sub = _view(s, (1, 0), ((1, 1),), (3,))  # s[1, :] = x[:, 3]
    g = passes.verify(Graph([x], [tt, sub], "views"))
    after = passes.verify(simplify_views.simplify_views(g))
    assert after.outputs[0] is x
    composed = after.outputs[1]
    assert composed.op == "view" and composed.inputs[0] is x
    assert composed.attrs == {"start": (0, 3), "dims": ((0, 1),)}
    v = np.arange(12, dtype=F32).reshape(3, 4)
    for a, b in zip(interpret(g, [v]), interpret(after, [v])):
        assert same_bits(a, b)


def test_broadcast_before_a_broadcasting_op_is_dropped() -> None:
    def f(x, y, z):
        return np.broadcast_to(y, (3, 4)) + x, np.broadcast_to(z, (3, 4)) * 2, \
            np.broadcast_to(y, (2, 3, 4)) - x

    g = traced(f, np.ones((3, 4), F32), np.ones(4, F32), np.ones((3, 1), F32))
    assert [n.op for n in g.nodes()].count("view") == 3
    after = passes.verify(simplify_views.simplify_views(g))
    x, y, z = after.inputs
    assert after.outputs[0].inputs == (y, x)
    # z * 2 alone would have z's shape: that broadcast is needed.
    assert after.outputs[1].inputs[0].op == "view"
    # y (4,) and x (3, 4) broadcast to (3, 4) only: the (2, 3, 4) broadcast is needed.
    assert after.outputs[2].inputs[0].op == "view"
    for a, b in zip(after.outputs, g.outputs):
        assert a.type == b.type


def test_reshape_chains_become_one_reshape() -> None:
    def f(x):
        a = x.reshape(4, 6).reshape(24)  # split then merge: back to x
        b = x.reshape(2, 2, 6).reshape(4, 6)  # split then merge: a split of x
        c = x.reshape(4, 6).T.reshape(24)  # a transpose in between: not a reshape chain
        return a, b * 2, c + 1

    g = traced(f, np.arange(24, dtype=F32))
    after = passes.verify(simplify_views.simplify_views(g))
    x = after.inputs[0]
    assert after.outputs[0] is x
    b = after.outputs[1].inputs[0]
    assert b.op == "view" and b.inputs[0] is x and b.shape == (4, 6)
    c = after.outputs[2].inputs[0]
    assert c.op == "reshape" and c.inputs[0].op == "view" and c.inputs[0].inputs[0] is x
    v = np.arange(24, dtype=F32)
    for got, want in zip(interpret(after, [v]), f(v)):
        np.testing.assert_array_equal(got, want)
    assert canon(simplify_views.simplify_views(after)) == canon(after)


def test_merge_of_a_merge_is_one_reshape_and_compiles() -> None:
    def f(x):
        return x.reshape(6, 4).reshape(24) * 3.0

    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    g = traced(f, x)
    after = passes.verify(simplify_views.simplify_views(g))
    ops = [n.op for n in after.nodes()]
    assert ops.count("reshape") == 1 and "view" not in ops
    np.testing.assert_array_equal(fusejit.jit(f)(x), f(x))
    xt = np.ascontiguousarray(x.transpose(2, 1, 0)).transpose(2, 1, 0)  # Fortran order
    np.testing.assert_array_equal(fusejit.jit(f)(xt), f(xt))


# --- idempotence and type preservation -------------------------------------------------------


def _busy_graph() -> Graph:
    def f(x, y, i):
        a = (x * 1 + np.float32(-0.0)) / 2 - 0.0
        b = np.broadcast_to(y, (3, 4)) * np.ones((3, 4), F32) + a.T.T
        c = (i.astype(np.int32).astype(np.int64) + 1) + 2
        d = 1 / (1 + np.exp(-(b * 0 + x - x))) + np.power(b, 2.0)
        return np.negative(-d), c * 1, x.astype(F64).astype(F32) + 0.0, (b + 1.0) + 2.0

    return traced(f, np.ones((3, 4), F32), np.ones(4, F32), np.ones(4, np.int8))


@pytest.mark.parametrize("name,fn", SAFE + UNSAFE + [("hoist_negation",
                                                      patterns.hoist_negation)])
def test_passes_are_idempotent_and_keep_types(name: str, fn) -> None:
    g = _busy_graph()
    once = passes.verify(fn(g))
    twice = passes.verify(fn(once))
    assert format_graph(twice) == format_graph(once), name
    assert [o.type for o in once.outputs] == [o.type for o in g.outputs]
    assert once.inputs == g.inputs


def test_passes_do_not_mutate_their_input() -> None:
    g = _busy_graph()
    before = format_graph(g)
    for _, fn in SAFE + UNSAFE:
        fn(g)
    assert format_graph(g) == before


def test_safe_passes_keep_interpreter_results_bit_for_bit() -> None:
    g = _busy_graph()
    args = [specials(F32, (3, 4)), specials(F32, (4,)), np.arange(-2, 2, dtype=np.int8)]
    ref = interpret(g, args)
    for name, fn in SAFE:
        for a, b in zip(ref, interpret(fn(g), args)):
            assert same_bits(a, b), name
    for a, b in zip(ref, interpret(optimise(g), args)):
        assert same_bits(a, b)


# --- fastmath ---------------------------------------------------------------------------------


def test_fastmath_arith_before_after() -> None:
    def f(x):
        return x * 0, x - x, x + 0.0, (x + 1) + 2, (3 * x) * 2, x / 3

    g = traced(f, np.ones(4, F32))
    after = passes.verify(fastmath.fastmath_arith(g))
    zero, zero2, same, add, mul, div = after.outputs
    assert zero.op == "view" and float(zero.inputs[0].attrs["value"]) == 0.0
    assert zero2.op == "view" and same is after.inputs[0]
    assert add.op == "add" and float(add.inputs[1].attrs["value"]) == 3.0
    assert mul.op == "multiply" and float(mul.inputs[1].attrs["value"]) == 6.0
    assert div.op == "multiply" and div.inputs[1].attrs["value"] == np.float32(1) / 3


def test_fuse_sigmoid_before_after() -> None:
    g = traced(lambda x: (1 / (1 + np.exp(-x)), np.reciprocal(np.exp(-x) + 1),
                          2 / (1 + np.exp(-x))), np.ones(4, F32))
    after = passes.verify(passes.dce(patterns.fuse_sigmoid(g)))
    assert body(after) == [
        "%1 = expit(%0) : float32[4]", "%2 = expit(%0) : float32[4]",
        "%3 = const() {value=2.} : float32[]", "%4 = const() {value=1.} : float32[]",
        "%5 = negative(%0) : float32[4]", "%6 = exp(%5) : float32[4]",
        "%7 = add(%4, %6) : float32[4]", "%8 = divide(%3, %7) : float32[4]"]


def test_pipeline_runs_fastmath_passes_only_when_asked() -> None:
    seen: list[str] = []
    g = _busy_graph()
    optimise(g, log=lambda name, _: seen.append(name))
    assert seen == [n for n, _ in DEFAULT_PASSES]
    assert not {"fastmath_arith", "fuse_sigmoid"} & set(seen)
    seen.clear()
    fast = optimise(g, log=lambda name, _: seen.append(name), fastmath=True)
    assert seen == [n for n, _ in FASTMATH_PASSES]
    assert "expit" in [n.op for n in fast.nodes()]
    assert "expit" not in [n.op for n in optimise(g).nodes()]


# --- end to end -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F32, F64])
def test_compiled_safe_rewrites_match_numpy_bit_for_bit(dtype: np.dtype) -> None:
    def f(x, y):
        one, zero = dtype.type(1), dtype.type(0)
        return (x * one, one * x, x / one, x - zero, x + dtype.type(-0.0), np.negative(-x),
                x + zero,
                np.power(x, dtype.type(2)), np.power(x, dtype.type(1)), x / dtype.type(0.25),
                x.astype(np.float64).astype(dtype), np.broadcast_to(y, (3, 12)) * x,
                x * np.ones((2, 3, 12), dtype), np.power(x, dtype.type(0.5)))

    x = specials(dtype, (3, 12))
    x[1] *= -1
    y = specials(dtype)[::-1].copy()
    with np.errstate(all="ignore"):
        want = f(x, y)
    got = fusejit.jit(f)(x, y)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype and a.shape == b.shape, k
        assert same_bits(a, b), (k, a, b)
        assert not np.shares_memory(a, x)
    assert not np.shares_memory(got[0], got[1])


def test_compiled_integer_rewrites_match_numpy() -> None:
    def f(i, u):
        return i * 0, i - i, (i + 100) + 100, (u * 3) * 200, 0 - u, i.astype(np.int32) * 1

    i = np.array([-128, -1, 0, 1, 127], np.int8)
    u = np.array([0, 1, 2, 128, 255], np.uint8)
    got = fusejit.jit(f)(i, u)
    with np.errstate(all="ignore"):
        want = f(i, u)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_in_place_update_that_simplifies_to_nothing() -> None:
    def f(w, g):
        w *= 1
        w -= g * 0

    w = np.arange(-3, 3, dtype=np.int32)
    fusejit.jit(f)(w, w.copy())
    assert np.array_equal(w, np.arange(-3, 3, dtype=np.int32))


def _fma_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # a*b rounds to exactly 1.0; fused with -1 it is -2**-54.
    return (np.full(64, 1 + 2.0**-27), np.full(64, 1 - 2.0**-27), np.full(64, -1.0))


def test_default_never_contracts_to_fma() -> None:
    a, b, c = _fma_inputs()
    got = fusejit.jit(lambda a, b, c: a * b + c)(a, b, c)
    assert np.array_equal(got, a * b + c) and got[0] == 0.0


def _has_fma() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return " fma " in f.read()
    except OSError:
        return False


@pytest.mark.c_only  # fastmath FMA contraction: the CUDA backend always compiles with -fmad=false
@pytest.mark.skipif(not _has_fma(), reason="no FMA instructions on this CPU")
def test_fastmath_contracts_to_fma_and_is_its_own_cache_entry() -> None:
    a, b, c = _fma_inputs()

    def f(a, b, c):
        return a * b + c

    fused = float(Fraction(a[0]) * Fraction(b[0]) + Fraction(c[0]))
    fast = fusejit.jit(fastmath=True)(f)
    exact = fusejit.jit(f)
    assert fast.fastmath and not exact.fastmath
    got = fast(a, b, c)
    assert np.all(got == fused) and fused != 0.0
    assert np.all(exact(a, b, c) == 0.0)  # same function, same source: another library


def test_fastmath_keeps_nan_and_inf() -> None:
    def f(x):
        return x * 2 + 1, np.isnan(x), 1 / (1 + np.exp(-x))

    x = specials(F32)
    got = fusejit.jit(fastmath=True)(f)(x)
    with np.errstate(all="ignore"):
        want = f(x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert np.array_equal(got[1], want[1])
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)
    assert "expit" in [n.op for n in fusejit.jit(fastmath=True)(f).lower_for(x).optimised
                       .nodes()]


# --- property: the exact pipeline never changes a result --------------------------------------

_DTYPES = [F32, F64, np.dtype(np.float16), np.dtype(np.int8), np.dtype(np.int32),
           np.dtype(np.uint16), np.dtype(np.bool_)]
_CONSTS = [0.0, -0.0, 1.0, 2.0, 0.5, -1.0, 0.25, 4.0, 3.0, np.inf, np.nan]
_BINARY = ["add", "subtract", "multiply", "divide", "power", "floor_divide"]


def _const(value: np.ndarray) -> Node:
    value.setflags(write=False)
    return Node("const", (), TensorType(value.shape, value.dtype), {"value": value})


def _result_dtype(op: str, d: np.dtype) -> np.dtype | None:
    try:
        with np.errstate(all="ignore"):
            out = getattr(np, op)(np.zeros(1, d), np.ones(1, d))
    except TypeError:
        return None
    return out.dtype if out.dtype == d else None


@st.composite
def graphs(draw) -> tuple[Graph, list[np.ndarray]]:
    dtype = draw(st.sampled_from(_DTYPES))
    x = Node("input", (), TensorType((2, 3), dtype), {"index": 0})
    y = Node("input", (), TensorType((3,), dtype), {"index": 1})
    pool = [x, y]
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["binary", "binary", "binary", "unary", "cast", "view"]))
        a = draw(st.sampled_from(pool))
        if kind == "unary":
            op = draw(st.sampled_from(["negative", "positive"]))
            if a.dtype == np.bool_:
                continue
            pool.append(Node(op, (a,), a.type))
        elif kind == "cast":
            to = draw(st.sampled_from(_DTYPES))
            if a.dtype.kind == "f" and to.kind in "iub":
                continue  # float -> int is undefined out of range
            pool.append(Node("cast", (a,), TensorType(a.shape, to), {"dtype": to}))
        elif kind == "view":
            if a.type.ndim == 2:
                pool.append(Node("view", (a,), TensorType(a.shape[::-1], a.dtype),
                                 {"start": (0, 0), "dims": ((1, 1), (0, 1))}))
            else:
                pool.append(Node("view", (a,), TensorType((2,) + a.shape, a.dtype),
                                 {"start": (0,) * a.type.ndim,
                                  "dims": ((-1, 0),) + tuple((d, 1) for d in
                                                             range(a.type.ndim))}))
        else:
            op = draw(st.sampled_from(_BINARY))
            if draw(st.booleans()):
                b = draw(st.sampled_from(pool))
                if b.dtype != a.dtype:
                    b = Node("cast", (b,), TensorType(b.shape, a.dtype), {"dtype": a.dtype})
            else:
                shape = draw(st.sampled_from([(), (1,), a.shape]))
                value = draw(st.sampled_from(_CONSTS))
                if a.dtype.kind != "f":
                    value = abs(value) if np.isfinite(value) else 1.0
                with np.errstate(all="ignore"):
                    b = _const(np.full(shape, value).astype(a.dtype))
            out = _result_dtype(op, a.dtype)
            try:
                shape = np.broadcast_shapes(a.shape, b.shape)
            except ValueError:
                continue
            if out is None:
                continue
            a, b = (b, a) if draw(st.booleans()) and op != "power" else (a, b)
            if op == "power" and a.dtype.kind != "f" and b.op != "const":
                continue  # negative integer powers raise
            pool.append(Node(op, (a, b), TensorType(shape, out)))
    outs = pool[2:] or [x]
    g = passes.verify(Graph([x, y], outs[-3:], "random"))
    inputs = [_values(draw, dtype, (2, 3)), _values(draw, dtype, (3,))]
    return g, inputs


def _values(draw, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype.kind == "f":
        vals = draw(st.lists(st.sampled_from(SPECIAL + [-3.0, 2.0, 0.5]), min_size=n,
                             max_size=n))
    elif dtype.kind == "b":
        vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    else:
        info = np.iinfo(dtype)
        vals = draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=n,
                             max_size=n))
    with np.errstate(all="ignore"):
        return np.array(vals).astype(dtype).reshape(shape)


@given(graphs())
def test_safe_pipeline_never_changes_results(case) -> None:
    g, inputs = case
    before = interpret(g, inputs)
    after = interpret(optimise(g), inputs)
    for a, b in zip(before, after):
        assert same_bits(a, b), (format_graph(g), format_graph(optimise(g)), inputs, a, b)


def test_toolchain_flags_contract_only_under_fastmath() -> None:
    from fusejit.runtime.toolchain import Toolchain

    tc = Toolchain("cc", "cc 1.0", True, False, ())
    assert "-ffp-contract=off" in tc.cflags and tc.with_fastmath(False) is tc
    fast = tc.with_fastmath(True)
    assert "-ffp-contract=fast" in fast.cflags and "-ffp-contract=off" not in fast.cflags
    assert not any("fast-math" in f for f in fast.cflags)
    assert fast.identity() != tc.identity()
