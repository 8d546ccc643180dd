"""SciPy functions that are not ufuncs, traced: scipy.special.logsumexp, comb, polygamma,
factorial and spherical_kn (frontend/scipy_special_fns.py),
scipy.spatial.distance.cdist and pdist (frontend/scipy_spatial.py), scipy.ndimage's linear
filters (frontend/scipy_ndimage.py) and its minimum, maximum and rank filters with
scipy.signal.medfilt (frontend/scipy_rankfilt.py), its spline interpolation (map_coordinates,
shift, zoom, rotate, affine_transform: frontend/scipy_ndinterp.py), morphology
(frontend/scipy_morph.py) and measurements over labelled regions
(frontend/scipy_measure.py), scipy.signal.convolve,
correlate, upfirdn and the polynomial fit of savgol_filter's edges (frontend/scipy_signal.py),
scipy.signal.lfilter and sosfilt (frontend/scipy_filter.py), its waveforms sawtooth, square
and chirp (frontend/scipy_waveforms.py), scipy.signal.csd (and so welch,
periodogram: frontend/scipy_spectral.py), scipy.fft's and scipy.fftpack's dct, idct, dst, idst
(frontend/scipy_dct.py), scipy.linalg's common functions (frontend/scipy_linalg.py),
scipy.stats.rankdata (frontend/scipy_rank.py), linregress,
spearmanr, iqr, hmean and pmean (frontend/scipy_regress.py); and scipy.interpolate's PPoly
(CubicSpline & co.) called at traced points (frontend/scipy_interp.py).

SciPy's logsumexp and comb convert their arguments with np.asarray (a name bound in SciPy's
module, which frontend/numpy_patch.py does not reach), so a Tracer cannot flow through them.
fusejit therefore puts a dispatching wrapper in their place (in `scipy.special` and the module
defining each, `WRAPPED`): with a Tracer argument it builds SciPy's algorithm from traced
operations, otherwise it calls SciPy's own function unchanged. The wrappers are installed when
fusejit is imported if SciPy is already loaded, or else as soon as scipy.special is imported
(a post-import hook on the defining modules, so `from scipy.special import logsumexp`
binds the wrapper either way). A name bound to SciPy's function before fusejit was imported
is given the wrapper in a jitted function's globals (frontend/captures.py, `replacement`).

The same hook makes SciPy's array-API functions (scipy.special.softmax, log_softmax,
scipy.stats.zscore...) trace: each SciPy module's `array_namespace` (from
scipy._lib._array_api) is replaced by one that answers a traced argument with its
`__array_namespace__` (frontend.array_api) and otherwise calls SciPy's. Under SCIPY_ARRAY_API=1
SciPy's own function would ask that method too; without it, SciPy returns its NumPy wrapper,
whose `asarray` needs a concrete value. Under SCIPY_ARRAY_API=1 scipy.special's ufuncs are
wrappers choosing an implementation by namespace: for a traced argument they choose the ufunc
(`_patch_ufunc_backends`).
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import sys
from typing import Any

import numpy as np

from . import (
    scipy_dct,
    scipy_filter,
    scipy_interp,
    scipy_kde,
    scipy_linalg,
    scipy_matrices,
    scipy_measure,
    scipy_morph,
    scipy_ndimage,
    scipy_ndinterp,
    scipy_peaks,
    scipy_rank,
    scipy_rankfilt,
    scipy_regress,
    scipy_signal,
    scipy_spatial,
    scipy_special_fns,
    scipy_spectral,
    scipy_stats,
    scipy_waveforms,
)

# the module of fusejit that implements each wrapped SciPy module's functions, or the modules
# (the first that has the name) (the others, logsumexp and comb, are this module's; ndimage
# and signal both define convolve/correlate)
_BY_MODULE = {"scipy.spatial.distance": (scipy_spatial, scipy_matrices),
              "scipy.special._basic": scipy_special_fns,
              "scipy.special._spherical_bessel": scipy_special_fns,
              "scipy.linalg._special_matrices": scipy_matrices,
              "scipy.ndimage._filters": (scipy_ndimage, scipy_rankfilt),
              "scipy.ndimage._interpolation": scipy_ndinterp,
              "scipy.ndimage._morphology": scipy_morph,
              "scipy.ndimage._measurements": scipy_measure,
              "scipy.signal._signaltools": (scipy_signal, scipy_filter, scipy_rankfilt,
                                            scipy_peaks),
              "scipy.signal._peak_finding": scipy_peaks,
              "scipy.signal._polyutils": scipy_signal,
              "scipy.signal._spectral_py": scipy_spectral,
              "scipy.signal._upfirdn": scipy_signal,
              "scipy.signal._waveforms": scipy_waveforms,
              "scipy.fft._realtransforms": scipy_dct,
              "scipy.fftpack._realtransforms": scipy_dct.FFTPACK,
              "scipy.stats._stats_py": (scipy_rank, scipy_regress),
              **dict.fromkeys(("scipy.linalg._basic", "scipy.linalg._decomp",
                               "scipy.linalg._decomp_svd", "scipy.linalg._decomp_cholesky",
                               "scipy.linalg._misc", "scipy.linalg._decomp_qr",
                               "scipy.linalg._matfuncs", "scipy.linalg._decomp_lu"),
                             scipy_linalg)}

# defining module -> the functions wrapped there
WRAPPED = {"scipy.special._logsumexp": ("logsumexp",),
           "scipy.special._basic": ("comb", "polygamma", "factorial"),
           "scipy.special._spherical_bessel": ("spherical_kn",),
           "scipy.spatial.distance": ("cdist", "pdist", "squareform"),
           "scipy.linalg._special_matrices": ("toeplitz", "circulant", "hankel", "block_diag"),
           "scipy.ndimage._filters": ("correlate1d", "convolve1d", "gaussian_filter1d",
                                      "gaussian_filter", "uniform_filter1d", "uniform_filter",
                                      "sobel", "prewitt", "laplace", "correlate", "convolve",
                                      "gaussian_laplace", "gaussian_gradient_magnitude",
                                      "minimum_filter1d", "maximum_filter1d",
                                      "minimum_filter", "maximum_filter", "median_filter",
                                      "rank_filter", "percentile_filter"),
           "scipy.ndimage._interpolation": ("spline_filter1d", "spline_filter",
                                            "map_coordinates", "affine_transform", "shift",
                                            "zoom", "rotate", "geometric_transform"),
           "scipy.ndimage._morphology": ("binary_erosion", "binary_dilation", "grey_erosion",
                                         "grey_dilation"),
           "scipy.ndimage._measurements": ("sum_labels", "sum", "mean", "variance",
                                           "standard_deviation", "minimum", "maximum",
                                           "center_of_mass"),
           "scipy.signal._polyutils": ("polyfit",),
           "scipy.signal._spectral_py": ("csd",),
           "scipy.signal._upfirdn": ("upfirdn",),
           "scipy.signal._waveforms": ("sawtooth", "square", "chirp"),
           "scipy.fft._realtransforms": ("dct", "idct", "dst", "idst", "dctn", "idctn",
                                         "dstn", "idstn"),
           "scipy.fftpack._realtransforms": ("dct", "idct", "dst", "idst", "dctn", "idctn",
                                             "dstn", "idstn"),
           "scipy.signal._signaltools": ("convolve", "correlate", "lfilter", "sosfilt",
                                         "medfilt", "convolve2d", "correlate2d"),
           "scipy.signal._peak_finding": ("argrelextrema", "argrelmax", "argrelmin"),
           "scipy.stats._stats_py": ("rankdata", "linregress", "spearmanr", "iqr", "hmean",
                                     "pmean", "median_abs_deviation", "mode"),
           "scipy.linalg._basic": ("inv", "solve", "det", "solve_triangular", "lstsq", "pinv"),
           "scipy.linalg._decomp_qr": ("qr",),
           "scipy.linalg._decomp": ("eigh", "eigvalsh"),
           "scipy.linalg._decomp_svd": ("svd", "svdvals"),
           "scipy.linalg._decomp_cholesky": ("cholesky", "cho_factor", "cho_solve"),
           "scipy.linalg._misc": ("norm",),
           "scipy.linalg._matfuncs": ("expm",),
           "scipy.linalg._decomp_lu": ("lu", "lu_factor", "lu_solve")}
# the public module that re-exports a defining module's names (bound again when fusejit is
# imported after it)
PUBLIC = {"scipy.special._logsumexp": "scipy.special", "scipy.special._basic": "scipy.special",
          "scipy.special._spherical_bessel": "scipy.special",
          "scipy.linalg._special_matrices": "scipy.linalg",
          "scipy.ndimage._filters": "scipy.ndimage",
          "scipy.ndimage._interpolation": "scipy.ndimage",
          "scipy.ndimage._morphology": "scipy.ndimage",
          "scipy.ndimage._measurements": "scipy.ndimage",
          "scipy.signal._signaltools": "scipy.signal",
          "scipy.signal._peak_finding": "scipy.signal",
          "scipy.signal._spectral_py": "scipy.signal",
          "scipy.signal._upfirdn": "scipy.signal",
          "scipy.signal._waveforms": "scipy.signal",
          "scipy.fft._realtransforms": "scipy.fft",
          "scipy.fftpack._realtransforms": "scipy.fftpack",
          "scipy.stats._stats_py": "scipy.stats",
          **dict.fromkeys((m for m in _BY_MODULE if m.startswith("scipy.linalg.")),
                          "scipy.linalg")}
_ARRAY_API = "scipy._lib._array_api"  # (array_namespace is defined in a module named so)
_NAMESPACE_WRAPPERS: dict[int, Any] = {}


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """SciPy's logsumexp for a traced `a` or `b`, SciPy 1.17's algorithm: max-shifted, ties of
    the maximum counted apart (out = max + log(count) + log1p(sum_rest / count), weighted by
    `b` where given, its zeros dropping their terms), the direct log(sum(b exp(a))) where that
    is not finite; a negative sum gives NaN, or its sign with `return_sign`. Fuses like
    softmax: the reductions share one pass structure per row."""
    from . import reductions as R
    from . import tracer as T
    from . import views as V

    t = T.as_tracer(a)
    w = None if b is None else T.as_tracer(b)
    if t.dtype.kind == "c" or (w is not None and w.dtype.kind == "c"):
        raise T.UnsupportedError(f"scipy.special.logsumexp of complex values is not supported "
                                 f"by fusejit{T.where_msg()}")
    # SciPy promotes a and b together (Python scalars weakly), integers and bools to float64
    weak = (bool, int, float)
    dt = np.result_type(a if isinstance(a, weak) else t.dtype,
                        b if isinstance(b, weak) else w.dtype) if w is not None else t.dtype
    dt = dt if dt.kind == "f" else np.dtype(np.float64)
    t = t if t.dtype == dt else t.astype(dt)
    if w is not None:
        w = w if w.dtype == dt else w.astype(dt)
        shape = T.broadcast(t.shape, w.shape)
        t, w = np.broadcast_to(t, shape), np.broadcast_to(w, shape)
    if t.ndim == 0:
        t, w = t.reshape((1,)), None if w is None else w.reshape((1,))
    axes = R.axes_of(axis, t.ndim)
    kept = tuple(1 if d in axes else n for d, n in enumerate(t.shape))
    if t.size == 0:
        out = T.Tracer(T.const_node(np.full(kept, -np.inf, dt)))
        sgn = T.Tracer(T.const_node(np.full(kept, -1.0, dt)))
    else:
        out, sgn = _shifted(t, w, axes, dt.type, return_sign)
    if not keepdims:  # (a 0-d result a NumPy scalar, as SciPy's)
        index = tuple(0 if d in axes else slice(None) for d in range(t.ndim))
        out = V.basic_index(out, index)
        sgn = V.basic_index(sgn, index) if sgn is not None else None
    return (out, sgn) if return_sign else out


def _shifted(t: Any, w: Any, axes: tuple[int, ...], dt: Any, signed: bool) -> tuple[Any, Any]:
    """logsumexp's value (and sign when `signed` or `w` is given) over `axes`, kept."""
    from . import reductions as R

    inf = dt(np.inf)
    e = np.exp(t) if w is None else np.multiply(w, np.exp(t))
    direct = R.sum_(e, axes, dt, None, True)
    sgn_direct = np.sign(direct) if signed else None
    out_direct = np.log(np.abs(direct) if signed else direct)
    if w is not None:  # a zero weight drops its term, whatever a is there
        t = np.where(np.equal(w, dt(0)), -inf, t)
    a_max = R.max_(t, axes, None, True)
    ties = np.equal(t, a_max)
    m = R.sum_(ties if w is None else np.multiply(w, ties), axes, dt, None, True)
    rest = np.exp(np.subtract(np.where(ties, -inf, t), a_max))
    s = R.sum_(rest if w is None else np.multiply(w, rest), axes, dt, None, True)
    s = np.where(np.equal(s, dt(0)), s, np.divide(s, m))
    sgn = None
    if w is not None or signed:  # sign and magnitude apart: log1p and log need positives
        sgn = np.multiply(np.sign(np.add(s, dt(1))), np.sign(m))
        s = np.where(np.less(s, dt(-1)), np.subtract(np.negative(s), dt(2)), s)
        m = np.abs(m)
    out = np.add(np.add(np.log1p(s), np.log(m)), a_max)
    if sgn is not None and not signed:
        out = np.where(np.less(sgn, dt(0)), dt(np.nan), out)
    finite = np.isfinite(out)
    out = np.where(finite, out, out_direct)
    return out, (np.where(finite, sgn, sgn_direct) if signed else None)


