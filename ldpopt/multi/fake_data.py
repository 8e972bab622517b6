"""RS+FD: random sampling plus fake data (Arcolezi, Couchot, Al Bouna & Xiao, CIKM 2021).

Each user draws one of its k attributes uniformly, reports it through a frequency oracle with the
amplified budget ε' = ln(k(e^ε − 1) + 1) (their §3, the amplification-by-sampling bound), and
reports *fake data* for every other attribute, so the server cannot tell which attribute was
sampled:

* **RS+FD[GRR]**: fake value uniform on the attribute's domain; the sampled one GRR(ε').
* **RS+FD[OUE-z]**: fake vector = OUE(ε') applied to the all-zero vector (every bit Bernoulli(q));
  the sampled one OUE(ε') of the value.

Estimator (their §3, the unbiased estimators of RS+FD[GRR] and RS+FD[OUE-z]; the paper is not in
this repository, so the formulas are derived here and checked against the analytic expectation in
``tests/test_multi_collect.py``): a value v of attribute j is supported by a report with probability

    p* = p/k + (k − 1)/(k d_j)   (own value),   q* = q/k + (k − 1)/(k d_j)    [GRR, fake uniform]
    p* = p/k + (k − 1) q/k,                      q* = q                        [OUE-z]

with p, q the inner oracle's at ε'. Each attribute is therefore a pure frequency oracle with
(p*, q*), and f̃_v = (c_v/n − q*)/(p* − q*) is Wang et al.'s unbiased estimator with the variance of
their Eq. 2 — which is RS+FD's estimator: for GRR f̃_v = (c_v k d_j − n(k − 1 + q d_j))/(n d_j (p − q)),
for OUE-z f̃_v = k(c_v − n q)/(n(p − q)) (the forms multi-freq-ldpy's ``RSpFD_GRR_Aggregator`` and
``RSpFD_UE_zero_Aggregator`` compute before clipping). Every ldpopt post-processing method then applies
to each attribute's :class:`~ldpopt.Estimate`.

Privacy (exact, derived here; the tests enumerate the output law at small domains): the output
probability is (Π_i fake_i(y_i)) · (1/k) Σ_j r_j(y_j, x_j), r_j ∈ [r_j^lo, r_j^hi] the inner oracle's
likelihood ratio to the fake law (GRR: p d_j or q d_j; OUE-z: p/q or (1 − p)/(1 − q), whatever d_j).

* Two tuples that differ in **every** attribute reach r^hi/r^lo = e^{ε'} (GRR: p/q; OUE-z: the ratio
  of its two bit ratios), so the exact ε of one user's report over any two tuples is ε' > ε:
  ``exact_epsilon``.
* Two tuples that differ in attribute j only: ratio (r_j^hi + R)/(r_j^lo + R) with R ≥ Σ_{i≠j} r_i^lo,
  so ``one_attribute_epsilon`` = max_j ln((r_j^hi + Σ_{i≠j} r_i^lo)/(r_j^lo + Σ_{i≠j} r_i^lo)). For
  OUE-z, and for GRR with equal domain sizes, that is ln((e^{ε'} + k − 1)/k) = ε, the paper's ε. For
  GRR with unequal domains it is larger (domains (2, 3), ε = 1: 1.072), because the fake law 1/d_i and
  GRR's q_i differ from attribute to attribute. Both numbers are in the estimates' ``meta``.

Fast path: the sampled attribute's users per distinct tuple by one Multinomial each
(:func:`~.protocol.assign_groups`); attribute j's counts are then the inner oracle's ``sample_counts``
on the users who sampled j plus the fake reports of the n − n_j others (GRR: one Multinomial(n − n_j,
uniform); OUE-z: a Binomial(n − n_j, q) per bit, the bits being independent) — independent across
attributes given the sampling, as on the real path.
"""

from __future__ import annotations

import math

import numpy as np

from .. import oracles
from .._validation import as_generator
from ..estimate import Estimate
from .protocol import MultiProtocol, assign_groups, choose_groups

