"""PEM, the Prefix Extending Method (Wang, Li & Jha, "Locally Differentially Private Heavy Hitter
Identification", IEEE TDSC 2019, §IV; arXiv 1708.06674). The paper is not in the papers folder: the
design (module notes) is as §IV states it and as pure-ldp 1.2.0's ``PEMClient``/``PEMServer`` implement it.

Notes: docs/notes/sketches.md, "ldpopt.heavy.pem"."""

from __future__ import annotations

import math

import numpy as np

from .._validation import _check_int, as_generator, check_epsilon
from .result import HeavyHitters, Level
from .rounds import OracleSpec, check_histogram, run_round, split_users, top_indices
from .strings import check_bits, prefixes

__all__ = ["extend", "pem", "pem_lengths"]

#: largest first-round domain (2^24 prefixes) — the first round estimates every prefix
MAX_FIRST_BITS = 24


def extend(prefix: np.ndarray, step: int) -> np.ndarray:
    """Every ``step``-bit extension of each prefix, sorted: (p << step) | s for s in [0, 2^step)."""
    p = np.sort(np.asarray(prefix, dtype=np.int64))
    return ((p[:, None] << np.int64(step)) | np.arange(1 << step, dtype=np.int64)[None, :]).ravel()


def pem_lengths(total_bits: int, k: int, step_bits: int = 6, start_bits: int | None = None) -> list[int]:
    """PEM's prefix lengths s_i = min(γ + iη, m), i = 1 … ⌈(m − γ)/η⌉ (γ = ⌈log2 k⌉ by default)."""
    m = _check_int(total_bits, "total_bits", 2)
    k = _check_int(k, "k", 1)
    eta = check_bits(step_bits, m, "step_bits")
    gamma = max(0, math.ceil(math.log2(k))) if start_bits is None else _check_int(start_bits, "start_bits", 0)
    if gamma >= m:
        raise ValueError(f"start_bits must be < total_bits = {m}, got {gamma}")
    if min(gamma + eta, m) > MAX_FIRST_BITS:
        raise ValueError(f"start_bits + step_bits must be <= {MAX_FIRST_BITS} (the first round estimates "
                         f"every prefix of that length), got {gamma} + {eta}")
    g = math.ceil((m - gamma) / eta)
    return [min(gamma + i * eta, m) for i in range(1, g + 1)]


def pem(codes, counts, *, total_bits: int, epsilon: float, k: int, step_bits: int = 6,
        start_bits: int | None = None, oracle: OracleSpec = "olh", rng, exact: bool = False) -> HeavyHitters:
    """Find the top-``k`` strings with PEM (module notes).

    Parameters
    ----------
    codes, counts : int arrays
        The population as a histogram: distinct ``total_bits``-bit codes (:func:`~.strings.encode`)
        and the number of users holding each.
    total_bits : int
        m, the strings' length in bits (≤ 56).
    epsilon : float
        ε of every user's single report.
    k : int
        Number of heavy hitters wanted (and prefixes kept per round).
    step_bits, start_bits : int
        η and γ (defaults 6 and ⌈log2 k⌉).
    oracle : str or callable
        The frequency oracle of every round (a registry name or ``(epsilon, d) -> FrequencyOracle``).
    rng : seed, Generator or "secure"
    exact : bool
        True: the real protocol (each user's group draw, the oracle's client and aggregator);
        False: the exact-in-law fast path (:mod:`.rounds`).

    Returns
    -------
    HeavyHitters
        The top-k strings of the last round with their estimates, and every round as a Level.

    Raises
    ------
    ValueError
        Codes out of range or repeated, negative counts, ε not positive, ``k``/``step_bits``/
        ``start_bits`` out of range (γ + η ≤ 24, γ < m), or a group with no users.

    References
    ----------
    Wang, Li & Jha, "Locally Differentially Private Heavy Hitter Identification", IEEE TDSC 2019, §IV.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.heavy import encode, pem
    >>> codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
    >>> counts = np.array([4000, 3000, 1000, 800, 700, 500])
    >>> found = pem(codes, counts, total_bits=16, epsilon=4.0, k=2, rng=0)
    >>> found, found.strings()
    (HeavyHitters(protocol='pem', found=2, total_bits=16, epsilon=4, levels=3), ['hi', 'ok'])
    """
    c, w = check_histogram(codes, counts, total_bits)
    eps = check_epsilon(epsilon, "epsilon")
    k = _check_int(k, "k", 1)
    lengths = pem_lengths(total_bits, k, step_bits, start_bits)
    gen = as_generator(rng)
    split = split_users(w, len(lengths), gen, exact)
    cand, full, levels = np.arange(1 << lengths[0], dtype=np.int64), True, []
    for i, s in enumerate(lengths):
        if split[i].sum() == 0:
            raise ValueError(f"group {i + 1} of {len(lengths)} has no users; PEM needs more users than groups")
        est = run_round(oracle, eps, cand, full, prefixes(c, total_bits, s), split[i], gen, exact)
        kept = top_indices(est.f_tilde[: cand.size], k)
        levels.append(Level(s, cand, est, full, kept))
        if i + 1 < len(lengths):
            cand, full = extend(cand[kept], lengths[i + 1] - s), False
    last = levels[-1]
    return HeavyHitters("pem", last.candidates[last.kept], last.f_tilde[last.kept], int(total_bits), eps,
                        tuple(levels), {"k": k, "step_bits": int(step_bits), "lengths": lengths,
                                        "oracle": oracle if isinstance(oracle, str) else repr(oracle)})
