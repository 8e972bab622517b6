"""A linear constraint written once, as rows(d) -> (A, b, sense): a user's subclass with that one
method passes check_constraint, solves through Problem on the structured route and through cvxpy,
and answers exactly as the same constraint written the old way (build, residuals, g, jacobian_t,
compile_into by hand); on generated rows (senses, coefficients, sizes, binding or not) its derived
forms agree with the hand-written ones and its structured answer with Clarabel's."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from _user_module import toy_estimate
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt.problems import STRUCTURED, Constraint, LinearConstraint, Problem, Simplex
from ldpopt.testing import check_constraint

OPS = {"<=": lambda e, b: e <= b, "==": lambda e, b: e == b, ">=": lambda e, b: e >= b}


class RowsOnly(LinearConstraint):
    """Σ_v a_v f_v (sense) b over the first values (a zero beyond them), stated as its row only."""

    default_name = "weighted_sum"

    def __init__(self, a, b, sense, name=None):
        super().__init__(name)
        self.a, self.b, self.sense = np.asarray(a, float), float(b), sense

    def rows(self, d):
        return np.r_[self.a, np.zeros(d - self.a.size)], self.b, self.sense


class OldWay(Constraint):
    """The same constraint with each form written by hand (as the extending guide's example was)."""

    default_name = "weighted_sum"

    def __init__(self, a, b, sense, name=None):
        super().__init__(name)
        self.a, self.b, self.sense = np.asarray(a, float), float(b), sense
        self.sign = -1.0 if sense == ">=" else 1.0

    def build(self, f, estimate):
        return [(self.name, OPS[self.sense](self.a @ f, self.b))]

    def residuals(self, f, estimate):
        r = float(self.a @ f) - self.b
        return [abs(r) if self.sense == "==" else max(self.sign * r, 0.0)]

    def g(self, k, f, d):
        return np.array([self.sign * (float(self.a @ f) - self.b)]), self.sense == "=="

    def jacobian_t(self, k, y, d):
        return self.sign * self.a * float(np.asarray(y).reshape(-1)[0])

    def compile_into(self, rows, keys, d):
        rows.add_rows(sp.csr_matrix(self.sign * self.a.reshape(1, -1)), self.sign * self.b, self.sense != "==",
                      keys[0], scalar=True)
        rows.others += 1


@pytest.fixture(scope="module")
def est():
    return toy_estimate()


def _pair(est, sense):
    a = np.r_[1.0, 2.0, 0.5, np.zeros(est.d - 3)]
    # binding: f̃'s own projection puts more than this on the first values (<=), less (>=)
    b = {"<=": 0.5, "==": 0.6, ">=": 1.2}[sense]
    return RowsOnly(a[:3], b, sense), OldWay(a, b, sense)


@pytest.mark.parametrize("sense", ["<=", "==", ">="])
def test_rows_only_passes_check_constraint(sense, est):
    done = check_constraint(_pair(est, sense)[0])
    assert min(done.values()) > 0, done


@pytest.mark.parametrize("sense", ["<=", "==", ">="])
def test_rows_only_answers_as_the_old_way_structured_and_cvxpy(sense, est):
    new, old = _pair(est, sense)
    for solver in (None, "CLARABEL"):
        got = Problem(est, "cls", [Simplex(), new]).solve(solver=solver)
        ref = Problem(est, "cls", [Simplex(), old]).solve(solver=solver)
        assert got.status == ref.status == "optimal"
        assert (got.solver == STRUCTURED) == (solver is None) and got.solver == ref.solver
        np.testing.assert_allclose(got.f, ref.f, rtol=0, atol=1e-12 if solver is None else 1e-9)
        assert np.shape(got.duals["weighted_sum"]) == np.shape(ref.duals["weighted_sum"]) == ()
        assert abs(float(got.duals["weighted_sum"]) - float(ref.duals["weighted_sum"])) <= 1e-7
    # the constraint binds: its dual is nonzero where the sense allows one
    assert abs(float(got.duals["weighted_sum"])) > 1e-6


@st.composite
def _rows(draw):
    d = draw(st.integers(3, 40))
    m = draw(st.integers(1, 4))
    scalar = m == 1 and draw(st.booleans())
    sense = draw(st.sampled_from(["<=", "==", ">="]))
    coef = draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, -1.0, 2.0, 0.25]), min_size=m * d, max_size=m * d))
    A = np.array(coef).reshape(m, d)
    A[:, draw(st.integers(0, d - 1))] += 1.0  # no empty row
    at = np.full(d, 1.0 / d)  # a point of the simplex the rows pass through (shifted: binding or slack)
    shift = draw(st.sampled_from([0.0, 0.05, -0.05]))
    b = A @ at + (shift if sense != "==" else 0.0)
    seed = draw(st.integers(0, 2**16))
    return d, (A if not scalar else A[0]), (float(b[0]) if scalar else b), sense, seed


