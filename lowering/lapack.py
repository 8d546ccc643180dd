"""Lowering of `lapack` and `lapack_solve` nodes: one LapackKernel each.

The kernel reads its operands where they lie (through views of a stored value, any
strides: codegen/clapack.py copies each matrix into column-major scratch for LAPACK) and
writes its result into the node's own buffer. On the C backend LAPACK comes from SciPy at
run time, so a program lowered without it (an exported library) refuses these nodes; the
CUDA backend renders its own kernels (codegen/cuda_lapack.py: `lapack` is true there).
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..frontend.ir import Node
from .builder import Lowering, access, identity_map
from .loop_ir import Access, LapackKernel

NAMES = {"solve": "np.linalg.solve", "inv": "np.linalg.inv", "cholesky": "np.linalg.cholesky",
         "slogdet": "np.linalg.slogdet/det", "eigh": "np.linalg.eigh",
         "eigvalsh": "np.linalg.eigvalsh", "lstsq": "np.linalg.lstsq", "svd": "np.linalg.svd",
         "svd_full": "np.linalg.svd", "svdvals": "np.linalg.svd", "qr": "np.linalg.qr",
         "qr_complete": "np.linalg.qr", "qr_r": "np.linalg.qr", "expm": "scipy.linalg.expm",
         "lu": "scipy.linalg.lu/lu_factor", "lu_solve": "scipy.linalg.lu_solve",
         "lu_solve_t": "scipy.linalg.lu_solve", "inv_nan": "np.linalg.cond"}
# scipy.linalg's, which the CUDA backend's own kernels do not compute yet
NOT_ON_CUDA = ("expm", "lu", "lu_solve", "lu_solve_t", "inv_nan")


def _operand(low: Lowering, node: Node) -> tuple[Access, int]:
    place = low.layout(node)
    assert place is not None, f"LAPACK operand %{node.id} is not in memory"
    buf, off, strides, held = place
    return Access(buf.index, int(off), tuple(strides)), held


def build_lapack(low: Lowering, name: str, node: Node, by: str | None) -> LapackKernel:
    """The LapackKernel computing `node` into its buffer; `by`: what runs it ("scipy":
    SciPy's LAPACK, "own": the backend's own kernels; None: nothing, refused)."""
    fn = node.attrs["fn"]
    if by is None:
        where = f" (at {node.loc})" if node.loc else ""
        raise UnsupportedError(
            f"{NAMES[fn]}{where} calls SciPy's LAPACK from the compiled code: this target "
            "(an exported library without SciPy) cannot run it; compute "
            "it outside the compiled function")
    if by == "own" and fn in NOT_ON_CUDA:
        where = f" (at {node.loc})" if node.loc else ""
        raise UnsupportedError(
            f"{NAMES[fn]}{where} is not supported by fusejit's CUDA backend yet (the C "
            "backend computes it): compute it outside the compiled function, or compile "
            "this function for the CPU")
    out = low.buffer_for(node)
    assert out is not None
    a, held_a = _operand(low, node.inputs[0])
    b, held_b = _operand(low, node.inputs[1]) if len(node.inputs) > 1 else (None, -1)
    m, n = node.inputs[0].shape[-2:]
    if fn in ("lu_solve", "lu_solve_t"):  # a: [LU | pivots], n x (n + 1)
        n = m
    k = node.inputs[1].shape[-1] if fn in ("solve", "lstsq", "lu_solve", "lu_solve_t") else 0
    nd = node.type.ndim
    return LapackKernel(name, fn, node.inputs[0].shape[:-2], n, k, a, b,
                        access(out, identity_map(nd), nd), node.shape, node.dtype,
                        node.attrs.get("uplo", "L"), [node.id], [node.loc] if node.loc else [],
                        (held_a, held_b), m, float(node.attrs.get("rcond", -1.0)),
                        own=by == "own")