__all__ = ["RSFD", "amplified_epsilon", "rsfd"]

_INNER = ("grr", "oue")


def amplified_epsilon(epsilon: float, k: int) -> float:
    """ε' = ln(k(e^ε − 1) + 1): the sampled attribute's budget in RS+FD (written with expm1/log1p).

    Arcolezi, Couchot, Al Bouna & Xiao, CIKM 2021, §3 (amplification by sampling).

    Parameters
    ----------
    epsilon : float
        The budget stated for the whole report.
    k : int
        Number of attributes.

    Returns
    -------
    float

    Examples
    --------
    >>> from ldpopt.multi import amplified_epsilon
    >>> round(amplified_epsilon(1.0, 3), 4)
    1.8172
    """
    return math.log1p(k * math.expm1(epsilon))


class RSFD(MultiProtocol):
    """RS+FD over attributes with domain sizes ``domains`` (module docstring); ``inner``: ``"grr"``
    or ``"oue"`` (OUE-z). Reports: GRR — an (n, k) int array, one value per attribute; OUE-z — one
    bool (n, d_j) array per attribute (the bit vectors).

    Arcolezi, Couchot, Al Bouna & Xiao, CIKM 2021.

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute.
    epsilon : float
        Each user's budget for the whole report.
    inner : {"grr", "oue"}, default "grr"
        The sampled attribute's oracle (OUE-z for ``"oue"``).

    Raises
    ------
    ValueError
        ``inner`` unknown, fewer than 2 attributes, or ε not positive.

    Examples
    --------
    >>> from ldpopt.multi import RSFD
    >>> RSFD((2, 2, 2), 1.0).name
    'rsfd-grr'
    """

    def __init__(self, domains, epsilon: float, inner: str = "grr"):
        super().__init__(domains, epsilon, [(j,) for j in range(len(domains))])
        if inner not in _INNER:
            raise ValueError(f"inner must be one of {_INNER}, got {inner!r}")
        if len(self.domains) < 2:
            raise ValueError("RS+FD needs at least 2 attributes (with one it is the inner oracle itself)")
        self.inner, self.name = inner, f"rsfd-{inner}"
        self.amplified = amplified_epsilon(self.epsilon, len(self.domains))
        self.oracles = tuple(oracles.get(inner, self.amplified, d) for d in self.domains)

    @property
    def exact_epsilon(self) -> float:
        return self.amplified

    def _ratios(self) -> tuple[np.ndarray, np.ndarray]:
        """(r^lo, r^hi) per attribute: the inner oracle's likelihood ratios to the fake law."""
        if self.inner == "grr":
            d = np.asarray(self.domains, dtype=np.float64)
            return np.array([o.q for o in self.oracles]) * d, np.array([o.p for o in self.oracles]) * d
        o = self.oracles[0]  # OUE's p, q do not depend on d
        return np.full(len(self.domains), (1 - o.p) / (1 - o.q)), np.full(len(self.domains), o.p / o.q)

    @property
    def one_attribute_epsilon(self) -> float:
        """The exact ε between tuples that differ in one attribute (module docstring).

        Examples
        --------
        >>> from ldpopt.multi import RSFD
        >>> round(RSFD((2, 2, 2), 1.0).one_attribute_epsilon, 6), round(RSFD((2, 3), 1.0).one_attribute_epsilon, 3)
        (1.0, 1.072)
        """
        lo, hi = self._ratios()
        rest = lo.sum() - lo
        return float(np.max(np.log((hi + rest) / (lo + rest))))

    def support_probabilities(self, j: int) -> tuple[float, float]:
        """(p*, q*) of attribute j (module docstring).

        Parameters
        ----------
        j : int
            The attribute.

        Returns
        -------
        tuple of float
            The probabilities that a report supports its own value and another value.

        Examples
        --------
        >>> from ldpopt.multi import RSFD
        >>> [round(float(x), 4) for x in RSFD((2, 2, 2), 1.0).support_probabilities(0)]
        [0.6201, 0.3799]
        """
        k, orc = len(self.domains), self.oracles[j]
        fake = 1.0 / self.domains[j] if self.inner == "grr" else orc.q
        return orc.p / k + (k - 1) * fake / k, orc.q / k + (k - 1) * fake / k

    def _estimates(self, counts, n: int):
        ests = []
        for j, c in enumerate(counts):
            ps, qs = self.support_probabilities(j)
            ests.append(Estimate.from_counts(c, n, self.epsilon, ps, qs, oracle=self.name,
                                             inner_epsilon=self.amplified))
        return self._result(ests, n, epsilon_one_attribute=self.one_attribute_epsilon)

    def perturb(self, values, rng):
        v = self._check_values(values)
        gen = as_generator(rng)
        n, k = v.shape
        choice = choose_groups(n, k, gen)
        if self.inner == "grr":
            out = np.empty((n, k), dtype=np.int64)
            for j, orc in enumerate(self.oracles):  # a loop over attributes, vectorised over users
                mine = choice == j
                out[:, j] = gen.integers(0, self.domains[j], size=n)
                if mine.any():
                    out[mine, j] = orc.perturb(v[mine, j], gen)
            return out
        bits = []
        for j, orc in enumerate(self.oracles):
            mine = choice == j
            b = gen.random((n, self.domains[j])) < orc.q  # OUE of the zero vector: iid Bernoulli(q)
            if mine.any():
                b[mine] = orc.support_matrix(orc.perturb(v[mine, j], gen))
            bits.append(b)
        return tuple(bits)

    def aggregate(self, reports):
        if self.inner == "grr":
            r = np.asarray(reports)
            if r.ndim != 2 or r.shape[1] != len(self.domains):
                raise ValueError(f"reports must be an (n, {len(self.domains)}) array of values")
            counts = [orc.aggregate(r[:, j]) for j, orc in enumerate(self.oracles)]
            return self._estimates(counts, r.shape[0])
        n = {np.asarray(b).shape[0] for b in reports}
        if len(n) != 1 or len(reports) != len(self.domains):
            raise ValueError("reports must hold one bit array per attribute, for the same users")
        counts = [np.asarray(b, dtype=bool).sum(axis=0).astype(np.int64) for b in reports]
        return self._estimates(counts, n.pop())

    def sample(self, data, rng):
        self._check_data(data)
        gen = as_generator(rng)
        z = assign_groups(data.counts, len(self.domains), gen)
        counts = []
        for j, orc in enumerate(self.oracles):
            hist = np.bincount(data.tuples[:, j], weights=z[:, j], minlength=orc.d).astype(np.int64)
            nj = int(hist.sum())
            own = orc.sample_counts(hist, gen) if nj else np.zeros(orc.d, dtype=np.int64)
            rest = data.n - nj
            fake = (gen.multinomial(rest, np.full(orc.d, 1.0 / orc.d)) if self.inner == "grr"
                    else gen.binomial(rest, orc.q, size=orc.d))
            counts.append(own + fake)
        return self._estimates(counts, data.n)


def rsfd(domains, epsilon: float, inner: str = "grr") -> RSFD:
    """RS+FD[GRR] (``inner="grr"``) or RS+FD[OUE-z] (``inner="oue"``); module docstring.

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute (at least 2 attributes).
    epsilon : float
        The budget stated for the whole report.
    inner : {"grr", "oue"}, default "grr"
        The sampled attribute's oracle.

    Returns
    -------
    RSFD

    Raises
    ------
    ValueError
        ``inner`` unknown, fewer than 2 attributes, or ε not positive.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> est = multi.rsfd(data.domains, 1.0, inner="oue").simulate(data, rng=0)
    >>> est.protocol, est.f_tilde.shape
    ('rsfd-oue', (6,))
    """
    return RSFD(domains, epsilon, inner)
