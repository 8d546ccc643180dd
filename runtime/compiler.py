"""Compile one call signature: trace, optimise, lower and plan memory, render and build, bind.

This is the chain of stages that a cache miss of `@jit` runs (jit.py owns the cache of
compiled signatures and the call paths); it returns a `Compiled` with every intermediate kept
for `explain`, the profiler and tests. FUSEJIT_DEBUG logging of the stages happens here.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import config
from ..frontend.ir import Graph, format_graph, node_ids
from ..frontend.pyscalar import Prelude
from ..frontend.trace import trace
from ..lowering.loop_ir import Program, format_program
from ..lowering.lower import contiguous_strides, lower
from ..lowering.memplan import plan
from ..lowering.pipeline import optimise
from . import backends
from .backend_c import prepare_dispatcher
from .callargs import element_strides
from .error_order import ErrorReplay, input_names


@dataclass
class Compiled:
    """Everything one signature compiled to (kept for explain/inspection and tests)."""

    graph: Graph
    optimised: Graph
    program: Program
    source: str
    executable: Any  # what the backend's build returned (runtime/backends)
    positions: list[int]  # per graph input: an argument's position or a prelude value's index
    times: dict[str, float] = field(default_factory=dict)
    stub: Callable[..., Any] | None = None
    updated: tuple[int, ...] = ()  # argument positions the function writes in place
    prelude: Prelude | None = None  # Python scalar arithmetic run before the native call
    one_array: bool = False  # the result is one array (jit._finish would return it as is)


def explain_module() -> Any:
    """runtime.explain, imported on first use (`import fusejit` stays short)."""
    from . import explain

    return explain


def log(level: int, msg: str | Callable[[], str]) -> None:
    """Print `msg` (or what calling it returns) to stderr when FUSEJIT_DEBUG >= level."""
    if config.current().debug >= level:
        print(f"[fusejit] {msg() if callable(msg) else msg}", file=sys.stderr)


def compile_signature(fn: Callable[..., Any], args: tuple, key: Hashable, *,
                      static: frozenset[int], same: dict[int, int] | None,
                      python_scalars: bool, fastmath: bool, backend: str,
                      on_traced: Callable[[], None] = lambda: None) -> Compiled:
    """Trace `fn` on `args` (positions in `static` are Python values baked into the trace,
    `same` maps an argument to an earlier one it aliases) and build it for `backend` (a name
    in the registry of runtime/backends).
    `on_traced` runs once the trace has succeeded; `key` names the signature in logs and in
    the profiler's registry. The nodes it builds are numbered from 0 (frontend.ir.node_ids):
    the same function compiles to the same source whatever was traced before it."""
    with node_ids():
        return _compile(fn, args, key, static, same, python_scalars, fastmath, backend,
                        on_traced)


def _compile(fn: Callable[..., Any], args: tuple, key: Hashable, static: frozenset[int],
             same: dict[int, int] | None, python_scalars: bool, fastmath: bool, backend: str,
             on_traced: Callable[[], None]) -> Compiled:
    name = fn.__name__
    prepare_dispatcher()
    target = backends.get(backend)
    args = target.trace_args(args)
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    graph, positions = trace(fn, list(args), static, name, same, python_scalars=python_scalars)
    on_traced()
    t1 = time.perf_counter()
    times["trace"] = t1 - t0
    log(2, f"traced {name}:\n{format_graph(graph)}")
    optimised = optimise(graph, fastmath=fastmath)
    t2 = time.perf_counter()
    times["optimise"] = t2 - t1
    log(2, f"optimised {name}:\n{format_graph(optimised)}")
    strides = []
    for node, pos in zip(graph.inputs, positions):
        a = args[pos] if pos < len(args) else None  # a prelude value is a scalar
        if isinstance(a, np.ndarray) and not a.flags.c_contiguous and a.size:
            strides.append(element_strides(a))
        else:
            strides.append(contiguous_strides(node.shape))
    options = target.lower_options
    program = plan(lower(optimised, strides, blas=options.blas, own_lapack=options.own_lapack))
    t3 = time.perf_counter()
    times["lower"] = t3 - t2
    log(3, lambda: explain_module().explain(graph, optimised, program).lowering_report())
    log(4, lambda: format_program(program))
    ranges = [(k, n.attrs["range"], np.dtype(n.attrs.get("range_dtype", n.dtype)))
              for k, n in enumerate(optimised.inputs) if "range" in n.attrs]
    built = target.build(program, optimised, ranges, name, fastmath)
    if hasattr(built.executable, "replay"):  # its error path replays the trace
        built.executable.replay = ErrorReplay(graph, program, input_names(fn, positions,
                                                                           len(args)))
    times["render"] = built.render_s
    times["compile"] = time.perf_counter() - t3 - built.render_s
    log(5, lambda: f"generated {target.language} for {name}:\n{built.source}")
    target.register(fn, key, program, built, times)  # FUSEJIT_PROFILE: for the report
    return Compiled(graph, optimised, program, built.source, built.executable, positions, times,
                    updated=tuple(positions[k] for k in optimised.updates),
                    prelude=graph.prelude,
                    one_array=optimised.out_tree == ("leaf",) and not optimised.out_scalar[0])
