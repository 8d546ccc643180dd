"""Everyday NumPy calls found by benchmarks/survey_calls.py to be wrong, crashing or refused,
checked against NumPy (values, dtype, shape, exception type): one jitted function checks
several calls where it can, since each compiled program costs a C compile."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_both

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_round_with_many_decimals_scales_by_numpys_power_of_ten():
    # NumPy's factor for |decimals| >= 9 is 1e9 times 10 repeated in double, not the
    # correctly rounded 10.0 ** n: for n = 23 they differ, and so did ~94% of the results
    rng = np.random.default_rng(1)
    x = rng.standard_normal(400) * 1e-20
    x32 = (rng.standard_normal(40) * 1e-20).astype(np.float32)
    big = rng.integers(-10**17, 10**17, 40)

    def f(x, x32, big):
        return (np.round(x, 23), np.round(x * 1e30, -25), np.round(x, 400), np.round(x, -400),
                np.round(x32, 23), np.round(x32, 40), np.round(big, -23), np.round(big, -309))

    run_both(f, x, x32, big)
