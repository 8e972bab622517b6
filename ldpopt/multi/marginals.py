"""A set of marginals over k attributes laid end to end in one vector, and what is collected on them.

Notes: docs/notes/multi.md, "ldpopt.multi.marginals"."""

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
    way-marginals, Zhang et al. CCS 2018 §4).

    Parameters
    ----------
    k : int
        Number of attributes.
    way : int
        Attributes per subset, in [1, k].

    Returns
    -------
    list of tuple of int

    Raises
    ------
    ValueError
        ``way`` not an integer in [1, k].

    Examples
    --------
    >>> from ldpopt.multi import all_k_way
    >>> all_k_way(3, 2)
    [(0, 1), (0, 2), (1, 2)]
    """
    if isinstance(way, bool) or not isinstance(way, int) or not 1 <= way <= k:
        raise ValueError(f"way must be an integer in [1, k = {k}], got {way!r}")
    return list(itertools.combinations(range(k), way))


class MarginalSet:
    """Marginals ``attrs`` over attributes with domain sizes ``domains``, laid end to end.

    Layout in the module notes: marginal i's cells row-major over its sorted attributes, the
    marginals one after another (``offsets``).

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute.
    attrs : sequence of sequence of int
        The marginals' attribute sets, distinct.

    Raises
    ------
    ValueError
        A bad domain size, an empty or repeated marginal, or an attribute out of range.

    Examples
    --------
    >>> from ldpopt.multi import MarginalSet
    >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
    >>> ms, ms.sizes
    (MarginalSet(m=2, size=12, attrs=((0, 1), (1, 2))), array([6, 6]))
    """

    #: what depends on the layout alone, built on first use (:meth:`derived`): the agreement rows,
    #: the consistency constraints
    _derived: dict

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
        self._derived = {}

    def derived(self, key: str, make):
        """``make(self)``, computed on the first call for ``key`` and kept: what depends on the layout
        alone (the agreement rows of :meth:`agreement`, the constraints of
        :func:`~.problem.consistency_constraints`), so that every estimate over one marginal set
        shares it (a MarginalSet is not changed after it is made).

        Parameters
        ----------
        key : str
            What ``make`` builds.
        make : callable
            ``make(marginal_set)``.

        Returns
        -------
        object
            What ``make`` returned the first time.

        Examples
        --------
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> ms.derived("cells", lambda s: int(s.sizes.sum())), ms.derived("cells", lambda s: -1)
        (12, 12)
        """
        if key not in self._derived:
            self._derived[key] = make(self)
        return self._derived[key]

    @property
    def m(self) -> int:
        """Number of marginals.

        Examples
        --------
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> ms.m
        2
        """
        return len(self.attrs)

    @property
    def size(self) -> int:
        """Length of the concatenated vector.

        Examples
        --------
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> ms.size
        12
        """
        return int(self.offsets[-1])

    def block(self, i: int) -> slice:
        """Marginal i's cells in the concatenated vector.

        Parameters
        ----------
        i : int
            The marginal.

        Returns
        -------
        slice

        Examples
        --------
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> ms.block(1)
        slice(6, 12, None)
        """
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def split(self, f) -> list[np.ndarray]:
        """The concatenated vector cut into one array per marginal.

        Parameters
        ----------
        f : array_like, shape (size,)
            The concatenated vector.

        Returns
        -------
        list of ndarray

        Raises
        ------
        ValueError
            ``f`` of the wrong length.

        Examples
        --------
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> [x.shape for x in ms.split(range(12))]
        [(6,), (6,)]
        """
        f = np.asarray(f, dtype=np.float64)
        if f.shape != (self.size,):
            raise ValueError(f"f must have length {self.size} (every marginal's cells), got shape {f.shape}")
        return [f[self.block(i)] for i in range(self.m)]

    def cells(self, i: int, tuples: np.ndarray) -> np.ndarray:
        """Cell index in marginal i of each row of ``tuples`` (T, k).

        Parameters
        ----------
        i : int
            The marginal.
        tuples : ndarray of int, shape (T, k)
            Full tuples.

        Returns
        -------
        ndarray of int

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> ms.cells(0, np.array([[1, 2, 0]]))  # (a0, a1) = (1, 2) in a 2 x 3 table
        array([5])
        """
        return np.ravel_multi_index(tuple(tuples[:, j] for j in self.attrs[i]), self.shapes[i])

    def projection(self, i: int, sub) -> np.ndarray:
        """For each cell of marginal i, its cell in the marginal on ``sub`` ⊆ attrs[i] (int array of
        length sizes[i]): summing marginal i over it (``np.bincount``) projects it onto ``sub``.

        Parameters
        ----------
        i : int
            The marginal.
        sub : sequence of int
            A subset of its attributes.

        Returns
        -------
        ndarray of int, shape (sizes[i],)

        Raises
        ------
        ValueError
            ``sub`` is not a subset of marginal i's attributes.

        Examples
        --------
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> ms.projection(0, (1,))
        array([0, 1, 2, 0, 1, 2])
        """
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
        an earlier one made equal).

        Returns
        -------
        list of (tuple of int, list of int)
            Each shared attribute set with the marginals holding it.

        Examples
        --------
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> ms.shared()
        [((1,), [0, 1])]
        """
        inter = {tuple(sorted(set(a) & set(b))) for a, b in itertools.combinations(self.attrs, 2)}
        inter.discard(())
        out = []
        for s in sorted(inter, key=lambda s: (len(s), s)):
            owners = [i for i, a in enumerate(self.attrs) if set(s) <= set(a)]
            out.append((s, owners))
        return out

    def agreement(self) -> sp.csr_matrix:
        r"""Rows A with A f = 0 exactly when every two marginals agree on the attributes they share
        (given that each marginal's cells sum to the same total, stated separately): for each S of
        :meth:`shared` with owners :math:`M_1, …, M_r`, the rows :math:`P_{M_1 \to S} f_{M_1} − P_{M_j \to S} f_{M_j} = 0`,
        j = 2..r, on every cell of S but the last (implied by the totals). Rows implied by others
        (two sets :math:`S ⊂ S'` with the same owners, cycles of pairwise intersections) are then dropped,
        keeping a linearly independent subset found by QR with column pivoting (a choice: the
        feasible set is the same and the multipliers become unique, which the dual solver's Newton
        steps need). The QR is skipped when, inside every marginal, the shared sets it holds are
        pairwise disjoint (all 2-way marginals, say): the rows are then independent — on one
        marginal's table the non-total cell sums of disjoint attribute sets are independent
        functionals, and each set's rows pair a different marginal with the first owner. Empty
        (0 rows) when no two marginals share an attribute.

        Returns
        -------
        scipy.sparse.csr_matrix, shape (rows, size)

        Examples
        --------
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> ms.agreement().shape  # attribute 1 has 3 values: 2 independent rows
        (2, 12)
        """
        return self.derived("agreement", MarginalSet._build_agreement).copy()

    def _build_agreement(self) -> sp.csr_matrix:
        rows, cols, vals = [], [], []
        top = 0  # rows so far
        shared = self.shared()
        for s, owners in shared:
            ssize = int(np.prod([self.domains[j] for j in s]))
            first = owners[0]
            p0 = self.projection(first, s)
            keep0 = p0 < ssize - 1
            for other in owners[1:]:
                p1 = self.projection(other, s)
                keep1 = p1 < ssize - 1
                rows += [top + p0[keep0], top + p1[keep1]]
                cols += [self.offsets[first] + np.flatnonzero(keep0), self.offsets[other] + np.flatnonzero(keep1)]
                vals += [np.ones(int(keep0.sum())), -np.ones(int(keep1.sum()))]
                top += ssize - 1
        if not top:
            return sp.csr_matrix((0, self.size))
        A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(top, self.size))
        held = [[set(s) for s, owners in shared if i in owners] for i in range(self.m)]
        if all(not (a & b) for sets in held for a, b in itertools.combinations(sets, 2)):
            return A
        return A[_independent_rows(A)]

    def totals_groups(self) -> dict:
        """Marginal name → its cells in the vector (for :class:`~ldpopt.problems.PartitionTotals`).

        Returns
        -------
        dict of str to ndarray

        Examples
        --------
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> {k: v.tolist() for k, v in ms.totals_groups().items()}
        {'m0_1': [0, 1, 2, 3, 4, 5], 'm1_2': [6, 7, 8, 9, 10, 11]}
        """
        return {self.name(i): np.arange(self.offsets[i], self.offsets[i + 1]) for i in range(self.m)}

    def name(self, i: int) -> str:
        """Marginal i's name: ``"m"`` and its attributes joined by ``_``.

        Parameters
        ----------
        i : int
            The marginal.

        Returns
        -------
        str

        Examples
        --------
        >>> from ldpopt.multi import MarginalSet
        >>> ms = MarginalSet((2, 3, 2), [(0, 1), (1, 2)])
        >>> ms.name(1)
        'm1_2'
        """
        return "m" + "_".join(str(j) for j in self.attrs[i])

    def __repr__(self) -> str:
        return f"MarginalSet(m={self.m}, size={self.size}, attrs={self.attrs[:4]}{'...' if self.m > 4 else ''})"


