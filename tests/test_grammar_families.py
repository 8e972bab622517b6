"""Problems drawn from cvxpy's grammar (``problem_strategies.families``: atoms over affine arguments of
f composed up to three deep, constraints of every cone, data with ties, zeros and huge negative
estimates): ``solve()`` raises no library exception, its status is one ldpopt's check agrees with,
an ``optimal`` point is feasible to cvxpy's own measure and no worse than cvxpy + Clarabel at tight
tolerances, and an ``infeasible`` claim carries a verified certificate that Clarabel does not refute."""

import warnings

import cvxpy as cp
import numpy as np
from conftest import examples
from hypothesis import given, settings
from problem_strategies import families

STATUSES = {"optimal", "optimal_unverified", "inaccurate", "optimal_inaccurate", "infeasible",
            "infeasible_inaccurate", "unbounded", "user_limit", "solver_error", "time_limit"}
TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


def _reference(fam):
    """(status, f, value) of cvxpy + Clarabel at tight tolerances on the family written in plain cvxpy."""
    prob, f, cons = fam.cvxpy_problem()
    try:
        prob.solve(solver="CLARABEL", **TIGHT)
    except Exception:  # noqa: BLE001 - cvxpy itself fails on the family (e.g. quad_form of a cumsum): no reference
        return "solver_error", None, None
    if f.value is None:
        return prob.status, None, None
    viol = max((float(np.max(c.violation())) for c in cons), default=0.0)
    return (prob.status if viol <= 1e-7 else "infeasible_point"), np.array(f.value), prob.value


def _violation(fam, x) -> float:
    prob, f, cons = fam.cvxpy_problem()
    f.value = x
    return max((float(np.max(c.violation())) for c in cons), default=0.0)


def _value(fam, x) -> float:
    return float(fam.objective(cp.Constant(x), np.asarray(fam.est.f_tilde, float)).value)


@settings(max_examples=examples(8), deadline=None)
@given(fam=families(9, 24))
def test_a_grammar_family_is_solved_or_honestly_refused(fam):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = fam.ldpopt_problem().solve()  # the property: nothing escapes
        ref_status, ref_f, ref_value = _reference(fam)
    assert sol.status in STATUSES, sol.status
    if sol.status == "optimal":
        assert sol.checks is not None and sol.checks.passed
        assert _violation(fam, np.asarray(sol.f, float)) <= 1e-6
        if ref_status == "optimal":
            got = _value(fam, np.asarray(sol.f, float))
            assert got <= ref_value + 1e-5 * max(1.0, abs(ref_value)), (got, ref_value, fam)
    if sol.status == "inaccurate":
        assert sol.checks is not None and not sol.checks.passed
    if sol.status == "infeasible":
        assert sol.infeasibility is not None
        margin = getattr(sol.infeasibility, "margin", None)
        # a set Clarabel finds a point of is empty only by the rounding of the numbers given
        assert ref_status != "optimal" or (margin is not None and margin <= 1e-9), (margin, fam)
