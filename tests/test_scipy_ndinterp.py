"""scipy.ndimage's spline interpolation of traced arrays (frontend/scipy_ndinterp.py):
map_coordinates, shift, zoom, rotate, affine_transform, spline_filter1d and spline_filter
against SciPy, over every order and mode; SciPy's bits without a prefilter (orders 0 and 1,
prefilter=False), its values to rounding with one."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit
from fusejit import UnsupportedError

nd = pytest.importorskip("scipy.ndimage")

RNG = np.random.default_rng(5)
IMG = RNG.standard_normal((7, 9))
MODES = ["constant", "grid-constant", "nearest", "reflect", "grid-mirror", "mirror", "wrap",
         "grid-wrap"]
MATRIX = [[0.9, 0.2], [-0.3, 1.1]]


def _check(got: np.ndarray, want: np.ndarray, exact: bool) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("order", range(6))
def test_map_coordinates_every_order_and_mode(order: int) -> None:
    """Every mode in one compiled function (one compile an order)."""
    coords = RNG.uniform(-3, 12, (2, 5, 4))  # (inside, near the edges and far outside)
    coords[0, 0, :3] = [0.0, 6.0, 6.5]  # (on the edges: exact nodes)

    def f(a, c):
        return tuple(nd.map_coordinates(a, c, order=order, mode=m, cval=0.7) for m in MODES)

    for got, want in zip(fusejit.jit(f)(IMG, coords), f(IMG, coords)):
        _check(got, want, exact=order <= 1)


@pytest.mark.parametrize("order", [1, 3])
@pytest.mark.parametrize("call", ["shift", "zoom", "rotate", "affine", "affine1d"])
def test_transforms_every_order_and_mode(call: str, order: int) -> None:
    kw = {"shift": ("shift", {"shift": (1.3, -2.6)}), "zoom": ("zoom", {"zoom": (1.7, 0.6)}),
          "rotate": ("rotate", {"angle": 33.0}),
          "affine": ("affine_transform", {"matrix": MATRIX, "offset": (0.5, -1.0),
                                          "output_shape": (6, 10)}),
          "affine1d": ("affine_transform", {"matrix": [0.8, 1.3], "offset": 0.4})}[call]
    fn, extra = getattr(nd, kw[0]), kw[1]

    def f(a):
        return tuple(fn(a, order=order, mode=m, cval=0.5, **extra) for m in MODES)

    for got, want in zip(fusejit.jit(f)(IMG), f(IMG)):
        _check(got, want, exact=order <= 1)


@pytest.mark.parametrize("order", [2, 3, 4, 5])
def test_spline_filters(order: int) -> None:
    line = RNG.standard_normal(11)
    cube = RNG.standard_normal((4, 1, 6))  # (an axis of one point is kept as it is)
    short = RNG.standard_normal(2)

    def f(v, c, s):
        return tuple(r for m in MODES for r in (
            nd.spline_filter1d(v, order, mode=m), nd.spline_filter(c, order, mode=m),
            nd.spline_filter1d(s, order, mode=m)))

    for got, want in zip(fusejit.jit(f)(line, cube, short), f(line, cube, short)):
        _check(got, want, exact=False)


def test_long_lines_skip_the_underflowed_middle_of_the_boundary_sums() -> None:
    line = RNG.standard_normal(2500)

    def f(v):
        return tuple(nd.spline_filter1d(v, 5, mode=m) for m in ("mirror", "reflect",
                                                                 "grid-wrap"))

    for got, want in zip(fusejit.jit(f)(line), f(line)):
        _check(got, want, exact=False)


@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int16, np.complex128])
def test_dtypes_stored_as_scipy_stores_them(dtype: type) -> None:
    img = (RNG.uniform(0, 200, (8, 8)) + 1j * RNG.uniform(0, 9, (8, 8))).astype(dtype) \
        if np.dtype(dtype).kind == "c" else RNG.uniform(0, 200, (8, 8)).astype(dtype)

    def f(a):
        return nd.rotate(a, 17.0, order=1, reshape=False)

    def g(a):
        return nd.zoom(a, 1.5, order=3)

    _check(fusejit.jit(f)(img), f(img), exact=True)
    got, want = fusejit.jit(g)(img), g(img)
    assert got.dtype == want.dtype and got.shape == want.shape
    if np.dtype(dtype).kind in "iu":  # (a value within rounding of .5 may round apart)
        assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
    else:
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 200)


def test_traced_coordinates_shift_and_matrix() -> None:
    """Coordinates given as a list of traced arrays, a traced shift (sub-pixel registration)
    and a traced affine matrix and offset."""
    yy, xx = np.meshgrid(np.linspace(0, 6, 5), np.linspace(0, 8, 4), indexing="ij")

    @fusejit.jit
    def warp(a, dy):
        return nd.map_coordinates(a, [yy + dy, xx * 1.0], order=3, mode="nearest")

    @fusejit.jit
    def moved(a, s):
        return nd.shift(a, s, order=1, mode="reflect")

    @fusejit.jit
    def affine(a, m, o):
        return nd.affine_transform(a, m, o, order=3, mode="mirror")

    _check(warp(IMG, 0.3), nd.map_coordinates(IMG, [yy + 0.3, xx], order=3, mode="nearest"),
           exact=False)
    s = np.array([0.4, -1.7])
    _check(moved(IMG, s), nd.shift(IMG, s, order=1, mode="reflect"), exact=True)
    m, o = np.array(MATRIX), np.array([0.3, 0.2])
    _check(affine(IMG, m, o), nd.affine_transform(IMG, m, o, order=3, mode="mirror"),
           exact=False)
    hom = np.eye(3)
    hom[:2, :2], hom[:2, 2] = m, o
    with pytest.raises(UnsupportedError, match="homogeneous"):
        affine(IMG, hom, o)


def test_rotate_planes_of_a_volume_and_grid_mode_zoom() -> None:
    vol = RNG.standard_normal((3, 6, 5))

    def f(v):
        return nd.rotate(v, -25.0, axes=(0, 2), order=3, mode="grid-wrap")

    def g(v):
        return nd.zoom(v, (1, 1.5, 0.7), order=2, mode="grid-constant", grid_mode=True)

    _check(fusejit.jit(f)(vol), f(vol), exact=False)
    _check(fusejit.jit(g)(vol), g(vol), exact=False)


def test_geometric_transform_traces_the_mapping_once() -> None:
    def shear(c):
        return (c[0] - 0.3 * c[1], c[1] + 0.5)

    def polar(c, r0):
        r = np.sqrt((c[0] - 3.0) ** 2 + (c[1] - 4.0) ** 2)
        return (3.0 + r0 * r / 10.0, 4.0 + np.arctan2(c[0] - 3.0, c[1] - 4.0))

    def f(a):
        return (nd.geometric_transform(a, shear, order=1, mode="nearest"),
                nd.geometric_transform(a, shear),
                nd.geometric_transform(a, polar, output_shape=(8, 5), extra_arguments=(3.0,),
                                       mode="reflect"),
                nd.geometric_transform(a, polar, extra_keywords={"r0": 2.0}, order=5,
                                       mode="grid-wrap"))

    for k, (got, want) in enumerate(zip(fusejit.jit(f)(IMG), f(IMG))):
        _check(got, want, exact=k == 0)

    def needs_numbers(c):
        return (c[0] if c[0] > 2 else 0.0, c[1])

    with pytest.raises(ValueError, match="truth value"):  # (NumPy's, for an array there)
        fusejit.jit(lambda a: nd.geometric_transform(a, needs_numbers))(IMG)


def test_unusual_points_give_cval_and_prefilter_off_is_exact() -> None:
    coords = np.array([[np.nan, 1.5, np.inf, 2.0], [1.0, np.nan, 0.5, -np.inf]])

    def f(a, c):
        return nd.map_coordinates(a, c, order=3, mode="mirror", cval=-2.0, prefilter=False)

    want = f(IMG, coords[:, 3:])
    got = fusejit.jit(f)(IMG, coords)
    np.testing.assert_array_equal(got[:3], [-2.0, -2.0, -2.0])
    assert np.isfinite(want).all()  # (SciPy's answer for -inf depends on its C casts)
    good = np.array([[2.0, 3.5], [4.0, 1.0]])
    _check(fusejit.jit(f)(IMG, good), f(IMG, good), exact=True)


def test_errors_are_scipys() -> None:
    def bad_order(a):
        return nd.map_coordinates(a, [[1.0], [2.0]], order=6)

    def bad_mode(a):
        return nd.shift(a, 1.0, mode="nope")

    def bad_coords(a):
        return nd.map_coordinates(a, [[1.0]])

    def into(a):
        return nd.zoom(a, 2.0, output=np.empty((14, 18)))

    for fn in (bad_order, bad_mode, bad_coords):
        with pytest.raises(Exception) as want:
            fn(IMG)
        with pytest.raises(type(want.value)):
            fusejit.jit(fn)(IMG)
    with pytest.raises(UnsupportedError, match="output="):
        fusejit.jit(into)(IMG)

    @fusejit.jit
    def traced_zoom(a, z):
        return nd.zoom(a, z)

    with pytest.raises(UnsupportedError, match="traced zoom"):
        traced_zoom(IMG, 2.0)


@settings(max_examples=examples(12), deadline=None)
@given(n0=st.integers(1, 6), n1=st.integers(2, 7), order=st.integers(0, 5),
       mode=st.sampled_from(MODES), dy=st.floats(-4, 4), zx=st.floats(0.3, 2.5))
def test_shift_then_zoom_property(n0: int, n1: int, order: int, mode: str, dy: float,
                                  zx: float) -> None:
    img = np.random.default_rng(n0 * 10 + n1).standard_normal((n0, n1))

    def f(a):
        b = nd.shift(a, (dy, 0.5), order=order, mode=mode)
        return nd.zoom(b, (1.0, zx), order=order, mode=mode)

    got, want = fusejit.jit(f)(img), f(img)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_gradients_in_the_image_and_the_coordinates() -> None:
    """fusejit.grad through map_coordinates (a differentiable warp): against central
    differences of SciPy's function."""
    coords = np.random.default_rng(1).uniform(0, 5, (2, 4))

    def loss(a, c):
        return (nd.map_coordinates(a, c, order=3, mode="nearest") ** 2).sum()

    ga, gc = fusejit.grad(loss, argnums=(0, 1))(IMG, coords)
    eps = 1e-6
    for got, arg in ((ga, 0), (gc, 1)):
        base = [IMG, coords]
        num = np.zeros_like(base[arg])
        for i in np.ndindex(num.shape):
            d = np.zeros_like(num)
            d[i] = eps
            up, down = list(base), list(base)
            up[arg], down[arg] = base[arg] + d, base[arg] - d
            num[i] = (loss(*up) - loss(*down)) / (2 * eps)
        np.testing.assert_allclose(got, num, atol=1e-6)
