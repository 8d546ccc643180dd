"""`x[mask]` for a mask that depends on the arguments: a `Selection`, whose length is data.

NumPy's x[mask] is a copy of the elements where the mask is true, so its shape depends on the
values, which a compiled function cannot have. Most code reduces such a selection at once or
writes it back: `x[m].sum()`, `np.mean(x[m])`, `((p - y)[valid] ** 2).mean()`,
`y[m] = np.sqrt(y[m])`, `x[m] *= 2`. A Selection keeps x's value (all of it, the array's shape)
and the mask: an element-wise operation computes every element (the unselected ones are
never read), a reduction over the selection's axis is NumPy's masked reduction of the whole
array (`where=mask`; frontend/masked_reduce.py), an assignment through the same mask is
np.where (frontend/masked_calls.py `write`). What needs the elements' positions in the
compacted array (indexing it, sorting it, concatenating, returning it, its len()) is refused
with the user's line.

A Selection is NumPy's array of shape pre + (k,) + post for `values` of shape
pre + mask.shape + post: `lead` = len(pre) axes before the mask's, `post` axes after them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ConcretizationError, UnsupportedError
from . import tracer as T
from .ir import Node, freeze
from .mask_index import mask_axes


def refusal(what: str, of: str = "x[mask]") -> UnsupportedError:
    """The error for `what` done with selection `of` (its `label`)."""
    return UnsupportedError(
        f"{what} of {of} is not supported by fusejit{T.where_msg()}: the selection's length "
        "depends on the data (a compiled function's shapes cannot). Reduce it (x[mask].sum(), "
        "np.mean(x[mask]), np.max(x[mask])), compute on it element-wise and write it back "
        "(y[mask] = np.sqrt(x[mask])), or keep the whole array: np.where(mask, x, fill), "
        "np.sum(x, where=mask)")


class Selection:
    """x[mask] (the module docstring): `values` (x's elements, a snapshot), the boolean
    `mask` and the number of `post` axes after the mask's."""

    __array_priority__ = 30
    fusejit_selection = True  # (Tracer's protocols leave calls with a selection to it)

    def __init__(self, values: T.Tracer, mask: T.Tracer, post: int,
                 loc: str | None = None, label: str = "x[mask]") -> None:
        self.values = values
        # the mask's value now: writing into the mask array later (`m &= c`, `m[:] = False`)
        # does not change a selection made with it, as NumPy's copy does not change
        self.mask = T.Tracer(mask.node)
        self.post = post
        self.loc = loc or T.user_location()  # where x[mask] was made (for errors)
        self.label = label  # what the user wrote that made it (for errors)

    # --- what it is, as NumPy's array ---------------------------------------------------
    @property
    def lead(self) -> int:
        return self.values.ndim - self.post - self.mask.ndim

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def ndim(self) -> int:
        return self.lead + 1 + self.post

    def count(self) -> T.Tracer:
        """k, the number of selected elements: a traced Python int (weak, as NumPy's shape
        entries are: `x32[m].sum() / x32[m].size` stays float32)."""
        k = np.count_nonzero(self.mask)
        k.weak = int
        return k

    @property
    def shape(self) -> tuple[Any, ...]:
        vs = self.values.shape
        return vs[:self.lead] + (self.count(),) + vs[len(vs) - self.post:]

    @property
    def size(self) -> T.Tracer:
        rest = int(np.prod(self.values.shape[:self.lead] + self.values.shape[
            self.values.ndim - self.post:], dtype=np.int64))
        return self.count() * rest if rest != 1 else self.count()

    def where(self) -> T.Tracer:
        """The mask, broadcast to the values' shape (a reduction's where=)."""
        m = self.mask
        shape = (1,) * self.lead + m.shape + (1,) * self.post
        return np.broadcast_to(np.reshape(m, shape), self.values.shape)

    def same_mask(self, other: Selection) -> bool:
        """Whether `other` selects by the same mask (the same value: `y[x > 0] = x[x > 0]`
        computes it twice) along the same axis."""
        return other.post == self.post and same_value(other.mask.node, self.mask.node)

    def with_values(self, values: T.Tracer, post: int | None = None) -> Selection:
        return Selection(values, self.mask, self.post if post is None else post, self.loc,
                         self.label)

    # --- NumPy's protocols ------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from .masked_calls import apply_ufunc

        return apply_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from .masked_calls import apply_function

        return apply_function(func, args, kwargs)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise refusal("converting to a NumPy array (np.asarray, or a NumPy function)", self.label)

    def __len__(self) -> int:
        raise ConcretizationError(
            f"len() of {self.label} needs a concrete value, but the number of selected elements "
            f"depends on the data{T.where_msg()}: use x[mask].size (np.unique(x).size, "
            "np.count_nonzero(mask)), a traced count")

    def __bool__(self) -> bool:
        raise ConcretizationError(
            f"the truth value of {self.label} depends on the data{T.where_msg()}: use np.any or "
            "np.all")

    def __iter__(self) -> Any:
        raise refusal("iterating over the elements", self.label)

    def __getitem__(self, index: Any) -> Any:
        """s[cond] by a boolean selection by the same mask (1-d): the selection by both;
        s[:, 0], s[..., :2] (integers and slices on the other axes, the selection's own
        axis whole): the selection of those parts of each element."""
        if (isinstance(index, Selection) and index.dtype == np.bool_ and self.ndim == 1
                and index.ndim == 1 and self.same_mask(index)):
            return Selection(self.values, np.logical_and(self.mask, index.values), 0, self.loc,
                             self.label)
        parts = self._other_axes(index)
        if parts is None:
            raise refusal("indexing the selection (x[mask][i]) along its own axis", self.label)
        pre, post = parts
        values = self.values[pre + (slice(None),) * self.mask.ndim + post]
        kept = sum(1 for e in post if isinstance(e, slice))
        return Selection(T.Tracer(values.node), self.mask, kept, self.loc, self.label)

    def _other_axes(self, index: Any) -> tuple[tuple, tuple] | None:
        """The entries of `index` for the axes before and after the selection's own (that
        one whole), or None when it indexes the selection's axis or is not basic."""
        entries = index if isinstance(index, tuple) else (index,)
        if sum(1 for e in entries if e is Ellipsis) > 1 or not all(
                e is Ellipsis or isinstance(e, (slice, int, np.integer)) for e in entries):
            return None
        if Ellipsis in entries:
            k = entries.index(Ellipsis)
            fill = (slice(None),) * (self.ndim - len(entries) + 1)
            entries = entries[:k] + fill + entries[k + 1:]
        if len(entries) > self.ndim:
            raise IndexError(f"too many indices for array: array is {self.ndim}-dimensional, "
                             f"but {len(entries)} were indexed")
        entries = entries + (slice(None),) * (self.ndim - len(entries))
        if entries[self.lead] != slice(None):
            return None
        return entries[:self.lead], entries[self.lead + 1:]

    def __setitem__(self, index: Any, value: Any) -> None:
        raise refusal("assigning into the selection (s = x[mask]; s[i] = v)", self.label)

    def __repr__(self) -> str:
        return f"Selection({self.values.node.type} where {self.mask.node.type})"

    # --- methods ----------------------------------------------------------------------------
    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe",
               subok: bool = True, copy: bool = True) -> Selection:
        return self.with_values(self.values.astype(dtype, casting=casting))

    def copy(self, order: str = "K") -> Selection:
        return self.with_values(self.values)  # (a new object: `t = s.copy(); t += 1`)

    def reshape(self, *shape: Any, order: str = "C") -> Selection:
        """x[m].reshape(-1): its ravel(); other shapes need the length (refused)."""
        if shape in ((-1,), ((-1,),)):
            return self.ravel(order)
        raise refusal("reshaping", self.label)

    def ravel(self, order: str = "C") -> Selection:
        """The selection of a 1-d array: x[m].ravel() holds each selected row's elements,
        row by row, as x's elements where the mask broadcast to x's shape is true (order
        'F': of the values and that mask with their axes reversed, column by column)."""
        if self.lead:
            raise refusal("ravel() of a selection along a later axis", self.label)
        if order == "F" and self.ndim > 1:
            return Selection(np.transpose(self.values), np.transpose(self.where()), 0,
                             self.loc, self.label)
        return Selection(self.values, self.where(), 0, self.loc, self.label)

    flatten = ravel

    @property
    def T(self) -> Selection:  # noqa: N802 - NumPy's name
        if self.ndim > 1:
            raise refusal("transposing", self.label)
        return self

    @property
    def real(self) -> Selection:
        return self.with_values(np.real(self.values))

    @property
    def imag(self) -> Selection:
        return self.with_values(np.imag(self.values))

    def conj(self) -> Selection:
        return np.conjugate(self)

    conjugate = conj

    def round(self, decimals: int = 0) -> Selection:
        return np.round(self, decimals)

    def clip(self, min: Any = None, max: Any = None, **kwargs: Any) -> Selection:  # noqa: A002
        return np.clip(self, min, max, **kwargs)

    def dot(self, other: Any) -> Any:
        return np.dot(self, other)

    def _reduce(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        return func(self, *args, **kwargs)

    def sum(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.sum, *a, **k)

    def prod(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.prod, *a, **k)

    def mean(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.mean, *a, **k)

    def std(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.std, *a, **k)

    def var(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.var, *a, **k)

    def max(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.max, *a, **k)

    def min(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.min, *a, **k)

    def any(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.any, *a, **k)

    def all(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.all, *a, **k)

    def argmax(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.argmax, *a, **k)

    def argmin(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.argmin, *a, **k)

    def cumsum(self, *a: Any, **k: Any) -> Any:
        return self._reduce(np.cumsum, *a, **k)

    def sort(self, *a: Any, **k: Any) -> Any:
        raise refusal("sorting", self.label)

    def tolist(self) -> Any:
        raise refusal("tolist()", self.label)

    def item(self, *a: Any) -> Any:
        raise refusal("item()", self.label)

    def __getattr__(self, name: str) -> Any:
        # an ndarray attribute a selection does not have: the refusal, with the user's line
        if not name.startswith("_") and hasattr(np.ndarray, name):
            raise refusal(f"ndarray.{name}", self.label)
        raise AttributeError(f"'Selection' object has no attribute {name!r}")

    # --- operators (NumPy's ufuncs, through __array_ufunc__) --------------------------------
    def _inplace(self, ufunc: np.ufunc, other: Any) -> Selection:
        from .masked_calls import inplace

        inplace(self, ufunc, other)
        return self


def same_value(a: Node, b: Node, depth: int = 12) -> bool:
    """Whether nodes `a` and `b` compute the same value: the same node, or the same op with
    the same attributes on inputs that compute the same values (constants by value)."""
    if a is b:
        return True
    if (depth == 0 or a.op != b.op or a.type != b.type or a.op == "input"
            or len(a.inputs) != len(b.inputs) or freeze(a.attrs) != freeze(b.attrs)):
        return False
    return all(same_value(x, y, depth - 1) for x, y in zip(a.inputs, b.inputs))


def _binary(ufunc: np.ufunc) -> tuple[Any, Any, Any]:
    def op(self: Selection, other: Any) -> Any:
        return ufunc(self, other)

    def rop(self: Selection, other: Any) -> Any:
        return ufunc(other, self)

    def iop(self: Selection, other: Any) -> Any:
        return self._inplace(ufunc, other)

    return op, rop, iop


for _name, _uf in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                   ("mod", np.remainder), ("pow", np.power), ("and", np.bitwise_and),
                   ("or", np.bitwise_or), ("xor", np.bitwise_xor), ("lshift", np.left_shift),
                   ("rshift", np.right_shift)):
    _op, _rop, _iop = _binary(_uf)
    setattr(Selection, f"__{_name}__", _op)
    setattr(Selection, f"__r{_name}__", _rop)
    setattr(Selection, f"__i{_name}__", _iop)
