"""scipy.special ufuncs that are other special functions of their arguments, traced as those
(reached from frontend/ufuncs.py for a ufunc of scipy.special that is no op of the table).

Each computes in float64 on SciPy's domain (NaN outside it, as SciPy's cephes functions
give) and is cast to the dtype SciPy's own loop gives for the arguments (float32 loops compute
in double there too). Gradients come from the functions they are made of.

- bdtr(k, n, p) = betainc(n - k, k + 1, 1 - p) (1 at k = n), bdtrc(k, n, p) =
  betainc(k + 1, n - k, p) (1 for k < 0, 0 at k = n): k and n truncated, NaN for k > n
  (and k < 0 for bdtr) or p outside [0, 1];
- nbdtr(k, n, p) = betainc(n, k + 1, p), nbdtrc(k, n, p) = betainc(k + 1, n, 1 - p): k and
  n truncated to integers (SciPy warns when it truncates; not here), NaN for k < 0, n < 1 or
  p outside [0, 1];
- gdtr(a, b, x) = gammainc(b, a x), gdtrc = gammaincc(b, a x): NaN for x < 0;
- pdtri(k, y) = gammainccinv(k + 1, y), k truncated: NaN for k < 0 or y outside [0, 1);
- ellipk(m) = pi / (2 AGM(1, sqrt(1 - m))) and ellipkm1(p) = pi / (2 AGM(1, sqrt(p))): the
  arithmetic-geometric mean by 20 steps (from 1 and 1e-150 it has converged after 14), inf
  at m = 1 (p = 0), NaN for m > 1 (p < 0); ellipe(m) = K(m) (1 - sum 2^(n-1) c_n^2) over
  the same AGM (c_0^2 = m, c_(n+1) = (a_n - b_n)/2), through sqrt(1 - m) E(-m/(1 - m)) for
  m < 0 (where the sum would cancel), 1 at m = 1, inf at -inf, NaN above 1;
- exp10(x) = 10 ** x, 0 for x below -1024 log10(2) as SciPy's;
- sici, shichi, fresnel: their two results, an op each (codegen/include/fj_special_trigint.h);
  ellipj(u, m): sn, cn, dn and ph, an op each (codegen/include/fj_special_ellip.h); airy and
  airye: Ai, Ai', Bi, Bi' (codegen/include/fj_special_airy.h);
- round, cosm1, radian, powm1, agm, zetac: frontend/special_elementary.py;
- bdtri, nbdtri, gdtrix, gdtria: frontend/special_dtri.py;
- lambertw (SciPy's private ufunc `_lambertw` behind it) and wrightomega of real x:
  frontend/special_lambertw.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import tracer as T
from .special_dtri import INVERSES
from .special_elementary import ELEMENTARY, stand_ins
from .special_elementary import as_float as _f64  # (float64 operands)
from .special_lambertw import lambertw, wrightomega

_AGM_STEPS = 20


def _nbdtr(k: Any, n: Any, p: Any) -> Any:
    k, n, p = np.trunc(_f64(k)), np.trunc(_f64(n)), _f64(p)
    bad = (k < 0) | (n < 1) | (p < 0) | (p > 1)
    return np.where(bad, np.nan, _special().betainc(np.maximum(n, 1), k + 1, p))


def _nbdtrc(k: Any, n: Any, p: Any) -> Any:
    k, n, p = np.trunc(_f64(k)), np.trunc(_f64(n)), _f64(p)
    bad = (k < 0) | (n < 1) | (p < 0) | (p > 1)
    return np.where(bad, np.nan, _special().betainc(k + 1, np.maximum(n, 1), 1 - p))


def _gdtr(a: Any, b: Any, x: Any) -> Any:
    x = _f64(x)
    return np.where(x < 0, np.nan, _special().gammainc(_f64(b), _f64(a) * x))


def _gdtrc(a: Any, b: Any, x: Any) -> Any:
    x = _f64(x)
    return np.where(x < 0, np.nan, _special().gammaincc(_f64(b), _f64(a) * x))


def _pdtri(k: Any, y: Any) -> Any:
    k, y = np.trunc(_f64(k)), _f64(y)
    bad = (k < 0) | (y < 0) | (y >= 1)
    return np.where(bad, np.nan, _special().gammainccinv(np.maximum(k, 0) + 1, y))


def _agm_k(b: Any) -> Any:
    """pi / (2 AGM(1, b))."""
    a = np.ones_like(b)
    for _ in range(_AGM_STEPS):
        a, b = (a + b) * 0.5, np.sqrt(a * b)
    return (np.pi / 2) / a


def _ellipk(m: Any) -> Any:
    m = _f64(m)
    k = _agm_k(np.sqrt(np.maximum(1 - m, 0)))
    return np.where(m > 1, np.nan, np.where(m == 1, np.inf, k))


def _ellipe01(m: Any) -> Any:
    """E(m) for 0 <= m < 1 by the AGM: K(m) (1 - sum 2^(n-1) c_n^2), c_0^2 = m,
    c_(n+1) = (a_n - b_n) / 2."""
    a, b = np.ones_like(m), np.sqrt(1 - m)
    s, w = m * 0.5, 0.5
    for _ in range(_AGM_STEPS):
        c = (a - b) * 0.5
        a, b = (a + b) * 0.5, np.sqrt(a * b)
        w *= 2.0
        s = s + w * (c * c)
    return (np.pi / 2) / a * (1 - s)


def _ellipe(m: Any) -> Any:
    m = _f64(m)
    neg = m < 0  # E(m) = sqrt(1 - m) E(-m / (1 - m)): the AGM's sum would cancel there
    inner = -m / (1 - m)
    arg = np.where((m >= 0) & (m < 1), m, np.where(neg, inner, 0.0))
    e = np.where(arg == 1, 1.0, _ellipe01(np.where(arg == 1, 0.0, arg)))  # (m below -1e16)
    e = np.where(neg, np.sqrt(1 - m) * e, e)
    return np.where((m > 1) | np.isnan(m), np.nan,
                    np.where(m == 1, 1.0, np.where(m == -np.inf, np.inf, e)))


def _ellipkm1(p: Any) -> Any:
    p = _f64(p)
    k = _agm_k(np.sqrt(np.maximum(p, 0)))
    return np.where(p < 0, np.nan, np.where(p == 0, np.inf, k))


def _exp10(x: Any) -> Any:
    x = _f64(x)  # (SciPy's: 0 below -1024 log10(2))
    return np.where(x < -308.2547155599167, 0.0, np.power(10.0, x))


def _bdtr(k: Any, n: Any, p: Any) -> Any:
    k, n, p = np.trunc(_f64(k)), np.trunc(_f64(n)), _f64(p)
    bad = (k < 0) | (k > n) | (p < 0) | (p > 1)
    inner = np.where(k < n, k, n - 1)
    value = _special().betainc(np.maximum(n - inner, 1), inner + 1, 1 - p)
    return np.where(bad, np.nan, np.where(k == n, 1.0, value))


def _bdtrc(k: Any, n: Any, p: Any) -> Any:
    k, n, p = np.trunc(_f64(k)), np.trunc(_f64(n)), _f64(p)
    bad = (k > n) | (p < 0) | (p > 1)
    inner = np.clip(k, 0, np.maximum(n - 1, 0))
    value = _special().betainc(inner + 1, np.maximum(n - inner, 1), p)
    return np.where(bad, np.nan, np.where(k < 0, 1.0, np.where(k == n, 0.0, value)))


def _special() -> Any:
    import scipy.special

    return scipy.special


def _results(name: str) -> Callable[..., tuple]:
    """sici, shichi, fresnel (fj_special_trigint.h), ellipj (fj_special_ellip.h), airy and
    airye (fj_special_airy.h): their results, an op each over the broadcast float64
    operands."""
    from .ops_more import MULTI_RESULT_SPECIAL

    def results(*args: Any) -> tuple:
        args = tuple(T.array_operand(a) for a in args)
        if any(np.dtype(getattr(a, "dtype", np.asarray(a).dtype)).kind == "c" for a in args):
            raise T.UnsupportedError(f"scipy.special.{name} of complex values is not supported "
                                     f"by fusejit{T.where_msg()}; compute it outside the "
                                     "compiled function")
        shape = T.broadcast(*(T.shape_of(a) for a in args))
        nodes = [T.to_node(a, np.dtype(np.float64)) for a in args]
        return tuple(T.Tracer(T.make_node(f"{name}_{p}", nodes, shape, np.dtype(np.float64)),
                              scalar=shape == ())
                     for p in MULTI_RESULT_SPECIAL[name])
    return results


COMPOSITES: dict[str, Callable[..., Any]] = {
    "sici": _results("sici"), "shichi": _results("shichi"), "fresnel": _results("fresnel"),
    "ellipj": _results("ellipj"), "airy": _results("airy"), "airye": _results("airye"),
    "bdtr": _bdtr, "bdtrc": _bdtrc, "nbdtr": _nbdtr, "nbdtrc": _nbdtrc, "gdtr": _gdtr,
    "gdtrc": _gdtrc, "pdtri": _pdtri, "ellipk": _ellipk, "ellipkm1": _ellipkm1,
    "ellipe": _ellipe, "exp10": _exp10, "_lambertw": lambertw, "wrightomega": wrightomega,
    **ELEMENTARY, **INVERSES}


def _cast(out: Any, dtype: np.dtype) -> Any:
    out = out.astype(dtype)
    if out.ndim == 0:
        out.scalar = True
    return out


def composite(ufunc: np.ufunc) -> Callable[..., Any] | None:
    """The traced function for scipy.special's `ufunc` (or SciPy's private `_lambertw`), when
    it is one of COMPOSITES: its value in float64 (complex128 for lambertw), cast to the dtype
    SciPy's loop gives (NaN where SciPy's is)."""
    impl = COMPOSITES.get(ufunc.__name__)
    owner = _special() if not ufunc.__name__.startswith("_") else _special()._ufuncs
    if impl is None or getattr(owner, ufunc.__name__, None) is not ufunc:
        return None

    def call(*args: Any) -> Any:
        if len(args) != ufunc.nin:
            raise TypeError(f"{ufunc.__name__}() takes {ufunc.nin} positional arguments but "
                            f"{len(args)} were given")
        with np.errstate(all="ignore"):
            probe = ufunc(*stand_ins(args))  # SciPy's loop (its TypeError for bad types)
        if ufunc.nout > 1:  # (sici & co.: a pair; ellipj: four)
            return tuple(_cast(r, p.dtype) for r, p in zip(impl(*args), probe))
        return _cast(impl(*args), probe.dtype)

    return call
