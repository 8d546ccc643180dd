"""The prelowering passes (lowering/prelower.py), each before and after, and `prelower` as
the one step that lower, explain and the export share."""

from __future__ import annotations

import numpy as np
import pytest

import fusejit
from fusejit.frontend.interpret import interpret
from fusejit.frontend.ir import Graph
from fusejit.frontend.trace import trace
from fusejit.lowering import passes
from fusejit.lowering.builder import contiguous_strides
from fusejit.lowering.matmul import matvecs_as_reductions as matvecs
from fusejit.lowering.matmul import pack_operands
from fusejit.lowering.pipeline import optimise
from fusejit.lowering.prelower import (
    PRELOWER_PASSES,
    LowerOptions,
    place_reshapes,
    prelower,
    separate_outputs,
)

F32 = np.float32
RNG = np.random.default_rng(3)


def optimised(fn, *args) -> tuple[Graph, list[tuple[int, ...]]]:
    graph = optimise(trace(fn, list(args))[0])
    return graph, [contiguous_strides(np.shape(a)) for a in args]


def ops(g: Graph) -> list[str]:
    return [n.op for n in g.nodes() if n.op not in ("input", "const")]


def same_values(before: Graph, after: Graph, *args) -> None:
    """The rewrite kept every output's value (the NumPy interpreter on both graphs)."""
    passes.verify(after)
    for a, b in zip(interpret(before, list(args)), interpret(after, list(args)), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_passes_run_in_this_order() -> None:
    assert [name for name, _ in PRELOWER_PASSES] == [
        "separate_outputs", "place_reshapes", "matvecs_as_reductions", "pack_operands"]


def test_separate_outputs_copies_a_merged_output() -> None:
    x = RNG.random(3).astype(F32)
    g, _ = optimised(lambda x: (x * 2, x * 2), x)
    assert g.outputs[0] is g.outputs[1] and ops(g) == ["multiply"]
    after = separate_outputs(g)
    assert ops(after) == ["multiply", "copy"] and after.outputs[1].inputs[0] is after.outputs[0]
    same_values(g, after, x)


def test_separate_outputs_keeps_one_object_shared() -> None:
    def f(x):
        y = x * 2
        return y, y

    g, _ = optimised(f, np.ones(3, F32))
    assert separate_outputs(g) is g


def test_place_reshapes_copies_before_a_reshape_numpy_would_copy() -> None:
    x = RNG.random((3, 4)).astype(F32)
    g, strides = optimised(lambda x: x.T.reshape(-1), x)
    assert ops(g) == ["view", "reshape"]
    after = place_reshapes(g, strides)
    assert ops(after) == ["view", "copy", "reshape"]
    same_values(g, after, x)
    g, strides = optimised(lambda x: x.reshape(-1) * 2, x)
    assert ops(place_reshapes(g, strides)) == ops(g)  # a view of the argument's memory


@pytest.mark.parametrize("blas", [False, True])
def test_matvecs_as_reductions_without_blas(blas: bool) -> None:
    a, v = RNG.random((64, 64)).astype(F32), RNG.random(64).astype(F32)
    g, strides = optimised(lambda a, v: a @ v, a, v)
    assert "matmul" in ops(g)
    after = matvecs(g, strides, blas)
    if blas:  # BLAS gemv serves this product
        assert ops(after) == ops(g)
    else:
        assert "matmul" not in ops(after) and {"multiply", "reduce"} <= set(ops(after))
    np.testing.assert_allclose(interpret(after, [a, v])[0], a @ v, rtol=1e-5)


@pytest.mark.parametrize("blas", [False, True])
def test_pack_operands_copies_an_operand_blas_cannot_read(blas: bool) -> None:
    x, w = RNG.random((8, 16)).astype(F32), RNG.random((8, 4)).astype(F32)
    g, strides = optimised(lambda x, w: x.T[::2] @ w, x, w)
    after = pack_operands(g, strides, blas)
    assert ops(after) == (["view", "copy", "matmul"] if blas else ops(g))
    same_values(g, after, x, w)


def test_prelower_is_the_passes_in_order() -> None:
    x = RNG.random((3, 4)).astype(F32)
    g, strides = optimised(lambda x: (x.T.reshape(-1), x.T.reshape(-1)), x)
    seen: list[str] = []
    after = prelower(g, strides, LowerOptions(), log=lambda name, _: seen.append(name))
    assert seen == [name for name, _ in PRELOWER_PASSES]
    assert ops(after) == ["view", "copy", "reshape", "copy"]
    same_values(g, after, x)


def test_explain_shows_the_graph_lower_built() -> None:
    """explain runs prelower too: the copy place_reshapes adds is in the report's graph."""
    x = RNG.random((3, 4)).astype(F32)
    ex = fusejit.jit(lambda x: x.T.reshape(-1) * 2).explain(x)
    assert [n.op for n in ex.lowered.nodes()].count("copy") == 1