def _traced_impl(module: str, name: str, *xs: Any) -> Any:
    """The traced function `name` (of SciPy's `module`) of the copy of fusejit whose Tracer
    is among `xs` (None when none is a Tracer). Two copies can be loaded at once (pytest
    imports a repository root that is the package under a second name); SciPy's function is
    wrapped by whichever copy's import hook ran first, and each Tracer must be traced by its
    own copy. A list or tuple argument is looked into (`map_coordinates(a, [y, x])`)."""
    for x in xs:
        if isinstance(x, (list, tuple)):
            found = _traced_impl(module, name, *x)
            if found is not None:
                return found
            continue
        cls = type(x)
        if getattr(cls, "__fusejit_tracer__", False):
            package = cls.__module__.rpartition(".")[0]
            api = sys.modules[f"{package}.scipy_api"]
            impl = getattr(api, "_BY_MODULE", {}).get(module, api)
            for owner in impl if isinstance(impl, tuple) else (impl,):
                if hasattr(owner, name):
                    return getattr(owner, name)
    return None


def _known_module(args: tuple, kwargs: dict) -> Any:
    """frontend/known.py of the fusejit copy whose Tracer is among the arguments (None when
    that copy has none)."""
    for x in (*args, *kwargs.values()):
        for e in (x if isinstance(x, (list, tuple)) else (x,)):
            cls = type(e)
            if getattr(cls, "__fusejit_tracer__", False):
                try:
                    return importlib.import_module(
                        f"{cls.__module__.rpartition('.')[0]}.known")
                except ImportError:
                    return None
    return None