class Rows(LinearConstraint):
    def __init__(self, A, b, sense):
        super().__init__("rows")
        self.A, self.b, self.sense = A, b, sense

    def rows(self, d):
        return self.A, self.b, self.sense


@settings(max_examples=examples(25), deadline=None)
@given(_rows())
def test_derived_forms_agree_with_direct_numpy_and_cvxpy(case):
    from ldpopt import oracles

    d, A, b, sense, seed = case
    rng = np.random.default_rng(seed)
    est = oracles.get("grr", 1.0, d).simulate(rng.integers(1, 50, d) * 20, seed)
    con = Rows(A, b, sense)
    A2 = np.atleast_2d(A)
    sign = -1.0 if sense == ">=" else 1.0
    f = rng.normal(1.0 / d, 1.0 / d, d)
    r = A2 @ f - np.atleast_1d(b)
    # residual, g (as cvxpy writes it), its Jacobian, the cvxpy form's violation
    want = np.max(np.abs(r)) if sense == "==" else max(np.max(sign * r), 0.0)
    assert con.residuals(f, est)[0] == pytest.approx(want, rel=1e-12, abs=1e-15)
    g, eq = con.g(0, f, d)
    np.testing.assert_allclose(g, sign * r, rtol=1e-12, atol=1e-15)
    assert eq == (sense == "==")
    y = rng.normal(size=A2.shape[0])
    np.testing.assert_allclose(con.jacobian_t(0, y, d), sign * A2.T @ y, rtol=1e-12, atol=1e-14)
    x = cp.Variable(d)
    ((name, built),) = con.build(x, est)
    x.value = f
    assert name == "rows" and built.expr.shape == (() if np.ndim(b) == 0 else (A2.shape[0],))
    assert float(np.max(np.atleast_1d(built.violation()))) == pytest.approx(want, rel=1e-9, abs=1e-12)
    # the structured answer against Clarabel's on the problem written directly in cvxpy
    sol = Problem(est, "cls", [Simplex(), con]).solve()
    fr = cp.Variable(d)
    ref = cp.Problem(cp.Minimize(cp.sum_squares(fr - est.f_tilde)),
                     [fr >= 0, cp.sum(fr) == 1, OPS[sense](A2 @ fr, np.atleast_1d(b))])
    ref.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    if ref.status != "optimal":
        assert sol.status != "optimal"
        return
    assert sol.status == "optimal"
    np.testing.assert_allclose(sol.f, fr.value, rtol=0, atol=1e-6)


def test_bad_rows_are_one_line_errors(est):
    d = est.d
    with pytest.raises(ValueError, match="sense must be one of"):
        Rows(np.ones(d), 1.0, "<").build(cp.Variable(d), est)
    with pytest.raises(ValueError, match=f"A must have d = {d} columns"):
        Rows(np.ones(d - 1), 1.0, "==").residuals(np.ones(d), est)
    with pytest.raises(ValueError, match="b must be one number per row"):
        Rows(np.ones((2, d)), 1.0, "==").g(0, np.ones(d), d)
    with pytest.raises(ValueError, match="must be finite"):
        Rows(np.ones(d), np.nan, "==").jacobian_t(0, np.ones(1), d)
    with pytest.raises(NotImplementedError, match="states no rows"):
        LinearConstraint().rows(d)
