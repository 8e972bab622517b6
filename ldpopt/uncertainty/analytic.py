"""Exact covariance of the raw estimate f̃ and the analytic intervals of Base and Norm.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.analytic"."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.stats import norm as _normal

from .. import oracles as _oracles
from ..estimate import Estimate, central_noise
from .result import Uncertainty

__all__ = ["ANALYTIC_METHODS", "analytic", "covariance", "pair_parameters", "query_variance", "score_interval",
           "supports_analytic", "variance_line"]

ANALYTIC_METHODS = ("base", "norm")


def pair_parameters(estimate: Estimate) -> tuple[float, float] | None:
    """(a, b) of the module notes for ``estimate.oracle``, as its oracle states them
    (``pair_covariance``), or None when Cov is not of that form (or the oracle is not registered)."""
    try:
        cls = _oracles.oracle_class(estimate.oracle)
    except ValueError:
        return None
    return cls.pair_covariance(estimate.p, estimate.q, estimate.d, estimate.meta)


def supports_analytic(estimate: Estimate, method: str, queries=None) -> bool:
    """Whether :func:`analytic` can answer (method Base or Norm; per-value Base for any oracle)."""
    if method not in ANALYTIC_METHODS:
        return False
    if (method == "base" and queries is None) or central_noise(estimate) is not None:
        return True
    return pair_parameters(estimate) is not None


def _kappa(est: Estimate) -> float:
    return 1.0 / (est.n * (est.p - est.q) ** 2)


def query_variance(estimate: Estimate, method: str, f, U=None) -> np.ndarray:
    """Exact Var of Base's or Norm's answers to the query rows of ``U`` (m × d, 0-1, sparse or dense;
    None = every single value) when the true frequencies are ``f``."""
    p, q, d = estimate.p, estimate.q, estimate.d
    if central_noise(estimate) is not None:
        alpha, _ = _central_line(estimate, method, U)
        return alpha
    s = q * (1 - q) + f * (p - q) * (1 - p - q)
    kap = _kappa(estimate)
    ab = pair_parameters(estimate)
    if ab is None:
        if method == "base" and U is None:
            return kap * s
        raise ValueError(f"oracle {estimate.oracle!r}: the count covariance is not analytic here; "
                         f"use the bootstrap")
    a, b = ab
    g = s - a - 2 * b * f
    if U is None:
        if method == "base":
            return kap * s
        return kap * (g * (1 - 2.0 / d) + g.sum() / d**2)
    U = sp.csr_matrix(U, dtype=np.float64)
    usq_g = np.asarray(U.multiply(U) @ g).ravel()
    u1 = np.asarray(U @ np.ones(d)).ravel()
    if method == "base":
        uf = np.asarray(U @ f).ravel()
        return kap * (usq_g + a * u1**2 + 2 * b * u1 * uf)
    m = u1 / d
    ug = np.asarray(U @ g).ravel()
    return kap * (usq_g - 2 * m * ug + m**2 * g.sum())


def covariance(estimate: Estimate, f=None) -> np.ndarray:
    """The exact covariance matrix (d × d) of the raw f̃ when the true frequencies are ``f``: central
    noise Var(noise)/n² · I; an oracle whose count covariance is diagonal + rank 2 (``pair_covariance``,
    module notes) κ·(diag(g) + a·11ᵀ + b·(f1ᵀ + 1fᵀ)); any other oracle its exact diagonal (Eq. 2),
    the off-diagonal left at 0.

    Parameters
    ----------
    estimate : Estimate
    f : array_like or None
        The true frequencies (d,); None: the plug-in clip(f̃, 0, 1), as :attr:`Estimate.sigma2_v`.

    Returns
    -------
    ndarray, shape (d, d)

    Raises
    ------
    ValueError
        ``f`` not of shape (d,).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.uncertainty.analytic import covariance
    >>> est = ldpopt.oracles.get("grr", 2.0, 3).simulate(np.array([600, 300, 100]), rng=0)
    >>> bool(np.allclose(np.diag(covariance(est)), est.sigma2_v)), bool(np.allclose(covariance(est).sum(1), 0))
    (True, True)
    """
    d = estimate.d
    fv = np.clip(estimate.f_tilde, 0.0, 1.0) if f is None else np.asarray(f, dtype=np.float64)
    if fv.shape != (d,):
        raise ValueError(f"f must have shape ({d},), got {fv.shape}")
    if central_noise(estimate) is not None:
        return float(estimate.meta["extra_variance"]) * np.eye(d)
    p, q = estimate.p, estimate.q
    s = q * (1 - q) + fv * (p - q) * (1 - p - q)
    kap = _kappa(estimate)
    ab = pair_parameters(estimate)
    if ab is None:
        return np.diag(kap * s)
    a, b = ab
    one = np.ones(d)
    return kap * (np.diag(s - a - 2 * b * fv) + a * np.outer(one, one) + b * (np.outer(fv, one) + np.outer(one, fv)))


def variance_line(estimate: Estimate, method: str, U=None) -> tuple[np.ndarray, np.ndarray]:
    """(α, β) with Var = α + β·F exactly, F the true answer of each 0-1 query row of ``U`` (None =
    every single value): the module notes' line, the same covariance as :func:`query_variance`."""
    if central_noise(estimate) is not None:
        return _central_line(estimate, method, U)
    p, q, d = estimate.p, estimate.q, estimate.d
    kap = _kappa(estimate)
    A, B = q * (1 - q), (p - q) * (1 - p - q)
    k = np.ones(d) if U is None else np.asarray(sp.csr_matrix(U, dtype=np.float64).sum(axis=1)).ravel()
    ab = pair_parameters(estimate)
    if ab is None:
        if method == "base" and U is None:
            return np.full(d, kap * A), np.full(d, kap * B)
        raise ValueError(f"oracle {estimate.oracle!r}: the count covariance is not analytic here; "
                         f"use the bootstrap")
    a, b = ab
    A0, B0 = A - a, B - 2 * b
    if method == "base":
        return kap * (k * A0 + a * k**2), kap * (B0 + 2 * b * k)
    m = k / d
    return kap * ((1 - 2 * m) * k * A0 + m**2 * (d * A0 + B0)), kap * (1 - 2 * m) * B0


