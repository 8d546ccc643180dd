"""A script for `python -m fusejit profile benchmarks/cuda_profile_check.py` on a GPU machine
(benchmarks/gpu_check.sh runs it): a row softmax and a GELU on the GPU, 50 calls each, so the
profile shows CUDA kernels timed with events (runtime/cuda_timer.py) next to their bytes."""

import numpy as np

import fusejit


@fusejit.jit(backend="cuda")
def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@fusejit.jit(backend="cuda")
def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


x = np.random.default_rng(0).standard_normal((4096, 4096)).astype(np.float32)
d = softmax(x, device_output=True)  # (a device array: the calls below copy nothing)
for _ in range(50):
    softmax(d, device_output=True)
    gelu(d, device_output=True)
np.testing.assert_allclose(softmax(x), softmax.fn(x), rtol=1e-5, atol=1e-7)
print("ok")
