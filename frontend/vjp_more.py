"""Gradient rules written with traced NumPy calls rather than single IR nodes: the scans other
than cumsum (cumprod, subtract/maximum/minimum accumulate, the linear filters of
scipy.signal.lfilter and sosfilt) and the symmetric LAPACK
factorisations (cholesky, eigh, eigvalsh). frontend/vjp_rules.py dispatches to them.

Each rule takes the forward node and its cotangent `g` and returns the cotangent of the
node's input as a Node, built by calling NumPy functions on Tracers (so it is traced,
optimised and fused like the forward pass).

- cumprod is exact with zeros: before the first zero along the axis the cotangent is
  revcumsum(g * y) / x; at the first zero it is revcumsum(g * y') with y' the products taken
  with that zero replaced by 1; after it, zero (JAX's answer, without dividing by zero).
- maximum/minimum.accumulate (and fmax/fmin): each running extreme's cotangent goes to the
  latest element equal to it (the index torch.cummax returns); a NaN takes over the
  running extreme, and so the cotangents of the values after it.
- cholesky and eigh read one triangle of their operand (`uplo`), as NumPy's LAPACK calls do,
  so the other triangle gets no gradient: the gradient S with respect to the symmetric matrix
  is folded into that triangle (S + S^T off the diagonal, S on it), which is what central
  differences of NumPy's functions give. eigh uses the standard formula
  S = V (diag(gw) + F * (V^T gV)) V^T with F_ij = 1 / (w_j - w_i) off the diagonal; where
  eigenvalues repeat and the eigenvectors' cotangent is not zero the eigenvectors are not
  differentiable and the gradient is inf/NaN (as in JAX); eigenvalues alone (eigvalsh, or
  eigh's w with V unused) differentiate everywhere.
- scipy.linalg.expm: the cotangent of A is the adjoint of expm's Frechet derivative at A
  applied to g, L(A^T, g), the upper right block of expm([[A^T, g], [0, A^T]]) (Najfeld
  and Havel's block form): one more expm, of a 2n x 2n matrix.
"""

from __future__ import annotations

import numpy as np

from . import tracer as T
from .context import make_node
from .ir import Node


def _t(node: Node) -> T.Tracer:
    return T.Tracer(node)


def _revcumsum(v: T.Tracer, axis: int) -> T.Tracer:
    return np.flip(np.cumsum(np.flip(v, axis), axis=axis), axis)


def _positions(shape: tuple[int, ...], axis: int) -> np.ndarray:
    """Each element's index along `axis`, broadcastable to `shape` (a constant)."""
    pos = np.arange(shape[axis]).reshape([-1 if d == axis else 1 for d in range(len(shape))])
    return np.broadcast_to(pos, shape)


def scan(node: Node, g: Node) -> Node | None:
    """The cotangent of a scan's input for fn multiply, subtract, maximum, minimum, fmax,
    fmin (None for another fn: the engine refuses it, naming it)."""
    fn, axis = node.attrs["fn"], node.attrs["axis"]
    x, y, gt = _t(node.inputs[0]), _t(node), _t(g)
    if fn == "subtract":  # y_k = x_0 - x_1 - ... - x_k
        r = _revcumsum(gt, axis)
        first = _positions(node.shape, axis) == 0
        return np.where(first, r, -r).node
    if fn == "multiply":
        return _cumprod(x, y, gt, axis).node
    if fn in ("maximum", "minimum", "fmax", "fmin"):
        return _cumextreme(x, y, gt, axis).node
    return None


def filter_scan(node: Node, g: Node) -> tuple[Node, Node | None]:
    """The cotangents of a linear filter's signal and initial state (scans lfilter,
    sosfilt, inputs x, b, a[, zi]: frontend/scipy_filter.py). The filter is y = L x + M zi
    with L lower-triangular Toeplitz, so x's cotangent is L^T g: the same filter run
    backwards over g. The state's response is 1/A(z) applied to the sequence zi[0], ...,
    zi[K-2], 0, ...: zi's cotangent is the first K - 1 values of 1/A run backwards over g
    (zero past the signal's end); None without zi."""
    axis, fn = node.attrs["axis"], node.attrs["fn"]
    b, a = node.inputs[1], node.inputs[2]

    def backwards(v: T.Tracer, coef: Node) -> T.Tracer:
        rev = np.flip(v, axis)
        out = make_node("scan", [rev.node, coef, a], rev.shape, rev.dtype, fn=fn, axis=axis)
        return np.flip(_t(out), axis)

    gt = _t(g)
    gx = backwards(gt, b).node
    if len(node.inputs) == 3:
        return gx, None
    k = b.shape[-1]  # (a sosfilt scan with zi holds one section: b of shape (1, 3))
    unit = np.zeros(b.shape, b.dtype)
    unit[..., 0] = 1
    r = backwards(gt, T.const_node(unit))
    n = node.shape[axis]
    head = np.take(r, np.arange(min(n, k - 1)), axis=axis)
    if n < k - 1:
        pad = [(0, 0)] * len(node.shape)
        pad[axis] = (0, k - 1 - n)
        head = np.pad(head, pad)
    return gx, head.node


