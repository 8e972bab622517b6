"""Bayesian post-processing: Power and PowerNS (Wang et al.) and Calibrate (Jia & Gong).

Notes: docs/notes/python.md, "ldpopt.methods.bayes.posterior"."""

from __future__ import annotations

import warnings

import numpy as np

from ...estimate import Estimate
from ...estimate import check_estimate as _check_estimate
from .._args import _DEFAULT_S_BOUNDS, _FITS, _PRIORS, _TAU_FLOOR, _check_bounds, _check_choice, _check_s, _real
from ..normalize import project_simplex
from ..registry import ProblemStatement, register
from . import engine as core
from . import exponent_fit as _pf
from . import prefit

# re-exported for callers and tests
from .exponent_fit import _power_log_sums, _power_sum, _prior_logk_moments, _prior_mean_power, _score_power  # noqa: F401
from .posterior_memo import MEMO as _PM_MEMO  # the posterior-mean memo
from .posterior_memo import MEMO_VALUES as _PM_MEMO_VALUES
from .posterior_memo import key as _pm_key
from .reference import calibrate_reference, loglik_reference, power_reference

__all__ = ["calibrate", "calibrate_reference", "fit_gaussian", "fit_power_law", "loglik_reference",
           "noise_check", "noise_sd_counts", "power", "power_ns", "power_reference"]

# -- shared quantities --------------------------------------------------------------------------
def noise_sd_counts(estimate: Estimate) -> float:
    """Count-scale noise standard deviation S = σ·n = √(n q(1 − q))/(p − q).

    σ is Wang et al.'s Eq. 7 (frequency scale); S² is Jia & Gong's Eq. 14 (count scale). For a
    central-noise estimate (``Estimate.from_central``), S² is the mechanism's exact variance: Jia &
    Gong's Gaussian model of the count noise is then exact for the Gaussian mechanism, within 1e-16
    relative of the discrete Gaussian's variance from σ ≈ 1 on, and a Gaussian with the Laplace
    mechanisms' variance (their heavier tails are not modelled).
    """
    est = _check_estimate(estimate)
    # the reports' Eq. 14 term plus the variance V of noise added to every count (the source's): one is 0
    V = est.noise.count_covariance(est.n, est.d).noise_var
    return float(np.sqrt(est.n * est.q * (1.0 - est.q) + V * (est.p - est.q) ** 2) / (est.p - est.q))


def _engine_sd(est: Estimate) -> float:
    """S for the log-sum engine: :func:`noise_sd_counts` floored at ``core.S_FLOOR`` (1e-100).

    At very large ε the noise vanishes (q underflows to 0 for OUE/OLH beyond ε ≈ 745, so S = 0, and
    S² is subnormal or 0 from ε ≈ 700); the papers are silent on this limit. Every posterior sum is
    then a point mass at the support count nearest f̃·n (split by the prior at an exact half-integer
    tie), and the floored S gives that same limit to float64: a neighbour's relative weight is
    exp(−δ/(2S²)) with δ ≥ one ulp of the count, which is 0 both at S and at 1e-100. The floor only
    keeps 1/(2S²) finite, so the engine never divides by 0 or overflows.
    """
    return max(noise_sd_counts(est), core.S_FLOOR)


def _x(est: Estimate) -> np.ndarray:
    """Observed counts f̃_v·n (Wang) = f̂_v (Jia & Gong Eq. 3)."""
    return np.asarray(est.f_tilde, dtype=np.float64) * est.n


def _posterior_mean_counts(x, S, prior: core.Prior, keys=None) -> np.ndarray:
    # relative log-sums: exact ratios even when x is far outside [kmin, n] (see engine);
    # keys: the support counts x is a function of (its distinct values found in O(d), not by a sort)
    x = np.ascontiguousarray(x, dtype=np.float64)
    key = _pm_key(x, S, prior)
    if key in _PM_MEMO:
        return _PM_MEMO[key]
    L = core.logsums(x, S, prior, ("z", "k"), relative=True, keys=keys)
    out = np.exp(L[:, 1] - L[:, 0])
    out.setflags(write=False)
    if sum(v.size for v in _PM_MEMO.values()) + out.size > _PM_MEMO_VALUES:
        _PM_MEMO.clear()
    _PM_MEMO[key] = out
    return out


