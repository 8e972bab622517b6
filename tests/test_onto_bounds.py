"""An answer that fails ldpopt's check only on f ≥ 0, a Box, Σ f = total or their aggregate is
moved onto its bounds and total (``check.point.onto_bounds_and_total``) and judged again by the same
check, with the same multipliers (``solvers.attempts.onto_bounds``): dust planted on a solver's answer
of generated problems is removed and the answer certified as before; a move past the cap, or a
failure of a constraint of yours, is never mended."""

from __future__ import annotations

import math
import warnings
from unittest import mock

import numpy as np
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from problem_strategies import cases

from ldpopt.problems.check.point import ONTO_MAX_MOVE, onto_bounds_and_total
from ldpopt.problems.check.verdict import accuracy_tol
from ldpopt.problems.solvers import attempts


@settings(max_examples=examples(80), deadline=None)
@given(d=st.integers(2, 300), seed=st.integers(0, 2**32 - 1), dust=st.sampled_from([0.0, 1e-15, 1e-11, 1e-8, 1e-4]),
       box=st.booleans())
def test_the_move_lands_on_the_bounds_and_the_total_or_is_refused(d, seed, dust, box):
    rng = np.random.default_rng(seed)
    f = rng.dirichlet(np.full(d, 0.3))
    lo = np.zeros(d)
    up = np.where(rng.random(d) < 0.5, np.maximum(f, 1.0 / d), np.inf) if box else np.full(d, np.inf)
    f = f + dust * rng.standard_normal(d)
    cap = 1e-6
    g = onto_bounds_and_total(f, lo, up, 1.0, cap)
    if g is None:
        return
    assert np.all(g >= lo) and np.all(g <= up)
    assert abs(math.fsum(g) - 1.0) <= 4 * d * np.finfo(float).eps
    assert np.max(np.abs(g - f)) <= cap
    assert np.all(g[f <= lo] == lo[f <= lo])  # a value at or below its bound lands on it
    if dust == 0.0 and not box:
        assert np.max(np.abs(g - f)) <= 8 * np.finfo(float).eps


def _planted(extra: float):
    """_solve_collect whose answer reads −``extra`` (frequency units) on every value at 0: an interior
    point's dust, Σ f short by as much."""
    real = attempts._solve_collect

    def collect(problem, name, verbose, opts, seconds=None, stall=False, retry=None):
        out = real(problem, name, verbose, opts, seconds, stall, retry)
        if out["x"] is not None:
            f = out["x"] * problem.scale
            low = f < 1e-9
            f = np.where(low, -extra, f)
            out["x"] = f / problem.scale
        return out

    return collect


@settings(max_examples=examples(6), deadline=None)
@given(case=cases(objectives=("cls", "user-cvxpy"), constraints=("simplex", "subset>=", "user-affine", "user-ball"),
                  margins=("feasible",), d_min=20, d_max=120))
def test_planted_dust_on_a_solvers_answer_is_mended_and_certified_as_before(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = case.problem().solve(solver="CLARABEL")
        if ref.status not in ("optimal", "optimal_unverified") or not np.any(ref.f < 1e-9):
            return
        extra = 0.3 * ONTO_MAX_MOVE * accuracy_tol(case.d)  # over the violation tolerance, under the cap
        with mock.patch.object(attempts, "_solve_collect", _planted(extra)):
            sol = case.problem().solve(solver="CLARABEL")
            far = _planted(3 * ONTO_MAX_MOVE * accuracy_tol(case.d))
        with mock.patch.object(attempts, "_solve_collect", far):
            refused = case.problem().solve(solver="CLARABEL")
    assert sol.status == ref.status, (sol.status, sol.message)
    assert "moved onto its bounds and total" in sol.message
    assert np.min(sol.f) >= 0 and abs(math.fsum(sol.f) - 1.0) <= 1e-12
    assert np.max(np.abs(sol.f - ref.f)) <= 2 * extra + 1e-9
    # dust past the cap is not mended: the planted attempt fails (the chain may then answer in the
    # other unit, whose own point may carry no dust to plant: routes.refuted_in_one_unit)
    assert "moved onto its bounds and total" not in refused.message and refused.attempts[0]["status"] != "optimal"
