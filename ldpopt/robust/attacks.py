"""Poisoning attacks on the frequency oracles' real report paths: fake users and crafted reports.

Notes: docs/notes/poisoning.md, "ldpopt.robust.attacks"."""

from __future__ import annotations

import numpy as np

from .._validation import _check_int, as_generator, check_values
from ..estimate import check_estimate
from ..oracles.base import FrequencyOracle
from ..uncertainty.attack import check_beta
from .crafting import _SEARCH_CELLS, _olh_search, _uniform_subsets, hr_best_outputs, padding_ones, report_device  # noqa: F401  (re-exported)
from .forms import form_of

__all__ = ["ATTACKS", "check_beta", "check_targets", "craft_reports", "expected_gain", "fake_user_count",
           "fake_values", "mean_target_support", "mixture_offset", "padding_ones"]

#: the attacks of this module
ATTACKS = ("input", "mga", "apa")
#: hash keys an OLH/BLH fake user searches (module notes)
DEFAULT_CANDIDATES = 1000


def check_targets(targets, d: int) -> np.ndarray:
    """The target set T as a sorted int64 array of distinct values in [0, d), at least one."""
    t = check_values(targets, d, "targets")
    if t.size == 0:
        raise ValueError("targets must hold at least one value")
    u = np.unique(t)
    if u.size != t.size:
        raise ValueError("targets must be distinct values")
    if u.size >= d:
        raise ValueError(f"targets must leave at least one non-target value (|T| = {u.size}, d = {d})")
    return u


def check_attack(attack: str) -> str:
    if not isinstance(attack, str) or attack.lower() not in ATTACKS:
        raise ValueError(f"attack must be one of {list(ATTACKS)}, got {attack!r}")
    return attack.lower()


def fake_user_count(n_genuine: int, beta: float) -> int:
    """m = round(β n/(1 − β)): the fake users that make a fraction β of n + m users (β in [0, 1)).

    Parameters
    ----------
    n_genuine : int
        Number of genuine users n.
    beta : float
        The fake users' fraction β of all users, in [0, 1).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        ``n_genuine`` below 1 or β outside [0, 1).

    Examples
    --------
    >>> from ldpopt import robust
    >>> robust.fake_user_count(1000, 0.1)
    111
    """
    n = _check_int(n_genuine, "n_genuine", 1)
    beta = check_beta(beta)
    return round(beta * n / (1.0 - beta))




def fake_values(targets: np.ndarray, m: int, rng) -> np.ndarray:
    """Input poisoning: the m fake users' values, uniform on T."""
    return as_generator(rng).choice(targets, size=m)








def craft_reports(oracle: FrequencyOracle, attack: str, targets, m: int, rng,
                  candidates: int = DEFAULT_CANDIDATES, device=None):
    """The m fake users' reports, in ``oracle``'s own report format (what ``oracle.aggregate`` takes).

    ``attack="input"`` runs ``oracle.perturb`` on fake values uniform on T; ``attack="mga"`` crafts
    the maximal-gain reports of the module notes, ``attack="apa"`` those of :mod:`.apa` (``candidates`` is the OLH/BLH key search size).
    ``device`` ("numpy", "cpu" or "auto") runs the OLH/BLH maximal gain key search (same reports).

    Cao, Jia & Gong, USENIX Security 2021 (input poisoning and MGA).

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    attack : {"input", "mga", "apa"}
        Input poisoning, the maximal gain attack, or the adaptive attacks (module notes).
    targets : array_like of int
        The target set T: distinct values in [0, d), leaving at least one non-target.
    m : int
        Number of fake users, >= 1.
    rng : int, numpy.random.Generator or "secure"
        The randomness.
    candidates : int, default 1000
        Hash keys searched per fake user (OLH/BLH).
    device : str, optional
        Where the OLH/BLH key search runs.

    Returns
    -------
    reports
        m reports in the oracle's format.

    Raises
    ------
    ValueError
        An unknown attack or device, bad targets, ``m < 1`` or ``candidates < 1``.

    Examples
    --------
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> reports = robust.craft_reports(oue, "mga", [13, 14, 15], 3, rng=0)
    >>> bool((oue.support_matrix(reports)[:, 13:] == 1).all())
    True
    """
    attack = check_attack(attack)
    t = check_targets(targets, oracle.d)
    m = _check_int(m, "m", 1)
    candidates = _check_int(candidates, "candidates", 1)
    report_device(device, 0)  # checked whatever the oracle
    gen = as_generator(rng)
    if attack == "input":
        return oracle.perturb(fake_values(t, m, gen), gen)
    if attack == "apa":
        from .apa import apa_reports
        return apa_reports(oracle, t, m, gen)
    others = np.setdiff1d(np.arange(oracle.d, dtype=np.int64), t)
    return form_of(oracle).mga_reports(oracle, t, others, m, gen, candidates, device)


