"""The certificate referee of ``ldpopt verify``: :func:`certificate_metrics` turns a closed form's
output into a row's numbers through :mod:`ldpopt.problems.check.certificate` (no solver, any d).

Details: docs/experiments.md, section `ldpopt.verify.certificate_referee`.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["certificate_metrics", "release"]


@functools.lru_cache(maxsize=2)
def _simplex_structure(d: int):
    """The compiled simplex {f ≥ 0, Σ f = 1} on d values, shared by every certificate at that d
    (compiling it is ~15 passes over the domain: 0.17 s CPU at d = 10⁷, seven times per instance)."""
    from ..problems.dual.structure import compile_constraints

    return compile_constraints(None, d)


#: the separables of the last estimate certified, by objective name (one instance at a time: the
#: four weighted-MLE closed forms of an instance share one, and with it the certificate's full passes
#: over the values at their lower bound, certificate._AtLower)
_SEPARABLES: dict = {}


def _separable(objective, est, mean):
    from ..problems.objectives.builtins import make_objective
    from ..problems.objectives.separable import separable_for

    if mean is not None or not isinstance(objective, str):
        return separable_for(make_objective(objective, mean=mean) if isinstance(objective, str) else objective, est)
    if _SEPARABLES.get("estimate") is not est:
        _SEPARABLES.clear()
        _SEPARABLES["estimate"] = est
    if objective not in _SEPARABLES:
        _SEPARABLES[objective] = separable_for(make_objective(objective), est)
    return _SEPARABLES[objective]


def _certificate(objective, constraints, est, f_c, mean):
    """:func:`ldpopt.problems.certificate.certificate` with multipliers recovered from f_C (what it
    does with ``multipliers=None``), the simplex's compiled structure and the estimate's separable
    reused across calls, and no full-length multiplier arrays (the rows read the numbers only)."""
    from ..problems.check.certificate import certificate, certify, recover_multipliers

    if constraints is not None:
        return certificate(objective, constraints, est, f_c, mean=mean)
    sep = _separable(objective, est, mean)
    st = _simplex_structure(int(est.d))
    f = np.asarray(f_c, float)
    lam, y = recover_multipliers(sep, st, f)
    return certify(sep, st, f, lam, y, None, None, with_multipliers=False)


def certificate_metrics(est, f_c, objective, mean=None, constraints=None, closed_tol: float = 0.0) -> dict:
    r"""The certificate's numbers for a verify row: ``max_abs_error_bound`` (:math:`≥ \lVert f_C - f^* \rVert_∞`, frequency
    units; :math:`∞` when :math:`f_C` is infeasible and no bound applies), ``tolerance`` (its float64 rounding level +
    ``closed_tol``), ``tolerance_basis``, and the certificate's own fields. Raises
    :class:`~ldpopt.problems.solvers.structured.NotApplicable` outside the certificate's class.

    Parameters
    ----------
    est : Estimate
        The instance.
    f_c : array_like, shape (d,)
        The closed form's output.
    objective
        The objective (registered name or object).
    mean : array_like, optional
        The objective's mean, where it takes one.
    constraints : list, optional
        The feasible set (default the simplex).
    closed_tol : float, default 0.0
        The closed form's stated accuracy.

    Returns
    -------
    dict
        ``max_abs_error_bound``, ``tolerance``, ``tolerance_basis`` and the certificate's fields.

    Raises
    ------
    NotApplicable
        The objective or constraints are outside the certificate's class.

    Examples
    --------
    >>> from ldpopt import verify
    >>> est = verify.instance("grr", 1.0, 1000, 8, seed=0)
    >>> from ldpopt.methods.normalize import norm_sub
    >>> m = verify.certificate_metrics(est, norm_sub(est), "cls")
    >>> bool(m["max_abs_error_bound"] <= m["tolerance"])
    True
    """
    cert = _certificate(objective, constraints, est, f_c, mean)
    value = cert.distance_linf if np.isfinite(cert.distance_linf) else np.inf
    argmin = bool(np.isfinite(cert.distance_argmin) and cert.distance_argmin == cert.distance_linf)
    basis = ("float64 rounding of the argmin bound max|f - x(lam)| + |sum x(lam) - total|: sum_v 8u(|f_v| + |x_v| + "
             "(|terms of h_v'| + |lam|)/h_v'') over values off their bounds, + max term" if argmin else
             "the bound sqrt(2 gap/mu_v) at gap = its float64 rounding floor 16u(sum|h_v| + |t_v f_v|)")
    if closed_tol:
        basis += f" + closed form's stated accuracy {closed_tol:g}"
    m = {k: v for k, v in cert.as_dict().items() if k not in ("violations", "note")}
    m.update(max_abs_error_bound=value, tolerance=float(cert.distance_rounding) + float(closed_tol),
             tolerance_basis=basis, sum_error=cert.violations["sum"], min_f=float(np.min(f_c)))
    return m


def release() -> None:
    """Drop the cached large-d arrays (the last estimate's separables, the compiled simplex)."""
    _SEPARABLES.clear()
    _simplex_structure.cache_clear()
