"""A recognised objective's implicit domain (``power(f − c, 1.5)``: f ≥ c, which cvxpy adds itself) is an
explicit constraint for ldpopt's routes and check: the optimum on the domain's edge is certified, and
Clarabel's answer is not labelled ``inaccurate`` (every route rejected it before)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ldpopt.oracles.unary import OUE
from ldpopt.problems import Problem
from ldpopt.problems.constraints.base import Simplex

D = 1000


def _estimate():
    rng = np.random.default_rng(3)
    counts = rng.multinomial(100_000, rng.dirichlet(np.ones(D)))
    o = OUE(1.0, D)
    return o.estimate(o.sample_counts(counts, rng), 100_000)


def _referee(ft, c, lam):
    """Σ f = 1 by bisection on t; per value the root of 2(f − f̃) + 1.5λ(f − c)^½ = −t on f ≥ c (the
    left side increases in f), f = c when it is already ≥ −t there. 200 bisections each."""
    def f_of(t):
        lo, hi = c.copy(), c + 2.0 + np.abs(ft) + abs(t)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            up = 2 * (mid - ft) + 1.5 * lam * np.sqrt(mid - c) + t > 0
            hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
        return 0.5 * (lo + hi)
    tlo, thi = -10.0, 10.0
    for _ in range(200):
        t = 0.5 * (tlo + thi)
        tlo, thi = (t, thi) if f_of(t).sum() > 1 else (tlo, t)
    return f_of(0.5 * (tlo + thi))


def test_shifted_power_is_certified_on_its_domain_edge_by_every_route():
    est = _estimate()
    c, lam = np.full(D, 0.1 / D), 1e-3
    pr = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + lam * cp.sum(cp.power(f - c, 1.5)), [Simplex()])
    assert "domain" in pr.constraint_names[-1]
    ref = _referee(est.f_tilde, c, lam)
    assert np.sum(np.abs(ref - c) < 1e-12) > 10  # the case: many values on the domain's edge
    sol = pr.solve()
    assert sol.status == "optimal" and sol.solver == "LDPOPT-STRUCTURED"
    assert np.max(np.abs(sol.f - ref)) <= max(sol.checks.error_bound, 1e-13)
    clar = pr.solve(solver="CLARABEL")
    assert clar.status == "optimal" and np.max(np.abs(clar.f - ref)) <= clar.checks.error_bound
