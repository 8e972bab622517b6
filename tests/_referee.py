"""A tight Clarabel referee for the smooth routes' tests: the user's own cvxpy expression and the
constraints' own cvxpy forms on a fresh variable (independent of ldpopt's routes)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np


def clarabel_referee(func, est, cons, tol: float = 1e-12) -> np.ndarray:
    f = cp.Variable(est.d)
    prob = cp.Problem(cp.Minimize(func(f, est)), [con for c in cons for _, con in c.build(f, est)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver="CLARABEL", tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
    assert prob.status in ("optimal", "optimal_inaccurate")
    return np.asarray(f.value)
