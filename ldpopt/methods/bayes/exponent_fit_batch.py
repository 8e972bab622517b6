"""The MLE of the power-law exponent s (Jia & Gong INFOCOM 2019 §III-C, Eq. 16) for B resamples at
once: the fits of a bootstrap's resampled estimates in lockstep, over the union of their counts.

Notes: docs/notes/python.md, "ldpopt.methods.bayes.exponent_fit_batch"."""

from __future__ import annotations

import numpy as np

from . import engine as core
from . import exponent_fit as pf
from . import exponent_grid as pm
from . import posterior_memo as memo

COARSE_NODES = 16
FINE_NODES = 16
WIDEN = 0.02          # fine interval: the coarse roots' range plus 2 % of the cell on each side
CHECK_TOL = 1e-12


def _prior_terms(n: int, s_arr) -> np.ndarray:
    """(len(s), 3): log H_n(s), E_prior[log k], Var_prior[log k] (a loop over few s values)."""
    out = np.empty((len(s_arr), 3))
    for i, s in enumerate(s_arr):
        logH, Ap, Bp = pf._prior_logk_moments(core.Prior("power-law", n, s=float(s)))
        out[i] = logH, Ap, Bp - Ap * Ap
    return out


def _data_terms(W, ux, S, n, s_arr) -> np.ndarray:
    """(4, B, ns): per resample (row of the multiplicities W) the data parts Σ_v L_z, −Σ_v E_post
    log k, Σ_v Var_post log k, and Σ_v |E_post log k| (the scale of the check), from one multi-s
    pass over the union ``ux``."""
    L = pm.logsums(ux, S, n, s_arr, split_k=True)                        # (ns, U, 3)
    A = np.exp(L[:, :, 1] - L[:, :, 0])
    Bm = np.exp(L[:, :, 2] - L[:, :, 0])
    return np.stack([W @ L[:, :, 0].T, -(W @ A.T), W @ (Bm - A * A).T, W @ np.abs(A).T])


def _values(data, prior, d) -> np.ndarray:
    """(3, B, ns): ℓ (up to Σ_v G), ℓ', ℓ'' from the data and prior parts (``exponent_fit`` doc)."""
    return np.stack([data[0] - d * prior[:, 0], data[1] + d * prior[:, 1], data[2] - d * prior[:, 2]])


def _interp(nodes, vals, s: float) -> np.ndarray:
    """Barycentric interpolation at one s of ``vals`` (N, M) given at Chebyshev ``nodes``."""
    return core._bary_eval(nodes, vals, np.array([s]))[0]


def _root(nodes, table, n, d, a, b) -> float:
    """Root in (a, b) of the interpolated ℓ' (data part ``table`` (N, 2): ℓ'_data, ℓ''_data; the
    prior part exact): Newton safeguarded by bisection, to the resolution of float64."""
    def gh(s):
        dg, dh = _interp(nodes, table, s)
        pr = _prior_terms(n, [s])[0]
        return dg + d * pr[1], dh - d * pr[2]

    s = 0.5 * (a + b)
    for _ in range(200):
        g, h = gh(s)
        if g > 0:
            a = s
        else:
            b = s
        step = -g / h if h < 0 else np.inf
        s_new = s + step
        if not a < s_new < b:
            s_new = 0.5 * (a + b)
        if abs(s_new - s) <= 4e-16 * (1.0 + abs(s)) or b - a <= 4e-16 * (1.0 + abs(s)):
            return float(s_new)
        s = s_new
    return float(s)


def _cheb(a: float, b: float, N: int) -> np.ndarray:
    nodes = core._cheb_nodes(a, b, N)
    nodes[0], nodes[-1] = b, a                            # exact ends (cos rounding)
    return nodes


def fit_mle_batch(X, S: float, n: int, lo: float, hi: float) -> list[tuple[float, bool]]:
    """``fit_mle(x, S, n, lo, hi)`` for every row x of X (B, d), in lockstep (module doc)."""
    X = np.asarray(X, dtype=np.float64)
    B, dd = X.shape
    d = float(dd)
    ux, inv = np.unique(X, return_inverse=True)
    inv = inv.reshape(B, dd)
    W = np.zeros((B, ux.shape[0]))
    np.add.at(W, (np.repeat(np.arange(B), dd), inv.ravel()), 1.0)
    grid = np.expm1(np.linspace(np.log1p(lo), np.log1p(hi), pf.GRID_POINTS))
    grid[0], grid[-1] = lo, hi
    gv = _values(_data_terms(W, ux, S, n, grid), _prior_terms(n, grid), d)   # (3, B, ng)
    best = np.argmax(gv[0], axis=1)
    cands = [[(float(grid[best[r]]), float(gv[0, r, best[r]]))] for r in range(B)]
    fallback = np.zeros(B, dtype=bool)
    up = (gv[1, :, :-1] > 0) & (gv[1, :, 1:] <= 0)                          # (B, ng − 1)
    for i in np.flatnonzero(up.any(axis=0)):   # a loop over the few grid cells, not the resamples
        rows = np.flatnonzero(up[:, i])
        a, b = float(grid[i]), float(grid[i + 1])
        nodes = _cheb(a, b, COARSE_NODES)
        data = _data_terms(W[rows], ux, S, n, nodes)
        roots = np.array([_root(nodes, data[1:3, j].T, n, d, a, b) for j in range(rows.size)])
        w = WIDEN * (b - a)
        fa, fb = max(a, float(roots.min()) - w), min(b, float(roots.max()) + w)
        fnodes = _cheb(fa, fb, FINE_NODES)
        checks = fa + (fb - fa) * np.array([0.37, 0.71])
        allv = _data_terms(W[rows], ux, S, n, np.r_[fnodes, checks])         # (4, R, N + 2)
        fdata, cdata = allv[:, :, :FINE_NODES], allv[:, :, FINE_NODES:]
        vals = _values(fdata, _prior_terms(n, fnodes), d)
        # bracket on exact values: the fine ends are nodes (fnodes[-1] = fa, fnodes[0] = fb)
        ok = (vals[1, :, -1] > 0) & (vals[1, :, 0] <= 0)
        for c, sc in enumerate(checks):
            est = core._bary_eval(fnodes, fdata[1].T, np.array([sc]))[0]
            scale = cdata[3, :, c] + d * abs(_prior_terms(n, [sc])[0, 1])
            ok &= np.abs(est - cdata[1, :, c]) <= CHECK_TOL * scale
        for j, r in enumerate(rows):
            if not ok[j]:
                fallback[r] = True
                continue
            # the fine bracket may be an end itself when a root sits on it
            s = _root(fnodes, fdata[1:3, j].T, n, d, fa, fb)
            ell = float(_interp(fnodes, fdata[0, j][:, None], s)[0]) - d * _prior_terms(n, [s])[0, 0]
            cands[r].append((s, ell))
    out = []
    for row in range(B):
        if fallback[row]:
            out.append(pf._fit_mle(*np.unique(X[row], return_counts=True), S, n, lo, hi,
                                   pf.GRID_POINTS, True))
            continue
        s, _ = max(cands[row], key=lambda c: c[1])
        out.append((float(s), bool(s >= hi)))
    return out


