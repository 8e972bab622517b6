"""Which solvers ``Problem.solve()`` tries, in which order, and when a problem is known feasible.

The chains are chosen from ``benchmarks/bench_policy.py`` (table and reasoning in BENCHMARKS.md,
section "Solver policy"); a solver that is not installed is skipped. ``solve()`` walks the chain
until a solver's answer passes ldpopt's own check (:mod:`.checks`), recording every attempt.

* QP (``cvxpy_problem.is_qp()``: cls, posterior, user quadratics, with linear constraints):
  PIQP → CLARABEL → OSQP. PIQP was the fastest at every d measured and within ldpopt's check;
  Clarabel is the robust interior-point second; OSQP (1e-10 + polishing) is exact on the active
  set at small d but slow past d ≈ 10⁴, so it comes last.
* Cone programs (weighted MLE's second-order cones, exponential cones of the likelihoods, L1 as
  an LP, anything not a QP): CLARABEL → SCS.

``known_feasible(problem)`` tries a few points that satisfy the usual constraint sets — the
uniform vector, the projection of f̃ onto the simplex — against ldpopt's numpy residuals; when one
passes, a solver's "infeasible" is a solver failure, never the answer.
"""

from __future__ import annotations

import numpy as np

from .checks import constraint_violations, violation_tol

__all__ = ["CONE_CHAIN", "QP_CHAIN", "SCS_TIGHT", "default_chain", "feasible_point"]

QP_CHAIN = ("PIQP", "CLARABEL", "OSQP")
CONE_CHAIN = ("CLARABEL", "SCS")
#: SCS at its defaults (eps 1e-4) fails ldpopt's frequency-unit check at any d; as a fallback it
#: runs tightened (the tolerance ``ldpopt.verify`` uses for it)
SCS_TIGHT = {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000}


def default_chain(problem) -> tuple[str, ...]:
    """The documented chain for ``problem``'s class (QP or cone program)."""
    return QP_CHAIN if problem.cvxpy_problem.is_qp() else CONE_CHAIN


def feasible_point(problem) -> np.ndarray | None:
    """A point satisfying every constraint to ldpopt's tolerance, if one of the candidates does."""
    from ..methods.normalize import project_simplex

    est = problem.estimate
    d = est.d
    tol = violation_tol(d)
    candidates = [np.full(d, 1.0 / d)]
    try:
        candidates.append(project_simplex(est.f_tilde))
    except (ValueError, ZeroDivisionError, IndexError):
        pass
    for f in candidates:
        viol = constraint_violations(problem, f)
        if all(v <= tol for v in viol.values()) and _aux_ok(problem, f):
            return f
    return None


def _aux_ok(problem, f) -> bool:
    """The objective's own auxiliary constraints are epigraph cones (always satisfiable by a large
    enough epigraph variable) except a domain: check the objective is finite at f."""
    try:
        return bool(np.isfinite(problem.objective.value(f, problem.estimate)))
    except NotImplementedError:
        return True
