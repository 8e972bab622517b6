"""The adaptive pattern attack (APA) on unary encodings: crafted reports whose number of ones follows
the genuine law.

Notes: docs/notes/poisoning.md, "ldpopt.robust.apa"."""

from __future__ import annotations

import numpy as np

from ..oracles.base import FrequencyOracle
from .crafting import unary_apa_counts, unary_apa_reports  # noqa: F401  (re-exported)
from .forms import form_of

__all__ = ["apa_counts", "apa_mean_support", "apa_reports"]


def apa_reports(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng):
    """m APA reports (module notes) in ``oracle``'s report format; ``targets`` already checked.
    Unary reports: :func:`unary_apa_reports`; hashed reports: :func:`.apa_hashing.apa_hash_reports`
    (``oracle.report_form``, :mod:`.forms`)."""
    return form_of(oracle).apa_reports(oracle, targets, m, rng)


def apa_counts(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng) -> np.ndarray:
    """Support counts of m APA reports, exact in law (module notes; hashed reports: their aggregate)."""
    return form_of(oracle).apa_counts(oracle, targets, m, rng)


def apa_mean_support(oracle: FrequencyOracle, r: int) -> float:
    """s̄ = E[min(K, r)], K the genuine size (unary reports; the hashing search has no closed form)."""
    return form_of(oracle).apa_mean_support(oracle, r)




