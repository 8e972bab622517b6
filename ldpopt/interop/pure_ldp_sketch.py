"""Reports of pure-ldp 1.2.0's sketch clients (CMSClient with and without ``is_hadamard``) read into
ldpopt's CMS / HCMS, decoded to the same estimates as pure-ldp's ``CMSServer``.

Notes: docs/notes/reliability.md, "ldpopt.interop.pure_ldp_sketch"."""

from __future__ import annotations

from itertools import chain
from operator import itemgetter

import numpy as np

from .._extras import require
from ..estimate import Estimate
from ..oracles.cms import CMS
from ..oracles.hcms import HCMS

__all__ = ["CMS", "HCMS", "cms_arrays", "hcms_array", "peer_buckets", "peer_server", "read_cms", "read_hcms"]


def peer_server(epsilon: float, k: int, m: int, hadamard: bool = False):
    """pure-ldp's own ``CMSServer`` (the ``peers`` extra), for conformance tests and benchmarks.

    pure-ldp 1.2.0's base server allocates ``np.zeros(d)`` with d = None for the sketch servers,
    which numpy ≥ 2 rejects: the server is built with d = 0 for that array (the sketch servers never
    read d), nothing else changed.

    Parameters
    ----------
    epsilon : float
        ε of the server.
    k : int
        Hash functions.
    m : int
        Buckets.
    hadamard : bool, default False
        The Hadamard variant (HCMS).

    Returns
    -------
    pure_ldp.frequency_oracles.apple_cms.CMSServer

    Raises
    ------
    ImportError
        pure-ldp is not installed (the ``peers`` extra).

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_sketch import peer_server
    >>> server = peer_server(2.0, k=16, m=64)  # doctest: +SKIP

    (Skipped: needs the ``peers`` extra; importing pure-ldp takes a second.)
    """
    base = require("pure_ldp.core._freq_oracle_server", "peers", "pure-ldp's CMS server")
    cms = require("pure_ldp.frequency_oracles.apple_cms", "peers", "pure-ldp's CMS server")
    init = base.FreqOracleServer.__init__

    def tolerant_init(self, epsilon, d, index_mapper=None):
        init(self, epsilon, 0 if d is None else d, index_mapper)

    base.FreqOracleServer.__init__ = tolerant_init
    try:
        return cms.CMSServer(epsilon, k, m, is_hadamard=hadamard)
    finally:
        base.FreqOracleServer.__init__ = init


def peer_buckets(hash_funcs, items) -> np.ndarray:
    """The peer family's table :math:`h_l` (item) as int64 (k, d): each of the k callables on each item.

    Parameters
    ----------
    hash_funcs : iterable of callable
        The peer's k hash functions (``server.hash_funcs``).
    items : iterable
        The d candidate items (at least 2), as the peer's client hashes them.

    Returns
    -------
    ndarray of int64, shape (k, d)
        The ``buckets`` table of :class:`~ldpopt.oracles.cms.CMS`.

    Raises
    ------
    ValueError
        No callable hash function, or fewer than 2 items.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_sketch import peer_buckets
    >>> peer_buckets([lambda x: x % 4, lambda x: (x * 3 + 1) % 4], range(1, 6)).tolist()
    [[1, 2, 3, 0, 1], [0, 3, 2, 1, 0]]
    """
    funcs = list(hash_funcs)
    items = list(items)
    if not funcs or not all(callable(h) for h in funcs):
        raise ValueError("hash_funcs must be a non-empty list of the peer's hash functions (callables)")
    if len(items) < 2:
        raise ValueError("items must list at least 2 candidate items")
    # a table of the public family, built once per family: k·d calls of the peer's hash
    return np.array([[h(x) for x in items] for h in funcs], dtype=np.int64)


_CHUNK = 1024  # reports per block when the peer's per-user arrays are copied (a block of int64 stays in cache)


def cms_arrays(reports, m: int) -> tuple[np.ndarray, np.ndarray]:
    """pure-ldp CMS reports [(ṽ, j), …] → ldpopt's (j, bits = [ṽ = +1]). The peer's ṽ are int64
    arrays of m entries each (8 bytes a coordinate): they are copied block by block (1,024 reports a
    block, a loop over blocks, not users) and compared with 0 straight into the bool bits.

    Parameters
    ----------
    reports : list of (ndarray, int) or tuple of ndarray
        The clients' (ṽ, j) pairs, or (V (n, m), j) arrays.
    m : int
        Buckets.

    Returns
    -------
    j : ndarray of int64, shape (n,)
    bits : ndarray of bool, shape (n, m)

    Raises
    ------
    ValueError
        No report, or a ṽ that is not a ±1 vector of length m.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.interop.pure_ldp_sketch import cms_arrays
    >>> reports = [(np.array([1, -1, -1, 1]), 0), (np.array([-1, 1, -1, -1]), 1)]  # CMSClient's (v, j)
    >>> j, bits = cms_arrays(reports, 4)
    >>> j, bits.astype(int).tolist()
    (array([0, 1]), [[1, 0, 0, 1], [0, 1, 0, 0]])
    """
    if isinstance(reports, tuple) and len(reports) == 2 and np.ndim(reports[0]) == 2:
        V, j = np.asarray(reports[0]), np.asarray(reports[1])
        if V.ndim != 2 or V.shape[1] != m or np.any(np.abs(V) != 1):
            raise ValueError(f"reports: each v must be a ±1 vector of length m = {m}")
        return j.astype(np.int64), V > 0
    reports = list(reports)
    if not reports:
        raise ValueError("reports must hold at least one (v, j) pair")
    n = len(reports)
    vs = list(map(itemgetter(0), reports))
    j = np.fromiter(map(itemgetter(1), reports), dtype=np.int64, count=n)
    bits = np.empty((n, m), dtype=bool)
    for s in range(0, n, _CHUNK):
        try:
            blk = np.concatenate(vs[s:s + _CHUNK]).reshape(-1, m)
        except ValueError:
            blk = None
        if blk is None or blk.shape[0] != min(_CHUNK, n - s) or np.any((blk != 1) & (blk != -1)):
            raise ValueError(f"reports: each v must be a ±1 vector of length m = {m}")
        np.greater(blk, 0, out=bits[s:s + _CHUNK])
    return j, bits


