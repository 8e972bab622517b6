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

from ..oracles.base import FrequencyOracle
from .crafting import unary_apa_counts, unary_apa_reports  # noqa: F401  (re-exported)
from .forms import form_of

__all__ = ["apa_counts", "apa_mean_support", "apa_reports"]


def apa_reports(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng):
    """m APA reports (module docstring) in ``oracle``'s report format; ``targets`` already checked.
    Unary reports: :func:`unary_apa_reports`; hashed reports: :func:`.apa_hashing.apa_hash_reports`
    (``oracle.report_form``, :mod:`.forms`)."""
    return form_of(oracle).apa_reports(oracle, targets, m, rng)


def apa_counts(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng) -> np.ndarray:
    """Support counts of m APA reports, exact in law (module docstring; hashed reports: their aggregate)."""
    return form_of(oracle).apa_counts(oracle, targets, m, rng)


def apa_mean_support(oracle: FrequencyOracle, r: int) -> float:
    """s̄ = E[min(K, r)], K the genuine size (unary reports; the hashing search has no closed form)."""
    return form_of(oracle).apa_mean_support(oracle, r)




