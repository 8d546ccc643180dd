"""The gradient workloads (workloads_grad.py) written for jax and torch with their own arrays
and their own autodiff: each factory takes the library's module and the NumPy inputs and
returns a zero-argument call running one complete, synchronised step (peers.py times it; the
inputs are converted and the state set up here, outside the timed call).

- mlp step: `jax.jit` of `jax.value_and_grad(loss)` plus the SGD update, parameters donated
  and carried from call to call; torch: `torch.compile(loss)`, `torch.autograd.grad` (the
  compiled backward AOTAutograd made beside the forward) and an in-place `_foreach_add_`,
  as a torch user writes a training step. ReLU is `jnp.maximum(., 0)` / `torch.relu`.
- Rosenbrock: `jax.jit(jax.grad(f))` under `jax.enable_x64` (float64, as NumPy computes);
  torch: `torch.compile(f)` + `torch.autograd.grad`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

LR = 0.1  # workloads_grad.LR (not imported: this module is imported by it)


def _mlp_loss(lib: Any, relu: Callable[[Any], Any], params: Any, x: Any, labels: Any) -> Any:
    """The issue-23 loss over jax.numpy or torch (`lib`)."""
    w1, b1, w2, b2 = params
    h = relu(x @ w1 + b1)
    logits = h @ w2 + b2
    if lib.__name__ == "torch":
        m = logits.amax(dim=1, keepdim=True)
        rows = lib.arange(labels.shape[0])
    else:
        m = logits.max(axis=1, keepdims=True)
        rows = lib.arange(labels.shape[0])
    lse = m[:, 0] + lib.log(lib.exp(logits - m).sum(1))
    return (lse - logits[rows, labels]).mean()


def mlp_step_jax(jax: Any, inputs: tuple[np.ndarray, ...]) -> Callable[[], Any]:
    jnp = jax.numpy

    def loss(params: Any, x: Any, labels: Any) -> Any:
        return _mlp_loss(jnp, lambda a: jnp.maximum(a, 0), params, x, labels)

    def step(params: Any, x: Any, labels: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(params, x, labels)
        return value, [p - LR * g for p, g in zip(params, grads)]

    jstep = jax.jit(step, donate_argnums=0)
    x, labels, *params = (jax.device_put(a) for a in inputs)
    state = [list(params)]

    def call() -> Any:
        with warnings.catch_warnings():  # a backend that cannot donate says so, once
            warnings.simplefilter("ignore")
            value, state[0] = jstep(state[0], x, labels)
        jax.block_until_ready(state[0])
        return value.block_until_ready()

    call.params = lambda: [np.asarray(p) for p in state[0]]  # type: ignore[attr-defined]
    return call


def mlp_step_torch(torch: Any, inputs: tuple[np.ndarray, ...]) -> Callable[[], Any]:
    x, labels, *params = (torch.from_numpy(a) for a in inputs)
    for p in params:
        p.requires_grad_(True)
    closs = torch.compile(lambda w1, b1, w2, b2, x, labels: _mlp_loss(
        torch, torch.relu, (w1, b1, w2, b2), x, labels))

    def call() -> Any:
        value = closs(*params, x, labels)
        grads = torch.autograd.grad(value, params)
        with torch.no_grad():
            torch._foreach_add_(params, grads, alpha=-LR)
        return value.detach()

    call.params = lambda: [p.detach().numpy().copy() for p in params]  # type: ignore
    return call


def _rosen(x: Any) -> Any:
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def rosen_grad_jax(jax: Any, inputs: tuple[np.ndarray, ...]) -> Callable[[], Any]:
    with jax.enable_x64(True):
        grad = jax.jit(jax.grad(_rosen))
        x = jax.device_put(inputs[0])

    def call() -> Any:
        with jax.enable_x64(True):
            return grad(x).block_until_ready()

    return call


def rosen_grad_torch(torch: Any, inputs: tuple[np.ndarray, ...]) -> Callable[[], Any]:
    x = torch.from_numpy(inputs[0]).requires_grad_(True)
    closs = torch.compile(_rosen)

    def call() -> Any:
        (g,) = torch.autograd.grad(closs(x), (x,))
        return g

    return call
