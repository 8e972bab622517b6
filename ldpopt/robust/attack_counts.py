"""The support counts of fake reports without crafting them (exact in law), and poisoned estimates.

Notes: docs/notes/poisoning.md, "ldpopt.robust.attack_counts"."""

from __future__ import annotations

import numpy as np

from .._validation import _check_int, as_generator
from ..estimate import Estimate
from ..oracles.base import FrequencyOracle
from ._draws import best_bucket_pmf
from .attacks import DEFAULT_CANDIDATES, check_attack, check_targets, craft_reports, fake_user_count
from .forms import form_of

__all__ = ["best_bucket_pmf", "fake_counts", "poisoned_estimate"]

def fake_counts(oracle: FrequencyOracle, attack: str, targets, m: int, rng,
                candidates: int = DEFAULT_CANDIDATES) -> np.ndarray:
    """Support counts (int64, length d) of m fake users' reports, exact in law (module notes).

    The law of ``oracle.aggregate(craft_reports(...))`` without crafting a report per user
    (attacks of Cao, Jia & Gong, USENIX Security 2021).

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    attack : {"input", "mga", "apa"}
        Input poisoning, the maximal gain attack, or the adaptive attacks (module notes).
    targets : array_like of int
        The target set T: distinct values in [0, d), leaving at least one non-target.
    m : int
        Number of fake users, >= 0.
    rng : int, numpy.random.Generator or "secure"
        The randomness.
    candidates : int, default 1000
        Hash keys searched per fake user (OLH/BLH).

    Returns
    -------
    ndarray of int64, shape (d,)

    Raises
    ------
    ValueError
        An unknown attack, bad targets or a negative ``m``.

    Examples
    --------
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> robust.fake_counts(oue, "mga", [13, 14, 15], 5, rng=0)[13:]  # every MGA report supports all targets
    array([5, 5, 5])
    """
    attack = check_attack(attack)
    t = check_targets(targets, oracle.d)
    m = _check_int(m, "m", 0)
    gen = as_generator(rng)
    d, r = oracle.d, t.size
    if m == 0:
        return np.zeros(d, dtype=np.int64)
    others = np.setdiff1d(np.arange(d, dtype=np.int64), t)
    if attack == "apa":
        from .apa import apa_counts
        return apa_counts(oracle, t, m, gen)
    if attack == "input":
        hist = np.zeros(d, dtype=np.int64)
        hist[t] = gen.multinomial(m, np.full(r, 1.0 / r))
        return oracle.sample_counts(hist, gen)
    return form_of(oracle).mga_counts(oracle, t, others, m, gen, candidates)


def poisoned_estimate(oracle: FrequencyOracle, true_counts, attack: str, targets, beta: float, rng,
                      exact: bool = False, candidates: int = DEFAULT_CANDIDATES) -> Estimate:
    """The oracle's estimate from n genuine users (histogram ``true_counts``) plus m =
    round(βn/(1 − β)) fake users running ``attack`` on ``targets``; N = n + m users in all.

    ``exact=True`` runs the real paths (``oracle.simulate(..., exact=True)`` for the genuine users,
    :func:`~.attacks.craft_reports` then ``oracle.aggregate`` for the fake ones); ``exact=False`` the
    fast paths (``oracle.sample_counts`` and :func:`fake_counts`), the same law. ``Estimate.meta``
    records the attack, β, m and T.

    Cao, Jia & Gong, USENIX Security 2021 (the attacks and β = m/(n + m)).

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    true_counts : array_like of int, shape (d,)
        The genuine users' histogram.
    attack : {"input", "mga", "apa"}
        Input poisoning, the maximal gain attack, or the adaptive attacks (module notes).
    targets : array_like of int
        The target set T: distinct values in [0, d), leaving at least one non-target.
    beta : float
        The fake users' fraction β of all users, in [0, 1).
    rng : int, numpy.random.Generator or "secure"
        The randomness.
    exact : bool, default False
        Real report paths (True) or the fast paths of the same law.
    candidates : int, default 1000
        Hash keys searched per fake user (OLH/BLH).

    Returns
    -------
    Estimate
        Over N = n + m users; ``meta`` holds ``attack``, ``beta``, ``fake_users`` and ``targets``.

    Raises
    ------
    ValueError
        Bad counts, attack, targets or β.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> est.meta["fake_users"], est.f_tilde[13:].round(3)
    (178, array([0.365, 0.338, 0.372]))
    """
    gen = as_generator(rng)
    tc = oracle._check_true_counts(true_counts)
    n = int(tc.sum())
    m = fake_user_count(n, beta)
    t = check_targets(targets, oracle.d)
    if exact:
        genuine = oracle.simulate(tc, gen, exact=True).counts.astype(np.int64)
        fake = (oracle.aggregate(craft_reports(oracle, attack, t, m, gen, candidates)) if m
                else np.zeros(oracle.d, dtype=np.int64))
    else:
        genuine = oracle.sample_counts(tc, gen)
        fake = fake_counts(oracle, attack, t, m, gen, candidates)
    return oracle.estimate(genuine + fake, n + m, attack=check_attack(attack), beta=float(beta),
                           fake_users=m, targets=t.tolist())
