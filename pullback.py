"""`fusejit.vjp`: the forward pass compiled once, keeping the values its backward pass reads
(the residuals), and a pullback compiled from the backward pass alone over those residuals.

The forward program's trace runs `fn` and then the backward pass with placeholder
cotangents, only to learn which forward values the backward nodes read; it returns `fn`'s
result and those values (the backward nodes themselves are dead code there and optimised
away). The pullback program replays the recorded backward nodes (same ops, attributes and
source lines) over its own inputs: the primals, the residuals and the cotangent. The values
are those of one forward-and-backward program over the same primals, as JAX's vjp keeps
residuals; the cost of the pullback is the backward pass alone.

Like JAX's, the pullback uses the values the forward pass saw: the residuals are arrays of
their own. The primals themselves are read by reference when the pullback runs (they are
not copied), so writing into a primal between `vjp` and its pullback changes what the
pullback reads of it. Called while tracing (inside `jit`), vjp traces inline instead.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .frontend.autodiff import backward
from .frontend.context import cast_node, current, make_node, tracing
from .frontend.ir import Node
from .frontend.pytree import flatten, unflatten
from .frontend.tracer import Tracer
from .gradients import Gradient, float_leaf, frozen, gradient, is_leaf
from .jit import JitFunction

_REPLAYED = ("const", "empty")  # forward sources the pullback rebuilds rather than keeps


@dataclass
class _Record:
    """What the forward trace learnt, for the pullback to replay."""

    leaf_ids: list[int] = field(default_factory=list)  # the primals' input nodes
    out_tree: Any = None  # the structure of fn's result
    out_specs: list[tuple[tuple[int, ...], np.dtype] | None] = field(default_factory=list)
    seeds: list[Node] = field(default_factory=list)  # placeholder cotangents, per float leaf
    body: list[Node] = field(default_factory=list)  # the backward nodes, in trace order
    residuals: list[Node] = field(default_factory=list)
    grads: list[Node | None] = field(default_factory=list)
    wrt: list[Node] = field(default_factory=list)
    trees: list[tuple[Any, int]] = field(default_factory=list)  # per primal: structure, count


def _jit(flat: Any, n: int, like: JitFunction | None) -> JitFunction:
    """`flat` of n positional arrays, jitted (with `like`'s backend and fastmath)."""
    flat.__signature__ = inspect.Signature(
        [inspect.Parameter(f"leaf{k}", inspect.Parameter.POSITIONAL_ONLY) for k in range(n)])
    if like is None:
        return JitFunction(flat, python_scalars=False)
    return JitFunction(flat, backend=like.backend, fastmath=like.fastmath, python_scalars=False)


def _forward(fn: Any, primals: tuple, rec: _Record, like: JitFunction | None) -> JitFunction:
    trees = [flatten(p, is_leaf) for p in primals]
    name = getattr(fn, "__name__", "fn")
    for i, (leaves, _) in enumerate(trees):
        for leaf in leaves:
            float_leaf(leaf, name, i)

    def forward(*flat: Tracer) -> Any:
        ctx = current()
        it = iter(flat)
        args, wrt, seen = [], [], set()
        rec.trees = [(tree, len(leaves)) for leaves, tree in trees]
        rec.leaf_ids = [t.node.id for t in flat]
        for leaves, tree in trees:
            fresh = []
            for _ in leaves:
                node = next(it).node
                if node.id in seen:  # the same array twice: two variables
                    node = make_node("copy", [node], node.shape, node.dtype)
                seen.add(node.id)
                wrt.append(node)
                fresh.append(Tracer(node))  # writes inside fn stay inside fn
            args.append(unflatten(tree, fresh))
        mark = len(ctx.created)
        result = fn(*args)
        outs, rec.out_tree = flatten(result, is_leaf)
        out_nodes, rec.out_specs, rec.seeds = [], [], []
        for o in outs:
            if isinstance(o, Tracer) and o.dtype.kind == "f":
                out_nodes.append(o.node)
                rec.out_specs.append((o.shape, o.dtype))
                rec.seeds.append(make_node("empty", [], o.shape, o.dtype))
            else:
                rec.out_specs.append(None)
        forward_nodes = ctx.created[mark:len(ctx.created) - len(rec.seeds)]
        start = len(ctx.created)
        rec.grads = backward(forward_nodes, out_nodes, rec.seeds, wrt)
        rec.body, rec.wrt = ctx.created[start:], wrt
        made = {n.id for n in rec.body} | {s.id for s in rec.seeds} | set(rec.leaf_ids)
        kept: dict[int, Node] = {}
        for n in rec.body:
            for i in n.inputs:
                if i.id not in made and i.op not in _REPLAYED:
                    kept.setdefault(i.id, i)
        for g in rec.grads:
            if g is not None and g.id not in made and g.op not in _REPLAYED:
                kept.setdefault(g.id, g)
        rec.residuals = list(kept.values())
        return result, tuple(Tracer(r) for r in rec.residuals)

    forward.__name__ = f"vjp_forward_{name}"
    return _jit(forward, sum(len(leaves) for leaves, _ in trees), like)


def _pullback(rec: _Record, name: str, like: JitFunction | None) -> JitFunction:
    def pull(*flat: Tracer) -> Any:
        n_prim, n_res = len(rec.leaf_ids), len(rec.residuals)
        mapped: dict[int, Node] = {}
        for nid, t in zip(rec.leaf_ids, flat[:n_prim]):
            mapped[nid] = t.node
        for r, t in zip(rec.residuals, flat[n_prim:n_prim + n_res]):
            mapped[r.id] = t.node
        for s, t in zip(rec.seeds, flat[n_prim + n_res:]):
            mapped[s.id] = cast_node(t.node, s.dtype)

        def get(n: Node) -> Node:
            if n.id not in mapped:
                if n.op not in _REPLAYED and n.op != "copy":
                    raise AssertionError(f"vjp pullback: {n.op} node not kept")
                mapped[n.id] = make_node(n.op, [get(i) for i in n.inputs], n.shape, n.dtype,
                                         **n.attrs)
            return mapped[n.id]

        for n in rec.body:
            new = make_node(n.op, [get(i) for i in n.inputs], n.shape, n.dtype, **n.attrs)
            new.loc = n.loc
            mapped[n.id] = new
        per_arg, k = [], 0
        for tree, count in rec.trees:
            leaves = [gradient(get(g) if g is not None else None, get(w))
                      for g, w in zip(rec.grads[k:k + count], rec.wrt[k:k + count])]
            per_arg.append(unflatten(tree, leaves))
            k += count
        return tuple(per_arg)

    pull.__name__ = f"vjp_pullback_{name}"
    return _jit(pull, len(rec.leaf_ids) + len(rec.residuals) + len(rec.seeds), like)


def vjp(fn: Any, *primals: Any) -> tuple[Any, Any]:
    """`(fn(*primals), vjp_fn)`: `vjp_fn(cotangent)` (the structure of fn's result) gives
    the cotangent of every primal, a tuple. The forward program keeps the values the backward
    pass reads; `vjp_fn` runs the backward pass alone over them (both compiled)."""
    like = fn if isinstance(fn, JitFunction) else None
    if like is not None:
        fn = like.fn
    if tracing():
        out = Gradient(fn, (), False, "forward")(*primals)
        back = Gradient(fn, tuple(range(len(primals))), False, "vjp")
        return out, lambda cotangent: back(*primals, cotangent)
    rec = _Record()
    leaves = [leaf for p in primals for leaf in flatten(p, is_leaf)[0]]
    out, residuals = _forward(fn, primals, rec, like)(*leaves)
    pull = _pullback(rec, getattr(fn, "__name__", "fn"), like)
    name = getattr(fn, "__name__", "fn")

    def vjp_fn(cotangent: Any) -> tuple:
        cts, tree = flatten(cotangent, is_leaf)
        if frozen(tree) != frozen(rec.out_tree):
            raise TypeError(f"fusejit.vjp: the cotangent's structure does not match what "
                            f"{name}() returns")
        seeds = []
        for c, spec in zip(cts, rec.out_specs):
            if spec is None:
                continue
            if np.shape(c) != spec[0]:
                raise ValueError(f"fusejit.vjp: a cotangent of shape {np.shape(c)} was given "
                                 f"for an output of shape {spec[0]} of {name}()")
            seeds.append(np.asarray(c))
        return pull(*leaves, *residuals, *seeds)

    vjp_fn.pullback = pull  # type: ignore[attr-defined]  # (for explain and tests)
    vjp_fn.residuals = residuals  # type: ignore[attr-defined]
    vjp_fn.arguments = lambda ct: (*leaves, *residuals, *(  # type: ignore[attr-defined]
        np.asarray(c) for c, s in zip(flatten(ct, is_leaf)[0], rec.out_specs) if s))
    return out, vjp_fn
