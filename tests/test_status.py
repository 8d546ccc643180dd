"""The status table (errors.Status): every code compiled code returns, the macro the generated
headers define for it, and the exception it becomes, each code provoked for real.

Codes 1 (negative integer power) and 2 (gather index out of range) are provoked throughout
tests/test_errors.py and tests/test_gather.py; -3 (argument out of range) in
tests/test_export.py. Here: the table itself, the rendered defines, 64 (a BLAS kernel in a
library that was given no BLAS), 128 (no memory for an epilogue's scratch block), -1 (no
memory for an exported function's workspace) and -2 (a NULL workspace).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fusejit
from fusejit.errors import RuntimeFailure, Status, raise_status, status_error

HERE = os.path.dirname(os.path.abspath(__file__))


def test_codes_are_unique_and_flags_are_bits() -> None:
    codes = [s.code for s in Status]
    assert len(set(codes)) == len(codes)
    for s in Status.flags():
        assert s.code > 0 and s.code & (s.code - 1) == 0, s
    assert [s.code for s in Status.interface()] == [-1, -2, -3]
    assert {1, 2, 4, 8, 16, 64, 128, 256, 512, 1024, 2048} <= {s.code for s in Status.flags()}


@pytest.mark.parametrize("status", list(Status))
def test_each_code_becomes_its_exception(status: Status) -> None:
    with pytest.raises(status.exc) as got:
        raise_status(status.code)
    assert type(got.value) is status.exc and str(got.value) == status.message


def test_several_flags_raise_the_lowest_and_unknown_codes_fail_generically() -> None:
    assert type(status_error(2 | 64)) is IndexError
    assert type(status_error(64 | 128)) is RuntimeFailure
    for unknown in (1 << 30, -9):  # (the one positive code no status has)
        err = status_error(unknown)
        assert type(err) is RuntimeFailure and str(unknown) in str(err)


def test_headers_define_every_flag_from_the_table() -> None:
    from fusejit.codegen.c import COptions, render
    from fusejit.codegen.cuda import render_cuda
    from fusejit.frontend.trace import trace
    from fusejit.lowering.lower import contiguous_strides, lower
    from fusejit.lowering.memplan import plan
    from fusejit.lowering.pipeline import optimise

    x = np.ones(8, np.float32)
    program = plan(lower(optimise(trace(lambda a: a * 2, [x])[0]), [contiguous_strides(x.shape)],
                         blas=False))
    c_source, cuda_prelude = render(program, COptions()), render_cuda(program).prelude
    for s in Status.flags():
        assert f"#define FJ_{s.macro} {s.code} " in c_source
        assert f"#define FJ_{s.macro} {s.code} " in cuda_prelude


def test_export_header_documents_the_interface_codes(tmp_path) -> None:
    res = fusejit.export(lambda a, b: a ** b, np.arange(4), np.arange(4),
                         path=str(tmp_path / "libpw.so"), name="pw")
    header = open(res.header).read()
    assert "#define PW_ERR_INT_NEG_POWER 1" in header
    for s in Status.interface():
        assert f"#define PW_{s.macro} ({s.code})" in header and s.message in header


def _run(script: str, **env: str) -> str:
    """Run `script` in a fresh interpreter (its own kernel cache, one thread); its stdout."""
    full = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", **env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=full,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


_LIMIT = """
import re, resource
def limit_memory(extra):
    '''Cap this process's address space at its current size plus `extra` bytes.'''
    size = int(re.search(r"VmSize:\\s+(\\d+)", open("/proc/self/status").read()).group(1))
    resource.setrlimit(resource.RLIMIT_AS, (size * 1024 + extra, resource.RLIM_INFINITY))