def _central_line(estimate: Estimate, method: str, U=None) -> tuple[np.ndarray, np.ndarray]:
    # central noise: independent cells of variance s = Var(noise)/n², not depending on the truth (β = 0);
    # Base's query u has variance s‖u‖², Norm's s(‖u‖² − (Σu)²/d) (Cov of Norm = s(I − 11ᵀ/d))
    s, d = float(estimate.meta["extra_variance"]), estimate.d
    if U is None:
        sq, tot = np.ones(d), np.ones(d)
    else:
        U = sp.csr_matrix(U, dtype=np.float64)
        sq, tot = np.asarray(U.multiply(U).sum(axis=1)).ravel(), np.asarray(U.sum(axis=1)).ravel()
    alpha = s * sq if method == "base" else s * (sq - tot**2 / d)
    return alpha, np.zeros_like(alpha)


def score_interval(point, alpha, beta, level: float) -> tuple[np.ndarray, np.ndarray]:
    """{F : (point − F)² ≤ z²(α + β F)}: the roots of the quadratic (module notes; the
    discriminant is floored at 0, where the set is the single point of least rejection)."""
    z = _normal.ppf(0.5 + level / 2)
    c = 0.5 * z * z * beta
    half = np.sqrt(np.maximum(z * z * (alpha + beta * point) + c * c, 0.0))
    return point + c - half, point + c + half


def analytic(estimate: Estimate, method: str, level: float = 0.95, queries=None, labels=None) -> Uncertainty:
    """Analytic SE and score interval for Base or Norm (per value, or per query row of ``queries``).

    Parameters
    ----------
    estimate : Estimate
    method : {"base", "norm"}
        The linear, unbiased methods.
    level : float, default 0.95
        Nominal coverage in (0, 1).
    queries : optional
        Subsets (anything :func:`ldpopt.queries.query_matrix` accepts); None: per value.
    labels : list, optional
        Names of the entries.

    Returns
    -------
    Uncertainty
        ``interval="normal"``, ``bias`` zero.

    Raises
    ------
    ValueError
        If ``method`` is not Base or Norm, ``level`` is not strictly between 0 and 1, or the queries
        are malformed.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 10, rng=0)
    >>> r = ldpopt.uncertainty.analytic(est, "norm", level=0.9)
    >>> r.values.round(3), r.se.round(4)
    (array([0.429, 0.244, 0.138, 0.081, 0.058, 0.049]), array([0.0184, 0.0181, 0.0179, 0.0178, 0.0177, 0.0177]))
    """
    if method not in ANALYTIC_METHODS:
        raise ValueError(f"method must be one of {ANALYTIC_METHODS} for the analytic intervals, got {method!r}")
    if not 0.0 < float(level) < 1.0:  # a level outside (0, 1) would give NaN bounds, never an error
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    f_tilde = np.asarray(estimate.f_tilde, dtype=np.float64)
    point = f_tilde if method == "base" else f_tilde + (1.0 - f_tilde.sum()) / estimate.d
    U = None
    if queries is not None:
        from ..queries import query_matrix

        U = query_matrix(queries, estimate.d)
        point = np.asarray(U @ point).ravel()
    alpha, beta = variance_line(estimate, method, U)
    se = np.sqrt(alpha + beta * np.clip(point, 0.0, 1.0))
    lo, hi = score_interval(point, alpha, beta, level)
    source = ("the central noise's exact variance, independent cells" if central_noise(estimate) is not None
              else "Eq. 2 + pair terms")
    how = (f"analytic: exact variance of the {estimate.oracle} counts ({source}), affine in the "
           f"true answer; {method} is linear and unbiased; score interval (the answers a normal test at their "
           f"own variance does not reject at level {level:g}), no plug-in truth")
    return Uncertainty(values=point, se=se, bias=np.zeros_like(point), lo=lo, hi=hi, level=float(level),
                       method=method, interval="normal", how=how, labels=labels)