def prefit(X, S: float, n: int, lo: float, hi: float) -> int:
    """Fill ``exponent_fit``'s memo with the batched fits of the rows of X, under the keys
    ``fit_mle(x, S, n, lo, hi)`` looks up; returns the number of rows fitted. Rows already in the
    memo are skipped; nothing is done when the batch would not fit in the memo."""
    X = np.asarray(X, dtype=np.float64)
    keys = [pf.memo_key(x, S, n, lo, hi, pf.GRID_POINTS, True)[0] for x in X]
    todo = [i for i, k in enumerate(keys) if k not in pf._FIT_MEMO]
    if not todo or 2 * len(todo) > pf._FIT_MEMO_SIZE:
        return 0
    if len(pf._FIT_MEMO) + len(todo) > pf._FIT_MEMO_SIZE:
        pf._FIT_MEMO.clear()
    for i, res in zip(todo, fit_mle_batch(X[todo], S, n, lo, hi)):
        pf._FIT_MEMO[keys[i]] = res
    return len(todo)


MEAN_NODES = 16
MEAN_MAX_WIDTH = 0.25  # s range of one interpolant of the posterior means (choice; else per row)


def prefill_means(X, S: float, n: int, s_rows) -> int:
    """Fill the posterior-mean memo (:mod:`.posterior_memo`) for rows x of X (B, d) under the
    power-law prior with exponent ``s_rows[r]`` (NaN: skip the row); returns the rows filled
    (rows already in the memo are skipped; none when the memo's bound would be exceeded).

    log E[k | x] = L_k − L_z (:mod:`.engine`) is analytic in s; it is computed on the union of
    the rows' distinct x at ``MEAN_NODES`` Chebyshev points of [min s, max s] (one engine call per
    node: ``core.logsums``, the engine of the per-row path) and interpolated in s per row. Two check
    points in the interval are computed exactly; unless every union value's interpolant is within
    1e-12 (absolute in log E[k], i.e. relative in E[k]) of them, or when the s range is wider than
    ``MEAN_MAX_WIDTH``, nothing is filled and every row takes the per-row path."""
    X = np.asarray(X, dtype=np.float64)
    s_rows = np.asarray(s_rows, dtype=np.float64)
    keys = [memo.key(x, S, core.Prior("power-law", n, s=float(s))) if np.isfinite(s) else None
            for x, s in zip(X, s_rows)]
    rows = np.array([r for r, k in enumerate(keys) if k is not None and k not in memo.MEMO],
                    dtype=np.intp)                                   # rows not already stored
    if rows.size < 2 or rows.size * X.shape[1] > memo.MEMO_VALUES // 2:
        return 0
    a, b = float(s_rows[rows].min()), float(s_rows[rows].max())
    if b - a > MEAN_MAX_WIDTH:
        return 0
    a, b = a - 1e-3 * (b - a + 1e-3), b + 1e-3 * (b - a + 1e-3)
    a = max(a, 0.0)
    ux, inv = np.unique(X[rows], return_inverse=True)
    inv = inv.reshape(rows.size, X.shape[1])
    nodes = _cheb(a, b, MEAN_NODES)
    checks = a + (b - a) * np.array([0.29, 0.83])
    def logmean(s):
        L = core.logsums(ux, S, core.Prior("power-law", n, s=float(s)), ("z", "k"), relative=True)
        return L[:, 1] - L[:, 0]
    table = np.stack([logmean(s) for s in nodes])          # (N, U): a loop over the few nodes
    exact = np.stack([logmean(s) for s in checks])
    if not np.all(np.isfinite(table)) or not np.all(
            np.abs(core._bary_eval(nodes, table, checks) - exact) <= 1e-12):
        return 0
    if sum(v.size for v in memo.MEMO.values()) + rows.size * X.shape[1] > memo.MEMO_VALUES:
        memo.MEMO.clear()
    w = core._bary_weights(MEAN_NODES)
    for j, r in enumerate(rows):
        s = float(s_rows[r])
        diff = s - nodes
        if np.any(diff == 0):
            lm = table[int(np.argmax(diff == 0))]
        else:
            cw = w / diff
            lm = (cw @ table) / cw.sum()
        out = np.exp(lm[inv[j]])
        out.setflags(write=False)
        memo.MEMO[keys[r]] = out
    return int(rows.size)
