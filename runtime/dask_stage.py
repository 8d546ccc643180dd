"""What Dask runs per chunk: compiled stages, compiled combines, argmax's index merge.

A stage is a piece of the user's traced graph rebuilt for each chunk's shape (`StageSpec`:
plain data, so it pickles to worker processes). Each process keeps one JitFunction per stage
(`_local`, keyed by the stage's token), so a worker traces and builds a program at most once
per chunk shape, from the kernel cache on its disk when another process built it already.
The JitFunction class itself comes from the caller (runtime never imports jit.py).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CompileError
from ..frontend import tracer as T
from ..frontend.ops_complex import check_complex_node
from . import dask_ship

_local: dict[str, Any] = {}  # token -> this process's JitFunction of that stage
_lock = threading.Lock()
_compiling: dict[tuple, threading.Lock] = {}


# A boundary reduction's per-chunk partial: fn, axes, dtype, the user's line.
Partial = tuple[str, tuple[int, ...], np.dtype, "str | None"]


@dataclass(frozen=True)
class StageNode:
    """One node of a stage: op, operands (indices into the stage's values), the shape and
    axis classes traced on the whole arrays, dtype, attributes, the user's line."""

    op: str
    inputs: tuple[int, ...]
    shape: tuple[int, ...]
    classes: tuple[int | None, ...]
    dtype: np.dtype
    attrs: dict
    loc: str | None


@dataclass(frozen=True)
class StageSpec:
    """A blockwise stage: leaves (their axis classes), nodes in order, the values returned.
    `partial` (a Partial) when the stage ends in a boundary reduction's per-chunk partial
    over its one output, kept dims (argmax/argmin: the extreme value and its index in
    the chunk)."""

    name: str
    leaves: tuple[tuple[int | None, ...], ...]
    nodes: tuple[StageNode, ...]
    outputs: tuple[int, ...]
    partial: Partial | None = None
    where: tuple[str, int] = ("<dask stage>", 1)  # the user's function (file, line)


def _node(op: str, inputs: list, shape: tuple[int, ...], dtype: np.dtype, attrs: dict,
          loc: str | None) -> Any:
    """make_node for a stage node, stamped with (and refusing in the name of) the user's
    line of the node it rebuilds, not the line of the generated stage function."""
    if np.dtype(dtype).kind == "c" or any(i.dtype.kind == "c" for i in inputs):
        check_complex_node(op, [i.dtype for i in inputs] + [np.dtype(dtype)], attrs,
                           f" at {loc}" if loc else "")
    node = T.make_node(op, inputs, shape, dtype, **attrs)
    node.loc = loc
    return node


def _rebuild(spec: StageSpec, leaves: tuple) -> Any:
    """Run inside a trace: the stage's nodes again, each axis of a chunked class as long as
    the chunk (every other axis as traced on the whole arrays)."""
    size: dict[int, int] = {}
    for t, classes in zip(leaves, spec.leaves):
        for s, c in zip(t.shape, classes):
            if c is not None:
                size[c] = s
    vals = [t.node for t in leaves]
    for n in spec.nodes:
        shape = tuple(s if c is None else size.get(c, s) for s, c in zip(n.shape, n.classes))
        vals.append(_node(n.op, [vals[i] for i in n.inputs], shape, n.dtype, n.attrs, n.loc))
    outs = [vals[i] for i in spec.outputs]
    if spec.partial is not None:
        fn, axes, dtype, loc = spec.partial
        (x,) = outs
        keep = tuple(1 if a in axes else s for a, s in enumerate(x.shape))
        if fn in ("argmax", "argmin"):
            extreme = "max" if fn == "argmax" else "min"
            outs = [_node("reduce", [x], keep, x.dtype, {"fn": extreme, "axes": axes,
                                                          "keepdims": True}, loc),
                    _node("reduce", [x], keep, dtype, {"fn": fn, "axes": axes,
                                                       "keepdims": True}, loc)]
        else:
            outs = [_node("reduce", [x], keep, dtype, {"fn": fn, "axes": axes,
                                                       "keepdims": True}, loc)]
    return tuple(T.Tracer(o) for o in outs)


def stage_function(spec: StageSpec) -> Any:
    """A plain Python function of one parameter per leaf (what JitFunction accepts)."""
    params = ", ".join(f"x{i}" for i in range(len(spec.leaves)))
    env: dict[str, Any] = {"_rebuild": _rebuild, "_spec": spec}
    comma = "," if params else ""
    # one line: the body's frame is at co_firstlineno itself, so an error raised while a stage
    # is traced or built names the user's function line (a second line named the line below)
    exec(f"def {spec.name}({params}): return _rebuild(_spec, ({params}{comma}))", env)
    fn = env[spec.name]
    # the profiler names the file and line of the user's function, not "<string>"
    fn.__code__ = fn.__code__.replace(co_filename=spec.where[0], co_firstlineno=spec.where[1])
    return fn


class Compiled:
    """Picklable: builds (once per process) and calls a JitFunction of `fn`."""

    def __init__(self, token: str, factory: Any, options: dict, static: tuple[int, ...] = ()):
        self.token, self.factory, self.options, self.static = token, factory, options, static

    def make(self) -> Any:
        raise NotImplementedError

    def jit(self) -> Any:
        jf = _local.get(self.token)
        if jf is None:
            with _lock:
                jf = _local.get(self.token)
                if jf is None:
                    jf = _local[self.token] = self.factory(self.make(), static_argnums=self.static,
                                                           **self.options)
        return jf

    def call(self, *args: Any) -> Any:
        """Call the JitFunction; the first call of a signature compiles under a lock, so
        threads of one worker never build the same program twice."""
        jf = self.jit()
        key = (self.token,) + tuple((a.shape, a.dtype.str) if isinstance(a, np.ndarray)
                                    else ("v", a) for a in args)
        lock = _compiling.get(key)
        if lock is None:
            with _lock:
                lock = _compiling.setdefault(key, threading.Lock())
            with lock:
                jf.lower_for(*args)
        return jf(*args)


class StageFn(Compiled):
    """One compiled call per chunk: the stage's results as arrays (a structured array of
    value and index for an argmax partial)."""

    def __init__(self, token: str, spec: StageSpec, factory: Any, options: dict) -> None:
        super().__init__(token, factory, options)
        self.spec = spec
        self.__name__ = spec.name
        # chunk signature -> the program the client built for it (runtime/dask_ship.py)
        self.shipped: dict[tuple, dask_ship.Shipped] = {}

    def make(self) -> Any:
        return stage_function(self.spec)

    def __dask_tokenize__(self) -> Any:
        return (self.token, tuple(sorted(s.digest for s in self.shipped.values())))

    def __call__(self, *blocks: Any) -> np.ndarray:
        blocks = tuple(np.asarray(b) for b in blocks)
        shipped = self.shipped.get(tuple((b.shape, b.dtype.str) for b in blocks))
        exe = dask_ship.executable(shipped) if shipped is not None else None
        if exe is not None and shipped is not None:
            outs = dask_ship.run(shipped, exe, blocks)
        else:
            outs = self.call(*blocks)
        if self.spec.partial is not None and self.spec.partial[0] in ("argmax", "argmin"):
            v, i = (np.asarray(o) for o in outs)
            return pack(v, i)
        if len(outs) > 1:
            return tuple(np.asarray(o) for o in outs)
        return np.asarray(outs[0])


def pack(v: np.ndarray, i: np.ndarray) -> np.ndarray:
    out = np.empty(v.shape, [("v", v.dtype), ("i", np.int64)])
    out["v"], out["i"] = v, i
    return out


def _reduce(x: np.ndarray, fn: str, axis: tuple[int, ...], keepdims: bool) -> Any:
    return getattr(np, fn)(x, axis=axis, keepdims=keepdims)


class Combine(Compiled):
    """A tree reduction's combine and aggregate: the same reduction compiled over the
    concatenated partials (a sum of partial sums stays in the accumulation dtype)."""

    def __init__(self, token: str, fn: str, dtype: np.dtype, factory: Any, options: dict):
        super().__init__(token, factory, options, static=(1, 2, 3))
        self.fn, self.dtype = fn, dtype
        self.__name__ = f"fusejit-{fn}"

    def make(self) -> Any:
        return _reduce

    def __dask_tokenize__(self) -> Any:
        return self.token

    def __call__(self, x: Any, axis: Any = None, keepdims: bool = False, **_: Any) -> Any:
        if isinstance(x, list):  # several partials' blocks, not concatenated
            x = np.concatenate(x, axis=axis[0] if axis else 0)
        axis = tuple(sorted(int(a) for a in (axis if isinstance(axis, tuple) else (axis,))))
        try:
            out = self.call(np.asarray(x), self.fn, axis, bool(keepdims))
        except CompileError:  # a worker without a compiler: NumPy's own, on the partials
            out = _reduce(np.asarray(x), self.fn, axis, bool(keepdims))
        return np.asarray(out, self.dtype)


def identity(x: Any, axis: Any = None, keepdims: bool = True, **_: Any) -> Any:
    return x


class ArgMerge:
    """argmax/argmin partials (value, global index) merged along `axis`: the extreme value,
    the first NaN when there is one (as NumPy), the smallest index among ties."""

    def __init__(self, fn: str) -> None:
        self.fn = fn
        self.__name__ = f"fusejit-{fn}-merge"

    def __call__(self, x: Any, axis: Any = None, keepdims: bool = False, **_: Any) -> Any:
        axis = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        v, i = x["v"], x["i"]
        pick = np.max if self.fn == "argmax" else np.min
        best = pick(v, axis=axis, keepdims=True)
        cand = v == best
        if v.dtype.kind == "f":
            nan = np.isnan(v)
            cand = np.where(np.any(nan, axis=axis, keepdims=True), nan, cand)
        idx = np.where(cand, i, np.iinfo(np.int64).max).min(axis=axis, keepdims=True)
        out = pack(best, idx)
        return out if keepdims else np.squeeze(out, axis=axis)


def index_of(x: np.ndarray) -> np.ndarray:
    """The index field of merged argmax/argmin partials."""
    return np.array(x["i"])


class Globalize:
    """An argmax partial's index within its chunk -> its index in the whole array, from the
    chunk's position (`block_info`) and the chunks along the reduced axes."""

    def __init__(self, axes: tuple[int, ...], chunks: tuple[tuple[int, ...], ...],
                 shape: tuple[int, ...]) -> None:
        self.axes, self.chunks, self.shape = axes, chunks, shape
        self.starts = [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64)
                       for c in chunks]

    def __call__(self, block: np.ndarray, block_info: Any = None) -> np.ndarray:
        loc = block_info[None]["chunk-location"]
        out = block.copy()
        if len(self.axes) == 1:
            a = self.axes[0]
            out["i"] += self.starts[a][loc[a]]
            return out
        bshape = tuple(self.chunks[a][loc[a]] for a in range(len(self.shape)))
        coords = np.unravel_index(out["i"], bshape)
        out["i"] = np.ravel_multi_index(
            tuple(c + self.starts[a][loc[a]] for a, c in enumerate(coords)), self.shape)
        return out


def worker_stats() -> dict[str, tuple[int, int]]:
    """Per stage token: (programs this process compiled, distinct argument signatures it
    was called with) (tests, `client.run`)."""
    sigs: dict[str, int] = {}
    for key in _compiling:
        sigs[key[0]] = sigs.get(key[0], 0) + 1
    return {tok: (jf.compile_count, sigs.get(tok, 0)) for tok, jf in _local.items()}
