"""scipy.stats.hypergeom's logcdf and logsf on traced values (frontend/scipy_stats.py installs
them): SciPy loops over the elements in Python (log1p(-sf) on one side, the logsumexp of the
pmf over the support on the other); here they are the ops `hypergeom_logcdf` and
`hypergeom_logsf` (codegen/include/fj_special_hyper.h: the log of the tail's sum of pmfs
relative to its first, which no underflow reaches, and log1p of the other side)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tracer as T


def _log_part(op: str, k: Any, M: Any, n: Any, N: Any) -> T.Tracer:  # noqa: N803
    args = np.broadcast_arrays(*(T.as_tracer(a).astype(np.float64) for a in (k, n, N, M)))
    shape = np.shape(args[0])
    return T.Tracer(T.make_node(op, [a.node for a in args], shape, np.dtype(np.float64)))


def _logcdf(self: Any, k: Any, M: Any, n: Any, N: Any) -> T.Tracer:  # noqa: N803
    return _log_part("hypergeom_logcdf", k, M, n, N)


def _logsf(self: Any, k: Any, M: Any, n: Any, N: Any) -> T.Tracer:  # noqa: N803
    return _log_part("hypergeom_logsf", k, M, n, N)


CLASS_METHODS = {"hypergeom_gen": {"_logcdf": _logcdf, "_logsf": _logsf}}
