"""Rank-conditional selective intervals for the frequencies of a top-k set (the default of ``topk:K``).

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.selective"."""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, pdtr, pdtrc

from ..estimate import Estimate
from .analytic import score_interval, variance_line

__all__ = ["POISSON_P", "conditional_topk", "count_law", "rank_conditional", "rank_conditional_counts",
           "selective_topk", "windows"]

_STEPS = 60
_COUNT_STEPS = 50  # bisection of the count pivot: f to 2^-50 ≈ 1e-15

# GRR's counts are treated as Poisson (the exact discrete pivot) where p is at most this (docstring)
POISSON_P = 0.01


def count_law(oracle: str, n: int, p: float, q: float):
    """(n, p, q) where the top-k pivot is the Poisson count law (module notes, "Few reports per
    value": GRR with p ≤ POISSON_P; any oracle of one value per report, ``likelihood == "multinomial"``),
    else None (the normal pivot)."""
    from .. import oracles

    try:
        one_value = oracles.oracle_class(oracle).likelihood == "multinomial"
    except ValueError:  # an estimate of an oracle not registered: the normal pivot
        one_value = False
    return (int(n), float(p), float(q)) if one_value and p <= POISSON_P else None


def _log_tail(k, lam, up):
    """log Pr(C > k) where ``up``, else log Pr(C ≤ k), for C ~ Poisson(lam) and integer-valued k
    (±inf allowed): the tail on the far side of lam, evaluated only there."""
    kk = np.where(np.isfinite(k), np.maximum(k, 0.0), 0.0)
    out = np.empty(np.shape(kk))
    out[up] = pdtrc(kk[up], lam[up])
    out[~up] = pdtr(kk[~up], lam[~up])
    out = np.where(k < 0, np.where(up, 1.0, 0.0), np.where(np.isinf(k), np.where(up, 0.0, 1.0), out))
    with np.errstate(divide="ignore"):
        return np.log(out)


def _log_window(t_below, t_top, up):
    """log Pr(x ≤ C ≤ y) from the far-side tails ``t_below`` at x − 1 and ``t_top`` at y
    (:func:`_log_tail`): sf(x − 1) − sf(y) where ``up``, else cdf(y) − cdf(x − 1), in logs."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(up, t_below + np.log1p(-np.exp(np.minimum(t_top - t_below, 0.0))),
                        t_top + np.log1p(-np.exp(np.minimum(t_below - t_top, 0.0))))


def rank_conditional_counts(c, a, b, law, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) in frequency units of the discrete conditional interval (module notes, "Few
    reports per value") for observed counts ``c`` in the windows [``a``, ``b``] (integer arrays of
    one shape, b may be inf) and ``law`` = (n, p, q): λ(f) = n(q + f(p − q))."""
    n, p, q = law
    c, a, b = (np.asarray(v, dtype=np.float64) for v in (c, a, b))
    alpha = 1.0 - float(level)

    def tails(f, upper: bool):
        """Pr(C ≤ c | window) (``upper``: the test of the interval's upper end) or Pr(C ≥ c | window)."""
        lam = np.broadcast_to(n * (q + f * (p - q)), c.shape)
        up = lam <= a  # the window lies in lam's upper tail: differences of survival functions
        ta, tb = _log_tail(a - 1, lam, up), _log_tail(b, lam, up)
        den = _log_window(ta, tb, up)
        num = _log_window(ta, _log_tail(c, lam, up), up) if upper else _log_window(_log_tail(c - 1, lam, up), tb, up)
        out = np.exp(num - den)
        # both masses underflow far from the window: the truncated law is a point mass at the end
        # of the window nearer lam
        far = ~np.isfinite(den)
        if upper:
            return np.where(far, np.where(lam < a, 1.0, (c >= b).astype(float)), out)
        return np.where(far, np.where(lam < a, (c <= a).astype(float), 1.0), out)

    zero, one = np.zeros_like(c), np.ones_like(c)
    lo, hi = zero.copy(), one.copy()          # upper end: Pr(C ≤ c | window) falls with f
    for _ in range(_COUNT_STEPS):
        mid = 0.5 * (lo + hi)
        ok = tails(mid, True) >= alpha / 2
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    upper = np.where(tails(one, True) >= alpha / 2, 1.0, lo)
    lo, hi = zero.copy(), one.copy()          # lower end: Pr(C ≥ c | window) rises with f
    for _ in range(_COUNT_STEPS):
        mid = 0.5 * (lo + hi)
        ok = tails(mid, False) >= alpha / 2
        lo, hi = np.where(ok, lo, mid), np.where(ok, mid, hi)
    lower = np.where(tails(zero, False) >= alpha / 2, 0.0, hi)
    return lower, upper


