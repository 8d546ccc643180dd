"""scipy.ndimage's measurements over labelled regions (frontend/scipy_measure.py) against
SciPy: sum_labels/sum, mean, variance, standard_deviation, minimum, maximum and
center_of_mass with labels traced or constant, index None (labels > 0), a scalar, a list with
a label no element has, an array; no labels; integer and 3-d inputs, labels broadcast; a
traced index refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same

import fusejit

nd = pytest.importorskip("scipy.ndimage")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(31)
X = R.standard_normal((7, 9))
LAB = R.integers(-1, 5, (7, 9))
NAMES = ("sum_labels", "sum", "mean", "variance", "standard_deviation", "minimum", "maximum")


@pytest.mark.parametrize("name", NAMES)
def test_statistics_match_scipy(name: str) -> None:
    f = getattr(nd, name)

    def g(x, lab):
        return (f(x, lab), f(x, lab, 2), f(x, lab, [1, 3, 7]), f(x, lab, np.array([[4], [0]])),
                f(x), f(x, LAB, [1, 2]), f(x[None], lab[:1], [0, 1]))

    assert_same(fusejit.jit(g)(X, LAB), g(X, LAB), rtol=1e-13)


@pytest.mark.parametrize("name", ["minimum", "maximum", "sum_labels", "mean"])
def test_integer_inputs(name: str) -> None:
    f = getattr(nd, name)
    xi = R.integers(-50, 50, (7, 9)).astype(np.int32)
    assert_same(fusejit.jit(lambda x, lab: (f(x, lab, [1, 2, 9]), f(x, lab)))(xi, LAB),
                (f(xi, LAB, [1, 2, 9]), f(xi, LAB)))


def test_center_of_mass() -> None:
    w = np.abs(X)

    def g(x, lab):
        return (nd.center_of_mass(x, lab), nd.center_of_mass(x, lab, 3),
                nd.center_of_mass(x, lab, [1, 2, 8]), nd.center_of_mass(x))

    assert_same(fusejit.jit(g)(w, LAB), g(w, LAB), rtol=1e-13)


def test_traced_index_is_refused_by_name() -> None:
    with pytest.raises(fusejit.UnsupportedError, match=r"ndimage\.mean with a traced index"):
        fusejit.jit(lambda x, lab: nd.mean(x, lab, lab[0]))(X, LAB)