for _name, _uf in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)):
    setattr(Selection, f"__{_name}__", _binary(_uf)[0])
Selection.__matmul__, Selection.__rmatmul__, _ = _binary(np.matmul)  # type: ignore[assignment]
for _name, _uf in (("neg", np.negative), ("pos", np.positive), ("abs", np.absolute),
                   ("invert", np.invert)):
    setattr(Selection, f"__{_name}__", (lambda u: lambda self: u(self))(_uf))
Selection.__hash__ = None  # type: ignore[assignment]  # (as ndarray: __eq__ is element-wise)


def _is_int(e: Any) -> bool:
    return isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_))


def _simple_index(entries: tuple) -> bool:
    """One traced boolean array; the other entries slices, an Ellipsis, or integers next to
    it (NumPy's adjacent advanced indices: the selection's axis where they stand)."""
    masks = [e for e in entries if isinstance(e, T.Tracer) and e.dtype == np.bool_]
    if len(masks) != 1 or not all(e is Ellipsis or isinstance(e, slice) or e is masks[0]
                                  or _is_int(e) for e in entries):
        return False
    advanced = [i for i, e in enumerate(entries) if e is masks[0] or _is_int(e)]
    return advanced == list(range(advanced[0], advanced[-1] + 1))


def select(t: T.Tracer, index: Any, sanitize: bool = True) -> Selection:
    """t[index] for an index holding a traced boolean array (slices, an Ellipsis and
    integers next to it beside it): the Selection; UnsupportedError for other mixes (index
    arrays, None, integers a slice away).
    `sanitize=False`: the unselected values stay t's (the region a write replaces)."""
    from .views import advanced_index_error, basic_index

    entries = index if isinstance(index, tuple) else (index,)
    if not _simple_index(entries):
        raise advanced_index_error(next(e for e in entries if isinstance(e, T.Tracer)
                                        and e.dtype == np.bool_))
    k = next(i for i, e in enumerate(entries) if isinstance(e, T.Tracer))
    mask: T.Tracer = entries[k]
    # (slices keep their axes in the view, integers drop theirs)
    lead = mask_axes(t.shape, entries)[k] - sum(1 for e in entries[:k] if _is_int(e))
    if mask.ndim == 0:  # x[flag]: a new axis of length 1 or 0
        values = basic_index(t, entries[:k] + (None,) + entries[k + 1:])
        mask = np.reshape(mask, (1,))
    else:
        values = basic_index(t, entries[:k] + (slice(None),) * mask.ndim + entries[k + 1:])
    snapshot = T.Tracer(values.node)  # (a copy in NumPy: later writes into t do not reach it)
    sel = Selection(snapshot, mask, snapshot.ndim - lead - mask.ndim)
    if not sanitize:
        return sel
    # The unselected elements are never read; made a harmless value (0.5, 1, True) they keep
    # what they held (a NaN target left out, an inf) out of gradients: d/dp of
    # ((p - y)[valid] ** 2).mean() is 0 where y is NaN and not valid, not 0 * NaN
    fill = {"f": 0.5, "c": 0.5, "b": True}.get(snapshot.dtype.kind, 1)
    sel.values = np.where(sel.where(), snapshot, np.asarray(fill, snapshot.dtype))
    return sel


