"""Fitting the power-law exponent s of Power / PowerNS / Calibrate (Jia & Gong INFOCOM 2019 §III-C).

Notes: docs/notes/python.md, "ldpopt.methods.bayes.exponent_fit"."""

from __future__ import annotations

import numpy as np

from . import engine as core
from . import euler_maclaurin as emq
from . import exponent_grid as _pm

GRID_POINTS = 11
_TOL = 1e-10

def _prior_logk_moments(prior: core.Prior) -> tuple[float, float, float]:
    """log H_n(s), E_prior[log k], E_prior[(log k)²] for w(k) = k^{−s}, k = 1..n (O(1) in n)."""
    h0, h1, h2 = _power_log_sums(prior.s, prior.n)
    return float(np.log(h0)), h1 / h0, h2 / h0


_EM_HEAD = core.EM_START  # the same head k < 1000 as the posterior tails of engine


def _power_sum(a: float, n: int) -> float:
    """H_n(a) = Σ_{k=1..n} k^{−a} for any real a: direct below k = 1000, Euler–Maclaurin above.

    The E–M remainder after the B_8 term is O(|a|^9 / 1000^{a+9}) relative to the tail: < 1e-17
    for |a| ≤ 20 (the fits keep a = s or s − 1 within [−1, s_max])."""
    m = _EM_HEAD
    if n <= 2 * m:
        return float(np.sum(np.arange(1.0, n + 1.0) ** -a))
    head = float(np.sum(np.arange(1.0, float(m)) ** -a))
    lm, ln = np.log(m), np.log(n)
    b = 1.0 - a
    # ∫_m^n t^{-a} dt, stable through a = 1
    integral = (ln - lm) if b == 0 else float(np.exp(b * lm) * np.expm1(b * (ln - lm)) / b)
    tail = integral + 0.5 * (m ** -a + float(n) ** -a)
    coef = -a                      # d^r/dt^r t^{-a} = coef_r t^{-a-r}, coef_r = (−a)(−a−1)…
    for r in range(1, 8):
        if r > 1:
            coef *= (-a - r + 1)
        if r % 2 == 1:
            tail += emq.EM_BERNOULLI[(r - 1) // 2] * coef * (float(n) ** (-a - r) - float(m) ** (-a - r))
    return head + tail




def _power_log_sums(a: float, n: int) -> tuple[float, float, float]:
    """Σ_{k=1..n} k^{−a} (log k)^j for j = 0, 1, 2: direct below k = 1000, Euler–Maclaurin above.

    Tail Σ_{k=m..n} f(k), f(t) = t^{−a} P(log t): ∫_m^n f + (f(m) + f(n))/2 + Σ_{r=1,3,5,7}
    B_{r+1}/(r+1)! (f^{(r)}(n) − f^{(r)}(m)), with f^{(r)}(t) = t^{−a−r} P_r(log t),
    P_{r+1} = (−a − r) P_r + P_r′. The integral is ∫ e^{(1−a)u} u^j du over u ∈ [log m, log n] by
    24-point Gauss–Legendre on panels of length ≤ 1/2 (the integrand is entire: exact to rounding).
    The E–M remainder is as in :func:`_power_sum` (< 1e-17 relative for a ≤ 20 at m = 1000)."""
    m = _EM_HEAD
    if n <= 2 * m:
        logk = np.log(np.arange(1.0, n + 1.0))
        w = np.exp(-a * logk)
        return float(w.sum()), float((w * logk).sum()), float((w * logk * logk).sum())
    logk = np.log(np.arange(1.0, float(m)))
    w = np.exp(-a * logk)
    head = np.array([w.sum(), (w * logk).sum(), (w * logk * logk).sum()])
    lm, ln = np.log(m), np.log(float(n))
    npan = max(1, int(np.ceil(2.0 * (ln - lm) * max(1.0, abs(1.0 - a)))))
    edges = np.linspace(lm, ln, npan + 1)
    half = 0.5 * (edges[1:] - edges[:-1])
    u = (0.5 * (edges[1:] + edges[:-1]))[:, None] + half[:, None] * emq.GL24_X[None, :]
    gw = (half[:, None] * emq.GL24_W[None, :]).ravel()
    u = u.ravel()
    eu = np.exp((1.0 - a) * u)
    out = []
    lm, ln, a = float(lm), float(ln), float(a)
    ea_m, ea_n = float(np.exp(-a * lm)), float(np.exp(-a * ln))
    # t^{−a−r} at both ends for the odd r, computed once for the three j
    ends = [(float(np.exp((-a - r) * ln)), float(np.exp((-a - r) * lm))) for r in (1, 3, 5, 7)]
    for j in range(3):
        tail = float(np.sum(gw * eu * u ** j))
        tail += 0.5 * (ea_m * lm ** j + ea_n * ln ** j)
        # P_r as three floats (degree ≤ 2 in log t); P_{r+1} = (−a − r) P_r + P_r′, the same
        # operations as numpy.polynomial's polyadd/polyder/polyval (Horner), in plain floats
        c0, c1, c2 = (1.0 if j == 0 else 0.0), (1.0 if j == 1 else 0.0), (1.0 if j == 2 else 0.0)
        for r in range(1, 8):
            al = -a - r + 1
            c0, c1, c2 = al * c0 + c1, al * c1 + 2.0 * c2, al * c2
            if r % 2 == 1:
                en, em = ends[(r - 1) // 2]
                tail += emq.EM_BERNOULLI[(r - 1) // 2] * (en * (c0 + (c1 + c2 * ln) * ln)
                                                           - em * (c0 + (c1 + c2 * lm) * lm))
        out.append(head[j] + tail)
    return out[0], out[1], out[2]


def _prior_mean_power(n: int, s: float) -> float:
    """E_prior[k] = H_n(s − 1)/H_n(s) for w(k) = k^{−s}, k = 1..n."""
    return _power_sum(s - 1.0, n) / _power_sum(s, n)


def loglik_score(x, S: float, n: int, s: float, weights=None) -> tuple[float, float, float]:
    """(ℓ(s) − Σ_v G(x_v), ℓ'(s), ℓ''(s)) of Eq. 16 with the power-law prior (module doc).

    ``weights``: multiplicities of the (then distinct) ``x`` — the fit passes the distinct counts
    once with how often each occurs (the counts are integers: ~2,600 distinct values among d = 42,178
    at OUE, n = 10⁶), so the per-call np.unique of d values and the d-length sums are not repeated."""
    prior = core.Prior("power-law", n, s=s)
    L = core.logsums(x, S, prior, ("z", "l1", "l2"), relative=True)
    A = np.exp(L[:, 1] - L[:, 0])          # E_post[log k]
    B = np.exp(L[:, 2] - L[:, 0])          # E_post[(log k)²]
    logH, Ap, Bp = _prior_logk_moments(prior)
    if weights is None:
        d, w = x.shape[0], np.ones(x.shape[0])
    else:
        w = np.asarray(weights, dtype=np.float64)
        d = float(w.sum())
    ell = float(w @ L[:, 0]) - d * logH
    # d/ds log Σ_k k^{-s} N(·) = −E_post[log k];  d/ds log H_n(s) = −E_prior[log k]
    g = -float(w @ A) + d * Ap
    h = float(w @ (B - A * A)) - d * (Bp - Ap * Ap)
    return ell, g, h


def loglik_scores(x, S: float, n: int, s_arr, weights=None) -> list[tuple[float, float, float]]:
    """:func:`loglik_score` at every s of ``s_arr`` in one pass (:mod:`.exponent_grid`)."""
    L = _pm.logsums(x, S, n, s_arr)                      # (ns, len(x), 3)
    A = np.exp(L[:, :, 1] - L[:, :, 0])
    B = np.exp(L[:, :, 2] - L[:, :, 0])
    if weights is None:
        w = np.ones(L.shape[1])
        d = float(L.shape[1])
    else:
        w = np.asarray(weights, dtype=np.float64)
        d = float(w.sum())
    out = []
    for i, s in enumerate(s_arr):  # a loop over the few s values
        logH, Ap, Bp = _prior_logk_moments(core.Prior("power-law", n, s=float(s)))
        out.append((float(w @ L[i, :, 0]) - d * logH, -float(w @ A[i]) + d * Ap,
                    float(w @ (B[i] - A[i] * A[i])) - d * (Bp - Ap * Ap)))
    return out


def _score_power(x, S, n, s):
    """ℓ'(s) and ℓ''(s) (kept for callers that want the observed information)."""
    _, g, h = loglik_score(x, S, n, s)
    return g, h


def _hermite_start(a: float, b: float, fa: tuple, fb: tuple) -> float | None:
    """A root in (a, b) of the cubic Hermite interpolant of ℓ' from ℓ', ℓ'' at the cell's ends.

    The grid already holds ℓ' and ℓ'' at both ends, so this start costs no evaluation; across a
    cell ℓ' is smooth, and the cubic's root is typically within 1e-3 of ℓ''s (against a start at an
    end, 0.3–2 away), saving about three Newton steps. Of several roots the one where the cubic falls
    (a local maximum of its integral) nearest the middle; None if none is strictly inside."""
    L = b - a
    g0, g1, d0, d1 = fa[1], fb[1], fa[2] * L, fb[2] * L          # on t ∈ [0, 1]
    # p(t) = g0 h00 + d0 h10 + g1 h01 + d1 h11 in the monomial basis (highest power first)
    c3 = 2.0 * g0 + d0 - 2.0 * g1 + d1
    c2 = -3.0 * g0 - 2.0 * d0 + 3.0 * g1 - d1
    coeffs = np.array([c3, c2, d0, g0])
    if not np.all(np.isfinite(coeffs)):
        return None
    roots = np.roots(np.trim_zeros(coeffs, "f")) if np.any(coeffs[:3]) else np.array([])
    t = roots[np.abs(roots.imag) <= 1e-12 * (1.0 + np.abs(roots.real))].real
    slope = (3.0 * c3 * t + 2.0 * c2) * t + d0
    t = t[(t > 0.0) & (t < 1.0) & (slope <= 0.0)]
    if t.size == 0:
        return None
    return float(a + L * t[np.argmin(np.abs(t - 0.5))])


NARROW_POINTS = 4   # interior points of one narrowing pass (one batched evaluation)
NARROW_PASSES = 2   # measured at OUE/GRR, d = 42,178: 7–9 per-s evaluations become 3


def _narrow(x, S, n, a: float, b: float, fa: tuple, fb: tuple, w=None):
    """A sub-cell of [a, b] with ℓ' > 0 ≥ ℓ' at its ends, from one batched evaluation at
    NARROW_POINTS uniform interior points (:func:`loglik_scores`); of several such sub-cells (more
    than one local maximum in the cell) the one with the larger ℓ at its ends. The values only
    choose the sub-cell and the Hermite start; the root is then found with the per-s engine."""
    t = np.linspace(a, b, NARROW_POINTS + 2)[1:-1]
    ss = [a, *map(float, t), b]
    fs = [fa, *loglik_scores(x, S, n, t, w), fb]
    g = np.array([f[1] for f in fs])
    ell = np.array([f[0] for f in fs])
    cells = np.flatnonzero((g[:-1] > 0) & (g[1:] <= 0))
    if cells.size == 0:          # rounding moved the sign change onto an end: keep the cell
        return a, b, fa, fb
    i = int(cells[np.argmax(np.maximum(ell[cells], ell[cells + 1]))])
    return ss[i], ss[i + 1], fs[i], fs[i + 1]


def _refine(x, S, n, a: float, b: float, fa: tuple, fb: tuple, w=None,
            hermite: bool = True) -> tuple[float, float]:
    """The local maximum of ℓ in a cell [a, b] with ℓ'(a) > 0 ≥ ℓ'(b): the root of ℓ' to 1e-10 in s.

    Newton on ℓ' safeguarded by bisection, as ``rtsafe`` (Numerical Recipes §9.4): bisect when the
    Newton step leaves the bracket or does not halve the step before last (ℓ' can fall by 10⁵
    across a cell, where plain Newton creeps). Starts from the end whose Newton step is shorter.
    Returns (s, ℓ(s)) at the converged root (not the best ℓ seen: near the root ℓ is flat to
    rounding, so comparing ℓ there would pick a random iterate).
    """
    if hermite:
        for _ in range(NARROW_PASSES):
            a, b, fa, fb = _narrow(x, S, n, a, b, fa, fb, w)
    s, f = (a, fa) if (fa[2] < 0 and (fb[2] >= 0 or abs(fa[1] / fa[2]) <= abs(fb[1] / fb[2]))) else (b, fb)
    ell, g, h = f
    dx_old = dx = b - a
    s0 = _hermite_start(a, b, fa, fb) if hermite else None
    if s0 is not None:                      # start inside the cell; keep the bracket g(a) > 0 ≥ g(b)
        s = s0
        ell, g, h = loglik_score(x, S, n, s, w)
        if g == 0:
            return s, ell
        if g > 0:
            a = s
        else:
            b = s
        dx_old = dx = b - a
    for _ in range(200):
        newton_out = h >= 0 or not a < s - g / h < b
        if newton_out or abs(2.0 * g) > abs(dx_old * h):
            dx_old, dx = dx, 0.5 * (b - a)
            s = a + dx
        else:
            dx_old, dx = dx, -g / h
            s = s + dx
        ell, g, h = loglik_score(x, S, n, s, w)
        if abs(dx) <= _TOL * (1.0 + abs(s)) or g == 0:
            break
        if g > 0:
            a = s
        else:
            b = s
        if b - a <= _TOL * (1.0 + abs(s)):
            break
    return s, ell


# Memo of fit_mle: (digest of the distinct x and their multiplicities, S, n, lo, hi, grid, batched)
# -> result. The fit is a pure function of those, and one resample is fitted several times: the
# bootstrap of `postprocess --method all --ci` draws the same B resamples for Power, PowerNS and
# Calibrate (same seed), which all fit s on them (the fits were ~98 % of that run, d = 256).
_FIT_MEMO: dict = {}
_FIT_MEMO_SIZE = 4096


def memo_key(x, S, n, lo, hi, grid_points, batched):
    """(key of ``_FIT_MEMO``, distinct x, their multiplicities) of a call of :func:`fit_mle`."""
    import hashlib

    x, w = np.unique(np.asarray(x, dtype=np.float64), return_counts=True)  # once, not per call
    key = (hashlib.blake2b(x.tobytes() + w.tobytes(), digest_size=20).digest(), float(S), int(n),
           float(lo), float(hi), int(grid_points), bool(batched))
    return key, x, w


def fit_mle(x, S: float, n: int, lo: float, hi: float, grid_points: int = GRID_POINTS,
            batched: bool = True) -> tuple[float, bool]:
    """Global maximiser of ℓ on [lo, hi] (module doc). Returns (s, at_upper_bound); memoised on
    the distinct x with their multiplicities (``_FIT_MEMO``: the same floats, not a tolerance)."""
    key, x, w = memo_key(x, S, n, lo, hi, grid_points, batched)
    if key in _FIT_MEMO:
        return _FIT_MEMO[key]
    if len(_FIT_MEMO) >= _FIT_MEMO_SIZE:
        _FIT_MEMO.clear()  # bounded; clear() rather than evicting one (safe under threaded callers)
    _FIT_MEMO[key] = out = _fit_mle(x, w, S, n, lo, hi, grid_points, batched)
    return out


def _fit_mle(x, w, S, n, lo, hi, grid_points, batched) -> tuple[float, bool]:
    grid = np.expm1(np.linspace(np.log1p(lo), np.log1p(hi), int(grid_points)))  # uniform in log(1 + s)
    grid[0], grid[-1] = lo, hi
    if batched:
        vals = loglik_scores(x, S, n, grid, w)                    # all grid values of s in one pass
    else:
        vals = [loglik_score(x, S, n, float(s), w) for s in grid]  # the per-s reference path
    ell = np.array([v[0] for v in vals])
    g = np.array([v[1] for v in vals])
    i_best = int(np.argmax(ell))
    cands = [(float(grid[i_best]), float(ell[i_best]))]       # includes both ends when they win
    for i in np.flatnonzero((g[:-1] > 0) & (g[1:] <= 0)):
        cands.append(_refine(x, S, n, float(grid[i]), float(grid[i + 1]), vals[i], vals[i + 1], w,
                             hermite=batched))
    s, _ = max(cands, key=lambda c: c[1])
    return float(s), bool(s >= hi)


def fit_mean_variance(x, n: int, lo: float, hi: float) -> tuple[float, bool]:
    """s solving E_prior[k](s) = mean(x) (Eq. 17), clipped to [lo, hi]. Returns (s, clipped)."""
    target = float(np.mean(x))
    g_mv = lambda s: _prior_mean_power(n, s) - target
    glo, ghi = g_mv(lo), g_mv(hi)
    if glo <= 0:
        return lo, glo < 0
    if ghi >= 0:
        return hi, ghi > 0
    from scipy.optimize import brentq  # here, not at import: `import ldpopt` loads no scipy

    return float(brentq(g_mv, lo, hi, xtol=_TOL, rtol=1e-12)), False
