"""The dual method's line search on CLS + 1e-4·KL objectives with rows (the route grid's problems).

The step radius: without it the first Newton step on the rows' multipliers is ~1e11 long (rows whose
values sit in the KL term's exponential tail), the line search fails after one step and the answer
is 2e-3 off (``recognised / linear equality``, d = 2,000, seed 1). The last steps: where a step's
ascent is below φ's rounding, the rows' residual decides (``declared / partition totals``, d = 100,
seed 3: Armijo alone halved eight times, then three, at the rounding level)."""

import pathlib
import sys
import warnings

import numpy as np
import pytest

from ldpopt.problems.dual import dual
from ldpopt.problems.solvers.structured.solver import solve_structured

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))


def _problem(obj="recognised", con="linear equality", d=2000, seed=1):
    from bench_route_grid import vector_problem

    make, _ = vector_problem(obj, con, d, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make()


def _solve(pr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return solve_structured(pr.estimate, pr.objective, pr.constraints)


def test_rows_in_the_kl_tail_certify():
    res = _solve(_problem())
    assert res.status == "optimal", res.message
    assert res.iterations["line_search_failures"] == 0
    assert res.iterations["newton_iterations"] <= 15


def test_without_the_radius_the_line_search_fails(monkeypatch):
    """The same problem with the radius taken away: the failure the radius fixes (so the test above
    exercises it)."""
    monkeypatch.setattr(dual, "_step_radius", lambda *a: np.inf)
    res = _solve(_problem())
    assert res.status == "inaccurate"
    assert res.iterations["line_search_failures"] == 1
    assert res.certificate.primal_violation == pytest.approx(1.9e-3, rel=0.1)


def test_steps_below_the_dual_rounding_are_taken_on_the_residual(monkeypatch):
    pr = _problem("declared", "partition totals", 100, 3)
    res = _solve(pr)
    assert res.status == "optimal", res.message
    assert res.iterations["newton_iterations"] <= 6 and res.iterations["lambda_iterations"] <= 26
    halvings = []
    original = dual.backtrack

    def counted(trial, tries):
        alpha, got = original(trial, tries)
        halvings.append(alpha)
        return alpha, got

    monkeypatch.setattr(dual, "backtrack", counted)
    again = _solve(_problem("declared", "partition totals", 100, 3))
    assert min(halvings) >= 0.5  # every accepted step full or halved once, none 2^-7 as before
    np.testing.assert_allclose(again.f, res.f, rtol=0, atol=1e-15)
