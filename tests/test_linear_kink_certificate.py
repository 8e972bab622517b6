"""The dual bound of a linear objective with polyhedral terms (``linear_kink_certificate``) is a lower
bound on the optimum whatever the multipliers: generated programs c·f + Σ W·|A f + b| + w·max(A f + b)
(A an index, a running sum, a dense row block, a reversal) on the simplex, alone or with a subset
sum (==, ≤), at random feasible points and with random multipliers in place of the solver's, never
claim J(f) − J* smaller than it is against a tight reference (Clarabel on the expression as
written, no ldpopt route); at ldpopt's own answer it certifies the optimal value."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from conftest import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ldpopt
from ldpopt.problems import Simplex, SubsetSum
from ldpopt.problems.check.certificate import LinearKinkObjective, linear_kink_certificate


def _program(seed: int):
    """(est, J, constraints, a sampler of feasible points, the subset and its bound)."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(5, 40))
    est = ldpopt.oracles.get("oue", 1.0, d).estimate(rng.multinomial(4_000, rng.dirichlet(np.ones(d))), 4_000)
    c = rng.standard_normal(d) / d
    terms = []
    for _ in range(int(rng.integers(1, 4))):
        kind = int(rng.integers(4))
        w = float(10.0 ** rng.uniform(-3, 1))
        t = rng.uniform(-0.5, 0.5) / d
        if kind == 0:
            i = int(rng.integers(d))
            terms.append(lambda f, i=i, w=w, t=t: w * cp.abs(f[i] - t))
        elif kind == 1:
            q = np.sort(rng.uniform(0, 1, d))
            terms.append(lambda f, q=q, w=w: w * cp.norm1(cp.cumsum(f) - q))
        elif kind == 2:
            M = rng.standard_normal((3, d))
            terms.append(lambda f, M=M, w=w, t=t: w * cp.max(M @ f - t))
        else:
            terms.append(lambda f, w=w, t=t: w * cp.sum(cp.pos(f[::-1] - t)))

    def J(f, e):
        return c @ f + sum(term(f) for term in terms)

    S = rng.choice(d, size=max(1, d // 3), replace=False)
    sense = ["none", "==", "<="][int(rng.integers(3))]
    v = float(rng.uniform(0.1, 0.6))
    cons = [Simplex()] + ([] if sense == "none" else [SubsetSum(S, v, sense)])

    def feasible(r):
        if sense == "none":
            return r.dirichlet(np.full(d, 0.5))
        mass = v if sense == "==" else v * r.uniform()
        x = np.zeros(d)
        rest = np.setdiff1d(np.arange(d), S)
        x[S] = mass * r.dirichlet(np.full(S.size, 0.5))
        x[rest] = (1 - mass) * r.dirichlet(np.full(rest.size, 0.5))
        return x

    return est, J, cons, feasible, (S, sense, v), rng


def _optimum(est, J, subset) -> float:
    S, sense, v = subset
    x = cp.Variable(est.d)
    cons = [x >= 0, cp.sum(x) == 1]
    if sense == "==":
        cons.append(cp.sum(x[S]) == v)
    elif sense == "<=":
        cons.append(cp.sum(x[S]) <= v)
    prob = cp.Problem(cp.Minimize(J(x, est)), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status == "optimal", prob.status
    return float(prob.value)


@settings(max_examples=examples(15), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_the_dual_bound_never_claims_less_than_the_true_gap(seed):
    est, J, cons, feasible, subset, rng = _program(seed)
    problem = ldpopt.Problem(est, J, cons)
    assert type(problem.objective) is LinearKinkObjective
    best = _optimum(est, J, subset)
    allow = 1e-8 * max(1.0, abs(best))  # the reference's own accuracy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = problem.solve()
    value = lambda x: float(J(cp.Constant(x), est).value)  # noqa: E731
    # the solver's answer: certified, and its gap covers its distance to the optimal value
    cert = linear_kink_certificate(problem, sol.f, sol.duals)
    assert cert is not None and cert.gap + cert.gap_floor >= value(sol.f) - best - allow
    if sol.status == "optimal":
        assert value(sol.f) - best <= 1e-6 * max(1.0, abs(best)) + allow
    # random feasible points and random multipliers of the solver's shapes: still a lower bound
    for _ in range(4):
        x = feasible(rng)
        noisy = {k: None if y is None else np.asarray(y, float) * rng.uniform(-3, 3, np.shape(y))
                 + rng.standard_normal(np.shape(y)) for k, y in sol.duals.items()}
        for duals in (sol.duals, noisy):
            got = linear_kink_certificate(problem, x, duals)
            assert got.gap + got.gap_floor >= value(x) - best - allow, (got, value(x) - best)


@settings(max_examples=examples(40), deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), sum_free=st.booleans(), infinite=st.booleans())
def test_the_dual_over_the_box_is_the_linear_programs_minimum(seed, sum_free, infinite):
    """max over λ of min over l ≤ x ≤ u of (g + λ)·x − λ·total equals min g·x over the box with
    Σ x = total (strong duality), computed independently by HiGHS's LP; without the Σ row, λ = 0
    and a negative coefficient against u = ∞ gives −∞, as the LP is unbounded."""
    from types import SimpleNamespace

    from scipy.optimize import linprog

    from ldpopt.problems.check.certificate import _lp_dual_over_box

    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 12))
    g = rng.standard_normal(d)
    g[rng.random(d) < 0.3] = 0.0  # ties at a breakpoint, zero coefficients
    l = np.where(rng.random(d) < 0.5, 0.0, rng.uniform(-1, 0.5, d))
    u = l + rng.uniform(0, 2, d)
    if infinite:
        u[rng.random(d) < 0.5] = np.inf
    total = float(rng.uniform(l.sum(), l.sum() + np.minimum(u - l, 3).sum()))  # a feasible total
    st_ = SimpleNamespace(l=l, u=u, total=total, sum_free=sum_free)
    got, lam = _lp_dual_over_box(g, st_)
    lp = linprog(g, A_eq=None if sum_free else np.ones((1, d)), b_eq=None if sum_free else [total],
                 bounds=list(zip(l, np.where(np.isfinite(u), u, None))), method="highs")
    if lp.status == 3:  # unbounded below
        assert got == -np.inf
    else:
        assert lp.status == 0, lp.message
        assert got == pytest.approx(lp.fun, rel=1e-9, abs=1e-9), (got, lp.fun, lam)
