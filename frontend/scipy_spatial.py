"""scipy.spatial.distance.cdist and pdist of traced arrays (installed by frontend/scipy_api.py).

SciPy's functions convert their arguments with np.asarray and compute in compiled code, so a
traced value cannot flow through them. With a traced argument these build the distances from
traced operations instead: cdist as the rows of XA against the rows of XB broadcast into one
reduction over the features (one fused loop nest, nothing of size mA x mB x n stored), pdist
over the pairs i < j of X's rows (rows gathered with constant indices). SciPy's own checks and
errors come from a call of SciPy's function on stand-ins (ones of the arguments' shapes and
dtypes, one or two rows): 2-D arguments, matching columns, a known metric, keyword arguments
the metric takes, the weights' size and sign. Inputs are computed in float64 (SciPy converts
integers, bools and float32), complex ones raise SciPy's ValueError.

Metrics (with SciPy's aliases and optional weights `w`): euclidean, sqeuclidean, cityblock,
chebyshev (NaN differences ignored, as SciPy's loop does), minkowski (`p`; 1, 2 and inf are
cityblock, euclidean and chebyshev), cosine and correlation (the cosine of the angle clipped
to [-1, 1]), braycurtis, canberra (0/0 terms are 0). Traced weights (a global array is one)
are checked when the program runs: a negative one raises SciPy's ValueError. Other metrics,
callables, `out=`, and a traced `p` are refused by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .numpy_lib import holds_tracer, quietly

METRICS = ("euclidean", "sqeuclidean", "cityblock", "chebyshev", "minkowski", "cosine",
           "correlation", "braycurtis", "canberra")


def _refuse(what: str) -> UnsupportedError:
    return UnsupportedError(f"scipy.spatial.distance {what} is not supported by fusejit"
                            f"{T.where_msg()}; supported metrics: {', '.join(METRICS)}")


def _stand_in(x: Any, rows: int) -> np.ndarray:
    shape = np.shape(x)
    if len(shape) == 2:
        shape = (min(shape[0], rows), shape[1])
    return np.ones(shape, x.dtype if isinstance(x, T.Tracer) else np.asarray(x).dtype)


def _refusals(metric: Any, kwargs: dict[str, Any], out: Any) -> None:
    """What fusejit refuses before SciPy's checks run."""
    if out is not None:
        raise _refuse("out=")
    if callable(metric):
        raise _refuse(f"with a Python function as the metric ({getattr(metric, '__name__', '')})")
    for key, value in kwargs.items():
        if holds_tracer(value) or (key != "w" and isinstance(value, T.Tracer)):
            raise _refuse(f"with a traced {key}=")


def _metric(metric: Any) -> str:
    """The canonical name of a metric SciPy knows (its check ran), or the refusal."""
    from scipy.spatial import distance

    info = getattr(distance, "_METRIC_ALIAS", {}).get(str(metric).lower())  # (aliases)
    name = getattr(info, "canonical_name", str(metric).lower())
    if name not in METRICS:
        raise _refuse(f"metric {metric!r}")
    return name


def _scipy_checks(call: Any, *args: Any, **kwargs: Any) -> None:
    """SciPy's function on stand-ins: its errors."""
    quietly(call, *args, **kwargs)


def _float(x: Any) -> Any:
    t = x if isinstance(x, T.Tracer) else np.asarray(x)
    return t.astype(np.float64, copy=False)


def _sum(w: Any, terms: Any) -> Any:
    return np.sum(terms if w is None else w * terms, axis=-1)


def _cosine(a: Any, b: Any, lift: Callable[..., Any], w: Any, center: bool) -> Any:
    """1 - cos of the angle between the pairs' rows, each row's squared norm (and mean, for
    correlation) computed once."""
    if center:
        total = a.shape[-1] if w is None else np.sum(w)
        a = a - _sum(w, a)[..., None] / total
        b = b - _sum(w, b)[..., None] / total
    u, v = lift(a, b)
    uu, vv = lift(_sum(w, a * a), _sum(w, b * b))
    cos = _sum(w, u * v) / np.sqrt(uu * vv)
    return 1.0 - np.clip(cos, -1.0, 1.0)


