"""RS+FD: random sampling plus fake data (Arcolezi, Couchot, Al Bouna & Xiao, CIKM 2021).

Notes: docs/notes/multi.md, "ldpopt.multi.fake_data"."""

from __future__ import annotations

import math

import numpy as np

from .. import oracles
from .._validation import as_generator
from ..estimate import Estimate
from .protocol import MultiProtocol, assign_groups, choose_groups

__all__ = ["RSFD", "RSRFD", "amplified_epsilon", "rsfd", "rsrfd"]

_INNER = ("grr", "oue")


def amplified_epsilon(epsilon: float, k: int) -> float:
    r""":math:`ε' = \ln(k(e^ε - 1) + 1)`: the sampled attribute's budget in RS+FD (written with expm1/log1p).

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
    """RS+FD over attributes with domain sizes ``domains`` (module notes); ``inner``: ``"grr"``
    or ``"oue"`` (OUE-z). Reports: GRR — an (n, k) int array, one value per attribute; OUE-z — one
    bool :math:`(n, d_j)` array per attribute (the bit vectors).

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
        # each attribute's fake value law (GRR: uniform; OUE-z: None, the all-zero vector)
        self.fake_laws: tuple = tuple(np.full(d, 1.0 / d) if inner == "grr" else None for d in self.domains)

    def fake_support(self, j: int) -> np.ndarray:
        """:math:`φ_j(v)`: the probability that a fake report of attribute j supports v (module notes).

        Parameters
        ----------
        j : int
            The attribute.

        Returns
        -------
        ndarray, shape (:math:`d_j`,)

        Examples
        --------
        >>> from ldpopt.multi import RSFD
        >>> RSFD((2, 4), 1.0).fake_support(1).tolist()
        [0.25, 0.25, 0.25, 0.25]
        """
        law, orc = self.fake_laws[j], self.oracles[j]
        if self.inner == "grr":
            return np.asarray(law, dtype=np.float64)
        return np.full(orc.d, orc.q) if law is None else orc.q + (orc.p - orc.q) * law

    @property
    def exact_epsilon(self) -> float:
        return self.amplified

    def _ratio_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per attribute, for r_j = P_inner(y_j | x_j)/fake_j(y_j): (lo, hi) the own ratios at the report
        that separates two values most, and the smallest r_j of any report (the others' floor R)."""
        ps = np.array([o.p for o in self.oracles])
        qs = np.array([o.q for o in self.oracles])
        if self.inner == "grr":  # r = p/π(y) or q/π(y); the extreme is at π's smallest entry
            small = np.array([np.min(self.fake_support(j)) for j in range(len(self.domains))])
            large = np.array([np.max(self.fake_support(j)) for j in range(len(self.domains))])
            return qs / small, ps / small, qs / large
        r1, r0 = ps / qs, (1 - ps) / (1 - qs)  # a bit's ratio to OUE's zero-vector law
        if self.fake_laws[0] is None:  # OUE-z: fake law = the zero vector's
            return r0, r1, r0
        # OUE-r: r = ρ(b_x)/S(b), S(b) = Σ_x' π(x') ρ(b_x'); the bounds follow at π's smallest entry
        small = np.array([np.min(law) for law in self.fake_laws])
        s_one = r0 + small * (r1 - r0)  # b = the one-hot vector of the least likely value
        return r0 / s_one, r1 / s_one, r0 / (r0 * small + r1 * (1 - small))

    @property
    def one_attribute_epsilon(self) -> float:
        """The exact ε between tuples that differ in one attribute (module notes).

        Examples
        --------
        >>> from ldpopt.multi import RSFD
        >>> round(RSFD((2, 2, 2), 1.0).one_attribute_epsilon, 6), round(RSFD((2, 3), 1.0).one_attribute_epsilon, 3)
        (1.0, 1.072)
        """
        lo, hi, floor = self._ratio_bounds()
        rest = floor.sum() - floor
        return float(np.max(np.log((hi + rest) / (lo + rest))))

    def support_probabilities(self, j: int) -> tuple[float, float]:
        r"""(p*, q*) of attribute j, at the fake support's mean :math:`\bar φ_j` (module notes).

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
        fake = float(np.mean(self.fake_support(j)))
        return orc.p / k + (k - 1) * fake / k, orc.q / k + (k - 1) * fake / k

    def _estimates(self, counts, n: int):
        ests, k = [], len(self.domains)
        for j, c in enumerate(counts):
            ps, qs = self.support_probabilities(j)
            phi = self.fake_support(j)
            if np.ptp(phi) > 0:  # the prior's term beyond its mean (module notes)
                raw, c = c, c - n * (k - 1) * (phi - phi.mean()) / k
                if np.any(c < 0) or np.any(c > n):  # a tiny n: the same f̃ through a map into [0, n]
                    a, orc = (self.oracles[j].q + (k - 1) * phi) / k, self.oracles[j]
                    lam = 1.0 / (1.0 + np.ptp(a))
                    qs = lam * float(a.max())
                    ps = qs + lam * (orc.p - orc.q) / k
                    c = n * (qs + lam * (raw / n - a))
            ests.append(Estimate.from_counts(c, n, self.epsilon, ps, qs, oracle=self.name,
                                             inner_epsilon=self.amplified))
        return self._result(ests, n, epsilon_one_attribute=self.one_attribute_epsilon)

    def _fake_values(self, j: int, n: int, gen: np.random.Generator) -> np.ndarray:
        """n fake values of attribute j drawn from its fake law (inverse CDF, vectorised)."""
        if np.ptp(self.fake_laws[j]) == 0:
            return gen.integers(0, self.domains[j], size=n)
        cdf = np.cumsum(self.fake_laws[j])
        return np.minimum(np.searchsorted(cdf, gen.random(n) * cdf[-1], side="right"), self.domains[j] - 1)

    def perturb(self, values, rng):
        return self.perturb_sampled(values, rng)[0]

    def perturb_sampled(self, values, rng):
        """:meth:`perturb`, also returning which attribute each user sampled (what the attack guesses).

        Parameters
        ----------
        values : array_like of int, shape (n, k)
            The users' tuples.
        rng : int, Generator or None
            Randomness.

        Returns
        -------
        tuple
            (the reports :meth:`perturb` returns, the (n,) sampled attributes).

        Examples
        --------
        >>> from ldpopt import multi
        >>> reports, sampled = multi.rsfd((2, 3), 1.0).perturb_sampled([[0, 1], [1, 2]], rng=0)
        >>> reports.shape, sampled.shape
        ((2, 2), (2,))
        """
        v = self._check_values(values)
        gen = as_generator(rng)
        n, k = v.shape
        choice = choose_groups(n, k, gen)
        if self.inner == "grr":
            out = np.empty((n, k), dtype=np.int64)
            for j, orc in enumerate(self.oracles):  # a loop over attributes, vectorised over users
                mine = choice == j
                out[:, j] = self._fake_values(j, n, gen)
                if mine.any():
                    out[mine, j] = orc.perturb(v[mine, j], gen)
            return out, choice
        bits = []
        for j, orc in enumerate(self.oracles):
            mine = choice == j
            if self.fake_laws[j] is None:
                b = gen.random((n, self.domains[j])) < orc.q  # OUE of the zero vector: iid Bernoulli(q)
            else:
                b = orc.support_matrix(orc.perturb(self._fake_values(j, n, gen), gen))
            if mine.any():
                b[mine] = orc.support_matrix(orc.perturb(v[mine, j], gen))
            bits.append(b)
        return tuple(bits), choice

    def sampled_attribute_scores(self, reports, marginals) -> np.ndarray:
        r"""(n, k) :math:`\log P(y_j \mid j \text{ sampled})/P(y_j \mid \text{fake})` per report and attribute: the sampled-attribute
        attack's scores; its guess is each row's :math:`\operatorname{argmax}` (module notes; Arcolezi et al., PVLDB 2023).

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.
        marginals : sequence of array_like
            The attacker's knowledge: one law :math:`f_j` per attribute (length :math:`d_j`, ≥ 0, summing to 1).

        Returns
        -------
        ndarray, shape (n, k)

        Raises
        ------
        ValueError
            ``marginals`` not one law per attribute, or ``reports`` of the wrong shape.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import multi
        >>> proto = multi.rsfd((2, 2), 2.0)
        >>> proto.sampled_attribute_scores(np.array([[0, 1]]), [[0.9, 0.1], [0.5, 0.5]]).round(3)
        array([[0.526, 0.   ]])
        """
        laws = _check_laws(marginals, self.domains, "marginals")
        cols = []
        if self.inner == "grr":
            r = np.asarray(reports)
            if r.ndim != 2 or r.shape[1] != len(self.domains) or r.dtype.kind not in "iu":
                raise ValueError(f"reports must be an (n, {len(self.domains)}) array of values")
            for j, orc in enumerate(self.oracles):
                y = r[:, j]
                cols.append(np.log(orc.q + (orc.p - orc.q) * laws[j][y]) - np.log(self.fake_support(j)[y]))
            return np.stack(cols, axis=1)
        if len(reports) != len(self.domains) or len({np.asarray(b).shape[0] for b in reports}) != 1:
            raise ValueError("reports must hold one bit array per attribute, for the same users")
        for j, orc in enumerate(self.oracles):
            rho = np.where(np.asarray(reports[j], dtype=bool), orc.p / orc.q, (1 - orc.p) / (1 - orc.q))
            fake = 0.0 if self.fake_laws[j] is None else np.log(rho @ self.fake_laws[j])
            cols.append(np.log(rho @ laws[j]) - fake)
        return np.stack(cols, axis=1)

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
            law = self.fake_laws[j]
            if self.inner == "grr":
                fake = gen.multinomial(rest, law)
            elif law is None:
                fake = gen.binomial(rest, orc.q, size=orc.d)
            else:  # OUE of rest values drawn from the prior: their histogram, then OUE's count law
                hist_fake = gen.multinomial(rest, law).astype(np.int64)
                fake = orc.sample_counts(hist_fake, gen) if rest else np.zeros(orc.d, dtype=np.int64)
            counts.append(own + fake)
        return self._estimates(counts, data.n)


def _check_laws(laws, domains, name: str) -> tuple:
    """One probability vector per attribute (length d_j, finite, ≥ 0, summing to 1), else a
    ValueError naming ``name``."""
    if len(laws) != len(domains):
        raise ValueError(f"{name} must hold one law per attribute ({len(domains)}), got {len(laws)}")
    out = []
    for j, (law, d) in enumerate(zip(laws, domains)):
        a = np.asarray(law, dtype=np.float64)
        if a.shape != (d,) or not np.all(np.isfinite(a)) or np.any(a < 0) or abs(a.sum() - 1) > 1e-9:
            raise ValueError(f"{name}[{j}] must be a probability vector of length {d}")
        out.append(a)
    return tuple(out)


class RSRFD(RSFD):
    """RS+RFD: RS+FD whose fake values are drawn from a public ``prior`` (module notes), with the
    estimator that subtracts the prior's term. Reports as :class:`RSFD`'s.

    Arcolezi, Gambs, Couchot & Palamidessi, PVLDB 16(5) 2023 (their countermeasure to RS+FD's risks).

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute.
    epsilon : float
        Each user's budget for the whole report.
    prior : sequence of array_like
        One law :math:`π_j` per attribute (length :math:`d_j`, every entry > 0, summing to 1), e.g. a previous
        release's marginals.
    inner : {"grr", "oue"}, default "grr"
        The sampled attribute's oracle; ``"oue"`` is OUE(ε') of a value drawn from :math:`π_j` for the fakes.

    Raises
    ------
    ValueError
        ``prior`` not one positive law per attribute, ``inner`` unknown, fewer than 2 attributes, or
        ε not positive.

    Examples
    --------
    >>> from ldpopt.multi import RSRFD
    >>> RSRFD((2, 2), 1.0, [[0.7, 0.3], [0.5, 0.5]]).name
    'rsrfd-grr'
    """

    def __init__(self, domains, epsilon: float, prior, inner: str = "grr"):
        super().__init__(domains, epsilon, inner)
        laws = _check_laws(prior, self.domains, "prior")
        if any(np.any(a <= 0) for a in laws):
            raise ValueError("prior must be positive everywhere (a value no fake report takes would "
                             "reveal the sampled attribute)")
        self.fake_laws, self.name = laws, f"rsrfd-{inner}"


def rsrfd(domains, epsilon: float, prior, inner: str = "grr") -> RSRFD:
    """RS+RFD[GRR] (``inner="grr"``) or RS+RFD[OUE-r] (``inner="oue"``) with fake values from
    ``prior``; module notes.

    Parameters
    ----------
    domains : sequence of int
        Domain size of each attribute (at least 2 attributes).
    epsilon : float
        The budget stated for the whole report.
    prior : sequence of array_like
        One positive law per attribute, e.g. a previous release's marginals.
    inner : {"grr", "oue"}, default "grr"
        The sampled attribute's oracle.

    Returns
    -------
    RSRFD

    Raises
    ------
    ValueError
        As :class:`RSRFD`.

    Examples
    --------
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> prior = [data.marginal((j,)) for j in range(3)]
    >>> est = multi.rsrfd(data.domains, 1.0, prior).simulate(data, rng=0)
    >>> est.protocol, est.f_tilde.shape
    ('rsrfd-grr', (6,))
    """
    return RSRFD(domains, epsilon, prior, inner)


def rsfd(domains, epsilon: float, inner: str = "grr") -> RSFD:
    """RS+FD[GRR] (``inner="grr"``) or RS+FD[OUE-z] (``inner="oue"``); module notes.

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
