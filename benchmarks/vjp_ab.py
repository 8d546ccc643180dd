"""Interleaved A/B of fusejit.vjp's pullback (residuals kept by the forward program) against
the forward-and-backward program it replaced, for tanh(x @ w) over 1024x1024 float32 (run:
``python benchmarks/vjp_ab.py``, fusejit importable). Also checks the two agree."""

from __future__ import annotations

import os
import time

import numpy as np

import fusejit


def f(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.tanh(x @ w)


def main(rounds: int = 15) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1024, 1024), dtype=np.float32)
    w = rng.standard_normal((1024, 1024), dtype=np.float32) / np.float32(32)
    ct = rng.standard_normal((1024, 1024), dtype=np.float32)
    _, back = fusejit.vjp(f, x, w)
    both = fusejit.jit(lambda x, w, c: fusejit.vjp(f, x, w)[1](c))  # traced inline: reruns f
    diff = max(float(np.abs(p - q).max()) for p, q in zip(back(ct), both(x, w, ct)))
    print(f"largest difference between the two: {diff}")
    calls = {"pullback (residuals)": lambda: back(ct),
             "forward+backward program": lambda: both(x, w, ct)}
    times: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(rounds):
        for k, call in calls.items():
            t = time.perf_counter()
            call()
            times[k].append(time.perf_counter() - t)
    print(f"load average {os.getloadavg()[0]:.2f}, {rounds} interleaved rounds")
    for k, ts in times.items():
        print(f"  {k:28s} median {np.median(ts) * 1e3:7.2f} ms  min {min(ts) * 1e3:7.2f} ms")


if __name__ == "__main__":
    main()