"""


@pytest.mark.c_only  # a status of the C library (BLAS pointers, epilogue scratch), in a subprocess
def test_64_a_blas_kernel_without_blas(tmp_path) -> None:
    """A library whose BLAS pointers were never set returns 64 rather than crash."""
    out = _run("""
        import numpy as np
        import fusejit
        from fusejit.runtime import blas
        blas.blas_pointers = lambda: (0, 0, 0, 0, 0, 0)  # the library is handed NULL routines
        x = np.ones((8, 8), np.float32)
        try:
            fusejit.jit(lambda a, b: a @ b)(x, x)
        except fusejit.errors.RuntimeFailure as e:
            print("raised", type(e).__name__, e)
        """, FUSEJIT_CACHE_DIR=str(tmp_path))
    assert out.startswith("raised RuntimeFailure " + Status.NO_BLAS.message)


@pytest.mark.c_only  # a status of the C library (BLAS pointers, epilogue scratch), in a subprocess
def test_128_no_memory_for_an_epilogue_scratch_block(tmp_path) -> None:
    out = _run(_LIMIT + """
import numpy as np
import fusejit
from fusejit.lowering import matmul
from fusejit.lowering.loop_ir import GemmKernel
matmul.SCRATCH_BYTES = 1 << 30  # one block for all rows: 64 MiB
def f(x, w):
    return ((x @ w) > 0).sum()  # the bool value is stored by the epilogue: scratch
x, w = np.ones((2048, 4)), np.ones((4, 4096))
jf = fusejit.jit(f)
(g,) = [k for k in jf.lower_for(x, w).program.kernels if isinstance(k, GemmKernel)]
assert g.scratch
limit_memory(16 << 20)
try:
    jf(x, w)
except MemoryError as e:
    print("raised", type(e).__name__, e)
""", FUSEJIT_CACHE_DIR=str(tmp_path))
    assert out.startswith("raised MemoryError " + Status.NO_SCRATCH.message)


def _exp_matmul(x, w):
    """exp(x) is stored for the matmul: a workspace of x's size."""
    return np.exp(x) @ w


def _export_exp_matmul(tmp_path, rows: int) -> tuple[object, np.ndarray, np.ndarray]:
    x, w = np.ones((rows, 1024), np.float32), np.ones((1024, 2), np.float32)
    res = fusejit.export(_exp_matmul, x, w, path=str(tmp_path / "libmm.so"), name="mm")
    assert res.spec.workspace_bytes >= x.nbytes
    return res, x, w


def test_minus_2_null_workspace(tmp_path) -> None:
    import cffi

    res, x, w = _export_exp_matmul(tmp_path, 16)
    ffi = cffi.FFI()
    ffi.cdef("int mm(const float *, const float *, float *, void *);")
    lib = ffi.dlopen(res.library)
    out = np.empty((16, 2), np.float32)
    st = lib.mm(ffi.from_buffer("float[]", x), ffi.from_buffer("float[]", w),
                ffi.from_buffer("float[]", out), ffi.NULL)
    assert st == Status.NO_WORKSPACE.code
    with pytest.raises(RuntimeFailure, match="workspace is NULL"):
        raise_status(st)


def test_minus_1_no_memory_for_the_workspace(tmp_path) -> None:
    res, _, _ = _export_exp_matmul(tmp_path, 16384)  # 64 MiB of workspace
    out = _run(_LIMIT + f"""
import cffi, numpy as np
from fusejit.errors import status_error
ffi = cffi.FFI()
ffi.cdef("int mm_alloc(const float *, const float *, float *);")
lib = ffi.dlopen({res.library!r})
x, w = np.ones((16384, 1024), np.float32), np.ones((1024, 2), np.float32)
out = np.empty((16384, 2), np.float32)
limit_memory(16 << 20)
st = lib.mm_alloc(ffi.from_buffer("float[]", x), ffi.from_buffer("float[]", w),
                  ffi.from_buffer("float[]", out))
err = status_error(st)
print(st, type(err).__name__, err)
""")
    assert out.startswith(f"-1 MemoryError {Status.NOMEM.message}")
