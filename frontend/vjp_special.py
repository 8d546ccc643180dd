"""Gradient rules of the incomplete gamma and beta functions and the distribution functions
built on them (scipy.special gammainc, gammaincc, chdtr, chdtrc, pdtr, pdtrc, betainc,
betaincc, stdtr, fdtr, fdtrc): the derivative in the point x (or t, or m) is the
distribution's density (of scipy.stats.beta's pdf, the density's own slope), and of their
inverses (gammaincinv, gammainccinv, chdtri, betaincinv, betainccinv, stdtrit, fdtri,
scipy.stats' beta and cauchy ppf/isf) in the probability, one over the density at the
result; in the shape parameters it is a
series fusejit does not build, so those inputs carry a
Refused marker (frontend/autodiff.py raises only when a gradient reaches through one).
pdtr's k enters through floor(k): piecewise constant, no gradient (as JAX's).

Also (`more_rules`) fj_special_kv.h's, fj_special_jy.h's and fj_special_series.h's functions:
the Bessel functions J_v' = (J_{v-1} - J_{v+1})/2 (Y likewise, I_v' = (I_{v-1} + I_{v+1})/2,
ive less sign(x) ive; in the order refused), the spherical ones (their derivatives, SciPy's
derivative=True, and those's from the spherical Bessel equation), sici, shichi and
fresnel's parts (their integrands), the modified Bessel
functions of the second kind, K_v' = -(K_{v-1} + K_{v+1})/2 in x (the scaled kve adds
itself; no gradient in the order v), exprel' = (e^x - exprel)/x (its series 1/2 + x/3 +
x^2/8 + x^3/30 for |x| < 1e-3, where that difference cancels) and the trigonometric
functions in degrees (pi/180 times their radian derivatives), the Hurwitz zeta in q
(-x zeta(x + 1, q); in x refused, as the Riemann zeta), digamma (polygamma(1, x) =
zeta(2, x)), erfi' = 2/sqrt(pi) e^{x^2} and dawsn' = 1 - 2 x dawsn, the incomplete
elliptic integrals in phi (their integrands; in m refused), spence (log x / (1 - x)) and the
Kolmogorov distribution's functions (its density, _kolmogp)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import adjoint as A
from .ir import Node
from .tracer import make_node

M = A.mul
_DEG = 0.017453292519943295  # pi / 180


def _gamma_density(a: Any, x: Any) -> Node:
    """x^(a-1) e^-x / Gamma(a), as exp(xlogy(a - 1, x) - x - gammaln(a)) (1 at x = 0, a = 1)."""
    return A.ew("exp", A.sub(A.sub(A.ew("xlogy", A.sub(a, 1.0), x), x), A.ew("gammaln", a)))


def _beta_density(a: Node, b: Node, x: Node) -> Node:
    """x^(a-1) (1-x)^(b-1) / B(a, b)."""
    return A.ew("exp", A.sub(A.add(A.ew("xlogy", A.sub(a, 1.0), x),
                                   A.ew("xlog1py", A.sub(b, 1.0), A.neg(x))),
                             A.ew("betaln", a, b)))


def _t_density(df: Node, t: Node) -> Node:
    """(1 + t^2/df)^(-(df+1)/2) / (sqrt(df) B(df/2, 1/2))."""
    half = M(df, 0.5)
    log_kernel = M(A.ew("log1p", A.div(M(t, t), df)), A.neg(A.add(half, 0.5)))
    return A.ew("exp", A.sub(A.sub(log_kernel, A.ew("betaln", half, 0.5)),
                             M(A.ew("log", df), 0.5)))


def _f_density(dfn: Node, dfd: Node, x: Node) -> Node:
    """The F distribution's density at x: the beta density at w = dfn x / (dfd + dfn x)
    times dw/dx = dfn dfd / (dfd + dfn x)^2."""
    s = A.add(dfd, M(dfn, x))
    w = A.div(M(dfn, x), s)
    return M(_beta_density(M(dfn, 0.5), M(dfd, 0.5), w), A.div(M(dfn, dfd), M(s, s)))


def rules(refused: Callable[[str], Any]) -> dict[str, Callable[[Node, Node], tuple]]:
    """name -> rule(node, g), with `refused(reason)` in the shape parameters' places."""
    shape = refused("its derivative in the shape parameters (gammainc's a, betainc's a and "
                    "b, the degrees of freedom) is not computed by fusejit (the one in x is)")

    def gammainc(sign: float, scale: float) -> Callable[[Node, Node], tuple]:
        def rule(node: Node, g: Node) -> tuple:
            a, x = node.inputs
            if scale != 1.0:  # chdtr(v, x) = P(v/2, x/2)
                a, x = M(a, scale), M(x, scale)
            return shape, M(g, M(_gamma_density(a, x), sign * scale))
        return rule

    def pdtr(sign: float) -> Callable[[Node, Node], tuple]:
        def rule(node: Node, g: Node) -> tuple:  # Q(floor(k) + 1, m)
            k, m = node.inputs
            return None, M(g, M(_gamma_density(A.add(A.ew("floor", k), 1.0), m), sign))
        return rule

    def betainc(sign: float) -> Callable[[Node, Node], tuple]:
        def rule(node: Node, g: Node) -> tuple:
            a, b, x = node.inputs
            return shape, shape, M(g, M(_beta_density(a, b, x), sign))
        return rule

    def beta_pdf(node: Node, g: Node) -> tuple:  # d/dx: pdf ((a - 1)/x - (b - 1)/(1 - x))
        x, a, b = node.inputs
        slope = A.sub(A.div(A.sub(a, 1.0), x), A.div(A.sub(b, 1.0), A.sub(1.0, x)))
        return M(g, M(node, slope)), shape, shape

    def stdtr(node: Node, g: Node) -> tuple:
        df, t = node.inputs
        return shape, M(g, _t_density(df, t))

    def inverse(density: Callable[[Node, Node], Node], sign: float, scale: float = 1.0,
                ) -> Callable[[Node, Node], tuple]:
        """The rule of x = F^-1(shapes..., p): dx/dp = sign / (scale density(shapes, x))."""
        def rule(node: Node, g: Node) -> tuple:
            *shapes, _ = node.inputs
            return (*[shape] * len(shapes),
                    A.div(M(g, sign), M(density(shapes, node), scale)))
        return rule

    def gamma_at(shapes: list, x: Node) -> Node:
        return _gamma_density(shapes[0], x)

    def chi2_at(shapes: list, x: Node) -> Node:  # chdtri = 2 gammainccinv(v/2, q)
        return _gamma_density(M(shapes[0], 0.5), M(x, 0.5))

    def beta_at(shapes: list, x: Node) -> Node:
        return _beta_density(shapes[0], shapes[1], x)

    def fdtr(sign: float) -> Callable[[Node, Node], tuple]:
        def rule(node: Node, g: Node) -> tuple:
            dfn, dfd, x = node.inputs
            return shape, shape, M(g, M(_f_density(dfn, dfd, x), sign))
        return rule

    def beta_ppf(node: Node, g: Node) -> tuple:  # (q, a, b)
        _, a, b = node.inputs
        return A.div(g, _beta_density(a, b, node)), shape, shape

    def cauchy(sign: float) -> Callable[[Node, Node], tuple]:
        def rule(node: Node, g: Node) -> tuple:  # loc -+ scale / tan(pi q)
            _, loc, scale = node.inputs
            u = A.div(A.sub(node, loc), scale)  # the standard quantile
            dq = M(M(scale, M(A.add(M(u, u), 1.0), 3.141592653589793)), sign)
            return M(g, dq), g, M(g, u)
        return rule

    return {"gammainc": gammainc(1.0, 1.0), "gammaincc": gammainc(-1.0, 1.0),
            "chdtr": gammainc(1.0, 0.5), "chdtrc": gammainc(-1.0, 0.5),
            "pdtr": pdtr(-1.0), "pdtrc": pdtr(1.0),
            "betainc": betainc(1.0), "betaincc": betainc(-1.0), "stdtr": stdtr,
            "beta_pdf": beta_pdf,
            "gammaincinv": inverse(gamma_at, 1.0), "gammainccinv": inverse(gamma_at, -1.0),
            "chdtri": inverse(chi2_at, -1.0, 0.5),
            "betaincinv": inverse(beta_at, 1.0), "betainccinv": inverse(beta_at, -1.0),
            "stdtrit": inverse(lambda s, t: _t_density(s[0], t), 1.0),
            "fdtri": inverse(lambda s, x: _f_density(s[0], s[1], x), 1.0),
            "fdtr": fdtr(1.0), "fdtrc": fdtr(-1.0), "beta_ppf": beta_ppf,
            "cauchy_ppf": cauchy(1.0), "cauchy_isf": cauchy(-1.0),
            **dict.fromkeys(("binom_pmf", "binom_cdf", "binom_sf", "binom_ppf", "binom_isf"),
                            refused("scipy.stats.binom's functions are not differentiated by "
                                    "fusejit")),
            **dict.fromkeys(("nbinom_pmf", "nbinom_cdf", "nbinom_sf", "nbinom_ppf",
                             "nbinom_isf"), refused("scipy.stats.nbinom's functions are not "
                                                    "differentiated by fusejit")),
            "pdtrik": refused("scipy.special.pdtrik (the inverse of the Poisson cdf in k) is "
                              "not differentiated by fusejit")}


