"""complex64 / complex128 on the CUDA backend: the device complex type and the rewriting of
the shared expressions onto it.

The shared expression renderer (codegen/cexpr.py, frontend/ops_complex.py) writes complex
values in C99's spelling (`double _Complex`, `__real__ (z)`, `__builtin_complex(r, i)`), which
nvcc's device code does not have. A program that holds complex values gets
codegen/include/fj_complex_cuda*.h (fj_c64 / fj_c128, two parts aligned as NumPy stores them,
and the helpers of fj_complex.h as device functions) after the prelude, and its kernels'
text rewritten onto it (`to_device`). Sorts of complex values are comparison sorts
(codegen/cuda_sort_complex.py).
"""

from __future__ import annotations

import functools
import os
import re

import numpy as np

from ..lowering.loop_ir import Kernel, Program

_HERE = os.path.dirname(os.path.abspath(__file__))

_SPELLINGS = [(re.compile(r"\bfloat _Complex\b"), "fj_c64"),
              (re.compile(r"\bdouble _Complex\b"), "fj_c128"),
              (re.compile(r"__real__\s*\("), "fj_re("),
              (re.compile(r"__imag__\s*\("), "fj_im("),
              (re.compile(r"__builtin_complex\("), "fj_cbuild(")]


@functools.lru_cache(maxsize=1)
def header() -> str:
    """The device complex type and its functions: fj_complex_cuda.h, then the inverse
    functions (fj_complex_cuda_arc.h), then fj_complex.h's names for them all."""
    text = ""
    for name in ("fj_complex_cuda.h", "fj_complex_cuda_arc.h", "fj_complex_cuda_names.h"):
        with open(os.path.join(_HERE, "include", name), encoding="utf-8") as f:
            text += f.read() + "\n"
    return text


def to_device(text: str) -> str:
    """Kernel text with C99's complex spellings replaced by fj_complex_cuda.h's."""
    for pattern, repl in _SPELLINGS:
        text = pattern.sub(repl, text)
    assert "__real__" not in text and "__imag__" not in text and "_Complex" not in text
    return text


def has_complex(program: Program) -> bool:
    """Whether any buffer or kernel statement of `program` holds a complex value."""
    if any(b.dtype.kind == "c" for b in program.buffers):
        return True
    return any(_is_complex(s) for k in program.kernels for s in _stmts(k))


def _stmts(k: object) -> list:
    stmts = list(getattr(k, "body", None) or [])
    for phase in getattr(k, "phases", None) or []:
        stmts += phase
    epilogue = getattr(k, "epilogue", None)
    return stmts + (epilogue if isinstance(epilogue, list) else [])


def _is_complex(s: object) -> bool:
    dtypes = [getattr(s, "dtype", None), *getattr(s, "in_dtypes", ())]
    return any(d is not None and np.dtype(d).kind == "c" for d in dtypes)


def vector_ok(k: Kernel, program: Program) -> bool:
    """Whether elementwise kernel `k` may take the vector path: not with complex buffers
    (their elements are 8 or 16 bytes: one value per thread step)."""
    bufs = {s.access.buf for s in k.body if hasattr(s, "access")}
    return not any(program.buffers[b].dtype.kind == "c" for b in bufs)
