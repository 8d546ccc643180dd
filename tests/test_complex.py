"""complex64 / complex128 against NumPy: every op on a grid of special values (Inf and NaN in
either part, signed zeros, huge and tiny parts), hypothesis-drawn programs over shapes (0-d,
zero-size, broadcasting), layouts and scalar promotion (NEP 50: float32 * 1j is complex64, an
int array * 1j complex128), reductions, matmul, casts, and the clear refusals."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from conftest import assert_same, match_mask, run_both
from hypothesis import given, note
from hypothesis import strategies as st

import fusejit
from fusejit.errors import UnsupportedError

CDTYPES = [np.dtype(np.complex64), np.dtype(np.complex128)]
_PARTS = [0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, 1e30, 3e-39, 1e300, -7e-20]


def special_grid(dtype: np.dtype) -> np.ndarray:
    """Every pair of the special parts as one complex value (huge parts overflow to Inf in
    complex64, tiny ones are subnormal)."""
    with np.errstate(all="ignore"):
        return np.array([complex(a, b) for a, b in itertools.product(_PARTS, _PARTS)], dtype)


UNARY = {
    "negative": np.negative, "positive": np.positive, "abs": np.abs, "conj": np.conj,
    "conjugate_method": lambda z: z.conjugate(), "square": np.square,
    "reciprocal": np.reciprocal, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "real": np.real,
    "imag": np.imag, "real_attr": lambda z: z.real * 1, "imag_attr": lambda z: z.imag + 0,
    "angle": np.angle, "angle_deg": lambda z: np.angle(z, deg=True),
    "pow_op2": lambda z: z ** 2, "pow_op_m1": lambda z: z ** -1, "pow_op_half": lambda z: z ** 0.5,
    "power2": lambda z: np.power(z, 2), "power3": lambda z: np.power(z, 3),
    "power7": lambda z: np.power(z, 7.0), "power_m1": lambda z: np.power(z, -1),
    "power_m5": lambda z: np.power(z, -5), "power0": lambda z: np.power(z, 0),
    "logical_not": np.logical_not, "to_bool": lambda z: z.astype(bool),
    "to_int8": lambda z: z.astype(np.int8), "to_int32": lambda z: z.astype(np.int32),
    "to_int64": lambda z: z.astype(np.int64), "to_float16": lambda z: z.astype(np.float16),
    "to_float32": lambda z: z.astype(np.float32), "to_float64": lambda z: z.astype(np.float64),
    "to_complex64": lambda z: z.astype(np.complex64),
    "to_complex128": lambda z: z.astype(np.complex128),
    "times_1j": lambda z: z * 1j, "plus_float": lambda z: z + 2.5, "div_int": lambda z: z / 3,
}
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "where": lambda a, b: np.where(a.real > b.real, a, b),
}


def quiet_numpy(f, *args):
    """NumPy's result of f(*args), its warnings (overflow, invalid) silenced."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_unary_special_values(dtype: np.dtype) -> None:
    """All unary ops in ONE compiled function (one compile) over the special-value grid."""
    z = special_grid(dtype)

    def f(z):
        return {name: fn(z) for name, fn in UNARY.items()}

    want = quiet_numpy(f, z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fusejit.jit(f)(z)
    for name in UNARY:
        assert_same(got[name], want[name], path=name)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_binary_special_values(dtype: np.dtype) -> None:
    z = special_grid(dtype)
    a, b = np.repeat(z, len(z)), np.tile(z, len(z))

    def f(a, b):
        return {name: fn(a, b) for name, fn in BINARY.items()}

    want = quiet_numpy(f, a, b)
    got = fusejit.jit(f)(a, b)
    for name in BINARY:
        assert_same(got[name], want[name], path=name)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_negated_products_keep_signed_zeros(dtype) -> None:
    """gcc 12 folds the negation of an fma (the parts of a product) into an fnmsub, which
    gives +0 where NumPy's negated zero sum is -0: conj and negative flip the sign bit
    instead (fj_cconj_T, fj_cneg_T). Long enough to run the vector loop."""
    zeros = [complex(r, i) for r in (1.0, -1.0, 0.0, -0.0) for i in (0.0, -0.0)]
    z = np.array(zeros * 8, dtype)
    s, w = np.float32(0.125), dtype(0.5 - 0j)
    for f in (lambda z: np.conj(z * s), lambda z: -(z * w), lambda z: np.conj(z * z),
              lambda z: -np.square(z), lambda z: np.conjugate(z * w + z)):
        run_both(f, z)


def test_uncommon_casts_to_unsigned_in_range() -> None:
    # In-range values only: an out-of-range (Inf/NaN) complex -> unsigned cast is one NumPy
    # itself flags as invalid, and its result is the C compiler's (README: complex numbers).
    z = np.array([0, 1.5 + 2j, 255.9 - 1j, 3e4j, 65535], np.complex64)
    run_both(lambda z: (z.astype(np.uint8), z.astype(np.uint16), z.astype(np.uint32),
                        z.astype(np.uint64)), z)


def test_complex128_to_complex64_rounds_before_widening_again() -> None:
    # gcc 12's SLP vectoriser folded (double _Complex)(float _Complex)z back to z (found by
    # the fuzzer once it drew complex128 nodes): fj_cnarrow_c64 keeps the rounding
    z = np.array([0.14693437888070093 + 0.5447934137805772j, 1 / 3 - 2j / 3, 1e300 + 1e-300j])

    def f(z, s):
        return (z.astype(np.complex64).astype(np.complex128) * 1, z.astype(np.complex64) + z,
                s.astype(np.complex64) + np.zeros(3))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 1e300 overflows complex64, as NumPy
        assert_same(fusejit.jit(f)(z, z[0]), f(z, z[0]), rtol=0.0)


def test_complex_to_real_cast_warns() -> None:
    z = np.array([1 + 2j], np.complex64)
    with pytest.warns(np.exceptions.ComplexWarning):
        got = fusejit.jit(lambda z: z.astype(np.float32))(z)
    assert_same(got, np.array([1.0], np.float32))


# --- promotion ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "int64", "uint16", "float16",
                                   "float32", "float64", "complex64", "complex128"])
