r"""Decoding RAPPOR's bit counts against a candidate dictionary (Erlingsson, Pihur & Korolova, CCS
2014, §4; equation numbers not checked, the paper is not in the papers folder).

Notes: docs/notes/sketches.md, "ldpopt.sketches.rappor_decode"."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
from scipy import stats

from ..oracles.rappor import RAPPOR
from ..problems import NonNegative, Problem, SimplexDroppedWarning, SubsetSum

__all__ = ["DecodeResult", "constrained", "lasso_ls", "regression"]


def _check(oracle, Y, N) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(oracle, RAPPOR):
        raise TypeError(f"oracle must be an ldpopt RAPPOR oracle, got {type(oracle).__name__}")
    Y = np.asarray(Y, dtype=np.float64)
    N = np.asarray(N, dtype=np.float64)
    if Y.shape != (oracle.cohorts, oracle.num_bits):
        raise ValueError(f"Y must have shape ({oracle.cohorts}, {oracle.num_bits}) (cohorts × bits), got {Y.shape}")
    if N.shape != (oracle.cohorts,) or np.any(N < 0) or N.sum() < 1:
        raise ValueError(f"N must be {oracle.cohorts} non-negative cohort sizes with a positive total")
    if np.any(Y < 0) or np.any(Y > N[:, None]):
        raise ValueError("Y must lie in [0, N_c] for every cohort c")
    return Y, N


def regression(oracle: RAPPOR, Y, N) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""(D, t̂, var t̂): the design :math:`\mathrm{diag}(N_c) X` (C·T, d), the debiased counts and their plug-in variances.

    The linear model of RAPPOR's §4 decoder (Erlingsson, Pihur & Korolova, CCS 2014; module
    docstring): :math:`\hat t_{ct} = (Y_{ct} - p^* N_c)/(q^* - p^*)`, :math:`E \hat t = D f`.

    Parameters
    ----------
    oracle : RAPPOR
        The RAPPOR oracle (its Bloom filters are the candidate dictionary ``0..d−1``).
    Y : array_like, shape (cohorts, num_bits)
        Reports of cohort c with bit t set (``oracle.sketch(reports)[0]``), in ``[0, N_c]``.
    N : array_like, shape (cohorts,)
        Cohort sizes, non-negative, summing to at least 1.

    Returns
    -------
    D : ndarray, shape (cohorts·num_bits, d)
        The design matrix.
    t : ndarray, shape (cohorts·num_bits,)
        The debiased bit counts, cohort-major.
    var : ndarray, shape (cohorts·num_bits,)
        Their plug-in variances (floored at 1e-12).

    Raises
    ------
    TypeError
        ``oracle`` is not an ldpopt RAPPOR oracle.
    ValueError
        ``Y`` or ``N`` of the wrong shape, or ``Y`` outside ``[0, N_c]``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles
    >>> from ldpopt.sketches import regression
    >>> rappor = oracles.get("rappor", epsilon=4.0, d=8, num_bits=16, num_hashes=2, cohorts=4, hash_seed=0)
    >>> values = np.repeat(np.arange(8), [2000, 1500, 500, 500, 250, 250, 0, 0])
    >>> Y, N = rappor.sketch(rappor.perturb(values, rng=1))
    >>> D, t, var = regression(rappor, Y, N)
    >>> D.shape, t.shape, bool((var > 0).all())
    ((64, 8), (64,), True)
    """
    Y, N = _check(oracle, Y, N)
    ps, qs = oracle.p_star, oracle.q_star
    t = ((Y - ps * N[:, None]) / (qs - ps)).ravel()
    D = np.repeat(N, oracle.num_bits)[:, None] * oracle.design_matrix()
    Nc = np.maximum(N, 1.0)[:, None]
    pi = np.clip(Y / Nc, 0.5 / Nc, 1 - 0.5 / Nc)
    var = (N[:, None] * pi * (1 - pi) / (qs - ps) ** 2).ravel()
    return D, t, np.maximum(var, 1e-12)


