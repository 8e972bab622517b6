"""Recovery of genuine frequencies from a poisoned estimate, as closed forms and as ldpopt problems.

Notes: docs/notes/poisoning.md, "ldpopt.robust.recover"."""

from __future__ import annotations

import math

import numpy as np

from ..estimate import check_estimate
from ..methods.normalize import project_simplex
from ..problems import Box, Fixed, Problem, Simplex
from ..problems.solvers.structured import SeparableObjective
from .attacks import check_beta, mixture_offset

__all__ = ["METHODS", "ldprecover", "ldprecover_target", "lift", "mixture_offset", "mixture_problem", "recover",
           "recovery_problem", "rsn", "rsn_threshold"]

METHODS = ("ldprecover", "rsn", "mixture", "lift")


def least_squares_to(target: np.ndarray) -> SeparableObjective:
    """Σ_v (f_v − t_v)² as a :class:`SeparableObjective` (structured solver and cvxpy)."""
    import cvxpy as cp

    t = np.asarray(target, dtype=np.float64)
    return SeparableObjective(lambda f, e: (f - t) ** 2, lambda f, e: 2 * (f - t), lambda f, e: np.full_like(f, 2.0),
                              name="least-squares-to-target", curvature=lambda lo, hi, e: np.full(t.shape, 2.0),
                              cvxpy_expr=lambda f, e: cp.sum_squares(f - t))


# -- LDPRecover ---------------------------------------------------------------------------------
def ldprecover_target(estimate, beta: float) -> np.ndarray:
    r""":math:`\tilde f_X = (1 + η) \tilde f - η \tilde f_Y`, η = β/(1 − β), :math:`\tilde f_Y` even on :math:`D_1` with total (1 − dq)/(p − q).

    LDPRecover's genuine frequency estimator (Sun et al., arXiv 2403.09351; module notes).

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    beta : float
        The fake users' fraction β of all users, in [0, 1).

    Returns
    -------
    ndarray, shape (d,)

    Raises
    ------
    ValueError
        A bad estimate or β.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> from ldpopt.robust.recover import ldprecover_target
    >>> ldprecover_target(est, 0.1)[13:].round(3)
    array([0.632, 0.602, 0.64 ])
    """
    est = check_estimate(estimate)
    beta = check_beta(beta)
    eta = beta / (1.0 - beta)
    pos = est.f_tilde > 0
    f_y = np.where(pos, (1.0 - est.d * est.q) / ((est.p - est.q) * max(int(pos.sum()), 1)), 0.0)
    return (1.0 + eta) * est.f_tilde - eta * f_y


def ldprecover(estimate, beta: float) -> np.ndarray:
    """LDPRecover's closed form: the simplex projection of :func:`ldprecover_target`.

    Sun et al., arXiv 2403.09351 (module notes).

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    beta : float
        The fake users' fraction β of all users, in [0, 1).

    Returns
    -------
    ndarray, shape (d,)
        On the simplex.

    Raises
    ------
    ValueError
        A bad estimate or β.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> robust.ldprecover(est, 0.1)[13:].round(3)
    array([0.32 , 0.291, 0.328])
    """
    return project_simplex(ldprecover_target(estimate, beta))


# -- RSN ------------------------------------------------------------------------------------------
def rsn_threshold(estimate) -> float:
    """τ = 2x, x the positive root of n(p − q)²x² − 4(a − b)x − 4b = 0, a = p(1 − p), b = q(1 − q)
    (module notes).

    RSN's threshold (Li, Li, Wang & Sun, CCS 2025, arXiv 2506.02156).

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A bad estimate.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> from ldpopt.robust.recover import rsn_threshold
    >>> round(rsn_threshold(est), 4)
    0.1843
    """
    est = check_estimate(estimate)
    p, q, n = est.p, est.q, est.n
    a, b = p * (1 - p), q * (1 - q)
    A = n * (p - q) ** 2
    x = (4 * (a - b) + math.sqrt(16 * (a - b) ** 2 + 16 * A * b)) / (2 * A)
    return 2.0 * x


def _rsn_parts(estimate):
    est = check_estimate(estimate)
    t = est.f_tilde + (1.0 - est.f_tilde.sum()) / est.d
    high = np.flatnonzero(t >= rsn_threshold(est))
    return est, t, high


def rsn(estimate) -> np.ndarray:
    """RSN's closed form: high values kept at :math:`t_H`, the others projected onto the simplex slice of
    total :math:`1 - Σ t_H` (all zero when that total is ≤ 0).

    Segmented Norm-Sub (Li, Li, Wang & Sun, CCS 2025, arXiv 2506.02156; module notes).

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).

    Returns
    -------
    ndarray, shape (d,)

    Raises
    ------
    ValueError
        A bad estimate.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> robust.rsn(est)[13:].round(3)
    array([0.339, 0.315, 0.346])
    """
    est, t, high = _rsn_parts(estimate)
    out = t.copy()
    low = np.setdiff1d(np.arange(est.d), high)
    rest = 1.0 - t[high].sum()
    if rest <= 0:  # the kept values alone exceed one: the anchors' final rescaling, low values at 0
        out[low] = 0.0
        return out / out.sum()
    out[low] = project_simplex(t[low], total=rest) if low.size else 0.0
    return out


