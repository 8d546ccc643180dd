"""Node ids (frontend/ir.py `node_ids`): each compile numbers its nodes from 0, so the same
function compiles to the same source however many other functions the process traced first,
and finds its library in the kernel store instead of running the compiler again. A traced
value kept from one trace and used in another is refused by name (it could otherwise share an
id with one of the new trace's nodes); the IR verifier checks identity and unique ids."""

from __future__ import annotations

import numpy as np
import pytest

import fusejit
from fusejit.errors import IRError, TraceError
from fusejit.frontend.ir import Graph, Node, TensorType, format_graph, next_id, node_ids
from fusejit.lowering import passes

PROGRAMS = {
    "elementwise": lambda x: np.exp(x) * 2 + 1,
    "reductions": lambda x: x.sum(axis=0) + x.max(),
    "sort": lambda x: np.argsort(x, kind="stable"),
    "matmul": lambda x: (x @ x.T) + 1,
    "scan": lambda x: np.cumsum(x, axis=1),
    "rows": lambda x: np.exp(x - x.max(1, keepdims=True)).sum(1),
    "scatter": lambda x: np.bincount(np.arange(x.shape[1]) % 3, weights=x[0]),
    "linalg": lambda x: np.linalg.inv(x[:, :8] @ x[:, :8].T + 8 * np.eye(8)),
    "concatenate": lambda x: np.concatenate([x, x[::-1] * 2], axis=1),
}
X = np.random.default_rng(0).standard_normal((8, 50))


def test_the_same_function_renders_the_same_source_after_other_traces() -> None:
    first = {k: fusejit.jit(f).lower_for(X).source for k, f in PROGRAMS.items()}
    fusejit.jit(lambda x, y: np.tanh(x) @ y.T)(X, X)  # more nodes traced in between
    for k, f in PROGRAMS.items():
        assert fusejit.jit(f).lower_for(X).source == first[k], k


def test_a_compile_numbers_its_nodes_from_zero() -> None:
    fusejit.jit(lambda x: np.sin(x) + 1)(X)
    c = fusejit.jit(lambda x, y: x * y - 3).lower_for(X, X)
    text = format_graph(c.graph)
    assert text.splitlines()[0].endswith("(%0, %1) {"), text
    assert sorted(n.id for n in c.graph.nodes())[:2] == [0, 1]


@pytest.mark.c_only  # the C kernel store
def test_a_new_wrapper_of_the_same_function_finds_its_library(monkeypatch) -> None:
    from fusejit.runtime import backend_c

    def f(x):
        return np.sqrt(np.abs(x)) * 3 - x

    want = f(X)
    np.testing.assert_allclose(fusejit.jit(f)(X), want)
    np.testing.assert_allclose(fusejit.jit(lambda x: np.cos(x) ** 2)(X), np.cos(X) ** 2)
    calls: list[str] = []
    real = backend_c.run_cc
    monkeypatch.setattr(backend_c, "run_cc", lambda cmd, what: calls.append(what) or
                        real(cmd, what))
    np.testing.assert_allclose(fusejit.jit(f)(X), want)
    assert calls == []


def test_ids_outside_a_compile_never_meet_a_compiles_own() -> None:
    assert next_id() >= 1 << 32
    with node_ids():
        assert next_id() == 0
        with node_ids(7):
            assert next_id() == 7
        assert next_id() == 1
    assert next_id() >= 1 << 32


kept: list = []


def test_a_value_kept_from_an_earlier_trace_is_refused() -> None:
    def keep(x):
        y = x * 2
        kept.append(y)
        return y + 1

    def use(x):
        return x + kept[-1]

    def give_back(x):
        return kept[-1]

    fusejit.jit(keep)(np.ones(3))
    with pytest.raises(TraceError, match=r"use\(\): the operation at .*test_node_ids.py:\d+ "
                                         r"uses a value traced in another call"):
        fusejit.jit(use)(np.ones(3))
    with pytest.raises(TraceError, match=r"give_back\(\) returned a value traced in another"):
        fusejit.jit(give_back)(np.ones(3))


def _node(op: str, inputs: tuple, **attrs) -> Node:
    return Node(op, inputs, TensorType((3,), np.dtype(np.float64)), attrs)


def test_verify_checks_identity_and_unique_ids() -> None:
    x = _node("input", (), index=0)
    y = _node("exp", (x,))
    passes.verify(Graph([x], [y], body=[x, y]))
    twin = _node("exp", (x,))
    twin.id = y.id
    with pytest.raises(IRError, match="another node has id"):
        passes.verify(Graph([x], [y, twin], body=[x, y, twin]))
    stranger = _node("input", (), index=0)
    stranger.id = x.id  # the same number, another node: not defined in this graph
    z = _node("exp", (stranger,))
    with pytest.raises(IRError, match="used before it is defined"):
        passes.verify(Graph([x], [z], body=[x, z]))