def _independent_rows(A: sp.csr_matrix) -> np.ndarray:
    """Indices of a maximal linearly independent subset of A's rows, in their order (dense QR with
    column pivoting of Aᵀ; rows of 0/±1 entries, so the rank gap is wide: tolerance 1e-9·max|R_11|)."""
    from scipy.linalg import qr

    from .._blas import one_thread

    if A.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    with one_thread(max(A.shape)):
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
        Which marginals (one-way for SPL / SMP / RS+FD / RS+RFD).
    estimates : tuple of Estimate
        Marginal i's estimate over its ``sizes[i]`` cells, from the ``estimates[i].n`` reports about it.
    protocol : str
        ``"spl"``, ``"smp"``, ``"rsfd-grr"``, ``"rsfd-oue"``, ``"rsrfd-grr"``, ``"rsrfd-oue"`` or ``"calm"``.
    epsilon : float
        The budget each user's whole report satisfies, as the protocol states it.
    exact_epsilon : float
        The exact ε of one user's whole report over any two of its possible tuples (the largest log
        ratio of output probabilities; each protocol's module derives it). Equal to ``epsilon`` for
        SPL, SMP and CALM; larger for RS+FD and RS+RFD (:mod:`.fake_data`), whose ε is stated between tuples that
        differ in one attribute.
    n : int
        Users.

    Parameters
    ----------
    marginals, estimates, protocol, epsilon, exact_epsilon, n
        As the attributes above.
    meta : dict, optional
        Extra facts of the protocol.

    Raises
    ------
    ValueError
        Not one Estimate per marginal, or an estimate whose d is not its marginal's size.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
    >>> est.protocol, len(est.estimates), est.n
    ('calm', 3, 5000)
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
        """The concatenated unbiased estimates (every marginal's f̃).

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import multi
        >>> data = multi.chain_network(5000, 3, rng=0)
        >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
        >>> est.f_tilde[:4].round(3)
        array([0.24 , 0.113, 0.175, 0.522])
        """
        return np.concatenate([e.f_tilde for e in self.estimates])

    @property
    def sigma2(self) -> np.ndarray:
        """Per cell, its marginal's :math:`σ^2` of Wang et al. Eq. 7 (:math:`q(1 - q)/(n_i (p - q)^2)`, one per marginal).

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import multi
        >>> data = multi.chain_network(5000, 3, rng=0)
        >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
        >>> est.sigma2.shape, bool((est.sigma2 > 0).all())
        ((12,), True)
        """
        return np.concatenate([np.full(e.d, e.sigma2) for e in self.estimates])

    def truth(self, data) -> np.ndarray:
        """The true marginals of ``data`` (a :class:`~.dataset.MultiDataset`), concatenated.

        Parameters
        ----------
        data : MultiDataset
            The users the estimates came from.

        Returns
        -------
        ndarray, shape (marginals.size,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import multi
        >>> data = multi.chain_network(5000, 3, rng=0)
        >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
        >>> est.truth(data)[:4].round(3)
        array([0.273, 0.071, 0.128, 0.528])
        """
        return np.concatenate([data.marginal(a) for a in self.marginals.attrs])