# -- power-law prior: fitting (numerics in exponent_fit) ---------------------------------------------
def fit_power_law(estimate: Estimate, fit: str = "mle", s_bounds=_DEFAULT_S_BOUNDS) -> float:
    """Fit the power-law exponent s (Jia & Gong §III-C) from f̃ on the count scale.

    ``fit="mle"``: the *global* maximiser on ``s_bounds`` of Σ_v log Σ_{k=1..n} k^{−s}/H_n(s) ·
    N(f̃_v n − k; 0, σn) (Eq. 16): grid over the interval, every bracketed local maximum refined
    to 1e-10 in s, both ends compared (:mod:`ldpopt.methods.bayes.exponent_fit`). The likelihood is not
    concave in s (n < d typically gives an interior maximum and a lower one at the upper bound).
    ``fit="mean-variance"``: s solving E_prior[k](s) = mean_v(f̃_v n) (Eq. 17, Eq. 19), clipped.
    A ``RuntimeWarning`` says when the result is the upper bound because the likelihood's maximum
    on the interval is there (MLE) or when the mean equation has no root in the interval.
    """
    est = _check_estimate(estimate)
    fit = _check_choice(fit, "fit", _FITS)
    lo, hi = _check_bounds(s_bounds)
    n, x = est.n, _x(est)
    if fit == "mean-variance":
        s, clipped = _pf.fit_mean_variance(x, n, lo, hi)
        if clipped:
            warnings.warn(f"mean-variance fit: mean count {float(np.mean(x)):.6g} is outside the prior "
                          f"means for s in [{lo}, {hi}]; using s = {s}", RuntimeWarning, stacklevel=2)
        return s
    s, at_hi = _pf.fit_mle(x, _engine_sd(est), n, lo, hi)
    if at_hi:
        warnings.warn(f"MLE of s is at or beyond the upper bound {hi}: the likelihood's maximum on "
                      f"[{lo}, {hi}] is at the bound; using s = {hi}", RuntimeWarning, stacklevel=2)
        return hi
    return s


# -- Gaussian prior: fitting ----------------------------------------------------------------------
def _prior_gauss_moments_direct(n, mu, tau):
    """Reference for :func:`_prior_gauss_moments`: the plain O(n) sums over k = 0..n."""
    k = np.arange(n + 1, dtype=np.float64)
    lw = -((k - mu) ** 2) / (2 * tau * tau)
    m = lw.max()
    e = np.exp(lw - m)
    tot = e.sum()
    return float(np.log(tot) + m), float((e * k).sum() / tot), float((e * k * k).sum() / tot)


def _prior_gauss_moments(n, mu, tau):
    """log C, E[k], E[k²] of the Gaussian prior w(k) = exp(−(k − μ)²/(2τ²)) on k = 0..n.

    The sum over k = 1..n is the engine's windowed sum with a flat power law (s = 0) and the
    "noise" N(μ, τ²) (same terms, so the same provable truncation and Euler–Maclaurin tail): O(window),
    not O(n) as the direct sum (:func:`_prior_gauss_moments_direct`); k = 0 is added separately.
    """
    l0 = -(mu * mu) / (2.0 * tau * tau)                  # the k = 0 term (contributes to Z only)
    if n < 1:
        return float(l0), 0.0, 0.0
    flat = core.Prior("power-law", n, s=0.0)
    x = np.array([float(mu)])
    # relative sums and their reference G kept apart: |L| can be ~1e17 when μ is far outside [0, n]
    Lrel = core.exact_logsums(x, float(tau), flat, ("z", "k", "k2"), relative=True)[0]
    G = float(core.log_reference(x, float(tau), flat)[0])
    logC = float(np.logaddexp(Lrel[0] + G, l0))
    from scipy.special import expit  # here, not at import: `import ldpopt` loads no scipy

    frac = float(expit(Lrel[0] + G - l0))     # share of the mass on k ≥ 1
    return logC, float(np.exp(Lrel[1] - Lrel[0])) * frac, float(np.exp(Lrel[2] - Lrel[0])) * frac


