"""Numerical extremes for the closed forms (RELIABILITY.md, family "extremes").

ε = 10⁻³ and ε = 20 (and 50 where it is defined), d = 2 and d = 10⁶, against an independent
reference: a 50-digit mpmath evaluation of the KKT solution on small d (the float p, q and counts
are taken as exact, so the reference answers "what is the exact minimiser for these inputs"), the
cvxpy solver through ``ldpopt.Problem`` on moderate d, and, at d = 10⁶, obviously-correct bisection
references (the solver would take minutes there).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from ldpopt import Estimate, methods, oracles
from ldpopt.problems import Problem

U = np.finfo(float).eps


def _mp_mle_apx(est: Estimate) -> np.ndarray:
    """Exact minimiser of arXiv Eq. 13 at 50 digits: top-k support scan on the KKT conditions
    (ldpopt.methods.mle docstring), every quantity recomputed in mpmath from the float inputs."""
    with mp.workdps(50):
        p, q, n = mp.mpf(est.p), mp.mpf(est.q), mp.mpf(est.n)
        a = [mp.mpf(float(c)) / n - q for c in est.counts]
        B, s, C = p - q, q * (1 - q), (p - q) * (1 - p - q)
        order = sorted(range(len(a)), key=lambda i: -a[i])
        best = None
        cs = mp.mpf(0)
        for k, i in enumerate(order, start=1):
            cs += a[i]
            x = (cs - B) / (C + k * s)
            if a[i] > s * x:
                best = x
        x = best
        return np.array([float(max((ai - s * x) / (B + C * x), 0)) for ai in a])


def _estimate(oracle: str, eps: float, d: int, n: int, seed: int) -> Estimate:
    o = oracles.get(oracle, eps, d)
    rng = np.random.default_rng(seed)
    tc = rng.multinomial(n, rng.dirichlet(np.full(d, 0.3)))
    return o.simulate(tc, seed)


# -- MLE-Apx when p + q > 1 and p → 1 (BLH/HR/OLH at large ε) --------------------------------------
@pytest.mark.parametrize("oracle,eps,d,n", [
    ("blh", 20.0, 1000, 1), ("hr", 20.0, 1000, 1), ("blh", 20.0, 1000, 7), ("hr", 25.0, 200, 3),
    ("olh", 20.0, 2, 1), ("blh", 30.0, 50, 11), ("grr", 20.0, 2, 1), ("oue", 20.0, 100, 5),
])
def test_mle_apx_large_eps_matches_exact_reference(oracle, eps, d, n):
    """Found by the fuzz suite: with p + q > 1 and p ≈ 1, Eq. 14's denominators (C + k·s) and
    (B + C·x) are differences of O(1) terms whose result is O(1 − p); the output summed to
    1 − 1.7e-6 (BLH, ε = 20, d = 1000, n = 1) and deviated from the exact minimiser by ~1e-8."""
    est = _estimate(oracle, eps, d, n, seed=d + n)
    ref = _mp_mle_apx(est)
    for name in ("mle-apx", "mle-apx-paper"):
        f = methods.postprocess(est, name)
        assert np.all(np.isfinite(f)) and f.min() >= 0.0
        assert abs(f.sum() - 1.0) <= 1e-12, (name, f.sum() - 1.0)
        np.testing.assert_allclose(f, ref, rtol=0, atol=1e-12, err_msg=name)
    # the brentq cross-check either agrees or refuses clearly (λ is ill-conditioned as p → 1)
    try:
        f = methods.get("mle-apx").func(est, method="brentq")
    except ValueError as exc:
        assert "method='sort'" in str(exc) and min(est.p * (1 - est.p), est.q * (1 - est.q)) < 1e-6
    else:
        np.testing.assert_allclose(f, ref, rtol=0, atol=1e-9)
