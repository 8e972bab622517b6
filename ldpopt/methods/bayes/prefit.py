"""Power's exponent fits for a batch of resamples (a bootstrap's, ``choose``'s), before the per-row
calls: :func:`prefit_rows` serves the ``prepare_batch`` capability of Power, PowerNS and Calibrate
(:mod:`ldpopt.methods.registry`; ``bayes._prepare_power_batch``), called by
:func:`ldpopt.uncertainty.resample.apply_batch`.
"""

from __future__ import annotations

import numpy as np

from . import exponent_fit as _fit_memo
from . import exponent_fit_batch

__all__ = ["PREFIT_CHUNK", "PREFIT_SPREAD", "prefit_rows"]


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


def prefit_rows(X, S, n, lo, hi) -> None:
    """Fit s of every resample (the rows of counts X (B, d), noise scale S, n users, s in [lo, hi]) in batches (:func:`ldpopt.methods.bayes.exponent_fit_batch.prefit`: the fits in
    lockstep over the union of the batch's counts) ; the
    per-row calls then find their fit in the memo of :func:`ldpopt.methods.bayes.exponent_fit.fit_mle`.
    Where the two probe fits differ by more than :data:`PREFIT_SPREAD`, the batches are
    :data:`PREFIT_CHUNK` rows of similar largest count (*choice*: the largest count orders the
    fitted exponent best among the statistics tried, correlation −0.70 to −0.85 where s spreads,
    −0.57 for the variance on BMS-WebView-1, GRR ε = 0.5), so each batch's roots lie close
    together; otherwise one batch of every row. The
    posterior means are prefilled per group of rows whose s lie within the interpolant's width
    :data:`ldpopt.methods.bayes.exponent_fit_batch.MEAN_MAX_WIDTH` (wider groups would take the per-row path)."""
    top = X.max(axis=1)
    ends = [_fit_memo._fit_mle(*np.unique(X[i], return_counts=True), S, n, lo, hi, _fit_memo.GRID_POINTS, True)[0]
            for i in (int(np.argmin(top)), int(np.argmax(top)))]  # the probe (not memoised: the batch fits every row)
    size = PREFIT_CHUNK if abs(ends[1] - ends[0]) > PREFIT_SPREAD else X.shape[0]
    for rows in _chunks_by(top, size):
        exponent_fit_batch.prefit(X[rows], S, n, lo, hi)
    fits = [_fit_memo.fit_mle(x, S, n, lo, hi) for x in X]   # memo hits: no fit, no warning
    s_rows = np.array([np.nan if at_hi else s for s, at_hi in fits])
    for rows in _groups_within(s_rows, exponent_fit_batch.MEAN_MAX_WIDTH):
        exponent_fit_batch.prefill_means(X[rows], S, n, s_rows[rows])