def fit_gaussian(estimate: Estimate, fit: str = "mle") -> tuple[float, float]:
    """Fit a Gaussian prior p_f(k) ∝ exp(−(k − μ)²/(2τ²)) on k = 0..n; returns (μ, τ), count scale.

    ``"mean-variance"`` (Jia & Gong Eq. 17–20): μ = mean(f̂), τ² = var(f̂) − S² (1/d variance,
    Eq. 20), τ floored at 1e-3 with a warning. ``"mle"`` (Eq. 16): L-BFGS-B on (μ, log τ) with the
    exact gradient, started from the mean–variance solution.
    """
    est = _check_estimate(estimate)
    fit = _check_choice(fit, "fit", _FITS)
    n, S, x = est.n, _engine_sd(est), _x(est)
    mu0 = float(np.mean(x))
    var_t = float(np.mean((x - mu0) ** 2)) - S * S
    if var_t <= _TAU_FLOOR ** 2:
        warnings.warn("mean-variance fit: sample variance does not exceed the noise variance "
                      f"(Eq. 18 gives tau^2 = {var_t:.6g}); flooring tau at {_TAU_FLOOR}",
                      RuntimeWarning, stacklevel=2)
        tau0 = _TAU_FLOOR
    else:
        tau0 = float(np.sqrt(var_t))
    if fit == "mean-variance":
        return mu0, tau0
    d = x.shape[0]

    def negll(theta):
        mu, tau = float(theta[0]), float(np.exp(theta[1]))
        prior = core.Prior("gaussian", n, mu=mu, tau=tau)
        L = core.logsums(x, S, prior, ("z", "k", "k2"), relative=True)
        Ek = np.exp(L[:, 1] - L[:, 0])
        Ek2 = np.exp(L[:, 2] - L[:, 0])
        logC, Pk, Pk2 = _prior_gauss_moments(n, mu, tau)
        # absolute L_z = relative + G(x; μ, τ) (G depends on μ, τ here, so it stays in the objective)
        ll = float(L[:, 0].sum() + core.log_reference(x, S, prior).sum()) - d * logC
        g_mu = (float(Ek.sum()) - d * mu - d * (Pk - mu)) / tau ** 2
        sq_post = float((Ek2 - 2 * mu * Ek + mu * mu).sum())
        sq_prior = Pk2 - 2 * mu * Pk + mu * mu
        g_lt = (sq_post - d * sq_prior) / tau ** 2
        # scale the objective by 1/d so the optimiser's tolerances do not depend on d
        return -ll / d, -np.array([g_mu, g_lt]) / d

    from scipy.optimize import minimize  # here, not at import: `import ldpopt` loads no scipy

    res = minimize(negll, np.array([mu0, np.log(tau0)]), jac=True, method="L-BFGS-B",
                            bounds=[(-10.0 * n - 10 * S, 11.0 * n + 10 * S),
                                    (np.log(_TAU_FLOOR), np.log(10.0 * (n + S)))],
                            options={"ftol": 1e-13, "gtol": 1e-9, "maxiter": 500})
    return float(res.x[0]), float(np.exp(res.x[1]))


# -- the methods -----------------------------------------------------------------------------------
def _resolve_s(est, s, fit, s_bounds):
    if s is None:
        return fit_power_law(est, fit=fit, s_bounds=s_bounds)
    return _check_s(s)


#: largest d at which Power's exponent is fitted for PowerNS's problem statement; above it
#: s = POWER_S_FIXED (the statement is about the projection, true for any s; the fit takes ~4 s CPU
#: at d = 10⁶)
POWER_FIT_MAX_D = 100_000
POWER_S_FIXED = 1.1


def _posterior_instance(est: Estimate) -> dict:
    """PowerNS's problem on ``est``: the projection of Power's posterior mean (exponent fitted by
    Jia & Gong Eq. 16 up to :data:`POWER_FIT_MAX_D`, else :data:`POWER_S_FIXED`) onto the simplex;
    the closed form is that projection of the mean already computed (Power runs once)."""
    fitted = est.d <= POWER_FIT_MAX_D
    s = fit_power_law(est) if fitted else POWER_S_FIXED
    mean = power(est, s=s)
    return {"objective": "posterior", "mean": mean, "closed": project_simplex(mean, 1.0),
            "extra": {"power_s": s, "power_s_source": "fitted (Eq. 16)" if fitted else
                      f"fixed (d > {POWER_FIT_MAX_D})"}}


