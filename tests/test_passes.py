"""The lowering stage, pass by pass: DCE, CSE, constant folding and the verifier on traced
graphs (before/after, through `format_graph`); fusion decisions; memory plans checked with
`check_plan`; and the op table's completeness."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.special
from conftest import assert_same

from fusejit import jit
from fusejit.errors import IRError
from fusejit.frontend.interpret import interpret
from fusejit.frontend.ir import Graph, Node, TensorType, format_graph
from fusejit.frontend.ops import OPS, reference
from fusejit.frontend.trace import trace
from fusejit.lowering import fusion, passes, stored
from fusejit.lowering.loop_ir import Buffer, Load, Store, format_program
from fusejit.lowering.lower import contiguous_strides, lower
from fusejit.lowering.memplan import check_plan, lifetimes, plan, summary
from fusejit.lowering.pipeline import optimise

F32 = np.float32


def canon(g: Graph) -> str:
    """format_graph with node ids renumbered in order of appearance and locations dropped, so
    that graphs can be compared as text."""
    text = re.sub(r"  # .*", "", format_graph(g))
    names: dict[str, str] = {}
    return re.sub(r"%\d+", lambda m: names.setdefault(m.group(0), f"%{len(names)}"), text)


def traced(fn, *args):
    graph, _ = trace(fn, list(args))
    return graph


def ops_of(g: Graph) -> list[str]:
    return [n.op for n in g.nodes()]


# --- DCE ---------------------------------------------------------------------------------------


def test_dce_removes_dead_nodes() -> None:
    def f(x, y):
        dead = np.exp(x) * y  # noqa: F841 - dead on purpose
        return x + y

    g = traced(f, np.ones(3, F32), np.ones(3, F32))
    assert canon(g) == (
        "graph f(%0, %1) {\n"
        "  %0 = input() {index=0} : float32[3]\n"
        "  %1 = input() {index=1} : float32[3]\n"
        "  %2 = exp(%0) : float32[3]\n"
        "  %3 = multiply(%2, %1) : float32[3]\n"
        "  %4 = add(%0, %1) : float32[3]\n"
        "  return %4\n"
        "}")
    assert canon(passes.dce(g)) == (
        "graph f(%0, %1) {\n"
        "  %0 = input() {index=0} : float32[3]\n"
        "  %1 = input() {index=1} : float32[3]\n"
        "  %2 = add(%0, %1) : float32[3]\n"
        "  return %2\n"
        "}")


def test_dce_keeps_unused_inputs() -> None:
    g = passes.dce(traced(lambda x, y: x * 2, np.ones(2), np.ones(2)))
    assert [n.op for n in g.inputs] == ["input", "input"]
    assert ops_of(g).count("input") == 2


# --- CSE ---------------------------------------------------------------------------------------


def test_cse_merges_identical_subexpressions() -> None:
    def f(x, y):
        a = np.sin(x) * y
        b = np.sin(x) * y
        return a + b, np.sin(x)

    g = traced(f, np.ones(4), np.ones(4))
    assert ops_of(g).count("sin") == 3 and ops_of(g).count("multiply") == 2
    assert canon(passes.cse(g)) == (
        "graph f(%0, %1) {\n"
        "  %0 = input() {index=0} : float64[4]\n"
        "  %1 = input() {index=1} : float64[4]\n"
        "  %2 = sin(%0) : float64[4]\n"
        "  %3 = multiply(%2, %1) : float64[4]\n"
        "  %4 = add(%3, %3) : float64[4]\n"
        "  return %4, %2\n"
        "}")


def test_cse_keeps_different_attrs_and_types_apart() -> None:
    def f(x):
        return x.astype(np.int32), x.astype(np.int64), x[::2], x[1::2], x * 0.0, x * -0.0

    g = passes.cse(traced(f, np.ones(6)))
    assert ops_of(g).count("cast") == 2
    assert ops_of(g).count("view") == 2
    consts = [n for n in g.nodes() if n.op == "const"]
    assert len(consts) == 2  # 0.0 and -0.0 are different constants


# --- constant folding --------------------------------------------------------------------------


def test_constant_fold_evaluates_constant_subgraphs() -> None:
    def f(x):
        return np.full_like(x, 2.0) * 3 + x

    g = traced(f, np.ones(3))
    assert "multiply" in ops_of(g) and "copy" in ops_of(g)
    assert canon(passes.dce(passes.constant_fold(g))) == (
        "graph f(%0) {\n"
        "  %0 = input() {index=0} : float64[3]\n"
        "  %1 = const() {value=[6.,6.,6.]} : float64[3]\n"
        "  %2 = add(%1, %0) : float64[3]\n"
        "  return %2\n"
        "}")


def test_constant_fold_does_not_grow_big_constants() -> None:
    def f(x):
        return np.zeros_like(x) + 1

    small = passes.dce(passes.constant_fold(traced(f, np.ones(16))))
    assert ops_of(small) == ["input", "const"]
    big = passes.dce(passes.constant_fold(traced(f, np.ones((100, 100)))))
    assert max(n.type.size for n in big.nodes() if n.op == "const") <= passes.FOLD_MAX_ELEMENTS


def test_constant_fold_matches_numpy_semantics() -> None:
    """Folded values are NumPy's: integer wrap-around, -0.0, NaN, float32 rounding."""
    def f(x):
        i8 = np.full_like(x, 100, dtype=np.int8)
        f32 = np.full_like(x, 0.1, dtype=np.float32)
        z = np.full_like(x, -0.0)
        return x + (i8 + i8), x + f32 * 3, x * np.sqrt(z), x + np.log(z - 1)

    x = np.arange(4.0)
    g = traced(f, x)
    folded = passes.dce(passes.constant_fold(g))
    assert {n.op for n in folded.nodes()} <= {"input", "const", "add", "multiply", "cast"}
    with np.errstate(all="ignore"):
        for got, want in zip(interpret(folded, [x]), interpret(g, [x])):
            assert_same(got, want)
        assert_same(jit(f)(x), f(x))


