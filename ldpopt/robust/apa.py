"""The adaptive pattern attack (APA) on unary encodings: crafted reports whose number of ones follows
the genuine law.

Li, Li, Wang & Sun (CCS 2025, arXiv 2506.02156) make MGA stealthy against count-of-ones detection
by drawing each fake report's number of ones K from the law of a genuine report's (their code,
``Poisoning/APA.py`` ``construct_omega``, uses Binomial(d, (p + (d − 1)q)/d); ldpopt uses the exact
law Bernoulli(p) + Binomial(d − 1, q) of :func:`.detect.genuine_size_pmf`). The report then sets
min(K, r) targets (all of T when K ≥ r, else a uniform K-subset of T) and K − min(K, r) uniform
other bits. Choice: every fake report carries as many targets as K allows (the anchors' optional
"split" r′ < r, which spreads the targets over reports, is not modelled). Defined for OUE and SUE;
on OLH and BLH ``"apa"`` is the adaptive hash-key search of :mod:`.apa_hashing`.

Fast path, exact in law: the sizes are a Multinomial(m, size law) over k; for each size k with
m_k > 0 users, the targets' counts are the column sums of m_k uniform min(k, r)-subsets of T and the
others' of m_k uniform (k − min(k, r))-subsets of the d − r others (Subset Selection's exact
sampler). The loop runs over the sizes that occur (the support of the size law, about
12·√(dq(1 − q)) values), not over users or values.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_generator
from ..oracles.base import FrequencyOracle

__all__ = ["apa_counts", "apa_mean_support", "apa_reports"]


def apa_reports(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng):
    """m APA reports (module docstring) in ``oracle``'s report format; ``targets`` already checked.
    Unary reports: :func:`unary_apa_reports`; hashed reports: :func:`.apa_hashing.apa_hash_reports`
    (``oracle.report_form``, :mod:`.forms`)."""
    from .forms import form_of

    return form_of(oracle).apa_reports(oracle, targets, m, rng)


def apa_counts(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng) -> np.ndarray:
    """Support counts of m APA reports, exact in law (module docstring; hashed reports: their aggregate)."""
    from .forms import form_of

    return form_of(oracle).apa_counts(oracle, targets, m, rng)


def apa_mean_support(oracle: FrequencyOracle, r: int) -> float:
    """s̄ = E[min(K, r)], K the genuine size (unary reports; the hashing search has no closed form)."""
    from .forms import form_of

    return form_of(oracle).apa_mean_support(oracle, r)


def unary_apa_reports(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng) -> np.ndarray:
    """m packed APA reports of a unary-report oracle (OUE, SUE; module docstring)."""
    gen = as_generator(rng)
    d, r = oracle.d, targets.size
    others = np.setdiff1d(np.arange(d, dtype=np.int64), targets)
    k = gen.choice(d + 1, size=m, p=oracle.support_size_pmf())
    j = np.minimum(k, r)
    bits = np.zeros((m, d), dtype=bool)
    rank_t = np.argsort(np.argsort(gen.random((m, r)), axis=1), axis=1)  # a uniform order of T per report
    rank_o = np.argsort(np.argsort(gen.random((m, others.size)), axis=1), axis=1)
    bits[:, targets] = rank_t < j[:, None]
    bits[:, others] = rank_o < (k - j)[:, None]
    return np.packbits(bits, axis=1)


def unary_apa_counts(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng) -> np.ndarray:
    """Support counts of m APA reports of a unary-report oracle, exact in law (module docstring)."""
    from ._draws import _subset_sums

    gen = as_generator(rng)
    d, r = oracle.d, targets.size
    others = np.setdiff1d(np.arange(d, dtype=np.int64), targets)
    out = np.zeros(d, dtype=np.int64)
    per_k = gen.multinomial(m, oracle.support_size_pmf())
    for k in np.flatnonzero(per_k):
        j = min(int(k), r)
        out[targets] += _subset_sums(gen, r, j, int(per_k[k]))
        out[others] += _subset_sums(gen, others.size, int(k) - j, int(per_k[k]))
    return out
