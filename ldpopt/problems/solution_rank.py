"""Which of several checked answers to keep when no route of :meth:`~ldpopt.problems.Problem.solve`
passed ldpopt's check (:mod:`.checks`): the one the check says least against.

Order (a choice; the papers are silent): a point whose check passed; then a point within the
constraint tolerances (per constraint and aggregate) before one outside them; among those the
smallest certified error bound ``Checks.error_bound`` (∞ when none was computed); then the smallest
constraint violation. A Solution without a check (no point) comes last. So a route that stops on
its own stricter threshold cannot displace a better point found earlier: weighted MLE + Box at
d = 3 keeps the structured answer 5e-11 from the optimum rather than a later solver's 1e-2.
"""

from __future__ import annotations

import numpy as np

__all__ = ["best_checked"]


def _key(sol) -> tuple:
    ch = sol.checks
    if ch is None:
        return (3, np.inf, np.inf)
    if ch.passed:
        return (0, ch.error_bound if ch.error_bound is not None else np.inf, ch.max_violation)
    tol = ch.tolerance.get("violation", 0.0)
    agg = ch.aggregate_violation
    within = bool(ch.max_violation <= tol) and (agg is None or agg <= tol or not any(
        t.startswith("aggregate") for t in ch.failed)) and not any("admit no point" in t for t in ch.failed)
    eb = ch.error_bound if ch.error_bound is not None and np.isfinite(ch.error_bound) else np.inf
    return (1 if within else 2, eb, ch.max_violation if np.isfinite(ch.max_violation) else np.inf)


def best_checked(solutions):
    """The Solution of ``solutions`` (None entries ignored) ranked first by the module docstring's
    order; the earlier one on ties. None when there is none."""
    cands = [s for s in solutions if s is not None]
    if not cands:
        return None
    return min(cands, key=_key)  # min keeps the first of equal keys