# id(SciPy's function) -> (it, its wrapper): for names bound before fusejit was imported
_WRAPPERS: dict[int, tuple[Any, Any]] = {}


def replacement(value: Any) -> Any:
    """The wrapper of `value` when it is one of the SciPy functions wrapped here (a name bound
    to it before fusejit patched SciPy, e.g. `from scipy.ndimage import gaussian_filter`
    first: frontend/captures.py gives a jitted function the wrapper instead), else None."""
    entry = _WRAPPERS.get(id(value))
    return entry[1] if entry is not None and entry[0] is value else None


def _wrap(module: str, name: str, original: Any) -> Any:
    if getattr(original, "__fusejit_original__", None) is not None:
        return original

    @functools.wraps(original)
    def dispatch(*args: Any, **kwargs: Any) -> Any:
        impl = _traced_impl(module, name, *args, *kwargs.values())
        known = _known_module(args, kwargs) if impl is not None else None
        if known is not None:  # (arrays of known values, np.ones(3) made while tracing: values)
            args = tuple(known.concrete(a) for a in args)
            kwargs = {k: known.concrete(v) for k, v in kwargs.items()}
            if not any(known.holds_tracer(v) for v in (*args, *kwargs.values())):
                impl = None
        return (impl or original)(*args, **kwargs)

    dispatch.__fusejit_original__ = original  # type: ignore[attr-defined]
    _WRAPPERS[id(original)] = (original, dispatch)
    return dispatch


