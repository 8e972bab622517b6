"""The interface of a multi-attribute collection protocol, and the one random assignment they share.

Notes: docs/notes/multi.md, "ldpopt.multi.protocol"."""

from __future__ import annotations

import abc

import numpy as np

from .._validation import as_generator, check_epsilon
from .dataset import MultiDataset
from .marginals import MarginalEstimates, MarginalSet

__all__ = ["MultiProtocol", "assign_groups", "choose_groups"]


def assign_groups(counts: np.ndarray, m: int, gen: np.random.Generator) -> np.ndarray:
    """(T, m) int64: how many of the counts[t] users holding tuple t choose each of m groups
    uniformly (one Multinomial per distinct tuple, vectorised)."""
    return gen.multinomial(counts, np.full(m, 1.0 / m)).astype(np.int64).reshape(counts.shape[0], m)


def choose_groups(n: int, m: int, gen: np.random.Generator) -> np.ndarray:
    """The real path's choice: each of n users draws its group uniformly from m (the client's coin)."""
    return gen.integers(0, m, size=n)


class MultiProtocol(abc.ABC):
    """Base class: an LDP protocol collecting the marginals ``marginals`` of k attributes.

    Subclasses: :class:`~ldpopt.multi.SPL`, :class:`~ldpopt.multi.MarginalSampling` (SMP, CALM),
    :class:`~ldpopt.multi.RSFD`; each has a real path (``perturb`` then ``aggregate``) and a fast
    path exact in law (``sample``).

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute.
    epsilon : float
        Each user's budget for the whole report.
    attrs : sequence of sequence of int
        The marginals collected (a :class:`~ldpopt.multi.MarginalSet`).

    Raises
    ------
    ValueError
        ε not positive, or bad domains or marginals.

    Examples
    --------
    >>> from ldpopt import multi
    >>> isinstance(multi.spl((2, 3), 1.0), multi.protocol.MultiProtocol)
    True
    """

    name: str

    def __init__(self, domains, epsilon: float, attrs):
        self.epsilon = check_epsilon(epsilon, "epsilon")
        self.marginals = MarginalSet(domains, attrs)
        self.domains = self.marginals.domains

    @property
    @abc.abstractmethod
    def exact_epsilon(self) -> float:
        """The exact ε of one user's whole report over any two tuples (the largest log ratio of its
        output probabilities).

        Examples
        --------
        >>> from ldpopt import multi
        >>> multi.spl((2, 3), 1.0).exact_epsilon, round(multi.rsfd((2, 2, 2), 1.0).exact_epsilon, 4)
        (1.0, 1.8172)
        """

    @abc.abstractmethod
    def perturb(self, values, rng):
        """Client side: each user's report from its tuple (``values`` (n, k)).

        Parameters
        ----------
        values : array_like of int, shape (n, k)
            One row per user, each value in its attribute's domain.
        rng : int, numpy.random.Generator or "secure"
            The randomness.

        Returns
        -------
        reports
            The protocol's reports (its class docstring gives the format).

        Raises
        ------
        ValueError
            ``values`` of the wrong shape or outside the domains.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import multi
        >>> data = multi.chain_network(5000, 3, rng=0)
        >>> protocol = multi.spl(data.domains, 1.0)
        >>> reports = protocol.perturb(data.values(), rng=0)
        >>> protocol.aggregate(reports).n
        5000
        """

    @abc.abstractmethod
    def aggregate(self, reports) -> MarginalEstimates:
        """Server side: the estimates from the reports ``perturb`` returned.

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.

        Returns
        -------
        MarginalEstimates

        Raises
        ------
        ValueError
            Reports of the wrong form, or a group that received no report.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import multi
        >>> data = multi.chain_network(5000, 3, rng=0)
        >>> protocol = multi.smp(data.domains, 1.0)
        >>> protocol.aggregate(protocol.perturb(data.values(), rng=0)).protocol
        'smp'
        """

    @abc.abstractmethod
    def sample(self, data: MultiDataset, rng) -> MarginalEstimates:
        """The fast path: what ``aggregate(perturb(data.values()))`` returns, drawn from its law.

        Parameters
        ----------
        data : MultiDataset
            The users, with the protocol's domains.
        rng : int, numpy.random.Generator or "secure"
            The randomness.

        Returns
        -------
        MarginalEstimates

        Raises
        ------
        TypeError
            ``data`` is not a MultiDataset.
        ValueError
            ``data``'s domains are not the protocol's, or a group received no report.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import multi
        >>> data = multi.chain_network(5000, 3, rng=0)
        >>> multi.rsfd(data.domains, 1.0).sample(data, rng=0).f_tilde.shape
        (6,)
        """

    def simulate(self, data: MultiDataset, rng, exact: bool = False) -> MarginalEstimates:
        """Run the protocol on ``data``: the fast path, or the real client and server (``exact=True``).

        Parameters
        ----------
        data : MultiDataset
            The users, with the protocol's domains.
        rng : int, numpy.random.Generator or "secure"
            The randomness.
        exact : bool, default False
            True: :meth:`perturb` then :meth:`aggregate`; False: :meth:`sample`.

        Returns
        -------
        MarginalEstimates

        Raises
        ------
        TypeError
            ``data`` is not a MultiDataset.
        ValueError
            ``data``'s domains are not the protocol's.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import multi
        >>> data = multi.chain_network(5000, 3, rng=0)
        >>> multi.spl(data.domains, 1.0).simulate(data, rng=0).f_tilde.round(3)
        array([0.363, 0.637, 0.408, 0.592, 0.418, 0.582])
        """
        self._check_data(data)
        gen = as_generator(rng)
        return self.aggregate(self.perturb(data.values(), gen)) if exact else self.sample(data, gen)

    # -- shared helpers --------------------------------------------------------------------------
    def _check_data(self, data) -> None:
        if not isinstance(data, MultiDataset):
            raise TypeError(f"data must be an ldpopt.multi.MultiDataset, got {type(data).__name__}")
        if data.domains != self.domains:
            raise ValueError(f"data has domains {data.domains}, the protocol was built for {self.domains}")

    def _check_values(self, values) -> np.ndarray:
        v = np.asarray(values)
        k = len(self.domains)
        if v.ndim != 2 or v.shape[1] != k or v.shape[0] == 0 or v.dtype.kind not in "iu":
            raise ValueError(f"values must be a non-empty integer array of shape (n, {k}), got {v.dtype} {v.shape}")
        if np.any((v < 0) | (v >= np.asarray(self.domains)[None, :])):
            raise ValueError(f"values must lie in each attribute's domain {self.domains}")
        return v.astype(np.int64)

    def _result(self, estimates, n: int, **meta) -> MarginalEstimates:
        return MarginalEstimates(self.marginals, tuple(estimates), self.name, self.epsilon, self.exact_epsilon,
                                 int(n), meta)

    @staticmethod
    def _nonempty(sizes, what: str) -> None:
        empty = np.flatnonzero(np.asarray(sizes) == 0)
        if empty.size:
            raise ValueError(f"{what} {int(empty[0])} received no report (too few users for the groups)")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(epsilon={self.epsilon:g}, domains={self.domains}, "
                f"marginals={self.marginals.m})")
