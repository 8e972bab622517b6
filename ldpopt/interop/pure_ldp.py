"""Reports of pure-ldp 1.2.0 clients (github.com/Samuel-Maddock/pure-LDP) as ldpopt partial aggregates.

Notes: docs/notes/reliability.md, "ldpopt.interop.pure_ldp"."""

from __future__ import annotations

import numpy as np

from .. import oracles
from ..aggregate import Partial
from ._common import as_int_array, grr_partial, lh_support_counts, peer_g, ue_partial
from ._xxh32 import hash_values

__all__ = ["flh_pool_bias", "peer_estimates", "read_de", "read_flh", "read_hr", "read_lh", "read_ue"]


def read_de(reports, epsilon: float, d: int) -> Partial:
    """DEClient reports (0-based ints) → GRR partial.

    Parameters
    ----------
    reports : iterable of int
        One 0-based index in [0, d) per user.
    epsilon : float
        ε of the pure-ldp client.
    d : int
        Domain size.

    Returns
    -------
    Partial

    Raises
    ------
    ValueError
        A report that is not an integer in [0, d).

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp import read_de
    >>> read_de([0, 2, 2, 1], epsilon=1.0, d=3).counts
    array([1, 1, 2])
    """
    return grr_partial(reports, epsilon, d, "pure-ldp DE")


def read_ue(reports, epsilon: float, d: int, use_oue: bool = False) -> Partial:
    """UEClient reports (0/1 vectors of length d) → SUE (default, as pure-ldp) or OUE partial.

    Parameters
    ----------
    reports : iterable of sequence of 0/1
        One bit vector of length d per user.
    epsilon : float
        ε of the pure-ldp client.
    d : int
        Domain size.
    use_oue : bool, default False
        The client's ``use_oue``: OUE (True) or SUE.

    Returns
    -------
    Partial

    Raises
    ------
    ValueError
        A report that is not a 0/1 vector of length d.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp import read_ue
    >>> read_ue([[1, 0, 0], [0, 1, 1]], epsilon=1.0, d=3)
    Partial(oracle='sue', epsilon=1, d=3, n=2)
    """
    return ue_partial(reports, epsilon, d, "oue" if use_oue else "sue", "pure-ldp UE")


def _lh_pairs(reports, g: int, name: str, seed_high: int):
    arr = as_int_array(reports, name, 2, 0, np.iinfo(np.int64).max, width=2)
    y, seeds = arr[:, 0], arr[:, 1]
    if y.size and y.max() >= g:
        raise ValueError(f"{name}: hashed values y must lie in [0, g = {g}); found {y.max()}")
    if seeds.size and seeds.max() >= seed_high:
        raise ValueError(f"{name}: seeds must lie in [0, {seed_high}); found {seeds.max()}")
    return y, seeds


def read_lh(reports, epsilon: float, d: int, g: int = 2, use_olh: bool = False) -> Partial:
    r"""LHClient reports ``(y, seed)`` → OLH partial with pure-ldp's g (2 unless ``use_olh``).

    Parameters
    ----------
    reports : iterable of (int, int)
        One (hashed value y in [0, g), seed) pair per user.
    epsilon : float
        ε of the pure-ldp client.
    d : int
        Domain size.
    g : int, default 2
        The client's g (ignored with ``use_olh``).
    use_olh : bool, default False
        The client's ``use_olh``: :math:`g = \mathrm{round}(e^ε) + 1`.

    Returns
    -------
    Partial

    Raises
    ------
    ValueError
        Reports not pairs of non-negative integers, or y not below g.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp import read_lh
    >>> read_lh([(0, 5), (1, 6)], epsilon=1.0, d=4)
    Partial(oracle='olh', epsilon=1, d=4, g=2, n=2)
    """
    g = peer_g(epsilon, g, use_olh)
    orc = oracles.get("olh", epsilon, d, g=g)
    y, seeds = _lh_pairs(reports, g, "pure-ldp LH", np.iinfo(np.int64).max)
    return Partial.from_counts(orc, lh_support_counts(y, seeds, orc.d, g), y.shape[0])


def read_flh(reports, epsilon: float, d: int, k: int, g: int = 2, use_olh: bool = False) -> Partial:
    """FastLHClient reports ``(y, seed)``, seed ∈ [0, k) → OLH partial (counts via the k×d matrix).

    Parameters
    ----------
    reports : iterable of (int, int)
        One (hashed value y in [0, g), seed in [0, k)) pair per user.
    epsilon : float
        ε of the pure-ldp client.
    d : int
        Domain size.
    k : int
        The size of the client's hash pool, >= 1.
    g : int, default 2
        The client's g (ignored with ``use_olh``).
    use_olh : bool, default False
        The client's ``use_olh``.

    Returns
    -------
    Partial

    Raises
    ------
    ValueError
        ``k`` below 1, or a y or seed out of range.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp import read_flh
    >>> read_flh([(0, 1), (1, 0), (1, 3)], epsilon=1.0, d=4, k=4).counts
    array([1, 0, 2, 2])
    """
    g = peer_g(epsilon, g, use_olh)
    orc = oracles.get("olh", epsilon, d, g=g)
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"k must be an integer >= 1 (the size of the hash pool), got {k!r}")
    y, seeds = _lh_pairs(reports, g, f"pure-ldp FLH (k = {int(k)})", int(k))
    hash_counts = np.zeros((int(k), g), dtype=np.int64)
    np.add.at(hash_counts, (seeds, y), 1)
    matrix = hash_values(np.arange(int(k)), np.arange(orc.d), g)  # (k, d): H_i(v)
    counts = np.take_along_axis(hash_counts, matrix, axis=1).sum(axis=0)
    return Partial.from_counts(orc, counts, y.shape[0])


