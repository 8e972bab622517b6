r"""Exact likelihood of any finite channel's outputs on the simplex: EM/IBU with SQUAREM, and the
cvxpy referee.

Notes: docs/notes/python.md, "ldpopt.methods.channel_mle"."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.special import xlogy

from ..oracles.channel import Channel
from .em import ConvergenceError

__all__ = ["ChannelMLE", "Terms", "channel_mle", "channel_mle_cvxpy", "kkt_residual"]


class Terms:
    """Stacked rows of one or more (channel, counts) terms; rows with zero count are dropped
    (they add nothing to ℓ or ∇ℓ)."""

    def __init__(self, terms):
        if isinstance(terms, tuple) and len(terms) == 2 and isinstance(terms[0], Channel):
            terms = [terms]
        rows, ys, d, users = [], [], None, 0
        for i, term in enumerate(terms):
            try:
                ch, counts = term
            except (TypeError, ValueError) as exc:
                raise ValueError(f"terms[{i}] must be a (Channel, counts) pair") from exc
            if not isinstance(ch, Channel):
                raise TypeError(f"terms[{i}][0] must be a Channel, got {type(ch).__name__}")
            if d is None:
                d = ch.d
            elif ch.d != d:
                raise ValueError(f"terms[{i}]: every channel must have the same d = {d}, got {ch.d}")
            Y, n = ch.check_counts(counts, name=f"terms[{i}] counts")
            users += n
            rows.append(ch.matrix)
            ys.append(Y.ravel())
        if d is None:
            raise ValueError("terms must hold at least one (Channel, counts) pair")
        M = np.concatenate(rows)
        y = np.concatenate(ys)
        keep = y > 0
        self.M, self.y, self.d = M[keep], y[keep], d
        if np.any(self.M.sum(axis=1) <= 0):
            raise ValueError("counts are positive on an output no value can produce (an all-zero row of P)")
        self.N = float(self.y.sum())
        self.users = users

    def loglik(self, f) -> float:
        return float(np.sum(xlogy(self.y, self.M @ f)))

    def gradient(self, f) -> np.ndarray:
        return self.M.T @ (self.y / (self.M @ f))


@dataclass
class ChannelMLE:
    """The maximiser f of ℓ on Δ with its loglik, Frank-Wolfe gap (an upper bound on ℓ* − ℓ(f)),
    iteration count (EM steps) and wall time."""

    f: np.ndarray
    loglik: float
    gap: float
    nit: int
    seconds: float
    method: str


def _step(T: Terms, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    g = T.gradient(f)
    return f * g / T.N, g


def _newton_polish(T: Terms, f: np.ndarray, tol: float, max_iter: int = 100):
    """Active-set Newton on the support of an EM iterate (maximise ℓ s.t. Σ_S f = 1, f ≥ 0).

    Newton direction on the free set S: [H 1; 1ᵀ 0][Δ; μ] = [g_S; 0] with H = M_Sᵀ diag(y/(Mf)²) M_S
    (−H is ∇²ℓ); the step is projected (coordinates that would go negative leave S at 0) and
    backtracked (Armijo on ℓ); a value outside S with g_v > ⟨g, f⟩ re-enters S. Returns the point
    once its relative Frank-Wolfe gap is ≤ tol, else None (the caller goes on with EM)."""
    f = np.where(f > 1e-9 * f.max(), f, 0.0)
    f /= f.sum()
    ll = T.loglik(f)
    for _ in range(max_iter):
        Mf = T.M @ f
        g = T.M.T @ (T.y / Mf)
        lam = float(g @ f)
        if (g.max() - lam) / T.N <= tol:
            return f
        S = f > 0
        out = ~S & (g > lam * (1 + 1e-12))
        if out.any():  # the most violated value re-enters the support
            S[np.flatnonzero(out)[np.argmax(g[out])]] = True
        idx = np.flatnonzero(S)
        MS = T.M[:, idx]
        H = MS.T @ ((T.y / Mf**2)[:, None] * MS)
        H[np.diag_indices_from(H)] += 1e-14 * np.trace(H) / idx.size
        K = np.zeros((idx.size + 1, idx.size + 1))
        K[:-1, :-1] = H
        K[:-1, -1] = K[-1, :-1] = 1.0
        try:
            delta = np.linalg.solve(K, np.append(g[idx], 0.0))[:-1]
        except np.linalg.LinAlgError:
            return None
        slope = float(g[idx] @ delta)
        step = 1.0
        while step > 1e-12:
            # projected step: coordinates that would go negative leave S at 0 (several at once)
            cand = f.copy()
            cand[idx] = np.maximum(f[idx] + step * delta, 0.0)
            cand /= cand.sum()
            lc = T.loglik(cand)
            if np.isfinite(lc) and lc >= ll + 1e-4 * step * slope - 1e-13 * abs(ll):
                break
            step /= 2.0
        else:
            return None
        f, ll = cand, lc
    return None


def channel_mle(terms, tol: float = 1e-12, max_iter: int = 100_000, accelerate: bool = True,
                polish: bool = True) -> ChannelMLE:
    """Maximise ℓ on Δ by EM (+ SQUAREM when ``accelerate``), finished by an active-set Newton
    polish on EM's support when ``polish`` (from a relative gap of 1e-6: EM's last digits converge
    linearly, slowly where the likelihood is flat); raises :class:`ConvergenceError` when the
    relative gap is not ≤ ``tol`` after ``max_iter`` EM steps."""
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    t0 = time.perf_counter()
    T = terms if isinstance(terms, Terms) else Terms(terms)
    f = np.full(T.d, 1.0 / T.d)
    nit = 0
    g = T.gradient(f)
    polish_at = 1e-6
    method = "em-squarem" if accelerate else "em"
    while True:
        gap = float(g.max() - T.N) / T.N  # ⟨g, f⟩ = N
        if gap <= tol:
            break
        if polish and gap <= polish_at:
            fp = _newton_polish(T, f, tol)
            if fp is not None:
                f, g = fp, T.gradient(fp)
                gap = float(g.max() - g @ f) / T.N
                method += "+newton"
                break
            polish_at /= 100.0  # not yet: more EM first
        if nit >= max_iter:
            raise ConvergenceError(f"channel EM did not reach gap {tol:g} in {max_iter} steps (gap {gap:.3g})")
        f1 = f * g / T.N
        if not accelerate:
            f, nit = f1, nit + 1
            g = T.gradient(f)
            continue
        f2, _g1 = _step(T, f1)
        nit += 2
        r, v = f1 - f, f2 - f1 - (f1 - f)
        nv = float(np.linalg.norm(v))
        alpha = -1.0 if nv == 0 else min(-1.0, -float(np.linalg.norm(r)) / nv)
        cand = f - 2 * alpha * r + alpha * alpha * v
        while alpha < -1.0 and cand.min() < 0:
            alpha = (alpha - 1.0) / 2.0
            alpha = -1.0 if alpha > -1.01 else alpha
            cand = f - 2 * alpha * r + alpha * alpha * v
        if alpha == -1.0:
            f = f2
        else:
            cand = np.maximum(cand, 0.0)
            cand /= cand.sum()
            fn, _ = _step(T, cand)
            nit += 1
            f = fn if T.loglik(fn) >= T.loglik(f2) else f2
        g = T.gradient(f)
    return ChannelMLE(f=f, loglik=T.loglik(f), gap=gap * T.N, nit=nit,
                      seconds=time.perf_counter() - t0, method=method)


def kkt_residual(terms, f) -> float:
    """max(max_v (g_v/N − 1)⁺, max_v f_v |g_v/N − 1|): the KKT conditions of max ℓ on Δ with
    multiplier N (stationarity where f_v > 0, dual feasibility where f_v = 0)."""
    T = terms if isinstance(terms, Terms) else Terms(terms)
    f = np.asarray(f, dtype=np.float64)
    r = T.gradient(f) / T.N - 1.0
    return float(max(np.max(np.maximum(r, 0.0)), np.max(f * np.abs(r))))


def channel_mle_cvxpy(terms, solver: str = "CLARABEL") -> np.ndarray:
    """The referee: maximise ℓ on Δ with cvxpy (exponential cones; small d). Raises
    ``RuntimeError`` unless cvxpy reports ``optimal``.

    Scaling (a choice; measured at d = 30, n = 20,000, ε = 1): with ℓ/N and Clarabel's default
    tolerances the point was 2e-4 off the exact MLE (ℓ is flat in f), so the variable is x = d·f
    (O(1) entries), the objective Σ_r (y_r/N)·n·log((Mx)_r/d) with n the number of users (curvature
    O(n) per coordinate, like the counts' Fisher information), and Clarabel's gap and feasibility
    tolerances are 1e-12: then within 1e-9 of it."""
    import cvxpy as cp

    T = terms if isinstance(terms, Terms) else Terms(terms)
    x = cp.Variable(T.d, nonneg=True)
    obj = cp.Maximize(T.users * (T.y / T.N) @ cp.log(T.M @ x / T.d))
    prob = cp.Problem(obj, [cp.sum(x) == T.d])
    opts = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12} if solver == "CLARABEL" else {}
    prob.solve(solver=solver, **opts)
    if prob.status != cp.OPTIMAL:
        raise RuntimeError(f"cvxpy referee ended with status {prob.status!r}")
    f = np.maximum(np.asarray(x.value, dtype=np.float64), 0.0)
    return f / f.sum()
