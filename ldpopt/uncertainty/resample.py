"""Resampling on the fast path: B count vectors at once, and methods applied to a batch.

``draw_counts`` draws B independent count vectors from the oracle's joint-exact law (the same
decompositions as each oracle's ``sample_counts``, see ldpopt/oracles/*) as one (B, d) array with no
Python loop: GRR as Binomial(n_v, p − q) kept users plus one Multinomial of the rest per row;
OUE/SUE/OLH/BLH as independent Binomial(n_v, p) + Binomial(n − n_v, q). HR and SS have no batched
decomposition here; they loop over the B resamples, each draw vectorised over the domain
(``oracle.sample_counts``).

``apply_batch`` applies a registered method to every row of a (B, d) batch of raw estimates. The
O(d) closed forms whose formula is a row-wise array expression (base, base-pos, base-cut, norm,
norm-mul) are vectorised over the batch; Norm-Sub runs the registry's projection once per row
without building an Estimate (a batched sort or Michelot iteration over the whole (B, d) array was
measured 2× slower: the per-row projection only sorts the few candidates above a lower bound on its
shift); all are tested against the registry's own function row by row; every other method (MLE-Apx, Norm-Cut, Norm-Hyb, EM, Power, …) is called
once per resample on an :class:`~ldpopt.Estimate` (not vectorised over a batch in the registry; a
loop over B, never over values). Before that loop, Power, PowerNS and Calibrate (power law, s fitted
by MLE) get every resample's s fit and posterior mean at once over the union of the resamples'
counts (:mod:`ldpopt.methods._power_batch`), stored in the memos the per-resample calls read.
"""

from __future__ import annotations

import numpy as np

from .. import methods as _methods
from .. import oracles as _oracles
from ..estimate import Estimate
from ..methods.baseline import cut_threshold
from ..methods.normalize import norm_mul_rows, project_simplex

__all__ = ["BATCHED", "POWER_FITTED", "apply_batch", "draw_counts", "oracle_of", "resample_estimates"]

BATCHED = ("base", "base-pos", "base-cut", "norm", "norm-mul", "norm-sub")


def oracle_of(estimate: Estimate):
    """The oracle object that produced ``estimate`` (its registry name and meta parameters)."""
    extra = {k: estimate.meta[k] for k in ("g", "k") if k in estimate.meta}
    if estimate.oracle == "olh" and "g" in extra:
        extra = {"g": extra["g"]}
    return _oracles.get(estimate.oracle, epsilon=estimate.epsilon, d=estimate.d, **extra)


def draw_counts(oracle, true_counts, size: int, rng: np.random.Generator) -> np.ndarray:
    """(size, d) int64 support counts, each row an independent draw of ``oracle.sample_counts``."""
    tc = np.asarray(true_counts, dtype=np.int64)
    d, n = tc.shape[0], int(tc.sum())
    name = oracle.name
    if name == "grr":
        kept = rng.binomial(tc, oracle.p - oracle.q, size=(size, d))
        rest = n - kept.sum(axis=1)
        return kept + rng.multinomial(rest, np.full(d, 1.0 / d))
    if name in ("oue", "sue", "olh", "blh"):
        return (rng.binomial(tc, oracle.p, size=(size, d))
                + rng.binomial(n - tc, oracle.q, size=(size, d))).astype(np.int64)
    return np.stack([oracle.sample_counts(tc, rng) for _ in range(size)])


# methods that fit the power-law exponent s by maximum likelihood on each resample (default options)
POWER_FITTED = ("power", "power-ns", "calibrate")
_POWER_FITTED = POWER_FITTED  # the name tests/test_power_batch.py reads


def _prefit_power_law(ests, params) -> None:
    """Fit s of every resample at once (:func:`ldpopt.methods._power_batch.prefit`: the fits in
    lockstep over the union of the resamples' counts) when the method would fit it by MLE; the
    per-row calls then find their fit in the memo of :func:`ldpopt.methods._power_fit.fit_mle`."""
    if params.get("s") is not None or params.get("fit", "mle") != "mle" \
            or params.get("prior", "power-law") != "power-law" or not ests:
        return
    from ..methods import _power_batch, bayes
    from ..methods import _power_fit as _fit_memo

    lo, hi = bayes._check_bounds(params.get("s_bounds", bayes._DEFAULT_S_BOUNDS))
    X, S, n = np.stack([bayes._x(e) for e in ests]), bayes._engine_sd(ests[0]), ests[0].n
    _power_batch.prefit(X, S, n, lo, hi)
    fits = [_fit_memo.fit_mle(x, S, n, lo, hi) for x in X]   # memo hits: no fit, no warning
    _power_batch.prefill_means(X, S, n, [np.nan if at_hi else s for s, at_hi in fits])


def resample_estimates(estimate: Estimate, counts) -> list[Estimate]:
    """One :class:`~ldpopt.Estimate` per row of ``counts`` (B, d), with ``estimate``'s n, ε, p, q,
    oracle and meta: what the methods that are not batched are called on."""
    return [Estimate.from_counts(c, estimate.n, estimate.epsilon, estimate.p, estimate.q,
                                 oracle=estimate.oracle, **estimate.meta) for c in counts]


def apply_batch(estimate: Estimate, method: str, F: np.ndarray, counts: np.ndarray | None = None,
                progress=None, estimates=None, prefit: bool = True, **params) -> np.ndarray:
    """``method`` applied to each row of the raw estimates F (B, d); ``counts`` (B, d) are the
    matching support counts (needed by the methods that are not batched). ``progress``: called with
    1 after each row of a method that runs row by row (a progress bar's ``update``). ``estimates``:
    :func:`resample_estimates` of ``counts`` when the caller already built them (several methods on
    the same resamples). ``prefit=False`` skips the batched power-law fit of Power, PowerNS and
    Calibrate: for a caller that already ran it on these ``estimates`` with these ``params`` (the
    fits are in the memo; checking the memo again costs a hash of every row)."""
    name = _methods.get(method).name
    if name == "base":
        return F
    if name == "base-pos":
        return np.maximum(F, 0.0)
    if name == "base-cut":
        t = max(cut_threshold(estimate, params.get("alpha", 2.0)), 0.0)
        return np.where(F >= t, F, 0.0)
    if name == "norm":
        return F + ((1.0 - F.sum(axis=1)) / F.shape[1])[:, None]
    if name == "norm-mul":
        return norm_mul_rows(F)
    if name == "norm-sub":
        # one O(d) projection per row (the registry's own, candidates above a lower bound on the
        # shift): measured faster than a batched Michelot/sort over the (B, d) array
        # (benchmarks/bench_uncertainty.py), and it skips building B Estimate objects
        return np.stack([project_simplex(f) for f in F])
    if counts is None:
        raise ValueError(f"method {name!r} is not batched: apply_batch needs the support counts")
    info = _methods.get(name)
    out = np.empty_like(F)
    ests = resample_estimates(estimate, counts) if estimates is None else estimates
    if name in POWER_FITTED and prefit:
        _prefit_power_law(ests, params)
    for i, e in enumerate(ests):
        out[i] = info.func(e, **params)
        if progress is not None:
            progress(1)
    return out
