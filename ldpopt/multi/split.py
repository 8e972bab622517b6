"""SPL: every user reports every attribute, the budget split evenly across them.

Notes: docs/notes/multi.md, "ldpopt.multi.split"."""

from __future__ import annotations

import numpy as np

from .. import oracles
from .._validation import as_generator
from .protocol import MultiProtocol

__all__ = ["SPL", "spl"]


class SPL(MultiProtocol):
    """Budget splitting: ε/k per attribute through ``oracle`` (registry name; ``oracle_params`` to
    :func:`ldpopt.oracles.get`). Reports: one oracle report array per attribute.

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute.
    epsilon : float
        Each user's budget for the whole report.
    oracle : str, default "grr"
        Registry name of each attribute's oracle.
    **oracle_params
        Passed to :func:`ldpopt.oracles.get`.

    Raises
    ------
    ValueError
        ε not positive, or a bad domain or oracle parameter.

    Examples
    --------
    >>> from ldpopt.multi import SPL
    >>> SPL((2, 3), 1.0).oracles
    (GRR(epsilon=0.5, d=2), GRR(epsilon=0.5, d=3))
    """

    name = "spl"

    def __init__(self, domains, epsilon: float, oracle: str = "grr", **oracle_params):
        super().__init__(domains, epsilon, [(j,) for j in range(len(domains))])
        share = self.epsilon / len(self.domains)
        self.oracles = tuple(oracles.get(oracle, share, d, **oracle_params) for d in self.domains)

    @property
    def exact_epsilon(self) -> float:
        return float(sum(o.epsilon for o in self.oracles))

    def perturb(self, values, rng):
        v = self._check_values(values)
        gen = as_generator(rng)
        return tuple(orc.perturb(v[:, j], gen) for j, orc in enumerate(self.oracles))

    def aggregate(self, reports):
        counts = [orc.aggregate(r) for orc, r in zip(self.oracles, reports)]
        n = {int(np.asarray(r).shape[0]) for r in reports}  # every oracle's reports: one row per user
        if len(n) != 1:
            raise ValueError("reports must hold the same users for every attribute")
        n0 = n.pop()
        return self._result([orc.estimate(c, n0) for orc, c in zip(self.oracles, counts)], n0)

    def sample(self, data, rng):
        self._check_data(data)
        gen = as_generator(rng)
        ests = [orc.estimate(orc.sample_counts(data.marginal((j,), normalize=False), gen), data.n)
                for j, orc in enumerate(self.oracles)]
        return self._result(ests, data.n)


def spl(domains, epsilon: float, oracle: str = "grr", **oracle_params) -> SPL:
    """SPL with ε/k per attribute (module notes).

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute.
    epsilon : float
        Each user's whole budget, split equally over the k attributes.
    oracle : str, default "grr"
        Registry name of each attribute's oracle.
    **oracle_params
        Passed to :func:`ldpopt.oracles.get`.

    Returns
    -------
    SPL

    Raises
    ------
    ValueError
        ε not positive, or a bad domain or oracle parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> multi.spl(data.domains, 1.0).simulate(data, rng=0).sigma2.round(5)[:2]
    array([0.00178, 0.00178])
    """
    return SPL(domains, epsilon, oracle, **oracle_params)