def _nonneg_lasso(D: np.ndarray, t: np.ndarray, lam: float, iters: int = 3000, tol: float = 1e-10) -> np.ndarray:
    """argmin_{f ≥ 0} ½‖t − D f‖² + λ Σ f by FISTA (the prox of λΣf + 1[f ≥ 0] is max(·− λL⁻¹, 0))."""
    L = float(np.linalg.norm(D, 2)) ** 2
    f = y = np.zeros(D.shape[1])
    s = 1.0
    for _ in range(iters):  # iterations of a first-order method, each vectorised over the domain
        g = D.T @ (D @ y - t)
        f_new = np.maximum(y - (g + lam) / L, 0.0)
        s_new = (1 + np.sqrt(1 + 4 * s * s)) / 2
        y = f_new + (s - 1) / s_new * (f_new - f)
        if np.max(np.abs(f_new - f)) <= tol * max(1.0, np.max(np.abs(f_new))):
            f = f_new
            break
        f, s = f_new, s_new
    return f


@dataclass(frozen=True)
class DecodeResult:
    """The paper's decoder's answer: ``f`` (zero outside ``selected``), the LASSO's ``lasso_f``,
    the least-squares standard errors ``se`` and one-sided p-values ``pvalue`` of the selected.

    Returned by :func:`lasso_ls` (RAPPOR §4, Erlingsson, Pihur & Korolova, CCS 2014).

    Parameters
    ----------
    f : ndarray, shape (d,)
        Least-squares frequencies of the kept candidates, 0 elsewhere.
    selected : ndarray of int
        Candidates the LASSO selected.
    se : ndarray
        Standard errors of the selected candidates' least-squares coefficients.
    pvalue : ndarray
        One-sided t-test p-values of the selected.
    lasso_f : ndarray, shape (d,)
        The non-negative LASSO fit.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles
    >>> from ldpopt.sketches import lasso_ls
    >>> rappor = oracles.get("rappor", epsilon=4.0, d=8, num_bits=16, num_hashes=2, cohorts=4, hash_seed=0)
    >>> values = np.repeat(np.arange(8), [2000, 1500, 500, 500, 250, 250, 0, 0])
    >>> Y, N = rappor.sketch(rappor.perturb(values, rng=1))
    >>> res = lasso_ls(rappor, Y, N)
    >>> res.selected.size == res.se.size == res.pvalue.size
    True
    """

    f: np.ndarray
    selected: np.ndarray
    se: np.ndarray
    pvalue: np.ndarray
    lasso_f: np.ndarray


def lasso_ls(oracle: RAPPOR, Y, N, alpha: float = 0.05, significance: float | None = 0.05) -> DecodeResult:
    r"""The paper's §4 decoder (module notes): LASSO selects, least squares estimates, Bonferroni
    keeps. ``significance=None`` keeps every LASSO-selected candidate.

    Erlingsson, Pihur & Korolova, CCS 2014, §4. Where the paper is silent: a non-negative LASSO
    solved by FISTA with λ = ``alpha`` · :math:`λ_{\max}`, columns not standardised.

    Parameters
    ----------
    oracle : RAPPOR
        The RAPPOR oracle (its Bloom filters are the candidate dictionary ``0..d−1``).
    Y : array_like, shape (cohorts, num_bits)
        Reports of cohort c with bit t set (``oracle.sketch(reports)[0]``), in ``[0, N_c]``.
    N : array_like, shape (cohorts,)
        Cohort sizes, non-negative, summing to at least 1.
    alpha : float, default 0.05
        The LASSO weight as a fraction of :math:`λ_{\max} = \max_v (D^T \hat t)_v`, in ``(0, 1)``.
    significance : float or None, default 0.05
        Family-wise level; a candidate is kept when its p-value is below ``significance / d``.

    Returns
    -------
    DecodeResult

    Raises
    ------
    TypeError
        ``oracle`` is not an ldpopt RAPPOR oracle.
    ValueError
        ``Y`` or ``N`` of the wrong shape, or ``Y`` outside ``[0, N_c]``.
        Also when ``alpha`` or ``significance`` is outside ``(0, 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles
    >>> from ldpopt.sketches import lasso_ls
    >>> rappor = oracles.get("rappor", epsilon=4.0, d=8, num_bits=16, num_hashes=2, cohorts=4, hash_seed=0)
    >>> values = np.repeat(np.arange(8), [2000, 1500, 500, 500, 250, 250, 0, 0])
    >>> Y, N = rappor.sketch(rappor.perturb(values, rng=1))
    >>> lasso_ls(rappor, Y, N).f.round(2)
    array([0.37, 0.25, 0.13, 0.  , 0.  , 0.  , 0.  , 0.  ])
    """
    if not 0 < float(alpha) < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if significance is not None and not 0 < float(significance) < 1:
        raise ValueError(f"significance must lie in (0, 1) or be None, got {significance!r}")
    D, t, _ = regression(oracle, Y, N)
    lam_max = float(np.max(D.T @ t, initial=0.0))
    lasso_f = _nonneg_lasso(D, t, alpha * lam_max) if lam_max > 0 else np.zeros(oracle.d)
    sel = np.flatnonzero(lasso_f > 0)
    f = np.zeros(oracle.d)
    se = np.full(sel.size, np.nan)
    pval = np.full(sel.size, np.nan)
    if sel.size:
        Ds = D[:, sel]
        coef, *_ = np.linalg.lstsq(Ds, t, rcond=None)
        dof = max(D.shape[0] - sel.size, 1)
        sigma2 = float(np.sum((t - Ds @ coef) ** 2)) / dof
        se = np.sqrt(sigma2 * np.diag(np.linalg.pinv(Ds.T @ Ds)))
        pval = stats.t.sf(coef / np.where(se > 0, se, np.inf), dof)
        keep = np.ones(sel.size, bool) if significance is None else pval < significance / oracle.d
        f[sel[keep]] = coef[keep]
    return DecodeResult(f=f, selected=sel, se=se, pvalue=pval, lasso_f=lasso_f)


