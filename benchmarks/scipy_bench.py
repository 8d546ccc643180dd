"""SciPy functions fusejit compiles, timed against SciPy's own in one process: the signal filters
(lfilter, filtfilt, sosfilt), the ndimage rank filters (median, maximum), scipy.signal.medfilt,
ndimage's spline interpolation (rotate, zoom, shift, map_coordinates) and morphology,
gaussian_kde and the inverse distribution functions. Each row checks that fusejit's result
equals SciPy's (bit for bit, or to rounding where the README says so: 1e-12 relative and
absolute), then reports the best of `--repeat` calls after a warm-up call (the first call
compiles), and the first call's time apart.

    PYTHONPATH=... python benchmarks/scipy_bench.py [--repeat 5] [name-substring ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("FUSEJIT_CACHE_DIR", tempfile.mkdtemp(prefix="fusejit-scipy-bench-"))

import numpy as np  # noqa: E402
import scipy.ndimage as nd  # noqa: E402
import scipy.signal as sg  # noqa: E402
import scipy.special as sp  # noqa: E402
import scipy.stats as st  # noqa: E402

import fusejit  # noqa: E402

RNG = np.random.default_rng(0)
B4, A4 = sg.butter(4, 0.2)
SOS = sg.butter(8, 0.2, output="sos")
LINE = RNG.standard_normal(1 << 20)
BLOCK = RNG.standard_normal((1000, 1000))
IMAGE = RNG.standard_normal((1024, 1024))
WARP = np.mgrid[0:1024, 0:1024] * 0.9 + 10.3  # (a global: the program reads it each call)
KDE = st.gaussian_kde(RNG.standard_normal(10000))
GRID = np.linspace(-3, 3, 1000)
PROBS = RNG.uniform(0, 1, 200000)


def _cases() -> list[tuple[str, Callable[[Any], Any], np.ndarray, bool]]:
    """(name, function, argument, bit for bit)"""
    return [
        ("lfilter 4th order, 2^20 samples", lambda x: sg.lfilter(B4, A4, x), LINE, True),
        ("lfilter 1000x1000 axis 1", lambda x: sg.lfilter(B4, A4, x), BLOCK, True),
        ("lfilter 1000x1000 axis 0", lambda x: sg.lfilter(B4, A4, x, axis=0), BLOCK, True),
        ("filtfilt 4th order, 2^20 samples", lambda x: sg.filtfilt(B4, A4, x), LINE, True),
        ("sosfilt 8th order, 1000x1000", lambda x: sg.sosfilt(SOS, x), BLOCK, True),
        ("median_filter 3x3, 1024^2", lambda x: nd.median_filter(x, 3), IMAGE, True),
        ("median_filter 5x5 constant, 1024^2",
         lambda x: nd.median_filter(x, 5, mode="constant"), IMAGE, True),
        ("maximum_filter 5x5, 1024^2", lambda x: nd.maximum_filter(x, 5), IMAGE, True),
        ("medfilt 5x5, 1024^2", lambda x: sg.medfilt(x, 5), IMAGE, True),
        ("ndimage.rotate 30 deg, 1024^2", lambda x: nd.rotate(x, 30.0), IMAGE, False),
        ("ndimage.rotate 30 deg order 1, 1024^2", lambda x: nd.rotate(x, 30.0, order=1),
         IMAGE, True),
        ("ndimage.zoom 2x, 1024^2", lambda x: nd.zoom(x, 2.0), IMAGE, False),
        ("ndimage.shift (2.5, -1.3), 1024^2", lambda x: nd.shift(x, (2.5, -1.3)), IMAGE, False),
        ("ndimage.map_coordinates order 3, 1024^2",
         lambda x: nd.map_coordinates(x, WARP), IMAGE, False),
        ("ndimage.binary_opening 5x5, 1024^2",
         lambda x: nd.binary_opening(x > 0, np.ones((5, 5), bool)), IMAGE, True),
        ("ndimage.grey_erosion size 5, 1024^2", lambda x: nd.grey_erosion(x, size=5), IMAGE,
         True),
        ("ndimage.white_tophat size 5, 1024^2", lambda x: nd.white_tophat(x, size=5), IMAGE,
         True),
        ("gaussian_kde(1e4 samples)(1e3 points)", lambda x: KDE(x), GRID, False),
        ("gaussian_kde(...).logpdf, 1e3 points", lambda x: KDE.logpdf(x), GRID, False),
        ("special.betaincinv, 2e5 elements", lambda p: sp.betaincinv(2.5, 7.0, p), PROBS,
         False),
        ("stats.t.ppf(p, 4.5), 2e5 elements", lambda p: st.t.ppf(p, 4.5), PROBS, False),
        ("stats.chi2.ppf(p, 3), 2e5 elements", lambda p: st.chi2.ppf(p, 3.0), PROBS, False),
    ]


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("only", nargs="*")
    args = ap.parse_args(argv)
    print("| call | SciPy ms | fusejit ms | speed-up | first call s | equal |")
    print("|---|---|---|---|---|---|")
    for name, fn, x, exact in _cases():
        if args.only and not any(s in name for s in args.only):
            continue
        f = fusejit.jit(fn)
        t0 = time.perf_counter()
        got = f(x)
        first = time.perf_counter() - t0
        want = fn(x)
        equal = (np.array_equal(got, want) if exact else
                 bool(np.allclose(got, want, rtol=1e-12, atol=1e-12)))
        ours = _best(lambda f=f, x=x: f(x), args.repeat)
        theirs = _best(lambda fn=fn, x=x: fn(x), args.repeat)
        print(f"| {name} | {theirs * 1e3:.2f} | {ours * 1e3:.2f} | {theirs / ours:.1f}x | "
              f"{first:.2f} | {'bits' if exact and equal else equal} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