def _namespace_wrapper(original: Any) -> Any:
    """SciPy's array_namespace, answering a traced argument with its own namespace."""
    wrapper = _NAMESPACE_WRAPPERS.get(id(original))
    if wrapper is not None:
        return wrapper

    @functools.wraps(original)
    def array_namespace(*arrays: Any) -> Any:
        for a in arrays:
            if getattr(type(a), "__fusejit_tracer__", False):
                return a.__array_namespace__()
        return original(*arrays)

    array_namespace.__fusejit_original__ = original  # type: ignore[attr-defined]
    _NAMESPACE_WRAPPERS[id(original)] = array_namespace
    return array_namespace


def _patch_namespace(module: Any) -> None:
    fn = getattr(module, "__dict__", {}).get("array_namespace")
    if (callable(fn) and str(getattr(fn, "__module__", "")).startswith(_ARRAY_API)
            and getattr(fn, "__fusejit_original__", None) is None):
        module.array_namespace = _namespace_wrapper(fn)


def _patch_ufunc_backends(module: Any) -> None:
    """Under SCIPY_ARRAY_API=1 scipy.special's ufuncs are wrappers that pick an implementation
    for the arguments' namespace (NumPy's ufunc, a native one, a generic one, or np.asarray and
    back as a last resort): for traced arrays it is the ufunc itself, which traces through
    `__array_ufunc__` (frontend/ops_more.py's op table) exactly as without SCIPY_ARRAY_API."""
    info = getattr(module, "_FuncInfo", None)
    original = getattr(info, "_wrapper_for", None)
    if original is None or getattr(original, "__fusejit_original__", None) is not None:
        return

    def _wrapper_for(self: Any, xp: Any) -> Any:
        if getattr(xp, "__fusejit_namespace__", False):
            return self.func
        return original(self, xp)

    _wrapper_for.__fusejit_original__ = original  # type: ignore[attr-defined]
    info._wrapper_for = _wrapper_for


