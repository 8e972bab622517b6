"""ldpopt's convex alternative to EMS: the exact likelihood of the binned reports with a smoothness
penalty, on the simplex, and λ chosen by held-out likelihood over report splits.

Notes: docs/notes/python.md, "ldpopt.numeric.penalized"."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import as_generator
from ..methods.normalize import project_simplex
from .em import _check

__all__ = ["DEFAULT_LAMBDAS", "PenalizedResult", "choose_lambda", "penalized_mle", "penalized_objective"]

DEFAULT_LAMBDAS = tuple(float(x) for x in np.logspace(-11, -6, 6))


@dataclass
class PenalizedResult:
    """``f``; ``lam``; ``objective`` :math:`J_λ(f)`; ``gap`` (Frank–Wolfe gap, :math:`≥ J_λ(f) - J^*`); ``converged``
    (gap ≤ tol); ``nit``; ``cv`` (λ → held-out log-likelihood, when λ was chosen).

    Returned by :func:`penalized_mle` and :func:`choose_lambda`.

    Parameters
    ----------
    f : ndarray, shape (d,)
        The fitted distribution.
    lam : float
        The penalty weight λ.
    objective : float
        :math:`J_λ(f)`.
    gap : float
        The Frank–Wolfe gap, an upper bound on :math:`J_λ(f) - J^*`.
    converged : bool
        Whether ``gap <= tol``.
    nit : int
        Newton iterations.
    cv : dict, optional
        λ to held-out log-likelihood (from :func:`choose_lambda`).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import numeric
    >>> sw = numeric.SquareWave(1.0)
    >>> values = np.random.default_rng(0).beta(5, 2, size=5000)
    >>> counts = sw.bin_reports(sw.perturb(values, rng=1), 16)
    >>> K = sw.channel(8, 16)
    >>> res = numeric.penalized_mle(counts, K, 1e-8)
    >>> res.converged, bool(res.gap <= 1e-8)
    (True, True)
    """

    f: np.ndarray
    lam: float
    objective: float
    gap: float
    converged: bool
    nit: int
    cv: dict = field(default_factory=dict)


def _d2_gram(d: int) -> np.ndarray:
    """D₂ᵀD₂ as a dense (d × d) matrix (banded, 5 diagonals)."""
    D = np.zeros((d - 2, d))
    i = np.arange(d - 2)
    D[i, i], D[i, i + 1], D[i, i + 2] = 1.0, -2.0, 1.0
    return D.T @ D


def penalized_objective(f, counts, channel, lam: float) -> float:
    """J_λ(f) of the module notes (numpy; +inf where some (K f)_j ≤ 0 with c_j > 0)."""
    c, K = _check(counts, channel)
    f = np.asarray(f, dtype=np.float64)
    d = K.shape[1]
    pos = c > 0
    m = K[pos] @ f
    if np.any(m <= 0):
        return np.inf
    d2 = f[:-2] - 2 * f[1:-1] + f[2:]
    return float(-(c[pos] @ np.log(m)) / c.sum() + lam * d**5 * (d2 @ d2))


def _newton(c, K, lam, f0, tol, max_iter):
    """Active-set projected Newton on the simplex: on the free set F (values > 0, plus values at 0
    whose gradient is below the last multiplier) the Newton step solves the equality-constrained KKT
    system [[H_FF, 1], [1ᵀ, 0]] exactly (dense; H is the exact Hessian), the step is cut at the
    boundary (values reaching 0 leave F) and damped by Armijo backtracking on J_λ."""
    n = c.sum()
    pos = c > 0
    Kp, w = K[pos], c[pos] / n
    d = K.shape[1]
    P = 2.0 * lam * d**5 * _d2_gram(d)

    def value(f):
        m = Kp @ f
        return np.inf if np.any(m <= 0) else float(-(w @ np.log(m)) + 0.5 * f @ P @ f)

    x = project_simplex(np.asarray(f0, dtype=np.float64))
    x = 0.5 * x + 0.5 / d  # strictly inside: every (K x)_j > 0, no value pinned at 0 from the start
    fx = value(x)
    nit, mu = 0, None
    for nit in range(1, int(max_iter) + 1):
        m = Kp @ x
        g = -(Kp.T @ (w / m)) + P @ x
        supp = x > 0
        if float(g @ x - g.min()) <= tol:
            break
        mu = float(np.min(g[supp])) if mu is None else mu  # the multiplier of Σf = 1 (last solve)
        free = supp | (g < mu)
        Hl = (Kp.T * (w / (m * m))) @ Kp + P
        while True:  # drop values at 0 that the step would push below 0, re-solve
            idx = np.flatnonzero(free)
            k = idx.size
            A = np.zeros((k + 1, k + 1))
            A[:k, :k], A[:k, k], A[k, :k] = Hl[np.ix_(idx, idx)], 1.0, 1.0
            sol = np.linalg.solve(A, np.concatenate([-g[idx], [0.0]]))
            bad = idx[(sol[:k] < 0) & ~supp[idx]]
            if bad.size == 0:
                break
            free[bad] = False
        mu = -float(sol[k])
        dirn = np.zeros(d)
        dirn[idx] = sol[:k]
        slope = float(g @ dirn)
        if not slope < 0:  # not a descent direction (rounding at the optimum): projected gradient
            dirn = project_simplex(x - g / np.max(np.abs(np.diag(P)) + 1.0 + np.abs(g).max())) - x
            slope = float(g @ dirn)
            if not slope < 0:
                break
        neg = dirn < 0
        ratio = np.where(neg, -x / np.where(neg, dirn, -1.0), np.inf)
        hit = int(np.argmin(ratio))
        cap = float(ratio[hit])
        step = min(1.0, cap)
        while step > 1e-14:
            z = x + step * dirn
            if step == cap:
                z[hit] = 0.0  # land exactly on the face the step was cut at
            z = np.maximum(z, 0.0)
            z /= z.sum()
            fz = value(z)
            if fz <= fx + 1e-4 * step * slope:
                break
            step *= 0.5
        else:
            break  # no decrease at rounding level: report the gap reached
        x, fx = z, fz
    m = Kp @ x
    g = -(Kp.T @ (w / m)) + P @ x
    return x, value(x), float(g @ x - g.min()), nit


def penalized_mle(counts, channel, lam: float, *, f0=None, tol: float = 1e-8,
                  max_iter: int = 100) -> PenalizedResult:
    r"""Minimise :math:`J_λ` on the simplex (module notes); ``f0`` a warm start (default uniform).

    ``tol`` bounds the certified suboptimality :math:`J_λ(f) - J^*` (per-user log-likelihood units).

    ldpopt's convex alternative to Li et al.'s EMS (SIGMOD 2020 §5.2): :math:`J_λ(f) = -(1/n) Σ_j c_j \log (K f)_j + λ d^5 \lVert D_2 f \rVert^2`,
    solved by active-set projected Newton (module notes).

    Parameters
    ----------
    counts : array_like, shape (``d_out``,)
        Binned report counts (:meth:`SquareWave.bin_reports`), non-negative, positive total.
    channel : array_like, shape (``d_out``, d)
        K[j, i] = P(report bin j | value bin i), columns summing to 1 (:meth:`SquareWave.channel`).
    lam : float
        λ, finite and >= 0.
    f0 : array_like, shape (d,), optional
        Warm start (keyword-only; default uniform).
    tol : float, default 1e-8
        Target Frank–Wolfe gap.
    max_iter : int, default 100
        Newton iteration cap.

    Returns
    -------
    PenalizedResult

    Raises
    ------
    ValueError
        A bad channel or counts (as :func:`em`), ``lam`` negative, ``tol <= 0`` or ``f0`` of the
        wrong length.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import numeric
    >>> sw = numeric.SquareWave(1.0)
    >>> values = np.random.default_rng(0).beta(5, 2, size=5000)
    >>> counts = sw.bin_reports(sw.perturb(values, rng=1), 16)
    >>> K = sw.channel(8, 16)
    >>> numeric.penalized_mle(counts, K, 1.0).f.round(3)  # a large λ: nearly a straight line
    array([0.   , 0.036, 0.071, 0.107, 0.143, 0.179, 0.214, 0.25 ])
    """
    c, K = _check(counts, channel)
    if not (np.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam must be finite and >= 0, got {lam!r}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be finite and > 0, got {tol!r}")
    d = K.shape[1]
    f0 = np.full(d, 1.0 / d) if f0 is None else np.asarray(f0, dtype=np.float64)
    if f0.shape != (d,):
        raise ValueError(f"f0 must have length d = {d}, got shape {f0.shape}")
    f, val, gap, nit = _newton(c, K, float(lam), f0, tol, max_iter)
    return PenalizedResult(f=f, lam=float(lam), objective=val, gap=gap, converged=gap <= tol, nit=nit)


def choose_lambda(counts, channel, *, lambdas=DEFAULT_LAMBDAS, folds: int = 2, rng, tol: float = 1e-8,
                  max_iter: int = 100) -> PenalizedResult:
    """λ by ``folds``-fold held-out likelihood over report splits, then the fit on all counts.

    Folds by multinomial thinning of the bin counts (the law of a random split of the users); the
    best λ on the grid is refit on all counts (module notes).

    Parameters
    ----------
    counts : array_like, shape (``d_out``,)
        Binned report counts (:meth:`SquareWave.bin_reports`), non-negative, positive total.
    channel : array_like, shape (``d_out``, d)
        K[j, i] = P(report bin j | value bin i), columns summing to 1 (:meth:`SquareWave.channel`).
    lambdas : sequence of float, default DEFAULT_LAMBDAS
        The grid, finite and >= 0 (keyword-only; default 1e-11 … 1e-6).
    folds : int, default 2
        Number of folds, >= 2.
    rng : int or numpy.random.Generator
        Randomness of the split.
    tol : float, default 1e-8
        Passed to :func:`penalized_mle`.
    max_iter : int, default 100
        Passed to :func:`penalized_mle`.

    Returns
    -------
    PenalizedResult
        The fit at the chosen λ, with ``cv`` the score of every λ.

    Raises
    ------
    ValueError
        A bad channel or counts, an empty or negative grid, or ``folds < 2``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import numeric
    >>> sw = numeric.SquareWave(1.0)
    >>> values = np.random.default_rng(0).beta(5, 2, size=5000)
    >>> counts = sw.bin_reports(sw.perturb(values, rng=1), 16)
    >>> K = sw.channel(8, 16)
    >>> res = numeric.choose_lambda(counts, K, rng=0)
    >>> res.lam, len(res.cv)
    (1e-06, 6)
    """
    c, K = _check(counts, channel)
    lams = sorted(float(x) for x in lambdas)
    if not lams or any(not (np.isfinite(x) and x >= 0) for x in lams):
        raise ValueError(f"lambdas must be a non-empty list of finite numbers >= 0, got {lambdas!r}")
    if int(folds) < 2:
        raise ValueError(f"folds must be an integer >= 2, got {folds!r}")
    k = int(folds)
    gen = as_generator(rng)
    split = gen.multinomial(np.round(c).astype(np.int64), np.full(k, 1.0 / k))  # (d_out, k)
    score = dict.fromkeys(lams, 0.0)
    for fold in range(k):
        test = split[:, fold].astype(np.float64)
        train = c - test
        f = None
        for lam in reversed(lams):  # smooth to rough: each fit warm-starts the next
            f = penalized_mle(train, K, lam, f0=f, tol=tol, max_iter=max_iter).f
            m = K @ f
            score[lam] += float(test[test > 0] @ np.log(m[test > 0]))
    best = max(lams, key=lambda x: score[x])
    res = penalized_mle(c, K, best, tol=tol, max_iter=max_iter)
    res.cv = score
    return res
