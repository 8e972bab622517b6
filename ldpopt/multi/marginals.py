"""A set of marginals over k attributes laid end to end in one vector, and what is collected on them.

Layout (a choice; the papers draw tables, they do not number cells): marginal i is over the sorted
attribute tuple ``attrs[i]``; its cells are numbered row-major over those attributes
(``numpy.ravel_multi_index``, the first attribute most significant); the concatenated vector holds
marginal 0's cells, then marginal 1's, … (``offsets``). SPL, SMP and RS+FD collect the k one-way
marginals; CALM-style collection any set of them.

Two marginals that share attributes S must agree on the marginal on S (each is a projection of the
same table): :meth:`MarginalSet.agreement` states that as sparse rows A f = 0 over the vector, for
the pairwise intersections of the attribute sets (CALM, Zhang et al. CCS 2018, and PriView, Qardaji
et al. SIGMOD 2014, enforce exactly these shared sub-marginals).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._validation import check_domain_size
from ..estimate import Estimate
from .dataset import check_attributes

__all__ = ["MarginalEstimates", "MarginalSet", "all_k_way"]


def all_k_way(k: int, way: int) -> list[tuple[int, ...]]:
    """Every ``way``-attribute subset of k attributes, in lexicographic order (CALM's full set of
    way-marginals, Zhang et al. CCS 2018 §4)."""
    if isinstance(way, bool) or not isinstance(way, int) or not 1 <= way <= k:
        raise ValueError(f"way must be an integer in [1, k = {k}], got {way!r}")
    return list(itertools.combinations(range(k), way))


class MarginalSet:
    """Marginals ``attrs`` over attributes with domain sizes ``domains``, laid end to end."""

    def __init__(self, domains, attrs):
        self.domains = tuple(check_domain_size(d, f"domains[{j}]") for j, d in enumerate(domains))
        got = [check_attributes(a, len(self.domains), f"attrs[{i}]") for i, a in enumerate(attrs)]
        if not got:
            raise ValueError("attrs must list at least one marginal")
        if len(set(got)) != len(got):
            raise ValueError("attrs must not list the same marginal twice")
        self.attrs = tuple(got)
        self.shapes = tuple(tuple(self.domains[j] for j in a) for a in self.attrs)
        self.sizes = np.array([int(np.prod(s)) for s in self.shapes], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)

    @property
    def m(self) -> int:
        """Number of marginals."""
        return len(self.attrs)

    @property
    def size(self) -> int:
        """Length of the concatenated vector."""
        return int(self.offsets[-1])

    def block(self, i: int) -> slice:
        """Marginal i's cells in the concatenated vector."""
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def split(self, f) -> list[np.ndarray]:
        """The concatenated vector cut into one array per marginal."""
        f = np.asarray(f, dtype=np.float64)
        if f.shape != (self.size,):
            raise ValueError(f"f must have length {self.size} (every marginal's cells), got shape {f.shape}")
        return [f[self.block(i)] for i in range(self.m)]

    def cells(self, i: int, tuples: np.ndarray) -> np.ndarray:
        """Cell index in marginal i of each row of ``tuples`` (T, k)."""
        return np.ravel_multi_index(tuple(tuples[:, j] for j in self.attrs[i]), self.shapes[i])

    def projection(self, i: int, sub) -> np.ndarray:
        """For each cell of marginal i, its cell in the marginal on ``sub`` ⊆ attrs[i] (int array of
        length sizes[i]): summing marginal i over it (``np.bincount``) projects it onto ``sub``."""
        sub = tuple(sub)
        a = self.attrs[i]
        if not set(sub) <= set(a):
            raise ValueError(f"sub {sub} is not a subset of marginal {i}'s attributes {a}")
        idx = np.unravel_index(np.arange(self.sizes[i]), self.shapes[i])
        pos = [a.index(j) for j in sub]
        return np.ravel_multi_index(tuple(idx[p] for p in pos), tuple(self.domains[j] for j in sub))

    def shared(self) -> list[tuple[tuple[int, ...], list[int]]]:
        """Each attribute set S that is the intersection of two marginals' attributes, with every
        marginal containing S, S by increasing size (then lexicographic): the order in which CALM's
        consistency step visits them (a subset before its supersets, so that a later step keeps what
        an earlier one made equal)."""
        inter = {tuple(sorted(set(a) & set(b))) for a, b in itertools.combinations(self.attrs, 2)}
        inter.discard(())
        out = []
        for s in sorted(inter, key=lambda s: (len(s), s)):
            owners = [i for i, a in enumerate(self.attrs) if set(s) <= set(a)]
            out.append((s, owners))
        return out

    def agreement(self) -> sp.csr_matrix:
        """Rows A with A f = 0 exactly when every two marginals agree on the attributes they share
        (given that each marginal's cells sum to the same total, stated separately): for each S of
        :meth:`shared` with owners M_1, …, M_r, the rows P_{M_1→S} f_{M_1} − P_{M_j→S} f_{M_j} = 0,
        j = 2..r, on every cell of S but the last (implied by the totals). Rows implied by others
        (two sets S ⊂ S' with the same owners, cycles of pairwise intersections) are then dropped,
        keeping a linearly independent subset found by QR with column pivoting (a choice: the
        feasible set is the same and the multipliers become unique, which the dual solver's Newton
        steps need). The QR is skipped when, inside every marginal, the shared sets it holds are
        pairwise disjoint (all 2-way marginals, say): the rows are then independent — on one
        marginal's table the non-total cell sums of disjoint attribute sets are independent
        functionals, and each set's rows pair a different marginal with the first owner. Empty
        (0 rows) when no two marginals share an attribute."""
        blocks = []
        shared = self.shared()
        for s, owners in shared:
            ssize = int(np.prod([self.domains[j] for j in s]))
            first = owners[0]
            p0 = self.projection(first, s)
            for other in owners[1:]:
                p1 = self.projection(other, s)
                keep0, keep1 = p0 < ssize - 1, p1 < ssize - 1
                rows = np.concatenate([p0[keep0], p1[keep1]])
                cols = np.concatenate([self.offsets[first] + np.flatnonzero(keep0),
                                       self.offsets[other] + np.flatnonzero(keep1)])
                vals = np.concatenate([np.ones(int(keep0.sum())), -np.ones(int(keep1.sum()))])
                blocks.append(sp.csr_matrix((vals, (rows, cols)), shape=(ssize - 1, self.size)))
        if not blocks:
            return sp.csr_matrix((0, self.size))
        A = sp.vstack(blocks, format="csr")
        held = [[set(s) for s, owners in shared if i in owners] for i in range(self.m)]
        if all(not (a & b) for sets in held for a, b in itertools.combinations(sets, 2)):
            return A
        return A[_independent_rows(A)]

    def totals_groups(self) -> dict:
        """Marginal name → its cells in the vector (for :class:`~ldpopt.problems.PartitionTotals`)."""
        return {self.name(i): np.arange(self.offsets[i], self.offsets[i + 1]) for i in range(self.m)}

    def name(self, i: int) -> str:
        return "m" + "_".join(str(j) for j in self.attrs[i])

    def __repr__(self) -> str:
        return f"MarginalSet(m={self.m}, size={self.size}, attrs={self.attrs[:4]}{'...' if self.m > 4 else ''})"


