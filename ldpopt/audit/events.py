"""Three fixed events on one pair: the first audit of an oracle's real ``perturb`` (what each report
supports only; :func:`ldpopt.audit.audit_client` reads every field, over rounds).

Notes: docs/notes/reliability.md, "ldpopt.audit"."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import as_generator, check_n
from ..oracles.base import FrequencyOracle
from .bounds import clopper_pearson

__all__ = ["AuditResult", "audit"]

EVENTS = ("supports v and not v'", "supports v", "does not support v'")


@dataclass(frozen=True)
class AuditResult:
    """``epsilon_lb``: the lower bound (−inf when no event is seen under v); ``claimed``: the oracle's
    ε; ``event``: the event that gave it; ``hits``: per event, (x under v, x′ under v′). Returned by
    :func:`audit`.

    Parameters
    ----------
    oracle : str
        Registry name of the audited oracle.
    claimed : float
        Its claimed ε.
    epsilon_lb : float
        The lower bound.
    event : str
        The event of :data:`EVENTS` that gave it.
    pair : tuple of int
        (v, v′).
    trials : int
        Runs per input.
    alpha : float
        1 − confidence.
    hits : dict
        Per event, (x, x′).

    Examples
    --------
    >>> from ldpopt import oracles
    >>> from ldpopt.audit import audit
    >>> r = audit(oracles.get("grr", 1.0, 4), trials=5_000, rng=0)
    >>> r.event, round(r.epsilon_lb, 3), r.violated
    ("supports v and not v'", 0.872, False)
    """

    oracle: str
    claimed: float
    epsilon_lb: float
    event: str
    pair: tuple[int, int]
    trials: int
    alpha: float
    hits: dict = field(default_factory=dict)

    @property
    def violated(self) -> bool:
        """True when the real randomiser is provably (at confidence 1 − α) less private than claimed.

        Examples
        --------
        >>> from ldpopt.audit import AuditResult
        >>> AuditResult("grr", claimed=1.0, epsilon_lb=1.2, event="supports v", pair=(0, 1), trials=100, alpha=1e-3).violated
        True
        """
        return self.epsilon_lb > self.claimed


def _event_hits(oracle: FrequencyOracle, value: int, v: int, v2: int, trials: int, gen, chunk: int):
    hits = np.zeros(len(EVENTS), dtype=np.int64)
    for start in range(0, trials, chunk):
        m = min(chunk, trials - start)
        S = oracle.support_matrix(oracle.perturb(np.full(m, value, dtype=np.int64), gen))
        a, b = S[:, v], S[:, v2]
        hits += [np.count_nonzero(a & ~b), np.count_nonzero(a), np.count_nonzero(~b)]
    return hits


def audit(oracle: FrequencyOracle, v: int = 0, v_prime: int = 1, *, trials: int = 200_000,
          alpha: float = 1e-3, rng=0) -> AuditResult:
    """Lower-bound the ε of ``oracle.perturb`` from ``trials`` runs on v and on v′ (module notes).

    Parameters
    ----------
    oracle : FrequencyOracle
        Any oracle implementing ``perturb`` and ``support_matrix``.
    v, v_prime : int
        The pair of inputs (distinct, in [0, d)). Every ldpopt oracle is symmetric in the values, so
        (0, 1) is a worst pair.
    trials : int
        Runs of the randomiser per input.
    alpha : float
        1 − confidence of the bound (0 < α < 1), split over the events and the two intervals.
    rng : int, Generator or "secure"
        Randomness of the runs (see :func:`ldpopt._validation.as_generator`).

    Returns
    -------
    AuditResult

    Raises
    ------
    TypeError
        If ``oracle`` is not a :class:`~ldpopt.oracles.FrequencyOracle`.
    ValueError
        If ``v``/``v_prime`` is not in [0, d) or they are equal, ``trials`` < 1, or ``alpha`` is
        not in (0, 1).

    Examples
    --------
    >>> from ldpopt import oracles
    >>> from ldpopt.audit import audit
    >>> r = audit(oracles.get("oue", 1.0, 8), trials=2_000, rng=0)
    >>> round(r.epsilon_lb, 3) <= r.claimed, r.hits[r.event][0] > r.hits[r.event][1]
    (True, True)
    """
    if not isinstance(oracle, FrequencyOracle):
        raise TypeError(f"oracle must be an ldpopt FrequencyOracle, got {type(oracle).__name__}")
    for name, val in (("v", v), ("v_prime", v_prime)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or not 0 <= int(val) < oracle.d:
            raise ValueError(f"{name} must be an integer in [0, {oracle.d}), got {val!r}")
    v, v2 = int(v), int(v_prime)
    if v == v2:
        raise ValueError(f"v and v_prime must differ, got {v} twice")
    trials = check_n(trials, "trials")
    a = float(alpha)
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    gen = as_generator(rng)
    chunk = max(1, min(trials, (1 << 23) // oracle.d))  # support matrices of ≤ 8 MB
    x1 = _event_hits(oracle, v, v, v2, trials, gen, chunk)
    x2 = _event_hits(oracle, v2, v, v2, trials, gen, chunk)
    side = a / (2 * len(EVENTS))
    best, best_event, hits = -math.inf, EVENTS[0], {}
    for i, name in enumerate(EVENTS):
        lo, _ = clopper_pearson(int(x1[i]), trials, side)
        _, hi = clopper_pearson(int(x2[i]), trials, side)
        hits[name] = (int(x1[i]), int(x2[i]))
        lb = math.log(lo / hi) if lo > 0 else -math.inf
        if lb > best:
            best, best_event = lb, name
    return AuditResult(oracle.name, oracle.epsilon, best, best_event, (v, v2), trials, a, hits)
