"""scipy.signal.sawtooth, square and chirp on traced values (frontend/scipy_waveforms.py),
against SciPy's own calls: widths and duties inside and outside [0, 1] (NaN), broadcasting of
t against them, float32/integer/0-d t, NaN and inf points; chirp's four methods, its phase in
degrees and its complex form."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_same

import fusejit

sg = pytest.importorskip("scipy.signal")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

T = np.concatenate([np.linspace(-10.0, 20.0, 61), [np.nan, np.inf, -np.inf, 0.0, -0.0,
                                                   2 * np.pi, np.pi]])
W = np.linspace(-0.25, 1.25, T.size)  # widths: some outside [0, 1]

PIECEWISE = {
    "sawtooth": lambda t: sg.sawtooth(t),
    "sawtooth, width 0.5": lambda t: sg.sawtooth(t, 0.5),
    "sawtooth, width 0 and 1": lambda t: (sg.sawtooth(t, 0), sg.sawtooth(t, 1.0)),
    "sawtooth, traced widths": lambda t: sg.sawtooth(t, W - t * 0),
    "sawtooth, broadcast": lambda t: sg.sawtooth(t[:, None], W[::9]),
    "sawtooth, float32": lambda t: sg.sawtooth(t.astype(np.float32), np.float32(0.3)),
    "sawtooth, integer t": lambda t: sg.sawtooth(np.nan_to_num(t).astype(np.int64)),
    "square": lambda t: sg.square(t),
    "square, traced duties": lambda t: sg.square(t, W + t * 0),
    "square, float32": lambda t: sg.square(t.astype(np.float32), np.float32(0.25)),
    "square, 0-d": lambda t: (sg.square(t[3]), sg.sawtooth(t[3], 0.2)),
}


@pytest.mark.parametrize("name", list(PIECEWISE))
def test_piecewise_waveforms_are_scipys(name: str) -> None:
    f = PIECEWISE[name]
    assert_same(fusejit.jit(f)(T), f(T))


CHIRPS = {
    "linear": lambda t: sg.chirp(t, 1.0, 10.0, 5.0),
    "quadratic": lambda t: sg.chirp(t, 1.0, 10.0, 5.0, "quadratic"),
    "quadratic, vertex at t1": lambda t: sg.chirp(t, 1.0, 10.0, 5.0, "quadratic",
                                                   vertex_zero=False),
    "logarithmic, phi": lambda t: sg.chirp(np.abs(t), 1.0, 10.0, 5.0, "logarithmic", phi=30),
    "hyperbolic, complex": lambda t: sg.chirp(t, 2.0, 10.0, 0.5, "hyperbolic", complex=True),
    "sweep_poly": lambda t: sg.sweep_poly(t, np.poly1d([0.025, -0.36, 1.25, 2.0])),
}


@pytest.mark.parametrize("name", list(CHIRPS))
def test_chirps_are_scipys(name: str) -> None:
    """The phase is SciPy's formula; cos/exp of it agree to rounding (the log chirp's
    phase reaches ~1e3 radians, so ~1e-13 absolute)."""
    f = CHIRPS[name]
    t = np.linspace(0.0, 20.0, 201)
    assert_same(fusejit.jit(f)(t), f(t), rtol=1e-12, atol=1e-12)


def test_errors_are_scipys() -> None:
    """A bad method is SciPy's ValueError; a traced frequency needs a concrete value."""
    with pytest.raises(ValueError, match="method must be"):
        fusejit.jit(lambda t: sg.chirp(t, 1.0, 10.0, 5.0, "cubic"))(T)
    with pytest.raises(ValueError, match="logarithmic chirp"):
        fusejit.jit(lambda t: sg.chirp(t, -1.0, 10.0, 5.0, "log"))(T)
    with pytest.raises(fusejit.ConcretizationError):
        fusejit.jit(lambda t, f0: sg.chirp(t, f0, 10.0, 5.0))(T, 1.0)
    with warnings.catch_warnings():  # plain calls are SciPy's own
        warnings.simplefilter("ignore")
        assert sg.square.__fusejit_original__(T).dtype == np.float64
