"""Resampling on the fast path: B count vectors at once, and methods applied to a batch.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.resample"."""

from __future__ import annotations

import numpy as np

from .. import methods as _methods
from ..estimate import Estimate

__all__ = ["apply_batch", "draw_counts", "oracle_of", "resample_estimates"]


def oracle_of(estimate: Estimate):
    """The noise source that produced ``estimate`` (``estimate.noise``: an oracle rebuilt from its
    name and structural parameters, a central mechanism at its scale, or a source of one's own): what
    the parametric bootstrap draws from (``sample_counts_batch``)."""
    return estimate.noise


def draw_counts(oracle, true_counts, size: int, rng: np.random.Generator) -> np.ndarray:
    """(size, d) int64 support counts, each row an independent draw of ``oracle.sample_counts``
    (``oracle.sample_counts_batch``: one vectorised draw where the oracle's law allows)."""
    return oracle.sample_counts_batch(np.asarray(true_counts, dtype=np.int64), size, rng)


def resample_estimates(estimate: Estimate, counts) -> list[Estimate]:
    """One :class:`~ldpopt.Estimate` per row of ``counts`` (B, d), with ``estimate``'s n, ε, p, q,
    oracle and meta: what the methods that are not batched are called on."""
    n, p, q, src = estimate.n, estimate.p, estimate.q, estimate.noise
    return [Estimate((c / n - q) / (p - q), c, n, estimate.epsilon, p, q, estimate.oracle, estimate.meta, src)
            for c in np.asarray(counts, dtype=np.float64)]


def apply_batch(estimate: Estimate, method, F: np.ndarray, counts: np.ndarray | None = None,
                progress=None, estimates=None, prefit: bool = True, **params) -> np.ndarray:
    """``method`` (a name, record or callable: :func:`ldpopt.methods.resolve`) applied to each row of
    the raw estimates F (B, d); ``counts`` (B, d) are the matching support counts (needed by the
    methods without a batched form). A method's ``batched`` form runs on the whole batch; any other
    is called once per row on an :class:`~ldpopt.Estimate`, after its ``prepare_batch`` (Power's
    exponent fits of every row at once) unless ``prefit=False``. ``progress``: called with 1 after
    each row of a method that runs row by row (a progress bar's ``update``). ``estimates``:
    :func:`resample_estimates` of ``counts`` when the caller already built them (several methods on
    the same resamples). ``prefit=False``: for a caller that already prepared these ``estimates``
    with these ``params`` (the fits are in the memo; checking the memo again costs a hash of every
    row)."""
    info = _methods.resolve(method)
    if info.batched is not None:
        return info.batched(estimate, F, **params)
    if counts is None:
        raise ValueError(f"method {info.name!r} is not batched: apply_batch needs the support counts")
    out = np.empty_like(F)
    ests = resample_estimates(estimate, counts) if estimates is None else estimates
    if info.prepare_batch is not None and prefit:
        info.prepare_batch(ests, params)
    for i, e in enumerate(ests):
        out[i] = info.func(e, **params) if info.declared else _methods.postprocess(e, info, **params)
        if progress is not None:
            progress(1)
    return out


def __getattr__(name: str):
    """The name lists of earlier releases, derived from the method registry: ``BATCHED`` (the methods
    with a batched form) and ``POWER_FITTED`` (those preparing a batch); ``CentralNoise``, now
    :class:`ldpopt.privacy.central.CentralNoise` (deprecated here)."""
    if name == "CentralNoise":
        from .._deprecated import warn_moved
        from ..privacy.central import CentralNoise

        warn_moved("ldpopt.uncertainty.resample.CentralNoise", "ldpopt.privacy.central.CentralNoise", 2)
        return CentralNoise
    if name == "BATCHED":
        return tuple(m for m in _methods.names() if _methods.get(m).batched is not None)
    if name == "POWER_FITTED":
        return tuple(m for m in _methods.names() if _methods.get(m).prepare_batch is not None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
