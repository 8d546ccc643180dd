"""Benchmark workloads: the registry of programs every peer is timed on.

This module owns *what* is computed: for each workload its inputs (seeded), the plain NumPy
function (the specification, and what fusejit compiles), an array-API style version for the
tensor libraries (jax, torch), hand-written numexpr / numba versions, the bytes it must move and
an optional FLOP count. It imports nothing but NumPy (and SciPy's ``erf`` when present); the
peer libraries are only handed in by ``peers.py``.

To add a workload: write ``make_inputs(seed, quick)``, the NumPy function and (optionally) the
peer versions, then call ``register(Workload(...))``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

try:
    from scipy.special import erf as _scipy_erf
except ImportError:  # the benchmark must run with NumPy alone
    _scipy_erf = None

Arrays = tuple[np.ndarray, ...]
F32 = np.float32
SQRT2 = math.sqrt(2.0)  # a Python float: a weak scalar, so float32 stays float32 (NEP 50)


@dataclass(frozen=True)
class Workload:
    """One benchmark program and everything a peer needs to run it."""

    name: str
    description: str
    make_inputs: Callable[[int, bool], Arrays]  # (seed, quick) -> float32 inputs
    numpy_fn: Callable[..., Any]  # the specification; fusejit compiles exactly this
    xp_fn: Callable[..., Any] | None = None  # xp_fn(ns, *arrays): ns has sin, exp, erf, split...
    numexpr: Callable[[Any], Callable[..., Any]] | None = None  # factory(numexpr module) -> fn
    numba: Callable[[Any], Callable[..., Any]] | None = None  # factory(numba module) -> fn
    flops: Callable[[Arrays], float] | None = None  # arithmetic ops, transcendental = 1
    # FLOPs of the matrix products: set for compute-bound workloads, which are then compared to
    # a FLOP bound (these FLOPs over the measured sgemm rate) instead of the bandwidth bound.
    gemm_flops: Callable[[Arrays], float] | None = None
    latency: bool = False  # report time per call in microseconds, no bandwidth ratio
    requires: tuple[str, ...] = ()  # modules the NumPy function needs (e.g. "scipy")
    not_applicable: dict[str, str] = field(default_factory=dict)  # peer -> reason
    mutates: bool = False  # updates its inputs in place: every peer gets its own copies
    # what fusejit runs instead of jit(numpy_fn) (e.g. a fusejit.grad of the function whose
    # gradient numpy_fn writes out by hand); None: jit(numpy_fn)
    fusejit_fn: Callable[..., Any] | None = None
    # a peer's own version, by peer name: factory(module, numpy inputs) -> zero-argument call
    # that runs one complete, synchronised evaluation (conversion and state set up outside the
    # timed call); used instead of xp_fn where a library's own API differs (jax.value_and_grad,
    # torch autograd)
    own: dict[str, Callable[[Any, Arrays], Callable[[], Any]]] = field(default_factory=dict)

    def missing_requirement(self) -> str | None:
        if "scipy" in self.requires and _scipy_erf is None:
            return "needs scipy (scipy.special.erf)"
        return None


def bytes_moved(inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> int:
    """Compulsory traffic: every input read once, every output written once (no write-allocate)."""
    return sum(a.nbytes for a in inputs) + sum(o.nbytes for o in outputs)


REGISTRY: dict[str, Workload] = {}


def register(wl: Workload) -> Workload:
    if wl.name in REGISTRY:
        raise ValueError(f"workload {wl.name!r} registered twice")
    REGISTRY[wl.name] = wl
    return wl


NUMPY_NS = SimpleNamespace(
    sin=np.sin, tanh=np.tanh, exp=np.exp, log=np.log, sqrt=np.sqrt, erf=_scipy_erf, split=np.split,
    rmax=lambda a, axis: np.max(a, axis=axis, keepdims=True),
    rsum=lambda a, axis: np.sum(a, axis=axis, keepdims=True),
    rmean=lambda a, axis: np.mean(a, axis=axis, keepdims=True), total=np.sum,
    relu=lambda a: np.maximum(a, 0),
)


def make_rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def normal(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
    return rng.standard_normal(shape, dtype=F32) * F32(scale)


def _uniform(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    return (F32(lo) + rng.random(n, dtype=F32) * F32(hi - lo)).astype(F32)


# --- sinmul_bcast: np.sin(x * y), x [N, M], y [1, M] -------------------------------------------


def _sinmul(ns: Any, x: Any, y: Any) -> Any:
    return ns.sin(x * y)


def sinmul_bcast(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _sinmul(NUMPY_NS, x, y)


def _sinmul_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n, m = (256, 1024) if quick else (4096, 4096)
    return normal(rng, (n, m)), normal(rng, (1, m))


def _sinmul_numexpr(ne: Any) -> Callable[..., Any]:
    return lambda x, y: ne.evaluate("sin(x * y)", local_dict={"x": x, "y": y})


def _sinmul_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        n, m = x.shape
        out = np.empty((n, m), np.float32)
        for i in nb.prange(n):
            for j in range(m):
                out[i, j] = math.sin(x[i, j] * y[0, j])
        return out

    return f


register(Workload(
    name="sinmul_bcast",
    description="np.sin(x * y), x [4096,4096], y [1,4096] (row broadcast)",
    make_inputs=_sinmul_inputs,
    numpy_fn=sinmul_bcast,
    xp_fn=_sinmul,
    numexpr=_sinmul_numexpr,
    numba=_sinmul_numba,
    flops=lambda a: 2.0 * a[0].size,
))


# --- gelu_tanh: tanh approximation of GELU on 2^24 elements ------------------------------------


def _gelu(ns: Any, x: Any) -> Any:
    return 0.5 * x * (1 + ns.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    return _gelu(NUMPY_NS, x)


def _gelu_inputs(seed: int, quick: bool) -> Arrays:
    return (normal(make_rng(seed), (1 << (16 if quick else 24),), 3.0),)


def _gelu_numexpr(ne: Any) -> Callable[..., Any]:
    consts = {"h": F32(0.5), "one": F32(1.0), "c0": F32(0.7978845608), "c1": F32(0.044715)}
    expr = "h * x * (one + tanh(c0 * (x + c1 * x * x * x)))"
    return lambda x: ne.evaluate(expr, local_dict={"x": x, **consts})


def _gelu_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(x: np.ndarray) -> np.ndarray:
        h, one = np.float32(0.5), np.float32(1.0)
        c0, c1 = np.float32(0.7978845608), np.float32(0.044715)
        out = np.empty_like(x)
        for i in nb.prange(x.size):
            v = x[i]
            out[i] = h * v * (one + math.tanh(c0 * (v + c1 * v * v * v)))
        return out

    return f


register(Workload(
    name="gelu_tanh",
    description="0.5*x*(1+tanh(0.7978845608*(x+0.044715*x^3))), 2^24 elements",
    make_inputs=_gelu_inputs,
    numpy_fn=gelu_tanh,
    xp_fn=_gelu,
    numexpr=_gelu_numexpr,
    numba=_gelu_numba,
    flops=lambda a: 9.0 * a[0].size,
))


# --- gelu_pow: the same GELU written as a NumPy user writes it, with `x ** 3` ---------------------
# NumPy computes x ** 3 with pow (no fast path for 3), so fusejit must give pow's bits: it must not
# become a scalar pow call per element either (issue 16: 28x the bandwidth bound on AVX-512).


def _gelu_pow(ns: Any, x: Any) -> Any:
    return 0.5 * x * (1 + ns.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def gelu_pow(x: np.ndarray) -> np.ndarray:
    return _gelu_pow(NUMPY_NS, x)


def _gelu_pow_numexpr(ne: Any) -> Callable[..., Any]:
    consts = {"h": F32(0.5), "one": F32(1.0), "c0": F32(0.7978845608), "c1": F32(0.044715)}
    expr = "h * x * (one + tanh(c0 * (x + c1 * x ** 3)))"
    return lambda x: ne.evaluate(expr, local_dict={"x": x, **consts})


def _gelu_pow_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(x: np.ndarray) -> np.ndarray:
        h, one = np.float32(0.5), np.float32(1.0)
        c0, c1 = np.float32(0.7978845608), np.float32(0.044715)
        out = np.empty_like(x)
        for i in nb.prange(x.size):
            v = x[i]
            out[i] = h * v * (one + math.tanh(c0 * (v + c1 * v ** 3)))
        return out

    return f


register(Workload(
    name="gelu_pow",
    description="gelu_tanh written with x ** 3 (NumPy: pow), 2^24 elements",
    make_inputs=_gelu_inputs,
    numpy_fn=gelu_pow,
    xp_fn=_gelu_pow,
    numexpr=_gelu_pow_numexpr,
    numba=_gelu_pow_numba,
    flops=lambda a: 9.0 * a[0].size,
))


# --- black_scholes: European call and put, 5 inputs of 2^22 -------------------------------------


def _black_scholes(ns: Any, S: Any, K: Any, T: Any, r: Any, sigma: Any) -> tuple[Any, Any]:
    def cdf(z: Any) -> Any:
        return 0.5 * (1 + ns.erf(z / SQRT2))

    sig_sqrt_t = sigma * ns.sqrt(T)
    d1 = (ns.log(S / K) + (r + 0.5 * sigma * sigma) * T) / sig_sqrt_t
    d2 = d1 - sig_sqrt_t
    k_disc = K * ns.exp(-r * T)
    call = S * cdf(d1) - k_disc * cdf(d2)
    put = k_disc * cdf(-d2) - S * cdf(-d1)
    return call, put


def black_scholes(S: np.ndarray, K: np.ndarray, T: np.ndarray, r: np.ndarray,
                  sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _black_scholes(NUMPY_NS, S, K, T, r, sigma)


def _bs_inputs(seed: int, quick: bool) -> Arrays:
    rng, n = make_rng(seed), 1 << (14 if quick else 22)
    S = _uniform(rng, n, 10.0, 200.0)
    K = (S * _uniform(rng, n, 0.7, 1.3)).astype(F32)  # strikes around the money
    T = _uniform(rng, n, 0.05, 2.0)  # years
    r = _uniform(rng, n, 0.0, 0.08)
    sigma = _uniform(rng, n, 0.1, 0.6)
    return S, K, T, r, sigma


def _bs_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(S: np.ndarray, K: np.ndarray, T: np.ndarray, r: np.ndarray,
          sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h, one, inv_sqrt2 = np.float32(0.5), np.float32(1.0), np.float32(1.0 / math.sqrt(2.0))
        call, put = np.empty_like(S), np.empty_like(S)
        for i in nb.prange(S.size):
            s, k, t, rr, v = S[i], K[i], T[i], r[i], sigma[i]
            vst = v * math.sqrt(t)
            d1 = (math.log(s / k) + (rr + h * v * v) * t) / vst
            d2 = d1 - vst
            kd = k * math.exp(-rr * t)
            call[i] = s * (h * (one + math.erf(d1 * inv_sqrt2))) - kd * (
                h * (one + math.erf(d2 * inv_sqrt2)))
            put[i] = kd * (h * (one + math.erf(-d2 * inv_sqrt2))) - s * (
                h * (one + math.erf(-d1 * inv_sqrt2)))
        return call, put

    return f


register(Workload(
    name="black_scholes",
    description="Black-Scholes call+put, 5 inputs of 2^22, cdf via erf",
    make_inputs=_bs_inputs,
    numpy_fn=black_scholes,
    xp_fn=_black_scholes,
    numba=_bs_numba,
    flops=lambda a: 40.0 * a[0].size,
    requires=("scipy",),
    not_applicable={"numexpr": "numexpr has no erf"},
))


# --- lstm_cell: gates from one [B, 4H] pre-activation, c [B, H] ----------------------------------


def _lstm(ns: Any, concat: Any, c: Any) -> tuple[Any, Any]:
    i, j, f, o = ns.split(concat, 4, axis=1)

    def sig(z: Any) -> Any:
        return 1 / (1 + ns.exp(-z))

    new_c = c * sig(f + 1.0) + sig(i) * ns.tanh(j)
    return new_c, ns.tanh(new_c) * sig(o)


def lstm_cell(concat: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _lstm(NUMPY_NS, concat, c)


def _lstm_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    b, h = (64, 256) if quick else (1024, 1024)
    return normal(rng, (b, 4 * h)), normal(rng, (b, h))


def _lstm_numexpr(ne: Any) -> Callable[..., Any]:
    one = F32(1.0)
    e_c = "c * (one / (one + exp(-(f + one)))) + (one / (one + exp(-i))) * tanh(j)"
    e_h = "tanh(nc) * (one / (one + exp(-o)))"

    def f(concat: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        i, j, fg, o = np.split(concat, 4, axis=1)
        nc = ne.evaluate(e_c, local_dict={"c": c, "f": fg, "i": i, "j": j, "one": one})
        return nc, ne.evaluate(e_h, local_dict={"nc": nc, "o": o, "one": one})

    return f


def _lstm_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(concat: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        one = np.float32(1.0)
        b, hid = c.shape
        new_c, new_h = np.empty_like(c), np.empty_like(c)
        for r in nb.prange(b):
            for k in range(hid):
                gi, gj = concat[r, k], concat[r, hid + k]
                gf, go = concat[r, 2 * hid + k], concat[r, 3 * hid + k]
                nc = c[r, k] * (one / (one + math.exp(-(gf + one)))) + (
                    one / (one + math.exp(-gi))) * math.tanh(gj)
                new_c[r, k] = nc
                new_h[r, k] = math.tanh(nc) * (one / (one + math.exp(-go)))
        return new_c, new_h

    return f


register(Workload(
    name="lstm_cell",
    description="LSTM cell pointwise part, concat [1024,4096], c [1024,1024]",
    make_inputs=_lstm_inputs,
    numpy_fn=lstm_cell,
    xp_fn=_lstm,
    numexpr=_lstm_numexpr,
    numba=_lstm_numba,
    flops=lambda a: 20.0 * a[1].size,
))


# --- dispatch: per-call overhead on 16 elements --------------------------------------------------


def _dispatch(ns: Any, x: Any, y: Any) -> Any:
    return x * y + 1


def dispatch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _dispatch(NUMPY_NS, x, y)


def _dispatch_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    return normal(rng, (16,)), normal(rng, (16,))


def _dispatch_numexpr(ne: Any) -> Callable[..., Any]:
    one = F32(1.0)
    return lambda x, y: ne.evaluate("x * y + one", local_dict={"x": x, "y": y, "one": one})


def _dispatch_numba(nb: Any) -> Callable[..., Any]:
    @nb.njit(parallel=True, fastmath=False)
    def f(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        out = np.empty_like(x)
        for i in nb.prange(x.size):
            out[i] = x[i] * y[i] + np.float32(1.0)
        return out

    return f


register(Workload(
    name="dispatch",
    description="x * y + 1 on 16 float32 elements: time per call",
    make_inputs=_dispatch_inputs,
    numpy_fn=dispatch,
    xp_fn=_dispatch,
    numexpr=_dispatch_numexpr,
    numba=_dispatch_numba,
    flops=lambda a: 2.0 * a[0].size,
    latency=True,
))

# Row-wise and reduction workloads (issue 3) live in their own module and register on import.
if __package__:
    from . import workloads_cols, workloads_gather, workloads_rows  # noqa: E402,F401
else:  # run as a script from benchmarks/
    import workloads_cols  # type: ignore[no-redef]  # noqa: E402,F401
    import workloads_gather  # type: ignore[no-redef]  # noqa: E402,F401
    import workloads_rows  # type: ignore[no-redef]  # noqa: E402,F401
if __package__:
    from . import (  # noqa: E402,F401
        workloads_complex,
        workloads_fft,
        workloads_grad,
        workloads_linalg,
        workloads_scatter,
        workloads_sort,
        workloads_state,
        workloads_train,
    )
else:
    import workloads_complex  # type: ignore[no-redef]  # noqa: E402,F401
    import workloads_fft  # type: ignore[no-redef]  # noqa: E402,F401
    import workloads_grad  # type: ignore[no-redef]  # noqa: E402,F401
    import workloads_linalg  # type: ignore[no-redef]  # noqa: E402,F401
    import workloads_scatter  # type: ignore[no-redef]  # noqa: E402,F401
    import workloads_sort  # type: ignore[no-redef]  # noqa: E402,F401
    import workloads_state  # type: ignore[no-redef]  # noqa: E402,F401
    import workloads_train  # type: ignore[no-redef]  # noqa: E402,F401
