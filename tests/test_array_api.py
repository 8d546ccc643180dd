"""The Array API namespace of traced arrays (frontend/array_api.py) against `array-api-strict`,
the standard's reference implementation, as the oracle: every function of its namespace (and
of `linalg` and `fft`) is called the same way on a traced array, `x.__array_namespace__()`, and on
array_api_strict arrays, and the results compared (values, dtype, shape). What fusejit does
not compile must raise a clear UnsupportedError and is listed in NOT_COVERED (and the README).
array-api-strict is a test dependency (pyproject's `test` extra); without it the module skips.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit.errors import UnsupportedError

xps = pytest.importorskip("array_api_strict")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

RNG = np.random.default_rng(11)
F = RNG.standard_normal((3, 4))  # float64
G = RNG.standard_normal((3, 4)).astype(np.float32)
U = RNG.uniform(0.1, 0.9, (3, 4))  # in (0, 1): every domain
IN = RNG.integers(-20, 20, (3, 4))  # int64
J = RNG.integers(1, 7, (3, 4)).astype(np.int32)
B = F > 0
S = RNG.standard_normal((4, 4))
SPD = S @ S.T + 4 * np.eye(4)
V = RNG.standard_normal(4)
SORTED = np.sort(RNG.standard_normal(6))

# name -> (f(xp, *arrays), arrays); `name` is the namespace function the call exercises
CASES: dict[str, tuple[Callable[..., Any], tuple]] = {}
for _n in ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh",
           "exp", "expm1", "floor", "isfinite", "isinf", "isnan", "log", "log10", "log1p",
           "log2", "logical_not", "negative", "positive", "reciprocal", "round", "sign",
           "signbit", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc", "real",
           "conj"):
    _arg = (1 + U,) if _n == "acosh" else (B,) if _n == "logical_not" else (U,)
    CASES[_n] = ((lambda n: lambda xp, a: getattr(xp, n)(a))(_n), _arg)
for _n in ("add", "atan2", "copysign", "divide", "equal", "floor_divide", "greater",
           "greater_equal", "hypot", "less", "less_equal", "logaddexp", "maximum", "minimum",
           "multiply", "nextafter", "not_equal", "pow", "remainder", "subtract"):
    CASES[_n] = ((lambda n: lambda xp, a, b: getattr(xp, n)(a, b))(_n), (F, U))
for _n in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift"):
    CASES[_n] = ((lambda n: lambda xp, a, b: getattr(xp, n)(a, b))(_n), (IN, J.astype(np.int64)))
for _n in ("logical_and", "logical_or", "logical_xor"):
    CASES[_n] = ((lambda n: lambda xp, a, b: getattr(xp, n)(a, b))(_n), (B, F < 0.5))
CASES.update({
    "bitwise_invert": (lambda xp, a: xp.bitwise_invert(a), (IN,)),
    "clip": (lambda xp, a: xp.clip(a, min=-0.5, max=0.5), (F,)),
    "all": (lambda xp, a: xp.all(a, axis=1), (B,)),
    "any": (lambda xp, a: xp.any(a, axis=0, keepdims=True), (B,)),
    "argmax": (lambda xp, a: xp.argmax(a, axis=1), (F,)),
    "argmin": (lambda xp, a: xp.argmin(a), (F,)),
    "count_nonzero": (lambda xp, a: xp.count_nonzero(a, axis=1), (B,)),
    "max": (lambda xp, a: xp.max(a, axis=0), (F,)),
    "min": (lambda xp, a: xp.min(a, axis=(0, 1), keepdims=True), (F,)),
    "mean": (lambda xp, a: xp.mean(a, axis=1), (G,)),
    "prod": (lambda xp, a: xp.prod(a, axis=0), (J,)),
    "sum": (lambda xp, a: xp.sum(a, axis=1), (J,)),
    "std": (lambda xp, a: xp.std(a, axis=1, correction=1), (F,)),
    "var": (lambda xp, a: xp.var(a, correction=0.5), (F,)),
    "cumulative_sum": (lambda xp, a: xp.cumulative_sum(a, axis=1, include_initial=True), (F,)),
    "cumulative_prod": (lambda xp, a: xp.cumulative_prod(a, axis=0), (J,)),
    "diff": (lambda xp, a: xp.diff(a, axis=0, n=1), (F,)),
    "where": (lambda xp, a, b: xp.where(a > 0, a, b), (F, U)),
    "astype": (lambda xp, a: xp.astype(a, xp.int32), (F * 10,)),
    "asarray": (lambda xp, a: xp.asarray(a, dtype=xp.float32) + 1, (F,)),
    "broadcast_arrays": (lambda xp, a, b: xp.broadcast_arrays(a, b[:1, :])[1], (F, U)),
    "broadcast_to": (lambda xp, a: xp.broadcast_to(a[:1, :], (5, 4)), (F,)),
    "concat": (lambda xp, a, b: xp.concat([a, b], axis=1), (F, U)),
    "expand_dims": (lambda xp, a: xp.expand_dims(a, axis=1), (F,)),
    "flip": (lambda xp, a: xp.flip(a, axis=1), (F,)),
    "moveaxis": (lambda xp, a: xp.moveaxis(a, 0, 1), (F,)),
    "permute_dims": (lambda xp, a: xp.permute_dims(a, (1, 0)), (F,)),
    "repeat": (lambda xp, a: xp.repeat(a, 2, axis=0), (F,)),
    "reshape": (lambda xp, a: xp.reshape(a, (2, 6)), (F,)),
    "roll": (lambda xp, a: xp.roll(a, 2, axis=1), (F,)),
    "squeeze": (lambda xp, a: xp.squeeze(a[:1, :], axis=0), (F,)),
    "stack": (lambda xp, a, b: xp.stack([a, b], axis=1), (F, U)),
    "tile": (lambda xp, a: xp.tile(a, (2, 1)), (F,)),
    "unstack": (lambda xp, a: xp.unstack(a, axis=1)[2], (F,)),
    "take": (lambda xp, a: xp.take(a, xp.asarray([2, 0]), axis=1), (F,)),
    "take_along_axis": (lambda xp, a, i: xp.take_along_axis(a, i, axis=1), (F, J % 4)),
    "matmul": (lambda xp, a, b: xp.matmul(a, b), (F, S)),
    "matrix_transpose": (lambda xp, a: xp.matrix_transpose(a), (F,)),
    "tensordot": (lambda xp, a, b: xp.tensordot(a, b, axes=1), (F, S)),
    "vecdot": (lambda xp, a, b: xp.vecdot(a, b, axis=-2), (F, U)),
    "tril": (lambda xp, a: xp.tril(a, k=1), (F,)),
    "triu": (lambda xp, a: xp.triu(a), (F,)),
    "zeros_like": (lambda xp, a: xp.zeros_like(a) + a, (F,)),
    "ones_like": (lambda xp, a: xp.ones_like(a, dtype=xp.int32), (F,)),
    "empty_like": (lambda xp, a: xp.empty_like(a).shape, (F,)),
    "full_like": (lambda xp, a: xp.full_like(a, 2.5), (F,)),
    "full": (lambda xp, a: xp.full((2, 3), 1.5) + xp.sum(a), (F,)),
    "zeros": (lambda xp, a: xp.zeros((4,), dtype=xp.float32) + a[0, :], (F,)),
    "ones": (lambda xp, a: xp.ones((3, 4)) * a, (F,)),
    "empty": (lambda xp, a: xp.empty((2,)).shape, (F,)),
    "eye": (lambda xp, a: xp.eye(4, k=1) @ a, (S,)),
    "arange": (lambda xp, a: xp.arange(4, dtype=xp.float64) * a, (F,)),
    "linspace": (lambda xp, a: xp.linspace(a[0, 0], a[0, 1], 5), (F,)),
    "meshgrid": (lambda xp, a, b: xp.meshgrid(a, b, indexing="ij")[0], (V, SORTED)),
    "searchsorted": (lambda xp, a: xp.searchsorted(xp.asarray(SORTED), a), (F,)),
    "isin": (lambda xp, a, b: xp.isin(a, b), (J, IN[:, :2])),
    "result_type": (lambda xp, a: xp.zeros(2, dtype=xp.result_type(a, xp.int64)), (J,)),
    "can_cast": (lambda xp, a: xp.asarray(xp.can_cast(a.dtype, xp.int8)), (J,)),
    "isdtype": (lambda xp, a: xp.asarray(xp.isdtype(a.dtype, "real floating")), (F,)),
    "finfo": (lambda xp, a: a * xp.finfo(a.dtype).eps, (G,)),
    "iinfo": (lambda xp, a: xp.minimum(a, xp.iinfo(a.dtype).max), (J,)),
})
LINALG: dict[str, tuple[Callable[..., Any], tuple]] = {
    "cholesky": (lambda xp, a: xp.linalg.cholesky(a), (SPD,)),
    "cross": (lambda xp, a, b: xp.linalg.cross(a[:, :3], b[:, :3]), (F, U)),
    "det": (lambda xp, a: xp.linalg.det(a), (S,)),
    "diagonal": (lambda xp, a: xp.linalg.diagonal(a, offset=1), (F,)),
    "eigh": (lambda xp, a: xp.linalg.eigh(a).eigenvalues, (SPD,)),
    "eigvalsh": (lambda xp, a: xp.linalg.eigvalsh(a), (SPD,)),
    "inv": (lambda xp, a: xp.linalg.inv(a), (S,)),
    "matmul": (lambda xp, a, b: xp.linalg.matmul(a, b), (F, S)),
    "matrix_norm": (lambda xp, a: xp.linalg.matrix_norm(a, ord="fro"), (F,)),
    "matrix_power": (lambda xp, a: xp.linalg.matrix_power(a, 3), (S,)),
    "matrix_transpose": (lambda xp, a: xp.linalg.matrix_transpose(a), (F,)),
    "outer": (lambda xp, a, b: xp.linalg.outer(a, b), (V, SORTED)),
    "slogdet": (lambda xp, a: xp.linalg.slogdet(a).logabsdet, (S,)),
    "solve": (lambda xp, a, b: xp.linalg.solve(a, b), (S, S)),
    "tensordot": (lambda xp, a, b: xp.linalg.tensordot(a, b, axes=2), (F, U)),
    "trace": (lambda xp, a: xp.linalg.trace(a), (S,)),
    "vecdot": (lambda xp, a, b: xp.linalg.vecdot(a, b), (F, U)),
    "vector_norm": (lambda xp, a: xp.linalg.vector_norm(a, axis=1, ord=3), (F,)),
}
CASES.update({f"linalg.{k}": v for k, v in LINALG.items()})
CASES.update({
    "fft.fftshift": (lambda xp, a: xp.fft.fftshift(a), (F,)),
    "fft.ifftshift": (lambda xp, a: xp.fft.ifftshift(a, axes=1), (F,)),
    "fft.fftfreq": (lambda xp, a: xp.fft.fftfreq(4, d=0.5) * a, (F,)),
    "fft.rfftfreq": (lambda xp, a: xp.fft.rfftfreq(6) + a[0, 0], (F,)),
    "argsort": (lambda xp, a: xp.argsort(a, axis=1), (F,)),
    "sort": (lambda xp, a: xp.sort(a, axis=1), (F,)),
    "imag": (lambda xp, a: xp.imag(xp.astype(a, xp.complex128) * 1j), (F,)),
    "linalg.matrix_rank": (lambda xp, a: xp.linalg.matrix_rank(a), (S,)),
    "linalg.pinv": (lambda xp, a: xp.linalg.pinv(a), (S,)),
    "linalg.svd": (lambda xp, a: xp.linalg.svd(a).S, (S,)),
    "linalg.svdvals": (lambda xp, a: xp.linalg.svdvals(a), (S,)),
    "linalg.qr": (lambda xp, a: xp.linalg.qr(a).R, (S,)),
    # (the inverse has the array's shape; the unique values' number is the data's: the
    # functions returning them are NOT_COVERED below)
    "unique_inverse": (lambda xp, a: xp.unique_inverse(a).inverse_indices, (J,)),
})

# What fusejit does not compile: each raises a clear UnsupportedError (checked below).
NOT_COVERED = {
    "nonzero": (lambda xp, a: xp.nonzero(a)[0], (B,)),
    "unique_values": (lambda xp, a: xp.unique_values(a), (J,)),
    "unique_counts": (lambda xp, a: xp.unique_counts(a).counts, (J,)),
    "unique_all": (lambda xp, a: xp.unique_all(a).values, (J,)),
    "linalg.eig": (lambda xp, a: xp.linalg.eig(a).eigenvalues, (S,)),
    "linalg.eigvals": (lambda xp, a: xp.linalg.eigvals(a), (S,)),
}
# the fft extension's transforms (frontend/fft.py)
CASES.update({
    **{f"fft.{n}": ((lambda m: lambda xp, a: getattr(xp.fft, m)(a))(n), (F,))
       for n in ("rfft", "rfftn", "ihfft")},
    **{f"fft.{n}": ((lambda m: lambda xp, a: getattr(xp.fft, m)(
        xp.astype(a, xp.complex128)))(n), (F,))
       for n in ("fft", "ifft", "fftn", "ifftn", "irfft", "irfftn", "hfft")},
})
# Not functions of arrays, or outside what a compiled function can return
NOT_CALLED = {"from_dlpack", "broadcast_shapes", "ArrayAPIStrictFlags", "Device",
              "ModuleType", "get_array_api_strict_flags", "set_array_api_strict_flags",
              "reset_array_api_strict_flags"}
CONSTANTS = {"e", "inf", "nan", "pi", "newaxis", "bool", "int8", "int16", "int32", "int64",
             "uint8", "uint16", "uint32", "uint64", "float32", "float64", "complex64",
             "complex128"}


def _strict(f: Callable[..., Any], arrays: tuple) -> Any:
    out = f(xps, *(xps.asarray(a) for a in arrays))
    if isinstance(out, tuple):
        return out
    return np.asarray(out)


def _traced(f: Callable[..., Any], arrays: tuple) -> Any:
    if len(arrays) == 1:
        return fusejit.jit(lambda a: f(a.__array_namespace__(), a))(*arrays)
    return fusejit.jit(lambda a, b: f(a.__array_namespace__(), a, b))(*arrays)


@pytest.mark.parametrize("name", sorted(CASES))
def test_namespace_against_array_api_strict(name: str) -> None:
    f, arrays = CASES[name]
    want = _strict(f, arrays)
    got = _traced(f, arrays)
    if isinstance(want, tuple):  # a shape
        assert tuple(got) == want
        return
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    # (np.linalg's factorisations agree within float tolerance: zeros of an exact result may
    # be rounding noise in one backend's and exact in another's, e.g. the CUDA kernels')
    # (and the FFTs' errors are relative to the transform's norm, not to each element)
    atol = (1e-13 if want.dtype in (np.float64, np.complex128) else 1e-6) if name.startswith(
        ("linalg.", "fft.")) else 0.0
    assert_same(got, want, rtol=1e-12 if want.dtype == np.float64 else 1e-5, atol=atol)


@pytest.mark.parametrize("name", sorted(NOT_COVERED))
def test_not_covered_raise_clearly(name: str) -> None:
    f, arrays = NOT_COVERED[name]
    _strict(f, arrays)  # the call is right: array-api-strict computes it
    with pytest.raises(UnsupportedError, match="test_array_api.py"):
        _traced(f, arrays)


def test_every_function_of_the_standard_is_tested() -> None:
    """Each public name of array-api-strict's namespace (and linalg's functions) is a CASE, a
    NOT_COVERED entry, a constant/dtype or a non-array utility, and exists in ours."""
    ns = fusejit.frontend.array_api.NAMESPACE
    names = {n for n in dir(xps) if not n.startswith("_")}
    linalg = {f"linalg.{n}" for n in dir(xps.linalg) if not n.startswith("_") and n[0].islower()
              and n not in ("normalize_axis_tuple", "np", "numpy", "partial", "finfo",
                            "requires_api_version", "requires_extension", "reshape", "conj",
                            "get_array_api_strict_flags", "complex64", "complex128")}
    fft = {f"fft.{n}" for n in dir(xps.fft) if not n.startswith("_") and n[0].islower()
           and n not in ("astype", "complex64", "float32", "np", "requires_extension",
                         "device_supports_dtype")}
    linalg |= fft
    missing = (names | linalg) - set(CASES) - set(NOT_COVERED) - NOT_CALLED - CONSTANTS
    assert not missing, f"untested namespace functions: {sorted(missing)}"
    for n in (names - NOT_CALLED - {"ArrayAPIStrictFlags"}) | linalg:
        obj = ns
        for part in n.split("."):
            obj = getattr(obj, part)


def test_namespace_attributes() -> None:
    def f(a):
        xp = a.__array_namespace__(api_version="2023.12")
        assert a.device == "cpu"
        return xp.matrix_transpose(a.to_device("cpu")) + a.mT
    assert_same(fusejit.jit(f)(F), 2 * F.T)
    with pytest.raises(ValueError):
        fusejit.jit(lambda a: a.__array_namespace__(api_version="1999.01"))(F)


_SCIPY_SCRIPT = """
import numpy as np, fusejit, scipy.special as sp, scipy.stats as st, warnings
from scipy._lib._array_api import SCIPY_ARRAY_API
assert SCIPY_ARRAY_API
warnings.simplefilter("ignore")
x = np.random.default_rng(0).uniform(0.1, 0.9, (5, 7))
calls = [lambda a: sp.xlogy(a, a[::-1]), lambda a: sp.entr(a), lambda a: sp.erf(a),
         lambda a: sp.ndtr(a), lambda a: sp.logit(a), lambda a: sp.gammaln(a),
         lambda a: sp.digamma(a), lambda a: sp.i0e(a), lambda a: sp.i1(a),
         lambda a: sp.rel_entr(a, a[::-1]), lambda a: sp.expit(a), lambda a: sp.log_ndtr(a),
         lambda a: sp.ndtri(a), lambda a: sp.expm1(a), lambda a: sp.erfinv(a),
         lambda a: sp.logsumexp(a, axis=1), lambda a: sp.softmax(a, axis=0),
         lambda a: sp.log_softmax(a, axis=1), lambda a: st.zscore(a, axis=1),
         lambda a: st.zmap(a, a[:2]), lambda a: st.sem(a, axis=1),
         lambda a: st.gmean(a, axis=1), lambda a: st.skew(a, axis=1),
         lambda a: st.kurtosis(a, axis=1), lambda a: st.moment(a, 3, axis=1),
         lambda a: st.entropy(a, axis=1)]
