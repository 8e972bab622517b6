"""The power-law log-sums of :mod:`ldpopt.methods.bayes.engine` at many exponents s in one pass
(the 11-point grid of the s fit, :func:`ldpopt.methods.bayes.exponent_fit.fit_mle`).

Notes: docs/notes/python.md, "ldpopt.methods.bayes.exponent_grid"."""

from __future__ import annotations

import numpy as np

from . import engine as core
from . import euler_maclaurin as emq

MOMENTS = ("z", "l1", "l2")
_UNSHIFTED_MAX = 600.0   # s_max·log n up to which the direct sums need no shift (module doc)
_GEMM_MNK = 200_000      # matrix products kept below OpenBLAS's multithreading threshold


def _priors(n: int, s_arr) -> list:
    return [core.Prior("power-law", n, s=float(s)) for s in s_arr]


def union_windows(c, v, priors) -> tuple[np.ndarray, np.ndarray]:
    """Per point, the union over the priors (s values) of the engine's provable windows."""
    lo, hi = core._windows_c(c, v, priors[0])
    for p in priors[1:]:  # a loop over the few s values, not the data
        l_, h_ = core._windows_c(c, v, p)
        lo, hi = np.minimum(lo, l_), np.maximum(hi, h_)
    return lo, hi


def _q(c, v, kr, k):
    """The s-independent part of r_s(k) in the engine's factored, cancellation-free form."""
    return -((k - kr) * (k + kr - 2.0 * c)) / (2.0 * v)


def _endpoint_series(t0, c, v, kr, s, shift) -> np.ndarray:
    """Taylor coefficients of exp(r_s(t0 + h) − shift) for every (s, point): shape (ns·m, 8).

    As :func:`.euler_maclaurin._endpoint_series` with s a vector (rows ordered s-major)."""
    ns, m, order = s.shape[0], t0.shape[0], emq._ORDER
    j = np.arange(1, order)
    inv = ((-1.0) ** (j + 1) / j)[None, :] / t0[:, None] ** j[None, :]       # log(t0 + h) series
    a = np.zeros((ns, m, order))
    a[:, :, 0] = _q(c, v, kr, t0)[None, :] - s[:, None] * np.log(t0)[None, :] - shift
    a[:, :, 1] = -(t0 - c) / v
    a[:, :, 2] = -0.5 / v
    a[:, :, 1:] += -s[:, None, None] * inv[None, :, :]
    a = a.reshape(ns * m, order)
    e = np.zeros((ns * m, order))
    e[:, 0] = np.exp(a[:, 0])
    for jj in range(1, order):  # exp of a power series: j e_j = Σ_i i a_i e_{j−i}
        i = np.arange(1, jj + 1)
        e[:, jj] = (i[None, :] * a[:, 1:jj + 1] * e[:, jj - i]).sum(axis=1) / jj
    return e