# --- the verifier ------------------------------------------------------------------------------


def _g(inputs, outputs) -> Graph:
    return Graph(list(inputs), list(outputs), "broken")


def _inp(shape, dtype=F32, index=0) -> Node:
    return Node("input", (), TensorType(tuple(shape), np.dtype(dtype)), {"index": index})


def test_verify_accepts_traced_and_optimised_graphs() -> None:
    g = traced(lambda x, y: np.where(x > y, x.T, y[::-1]) * 2, np.ones((3, 3)), np.ones(3))
    assert passes.verify(g) is g
    passes.verify(optimise(g))


@pytest.mark.parametrize("problem", ["unknown op", "before it is defined", "takes 2 inputs",
                                     "do not broadcast", "broadcast of its inputs",
                                     "loop dtype", "constant value", "outside its input",
                                     "unsupported dtype", "not in the graph"])
def test_verify_rejects_broken_graphs(problem: str) -> None:
    x = _inp((3,))
    t = TensorType((3,), np.dtype(F32))
    if problem == "unknown op":
        bad = Node("frobnicate", (x,), t)
        g = _g([x], [bad])
    elif problem == "before it is defined":
        y = Node("negative", (x,), t)
        bad = Node("add", (x, y), t)
        g = Graph([x], [bad], "broken", body=[x, bad, y])
    elif problem == "takes 2 inputs":
        g = _g([x], [Node("add", (x,), t)])
    elif problem == "do not broadcast":
        y = _inp((4,), index=1)
        g = _g([x, y], [Node("add", (x, y), t)])
    elif problem == "broadcast of its inputs":
        g = _g([x], [Node("negative", (x,), TensorType((2, 3), np.dtype(F32)))])
    elif problem == "loop dtype":
        y = _inp((3,), np.float64, index=1)
        g = _g([x, y], [Node("add", (x, y), t)])
    elif problem == "constant value":
        c = Node("const", (), t, {"value": np.zeros(3, np.float64)})
        g = _g([x], [c])
    elif problem == "outside its input":
        v = Node("view", (x,), TensorType((3,), np.dtype(F32)), {"start": (1,), "dims": ((0, 1),)})
        g = _g([x], [v])
    elif problem == "unsupported dtype":
        g = _g([x], [Node("cast", (x,), TensorType((3,), np.dtype("datetime64[s]")))])
    else:
        g = Graph([x], [Node("negative", (x,), t)], "broken", body=[x])
    with pytest.raises(IRError, match=problem):
        passes.verify(g)


def test_pipeline_preserves_semantics() -> None:
    """interpret(optimise(g)) == interpret(g) on a graph every pass has work on."""
    def f(x, y):
        c = np.ones_like(y) * 2
        a = np.exp(x) * c
        b = np.exp(x) * c
        dead = np.log(y)  # noqa: F841
        return a - b, (a + y.T)[::-1], np.split(a, 2, axis=1)[1]

    x, y = np.random.default_rng(0).standard_normal((2, 4, 4))
    g = traced(f, x, y)
    o = optimise(g)
    assert len(o.nodes()) < len(g.nodes())
    for got, want in zip(interpret(o, [x, y]), interpret(g, [x, y])):
        assert_same(got, want)


# --- fusion ------------------------------------------------------------------------------------


def _partition(fn, *args):
    return fusion.partition(optimise(traced(fn, *args)))


def _node_of(fn, *args) -> Node:
    """The node `fn` returns, traced on `args` and optimised."""
    return optimise(traced(fn, *args)).outputs[0]


