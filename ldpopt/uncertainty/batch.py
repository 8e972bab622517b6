"""The bootstrap intervals of several methods on many estimates, cheaply (the coverage grid's path).

:func:`bootstrap_many` yields, for each estimate r and every method m and level, exactly what
``intervals(estimates[r], m, level, n_resamples=B, interval="basic", rng=seeds[r])`` returns as
``lo``, ``hi`` and ``fallback`` — per value, and per row of each query matrix given (subset sums)
— equal to 1e-12 (``tests/test_uncertainty_batch.py``; the same floats in practice). It is the
construction of :mod:`.bootstrap` (basic interval on the joint-exact resamples of the Norm-Sub
world, Base's interval at the flagged entries, the hull with it elsewhere; Norm-Mul's ratio pivot),
computed with less work:

1. **one draw serves every method**: the B count vectors of estimate r are drawn once
   (:func:`.resample.draw_counts`) and every method is applied to the same resamples
   (:func:`.resample.apply_batch`) — what the per-call path draws for each method when every call
   gets the same seed (*choice*: common random numbers across methods, so the differences
   between methods are measured on the same resamples);
2. **quantiles only where they can matter**: an entry the fit puts within ``FALLBACK_SE`` Base
   standard errors of 0 gets Base's interval whatever the bootstrap quantiles are (the flag of
   :mod:`.bootstrap`), so the per-value quantiles are taken only at the other entries — on a
   heavy tail a few hundred of d = 20,000;
3. **one quantile pass serves every level**, and one sparse product every subset kind (``np.quantile`` with all the levels' probabilities);
4. **one power-law fit per resample serves Power, PowerNS and Calibrate**: the batched fit of s
   (:func:`.resample.apply_batch`'s prefit) runs once per estimate; the other two find it in the
   memo without the per-row hashing of a second prefit.

Methods that are not batched (EM, Power, PowerNS, Calibrate, MLE-Apx, Norm-Cut, Norm-Hyb,
MLE-Apx-paper) are called once per resample on :class:`~ldpopt.Estimate` objects built once per
estimate and shared by every such method.

Measured on one cell (``benchmarks/bench_uncertainty_grid.py profile``: CPU seconds per
bootstrapped repetition of the seven methods, this path against the per-call one).
The loop left is over the estimates (repetitions), each step an array pass over B × d.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import methods as _methods
from .._validation import as_generator
from .analytic import analytic, pair_parameters
from .bootstrap import FALLBACK_SE, _check_level, _check_resamples, boundary_hull, ratio_pivot
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

    levels = [_check_level(lv) for lv in levels]
    B = _check_resamples(n_resamples)
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