def _distances(a: Any, b: Any, lift: Callable[..., Any], name: str, w: Any, p: float) -> Any:
    """The metric between rows of `a` and rows of `b`, paired by `lift` (which takes arrays
    of rows, or of one value a row, to the pairs)."""
    if name == "minkowski":
        name = {1.0: "cityblock", 2.0: "euclidean", np.inf: "chebyshev"}.get(p, name)
    if name in ("cosine", "correlation"):
        return _cosine(a, b, lift, w, name == "correlation")
    u, v = lift(a, b)
    d = np.abs(u - v)
    if name == "euclidean":
        return np.sqrt(_sum(w, d * d))
    if name == "sqeuclidean":
        return _sum(w, d * d)
    if name == "cityblock":
        return _sum(w, d)
    if name == "chebyshev":  # (SciPy's loop keeps its maximum where |u - v| is NaN)
        keep = d > 0 if w is None else (d > 0) & (w > 0)
        return np.max(np.where(keep, d, 0.0), axis=-1, initial=0.0)
    if name == "minkowski":
        with np.errstate(divide="ignore"):
            return _sum(w, d ** p) ** (1.0 / np.float64(p))
    if name == "braycurtis":
        return _sum(w, d) / _sum(w, np.abs(u + v))
    denom = np.abs(u) + np.abs(v)  # canberra
    return _sum(w, np.where(denom == 0, 0.0, d / np.where(denom == 0, 1.0, denom)))


def _options(kwargs: dict[str, Any]) -> tuple[Any, float]:
    """The weights (traced ones: the program raises SciPy's ValueError when one is negative)
    and p."""
    w = kwargs.get("w")
    if isinstance(w, T.Tracer):
        w = w.astype(np.float64)
        bad = T.Tracer(T.make_node("check_dist_weights_neg", [np.any(w < 0).node], (),
                                   np.dtype(bool)))
        w = np.where(bad, np.zeros((), w.dtype), w)
    elif w is not None:
        w = np.asarray(w, np.float64)
    return w, float(kwargs.get("p", 2.0))


def _checked(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments for SciPy's call on stand-ins: traced weights as ones of their
    shape (their sign is checked when the program runs)."""
    w = kwargs.get("w")
    if not isinstance(w, T.Tracer):
        return kwargs
    return {**kwargs, "w": np.ones(w.shape, w.dtype)}


def cdist(XA: Any, XB: Any, metric: Any = "euclidean", *, out: Any = None,
          **kwargs: Any) -> Any:
    """scipy.spatial.distance.cdist with a traced XA or XB."""
    from scipy.spatial import distance

    _refusals(metric, kwargs, out)
    _scipy_checks(distance.cdist, _stand_in(XA, 1), _stand_in(XB, 1), metric, **_checked(kwargs))
    name = _metric(metric)
    a, b = _float(XA), _float(XB)
    w, p = _options(kwargs)
    return _distances(a, b, lambda s, t: (s[:, None], t[None]), name, w, p)


def pdist(X: Any, metric: Any = "euclidean", *, out: Any = None, **kwargs: Any) -> Any:
    """scipy.spatial.distance.pdist with a traced X: the condensed distances of the pairs of
    rows i < j, in SciPy's order."""
    from scipy.spatial import distance

    _refusals(metric, kwargs, out)
    _scipy_checks(distance.pdist, _stand_in(X, 2), metric, **_checked(kwargs))
    name = _metric(metric)
    x = _float(X)
    first, second = np.triu_indices(x.shape[0], 1)
    w, p = _options(kwargs)
    return _distances(x, x, lambda s, t: (s[first], t[second]), name, w, p)