def test_promotion_with_python_complex_and_arrays(dtype: str) -> None:
    x = (np.arange(6) % 3).astype(dtype)
    z64 = np.array([1 - 1j, 2j, -3, 0.5, 1e3, -0.0], np.complex64)
    run_both(lambda x, z: (x * 1j, 1j + x, x - 2.5j, x / (1 + 1j), x * z, z + x,
                           x == 1j, np.float32(2) * z, np.complex128(1j) * x), x, z64)


def test_scalars_and_zero_d() -> None:
    z0 = np.array(1.5 - 2j, np.complex64)
    run_both(lambda z: (z * 2, np.abs(z), z.real, z.imag, z.conj(), np.exp(z)), z0)
    run_both(lambda z: (z * 2, np.abs(z), np.sqrt(z)), np.complex128(3 + 4j))


def test_factories_and_real_arrays() -> None:
    x = np.linspace(-2, 2, 7)
    run_both(lambda x: (np.ones(3, complex), np.zeros((2, 2), np.complex64),
                        np.ones_like(x, dtype=np.complex64) * x, np.full(2, 1j),
                        np.conj(x), x.real, x.imag, np.angle(x)), x)


# --- reductions, matmul ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("shape,axis", [((0,), None), ((5, 7), None), ((5, 7), 0),
                                        ((5, 7), 1), ((3, 0, 4), 1), ((300, 3), 0),
                                        ((2, 3, 4), (0, 2))])
def test_reductions(dtype: np.dtype, shape: tuple[int, ...], axis) -> None:
    rng = np.random.default_rng(len(shape))
    z = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    run_both(lambda z: (z.sum(axis=axis), np.mean(z, axis=axis), z.var(axis=axis),
                        z.std(axis=axis), np.any(z, axis=axis), np.all(z, axis=axis),
                        z.sum(axis=axis, keepdims=True)), z)
    # a product of hundreds of factors: each part's rounding differs a few ulp from NumPy's
    w = z / np.abs(z)  # on the unit circle: no overflow
    assert_same(fusejit.jit(lambda w: np.prod(w, axis=axis))(w), np.prod(w, axis=axis),
                rtol=2e-5 if dtype == np.complex64 else 1e-12, atol=1e-5)


