"""Multi-attribute data: item presence in the shipped transaction files, and a synthetic chain.

Notes: docs/notes/multi.md, "ldpopt.multi.generate"."""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

from .._validation import as_generator, check_domain_size, check_n
from .dataset import MultiDataset

__all__ = ["SYNTHETIC", "chain_network", "dirichlet_joint", "item_presence", "log_linear"]

_TX = ("retail", "bms-webview-1", "bms-webview-2")
_MAX_JOINT = 1 << 22  # cells of the exact joint law chain_network builds


def _transactions(name: str):
    from ..datasets.real import transactions

    return transactions(name)


def item_presence(name: str = "retail", top: int = 10) -> MultiDataset:
    """The ``top`` most frequent items of transaction dataset ``name`` as binary attributes (module
    docstring). Attribute j is the j-th most frequent item; ``names`` are ``"item<id>"``;
    ``meta["support"]`` the items' transaction counts.

    Parameters
    ----------
    name : {"retail", "bms-webview-1", "bms-webview-2"}, default "retail"
        A shipped transaction dataset (:mod:`ldpopt.datasets`).
    top : int, default 10
        Number of items, 1..62.

    Returns
    -------
    MultiDataset
        One user per transaction, k = ``top`` binary attributes.

    Raises
    ------
    ValueError
        ``name`` or ``top`` out of range.

    Examples
    --------
    >>> from ldpopt.multi import item_presence
    >>> item_presence("bms-webview-1", top=4)
    MultiDataset(n=59602, k=4, domains=(2, 2, 2, 2), distinct=16)
    """
    if name not in _TX:
        raise ValueError(f"name must be one of {_TX}, got {name!r}")
    if isinstance(top, bool) or not isinstance(top, numbers.Integral) or not 1 <= top <= 62:
        raise ValueError(f"top must be an integer in [1, 62], got {top!r}")
    tx, cite = _transactions(name)
    n_tx = tx.n_transactions
    tid = np.repeat(np.arange(n_tx), tx.lengths)
    # presence: a (transaction, item) pair once, however often the item is listed in it
    pair = np.unique(tid.astype(np.int64) * tx.item_ids.shape[0] + tx.items)
    item_of = pair % tx.item_ids.shape[0]
    support = np.bincount(item_of, minlength=tx.item_ids.shape[0])
    order = np.lexsort((tx.item_ids, -support))[:int(top)]
    col = np.full(tx.item_ids.shape[0], -1)
    col[order] = np.arange(order.size)
    hit = col[item_of] >= 0
    # each transaction's bits as one integer: (sum of 2^(k−1−j)), then the distinct ones and counts
    code = np.zeros(n_tx, dtype=np.int64)
    np.add.at(code, pair[hit] // tx.item_ids.shape[0], 1 << (int(top) - 1 - col[item_of[hit]]))
    codes, counts = np.unique(code, return_counts=True)
    bits = (codes[:, None] >> (int(top) - 1 - np.arange(int(top)))[None, :]) & 1
    ids = tx.item_ids[order]
    return MultiDataset(bits, counts, (2,) * int(top), names=tuple(f"item{int(i)}" for i in ids),
                        source=f"{cite}: presence of the {int(top)} items in most transactions "
                               f"(ldpopt/datasets/data SOURCE.md); one user per transaction",
                        meta={"support": support[order].astype(np.int64), "item_ids": ids})


def chain_network(n: int, k: int, domains=2, strength: float = 0.6, first=None, *, rng) -> MultiDataset:
    """n users of the chain Bayesian network of the module notes over k attributes.

    ``domains``: one size for all or one per attribute; ``strength`` ∈ [0, 1]: the probability that an
    attribute copies its parent (0: independent uniform attributes after the first); ``first``: π, the
    law of :math:`X_0` (default: proportional to 1, 2, …, :math:`d_0`, so the attributes are not uniform).

    Parameters
    ----------
    n : int
        Number of users.
    k : int
        Number of attributes, >= 2.
    domains : int or sequence of int, default 2
        Domain sizes.
    strength : float, default 0.6
        Probability of copying the parent, in [0, 1].
    first : array_like, optional
        Weights of :math:`X_0`'s law (:math:`d_0` non-negative, not all 0).
    rng : int or numpy.random.Generator
        Seed or generator (keyword-only).

    Returns
    -------
    MultiDataset

    Raises
    ------
    ValueError
        Any argument out of range, or a joint law of more than 2²² cells.

    Examples
    --------
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> data, data.marginal([0]).round(3)
    (MultiDataset(n=5000, k=3, domains=(2, 2, 2), distinct=8), array([0.344, 0.656]))
    """
    n = check_n(n, "n")
    doms = _domains(k, domains)
    if isinstance(strength, bool) or not isinstance(strength, numbers.Real) or not 0 <= strength <= 1:
        raise ValueError(f"strength must be a number in [0, 1], got {strength!r}")
    pi = np.arange(1, doms[0] + 1, dtype=np.float64) if first is None else np.asarray(first, dtype=np.float64)
    if pi.shape != (doms[0],) or np.any(pi < 0) or not pi.sum() > 0:
        raise ValueError(f"first must be {doms[0]} non-negative weights, not all 0")
    joint = pi / pi.sum()
    for j in range(1, k):  # joint over attributes 0..j: multiply by the transition of X_j | X_{j−1}
        prev, d = doms[j - 1], doms[j]
        trans = np.full((prev, d), (1.0 - strength) / d)
        trans[np.arange(prev), np.arange(prev) % d] += strength
        joint = joint[..., None] * trans.reshape((1,) * (j - 1) + (prev, d))
    return _draw(n, joint, as_generator(rng), f"chain Bayesian network, strength {strength:g}, n = {n}",
                 strength=float(strength))


def _domains(k, domains) -> tuple[int, ...]:
    """The checked domain sizes of k attributes (one size for all or one per attribute)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    doms = (tuple(domains) if np.ndim(domains) else (domains,) * int(k))
    if len(doms) != k:
        raise ValueError(f"domains must be one size or {k} sizes, got {domains!r}")
    doms = tuple(check_domain_size(d, f"domains[{j}]") for j, d in enumerate(doms))
    if int(np.prod(doms, dtype=np.float64)) > _MAX_JOINT:
        raise ValueError(f"the joint law has {int(np.prod(doms, dtype=np.float64))} cells, more than {_MAX_JOINT}: "
                         "use fewer or smaller attributes")
    return doms


def _draw(n: int, joint: np.ndarray, gen, source: str, **meta) -> MultiDataset:
    """n users of the exact law ``joint`` (one Multinomial draw), the law kept in ``meta["joint"]``."""
    cells = gen.multinomial(n, joint.ravel() / joint.sum())
    hit = np.flatnonzero(cells)
    tuples = np.stack(np.unravel_index(hit, joint.shape), axis=1)
    return MultiDataset(tuples, cells[hit].astype(np.int64), tuple(joint.shape), source=source,
                        meta={"joint": joint, **meta})


def _nonneg(x, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not np.isfinite(float(x)) or x < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {x!r}")
    return float(x)


def log_linear(n: int, k: int, domains=2, pairwise: float = 0.5, threeway: float = 0.0, *, rng) -> MultiDataset:
    """n users of the log-linear law of the module notes: pairwise terms of scale ``pairwise``,
    3-way terms of scale ``threeway`` (0: a pairwise law, which 2-way marginals determine).

    The interaction tables are drawn from ``rng`` first (θ for each pair in lexicographic order, then γ
    for each triple), the users next; the law is built by broadcasting one table per attribute set
    (a loop over the C(k, 2) + C(k, 3) sets, not over cells).

    Parameters
    ----------
    n : int
        Number of users.
    k : int
        Number of attributes, >= 3.
    domains : int or sequence of int, default 2
        Domain sizes.
    pairwise : float, default 0.5
        Scale of the 2-way interactions, >= 0.
    threeway : float, default 0.0
        Scale of the 3-way interactions, >= 0.
    rng : int or numpy.random.Generator
        Seed or generator (keyword-only).

    Returns
    -------
    MultiDataset
        ``meta``: ``joint`` (the exact law), ``pairwise``, ``threeway``.

    Raises
    ------
    ValueError
        Any argument out of range, or a joint law of more than 2²² cells.

    Examples
    --------
    >>> from ldpopt import multi
    >>> data = multi.log_linear(5000, 4, threeway=1.0, rng=0)
    >>> data.domains, round(float(data.meta["joint"].sum()), 12)
    ((2, 2, 2, 2), 1.0)
    """
    import itertools

    n = check_n(n, "n")
    if isinstance(k, numbers.Integral) and not isinstance(k, bool) and k < 3:
        raise ValueError(f"k must be an integer >= 3 (3-way interactions), got {k!r}")
    doms = _domains(k, domains)
    a, b = _nonneg(pairwise, "pairwise"), _nonneg(threeway, "threeway")
    gen = as_generator(rng)
    logp = np.zeros(doms)
    for size, scale in ((2, a), (3, b)):
        for attrs in itertools.combinations(range(len(doms)), size):
            shape = [doms[j] if j in attrs else 1 for j in range(len(doms))]
            term = gen.standard_normal([doms[j] for j in attrs])
            for ax in range(size):  # a pure interaction: no lower-order part (zero mean along every axis)
                term = term - term.mean(axis=ax, keepdims=True)
            logp = logp + scale * term.reshape(shape)
    joint = np.exp(logp - logp.max())
    joint /= joint.sum()
    return _draw(n, joint, gen, f"log-linear law, pairwise {a:g}, 3-way {b:g}, n = {n}", pairwise=a, threeway=b)


def dirichlet_joint(n: int, k: int, domains=2, alpha: float = 1.0, *, rng) -> MultiDataset:
    """n users of a joint law drawn from the symmetric Dirichlet(``alpha``) over all cells (module
    docstring): interactions of every order.

    Parameters
    ----------
    n : int
        Number of users.
    k : int
        Number of attributes, >= 2.
    domains : int or sequence of int, default 2
        Domain sizes.
    alpha : float, default 1.0
        Concentration, > 0 (small: a spiky law).
    rng : int or numpy.random.Generator
        Seed or generator (keyword-only); the law is drawn first, the users next.

    Returns
    -------
    MultiDataset
        ``meta``: ``joint`` (the exact law), ``alpha``.

    Raises
    ------
    ValueError
        Any argument out of range, or a joint law of more than 2²² cells.

    Examples
    --------
    >>> from ldpopt import multi
    >>> multi.dirichlet_joint(5000, 3, alpha=0.5, rng=0).k
    3
    """
    n = check_n(n, "n")
    doms = _domains(k, domains)
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not (np.isfinite(float(alpha)) and alpha > 0):
        raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
    gen = as_generator(rng)
    joint = gen.dirichlet(np.full(int(np.prod(doms)), float(alpha))).reshape(doms)
    return _draw(n, joint, gen, f"Dirichlet({alpha:g}) joint law, n = {n}", alpha=float(alpha))


SYNTHETIC: dict[str, Callable[..., MultiDataset]] = {"chain": chain_network, "log-linear": log_linear,
                                                     "dirichlet": dirichlet_joint}