for f in calls:
    for dtype in (np.float64, np.float32):
        xx = x.astype(dtype)
        got, want = fusejit.jit(f)(xx), f(xx)
        assert np.asarray(got).dtype == np.asarray(want).dtype, (got.dtype, want.dtype)
        # float32: SciPy and fusejit sum in different orders (x - mean cancels)
        np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == np.float64 else 1e-5,
                                   atol=1e-15 if dtype == np.float64 else 1e-6)


def hand(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


x32 = np.ones((64, 32), np.float32)
ops = [[n.op for n in fusejit.jit(f).explain(x32).optimised.nodes()]
       for f in (hand, lambda a: sp.softmax(a, axis=1))]
assert ops[0] == ops[1], ops
print("ok")
"""


def test_scipy_under_scipy_array_api_subprocess() -> None:
    """SCIPY_ARRAY_API=1 (read when SciPy is imported, so a fresh interpreter): scipy.special's
    ufuncs (wrappers choosing by namespace there), its array functions and scipy.stats's trace
    and match SciPy; softmax is the hand-written softmax's graph (so the same kernel)."""
    import os
    import subprocess
    import sys

    from conftest import subprocess_env

    env = subprocess_env(SCIPY_ARRAY_API="1")
    out = subprocess.run([sys.executable, "-c", _SCIPY_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=600, cwd=os.path.dirname(__file__))
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")


@pytest.mark.parametrize("name", ["zmap", "sem", "gmean", "skew", "kurtosis", "moment",
                                  "entropy", "zscore"])
def test_scipy_stats_without_scipy_array_api(name: str) -> None:
    """The same scipy.stats functions in this process (SciPy's default mode)."""
    import scipy.stats as st

    calls = {"zmap": lambda a: st.zmap(a, a[:2]), "sem": lambda a: st.sem(a, axis=1),
             "gmean": lambda a: st.gmean(a, axis=1), "skew": lambda a: st.skew(a, axis=1),
             "kurtosis": lambda a: st.kurtosis(a, axis=0),
             "moment": lambda a: st.moment(a, 3, axis=1),
             "entropy": lambda a: st.entropy(a, axis=1),
             "zscore": lambda a: st.zscore(a, axis=None)}
    f = calls[name]
    assert_same(fusejit.jit(f)(U), f(U), rtol=1e-12)