def test_reductions_of_special_values_and_views() -> None:
    z = special_grid(np.dtype(np.complex128)).reshape(12, 12)
    run_both(lambda z: (z.sum(axis=0), z[::2, ::-3].sum(axis=1), z.prod(axis=1),
                        z.sum(where=np.isfinite(z)), z.sum(initial=1j)), z)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_matmul(dtype: np.dtype) -> None:
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((4, 5, 6)) + 1j * rng.standard_normal((4, 5, 6))).astype(dtype)
    b = (rng.standard_normal((6, 3)) - 1j * rng.standard_normal((6, 3))).astype(dtype)
    x = rng.standard_normal((3, 2))

    def f(a, b, x):
        return a @ b, np.dot(a[0], b), a[1] @ a[2].T.conj(), (a @ b) @ x, np.matmul(b.T, a[0].T)

    got, want = fusejit.jit(f)(a, b, x), f(a, b, x)
    for g, w in zip(got, want):  # sums of products cancel: an absolute tolerance on the scale
        tol = 1e-5 if dtype == np.complex64 else 1e-13
        assert_same(g, w, rtol=tol, atol=tol * float(np.abs(w).max()))


# --- hypothesis: random programs over shapes and layouts ---------------------------------------


_OPS1 = [("neg", lambda z: -z), ("conj", np.conj), ("sq", np.square), ("exp", np.exp),
         ("log", np.log), ("sqrt", np.sqrt), ("recip", np.reciprocal), ("abs", np.abs),
         ("p3", lambda z: z ** 3), ("re", lambda z: z.real), ("im", lambda z: z.imag),
         ("angle", np.angle), ("times_j", lambda z: z * 1j)]
_OPS2 = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
         ("eq", lambda a, b: np.where(a == b, a, b)), ("lt", lambda a, b: np.where(a < b, a, b))]


@st.composite
def _program(draw: st.DrawFn):
    steps = []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            steps.append(("1", draw(st.integers(0, len(_OPS1) - 1))))
        else:
            steps.append(("2", draw(st.integers(0, len(_OPS2) - 1)), draw(st.booleans())))
    return steps


def _run(steps, a, b):
    x = a
    for s in steps:
        if s[0] == "1":
            x = _OPS1[s[1]][1](x)
        else:
            x = _OPS2[s[1]][1](x, b) if s[2] else _OPS2[s[1]][1](b, x)
    return x


@st.composite
def _operands(draw: st.DrawFn):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.sampled_from([0, 1, 2, 3, 5])) for _ in range(ndim))
    bshape = shape[draw(st.integers(0, ndim)):] if ndim else ()
    bshape = tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in bshape)
    dt = draw(st.sampled_from(CDTYPES))
    bdt = draw(st.sampled_from([*CDTYPES, np.dtype(np.float32), np.dtype(np.float64),
                                np.dtype(np.int32)]))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0])

    def values(shape, dt):
        re = rng.standard_normal(shape) * 4
        im = rng.standard_normal(shape) * 4
        if draw(st.integers(0, 3)) == 0 and re.size:
            re.flat[rng.integers(0, re.size)] = rng.choice(special)
            im.flat[rng.integers(0, im.size)] = rng.choice(special)
        v = re + 1j * im if dt.kind == "c" else re
        return np.asarray(v).astype(dt)

    a = values(shape, dt)
    if draw(st.booleans()) and ndim >= 2:  # non-contiguous: a transposed, reversed view
        a = np.ascontiguousarray(np.swapaxes(a, 0, 1)).swapaxes(0, 1)[::-1]
    kind = draw(st.sampled_from(["array", "scalar", "python"]))
    if kind == "array":
        b = values(bshape, bdt)
    elif kind == "scalar":
        b = values((), bdt)[()]
    else:
        b = draw(st.sampled_from([2, -1.5, 0.5j, 1 - 2j]))
    return a, b


def _literal_program(steps, b):
    def f(a):
        return _run(steps, a, b)

    return f


