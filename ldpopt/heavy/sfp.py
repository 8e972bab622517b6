"""Apple's Sequence Fragment Puzzle (SFP; Apple's Differential Privacy Team, "Learning with Privacy at
Scale", Apple Machine Learning Journal 1(8), 2017, the section on discovering new words). The article
is not in the papers folder: the design (module notes) is as the article describes it and as pure-ldp 1.2.0's
``SFPClient``/``SFPServer`` implement it; where we choose, we say so.

Notes: docs/notes/sketches.md, "ldpopt.heavy.sfp"."""

from __future__ import annotations

import numpy as np

from .._validation import _check_int, as_generator, check_epsilon
from ..oracles.hashing import keyed_hash
from .result import HeavyHitters, Level
from .rounds import OracleSpec, check_histogram, run_round, split_users, top_indices
from .strings import check_bits

__all__ = ["DEFAULT_ORACLE", "HASH_KEY", "HASH_VALUES", "fragment_values", "sfp", "word_hash"]

#: the word hash's range (Apple's and pure-ldp's 256)
HASH_VALUES = 256
#: the fixed public key of the word hash
HASH_KEY = 0x5F5
#: the default channel of both reports
DEFAULT_ORACLE = "olh"


def word_hash(codes) -> np.ndarray:
    """h(w) ∈ [0, 256): the keyed hash of the word's code under the public ``HASH_KEY``."""
    return keyed_hash(np.int64(HASH_KEY), np.asarray(codes, dtype=np.int64), HASH_VALUES)


def fragment_values(codes, total_bits: int, fragment_bits: int, position) -> np.ndarray:
    """h(w)·2^r + (fragment ``position`` of w): the fragment report's value (module notes)."""
    c = np.asarray(codes, dtype=np.int64)
    shift = np.int64(total_bits) - (np.asarray(position, dtype=np.int64) + 1) * fragment_bits
    frag = (c >> shift) & np.int64((1 << fragment_bits) - 1)
    return (word_hash(c) << np.int64(fragment_bits)) | frag


def _assemble(kept_values: list, fragment_bits: int, max_candidates: int) -> np.ndarray:
    """Words whose hash is kept at every position: all position-ordered fragment combinations."""
    r, L = fragment_bits, len(kept_values)
    hashes = [v >> np.int64(r) for v in kept_values]
    common = hashes[0]
    for h in hashes[1:]:
        common = np.intersect1d(common, h)
    words = []
    total = 0
    for h in np.unique(common):  # at most 256 hash values: a loop over hash values, not users or domain
        frags = [kept_values[p][hashes[p] == h] & np.int64((1 << r) - 1) for p in range(L)]
        total += int(np.prod([f.size for f in frags]))
        if total > max_candidates:
            raise ValueError(f"the puzzle assembles more than max_candidates = {max_candidates} words; "
                             f"lower k_fragments or raise max_candidates")
        grid = np.meshgrid(*frags, indexing="ij")
        word = np.zeros(grid[0].size, dtype=np.int64)
        for p in range(L):
            word = (word << np.int64(r)) | grid[p].ravel()
        words.append(word)
    return np.unique(np.concatenate(words)) if words else np.zeros(0, dtype=np.int64)


def sfp(codes, counts, *, total_bits: int, epsilon: float, k: int, fragment_bits: int = 8,
        k_fragments: int | None = None, oracle: OracleSpec = DEFAULT_ORACLE, word_oracle: OracleSpec | None = None,
        max_candidates: int = 1 << 20, rng, exact: bool = False) -> HeavyHitters:
    r"""Find the top-``k`` strings with SFP (module notes). ``fragment_bits`` r must divide
    ``total_bits`` and be ≤ 16 (the fragment domain is :math:`256 \cdot 2^r`); ``exact``: real protocol or fast path.

    Parameters
    ----------
    codes, counts : array_like of int
        The population as a histogram: distinct ``total_bits``-bit codes (:func:`~.strings.encode`)
        and the number of users holding each.
    total_bits : int
        m, the strings' length in bits (≤ 56).
    epsilon : float
        ε of every user (keyword-only, as every parameter after ``counts``).
    k : int
        Number of heavy hitters wanted.
    fragment_bits : int, default 8
        r, bits per fragment; divides ``total_bits``, at most 16.
    k_fragments : int, optional
        (hash, fragment) pairs kept per position (default ``k``).
    oracle : str or callable, default "olh"
        The channel of both reports (a registry name or ``(epsilon, d) -> FrequencyOracle``).
    word_oracle : str or callable, optional
        The word reports' oracle (default ``oracle``).
    max_candidates : int, default 2**20
        Most words the puzzle may assemble; more raises.
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
    Apple's Differential Privacy Team, "Learning with Privacy at Scale", Apple Machine Learning
    Journal 1(8), 2017 (discovering new words).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.heavy import encode, sfp
    >>> codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
    >>> counts = np.array([4000, 3000, 1000, 800, 700, 500])
    >>> found = sfp(codes, counts, total_bits=16, epsilon=4.0, k=2, rng=0)
    >>> found.strings(), found.params["fragment_bits"]
    (['hi', 'ok'], 8)
    """
    c, w = check_histogram(codes, counts, total_bits)
    eps = check_epsilon(epsilon, "epsilon")
    k = _check_int(k, "k", 1)
    r = check_bits(fragment_bits, total_bits, "fragment_bits")
    if total_bits % r or r > 16:
        raise ValueError(f"fragment_bits must divide total_bits = {total_bits} and be <= 16, got {r}")
    kf = k if k_fragments is None else _check_int(k_fragments, "k_fragments", 1)
    cap = _check_int(max_candidates, "max_candidates", 1)
    L = total_bits // r
    gen = as_generator(rng)
    split = split_users(w, L, gen, exact)
    domain = np.arange(HASH_VALUES << r, dtype=np.int64)
    levels, kept_values = [], []
    for p in range(L):
        if split[p].sum() == 0:
            raise ValueError(f"position {p} of {L} has no users; SFP needs more users than positions")
        est = run_round(oracle, eps / 2, domain, True, fragment_values(c, total_bits, r, p), split[p], gen, exact)
        kept = top_indices(est.f_tilde, kf)
        levels.append(Level(r, domain, est, True, np.sort(kept)))
        kept_values.append(domain[np.sort(kept)])
    found = _assemble(kept_values, r, cap)
    params = {"k": k, "fragment_bits": r, "k_fragments": kf, "candidates": int(found.size)}
    out = HeavyHitters("sfp", found, np.zeros(found.size), int(total_bits), eps, tuple(levels), params)
    if found.size == 0:
        return out
    word = run_round(word_oracle or oracle, eps / 2, found, False, c, w, gen, exact)
    fw = word.f_tilde[: found.size]
    pick = top_indices(fw, k)
    return out.with_frequencies(found[pick], fw[pick])
