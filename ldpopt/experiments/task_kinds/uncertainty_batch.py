"""Task kind ``coverage-batch``: the coverage table of ``coverage`` with the repetitions vectorised.

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.uncertainty_batch`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import methods as _methods
from ...queries import query_matrix
from ...uncertainty.analytic import score_interval, variance_line
from ...uncertainty.batch import bootstrap_many
from ...uncertainty.resample import apply_batch, draw_counts
from ...uncertainty.selective import conditional_topk, count_law
from ...uncertainty.topk import select_top
from ..registry import kind
from ..toolkit import QUERY_METHODS, active_methods, dataset_of, params, task_oracle
from .uncertainty import _bands, _subsets

__all__ = ["coverage_batch"]

K = 10


def _batch_rows(method, how, level, lo, hi, truth, masks, ref, flag=None, metric="coverage") -> list[dict]:
    """Per repetition (row of lo/hi, (R, m)) and band: coverage, count, mean width, median width
    relative to ``ref`` = (lo, hi) of Base on the same entries (both clipped to [0, 1]; NaN where
    Base's clipped width is 0 on every entry of the band); ``flag`` (R, m): also ``flagged``, how
    many of the band's entries got Base's interval; ``metric``: the rows' metric name."""
    truth = np.broadcast_to(truth, lo.shape)
    hit = (lo <= truth) & (truth <= hi)
    w = hi - lo
    bw = np.clip(ref[1], 0, 1) - np.clip(ref[0], 0, 1)
    rw = np.full(w.shape, np.nan)
    np.divide(np.clip(hi, 0, 1) - np.clip(lo, 0, 1), bw, out=rw, where=bw > 0)
    out = []
    for band, m in masks.items():
        m = np.broadcast_to(m, lo.shape)
        cnt = m.sum(axis=1)
        if not cnt.any():
            continue
        cov = np.where(m, hit, 0).sum(axis=1) / np.maximum(cnt, 1)
        wid = np.where(m, w, 0).sum(axis=1) / np.maximum(cnt, 1)
        with warnings.catch_warnings():  # a repetition whose band has no finite ratio: NaN, said in the docstring
            warnings.simplefilter("ignore", RuntimeWarning)
            rel = np.nanmedian(np.where(m & np.isfinite(rw), rw, np.nan), axis=1)
        nflag = None if flag is None else np.where(m, flag, False).sum(axis=1)
        for r in np.flatnonzero(cnt):
            out.append({"method": method, "metric": metric, "level": level, "band": band, "value": float(cov[r]),
                        "count": int(cnt[r]), "width": float(wid[r]), "rel_width": float(rel[r]), "interval": how,
                        "batch_rep": int(r), **({} if nflag is None else {"flagged": int(nflag[r])})})
    return out


@kind("coverage-batch", registry_methods=QUERY_METHODS, oracle_params=True)
def coverage_batch(task) -> list[dict]:
    ds = dataset_of(task)
    rng = task.rng()
    p = params(task)
    levels = [float(x) for x in p.get("levels", [0.9, 0.95])]
    R = int(p.get("reps", 100))
    B = int(p.get("resamples", 200))
    boot_reps = int(p.get("bootstrap_reps", R))
    f = ds.frequencies

    o = task_oracle(task, ds.d)
    n = int(ds.counts.sum())
    C = draw_counts(o, ds.counts, R, rng)
    F = (C / n - o.q) / (o.p - o.q)
    est0 = o.estimate(C[0], n)
    masks = _bands(f, est0.sigma)
    subs = {k: query_matrix(M, ds.d) for k, M in _subsets(rng, f, int(p.get("subset_size", 10)),
                                                           int(p.get("subsets", 50))).items()}
    f_sub = {k: np.asarray(U @ f).ravel() for k, U in subs.items()}
    step = 1.0 / (n * (o.p - o.q))
    a_b, b_b = variance_line(est0, "base")
    rows: list[dict] = []
    point = {"base": F, "norm": F + ((1.0 - F.sum(axis=1)) / ds.d)[:, None]}
    base_iv = {lv: score_interval(F, a_b, b_b, lv) for lv in levels}
    order = select_top(F, K)
    for m in ("base", "norm"):
        if m not in active_methods(task):
            continue
        a, b = variance_line(est0, m)
        for lv in levels:
            lo, hi = score_interval(point[m], a, b, lv)
            rows += _batch_rows(m, "score", lv, lo, hi, f, masks, base_iv[lv])
            for k, U in subs.items():
                aq, bq = variance_line(est0, m, U)
                qa, qb = variance_line(est0, "base", U)
                pq, bpq = np.asarray(U @ point[m].T).T, np.asarray(U @ F.T).T
                rows += _batch_rows(m, "score", lv, *score_interval(pq, aq, bq, lv), f_sub[k],
                                    {k: np.ones(U.shape[0], bool)}, score_interval(bpq, qa, qb, lv))
    for m in active_methods(task):
        if m in QUERY_METHODS:
            continue
        S = order if m == "base" else select_top(apply_batch(est0, m, F, counts=C), K)
        fs = f[S]
        for lv in levels:
            lo, hi, flag = conditional_topk(F, S, float(a_b[0]), float(b_b[0]), lv, step,
                                            law=count_law(o.name, n, o.p, o.q))
            blo, bhi = (np.take_along_axis(x, S, axis=1) for x in base_iv[lv])
            one = {"topk": np.ones(K, bool)}
            rows += _batch_rows(m, "conditional", lv, lo, hi, fs, one, (blo, bhi))
            if m == "base":
                rows += _batch_rows(m, "fixed-set score", lv, blo, bhi, fs, {"topk-set": np.ones(K, bool)}, (blo, bhi))
            hit = (lo <= fs) & (fs <= hi)
            rows += [{"method": m, "metric": "coverage_rank", "level": lv, "band": f"rank{i + 1}",
                      "value": float(hit[:, i].mean()), "count": R, "flagged": int(flag[:, i].sum()),
                      "interval": "conditional", "batch_rep": -1} for i in range(K)]
    # the methods intervals() bootstraps: every method without analytic intervals (Base and Norm have them)
    boot = [m for m in active_methods(task) if m not in QUERY_METHODS and not _methods.get(m).analytic]
    if boot and boot_reps > 0:
        ests = [o.estimate(C[r], n) for r in range(min(boot_reps, R))]
        seeds = [int(s) for s in rng.integers(2**63, size=len(ests))]
        for r, out in bootstrap_many(ests, boot, levels, B, seeds, queries=subs, raw=True):
            for m in boot:
                for lv in levels:
                    ref = tuple(x[r:r + 1] for x in base_iv[lv])
                    rows += _tag(_flag_rows(m, lv, out[(m, lv, None)], out[("raw", m, lv, None)], f, masks, ref), r)
                    for k, U in subs.items():
                        qa, qb = variance_line(est0, "base", U)
                        ref = score_interval(np.asarray(U @ F[r]).ravel()[None], qa, qb, lv)
                        rows += _tag(_flag_rows(m, lv, out[(m, lv, k)], out[("raw", m, lv, k)], f_sub[k],
                                                {k: np.ones(U.shape[0], bool)}, ref), r)
    return rows


def _flag_rows(m, lv, got, raw, truth, masks, ref) -> list[dict]:
    """One repetition of a bootstrapped method: ``coverage`` rows of what ``intervals`` returns
    (``got`` = (lo, hi, fallback)) with the ``flagged`` count per band, and on the entries that are
    not flagged only: ``coverage_unflagged`` (the same interval: the hull of the method's basic
    interval with Base's), ``coverage_unflagged_raw`` (``raw`` = the method's own basic interval,
    before the hull) and ``coverage_unflagged_base`` (Base's score interval ``ref`` on the same
    entries: the reference, since which entries go unflagged depends on the same data)."""
    lo, hi, flag = got
    free = {b: mk & ~flag for b, mk in masks.items()}
    return (_batch_rows(m, "basic+base", lv, lo[None], hi[None], truth, masks, ref, flag=flag[None])
            + _batch_rows(m, "basic+base", lv, lo[None], hi[None], truth, free, ref, metric="coverage_unflagged")
            + _batch_rows(m, "basic", lv, raw[0][None], raw[1][None], truth, free, ref, metric="coverage_unflagged_raw")
            + _batch_rows(m, "score", lv, ref[0], ref[1], truth, free, ref, metric="coverage_unflagged_base"))


def _tag(rows: list[dict], r: int) -> list[dict]:
    """``rows`` of one repetition (computed as a batch of one) labelled with its ``batch_rep``."""
    for x in rows:
        x["batch_rep"] = r
    return rows
