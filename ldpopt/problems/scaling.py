"""The solver's unit: :func:`default_scale` (``Problem``'s variable is x = f/scale)."""

from __future__ import annotations

import numpy as np

__all__ = ["default_scale"]


def default_scale(estimate, floor: bool = True) -> float:
    """The solver's unit s (its variable is x = f/s): ``max(σ, 1/d)``, σ of Wang et al. Eq. 7
    (``floor=False``: σ alone, for the weighted MLE, see below).

    Both sides matter (a choice the papers are silent on). x̃ = f̃/s carries noise σ/s and the
    constraints carry the total Σ x = 1/s. With s = σ alone the noise is O(1) but the total is 1/σ,
    ~10⁵–10⁷ once n is large or ε is large (σ ≪ 1/d), and the simplex rows have coefficients
    σ ≤ 1e-5: OSQP then stops at ``user_limit`` or, because its primal-infeasibility test
    ‖Aᵀδy‖ ≤ ε_inf‖δy‖ is met by any multiple of the sum row once its coefficients are below
    ε_inf = 1e-5, certifies the always-feasible simplex "infeasible" (37 of 216
    cases of a CLS grid). With s = max(σ, 1/d) the noise is ≤ 1 per coordinate, the mean
    coordinate ≤ 1 and the total ≤ d; when σ ≥ 1/d (small n, small ε) nothing changes.

    The weighted MLE's cone form divides each residual by its own variance (y_v = 1 + βx_v), which
    is what keeps it well scaled; measured, s = σ passes ldpopt's check where s = 1/d does not
    (OUE, ε = 10, d = 10, n = 10⁹), so it keeps s = σ (``Objective.frequency_floor = False``).
    """
    s = max(float(estimate.sigma), 1.0 / estimate.d) if floor else float(estimate.sigma)
    return s if np.isfinite(s) and s > 0 else 1.0
