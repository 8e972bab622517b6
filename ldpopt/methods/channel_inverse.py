r"""Unbiased inversion of any finite channel, with its exact covariance.

Derivation (ldpopt's; the papers only invert GRR and the pure oracles, arXiv §2.2-§2.4). With the
stacked matrix M (J·k × d) of a :class:`~ldpopt.oracles.channel.Channel` and the observed
per-component output frequencies ŷ = Y/n, E[ŷ] = M f. The estimator is the least-squares solution
on the simplex's affine hull,

    f̂ = argmin_{1ᵀf = 1} ‖M f − ŷ‖²,      i.e.  [MᵀM  1; 1ᵀ 0] [f̂; λ] = [Mᵀŷ; 1],

so f̂ = A ŷ + b is affine in ŷ and equals f whenever ŷ = M f with 1ᵀf = 1: it is unbiased. Where M
is square and invertible, 1ᵀM = 1ᵀ (columns sum to 1) gives 1ᵀM⁻¹ŷ = 1ᵀŷ = 1, so f̂ = M⁻¹ŷ (GRR:
f̂ = (ŷ − q)/(p − q), arXiv Eq. 1). For a support channel (OUE, SUE, …), with 1ᵀf = 1 the two rows of
component u have residuals ±(q + (p − q)f_u − c_u/n), so f̂_u = (c_u/n − q)/(p − q) exactly, the
pure-oracle estimator. Unweighted least squares is a choice (any weighting is unbiased; the
generalised one would need the unknown f); it is the one that reproduces the paper estimators.

Covariance, given the histogram (the convention of ldpopt's Eq. 2 variances): users are independent
and so are one user's components given v, so Cov(ŷ) is block diagonal with blocks

    C_j = (diag(B_j f) − B_j diag(f) B_jᵀ) / n,

and Cov(f̂) = Σ_j A_j C_j A_jᵀ (A_j: the columns of A for component j). For GRR its diagonal is
Eq. 2; for OUE/SUE it is Eq. 5. If M is not identifiable on the affine hull (the KKT matrix is
singular or its condition number exceeds 1e12) a ``ValueError`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..oracles.channel import Channel

__all__ = ["ChannelInverse", "invert", "inverse_map"]

_MAX_COND = 1e12


@dataclass(frozen=True)
class ChannelInverse:
    """f̂ (unbiased, may be negative), n, and the affine map f̂ = A ŷ + b behind it."""

    f: np.ndarray
    n: int
    A: np.ndarray
    b: np.ndarray
    channel: Channel

    def covariance(self, f) -> np.ndarray:
        """Cov(f̂) (d × d) at true frequencies ``f`` given the histogram n·f (module docstring)."""
        return covariance(self.channel, self.A, f, self.n)

    def variance(self, f) -> np.ndarray:
        """Var(f̂_v), the diagonal of :meth:`covariance`."""
        return np.diagonal(self.covariance(f)).copy()


def inverse_map(channel: Channel) -> tuple[np.ndarray, np.ndarray]:
    """(A, b) with f̂ = A ŷ + b: the constrained least-squares inverse of the stacked matrix."""
    M = channel.matrix
    d = channel.d
    K = np.zeros((d + 1, d + 1))
    K[:d, :d] = M.T @ M
    K[:d, d] = 1.0
    K[d, :d] = 1.0
    cond = np.linalg.cond(K)
    if not np.isfinite(cond) or cond > _MAX_COND:
        raise ValueError(f"channel {channel.name!r} is not invertible on the simplex's affine hull "
                         f"(condition number {cond:.3g}): f is not identifiable from its outputs")
    rhs = np.zeros((d + 1, M.shape[0] + 1))
    rhs[:d, :-1] = M.T
    rhs[d, -1] = 1.0
    sol = np.linalg.solve(K, rhs)
    return sol[:d, :-1], sol[:d, -1]


def invert(channel: Channel, counts) -> ChannelInverse:
    """The unbiased estimate f̂ from per-component output counts (J, k) of ``channel``."""
    if not isinstance(channel, Channel):
        raise TypeError(f"channel must be a Channel, got {type(channel).__name__}")
    Y, n = channel.check_counts(counts)
    A, b = inverse_map(channel)
    f = A @ (Y.ravel() / n) + b
    return ChannelInverse(f=f, n=n, A=A, b=b, channel=channel)


def covariance(channel: Channel, A: np.ndarray, f, n: int) -> np.ndarray:
    """Σ_j A_j C_j A_jᵀ with C_j = (diag(B_j f) − B_j diag(f) B_jᵀ)/n, vectorised over components."""
    f = np.asarray(f, dtype=np.float64)
    if f.shape != (channel.d,) or np.any(f < 0) or not np.isfinite(f).all():
        raise ValueError(f"f must be a non-negative vector of length d = {channel.d}")
    B = channel.blocks
    A3 = A.reshape(channel.d, channel.J, channel.k)
    Bf = np.einsum("jkv,v->jk", B, f)
    first = np.einsum("djk,jk,ejk->de", A3, Bf, A3)
    G = np.einsum("djk,jkv->jdv", A3, B)  # A_j B_j
    second = np.einsum("jdv,v,jev->de", G, f, G)
    return (first - second) / n
