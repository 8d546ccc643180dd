"""Backends are peers behind one protocol (runtime/backends): the registry, and a third
backend written as one class here (it runs the optimised graph with the NumPy interpreter)
that jit, explain and the call paths use without knowing its name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit.errors import UnsupportedError
from fusejit.frontend.interpret import interpret
from fusejit.frontend.ir import Graph
from fusejit.lowering.loop_ir import Program, format_program
from fusejit.lowering.prelower import LowerOptions
from fusejit.runtime import backends


class Interpreted:
    """Runs the graph a Program was lowered from with frontend.interpret."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.calls = 0

    def run(self, inputs: list[Any]) -> list[Any]:
        self.calls += 1
        return interpret(self.graph, inputs)[:self.graph.n_results]


class InterpretBackend:
    name = "interpret"
    language = "loop IR"
    fast_path = False
    device_output = False

    def __init__(self) -> None:
        self.built: list[Interpreted] = []

    @property
    def lower_options(self) -> LowerOptions:
        return LowerOptions(blas=False)

    def require(self) -> None:
        pass

    def trace_args(self, args: tuple) -> tuple:
        return args

    def build(self, program: Program, optimised: Graph, ranges: Any, name: str,
              fastmath: bool) -> backends.Built:
        if optimised.updates:
            raise UnsupportedError("the interpret backend does not write arguments")
        self.built.append(Interpreted(optimised))
        return backends.Built(format_program(program), self.built[-1], 0.0)

    def register(self, fn: Any, key: Any, program: Program, built: backends.Built,
                 times: dict[str, float]) -> None:
        pass

    def describe_kernel(self, kernel: Any) -> list[str]:
        return ["interpreted with NumPy"]


@pytest.fixture
def interpret_backend() -> Iterator[InterpretBackend]:
    backend = InterpretBackend()
    backends.register("interpret", lambda: backend)
    yield backend
    backends.unregister("interpret")


def test_the_registry_knows_c_and_cuda() -> None:
    assert backends.names()[:2] == ["c", "cuda"]
    assert backends.get("c").lower_options.blas and not backends.get("cuda").lower_options.blas
    with pytest.raises(UnsupportedError, match="unknown backend 'metal' \\(use 'c' or 'cuda'"):
        backends.get("metal")


def test_a_third_backend_is_one_class(interpret_backend: InterpretBackend) -> None:
    def f(x, y):
        return np.tanh(x) @ y + 1, (x * 2).sum()

    rng = np.random.default_rng(0)
    x, y = rng.random((5, 4)), rng.random((4, 3))
    jf = fusejit.jit(f, backend="interpret")
    assert_same(jf(x, y), f(x, y))
    assert_same(jf(x, y), f(x, y))
    (built,) = interpret_backend.built  # compiled once, called twice
    assert built.calls == 2 and jf.compile_count == 1
    out = (np.empty((5, 3)), np.empty(()))
    got = jf(x, y, out=out)  # out= without the C backend's direct path
    assert got[0] is out[0] and got[1] is out[1]
    np.testing.assert_allclose(out[0], np.tanh(x) @ y + 1)
    assert "interpreted with NumPy" in str(jf.explain(x, y))


def test_a_backend_name_is_checked_when_jit_is_called() -> None:
    with pytest.raises(UnsupportedError, match="unknown backend 'interpret'"):
        fusejit.jit(lambda x: x, backend="interpret")