def _independent_rows(A: sp.csr_matrix) -> np.ndarray:
    """Indices of a maximal linearly independent subset of A's rows, in their order (dense QR with
    column pivoting of Aᵀ; rows of 0/±1 entries, so the rank gap is wide: tolerance 1e-9·max|R_11|)."""
    from scipy.linalg import qr

    if A.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    _, R, piv = qr(A.T.toarray(), mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.count_nonzero(diag > 1e-9 * diag[0])) if diag.size and diag[0] > 0 else 0
    return np.sort(piv[:rank])


@dataclass(frozen=True, eq=False)
class MarginalEstimates:
    """What a multi-attribute collection returns: one unbiased :class:`~ldpopt.Estimate` per marginal.

    Attributes
    ----------
    marginals : MarginalSet
        Which marginals (one-way for SPL / SMP / RS+FD).
    estimates : tuple of Estimate
        Marginal i's estimate over its ``sizes[i]`` cells, from the ``estimates[i].n`` reports about it.
    protocol : str
        ``"spl"``, ``"smp"``, ``"rsfd-grr"``, ``"rsfd-oue"`` or ``"calm"``.
    epsilon : float
        The budget each user's whole report satisfies, as the protocol states it.
    exact_epsilon : float
        The exact ε of one user's whole report over any two of its possible tuples (the largest log
        ratio of output probabilities; each protocol's module derives it). Equal to ``epsilon`` for
        SPL, SMP and CALM; larger for RS+FD (:mod:`.fake_data`), whose ε is stated between tuples that
        differ in one attribute.
    n : int
        Users.
    """

    marginals: MarginalSet
    estimates: tuple
    protocol: str
    epsilon: float
    exact_epsilon: float
    n: int
    meta: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        ests = tuple(self.estimates)
        if len(ests) != self.marginals.m or not all(isinstance(e, Estimate) for e in ests):
            raise ValueError(f"estimates must be {self.marginals.m} Estimate objects, one per marginal")
        for i, e in enumerate(ests):
            if e.d != self.marginals.sizes[i]:
                raise ValueError(f"estimates[{i}] has d = {e.d}, marginal {i} has {self.marginals.sizes[i]} cells")
        object.__setattr__(self, "estimates", ests)

    @property
    def f_tilde(self) -> np.ndarray:
        """The concatenated unbiased estimates (every marginal's f̃)."""
        return np.concatenate([e.f_tilde for e in self.estimates])

    @property
    def sigma2(self) -> np.ndarray:
        """Per cell, its marginal's σ² of Wang et al. Eq. 7 (q(1 − q)/(n_i (p − q)²), one per marginal)."""
        return np.concatenate([np.full(e.d, e.sigma2) for e in self.estimates])

    def truth(self, data) -> np.ndarray:
        """The true marginals of ``data`` (a :class:`~.dataset.MultiDataset`), concatenated."""
        return np.concatenate([data.marginal(a) for a in self.marginals.attrs])
