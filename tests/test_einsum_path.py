"""np.einsum with any number of operands (NumPy's einsum_path order) and two-operand products
over several contracted or free indices, against NumPy over random subscripts, sizes
(zero-size and size-1 broadcast included), layouts and dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import assert_same, assert_unmodified, examples, on_cuda, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit

LETTERS = "ijklm"


@st.composite
def problems(draw: Any) -> tuple[str, list[np.ndarray], Any]:
    sizes = {c: draw(st.sampled_from([0, 1, 2, 3])) if c == "m" else
             draw(st.sampled_from([1, 2, 3, 4])) for c in LETTERS}
    nops = draw(st.integers(2, 4))
    ins = []
    for _ in range(nops):
        idx = draw(st.lists(st.sampled_from(LETTERS), min_size=1, max_size=3, unique=True))
        ins.append("".join(idx))
    used = sorted(set("".join(ins)))
    out = "".join(draw(st.permutations(draw(st.lists(st.sampled_from(used), unique=True,
                                                     max_size=3)))))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64]))
    layout = draw(st.sampled_from(["c", "reversed", "transposed"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 31)))
    ops = []
    for idx in ins:
        shape = tuple(sizes[c] for c in idx)
        x = (rng.standard_normal(shape) * 3).astype(dtype)
        if layout == "reversed":
            x = np.ascontiguousarray(x[::-1])[::-1]
        elif layout == "transposed":
            x = np.ascontiguousarray(x.T).T
        ops.append(x)
    optimize = draw(st.sampled_from([False, True, "greedy", "optimal"]))
    return ",".join(ins) + "->" + out, ops, optimize


def _fn(spec: str, n: int, optimize: Any) -> Any:
    return [lambda a, b: np.einsum(spec, a, b, optimize=optimize),
            lambda a, b, c: np.einsum(spec, a, b, c, optimize=optimize),
            lambda a, b, c, d: np.einsum(spec, a, b, c, d, optimize=optimize)][n - 2]


@settings(max_examples=examples(40))
@given(problems())
def test_einsum_any_operands(problem: tuple) -> None:
    spec, ops, optimize = problem
    f = _fn(spec, len(ops), optimize)
    snap = snapshot(ops)
    want = np.einsum(spec, *ops)  # NumPy's direct sum: the same values up to rounding
    tol = {"rtol": 1e-4, "atol": 1e-3} if want.dtype == np.float32 else {"rtol": 1e-9,
                                                                         "atol": 1e-9}
    got = fusejit.jit(f)(*ops)
    assert type(got) is type(want)
    # Another summation order may give -0.0 where NumPy's gives 0.0: x + 0 equates them.
    assert_same(got + want.dtype.type(0), want + want.dtype.type(0), **tol)
    assert_unmodified(snap)


@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl", [(2, 3), (3, 4), (4, 5)]),
    ("ijk,ij,jk->kji", [(2, 3, 4), (2, 3), (3, 4)]),
    ("ij,jk,kl,ijm->lm", [(2, 3), (3, 4), (4, 5), (2, 3, 2)]),
    ("ijk,jkl->il", [(2, 3, 4), (3, 4, 5)]),
    ("bij,bjk->bik", [(2, 0, 4), (2, 4, 5)]),
    ("ij,jk,kl->", [(2, 3), (3, 1), (4, 5)]),
])
def test_einsum_paths_named(spec: str, shapes: list) -> None:
    rng = np.random.default_rng(3)
    ops = [rng.standard_normal(s) for s in shapes]
    f = _fn(spec, len(ops), False)
    assert_same(fusejit.jit(f)(*ops), f(*ops), rtol=1e-9, atol=1e-12)


def test_einsum_bad_operands_raise_numpys_error() -> None:
    a, b = np.ones((2, 3)), np.ones((4, 5))
    for f in (lambda a, b: np.einsum("ij,jk,kl->il", a, a, b),
              lambda a, b: np.einsum("ij,jk,k->i", a, a.T, b)):
        with pytest.raises(ValueError):
            f(a, b)
        with pytest.raises(ValueError):
            fusejit.jit(f)(a, b)


@st.composite
def diagonal_problems(draw: Any) -> tuple[str, list[np.ndarray]]:
    """Subscripts with repeated indices inside an operand (diagonals) and, half the time,
    '...' over broadcast batch dims (suffixes of one batch shape, some dims 1)."""
    sizes = {c: draw(st.sampled_from([0, 1, 2, 3])) if c == "m" else
             draw(st.sampled_from([1, 2, 3])) for c in LETTERS}
    nops = draw(st.integers(1, 3))
    ellipsis = draw(st.booleans())
    batch = tuple(draw(st.lists(st.sampled_from([1, 2, 3]), max_size=2)))
    ins, shapes = [], []
    for _ in range(nops):
        idx = "".join(draw(st.lists(st.sampled_from(LETTERS), min_size=1, max_size=4)))
        shape = [sizes[c] for c in idx]
        if ellipsis:
            b = list(batch[draw(st.integers(0, len(batch))):])
            b = [1 if draw(st.integers(0, 3)) == 0 else n for n in b]
            at = draw(st.integers(0, len(idx)))
            idx, shape = idx[:at] + "..." + idx[at:], shape[:at] + b + shape[at:]
        ins.append(idx)
        shapes.append(tuple(shape))
    used = sorted(set("".join(ins).replace(".", "")))
    if draw(st.booleans()):
        out = "".join(draw(st.permutations(draw(st.lists(st.sampled_from(used), unique=True,
                                                         max_size=3)))))
        if ellipsis:
            at = draw(st.integers(0, len(out)))
            out = out[:at] + "..." + out[at:]
        spec = ",".join(ins) + "->" + out
    else:
        spec = ",".join(ins)
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 31)))
    dtype = draw(st.sampled_from([np.float64, np.int64]
                                 + ([] if on_cuda() else [np.complex128])))
    ops = [(rng.standard_normal(s) * 3).astype(dtype) for s in shapes]
    return spec, ops


@settings(max_examples=examples(40))
@given(diagonal_problems())
def test_einsum_diagonals_and_ellipsis_against_numpy(problem: tuple) -> None:
    spec, ops = problem
    f = [lambda a: np.einsum(spec, a), lambda a, b: np.einsum(spec, a, b),
         lambda a, b, c: np.einsum(spec, a, b, c)][len(ops) - 1]
    try:
        want = f(*ops)
    except ValueError:
        with pytest.raises(ValueError):
            fusejit.jit(f)(*ops)
        return
    snap = snapshot(ops)
    got = fusejit.jit(f)(*ops)
    assert_unmodified(snap)
    # the sign of a zero from an empty or cancelling sum depends on the contraction order
    assert_same(got + got.dtype.type(0), want + want.dtype.type(0), rtol=1e-9, atol=1e-9)