def test_fusion_elementwise_chain_is_one_kernel() -> None:
    groups, materialised, reasons = _partition(
        lambda x, y: np.tanh(x * y + 1) / (1 + np.exp(-x)), np.ones((8, 8)), np.ones(8))
    assert len(groups) == 1 and len(groups[0].roots) == 1
    assert not reasons


def test_fusion_same_shape_outputs_share_a_kernel() -> None:
    def f(x, y):
        s = x + y
        return s * 2, np.sqrt(s), s.T

    groups, _, _ = _partition(f, np.ones((4, 4)), np.ones((4, 4)))
    assert len(groups) == 1 and len(groups[0].roots) == 3


def test_fusion_outputs_of_different_shapes_get_their_own_kernels() -> None:
    groups, _, _ = _partition(lambda x, v: (x * v, v + 1), np.ones((4, 5)), np.ones(5))
    assert sorted(g.shape for g in groups) == [(4, 5), (5,)]


def test_fusion_recomputes_cheap_broadcast_producers() -> None:
    """`v + 1` (cost 1) broadcast 16x is cheaper to recompute than to store; 64x is not."""
    groups, materialised, reasons = _partition(lambda x, v: x * (v + 1), np.ones((16, 64)),
                                               np.ones((1, 64)))
    assert len(groups) == 1 and not reasons
    groups, materialised, reasons = _partition(lambda x, v: x * (v + 1), np.ones((64, 64)),
                                               np.ones((1, 64)))
    assert len(groups) == 2 and len(reasons) == 1


def test_fusion_materialises_expensive_broadcast_producers() -> None:
    """`exp(v)` (cost 20) broadcast 4096x is stored once in a temporary, with a reason."""
    groups, materialised, reasons = _partition(lambda x, v: x * np.exp(v),
                                               np.ones((4096, 4096), F32), np.ones((1, 4096), F32))
    assert [g.shape for g in groups] == [(1, 4096), (4096, 4096)]
    (reason,) = reasons.values()
    assert "exp" in reason and "broadcast 4096x" in reason
    assert fusion.RECOMPUTE_BUDGET > 0


def test_fusion_computes_cheap_scalar_values_in_their_readers() -> None:
    """A Python float's cast (or a little arithmetic on scalars) read by a large kernel is
    computed there (once per row: hoisted) instead of by a one-element kernel before it (a
    CUDA launch each call); an expensive one (exp) or one that reads an array is stored."""
    x = np.ones((256, 256), F32)
    groups, _, reasons = _partition(lambda a, b, x: a * x + b / 3, 0.5, 2.0, x)
    assert [g.shape for g in groups] == [(256, 256)] and not reasons
    groups, _, reasons = _partition(lambda a, x: np.exp(a) * x, 0.5, x)
    assert len(groups) == 2 and len(reasons) == 1
    groups, _, reasons = _partition(lambda s, x: x * s.sum(), np.ones(8, F32), x)
    assert len(groups) == 2  # (the reduction is its own kernel, whatever its size)
    assert stored.reads_only_scalars(_node_of(lambda a: a * 2.0, 0.5), set())
    assert not stored.reads_only_scalars(_node_of(lambda v: v.sum() * 2.0, np.ones(3)), set())


def test_fusion_decision_threshold() -> None:
    """Just below the budget the producer is recomputed, well above it it is stored."""
    def f(x, v):
        return x * np.exp(v)

    small, _, r_small = _partition(f, np.ones((2, 8)), np.ones((1, 8)))
    large, _, r_large = _partition(f, np.ones((64, 8)), np.ones((1, 8)))
    assert len(small) == 1 and not r_small
    assert len(large) == 2 and r_large


# --- memory plans ------------------------------------------------------------------------------


def _program(fn, *args):
    g = optimise(traced(fn, *args))
    return plan(lower(g, [contiguous_strides(np.shape(a)) for a in args]))


