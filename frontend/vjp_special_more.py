"""Gradient rules of scipy.special's Jacobian elliptic functions, Carlson's symmetric
integrals and the Airy functions (codegen/include/fj_special_ellip.h, fj_special_carlson.h,
fj_special_airy.h).

ellipj in u: sn' = cn dn, cn' = -sn dn, dn' = -m sn cn, am' = dn (in m refused).
R_F: dR_F/dx = -R_D(y, z, x) / 6 (DLMF 19.18.1; each argument by symmetry).
R_G: dR_G/dx = R_F(x, y, z) / 4 - x R_D(y, z, x) / 12 (R_F / 4 at x = 0).
R_C (its principal value too): dR_C/dx = (R_C - 1/sqrt(x)) / (2 (y - x)) and
dR_C/dy = (sqrt(x) / y - R_C) / (2 (y - x)); at y = x, -x^(-3/2) / 6 and -x^(-3/2) / 3.
R_D's and R_J's derivatives are refused (they need integrals of another order).
airy: Ai' and Bi' are results, Ai'' = x Ai, Bi'' = x Bi (Airy's equation). airye (zeta =
(2/3) x^(3/2), its factors e^zeta for Ai and e^-zeta for Bi; r = sqrt(max(x, 0))):
eAi' = eAi' + r eAi, (eAi')' = x eAi + r eAi', eBi' = eBi' - r eBi, (eBi')' = x eBi - r eBi'
(below 0 eBi is Bi unscaled, and r = 0 gives its derivatives).
ndtri_exp: 1 / (log Phi)'(x) = Phi(x) / phi(x) = sqrt(pi/2) erfcx(-x / sqrt 2) at its
result x.
owens_t: dT/dh = -phi(h) erf(a h / sqrt 2) / 2, dT/da = exp(-h^2 (1 + a^2) / 2) /
(2 pi (1 + a^2))."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import adjoint as A
from .ir import Node
from .tracer import make_node

M = A.mul


def rules(refused: Callable[[str], Any]) -> dict[str, Any]:
    """name -> rule(node, g) of ellipj's four results and elliprf, elliprg, elliprc (with
    Refused markers for what is not differentiated)."""
    modulus = refused("the derivative of scipy.special.ellipj in m is not computed by fusejit "
                      "(the one in u is)")

    def part(node: Node, name: str) -> Node:
        return make_node(f"ellipj_{name}", list(node.inputs), node.shape, node.dtype)

    def ellipj(name: str) -> Callable[[Node, Node], tuple]:
        def rule(node: Node, g: Node) -> tuple:
            _, m = node.inputs
            sn, cn, dn = (part(node, n) for n in ("sn", "cn", "dn"))
            d = {"sn": lambda: M(cn, dn), "cn": lambda: A.neg(M(sn, dn)),
                 "dn": lambda: A.neg(M(M(m, sn), cn)), "ph": lambda: dn}[name]()
            return M(g, d), modulus
        return rule

    def rd(a: Node, b: Node, c: Node) -> Node:
        return A.ew("elliprd", a, b, c)

    def elliprf(node: Node, g: Node) -> tuple:
        x, y, z = node.inputs
        return tuple(M(g, M(rd(b, c, a), -1.0 / 6.0)) for a, b, c in ((x, y, z), (y, z, x),
                                                                        (z, x, y)))

    def elliprg(node: Node, g: Node) -> tuple:
        x, y, z = node.inputs
        rf = A.ew("elliprf", x, y, z)

        def d(a: Node, b: Node, c: Node) -> Node:
            zero = A.cmp("equal", a, 0.0)
            term = A.where(zero, 0.0, M(A.where(zero, 1.0, a), rd(b, c, A.where(zero, 1.0, a))))
            return M(g, A.sub(M(rf, 0.25), M(term, 1.0 / 12.0)))
        return d(x, y, z), d(y, z, x), d(z, x, y)

    def elliprc(node: Node, g: Node) -> tuple:
        x, y = node.inputs
        same = A.cmp("equal", x, y)
        gap = M(A.sub(y, A.where(same, A.sub(y, 1.0), x)), 2.0)  # (1 where x = y)
        root = A.ew("sqrt", x)
        cube = M(x, root)
        dx = A.div(A.sub(node, A.div(1.0, root)), gap)
        dy = A.div(A.sub(A.div(root, y), node), gap)
        return (M(g, A.where(same, A.div(-1.0 / 6.0, cube), dx)),
                M(g, A.where(same, A.div(-1.0 / 3.0, cube), dy)))

    def airy(name: str, part: str) -> Callable[[Node, Node], tuple]:
        def rule(node: Node, g: Node) -> tuple:
            (x,) = node.inputs
            other = {"ai": "aip", "aip": "ai", "bi": "bip", "bip": "bi"}[part]
            o = make_node(f"{name}_{other}", [x], node.shape, node.dtype)
            d = o if part in ("ai", "bi") else M(x, o)  # (value' = derivative; derivative'
            if name == "airye":                          # = x value)
                r = A.ew("sqrt", A.ew("maximum", x, 0.0))
                if part in ("ai", "aip"):
                    d = A.add(d, M(r, node))
                else:
                    d = A.sub(d, M(r, node))
            return (M(g, d),)
        return rule

    def ndtri_exp(node: Node, g: Node) -> tuple:
        mills = A.ew("erfcx", M(node, -0.7071067811865476))
        return (M(g, M(mills, 1.2533141373155003)),)

    def owens_t(node: Node, g: Node) -> tuple:
        h, a = node.inputs
        h2 = M(h, h)
        phi = M(A.ew("exp", M(h2, -0.5)), 0.3989422804014327)
        dh = M(M(phi, A.ew("erf", M(M(a, h), 0.7071067811865476))), -0.5)
        one_a2 = A.add(M(a, a), 1.0)
        da = A.div(M(A.ew("exp", M(M(h2, one_a2), -0.5)), 0.15915494309189535), one_a2)
        return M(g, dh), M(g, da)

    higher = refused("the derivatives of scipy.special.elliprd and elliprj are not computed "
                     "by fusejit")
    return {**{f"ellipj_{n}": ellipj(n) for n in ("sn", "cn", "dn", "ph")},
            "elliprf": elliprf, "elliprg": elliprg, "elliprc": elliprc,
            "elliprd": higher, "elliprj": higher, "ndtri_exp": ndtri_exp, "owens_t": owens_t,
            **dict.fromkeys(("hypergeom_pmf", "hypergeom_cdf", "hypergeom_sf",
                             "hypergeom_logcdf", "hypergeom_logsf"),
                            refused("scipy.stats.hypergeom's functions are not differentiated "
                                    "by fusejit")),
            **dict.fromkeys(("ncx2_pdf", "ncx2_sf", "ncx2_isf", "chndtr", "chndtrix"), refused(
                "scipy.stats.ncx2's functions (scipy.special.chndtr) are not differentiated by "
                "fusejit")),
            **{f"{n}_{p}": airy(n, p) for n in ("airy", "airye") for p in ("ai", "aip", "bi",
                                                                            "bip")}}
