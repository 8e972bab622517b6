r"""Maximum-likelihood post-processing from the *exact* likelihood of the support counts (EM / IBU).

Notes: docs/notes/python.md, "ldpopt.methods.em.ibu"."""

from __future__ import annotations

import numbers
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ...estimate import Estimate
from ...estimate import check_estimate as _check_estimate
from .._args import _check_choice, _check_max_iter
from ..registry import ProblemStatement, register
from .exact import ConvergenceError, ConvergenceWarning, _exact_multinomial, _separable_solve
from .loglik import (
    _LOGLIK,
    _check_f,
    _scale,
    loglik_binomial,
    loglik_binomial_grad,
    loglik_multinomial,
    loglik_multinomial_grad,
)

__all__ = [
    "ConvergenceError",
    "ConvergenceWarning",
    "MLEResult",
    "em",
    "ibu_step",
    "kkt_residual",
    "likelihood_for",
    "loglik_binomial",
    "loglik_binomial_grad",
    "loglik_multinomial",
    "loglik_multinomial_grad",
    "solve_mle",
]

_LIKELIHOODS = ("multinomial", "binomial")
_METHODS = ("exact", "iterative")


@dataclass(frozen=True)
class MLEResult:
    """Outcome of :func:`solve_mle`, read like ``scipy.optimize.OptimizeResult``.

    x : the maximiser on the simplex (float64, length d); likelihood : ``"multinomial"`` or
    ``"binomial"``; method : ``"exact"`` or ``"iterative"``; nit : EM iterations (iterative) or
    likelihood-dual evaluations of the root-finder (exact; 1 for the multinomial closed form);
    converged : whether ``gap <= tol``; multiplier : the KKT multiplier λ = ⟨∇ℓ(x), x⟩; gap : the
    Frank-Wolfe gap (max_v g_v − ⟨g, x⟩)/(aN), a bound on the relative suboptimality; loglik : ℓ(x);
    seconds : wall time of the solve; message : a human-readable status.
    """

    x: np.ndarray
    likelihood: str
    method: str
    nit: int
    converged: bool
    multiplier: float
    gap: float
    loglik: float
    seconds: float
    message: str


# -- likelihoods and gradients (the functions in loglik) ----------------------------------------
def kkt_residual(f, estimate: Estimate, likelihood: str, support_tol: float = 0.0) -> dict:
    """KKT residuals of ``f`` for maximising ``likelihood`` on the simplex, relative to a·N.

    With g = ∇ℓ(f) and λ = ⟨g, f⟩ (the multiplier when the KKT conditions hold, as Σ f = 1):
    ``stationarity`` = max over f_v > support_tol of |g_v − λ|, ``dual_infeasibility`` = max over
    f_v <= support_tol of (g_v − λ)₊, ``gap`` = max_v g_v − λ (Frank-Wolfe gap, ≥ ℓ* − ℓ(f) when
    Σf = 1, f ≥ 0), all divided by ``scale`` = a·N (N = Σc for the multinomial, n for the binomial);
    plus ``sum_error`` = |Σf − 1|, ``min_f`` and ``multiplier`` = λ (unscaled).
    """
    est = _check_estimate(estimate)
    like = _check_choice(likelihood, "likelihood", _LIKELIHOODS)
    f = _check_f(f, est)
    g = _LOGLIK[like][1](f, est)
    lam = float(np.sum(g * f))
    scale = _scale(est, like)
    on = f > support_tol
    stat = float(np.max(np.abs(g[on] - lam))) if on.any() else np.inf
    dual = float(np.max(np.maximum(g[~on] - lam, 0.0))) if (~on).any() else 0.0
    return {"stationarity": stat / scale, "dual_infeasibility": dual / scale,
            "gap": float(np.max(g) - lam) / scale, "sum_error": abs(float(f.sum()) - 1.0),
            "min_f": float(f.min()), "multiplier": lam, "scale": scale}


# -- validation of the method's parameters -------------------------------------------------------
def likelihood_for(estimate: Estimate) -> str:
    """The exact likelihood for ``estimate.oracle``, as its oracle declares it (``likelihood``):
    ``"multinomial"`` (GRR) or ``"binomial"``."""
    est = _check_estimate(estimate)
    like = _oracle_likelihood(est.oracle)
    if like in _LIKELIHOODS:
        return like
    raise ValueError(
        f"em cannot choose a likelihood for estimate.oracle = {est.oracle!r}: its oracle declares none of "
        f"'multinomial' (one value per report) and 'binomial' (per-bit composite); pass likelihood='multinomial' "
        f"or 'binomial' explicitly")


def _oracle_likelihood(name: str) -> str | None:
    """The ``likelihood`` the oracle registered as ``name`` declares; None for a name not registered."""
    from ... import oracles

    try:
        return oracles.oracle_class(name).likelihood
    except ValueError:
        return None