def _spec(shape, dtype=F32):
    """A stand-in argument: only shape and dtype matter for lowering (no data is touched)."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape, (0,) * len(shape))


PLAN_CASES = {
    "no temps": (lambda x, y: (x * y, x + y), [(64, 64), (64, 64)]),
    "one temp": (lambda x, v: x * np.exp(v) + 1, [(4096, 4096), (1, 4096)]),
    "two temps, two outputs": (
        lambda x, v, w: (x * np.exp(v) + 1, (x - np.log1p(w)) * np.exp(v)),
        [(4096, 4096), (1, 4096), (4096, 1)]),
    "chain of temps": (
        lambda x, a, b, c: x * np.exp(a) + np.sin(b) * np.cos(c) - np.tanh(a + b),
        [(512, 512), (1, 512), (512, 1), (1, 512)]),
    "reusable temps": (
        lambda x, a, b: ((x * np.exp(a))[:, :8].T * np.exp(b), x + 1),
        [(256, 256), (1, 256), (1, 256)]),
}


@pytest.mark.parametrize("case", sorted(PLAN_CASES))
def test_memplan_check_plan(case: str) -> None:
    fn, shapes = PLAN_CASES[case]
    program = _program(fn, *[_spec(s) for s in shapes])
    check_plan(program)
    temps = program.by_kind("temp")
    life = lifetimes(program)
    assert set(life) == {b.index for b in temps}
    for b in temps:
        assert b.offset % 64 == 0 and b.offset + b.nbytes <= program.arena_bytes
    s = summary(program)
    assert s.lower_bound <= s.arena_bytes <= max(s.naive_bytes, 0) + 64 * len(temps)
    if case != "no temps":
        assert temps, format_program(program)


def test_memplan_temp_for_broadcast_exp() -> None:
    """y = exp(v), v of shape [1,4096], consumed broadcast by a [4096,4096] expression: one
    temporary of 4096 floats, written by the first kernel and read by the second."""
    program = _program(lambda x, v: x * np.exp(v) + 1, _spec((4096, 4096)), _spec((1, 4096)))
    (temp,) = program.by_kind("temp")
    assert temp.shape == (1, 4096) and temp.nbytes == 4096 * 4
    assert program.arena_bytes >= temp.nbytes
    k0, k1 = program.kernels
    assert {s.access.buf for s in k0.stores()} == {temp.index}
    assert temp.index in {ld.access.buf for ld in k1.loads()}
    assert lifetimes(program)[temp.index] == (0, 1)


def test_memplan_check_plan_catches_overlap() -> None:
    program = _program(lambda x, v, w: (x * np.exp(v) + 1, (x - np.log1p(w)) * np.exp(v)),
                       _spec((4096, 4096)), _spec((1, 4096)), _spec((4096, 1)))
    temps = program.by_kind("temp")
    assert len(temps) == 2
    life = lifetimes(program)
    (a0, a1), (b0, b1) = life[temps[0].index], life[temps[1].index]
    assert a0 <= b1 and b0 <= a1  # live at the same time
    clash = [Buffer(**{**b.__dict__, "offset": 0}) if b.kind == "temp" else b
             for b in program.buffers]
    from dataclasses import replace

    bad = replace(program, buffers=clash)
    with pytest.raises(AssertionError, match="overlap"):
        check_plan(bad)
    too_small = replace(program, arena_bytes=max(b.nbytes for b in temps) - 1)
    with pytest.raises(AssertionError, match="overflows"):
        check_plan(too_small)


def test_programs_with_temps_run_correctly() -> None:
    """The planned arena is used for real: results equal NumPy's."""
    rng = np.random.default_rng(5)
    for name in ("one temp", "two temps, two outputs", "chain of temps", "reusable temps"):
        fn, shapes = PLAN_CASES[name]
        shapes = [tuple(min(n, 300) for n in s) for s in shapes]
        args = [rng.standard_normal(s).astype(F32) for s in shapes]
        f = jit(fn)
        program = f.lower_for(*args).program
        check_plan(program)
        with np.errstate(all="ignore"):
            want = fn(*args)
        assert_same(f(*args), want, atol=1e-6)


def test_every_plan_of_the_fuzzer_checks() -> None:
    """check_plan on the programs of the first fuzzer seeds (lowering only, no C compile)."""
    from exprgen import build, make_args
    from test_fuzz import random_program

    checked = 0
    for seed in range(40):
        result, specs, _ = random_program(seed)
        args = make_args(specs, seed)
        try:
            g, positions = trace(build(result, n_args=len(specs)), args)
        except Exception:  # noqa: BLE001 - a program NumPy rejects has no plan
            continue
        program = plan(lower(optimise(g), [contiguous_strides(n.shape) for n in g.inputs]))
        check_plan(program)
        for k in program.kernels:
            for s in k.body:
                if isinstance(s, (Load, Store)):
                    assert 0 <= s.access.buf < len(program.buffers)
        checked += 1
    assert checked >= 30


# --- the op table ------------------------------------------------------------------------------


def test_every_op_has_every_entry() -> None:
    kinds = {op.kind for op in OPS.values()}
    assert {"elementwise", "view", "source"} <= kinds
    for name, op in OPS.items():
        assert op.name == name
        if op.kind == "source":
            continue
        assert op.nin >= 1, name
        assert callable(reference(op)), name
        if op.kind == "elementwise":
            assert op.c is not None and op.cost >= 1, name
            sfx = ["f32"] * op.nin
            assert isinstance(op.c(sfx, "f32"), str), name
    assert reference(OPS["erf"]) is scipy.special.erf
