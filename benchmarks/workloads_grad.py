"""Gradient workloads (issue 23): fusejit.value_and_grad / fusejit.grad of plain NumPy code,
compared with the same gradient written out by hand.

- mlp_grad_step: the issue's loss (2048x1024-1024-10 MLP, ReLU, log-sum-exp cross-entropy
  on integer labels) differentiated by `fusejit.value_and_grad`, then an SGD update written
  in NumPy, all in one jitted function. NumPy (and numba/numexpr, n/a) run the hand-written
  backward pass; `mlp_grad_step_hand` is that hand-written step compiled by fusejit, the
  figure the autodiff step is held to.
- rosenbrock_grad_auto: `fusejit.grad` of the Rosenbrock sum over 2^22 float64; NumPy runs
  the hand-derived gradient (scipy.optimize.rosen_der's formula).

jax and torch.compile run the same loss written with their own arrays and differentiated by
their own autodiff (benchmarks/peers_grad.py): `jax.jit(jax.value_and_grad(loss))` with the
SGD update in the same jitted step, and `torch.compile(loss)` + `torch.autograd.grad` (the
compiled forward and its AOT-compiled backward) + an in-place update.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

if __package__:
    from . import peers_grad
    from .workloads import Arrays, Workload, make_rng, normal, register
else:  # run as a script from benchmarks/
    import peers_grad  # type: ignore
    from workloads import Arrays, Workload, make_rng, normal, register  # type: ignore

LR = 0.1
_NOT_APPLICABLE = {"numexpr": "no hand-written numexpr gradient", "numba": "no numba version"}


def mlp_loss(params: list, x: np.ndarray, labels: np.ndarray) -> Any:
    """The issue's loss, as a NumPy user writes it."""
    w1, b1, w2, b2 = params
    h = np.maximum(x @ w1 + b1, 0)
    logits = h @ w2 + b2
    m = logits.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
    return (lse - logits[np.arange(len(labels)), labels]).mean()


_GRADS: dict[str, Any] = {}


def _fusejit_grad(kind: str, fn: Any) -> Any:
    """fusejit.value_and_grad / grad of `fn`, made once (the fusejit peer has imported
    fusejit, from the repository when it is not installed, before it runs a workload)."""
    if kind not in _GRADS:
        _GRADS[kind] = getattr(importlib.import_module("fusejit"), kind)(fn)
    return _GRADS[kind]


def mlp_grad_step_auto(x: np.ndarray, labels: np.ndarray, w1: np.ndarray, b1: np.ndarray,
                       w2: np.ndarray, b2: np.ndarray) -> Any:
    loss, grads = _fusejit_grad("value_and_grad", mlp_loss)([w1, b1, w2, b2], x, labels)
    for p, g in zip((w1, b1, w2, b2), grads):
        p -= LR * g
    return loss


def mlp_grad_step_hand(x: np.ndarray, labels: np.ndarray, w1: np.ndarray, b1: np.ndarray,
                       w2: np.ndarray, b2: np.ndarray) -> Any:
    """The same step with the backward pass written out."""
    h = np.maximum(x @ w1 + b1, 0)
    z = h @ w2 + b2
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    s = e.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = np.mean(m[:, 0] + np.log(s[:, 0]) - z[np.arange(n), labels])
    dz = e / s
    dz[np.arange(n), labels] -= 1
    dz /= n
    dw2 = h.T @ dz
    db2 = dz.sum(axis=0)
    dh = (dz @ w2.T) * (h > 0)
    dw1 = x.T @ dh
    db1 = dh.sum(axis=0)
    w1 -= LR * dw1
    b1 -= LR * db1
    w2 -= LR * dw2
    b2 -= LR * db2
    return loss


def _mlp_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    n, d, h, c = (256, 128, 128, 10) if quick else (2048, 1024, 1024, 10)
    return (normal(rng, (n, d)), rng.integers(0, c, n), normal(rng, (d, h), d ** -0.5),
            np.zeros(h, np.float32), normal(rng, (h, c), h ** -0.5), np.zeros(c, np.float32))


def _mlp_gemm_flops(a: Arrays) -> float:
    x, _, w1, _, w2, _ = a
    n, d = x.shape
    h, c = w1.shape[1], w2.shape[1]
    return 2.0 * n * (d * h + h * c) * 2 + 2.0 * d * h * n  # forward, dW2/dh, dW1


for _name, _fn, _desc in (
        ("mlp_grad_step", mlp_grad_step_auto, "fusejit.value_and_grad of the issue-23 MLP loss "
         "+ SGD update in one jitted function (NumPy: the hand-written backward pass)"),
        ("mlp_grad_step_hand", None, "the same SGD step with the backward pass written by "
         "hand, compiled by fusejit")):
    register(Workload(
        name=_name, description=_desc, make_inputs=_mlp_inputs, numpy_fn=mlp_grad_step_hand,
        fusejit_fn=_fn, flops=_mlp_gemm_flops, gemm_flops=_mlp_gemm_flops, mutates=True,
        not_applicable=dict(_NOT_APPLICABLE),
        own={"jax": peers_grad.mlp_step_jax, "torch.compile": peers_grad.mlp_step_torch}))


def rosenbrock(x: np.ndarray) -> Any:
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_grad_auto(x: np.ndarray) -> Any:
    return _fusejit_grad("grad", rosenbrock)(x)


def rosenbrock_grad_hand(x: np.ndarray) -> np.ndarray:
    """d rosenbrock / dx, derived by hand."""
    d = x[1:] - x[:-1] ** 2
    out = np.zeros_like(x)
    out[:-1] = -400 * x[:-1] * d - 2 * (1 - x[:-1])
    out[1:] += 200 * d
    return out


def _rosen_inputs(seed: int, quick: bool) -> Arrays:
    rng = make_rng(seed)
    return (rng.uniform(-1.5, 1.5, 1 << (18 if quick else 22)),)


register(Workload(
    name="rosenbrock_grad_auto",
    description="fusejit.grad of the Rosenbrock sum over 2^22 float64 (NumPy: the "
                "hand-derived gradient)",
    make_inputs=_rosen_inputs, numpy_fn=rosenbrock_grad_hand, fusejit_fn=rosenbrock_grad_auto,
    flops=lambda a: 12.0 * a[0].size, not_applicable=dict(_NOT_APPLICABLE),
    own={"jax": peers_grad.rosen_grad_jax, "torch.compile": peers_grad.rosen_grad_torch}))
