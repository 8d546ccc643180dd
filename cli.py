"""The command line: `python -m fusejit demo` compiles example functions and reports speed
against NumPy and what was fused; `export` compiles a function ahead of time; `cache
info|list|clear` manages the kernel cache; `profile script.py` profiles a script's kernels."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def _lstm_cell(concat, c):
    i, j, f, o = np.split(concat, 4, axis=1)
    sig = lambda z: 1 / (1 + np.exp(-z))
    new_c = c * sig(f + 1.0) + sig(i) * np.tanh(j)
    return new_c, np.tanh(new_c) * sig(o)


def _sinmul_bcast(x, y):
    return np.sin(x * y)


def _black_scholes(s, k, t, r, sigma):
    from scipy.special import erf

    cdf = lambda z: 0.5 * (1 + erf(z / np.float32(np.sqrt(2))))
    sq = sigma * np.sqrt(t)
    d1 = (np.log(s / k) + (r + 0.5 * sigma * sigma) * t) / sq
    d2 = d1 - sq
    disc = k * np.exp(-r * t)
    return s * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - s * cdf(-d1)


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _layernorm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def _mlp(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def _embedding(table, tokens, pos):
    return table[tokens] * 16.0 + pos


def _adagrad(w, g, cache, lr=0.01, eps=1e-8):
    cache += g * g
    w -= lr * g / (np.sqrt(cache) + eps)


def _masked_mse(p, y, valid):
    return ((p - y)[valid] ** 2).mean()


MUTATES = frozenset({"adagrad"})  # updates its arguments: each run gets fresh copies


def _examples(scale: int) -> list[tuple[str, Callable[..., Any], list[np.ndarray]]]:
    rng = np.random.default_rng(0)
    f32 = np.float32

    def u(*shape: int, lo: float = -3, hi: float = 3) -> np.ndarray:
        return rng.uniform(lo, hi, shape).astype(f32)

    n = 1 << (22 - scale)
    side = 4096 >> scale
    return [
        ("gelu", _gelu, [u(4 * n)]),
        ("lstm_cell", _lstm_cell, [u(side // 4, side), u(side // 4, side // 4)]),
        ("sinmul_bcast", _sinmul_bcast, [u(side, side), u(1, side)]),
        ("black_scholes", _black_scholes,
         [u(n, lo=10, hi=100), u(n, lo=10, hi=100), u(n, lo=0.1, hi=2), u(n, lo=0.01, hi=0.1),
          u(n, lo=0.1, hi=0.5)]),
        ("softmax", _softmax, [u(side, side)]),
        ("layernorm", _layernorm, [u(side, side), u(side), u(side)]),
        ("mlp", _mlp, [u(side // 2, side // 4), u(side // 4, side // 4, lo=-0.05, hi=0.05),
                       u(side // 4), u(side // 4, side // 16, lo=-0.05, hi=0.05),
                       u(side // 16)]),
        ("embedding", _embedding, [u(8 * side, 256), rng.integers(0, 8 * side, (side // 64, 512)),
                                   u(512, 256)]),
        ("adagrad", _adagrad, [u(4 * n), u(4 * n), u(4 * n, lo=0, hi=1)]),
        ("masked_mse", _masked_mse, [u(4 * n), u(4 * n), rng.random(4 * n) < 0.7]),
    ]


def _best(fn: Callable[[], Any], budget: float = 0.4) -> float:
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < 50):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _rel_err(got: Any, ref: Any) -> float:
    got = got if isinstance(got, tuple) else (got,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    errs = [np.linalg.norm(np.asarray(g, np.float64) - r) / max(np.linalg.norm(r), 1e-300)
            for g, r in zip(got, ref, strict=True)]
    return max(errs)


def demo(args: argparse.Namespace) -> int:
    import fusejit

    print(f"fusejit {fusejit.__version__} demo: NumPy code compiled unchanged "
          f"({os.cpu_count()} cores)\n")
    header = (f"{'function':<14} {'compile':>9} {'numpy':>10} {'fusejit':>10} {'speedup':>8}"
              f" {'rel.err':>9}  fused")
    print(header)
    print("-" * len(header))
    for name, fn, inputs in _examples(args.scale):
        jf = fusejit.jit(fn)
        t0 = time.perf_counter()
        jf(*[a.copy() for a in inputs])
        compile_s = time.perf_counter() - t0
        t_np = _best(lambda fn=fn, xs=inputs: fn(*xs))  # an update keeps updating: fine
        t_fj = _best(lambda jf=jf, xs=inputs: jf(*xs))
        ref_in = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in inputs]
        got_in = [a.copy() for a in inputs]
        ref, got = fn(*ref_in), jf(*got_in)
        if name in MUTATES:  # compare the updated arguments
            ref, got = tuple(ref_in), tuple(got_in)
        err = _rel_err(got, ref)
        compiled = jf.lower_for(*inputs)
        prog = compiled.program
        n_ops = sum(len(k.nodes) for k in prog.kernels)
        kinds: dict[str, int] = {}
        for k in prog.kernels:
            kind = type(k).__name__.replace("Kernel", "").lower() or "loop"
            kinds[kind] = kinds.get(kind, 0) + 1
        n_out = len(prog.by_kind("output")) + len(prog.updates)
        traced = sum(1 for n in compiled.graph.nodes() if n.op not in ("input", "const"))
        fused = (f"{traced} traced ops -> {len(prog.kernels)} kernel(s) ("
                 + ", ".join(f"{v} {k}" for k, v in kinds.items()) + f") of {n_ops} ops, "
                 f"{n_out} output(s)" + (f" ({len(prog.updates)} in place)" if prog.updates
                                         else "")
                 + f", {len(prog.by_kind('temp'))} temporaries")
        print(f"{name:<14} {compile_s * 1e3:7.0f}ms {t_np * 1e3:8.2f}ms {t_fj * 1e3:8.2f}ms "
              f"{t_np / t_fj:7.1f}x {err:9.1e}  {fused}")
    print("\nrel.err: norm-wise relative error of the float32 result against a float64 NumPy "
          "reference.\nSee benchmarks/ for the side-by-side comparison with numexpr, numba, "
          "jax and torch.compile.")
    return 0


def _add_export(sub: Any) -> None:
    """`export`: ahead-of-time compilation to a shared library (runtime/aot_cli.py)."""
    from .runtime import aot_cli

    def run(args: argparse.Namespace) -> int:
        from .jit import export

        return aot_cli.run(args, export)

    aot_cli.add_parser(sub).set_defaults(func=run)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusejit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="compile example functions; speed against NumPy")
    p.add_argument("--scale", type=int, default=0,
                   help="shrink the inputs by 2**scale (0 = full size)")
    p.set_defaults(func=demo)
    _add_export(sub)
    from .kernels_cache.cli_cache import add_parser as add_cache_parser

    add_cache_parser(sub)
    from .runtime.profile_cli import add_parser as add_profile_parser

    add_profile_parser(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - a CLI reports, it does not dump tracebacks
        from .errors import FusejitError

        if isinstance(e, FusejitError):
            print(f"fusejit: {e}", file=sys.stderr)
            return 1
        raise
