"""The certificate with multipliers recovered from f (no solver) accepts exact optima where values sit
at explicit or implied bounds — simplex vertices at high noise, ties, d = 2, ``Fixed``, Box, SubsetSum
— and rejects wrong answers; ``ldpopt verify`` at ε = 0.05, n = 10 holds on every row.

Exact optima from :mod:`_exact_reference` (bisection to adjacent floats, its own derivative formulas,
an exact feasibility decision); a wrong answer moves 0.01 of mass between two values, staying feasible."""

import numpy as np
import pytest
from _cli import ldpopt
from _status_property import FAMILIES, OBJECTIVES, make_case, references

from ldpopt import Estimate
from ldpopt.problems.check.certificate import certificate
from ldpopt.problems.constraints.base import Fixed, Simplex
from ldpopt.problems.objectives.builtins import make_objective


def _cert(objective, case, f):
    est, cons, mean = case[:3]
    return certificate(make_objective(objective, mean=mean), cons, est, f)


def _grid(objective, seed):
    rng = np.random.default_rng(seed)
    cases = []
    for fam in FAMILIES:
        for d in (2, 3, 10):
            for eps, n in ((0.05, 10), (None, None)):
                cases.append(make_case(objective, fam, d, rng, infeasible=False, n=n, eps=eps))
    return cases, references(objective, cases)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_exact_optima_at_bounds_certify_and_wrong_answers_fail(objective):
    vertices = worst = 0
    for seed in range(2):
        cases, refs = _grid(objective, seed)
        for case, (ok, x, err) in zip(cases, refs):
            assert ok
            c = _cert(objective, case, x)
            assert c.feasible
            # exact to the reference's accuracy: the certified distance is at its rounding level
            assert c.distance_linf <= max(c.distance_rounding, 1e-12) + err, (case[1], c.distance_linf, c.note)
            worst = max(worst, c.distance_linf)
            l, u = case[3], np.minimum(case[4], 1.0)
            vertices += bool(np.all((x == l) | (x == u)))
            free = np.flatnonzero((x > l + 0.02) & (case[5] == case[5][np.argmax(x - l)]))
            free_to = np.flatnonzero((x < u - 0.02) & (case[5] == case[5][np.argmax(x - l)]))
            free_to = free_to[free_to != (free[0] if free.size else -1)]
            if free.size and free_to.size:  # a feasible point 0.01 away (same block): never certified
                wrong = x.copy()
                wrong[free[0]] -= 0.01
                wrong[free_to[0]] += 0.01
                cw = _cert(objective, case, wrong)
                # rejected: infeasible (an inequality row moved across) or certified at ≥ its true error
                assert not cw.feasible or cw.distance_linf >= 0.01 * (1 - 1e-9), (case[1], cw.distance_linf)
    assert vertices >= 2  # the grid did reach points with every value at a bound


def test_ties_and_fixed_at_d2():
    """Tied estimates (every f̃ equal: the optimum is uniform) and Fixed at d = 2 (the only feasible
    point, the free value at the implied bound f ≤ 1 when the fixed one is 0)."""
    est = Estimate.from_counts(np.array([3, 3, 3, 3]), 10, 0.05, 0.5, 1 / (np.exp(0.05) + 1), oracle="oue")
    for obj in ("cls", "weighted-mle", "binomial"):
        c = certificate(obj, None, est, np.full(4, 0.25))
        assert c.distance_linf <= max(c.distance_rounding, 1e-14)
    est2 = Estimate.from_counts(np.array([9, 1]), 10, 0.05, 0.5, 1 / (np.exp(0.05) + 1), oracle="oue")
    for a in (0.0, 0.3, 1.0):
        for obj in ("cls", "weighted-mle", "binomial"):
            c = certificate(obj, [Simplex(), Fixed([0], a)], est2, np.array([a, 1.0 - a]))
            assert c.feasible and c.distance_linf <= max(c.distance_rounding, 1e-14), (obj, a, c.distance_linf)
    # a vertex that is not optimal (cls: f̃ favours value 0, the answer puts everything on value 1)
    c = certificate("cls", None, est2, np.array([0.0, 1.0]))
    assert c.distance_linf >= 1.0 - 1e-9


