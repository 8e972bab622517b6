"""The bootstrap intervals of several methods on many estimates, cheaply (the coverage grid's path).

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.batch"."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import methods as _methods
from .._validation import as_generator
from .analytic import analytic, pair_parameters
from .bootstrap import FALLBACK_SE, boundary_hull, check_level, check_resamples, ratio_pivot
from .fit import plausible_truth, population
from .resample import apply_batch, draw_counts, oracle_of, resample_estimates

__all__ = ["bootstrap_many"]


def bootstrap_many(estimates, methods, levels, n_resamples: int = 200, seeds=None, queries=None, params=None,
                   raw: bool = False):
    """Yield ``(r, out)`` for each estimate r, ``out[(method, level, key)] = (lo, hi, fallback)``
    with ``key`` None for the per-value intervals (arrays of length d) and each key of the dict
    ``queries`` (name → 0-1 query matrix, anything :func:`ldpopt.queries.query_matrix` accepts)
    for its rows. ``seeds[r]`` seeds the resamples of estimate r (default: r). ``raw``: also
    ``out[("raw", method, level, key)] = (lo, hi)``, the method's own basic interval clipped to
    [0, 1] before the Base fallback and hull (``boundary=None`` of :func:`.bootstrap.bootstrap`;
    per value NaN at the entries flagged by the fit, where no quantile is taken)."""
    from ..queries import query_matrix

    levels = [check_level(lv) for lv in levels]
    B = check_resamples(n_resamples)
    infos = [_methods.resolve(m) for m in methods]
    params = dict(params or {})
    estimates = list(estimates)
    seeds = list(range(len(estimates))) if seeds is None else list(seeds)
    if len(seeds) != len(estimates):
        raise ValueError(f"seeds: one per estimate ({len(estimates)}), got {len(seeds)}")
    probs = [x for lv in levels for x in (0.5 + lv / 2, 0.5 - lv / 2)]
    for r, est in enumerate(estimates):
        Us = {k: query_matrix(U, est.d) for k, U in (queries or {}).items()}
        spans = []
        if Us:
            U_all = sp.vstack(list(Us.values()), format="csr")
            ends = np.cumsum([U.shape[0] for U in Us.values()])
            spans = list(zip(ends - [U.shape[0] for U in Us.values()], ends))
        truth = population(plausible_truth(est), est.n)
        world = truth / truth.sum()
        C = draw_counts(oracle_of(est), truth, B, as_generator(seeds[r]))
        F = (C / est.n - est.q) / (est.p - est.q)
        keep = ~(world < FALLBACK_SE * analytic(est, "base", levels[0]).se)  # not flagged by the fit
        out: dict[tuple, tuple[np.ndarray, ...]] = {}  # (method, level, key) or ("raw", method, level, key)
        ests = None if all(m.batched is not None for m in infos) else resample_estimates(est, C)
        prepared = set()  # the batch preparations run on these resamples (Power's prefit, item 4 of the module doc)
        for info in infos:
            name = info.name
            boot = apply_batch(est, info, F, counts=C, estimates=ests, prefit=info.prepare_batch not in prepared,
                               **params)
            prepared.add(info.prepare_batch)
            T = _methods.postprocess(est, info, **params)
            _, Tp, bootp = ratio_pivot(info, est.f_tilde, F, T, boot)
            Q = np.quantile(bootp[:, keep] - world[keep], probs, axis=0)
            for i, lv in enumerate(levels):
                lo, hi = np.full(est.d, np.nan), np.full(est.d, np.nan)
                lo[keep] = np.clip(Tp[keep] - Q[2 * i], 0.0, 1.0)
                hi[keep] = np.clip(Tp[keep] - Q[2 * i + 1], 0.0, 1.0)
                out[(name, lv, None)] = boundary_hull(est, lv, None, world, lo, hi)
                if raw:
                    out[("raw", name, lv, None)] = (lo, hi)
            if Us:  # every query kind's rows in one product (one transposed copy of the resamples)
                BQ = np.asarray(U_all @ np.ascontiguousarray(bootp.T)).T
            for (k, U), (a, b) in zip(Us.items(), spans):
                wq, tq, bq = np.asarray(U @ world).ravel(), np.asarray(U @ Tp).ravel(), BQ[:, a:b]
                Qq = np.quantile(bq - wq, probs, axis=0)
                base_boot = None if pair_parameters(est) is not None else np.asarray((U @ F.T).T)
                for i, lv in enumerate(levels):
                    qlo, qhi = np.clip(tq - Qq[2 * i], 0.0, 1.0), np.clip(tq - Qq[2 * i + 1], 0.0, 1.0)
                    out[(name, lv, k)] = boundary_hull(est, lv, U, wq, qlo, qhi, base_boot=base_boot)
                    if raw:
                        out[("raw", name, lv, k)] = (qlo, qhi)
        yield r, out