def _em_tail(c, v, kr, a, b, s, unshifted: bool) -> np.ndarray:
    """log Σ_{k=a..b} μ_m(k) e^{r_s(k)} by Euler–Maclaurin for every s: shape (ns, m, 3).

    Same panels, Gauss–Legendre nodes and endpoint corrections as
    :func:`.euler_maclaurin._em_tail_logsums` (its docstring has the error bound)."""
    ns, m = s.shape[0], c.shape[0]
    af, bf, t, w = emq.em_nodes(a, b, v)
    logt = np.log(t)
    q = _q(c[:, None], v, kr[:, None], t)
    if unshifted:
        # e^{r_s(t)} = e^{q(t)} · t^{−s}: one exp per (point, node) for e^{q}, one per (point, node,
        # s) for t^{−s}, and the weighted moment sums as small per-point matrix products
        shift = np.zeros((ns, m))
        E = w * np.exp(q)
        M3 = np.stack([E, E * logt, E * (logt * logt)], axis=1)          # (m, 3, T)
        G = np.exp(logt[:, :, None] * -s[None, None, :])                  # (m, T, ns)
        integrals = np.matmul(M3, G).transpose(2, 0, 1)                   # (ns, m, 3)
    else:
        r = q[None] - s[:, None, None] * logt[None]                       # (ns, m, T)
        ends = np.stack([af, bf], axis=1)
        r_end = _q(c[:, None], v, kr[:, None], ends)[None] - s[:, None, None] * np.log(ends)[None]
        shift = np.maximum(np.where(w[None] > 0, r, -np.inf).max(axis=2), r_end.max(axis=2))
        ew = np.exp(r - shift[:, :, None]) * w[None]
        integrals = np.stack([ew.sum(axis=2), (ew * logt[None]).sum(axis=2),
                              (ew * (logt * logt)[None]).sum(axis=2)], axis=2)
    ser_a = _endpoint_series(af, c, v, kr, s, shift)
    ser_b = _endpoint_series(bf, c, v, kr, s, shift)
    out = np.empty((ns, m, len(MOMENTS)))
    for jm, name in enumerate(MOMENTS):
        integral = integrals[:, :, jm]
        mu_a = np.tile(emq._mu_series(name, af), (ns, 1))
        mu_b = np.tile(emq._mu_series(name, bf), (ns, 1))
        fa = (emq._series_mul(ser_a, mu_a) * emq._FACT).reshape(ns, m, -1)
        fb = (emq._series_mul(ser_b, mu_b) * emq._FACT).reshape(ns, m, -1)
        tot = integral + 0.5 * (fa[:, :, 0] + fb[:, :, 0])
        for p, bern in enumerate(emq.EM_BERNOULLI, start=1):
            tot = tot + bern * (fb[:, :, 2 * p - 1] - fa[:, :, 2 * p - 1])
        with np.errstate(divide="ignore"):
            out[:, :, jm] = np.log(tot) + shift
    return out


