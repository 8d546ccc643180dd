"""Compiled functions over Dask arrays: `jit(f)(x)` with `dask.array.Array` arguments returns
Dask arrays (jit.py hands such calls here; Dask is imported only then).

The function is traced once on stand-ins of the whole arrays; runtime/dask_plan.py decides from
that graph how each result depends on each argument's chunks. The graph then becomes Dask
work: blockwise stages (one compiled call per chunk, runtime/dask_stage.py), Dask tree
reductions of compiled per-chunk partials with a compiled combine, and dask.array's blocked
matmul where a matrix product's inner axis is chunked. Everything that cannot be split, unknown
(NaN) chunk sizes and unsupported dtypes raise before anything is submitted.

Python and NumPy scalars are baked into the trace (a new value compiles a new program); NumPy
array arguments become one-chunk Dask arrays. In-place updates follow Dask: the caller's array
is not modified, and a function that returns its updated argument returns a new array.
"""

from __future__ import annotations

import os
import re
import uuid
import weakref
from collections.abc import Hashable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from ..frontend.ir import Graph, Node
from ..frontend.ops import check_dtype
from ..frontend.pytree import unflatten
from ..frontend.trace import trace
from . import dask_ship
from . import dask_stage as S
from .dask_plan import ARG_FNS, ChunkPlan, analyse, stage_nodes

_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _check(a: Any, i: int, name: str) -> None:
    if any(np.isnan(s) for s in a.shape) or any(np.isnan(c) for cs in a.chunks for c in cs):
        raise UnsupportedError(
            f"argument {i} of {name}() is a Dask array with unknown chunk sizes (NaN, e.g. after "
            "boolean indexing); call x.compute_chunk_sizes() first")
    check_dtype(a.dtype, f"argument {i} of {name}() (a Dask array)")


class DaskCall:
    """The plan for one argument signature of one JitFunction, reused by later calls with
    the same shapes, dtypes, chunks and scalar values (the stage tokens stay the same, so
    workers reuse what they compiled)."""

    def __init__(self, jf: Any, args: tuple) -> None:
        import dask.array as da

        name = jf.fn.__name__
        static, stand = set(jf.static), []
        for i, a in enumerate(args):
            if i in jf.static:
                stand.append(a)
            elif isinstance(a, da.Array):
                _check(a, i, name)
                stand.append(np.lib.stride_tricks.as_strided(
                    np.zeros(1, a.dtype), a.shape, (0,) * a.ndim, writeable=True))
            elif isinstance(a, np.ndarray):
                stand.append(a)
            else:  # scalars are baked into the trace
                static.add(i)
                stand.append(a)
        graph, positions = trace(jf.fn, stand, frozenset(static), name,
                                 python_scalars=jf.python_scalars)
        params = list(jf.signature.parameters)
        chunks, names = {}, {}
        for node, pos in zip(graph.inputs, positions):
            if pos >= len(args):  # a global array the function reads: a NumPy value
                continue
            a = args[pos]
            names[node.id] = params[pos]
            if isinstance(a, da.Array):
                chunks[node.id] = a.chunks
        # the JitFunction class builds each stage (no reference to `jf`: _plans is weak)
        self.factory, self.graph, self.positions = type(jf), graph, positions
        self.plan: ChunkPlan = analyse(graph, chunks, names)
        self.stages: dict[Hashable, S.StageSpec] = {}
        self.tokens: dict[Hashable, str] = {}
        self.prefix = re.sub(r"\W", "_", name)
        self.options = {"backend": jf.backend, "fastmath": jf.fastmath}
        code = getattr(jf.fn, "__code__", None)
        self.where = (code.co_filename, code.co_firstlineno) if code else ("<dask stage>", 1)

    def values(self, args: tuple) -> tuple | None:
        """The graph inputs' values: the arguments, then the global arrays the function
        reads, read now (None when one changed type or shape: the caller traces again)."""
        return args if self.graph.prelude is None else self.graph.prelude.evaluate(args)

    def token(self, key: Hashable) -> str:
        if key not in self.tokens:
            self.tokens[key] = f"{self.prefix}-{uuid.uuid4().hex}"
        return self.tokens[key]

    def spec(self, targets: list[Node], partial: Any, done: set[int]) -> tuple[
            S.StageSpec, list[Node]]:
        """The stage computing `targets` from the values in `done` (cached)."""
        plan = self.plan
        leaves, inner = stage_nodes(plan, targets, done)
        key = (tuple(t.id for t in targets), partial, tuple(n.id for n in leaves))
        spec = self.stages.get(key)
        if spec is None:
            index = {n.id: k for k, n in enumerate(leaves + inner)}
            nodes = tuple(S.StageNode(n.op, tuple(index[i.id] for i in n.inputs), n.shape,
                                      plan.dims[n.id], n.dtype, dict(n.attrs), n.loc)
                          for n in inner)
            spec = self.stages[key] = S.StageSpec(
                f"{self.prefix}_chunk{len(self.stages)}",
                tuple(plan.dims[n.id] for n in leaves), nodes,
                tuple(index[t.id] for t in targets), partial, self.where)
        return spec, leaves


