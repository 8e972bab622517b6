"""TreeHist (Bassily, Nissim, Stemmer & Thakurta, "Practical Locally Private Heavy Hitters", NeurIPS
2017, §3 and its JMLR 2020 version). The paper is not in the papers folder: the design (module notes) is as we
read §3 and as pure-ldp 1.2.0's ``TreeHistClient``/``TreeHistServer`` implement it; where we choose,
we say so.

Notes: docs/notes/sketches.md, "ldpopt.heavy.treehist"."""

from __future__ import annotations

import math

import numpy as np

from .._validation import _check_int, as_generator, check_epsilon
from .pem import extend
from .result import HeavyHitters, Level
from .rounds import OracleSpec, check_histogram, run_round, split_users, top_indices
from .strings import check_bits, prefixes

__all__ = ["threshold", "treehist"]


def threshold(sigma2: float, candidates: int, beta: float = 0.05) -> float:
    """τ = σ·√(2 ln(C/β)): the level's keep threshold (module notes)."""
    if not 0 < beta < 1:
        raise ValueError(f"beta must lie in (0, 1), got {beta!r}")
    return math.sqrt(2.0 * sigma2 * math.log(max(int(candidates), 1) / beta))


def treehist(codes, counts, *, total_bits: int, epsilon: float, step_bits: int = 1, k: int | None = None,
             beta: float = 0.05, max_keep: int | None = None, oracle: OracleSpec = "olh",
             word_oracle: OracleSpec | None = None, rng, exact: bool = False) -> HeavyHitters:
    r"""Find the heavy hitters with TreeHist (module notes). ``codes``/``counts``: the population as
    a histogram of ``total_bits``-bit codes; ``step_bits`` η must divide ``total_bits``; ``k``: top-k
    mode (else the threshold rule with ``beta``); ``oracle``/``word_oracle``: the prefix and word
    channels (the word channel defaults to ``oracle``); ``exact``: real protocol or fast path.

    Parameters
    ----------
    codes, counts : array_like of int
        The population as a histogram: distinct ``total_bits``-bit codes (:func:`~.strings.encode`)
        and the number of users holding each.
    total_bits : int
        m, the strings' length in bits (≤ 56).
    epsilon : float
        ε of every user (keyword-only, as every parameter after ``counts``).
    step_bits : int, default 1
        η, bits per tree level; divides ``total_bits``, at most 24.
    k : int, optional
        Top-k mode: keep the top-k per level and report the top-k; None: the threshold rule.
    beta : float, default 0.05
        Failure probability of the threshold rule :math:`τ = σ \sqrt{2 \ln(C/β)}`, in (0, 1).
    max_keep : int, optional
        Most prefixes kept per level (default 4·k, or 256 without k).
    oracle : str or callable, default "olh"
        The prefix reports' frequency oracle (a registry name or ``(epsilon, d) -> FrequencyOracle``).
    word_oracle : str or callable, optional
        The word reports' oracle (default ``oracle``).
    rng : int, numpy.random.Generator or "secure"
        Randomness of the users' group draws and reports.
    exact : bool, default False
        True: the real protocol (each user's draw, the oracle's client and aggregator); False: the
        exact-in-law fast path (:mod:`ldpopt.heavy.rounds`).

    Returns
    -------
    HeavyHitters
        The strings found, largest estimate first, with every level.

    Raises
    ------
    ValueError
        Codes out of range or repeated, negative counts, ε not positive, a parameter out of range
        (named in the message), or a group/level/position with no users.

    References
    ----------
    Bassily, Nissim, Stemmer & Thakurta, "Practical Locally Private Heavy Hitters", NeurIPS 2017, §3.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.heavy import encode, treehist
    >>> codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
    >>> counts = np.array([4000, 3000, 1000, 800, 700, 500])
    >>> found = treehist(codes, counts, total_bits=16, epsilon=4.0, step_bits=4, k=2, rng=0)
    >>> found.strings(), len(found.levels)
    (['hi', 'ok'], 4)
    """
    c, w = check_histogram(codes, counts, total_bits)
    eps = check_epsilon(epsilon, "epsilon")
    eta = check_bits(step_bits, total_bits, "step_bits")
    if total_bits % eta:
        raise ValueError(f"step_bits must divide total_bits = {total_bits}, got {eta}")
    if eta > 24:
        raise ValueError(f"step_bits must be <= 24 (level 1 estimates all 2^step_bits prefixes), got {eta}")
    k = None if k is None else _check_int(k, "k", 1)
    keep = _check_int(max_keep, "max_keep", 1) if max_keep is not None else (4 * k if k else 256)
    L = total_bits // eta
    gen = as_generator(rng)
    split = split_users(w, L, gen, exact)
    cand, full, levels = np.arange(1 << eta, dtype=np.int64), True, []
    for ell in range(1, L + 1):
        s = ell * eta
        if split[ell - 1].sum() == 0:
            raise ValueError(f"level {ell} of {L} has no users; TreeHist needs more users than levels")
        est = run_round(oracle, eps / 2, cand, full, prefixes(c, total_bits, s), split[ell - 1], gen, exact)
        f = est.f_tilde[: cand.size]
        if k is not None:
            kept = top_indices(f, k)
        else:
            over = np.flatnonzero(f >= threshold(est.sigma2, cand.size, beta))
            kept = over[top_indices(f[over], keep)]
        levels.append(Level(s, cand, est, full, np.sort(kept)))
        if kept.size == 0:
            break
        if ell < L:
            cand, full = extend(cand[kept], eta), False
    found = levels[-1].candidates[levels[-1].kept] if levels[-1].bits == total_bits else np.zeros(0, np.int64)
    params = {"k": k, "beta": beta, "step_bits": eta, "levels_walked": len(levels)}
    out = HeavyHitters("treehist", found, np.zeros(found.size), int(total_bits), eps, tuple(levels), params)
    if found.size == 0:
        return out
    word = run_round(word_oracle or oracle, eps / 2, found, False, c, w, gen, exact)
    fw = word.f_tilde[: found.size]
    pick = top_indices(fw, k) if k is not None else np.arange(found.size)
    return out.with_frequencies(found[pick], fw[pick], word_sigma2=float(word.sigma2))