def _cumprod(x: T.Tracer, y: T.Tracer, g: T.Tracer, axis: int) -> T.Tracer:
    zero = x == 0
    zeros_so_far = np.cumsum(zero, axis=axis)
    before = zeros_so_far == 0  # strictly before the first zero: x is not 0 there
    first = zero & (zeros_so_far == 1)
    y_first = np.cumprod(np.where(first, 1, x), axis=axis)  # products skipping the first 0
    one = np.ones((), x.dtype)
    g_before = _revcumsum(g * y, axis) / np.where(before, x, one)
    g_first = _revcumsum(g * y_first, axis)
    return np.where(before, g_before, np.where(first, g_first, np.zeros((), x.dtype)))


def _cumextreme(x: T.Tracer, y: T.Tracer, g: T.Tracer, axis: int) -> T.Tracer:
    n = x.shape[axis]
    pos = _positions(x.shape, axis)
    # the elements where the running extreme takes its value (a NaN in x starts a NaN run)
    source = (x == y) | np.isnan(x)
    # next_source[j]: the first source position after j (n past the last)
    ahead = np.flip(np.minimum.accumulate(np.flip(np.where(source, pos, n), axis),
                                          axis=axis), axis)
    shifted = [slice(None)] * x.ndim
    shifted[axis] = slice(1, None)
    pad_shape = list(x.shape)
    pad_shape[axis] = 1
    after = np.concatenate([ahead[tuple(shifted)], np.full(pad_shape, n)], axis=axis)
    # a source's cotangent: g summed from it to just before the next source
    r = _revcumsum(g, axis)
    r_end = np.concatenate([r, np.zeros(pad_shape, g.dtype)], axis=axis)
    return np.where(source, r - np.take_along_axis(r_end, after, axis=axis),
                    np.zeros((), g.dtype))


def _fold(s: T.Tracer, uplo: str) -> T.Tracer:
    """A gradient `s` with respect to a symmetric matrix, as the gradient with respect to the
    one triangle (uplo) the factorisation reads: s + s^T off the diagonal, s on it."""
    n = s.shape[-1]
    both = s + np.swapaxes(s, -1, -2)
    tri = np.tri(n, dtype=bool) if uplo == "L" else np.tri(n, dtype=bool).T
    eye = np.eye(n, dtype=bool)
    return np.where(eye, s, np.where(tri, both, np.zeros((), s.dtype)))


def cholesky(node: Node, g: Node) -> Node:
    """a = L L^T: S = L^-T Phi(L^T gL) L^-1, Phi = the lower triangle with half its
    diagonal."""
    low, gl = _t(node), _t(g)
    n = low.shape[-1]
    phi = np.tril(np.ones((n, n))) - 0.5 * np.eye(n)
    linv = _t(make_node("lapack", [node], node.shape, node.dtype, fn="inv", uplo="L"))
    inner = (np.swapaxes(low, -1, -2) @ gl) * phi.astype(node.dtype)
    s = np.swapaxes(linv, -1, -2) @ inner @ linv
    return _fold(s, node.attrs["uplo"]).node


def _eig_pullback(a: Node, w: T.Tracer, v: T.Tracer, gw: T.Tracer, gv: T.Tracer | None,
                  uplo: str) -> Node:
    vt = np.swapaxes(v, -1, -2)
    inner = gw[..., :, None] * np.eye(w.shape[-1], dtype=a.dtype)
    if gv is not None:
        vg = vt @ gv
        gap = w[..., None, :] - w[..., :, None]  # w_j - w_i
        eye = np.eye(w.shape[-1], dtype=bool)
        # a zero cotangent contributes zero even where eigenvalues repeat (1/0 * 0)
        f = np.where(eye | (vg == 0), np.zeros((), a.dtype),
                     vg / np.where(eye, np.ones((), a.dtype), gap))
        inner = inner + f
    return _fold(v @ inner @ vt, uplo).node


def eigh(node: Node, g: Node) -> Node:
    r, gr = _t(node), _t(g)
    return _eig_pullback(node.inputs[0], r[..., 0, :], r[..., 1:, :], gr[..., 0, :],
                         gr[..., 1:, :], node.attrs["uplo"])


def eigvalsh(node: Node, g: Node) -> Node:
    a = node.inputs[0]
    n = a.shape[-1]
    full = _t(make_node("lapack", [a], a.shape[:-2] + (n + 1, n), a.dtype, fn="eigh",
                        uplo=node.attrs["uplo"]))
    return _eig_pullback(a, full[..., 0, :], full[..., 1:, :], _t(g), None, node.attrs["uplo"])


def expm(node: Node, g: Node) -> Node:
    """The cotangent of expm's operand: expm([[A^T, g], [0, A^T]])[:n, n:]."""
    at = np.swapaxes(_t(node.inputs[0]), -1, -2)
    n = at.shape[-1]
    block = np.concatenate([np.concatenate([at, _t(g)], axis=-1),
                            np.concatenate([np.zeros_like(at), at], axis=-1)], axis=-2)
    e = make_node("lapack", [block.node], block.shape, block.dtype, fn="expm", uplo="L")
    return _t(e)[..., :n, n:].node
