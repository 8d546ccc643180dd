"""Golden files of generated C: codegen is checked as text, with no compiler involved.

Each case is traced, optimised, lowered and planned, then rendered with a fixed
`COptions()` (so the text does not depend on this machine's toolchain or environment). The
inlined scalar-semantics prelude is not part of the golden: only the text from the line
`#define FJ_PAR_MIN` on is compared, with the source line numbers in kernel comments
normalised. Regenerate with `FUSEJIT_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`
and review the diff.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import numpy as np
import pytest

from fusejit.codegen.c import COptions, render
from fusejit.frontend.trace import trace
from fusejit.lowering.lower import contiguous_strides, lower
from fusejit.lowering.memplan import plan
from fusejit.lowering.pipeline import optimise

GOLDEN_DIR = Path(__file__).parent / "golden"
UPDATE = os.environ.get("FUSEJIT_UPDATE_GOLDEN") == "1"
MARKER = "#define FJ_PAR_MIN"


def mul_add(x, y):
    return x * y + 1


def broadcast_transpose(x, v):
    return x.T + v


def floor_divide(a, b):
    return a // b, a // 3


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def embedding_scale(table, tokens):
    return table[tokens] * 2.0


def sigmoid_tanh_gate(x, c):
    return np.tanh(c) / (1 + np.exp(-x))


CASES = {
    "dense_relu_f32": (dense_relu, [np.zeros((4, 8), np.float32), np.zeros((8, 3), np.float32),
                                    np.zeros(3, np.float32)]),
    "mul_add_f32": (mul_add, [np.zeros(1000, np.float32), np.zeros(1000, np.float32)]),
    "broadcast_transpose_f64": (broadcast_transpose, [np.zeros((3, 5)), np.zeros(3)]),
    "floor_divide_i32": (floor_divide, [np.zeros((4, 6), np.int32), np.ones(6, np.int32)]),
    "embedding_scale_f32": (embedding_scale, [np.zeros((50, 8), np.float32),
                                              np.zeros((3, 4), np.int64)]),
    # call staging with fj_vtile.h's tile functions (COptions(vtile=True), as on AVX-512)
    "gate_tiles_f32": (sigmoid_tanh_gate, [np.zeros((2, 100), np.float32),
                                           np.zeros(100, np.float32)]),
}
OPTIONS = {"gate_tiles_f32": COptions(vtile=True)}


def generated_c(fn, args, opts: COptions | None = None) -> str:
    """The C text of `fn` for `args` after the prelude, with line numbers normalised."""
    graph, _ = trace(fn, list(args))
    program = plan(lower(optimise(graph), [contiguous_strides(a.shape) for a in args]))
    source = render(program, opts or COptions())
    assert MARKER in source, "the prelude marker moved: update test_golden.MARKER"
    body = source[source.index(MARKER):]
    body = re.sub(r"(\.py):\d+", r"\1:N", body)
    return re.sub(r"nodes \[[0-9, ]*\]", "nodes [...]", body)  # ids are process-global


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_c(name: str) -> None:
    fn, args = CASES[name]
    text = generated_c(fn, args, OPTIONS.get(name))
    path = GOLDEN_DIR / f"{name}.c"
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing {path}: run with FUSEJIT_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            f"golden/{name}.c", "generated"))
        pytest.fail(f"generated C differs from golden/{name}.c "
                    f"(FUSEJIT_UPDATE_GOLDEN=1 regenerates it):\n{diff}")


def test_golden_render_is_deterministic() -> None:
    fn, args = CASES["broadcast_transpose_f64"]
    assert generated_c(fn, args) == generated_c(fn, args)


def test_golden_cases_compute_the_right_thing() -> None:
    """The golden programs, compiled, equal NumPy (so the goldens pin correct code)."""
    from conftest import assert_same

    from fusejit import jit

    rng = np.random.default_rng(3)
    for fn, args in CASES.values():
        real = [(rng.integers(-50, 50, a.shape) if a.dtype.kind == "i" else
                 rng.standard_normal(a.shape)).astype(a.dtype) for a in args]
        if fn is floor_divide:
            real[1][real[1] == 0] = 7
        assert_same(jit(fn)(*real), fn(*real))


def _guards(fn, args) -> set[str]:
    graph, _ = trace(fn, list(args))
    program = plan(lower(optimise(graph), [contiguous_strides(a.shape) for a in args]))
    source = render(program, COptions())
    guards = {g for g in ("FJ_VMATH_F32_H", "FJ_VTILE_H", "FJ_COMPLEX_H", "FJ_REDUCE_H",
                          "FJ_SCALAR_H") if f"#define {g}\n" in source}
    assert "#define FJ_VMATH_H\n" in source  # (always: plain libm calls vectorise)
    return guards | ({"FJ_SPECIAL_H"} if "double fj_sp_xlogy(" in source else set())


def test_prelude_holds_the_headers_the_program_uses() -> None:
    """codegen/c.py needed_parts: the optional headers are inlined only where used (what
    they left out would not compile: -Werror=implicit-function-declaration)."""
    import scipy.special

    from fusejit.codegen.c import needed_parts

    f32 = np.zeros(64, np.float32)
    assert _guards(mul_add, [f32, f32]) == {"FJ_SCALAR_H"}
    assert _guards(lambda x: np.exp(x) * 2, [f32]) == {"FJ_SCALAR_H", "FJ_VMATH_F32_H",
                                                       "FJ_VTILE_H"}
    assert _guards(lambda x: x.sum(axis=0), [np.zeros((64, 3))]) == {"FJ_SCALAR_H", "FJ_REDUCE_H"}
    assert _guards(lambda z: z * z, [np.zeros(8, np.complex128)]) == {"FJ_SCALAR_H",
                                                                      "FJ_COMPLEX_H"}
    assert "FJ_SPECIAL_H" in _guards(lambda x: scipy.special.erfcx(x), [np.zeros(8)])
    assert needed_parts("y = fj_c0 + fj_col;") == frozenset()  # plain names of a kernel
    assert needed_parts("fj_cexp_c64(v)") == {"complex"}
    assert needed_parts("fj_pw_push(&p, v)") == {"reduce"}
    assert needed_parts("fj_row_exp_f32(y, x, n)") == {"reduce", "vector"}
