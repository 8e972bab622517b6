"""Cyclic coordinate descent for non-negative ridge regression on a sparse design (Numba): the problem
of :mod:`ldpopt.sketches.ridge`.

Notes: docs/notes/devices.md, "ldpopt.kernels.ridge"."""

from __future__ import annotations

import numpy as np

from .._extras import require

numba = require("numba", "kernels", "the non-negative ridge coordinate descent (ldpopt.kernels.ridge)")
njit = numba.njit

__all__ = ["coordinate_descent", "lasso_support"]

_HISTORY = 16  # states kept to recognise a cycle of up to 15 sweeps


@njit(cache=True)
def _gap(indptr, indices, data, y, beta, w, R):
    """scikit-learn's duality gap for this problem (``gap_enet`` with no L1 term: its "formulation
    B", ‖R‖² + (β/2)‖w‖² − Rᵀy + ‖XᵀR‖²/(2β))."""
    d = indptr.shape[0] - 1
    xtr2 = 0.0
    for j in range(d):
        g = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            g += data[p] * R[indices[p]]
        xtr2 += g * g
    return np.dot(R, R) + 0.5 * beta * np.dot(w, w) - np.dot(R, y) + xtr2 / (2.0 * beta)


@njit(cache=True)
def _fingerprint(w, R):
    """A 64-bit hash of the state's bit patterns (equal states, equal hashes)."""
    h = np.uint64(1469598103934665603)
    for a in (w, R):
        bits = a.view(np.uint64)
        for i in range(bits.shape[0]):
            h = (h ^ bits[i]) * np.uint64(1099511628211)
    return h


@njit(cache=True)
def _cd(indptr, indices, data, y, beta, w, max_sweeps, tol, sklearn_rule, cycles):
    d = indptr.shape[0] - 1
    R = y.copy()
    norm2 = np.zeros(d)
    for j in range(d):
        s = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            s += data[p] * data[p]
            R[indices[p]] -= data[p] * w[j]
        norm2[j] = s
    gap_tol = tol * np.dot(y, y)
    if sklearn_rule and _gap(indptr, indices, data, y, beta, w, R) <= gap_tol:
        return w, 0, 0
    H = _HISTORY
    Wh, Rh, fp = np.empty((H, d)), np.empty((H, R.shape[0])), np.zeros(H, np.uint64)
    sweeps = 0
    while sweeps < max_sweeps:
        sweeps += 1
        dmax = 0.0
        wmax = 0.0
        for j in range(d):
            if norm2[j] == 0.0:
                continue
            g = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                g += data[p] * R[indices[p]]
            tmp = g + w[j] * norm2[j]
            new = tmp / (norm2[j] + beta) if tmp > 0.0 else 0.0
            delta = new - w[j]
            if delta != 0.0:
                for p in range(indptr[j], indptr[j + 1]):
                    R[indices[p]] -= delta * data[p]
                w[j] = new
            dmax = max(dmax, abs(delta))
            wmax = max(wmax, abs(new))
        if not sklearn_rule:
            if dmax <= tol * wmax:
                break
            continue
        if (wmax == 0.0 or dmax / wmax <= tol or sweeps == max_sweeps) and \
                _gap(indptr, indices, data, y, beta, w, R) <= gap_tol:
            break
        if not cycles:
            continue
        # a state seen P sweeps ago repeats every P sweeps from here on, and none of its sweeps
        # passed the stopping test: the state after the last sweep is known without running them
        f = _fingerprint(w, R)
        for P in range(1, min(sweeps, H)):
            k = (sweeps - P) % H
            if fp[k] == f and np.array_equal(Wh[k], w) and np.array_equal(Rh[k], R):
                left = (max_sweeps - sweeps) % P
                if left:
                    w[:] = Wh[(sweeps - P + left) % H]
                return w, max_sweeps, P
        k = sweeps % H
        Wh[k], Rh[k], fp[k] = w, R, f
    return w, sweeps, 0


def coordinate_descent(indptr, indices, data, y, beta: float, w0=None, max_sweeps: int = 100_000,
                       tol: float = 1e-15, sklearn_rule: bool = False, cycles: bool = True) -> tuple[np.ndarray, int, int]:
    """(w, sweeps, period): the non-negative ridge solution by cyclic coordinate descent from ``w0`` (zeros by
    default) on the CSC design (module notes). ``sklearn_rule=True`` stops as scikit-learn's
    ``enet_coordinate_descent`` does with no L1 term: after a sweep whose largest move is ≤ ``tol``
    times the largest coefficient (or after the last of ``max_sweeps``), when its duality gap
    (:func:`_gap`) is ≤ ``tol``·‖y‖². In floating point the sweeps end in a cycle of states (a
    fixed point or, measured at n = 200,000, d = 1,000, a cycle of 4 sweeps reached after 159); a
    state equal bit for bit to one of the last 15 repeats with that period, so the state after the
    last of ``max_sweeps`` is read off the cycle instead of computed (``sweeps`` is then reported as
    ``max_sweeps`` and ``period`` is the cycle's length, else 0; ``cycles=False`` runs them all, the
    reference of that shortcut)."""
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    d = indptr.shape[0] - 1
    w = np.zeros(d) if w0 is None else np.maximum(np.asarray(w0, dtype=np.float64), 0.0).copy()
    return _cd(indptr, np.ascontiguousarray(indices, dtype=np.int64), np.ascontiguousarray(data, dtype=np.float64),
               np.ascontiguousarray(y, dtype=np.float64), float(beta), w, int(max_sweeps), float(tol),
               bool(sklearn_rule), bool(cycles))


