"""One round of a heavy-hitter protocol: users report a prefix (or fragment) through a frequency oracle
over a published candidate domain; the users' split into groups.

Notes: docs/notes/sketches.md, "ldpopt.heavy.rounds"."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import oracles as _oracles
from .._validation import _check_int, as_generator, check_epsilon
from ..estimate import Estimate
from ..oracles.base import FrequencyOracle

__all__ = ["OracleSpec", "check_histogram", "make_oracle", "run_round", "split_users", "top_indices"]

#: a registry name ("olh", "grr", …) or a callable (epsilon, d) -> FrequencyOracle
OracleSpec = str | Callable[[float, int], FrequencyOracle]


def make_oracle(oracle: OracleSpec, epsilon: float, d: int, name: str = "oracle") -> FrequencyOracle:
    """The round's oracle: ``oracles.get(oracle, epsilon, d)`` for a name, else ``oracle(epsilon, d)``."""
    if isinstance(oracle, str):
        return _oracles.get(oracle, epsilon, d)
    if not callable(oracle):
        raise ValueError(f"{name} must be an oracle name among {_oracles.available()} or a callable "
                         f"(epsilon, d) -> FrequencyOracle, got {oracle!r}")
    o = oracle(epsilon, d)
    if not isinstance(o, FrequencyOracle):
        raise ValueError(f"{name}(epsilon, d) must return a FrequencyOracle, got {type(o).__name__}")
    return o


def check_histogram(codes, counts, total_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``total_bits``-bit codes and their user counts (int64, same length, counts ≥ 0, n ≥ 1)."""
    tb = _check_int(total_bits, "total_bits", 2)
    if tb > 56:
        raise ValueError(f"total_bits must be an integer in [2, 56], got {tb}")
    c = np.asarray(codes)
    w = np.asarray(counts)
    if c.ndim != 1 or c.dtype.kind not in "iu" or c.size == 0:
        raise ValueError("codes must be a non-empty 1-D integer array (the strings' bit codes)")
    if w.shape != c.shape or w.dtype.kind not in "iu":
        raise ValueError(f"counts must be an integer array of the codes' shape {c.shape}, got {w.shape}")
    c, w = c.astype(np.int64), w.astype(np.int64)
    if np.any(c < 0) or np.any(c >= (np.int64(1) << tb)):
        raise ValueError(f"codes must lie in [0, 2^{tb}) (total_bits = {tb})")
    if np.any(w < 0) or w.sum() < 1:
        raise ValueError("counts must be >= 0 with at least one user")
    if np.unique(c).size != c.size:
        raise ValueError("codes must be distinct (pass a histogram: each string once with its count)")
    return c, w


def split_users(counts: np.ndarray, groups: int, rng, exact: bool) -> np.ndarray:
    """(groups, m) user counts: each user of each distinct string in one group chosen uniformly at
    random. ``exact``: one draw per user (the client's own); else one Multinomial per string."""
    g = _check_int(groups, "groups", 1)
    gen = as_generator(rng)
    if g == 1:
        return counts[None, :].copy()
    if exact:
        item = np.repeat(np.arange(counts.size), counts)
        grp = gen.integers(0, g, size=item.size)
        return np.bincount(grp * counts.size + item, minlength=g * counts.size).reshape(g, counts.size)
    return gen.multinomial(counts, np.full(g, 1.0 / g)).T.astype(np.int64)


def run_round(oracle: OracleSpec, epsilon: float, candidates: np.ndarray, full: bool, values: np.ndarray,
              counts: np.ndarray, rng, exact: bool) -> Estimate:
    """One round: users holding ``values`` (int64, one per distinct string) with ``counts`` report
    through the oracle over ``candidates`` (sorted, distinct), plus "other" unless ``full`` (C is the
    whole prefix space). Returns the oracle's Estimate over the round's domain (last entry "other")."""
    eps = check_epsilon(epsilon, "epsilon")
    cand = np.asarray(candidates, dtype=np.int64)
    m = cand.size
    pos = np.searchsorted(cand, values)
    hit = pos < m
    hit[hit] = cand[pos[hit]] == values[hit]
    if full and not np.all(hit[counts > 0]):
        raise ValueError("a round over the full prefix space got a value outside its candidates")
    d = m if full else m + 1
    idx = np.where(hit, pos, m)
    o = make_oracle(oracle, eps, max(d, 2))
    if exact:
        return o.simulate_values(np.repeat(idx, counts), rng)
    return o.simulate(np.bincount(idx, weights=counts, minlength=o.d).astype(np.int64), rng)


def top_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, largest first (ties: the smaller index first)."""
    k = min(int(k), scores.size)
    order = np.lexsort((np.arange(scores.size), -scores))
    return order[:k]
