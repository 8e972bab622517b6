"""Numerical engine for the Bayesian post-processors (Power, PowerNS, Calibrate): log-space sums over
the integer counts k of a prior times a Gaussian likelihood, for many observed counts at once, with no
overflow or NaN at any ε.

Notes: docs/notes/python.md, "ldpopt.methods.bayes.engine"."""

from __future__ import annotations

import functools

import numpy as np

from ..distinct import unique_inverse
from .euler_maclaurin import _em_tail_logsums, _moment_sums

__all__ = ["MOMENTS", "Prior", "exact_logsums", "log_reference", "logsums"]

# Moment multipliers μ_m(k) (linear scale; they multiply exp(r − max r) which is ≤ 1).
MOMENTS = ("z", "k", "k2", "l1", "l2")

# log k is tabulated (one table shared by every prior with the same n) up to this n; above it, it is
# computed on the window only, so memory and time never scale with n (n = 10⁹ would need 8 GB).
_LOGK_TABLE_MAX = 1 << 22


@functools.lru_cache(maxsize=2)
def _logk_table(n: int) -> np.ndarray:
    with np.errstate(divide="ignore"):
        t = np.log(np.arange(n + 1, dtype=np.float64))
    t.setflags(write=False)
    return t


def _log_int(k: np.ndarray, n: int) -> np.ndarray:
    """log k for integer arrays k in [0, n] (log 0 = −inf)."""
    if n <= _LOGK_TABLE_MAX:
        return _logk_table(n)[k]
    with np.errstate(divide="ignore"):
        return np.log(k.astype(np.float64))


class Prior:
    """An unnormalised prior log w(k) on the integers kmin..n with max log w ≤ 0.

    kind ``"power-law"``: w(k) = k^{-s}, k = 1..n (s ≥ 0, so w ≤ 1 = w(1)).
    kind ``"gaussian"``:  w(k) = exp(−(k − μ)²/(2τ²)), k = 0..n.
    """

    def __init__(self, kind: str, n: int, s: float = 1.0, mu: float = 0.0, tau: float = 1.0):
        self.kind, self.n = kind, int(n)
        self.s, self.mu, self.tau = float(s), float(mu), float(tau)
        self.kmin = 1 if kind == "power-law" else 0

    # -- the decomposition φ_x(k) = −(k − c)²/(2v) + A(x) + λ(k) (module doc) ----------------------
    def centre(self, x: np.ndarray, S: float) -> tuple[np.ndarray, float, np.ndarray]:
        """(c(x), v, A(x))."""
        x = np.asarray(x, dtype=np.float64)
        if self.kind == "gaussian":
            a, b = S * S, self.tau * self.tau
            return (self.mu * a + x * b) / (a + b), a * b / (a + b), -((x - self.mu) ** 2) / (2.0 * (a + b))
        return x, S * S, np.zeros_like(x)

    def lam(self, logk: np.ndarray) -> np.ndarray:
        """λ(k): the part of the prior not absorbed into the Gaussian (≤ 0)."""
        if self.kind == "power-law":
            return -self.s * logk
        return np.zeros_like(logk)

    def kref(self, c: np.ndarray) -> np.ndarray:
        """Support point nearest to c."""
        return np.clip(np.rint(c), self.kmin, self.n)

    def rel_phi(self, c, v, kr, k, logk=None):
        """r(k) = φ_x(k) − G(x) in the cancellation-free factored form."""
        if logk is None:
            logk = _log_int(np.asarray(k, dtype=np.int64), self.n)
        return -((k - kr) * (k + kr - 2.0 * c)) / (2.0 * v) + self.lam(logk)

    def probe(self, c: np.ndarray, v: float) -> np.ndarray:
        """A support point near the maximiser of r(k) (only makes the provable window tighter)."""
        kr = self.kref(c)
        if self.kind == "gaussian":
            return kr                      # r ≤ 0 = r(k_ref)
        n = self.n
        # Power law: d/dt[−(t − c)²/(2v) − s log t] = 0 ⇔ t² − ct + sv = 0; the larger root is the
        # local maximum when it exists, otherwise r decreases on t ≥ 1 and k = 1 is the maximiser.
        disc = c * c - 4.0 * self.s * v
        with np.errstate(invalid="ignore"):
            t = np.where((disc >= 0) & (c > 0), 0.5 * (c + np.sqrt(np.maximum(disc, 0.0))), 1.0)
        cands = np.stack([kr, np.clip(np.rint(t), 1, n), np.ones_like(c)])
        r = self.rel_phi(c[None, :], v, kr[None, :], cands, _log_int(cands.astype(np.int64), n))
        return np.take_along_axis(cands, np.argmax(r, axis=0)[None, :], axis=0)[0]


