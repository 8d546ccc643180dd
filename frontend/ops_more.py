"""More entries of the op table (frontend/ops.py imports this module to add them to OPS):
the scipy.special ufuncs computed by fusejit's own C (codegen/include/fj_special*.h, which
states each one's accuracy; float32 operands are computed in double) and the `check_*` ops
that raise NumPy's data-dependent errors when a program runs (np.nanargmax/nanargmin of an
all-NaN slice, np.choose(mode='raise') with an index outside the choices, np.geomspace
with a zero endpoint, the residuals of a rank-deficient np.linalg.lstsq, np.real_if_close
of values NumPy would leave complex, np.average's traced weights that sum to zero,
np.unravel_index of an index outside the shape, np.asarray_chkfinite of inf or NaN, np.cov's
weights that are negative or, for fweights, not integers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import Status
from .ops import ErrorCheck, OpDef, add_op, fixed_expr, placeholders

# name -> number of operands; each renders to fj_sp_<name>(...)
SPECIAL_UFUNCS = {"xlogy": 2, "xlog1py": 2, "entr": 1, "rel_entr": 2, "kl_div": 2,
                  "huber": 2, "pseudo_huber": 2,
                  "log_expit": 1, "logit": 1, "ndtr": 1, "log_ndtr": 1, "ndtri": 1,
                  "gamma": 1, "rgamma": 1, "gammaln": 1, "digamma": 1, "erfinv": 1, "erfcinv": 1,
                  "erfcx": 1, "i0": 1, "i0e": 1, "i1": 1, "i1e": 1, "j0": 1, "j1": 1, "y0": 1,
                  "y1": 1, "boxcox": 2, "boxcox1p": 2, "inv_boxcox": 2, "inv_boxcox1p": 2,
                  "beta": 2, "betaln": 2, "binom": 2, "poch": 2,  # (beta..gammasgn:
                  "gammasgn": 1,  # fj_special_beta.h)
                  "loggamma": 1,
                  "gammainc": 2, "gammaincc": 2, "exp1": 1, "expi": 1,  # fj_special_igam.h
                  "chdtr": 2, "chdtrc": 2, "pdtr": 2, "pdtrc": 2,
                  "betainc": 3, "betaincc": 3, "stdtr": 2,  # fj_special_ibeta.h
                  "gammaincinv": 2, "gammainccinv": 2, "chdtri": 2, "betaincinv": 3,
                  "betainccinv": 3, "stdtrit": 2, "fdtr": 3, "fdtrc": 3,
                  "fdtri": 3, "ndtri_exp": 1,  # fj_special_inv.h
                  "pdtrik": 2,  # fj_special_dquant.h
                  "ellipkinc": 2, "ellipeinc": 2,  # fj_special_ellip.h
                  "elliprf": 3, "elliprd": 3, "elliprc": 2, "elliprg": 3,
                  "elliprj": 4,  # fj_special_carlson.h
                  "spence": 1, "kolmogorov": 1, "kolmogi": 1,  # fj_special_misc.h
                  "owens_t": 2,  # fj_special_owens.h
                  "chndtr": 3, "chndtrix": 3,  # fj_special_ncx2.h
                  "exprel": 1, "sindg": 1, "cosdg": 1, "tandg": 1, "cotdg": 1,
                  "kv": 2, "kve": 2, "k0": 1, "k0e": 1, "k1": 1, "k1e": 1,  # fj_special_kv.h
                  "erfi": 1, "dawsn": 1,  # fj_special_series.h
                  **{f"eval_{n}": 2 for n in ("legendre", "sh_legendre", "chebyt", "chebyu",
                                              "chebyc", "chebys", "sh_chebyt", "sh_chebyu",
                                              "hermite", "hermitenorm", "laguerre")},
                  "eval_genlaguerre": 3, "eval_gegenbauer": 3,  # fj_special_poly.h
                  "jv": 2, "yv": 2, "jve": 2, "yve": 2, "iv": 2, "ive": 2, "yn": 2,
                  "kn": 2,  # fj_special_jy.h
                  "expn": 2}  # fj_special_trigint.h
# SciPy's loops of an integer degree or order only: the orthogonal polynomials (a float degree
# goes through SciPy's hypergeometric functions) and yn/kn/expn (whose float loops truncate the
# order with a warning); frontend/ufuncs.py refuses the float loops by name
INTEGER_DEGREE = frozenset([*(n for n in SPECIAL_UFUNCS if n.startswith("eval_")), "yn", "kn",
                            "expn"])
# scipy.special ufuncs that are NumPy's functions under the same name: NumPy's op (SciPy's
# loops decide the dtypes: ints go through float64, as in SciPy)
SCIPY_ALIASES = ("expm1", "log1p", "cbrt", "exp2")
for _n, _k in SPECIAL_UFUNCS.items():
    add_op(OpDef(_n, "elementwise", _k, None, fixed_expr(f"fj_sp_{_n}({placeholders(_k)})"), 40,
               (), _n, mixed_inputs=_n in INTEGER_DEGREE))
# SciPy's private ufuncs (scipy.special._ufuncs._<name>) that scipy.stats' distributions call
# (frontend/scipy_stats.py): scipy.stats.binom's pmf, cdf and sf, beta's pdf (fj_special_ibeta.h),
# beta's ppf and cauchy's ppf and isf (fj_special_inv.h), binom's ppf and isf and nbinom's pmf,
# cdf, sf, ppf and isf (fj_special_dquant.h), hypergeom's pmf, cdf and sf (fj_special_hyper.h),
# ncx2's pdf, sf and isf (fj_special_ncx2.h)
PRIVATE_UFUNCS = {"binom_pmf": 3, "binom_cdf": 3, "binom_sf": 3, "beta_pdf": 3, "beta_ppf": 3,
                  "cauchy_ppf": 3, "cauchy_isf": 3,
                  # scipy.stats.binom's quantiles and nbinom's functions: fj_special_dquant.h
                  **dict.fromkeys(("binom_ppf", "binom_isf", "nbinom_pmf", "nbinom_cdf",
                                   "nbinom_sf", "nbinom_ppf", "nbinom_isf"), 3),
                  # scipy.stats.hypergeom's pmf, cdf and sf: fj_special_hyper.h
                  **dict.fromkeys(("hypergeom_pmf", "hypergeom_cdf", "hypergeom_sf"), 4),
                  # scipy.stats.ncx2's pdf, sf and isf: fj_special_ncx2.h
                  "ncx2_pdf": 3, "ncx2_sf": 3, "ncx2_isf": 3,
                  # scipy.stats.kstwobign's pdf, cdf and ppf: fj_special_misc.h
                  "kolmogc": 1, "kolmogci": 1, "kolmogp": 1,
                  "zeta": 2, "riemann_zeta": 1,  # (scipy.special.zeta's: fj_special_series.h)
                  # scipy.special.spherical_jn & co. (derivative=True: the _d ones), of an
                  # integer order: fj_special_jy.h
                  **{f"spherical_{k}n{d}": 2 for k in "jyik" for d in ("", "_d")}}


def private_ufunc(name: str) -> Callable[..., Any]:
    """SciPy's private ufunc behind op `name` (imported when first called)."""
    def call(*args: Any) -> Any:
        from scipy.special import _ufuncs

        return getattr(_ufuncs, "_" + name)(*args)
    return call