def constrained(oracle: RAPPOR, Y, N, weighted: bool = True, solver=None, **solve_options):
    """ldpopt's decoder (module notes): a checked :class:`~ldpopt.problems.Solution`.

    Weighted least squares of the RAPPOR §4 regression (Erlingsson, Pihur & Korolova, CCS 2014)
    over :math:`f ≥ 0, Σ f ≤ 1`, as a :class:`~ldpopt.problems.Problem`.

    Parameters
    ----------
    oracle : RAPPOR
        The RAPPOR oracle (its Bloom filters are the candidate dictionary ``0..d−1``).
    Y : array_like, shape (cohorts, num_bits)
        Reports of cohort c with bit t set (``oracle.sketch(reports)[0]``), in ``[0, N_c]``.
    N : array_like, shape (cohorts,)
        Cohort sizes, non-negative, summing to at least 1.
    weighted : bool, default True
        Weight each bit count by its inverse plug-in variance; False: one weight for all.
    solver : str, optional
        Passed to :meth:`Problem.solve <ldpopt.problems.Problem.solve>`.
    **solve_options
        Passed to :meth:`Problem.solve <ldpopt.problems.Problem.solve>`.

    Returns
    -------
    Solution
        ``f`` the decoded frequencies, ``status`` ldpopt's check.

    Raises
    ------
    TypeError
        ``oracle`` is not an ldpopt RAPPOR oracle.
    ValueError
        ``Y`` or ``N`` of the wrong shape, or ``Y`` outside ``[0, N_c]``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles
    >>> from ldpopt.sketches import constrained
    >>> rappor = oracles.get("rappor", epsilon=4.0, d=8, num_bits=16, num_hashes=2, cohorts=4, hash_seed=0)
    >>> values = np.repeat(np.arange(8), [2000, 1500, 500, 500, 250, 250, 0, 0])
    >>> Y, N = rappor.sketch(rappor.perturb(values, rng=1))
    >>> sol = constrained(rappor, Y, N)
    >>> sol.status, sol.f[:3].round(2)
    ('optimal', array([0.37, 0.25, 0.13]))
    """
    D, t, var = regression(oracle, Y, N)
    w = 1.0 / np.sqrt(var) if weighted else np.full(t.shape, 1.0 / np.sqrt(var.mean()))
    A, b = w[:, None] * D, w * t
    n = round(float(np.asarray(N).sum()))
    est = oracle.estimate(np.clip(oracle.counts_from_sketch(Y), 0, n), n)

    def wls(f, estimate):
        return cp.sum_squares(A @ f - b)

    with warnings.catch_warnings():  # Σ f ≤ 1 replaces the simplex on purpose (module notes)
        warnings.filterwarnings("ignore", category=SimplexDroppedWarning)
        problem = Problem(est, wls, [NonNegative(), SubsetSum(np.arange(oracle.d), 1.0, "<=")])
    return problem.solve(solver=solver, **solve_options)