def _prepare_power_batch(estimates, params) -> None:
    """Every resample's exponent fit and posterior mean at once (:mod:`.prefit`), when the
    method would fit s by maximum likelihood under the power-law prior (its default options)."""
    if params.get("s") is not None or params.get("fit", "mle") != "mle" \
            or params.get("prior", "power-law") != "power-law" or not estimates:
        return
    lo, hi = _check_bounds(params.get("s_bounds", _DEFAULT_S_BOUNDS))
    prefit.prefit_rows(np.stack([_x(e) for e in estimates]), _engine_sd(estimates[0]), estimates[0].n,
                              lo, hi)


@register(
    "power",
    param_examples={"s": 1.5, "fit": "mean-variance", "s_bounds": (0.0, 3.0)},
    description="Fit a power-law prior on counts, output the posterior mean (min expected squared error)",
    non_negative="yes", sums_to_one="no", order_preserving="yes",
    complexity=r"$O(d·\sqrt{n})$ as in the paper (window of ±kσn per value); here $O(d \log d + P·\min(n, σn·\sqrt{\log n}))$ "
               "with P = a few hundred interpolation nodes (exact window sums), per s-fit iteration",
    reference="Wang et al. arXiv §3.2 (Power), Eq. 10 with σn from Eq. 7/8, Table 1; NDSS 2020 "
              "§IV-E Eq. 13; prior fit: Jia & Gong INFOCOM 2019 §III-C Eq. 16/17",
    notes=r"Every output is ≥ 1/n (prior support k ≥ 1), so $\sum f' ≥ d/n$. Strictly increasing in f̃ "
          "(posterior mean under Gaussian noise: d f'/d x = Var_post/(σn)² > 0); equal f̃ give equal f'.",
    label="Power", family="fitted", prepare_batch=_prepare_power_batch,
)
def power(estimate: Estimate, s: float | None = None, fit: str = "mle", s_bounds=_DEFAULT_S_BOUNDS) -> np.ndarray:
    r"""Power (Wang et al. arXiv §3.2, Eq. 10): posterior mean of :math:`f_v` under a power-law count prior.

    Parameters
    ----------
    estimate : Estimate
    s : float >= 0, optional
        Power-law exponent; fitted from f̃ by ``fit`` when omitted (the paper is silent on how;
        see the module notes).
    fit : {"mle", "mean-variance"}
        Jia & Gong's Eq. 16 (default) or Eq. 17.
    s_bounds : (lo, hi)
        Search interval for the fitted s.

    Returns
    -------
    ndarray, shape (d,)
        :math:`f'_v = E[f_v n \mid \tilde f_v n] / n`, with :math:`σ_n = \sqrt{nq(1 - q)}/(p - q)`.
    """
    est = _check_estimate(estimate)
    fit = _check_choice(fit, "fit", _FITS)
    s = _resolve_s(est, s, fit, s_bounds)
    prior = core.Prior("power-law", est.n, s=s)
    return _posterior_mean_counts(_x(est), _engine_sd(est), prior, keys=est.counts) / est.n


@register(
    "power-ns",
    param_examples={"s": None, "fit": "mle", "s_bounds": (0.5, 4.0)},
    description="Power, then Norm-Sub (Euclidean projection onto the probability simplex)",
    non_negative="yes", sums_to_one="yes", order_preserving="weak",
    complexity="Power + expected O(d)",
    reference="Wang et al. NDSS 2020 §IV-E (PowerNS), Table I; arXiv §3.2 Eq. 10 + §3.3 Norm-Sub",
    notes="Weak order: Norm-Sub may set several small Power outputs to the same 0.",
    label="PowerNS", family="fitted", prepare_batch=_prepare_power_batch,
    derived_from=("power", lambda f_power: project_simplex(f_power, 1.0)),
    problem=ProblemStatement("posterior", "PowerNS is the unweighted Euclidean projection of Power's posterior "
                             "mean onto the simplex (NDSS §IV-E)", _posterior_instance),
)
def power_ns(estimate: Estimate, s: float | None = None, fit: str = "mle", s_bounds=_DEFAULT_S_BOUNDS) -> np.ndarray:
    """PowerNS (NDSS 2020 §IV-E): :func:`power` followed by Norm-Sub (:func:`project_simplex`)."""
    return project_simplex(power(estimate, s=s, fit=fit, s_bounds=s_bounds), 1.0)