# -- the mixture model ------------------------------------------------------------------------------
def _mixture_parts(estimate, beta, suspects, offset):
    est = check_estimate(estimate)
    beta = check_beta(beta)
    s = np.unique(np.asarray(suspects, dtype=np.int64).ravel())
    if s.size == 0 or s.min() < 0 or s.max() >= est.d:
        raise ValueError(f"suspects must be a non-empty set of values in [0, {est.d})")
    if s.size >= est.d:
        raise ValueError("suspects must leave at least one value unsuspected")
    if isinstance(offset, str) and offset == "auto":
        offset = mixture_offset(est, beta, s)
    if isinstance(offset, bool) or not isinstance(offset, (int, float)) or not math.isfinite(offset):
        raise ValueError(f"offset must be 'auto' or a finite number, got {offset!r}")
    t = (est.f_tilde - beta * float(offset)) / (1.0 - beta)
    weight = np.ones(est.d)
    weight[s] = s.size / (1000.0 * est.d)
    target = t.copy()
    target[s] = t[s]
    upper = np.ones(est.d)
    upper[s] = np.clip(t[s], 0.0, 1.0)
    return est, target, weight, upper, s


def mixture_problem(estimate, beta: float, suspects, offset="auto") -> Problem:
    """The mixture recovery (module notes) as a :class:`Problem`."""
    import cvxpy as cp

    est, target, w, upper, _ = _mixture_parts(estimate, beta, suspects, offset)
    obj = SeparableObjective(lambda f, e: w * (f - target) ** 2, lambda f, e: 2 * w * (f - target),
                             lambda f, e: 2 * w, name="mixture", curvature=lambda lo, hi, e: 2 * w,
                             cvxpy_expr=lambda f, e: cp.sum(cp.multiply(w, cp.square(f - target))))
    return Problem(est, obj, [Simplex(), Box(upper=upper)])


def lift(estimate, beta: float, suspects=None) -> np.ndarray:
    """The common-lift recovery's closed form: the simplex projection of :func:`.lift.lift_target`.

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    beta : float
        The fake users' fraction β of all users, in [0, 1).
    suspects : array_like of int, optional
        The suspect set (default :func:`lift_suspects`).

    Returns
    -------
    ndarray, shape (d,)
        On the simplex.

    Raises
    ------
    ValueError
        A bad estimate, β or suspects.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> robust.lift(est, 0.1, suspects=[13, 14, 15])[13:].round(3)
    array([0.055, 0.055, 0.055])
    """
    from .lift import lift_target

    return project_simplex(lift_target(estimate, beta, suspects))


# -- one entry point ----------------------------------------------------------------------------------
def recovery_problem(estimate, method: str, beta: float | None = None, suspects=None, offset="auto") -> Problem:
    """The :class:`Problem` whose solution is ``method``'s recovery (``beta`` for ldprecover, mixture
    and lift, ``suspects`` for mixture and, optionally, lift).

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    method : {"ldprecover", "rsn", "mixture", "lift"}
        The recovery (module notes).
    beta : float, optional
        The fake users' fraction; required by ldprecover, mixture and lift.
    suspects : array_like of int, optional
        The suspect set; required by mixture.
    offset : "auto" or float, default "auto"
        The mixture's y₀ (:func:`mixture_offset` when ``"auto"``).

    Returns
    -------
    Problem

    Raises
    ------
    ValueError
        An unknown method, a missing ``beta``/``suspects``, or bad arguments.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> from ldpopt.robust.recover import recovery_problem
    >>> recovery_problem(est, "ldprecover", beta=0.1).solve().f[13:].round(3)
    array([0.32 , 0.291, 0.328])
    """
    method = _check_method(method)
    if method == "lift":
        from .lift import lift_target

        est = check_estimate(estimate)
        return Problem(est, least_squares_to(lift_target(est, _need(beta, "beta", method), suspects)), [Simplex()])
    if method == "ldprecover":
        est = check_estimate(estimate)
        return Problem(est, least_squares_to(ldprecover_target(est, _need(beta, "beta", method))), [Simplex()])
    if method == "rsn":
        est, t, high = _rsn_parts(estimate)
        if t[high].sum() >= 1.0:  # kept values exceed one: their rescaling, the rest fixed at 0
            t = np.where(np.isin(np.arange(est.d), high), t / t[high].sum(), 0.0)
            high = np.flatnonzero(t == 0.0)
        cons = [Simplex()] + ([Fixed(high, t[high])] if high.size else [])
        return Problem(est, least_squares_to(t), cons)
    return mixture_problem(estimate, _need(beta, "beta", method), _need(suspects, "suspects", method), offset)


def recover(estimate, method: str, beta: float | None = None, suspects=None, offset="auto", **solve_options):
    """Solve :func:`recovery_problem` (ldpopt's check on the answer: ``Solution.status``).

    Parameters
    ----------
    estimate, method, beta, suspects, offset
        As in :func:`recovery_problem`.
    **solve_options
        Passed to :meth:`Problem.solve <ldpopt.problems.Problem.solve>`.

    Returns
    -------
    Solution

    Raises
    ------
    ValueError
        As :func:`recovery_problem`.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> sol = robust.recover(est, "mixture", beta=0.1, suspects=[13, 14, 15])
    >>> sol.status, sol.f[13:].round(3)
    ('optimal', array([0.036, 0.006, 0.044]))
    """
    return recovery_problem(estimate, method, beta, suspects, offset).solve(**solve_options)


def _check_method(method) -> str:
    if not isinstance(method, str) or method.lower() not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    return method.lower()


def _need(value, name: str, method: str):
    if value is None:
        raise ValueError(f"{name} is required by the {method} recovery")
    return value