for _n, _k in PRIVATE_UFUNCS.items():
    add_op(OpDef(_n, "elementwise", _k, private_ufunc(_n),
                 fixed_expr(f"fj_sp_{_n}({placeholders(_k)})"), 40, (), "_" + _n,
                 mixed_inputs=_n.startswith("spherical_")))


# --- scipy.stats.hypergeom's logcdf and logsf (fj_special_hyper.h; SciPy's are Python loops:
# frontend/scipy_hypergeom.py), of k, n, N, M as its private ufuncs take them ---------------
def _hypergeom_log(method: str) -> Callable[..., Any]:
    def ref(k: Any, n: Any, N: Any, M: Any) -> Any:  # noqa: N803 - SciPy's names
        import scipy.stats

        return getattr(scipy.stats.hypergeom, method)(k, M, n, N)
    return ref


for _m in ("logcdf", "logsf"):
    add_op(OpDef(f"hypergeom_{_m}", "elementwise", 4, _hypergeom_log(_m),
                 fixed_expr(f"fj_sp_hypergeom_{_m}({placeholders(4)})"), 40))


# --- scipy.special's sici, shichi and fresnel, a result each (fj_special_trigint.h),
# ellipj's, airy's and airye's four (the ufuncs' tuples: frontend/special_composite.py) ----
TWO_RESULT_SPECIAL = {"sici": ("si", "ci"), "shichi": ("shi", "chi"), "fresnel": ("s", "c")}


def _result_of(name: str, i: int) -> Callable[..., Any]:
    """Result `i` of scipy.special's `name` (imported when first called)."""
    def ref(*x: Any) -> Any:
        import scipy.special

        return getattr(scipy.special, name)(*x)[i]
    return ref


# scipy.special.ellipj's four (fj_special_ellip.h), of two operands, and airy's and airye's
# (fj_special_airy.h)
MULTI_RESULT_SPECIAL = {**TWO_RESULT_SPECIAL, "ellipj": ("sn", "cn", "dn", "ph"),
                        "airy": ("ai", "aip", "bi", "bip"), "airye": ("ai", "aip", "bi", "bip")}
