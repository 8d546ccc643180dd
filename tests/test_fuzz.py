"""A seeded random-graph fuzzer: compiled programs vs NumPy vs the reference interpreter.

Each seed builds (deterministically) a random program: several inputs of mixed dtypes and
layouts, shared subexpressions (a DAG, traced once or recomputed so CSE has work to do),
constant arrays captured from the enclosing scope, views of inputs and of intermediates
(transposes, steps, negative steps, integer indexing, np.split, broadcast_to, gathers by
constant index arrays), and one to four outputs of different broadcast shapes returned as a
value, tuple, list or dict. The structural
programs add reductions (axis, negative axis, keepdims), reshapes (splitting and merging),
concatenate/stack, matmul, scans and scatters (`x[i] = v`, `x[i] += v`, np.add.at,
`x[np.arange(n), i] -= v`; constant or computed indices) and np.linalg (solve, inv, det,
slogdet, cholesky, eigvalsh, lstsq on well-conditioned float matrices, compared at
exprgen.LINALG_RTOL) anywhere in the DAG. The compiled
result must equal NumPy's, and `interpret(trace(f))` and `interpret(optimise(trace(f)))` must
equal NumPy's too (see exprgen.check_program). Set FUSEJIT_FUZZ_SEEDS=N to run more seeds.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import on_cuda
from exprgen import (
    COMPLEX_DTYPES,
    DTYPES,
    Generator,
    SeededChooser,
    check_program,
    describe,
    sub_shape,
)

from fusejit.errors import UnsupportedError

N_SEEDS = int(os.environ.get("FUSEJIT_FUZZ_SEEDS", "60"))
N_STRUCTURAL = int(os.environ.get("FUSEJIT_FUZZ_STRUCTURAL_SEEDS", "40"))
N_COMPLEX = int(os.environ.get("FUSEJIT_FUZZ_COMPLEX_SEEDS", "40"))
DIMS = [1, 2, 3, 5, 8]


def random_program(seed: int, structural: bool = False, complex_ok: bool = False):
    ch = SeededChooser(seed + (1 << 20 if structural else 0) + (1 << 21 if complex_ok else 0))
    # an ordered pool (not a set): a seed draws the same program whatever PYTHONHASHSEED is
    pool = list(dict.fromkeys(ch.choice(DTYPES) for _ in range(ch.integer(1, 3))))
    if complex_ok:  # one or both complex dtypes beside the real ones
        pool = list(dict.fromkeys([ch.choice(COMPLEX_DTYPES), *pool, ch.choice(COMPLEX_DTYPES)]))
    ndim = ch.integer(0, 3)
    base = tuple(ch.choice(DIMS) for _ in range(ndim))
    if base and ch.chance(0.08):
        base = base[:-1] + (0,)
    gen = Generator(ch, pool, max_depth=4, array_literals=True, share=0.3,
                    structural=structural, complex_ok=complex_ok)
    n_out = ch.integer(1, 4)
    outs = [gen.expr(base if i == 0 else sub_shape(ch, base)) for i in range(n_out)]
    form = ch.choice(["single", "tuple", "list", "dict"]) if n_out == 1 else ch.choice(
        ["tuple", "list", "dict"])
    if form == "single":
        result = outs[0]
    elif form == "tuple":
        result = tuple(outs)
    elif form == "list":
        result = list(outs)
    else:
        result = {f"out{i}": e for i, e in enumerate(outs)}
    return result, gen.args, ch.chance(0.7)


@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_fuzz(seed: int) -> None:
    result, specs, share = random_program(seed)
    try:
        check_program(result, specs, seed, interpreter=True, share=share)
    except AssertionError as e:
        raise AssertionError(f"seed {seed}: {describe(result, specs)}\n{e}") from e


@pytest.mark.parametrize("seed", range(N_STRUCTURAL))
def test_fuzz_structural(seed: int) -> None:
    """Programs that also reduce (axis, keepdims), reshape, concatenate/stack and multiply
    matrices, mixed with the elementwise ops and views above."""
    result, specs, share = random_program(seed, structural=True)
    try:
        check_program(result, specs, seed, interpreter=True, share=share)
    except UnsupportedError as e:
        if on_cuda() and "LAPACK" in str(e):  # the CUDA backend refuses them
            pytest.skip(f"structural seed {seed}: {e}")
        raise
    except AssertionError as e:
        raise AssertionError(f"structural seed {seed}: {describe(result, specs)}\n{e}") from e


@pytest.mark.parametrize("seed", range(N_COMPLEX))
def test_fuzz_complex(seed: int) -> None:
    """Programs over complex64/complex128 beside real dtypes (ops fusejit computes on complex
    values; exprgen.complex_refused steers around the ones it refuses), half of them
    structural (reductions, reshapes, concatenation)."""
    result, specs, share = random_program(seed, structural=seed % 2 == 1, complex_ok=True)
    try:
        check_program(result, specs, seed, interpreter=True, share=share)
    except AssertionError as e:
        raise AssertionError(f"complex seed {seed}: {describe(result, specs)}\n{e}") from e


def test_fuzz_complex_programs_use_complex() -> None:
    """The complex fuzz programs do compute on complex values (not vacuous)."""
    from exprgen import leaves

    with_complex = 0
    for seed in range(N_COMPLEX):
        result, _, _ = random_program(seed, structural=seed % 2 == 1, complex_ok=True)
        stack, seen, found = list(leaves(result)), set(), False
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            found |= e.kind != "arg" and e.dtype is not None and e.dtype.kind == "c"
            stack.extend(e.children)
        with_complex += found
    assert with_complex >= N_COMPLEX // 2, with_complex


def test_fuzz_programs_draw_float64_and_complex128_ufuncs() -> None:
    """Ufunc and clip nodes of every float and complex dtype are drawn (np.float64 and
    np.complex128 probes subclass Python's float and complex; the generator once took them
    for Python-scalar arithmetic and never drew a float64 or complex128 ufunc node)."""
    from exprgen import leaves

    seen: set[str] = set()
    for seed in range(N_COMPLEX):
        result, _, _ = random_program(seed, structural=seed % 2 == 1, complex_ok=True)
        stack, done = list(leaves(result)), set()
        while stack:
            e = stack.pop()
            if id(e) not in done:
                done.add(id(e))
                if e.kind in ("ufunc", "clip") and e.dtype is not None:
                    seen.add(e.dtype.name)
                stack.extend(e.children)
    assert {"float32", "float64", "complex64", "complex128"} <= seen, seen


def test_fuzz_structural_programs_are_varied() -> None:
    """The structural programs do contain every kind of structural node."""
    from exprgen import leaves

    kinds: dict[str, int] = {}
    for seed in range(max(N_STRUCTURAL, 80)):  # building is cheap: at least 80 seeds
        result, _, _ = random_program(seed, structural=True)
        stack, seen = list(leaves(result)), set()
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            key = "reshape" if e.kind == "view" and e.param[0] == "reshape" else e.kind
            kinds[key] = kinds.get(key, 0) + 1
            stack.extend(e.children)
    for kind in ("reduce", "reshape", "concat", "stack", "matmul", "scan", "scatter"):
        assert kinds.get(kind, 0) >= 3, (kind, kinds)


def test_fuzz_structural_programs_use_linalg() -> None:
    """Some structural programs do contain np.linalg nodes, of several functions (not
    vacuous); the complex programs draw none (exprgen.complex_refused)."""
    from exprgen import _nodes

    fns: dict[str, int] = {}
    with_linalg = 0
    for seed in range(120):  # building programs is cheap: more seeds than are run
        result, _, _ = random_program(seed, structural=True)
        found = [e.param[0] for e in _nodes(result) if e.kind == "linalg"]
        with_linalg += bool(found)
        for fn in found:
            fns[fn] = fns.get(fn, 0) + 1
    assert with_linalg >= 8 and len(fns) >= 5, (with_linalg, fns)


def test_fuzz_programs_are_varied() -> None:
    """The fuzzer's programs do have DAG sharing, several outputs and views (not vacuous)."""
    from exprgen import leaves

    shared = multi = views = 0
    for seed in range(N_SEEDS):
        result, _, _ = random_program(seed)
        outs = leaves(result)
        multi += len(outs) > 1
        seen: set[int] = set()
        stack = list(outs)
        while stack:
            e = stack.pop()
            if id(e) in seen:
                shared += 1
                continue
            seen.add(id(e))
            views += e.kind == "view"
            stack.extend(e.children)
    assert shared >= N_SEEDS // 8 and multi >= N_SEEDS // 3 and views >= N_SEEDS // 8
    assert np.iinfo(np.int64).max  # numpy imported for the generator's dtypes