def more_rules(refused: Callable[[str], Any]) -> dict[str, Callable[[Node, Node], tuple]]:
    """name -> rule(node, g) of fj_special_kv.h's functions."""
    order = refused("scipy.special.kv's derivative in the order v is not computed by fusejit "
                    "(the one in x is)")

    def kv(scaled: bool) -> Callable[[Node, Node], tuple]:
        name = "kve" if scaled else "kv"

        def rule(node: Node, g: Node) -> tuple:
            v, x = node.inputs
            d = M(A.add(A.ew(name, A.sub(v, 1.0), x), A.ew(name, A.add(v, 1.0), x)), -0.5)
            return order, M(g, A.add(d, node) if scaled else d)
        return rule

    def k(nu: int, scaled: bool) -> Callable[[Node, Node], tuple]:
        """k0' = -k1, k1' = -k0 - k1/x; k0e and k1e add themselves."""
        def rule(node: Node, g: Node) -> tuple:
            (x,) = node.inputs
            other = A.ew(("k1" if nu == 0 else "k0") + ("e" if scaled else ""), x)
            d = A.neg(other) if nu == 0 else A.neg(A.add(other, A.div(node, x)))
            return (M(g, A.add(d, node) if scaled else d),)
        return rule

    def exprel(node: Node, g: Node) -> tuple:
        (x,) = node.inputs
        small = A.cmp("less", A.ew("absolute", x), 1e-3)
        series = A.add(0.5, M(x, A.add(1.0 / 3.0, M(x, A.add(0.125, M(x, 1.0 / 30.0))))))
        safe = A.where(small, 1.0, x)
        return (M(g, A.where(small, series, A.div(A.sub(A.ew("exp", safe), node), safe))),)

    def trig(name: str) -> Callable[[Node, Node], tuple]:
        def rule(node: Node, g: Node) -> tuple:
            (x,) = node.inputs
            if name == "sindg":
                d = M(A.ew("cosdg", x), _DEG)
            elif name == "cosdg":
                d = M(A.ew("sindg", x), -_DEG)
            else:  # tan' = 1 + tan^2, cot' = -(1 + cot^2)
                d = M(A.add(M(node, node), 1.0), _DEG if name == "tandg" else -_DEG)
            return (M(g, d),)
        return rule

    def zeta(node: Node, g: Node) -> tuple:  # d/dq zeta(x, q) = -x zeta(x + 1, q)
        x, q = node.inputs
        return (refused("scipy.special.zeta's derivative in x is not computed by fusejit "
                        "(the one in q is)"),
                M(g, A.neg(M(x, A.ew("zeta", A.add(x, 1.0), q)))))

    def digamma(node: Node, g: Node) -> tuple:  # psi' = polygamma(1, x) = zeta(2, x)
        (x,) = node.inputs
        return (M(g, A.ew("zeta", A.const(2.0, x.dtype), x)),)

    def erfi(node: Node, g: Node) -> tuple:  # 2/sqrt(pi) e^{x^2}
        (x,) = node.inputs
        return (M(g, M(A.ew("exp", M(x, x)), 1.1283791670955126)),)

    def dawsn(node: Node, g: Node) -> tuple:  # F' = 1 - 2 x F
        (x,) = node.inputs
        return (M(g, A.sub(1.0, M(M(x, node), 2.0))),)

    def bessel(name: str, sign: float, scaled: bool = False) -> Callable[[Node, Node], tuple]:
        """J, Y: (Z_v-1 - Z_v+1)/2; I: (I_v-1 + I_v+1)/2 (ive: minus sign(x) ive); yn, kn of
        an integer order through yv and kv (kn: -(K_n-1 + K_n+1)/2)."""
        of = {"yn": "yv", "kn": "kv", "jve": "jv", "yve": "yv"}.get(name, name)

        def rule(node: Node, g: Node) -> tuple:
            v, x = node.inputs
            vf = A.cast(v, x.dtype)
            d = M(A.add(A.ew(of, A.sub(vf, 1.0), x),
                        M(A.ew(of, A.add(vf, 1.0), x), sign)), -0.5 if name == "kn" else 0.5)
            if scaled:
                d = A.sub(d, M(A.ew("sign", x), node))
            return (None if v.dtype.kind in "iu" else refused(
                f"scipy.special.{name}'s derivative in the order v is not computed by fusejit "
                "(the one in x is)")), M(g, d)
        return rule

    def spherical(kind: str, second: bool) -> Callable[[Node, Node], tuple]:
        """z_n' is the op's derivative twin (_d); z_n'' from the spherical Bessel equation,
        -(2/x) z_n' + (n(n+1)/x^2 -+ 1) z_n (- for j and y, + for i and k)."""
        def rule(node: Node, g: Node) -> tuple:
            n, x = node.inputs
            if not second:
                d = make_node(f"spherical_{kind}n_d", [n, x], node.shape, node.dtype)
            else:
                z = make_node(f"spherical_{kind}n", [n, x], node.shape, node.dtype)
                nf = A.cast(n, x.dtype)
                c = A.add(A.div(M(nf, A.add(nf, 1.0)), M(x, x)), 1.0 if kind in "ik" else -1.0)
                d = A.add(M(A.div(node, x), -2.0), M(c, z))
            return None, M(g, d)
        return rule

    def trigint(name: str) -> Callable[[Node, Node], tuple]:
        """Si' = sin x / x (1 at 0), Ci' = cos x / x, Shi' = sinh x / x (1 at 0),
        Chi' = cosh x / x, Fresnel S' = sin(pi x^2 / 2), C' = cos(pi x^2 / 2)."""
        fn = {"sici_si": "sin", "sici_ci": "cos", "shichi_shi": "sinh", "shichi_chi": "cosh",
              "fresnel_s": "sin", "fresnel_c": "cos"}[name]

        def rule(node: Node, g: Node) -> tuple:
            (x,) = node.inputs
            if name.startswith("fresnel"):
                return (M(g, A.ew(fn, M(M(x, x), 1.5707963267948966))),)
            d = A.div(A.ew(fn, x), x)
            if name in ("sici_si", "shichi_shi"):
                zero = A.cmp("equal", x, 0.0)
                d = A.where(zero, 1.0, A.div(A.ew(fn, x), A.where(zero, 1.0, x)))
            return (M(g, d),)
        return rule

    def expn(node: Node, g: Node) -> tuple:  # E_n' = -E_n-1; E_0' = -E_0 (1 + 1/x)
        n, x = node.inputs
        below = make_node("expn", [make_node("subtract", [n, A.const(1, n.dtype)], n.shape,
                                             n.dtype), x], node.shape, node.dtype)
        first = M(node, A.add(1.0, A.div(1.0, x)))
        zero = make_node("equal", [n, A.const(0, n.dtype)], n.shape, np.dtype(bool))
        return None, M(g, A.neg(A.where(zero, first, below)))

    modulus = refused("the derivative of scipy.special.ellipkinc/ellipeinc in m is not "
                      "computed by fusejit (the one in phi is)")

    def ellip(first: bool) -> Callable[[Node, Node], tuple]:
        """F' = 1 / sqrt(1 - m sin^2 phi), E' = sqrt(1 - m sin^2 phi) in phi."""
        def rule(node: Node, g: Node) -> tuple:
            phi, m = node.inputs
            s = A.ew("sin", phi)
            root = A.ew("sqrt", A.sub(1.0, M(m, M(s, s))))
            return M(g, A.div(1.0, root) if first else root), modulus
        return rule

    def spence(node: Node, g: Node) -> tuple:  # d/dx Li2(1 - x) = log(x) / (1 - x), -1 at 1
        (x,) = node.inputs
        one = A.cmp("equal", x, 1.0)
        d = A.div(A.ew("log", x), A.sub(1.0, A.where(one, 0.0, x)))
        return (M(g, A.where(one, -1.0, d)),)

    def kolmog(name: str) -> Callable[[Node, Node], tuple]:
        """kolmogorov' = _kolmogp, _kolmogc' = -_kolmogp; the inverses 1 / (+-_kolmogp)."""
        def rule(node: Node, g: Node) -> tuple:
            (x,) = node.inputs
            at = node if name in ("kolmogi", "kolmogci") else x
            p = A.ew("kolmogp", at)
            d = {"kolmogorov": p, "kolmogc": A.neg(p), "kolmogi": A.div(1.0, p),
                 "kolmogci": A.neg(A.div(1.0, p))}[name]
            return (M(g, d),)
        return rule

    return {**{f"spherical_{k}n{d}": spherical(k, d == "_d") for k in "jyik" for d in ("", "_d")},
            "expn": expn, "ellipkinc": ellip(True), "ellipeinc": ellip(False),
            "spence": spence, **{n: kolmog(n) for n in ("kolmogorov", "kolmogc", "kolmogi",
                                                          "kolmogci")},
            "kolmogp": refused("the Kolmogorov distribution's density is not differentiated "
                               "by fusejit"),
            **{n: trigint(n) for n in ("sici_si", "sici_ci", "shichi_shi", "shichi_chi",
                                       "fresnel_s", "fresnel_c")},
            "jv": bessel("jv", -1.0), "jve": bessel("jve", -1.0), "yv": bessel("yv", -1.0),
            "yve": bessel("yve", -1.0), "iv": bessel("iv", 1.0),
            "ive": bessel("ive", 1.0, scaled=True), "yn": bessel("yn", -1.0),
            "kn": bessel("kn", 1.0),
            "kv": kv(False), "kve": kv(True), "k0": k(0, False), "k0e": k(0, True),
            "k1": k(1, False), "k1e": k(1, True), "exprel": exprel,
            **{n: trig(n) for n in ("sindg", "cosdg", "tandg", "cotdg")},
            "zeta": zeta, "digamma": digamma, "erfi": erfi, "dawsn": dawsn,
            "riemann_zeta": refused("scipy.special.zeta(x)'s derivative is not computed by "
                                    "fusejit")}
