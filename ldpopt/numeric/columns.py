"""Numeric columns on [0, 1] for the Square Wave experiments.

* Transaction lengths L ∈ {1, 2, …} (:mod:`ldpopt.datasets.lengths`: Retail basket sizes,
  BMS-WebView-1/2 session lengths). Choices (the paper has no count data): L is treated as the
  rounding of a continuous quantity in [L, L + 1) and dequantised uniformly (seeded), then log-scaled,
  x = log(L + U) / log(L_max + 1) ∈ [0, 1): the lengths are heavy-tailed (BMS-WebView-1: median 1,
  max 267), and on a linear scale nearly all mass would sit in the first few of d bins.
* The synthetic Beta(a, b) (Li et al. use Beta(5, 2)): the registry's ``beta`` dataset is Beta(a, b)
  bucketised into its d bins; each user gets a uniform point in their bucket, (v + U)/d — with a fine
  bucketing (d = 4096 in the config) this is Beta(5, 2) to within 1/4096 in every value.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_generator

__all__ = ["unit_values"]


def unit_values(dataset, rng) -> np.ndarray:
    """One value in [0, 1] per user of ``dataset`` (a length column or a bucketised ``beta``)."""
    gen = as_generator(rng)
    labels = np.repeat(np.asarray(dataset.labels, dtype=np.float64), dataset.counts)
    u = gen.random(labels.size)
    if dataset.meta.get("numeric") == "length":
        return np.log(labels + u) / np.log(float(dataset.meta["max"]) + 1.0)
    if dataset.meta.get("generator") == "beta":
        return (labels + u) / dataset.d
    raise ValueError(f"dataset must be a numeric column (a transaction-length column or 'beta'), got {dataset.name!r}")
