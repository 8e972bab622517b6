r"""Whole-horizon privacy of the memoised oracles: what a user's τ reports reveal about her value
sequence, under a named neighbouring relation, in closed form and by exact enumeration.

Notes: docs/notes/longitudinal.md, "ldpopt.oracles.horizon".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Self

import numpy as np

__all__ = ["RELATIONS", "HorizonEpsilon", "check_relation", "horizon_law", "pattern_epsilon", "worst_pair"]

#: The neighbouring relations a horizon ε is stated under (module doc).
RELATIONS = {
    "any": "any two value sequences of the user over the horizon, each with at most k distinct values",
    "memo-pattern": "two sequences with the same memo pattern (which rounds share a memo is public)",
}

_MAX_CELLS = 1 << 22


class HorizonEpsilon(float):
    """A whole-horizon ε (a float) that names the neighbouring relation it holds under.

    Attributes
    ----------
    relation : str
        A key of :data:`RELATIONS`.

    Examples
    --------
    >>> from ldpopt.oracles.horizon import HorizonEpsilon
    >>> e = HorizonEpsilon(1.5, "any")
    >>> float(e), e.relation, e + 1.0
    (1.5, 'any', 2.5)
    """

    relation: str

    def __new__(cls, value: float, relation: str) -> Self:
        out = super().__new__(cls, value)
        out.relation = check_relation(relation)
        return out

    def __repr__(self) -> str:
        return f"HorizonEpsilon({float(self)!r}, relation={self.relation!r})"

    def __reduce__(self):
        return (HorizonEpsilon, (float(self), self.relation))


def check_relation(relation) -> str:
    """``relation`` checked against :data:`RELATIONS` (ValueError naming the argument)."""
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {sorted(RELATIONS)}, got {relation!r}")
    return relation


def pattern_epsilon(eps_of_n: Callable[[int], float], tau: int, groups: int) -> float:
    """max over j ≤ ``groups`` and compositions n₁ + … + n_j = τ (n_i ≥ 1) of Σ ε(n_i): the memo-pattern
    bound (module doc), by dynamic programming over (memos, rounds) — O(groups·τ) vector steps.

    Parameters
    ----------
    eps_of_n : callable
        ε(n) of one memo serving n rounds (increasing in n).
    tau : int
        Rounds, >= 1.
    groups : int
        The most memos, 1 ≤ groups ≤ τ.

    Returns
    -------
    float

    Examples
    --------
    >>> from ldpopt.oracles.horizon import pattern_epsilon
    >>> pattern_epsilon(lambda n: min(n, 2.0), 5, 2)  # 2 + 2 (n = 2 + 3)
    4.0
    """
    e = np.array([-np.inf] + [float(eps_of_n(n)) for n in range(1, tau + 1)])  # e[n], n = 0..τ
    best = e.copy()  # best[t]: one memo over t rounds
    out = best[tau]
    for _ in range(2, groups + 1):  # memos (≤ d); each step a vectorised max over the last memo's rounds
        nxt = np.full(tau + 1, -np.inf)
        for t in range(2, tau + 1):  # rounds: O(τ) steps of O(τ) vector work
            nxt[t] = np.max(best[1:t] + e[t - 1:0:-1])
        best = nxt
        out = max(out, best[tau])
    return float(out)


def horizon_law(oracle, tau: int, distinct_values: int | None = None):
    """The exact joint law of a user's public state and τ reports for every value sequence on [d]^τ with
    at most ``distinct_values`` distinct values (enumeration; tiny d, τ and output alphabets only).

    The oracle states one memo's law through ``_memo_law(n) -> (state_probs (S,), law (S, Y^n, d))`` —
    the law of n reports of one memo given the public state s (cohort, hash, sampled indices; one state
    when there is none) and the value — and its memo keys ``_memo_keys() -> (S, d)`` (the memo a value
    uses in state s: the value itself, LOLOHA's hashed value). Given the state, the memos of distinct
    keys are independent, so Pr[s, y | x] = π_s Π_memos law_{n}[s, y on its rounds, key].

    Parameters
    ----------
    oracle : a longitudinal oracle
    tau : int
        Rounds, >= 1.
    distinct_values : int, optional
        Keep the sequences with at most this many distinct values (default: all).

    Returns
    -------
    sequences : ndarray of int64, shape (m, τ)
    law : ndarray, shape (S, Y^τ, m)
        law[s, y, i] = Pr[state s, reports y (y₁ most significant) | sequences[i]].
    """
    d = oracle.d
    k = tau if distinct_values is None else int(distinct_values)
    seqs = np.array([x for x in itertools.product(range(d), repeat=tau) if len(set(x)) <= k], dtype=np.int64)
    states, _ = oracle._memo_law(1)
    S = states.shape[0]
    keys = np.broadcast_to(oracle._memo_keys(), (S, d))
    laws = {n: oracle._memo_law(n)[1] for n in range(1, tau + 1)}
    Y = laws[1].shape[1]
    if S * Y ** tau * len(seqs) > _MAX_CELLS:
        raise ValueError(f"{S}·{Y}^{tau}·{len(seqs)} cells, too many to enumerate (max {_MAX_CELLS})")
    letters = "abcdefghijklmnopqr"[:tau]
    out = np.empty((S, Y ** tau, len(seqs)))
    for i, x in enumerate(seqs):  # sequences (enumeration only)
        for s in range(S):  # public states (enumeration only): the memo groups depend on the keys
            kx = keys[s, x]
            ops, subs = [], []
            for key in np.unique(kx):
                rounds = np.flatnonzero(kx == key)
                v = x[rounds[0]]  # any value of this memo: the law depends on v through its key only
                ops.append(laws[len(rounds)][s, :, v].reshape((Y,) * len(rounds)))
                subs.append("".join(letters[t] for t in rounds))
            out[s, :, i] = states[s] * np.einsum(",".join(subs) + "->" + letters, *ops).reshape(-1)
    return seqs, out


def _pattern_ids(keyseqs: np.ndarray) -> np.ndarray:
    """A canonical id of each row's equality pattern (first-occurrence relabelling)."""
    canon = np.empty_like(keyseqs)
    for i, row in enumerate(keyseqs):  # sequences (enumeration only)
        _, first, inv = np.unique(row, return_index=True, return_inverse=True)
        canon[i] = np.argsort(np.argsort(first))[inv]
    _, ids = np.unique(canon, axis=0, return_inverse=True)
    return ids.reshape(-1)


def worst_pair(oracle, tau: int, distinct_values: int, relation: str):
    """The largest log-likelihood ratio of a user's reports over the pairs of sequences ``relation``
    admits (each with at most ``distinct_values`` distinct values), by :func:`horizon_law`.

    Returns
    -------
    (float, tuple, tuple)
        The ratio (∞ when some report is possible under one sequence and not the other) and the pair.
    """
    check_relation(relation)
    seqs, law = horizon_law(oracle, tau, distinct_values)
    keys = np.broadcast_to(oracle._memo_keys(), (law.shape[0], oracle.d))
    with np.errstate(divide="ignore"):
        L = np.log(law)
    best = -np.inf
    pair: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    for s in range(law.shape[0]):  # public states (enumeration only)
        if relation == "any":
            groups = np.zeros(len(seqs), dtype=np.int64)
        else:
            groups = _pattern_ids(keys[s][seqs])
        for g in np.unique(groups):
            cols = np.flatnonzero(groups == g)
            Ls = L[s][:, cols]
            seen = np.isfinite(Ls).any(axis=1)
            if not seen.any():
                continue
            Ls = Ls[seen]
            hi, lo = Ls.argmax(axis=1), Ls.argmin(axis=1)
            gap = Ls[np.arange(len(Ls)), hi] - Ls[np.arange(len(Ls)), lo]
            r = int(np.argmax(gap))
            if gap[r] > best:
                best = float(gap[r])
                pair = (tuple(int(v) for v in seqs[cols[hi[r]]]), tuple(int(v) for v in seqs[cols[lo[r]]]))
    return (math.inf if np.isnan(best) else best), pair[0], pair[1]
