"""fusejit.grad over small programs: every differentiable op of the table against central
finite differences in float64 (elementwise ops, broadcasting, reductions, views and reshapes,
gathers, scatters and in-place updates, joins, matmul/einsum, casts, scans)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
from gradcheck import check_grad

import fusejit

RNG = np.random.default_rng(7)
X = RNG.uniform(0.2, 0.8, (3, 4))  # inside every unary op's domain
W = RNG.normal(size=(3, 4))

UNARY = ["negative", "positive", "absolute", "fabs", "reciprocal", "square", "sqrt", "cbrt",
         "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arctanh",
         "deg2rad", "rad2deg", "degrees", "radians", "conjugate"]
SPECIAL = ["erf", "erfc", "expit", "log_expit", "logit", "ndtr", "log_ndtr", "ndtri",
           "erfinv", "erfcinv", "erfcx", "gamma", "rgamma", "gammaln", "entr", "i0e", "i1", "i1e",
           "j0", "j1", "y0", "y1", "loggamma"]


def _grad_check(f, args, argnums=(0,), rtol=1e-6, atol=1e-7):
    grads = fusejit.grad(f, argnums=tuple(argnums))(*args)
    for a, g in zip(argnums, grads):
        check_grad(f, list(args), a, g, rtol=rtol, atol=atol)


def _chunks(names, n=4):
    return [names[i:i + n] for i in range(0, len(names), n)]


def _unary_check(ops, rtol=1e-6, atol=1e-7):
    """One program applying each op to its own argument: the gradient with respect to
    argument k is op k's derivative alone (one compile for several ops)."""
    def f(*xs):
        return sum(np.sum(op(x) * W) for op, x in zip(ops, xs))

    args = [X + 0.01 * k for k in range(len(ops))]
    _grad_check(f, args, tuple(range(len(ops))), rtol=rtol, atol=atol)


@pytest.mark.parametrize("names", _chunks(UNARY), ids=lambda n: "-".join(n))
def test_unary(names):
    _unary_check([getattr(np, n) for n in names])


def test_arccosh():
    _grad_check(lambda x: np.sum(np.arccosh(x + 1.5) ** 2), [X])


@pytest.mark.parametrize("names", _chunks(SPECIAL), ids=lambda n: "-".join(n))
def test_scipy_special(names):
    _unary_check([getattr(sp, n) for n in names], rtol=1e-5, atol=1e-6)


def test_bessel_functions_through_zero():
    """scipy.special i0, i0e, i1, i1e on both signs and at 0 (where i1' is 1/2)."""
    x = np.array([[-2.0, -0.3, 0.4, 1.7], [0.9, -1.1, 2.5, -0.05]])
    ops = [sp.i0, sp.i0e, sp.i1, sp.i1e]

    def f(*xs):
        return sum(np.sum(op(v) * W[:2]) for op, v in zip(ops, xs))

    _grad_check(f, [x + 0.01 * k for k in range(4)], (0, 1, 2, 3), rtol=1e-5, atol=1e-6)
    g = fusejit.grad(lambda v: np.sum(sp.i1(v) + sp.i1e(v)))(np.zeros(3))
    np.testing.assert_allclose(g, 1.0)


BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "fmax",
          "fmin", "hypot", "arctan2", "logaddexp", "logaddexp2", "remainder", "fmod"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcasting(name):
    """Both operands, one broadcast along rows and the other along a new leading axis."""
    op = getattr(np, name)
    y = RNG.uniform(0.3, 0.9, (3, 1))
    _grad_check(lambda x, y, w: np.sum(op(x[0], y) * w), [X, y, W], argnums=(0, 1))


@pytest.mark.parametrize("name", ["xlogy", "xlog1py", "rel_entr", "kl_div", "beta", "betaln",
                                  "poch"])
