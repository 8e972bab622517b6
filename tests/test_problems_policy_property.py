"""Property (issue 11 item 1): the default policy never calls the always-feasible simplex
"infeasible", and when it says "optimal" its own check passed and f is Norm-Sub (the closed form
of CLS on the simplex, Wang et al. App. B) at the frequency scale.

A seeded sweep rather than hypothesis so the cost is fixed (~60 s on a shared core): 7 oracles ×
ε log-uniform in [0.01, 20] × n log-uniform in [10, 10⁹] × d log-uniform in [2, 300] for most
draws, and d ∈ {3,000, 20,000, 100,000} for three (the large solves dominate the time).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ldpopt import oracles, postprocess
from ldpopt.problems import Problem
from ldpopt.problems.check.verdict import accuracy_tol

ORACLES = ("grr", "oue", "sue", "olh", "blh", "hr", "ss")


def _draws(k: int, seed: int = 20261122):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(k):
        eps = float(np.exp(rng.uniform(np.log(0.01), np.log(20.0))))
        n = int(np.exp(rng.uniform(np.log(10), np.log(1e9))))
        d = int(np.exp(rng.uniform(np.log(2), np.log(300))))
        out.append((ORACLES[i % 7], eps, max(d, 2), n, i))
    out += [("oue", 1.0, 3_000, 10**6, k), ("olh", 8.0, 20_000, 10**8, k + 1), ("grr", 0.5, 100_000, 10**7, k + 2)]
    return out


def _estimate(oracle, eps, d, n, seed):
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.full(d, 0.3))
    return oracles.get(oracle, epsilon=eps, d=d).simulate(rng.multinomial(n, w), rng)


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c[0]}-eps{c[1]:.3g}-d{c[2]}-n{c[3]}") for c in _draws(60)])
def test_cls_on_simplex_never_infeasible_and_optimal_means_norm_sub(case):
    est = _estimate(*case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, "cls").solve()
    assert sol.status not in ("infeasible", "infeasible_inaccurate"), sol.attempts
    assert sol.status == "optimal", (sol.status, sol.message)
    assert sol.checks.passed and sol.checks.max_violation <= 1e-6 / est.d
    err = float(np.max(np.abs(sol.f - postprocess(est, "norm-sub"))))
    assert err <= accuracy_tol(est.d), (err, sol.solver, sol.checks.summary())
