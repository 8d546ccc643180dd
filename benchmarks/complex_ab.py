"""complex_mul against a kernel with the same memory traffic, in one process (session 10).

`np.abs(z * w + 1j) ** 2` over 2^22 complex64 reads 16 bytes and writes 4 per element;
`z.real + w.imag` (compiled too) moves the same bytes with almost no arithmetic, so its time
is the bandwidth bound of this shape on the machine as it is at that moment. Alternating the
two (and NumPy) in one process keeps a loaded machine's swings out of the ratio; the minima
are the calls least disturbed. Run: `python benchmarks/complex_ab.py` (OMP_NUM_THREADS=1 for
one core).
"""

from __future__ import annotations

import time

import numpy as np

import fusejit


def _times(fn, *args, calls: int = 15) -> tuple[float, float]:
    """(median, min) milliseconds of `calls` calls."""
    out = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn(*args)
        out.append(time.perf_counter() - t0)
    return float(np.median(out)) * 1e3, min(out) * 1e3


def main() -> None:
    rng = np.random.default_rng(0)
    n = 1 << 22
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    w = z[::-1].copy()

    def numpy_fn(z, w):
        return np.abs(z * w + 1j) ** 2

    f = fusejit.jit(numpy_fn)
    same_traffic = fusejit.jit(lambda z, w: z.real + w.imag)
    np.testing.assert_allclose(f(z, w), numpy_fn(z, w), rtol=1e-5)
    for _ in range(3):
        (a, b), (c, d), (e, g) = [_times(h, z, w) for h in (f, same_traffic, numpy_fn)]
        print(f"complex_mul {a:.2f}/{b:.2f} ms   same-traffic {c:.2f}/{d:.2f} ms   "
              f"numpy {e:.2f}/{g:.2f} ms (median/min)")


if __name__ == "__main__":
    main()