@njit(cache=True)
def _lasso_gap(indptr, indices, xbar, yc, alpha, w, Rs, s, XtA):
    """scikit-learn's ``gap_enet`` (formulation A, no L2 term, ``positive``) for the centred 0/1
    design; fills XtA = X_cᵀR and returns (gap, max XtA). R = Rs + s (a residual kept as a sparse
    part and a common shift, module notes of :func:`lasso_support`)."""
    R = Rs + s
    sumR = R.sum()
    for j in range(indptr.shape[0] - 1):
        g = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            g += R[indices[p]]
        XtA[j] = g - xbar[j] * sumR
    dual_norm = XtA.max()
    R2 = np.dot(R, R)
    Ry = np.dot(R, yc)
    primal = 0.5 * R2 + alpha * np.abs(w).sum()
    scale = alpha / dual_norm if dual_norm > alpha else 1.0
    dual = -0.5 * scale * scale * R2 + scale * Ry
    return primal - dual, dual_norm


@njit(cache=True)
def _lasso(indptr, indices, y, alpha, max_iter, tol):
    rows = y.shape[0]
    d = indptr.shape[0] - 1
    nnz = np.empty(d)
    xbar = np.empty(d)
    norm2 = np.empty(d)
    for j in range(d):
        c = float(indptr[j + 1] - indptr[j])
        nnz[j] = c
        xbar[j] = c / rows
        norm2[j] = c * (1.0 - xbar[j]) ** 2 + (rows - c) * xbar[j] ** 2  # Σ over rows of (x − x̄)²
    yc = y - y.mean()
    w = np.zeros(d)
    Rs = yc.copy()  # the residual is Rs + s: an update of w_j changes Rs on X_j's rows and s by Δ·x̄_j
    s = 0.0
    sumRs = Rs.sum()
    XtA = np.empty(d)
    gap_tol = tol * np.dot(yc, yc)
    gap, dual_norm = _lasso_gap(indptr, indices, xbar, yc, alpha, w, Rs, s, XtA)
    if gap <= gap_tol:
        return w, 0
    excluded = np.zeros(d, np.bool_)
    active = np.empty(d, np.int64)
    n_active = 0
    for j in range(d):  # gap-safe screening (scikit-learn's, Eq. 11 of arXiv 1802.07481)
        if norm2[j] == 0.0:
            excluded[j] = True
            continue
        d_j = (1.0 - abs(XtA[j] / max(alpha, dual_norm))) / np.sqrt(norm2[j])
        if d_j <= np.sqrt(2.0 * gap) / alpha:
            active[n_active] = j
            n_active += 1
        else:
            excluded[j] = True
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        w_max = 0.0
        d_w_max = 0.0
        for a in range(n_active):
            j = active[a]
            w_j = w[j]
            g = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                g += Rs[indices[p]]
            g += s * nnz[j] - xbar[j] * (sumRs + rows * s)  # X_cjᵀ(Rs + s)
            tmp = g + w_j * norm2[j]
            if tmp < 0.0:
                new = 0.0
            else:
                new = max(tmp - alpha, 0.0) / norm2[j]
            if new != w_j:
                delta = new - w_j
                for p in range(indptr[j], indptr[j + 1]):
                    Rs[indices[p]] -= delta
                sumRs -= delta * nnz[j]
                s += delta * xbar[j]
                w[j] = new
            d_w_max = max(d_w_max, abs(new - w_j))
            w_max = max(w_max, abs(new))
        if w_max == 0.0 or d_w_max / w_max <= tol or n_iter == max_iter:
            gap, dual_norm = _lasso_gap(indptr, indices, xbar, yc, alpha, w, Rs, s, XtA)
            if gap <= gap_tol:
                break
            kept = 0
            for j in range(d):
                if excluded[j]:
                    continue
                d_j = (1.0 - abs(XtA[j] / max(alpha, dual_norm))) / np.sqrt(norm2[j])
                if d_j <= np.sqrt(2.0 * gap) / alpha:
                    active[kept] = j
                    kept += 1
                else:
                    if w[j] != 0.0:
                        for p in range(indptr[j], indptr[j + 1]):
                            Rs[indices[p]] += w[j]
                        sumRs += w[j] * nnz[j]
                        s -= w[j] * xbar[j]
                        w[j] = 0.0
                    excluded[j] = True
            n_active = kept
            sumRs = Rs.sum()  # against drift
    return w, n_iter


def lasso_support(indptr, indices, y, alpha: float, max_iter: int = 1000, tol: float = 1e-4) -> tuple[np.ndarray, int]:
    """(w, iterations) of scikit-learn's ``Lasso(alpha, positive=True)`` with its intercept on a 0/1
    design given by its CSC structure, ``alpha`` in scikit-learn's units (the L1 weight is
    alpha·rows): its centring of X and y, its cyclic coordinate descent with gap-safe screening and
    its stopping test (``enet_coordinate_descent``), update for update. The centred design is never
    formed: a column is X_j − x̄_j, and the residual is kept as a sparse part plus a common shift,
    so an update costs O(nnz(X_j)) instead of O(rows). The support (w > 0) is pure-ldp's RAPPOR
    server's LASSO selection."""
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    return _lasso(indptr, np.ascontiguousarray(indices, dtype=np.int64), y, float(alpha) * y.shape[0],
                  int(max_iter), float(tol))
