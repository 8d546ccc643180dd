"""scipy.linalg's structured matrices and scipy.spatial.distance.squareform of traced arrays
(installed by frontend/scipy_api.py).

SciPy builds toeplitz, hankel and circulant matrices as strided views of one vector
(np.lib.stride_tricks, which a traced array has no memory for) and block_diag and squareform
by writing into np.zeros: here each is one gather of the values by a constant index table
(the diagonals' values laid out in one vector), or the blocks padded and stacked, with
SciPy's dtypes; SciPy's argument errors come from SciPy itself on stand-ins of the
arguments' shapes and dtypes. Leading dims of toeplitz/hankel/circulant's vectors are a
batch, as in SciPy 1.17.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tracer as T
from .numpy_lib import quietly


def _stand_in(x: Any) -> np.ndarray:
    return np.ones(np.shape(x), x.dtype if isinstance(x, T.Tracer) else np.asarray(x).dtype)


def _pair(c: Any, r: Any, default: Any) -> tuple[T.Tracer, T.Tracer, int, int]:
    """c and r (default(c) when None) as traced vectors (a leading batch kept) and their
    lengths."""
    c = T.as_tracer(c)
    r = default(c) if r is None else T.as_tracer(r)
    m, n = c.shape[-1] if c.ndim else 1, r.shape[-1] if r.ndim else 1
    return np.reshape(c, c.shape[:-1] + (m,)), np.reshape(r, r.shape[:-1] + (n,)), m, n


def toeplitz(c: Any, r: Any = None) -> Any:
    """T[i, j] = c[i - j] below the diagonal (and on it), r[j - i] above it (r = conj(c))."""
    import scipy.linalg

    want = quietly(scipy.linalg.toeplitz, _stand_in(c), None if r is None else _stand_in(r))
    c, r, m, n = _pair(c, r, np.conjugate)
    vals = np.concatenate([c[..., ::-1], r[..., 1:]], axis=-1)
    table = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return np.take(vals, table, axis=-1).astype(want.dtype, copy=False)


def hankel(c: Any, r: Any = None) -> Any:
    """H[i, j] = c[i + j] where i + j < len(c), else r[i + j - len(c) + 1] (r = zeros)."""
    import scipy.linalg

    want = quietly(scipy.linalg.hankel, _stand_in(c), None if r is None else _stand_in(r))
    c, r, m, n = _pair(c, r, np.zeros_like)
    vals = np.concatenate([c, r[..., 1:]], axis=-1)
    table = np.arange(m)[:, None] + np.arange(n)[None, :]
    return np.take(vals, table, axis=-1).astype(want.dtype, copy=False)


def circulant(c: Any) -> Any:
    """C[i, j] = c[(i - j) mod n]."""
    import scipy.linalg

    want = quietly(scipy.linalg.circulant, _stand_in(c))
    c = T.as_tracer(c)
    n = c.shape[-1] if c.ndim else 1
    c = np.reshape(c, c.shape[:-1] + (n,))
    table = (np.arange(n)[:, None] - np.arange(n)[None, :]) % max(n, 1)
    return np.take(c, table, axis=-1).astype(want.dtype, copy=False)


def block_diag(*arrs: Any) -> Any:
    """The blocks (each made 2-D as SciPy's np.atleast_2d does) along the diagonal, zeros
    elsewhere, in their common dtype."""
    import scipy.linalg

    want = quietly(scipy.linalg.block_diag, *(_stand_in(a) for a in arrs))
    blocks = [np.atleast_2d(T.as_tracer(a)) for a in arrs]
    cols = sum(b.shape[1] for b in blocks)
    rows, at = [], 0
    for b in blocks:
        pad = ((0, 0), (at, cols - at - b.shape[1]))
        rows.append(np.pad(b.astype(want.dtype, copy=False), pad))
        at += b.shape[1]
    if not rows:
        return T.Tracer(T.const_node(want))
    return np.concatenate(rows, axis=0)


def squareform(X: Any, force: str = "no", checks: bool = True) -> Any:  # noqa: N803
    """A condensed distance vector as its square matrix (zero diagonal), or a square matrix
    as its condensed vector (upper triangle, row by row); checks=True of a traced matrix is
    refused (SciPy checks its symmetry and zero diagonal, which are the data)."""
    import scipy.spatial.distance as ssd

    want = quietly(ssd.squareform, np.zeros(np.shape(X), _stand_in(X).dtype), force, False)
    x = T.as_tracer(X)
    if want.ndim == 2:  # vector -> matrix
        d = want.shape[0]
        table = np.zeros((d, d), np.intp)
        iu = np.triu_indices(d, 1)
        table[iu] = np.arange(1, len(iu[0]) + 1)
        table.T[iu] = table[iu]
        vals = np.concatenate([np.zeros(1, x.dtype), x])
        return np.take(vals, table)
    if checks:
        raise T.UnsupportedError(
            f"scipy.spatial.distance.squareform of a traced square matrix with checks=True "
            f"is not supported by fusejit{T.where_msg()}: SciPy checks that the matrix is "
            "symmetric with a zero diagonal, which depends on the data; pass checks=False")
    d = x.shape[0]
    return x[np.triu_indices(d, 1)].astype(want.dtype, copy=False)