def test_binary_special(name):
    op = getattr(sp, name)
    y = RNG.uniform(0.3, 0.9, (4,))
    _grad_check(lambda x, y, w: np.sum(op(x, y) * w), [X, y, W], argnums=(0, 1))


def test_power_forms():
    _grad_check(lambda x: np.sum(x ** 3 + x ** 2 + x ** 0.5 + 2.0 ** x + x ** 1), [X])


def test_copysign_where_clip():
    s = RNG.normal(size=(3, 4))
    _grad_check(lambda x, s: np.sum(np.copysign(x, s) * np.arange(12.0).reshape(3, 4)), [X, s])
    _grad_check(lambda x, y: np.sum(np.where(x > 0.5, x * y, np.sin(y))), [X, W], (0, 1))
    _grad_check(lambda x, lo: np.sum(np.clip(x, lo, 0.6) * W), [X, np.full(4, 0.4)], (0, 1))


def test_subgradients_follow_jax():
    """Ties split evenly (maximum, minimum, clip, max reductions); abs has gradient 1 at 0."""
    x = np.array([1.0, 2.0, 2.0, 0.0])
    np.testing.assert_array_equal(fusejit.grad(lambda x: np.maximum(x, 2.0).sum())(x),
                                  [0, 0.5, 0.5, 0])
    np.testing.assert_array_equal(fusejit.grad(lambda x: x.max())(x), [0, 0.5, 0.5, 0])
    np.testing.assert_array_equal(fusejit.grad(lambda x: np.abs(x).sum())(x - 1),
                                  [1, 1, 1, -1])
    np.testing.assert_array_equal(fusejit.grad(lambda x: np.clip(x, 0.0, 2.0).sum())(x),
                                  [1, 0.5, 0.5, 0.5])
    np.testing.assert_array_equal(fusejit.grad(lambda x: np.floor(x).sum() + np.sign(x).sum())(x),
                                  [0, 0, 0, 0])


@pytest.mark.parametrize("kind", ["sum", "mean", "var", "std", "max", "min", "prod",
                                  "logsumexp", "ptp"])
def test_reductions(kind):
    fns = {"logsumexp": lambda x, axis: sp.logsumexp(x, axis=axis),
           "ptp": lambda x, axis: np.ptp(x, axis=axis)}
    fn = fns.get(kind) or getattr(np, kind)
    axes = (None, 0, 1, (0, 1))

    def f(*xs):  # one argument per axis choice: each gradient is that reduction's alone
        total = sum(np.sum(np.sin(fn(x, axis=a)) * 1.5) for x, a in zip(xs, axes))
        if kind in ("logsumexp", "ptp"):
            return total + np.sum(fn(xs[4], axis=1))
        return total + np.sum(fn(xs[4], axis=1, keepdims=True) * xs[4])

    _grad_check(f, [X + 0.01 * k for k in range(5)], tuple(range(5)))


def test_prod_with_zeros():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    g = fusejit.grad(lambda x: np.prod(x, axis=1).sum())(x)
    np.testing.assert_array_equal(g, [[0, 6, 0], [0, 0, 0], [8, 4, 2]])