@given(_program(), _operands())
def test_random_complex_programs(steps, ops) -> None:
    a, b = ops
    note(f"steps={steps} a={a!r} b={b!r}")

    def f(a, b):
        return _run(steps, a, b)

    if isinstance(b, (int, float, complex)):  # a Python number in the code: a literal
        f = _literal_program(steps, b)

    args = (a,) if isinstance(b, (int, float, complex)) else (a, b)
    try:
        want = quiet_numpy(f, *args)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            fusejit.jit(f)(*args)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fusejit.jit(f)(*args)
    g, w = np.asarray(got), np.asarray(want)
    assert type(got) is type(want) and g.dtype == w.dtype and g.shape == w.shape
    # chains of transcendental ops amplify last-bit differences: 1e-4 relative (complex64)
    rtol = 1e-4 if w.dtype in (np.complex64, np.float32) else 1e-9
    ok = match_mask(g, w, rtol, atol=rtol * float(np.nanmax(np.abs(w[np.isfinite(w)]),
                                                             initial=1.0)))
    assert ok.all(), f"{g[~ok][:4]} vs {w[~ok][:4]}"


# --- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [
    lambda z: np.linalg.inv(z.reshape(2, 2)), lambda z: np.linalg.det(z.reshape(2, 2)),
], ids=["inv", "det"])
def test_refused_clearly(fn) -> None:
    z = np.array([1 + 1j, 2 - 1j, -1j, 3], np.complex64)
    with pytest.raises(UnsupportedError, match="not supported"):
        fusejit.jit(fn)(z)


def test_writing_through_real_part_refused() -> None:
    def f(z):
        z.real[0] = 1.0
        return z

    with pytest.raises(UnsupportedError, match=r"\.real"):
        fusejit.jit(f)(np.ones(3, np.complex128))


def test_in_place_update_of_complex_argument() -> None:
    def f(z, w):
        z *= w
        z += 1j
        return z

    z, w = np.array([1 + 2j, 3j, -1], np.complex64), np.array([2j, 1, 1 - 1j], np.complex64)
    want = f(z.copy(), w)
    got_z = z.copy()
    assert_same(fusejit.jit(f)(got_z, w), want)
    assert_same(got_z, want)


def test_composites_over_complex() -> None:
    """NumPy functions fusejit traces through or implements, on complex arrays: norms use
    |z|^2 (not z*z), vdot conjugates its first argument (of a second argument whose parts do
    not cancel to an exact 0, which only BLAS's summation order gives)."""
    rng = np.random.default_rng(5)
    z = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    run_both(lambda z: (np.linalg.norm(z), np.linalg.norm(z, axis=1),
                        np.linalg.norm(z, ord=0, axis=1), np.linalg.norm(z, ord=1, axis=0),
                        np.linalg.norm(z, "fro"), np.linalg.norm(z, 1), np.linalg.norm(z[0], 3),
                        np.vdot(z, z[::-1] * (1 + 2j)), np.inner(z, z), np.outer(z[0], z[1]),
                        np.einsum("ij,kj->ik", z, z), np.iscomplex(z), np.isreal(z),
                        np.stack([z, z]), np.concatenate([z, z.real])), z)


def test_python_complex_arguments() -> None:
    """Python complex arguments: weak (NEP 50) where they meet arrays, Python arithmetic among
    Python numbers (a Python complex returned as such), one trace for every value."""
    x = np.arange(4, dtype=np.float32)
    z = np.array([1 + 2j, 3, -1j, np.inf], np.complex64)

    def f(x, c, d):
        return x * c, c * d + 1, abs(c), np.abs(x - c * c), c

    fj = fusejit.jit(f)
    for c, d in [(2j, 1.5), (1 - 1j, 3), (complex(np.inf, 1), 2j)]:
        assert_same(fj(x, c, d), quiet_numpy(f, x, c, d))
        assert_same(fj(z, c, d), quiet_numpy(f, z, c, d))
    assert fj.trace_count == 6  # d a float, an int, a complex; x float32 or complex64


def test_export_with_complex(tmp_path) -> None:
    """An exported C library takes complex arrays and a Python complex (double _Complex)."""
    x = np.arange(4, dtype=np.float32)
    z = np.array([1 + 2j, 3, -1j, 0.5], np.complex64)

    def f(x, z, c):
        return x * c + z, np.abs(z @ z.reshape(4, 1))

    res = fusejit.export(f, x, z, 2j, path=str(tmp_path) + "/")
    header = open(res.header, encoding="utf-8").read()
    assert "const float _Complex *z" in header and "const double _Complex *c" in header
    g = fusejit.load(res.library)
    for c in (2j, 1 - 1j):
        got, want = g(x, z, c), f(x, z, c)
        assert_same(got[0], want[0])
        assert_same(got[1], want[1], rtol=1e-6)
