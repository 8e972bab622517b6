"""Numeric columns on [0, 1] for the Square Wave experiments.

Notes: docs/notes/python.md, "ldpopt.numeric.columns"."""

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
