"""np.histogramdd, np.histogram2d, np.histogram_bin_edges and np.putmask of traced values
(frontend/histdd.py), np.ravel_multi_index (frontend/ravel_index.py), np.interp of complex
fp (frontend/gridops.py), and np.rollaxis,
np.apply_over_axes, np.polyder and np.polyint traced through NumPy's own code, against NumPy:
bins as counts, lists of counts and constant edges, with and without range=, weights=,
density=, NaN and equal values, empty samples, integer and float32 data, and NumPy's errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_both

import fusejit

RNG = np.random.default_rng(43)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.mark.parametrize("d", [1, 2, 3])
def test_histogramdd_matches_numpy(d: int) -> None:
    x = RNG.standard_normal((40, d))
    w = RNG.uniform(0, 2, 40)
    edges = [np.linspace(-2, 2, 5), [-1.0, 0.0, 0.5, 3.0], np.array([-3.0, 3.0])][:d]
    run_both(lambda x, w: (np.histogramdd(x, bins=4), np.histogramdd(x, bins=[3, 2, 5][:d]),
                           np.histogramdd(x, bins=edges),
                           np.histogramdd(x, bins=3, range=[(-1, 1)] * d, density=True),
                           np.histogramdd(x, bins=5, weights=w)), x, w)
    run_both(lambda x: np.histogramdd(x.astype(np.float32), 3), x)
    run_both(lambda x: np.histogramdd((x * 3).astype(np.int64), 4), x)
    nan = x.copy()
    nan[3, 0] = np.nan
    run_both(lambda x: np.histogramdd(x, bins=3, range=[(-2, 2)] * d), nan)  # NaN left out
    run_both(lambda x: np.histogramdd(x, bins=3), nan)  # ValueError: range not finite
    run_both(lambda x: np.histogramdd(x * 0 + 1.5, bins=2), x)  # min == max: +-0.5
    run_both(lambda x: np.histogramdd(x[:0], bins=2), x)  # empty: NumPy's (0, 1) edges
    run_both(lambda x: np.histogramdd(x, bins=0), x)  # ValueError


def test_histogram2d_and_bin_edges() -> None:
    x, y, w = RNG.standard_normal(30), RNG.uniform(0, 1, 30), RNG.uniform(0, 1, 30)
    run_both(lambda x, y, w: (np.histogram2d(x, y), np.histogram2d(x, y, bins=[3, 5]),
                              np.histogram2d(x, y, bins=4, range=[[-2, 2], [0, 1]],
                                             weights=w, density=True),
                              np.histogram2d(x, y, bins=np.linspace(-1, 1, 4))), x, y, w)
    run_both(lambda x, y: np.histogram2d(x, y[:5]), x, y)  # NumPy's error
    run_both(lambda x: (np.histogram_bin_edges(x, 5), np.histogram_bin_edges(x, 3, (0, 1)),
                        np.histogram_bin_edges(x, [0, 1, 4])), x)
    with pytest.raises(fusejit.UnsupportedError, match="traced bins"):
        fusejit.jit(lambda x: np.histogram2d(x, x, bins=x))(x)


def test_putmask_and_complex_interp() -> None:
    def put(a, m, v):
        b = a.copy()
        np.putmask(b, m > 0, v)
        return b

    a, m = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    run_both(put, a, m, np.array([10.0, 20.0, 30.0]))  # values repeat over a.flat
    run_both(put, a, m, np.array(7.0))
    run_both(put, (a * 10).astype(np.int32), m, np.array([1.5, -2.5]))  # cast, as NumPy
    run_both(put, a, m[:2], np.array(7.0))  # ValueError: mask and data differ in size
    x = RNG.uniform(-1, 4, 20)
    fp = np.array([1 + 2j, -1j, 3.0, 2 + 2j])
    run_both(lambda x: (np.interp(x, [0, 1, 2, 3], fp),
                        np.interp(x, [0, 1, 2, 3], fp, left=5j, right=-1 + 1j),
                        np.interp(x, [0, 1, 2, 3], fp, period=2.5)), x)


def test_helpers_traced_through_numpys_code() -> None:
    x, p = RNG.standard_normal((2, 3, 4)), RNG.standard_normal(5)
    run_both(lambda x: (np.rollaxis(x, 2), np.rollaxis(x, 0, 3), np.rollaxis(x, -1, 1),
                        np.apply_over_axes(np.sum, x, [0, 2]),
                        np.apply_over_axes(np.max, x, 1)), x)
    run_both(lambda p: (np.polyder(p), np.polyder(p, 3), np.polyint(p), np.polyint(p, 2, [1, 2]),
                        np.polyval(np.polyder(p), p)), p)
    run_both(lambda x: np.rollaxis(x, 5), x)  # AxisError


def test_ravel_multi_index() -> None:
    """frontend/ravel_index.py: every mode (one for all, or per dimension), both orders,
    broadcast coordinates, 0-d coordinates (a NumPy scalar), and NumPy's errors: a
    coordinate outside its dimension in mode 'raise' (when the program runs), float
    coordinates, the wrong count."""
    i, j = RNG.integers(-4, 9, 12), RNG.integers(-4, 9, (3, 1))
    run_both(lambda i, j: (np.ravel_multi_index((i, j), (5, 4), mode="wrap"),
                           np.ravel_multi_index((i, j), (5, 4), mode=("clip", "wrap"),
                                                order="F"),
                           np.ravel_multi_index((np.abs(i) % 5, j % 4), (5, 4)),
                           np.ravel_multi_index((i[0] % 5, 3), (5, 4))), i, j)
    f = fusejit.jit(lambda i, j: np.ravel_multi_index((i, j), (5, 4)))
    with pytest.raises(ValueError):
        f(i, j)  # out of range: NumPy's ValueError
    run_both(lambda i: np.ravel_multi_index((i.astype(float), i), (5, 4)), i)  # TypeError
    run_both(lambda i: np.ravel_multi_index((i,), (5, 4)), i)  # ValueError: the count
