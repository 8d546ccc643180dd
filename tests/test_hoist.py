"""codegen/c.py: row_invariant. Statements whose value is the same along a row (stride-0
loads, constants, what is computed from them, their checks, a gather's row pointer) run once
per row before the point loop; the results are NumPy's."""

from __future__ import annotations

import numpy as np
from conftest import assert_same

import fusejit
from fusejit.codegen.c import COptions, render, row_invariant
from fusejit.lowering.loop_ir import Check, Compute, Const, Load, Store

RNG = np.random.default_rng(2)


def _kernel_text(f, *args) -> str:
    program = fusejit.jit(f).lower_for(*args).program
    text = render(program, COptions())
    return text[text.index("static int fj_k0"):]


def test_row_invariant_statements() -> None:
    x, b = RNG.standard_normal((8, 32)), RNG.standard_normal((8, 1))
    f = lambda x, b: x * (b * 3.0) + 1.0  # b * 3 is cheap enough to recompute per point
    (k,) = fusejit.jit(f).lower_for(x, b).program.kernels
    hoisted, _ = row_invariant(k.body)
    kinds = {type(s) for s in k.body if id(s) in hoisted}
    assert kinds == {Load, Compute, Const}
    assert not any(id(s) in hoisted for s in k.body
                   if isinstance(s, Store) or (isinstance(s, Load) and s.access.strides[-1]))
    text = _kernel_text(f, x, b)
    loop = text[text.index("#pragma omp simd"):]
    assert "0x1.8000000000000p+1" in text and "0x1.8000000000000p+1" not in loop  # 3.0
    assert_same(fusejit.jit(f)(x, b), f(x, b))


def test_gather_rows_are_checked_once_and_read_through_one_pointer() -> None:
    table, tokens = RNG.standard_normal((50, 16)), RNG.integers(-50, 50, (3, 5))
    f = lambda t, i: t[i] * 2.0
    (k,) = fusejit.jit(f).lower_for(table, tokens).program.kernels
    hoisted, _ = row_invariant(k.body)
    assert all(id(s) in hoisted for s in k.body if isinstance(s, Check))
    text = _kernel_text(f, table, tokens)
    loop = text[text.index("#pragma omp simd"):]
    assert "fj_ix_bad" not in loop and "fj_ix_raise" not in loop and "fj_gv" in loop
    assert_same(fusejit.jit(f)(table, tokens), f(table, tokens))
