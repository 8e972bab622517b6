r"""Unbiased inversion of any finite channel, with its exact covariance.

Notes: docs/notes/python.md, "ldpopt.methods.channel_inverse"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..oracles.channel import Channel

__all__ = ["ChannelInverse", "inverse_map", "invert"]

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
        """Cov(f̂) (d × d) at true frequencies ``f`` given the histogram n·f (module notes)."""
        return covariance(self.channel, self.A, f, self.n)

    def variance(self, f) -> np.ndarray:
        """Var(f̂_v), the diagonal of :meth:`covariance`."""
        return np.diagonal(self.covariance(f)).copy()


def inverse_map(channel: Channel) -> tuple[np.ndarray, np.ndarray]:
    """(A, b) with f̂ = A ŷ + b over all J·k stacked rows (zero columns for the dropped rows)."""
    M = channel.matrix
    J, k, d = channel.J, channel.k, channel.d
    keep = np.ones(J * k, dtype=bool) if J == 1 else (np.arange(J * k) % k) != 0
    MR = M[keep]
    w = np.zeros(MR.shape[0]) if J == 1 else MR.min(axis=1)
    D = MR - w[:, None]
    cond = np.linalg.cond(D) if D.shape[0] >= d else np.inf
    if not np.isfinite(cond) or cond > _MAX_COND:
        raise ValueError(f"channel {channel.name!r} is not invertible (condition number {cond:.3g} of its "
                         f"{D.shape[0]} × {d} background-removed rows): f is not identifiable from its outputs")
    AR = np.linalg.pinv(D)
    A = np.zeros((d, J * k))
    A[:, keep] = AR
    return A, -AR @ w


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
    first = np.einsum("djk,jk,ejk->de", A3, Bf, A3, optimize=True)  # optimize: BLAS contractions, not a d⁴ loop
    G = np.einsum("djk,jkv->jdv", A3, B, optimize=True)  # A_j B_j
    second = np.einsum("jdv,v,jev->de", G, f, G, optimize=True)
    return (first - second) / n
