"""The dual method's step radius on a CLS + 1e-4·KL objective with sparse equality rows: without it
the first Newton step on the rows' multipliers is ~1e11 long (rows whose values sit in the KL term's
exponential tail), the line search fails after one step and the answer is 2e-3 off; with it the route
certifies. The route grid's ``recognised / linear equality`` problem at d = 2,000, seed 1."""

import pathlib
import sys
import warnings

import numpy as np
import pytest

from ldpopt.problems.solvers.structured import dual
from ldpopt.problems.solvers.structured.solver import solve_structured

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))


def _problem():
    from bench_route_grid import vector_problem

    make, _ = vector_problem("recognised", "linear equality", 2000, 1)
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