def hcms_array(reports) -> np.ndarray:
    """pure-ldp HCMS reports [(y, j, l), …] → ldpopt's (n, 3) rows (j, l, y).

    Parameters
    ----------
    reports : list of (int, int, int) or array_like
        The clients' (y, j, l) triples.

    Returns
    -------
    ndarray of int64, shape (n, 3)

    Raises
    ------
    ValueError
        No report, or entries that are not integer triples.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_sketch import hcms_array
    >>> hcms_array([(1, 0, 3), (-1, 1, 2)]).tolist()
    [[0, 3, 1], [1, 2, -1]]
    """
    if isinstance(reports, list) and reports and all(n == 3 for n in map(len, reports)):
        try:  # one pass over the triples' entries in C (np.asarray of the tuples takes twice as long)
            r = np.fromiter(chain.from_iterable(reports), dtype=np.int64, count=3 * len(reports)).reshape(-1, 3)
            return r[:, [1, 2, 0]]
        except (TypeError, ValueError, OverflowError):
            pass  # not all integers: the checks below say what is wrong
    r = np.asarray(reports)
    if r.ndim != 2 or r.shape[1] != 3 or r.shape[0] == 0:
        raise ValueError(f"reports must be a non-empty list of (y, j, l) triples, got shape {r.shape}")
    if r.dtype.kind == "f":
        if np.any(r != np.round(r)):
            raise ValueError("reports: y, j and l must be integers")
        r = np.round(r)
    r = r.astype(np.int64)
    return r[:, [1, 2, 0]]


def _oracle(cls, epsilon, m, buckets):
    b = np.asarray(buckets)
    if b.ndim != 2:
        raise ValueError(f"buckets must be the (k, d) table of peer_buckets, got shape {b.shape}")
    return cls(epsilon, b.shape[1], m=m, buckets=b)


def read_cms(reports, epsilon: float, m: int, buckets, device=None) -> tuple[CMS, Estimate]:
    """CMSClient reports → (ldpopt CMS with the peer's family, its Estimate); n·f̃ equals the
    server's ``estimate`` of each item (``device``: who counts, as in ``CMS.aggregate``).

    Parameters
    ----------
    reports : list of (ndarray, int) or tuple of ndarray
        The clients' reports (:func:`cms_arrays`).
    epsilon : float
        ε of the clients.
    m : int
        Buckets.
    buckets : array_like of int, shape (k, d)
        The family's table (:func:`peer_buckets`).
    device : str, optional
        As in ``CMS.aggregate``.

    Returns
    -------
    oracle : CMS
    estimate : Estimate

    Raises
    ------
    ValueError
        Bad reports or a bad table.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.interop.pure_ldp_sketch import peer_buckets, read_cms
    >>> buckets = peer_buckets([lambda x: x % 4, lambda x: (x * 3 + 1) % 4], range(1, 6))  # k = 2, m = 4, d = 5
    >>> reports = [(np.array([1, -1, -1, 1]), 0), (np.array([-1, 1, -1, -1]), 1)]  # CMSClient's (v, j)
    >>> oracle, estimate = read_cms(reports, 2.0, 4, buckets)
    >>> oracle, estimate.counts.tolist()
    (CMS(epsilon=2, d=5, k=2, m=4, hash_seed=0), [0.0, 0.0, 1.0, 2.0, 0.0])
    """
    orc = _oracle(CMS, epsilon, m, buckets)
    j, bits = cms_arrays(reports, orc.m)
    return orc, orc.estimate(orc.aggregate((j, bits), device), j.shape[0])


def read_hcms(reports, epsilon: float, m: int, buckets, device=None) -> tuple[HCMS, Estimate]:
    """CMSClient(is_hadamard=True) reports → (ldpopt HCMS with the peer's family, its Estimate).

    Parameters
    ----------
    reports : list of (int, int, int) or array_like
        The clients' (y, j, l) triples (:func:`hcms_array`).
    epsilon : float
        ε of the clients.
    m : int
        Buckets (a power of 2).
    buckets : array_like of int, shape (k, d)
        The family's table (:func:`peer_buckets`).
    device : str, optional
        As in ``HCMS.aggregate``.

    Returns
    -------
    oracle : HCMS
    estimate : Estimate

    Raises
    ------
    ValueError
        Bad reports or a bad table.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_sketch import peer_buckets, read_hcms
    >>> buckets = peer_buckets([lambda x: x % 4, lambda x: (x * 3 + 1) % 4], range(1, 6))  # k = 2, m = 4, d = 5
    >>> oracle, estimate = read_hcms([(1, 0, 3), (-1, 1, 2)], 2.0, 4, buckets)
    >>> oracle, estimate.counts.tolist()
    (HCMS(epsilon=2, d=5, k=2, m=4, hash_seed=0), [0.0, 1.0, 2.0, 1.0, 0.0])
    """
    orc = _oracle(HCMS, epsilon, m, buckets)
    r = hcms_array(reports)
    return orc, orc.estimate(orc.aggregate(r, device), r.shape[0])
