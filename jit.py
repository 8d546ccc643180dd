"""`@fusejit.jit`: the only module that chains the stages (trace, optimise, fuse and lower,
render, build, run), and the in-memory cache of compiled functions keyed by call signature."""

from __future__ import annotations

import functools
import inspect
import sys
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import config
from .codegen.c import COptions
from .errors import CompileError, UnsupportedError
from .frontend.ir import Graph, format_graph
from .frontend.ops import check_dtype
from .frontend.pytree import unflatten
from .frontend.tracer import trace
from .lowering.loop_ir import Program, format_program
from .lowering.lower import contiguous_strides, lower
from .lowering.memplan import plan
from .lowering.pipeline import optimise
from .runtime.backend_c import build, load, prepare_dispatcher, ready_dispatcher
from .runtime.executor import Executable, make_stub
from .runtime.source_cache import render_source
from .runtime.toolchain import detect, guess

_SCALARS = (bool, int, float)


def _log(level: int, msg: str) -> None:
    if config.current().debug >= level:
        print(f"[fusejit] {msg}", file=sys.stderr)


def _element_strides(a: np.ndarray) -> tuple[int, ...] | None:
    """Element strides of a non-contiguous array, or None when it must be copied first."""
    item = a.itemsize
    if any(s % item for s in a.strides):
        return None
    return tuple(0 if n == 1 else s // item for s, n in zip(a.strides, a.shape))


def arg_key(a: Any) -> Hashable:
    """The part of the signature that one argument contributes (dtype, shape, layout)."""
    t = type(a)
    if t is np.ndarray or isinstance(a, np.ndarray):
        if a.flags.c_contiguous or a.size == 0:
            return (a.dtype, a.shape)
        return (a.dtype, a.shape, a.strides)
    if t in _SCALARS:
        return t
    if isinstance(a, np.generic):
        return (a.dtype,)
    return ("other", t)


@dataclass
class Compiled:
    """Everything one signature compiled to (kept for explain/inspection and tests)."""

    graph: Graph
    optimised: Graph
    program: Program
    source: str
    executable: Executable
    positions: list[int]
    times: dict[str, float] = field(default_factory=dict)
    stub: Callable[..., Any] | None = None


class JitFunction:
    """A NumPy function compiled on first call for each new argument signature."""

    def __init__(self, fn: Callable[..., Any], static_argnums: Iterable[int] = (),
                 static_argnames: Iterable[str] = (), backend: str | None = None) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.signature = inspect.signature(fn)
        params = list(self.signature.parameters.values())
        self._nparams = len(params)
        self._simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                           for p in params)
        names = [p.name for p in params]
        static = {i if i >= 0 else i + self._nparams for i in static_argnums}
        for name in static_argnames:
            if name not in names:
                raise ValueError(f"static_argnames: {fn.__name__}() has no parameter {name!r}")
            static.add(names.index(name))
        self.static = frozenset(static)
        self.backend = backend or config.current().backend
        if self.backend != "c":
            raise UnsupportedError(f"backend {self.backend!r} is not available yet (only 'c')")
        self._cache: dict[Hashable, Compiled] = {}
        # Fast path: signature bytes computed in C -> specialised call stub.
        self._stubs: dict[bytes, Callable[..., Any]] = {}
        self._keyfn: Callable[[tuple], bytes | None] | None = None
        self.trace_count = 0
        self.compile_count = 0

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs and self._simple and len(args) == self._nparams:
            return args
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if not self._simple:
            raise UnsupportedError(f"{self.fn.__name__}(): functions with *args/**kwargs or "
                                   "keyword-only parameters are not supported yet")
        return bound.args

    def _key(self, args: tuple) -> Hashable:
        static = self.static
        if not static:
            return tuple(arg_key(a) for a in args)
        return tuple(("static", a) if i in static else arg_key(a) for i, a in enumerate(args))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != self._nparams:
            args = self._bind(args, kwargs)
        if self._keyfn is not None:
            stub = self._stubs.get(self._keyfn(args))
            if stub is not None:
                return stub(*args)
        return self._call_slow(args)

    def _call_slow(self, args: tuple) -> Any:
        try:
            compiled = self._cache.get(self._key(args))
        except TypeError:  # an unhashable static argument: _normalise says which
            compiled = None
        if compiled is None:
            args = self._normalise(args)
            key = self._key(args)
            compiled = self._cache.get(key) or self._compile(args, key)
        if compiled.stub is None:
            self._install_stub(compiled, args)
        if compiled.stub is not None:
            return compiled.stub(*args)
        g = compiled.optimised
        outs = compiled.executable.run([args[i] for i in compiled.positions])
        outs = [o[()] if s and isinstance(o, np.ndarray) else o
                for o, s in zip(outs, g.out_scalar)]
        return unflatten(g.out_tree, outs)

    def _normalise(self, args: tuple) -> tuple:
        """Copy arrays whose strides are not whole elements; reject unsupported arguments."""
        out = list(args)
        for i, a in enumerate(args):
            if i in self.static:
                try:
                    hash(a)
                except TypeError:
                    raise TypeError(f"static argument {i} of {self.fn.__name__}() must be "
                                    f"hashable, got {type(a).__name__}") from None
                continue
            if isinstance(a, np.ndarray):
                if isinstance(a, np.matrix) or isinstance(a, np.ma.MaskedArray):
                    raise UnsupportedError(f"argument {i} of {self.fn.__name__}() is a "
                                           f"{type(a).__name__}; pass np.asarray(x)")
                check_dtype(a.dtype, f"argument {i} of {self.fn.__name__}()")
                if not a.flags.c_contiguous and a.size and _element_strides(a) is None:
                    out[i] = np.ascontiguousarray(a)
        return tuple(out)

    def lower_for(self, *args: Any, **kwargs: Any) -> Compiled:
        """Compile (or fetch) the version of this function for these arguments."""
        args = self._normalise(self._bind(args, kwargs))
        key = self._key(args)
        return self._cache.get(key) or self._compile(args, key)

    def _install_stub(self, compiled: Compiled, args: tuple) -> None:
        """Give `compiled` its fast call stub once the dispatcher is built (the first calls of
        a fresh machine run through cffi while it builds in the background)."""
        dispatch = ready_dispatcher()
        if dispatch is None:
            return
        g = compiled.optimised
        compiled.stub = make_stub(compiled.executable, len(args), compiled.positions,
                                  g.out_tree, g.out_scalar)
        if compiled.stub is not None and not self.static:
            self._keyfn = dispatch.key
            fast_key = dispatch.key(args)
            if fast_key is not None:
                self._stubs[fast_key] = compiled.stub

    def _build(self, program: Program) -> tuple[str, Any, float]:
        """Render and build `program`. On a machine's first compile the toolchain probe runs
        concurrently with it; the probe's verdict is awaited before the library is loaded, and
        a wrong guess is rebuilt, so nothing built on a guess ever runs."""
        tc, exact = guess()
        cfg = config.current()
        t0 = time.perf_counter()
        source = render_source(program, COptions(par_min=cfg.parallel_min, libmvec=tc.libmvec))
        render_s = time.perf_counter() - t0
        _log(4, source)
        try:
            path = build(source, tc, self.fn.__name__)
        except CompileError:
            if exact:
                raise
            path = None
        if not exact:
            real = detect()
            if real != tc or path is None:
                tc = real
                source = render_source(program, COptions(par_min=cfg.parallel_min,
                                                  libmvec=tc.libmvec))
                path = build(source, tc, self.fn.__name__)
        return source, load(path), render_s

    def _compile(self, args: tuple, key: Hashable) -> Compiled:
        prepare_dispatcher()
        times: dict[str, float] = {}
        t0 = time.perf_counter()
        graph, positions = trace(self.fn, list(args), self.static, self.fn.__name__)
        self.trace_count += 1
        t1 = time.perf_counter()
        times["trace"] = t1 - t0
        _log(2, f"traced {self.fn.__name__}:\n{format_graph(graph)}")
        optimised = optimise(graph)
        t2 = time.perf_counter()
        times["optimise"] = t2 - t1
        _log(2, f"optimised {self.fn.__name__}:\n{format_graph(optimised)}")
        strides = []
        for node, pos in zip(graph.inputs, positions):
            a = args[pos]
            if isinstance(a, np.ndarray) and not a.flags.c_contiguous and a.size:
                strides.append(_element_strides(a))
            else:
                strides.append(contiguous_strides(node.shape))
        program = plan(lower(optimised, strides))
        t3 = time.perf_counter()
        times["lower"] = t3 - t2
        _log(3, format_program(program))
        source, lib, render_s = self._build(program)
        times["render"] = render_s
        times["compile"] = time.perf_counter() - t3 - render_s
        ranges = [(k, n.attrs["range"], n.dtype) for k, n in enumerate(optimised.inputs)
                  if "range" in n.attrs]
        executable = Executable(program, lib, ranges)
        self.compile_count += 1
        compiled = Compiled(graph, optimised, program, source, executable, positions, times)
        self._cache[key] = compiled
        self._install_stub(compiled, args)
        _log(1, f"compiled {self.fn.__name__} for {key}: {len(program.kernels)} kernel(s), "
                + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in times.items()))
        return compiled


def jit(fn: Callable[..., Any] | None = None, *, static_argnums: Iterable[int] | int = (),
        static_argnames: Iterable[str] | str = (), backend: str | None = None) -> Any:
    """Compile a NumPy function. Usable as `@jit` or `@jit(static_argnums=...)`."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)

    def wrap(f: Callable[..., Any]) -> JitFunction:
        return JitFunction(f, static_argnums, static_argnames, backend)

    return wrap if fn is None else wrap(fn)
