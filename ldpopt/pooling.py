r"""One frequency estimate from groups of users under different mechanisms or ε.

Notes: docs/notes/python.md, "ldpopt.pooling"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import as_generator, check_values
from .estimate import Estimate
from .methods.channel_inverse import inverse_map, invert
from .methods.channel_mle import ChannelMLE, channel_mle
from .oracles.base import FrequencyOracle
from .oracles.channel import Channel
from .oracles.routed import RoutedReports, routed, support_score

__all__ = ["Group", "PooledClient", "PooledIVW", "group_from_estimate", "pool_ivw", "pool_mle"]

# components per chunk in variance_diag (bounds its J × d × d temporaries)
_CHUNK_CELLS = 1 << 22


@dataclass(frozen=True)
class Group:
    """One group's channel and its (J, k) output counts.

    Parameters
    ----------
    channel : Channel
        The group's mechanism (:class:`~ldpopt.oracles.channel.Channel`).
    counts : ndarray, shape (J, k)
        Output counts of each component.
    label : str, default ""
        Name shown in results.
    estimate : Estimate, optional
        The pure-oracle estimate the group came from; then f̂ = f̃ and its variance is Eq. 2, in O(d).

    Examples
    --------
    >>> from ldpopt import oracles, pooling
    >>> est = oracles.get("oue", 1.0, 4).simulate([400, 300, 200, 100], rng=0)
    >>> g = pooling.group_from_estimate(est)
    >>> g.label, g.counts.shape
    ('oue(eps=1)', (4, 2))
    """

    channel: Channel
    counts: np.ndarray
    label: str = ""
    #: the pure-oracle Estimate the group came from, if any: then f̂ = f̃ and Var = Eq. 2 in O(d)
    #: (equal to the channel's inversion and variance_diag, tests/test_pooling.py)
    estimate: Estimate | None = None


def _dense_channel(estimate: Estimate) -> Channel | None:
    """The channel of ``estimate``'s oracle when it is one block whose outputs are the d values (the
    counts are then its output counts), else None (also for an oracle not registered)."""
    from . import oracles

    try:
        ch = Channel.from_oracle(oracles.oracle_class(estimate.oracle).from_estimate(estimate))
    except ValueError:
        return None
    return ch if ch.J == 1 and ch.k == estimate.d else None


def group_from_estimate(estimate: Estimate, label: str | None = None) -> Group:
    """A group from an ldpopt :class:`Estimate`: the oracle's own channel with its output counts where
    that channel is one dense block on the d values (``oracle.channel_blocks()``: GRR's), else the support
    channel (p, q) with [n − c, c] (exact law for OUE/SUE, exact marginals for the others).

    Parameters
    ----------
    estimate : Estimate
    label : str, optional
        Name (default: ``"<oracle>(eps=<ε>)"``).

    Returns
    -------
    Group

    Raises
    ------
    TypeError
        If ``estimate`` is not an :class:`~ldpopt.Estimate`.

    Examples
    --------
    >>> from ldpopt import oracles, pooling
    >>> est = oracles.get("grr", 2.0, 4).simulate([400, 300, 200, 100], rng=0)
    >>> g = pooling.group_from_estimate(est)
    >>> g.label, g.channel.J, g.counts.shape
    ('grr(eps=2)', 1, (1, 4))
    """
    if not isinstance(estimate, Estimate):
        raise TypeError(f"estimate must be an Estimate, got {type(estimate).__name__}")
    lab = label or f"{estimate.oracle}(eps={estimate.epsilon:g})"
    dense = _dense_channel(estimate)
    if dense is not None:
        return Group(dense, np.asarray(estimate.counts)[None], lab, estimate)
    ch = Channel.support(estimate.p, estimate.q, estimate.d, name=lab)
    return Group(ch, ch.counts_from_support(estimate.counts, estimate.n), lab, estimate)


def _groups(groups) -> list[Group]:
    out = []
    for i, g in enumerate(groups):
        if isinstance(g, Estimate):
            g = group_from_estimate(g)
        elif isinstance(g, tuple) and len(g) == 2:
            g = Group(g[0], np.asarray(g[1]))
        if not isinstance(g, Group) or not isinstance(g.channel, Channel):
            raise TypeError(f"groups[{i}] must be a Group, an Estimate or a (Channel, counts) pair")
        out.append(g)
    if not out:
        raise ValueError("groups must hold at least one group")
    d = out[0].channel.d
    if any(g.channel.d != d for g in out):
        raise ValueError(f"groups must share the domain: every channel needs d = {d}")
    return out


def variance_diag(channel: Channel, A: np.ndarray, f, n: int) -> np.ndarray:
    r""":math:`\mathrm{Var}(\hat f_v)` of :math:`\hat f = A \hat y + b` given the histogram n·f: the diagonal of
    :math:`Σ_j A_j (\mathrm{diag}(B_j f) - B_j \mathrm{diag}(f) B_j^T) A_j^T / n` (:mod:`ldpopt.methods.channel_inverse`),
    in chunks of components so memory stays ~32 MB.

    Parameters
    ----------
    channel : Channel
        The group's mechanism.
    A : ndarray, shape (d, J·k)
        Its inverse map (:func:`ldpopt.methods.channel_inverse.inverse_map`).
    f : array_like, shape (d,)
        Frequencies the variance is evaluated at.
    n : int
        Number of users.

    Returns
    -------
    ndarray, shape (d,)

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, pooling
    >>> from ldpopt.oracles.channel import Channel
    >>> from ldpopt.methods.channel_inverse import inverse_map
    >>> oue = oracles.get("oue", 1.0, 4)
    >>> ch = Channel.support(oue.p, oue.q, 4)
    >>> f = np.array([0.4, 0.3, 0.2, 0.1])
    >>> bool(np.allclose(pooling.variance_diag(ch, inverse_map(ch)[0], f, 1000), oue.variance(f, 1000)))  # Eq. 2
    True
    """
    f = np.asarray(f, dtype=np.float64)
    J, k, d = channel.J, channel.k, channel.d
    A3 = A.reshape(d, J, k)
    out = np.zeros(d)
    step = max(1, _CHUNK_CELLS // (d * d))
    for s in range(0, J, step):  # chunks of components, not values or users
        B = channel.blocks[s:s + step]
        a = A3[:, s:s + step, :]
        out += np.einsum("vjk,jk->v", a * a, np.einsum("jkv,v->jk", B, f))
        G = np.einsum("vjk,jku->jvu", a, B)
        out -= np.einsum("jvu,u->v", G * G, f)
    return out / n


@dataclass
class PooledIVW:
    """``f_raw`` (unbiased pooled), variance V (pooled per-value variance at ``at``), weights (G × d),
    group_variance (the W or V the weights used),
    f (the weighted simplex projection of ``f_raw``, or None), per-group f̂ and variances. Returned by
    :func:`pool_ivw`.

    Parameters
    ----------
    f_raw : ndarray, shape (d,)
        Unbiased pooled estimate.
    variance : ndarray, shape (d,)
        Its per-value variance at ``at``.
    weights : ndarray, shape (G, d)
        Per-group, per-value weights (each column sums to one).
    f : ndarray or None
        The weighted simplex projection of ``f_raw`` (None without ``simplex``).
    group_f : ndarray, shape (G, d)
        Each group's unbiased f̂.
    group_variance : ndarray, shape (G, d)
        The variances the weights used.
    at : ndarray, shape (d,)
        The frequencies the variances were evaluated at.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, pooling
    >>> truth = np.array([400, 300, 200, 100])
    >>> a = oracles.get("oue", 0.5, 4).simulate(truth * 6, rng=0)
    >>> b = oracles.get("grr", 2.0, 4).simulate(truth * 4, rng=1)
    >>> r = pooling.pool_ivw([a, b])
    >>> r.weights.shape, r.weights.sum(axis=0).round(12)
    ((2, 4), array([1., 1., 1., 1.]))
    """

    f_raw: np.ndarray
    variance: np.ndarray
    weights: np.ndarray
    f: np.ndarray | None
    group_f: np.ndarray
    group_variance: np.ndarray
    at: np.ndarray


def _combine(fs, Vs):
    inv = 1.0 / Vs
    V = 1.0 / inv.sum(axis=0)
    w = inv * V
    return (w * fs).sum(axis=0), V, w


def pool_ivw(groups, at=None, simplex: bool = True, sampling: bool = True) -> PooledIVW:
    """Inverse-variance-weighted pooling (module notes, (a)); ``sampling`` adds each group's
    composition variance :math:`f_v(1 - f_v)/n_g` (groups formed by users' random choices).

    Parameters
    ----------
    groups : sequence
        Each a :class:`Group`, an :class:`~ldpopt.Estimate` or a ``(Channel, counts)`` pair, all on
        the same domain.
    at : array_like, shape (d,), optional
        Fixed non-negative frequencies to weight at (default: the two stages of the module notes).
    simplex : bool, default True
        Also return the weighted simplex projection.
    sampling : bool, default True
        Add the composition variance.

    Returns
    -------
    PooledIVW

    Raises
    ------
    TypeError
        If a group is not one of the accepted kinds.
    ValueError
        If there is no group, the domains differ, ``at`` is malformed, or a group's variance is not
        positive at the weighting point.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, pooling
    >>> truth = np.array([400, 300, 200, 100])
    >>> a = oracles.get("oue", 0.5, 4).simulate(truth * 6, rng=0)
    >>> b = oracles.get("grr", 2.0, 4).simulate(truth * 4, rng=1)
    >>> r = pooling.pool_ivw([a, b])
    >>> r.f_raw.round(3), r.f.round(3)
    (array([0.412, 0.3  , 0.197, 0.097]), array([0.41 , 0.298, 0.195, 0.096]))
    >>> r2 = pooling.pool_ivw([a, b], sampling=False)  # fixed groups: V = 1 / Σ_g 1/V_g
    >>> bool(np.all(r2.variance < r2.group_variance.min(axis=0)))
    True
    """
    gs = _groups(groups)
    d = gs[0].channel.d
    fits: list[tuple[np.ndarray | None, int, np.ndarray]] = []  # (inverse map A or None, n, f̂)
    for g in gs:
        if g.estimate is not None:  # O(d) fast path: the oracle's own f̃ and Eq. 2
            fits.append((None, g.estimate.n, np.asarray(g.estimate.f_tilde, dtype=np.float64)))
            continue
        A, b = inverse_map(g.channel)
        Y, n = g.channel.check_counts(g.counts)
        fits.append((A, n, A @ (Y.ravel() / n) + b))
    fs = np.stack([fh for _, _, fh in fits])
    ns = np.array([n for _, n, _ in fits], dtype=np.float64)

    def variances(f0):
        V = np.stack([g.estimate.variance(f0) if A is None else variance_diag(g.channel, A, f0, n)
                      for g, (A, n, _) in zip(gs, fits)])
        if sampling:
            V = V + (f0 * (1.0 - f0))[None, :] / ns[:, None]
        if np.any(~np.isfinite(V)) or np.any(V <= 0):
            raise ValueError("a group's variance is not positive at the weighting point: cannot weight it")
        return V

    if at is None:
        f1, _, _ = _combine(fs, variances(np.full(d, 1.0 / d)))
        f0 = np.clip(f1, 0.0, 1.0)
        f0 /= f0.sum()  # a distribution: Eq. 2 and the channel variance agree only where Σ f = 1
    else:
        f0 = np.asarray(at, dtype=np.float64)
        if f0.shape != (d,) or np.any(f0 < 0) or not np.all(np.isfinite(f0)):
            raise ValueError(f"at must be a non-negative vector of length d = {d}")
    Vs = variances(f0)
    f_raw, V, w = _combine(fs, Vs)
    if sampling:
        V = V - f0 * (1.0 - f0) / ns.sum()  # against the population's histogram (module notes)
    return PooledIVW(f_raw=f_raw, variance=V, weights=w,
                     f=project_weighted_simplex(f_raw, V) if simplex else None,
                     group_f=fs, group_variance=Vs, at=f0)


def project_weighted_simplex(x, V) -> np.ndarray:
    r""":math:`\mathrm{argmin} Σ_v (f_v - x_v)^2/V_v` on Δ: :math:`f_v = \max(0, x_v - μV_v)`, :math:`Σ f = 1` (KKT; module notes).

    The support is a prefix of the values sorted by :math:`t_v = x_v/V_v` (:math:`f_v > 0` iff :math:`t_v > μ`); on the
    prefix of size k, :math:`μ_k = (Σ x - 1)/Σ V`, and k is the largest with :math:`t_{(k)} > μ_k`.

    Parameters
    ----------
    x : array_like, shape (d,)
        The point to project.
    V : array_like, shape (d,)
        Positive weights' inverses (variances).

    Returns
    -------
    ndarray, shape (d,)

    Raises
    ------
    ValueError
        If ``V`` is not positive or not of the length of ``x``.

    Examples
    --------
    >>> from ldpopt.pooling import project_weighted_simplex
    >>> project_weighted_simplex([0.6, 0.5, -0.1], [1.0, 1.0, 1.0])  # equal V: Norm-Sub
    array([0.55, 0.45, 0.  ])
    >>> project_weighted_simplex([0.6, 0.5, -0.1], [1.0, 3.0, 1.0]).round(4)
    array([0.575, 0.425, 0.   ])
    """
    x = np.asarray(x, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    if x.shape != V.shape or x.ndim != 1 or np.any(~(V > 0)):
        raise ValueError("V must be positive and of the same length as x")
    order = np.argsort(-(x / V), kind="stable")
    t = (x / V)[order]
    mu = (np.cumsum(x[order]) - 1.0) / np.cumsum(V[order])
    k = int(np.flatnonzero(t > mu)[-1]) + 1
    return np.maximum(0.0, x - mu[k - 1] * V)


def pool_mle(groups, tol: float = 1e-12, **kw) -> ChannelMLE:
    """Maximise :math:`Σ_g ℓ_g(f)` on Δ (module notes, (b)).

    Parameters
    ----------
    groups : sequence
        As :func:`pool_ivw`.
    tol : float, default 1e-12
        Relative Frank-Wolfe gap to stop at.
    **kw
        Passed to :func:`ldpopt.methods.channel_mle.channel_mle` (``max_iter``, ``accelerate``,
        ``polish``).

    Returns
    -------
    ChannelMLE
        ``f``, ``loglik``, ``gap``, ``nit``, ``seconds``, ``method``.

    Raises
    ------
    TypeError, ValueError
        As :func:`pool_ivw` for the groups; ``ValueError`` for a bad ``tol``.
    ConvergenceError
        If the gap is not below ``tol`` after ``max_iter`` steps.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, pooling
    >>> truth = np.array([400, 300, 200, 100])
    >>> a = oracles.get("oue", 0.5, 4).simulate(truth * 6, rng=0)
    >>> b = oracles.get("grr", 2.0, 4).simulate(truth * 4, rng=1)
    >>> r = pooling.pool_mle([a, b])
    >>> r.f.round(3), r.method
    (array([0.41 , 0.298, 0.196, 0.096]), 'em-squarem+newton')
    """
    gs = _groups(groups)
    return channel_mle([(g.channel, g.counts) for g in gs], tol=tol, **kw)


def group_alone(group) -> np.ndarray:
    """One group's unbiased f̂ (for comparison with the pooled estimates).

    Parameters
    ----------
    group : Group, Estimate or (Channel, counts)
        The group.

    Returns
    -------
    ndarray, shape (d,)

    Examples
    --------
    >>> from ldpopt import oracles, pooling
    >>> est = oracles.get("grr", 2.0, 4).simulate([400, 300, 200, 100], rng=0)
    >>> bool(abs(pooling.group_alone(est) - est.f_tilde).max() < 1e-9)  # GRR: the channel inversion is f̃
    True
    """
    g = _groups([group])[0]
    return invert(g.channel, g.counts).f


class PooledClient:
    """Users pooled over groups: each user joins one group with the group's share as probability
    (a fresh draw, independent of her value) and reports through its oracle at its ε; the server
    receives the group index and the group's report.

    Parameters
    ----------
    groups : sequence of (FrequencyOracle, share)
        The groups' oracles (one d) and shares (> 0, summing to 1).

    Attributes
    ----------
    epsilon : float
        The largest group ε: each user's own is her group's, so every user is ``epsilon``-LDP.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, pooling
    >>> client = pooling.PooledClient([(oracles.get("grr", 0.5, 4), 0.6), (oracles.get("olh", 1.0, 4), 0.4)])
    >>> reps = client(np.array([0, 1, 2, 3]), rng=0)
    >>> client.epsilon, reps[0].shape
    (1.0, (4,))
    >>> len(client.collect(np.repeat(np.arange(4), 100), rng=1))
    2
    """

    def __init__(self, groups):
        groups = list(groups)
        if not groups or any(not isinstance(g, tuple) or len(g) != 2 or not isinstance(g[0], FrequencyOracle)
                             for g in groups):
            raise ValueError("groups must be a non-empty list of (FrequencyOracle, share) pairs")
        if len({g[0].d for g in groups}) != 1:
            raise ValueError("groups must share one domain size d")
        shares = np.array([float(g[1]) for g in groups])
        if np.any(~np.isfinite(shares)) or np.any(shares <= 0) or abs(shares.sum() - 1.0) > 1e-9:
            raise ValueError(f"groups' shares must be > 0 and sum to 1, got {shares.tolist()}")
        self.oracles = [g[0] for g in groups]
        self.shares = shares / shares.sum()
        self.d = self.oracles[0].d
        self.epsilon = float(max(o.epsilon for o in self.oracles))

    def __call__(self, values, rng) -> RoutedReports:
        """The reports of users holding ``values``: (group index, the group's report fields).

        Parameters
        ----------
        values : array_like of int, shape (m,)
            Values in [0, d).
        rng : seed, Generator or "secure"

        Returns
        -------
        RoutedReports
        """
        v = check_values(values, self.d, "values")
        gen = as_generator(rng)
        g = gen.choice(len(self.oracles), size=v.size, p=self.shares)
        parts = []
        for i, o in enumerate(self.oracles):  # the groups (a handful), not users
            users = np.flatnonzero(g == i)
            parts.append((0, users, o, o.perturb(v[users], gen)))
        return routed(g, parts)

    def collect(self, values, rng) -> list[Group]:
        """Every user's report (:meth:`__call__`), aggregated per group by its oracle: the groups
        :func:`pool_ivw` and :func:`pool_mle` take.

        Parameters
        ----------
        values : array_like of int, shape (n,)
        rng : seed, Generator or "secure"

        Returns
        -------
        list of Group

        Raises
        ------
        ValueError
            If a group received no user.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles, pooling
        >>> client = pooling.PooledClient([(oracles.get("grr", 1.0, 3), 0.5), (oracles.get("oue", 2.0, 3), 0.5)])
        >>> groups = client.collect(np.repeat([0, 1, 2], [600, 300, 100]), rng=0)
        >>> bool(abs(pooling.pool_ivw(groups).f - [0.6, 0.3, 0.1]).max() < 0.1)
        True
        """
        reps = self(values, rng)
        out = []
        for _, users, o, rep in reps.parts:
            if users.size == 0:
                raise ValueError(f"group {o!r} received no users: raise its share or the number of users")
            out.append(group_from_estimate(o.estimate(o.aggregate(rep), int(users.size))))
        return out

    def score(self, reports: RoutedReports, x: int, x2: int) -> np.ndarray:
        """The model's score of x against x′: each group's support difference weighted by its ε
        (:func:`~ldpopt.oracles.routed.support_score`; the exact log likelihood ratio for GRR and the
        local-hashing oracles).

        Parameters
        ----------
        reports : RoutedReports
        x, x2 : int

        Returns
        -------
        ndarray (m,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles, pooling
        >>> client = pooling.PooledClient([(oracles.get("grr", 1.0, 3), 1.0)])
        >>> s = client.score(client(np.zeros(2000, dtype=int), rng=0), 0, 1)
        >>> bool(s.mean() > 0)        # the reports of users on 0 favour 0
        True
        """
        return support_score(reports, lambda j: (int(x), int(x2)), weight=lambda o: o.epsilon)

    def audit_spec(self, pairs=None) -> dict:
        """Keyword arguments of :func:`ldpopt.audit.audit_client` for these users (stated: :attr:`epsilon`).

        Parameters
        ----------
        pairs : list of (int, int), optional
            Neighbouring values (default: the auditor's, from d).

        Returns
        -------
        dict

        Examples
        --------
        >>> from ldpopt import oracles, pooling
        >>> client = pooling.PooledClient([(oracles.get("grr", 0.5, 4), 0.5), (oracles.get("olh", 1.0, 4), 0.5)])
        >>> spec = client.audit_spec()
        >>> spec["stated"], spec["name"]
        (1.0, 'pooled grr(ε=0.5) + olh(ε=1)')
        """
        spec = {"client": self, "stated": self.epsilon, "d": self.d,
                "model_score": lambda rounds, x, x2: self.score(rounds[0], int(x), int(x2)),
                "name": "pooled " + " + ".join(f"{o.name}(ε={o.epsilon:g})" for o in self.oracles)}
        if pairs is not None:
            spec["pairs"] = [(int(a), int(b)) for a, b in pairs]
        return spec