def _why_not(est: Estimate, likelihood: str = "auto", **params) -> str | None:
    """Why EM does not apply to ``est`` with these parameters (None when it does): with
    ``likelihood="auto"`` the oracle must be one whose exact likelihood EM knows."""
    if not est.noise.support_counts:
        return (f"em maximises a frequency oracle's likelihood of support counts; noise added to exact counts "
                f"({est.oracle}) has none: use the objective 'central-mle' (the noise's exact likelihood) through Problem")
    if likelihood != "auto" or _oracle_likelihood(est.oracle.lower()) in _LIKELIHOODS:
        return None
    return (f"em needs an oracle that declares its exact likelihood ('multinomial' or 'binomial'); oracle "
            f"{est.oracle!r} declares none (pass likelihood='multinomial' or 'binomial')")


def _check_tol(tol) -> float:
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not np.isfinite(float(tol)) or tol <= 0:
        raise ValueError(f"tol must be a finite real number > 0, got {tol!r}")
    return float(tol)


# -- iterative references ---------------------------------------------------------------------------
def ibu_step(f, estimate: Estimate) -> np.ndarray:
    """One IBU / EM step for the multinomial likelihood, O(d):
    f_v ← f_v (a c_v/(C π_v) + q Σ_y c_y/(C π_y)), C = Σ_y c_y (module notes)."""
    est = _check_estimate(estimate)
    f = _check_f(f, est)
    return _ibu_step(f, est.counts, est.counts.sum(), est.p - est.q, est.q)


def _ibu_step(f, c, big_c, a, q):
    pi = q + a * f
    ratio = np.divide(c, big_c * pi, out=np.zeros_like(c), where=c > 0)
    out = f * (a * ratio + q * ratio.sum())
    # coordinates off the support decay geometrically to 0; once below the smallest normal double
    # they are 0 in all but name, and subnormal arithmetic is 10-1000× slower (BLAS dot: ~1000×)
    out[out < np.finfo(np.float64).tiny] = 0.0
    return out


def _em_binomial_step(f, est: Estimate, max_iter: int):
    p, q, n, c = est.p, est.q, float(est.n), est.counts
    pi = q + (p - q) * f
    m = n - c
    e = f * (p * np.divide(c, pi, out=np.zeros_like(c), where=c > 0)
             + (1 - p) * np.divide(m, 1 - pi, out=np.zeros_like(c), where=m > 0))
    f, mu, nev = _separable_solve(np.clip(e, 0.0, n), n, 0.0, 1.0, max_iter)
    f[f < np.finfo(np.float64).tiny] = 0.0  # as in _ibu_step: no subnormal arithmetic
    return f, mu, nev


# -- the solver and the registered method ------------------------------------------------------------
def solve_mle(estimate: Estimate, likelihood: str = "auto", method: str = "exact", *,
              max_iter: int = 10_000, tol: float = 1e-9, on_fail: str = "raise") -> MLEResult:
    """Maximise the exact likelihood of the support counts over the simplex; details in the module
    docstring.

    Parameters
    ----------
    estimate : Estimate
    likelihood : ``"auto"`` (from ``estimate.oracle``: GRR → ``"multinomial"``; OUE, SUE, OLH, BLH,
        HR, SS → ``"binomial"``), ``"multinomial"`` or ``"binomial"`` (forcing the multinomial on
        non-GRR counts reproduces multi-freq-ldpy's IBU, for comparison).
    method : ``"exact"`` (closed form / 1-D dual root-finding) or ``"iterative"`` (IBU / EM).
    max_iter : EM iterations (iterative) or root-finder evaluations (exact).
    tol : stop when the relative Frank-Wolfe gap (max_v g_v − ⟨g, f⟩)/(aN) is ≤ tol (iterative); the
        exact path runs to machine precision and reports its gap.
    on_fail : ``"raise"`` (:class:`ConvergenceError`) or ``"warn"`` (:class:`ConvergenceWarning`,
        return the last iterate with ``converged=False``).
    """
    est = _check_estimate(estimate)
    like = likelihood_for(est) if isinstance(likelihood, str) and likelihood.lower() == "auto" \
        else _check_choice(likelihood, "likelihood", _LIKELIHOODS)
    method = _check_choice(method, "method", _METHODS)
    max_iter, tol = _check_max_iter(max_iter), _check_tol(tol)
    if on_fail not in ("raise", "warn"):
        raise ValueError(f"on_fail must be 'raise' or 'warn', got {on_fail!r}")
    c, n, p, q = est.counts, est.n, est.p, est.q
    a = p - q
    big_c = float(c.sum())
    if like == "multinomial":
        if big_c <= 0:
            raise ValueError("counts must not all be zero for the multinomial likelihood")
        if _oracle_likelihood(est.oracle) == "multinomial" and abs(big_c - n) > 1e-9 * n:
            raise ValueError(f"GRR counts must sum to n = {n} (one value per report), got {big_c!r}")
    loglik, grad = _LOGLIK[like]
    scale = _scale(est, like)

    def gap_of(f):
        g = grad(f, est)
        lam = float(np.sum(g * f))  # not np.dot: BLAS is ~1000× slower on subnormal entries
        return float(np.max(g) - lam) / scale, lam

    t0 = time.perf_counter()
    if method == "exact":
        if like == "multinomial":
            f, _ = _exact_multinomial(c, a, q)
            nit = 1
        else:
            f, _, nit = _separable_solve(c, float(n), q, a, max_iter)
        gap, lam = gap_of(f)
        converged, message = True, "exact solve of the KKT conditions"
    else:
        f = np.full(est.d, 1.0 / est.d)
        converged, nit = False, 0
        for nit in range(1, max_iter + 1):
            if like == "multinomial":
                f = _ibu_step(f, c, big_c, a, q)
            else:
                f = _em_binomial_step(f, est, 200)[0]
            gap, lam = gap_of(f)
            if gap <= tol:
                converged = True
                break
        message = (f"converged: Frank-Wolfe gap {gap:.3g} <= tol = {tol:g} after {nit} iterations"
                   if converged else
                   f"{'IBU' if like == 'multinomial' else 'EM'} did not converge in max_iter = {max_iter} "
                   f"iterations: relative Frank-Wolfe gap {gap:.3g} > tol = {tol:g}; raise max_iter, "
                   f"loosen tol, or use method='exact'")
        if not converged:
            if on_fail == "raise":
                raise ConvergenceError(message)
            warnings.warn(message, ConvergenceWarning, stacklevel=2)
    seconds = time.perf_counter() - t0
    return MLEResult(x=f, likelihood=like, method=method, nit=nit, converged=converged,
                     multiplier=lam, gap=gap, loglik=loglik(f, est), seconds=seconds, message=message)


