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
    """The oracle object that produced ``estimate`` (its registry name and the structural parameters
    of its meta, ``FrequencyOracle.from_estimate``)."""
    return _oracles.oracle_class(estimate.oracle).from_estimate(estimate)


def draw_counts(oracle, true_counts, size: int, rng: np.random.Generator) -> np.ndarray:
    """(size, d) int64 support counts, each row an independent draw of ``oracle.sample_counts``
    (``oracle.sample_counts_batch``: one vectorised draw where the oracle's law allows)."""
    return oracle.sample_counts_batch(np.asarray(true_counts, dtype=np.int64), size, rng)


# methods that fit the power-law exponent s by maximum likelihood on each resample (default options)
POWER_FITTED = ("power", "power-ns", "calibrate")


# The batched fit of s interpolates ℓ'(s) over the range of its rows' roots and falls back to the
# per-row fit where that range is too wide for its interpolant. Measured on 200 resamples
# (benchmarks/bench_uncertainty_grid.py profile, shared machine, CPU s for Power+PowerNS+Calibrate):
# where the fitted s spread over ≥ 0.3 (GRR ε ≤ 1, OUE/OLH ε = 0.5 on the small real data, GRR
# ε = 1 on Zipf(1.1)) 160–194 of 200 rows fell back, and batches of PREFIT_CHUNK rows ordered by
# their largest count cut that to ≤ 1 (BMS-WebView-2 OUE ε = 0.5: 12.1 → 2.1 s; BMS-WebView-1 GRR
# ε = 0.5: 5.4 → 2.7 s; Zipf GRR ε = 1: 6.9 → 5.4 s); where s spreads over < 0.05 no row falls back
# and the chunks only repeat the passes over the union (Zipf OUE ε = 4: 8.2 → 10.9 s; Emoji OUE ε = 1:
# 3.1 → 5.6 s). Hence (*choice*) the spread is probed first by fitting the two rows of smallest and
# largest largest-count one by one (two per-row fits, ~0.1–0.3 s), and the rows are chunked only where
# the probe differs by more than PREFIT_SPREAD (probes 0.31–0.90 in the first group, ≤ 0.024 in the
# second).
PREFIT_CHUNK = 25
PREFIT_SPREAD = 0.1


def _chunks_by(key, size: int):
    """Index arrays of ``size`` rows each (the last may be shorter), the rows ordered by ``key``."""
    order = np.argsort(key, kind="stable")
    return [order[i:i + size] for i in range(0, order.size, size)]


def _groups_within(s, width: float):
    """Index arrays of the finite entries of ``s``, ordered, each group spanning at most ``width``."""
    order = [int(i) for i in np.argsort(s, kind="stable") if np.isfinite(s[i])]
    groups, start = [], 0
    for j in range(1, len(order) + 1):
        if j == len(order) or s[order[j]] - s[order[start]] > width:
            groups.append(np.array(order[start:j], dtype=np.intp))
            start = j
    return groups


def _prefit_power_law(ests, params) -> None:
    """Fit s of every resample in batches (:func:`ldpopt.methods._power_batch.prefit`: the fits in
    lockstep over the union of the batch's counts) when the method would fit it by MLE; the
    per-row calls then find their fit in the memo of :func:`ldpopt.methods._power_fit.fit_mle`.
    Where the two probe fits differ by more than :data:`PREFIT_SPREAD`, the batches are
    :data:`PREFIT_CHUNK` rows of similar largest count (*choice*: the largest count orders the
    fitted exponent best among the statistics tried, correlation −0.70 to −0.85 where s spreads,
    −0.57 for the variance on BMS-WebView-1, GRR ε = 0.5), so each batch's roots lie close
    together; otherwise one batch of every row. The
    posterior means are prefilled per group of rows whose s lie within the interpolant's width
    :data:`ldpopt.methods._power_batch.MEAN_MAX_WIDTH` (wider groups would take the per-row path)."""
    if params.get("s") is not None or params.get("fit", "mle") != "mle" \
            or params.get("prior", "power-law") != "power-law" or not ests:
        return
    from ..methods import _power_batch, bayes
    from ..methods import _power_fit as _fit_memo

    lo, hi = bayes._check_bounds(params.get("s_bounds", bayes._DEFAULT_S_BOUNDS))
    X, S, n = np.stack([bayes._x(e) for e in ests]), bayes._engine_sd(ests[0]), ests[0].n
    top = X.max(axis=1)
    ends = [_fit_memo._fit_mle(*np.unique(X[i], return_counts=True), S, n, lo, hi, _fit_memo.GRID_POINTS, True)[0]
            for i in (int(np.argmin(top)), int(np.argmax(top)))]  # the probe (not memoised: the batch fits every row)
    size = PREFIT_CHUNK if abs(ends[1] - ends[0]) > PREFIT_SPREAD else X.shape[0]
    for rows in _chunks_by(top, size):
        _power_batch.prefit(X[rows], S, n, lo, hi)
    fits = [_fit_memo.fit_mle(x, S, n, lo, hi) for x in X]   # memo hits: no fit, no warning
    s_rows = np.array([np.nan if at_hi else s for s, at_hi in fits])
    for rows in _groups_within(s_rows, _power_batch.MEAN_MAX_WIDTH):
        _power_batch.prefill_means(X[rows], S, n, s_rows[rows])


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