_SCALARS = (bool, int, float, complex, np.generic)


def collapsed(s: Selection) -> Selection:
    """`s` with its mask's dims merged into one (values pre + (M,) + post, M = mask.size):
    then the values' axes are the selection's own, k standing where M is."""
    if s.mask.ndim == 1:
        return s
    vs, lead = s.values.shape, s.lead
    m = s.mask.size
    values = np.reshape(s.values, vs[:lead] + (m,) + vs[lead + s.mask.ndim:])
    return Selection(values, np.reshape(s.mask, (m,)), s.post, s.loc, s.label)


def uncollapsed(s: Selection, values: T.Tracer, post: int) -> Selection:
    """The selection by `s`'s own mask of `values` computed on collapsed(s) (its mask's
    dims merged into one) with `post` axes after them."""
    if s.mask.ndim == 1:
        return s.with_values(values, post)
    vs, lead = values.shape, values.ndim - post - 1
    return s.with_values(np.reshape(values, vs[:lead] + s.mask.shape + vs[lead + 1:]), post)


def lift(o: Any, s: Selection) -> Any:
    """Operand `o` (not a selection) broadcastable against `s`'s values as it is against
    NumPy's x[mask]: its axis facing k (if it has one) must be 1."""
    if isinstance(o, _SCALARS) or o is None:
        return o
    shape = o.shape if isinstance(o, (T.Tracer, np.ndarray)) else np.shape(o)
    if len(shape) <= s.post:
        return o
    i = len(shape) - s.post - 1
    if shape[i] != 1:
        raise refusal(f"combining with an array of shape {tuple(shape)} (its axis {i} would "
                       "have to match the number of selected elements)")
    new = tuple(shape[:i]) + (1,) * s.mask.ndim + tuple(shape[i + 1:])
    return np.reshape(o if isinstance(o, T.Tracer) else np.asarray(o), new)


def align(args: Sequence[Any]) -> tuple[list[Any], Selection]:
    """The operands as the values' shapes, and the first selection among them."""
    sels = [a for a in args if isinstance(a, Selection)]
    first = sels[0]
    for s in sels[1:]:
        if not first.same_mask(s):
            raise refusal("combining selections made with different masks (or along "
                           "different axes)")
    return [a.values if isinstance(a, Selection) else lift(a, first) for a in args], first


def wrap(result: Any, s: Selection) -> Any:
    if isinstance(result, tuple):
        return tuple(wrap(r, s) for r in result)
    if isinstance(result, T.Tracer) and result.ndim >= s.mask.ndim + s.post:
        return s.with_values(result)
    return result