TAIL_LOG = 45.0
# Smallest count-scale noise sd the engine works with (ldpopt.methods.bayes._engine_sd): 1/(2S²) stays
# finite, and every relative term other than the nearest support point underflows to 0 exactly as
# it does at the true, smaller S (the S → 0 limit; the papers are silent on it).
S_FLOOR = 1e-100


def _tail_T(n: int) -> float:
    # Dropped mass ≤ (n + 1) e^{−T} · kept sum; this T makes it ≤ e^{−45} ≈ 2.9e-20 relative.
    return float(np.log(n + 1.0) + TAIL_LOG)


def log_reference(x, S: float, prior: Prior) -> np.ndarray:
    """G(x) = −(k_ref − c)²/(2v) + A(x): the absolute log-sum is L_m = L_m^rel + G (module doc)."""
    c, v, A = prior.centre(x, S)
    return -((prior.kref(c) - c) ** 2) / (2.0 * v) + A


def _windows_c(c, v, prior: Prior):
    kr = prior.kref(c)
    k0 = prior.probe(c, v)
    r0 = prior.rel_phi(c, v, kr, k0)
    R = _tail_T(prior.n) - r0                         # ≥ T since r0 ≤ 0
    delta = c - kr                                    # signed, |delta| = D
    D = np.abs(delta)
    two_vR = 2.0 * v * R
    W = np.sqrt(D * D + two_vR)
    near = two_vR / (D + W)                           # W − D without cancellation
    # window in k − k_ref: [delta − W, delta + W]; the side facing k_ref uses the stable form
    lo_off = np.where(delta > 0, -near, delta - W)
    hi_off = np.where(delta < 0, near, delta + W)
    # one extra point each side guards the rounding of the bounds (harmless to the proof)
    lo = np.maximum(kr + np.floor(lo_off) - 1.0, prior.kmin)
    hi = np.minimum(kr + np.ceil(hi_off) + 1.0, prior.n)
    lo = np.minimum(lo, k0)
    hi = np.maximum(hi, k0)
    return lo.astype(np.int64), hi.astype(np.int64)


def windows(x: np.ndarray, S: float, prior: Prior) -> tuple[np.ndarray, np.ndarray]:
    """Integer windows [lo, hi] outside of which every term is provably negligible (module doc)."""
    c, v, _ = prior.centre(x, S)
    return _windows_c(c, v, prior)


# Euler–Maclaurin tail (module doc, "Long windows"): used for k ≥ EM_START when the window has at
# least EM_MIN_TERMS points there and the Gaussian scale √v is at least EM_MIN_SCALE.
EM_START = 1000
EM_MIN_TERMS = 2_000
EM_MIN_SCALE = 1000.0


