"""Numerical engine for the Bayesian post-processors (Power, PowerNS, Calibrate): log-space sums

    L_m(x) = log Σ_{k=kmin..n} μ_m(k) · exp(−(k − x)² / (2S²) + log w(k))

for many observed counts x = f̃_v·n at once, where S is the count-scale noise standard deviation,
w the (unnormalised) prior on the integer counts k, and μ_m a moment multiplier (1, k, k², log k,
(log k)²). Everything is in log-space: no overflow or NaN at S → 0 (ε = 20) or S ≫ n (ε = 0.001).

Two layers:

``exact_logsums``
    A windowed direct sum with a *provable* truncation bound. Every prior here has log w(k) ≤ B = 0
    on its support (power law with s ≥ 0; Gaussian kernel), so a term satisfies
    φ(k) ≤ −(k − x)²/(2S²). With k0 any support point (we probe near the maximiser of φ),
    every k with |k − x| > S·sqrt(2(−φ(k0) + T)) has φ(k) < φ(k0) − T, and there are at most n + 1
    of them, so the dropped mass is below (n + 1)·e^{−T} times the kept sum. T = log(n + 1) + 45
    makes that < e^{−45} ≈ 3e-20 relative, far below float64 rounding (a 1e-300 bound would need
    T ≈ 704 and a 3.5× wider window for no visible change; ``TAIL_LOG`` sets it).

``logsums``
    The fast path. L_m(x) is a smooth (entire in x, log of a positive Gaussian convolution) function
    of x on the scale S, so where many observations fall into one panel of width ≈ S we evaluate
    L_m exactly at Chebyshev points of that panel and interpolate (barycentric formula). Every panel
    is checked *a posteriori* against exact values at two of its own data points; a panel whose
    interpolation error exceeds ``check_tol`` (absolute, on the log scale = relative on the sums) is
    evaluated exactly instead. Sparse points (heavy hitters) are always evaluated exactly. This turns
    d exact evaluations into a few hundred. The interpolation is not covered by a proof, only by the
    check and by the tests against the slow references.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Prior", "exact_logsums", "logsums", "MOMENTS"]

# Moment multipliers μ_m(k) (linear scale; they multiply exp(φ − max φ) which is ≤ 1).
MOMENTS = ("z", "k", "k2", "l1", "l2")


class Prior:
    """An unnormalised prior log w(k) on the integers kmin..n with max log w ≤ 0.

    kind ``"power-law"``: w(k) = k^{-s}, k = 1..n (s ≥ 0, so w ≤ 1 = w(1)).
    kind ``"gaussian"``:  w(k) = exp(−(k − μ)²/(2τ²)), k = 0..n.
    """

    def __init__(self, kind: str, n: int, s: float = 1.0, mu: float = 0.0, tau: float = 1.0):
        self.kind, self.n = kind, int(n)
        self.s, self.mu, self.tau = float(s), float(mu), float(tau)
        self.kmin = 1 if kind == "power-law" else 0
        self._logk = None

    def logk(self) -> np.ndarray:
        """log k for k = 0..n (log 0 = −inf), computed once per prior object."""
        if self._logk is None:
            with np.errstate(divide="ignore"):
                self._logk = np.log(np.arange(self.n + 1, dtype=np.float64))
        return self._logk

    def logw_from(self, k: np.ndarray, logk: np.ndarray) -> np.ndarray:
        if self.kind == "power-law":
            return -self.s * logk
        return -((k - self.mu) ** 2) / (2.0 * self.tau ** 2)

    def probe(self, x: np.ndarray, S: float) -> np.ndarray:
        """An integer support point near the maximiser of φ(k) = −(k − x)²/(2S²) + log w(k).

        Only used to make the provable window tight; any support point gives a valid bound.
        """
        n = self.n
        if self.kind == "gaussian":
            # Product of two Gaussian kernels in k: centre (μS² + xτ²)/(S² + τ²).
            a, b = S * S, self.tau * self.tau
            c = (self.mu * a + x * b) / (a + b)
            return np.clip(np.rint(c), 0, n)
        # Power law: φ'(t) = −(t − x)/S² − s/t = 0 ⇔ t² − xt + sS² = 0; larger root is the local
        # maximum when it exists, otherwise φ decreases on t ≥ 1 and k = 1 is the maximiser.
        disc = x * x - 4.0 * self.s * S * S
        with np.errstate(invalid="ignore"):
            t = np.where((disc >= 0) & (x > 0), 0.5 * (x + np.sqrt(np.maximum(disc, 0.0))), 1.0)
        k_int = np.clip(np.rint(t), 1, n)
        # Compare with the head k = 1 (φ may be bimodal: convex part near 0, concave part later).
        phi_int = self._phi(x, k_int, S)
        phi_one = self._phi(x, np.ones_like(x), S)
        return np.where(phi_one > phi_int, 1.0, k_int)

    def _phi(self, x, k, S):
        with np.errstate(divide="ignore"):
            logk = np.log(k)
        return -((k - x) ** 2) / (2.0 * S * S) + self.logw_from(k, logk)


TAIL_LOG = 45.0


def _tail_T(n: int) -> float:
    # Dropped mass ≤ (n + 1) e^{−T} · kept sum; this T makes it ≤ e^{−45} ≈ 2.9e-20 relative.
    return float(np.log(n + 1.0) + TAIL_LOG)


def windows(x: np.ndarray, S: float, prior: Prior) -> tuple[np.ndarray, np.ndarray]:
    """Integer windows [lo, hi] outside of which every term is provably negligible (module doc)."""
    k0 = prior.probe(x, S)
    T = _tail_T(prior.n)
    if prior.kind == "gaussian":
        # The summand is exactly C(x)·exp(−(k − c)²/(2v)) with c = (μS² + xτ²)/(S² + τ²) and
        # v = S²τ²/(S² + τ²): the same argument with this single Gaussian and k0 = round(c).
        a, b = S * S, prior.tau * prior.tau
        c = (prior.mu * a + x * b) / (a + b)
        v = a * b / (a + b)
        half = np.sqrt(2.0 * v * T + (k0 - c) ** 2)
        centre = c
    else:
        phi0 = prior._phi(x, k0, S)
        half = S * np.sqrt(2.0 * (T - phi0))
        centre = x
    lo = np.maximum(np.ceil(centre - half), prior.kmin)
    hi = np.minimum(np.floor(centre + half), prior.n)
    # k0 satisfies the window inequality, so lo ≤ k0 ≤ hi up to rounding; include it explicitly.
    lo = np.minimum(lo, k0)
    hi = np.maximum(hi, k0)
    return lo.astype(np.int64), hi.astype(np.int64)


def exact_logsums(x, S: float, prior: Prior, moments=("z", "k"), *, max_block: int = 2_000_000) -> np.ndarray:
    """L_m(x) for each x and each moment m (shape (len(x), len(moments))) by windowed direct sums.

    Vectorised over blocks of points of similar window length (points sorted by window length, so
    the padding waste is small); memory per block ≤ ``max_block`` float64 entries.
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty((x.shape[0], len(moments)))
    if x.shape[0] == 0:
        return out
    lo, hi = windows(x, S, prior)
    length = hi - lo + 1
    order = np.argsort(length, kind="stable")
    logk_tab = prior.logk()
    inv2s2 = 1.0 / (2.0 * S * S)
    start = 0
    m = x.shape[0]
    while start < m:
        W = int(length[order[min(m - 1, start)]])
        rows = max(1, max_block // max(W, 1))
        # grow the block while the longest window in it keeps memory bounded
        stop = min(m, start + rows)
        W = int(length[order[stop - 1]])
        rows = max(1, max_block // W)
        stop = min(stop, start + rows)
        idx = order[start:stop]
        W = int(length[idx].max())
        offs = np.arange(W, dtype=np.int64)
        k = lo[idx, None] + offs[None, :]
        valid = k <= hi[idx, None]
        k = np.where(valid, k, hi[idx, None])
        kf = k.astype(np.float64)
        logk = logk_tab[k]
        phi = -((kf - x[idx, None]) ** 2) * inv2s2 + prior.logw_from(kf, logk)
        phi = np.where(valid, phi, -np.inf)
        mx = phi.max(axis=1, keepdims=True)
        e = np.exp(phi - mx)
        for j, name in enumerate(moments):
            if name == "z":
                tot = e.sum(axis=1)
            elif name == "k":
                tot = (e * kf).sum(axis=1)
            elif name == "k2":
                tot = (e * kf * kf).sum(axis=1)
            elif name == "l1":
                tot = (e * logk).sum(axis=1)
            elif name == "l2":
                tot = (e * logk * logk).sum(axis=1)
            else:  # pragma: no cover - internal
                raise ValueError(f"unknown moment {name!r}")
            with np.errstate(divide="ignore"):
                out[idx, j] = np.log(tot) + mx[:, 0]
        start = stop
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
        c = w[None, :] / diff
        res = (c @ vals) / c.sum(axis=1, keepdims=True)
    hit = exact.any(axis=1)
    if np.any(hit):
        res[hit] = vals[np.argmax(exact[hit], axis=1)]
    return res


def logsums(x, S: float, prior: Prior, moments=("z", "k"), *, interpolate: bool = True,
            cheb_n: int = 20, panel_width: float | None = None, check_tol: float = 1e-12,
            min_points: int | None = None) -> np.ndarray:
    """Fast L_m(x): exact on sparse points, Chebyshev interpolation on dense panels (module doc)."""
    x = np.asarray(x, dtype=np.float64)
    ux, inv = np.unique(x, return_inverse=True)
    if not interpolate or ux.shape[0] < 3 * cheb_n:
        return exact_logsums(ux, S, prior, moments)[inv]
    lo, hi = windows(ux, S, prior)
    work_point = (hi - lo + 1).astype(np.float64)
    width = float(panel_width) if panel_width is not None else S
    pid = np.floor((ux - ux[0]) / width).astype(np.int64)
    # panel boundaries in the sorted unique array
    starts = np.flatnonzero(np.r_[True, pid[1:] != pid[:-1]])
    ends = np.r_[starts[1:], ux.shape[0]]
    counts = ends - starts
    need = cheb_n + 2 if min_points is None else int(min_points)
    # Interpolate a panel only if it has enough points and exact evaluation would cost more.
    seg_work = np.add.reduceat(work_point, starts)
    dense = (counts >= need) & (seg_work > (cheb_n + 2) * work_point[ends - 1])
    out = np.empty((ux.shape[0], len(moments)))
    exact_mask = np.ones(ux.shape[0], dtype=bool)
    dense_idx = np.flatnonzero(dense)
    if dense_idx.shape[0]:
        node_list, check_list = [], []
        for p in dense_idx:  # loop over panels (each holds ≥ cheb_n + 2 points), not over the domain
            a, b = ux[starts[p]], ux[ends[p] - 1]
            node_list.append(_cheb_nodes(a, b, cheb_n))
            c = counts[p]
            check_list.append(starts[p] + np.array([c // 3, (2 * c) // 3]))
        nodes_all = np.concatenate(node_list)
        checks_all = np.concatenate(check_list)
        vals = exact_logsums(np.r_[nodes_all, ux[checks_all]], S, prior, moments)
        # Interpolate L_z and the log-ratios L_m − L_z (log posterior moments, bounded by ~2 log n):
        # the ratios are what the methods use, and their absolute error is their relative error.
        zc = moments.index("z") if "z" in moments else None
        if zc is not None:
            with np.errstate(invalid="ignore"):
                vals = np.where(np.arange(len(moments)) == zc, vals, vals - vals[:, [zc]])
        tol_scale = np.ones(len(moments))
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
            # L_z itself: relative tolerance on the log (it only enters likelihood values).
            scale = tol_scale[None, :] + (np.abs(cv) if zc is None else
                                          np.where(np.arange(len(moments)) == zc, np.abs(cv), 0.0))
            if np.all(np.isfinite(err)) and np.all(err <= check_tol * scale):
                out[sl] = interp
                out[checks_all[2 * j:2 * j + 2]] = cv
                exact_mask[sl] = False
        if zc is not None:
            done = ~exact_mask
            out[done] = np.where(np.arange(len(moments)) == zc, out[done], out[done] + out[done][:, [zc]])
    if np.any(exact_mask):
        out[exact_mask] = exact_logsums(ux[exact_mask], S, prior, moments)
    return out[inv]