def test_verify_at_high_noise_exits_0_with_every_row_holding():
    proc = ldpopt("verify", "--oracles", "oue", "sue", "olh", "ss", "--epsilons", "0.05", "--n", "10",
                  "--d", "10", "1000", "--no-mc")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Every refereed row of a claim expected to hold holds." in proc.stdout
    rows = [ln.split("|") for ln in proc.stdout.splitlines() if "| certificate |" in ln]
    claims = {"norm-sub=cls", "mle-apx=weighted-mle", "mle-apx-paper=weighted-mle", "em=likelihood",
              "power-ns=posterior"}
    mine = [r for r in rows if r[0].strip() in claims]
    assert len(mine) == 5 * 8  # 4 oracles × 2 domain sizes per claim, each decided by the certificate
    assert all(r[-1].strip() == "holds" for r in mine), [r for r in mine if r[-1].strip() != "holds"]


def test_a_bound_above_its_tolerance_fails_even_when_the_rounding_level_is_coarse():
    """A permuted answer whose tolerance exceeds 1/(10 d) (here through the closed form's stated
    accuracy) is decided: its certified distance is far above the tolerance, so it fails."""
    from ldpopt.methods.normalize import norm_sub
    from ldpopt.verify import check_equivalence

    rng = np.random.default_rng(1)
    d, n = 50, 10_000
    p, q = 0.5, 1 / (np.exp(1.0) + 1)
    tc = rng.multinomial(n, 1.0 / np.arange(1, d + 1) ** 1.5 / np.sum(1.0 / np.arange(1, d + 1) ** 1.5))
    est = Estimate.from_counts(rng.binomial(tc, p) + rng.binomial(n - tc, q), n, 1.0, p, q, oracle="oue")
    right = norm_sub(est)
    wrong = right[::-1].copy()
    coarse = 2.0 / (10 * d)  # above the resolution 1/(10 d): nothing could be decided before
    ok = check_equivalence(est, right, "cls", closed_tol=coarse)
    bad = check_equivalence(est, wrong, "cls", closed_tol=coarse)
    assert ok.verdict == "not refereed"  # within a tolerance coarser than the resolution: undecided
    assert bad.verdict == "fails" and bad.value > bad.tolerance


def test_multinomial_with_a_zero_count_group_says_its_optimum_is_not_unique():
    """GRR counts (5, 3, 2, 0, 0, 0) with Σ_{3,4,5} f = 0.3: J is flat on the group, so every split of
    its 0.3 is optimal. ldpopt says so and bounds the other values against the exact reference."""
    from _exact_reference import solve_blocks

    from ldpopt.problems import Problem
    from ldpopt.problems.constraints.base import SubsetSum

    d, eps = 6, 1.0
    e = np.exp(eps)
    p, q = e / (e + d - 1), 1 / (e + d - 1)
    c = np.array([5, 3, 2, 0, 0, 0])
    est = Estimate.from_counts(c, 10, eps, p, q, oracle="grr")
    sol = Problem(est, "multinomial", [Simplex(), SubsetSum([3, 4, 5], 0.3)]).solve()
    assert sol.status == "optimal" and "no unique optimum" in sol.message
    assert "flat in 3 value(s)" in sol.checks.not_unique
    P = {"p": np.array([[p]]), "q": np.array([[q]]), "n": np.array([[10.0]]), "c": c[None, :3].astype(float)}
    x, err = solve_blocks("multinomial", P, np.zeros((1, 3)), np.full((1, 3), np.inf), np.zeros((1, 3), int),
                          np.array([[0.7]]))
    assert np.max(np.abs(sol.f[:3] - x[0])) <= sol.checks.error_bound + err[0]
    assert abs(sol.f[3:].sum() - 0.3) < 1e-12
    # another split of the group's mass has the same objective: the optimum is indeed not unique
    other = sol.f.copy()
    other[3:] = [0.3, 0.0, 0.0]
    obj = Problem(est, "multinomial").objective
    assert obj.value(other, est) == pytest.approx(obj.value(sol.f, est), abs=1e-14)