def exact_logsums(x, S: float, prior: Prior, moments=("z", "k"), *, relative: bool = False,
                  max_block: int = 2_000_000, tail_em: bool = True) -> np.ndarray:
    """L_m(x) (or L_m − G(x) with ``relative=True``) for each x and moment m, shape (len(x), M),
    by windowed direct sums of the relative terms (module doc), with the part k ≥ ``EM_START`` of
    long, smooth windows summed by Euler–Maclaurin (``tail_em=False``: direct sums everywhere).

    Vectorised over blocks of points of similar window length (points sorted by window length, so
    the padding waste is small); memory per block ≤ ``max_block`` float64 entries.
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.full((x.shape[0], len(moments)), -np.inf)
    if x.shape[0] == 0:
        return out
    c, v, _ = prior.centre(x, S)
    kr = prior.kref(c)
    lo, hi = _windows_c(c, v, prior)
    em = np.zeros(x.shape[0], dtype=bool)
    if tail_em and v >= EM_MIN_SCALE ** 2:
        em = hi - np.maximum(lo, EM_START) + 1 >= EM_MIN_TERMS
    if np.any(em):
        a = np.maximum(lo[em], EM_START)
        out[em] = _em_tail_logsums(c[em], v, kr[em], a, hi[em], prior, moments)
        hi = np.where(em, np.minimum(hi, EM_START - 1), hi)   # the direct part: k < EM_START
    length = hi - lo + 1
    todo = np.flatnonzero(length > 0)
    order = todo[np.argsort(length[todo], kind="stable")]
    start = 0
    m = order.shape[0]
    while start < m:
        W = int(length[order[start]])
        stop = min(m, start + max(1, max_block // max(W, 1)))
        W = int(length[order[stop - 1]])
        stop = min(stop, start + max(1, max_block // W))
        idx = order[start:stop]
        W = int(length[idx].max())
        offs = np.arange(W, dtype=np.int64)
        k = lo[idx, None] + offs[None, :]
        valid = k <= hi[idx, None]
        k = np.where(valid, k, hi[idx, None])
        kf = k.astype(np.float64)
        logk = _log_int(k, prior.n)
        r = prior.rel_phi(c[idx, None], v, kr[idx, None], kf, logk)
        r = np.where(valid, r, -np.inf)
        mx = r.max(axis=1, keepdims=True)
        e = np.exp(r - mx)
        for j, name in enumerate(moments):
            tot = _moment_sums(e, kf, logk, name)
            with np.errstate(divide="ignore"):
                out[idx, j] = np.logaddexp(out[idx, j], np.log(tot) + mx[:, 0])
        start = stop
    if not relative:
        out += log_reference(x, S, prior)[:, None]
    return out


def _cheb_nodes(a: float, b: float, N: int) -> np.ndarray:
    j = np.arange(N)
    return 0.5 * (a + b) + 0.5 * (b - a) * np.cos(np.pi * j / (N - 1))


def _bary_weights(N: int) -> np.ndarray:
    w = np.ones(N)
    w[1::2] = -1.0
    w[0] *= 0.5
    w[-1] *= 0.5
    return w


def _bary_eval(nodes: np.ndarray, vals: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Barycentric interpolation (2nd kind, Chebyshev points); vals shape (N, M)."""
    w = _bary_weights(nodes.shape[0])
    diff = t[:, None] - nodes[None, :]
    exact = diff == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        cw = w[None, :] / diff
        res = (cw @ vals) / cw.sum(axis=1, keepdims=True)
    hit = exact.any(axis=1)
    if np.any(hit):
        res[hit] = vals[np.argmax(exact[hit], axis=1)]
    return res


def _g_minus_gc(x, S, prior: Prior) -> np.ndarray:
    """G(x) − G_c(x): −(k_ref − c)²/(2v) + (clip(c) − c)²/(2v); exactly 0 when c ∉ [kmin, n]."""
    c, v, _ = prior.centre(x, S)
    cc = np.clip(c, prior.kmin, prior.n)
    return ((cc - c) ** 2 - (prior.kref(c) - c) ** 2) / (2.0 * v)