MULTI_RESULT_ARITY = {"ellipj": 2}

for _n, _parts in MULTI_RESULT_SPECIAL.items():
    _k = MULTI_RESULT_ARITY.get(_n, 1)
    for _i, _p in enumerate(_parts):
        add_op(OpDef(f"{_n}_{_p}", "elementwise", _k, _result_of(_n, _i),
                     fixed_expr(f"fj_sp_{_n}_{_p}({placeholders(_k)})"), 40))


# --- np.ldexp, and np.frexp's two results (frontend/everyday.py) ----------------------------
def _ldexp(ins: list[str], out: str) -> str:
    """libm's ldexp (ldexpf for float32 and float16, as NumPy's loops); an int64 exponent
    outside int's range clamped to it, as NumPy's long loop does."""
    fn = "ldexp" if out == "f64" else "ldexpf"
    if ins[1] != "i64":
        return fn + "({0}, {1})"
    return fn + "({0}, (int)({1} > 2147483647 ? 2147483647 : {1} < -2147483647 - 1 ? " \
        "-2147483647 - 1 : {1}))"


def _frexp(part: str) -> Callable[[list[str], str], str]:
    return lambda ins, out: f"fj_frexp{part}_{'f64' if ins[0] == 'f64' else 'f32'}({{0}})"


add_op(OpDef("ldexp", "elementwise", 2, np.ldexp, _ldexp, 2, (), "ldexp", mixed_inputs=True))

# --- ndarray.view(dtype) of the same item size: bitcast_<dtype>, the bits reinterpreted ----
BITCAST_DTYPES = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                             np.uint32, np.float32, np.int64, np.uint64,
                                             np.float64))
for _d in BITCAST_DTYPES:
    add_op(OpDef(f"bitcast_{_d.name}", "elementwise", 1,
                 (lambda d: lambda x: np.asarray(x).view(d))(_d),
                 lambda ins, out: f"fj_bits_{ins[0]}_{out}({{0}})", 1, mixed_inputs=True))
add_op(OpDef("frexp_mantissa", "elementwise", 1, lambda x: np.frexp(x)[0], _frexp("m"), 2))
add_op(OpDef("frexp_exponent", "elementwise", 1, lambda x: np.frexp(x)[1], _frexp("e"), 2))

ERR_ALL_NAN = ErrorCheck(Status.ALL_NAN, "({0})")
ERR_CHOICE = ErrorCheck(Status.CHOICE, "({0})")
ERR_GEOM_ZERO = ErrorCheck(Status.GEOM_ZERO, "({0})")
ERR_HIST_RANGE = ErrorCheck(Status.HIST_RANGE, "({0})")
ERR_LSTSQ_RANK = ErrorCheck(Status.LSTSQ_RANK, "({0})")
ERR_REAL_IF_CLOSE = ErrorCheck(Status.REAL_IF_CLOSE, "({0})")
ERR_WEIGHTS_ZERO = ErrorCheck(Status.WEIGHTS_ZERO, "({0})")
ERR_UNRAVEL_RANGE = ErrorCheck(Status.UNRAVEL_RANGE, "({0})")
ERR_NOT_FINITE = ErrorCheck(Status.NOT_FINITE, "({0})")
ERR_FWEIGHTS_INT = ErrorCheck(Status.FWEIGHTS_INT, "({0})")
ERR_FWEIGHTS_NEG = ErrorCheck(Status.FWEIGHTS_NEG, "({0})")
ERR_AWEIGHTS_NEG = ErrorCheck(Status.AWEIGHTS_NEG, "({0})")
ERR_DIST_WEIGHTS_NEG = ErrorCheck(Status.DIST_WEIGHTS_NEG, "({0})")
ERR_LINREGRESS_X_SAME = ErrorCheck(Status.LINREGRESS_X_SAME, "({0})")
ERR_LFILTER_A0 = ErrorCheck(Status.LFILTER_A0, "({0})")
ERR_SOS_A0 = ErrorCheck(Status.SOS_A0, "({0})")
ERR_RANK_FILTER_NAN = ErrorCheck(Status.RANK_FILTER_NAN, "({0})")
ERR_INTERP1D_BOUNDS = ErrorCheck(Status.INTERP1D_BOUNDS, "({0})")
ERR_EMPTY_REDUCTION = ErrorCheck(Status.EMPTY_REDUCTION, "({0})")
CHECKS = (ERR_ALL_NAN, ERR_CHOICE, ERR_GEOM_ZERO, ERR_HIST_RANGE, ERR_LSTSQ_RANK,
          ERR_REAL_IF_CLOSE, ERR_WEIGHTS_ZERO, ERR_UNRAVEL_RANGE, ERR_NOT_FINITE,
          ERR_FWEIGHTS_INT, ERR_FWEIGHTS_NEG, ERR_AWEIGHTS_NEG, ERR_DIST_WEIGHTS_NEG,
          ERR_LINREGRESS_X_SAME, ERR_LFILTER_A0, ERR_SOS_A0, ERR_RANK_FILTER_NAN,
          ERR_INTERP1D_BOUNDS, ERR_EMPTY_REDUCTION)


