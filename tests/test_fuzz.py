"""A seeded random-graph fuzzer: compiled programs vs NumPy vs the reference interpreter.

Each seed builds (deterministically) a random program: several inputs of mixed dtypes and
layouts, shared subexpressions (a DAG, traced once or recomputed so CSE has work to do),
constant arrays captured from the enclosing scope, views of inputs and of intermediates
(transposes, steps, negative steps, integer indexing, np.split, broadcast_to), and one to four
outputs of different broadcast shapes returned as a value, tuple, list or dict. The compiled
result must equal NumPy's, and `interpret(trace(f))` and `interpret(optimise(trace(f)))` must
equal NumPy's too (see exprgen.check_program). Set FUSEJIT_FUZZ_SEEDS=N to run more seeds.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from exprgen import DTYPES, Generator, SeededChooser, check_program, describe, sub_shape

N_SEEDS = int(os.environ.get("FUSEJIT_FUZZ_SEEDS", "60"))
DIMS = [1, 2, 3, 5, 8]


def random_program(seed: int):
    ch = SeededChooser(seed)
    pool = list({ch.choice(DTYPES) for _ in range(ch.integer(1, 3))})
    ndim = ch.integer(0, 3)
    base = tuple(ch.choice(DIMS) for _ in range(ndim))
    if base and ch.chance(0.08):
        base = base[:-1] + (0,)
    gen = Generator(ch, pool, max_depth=4, array_literals=True, share=0.3)
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