class Assembly:
    """One call: the Dask graph of a DaskCall for these argument values."""

    def __init__(self, call: DaskCall, args: tuple) -> None:
        import dask.array as da

        self.call, self.da = call, da
        self.env: dict[int, Any] = {}
        graph: Graph = call.graph
        for node, pos in zip(graph.inputs, call.positions):
            a = args[pos]
            if not isinstance(a, da.Array):
                a = da.from_array(np.asarray(a), chunks=-1)
            elif node.id in call.plan.whole_axes:
                a = whole_along(a, call.plan.whole_axes[node.id])
            self.env[node.id] = a
        self.args = args
        self.made: list[tuple[S.StageSpec, S.StageFn, list[Any], Any]] = []  # for explain
        self.ship = dask_ship.wanted()

    def run(self) -> Any:
        plan, call = self.call.plan, self.call
        for node in plan.order:
            if node.id in plan.leaf_consts:
                self.env[node.id] = self.da.from_array(node.attrs["value"], chunks=-1)
            kind = plan.boundaries.get(node.id)
            if kind == "reduce":
                self.env[node.id] = self.reduce(node)
            elif kind == "matmul":
                a, b = (self.value(i) for i in node.inputs)
                self.env[node.id] = self.da.matmul(a, b)
        inputs = {n.id: pos for n, pos in zip(call.graph.inputs, call.positions)}
        self.shared([t for t in plan.targets if t.id not in inputs])
        outs = [self.args[inputs[t.id]] if t.id in inputs else self.value(t)
                for t in plan.targets]
        return unflatten(call.graph.out_tree, outs)

    def shared(self, targets: list[Node]) -> None:
        """Results with the same axis classes come from one stage (one compiled call per
        chunk returns them all: Black-Scholes' call and put are computed once)."""
        import operator

        groups: dict[tuple, list[Node]] = {}
        for t in targets:
            if t.id not in self.env and t.op != "const":
                group = groups.setdefault((self.call.plan.dims[t.id], t.shape), [])
                if all(t is not u for u in group):
                    group.append(t)
        for group in groups.values():
            if len(group) > 1 and self.call.spec(group, None, set(self.env))[1]:
                both, _, ind = self.stage(group, None)
                for k, t in enumerate(group):
                    self.env[t.id] = self.da.blockwise(
                        operator.getitem, ind, both, ind, k, None, dtype=t.dtype,
                        meta=np.empty((0,) * len(t.shape), t.dtype))

    def value(self, node: Node) -> Any:
        """`node` as a Dask array: materialised already, or a blockwise stage."""
        if node.id not in self.env:
            if node.op == "const":
                return self.da.from_array(np.asarray(node.attrs["value"]), chunks=-1)
            self.env[node.id] = self.stage([node], None)[0]
        return self.env[node.id]

    def stage(self, targets: list[Node], partial: Any) -> tuple[Any, dict[str, tuple],
                                                                tuple[str, ...]]:
        """A blockwise stage computing `targets` (all with the same axis classes); returns
        the Dask array (of tuples, for several targets), the chunks of each output axis and
        the output index."""
        from dask.array.core import unify_chunks

        call, da = self.call, self.da
        target = targets[0]
        spec, leaves = call.spec(targets, partial, set(self.env))
        fn = S.StageFn(call.token(spec.name), spec, call.factory, call.options)
        if partial is not None and partial[0] in ARG_FNS:
            dtype = np.dtype([("v", target.dtype), ("i", np.int64)])
        else:
            dtype = np.dtype(partial[2]) if partial is not None else target.dtype
        if not leaves:  # computed from constants alone
            return da.from_array(fn(), chunks=-1), {}, ()
        fresh = iter(f"u{k}" for k in range(1 << 30))
        inds = []
        for classes in spec.leaves:
            ind: list[str] = []
            for c in classes:
                name = f"c{c}" if c is not None else next(fresh)
                ind.append(name if name not in ind else next(fresh))
            inds.append(tuple(ind))
        pairs = [x for n, ind in zip(leaves, inds) for x in (self.env[n.id], ind)]
        chunkss, arrays = unify_chunks(*pairs, warn=False)
        reduced = set(partial[1]) if partial is not None else set()
        out_ind: list[str] = []
        new_axes: dict[str, int] = {}
        adjust: dict[str, int] = {}
        for d, (c, s) in enumerate(zip(call.plan.dims[target.id], target.shape)):
            name = f"c{c}" if c is not None else ""
            if name in chunkss and name not in out_ind:
                if d in reduced:
                    adjust[name] = 1
                    if partial[0] in ("max", "min") + ARG_FNS and 0 in chunkss[name]:
                        arrays = self._drop_empty(arrays, inds, name, chunkss)
            else:
                name = next(fresh)
                new_axes[name] = 1 if d in reduced else s
            out_ind.append(name)
        ndim = len(out_ind)
        self.made.append((spec, fn, list(arrays), partial))
        if self.ship:
            self._prebuild(fn, arrays, inds, chunkss)
        arr = da.blockwise(fn, tuple(out_ind),
                           *[x for a, ind in zip(arrays, inds) for x in (a, ind)],
                           dtype=dtype, adjust_chunks=adjust or None, new_axes=new_axes or None,
                           align_arrays=False, concatenate=True,
                           meta=np.empty((0,) * ndim, dtype), token=f"fusejit-{spec.name}")
        op_chunks = {name: chunkss[name] for name in out_ind if name in chunkss}
        chunks = {name: op_chunks.get(name, (s,)) for name, s in zip(out_ind, target.shape)}
        return arr, chunks, tuple(out_ind)

    def _prebuild(self, fn: S.StageFn, arrays: list, inds: list, chunkss: dict,
                  most: int = 16) -> None:
        """Build the stage here for each chunk shape it will meet (at most `most`), for
        workers that need no compiler (runtime/dask_ship.py)."""
        import itertools

        letters = sorted({name for ind in inds for name in ind})
        sizes = [sorted(set(chunkss[name])) for name in letters]
        for combo in itertools.islice(itertools.product(*sizes), most):
            size = dict(zip(letters, combo))
            blocks = [np.zeros(tuple(size[n] for n in ind), a.dtype)
                      for a, ind in zip(arrays, inds)]
            key = tuple((b.shape, b.dtype.str) for b in blocks)
            if key not in fn.shipped:
                sig = ", ".join(f"{b.dtype.name}[{','.join(map(str, b.shape))}]"
                                for b in blocks)
                file, line = fn.spec.where
                shipped = dask_ship.ship(fn.jit().lower_for(*blocks), fn.spec.name, sig,
                                         f"{os.path.basename(file)}:{line}")
                if shipped is not None:
                    fn.shipped[key] = shipped

    def _drop_empty(self, arrays: list, inds: list, name: str, chunkss: dict) -> list:
        """Rechunk away zero-length chunks along `name` (max/min/argmax of an empty chunk
        has no value; the whole axis is not empty, tracing checked that)."""
        chunkss[name] = tuple(c for c in chunkss[name] if c) or (0,)
        out = []
        for a, ind in zip(arrays, inds):
            if name in ind:
                a = a.rechunk({ind.index(name): chunkss[name]})
            out.append(a)
        return out

    def reduce(self, node: Node) -> Any:
        """A reduction over chunked axes: per-chunk compiled partials (kept dims), then a
        Dask tree of compiled combines."""
        call, da = self.call, self.da
        fn, axes, keepdims = node.attrs["fn"], node.attrs["axes"], node.attrs["keepdims"]
        (x,) = node.inputs
        partial, chunks, _ = self.stage([x], (fn, tuple(axes), node.dtype, node.loc))
        meta = np.empty((0,) * len(node.shape), node.dtype)
        if fn in ARG_FNS:
            per_axis = tuple(chunks[k] for k in chunks)
            partial = partial.map_blocks(S.Globalize(tuple(axes), per_axis, x.shape),
                                         dtype=partial.dtype, meta=partial._meta)
            merge = S.ArgMerge(fn)
            best = da.reduction(partial, S.identity, merge, axis=tuple(axes), keepdims=keepdims,
                                dtype=partial.dtype, combine=merge, concatenate=True,
                                meta=np.empty((0,) * len(node.shape), partial.dtype))
            return best.map_blocks(S.index_of, dtype=node.dtype, meta=meta)
        comb = S.Combine(call.token(("combine", fn, node.dtype.str)), fn, node.dtype,
                         call.factory, call.options)
        return da.reduction(partial, S.identity, comb, axis=tuple(axes), keepdims=keepdims,
                            dtype=node.dtype, combine=comb, concatenate=True, meta=meta)