def flh_pool_bias(f, epsilon: float, k: int, g: int = 2, use_olh: bool = False) -> np.ndarray:
    r"""E[f̃ | pool] − f for FastLH's pool of seeds 0..k−1, read with :func:`read_flh`, over a true
    distribution ``f`` on d values (exact; O(k·d) hashes).

    A user holding u picks seed i uniformly, reports :math:`H_i(u)` kept w.p. p, else one of the other g − 1
    values uniformly (p* = (1 − p)/(g − 1) each), so :math:`\Pr[\text{report supports } v] = p^* + (p − p^*)·ρ_{uv}` for
    :math:`u ≠ v` with :math:`ρ_{uv} = \#\{i : H_i(u) = H_i(v)\}/k`, and p for u = v. The OLH estimator (q = 1/g) then has

    .. math::

        E[\tilde f_v] − f_v = \frac{p − p^*}{p − 1/g} \sum_{u≠v} f_u (ρ_{uv} − 1/g),

    computed as :math:`(1/k) Σ_i B_i[H_i(v)] - f_v - (1 - f_v)/g` for the sum, with :math:`B_i[h]` the mass f of the
    values that seed i hashes to h. Over random pools :math:`ρ_{uv}` is a mean of k Bernoulli(1/g): the squared
    bias averages :math:`((p − p^*)/(p − 1/g))^2·(1/g)(1 − 1/g)/k·\sum_{u≠v} f_u^2`, against OLH's variance
    :math:`≈ (1/g)(1 − 1/g)/(n(p − 1/g)^2)`: :math:`\text{bias}^2 < \text{variance}` needs :math:`k > n·(p − p^*)^2·\sum_u f_u^2`.

    Parameters
    ----------
    f : array_like, shape (d,)
        A probability vector over d >= 2 values.
    epsilon : float
        ε of the client.
    k : int
        The hash pool's size, >= 1.
    g : int, default 2
        The client's g (ignored with ``use_olh``).
    use_olh : bool, default False
        The client's ``use_olh``.

    Returns
    -------
    ndarray, shape (d,)
        The bias of each :math:`\tilde f_v` for this pool.

    Raises
    ------
    ValueError
        ``f`` not a probability vector, or ``k`` below 1.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.interop.pure_ldp import flh_pool_bias
    >>> flh_pool_bias(np.array([0.5, 0.3, 0.2, 0.0]), 2.0, k=8, use_olh=True).round(4)
    array([ 0.0857,  0.1429,  0.    , -0.0571])
    """
    f = np.asarray(f, dtype=np.float64)
    if f.ndim != 1 or f.size < 2 or not np.all(np.isfinite(f)) or np.any(f < 0) or abs(f.sum() - 1) > 1e-9:
        raise ValueError("f must be a probability vector over d >= 2 values")
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"k must be an integer >= 1 (the size of the hash pool), got {k!r}")
    g = peer_g(epsilon, g, use_olh)
    p = oracles.get("olh", epsilon, f.size, g=g).p
    ps = (1 - p) / (g - 1)
    H = hash_values(np.arange(int(k)), np.arange(f.size), g)  # (k, d)
    mass = np.zeros((int(k), g))
    np.add.at(mass, (np.repeat(np.arange(int(k)), f.size), H.ravel()), np.tile(f, int(k)))
    same = np.take_along_axis(mass, H, axis=1).mean(axis=0)  # Σ_u f_u ρ_uv, u = v included
    return (p - ps) / (p - 1.0 / g) * (same - f - (1 - f) / g)


def read_hr(reports, epsilon: float, d: int) -> Partial:
    """HadamardResponseClient reports (ints in [0, K)) → HR partial; ε ≤ 1 only (module notes).

    Parameters
    ----------
    reports : iterable of int
        One output in [0, K) per user (K the Hadamard size, ``oracles.HR(epsilon, d).K``).
    epsilon : float
        ε of the pure-ldp client.
    d : int
        Domain size.

    Returns
    -------
    Partial

    Raises
    ------
    ValueError
        ε above 1 (pure-ldp's other mechanism), or a report out of range.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp import read_hr
    >>> read_hr([0, 3, 5, 1], epsilon=1.0, d=4).counts
    array([1, 3, 2, 3])
    """
    if epsilon > 1:
        raise ValueError(f"epsilon: pure-ldp's Hadamard response for ε > 1 (here {epsilon}) is the block-"
                         f"structured Hadamard_Rand_general_original mechanism, not ldpopt's HR; not supported")
    orc = oracles.HR(epsilon, d)
    y = as_int_array(reports, "pure-ldp HR", 1, 0, orc.K)
    if y.size == 0:
        return Partial.empty(orc)
    return Partial.from_counts(orc, orc.aggregate(y), y.shape[0])


def peer_estimates(partial: Partial) -> np.ndarray:
    """What pure-ldp's server reports for the same reports: count estimates n·f̃.

    Parameters
    ----------
    partial : Partial
        A partial from one of the readers.

    Returns
    -------
    ndarray
        pure-ldp's ``estimated_data``.

    Raises
    ------
    ValueError
        The partial is empty.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp import peer_estimates, read_de
    >>> peer_estimates(read_de([0, 2, 2, 1], epsilon=1.0, d=3)).round(3)
    array([0.418, 0.418, 3.164])
    """
    return partial.n * partial.finalize().f_tilde
