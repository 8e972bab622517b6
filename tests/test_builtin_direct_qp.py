"""The built-in ``"cls"`` with a user's rows (where the structured route does not apply) goes to the
direct QP route, PIQP through its own interface: on generated dense rows near active, the answer is
``optimal`` and within 1e-6 of cvxpy + Clarabel at tight tolerances, its value ‖f − f̃‖²."""

import warnings

import cvxpy as cp
import numpy as np
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import ldpopt
from ldpopt.problems import Problem, Simplex
from ldpopt.problems.solvers.policy import builtin_quadratic, direct_qp_solver


@settings(max_examples=examples(4), deadline=None)
@given(d=st.integers(5, 150), m=st.integers(1, 8), seed=st.integers(0, 2**31 - 1), slack=st.sampled_from([1.0, 1.02, 1.2]))
def test_cls_with_user_rows_takes_the_direct_route(d, m, seed, slack):
    rng = np.random.default_rng(seed)
    est = ldpopt.oracles.get("oue", 1.0, d).estimate(rng.binomial(2000, rng.dirichlet(np.ones(d)) * 0.4 + 0.2), 2000)
    ft = np.asarray(est.f_tilde, float)
    fp = np.maximum(ft, 0.0)
    fp = fp / fp.sum() if fp.sum() > 0 else np.full(d, 1.0 / d)
    A = rng.random((m, d))
    b = slack * (A @ fp)
    prob = Problem(est, "cls", [Simplex(), lambda f, e: [A @ f <= b]])
    assert builtin_quadratic(prob) is not None and direct_qp_solver(prob) == "PIQP"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve()
    f = cp.Variable(d)
    ref = cp.Problem(cp.Minimize(cp.sum_squares(f - ft)), [f >= 0, cp.sum(f) == 1, A @ f <= b])
    ref.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert sol.status == "optimal" and sol.solver == "PIQP-DIRECT", (sol.status, sol.solver, sol.message)
    assert np.max(np.abs(sol.f - f.value)) <= 1e-6
    assert abs(sol.optimal_value - float(np.sum((sol.f - ft) ** 2))) <= 1e-9 * max(1.0, sol.optimal_value)


def test_a_likelihood_is_not_a_quadratic():
    est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46, 30, 15, 9]), 100)
    assert builtin_quadratic(Problem(est, "weighted-mle")) is None
    assert builtin_quadratic(Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde))) is None  # its own form
