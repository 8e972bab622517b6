r"""Any finite LDP mechanism, given by its channel P(y | v): the law, its ε, and exact sampling.

Notes: docs/notes/python.md, "ldpopt.oracles.channel"."""

from __future__ import annotations

import numpy as np

from .. import kernels
from .._validation import as_generator, check_counts, check_epsilon, check_values
from .base import support_blocks

__all__ = ["Channel", "compose", "product"]

_COLUMN_TOL = 1e-9
_MAX_JOINT_ROWS = 1 << 16


def _check_blocks(P, name: str = "P") -> np.ndarray:
    try:
        B = np.array(P, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array, got {type(P).__name__}") from exc
    if B.ndim == 2:
        B = B[None]
    if B.ndim != 3:
        raise ValueError(f"{name} must have shape (k, d) or (J, k, d), got shape {np.shape(P)}")
    J, k, d = B.shape
    if J < 1 or k < 1 or d < 2:
        raise ValueError(f"{name} must have at least 1 output and d >= 2 input columns, got shape {np.shape(P)}")
    if not np.all(np.isfinite(B)):
        raise ValueError(f"{name} must be finite")
    if np.any(B < 0):
        raise ValueError(f"{name} must be non-negative (probabilities); min entry is {B.min()!r}")
    sums = B.sum(axis=1)
    if np.any(np.abs(sums - 1.0) > _COLUMN_TOL):
        j, v = np.unravel_index(np.argmax(np.abs(sums - 1.0)), sums.shape)
        raise ValueError(f"{name}: every column P[:, v] must sum to 1 (a conditional law); "
                         f"column {v} of block {j} sums to {sums[j, v]!r}")
    B.setflags(write=False)
    return B


class Channel:
    """A finite mechanism P(y | v) on {0, …, d−1}, stored as blocks (J, k, d) (module notes).

    Parameters
    ----------
    P : array (k, d) or (J, k, d)
        P[y, v] = Pr[y | v]; every column sums to 1 (checked to 1e-9), entries ≥ 0.
    name : str
        A label (shown in repr and pooled tables).
    """

    def __init__(self, P, name: str = "channel"):
        self.blocks = _check_blocks(P)
        self.name = str(name)

    # -- shape -----------------------------------------------------------------------------
    @property
    def J(self) -> int:
        return int(self.blocks.shape[0])

    @property
    def k(self) -> int:
        return int(self.blocks.shape[1])

    @property
    def d(self) -> int:
        return int(self.blocks.shape[2])

    @property
    def matrix(self) -> np.ndarray:
        """The stacked (J·k, d) matrix M of all components' laws (M f = expected output frequencies)."""
        return self.blocks.reshape(self.J * self.k, self.d)

    def joint_matrix(self) -> np.ndarray:
        """The full law Pr[(y₁, …, y_J) | v] as a (k^J, d) matrix (y₁ most significant), by
        enumeration; for small k^J only (≤ 65,536 rows)."""
        if self.k ** self.J > _MAX_JOINT_ROWS:
            raise ValueError(f"the joint output space has k^J = {self.k}^{self.J} outcomes, too many to "
                             f"enumerate (max {_MAX_JOINT_ROWS})")
        M = np.ones((1, self.d))
        for Bj in self.blocks:  # J ≤ 16 here: a loop over components, not users or values
            M = (M[:, None, :] * Bj[None, :, :]).reshape(-1, self.d)
        return M

    # -- privacy ---------------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        """The channel's exact ε: max over v, v' of Σ_j max_y log(B[j,y,v]/B[j,y,v']) (module doc)."""
        with np.errstate(divide="ignore"):
            L = np.log(self.blocks)
        if self.J == 1:
            row = L[0]
            seen = np.isfinite(row).any(axis=1)  # outputs that can occur at all
            if np.any(~np.isfinite(row[seen]).all(axis=1)):
                return float("inf")
            return float(np.max(row[seen].max(axis=1) - row[seen].min(axis=1)))
        per_j: np.ndarray | None = None  # per_j[j, v, v'] = max_y log(B[j,y,v]/B[j,y,v'])
        for y in range(self.k):  # k outputs per component (2 for support channels), vectorised over J, d²
            a = L[:, y, :, None]
            b = L[:, y, None, :]
            with np.errstate(invalid="ignore"):
                diff = np.where(np.isneginf(a) & np.isneginf(b), -np.inf, a - b)
            per_j = diff if per_j is None else np.maximum(per_j, diff)
        assert per_j is not None  # k >= 1 outputs: every column of P sums to 1
        total = per_j.sum(axis=0)
        return float(np.max(total))

    def check_epsilon(self, epsilon: float, tol: float = 1e-9) -> float:
        """Raise ``ValueError`` unless the channel is ``epsilon``-LDP (its ε ≤ epsilon + tol); returns its ε."""
        epsilon = check_epsilon(epsilon, "epsilon")
        eps = self.epsilon
        if not eps <= epsilon + tol:
            raise ValueError(f"channel {self.name!r} is {eps:.12g}-LDP, more than the claimed epsilon = {epsilon:g}")
        return eps

    # -- counts ----------------------------------------------------------------------------
    def check_counts(self, counts, name: str = "counts") -> tuple[np.ndarray, int]:
        """Validate a (J, k) table of per-component output counts (or (k,) when J = 1); every row
        must sum to the same n ≥ 1. Returns (counts as float (J, k), n)."""
        Y = np.asarray(counts, dtype=np.float64)
        if Y.ndim == 1 and self.J == 1:
            Y = Y[None]
        if Y.shape != (self.J, self.k):
            raise ValueError(f"{name} must have shape ({self.J}, {self.k}) (components × outputs), got {np.shape(counts)}")
        if not np.all(np.isfinite(Y)) or np.any(Y < 0):
            raise ValueError(f"{name} must be finite and >= 0")
        n = Y.sum(axis=1)
        if n[0] < 1 or np.any(np.abs(n - n[0]) > 1e-9 * n[0]):
            raise ValueError(f"{name}: every component's counts must sum to the same n >= 1, got row sums {n[:5]}")
        return Y, round(n[0])

    def counts_from_support(self, support_counts, n: int) -> np.ndarray:
        """(J, 2) table [n − c_u, c_u] from support counts c (length d) of a support channel (k = 2, J = d)."""
        if self.k != 2 or self.J != self.d:
            raise ValueError("counts_from_support needs a support channel (J = d components with k = 2 outputs)")
        c = check_counts(support_counts, "support_counts", d=self.d, integral=False)
        if np.any(c > n):
            raise ValueError(f"support_counts must be <= n = {n}")
        return np.stack([n - c, c], axis=1)

    # -- sampling --------------------------------------------------------------------------
    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """Per-component output counts (int64, (J, k)) for users with histogram ``true_counts``;
        exact in joint law (module notes)."""
        tc = check_counts(true_counts, "true_counts", d=self.d, integral=True).astype(np.int64)
        if tc.sum() < 1:
            raise ValueError("true_counts must describe at least one user (n = sum(true_counts) >= 1)")
        gen = as_generator(rng)
        # normalise each column exactly to 1 in float so numpy's multinomial accepts it
        pv = np.transpose(self.blocks, (0, 2, 1))
        pv = pv / pv.sum(axis=2, keepdims=True)
        draws = gen.multinomial(np.broadcast_to(tc, (self.J, self.d)), pv)  # (J, d, k)
        return draws.sum(axis=1).astype(np.int64)

    def perturb(self, values, rng) -> np.ndarray:
        """Client side: each user's report, (m, J) int64 (component outputs), by inverting each
        column's CDF at a uniform draw; vectorised over users (O(m·J·k) memory: tests and audits)."""
        v = check_values(values, self.d)
        gen = as_generator(rng)
        cdf = np.cumsum(self.blocks, axis=1)  # (J, k, d)
        u = gen.random((v.shape[0], self.J))
        sel = cdf[:, :, v]  # (J, k, m)
        out = (sel < u.T[:, None, :]).sum(axis=1).T  # (m, J)
        return np.minimum(out, self.k - 1).astype(np.int64)

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Per-component output counts (J, k) of reports from :meth:`perturb`: one histogram of the
        ids j·k + y (``device``: see :meth:`FrequencyOracle.aggregate`)."""
        r = np.asarray(reports)
        if r.ndim != 2 or r.shape[1] != self.J or np.any(r < 0) or np.any(r >= self.k):
            raise ValueError(f"reports must be an (m, {self.J}) integer array with entries in [0, {self.k})")
        flat = (np.arange(self.J)[None, :] * self.k + r).ravel()
        size = self.J * self.k
        return kernels.histogram(flat, size, kernels.resolve(device, flat.shape[0])).reshape(self.J, self.k)

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def grr(cls, epsilon: float, d: int) -> Channel:
        """GRR's d × d channel (arXiv Eq. 1): p on the diagonal, q off it."""
        from .grr import GRR

        return cls.from_oracle(GRR(epsilon, d))

    @classmethod
    def support(cls, p: float, q: float, d: int, name: str = "support") -> Channel:
        """The support channel of a pure oracle with (p, q) (arXiv §2.4): d binary components,
        component u reports 1 w.p. p if u = v else q. Exactly OUE/SUE; the marginals of the others."""
        return cls(support_blocks(p, q, d), name=name)

    @classmethod
    def from_oracle(cls, oracle) -> Channel:
        """The channel of an ldpopt oracle, as it states it (``oracle.channel_blocks()``): dense for GRR,
        the support channel for the others."""
        return cls(oracle.channel_blocks(), name=f"{oracle.name}(eps={oracle.epsilon:g})")

    def __repr__(self) -> str:
        return f"Channel({self.name!r}, J={self.J}, k={self.k}, d={self.d})"


def compose(outer: Channel, inner: Channel) -> Channel:
    """Feed each output of ``inner``'s components through ``outer`` (one dense block whose input
    domain is inner's k outputs): B'[j] = R · B[j]. Memoised two-round designs (module notes)."""
    if not isinstance(outer, Channel) or not isinstance(inner, Channel):
        raise TypeError("compose takes two Channel objects")
    if outer.J != 1 or outer.d != inner.k:
        raise ValueError(f"outer must be one block on inner's k = {inner.k} outputs, got {outer!r}")
    return Channel(np.einsum("yk,jkd->jyd", outer.blocks[0], inner.blocks),
                   name=f"{outer.name}∘{inner.name}")


def product(*channels: Channel) -> Channel:
    """Independent channels on the same value, side by side (their components concatenated)."""
    if not channels or any(not isinstance(c, Channel) for c in channels):
        raise TypeError("product takes one or more Channel objects")
    d, k = channels[0].d, channels[0].k
    if any(c.d != d or c.k != k for c in channels):
        raise ValueError("product needs channels with the same d and the same k outputs per component")
    return Channel(np.concatenate([c.blocks for c in channels]), name="×".join(c.name for c in channels))


def binary_rr(epsilon: float) -> Channel:
    """Symmetric binary randomised response with ε: keep the bit w.p. e^ε/(1 + e^ε) (RAPPOR's
    instantaneous step with a symmetric flip; Warner 1965)."""
    epsilon = check_epsilon(epsilon, "epsilon")
    keep = 1.0 / (1.0 + np.exp(-epsilon))
    return Channel(np.array([[keep, 1 - keep], [1 - keep, keep]]), name=f"rr(eps={epsilon:g})")


def memoised_grr(epsilon_memo: float, epsilon_report: float, d: int) -> Channel:
    """Two-round GRR: the memo is GRR(v) with ``epsilon_memo``, each report GRR(memo) with
    ``epsilon_report``; one report's channel is P₂P₁."""
    a = Channel.grr(epsilon_memo, d)
    b = Channel.grr(epsilon_report, d)
    out = compose(b, a)
    out.name = f"memo-grr({epsilon_memo:g},{epsilon_report:g})"
    return out


def memoised_unary(epsilon_memo: float, epsilon_report: float, d: int, kind: str = "sue") -> Channel:
    """RAPPOR-style two rounds: a memoised unary encoding (``kind`` "sue": basic RAPPOR's symmetric
    flips, or "oue") with ``epsilon_memo``, then each bit of the memo through symmetric binary RR
    with ``epsilon_report`` (Erlingsson et al. CCS 2014 §3, with symmetric flips)."""
    from .unary import OUE, SUE

    cls_ = {"sue": SUE, "oue": OUE}.get(kind)
    if cls_ is None:
        raise ValueError(f"kind must be 'sue' or 'oue', got {kind!r}")
    o = cls_(epsilon_memo, d)
    out = compose(binary_rr(epsilon_report), Channel.support(o.p, o.q, o.d))
    out.name = f"memo-{kind}({epsilon_memo:g},{epsilon_report:g})"
    return out


__all__ += ["binary_rr", "memoised_grr", "memoised_unary"]