def mean_target_support(oracle: FrequencyOracle, attack: str, targets,
                        candidates: int = DEFAULT_CANDIDATES) -> float:
    """s̄: the expected number of targets one fake report supports (module notes).

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    attack : {"input", "mga", "apa"}
        Input poisoning, the maximal gain attack, or the adaptive attacks (module notes).
    targets : array_like of int
        The target set T: distinct values in [0, d), leaving at least one non-target.
    candidates : int, default 1000
        Hash keys searched per fake user (OLH/BLH).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        An unknown attack or bad targets.

    Examples
    --------
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> robust.attacks.mean_target_support(oue, "mga", [13, 14, 15])
    3.0
    """
    attack = check_attack(attack)
    t = check_targets(targets, oracle.d)
    r = t.size
    if attack == "input":
        return oracle.p + (r - 1) * oracle.q
    if attack == "apa":
        from .apa import apa_mean_support
        return apa_mean_support(oracle, r)
    return form_of(oracle).mga_mean_support(oracle, t, candidates)


def expected_gain(oracle: FrequencyOracle, attack: str, targets, beta: float, f_targets: float,
                  candidates: int = DEFAULT_CANDIDATES) -> float:
    r""":math:`G = β(\bar s - r q)/(p - q) - β f_T`: the expected rise of :math:`Σ_{t∈T} \tilde f_t` (module notes).

    The frequency gain of Cao, Jia & Gong, USENIX Security 2021.

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    attack : {"input", "mga", "apa"}
        Input poisoning, the maximal gain attack, or the adaptive attacks (module notes).
    targets : array_like of int
        The target set T: distinct values in [0, d), leaving at least one non-target.
    beta : float
        The fake users' fraction β of all users, in [0, 1).
    f_targets : float
        The targets' genuine total frequency :math:`f_T`, in [0, 1].
    candidates : int, default 1000
        Hash keys searched per fake user (OLH/BLH).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Bad attack, targets, β or ``f_targets``.

    Examples
    --------
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> round(robust.expected_gain(oue, "mga", [13, 14, 15], 0.1, 0.05), 4)
    0.9442
    """
    t = check_targets(targets, oracle.d)
    beta = check_beta(beta)
    if not 0.0 <= float(f_targets) <= 1.0:
        raise ValueError(f"f_targets must lie in [0, 1], got {f_targets!r}")
    s = mean_target_support(oracle, attack, t, candidates)
    p, q = oracle.p, oracle.q
    return beta * ((s - t.size * q) / (p - q) - float(f_targets))


def mixture_offset(estimate, beta: float, suspects) -> float:
    r"""y₀ = (s₀ − q)/(p − q): the fake reports' estimate off the ``suspects``, s₀ their support rate
    there, from the support counts: :math:`Σ_v c_v/N = (1 - β)(p + (d - 1)q) + β \bar k` gives their mean size :math:`\bar k`,
    and s₀ = (k̄ − |S|)/(d − |S|) clipped to [0, 1] if each supports every suspect (the maximal gain
    assumption; :mod:`.recover`'s mixture, ``offset="auto"``, and :mod:`.lift`).

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    beta : float
        The fake users' fraction β of all users, in [0, 1).
    suspects : array_like of int
        The suspect set S.

    Returns
    -------
    float
        y₀ (0 when β = 0).

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
    >>> from ldpopt.robust.recover import mixture_offset
    >>> round(mixture_offset(est, 0.1, [13, 14, 15]), 4)  # q / (p - q) below 0: padding-free MGA
    -0.8099
    """
    est = check_estimate(estimate)
    beta = check_beta(beta)
    if beta == 0.0:
        return 0.0
    r = np.unique(np.asarray(suspects, dtype=np.int64).ravel()).size
    p, q, d = est.p, est.q, est.d
    k_bar = (float(np.sum(est.counts)) / est.n - (1.0 - beta) * (p + (d - 1) * q)) / beta
    s0 = min(max((k_bar - r) / (d - r), 0.0), 1.0)
    return (s0 - q) / (p - q)
