"""ldpopt's own check of a claimed conflict that involves a user's non-affine constraints (norms,
quadratic bounds: cvxpy inequalities g_j(f) ≤ 0 with g_j convex): the phase one's answer
(:mod:`~ldpopt.problems.solvers.phase_one`) is a *candidate* — a point f̂ and weights λ — and the
claim ``"infeasible"`` is made only when this check, which takes nothing else from the solver, proves
it.

Notes: docs/notes/problems.md, "ldpopt.problems.check.conflict".
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["ALLOWANCE", "non_affine", "verified_conflict"]

#: the relative allowance for cvxpy's float64 evaluation of the user's expressions (module docstring)
ALLOWANCE = 2.0**-26


def non_affine(problem) -> list[str]:
    """Names of the user constraints that are not affine (a cone — PSD, second-order, exponential,
    power — counts as not affine): those the linear system leaves out, and
    those ldpopt's check differentiates at f only (its KKT test then certifies and never refutes:
    :func:`~.verdict._certify_only`).

    Parameters
    ----------
    problem : Problem
        The problem (its named constraints).

    Returns
    -------
    list of str
    """
    from ..constraints.base import UserConstraint
    from .cones import row_expression

    def curved(con) -> bool:
        g = row_expression(con)
        return g is None or not g.is_affine()  # a cone (PSD, SOC, ...) is a curved set

    return [n for n, (c, _) in problem.owners.items()
            if isinstance(c, UserConstraint) and curved(problem.named_constraints[n])]


def _weighted(problem, f_hat: np.ndarray, weights: dict):
    """(G(f̂), ∇G(f̂), Σ_j λ_j(|g_j(f̂)| + |g_j(0)|), {name: λ_j}) of the normalised weights, or None
    when a constraint is not an inequality cvxpy can differentiate at f̂."""
    import cvxpy as cp

    from .point import at_point as _at

    x, s = problem.x, problem.scale
    lam = {}
    for name in non_affine(problem):
        con = problem.named_constraints[name]
        w = weights.get(name)
        if not isinstance(con, cp.constraints.Inequality) or w is None:
            return None
        w = np.maximum(np.atleast_1d(np.asarray(w, dtype=np.float64)).ravel(order="F"), 0.0)
        if w.shape[0] != con.expr.size or not np.all(np.isfinite(w)):
            return None
        lam[name] = w
    total = float(sum(float(np.sum(w)) for w in lam.values()))
    if not (np.isfinite(total) and total > 0):
        return None
    G, size, grad = 0.0, 0.0, np.zeros(f_hat.shape[0])
    for at, is_hat in ((np.zeros_like(f_hat), False), (f_hat, True)):
        with _at(problem, at):
            for name, w in lam.items():
                expr = problem.named_constraints[name].expr
                try:
                    v = np.atleast_1d(np.asarray(expr.value, dtype=np.float64)).ravel(order="F")
                    g = expr.grad.get(x) if is_hat and expr.grad is not None else None
                except (TypeError, ValueError, ZeroDivisionError, FloatingPointError):
                    return None
                if not np.all(np.isfinite(v)):
                    if is_hat:
                        return None
                    continue  # g_j(0) outside its domain: only a size, left out
                size += float(np.sum(w * np.abs(v))) / total
                if is_hat:
                    if g is None:
                        return None
                    g = g.toarray() if sp.issparse(g) else np.asarray(g, dtype=np.float64)
                    grad += np.asarray(g @ w, dtype=np.float64).ravel() / (s * total)
                    G += float(np.sum(w * v)) / total
    if not np.all(np.isfinite(grad)):
        return None
    return G, grad, size, {n: w / total for n, w in lam.items()}


def verified_conflict(problem, f_hat, weights: dict):
    """The :class:`~ldpopt.problems.constraints.feasibility.Infeasibility` proved by (*) of the module
    docstring at the candidate ``f_hat`` (frequency units) with the candidate ``weights`` (user
    constraint name → its multipliers, e.g. a phase one's duals), or None when it is not proved (the
    set may be empty by less than the check resolves, or not empty at all).

    Parameters
    ----------
    problem : Problem
        The problem whose constraints conflict.
    f_hat : ndarray (d,)
        A point near the minimiser of the weighted violation over the linear constraints.
    weights : dict
        Multipliers λ_j ≥ 0 for each non-affine user constraint (normalised here to Σ λ = 1).

    Returns
    -------
    Infeasibility or None
        ``names``: the linear constraints with a non-zero Farkas multiplier or bound, and the
        non-affine ones with λ_j > 0; ``margin``: a lower bound on min over the linear set of
        Σ λ_j g_j (the user's units).

    Examples
    --------
    >>> import numpy as np, cvxpy as cp
    >>> import ldpopt
    >>> from ldpopt.problems import Problem, Simplex
    >>> from ldpopt.problems.check.conflict import verified_conflict
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> prob = Problem(est, "cls", [Simplex(), lambda f, e: {"energy": cp.sum_squares(f) <= 0.2}])
    >>> got = verified_conflict(prob, np.full(4, 0.25), {"energy": 1.0})   # min of sum f^2 is 1/4 > 0.2
    >>> got.names, bool(0.05 * (1 - 1e-6) <= got.margin <= 0.05)
    (['sum', 'energy'], True)
    >>> verified_conflict(Problem(est, "cls", [Simplex(), lambda f, e: cp.sum_squares(f) <= 0.25]),
    ...                   np.full(4, 0.25), {"user": 1.0}) is None   # touches the simplex: no claim
    True
    """
    from ..constraints.farkas import phase_one as lp_phase_one
    from ..constraints.farkas import verify
    from ..constraints.feasibility import named_certificate, owned_system

    f_hat = np.asarray(f_hat, dtype=np.float64)
    if f_hat.shape != (problem.estimate.d,) or not np.all(np.isfinite(f_hat)):
        return None
    got = _weighted(problem, f_hat, weights)
    if got is None:
        return None
    G, c, size, lam = got
    lo, up, lo_own, up_own, A, b, ineq, own, names, _ = owned_system(problem)
    allow = ALLOWANCE * (size + float(np.max(np.abs(c), initial=0.0)) * max(1.0, float(np.sum(np.abs(f_hat))))
                         + float(np.sum(np.abs(c) * np.abs(f_hat))))
    beta = float(np.sum(c * f_hat)) - G + allow
    if not np.isfinite(beta):
        return None
    A2 = sp.vstack([A, sp.csr_matrix(c[None, :])], format="csr")
    b2 = np.append(b, beta)
    ineq2 = np.append(ineq, True)
    y, _ = lp_phase_one(A2, b2, ineq2, lo, up)
    if y is None:
        return None
    proof = verify(y, A2, b2, ineq2, lo, up)
    if proof is None:
        return None
    margin, cc, yy, thin = proof
    y_new = float(yy[-1])
    if not y_new > 0:  # the linear rows alone conflict: the exact pre-check's to decide
        return None
    first = names.index(next(iter(lam)))
    cert = named_certificate((margin / y_new, cc, yy, thin), names, np.append(own, first), lo_own, up_own)
    used = set(cert.names) | {n for n, w in lam.items() if np.any(w > 0)}
    cert.names = [n for n in names if n in used]
    for n, w in lam.items():
        cert.rows[n] = float(w[0]) if w.shape[0] == 1 else w.tolist()
    cert.at_rounding = False
    cert.source, cert.kind = "ldpopt", "non-affine"
    return cert
