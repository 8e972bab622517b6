"""The check computes the certificate with multipliers recovered from f only where the first one (the
solver's multipliers) does not already pass: a passing answer's error bound is the first
certificate's own, and a point off by a tenth of the frequency scale still fails with both tried."""

from __future__ import annotations

import numpy as np

from ldpopt import oracles
from ldpopt.problems import Problem, Simplex, SubsetSum
from ldpopt.problems.check import certificate as cert_module
from ldpopt.problems.check.verdict import accuracy_tol, check_solution, violation_tol


def test_recovered_multipliers_only_where_the_first_bound_does_not_pass(monkeypatch):
    d = 100
    rng = np.random.default_rng(4)
    w = 1.0 / np.arange(1, d + 1) ** 1.5
    est = oracles.get("oue", epsilon=1.0, d=d).simulate(rng.multinomial(10**5, w / w.sum()), rng)
    truth = w / w.sum()
    half = np.arange(d // 2)
    p = Problem(est, "cls", [Simplex(), SubsetSum(half, float(truth[half].sum()))])
    sol = p.solve()
    own = cert_module.certificate(p.objective, p.constraints, est, sol.f, sol.duals, feas_tol=violation_tol(d))
    calls = []
    real = cert_module.certificate

    def spy(objective, constraints, estimate, f, multipliers=None, **kw):
        calls.append(multipliers is None)
        return real(objective, constraints, estimate, f, multipliers, **kw)

    monkeypatch.setattr(cert_module, "certificate", spy)
    ok = check_solution(p, sol.f, sol.duals)
    assert ok.passed and calls == [False]  # the solver's multipliers only
    assert own.distance_linf + own.distance_rounding <= accuracy_tol(d)
    assert ok.error_bound == own.distance_linf + own.distance_rounding
    bad = sol.f.copy()
    i, j = np.argsort(-bad[half])[:2]  # two values in the same row: Σ f and the subset total kept
    bad[i] += 0.1 / d
    bad[j] -= 0.1 / d
    calls.clear()
    off = check_solution(p, bad, sol.duals)
    assert not off.passed and calls == [False, True]
