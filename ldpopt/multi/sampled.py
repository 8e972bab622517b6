"""Each user reports one marginal, chosen uniformly at random, with the whole budget: SMP and CALM.

Notes: docs/notes/multi.md, "ldpopt.multi.sampled"."""

from __future__ import annotations

import numpy as np

from .. import oracles
from .._validation import as_generator
from .marginals import all_k_way
from .protocol import MultiProtocol, assign_groups, choose_groups

__all__ = ["MarginalSampling", "calm", "smp"]


class MarginalSampling(MultiProtocol):
    """Users split uniformly over the marginals ``attrs``; each reports its cell of its marginal
    through ``oracle`` (a registry name, e.g. ``"grr"``, ``"oue"``, ``"olh"``; ``oracle_params`` go
    to :func:`ldpopt.oracles.get`) with the whole ε. Reports: ``(choice, per-marginal reports)``,
    ``choice[u]`` the marginal of user u and ``reports[i]`` the oracle reports of the users who chose
    i, in user order.

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute.
    epsilon : float
        Each user's budget for the whole report.
    attrs : sequence of sequence of int
        The marginals a user may be assigned.
    oracle : str, default "grr"
        Registry name of each marginal's oracle.
    name : str, default "calm"
        The protocol's name in its estimates.
    **oracle_params
        Passed to :func:`ldpopt.oracles.get`.

    Raises
    ------
    ValueError
        ε not positive, or bad domains, marginals or oracle parameters.

    Examples
    --------
    >>> from ldpopt.multi import MarginalSampling
    >>> MarginalSampling((2, 3), 1.0, [(0,), (0, 1)]).oracles
    (GRR(epsilon=1, d=2), GRR(epsilon=1, d=6))
    """

    def __init__(self, domains, epsilon: float, attrs, oracle: str = "grr", name: str = "calm", **oracle_params):
        super().__init__(domains, epsilon, attrs)
        self.name = name
        self.oracles = tuple(oracles.get(oracle, self.epsilon, int(s), **oracle_params)
                             for s in self.marginals.sizes)

    @property
    def exact_epsilon(self) -> float:
        return max(o.epsilon for o in self.oracles)

    def perturb(self, values, rng):
        v = self._check_values(values)
        gen = as_generator(rng)
        choice = choose_groups(v.shape[0], self.marginals.m, gen)
        reports = []
        for i, orc in enumerate(self.oracles):  # a loop over marginals, vectorised over their users
            mine = v[choice == i]
            reports.append(orc.perturb(self.marginals.cells(i, mine), gen) if mine.shape[0] else None)
        return choice, tuple(reports)

    def aggregate(self, reports):
        choice, per = reports
        n_i = np.bincount(np.asarray(choice), minlength=self.marginals.m)
        self._nonempty(n_i, "marginal")
        ests = [orc.estimate(orc.aggregate(r), int(n)) for orc, r, n in zip(self.oracles, per, n_i)]
        return self._result(ests, int(n_i.sum()))

    def sample(self, data, rng):
        self._check_data(data)
        gen = as_generator(rng)
        z = assign_groups(data.counts, self.marginals.m, gen)
        n_i = z.sum(axis=0)
        self._nonempty(n_i, "marginal")
        ests = []
        for i, orc in enumerate(self.oracles):
            hist = np.bincount(self.marginals.cells(i, data.tuples), weights=z[:, i], minlength=orc.d)
            ests.append(orc.estimate(orc.sample_counts(hist.astype(np.int64), gen), int(n_i[i])))
        return self._result(ests, data.n)


def smp(domains, epsilon: float, oracle: str = "grr", **oracle_params) -> MarginalSampling:
    """SMP: each user reports one attribute, drawn uniformly, with the whole ε (module notes).

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute.
    epsilon : float
        Each user's budget.
    oracle : str, default "grr"
        Registry name of each attribute's oracle.
    **oracle_params
        Passed to :func:`ldpopt.oracles.get`.

    Returns
    -------
    MarginalSampling

    Raises
    ------
    ValueError
        ε not positive, or a bad domain or oracle parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> est = multi.smp(data.domains, 1.0).simulate(data, rng=0)
    >>> est.protocol, sum(e.n for e in est.estimates)
    ('smp', 5000)
    """
    return MarginalSampling(domains, epsilon, [(j,) for j in range(len(domains))], oracle, "smp", **oracle_params)


def calm(domains, epsilon: float, way: int = 2, attrs=None, oracle: str = "oue", **oracle_params) -> MarginalSampling:
    """CALM-style collection: each user reports its cell of one marginal, drawn uniformly from
    ``attrs`` (default every ``way``-attribute marginal), with the whole ε (module notes).
    Default oracle OUE (a choice: CALM uses OLH, whose variance is the same; OUE's fast path is exact
    at any marginal size).

    Zhang, Wang, Li, He & Chen, CALM, CCS 2018.

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute.
    epsilon : float
        Each user's budget.
    way : int, default 2
        Attributes per marginal when ``attrs`` is None.
    attrs : sequence of sequence of int, optional
        The marginals (default :func:`all_k_way`).
    oracle : str, default "oue"
        Registry name of each marginal's oracle.
    **oracle_params
        Passed to :func:`ldpopt.oracles.get`.

    Returns
    -------
    MarginalSampling

    Raises
    ------
    ValueError
        ε not positive, ``way`` out of range, or bad domains, marginals or oracle parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> multi.calm(data.domains, 1.0).marginals.attrs
    ((0, 1), (0, 2), (1, 2))
    """
    chosen = all_k_way(len(domains), way) if attrs is None else attrs
    return MarginalSampling(domains, epsilon, chosen, oracle, "calm", **oracle_params)
