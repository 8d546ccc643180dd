"""Views that change the index space: reshape/ravel/flatten and concatenate/stack (issue 3).

Property tests draw shapes (zero-size included), layouts (contiguous, transposed, strided,
reversed) and targets, and compare `jit(f)` with NumPy; unit tests cover errors, kernel
counts and in-place semantics through reshaped views.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, examples, run_both
from hypothesis import given, note, settings
from hypothesis import strategies as st

import fusejit
from fusejit.errors import UnsupportedError
from fusejit.lowering.memplan import check_plan

RNG = np.random.default_rng(0)


def fixed(n: int, g):
    """`g(*arrays)` as a function of exactly n positional parameters (jit needs them)."""
    return {1: lambda a: g(a), 2: lambda a, b: g(a, b), 3: lambda a, b, c: g(a, b, c)}[n]


def layout(draw, shape: tuple[int, ...], dtype=np.float64) -> np.ndarray:
    """An array of `shape` with a drawn memory layout."""
    kind = draw(st.sampled_from(["c", "t", "step", "rev"]))
    if kind == "t" and len(shape) >= 2:
        base = RNG.standard_normal(shape[::-1]).astype(dtype)
        return base.T
    if kind == "step" and shape:
        base = RNG.standard_normal(shape[:-1] + (2 * shape[-1],)).astype(dtype)
        return base[..., ::2]
    if kind == "rev" and shape:
        return RNG.standard_normal(shape).astype(dtype)[::-1]
    return RNG.standard_normal(shape).astype(dtype)


@st.composite
def reshape_case(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=3)))
    if 0 in shape and draw(st.booleans()):
        shape = tuple(max(n, 1) for n in shape)
    x = layout(draw, shape)
    n = x.size
    if n == 0:
        new = list(draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)))
        new[draw(st.integers(0, len(new) - 1))] = 0
    else:
        primes, m, p = [], n, 2
        while m > 1:
            while m % p == 0:
                primes.append(p)
                m //= p
            p += 1
        k = draw(st.integers(1, 4))
        new = [1] * k
        for q in primes:
            new[draw(st.integers(0, k - 1))] *= q
    if draw(st.booleans()) and 0 not in new:
        new[draw(st.integers(0, len(new) - 1))] = -1
    return x, tuple(new)


@settings(max_examples=examples(60), deadline=None)
@given(reshape_case(), st.sampled_from(["method", "function", "then_op", "of_expr"]))
def test_reshape_property(case, form) -> None:
    x, new = case
    note(f"x {x.shape} strides {x.strides} -> {new}")
    f = {
        "method": lambda x: x.reshape(new),
        "function": lambda x: np.reshape(x, new),
        "then_op": lambda x: x.reshape(new) * 2 + 1,
        "of_expr": lambda x: np.sqrt(np.abs(x) + 1).reshape(new),
    }[form]
    run_both(f, x)


@settings(max_examples=examples(30), deadline=None)
@given(reshape_case())
def test_ravel_and_flatten_property(case) -> None:
    x, _ = case
    run_both(lambda x: (np.ravel(x), x.flatten(), x.ravel() + 1), x)


def test_reshape_forms_and_errors() -> None:
    x = RNG.standard_normal((4, 6))
    run_both(lambda x: x.reshape(2, 2, 6), x)
    run_both(lambda x: x.reshape((3, -1)), x)
    run_both(lambda x: x.reshape(-1, 2, 3).transpose(1, 0, 2) - x.reshape(8, 3)[0], x)
    run_both(lambda x: x.T.reshape(3, 8) @ np.ones((8, 2)), x)
    run_both(lambda x: np.sum((x * x).reshape(-1, 8), axis=1), x)
    run_both(lambda x: np.atleast_1d(x[0, 0]), x)
    run_both(lambda x: np.atleast_2d(x[0]), x)
    run_both(lambda x: np.atleast_3d(x), x)
    run_both(lambda x: np.atleast_3d(x[0]), x)
    run_both(lambda x: np.float64(2.0) * np.ones(1) + x[0, 0].reshape(1), x)
    with pytest.raises(ValueError, match=r"cannot reshape array of size 24.*test_views.py:\d+"):
        fusejit.jit(lambda x: x.reshape(5, 5))(x)
    with pytest.raises(ValueError):
        fusejit.jit(lambda x: x.reshape(-1, -1))(x)
    run_both(lambda x: x.reshape(6, 4, order="F"), x)
    with pytest.raises(UnsupportedError, match="order='A'.*test_views.py"):
        fusejit.jit(lambda x: x.reshape(6, 4, order="A"))(x)


def test_reshape_of_contiguous_input_reads_in_place() -> None:
    """A merging reshape of a contiguous argument is one kernel (no copy); of a transposed
    one, NumPy copies and so does fusejit (a copy kernel, then the consumer)."""
    x = RNG.standard_normal((4, 6))
    c = fusejit.jit(lambda x: x.reshape(-1) * 2).lower_for(x)
    assert len(c.program.kernels) == 1
    check_plan(c.program)
    c = fusejit.jit(lambda x: x.reshape(-1) * 2).lower_for(np.asfortranarray(x))
    assert len(c.program.kernels) == 2


def test_reshape_inplace_semantics() -> None:
    def split_write(x):
        y = x.reshape(2, 2, 6)
        y[0, 1] = 7.0
        return y * 1

    a, b = np.arange(24.0).reshape(4, 6), np.arange(24.0).reshape(4, 6)
    assert_same(fusejit.jit(split_write)(b), split_write(a))
    assert_same(b, a)  # written through the split view into the argument, as NumPy does

    def merged_write(x):
        y = x.reshape(-1)
        y[3] = 1.0
        return y

    with pytest.raises(UnsupportedError, match="merged axes.*test_views.py"):
        fusejit.jit(merged_write)(np.ones((4, 6)))

    def read_after_update(x):
        y = x.reshape(-1)
        x += 1
        return y + 0

    with pytest.raises(UnsupportedError, match="modified in place"):
        fusejit.jit(read_after_update)(np.ones((4, 6)))

    def update_after(x):
        x += 1
        return x.reshape(-1) * 2

    a, b = np.ones((4, 6)), np.ones((4, 6))
    assert_same(fusejit.jit(update_after)(b), update_after(a))
    assert_same(b, a)


@st.composite
def concat_case(draw):
    nd = draw(st.integers(1, 3))
    shape = [draw(st.integers(0, 3)) for _ in range(nd)]
    axis = draw(st.integers(-nd, nd - 1))
    dtypes = [np.float64, np.float32, np.int32, np.int64, np.bool_, np.uint8]
    pieces = []
    for _ in range(draw(st.integers(1, 3))):
        s = list(shape)
        s[axis] = draw(st.integers(0, 3))
        dt = draw(st.sampled_from(dtypes))
        pieces.append(layout(draw, tuple(s)).astype(dt) if dt != np.bool_ else
                      layout(draw, tuple(s)) > 0)
    return pieces, axis


@settings(max_examples=examples(60), deadline=None)
@given(concat_case(), st.sampled_from(["plain", "exprs", "none", "consumed"]))
def test_concatenate_property(case, form) -> None:
    pieces, axis = case
    note(f"{[(p.shape, p.dtype.name, p.strides) for p in pieces]} axis={axis}")
    f = {
        "plain": lambda *ps: np.concatenate(ps, axis=axis),
        "exprs": lambda *ps: np.concatenate([p * 2 for p in ps], axis=axis),
        "none": lambda *ps: np.concatenate(ps, axis=None),
        "consumed": lambda *ps: np.concatenate(ps, axis=axis).sum(axis=0) + 1,
    }[form]
    run_both(fixed(len(pieces), f), *pieces)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=2), st.integers(1, 3), st.data())
def test_stack_family_property(shape, n, data) -> None:
    xs = [layout(data.draw, tuple(shape)) for _ in range(n)]
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    fn = data.draw(st.sampled_from(["stack", "hstack", "vstack", "dstack", "column_stack"]))
    note(f"{fn} {[x.shape for x in xs]} axis={axis}")
    if fn == "stack":
        run_both(fixed(n, lambda *xs: np.stack(xs, axis=axis)), *xs)
    else:
        run_both(fixed(n, lambda *xs: getattr(np, fn)(xs)), *xs)


def test_concatenate_errors_and_kernels() -> None:
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((2, 4)).astype(np.float32)
    with pytest.raises(ValueError, match="along dimension 1.*test_views.py"):
        fusejit.jit(lambda a, b: np.concatenate([a, b.T]))(a, b)
    with pytest.raises(np.exceptions.AxisError):
        fusejit.jit(lambda a, b: np.concatenate([a, b], axis=2))(a, b)
    with pytest.raises(ValueError, match="same number of dimensions"):
        fusejit.jit(lambda a, b: np.concatenate([a, b[0]]))(a, b)
    with pytest.raises(ValueError, match="zero-dimensional"):
        fusejit.jit(lambda a, b: np.concatenate([a[0, 0], b[0, 0]]))(a, b)
    with pytest.raises(TypeError, match="same_kind"):
        fusejit.jit(lambda a, b: np.concatenate([a, b], dtype=np.int32))(a, b)
    with pytest.raises(ValueError, match="same shape"):
        fusejit.jit(lambda a, b: np.stack([a, a[:2]]))(a, b)
    run_both(lambda a, b: np.concatenate([a, b], dtype=np.float32), a, b)
    run_both(lambda a, b: np.concatenate((a, b), casting="unsafe", dtype=np.int16), a, b)
    run_both(lambda a: np.concatenate(a), a)  # an array is a sequence of its rows
    # One region kernel per piece, each computing its piece inline; no fill kernel.
    c = fusejit.jit(lambda a, b: np.concatenate([a * 2, np.exp(b)])).lower_for(a, b)
    assert len(c.program.kernels) == 2
    assert {k.domain for k in c.program.kernels} == {(12,), (8,)}
    check_plan(c.program)


def test_concatenate_into_argument_with_overlap() -> None:
    """np.roll-like rotation written back into its own source: the pieces read the
    argument, so it is computed into a temporary first (lowering.update hazards)."""
    def rot(w):
        np.copyto(w, np.concatenate([w[1:], w[:1]]))
        return w.sum()

    w1 = RNG.standard_normal((5, 3))
    w2 = w1.copy()
    assert_same(fusejit.jit(rot)(w2), rot(w1))
    assert_same(w2, w1)
