"""Exact covariance of the raw estimate f̃ and the analytic intervals of the linear methods (Base and
Norm: each declares its form, ``MethodInfo.linear``, which gives its variance).

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.analytic"."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm as _normal

from .. import methods as _methods
from ..estimate import Estimate
from ..noise import CountCovariance
from .result import Uncertainty

__all__ = ["ANALYTIC_METHODS", "analytic", "covariance", "line_of", "pair_parameters", "query_variance",
           "query_variance_of", "score_interval", "supports_analytic", "variance_line"]


def _form(method):
    """The linear form a method declares (``MethodInfo.linear``), or None."""
    return _methods.get(method).linear if isinstance(method, str) and method.lower() in _methods.names() \
        else getattr(method, "linear", None)


#: The registered methods with exact analytic intervals: those declaring a linear form (derived from
#: the registry when the module loads; a method registered later is asked directly)
ANALYTIC_METHODS = tuple(name for name in _methods.names() if _methods.get(name).linear is not None)


def pair_parameters(estimate: Estimate) -> tuple[float, float] | None:
    """(a, b) of the module notes for ``estimate``, as its noise source states them
    (``count_covariance(n, d).pair``), or None when Cov is not of that form."""
    return estimate.noise.count_covariance(estimate.n, estimate.d).pair


def supports_analytic(estimate: Estimate, method, queries=None) -> bool:
    """Whether :func:`analytic` can answer: the method declares a linear form, and the source states
    the pair terms (or a general channel's moments) its answers need (none for the identity's single
    values)."""
    form = _form(method)
    if form is None:
        return False
    cov = estimate.noise.count_covariance(estimate.n, estimate.d)
    return form.exact_without_pair(queries is None) or cov.pair is not None or cov.moments is not None


def query_variance(estimate: Estimate, method, f, U=None) -> np.ndarray:
    """Exact Var of a linear method's answers to the query rows of ``U`` (m × d, 0-1, sparse or dense;
    None = every single value) when the true frequencies are ``f``: the method's form asked
    (:meth:`ldpopt.methods.linear.Centring.query_variance`)."""
    return query_variance_of(estimate.noise.count_covariance(estimate.n, estimate.d), estimate.d, method, f, U,
                             estimate.oracle)


def query_variance_of(cov: CountCovariance, d: int, method, f, U=None, name: str = "") -> np.ndarray:
    """:func:`query_variance` of a source's covariance (``NoiseSource.count_covariance(n, d)``) on d values,
    with no estimate (``f`` None: a source whose variance does not depend on the truth)."""
    return _linear(method).query_variance(cov, d, f, U, name)


def _linear(method):
    form = _form(method)
    if form is None:
        raise ValueError(f"method must declare a linear form for the analytic intervals (one of "
                         f"{ANALYTIC_METHODS}), got {method!r}")
    return form


def covariance(estimate: Estimate, f=None) -> np.ndarray:
    """The exact covariance matrix (d × d) of the raw f̃ when the true frequencies are ``f``, as the
    source states it (:meth:`ldpopt.noise.CountCovariance.matrix`): central noise Var(noise)/n² · I; an
    oracle whose count covariance is diagonal + rank 2 (``pair_covariance``, module notes)
    κ·(diag(g) + a·11ᵀ + b·(f1ᵀ + 1fᵀ)); a general channel's (a designed strategy's) from its report
    moments; any other oracle its exact diagonal (Eq. 2), the off-diagonal left at 0.

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
    return estimate.noise.count_covariance(estimate.n, d).matrix(fv)


def variance_line(estimate: Estimate, method: str, U=None) -> tuple[np.ndarray, np.ndarray]:
    """(α, β) with Var = α + β·F exactly, F the true answer of each 0-1 query row of ``U`` (None =
    every single value): the module notes' line, the same covariance as :func:`query_variance`. A
    general channel's line (:class:`ldpopt.noise.ReportMoments`) takes the truth's shape inside and
    outside each query from the plug-in clip(f̃, 0, 1) (:meth:`ldpopt.methods.linear.Centring.line`)."""
    return line_of(estimate.noise.count_covariance(estimate.n, estimate.d), estimate.d, method, U, estimate.oracle,
                   shape=np.clip(estimate.f_tilde, 0.0, 1.0))


def line_of(cov: CountCovariance, d: int, method, U=None, name: str = "", shape=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`variance_line` of a source's covariance (``NoiseSource.count_covariance(n, d)``) on d values,
    with no estimate: what ``plan`` asks before any data exist (``shape``: a general channel's plug-in
    truth, :meth:`ldpopt.methods.linear.Centring.line`)."""
    return _linear(method).line(cov, d, U, name, shape=shape)


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
    method : str
        A method declaring its linear form (:data:`ANALYTIC_METHODS`: "base", "norm").
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
        If ``method`` declares no linear form, ``level`` is not strictly between 0 and 1, or the queries
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
    form = _linear(method)
    if not 0.0 < float(level) < 1.0:  # a level outside (0, 1) would give NaN bounds, never an error
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    f_tilde = np.asarray(estimate.f_tilde, dtype=np.float64)
    point = form.apply(f_tilde)
    U = None
    if queries is not None:
        from ..queries import query_matrix

        U = query_matrix(queries, estimate.d)
        point = np.asarray(U @ point).ravel()
    alpha, beta = variance_line(estimate, method, U)
    se = np.sqrt(alpha + beta * np.clip(point, 0.0, 1.0))
    lo, hi = score_interval(point, alpha, beta, level)
    name = getattr(method, "name", method)
    cov = estimate.noise.count_covariance(estimate.n, estimate.d)
    truth = ("the truth's shape inside and outside each answer plugged in from clip(f̃, 0, 1), its total "
             "the score's unknown" if cov.moments is not None else "no plug-in truth")
    how = (f"analytic: exact variance of the {estimate.oracle} counts ({cov.how}), affine in the "
           f"true answer; {name} is linear and unbiased; score interval (the answers a normal test at their "
           f"own variance does not reject at level {level:g}), {truth}")
    return Uncertainty(values=point, se=se, bias=np.zeros_like(point), lo=lo, hi=hi, level=float(level),
                       method=name, interval="normal", how=how, labels=labels)
