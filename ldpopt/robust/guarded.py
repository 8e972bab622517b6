"""The lift without a trusted β: β estimated from the suspect cluster, and a floor that keeps genuine mass.

Notes: docs/notes/poisoning.md, "ldpopt.robust.guarded"."""

from __future__ import annotations

import numpy as np

from .._validation import _check_int
from ..estimate import check_estimate
from ..methods.normalize import project_simplex
from .attacks import check_beta, mean_target_support, mixture_offset
from .evidence import attack_evidence
from .lift import lift_suspects

__all__ = ["estimate_beta", "guarded_lift"]

#: the generous bound under which the cluster is looked for (module notes)
BETA_MAX = 0.5
#: the evidence test's default false-alarm rate (:func:`guarded_lift`): a false alarm on clean data
#: can cost the whole mass of a tied pair, so the rate is kept small
ALPHA = 1e-4


def estimate_beta(estimate, oracle=None, beta_max: float = BETA_MAX, min_size: int = 2) -> float:
    """β̂ of the module notes: the smallest fake-user fraction that explains the suspect cluster.

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    oracle : FrequencyOracle, optional
        The oracle, for the maximal gain attack's mean target support (default: every suspect).
    beta_max : float, default 0.5
        The bound the cluster is looked for under, and the largest β̂, in (0, 1).
    min_size : int, default 2
        Fewest members of the cluster.

    Returns
    -------
    float
        In [0, ``beta_max``].

    Raises
    ------
    ValueError
        A bad estimate, ``beta_max`` or ``min_size``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=64)
    >>> genuine = np.array([4000, 3000, 2000, 1000] + [500] * 60)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[60, 61, 62, 63], beta=0.05, rng=0)
    >>> round(robust.estimate_beta(est, oue), 3)
    0.048
    """
    est = check_estimate(estimate)
    beta_max = check_beta(beta_max)
    if beta_max == 0.0:
        raise ValueError("beta_max must be positive")
    min_size = _check_int(min_size, "min_size", 1)
    s = lift_suspects(est, beta_max, min_size=max(min_size, 2))
    if s.size == 0:
        return 0.0
    k = s.size
    s_bar = float(k) if oracle is None else mean_target_support(oracle, "mga", s)
    per_unit = (s_bar - k * est.q) / (est.p - est.q) - k / est.d
    b = (float(est.f_tilde[s].sum()) - k / est.d) / per_unit
    return float(min(max(b, 0.0), beta_max))


def guarded_lift(estimate, beta: float | None = None, oracle=None, min_size: int = 2,
                 alpha: float | None = ALPHA) -> np.ndarray:
    """The guarded lift of the module notes (β given, or :func:`estimate_beta` when None).

    With β estimated, the lift acts only on evidence of an attack: when the p-value of
    :func:`~.evidence.attack_evidence` (support or negative mass beyond honest sampling noise) is
    not below ``alpha``, β̂ is taken as 0 and the answer is Norm-Sub's (the simplex projection of
    f̃). A cluster of equal estimates alone is no evidence: genuinely tied popular values make one.

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    beta : float, optional
        The fake users' fraction; estimated from the reports when None.
    oracle : FrequencyOracle, optional
        Passed to :func:`estimate_beta`.
    min_size : int, default 2
        Fewest members of a suspect chain.
    alpha : float or None, default 1e-4
        The false-alarm rate of the evidence test when β is estimated (None: no test, the cluster
        alone decides, as before the test). Ignored when β is given.

    Returns
    -------
    ndarray, shape (d,)
        On the simplex.

    Raises
    ------
    ValueError
        A bad estimate, β, ``min_size`` or ``alpha``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=64)
    >>> genuine = np.array([4000, 3000, 2000, 1000] + [500] * 60)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[60, 61, 62, 63], beta=0.05, rng=0)
    >>> robust.attack_evidence(est, oue)["p_value"] > 1e-4  # a flat genuine tail: no evidence to act on
    True
    >>> f = robust.guarded_lift(est, oracle=oue)  # so the default is Norm-Sub's answer
    >>> round(float(est.f_tilde[60:].sum()), 2), round(float(f[60:].sum()), 2)
    (0.67, 0.66)
    >>> f = robust.guarded_lift(est, oracle=oue, alpha=None)  # the cluster alone decides (genuine: 0.05)
    >>> round(float(f[60:].sum()), 2)
    0.07
    """
    est = check_estimate(estimate)
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1):
        raise ValueError(f"alpha must be None or a number in (0, 1), got {alpha!r}")
    min_size = _check_int(min_size, "min_size", 2)
    if beta is None and alpha is not None and attack_evidence(est, oracle)["p_value"] >= alpha:
        return project_simplex(est.f_tilde)
    b = estimate_beta(est, oracle, min_size=min_size) if beta is None else check_beta(beta)
    s = lift_suspects(est, b, min_size=min_size) if b > 0 else np.zeros(0, dtype=np.int64)
    t = (est.f_tilde - b * mixture_offset(est, b, s)) / (1.0 - b)
    if s.size:
        floor = (est.f_tilde[s] - b * (1.0 - est.q) / (est.p - est.q)) / (1.0 - b)
        t[s] = np.maximum(floor, 1.0 / est.d)
    return project_simplex(t)