def logsums(x, S: float, prior: Prior, moments=("z", "k"), *, relative: bool = False,
            interpolate: bool = True, cheb_n: int = 20, panel_width: float | None = None,
            check_tol: float = 1e-12, min_points: int | None = None, keys=None) -> np.ndarray:
    """Fast L_m(x) (L_m − G(x) with ``relative=True``): exact on sparse points, Chebyshev
    interpolation on dense panels (module doc). ``keys``: integer support counts that x is an
    increasing function of; its distinct values are then found in O(d), checked, with the same
    result as ``np.unique`` (:func:`ldpopt.methods.distinct.unique_inverse`; the sort was ~1.4 s
    CPU at d = 10⁷)."""
    x = np.asarray(x, dtype=np.float64)
    ux, inv = np.unique(x, return_inverse=True) if keys is None else unique_inverse(x, keys)
    if not interpolate or ux.shape[0] < 3 * cheb_n or "z" not in moments:
        return exact_logsums(ux, S, prior, moments, relative=relative)[inv]
    c, v, _ = prior.centre(ux, S)
    lo, hi = _windows_c(c, v, prior)
    work_point = (hi - lo + 1).astype(np.float64)
    width = float(panel_width) if panel_width is not None else S
    pid = np.floor((ux - ux[0]) / width)  # float panel ids: S can be 1e-100 (S_FLOOR)
    region = (c >= prior.kmin).astype(np.int64) + (c > prior.n)    # 0 below, 1 inside, 2 above
    # panel boundaries in the sorted unique array; a panel never straddles c = kmin or c = n
    starts = np.flatnonzero(np.r_[True, (pid[1:] != pid[:-1]) | (region[1:] != region[:-1])])
    ends = np.r_[starts[1:], ux.shape[0]]
    counts = ends - starts
    need = cheb_n + 2 if min_points is None else int(min_points)
    # Interpolate a panel only if it has enough points and exact evaluation would cost more.
    seg_work = np.add.reduceat(work_point, starts)
    dense = (counts >= need) & (seg_work > (cheb_n + 2) * work_point[ends - 1])
    out = np.empty((ux.shape[0], len(moments)))
    exact_mask = np.ones(ux.shape[0], dtype=bool)
    dense_idx = np.flatnonzero(dense)
    zc = moments.index("z")
    is_z = np.arange(len(moments)) == zc
    if dense_idx.shape[0]:
        node_list, check_list = [], []
        for p in dense_idx:  # loop over panels (each holds ≥ cheb_n + 2 points), not over the domain
            a, b = ux[starts[p]], ux[ends[p] - 1]
            node_list.append(_cheb_nodes(a, b, cheb_n))
            cnt = counts[p]
            check_list.append(starts[p] + np.array([cnt // 3, (2 * cnt) // 3]))
        nodes_all = np.concatenate(node_list)
        checks_all = np.concatenate(check_list)
        pts = np.r_[nodes_all, ux[checks_all]]
        vals = exact_logsums(pts, S, prior, moments, relative=True)
        # Interpolate H = L_z^rel + (G − G_c) (smooth within a region) and the log-ratios L_m − L_z
        # (log posterior moments, bounded by ~2 log n; their absolute error is their relative error).
        with np.errstate(invalid="ignore"):
            vals = np.where(is_z, vals + _g_minus_gc(pts, S, prior)[:, None], vals - vals[:, [zc]])
        node_vals, check_vals = vals[: nodes_all.shape[0]], vals[nodes_all.shape[0]:]
        for j, p in enumerate(dense_idx):
            sl = slice(starts[p], ends[p])
            nv = node_vals[j * cheb_n:(j + 1) * cheb_n]
            if not np.all(np.isfinite(nv)):
                continue  # e.g. log M = −inf at k = 0 only: leave to the exact path
            interp = _bary_eval(node_list[j], nv, ux[sl])
            ci = checks_all[2 * j:2 * j + 2] - starts[p]
            cv = check_vals[2 * j:2 * j + 2]
            err = np.abs(interp[ci] - cv)
            scale = 1.0 + np.where(is_z, np.abs(cv), 0.0)
            if np.all(np.isfinite(err)) and np.all(err <= check_tol * scale):
                out[sl] = interp
                out[checks_all[2 * j:2 * j + 2]] = cv
                exact_mask[sl] = False
        done = ~exact_mask
        Lz = out[done][:, [zc]] - _g_minus_gc(ux[done], S, prior)[:, None]
        out[done] = np.where(is_z, Lz, out[done] + Lz)
    if np.any(exact_mask):
        out[exact_mask] = exact_logsums(ux[exact_mask], S, prior, moments, relative=True)
    if not relative:
        out += log_reference(ux, S, prior)[:, None]
    return out[inv]
