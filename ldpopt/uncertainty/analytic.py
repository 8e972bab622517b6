"""Exact covariance of the raw estimate f̃ and the analytic intervals of Base and Norm.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.analytic"."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.stats import norm as _normal

from ..estimate import Estimate
from ..noise import CountCovariance
from .result import Uncertainty

__all__ = ["ANALYTIC_METHODS", "analytic", "covariance", "line_of", "pair_parameters", "query_variance",
           "query_variance_of", "score_interval", "supports_analytic", "variance_line"]

ANALYTIC_METHODS = ("base", "norm")


def pair_parameters(estimate: Estimate) -> tuple[float, float] | None:
    """(a, b) of the module notes for ``estimate``, as its noise source states them
    (``count_covariance(n, d).pair``), or None when Cov is not of that form."""
    return estimate.noise.count_covariance(estimate.n, estimate.d).pair


def supports_analytic(estimate: Estimate, method: str, queries=None) -> bool:
    """Whether :func:`analytic` can answer (method Base or Norm; per-value Base for any source)."""
    if method not in ANALYTIC_METHODS:
        return False
    if method == "base" and queries is None:
        return True
    return pair_parameters(estimate) is not None


def _query_sums(U, d: int) -> tuple[np.ndarray, np.ndarray]:
    # ‖u‖² and Σu of every query row (None: the single values)
    if U is None:
        return np.ones(d), np.ones(d)
    U = sp.csr_matrix(U, dtype=np.float64)
    return np.asarray(U.multiply(U).sum(axis=1)).ravel(), np.asarray(U.sum(axis=1)).ravel()


def _independent(cov: CountCovariance, method: str, U, d: int) -> np.ndarray:
    # the variance of noise added independently to every cell (e): Base's query u has e‖u‖², Norm's
    # e(‖u‖² − (Σu)²/d) (Cov of Norm = e(I − 11ᵀ/d)); 0 where the source adds none
    if cov.e == 0.0:
        return np.zeros(d if U is None else U.shape[0])
    sq, tot = _query_sums(U, d)
    return cov.e * sq if method == "base" else cov.e * (sq - tot**2 / d)


def query_variance(estimate: Estimate, method: str, f, U=None) -> np.ndarray:
    """Exact Var of Base's or Norm's answers to the query rows of ``U`` (m × d, 0-1, sparse or dense;
    None = every single value) when the true frequencies are ``f``."""
    return query_variance_of(estimate.noise.count_covariance(estimate.n, estimate.d), estimate.d, method, f, U,
                             estimate.oracle)


def query_variance_of(cov: CountCovariance, d: int, method: str, f, U=None, name: str = "") -> np.ndarray:
    """:func:`query_variance` of a source's covariance (``NoiseSource.count_covariance(n, d)``) on d values,
    with no estimate (``f`` None: a source whose variance does not depend on the truth)."""
    if f is None:   # the truth enters only through B and b: a source with neither needs none
        f = np.zeros(d)
    f = np.asarray(f, dtype=np.float64)
    s = cov.A + f * cov.B
    kap = cov.kappa
    ind = _independent(cov, method, U, d)
    if cov.pair is None:
        if method == "base" and U is None:
            return kap * s + ind
        raise ValueError(f"oracle {name!r}: the count covariance is not analytic here; use the bootstrap")
    a, b = cov.pair
    g = s - a - 2 * b * f
    if U is None:
        if method == "base":
            return kap * s + ind
        return kap * (g * (1 - 2.0 / d) + g.sum() / d**2) + ind
    U = sp.csr_matrix(U, dtype=np.float64)
    usq_g = np.asarray(U.multiply(U) @ g).ravel()
    u1 = np.asarray(U @ np.ones(d)).ravel()
    if method == "base":
        uf = np.asarray(U @ f).ravel()
        return kap * (usq_g + a * u1**2 + 2 * b * u1 * uf) + ind
    m = u1 / d
    ug = np.asarray(U @ g).ravel()
    return kap * (usq_g - 2 * m * ug + m**2 * g.sum()) + ind


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
    cov = estimate.noise.count_covariance(estimate.n, d)
    if cov.pair is None:
        return np.diag(cov.variance(fv))
    a, b = cov.pair
    one = np.ones(d)
    return (np.diag(cov.variance(fv) - cov.kappa * (a + 2 * b * fv)) + cov.kappa * a * np.outer(one, one)
            + cov.kappa * b * (np.outer(fv, one) + np.outer(one, fv)))


def variance_line(estimate: Estimate, method: str, U=None) -> tuple[np.ndarray, np.ndarray]:
    """(α, β) with Var = α + β·F exactly, F the true answer of each 0-1 query row of ``U`` (None =
    every single value): the module notes' line, the same covariance as :func:`query_variance`."""
    return line_of(estimate.noise.count_covariance(estimate.n, estimate.d), estimate.d, method, U, estimate.oracle)


def line_of(cov: CountCovariance, d: int, method: str, U=None, name: str = "") -> tuple[np.ndarray, np.ndarray]:
    """:func:`variance_line` of a source's covariance (``NoiseSource.count_covariance(n, d)``) on d values,
    with no estimate: what ``plan`` asks before any data exist."""
    kap, A, B = cov.kappa, cov.A, cov.B
    k = np.ones(d) if U is None else np.asarray(sp.csr_matrix(U, dtype=np.float64).sum(axis=1)).ravel()
    ind = _independent(cov, method, U, d)
    if cov.pair is None:
        if method == "base" and U is None:
            return np.full(d, kap * A) + ind, np.full(d, kap * B)
        raise ValueError(f"oracle {name!r}: the count covariance is not analytic here; use the bootstrap")
    a, b = cov.pair
    A0, B0 = A - a, B - 2 * b
    if method == "base":
        return kap * (k * A0 + a * k**2) + ind, kap * (B0 + 2 * b * k)
    m = k / d
    return kap * ((1 - 2 * m) * k * A0 + m**2 * (d * A0 + B0)) + ind, kap * (1 - 2 * m) * B0


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
    source = estimate.noise.count_covariance(estimate.n, estimate.d).how
    how = (f"analytic: exact variance of the {estimate.oracle} counts ({source}), affine in the "
           f"true answer; {method} is linear and unbiased; score interval (the answers a normal test at their "
           f"own variance does not reject at level {level:g}), no plug-in truth")
    return Uncertainty(values=point, se=se, bias=np.zeros_like(point), lo=lo, hi=hi, level=float(level),
                       method=method, interval="normal", how=how, labels=labels)