@register(
    "em",
    param_examples={"likelihood": "auto", "method": "iterative", "max_iter": 100000, "tol": 1e-10, "on_fail": "warn"},
    description="Maximum likelihood on the simplex from the exact likelihood of the support counts "
                "(multinomial for GRR, per-bit binomial for unary/hash oracles); the EM/IBU fixed point",
    non_negative="yes",
    sums_to_one="yes",
    order_preserving="weak",
    complexity="O(d log d) GRR (closed form after a sort); O(d log(1/tol)) binomial (1-D dual "
               "root-finding); O(d) per EM/IBU iteration with method='iterative'",
    reference="Wang et al. arXiv §3.4 (MLE view, Eq. 11) with the exact likelihood instead of Eq. 12; "
              "IBU: Agrawal & Aggarwal PODS 2001, ElSalamouny & Palamidessi EuroS&P 2020",
    notes="$f_v$ is a non-decreasing function of $c_v$ ($f_v = \\max(0, c_v/λ − q/a)$ for GRR; $π_v(μ)$ "
          "increases with $c_v$ for the binomial), so order is kept but values below the cut tie at 0. "
          "The binomial likelihood is a composite likelihood: exact per count, counts treated as "
          "independent (exactly so for OUE/SUE given the histogram).",
    label="EM", family="iterative", applies=_why_not,
    problem=ProblemStatement("likelihood", "EM/IBU's fixed point maximises the exact likelihood of the support "
                             "counts on the simplex: multinomial for GRR, per-bit binomial otherwise (arXiv "
                             "§3.4 Eq. 11)", lambda est: {"objective": likelihood_for(est)}),
)
def em(estimate: Estimate, likelihood: str = "auto", method: str = "exact", *,
       max_iter: int = 10_000, tol: float = 1e-9, on_fail: str = "raise") -> np.ndarray:
    r"""Maximum-likelihood frequencies on the simplex from the exact likelihood of the counts.

    GRR (its source declares ``likelihood = "multinomial"``): the multinomial likelihood :math:`\sum_v c_v \log(q + (p - q) f_v)`;
    unary and hash oracles (OUE, SUE, OLH, BLH, HR, SS): the per-bit binomial composite likelihood
    :math:`\sum_v [c_v \log π_v + (n - c_v) \log(1 - π_v)]`, :math:`π_v = q + (p - q) f_v`. Exact KKT solves by default,
    the IBU / EM iteration with ``method="iterative"`` (same maximiser). See the module notes
    of :mod:`ldpopt.methods.em` for the derivations and :func:`solve_mle` for the parameters and for
    the full result (multiplier, gap, iterations). Raises ``ValueError`` for an oracle without a
    known likelihood (unless ``likelihood`` is given) and :class:`ConvergenceError` when the
    iteration does not converge (``on_fail="warn"`` warns instead).

    Parameters (as :func:`solve_mle`): ``likelihood`` ("auto", "multinomial" or "binomial"),
    ``method`` ("exact" or "iterative"), ``max_iter`` (EM iterations or root-finder evaluations),
    ``tol`` (relative Frank-Wolfe gap), ``on_fail`` ("raise" or "warn").

    References: Wang et al., arXiv §3.4 (Eq. 11); Agrawal & Aggarwal (PODS 2001);
    ElSalamouny & Palamidessi (EuroS&P 2020).
    """
    return solve_mle(estimate, likelihood, method, max_iter=max_iter, tol=tol, on_fail=on_fail).x