def _raising(check: ErrorCheck) -> Callable[[np.ndarray], np.ndarray]:
    """The reference of a `check_*` op: its operand, or NumPy's error where it is true."""

    def ref(flag: np.ndarray) -> np.ndarray:
        if np.any(flag):
            raise check.status.exc(check.status.message)
        return np.asarray(flag, dtype=bool)

    return ref


# check_*: a bool passed through; where it is true the program fails with the check's error.
for _n, _chk in (("check_all_nan", ERR_ALL_NAN), ("check_choice", ERR_CHOICE),
                 ("check_geom_zero", ERR_GEOM_ZERO), ("check_hist_range", ERR_HIST_RANGE),
                 ("check_lstsq_rank", ERR_LSTSQ_RANK),
                 ("check_real_if_close", ERR_REAL_IF_CLOSE),
                 ("check_weights_zero", ERR_WEIGHTS_ZERO),
                 ("check_unravel_range", ERR_UNRAVEL_RANGE),
                 ("check_finite", ERR_NOT_FINITE),
                 ("check_fweights_int", ERR_FWEIGHTS_INT),  # np.cov (frontend/covariance.py)
                 ("check_fweights_neg", ERR_FWEIGHTS_NEG),
                 ("check_aweights_neg", ERR_AWEIGHTS_NEG),
                 ("check_dist_weights_neg", ERR_DIST_WEIGHTS_NEG),  # scipy_spatial.py
                 ("check_linregress_x_same", ERR_LINREGRESS_X_SAME),  # scipy_regress.py
                 ("check_lfilter_a0", ERR_LFILTER_A0),  # scipy_filter.py
                 ("check_sos_a0", ERR_SOS_A0),
                 ("check_rank_filter_nan", ERR_RANK_FILTER_NAN),  # scipy_rankfilt.py
                 ("check_interp1d_bounds", ERR_INTERP1D_BOUNDS)):  # scipy_interp.py
    add_op(OpDef(_n, "elementwise", 1, _raising(_chk), fixed_expr("({0})"), 1, (_chk,)))


def _empty_reduction(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """The reference of check_empty_max/min: NumPy's exact message for np.max/min of an
    empty selection (the status's message names both)."""

    def ref(flag: np.ndarray) -> np.ndarray:
        if np.any(flag):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
        return np.asarray(flag, dtype=bool)

    return ref


# x[mask] reduced by np.max/np.min when the mask selects nothing (frontend/masked_reduce.py)
for _n, _what in (("check_empty_max", "maximum"), ("check_empty_min", "minimum")):
    add_op(OpDef(_n, "elementwise", 1, _empty_reduction(_what), fixed_expr("({0})"), 1,
                 (ERR_EMPTY_REDUCTION,)))


def _empty_quantile(flag: np.ndarray) -> np.ndarray:
    """The reference of check_empty_quantile: NumPy's IndexError for np.percentile/quantile
    of nothing (its status is INDEX_RANGE's, the same exception)."""
    if np.any(flag):
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    return np.asarray(flag, dtype=bool)


# (np.percentile/np.quantile of a selection that holds nothing)
add_op(OpDef("check_empty_quantile", "elementwise", 1, _empty_quantile, fixed_expr("({0})"), 1,
             (ErrorCheck(Status.INDEX_RANGE, "({0})"),)))


# --- sorting (frontend/sorting.py; lowering/sort.py) ----------------------------------------
def sort_reference(x: np.ndarray, mode: str, axis: int) -> np.ndarray:
    """Evaluate a `sort` node: NumPy's sort (stable for "stable") or stable argsort."""
    if mode == "arg":
        return np.argsort(x, axis=axis, kind="stable")
    return np.sort(x, axis=axis, kind="stable" if mode == "stable" else None)


def searchsorted_reference(a: np.ndarray, v: np.ndarray, side: str) -> np.ndarray:
    return np.asarray(np.searchsorted(a, v, side=side))


add_op(OpDef("sort", "sort", 1, sort_reference))
add_op(OpDef("searchsorted", "sort", 2, searchsorted_reference))
