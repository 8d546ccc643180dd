"""scipy.ndimage's separable filters of traced arrays (frontend/scipy_ndimage.py): bit for bit
SciPy's results (values, dtype, shape) over drawn shapes, dtypes, boundary modes, kernel
sizes and origins; SciPy's errors; the refusals; a gradient."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fusejit
from fusejit.errors import UnsupportedError

nd = pytest.importorskip("scipy.ndimage")

MODES = ["reflect", "mirror", "nearest", "wrap", "constant", "grid-wrap", "grid-mirror",
         "grid-constant"]
RNG = np.random.default_rng(23)
X = RNG.standard_normal((7, 9))
XI = RNG.integers(-50, 50, (7, 9))


def _bit_exact(f, *args) -> None:
    want = f(*args)
    got = fusejit.jit(f)(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@st.composite
def _line_filter(draw):
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int16]))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9))
    elements = (st.floats(-1e3, 1e3, width=32) if dtype != np.int16
                else st.integers(-1000, 1000))
    x = draw(hnp.arrays(dtype, shape, elements=elements))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    size = draw(st.integers(1, 7))
    origin = draw(st.integers(-(size // 2), (size - 1) // 2))
    mode = draw(st.sampled_from(MODES))
    which = draw(st.sampled_from(["correlate1d", "convolve1d", "uniform_filter1d",
                                  "gaussian_filter1d"]))
    kind = draw(st.sampled_from(["random", "symmetric", "antisymmetric"]))
    w = np.round(np.asarray(draw(st.lists(st.floats(-4, 4), min_size=size, max_size=size))), 2)
    if kind == "symmetric":
        w = w + w[::-1]
    elif kind == "antisymmetric" and size & 1:
        w = w - w[::-1]
    cval = draw(st.sampled_from([0.0, 1.5]))
    note(f"{which} w={w.tolist()} axis={axis} mode={mode} cval={cval} origin={origin}")
    if which == "uniform_filter1d":
        return x, lambda a: nd.uniform_filter1d(a, size, axis, None, mode, cval, origin)
    if which == "gaussian_filter1d":
        sigma, order = size / 3.0, draw(st.integers(0, 2))
        return x, lambda a: nd.gaussian_filter1d(a, sigma, axis, order, None, mode, cval)
    fn = getattr(nd, which)
    return x, lambda a: fn(a, w, axis, None, mode, cval, origin)


@settings(max_examples=examples(40), deadline=None)
@given(_line_filter())
def test_one_axis_filters_are_scipys_bit_for_bit(case) -> None:
    x, f = case
    note(f"{x.dtype}{x.shape}")
    _bit_exact(f, x)


CASES = {
    "uniform_filter sizes and modes": (lambda a: nd.uniform_filter(a, (3, 5),
                                                                   mode=["reflect", "wrap"]), X),
    "uniform_filter float32": (lambda a: nd.uniform_filter(a, 4), X.astype(np.float32)),
    "gaussian_filter": (lambda a: nd.gaussian_filter(a, (1.0, 2.0)), X.astype(np.float32)),
    "gaussian_filter ints": (lambda a: nd.gaussian_filter(a, 1.2, mode="constant"), XI),
    "gaussian_filter uint8": (lambda a: nd.gaussian_filter(a, 1.0),
                              np.abs(XI).astype(np.uint8)),
    "gaussian_filter order": (lambda a: nd.gaussian_filter(a, 1.5, order=(0, 2)), X),
    "gaussian_filter radius, axes": (lambda a: nd.gaussian_filter(a, 2.0, radius=2, axes=(1,)),
                                     X),
    "gaussian_filter output dtype": (lambda a: nd.gaussian_filter(a, 1.0, output=np.float32),
                                     XI),
    "sobel": (lambda a: nd.sobel(a, axis=0), X),
    "sobel ints": (lambda a: nd.sobel(a), XI),
    "prewitt": (lambda a: nd.prewitt(a, mode="nearest"), X.astype(np.float32)),
    "laplace": (lambda a: nd.laplace(a), X),
    "laplace int8 (wraps as SciPy's)": (lambda a: nd.laplace(a, mode="wrap"),
                                        XI.astype(np.int8) * 3),
    "3-d gaussian": (lambda a: nd.gaussian_filter(a, 0.8), RNG.standard_normal((4, 5, 6))),
    "size-1 axis": (lambda a: nd.uniform_filter(a, 3), X[:1]),
    "gaussian_laplace": (lambda a: nd.gaussian_laplace(a, 1.3), X),
    "gaussian_laplace ints, axes": (lambda a: nd.gaussian_laplace(a, (1.0,), axes=(1,)), XI),
    "gaussian_gradient_magnitude": (lambda a: nd.gaussian_gradient_magnitude(a, 1.1),
                                    X.astype(np.float32)),
    "gaussian_gradient_magnitude ints": (lambda a: nd.gaussian_gradient_magnitude(
        a, 0.9, mode=["wrap", "nearest"], truncate=3.0), XI),
}


@pytest.mark.parametrize("name", list(CASES))
def test_filters_are_scipys_bit_for_bit(name: str) -> None:
    f, x = CASES[name]
    _bit_exact(f, x)


@pytest.mark.parametrize("seed", range(12))
def test_nd_correlate_and_convolve_bit_for_bit(seed: int) -> None:
    """scipy.ndimage.correlate/convolve: 0.0 plus w * x over the taps in C order whose weight
    exceeds DBL_EPSILON (so -0.0 inputs give +0.0, as SciPy's), any shape, mode and origin."""
    rng = np.random.default_rng(seed)
    ndim = 1 + seed % 3
    shape = tuple(int(v) for v in rng.integers(1, 7, ndim))
    x = rng.standard_normal(shape) if seed % 4 else rng.integers(-20, 20, shape).astype(np.int16)
    x.flat[0] = -0.0 if x.dtype.kind == "f" else x.flat[0]
    w = np.round(rng.standard_normal(tuple(int(v) for v in rng.integers(1, 5, ndim))), 1)
    w.flat[0] = 0.0
    origin = [int(rng.integers(-(k // 2), (k - 1) // 2 + 1)) for k in w.shape]
    fn, mode = (nd.correlate if seed % 2 else nd.convolve), MODES[seed % len(MODES)]
    _bit_exact(lambda a: fn(a, w, mode=mode, cval=0.5, origin=origin), x)
    if x.dtype.kind == "f":
        got = fusejit.jit(lambda a: fn(a, w, mode=mode, cval=0.5, origin=origin))(x)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(fn(x, w, mode=mode, cval=0.5,
                                                                      origin=origin)))


@pytest.mark.parametrize("w", [[0.25, 0.5, 0.25], [-1.0, 0.0, 1.0], [1.0, 2.0, 3.0],
                               [0.1, 0.7, 0.1 + 2e-17], [-0.1, 0.7, 0.1 + 2e-17],
                               [1.0, 2.0, 3.0, 4.0]],
                         ids=["symmetric", "antisymmetric", "neither", "symmetric within eps",
                              "antisymmetric within eps", "even"])
def test_traced_weights_take_scipys_path_when_the_program_runs(w) -> None:
    """Weights an argument (or a global array) of the compiled function: SciPy picks its
    symmetric, antisymmetric or general sum by the values (within DBL_EPSILON), so the
    program computes all three and picks one as it runs."""
    f = lambda a, w: nd.correlate1d(a, w, axis=0, mode="mirror")  # noqa: E731
    w = np.array(w)
    _bit_exact(f, X, w)


@pytest.mark.parametrize("case", [
    lambda a: nd.correlate1d(a, [1.0, 2.0], origin=3),
    lambda a: nd.correlate1d(a, []),
    lambda a: nd.uniform_filter(a, 3, mode="bogus"),
    lambda a: nd.uniform_filter1d(a, 0),
    lambda a: nd.gaussian_filter1d(a, 1.0, axis=5),
    lambda a: nd.gaussian_filter(a, 1.0, radius=-1),
    lambda a: nd.sobel(a, axis=2),
], ids=["origin", "no weights", "mode", "size", "axis", "radius", "sobel axis"])
def test_scipys_errors(case) -> None:
    with pytest.raises(Exception) as want:
        case(X)
    with pytest.raises(type(want.value)):
        fusejit.jit(case)(X)


@pytest.mark.parametrize("case,x,words", [
    (lambda a: nd.gaussian_filter(a, 1.0), X + 1j, "complex"),
    (lambda a: nd.uniform_filter(a, 3, output=np.empty((7, 9))), X, "output="),
    (lambda a: nd.gaussian_filter1d(a, a[0, 0]), X, "traced"),
    (lambda a: nd.correlate(a, a[:2, :2]), X, "traced weights"),
])
def test_refusals_name_what_is_missing(case, x, words: str) -> None:
    with pytest.raises(UnsupportedError, match=words) as info:
        fusejit.jit(case)(x)
    assert "test_scipy_ndimage.py" in str(info.value)


def test_gradient_through_a_gaussian_blur() -> None:
    """The blur is linear: the gradient of sum(c * blur(x)) is the blur's transpose of c."""
    x, c = RNG.standard_normal((6, 8)), RNG.standard_normal((6, 8))
    g = fusejit.grad(lambda a: np.sum(c * nd.gaussian_filter(a, 1.0, mode="mirror")))(x)
    basis = np.eye(x.size).reshape(x.size, *x.shape)
    want = np.array([np.sum(c * nd.gaussian_filter(e, 1.0, mode="mirror")) for e in basis])
    np.testing.assert_allclose(g.ravel(), want, rtol=1e-12, atol=1e-14)


def test_names_bound_before_fusejit_is_imported(tmp_path) -> None:
    """`from scipy.ndimage import gaussian_filter` (and scipy.linalg, scipy.spatial) before
    `import fusejit`: the name holds SciPy's own function, which a jitted function is given
    the wrapper of (frontend/captures.py); SciPy's own modules loaded before fusejit that
    bound a wrapped function get the wrapper (scipy_api.install)."""
    import os
    import subprocess
    import sys

    script = tmp_path / "order.py"
    script.write_text(
        "import numpy as np\n"
        "from scipy.ndimage import gaussian_filter\n"
        "from scipy.spatial.distance import cdist\n"
        "from scipy.linalg import solve\n"
        "import scipy.signal\n"
        "import fusejit\n"
        "def f(x):\n"
        "    return gaussian_filter(x, 1.0) + cdist(x, x) + solve(x @ x.T + np.eye(4), x)\n"
        "x = np.random.default_rng(0).standard_normal((4, 4))\n"
        "assert np.allclose(fusejit.jit(f)(x), f(x), rtol=1e-12, atol=1e-12)\n"
        "# SciPy's modules loaded first: _signaltools' own binding of upfirdn is the wrapper\n"
        "g = lambda v: scipy.signal.resample_poly(v, 3, 2)\n"
        "v = x.ravel()\n"
        "assert np.allclose(fusejit.jit(g)(v), g(v), rtol=1e-12, atol=1e-12)\n"
        "print('ok')\n")
    root = os.path.dirname(os.path.dirname(fusejit.__file__))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
