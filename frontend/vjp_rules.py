"""The vector-Jacobian product of every op of the table (frontend/ops.py), installed on each
op's record as its `vjp` entry (`ops.set_vjp`); frontend/autodiff.py runs them backwards.

A rule is `rule(node, g) -> one cotangent (or None: no gradient) per input of node`, built
from ordinary IR nodes (frontend/adjoint.py). Elementwise rules return cotangents of the
node's (broadcast) shape; the engine sums them back to each input's shape. Besides rules an
op's record says one of:
  ZERO     piecewise constant (floor, sign, rint...): the gradient is zero, as in JAX;
  INTEGER  its results are bool or integer (comparisons, logic, bit ops, argmax): no
           gradient ever flows through it;
  SOURCE   no inputs (input, const, empty);
  Refused  no rule (with why): differentiating through it raises, naming the op and line.
           A rule may also give Refused in one input's place: the other inputs' gradients
           flow, and only a gradient that reaches through that input raises.
Subgradients follow JAX: maximum/minimum (and clip, which is their composition, and max/min
reductions) split the gradient evenly between tied operands; abs has gradient 1 at 0 (JAX's
select(x >= 0, g, -g)); power's exponent gets 0 where the base is 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import adjoint as A
from . import vjp_more, vjp_poly, vjp_special, vjp_special_more
from .ir import Node
from .ops import FILTER_SCANS, OPS, set_vjp
from .ops_more import BITCAST_DTYPES
from .views import view_node

Rule = Callable[[Node, Node], tuple]


@dataclass(frozen=True)
class Marker:
    kind: str
    reason: str = ""


ZERO = Marker("zero")
INTEGER = Marker("integer")
SOURCE = Marker("source")


def Refused(reason: str) -> Marker:  # noqa: N802 - reads as a kind of record entry
    return Marker("refused", reason)


def _unary(fn: Callable[[Node, Node, Node], Node]) -> Rule:
    """A rule from d(out)/dx times g, written over (x, out, g)."""
    return lambda node, g: (fn(node.inputs[0], node, g),)


def _binary(fx: Callable[[Node, Node, Node, Node], Node | None],
            fy: Callable[[Node, Node, Node, Node], Node | None]) -> Rule:
    def rule(node: Node, g: Node) -> tuple:
        x, y = node.inputs
        return fx(x, y, node, g), fy(x, y, node, g)

    return rule


M = A.mul
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
UNARY: dict[str, Callable[[Node, Node, Node], Node]] = {
    "negative": lambda x, y, g: A.neg(g),
    "positive": lambda x, y, g: g,
    "conjugate": lambda x, y, g: g,
    "copy": lambda x, y, g: g,
    "absolute": lambda x, y, g: A.where(A.cmp("greater_equal", x, 0.0), g, A.neg(g)),
    "fabs": lambda x, y, g: A.where(A.cmp("greater_equal", x, 0.0), g, A.neg(g)),
    "reciprocal": lambda x, y, g: A.neg(M(g, M(y, y))),
    "square": lambda x, y, g: M(g, M(x, 2.0)),
    "sqrt": lambda x, y, g: A.div(M(g, 0.5), y),
    "cbrt": lambda x, y, g: A.div(g, M(M(y, y), 3.0)),
    "exp": lambda x, y, g: M(g, y),
    "exp2": lambda x, y, g: M(g, M(y, math.log(2))),
    "expm1": lambda x, y, g: M(g, A.add(y, 1.0)),
    "log": lambda x, y, g: A.div(g, x),
    "log2": lambda x, y, g: A.div(g, M(x, math.log(2))),
    "log10": lambda x, y, g: A.div(g, M(x, math.log(10))),
    "log1p": lambda x, y, g: A.div(g, A.add(x, 1.0)),
    "sin": lambda x, y, g: M(g, A.ew("cos", x)),
    "cos": lambda x, y, g: A.neg(M(g, A.ew("sin", x))),
    "tan": lambda x, y, g: M(g, A.add(M(y, y), 1.0)),
    "arcsin": lambda x, y, g: A.div(g, A.ew("sqrt", A.sub(1.0, M(x, x)))),
    "arccos": lambda x, y, g: A.neg(A.div(g, A.ew("sqrt", A.sub(1.0, M(x, x))))),
    "arctan": lambda x, y, g: A.div(g, A.add(M(x, x), 1.0)),
    "sinh": lambda x, y, g: M(g, A.ew("cosh", x)),
    "cosh": lambda x, y, g: M(g, A.ew("sinh", x)),
    "tanh": lambda x, y, g: M(g, A.sub(1.0, M(y, y))),
    "arcsinh": lambda x, y, g: A.div(g, A.ew("sqrt", A.add(M(x, x), 1.0))),
    "arccosh": lambda x, y, g: A.div(g, A.ew("sqrt", A.sub(M(x, x), 1.0))),
    "arctanh": lambda x, y, g: A.div(g, A.sub(1.0, M(x, x))),
    "deg2rad": lambda x, y, g: M(g, math.pi / 180),
    "radians": lambda x, y, g: M(g, math.pi / 180),
    "rad2deg": lambda x, y, g: M(g, 180 / math.pi),
    "degrees": lambda x, y, g: M(g, 180 / math.pi),
    "erf": lambda x, y, g: M(g, M(A.ew("exp", A.neg(M(x, x))), 2 / _SQRT_PI)),
    "erfc": lambda x, y, g: M(g, M(A.ew("exp", A.neg(M(x, x))), -2 / _SQRT_PI)),
    "expit": lambda x, y, g: M(g, M(y, A.sub(1.0, y))),
    "log_expit": lambda x, y, g: M(g, A.ew("expit", A.neg(x))),
    "logit": lambda x, y, g: A.div(g, M(x, A.sub(1.0, x))),
    "ndtr": lambda x, y, g: M(g, M(A.ew("exp", M(M(x, x), -0.5)), 1 / _SQRT_2PI)),
    "log_ndtr": lambda x, y, g: M(g, M(A.ew("exp", A.sub(M(M(x, x), -0.5), y)),
                                       1 / _SQRT_2PI)),
    "ndtri": lambda x, y, g: M(g, M(A.ew("exp", M(M(y, y), 0.5)), _SQRT_2PI)),
    "erfinv": lambda x, y, g: M(g, M(A.ew("exp", M(y, y)), _SQRT_PI / 2)),
    "erfcinv": lambda x, y, g: M(g, M(A.ew("exp", M(y, y)), -_SQRT_PI / 2)),
    "erfcx": lambda x, y, g: M(g, A.sub(M(M(x, y), 2.0), 2 / _SQRT_PI)),
    "gammaln": lambda x, y, g: M(g, A.ew("digamma", x)),
    "loggamma": lambda x, y, g: M(g, A.ew("digamma", x)),
    "gamma": lambda x, y, g: M(g, M(y, A.ew("digamma", x))),  # gamma' = gamma psi
    "rgamma": lambda x, y, g: A.neg(M(g, M(y, A.ew("digamma", x)))),
    # modified Bessel functions: I0' = I1, I1' = I0 - I1/x (1/2 at 0), and the scaled
    # i0e = exp(-|x|) I0, i1e = exp(-|x|) I1 subtract sign(x) times themselves
    "i0": lambda x, y, g: M(g, A.ew("i1", x)),
    "i0e": lambda x, y, g: M(g, A.sub(A.ew("i1e", x), M(A.ew("sign", x), y))),
    "i1": lambda x, y, g: M(g, _bessel1(x, y, A.ew("i0", x))),
    "i1e": lambda x, y, g: M(g, A.sub(_bessel1(x, y, A.ew("i0e", x)), M(A.ew("sign", x), y))),
    "entr": lambda x, y, g: A.neg(M(g, A.add(A.ew("log", x), 1.0))),
    "exp1": lambda x, y, g: A.neg(M(g, A.div(A.ew("exp", A.neg(x)), x))),  # E1' = -e^-x / x
    "expi": lambda x, y, g: M(g, A.div(A.ew("exp", x), x)),  # Ei' = e^x / x
    # Bessel functions of the first and second kind: J0' = -J1, J1' = J0 - J1/x (1/2 at 0),
    # Y0' = -Y1, Y1' = Y0 - Y1/x
    "j0": lambda x, y, g: A.neg(M(g, A.ew("j1", x))),
    "j1": lambda x, y, g: M(g, _bessel1(x, y, A.ew("j0", x))),
    "y0": lambda x, y, g: A.neg(M(g, A.ew("y1", x))),
    "y1": lambda x, y, g: M(g, A.sub(A.ew("y0", x), A.div(y, x))),
}


def _bessel1(x: Node, y: Node, zeroth: Node) -> Node:
    """zeroth - y / x, and 1/2 at x == 0 (the limit of I1(x)/x)."""
    zero = A.cmp("equal", x, 0.0)
    return A.where(zero, 0.5, A.sub(zeroth, A.div(y, A.where(zero, 1.0, x))))


def _tie(a: Node, b: Node, out: Node, g: Node) -> Node:
    """g routed to operand `a` of a max/min `out` of (a, b): all of it where a alone is the
    result, half where both are (JAX's tie rule)."""
    return A.where(A.cmp("equal", a, out), A.where(A.cmp("equal", b, out), M(g, 0.5), g), 0.0)


def _tie_const(x: Node, c: Node, out: Node, g: Node, beyond: str) -> Node:
    """_tie for x against a scalar constant c, with the same values: x alone is the result
    where `out` is `beyond` c (greater for maximum, less for minimum), the two tie where
    x == c. Its masks read the result and `x == c`, a function of x alone that the memory
    plan may store as bytes (lowering/narrow.py), so max(z, 0)'s backward need not keep z."""
    return A.where(A.cmp(beyond, out, c), g, A.where(A.cmp("equal", x, c), M(g, 0.5), 0.0))


def _scalar_const(n: Node) -> bool:
    return n.op == "const" and n.attrs["value"].size == 1 and not np.isnan(
        n.attrs["value"]).any()


def _extreme(beyond: str) -> tuple:
    def fx(x: Node, y: Node, o: Node, g: Node) -> Node | None:
        if _scalar_const(x):
            return None  # a constant needs no cotangent
        return _tie_const(x, y, o, g, beyond) if _scalar_const(y) else _tie(x, y, o, g)

    def fy(x: Node, y: Node, o: Node, g: Node) -> Node | None:
        return fx(y, x, o, g)

    return fx, fy


def _pow_x(x: Node, y: Node, out: Node, g: Node) -> Node:
    if y.op == "const" and y.attrs["value"].size == 1:
        c = float(y.attrs["value"].reshape(-1)[0])
        if c == 0:
            return A.zeros(out.shape, out.dtype)
        if c == 1:
            return g
        if c == 2:
            return M(g, M(x, 2.0))
        return M(g, M(A.ew("power", x, c - 1), c))
    return A.where(A.cmp("equal", y, 0.0), 0.0, M(g, M(y, A.ew("power", x, A.sub(y, 1.0)))))


def _pow_y(x: Node, y: Node, out: Node, g: Node) -> Node:
    zero = A.cmp("equal", x, 0.0)
    return A.where(zero, 0.0, M(g, M(out, A.ew("log", A.where(zero, 1.0, x)))))


BINARY: dict[str, tuple] = {
    "add": (lambda x, y, o, g: g, lambda x, y, o, g: g),
    "subtract": (lambda x, y, o, g: g, lambda x, y, o, g: A.neg(g)),
    "multiply": (lambda x, y, o, g: M(g, y), lambda x, y, o, g: M(g, x)),
    "divide": (lambda x, y, o, g: A.div(g, y), lambda x, y, o, g: A.neg(A.div(M(g, o), y))),
    "power": (_pow_x, _pow_y),
    "maximum": _extreme("greater"),
    "minimum": _extreme("less"),
    "fmax": _extreme("greater"),
    "fmin": _extreme("less"),
    "remainder": (lambda x, y, o, g: g,
                  lambda x, y, o, g: A.neg(M(g, A.ew("floor", A.div(x, y))))),
    "fmod": (lambda x, y, o, g: g, lambda x, y, o, g: A.neg(M(g, A.ew("trunc", A.div(x, y))))),
    "heaviside": (lambda x, y, o, g: None,
                  lambda x, y, o, g: A.where(A.cmp("equal", x, 0.0), g, 0.0)),
    "hypot": (lambda x, y, o, g: M(g, A.div(x, o)), lambda x, y, o, g: M(g, A.div(y, o))),
    "arctan2": (lambda x, y, o, g: M(g, A.div(y, A.add(M(x, x), M(y, y)))),
                lambda x, y, o, g: A.neg(M(g, A.div(x, A.add(M(x, x), M(y, y)))))),
    "copysign": (lambda x, y, o, g: _copysign(x, o, g), lambda x, y, o, g: None),
    "logaddexp": (lambda x, y, o, g: M(g, A.ew("exp", A.sub(x, o))),
                  lambda x, y, o, g: M(g, A.ew("exp", A.sub(y, o)))),
    "logaddexp2": (lambda x, y, o, g: M(g, A.ew("exp2", A.sub(x, o))),
                   lambda x, y, o, g: M(g, A.ew("exp2", A.sub(y, o)))),
    "xlogy": (lambda x, y, o, g: M(g, A.ew("log", y)), lambda x, y, o, g: M(g, A.div(x, y))),
    "xlog1py": (lambda x, y, o, g: M(g, A.ew("log1p", y)),
                lambda x, y, o, g: M(g, A.div(x, A.add(y, 1.0)))),
    "rel_entr": (lambda x, y, o, g: M(g, A.add(A.sub(A.ew("log", x), A.ew("log", y)), 1.0)),
                 lambda x, y, o, g: A.neg(M(g, A.div(x, y)))),
    "kl_div": (lambda x, y, o, g: M(g, A.sub(A.ew("log", x), A.ew("log", y))),
               lambda x, y, o, g: M(g, A.sub(1.0, A.div(x, y)))),
    # huber(d, r): d/dr = r inside |r| <= d, else d sign(r); d/dd = 0 inside, else |r| - d
    "huber": (lambda d, r, o, g: M(g, A.where(A.cmp("less_equal", A.ew("absolute", r), d), 0.0,
                                              A.sub(A.ew("absolute", r), d))),
              lambda d, r, o, g: M(g, A.where(A.cmp("less_equal", A.ew("absolute", r), d), r,
                                              M(d, A.ew("sign", r))))),
    # pseudo_huber = d^2 (s - 1), s = sqrt(1 + (r/d)^2): d/dr = r / s,
    # d/dd = 2 d (s - 1) - r^2 / (s d) = (2 o - r^2 / s) / d
    "pseudo_huber": (lambda d, r, o, g: M(g, A.div(A.sub(M(o, 2.0), A.div(M(r, r), _s(d, r))),
                                                   d)),
                     lambda d, r, o, g: M(g, A.div(r, _s(d, r)))),
    # d B(a, b)/da = B (psi(a) - psi(a + b)); betaln: the same without the factor B
    "beta": (lambda x, y, o, g: M(g, M(o, _psi_diff(x, x, y))),
             lambda x, y, o, g: M(g, M(o, _psi_diff(y, x, y)))),
    "betaln": (lambda x, y, o, g: M(g, _psi_diff(x, x, y)),
               lambda x, y, o, g: M(g, _psi_diff(y, x, y))),
    # poch(a, m) = Gamma(a + m) / Gamma(a): d/da = poch (psi(a + m) - psi(a)),
    # d/dm = poch psi(a + m)
    "poch": (lambda x, y, o, g: M(g, M(o, A.sub(A.ew("digamma", A.add(x, y)),
                                                A.ew("digamma", x)))),
             lambda x, y, o, g: M(g, M(o, A.ew("digamma", A.add(x, y))))),
}
def _s(d: Node, r: Node) -> Node:
    """sqrt(1 + (r/d)^2), pseudo-Huber's root."""
    v = A.div(r, d)
    return A.ew("sqrt", A.add(M(v, v), 1.0))


def _psi_diff(v: Node, a: Node, b: Node) -> Node:
    """digamma(v) - digamma(a + b)."""
    return A.sub(A.ew("digamma", v), A.ew("digamma", A.add(a, b)))


def _copysign(x: Node, out: Node, g: Node) -> Node:
    """d copysign(x, s)/dx: +1 where the result keeps x's sign, -1 where it flips it."""
    from .context import make_node

    sx = make_node("signbit", [x], x.shape, np.dtype(bool))
    so = make_node("signbit", [out], out.shape, np.dtype(bool))
    same = make_node("equal", [sx, so], out.shape, np.dtype(bool))
    return A.where(same, g, A.neg(g))


def _where(node: Node, g: Node) -> tuple:
    c = node.inputs[0]
    return None, A.where(c, g, 0.0), A.where(c, 0.0, g)


def _clip(node: Node, g: Node) -> tuple:
    """clip(x, lo, hi) = minimum(maximum(x, lo), hi), each with JAX's tie rule."""
    x, lo, hi = node.inputs
    m = A.ew("maximum", x, lo)
    gm = _tie(m, hi, node, g)
    return _tie(x, lo, m, gm), _tie(lo, x, m, gm), _tie(hi, m, node, g)


def _cast(node: Node, g: Node) -> tuple:
    x = node.inputs[0]
    return (A.cast(g, x.dtype) if x.dtype.kind == "f" else None),


def _view(node: Node, g: Node) -> tuple:
    return A.view_adjoint(g, node.inputs[0], node.attrs["start"], node.attrs["dims"]),


def _reshape(node: Node, g: Node) -> tuple:
    from .reshape import reshape_node

    return reshape_node(g, node.inputs[0].shape),


def _reduce(node: Node, g: Node) -> tuple:
    x = node.inputs[0]
    fn, axes, keep = node.attrs["fn"], node.attrs["axes"], node.attrs["keepdims"]
    gx = A.expand_reduced(g, axes, keep, x.shape)
    if fn == "sum":
        return gx,
    y = A.expand_reduced(node, axes, keep, x.shape)
    if fn in ("max", "min"):  # ties share the gradient evenly (JAX's rule)
        hit = A.cast(A.cmp("equal", x, y), x.dtype)
        count = A.expand_reduced(A.sum_axes(hit, axes, keepdims=True), axes, True, x.shape)
        return M(gx, A.div(hit, count)),
    if fn == "prod":  # exact with zeros: the product of the others
        zero = A.cmp("equal", x, 0.0)
        nz = A.where(zero, 1.0, x)
        others = A.expand_reduced(_prod(nz, axes), axes, True, x.shape)
        n0 = A.expand_reduced(A.sum_axes(A.cast(zero, x.dtype), axes, True), axes, True, x.shape)
        none = A.div(y, A.where(zero, 1.0, x))
        one = A.where(zero, others, 0.0)
        return M(gx, A.where(A.cmp("equal", n0, 0.0), none,
                             A.where(A.cmp("equal", n0, 1.0), one, 0.0))),
    raise AssertionError(f"reduce {fn} has no float gradient")


def _prod(x: Node, axes: tuple[int, ...]) -> Node:
    from .context import make_node

    shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
    return make_node("reduce", [x], shape, x.dtype, fn="prod", axes=axes, keepdims=True)


def _matmul(node: Node, g: Node) -> tuple:
    """b's cotangent is made first: in h @ w2, dW2 = h^T g then comes before dh = g w2^T in
    the graph, so h can die where dh is computed (h's block is then dh's)."""
    a, b = node.inputs
    gb = A.matmul(A.transpose_last(a), g)
    return A.matmul(g, A.transpose_last(b)), gb


def _gather(node: Node, g: Node) -> tuple:
    src, *index = node.inputs
    pos = A.fix_indices(index, src.shape, node.attrs["axes"], node.attrs["mode"])
    return (A.scatter_add(g, src, pos, node.attrs["axes"]),) + (None,) * len(index)


def _scatter(node: Node, g: Node) -> tuple:
    """old with a region written by value: old's cotangent is g with the region cleared
    (`=`) or g itself (ufunc.at with add/subtract); value's is g read over the region, for
    `=` only where that element's write is the one kept (indices may repeat a position:
    `x[[0, 0]] = v` keeps v[1], so v[0] gets none of g)."""
    old, value, *index = node.inputs
    fn = node.attrs.get("fn")
    if fn not in (None, "add", "subtract"):
        return None  # refused below: the engine names the op
    g_value = A.gather_region(g, node.attrs, index, value.shape)
    if fn == "subtract":
        g_value = A.neg(g_value)
    if fn is None:
        from .context import make_node

        g_old = make_node("scatter", [g, A.zeros(value.shape, g.dtype), *index], g.shape,
                          g.dtype, **node.attrs)
        if index:
            g_value = A.where(_kept_writes(node, old, value, index), g_value, 0.0)
    else:
        g_old = g
    return (g_old, A.cast(g_value, value.dtype) if value.dtype.kind == "f" else None,
            *(None,) * len(index))


def _kept_writes(node: Node, old: Node, value: Node, index: list[Node]) -> Node:
    """Over value's shape: whether each element's write survives in `=` scatter `node` (the
    last write to a position wins, as in NumPy). Each element's number is scattered the same
    way and read back; constant indices fold to a constant mask when compiling."""
    from .context import const_node, make_node

    i64 = np.dtype(np.int64)
    numbers = const_node(np.arange(int(np.prod(value.shape)), dtype=i64).reshape(value.shape))
    written = make_node("scatter", [A.zeros(old.shape, i64), numbers, *index], old.shape, i64,
                        **node.attrs)
    back = A.gather_region(written, node.attrs, index, value.shape)
    return make_node("equal", [back, numbers], value.shape, np.dtype(bool))


def _scan(node: Node, g: Node) -> tuple | None:
    if node.attrs["fn"] in FILTER_SCANS:
        gx, gz = vjp_more.filter_scan(node, g)
        coef = Refused("the gradient with respect to a filter's coefficients b and a is not "
                       "implemented (pass them as values, or do not differentiate them)")
        return (gx, coef, coef) + (() if gz is None else (gz,))
    if node.attrs["fn"] != "add":
        gx = vjp_more.scan(node, g)  # cumprod, running max/min, subtract
        return None if gx is None else (gx,)
    from .context import make_node

    axis = node.attrs["axis"]
    rev = A.flip(g, axis)
    acc = make_node("scan", [rev], rev.shape, rev.dtype, fn="add", axis=axis)
    return A.flip(acc, axis),


def _lapack(node: Node, g: Node) -> tuple | None:
    """inv: -Y^T g Y^T; slogdet: d log|det A| = inv(A)^T (the sign has no gradient);
    cholesky, eigh, eigvalsh, expm: frontend/vjp_more.py."""
    from .context import make_node

    a = node.inputs[0]
    fn = node.attrs["fn"]
    if fn in ("cholesky", "eigh", "eigvalsh", "expm"):
        return getattr(vjp_more, fn)(node, g),
    if fn == "inv":
        yt = A.transpose_last(node)
        return A.neg(A.matmul(A.matmul(yt, g), yt)),
    if fn == "slogdet":
        inv = make_node("lapack", [a], a.shape, a.dtype, fn="inv", uplo="L")
        glog = view_node(g, (0,) * (len(g.shape) - 1) + (1,),
                         tuple((d, 1) for d in range(len(g.shape) - 1)) + ((-1, 0), (-1, 0)),
                         a.shape)
        return M(glog, A.transpose_last(inv)),
    return None


def _solve(node: Node, g: Node) -> tuple | None:
    """x = solve(a, b): gb = solve(a^T, g), ga = -gb x^T."""
    from .context import make_node

    if node.attrs["fn"] != "solve":
        return None  # lstsq: autodiff says no rule for this form
    a = node.inputs[0]
    gb = make_node("lapack_solve", [A.transpose_last(a), g], g.shape, g.dtype, fn="solve")
    return A.neg(A.matmul(gb, A.transpose_last(node))), gb


def _sort(node: Node, g: Node) -> tuple:
    """Sorted values y = x[perm] along the axis: x's cotangent is g put back through the
    permutation, i.e. g read at the inverse permutation (perm the stable argsort, the order
    NumPy's sort gives ties and NaN). argsort's integer result carries no gradient."""
    from . import tracer as T

    if node.attrs["mode"] == "arg":
        return (None,)
    axis = node.attrs["axis"]
    perm = np.argsort(T.Tracer(node.inputs[0]), axis=axis, kind="stable")
    inverse = np.argsort(perm, axis=axis, kind="stable")
    return (np.take_along_axis(T.Tracer(g), inverse, axis=axis).node,)


def _install() -> None:
    for name, fn in UNARY.items():
        set_vjp(name, _unary(fn))
    for name, (fx, fy) in BINARY.items():
        set_vjp(name, _binary(fx, fy))
    for name in ("floor", "ceil", "trunc", "rint", "sign", "floor_divide", "gammasgn",
                 "spacing"):
        set_vjp(name, ZERO)
    for name in ("isnan", "isinf", "isfinite", "signbit", "equal", "not_equal", "less",
                 "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
                 "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
                 "invert", "left_shift", "right_shift", "gcd", "lcm", "bitwise_count",
                 "check_all_nan",
                 "check_choice"):
        set_vjp(name, INTEGER)
    for name in ("input", "const", "empty"):
        set_vjp(name, SOURCE)
    set_vjp("nextafter", Refused("np.nextafter is a step to the next float, not differentiable"))
    set_vjp("frexp_exponent", INTEGER)
    for d in BITCAST_DTYPES:  # (one side of a bitcast is an integer: no gradient flows)
        set_vjp(f"bitcast_{d.name}", INTEGER)
    for name in ("ldexp", "frexp_mantissa"):
        set_vjp(name, Refused(f"np.{name.split('_')[0]} is not differentiated by fusejit yet"))
    for name in ("boxcox", "boxcox1p", "inv_boxcox", "inv_boxcox1p", "binom"):
        set_vjp(name, Refused(f"scipy.special.{name} is not differentiated by fusejit yet"))
    for name in ("real", "imag", "complex_pack"):
        set_vjp(name, Refused("fusejit.grad differentiates float32/float64 only, not complex"))
    for name in ("searchsorted", "check_geom_zero", "check_hist_range", "check_lstsq_rank",
                 "check_real_if_close", "check_weights_zero", "check_unravel_range",
                 "check_finite", "check_fweights_int", "check_fweights_neg",
                 "check_aweights_neg", "check_dist_weights_neg", "check_linregress_x_same",
                 "check_lfilter_a0", "check_sos_a0", "check_rank_filter_nan",
                 "check_interp1d_bounds", "check_empty_max", "check_empty_min",
                 "check_empty_quantile"):
        set_vjp(name, INTEGER)
    for name, rule in vjp_special.rules(Refused).items():  # incomplete gamma and beta
        set_vjp(name, rule)
    for name, rule in vjp_special.more_rules(Refused).items():  # kv & co., exprel, sindg & co.
        set_vjp(name, rule)
    for name, rule in vjp_poly.rules(Refused).items():  # the orthogonal polynomials
        set_vjp(name, rule)
    for name, rule in vjp_special_more.rules(Refused).items():  # ellipj, elliprf & co., airy
        set_vjp(name, rule)
    for name, rule in (("where", _where), ("clip", _clip), ("clip_keep", _clip),
                       ("cast", _cast), ("view", _view),
                       ("reshape", _reshape), ("reduce", _reduce), ("matmul", _matmul),
                       ("gather", _gather), ("scatter", _scatter), ("scan", _scan),
                       ("lapack", _lapack), ("lapack_solve", _solve), ("sort", _sort)):
        set_vjp(name, rule)


_install()
MISSING = sorted(n for n, op in OPS.items() if op.vjp is None)