def _direct_block(c, v, kr, lo, hi, s, n, unshifted: bool, split_k: bool = False) -> np.ndarray:
    """log Σ_{k=lo..hi} μ_m(k) e^{r_s(k)} for a block of points, every s: shape (ns, p, 3).

    ``split_k``: the products chunked over k (blocks of rows × a slice of k under the threading
    threshold) instead of over rows only; on a long shared range of k the row chunks are single
    rows (matrix–vector products re-reading T per row, ~10× slower: the batched fits of
    :mod:`.exponent_fit_batch`). Another summation order: equal to rounding, not bit-identical."""
    ns, p = s.shape[0], c.shape[0]
    kmin, kmax = int(lo.min()), int(hi.max())
    U, W = kmax - kmin + 1, int((hi - lo).max()) + 1
    out = np.empty((ns, p, len(MOMENTS)))
    if unshifted and U <= 2 * W:
        # one shared range of k: E[p, k] = e^{q} (per point and k), T = k^{−s} μ_m(k) (per k and s)
        k = np.arange(kmin, kmax + 1, dtype=np.int64)
        logk = core._log_int(k, n)
        kf = k.astype(np.float64)
        valid = (k[None, :] >= lo[:, None]) & (k[None, :] <= hi[:, None])
        E = np.where(valid, np.exp(_q(c[:, None], v, kr[:, None], kf[None, :])), 0.0)
        T = np.power(kf[:, None], -s[None, :])      # (U, ns); pow: ≤ 1 ulp whatever s·log k
        TT = np.concatenate([T, T * logk[:, None], T * (logk * logk)[:, None]], axis=1)
        # row chunks keep each product below OpenBLAS's threading threshold (m·n·k ≤ 262,144): a
        # threaded product of this size costs ~20× more CPU on a loaded machine (measured)
        if split_k:
            rows = min(p, 256)
            kc = max(8, _GEMM_MNK // (rows * TT.shape[1]))
            tot = np.concatenate([sum(E[i:i + rows, j:j + kc] @ TT[j:j + kc] for j in range(0, U, kc))
                                  for i in range(0, p, rows)])
        else:
            rows = max(1, _GEMM_MNK // (U * TT.shape[1]))
            tot = np.concatenate([E[i:i + rows] @ TT for i in range(0, p, rows)])
        tot = tot.reshape(p, len(MOMENTS), ns).transpose(2, 0, 1)
        with np.errstate(divide="ignore"):
            return np.log(tot)
    offs = np.arange(W, dtype=np.int64)
    k = lo[:, None] + offs[None, :]
    valid = k <= hi[:, None]
    k = np.where(valid, k, hi[:, None])
    kf = k.astype(np.float64)
    logk = core._log_int(k, n)
    q = _q(c[:, None], v, kr[:, None], kf)
    for i in range(ns):  # per s (few values): the engine's shifted sums
        r = np.where(valid, q - s[i] * logk, -np.inf)
        mx = r.max(axis=1, keepdims=True)
        e = np.exp(r - mx)
        with np.errstate(divide="ignore"):
            out[i, :, 0] = np.log(e.sum(axis=1)) + mx[:, 0]
            out[i, :, 1] = np.log((e * logk).sum(axis=1)) + mx[:, 0]
            out[i, :, 2] = np.log((e * logk * logk).sum(axis=1)) + mx[:, 0]
    return out


def exact_logsums(x, S: float, n: int, s_arr, max_block: int = 2_000_000,
                  split_k: bool = False) -> np.ndarray:
    """Relative L_z, L_log k, L_(log k)² at every s of ``s_arr``: shape (ns, len(x), 3).

    The per-s counterpart is ``core.exact_logsums(x, S, core.Prior("power-law", n, s),
    ("z", "l1", "l2"), relative=True)`` (module doc for what is shared)."""
    x = np.asarray(x, dtype=np.float64)
    s = np.asarray(s_arr, dtype=np.float64)
    ns, m = s.shape[0], x.shape[0]
    out = np.full((ns, m, len(MOMENTS)), -np.inf)
    if m == 0:
        return out
    priors = _priors(n, s)
    c, v = x, float(S) * float(S)
    kr = priors[0].kref(c)
    lo, hi = union_windows(c, v, priors)
    unshifted = float(s.max()) * np.log(max(n, 1)) <= _UNSHIFTED_MAX
    em = np.zeros(m, dtype=bool)
    if v >= core.EM_MIN_SCALE ** 2:
        em = hi - np.maximum(lo, core.EM_START) + 1 >= core.EM_MIN_TERMS
    if np.any(em):
        a = np.maximum(lo[em], core.EM_START)
        out[:, em] = _em_tail(c[em], v, kr[em], a, hi[em], s, unshifted)
        hi = np.where(em, np.minimum(hi, core.EM_START - 1), hi)
    length = hi - lo + 1
    todo = np.flatnonzero(length > 0)
    order = todo[np.argsort(length[todo], kind="stable")]
    start = 0
    while start < order.shape[0]:
        W = int(length[order[min(order.shape[0], start + 1) - 1]])
        stop = min(order.shape[0], start + max(1, max_block // (ns * max(W, 1))))
        W = int(length[order[stop - 1]])
        stop = min(stop, start + max(1, max_block // (ns * W)))
        idx = order[start:stop]
        part = _direct_block(c[idx], v, kr[idx], lo[idx], hi[idx], s, n, unshifted, split_k)
        out[:, idx] = np.logaddexp(out[:, idx], part)
        start = stop
    return out


def logsums(x, S: float, n: int, s_arr, *, cheb_n: int = 20, check_tol: float = 1e-12,
            split_k: bool = False) -> np.ndarray:
    """Relative (L_z, L_log k, L_(log k)²) at every s: shape (ns, len(x), 3); the multi-s
    counterpart of ``core.logsums(x, S, Prior("power-law", n, s), ("z", "l1", "l2"),
    relative=True)`` with the same panels, nodes, dense/sparse decisions and checks (module doc)."""
    x = np.asarray(x, dtype=np.float64)
    s = np.asarray(s_arr, dtype=np.float64)
    ns = s.shape[0]
    ux, inv = np.unique(x, return_inverse=True)
    if ux.shape[0] < 3 * cheb_n:
        return exact_logsums(ux, S, n, s, split_k=split_k)[:, inv]
    priors = _priors(n, s)
    c, v = ux, float(S) * float(S)
    pid = np.floor((ux - ux[0]) / float(S))  # float panel ids: S can be 1e-100 (S_FLOOR)
    region = (c >= 1).astype(np.int64) + (c > n)
    starts = np.flatnonzero(np.r_[True, (pid[1:] != pid[:-1]) | (region[1:] != region[:-1])])
    ends = np.r_[starts[1:], ux.shape[0]]
    counts = ends - starts
    need = cheb_n + 2
    dense = np.zeros((ns, starts.shape[0]), dtype=bool)
    for i, p in enumerate(priors):  # the engine's per-s decision (a loop over s values)
        lo, hi = core._windows_c(c, v, p)
        work_point = (hi - lo + 1).astype(np.float64)
        seg_work = np.add.reduceat(work_point, starts)
        dense[i] = (counts >= need) & (seg_work > (cheb_n + 2) * work_point[ends - 1])
    # zeros, not empty: the conversion below runs over every entry (then keeps the interpolated
    # ones), and uninitialised memory there raised numpy's "invalid value" warnings (NaN/inf garbage)
    out = np.zeros((ns, ux.shape[0], len(MOMENTS)))
    exact_mask = np.ones((ns, ux.shape[0]), dtype=bool)
    dense_idx = np.flatnonzero(dense.any(axis=0))
    is_z = np.arange(len(MOMENTS)) == 0
    gdiff = core._g_minus_gc(ux, S, priors[0])        # does not depend on s
    if dense_idx.shape[0]:
        node_list, check_list = [], []
        for p in dense_idx:  # loop over panels, not over the domain
            node_list.append(core._cheb_nodes(ux[starts[p]], ux[ends[p] - 1], cheb_n))
            cnt = counts[p]
            check_list.append(starts[p] + np.array([cnt // 3, (2 * cnt) // 3]))
        nodes_all = np.concatenate(node_list)
        checks_all = np.concatenate(check_list)
        pts = np.r_[nodes_all, ux[checks_all]]
        vals = exact_logsums(pts, S, n, s, split_k=split_k)                  # (ns, P, 3)
        gp = core._g_minus_gc(pts, S, priors[0])
        with np.errstate(invalid="ignore"):
            vals = np.where(is_z, vals + gp[None, :, None], vals - vals[:, :, [0]])
        nn = nodes_all.shape[0]
        for j, p in enumerate(dense_idx):
            sl = slice(starts[p], ends[p])
            nv = vals[:, j * cheb_n:(j + 1) * cheb_n]                        # (ns, N, 3)
            ok_s = dense[:, p] & np.all(np.isfinite(nv), axis=(1, 2))
            if not ok_s.any():
                continue
            flat = np.where(ok_s[:, None, None], nv, 0.0).transpose(1, 0, 2).reshape(cheb_n, -1)
            interp = core._bary_eval(node_list[j], flat, ux[sl]).reshape(-1, ns, len(MOMENTS))
            ci = checks_all[2 * j:2 * j + 2] - starts[p]
            cv = vals[:, nn + 2 * j:nn + 2 * j + 2]                           # (ns, 2, 3)
            err = np.abs(interp[ci].transpose(1, 0, 2) - cv)
            scale = 1.0 + np.where(is_z, np.abs(cv), 0.0)
            good = ok_s & np.all(np.isfinite(err) & (err <= check_tol * scale), axis=(1, 2))
            for i_s in np.flatnonzero(good):
                out[i_s, sl] = interp[:, i_s]
                out[i_s, checks_all[2 * j:2 * j + 2]] = cv[i_s]
                exact_mask[i_s, sl] = False
        done = ~exact_mask
        Lz = out[:, :, 0] - gdiff[None, :]
        conv = np.concatenate([Lz[:, :, None], out[:, :, 1:] + Lz[:, :, None]], axis=2)
        out = np.where(done[:, :, None], conv, out)
    need_any = exact_mask.any(axis=0)
    if np.any(need_any):
        ex = exact_logsums(ux[need_any], S, n, s, split_k=split_k)
        sub = out[:, need_any]
        out[:, need_any] = np.where(exact_mask[:, need_any][:, :, None], ex, sub)
    return out[:, inv]
