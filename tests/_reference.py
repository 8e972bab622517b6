"""Independent reference formulas shared by several test files (not the package's own code)."""

import numpy as np


def pq(kind: str, eps: float, d: int) -> tuple[float, float]:
    """(p, q) written straight from the papers: GRR (arXiv Eq. 1), OUE (§2.3), SUE (basic RAPPOR),
    and "blh": p = e^ε/(e^ε + 1), q = 1/2 — the p + q > 1 case (it is HR's p, q; used for the sign
    of 1 − p − q, not as BLH)."""
    e = np.exp(eps)
    if kind == "grr":
        return e / (e + d - 1), 1 / (e + d - 1)
    if kind == "oue":
        return 0.5, 1 / (e + 1)
    if kind == "sue":
        h = np.exp(eps / 2)
        return h / (h + 1), 1 / (h + 1)
    if kind == "blh":
        return e / (e + 1), 0.5
    raise AssertionError(kind)


def exact_projection(y, total) -> list:
    """Euclidean projection of ``y`` onto {f ≥ 0, Σf = total} in exact rational arithmetic
    (sort + scan of Held, Wolfe & Crowder), from the float inputs; returns Fractions."""
    from fractions import Fraction

    ys = [Fraction(float(v)) for v in y]
    t = Fraction(float(total))
    css, tau = Fraction(0), None
    for k, v in enumerate(sorted(ys, reverse=True), start=1):
        css += v
        if v * k > css - t:
            tau = (css - t) / k
    return [max(v - tau, Fraction(0)) for v in ys]
