"""Bayesian post-processing: Power and PowerNS (Wang et al.) and Calibrate (Jia & Gong), one idea per
module:

``posterior``          the three methods (posterior means under a fitted prior) and their registration
``engine``             the log-space sums over counts that every posterior mean and likelihood uses
``euler_maclaurin``    the engine's sums over long windows in closed form
``exponent_fit``       Power's exponent s: the maximum-likelihood and mean-variance fits (Jia & Gong §III-C)
``exponent_grid``      the power-law log-sums at many s in one pass (the fit's grid)
``exponent_fit_batch`` the s fits of B resamples in lockstep (the bootstrap's)
``prefit``             those fits served to the batched methods before their per-row calls
``posterior_memo``     the memo of posterior means
``reference``          slow, obviously correct sums of the papers' equations (the tests' references)
"""

from __future__ import annotations

from .posterior import (
    POWER_FIT_MAX_D,
    POWER_S_FIXED,
    calibrate,
    calibrate_reference,
    fit_gaussian,
    fit_power_law,
    loglik_reference,
    noise_check,
    noise_sd_counts,
    power,
    power_ns,
    power_reference,
)

__all__ = ["POWER_FIT_MAX_D", "POWER_S_FIXED", "calibrate", "calibrate_reference", "fit_gaussian", "fit_power_law",
           "loglik_reference", "noise_check", "noise_sd_counts", "power", "power_ns", "power_reference"]
