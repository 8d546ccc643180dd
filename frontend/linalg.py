"""Matrix products at trace time: `@`, np.matmul, np.dot, ndarray.dot and np.einsum.

Every product becomes one `matmul` node over operands shaped (batch..., M, K) and
(batch..., K, N) with the same batch shape and the same (loop) dtype: NumPy's 1-D promotion
and batch broadcasting are expressed as views, mixed dtypes as casts, so the lowering only
ever sees the plain batched case. einsum is accepted where it is such a product (possibly
with transposed operands, summed-out indices and a permuted result).
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import ops as O
from . import tracer as T
from .inplace import gufunc_into
from .views import broadcast_to, transpose, view_node

_SIG = "(n?,k),(k,m?)->(n?,m?)"


def _operand(x: Any, pos: int) -> T.Tracer:
    """`x` as a Tracer; Python and NumPy scalars fail as they do in np.matmul."""
    if isinstance(x, T.Tracer):
        if x.ndim == 0:
            raise ValueError(f"matmul: Input operand {pos} does not have enough dimensions "
                             f"(has 0, gufunc core with signature {_SIG} requires 1)")
        return x
    arr = np.asarray(x)
    O.check_dtype(arr.dtype, f"matmul operand {pos}")
    if arr.ndim == 0:
        raise ValueError(f"matmul: Input operand {pos} does not have enough dimensions "
                         f"(has 0, gufunc core with signature {_SIG} requires 1)")
    return T.Tracer(T.const_node(arr))


def _loop_dtypes(a: T.Tracer, b: T.Tracer) -> tuple[np.dtype, np.dtype]:
    """(loop dtype, result dtype) of np.matmul on these operands, as NumPy resolves them."""
    probe = np.matmul(np.empty((0, 0), a.dtype), np.empty((0, 0), b.dtype))
    loop = np.matmul.resolve_dtypes((a.dtype, b.dtype, None))
    return np.dtype(loop[0]), probe.dtype


def _expand(t: T.Tracer, axis: int) -> T.Tracer:
    """A 1-D operand as a (1, K) or (K, 1) matrix."""
    shape = (1, t.shape[0]) if axis == 0 else (t.shape[0], 1)
    dims = ((-1, 0), (0, 1)) if axis == 0 else ((0, 1), (-1, 0))
    return T.Tracer(view_node(t.node, (0,), dims, shape))


def matmul(x1: Any, x2: Any, /, out: Any = None, **kwargs: Any) -> T.Tracer:
    """np.matmul with NumPy's shapes, dtypes and errors; out= is written as an assignment
    (frontend/inplace.py gufunc_into), so a gemm may compute it into the argument."""
    if out is not None:
        return gufunc_into(np.matmul, out, matmul(x1, x2, **kwargs))
    if kwargs:
        raise UnsupportedError(f"matmul keyword arguments {sorted(kwargs)} are not supported "
                               f"by fusejit{T.where_msg()}")
    a, b = _operand(x1, 0), _operand(x2, 1)
    loop, result = _loop_dtypes(a, b)
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = _expand(a, 0)
    if b_vec:
        b = _expand(b, 1)
    k1, k2 = a.shape[-1], b.shape[-2]
    if k1 != k2:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature {_SIG} (size {k2} is different from {k1})")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {a.shape}->{a.shape[:-2]} "
                         f"{b.shape}->{b.shape[:-2]}") from None
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    an, bn = T.cast_node(a.node, loop), T.cast_node(b.node, loop)
    m, n = a.shape[-2], b.shape[-1]
    node = T.make_node("matmul", [an, bn], batch + (m, n), loop)
    node = T.cast_node(node, result)
    shape = batch + ((m,) if not a_vec else ()) + ((n,) if not b_vec else ())
    if shape != node.shape:
        nb = len(batch)
        dims = [(d, 1) for d in range(nb)]
        if not a_vec:
            dims.append((nb, 1))
        if not b_vec:
            dims.append((nb + 1, 1))
        node = view_node(node, (0,) * (nb + 2), tuple(dims), shape)
    return T.Tracer(node, scalar=not shape)


def dot(a: Any, b: Any, out: Any = None) -> Any:
    """np.dot: matmul where the two agree (b of 1 or 2 dims), multiply for 0-d operands."""
    if out is not None:
        raise UnsupportedError(f"dot(..., out=) is not supported by fusejit yet{T.where_msg()}")
    if np.ndim(_probe(a)) == 0 or np.ndim(_probe(b)) == 0:
        # np.dot converts Python scalars to arrays first: they are not weak here.
        a, b = (x if isinstance(x, T.Tracer) else np.asarray(x) for x in (a, b))
        return np.multiply(a, b)
    nb = np.ndim(_probe(b))
    if nb > 2:
        raise UnsupportedError(
            f"np.dot with a {nb}-d second operand is not supported by fusejit{T.where_msg()}; "
            "write it with np.matmul (which broadcasts batches) or np.einsum")
    na = np.ndim(_probe(a))
    ka = _shape(a)[-1]
    kb = _shape(b)[0 if nb == 1 else -2]
    if ka != kb:
        raise ValueError(f"shapes {_shape(a)} and {_shape(b)} not aligned: {ka} (dim {na - 1}) "
                         f"!= {kb} (dim {max(nb - 2, 0)})")
    return matmul(a, b)


def _probe(x: Any) -> Any:
    return np.empty(x.shape, dtype=[]) if isinstance(x, T.Tracer) else np.asarray(x)


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, T.Tracer) else np.shape(x)


# --- einsum ---------------------------------------------------------------------------------


def _parse(subscripts: str, nops: int) -> tuple[list[str], str]:
    """Split 'ij,jk->ik' into operand index strings and the output (implicit mode too)."""
    if not isinstance(subscripts, str):
        raise UnsupportedError(f"np.einsum with operand/sublist arguments is not supported by "
                               f"fusejit{T.where_msg()}; use a subscripts string")
    spec = subscripts.replace(" ", "")
    lhs, arrow, out = spec.partition("->")
    ins = lhs.split(",")
    if len(ins) != nops:
        raise ValueError("more operands provided to einstein sum function than specified in "
                         "the subscripts string" if nops > len(ins) else
                         "fewer operands provided to einstein sum function than specified in "
                         "the subscripts string")
    letters = "".join(ins)
    if not arrow:
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for s in ins + [out]:
        if not all(c.isalpha() for c in s):
            raise ValueError(f"invalid subscript in einstein sum subscripts string {subscripts!r}")
    for c in out:
        if c not in letters:
            raise ValueError(f"einstein sum subscripts string included output subscript '{c}' "
                             "which never appeared in an input")
    return ins, out


def _expand_ellipsis(subscripts: str, ndims: list[int]) -> str:
    """'...' replaced by letters the subscripts do not use, right-aligned across operands (so
    the broadcast dims line up as NumPy's do); an implicit output gets them first."""
    spec = subscripts.replace(" ", "")
    if "." not in spec:
        return spec
    lhs, arrow, out = spec.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        return spec  # _parse raises NumPy's error for the operand count
    for s in ins + [out]:
        if s.replace("...", "", 1).count(".") or s.count(".") not in (0, 3):
            raise ValueError("invalid subscript '.' in einstein sum subscripts string, "
                             "subscripts must be letters")
    free = [c for c in string.ascii_letters if c not in spec]
    covers = []
    for k, (s, nd) in enumerate(zip(ins, ndims)):
        e = nd - (len(s) - 3) if "..." in s else 0
        if e < 0:
            raise ValueError(f"einstein sum subscripts string contains too many subscripts "
                             f"for operand {k}")
        covers.append(e)
    m = max(covers)
    letters = "".join(free[:m])
    expanded = [s.replace("...", letters[m - e:]) for s, e in zip(ins, covers)]
    if not arrow:
        joined = "".join(ins).replace("...", "")
        out = letters + "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
    elif "..." in out:
        out = out.replace("...", letters)
    elif m:
        raise ValueError("output has more dimensions than subscripts given in einstein sum, "
                         "but no '...' ellipsis provided to broadcast the extra dimensions.")
    return ",".join(expanded) + "->" + out


def _diagonal(t: T.Tracer, idx: str) -> tuple[T.Tracer, str]:
    """An operand with a repeated index ('ii', 'iij'): its diagonal over those axes (the two
    axes moved first, merged into one of n*n and stepped by n+1), until no index repeats."""
    while True:
        dup = next((c for c in idx if idx.count(c) > 1), None)
        if dup is None:
            return t, idx
        p = idx.index(dup)
        q = idx.index(dup, p + 1)
        n = t.shape[p]
        if t.shape[q] != n:
            raise ValueError(f"dimensions in operand for collapsing index '{dup}' don't match "
                             f"({n} != {t.shape[q]})")
        rest = [d for d in range(t.ndim) if d not in (p, q)]
        moved = transpose(t, (p, q, *rest))
        flat = np.reshape(moved, (n * n,) + tuple(t.shape[d] for d in rest))
        t = flat[:: n + 1]
        idx = dup + "".join(idx[d] for d in rest)


def einsum(subscripts: Any, *operands: Any, out: Any = None, dtype: Any = None,
           order: str = "K", casting: str = "safe", optimize: Any = False) -> Any:
    """np.einsum: one operand (a transpose or sum), two (a batched matrix product of grouped
    indices, or a broadcast multiply), or more, contracted pairwise in the order
    np.einsum_path gives (greedy unless `optimize` names another path or strategy), all
    operands first cast to their common dtype as NumPy computes in it."""
    if out is not None or dtype is not None:
        raise UnsupportedError(f"einsum(out=/dtype=) is not supported by fusejit{T.where_msg()}")
    ts = [T.as_tracer(x) for x in operands]
    if isinstance(subscripts, str):
        subscripts = _expand_ellipsis(subscripts, [t.ndim for t in ts])
    ins, outs = _parse(subscripts, len(operands))
    if len(ts) > 2:
        return _einsum_path(subscripts, ins, outs, ts, optimize)
    return _einsum12(subscripts, ins, outs, ts)


def _einsum_path(subscripts: str, ins: list[str], outs: str, ts: list[T.Tracer],
                 optimize: Any) -> Any:
    """Three or more operands: the pairwise contractions of NumPy's einsum_path, in order."""
    for idx, t in zip(ins, ts):
        if len(idx) != t.ndim:  # NumPy's error for the operand, before any path
            _einsum12(subscripts, ins, outs, ts)
    common = np.result_type(*(t.dtype for t in ts))
    ts = [t if t.dtype == common else t.astype(common) for t in ts]
    strategy = "greedy" if optimize is False or optimize is True else optimize
    probes = [np.broadcast_to(np.zeros((), common), t.shape) for t in ts]
    spec = ",".join(ins) + "->" + outs
    _, steps = np.einsum_path(spec, *probes, optimize=strategy, einsum_call=True)
    pending = list(ts)
    for step in steps:
        picked = [pending.pop(i) for i in step[0]]
        text = next(part for part in step[1:] if isinstance(part, str))
        sub_ins, sub_out = _parse(text, len(picked))
        pending.append(_chain(sub_ins, sub_out, picked))
    (result,) = pending
    return _result(result)


def _chain(ins: list[str], outs: str, ts: list[T.Tracer]) -> Any:
    """A step of a path over any number of operands: pairwise, left to right, each pair
    keeping the indices that later operands or the output still need."""
    ins, ts = list(ins), list(ts)
    while len(ts) > 2:
        later = "".join(ins[2:]) + outs
        keep = "".join(dict.fromkeys(c for c in ins[0] + ins[1] if c in later))
        spec = f"{ins[0]},{ins[1]}->{keep}"
        ts[:2] = [_einsum12(spec, ins[:2], keep, ts[:2])]
        ins[:2] = [keep]
    return _einsum12(",".join(ins) + "->" + outs, ins, outs, ts)


def _einsum12(subscripts: str, ins: list[str], outs: str, ts: list[T.Tracer]) -> Any:
    """einsum of one or two operands."""
    sizes: dict[str, int] = {}
    for idx, t in zip(ins, ts):
        if len(idx) != t.ndim:
            raise ValueError("operand has more dimensions than subscripts given in einstein "
                             "sum, but no '...' ellipsis provided to broadcast the extra "
                             "dimensions." if t.ndim > len(idx) else
                             f"einstein sum subscripts string contains too many subscripts "
                             f"for operand {ins.index(idx)}")
    pairs = [_diagonal(t, idx) for idx, t in zip(ins, ts)]
    ins, ts = [p[1] for p in pairs], [p[0] for p in pairs]
    for idx, t in zip(ins, ts):
        for c, n in zip(idx, t.shape):
            if sizes.setdefault(c, n) != n:
                if n != 1 and sizes[c] != 1:
                    raise ValueError(f"operands could not be broadcast together with remapped "
                                     f"shapes [original->remapped]: size {sizes[c]} and {n} "
                                     f"for index '{c}'")
                sizes[c] = max(sizes[c], n)
    # Indices that appear in one operand only and not in the output are summed there first.
    reduced = []
    for pos, (idx, t) in enumerate(zip(ins, ts)):
        others = "".join(s for j, s in enumerate(ins) if j != pos) + outs
        gone = tuple(d for d, c in enumerate(idx) if c not in others)
        if gone:
            t = np.sum(t, axis=gone, dtype=t.dtype)
            idx = "".join(c for d, c in enumerate(idx) if d not in gone)
        reduced.append((idx, t))
    if len(reduced) == 1:
        idx, t = reduced[0]
        return _result(transpose(t, tuple(idx.index(c) for c in outs)))
    # A size-1 dim meets the other operand's size n: NumPy broadcasts it.
    (ia, a), (ib, b) = [(idx, t if t.shape == tuple(sizes[c] for c in idx) else
                         broadcast_to(t, tuple(sizes[c] for c in idx))) for idx, t in reduced]
    contracted = [c for c in ia if c in ib and c not in outs]
    batch = [c for c in outs if c in ia and c in ib]
    mi = [c for c in ia if c not in ib]
    ni = [c for c in ib if c not in ia]
    if contracted and (len(contracted) > 1 or len(mi) > 1 or len(ni) > 1):
        return _grouped_product(a, ia, b, ib, outs, sizes, batch, mi, ni, contracted)
    if not contracted:
        # No contraction: a broadcast multiply laid out in output order.
        pa = _laid_out(a, ia, outs, sizes)
        pb = _laid_out(b, ib, outs, sizes)
        return _result(np.multiply(pa, pb))
    k = contracted[0]
    ta = transpose(a, tuple(ia.index(c) for c in batch + mi + [k]))
    tb = transpose(b, tuple(ib.index(c) for c in batch + [k] + ni))
    if not mi:
        ta = T.Tracer(view_node(ta.node, (0,) * ta.ndim,
                                tuple((d, 1) for d in range(len(batch))) + ((-1, 0),
                                                                            (len(batch), 1)),
                                ta.shape[:-1] + (1, ta.shape[-1])))
    if not ni:
        tb = T.Tracer(view_node(tb.node, (0,) * tb.ndim,
                                tuple((d, 1) for d in range(tb.ndim)) + ((-1, 0),),
                                tb.shape + (1,)))
    r = matmul(ta, tb)
    got = batch + mi + ni
    nb = len(batch)
    if not mi or not ni:
        keep = [d for d in range(nb)] + ([nb] if mi else []) + ([nb + 1] if ni else [])
        r = T.Tracer(view_node(r.node, (0,) * r.ndim, tuple((d, 1) for d in keep),
                               tuple(r.shape[d] for d in keep)))
    return _result(transpose(r, tuple(got.index(c) for c in outs)))


def _grouped_product(a: T.Tracer, ia: str, b: T.Tracer, ib: str, outs: str,
                     sizes: dict[str, int], batch: list[str], mi: list[str], ni: list[str],
                     ks: list[str]) -> Any:
    """A product contracting several indices or with several free indices per operand: the
    operands transposed to (batch, free, contracted) and (batch, contracted, free), each
    group reshaped into one matrix dim, one batched matmul, and the result reshaped back."""
    a = np.broadcast_to(a, tuple(sizes[c] for c in ia))
    b = np.broadcast_to(b, tuple(sizes[c] for c in ib))
    bshape = tuple(sizes[c] for c in batch)

    def size(group: list[str]) -> int:
        return int(np.prod([sizes[c] for c in group], dtype=np.int64))

    ta = transpose(a, tuple(ia.index(c) for c in batch + mi + ks))
    tb = transpose(b, tuple(ib.index(c) for c in batch + ks + ni))
    ta = np.reshape(ta, bshape + (size(mi), size(ks)))
    tb = np.reshape(tb, bshape + (size(ks), size(ni)))
    r = np.reshape(matmul(ta, tb), bshape + tuple(sizes[c] for c in mi + ni))
    got = batch + mi + ni
    return _result(transpose(r, tuple(got.index(c) for c in outs)))


def _laid_out(t: T.Tracer, idx: str, outs: str, sizes: dict[str, int]) -> T.Tracer:
    """`t` transposed and expanded so its indices line up with `outs` for broadcasting."""
    order = [c for c in outs if c in idx]
    t = transpose(t, tuple(idx.index(c) for c in order))
    pos = {c: d for d, c in enumerate(order)}
    shape = tuple(t.shape[pos[c]] if c in idx else 1 for c in outs)
    dims = tuple((pos[c], 1) if c in idx else (-1, 0) for c in outs)
    return T.Tracer(view_node(t.node, (0,) * t.ndim, dims, shape))


def _result(t: Any) -> Any:
    """einsum returns a NumPy scalar for a 0-d result."""
    if isinstance(t, T.Tracer) and t.ndim == 0:
        return T.Tracer(t.node, scalar=True)
    return t


HANDLERS = {np.matmul: matmul, np.dot: dot, np.einsum: einsum}
UFUNCS = {np.matmul: matmul}