@register(
    "calibrate",
    param_examples={"prior": "gaussian", "fit": "mle", "s": None, "mu": None, "tau": None, "s_bounds": (0.0, 10.0)},
    description="Posterior mean under a prior (power law or Gaussian) fitted to f̃ (Calibrate)",
    non_negative="yes", sums_to_one="no", order_preserving="yes",
    complexity="as Power (plus an L-BFGS fit of two parameters for the Gaussian prior)",
    reference="Jia & Gong INFOCOM 2019 §III: Eq. 11-12 (posterior mean), Eq. 13-14 (noise), "
              "Eq. 15-16 (power law, MLE), Eq. 17-21 (mean-variance)",
    notes="prior='power-law' equals Power (k ≥ 1, outputs ≥ 1/n); prior='gaussian' has support "
          "k = 0..n. Strictly increasing in f̃ for either prior.",
    label="Calibrate", family="fitted", variant_of="power", prepare_batch=_prepare_power_batch,
)
def calibrate(estimate: Estimate, prior: str = "power-law", fit: str = "mle", *, s: float | None = None,
              mu: float | None = None, tau: float | None = None, s_bounds=_DEFAULT_S_BOUNDS) -> np.ndarray:
    """Calibrate (Jia & Gong Eq. 12): E[f | f̂] / n under the fitted (or given) prior.

    ``prior="power-law"`` uses exponent ``s`` (their α), fitted when None; ``prior="gaussian"`` uses
    ``mu``, ``tau`` (count scale), both fitted when either is None. ``fit`` selects Eq. 16 ("mle")
    or Eq. 17–20 ("mean-variance"). ``s_bounds`` (lo, hi) is the search interval of the fitted
    power-law exponent (:func:`fit_power_law`).
    """
    est = _check_estimate(estimate)
    kind = _check_choice(prior, "prior", _PRIORS)
    fit = _check_choice(fit, "fit", _FITS)
    S = _engine_sd(est)
    if kind == "power-law":
        if mu is not None or tau is not None:
            raise ValueError("mu and tau apply to prior='gaussian' only")
        p = core.Prior("power-law", est.n, s=_resolve_s(est, s, fit, s_bounds))
    else:
        if s is not None:
            raise ValueError("s applies to prior='power-law' only")
        if mu is None or tau is None:
            mu, tau = fit_gaussian(est, fit=fit)
        mu = _real(mu, "mu")
        tau = _real(tau, "tau")
        if tau <= 0:
            raise ValueError(f"tau must be > 0, got {tau!r}")
        p = core.Prior("gaussian", est.n, mu=mu, tau=tau)
    return _posterior_mean_counts(_x(est), S, p, keys=est.counts) / est.n


# -- Jia & Gong §III-B / §IV-B: the noise claim -----------------------------------------------------
def noise_check(estimate: Estimate, true_counts) -> dict:
    """Jia & Gong's noise claim (§III-B, Eq. 13–14; checked on Kosarak in §IV-B, Fig. 4).

    Returns the predicted mean (0) and variance (Eq. 14) of the count-scale noise s_i = f̂_i − f_i,
    the Gaussian fitted to the d realised s_i of this one trial (sample mean and 1/d variance),
    and the exact pooled variance mean_i Var(s_i) from Wang et al. Eq. 2 (n² σ_v² averaged over
    items), which Eq. 14 approximates by dropping the f_v term.
    """
    est = _check_estimate(estimate)
    tc = np.asarray(true_counts, dtype=np.float64)
    if tc.shape != (est.d,) or not np.all(np.isfinite(tc)) or np.any(tc < 0):
        raise ValueError(f"true_counts must be {est.d} finite non-negative numbers")
    resid = _x(est) - tc
    n = est.n
    return {
        "predicted_mean": 0.0,
        "predicted_var": noise_sd_counts(est) ** 2,
        "fitted_mean": float(resid.mean()),
        "fitted_var": float(resid.var()),
        "exact_pooled_var": float(np.mean(est.variance(tc / n)) * n * n),
    }