def _log_mass(a, b):
    """log(Φ(b) − Φ(a)) for a ≤ b, stable in both tails (the upper tail by symmetry)."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    up = a > 0
    la = np.where(up, log_ndtr(-b), log_ndtr(a))
    lb = np.where(up, log_ndtr(-a), log_ndtr(b))
    with np.errstate(divide="ignore", invalid="ignore"):
        return lb + np.log1p(-np.exp(np.minimum(la - lb, 0.0)))


def rank_conditional(x, L, U, alpha, beta, level: float, step: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of the conditional interval (module notes) for observed ``x`` in the window
    [``L``, ``U``] (arrays of one shape; U may be inf), variance line ``alpha`` + ``beta``·f and count
    step ``step`` (continuity correction h)."""
    x, L, U = (np.asarray(v, dtype=np.float64) for v in (x, L, U))
    a = 1.0 - float(level)
    Lh, Uh = L - step / 2, U + step / 2

    def tails(f):
        s = np.sqrt(np.maximum(alpha + beta * f, 1e-300))
        den = _log_mass((Lh - f) / s, (Uh - f) / s)
        below = np.exp(_log_mass((Lh - f) / s, (np.minimum(x + step / 2, Uh) - f) / s) - den)
        above = np.exp(_log_mass((np.maximum(x - step / 2, Lh) - f) / s, (Uh - f) / s) - den)
        return np.nan_to_num(below, nan=1.0), np.nan_to_num(above, nan=1.0)

    zero, one = np.zeros_like(x), np.ones_like(x)
    lo, hi = zero.copy(), one.copy()          # upper end: Pr(X ≤ x) falls with f
    for _ in range(_STEPS):
        mid = 0.5 * (lo + hi)
        ok = tails(mid)[0] >= a / 2
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    upper = np.where(tails(one)[0] >= a / 2, 1.0, lo)
    lo, hi = zero.copy(), one.copy()          # lower end: Pr(X ≥ x) rises with f
    for _ in range(_STEPS):
        mid = 0.5 * (lo + hi)
        ok = tails(mid)[1] >= a / 2
        lo, hi = np.where(ok, lo, mid), np.where(ok, mid, hi)
    lower = np.where(tails(zero)[1] >= a / 2, 0.0, hi)
    return lower, upper


def selective_topk(estimate: Estimate, S, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, flagged) for the values ``S`` (k,) a method ranked 1..k on ``estimate`` (module
    docstring)."""
    alpha, beta = variance_line(estimate, "base")
    x = np.asarray(estimate.f_tilde, dtype=np.float64)[None]
    lo, hi, flag = conditional_topk(x, np.asarray(S)[None], float(alpha[0]), float(beta[0]), level,
                                    1.0 / (estimate.n * (estimate.p - estimate.q)),
                                    law=count_law(estimate.oracle, estimate.n, estimate.p, estimate.q))
    return lo[0], hi[0], flag[0]


def select_top(x: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest entries of each row of ``x`` (1-D or (B, d)), largest first (ties
    to the lower index, as ``argsort(-x, kind="stable")``)."""
    x = np.asarray(x, dtype=np.float64)
    one = x.ndim == 1
    X = np.atleast_2d(x)
    d = X.shape[1]
    if not 1 <= k <= d:
        raise ValueError(f"k must lie in [1, d = {d}], got {k!r}")
    if k == d:
        cand = np.broadcast_to(np.arange(d), X.shape)
    else:
        # argpartition on -x: the k largest, then sort them; the (value, index) key keeps the
        # lower index first among equal values, like a stable argsort of -x
        part = np.argpartition(-X, k - 1, axis=1)[:, :k]
        kth = np.take_along_axis(X, part, axis=1).min(axis=1, keepdims=True)
        # values equal to the k-th may sit outside the partition: the stable rule wants the lowest
        # indices among them, so rebuild the tie block explicitly where one straddles the cut
        cand = part
        straddle = ((X == kth).sum(axis=1) > (np.take_along_axis(X, part, axis=1) == kth).sum(axis=1))
        if straddle.any():
            rows = np.flatnonzero(straddle)
            full = np.argsort(-X[rows], axis=1, kind="stable")[:, :k]
            cand = part.copy()
            cand[rows] = full
    vals = np.take_along_axis(X, cand, axis=1)
    order = np.lexsort((cand, -vals), axis=1)
    out = np.take_along_axis(cand, order, axis=1)
    return out[0] if one else out


def conditional_topk(X, S, alpha: float, beta: float, level: float, step: float, law=None):
    """:func:`selective_topk` for B raw estimates at once: ``X`` (B, d) the rows of f̃, ``S`` (B, k)
    each row's selected values, (``alpha``, ``beta``) Base's per-value variance line, ``step`` the
    count step 1/(n(p − q)), ``law``: :func:`count_law` (None: the normal pivot); returns
    (lo, hi, flagged), each (B, k)."""
    X, S = np.asarray(X, dtype=np.float64), np.asarray(S)
    k, d = S.shape[1], X.shape[1]
    order = select_top(X, min(k + 1, d))
    L, U = windows(X, order, k)
    own = order[:, :k]
    x = np.take_along_axis(X, own, axis=1)
    if law is None:
        lo, hi = rank_conditional(x, L, U, alpha, beta, level, step=step)
    else:  # the counts: f̃ = (C/n − q)/(p − q), so C = n·q + f̃/step, integers up to rounding
        n, _, q = law
        cx, cl, cu = (np.rint(n * q + v / step) for v in (x, L, U))
        lo, hi = rank_conditional_counts(cx, cl, cu, law, level)
    flag = S != own
    if flag.any():
        blo, bhi = score_interval(np.take_along_axis(X, S, axis=1), alpha, beta, 1.0 - (1.0 - level) / d)
        lo, hi = np.where(flag, np.clip(blo, 0, 1), lo), np.where(flag, np.clip(bhi, 0, 1), hi)
    return lo, hi, flag


def windows(X, order, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The rank windows (L, U), each (B, k), of rows ``X`` (B, d) whose top k+1 are ``order``
    (B, ≥ k): L = the (i+1)-th largest (−inf when d = k), U = the (i−1)-th (inf for i = 1)."""
    top = np.take_along_axis(X, order, axis=1)
    B = X.shape[0]
    L = top[:, 1:k + 1] if top.shape[1] > k else np.concatenate([top[:, 1:k], np.full((B, 1), -np.inf)], axis=1)
    U = np.concatenate([np.full((B, 1), np.inf), top[:, :k - 1]], axis=1)
    return L, U
