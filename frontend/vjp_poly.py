"""Gradient rules of scipy.special's orthogonal polynomials (fj_special_poly.h) in x, each
another polynomial of the table (the integer degree n has none; in the parameter alpha of
eval_genlaguerre and eval_gegenbauer the derivative is refused):

    P_n' = C_{n-1}^(3/2)           (P_{-n-1} = P_n)
    T_n' = n U_{n-1}               (also for n < 0, through U_{-k-2} = -U_k)
    U_n' = 2 C_{n-1}^(2)           (U_{-1} = 0, U_{-k-2} = -U_k)
    H_n' = 2n H_{n-1},  He_n' = n He_{n-1}  (0 at n = 0; NaN, as the value, for n < 0)
    L_n^(a)' = -L_{n-1}^(a+1),  C_n^(a)' = 2a C_{n-1}^(a+1)  (NaN where the value is)
and the shifted and scaled ones (C_n, S_n at x/2; the shifted at 2x - 1) by the chain rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import adjoint as A
from .ir import Node
from .tracer import make_node

M = A.mul
Rule = Callable[[Node, Node], tuple]


def _int(op: str, n: Node, k: int) -> Node:
    """n (op) k in n's integer dtype."""
    return make_node(op, [n, A.const(k, n.dtype)], n.shape, n.dtype)


def _less(n: Node, k: int) -> Node:
    return make_node("less", [n, A.const(k, n.dtype)], n.shape, np.dtype(bool))


def _pick(cond: Node, a: Node, b: Node) -> Node:
    """where(cond, a, b) of two integer nodes."""
    return make_node("where", [cond, a, b], np.broadcast_shapes(cond.shape, a.shape, b.shape),
                     a.dtype)


def _poly(name: str, n: Node, *args: Any) -> Node:
    """eval_<name>(n, *args): n an integer node, the others in the float dtype of the last."""
    dtype = args[-1].dtype
    floats = [a if isinstance(a, Node) else A.const(a, dtype) for a in args]
    shape = np.broadcast_shapes(n.shape, *(a.shape for a in floats))
    return make_node("eval_" + name, [n, *floats], shape, dtype)


def _chebyu_slope(n: Node, x: Node) -> Node:
    """U_n'(x) = 2 C_{n-1}^(2)(x), with U_{-k-2} = -U_k for n < -1."""
    low = _less(n, -1)
    m = _pick(low, _int("subtract", make_node("negative", [n], n.shape, n.dtype), 2), n)
    sign = A.where(low, A.const(-2.0, x.dtype), 2.0)
    return M(sign, _poly("gegenbauer", _int("subtract", m, 1), 2.0, x))


def _legendre_slope(n: Node, x: Node) -> Node:
    """P_n'(x) = C_{n-1}^(3/2)(x), with P_{-n-1} = P_n."""
    m = _pick(_less(n, 0), _int("subtract", make_node("negative", [n], n.shape, n.dtype), 1), n)
    return _poly("gegenbauer", _int("subtract", m, 1), 1.5, x)


def _nan_where_nan(value: Node, d: Node) -> Node:
    """NaN where `value` is (SciPy's NaN of a <= -1, or of the Gegenbauer polynomials whose
    binomial factor is NaN, at a = -1/2), else d."""
    return A.where(make_node("isnan", [value], value.shape, np.dtype(bool)), np.nan, d)


def _shifted(x: Node) -> Node:
    return A.sub(M(x, 2.0), 1.0)


def _hermite(name: str, factor: float) -> Rule:
    """H_n' = 2n H_{n-1} and He_n' = n He_{n-1}: the degree below is taken as 0 for n = 0
    (whose slope is 0 n), so that only n < 0 gives NaN."""
    def rule(node: Node, g: Node) -> tuple:
        n, x = node.inputs
        below = _pick(make_node("equal", [n, A.const(0, n.dtype)], n.shape, np.dtype(bool)),
                      n, _int("subtract", n, 1))
        return None, M(g, M(M(A.cast(n, x.dtype), factor), _poly(name, below, x)))
    return rule


def rules(refused: Callable[[str], Any]) -> dict[str, Rule]:
    """name -> rule(node, g) of the eval_* ops."""
    def param(name: str) -> Any:
        return refused(f"scipy.special.eval_{name}'s derivative in alpha is not computed by "
                       "fusejit (the one in x is)")

    def simple(slope: Callable[[Node, Node], Node]) -> Rule:
        def rule(node: Node, g: Node) -> tuple:
            n, x = node.inputs
            return None, M(g, slope(n, x))
        return rule

    def genlaguerre(node: Node, g: Node) -> tuple:
        n, a, x = node.inputs
        d = A.neg(_poly("genlaguerre", _int("subtract", n, 1), A.add(a, 1.0), x))
        return None, param("genlaguerre"), M(g, _nan_where_nan(node, d))

    def gegenbauer(node: Node, g: Node) -> tuple:
        n, a, x = node.inputs
        d = M(M(a, 2.0), _poly("gegenbauer", _int("subtract", n, 1), A.add(a, 1.0), x))
        return None, param("gegenbauer"), M(g, _nan_where_nan(node, d))

    def chebyt_slope(n: Node, x: Node) -> Node:  # n U_{n-1}(x)
        return M(A.cast(n, x.dtype), _poly("chebyu", _int("subtract", n, 1), x))

    return {
        "eval_legendre": simple(_legendre_slope),
        "eval_sh_legendre": simple(lambda n, x: M(_legendre_slope(n, _shifted(x)), 2.0)),
        "eval_chebyt": simple(chebyt_slope),
        "eval_chebyu": simple(_chebyu_slope),
        "eval_chebyc": simple(lambda n, x: chebyt_slope(n, M(x, 0.5))),
        "eval_chebys": simple(lambda n, x: M(_chebyu_slope(n, M(x, 0.5)), 0.5)),
        "eval_sh_chebyt": simple(lambda n, x: M(chebyt_slope(n, _shifted(x)), 2.0)),
        "eval_sh_chebyu": simple(lambda n, x: M(_chebyu_slope(n, _shifted(x)), 2.0)),
        "eval_hermite": _hermite("hermite", 2.0),
        "eval_hermitenorm": _hermite("hermitenorm", 1.0),
        "eval_laguerre": simple(lambda n, x: A.neg(_poly("genlaguerre", _int("subtract", n, 1),
                                                         1.0, x))),
        "eval_genlaguerre": genlaguerre,
        "eval_gegenbauer": gegenbauer,
    }