def _patch_writeable(module: Any) -> None:
    """array_api_extra's `at` writes in place into arrays it takes as writeable, which is every
    object with `__array_namespace__`: a traced NumPy scalar (SciPy's pearsonr updates one)
    or read-only view is not, as NumPy's scalars and read-only arrays are not (NumPy's
    setitem would raise), so `at` copies it first, as for NumPy's."""
    original = getattr(module, "is_writeable_array", None)
    if original is None or getattr(original, "__fusejit_original__", None) is not None:
        return

    @functools.wraps(original)
    def is_writeable_array(x: Any) -> bool:
        if getattr(type(x), "__fusejit_tracer__", False):
            return not (x.scalar or x.readonly or x.weak is not None)
        return original(x)

    is_writeable_array.__fusejit_original__ = original  # type: ignore[attr-defined]
    module.is_writeable_array = is_writeable_array


def _patch(module: Any) -> None:
    _patch_namespace(module)
    if module.__name__ == "scipy.interpolate._interpolate":
        scipy_interp.patch(module)
    if module.__name__.endswith("array_api_extra._lib._at"):
        _patch_writeable(module)
    if module.__name__ == scipy_stats.MODULE:
        scipy_stats.patch(module)
    if module.__name__ == scipy_kde.MODULE:
        scipy_kde.patch(module)
    if module.__name__ == "scipy.special._support_alternative_backends":
        _patch_ufunc_backends(module)
    public = sys.modules.get(PUBLIC.get(module.__name__, ""))
    for name in WRAPPED.get(module.__name__, ()):
        original = getattr(module, name, None)
        if original is None:
            continue
        wrapped = _wrap(module.__name__, name, original)
        setattr(module, name, wrapped)
        if public is not None and getattr(public, name, None) is getattr(
                wrapped, "__fusejit_original__", None):
            setattr(public, name, wrapped)


class _PostImport(importlib.abc.MetaPathFinder):
    """Patches each SciPy module right after it executes (the modules of WRAPPED before
    scipy.special binds their names)."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if not name.startswith("scipy."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_patch(module: Any) -> None:
            exec_module(module)
            _patch(module)

        loader.exec_module = exec_and_patch  # type: ignore[method-assign]
        return spec


def install() -> None:
    """Make SciPy's wrapped functions traceable (now, or when SciPy gets imported). SciPy's
    modules loaded before fusejit that bound a wrapped function under their own name
    (scipy.signal._signaltools' `from ._upfirdn import upfirdn`, for resample_poly) get the
    wrapper there too; modules loaded later bind it from the start."""
    loaded = [m for name, m in list(sys.modules.items())
              if name.startswith("scipy.") and m is not None]
    for module in loaded:
        _patch(module)
    for module in loaded:
        for attr, value in list(vars(module).items()):
            wrapper = replacement(value)
            if wrapper is not None:
                setattr(module, attr, wrapper)
    if not any(isinstance(f, _PostImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PostImport())
