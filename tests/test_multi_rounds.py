"""Post-processing across rounds: the shared-memo covariance against Monte Carlo, the problem's
certified answer against cvxpy (Clarabel), its constraints, and its errors."""

import numpy as np
import pytest

from ldpopt.multi.rounds import rounds_covariance, rounds_problem
from ldpopt.oracles.longitudinal import LGRR, LOLOHA, LOSUE


def _rounds(o, n, tau, seed):
    gen = np.random.default_rng(seed)
    values = np.minimum(gen.geometric(0.4, n) - 1, o.d - 1)
    cl = o.clients(n, gen)
    return [o.estimate(o.aggregate(cl.report(values, gen)), n) for _ in range(tau)], values


@pytest.mark.parametrize("cls", [LOSUE, LGRR, LOLOHA])
def test_shared_covariance_matches_monte_carlo(cls):
    o = cls(3.0, 4, eps_1=1.0)
    n, reps = 400, 600
    values = np.repeat(np.arange(4), [160, 120, 80, 40])
    gen = np.random.default_rng(7)
    F = np.empty((reps, 2, 4))
    for r in range(reps):
        cl = o.clients(n, gen)
        F[r] = [o.estimate(o.aggregate(cl.report(values, gen)), n).f_tilde for _ in range(2)]
    emp_cov = np.mean((F[:, 0] - F[:, 0].mean(0)) * (F[:, 1] - F[:, 1].mean(0)), axis=0)
    tc = np.bincount(values, minlength=4)
    exact = o.estimate(tc * o.p + (n - tc) * o.q, n)  # f̃ = f exactly, so the plug-in is the true f
    a, b = rounds_covariance([exact, exact], o)
    assert np.allclose(a + b, o.variance(tc / n, n))
    se = np.sqrt(np.var(F[:, 0], axis=0) * np.var(F[:, 1], axis=0) / reps) * 1.2
    assert np.all(np.abs(emp_cov - b) < 4.5 * se), (emp_cov, b)
    assert np.all(b > 0) and np.all(a > 0)


@pytest.mark.parametrize("coupling,smooth", [("shared", 0.0), ("independent", 0.0), ("shared", 5.0)])
def test_rounds_problem_certified_against_clarabel(coupling, smooth):
    o = LOSUE(2.0, 6, eps_1=0.8)
    ests, _ = _rounds(o, 1500, 3, seed=1)
    P = rounds_problem(ests, o, coupling=coupling, smooth=smooth)
    sol = P.solve()
    ref = P.solve(solver="CLARABEL")
    assert sol.status == "optimal" and sol.checks is not None and sol.checks.passed
    X = sol.f.reshape(3, 6)
    assert np.all(X >= -1e-12) and np.allclose(X.sum(axis=1), 1.0, atol=1e-9)
    assert np.abs(sol.f - ref.f).max() <= max(sol.checks.error_bound or 0.0, 1e-7) + 1e-7
    if smooth:
        loose = rounds_problem(ests, o, coupling=coupling, smooth=0.0).solve().f.reshape(3, 6)
        # the penalised optimum never has a larger penalty than the unpenalised one (and here strictly smaller)
        assert (np.diff(X, axis=0) ** 2).sum() < (np.diff(loose, axis=0) ** 2).sum()


def test_independent_without_smoothing_is_per_round_weighted_projection():
    # independent coupling, λ = 0: the rounds separate; each round is the weighted projection onto the
    # simplex, which cvxpy solves round by round here (an independent reference)
    import cvxpy as cp

    o = LOSUE(2.0, 5, eps_1=0.8)
    ests, _ = _rounds(o, 1000, 2, seed=3)
    sol = rounds_problem(ests, o, coupling="independent").solve()
    a, b = rounds_covariance(ests, o)
    for t, e in enumerate(ests):
        x = cp.Variable(5)
        cp.Problem(cp.Minimize(cp.sum(cp.multiply(1 / (a + b), cp.square(x - e.f_tilde)))),
                   [x >= 0, cp.sum(x) == 1]).solve(solver="CLARABEL")
        assert np.abs(sol.f[t * 5:(t + 1) * 5] - x.value).max() < 1e-6


def test_rounds_problem_errors():
    o = LOSUE(2.0, 5, eps_1=0.8)
    ests, _ = _rounds(o, 300, 2, seed=0)
    with pytest.raises(ValueError, match="coupling"):
        rounds_problem(ests, o, coupling="bogus")
    with pytest.raises(ValueError, match="smooth"):
        rounds_problem(ests, o, smooth=-1.0)
    with pytest.raises(ValueError, match="estimates"):
        rounds_problem(ests[:1], o)
    with pytest.raises(ValueError, match="estimates"):
        rounds_problem(ests, LOSUE(2.0, 6, eps_1=0.8))
    with pytest.raises(TypeError, match="oracle"):
        rounds_problem(ests, "l-osue")


def test_choose_takes_a_longitudinal_setting():
    import ldpopt

    o = LOSUE(2.0, 5, eps_1=1.0)
    ests, _ = _rounds(o, 3000, 3, seed=2)
    c = ldpopt.choose(ests, longitudinal=o, methods=["base", "norm-sub"], n_repeats=4, rng=1)
    assert set(c.table.index) == {"base", "norm-sub", "rounds-shared", "rounds-independent", "rounds-shared-smooth"}
    assert np.isclose(c.table["p_best"].sum(), 1.0)
    # users keep their value: smoothing across rounds removes the instantaneous noise, base keeps it all
    assert c.table.loc["rounds-shared-smooth", "loss"] < c.table.loc["base", "loss"]
    assert "memo carries" in c.how and "ε∞ = 2" in c.how
    with pytest.raises(ValueError, match="query"):
        ldpopt.choose(ests, "topk:2", longitudinal=o, n_repeats=2)