VIEWS = {
    "transpose": lambda x: x.T * np.arange(3.0),
    "slice_step": lambda x: x[::2, 1:4:2] * 3.0,
    "negative_step": lambda x: x[::-1, ::-2] ** 2,
    "int_index": lambda x: x[1] * x[:, 2].sum(),
    "reshape_merge": lambda x: (x.reshape(12) * np.arange(12.0)).reshape(2, 6),
    "reshape_split": lambda x: x.reshape(3, 2, 2).transpose(2, 0, 1) ** 2,
    "ravel": lambda x: np.sin(x.T.ravel()),
    "expand_squeeze": lambda x: np.expand_dims(x, 1).squeeze() * x[None],
    "broadcast_to": lambda x: np.broadcast_to(x[:, :1], (3, 5)) ** 2,
    "split": lambda x: np.split(x, 2, axis=1)[1] * np.split(x, 2, axis=1)[0],
    "concatenate": lambda x: np.concatenate([x, x[:, :2] ** 2], axis=1),
    "stack": lambda x: np.stack([x, np.sin(x)], axis=-1),
    "roll": lambda x: np.roll(x, 1, axis=1) * x,
    "tile": lambda x: np.tile(x, (2, 1)),
    "pad": lambda x: np.pad(x, 1) ** 2,
    "flip": lambda x: np.flip(x) * x,
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views_and_joins(name):
    f = VIEWS[name]
    w = RNG.normal(size=np.shape(f(X)))
    _grad_check(lambda x: np.sum(f(x) * w), [X])


GATHERS = {
    "take_repeats": lambda x: x[:, [0, 2, 2, 3]],
    "fancy_pairs": lambda x: x[np.arange(3), np.array([1, 3, 1])],
    "take_wrap": lambda x: np.take(x, [5, -1, 7], axis=1, mode="wrap"),
    "take_clip": lambda x: np.take(x, [5, -1, 2], axis=1, mode="clip"),
    "take_along_axis": lambda x: np.take_along_axis(x, np.array([[3, 0], [1, 1], [2, 0]]), 1),
    "traced_int": lambda x: x[np.argmax(x[:, 0])],
}


@pytest.mark.parametrize("name", list(GATHERS))
def test_gathers(name):
    f = GATHERS[name]
    w = RNG.normal(size=np.shape(f(X)))
    _grad_check(lambda x: np.sum(f(x) * w), [X])


def test_gather_by_argument_index():
    idx = np.array([2, 0, 2, 1, 2])
    _grad_check(lambda x, i: np.sum(np.exp(x[i]) * np.arange(4.0)), [X, idx])


def _inplace(x, v):
    x = x * 1.0
    x[1:, ::2] = v[:2, :2] ** 2
    x[0] += v[2]
    np.add.at(x, (np.array([0, 0, 2]), np.array([1, 1, 3])), v[0, :3])
    x[[2, 1], 1] = np.sin(v[1, :2])
    return np.sum(x * W)


def test_inplace_updates_are_functional():
    v = RNG.normal(size=(3, 4))
    _grad_check(_inplace, [X, v], argnums=(0, 1))


def test_update_of_argument_inside_f_does_not_write_it():
    def f(x):
        x *= 2.0
        x[0] = 0.0
        return np.sum(x ** 2)

    x = X.copy()
    g = fusejit.grad(f)(x)
    np.testing.assert_array_equal(x, X)
    np.testing.assert_allclose(g, np.vstack([np.zeros(4), 8 * X[1:]]))


def test_matmul_einsum_dot():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    v = RNG.normal(size=4)
    batched = RNG.normal(size=(2, 4, 3))
    _grad_check(lambda a, b: np.sum(np.tanh(a @ b)), [a, b], (0, 1))
    _grad_check(lambda a, v: np.sum((a @ v) ** 2) + v @ v, [a, v], (0, 1))
    _grad_check(lambda a, c: np.sum(np.matmul(a, c) ** 2), [a, batched], (0, 1))
    _grad_check(lambda a, b: np.sum(np.einsum("ij,jk->ik", a, b) ** 2), [a, b], (0, 1))
    _grad_check(lambda a, b: np.sum(np.dot(a, b) * 2.0), [a, b], (0, 1))


def test_casts_and_float32():
    x32 = X.astype(np.float32)
    g = fusejit.grad(lambda x: np.sum(np.sin(x.astype(np.float64)) * 2))(x32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * np.cos(X), rtol=1e-6)
    g = fusejit.grad(lambda x: np.sum(np.exp(x)).astype(np.float64))(x32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.exp(x32), rtol=1e-6)
    _grad_check(lambda x: np.sum(x.astype(np.float32).astype(np.float64) * 0 + x * 2), [X])


def test_cumsum():
    _grad_check(lambda x: np.sum(np.cumsum(x, axis=1) ** 2) + np.sum(np.cumsum(x) * 0.5), [X])


def test_cumprod_exact_with_zeros():
    w = RNG.normal(size=(3, 5))
    x = RNG.uniform(0.5, 1.5, (3, 5))
    _grad_check(lambda x: np.sum(np.cumprod(x, axis=1) * w) + np.sum(np.cumprod(x) ** 2), [x])
    xz = x.copy()
    xz[0, 1] = xz[1, 0] = xz[1, 3] = xz[2, 4] = 0.0  # first zeros, second zeros, last
    _grad_check(lambda x: np.sum(np.cumprod(x, axis=1) * w), [xz])
    _grad_check(lambda x: np.sum(np.multiply.accumulate(x, axis=0) * w), [xz])


def test_running_max_min_and_subtract_accumulate():
    x, w = RNG.normal(size=(4, 6)), RNG.normal(size=(4, 6))
    _grad_check(lambda x: np.sum(np.maximum.accumulate(x, axis=1) * w)
                + np.sum(np.minimum.accumulate(x, axis=0) ** 2)
                + np.sum(np.fmax.accumulate(x, axis=1) * x), [x])
    _grad_check(lambda x: np.sum(np.subtract.accumulate(x, axis=1) * w), [x])
    # a running max that stays: every later cotangent goes to the element that set it
    g = fusejit.grad(lambda v: np.sum(np.maximum.accumulate(v) * np.arange(1.0, 6.0)))(
        np.array([1.0, 3.0, 2.0, 0.0, 4.0]))
    np.testing.assert_array_equal(g, [1.0, 9.0, 0.0, 0.0, 5.0])
    # a NaN takes over the running maximum, and the cotangent of every later value
    g = fusejit.grad(lambda v: np.sum(np.maximum.accumulate(v)))(np.array([1.0, np.nan, 2.0]))
    np.testing.assert_array_equal(g, [1.0, 2.0, 0.0])


def _spd(n, k=0):
    a = RNG.normal(size=(k, n, n) if k else (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_cholesky():
    """Only the triangle NumPy reads gets a gradient (central differences of NumPy's
    cholesky see no other entry)."""
    w = RNG.normal(size=(3, 3))
    a = _spd(3)
    skew = a + np.triu(w, 1)  # NumPy reads the lower triangle (the upper one with upper=True)
    _grad_check(lambda m: np.sum(np.linalg.cholesky(m) * w), [skew])
    _grad_check(lambda m: np.sum(np.linalg.cholesky(m, upper=True) ** 3), [a + np.tril(w, -1)])
    _grad_check(lambda m: np.sum(np.log(np.diagonal(np.linalg.cholesky(m), axis1=-2,
                                                   axis2=-1))), [_spd(4, 2)])


def test_cholesky_upper_reads_the_upper_triangle():
    a = _spd(3, 2)
    a[..., 0, 2] += 0.7  # not symmetric: NumPy's upper=True reads only the upper triangle
    for m in (a, a.astype(np.float32)):
        got = fusejit.jit(lambda m: np.linalg.cholesky(m, upper=True))(m)
        want = np.linalg.cholesky(m, upper=True)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5 if m.dtype == np.float32 else 1e-12)


def test_eigh_and_eigvalsh():
    w = RNG.normal(size=(3, 3))
    a = _spd(3) + np.tril(w, -1)  # eigh reads the lower triangle (UPLO='L')

    def f(m):
        vals, vecs = np.linalg.eigh(m)
        # a loss of the eigenvectors that does not depend on their signs
        return np.sum(vals * np.arange(3.0)) + np.sum((vecs * vecs) @ np.arange(1.0, 4.0) * w[0])

    _grad_check(f, [a], rtol=1e-5)
    _grad_check(lambda m: np.sum(np.linalg.eigvalsh(m, UPLO="U") ** 2), [_spd(3) + np.triu(w, 1)])
    _grad_check(lambda m: np.sum(np.linalg.eigh(m)[1][..., 0] ** 4)
                + np.sum(np.linalg.eigvalsh(m) ** 3), [_spd(3, 2)], rtol=1e-5)
    # repeated eigenvalues: the eigenvalues still differentiate (the eigenvectors would not)
    g = fusejit.grad(lambda m: np.sum(np.linalg.eigh(m)[0] * np.array([1.0, 2.0, 3.0])))(
        2.0 * np.eye(3))
    assert np.isfinite(g).all()
    _grad_check(lambda m: np.sum(np.linalg.eigvalsh(m)), [2.0 * np.eye(3)])


def test_sort_and_order_statistics():
    """np.sort's cotangent goes back through the permutation: np.median, np.quantile and
    np.partition, built on the sort kernel, differentiate too."""
    _grad_check(lambda x: np.sum(np.sort(x, axis=1) * np.arange(X.shape[1])), [X])
    _grad_check(lambda x: np.sum(np.sort(x, axis=0)[-1] ** 2) + np.median(x), [X])
    _grad_check(lambda x: np.sum(np.quantile(x, [0.2, 0.7], axis=1) ** 2), [X])
    _grad_check(lambda x: np.partition(x.ravel(), 3)[3] * 2.0, [X])
    g = fusejit.grad(lambda x: np.sum(np.argsort(x) * x))(np.array([3.0, 1.0, 2.0]))
    np.testing.assert_array_equal(g, [1.0, 2.0, 0.0])  # argsort: a constant, no gradient


def test_nan_propagates():
    """Gradients through NaN/inf follow the arithmetic (sqrt(0) has an infinite slope)."""
    g = fusejit.grad(lambda x: np.sum(np.sqrt(x)))(np.array([0.0, 4.0, np.nan]))
    assert np.isinf(g[0]) and g[1] == 0.25 and np.isnan(g[2])
    # a masked NaN still poisons the chain rule: 0 (nan_to_num's cotangent where it replaced
    # a NaN) times arcsin'(2) = NaN is NaN, as in JAX, though the masked function is flat there
    g = fusejit.grad(lambda x: np.sum(np.nan_to_num(np.arcsin(x))))(np.array([0.6, 2.0, -3.0]))
    assert np.isclose(g[0], 1.25, rtol=1e-15) and np.isnan(g[1:]).all()


def test_overlapping_slices_and_stencils():
    """Adjoints of overlapping slices, integer indices, strided slices and gathers that reach
    one array are summed (the box cells, in-place region additions and scatter-add chains of
    frontend/accumulate.py)."""
    y = RNG.normal(size=(5, 6))

    def f(x):
        dx = x[1:, :] - x[:-1, :]
        dy = x[:, 2:] * x[:, :-2]
        return (np.sum(dx ** 2) + np.sum(np.sin(dy)) + x[1, 2] * x[3, 4] + np.sum(x[::2, 1::3])
                + np.sum(x[[0, 0, 4], [5, 5, 1]] ** 3) + np.sum(x * x[2]))

    _grad_check(f, [y])  # 25 cells: in-place region additions instead

    def laplace(x):  # 9 cells of the box grid, each written once
        return np.sum((x[1:, :] - x[:-1, :]) ** 2) + np.sum(np.tanh(x[:, 1:] - x[:, :-1]))

    _grad_check(laplace, [y])


def test_rosenbrock_gradient_is_one_full_size_kernel():
    def rosen(x):
        return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    x = RNG.uniform(-1.5, 1.5, 1000)
    g = fusejit.grad(rosen)
    d = x[1:] - x[:-1] ** 2
    want = np.zeros_like(x)
    want[:-1] = -400 * x[:-1] * d - 2 * (1 - x[:-1])
    want[1:] += 200 * d
    np.testing.assert_allclose(g(x), want, rtol=1e-12, atol=1e-12)
    (jf,) = g._compiled.values()  # the jitted program behind the gradient function
    domains = sorted(k.domain for k in jf.lower_for(x).program.kernels)
    assert domains == [(1,), (1,), (998,)]  # the two ends, and everything else at once


def test_linalg_inv_solve_det():
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    b, v = RNG.normal(size=(3, 2)), RNG.normal(size=3)
    w = RNG.normal(size=(3, 3))
    _grad_check(lambda a: np.sum(np.linalg.inv(a) * w), [a])
    _grad_check(lambda a, b: np.sum(np.linalg.solve(a, b) ** 2), [a, b], (0, 1))
    _grad_check(lambda a, v: np.sum(np.sin(np.linalg.solve(a, v))), [a, v], (0, 1))
    _grad_check(lambda a: np.linalg.slogdet(a)[1] * 2 + np.linalg.det(a), [a])
    stacked = np.stack([a, a.T])
    _grad_check(lambda a: np.sum(np.linalg.inv(a) @ np.swapaxes(a, -1, -2)), [stacked])


COMPOSED = [
    lambda a: np.linalg.norm(a) + np.linalg.norm(a, axis=1).sum() + np.linalg.norm(a, ord=1),
    lambda a: np.average(a, axis=0, weights=np.arange(1.0, 5.0)).sum() + np.sum(np.cov(a)),
    lambda a: np.sum(np.diff(a, axis=1) ** 2) + np.sum(np.triu(a) * np.tril(a, -1).T),
    lambda a: np.sum(np.tensordot(a, a, axes=([1], [0])) ** 2) + np.trace(a),
    lambda a: np.sum(np.kron(a[:2, :2], a[2:, 2:]) ** 2) + np.einsum("ij,jk,kl->", a, a, a),
    lambda a: np.sum(sp.softmax(a, axis=1) * np.arange(4.0)) + np.sum(sp.log_softmax(a, 0)),
    lambda a: np.nanmean(a, axis=1).sum() + np.nanmax(a) + np.mean(a, where=a > 0.5),
    lambda a: np.sum(np.repeat(a, 2, axis=0) ** 2) + np.max(a, initial=0.5) + np.sum(np.sinc(a)),
]


def test_numpy_functions_composed_of_traced_ops():
    """NumPy functions fusejit traces as compositions (norm, cov, softmax, nan-reductions,
    masked means, kron, tensordot, einsum chains...) differentiate through their parts."""
    def f(*xs):
        return sum(fn(x) for fn, x in zip(COMPOSED, xs))

    a = RNG.uniform(0.2, 1.0, (4, 4))
    _grad_check(f, [a + 0.01 * k for k in range(len(COMPOSED))], tuple(range(len(COMPOSED))),
                rtol=1e-5)


def test_assignment_through_repeated_indices():
    """`y[idx] = v` / `y[idx] += v` with a repeated position keeps the last write (NumPy's
    rule), so only that element of v gets the position's cotangent, and y's old value there
    gets it once (the fuzzer found v getting it once per repeat, and x twice)."""
    idx = np.array([-2, 2, -1, -1, 0])
    w = RNG.normal(size=(4, 3))

    def add_into(x, v):
        y = x * 1.0
        y[idx] += v
        return np.sum(y * w)

    def set_into(x, v, i):
        y = x * 1.0
        y[i] = v * 2.0
        return np.sum(y * y * w)

    x, v = RNG.normal(size=(4, 3)), RNG.normal(size=(5, 3))
    _grad_check(add_into, [x, v], argnums=(0, 1))
    _grad_check(set_into, [x, v, idx], argnums=(0, 1))
    gv = fusejit.grad(add_into, argnums=1)(x, v)
    assert (gv[[0, 2]] == 0).all() and (gv[[1, 3, 4]] != 0).all()
