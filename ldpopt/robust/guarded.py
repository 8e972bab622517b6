"""The lift without a trusted β: β estimated from the suspect cluster, and a floor that keeps genuine mass.

Notes: docs/notes/poisoning.md, "ldpopt.robust.guarded"."""

from __future__ import annotations

import math

import numpy as np

from .._validation import _check_int
from ..estimate import check_estimate
from ..methods.normalize import project_simplex
from .attacks import check_beta, mean_target_support, mixture_offset
from .evidence import attack_evidence, evidence_of
from .forms import form_of
from .lift import lift_suspects

__all__ = ["estimate_beta", "explained_beta", "guarded_lift"]

#: the generous bound under which the cluster is looked for (module notes)
BETA_MAX = 0.5
#: the evidence test's default false-alarm rate (:func:`guarded_lift`): a false alarm on clean data
#: can cost the whole mass of a tied pair, so the rate is kept small
ALPHA = 1e-4
#: the level at which an attack explains the evidence (:func:`explained_beta`):
#: with its expected counts removed, the rest must look genuine at this level
EXPLAIN_LEVEL = 1e-2


def _left_pvalue(est, oracle, m: float, rate: np.ndarray, exclude=None) -> float:
    """The evidence p-value of the N − m reports left when m reports with per-value support rate
    ``rate`` (their expected counts) are removed; the negative-mass test off ``exclude`` (the
    suspects, whose genuine values the hypothesis leaves unknown), with the removed counts' variance
    m·rate(1 − rate) added to each value's."""
    N = float(est.n)
    n_left = N - m
    counts = (est.f_tilde * (est.p - est.q) + est.q) * N - m * rate
    f_left = (counts / n_left - est.q) / (est.p - est.q)
    extra = m * rate * (1.0 - rate) / (n_left * (est.p - est.q)) ** 2
    return float(evidence_of(f_left, n_left, oracle, exclude=exclude, extra_var=extra, two_sided=True)["p_value"])


def explained_beta(estimate, beta: float, suspects, oracle=None) -> float:
    """The largest attack on ``suspects`` up to β̂ that explains the evidence, if nothing that erases
    no value explains it as cheaply; 0 otherwise (module notes of :func:`guarded_lift`).

    An attack explains the evidence when, with its expected support counts removed, the reports left
    pass :func:`~.evidence.attack_evidence` at level ``EXPLAIN_LEVEL``, its negative-mass test off
    the suspects and two-sided (too little negative mass: an attack larger than the one there). The
    attack the lift would remove is MGA on the suspects (rate s̄/k on each, MGA's own padding rate
    elsewhere) by βN fake users; β is searched on β̂·2⁻ᵏ, k = 0 … 12, largest first, then the
    half-step above the first that explains it. The attacks that erase nothing are
    m reports that support every value alike at rate ρ ∈ {0, ¼, ½, ¾, 1} (ρ = 0: an overstated n or
    empty reports; ρ = 1: every bit set), m fixed by the total support. When one of those explains
    the evidence with no more fake users, the evidence does not point at the suspects.

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate.
    beta : float
        The cluster's β̂ (:func:`estimate_beta`): the largest β tried, in (0, 1).
    suspects : array_like of int
        The values the lift would erase.
    oracle : FrequencyOracle, optional
        Its oracle (default: rebuilt from the estimate).

    Returns
    -------
    float
        The β to lift with, in [0, ``beta``]; 0 also where the oracle's report form states no MGA
        padding rate.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> grr = oracles.get("grr", epsilon=2.0, d=128)
    >>> genuine = (10_000 * 0.5 ** np.arange(128)).astype(int) + 200
    >>> est = robust.poisoned_estimate(grr, genuine, "mga", targets=[60, 61, 62], beta=0.05, rng=0)
    >>> b = robust.explained_beta(est, 0.05, [60, 61, 62], grr)
    >>> 0 < b <= 0.05
    True
    >>> overstated = grr.estimate(grr.sample_counts(genuine, 0), int(genuine.sum() * 1.003))
    >>> robust.explained_beta(overstated, 0.05, [0, 1], grr)  # an overstated n explains it, not an attack
    0.0
    """
    est = check_estimate(estimate)
    beta = check_beta(beta)
    if oracle is None:
        from ..uncertainty.resample import oracle_of

        oracle = oracle_of(est)
    s = np.unique(np.asarray(suspects, dtype=np.int64).ravel())
    if beta == 0.0 or s.size == 0:
        return 0.0
    try:
        other = float(form_of(oracle).mga_other_rate(oracle, s))
        s_bar = float(mean_target_support(oracle, "mga", s))
    except (ValueError, NotImplementedError, AttributeError):
        return 0.0
    N, d = float(est.n), est.d
    rate = np.full(d, other)
    rate[s] = s_bar / s.size
    found = 0.0
    for k in range(13):  # the largest β̂·2^(−k/2) that explains it: whole powers first, then the half between
        b = beta * 2.0 ** -k
        if _left_pvalue(est, oracle, b * N, rate, exclude=s) >= EXPLAIN_LEVEL:
            half = b * math.sqrt(2.0)
            found = half if k and _left_pvalue(est, oracle, half * N, rate, exclude=s) >= EXPLAIN_LEVEL else b
            break
    if found == 0.0:
        return 0.0
    try:
        pmf = np.asarray(oracle.support_size_pmf(), dtype=np.float64)
        mu = float(pmf @ np.arange(pmf.size))
    except (ValueError, NotImplementedError, AttributeError):
        return found
    excess = float(est.f_tilde.sum()) * (est.p - est.q) * N + d * est.q * N - N * mu  # Σ C − Nμ
    for rho in (0.0, 0.25, 0.5, 0.75, 1.0):
        per = rho * d - mu                               # each such report's excess support
        if abs(per) < 1e-9 or excess / per <= 0:
            continue
        m = excess / per
        if m <= found * N and m < N and _left_pvalue(est, oracle, m, np.full(d, rho)) >= EXPLAIN_LEVEL:
            return 0.0
    return found


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
    if beta is None and alpha is not None:
        # the largest attack on s up to β̂ that the evidence points at; none (no suspects, or the
        # evidence explained otherwise): nothing to remove
        b = explained_beta(est, b, s, oracle) if s.size else 0.0
        if b == 0.0:
            return project_simplex(est.f_tilde)
    t = (est.f_tilde - b * mixture_offset(est, b, s)) / (1.0 - b)
    if s.size:
        floor = (est.f_tilde[s] - b * (1.0 - est.q) / (est.p - est.q)) / (1.0 - b)
        t[s] = np.maximum(floor, 1.0 / est.d)
    return project_simplex(t)