def whole_along(a: Any, axes: tuple[int, ...]) -> Any:
    """`a` rechunked to one chunk along `axes`; the other axes keep their chunks unless a
    chunk would outgrow both the largest chunk `a` had and Dask's `array.chunk-size`, when
    the longest other chunked axis is cut finer to stay within that."""
    import dask
    from dask.utils import parse_bytes

    big = [max(c) if c else 0 for c in a.chunks]
    limit = max(int(np.prod(big)) * a.dtype.itemsize,
                parse_bytes(dask.config.get("array.chunk-size")))
    spec: dict[int, int] = {axis: -1 for axis in axes}
    merged = [s if d in spec else b for d, (s, b) in enumerate(zip(a.shape, big))]
    size = int(np.prod(merged)) * a.dtype.itemsize
    others = [d for d in range(a.ndim) if d not in spec and len(a.chunks[d]) > 1]
    if size > limit and others:
        d = max(others, key=lambda d: merged[d])
        spec[d] = max(1, merged[d] * limit // size)
    return a.rechunk(spec)


def plan_and_values(jf: Any, args: tuple) -> tuple[DaskCall, tuple]:
    """The DaskCall for this argument signature of `jf` (cached per JitFunction) and its
    graph inputs' values for `args` (the global arrays read once, here)."""
    key = tuple(("dask", a.shape, a.dtype.str, a.chunks) if hasattr(a, "dask") and
                hasattr(a, "chunks") else
                ("np", a.shape, a.dtype.str) if isinstance(a, np.ndarray) else
                ("value", type(a), a) for a in args)
    per_fn = _plans.setdefault(jf, {})
    try:
        plan = per_fn.get(key)
    except TypeError:  # an unhashable argument: trace says what is wrong with it
        plan, key = None, None
    vals = None if plan is None else plan.values(args)
    if plan is None or vals is None:
        plan = DaskCall(jf, args)
        if key is not None:
            per_fn[key] = plan
        vals = plan.values(args)
        assert vals is not None, "a fresh trace reads the globals as they are"
    return plan, vals


def call_plan(jf: Any, args: tuple) -> DaskCall:
    """The DaskCall for this argument signature of `jf` (cached per JitFunction)."""
    return plan_and_values(jf, args)[0]


def call(jf: Any, args: tuple) -> Any:
    """`jf(*args)` where some arguments are Dask arrays: Dask arrays out."""
    plan, vals = plan_and_values(jf, args)
    return Assembly(plan, vals).run()
