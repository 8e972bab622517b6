"""Resampling on the fast path: B count vectors at once, and methods applied to a batch.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.resample"."""

from __future__ import annotations

import numpy as np

from .. import methods as _methods
from .. import oracles as _oracles
from ..estimate import Estimate, central_noise

__all__ = ["CentralNoise", "apply_batch", "draw_counts", "oracle_of", "resample_estimates"]


class CentralNoise:
    """What resampling asks of an oracle, for a central-noise estimate (``Estimate.from_central``): the
    parametric bootstrap's draws are the world's exact counts plus fresh noise of the same mechanism
    and scale (``sample_counts_batch``), never a frequency oracle's reports."""

    def __init__(self, mechanism, scale: float):
        self.mechanism, self.scale = mechanism, float(scale)

    def sample_counts_batch(self, true_counts, size: int, rng) -> np.ndarray:
        """(size, d) float64 noisy counts: ``true_counts`` plus independent noise in every cell."""
        c = np.asarray(true_counts, dtype=np.float64)
        noise = self.mechanism.sample(int(size) * c.shape[0], self.scale, rng)
        return c[None, :] + noise.reshape(int(size), c.shape[0])


def oracle_of(estimate: Estimate):
    """The oracle object that produced ``estimate`` (its registry name and the structural parameters
    of its meta, ``FrequencyOracle.from_estimate``); for a central-noise estimate, a
    :class:`CentralNoise` drawing the mechanism's noise."""
    if (found := central_noise(estimate)) is not None:
        return CentralNoise(*found)
    return _oracles.oracle_class(estimate.oracle).from_estimate(estimate)


def draw_counts(oracle, true_counts, size: int, rng: np.random.Generator) -> np.ndarray:
    """(size, d) int64 support counts, each row an independent draw of ``oracle.sample_counts``
    (``oracle.sample_counts_batch``: one vectorised draw where the oracle's law allows)."""
    return oracle.sample_counts_batch(np.asarray(true_counts, dtype=np.int64), size, rng)


def resample_estimates(estimate: Estimate, counts) -> list[Estimate]:
    """One :class:`~ldpopt.Estimate` per row of ``counts`` (B, d), with ``estimate``'s n, ε, p, q,
    oracle and meta: what the methods that are not batched are called on."""
    return [Estimate.from_counts(c, estimate.n, estimate.epsilon, estimate.p, estimate.q,
                                 oracle=estimate.oracle, **estimate.meta) for c in counts]


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
    with a batched form) and ``POWER_FITTED`` (those preparing a batch)."""
    if name == "BATCHED":
        return tuple(m for m in _methods.names() if _methods.get(m).batched is not None)
    if name == "POWER_FITTED":
        return tuple(m for m in _methods.names() if _methods.get(m).prepare_batch is not None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
