r"""Reports of pure-ldp 1.2.0's ``RAPPORClient`` read into ldpopt's RAPPOR, decoded to the same
estimates as pure-ldp's ``RAPPORServer``.

Notes: docs/notes/reliability.md, "ldpopt.interop.pure_ldp_rappor"."""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

import numpy as np
import scipy.sparse as sp
from scipy.optimize import nnls

from .. import kernels
from .._extras import require
from ..estimate import Estimate
from ..oracles.rappor import RAPPOR
from ..sketches.ridge import nonneg_ridge

__all__ = ["PeerRAPPOR", "peer_oracle", "peer_positions", "peer_server", "rappor_arrays", "read_rappor",
           "server_design", "server_estimates"]

#: pure-ldp's RAPPORServer turns on its LASSO pre-selection above this domain size
LASSO_ABOVE = 1000
#: its ElasticNet's max_iter and scikit-learn's default tol; its Lasso's alpha
SERVER_MAX_ITER, SERVER_TOL, SERVER_LASSO_ALPHA = 10_000, 1e-4, 0.8


def peer_server(f: float, num_bits: int, num_hashes: int, d: int, cohorts: int = 8, **kw):
    """pure-ldp's own ``RAPPORServer`` (the ``peers`` extra), for conformance tests and benchmarks.

    Parameters
    ----------
    f : float
        pure-ldp's f (the permanent response's parameter), in (0, 1).
    num_bits : int
        T, the Bloom filter's size.
    num_hashes : int
        h, hash functions per cohort.
    d : int
        Domain size.
    cohorts : int, default 8
        C.
    **kw
        Passed to ``RAPPORServer``.

    Returns
    -------
    pure_ldp.frequency_oracles.rappor.RAPPORServer

    Raises
    ------
    ImportError
        pure-ldp is not installed (the ``peers`` extra).

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_rappor import peer_server
    >>> server = peer_server(0.5, 16, 2, d=8, cohorts=4)  # doctest: +SKIP

    (Skipped: needs the ``peers`` extra; importing pure-ldp takes a second.)
    """
    mod = require("pure_ldp.frequency_oracles.rappor", "peers", "pure-ldp's RAPPOR server")
    return mod.RAPPORServer(f, num_bits, num_hashes, d, num_of_cohorts=cohorts, **kw)


def peer_positions(hash_family, d: int) -> np.ndarray:
    """The peer family's table pos[c, i, v] = hash_family[c][i](str(v)) over the indexes v < d, int64
    (C, h, d): each of the C·h callables of ``RAPPORServer.get_hash_funcs()`` on each index.

    Parameters
    ----------
    hash_family : list of list of callable
        C lists of h callables ``str -> int`` (``RAPPORServer.get_hash_funcs()``).
    d : int
        Domain size, >= 2.

    Returns
    -------
    ndarray of int64, shape (C, h, d)

    Raises
    ------
    ValueError
        A family that is not C lists of h callables, or ``d`` below 2.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_rappor import peer_positions
    >>> peer_positions([[lambda x: int(x) % 8, lambda x: (3 * int(x) + 1) % 8]], 4).tolist()
    [[[0, 1, 2, 3], [1, 4, 7, 2]]]
    """
    fam = [list(funcs) for funcs in hash_family]
    if not fam or len({len(f) for f in fam}) != 1 or not fam[0] or not all(callable(h) for f in fam for h in f):
        raise ValueError("hash_family must be the peer's list of C lists of h hash functions (callables)")
    if int(d) < 2:
        raise ValueError(f"d must be >= 2, got {d!r}")
    keys = [str(v) for v in range(int(d))]
    # a table of the public family, built once per family: C·h·d calls of the peer's hash
    return np.array([[[h(x) for x in keys] for h in funcs] for funcs in fam], dtype=np.int64)


def rappor_arrays(reports, num_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """pure-ldp reports [(bits, cohort), …] (bits: a list of T ints 0/1) → (cohort int64, bits bool
    (n, T)). Arrays (cohort, bits) pass through, checked.

    Parameters
    ----------
    reports : list of (bits, cohort) or tuple of ndarray
        pure-ldp's reports, or (cohort, bits) arrays.
    num_bits : int
        T.

    Returns
    -------
    cohort : ndarray of int64, shape (n,)
    bits : ndarray of bool, shape (n, T)

    Raises
    ------
    ValueError
        No report, bits that are not 0/1 or not T long.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_rappor import rappor_arrays
    >>> cohort, bits = rappor_arrays([([1, 0, 0, 1], 0), ([0, 1, 0, 0], 1)], 4)
    >>> cohort, bits.astype(int).tolist()
    (array([0, 1]), [[1, 0, 0, 1], [0, 1, 0, 0]])
    """
    T = int(num_bits)
    if isinstance(reports, tuple) and len(reports) == 2 and np.ndim(reports[1]) == 2:
        c, B = np.asarray(reports[0]), np.asarray(reports[1])
        if B.dtype != np.bool_:
            if B.dtype.kind not in "biuf" or np.any((B != 0) & (B != 1)):
                raise ValueError("reports: bits must be 0/1")
            B = B.astype(bool)
    else:
        reports = list(reports)
        if not reports:
            raise ValueError("reports must hold at least one (bits, cohort) pair")
        try:  # bytes() of a list of small ints is one C call; the join is one copy of all the bits
            raw = b"".join(map(bytes, map(itemgetter(0), reports)))
        except (TypeError, ValueError):
            raise ValueError("reports: each bits must be a sequence of 0/1 integers") from None
        if len(raw) != len(reports) * T:
            raise ValueError(f"reports: each bits must hold num_bits = {T} entries")
        B = np.frombuffer(raw, dtype=np.uint8).reshape(len(reports), T)
        if np.any(B > 1):
            raise ValueError("reports: bits must be 0/1")
        B = B.view(bool)
        c = np.fromiter(map(itemgetter(1), reports), dtype=np.int64, count=len(reports))
    if B.ndim != 2 or B.shape != (c.shape[0], T) or c.ndim != 1:
        raise ValueError(f"reports: bits must be (n, num_bits = {T}) with one cohort per report")
    return c.astype(np.int64), B


def peer_oracle(f: float, num_bits: int, positions) -> RAPPOR:
    """ldpopt's RAPPOR for pure-ldp's client with the peer's family (module notes).

    The client as it is: one-sided permanent response, no instantaneous step (Erlingsson, Pihur &
    Korolova, CCS 2014, describe the two-sided one).

    Parameters
    ----------
    f : float
        pure-ldp's f (the permanent response's parameter), in (0, 1).
    num_bits : int
        T, the Bloom filter's size.
    positions : array_like of int, shape (C, h, d)
        The family's table (:func:`peer_positions`).

    Returns
    -------
    RAPPOR

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_rappor import peer_oracle, peer_positions
    >>> family = [[lambda x: int(x) % 8, lambda x: (3 * int(x) + 1) % 8]]  # 1 cohort, h = 2, as get_hash_funcs()
    >>> rappor = peer_oracle(0.5, 8, peer_positions(family, 4))
    >>> reports = [([1, 1, 0, 0, 0, 0, 0, 0], 0), ([0, 1, 0, 0, 1, 0, 0, 0], 0), ([1, 1, 0, 0, 0, 0, 0, 1], 0)]
    >>> rappor.inst_p, rappor.inst_q, rappor.cohorts, rappor.d  # no instantaneous step
    (0.0, 1.0, 1, 4)
    """
    return RAPPOR.from_f(f, np.shape(positions)[2], num_bits=num_bits, positions=positions, inst_p=0.0,
                         inst_q=1.0, permanent="one-sided")


def server_design(oracle: RAPPOR) -> sp.csc_matrix:
    """The server's :math:`X[(c, t), v] = 1[t ∈ B_{c,v}]` (rows c·T + t), sparse CSC with ≤ C·h ones a column.

    Parameters
    ----------
    oracle : RAPPOR
        From :func:`peer_oracle`.

    Returns
    -------
    scipy.sparse.csc_matrix, shape (C·T, d)

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_rappor import peer_oracle, peer_positions
    >>> family = [[lambda x: int(x) % 8, lambda x: (3 * int(x) + 1) % 8]]  # 1 cohort, h = 2, as get_hash_funcs()
    >>> rappor = peer_oracle(0.5, 8, peer_positions(family, 4))
    >>> reports = [([1, 1, 0, 0, 0, 0, 0, 0], 0), ([0, 1, 0, 0, 1, 0, 0, 0], 0), ([1, 1, 0, 0, 0, 0, 0, 1], 0)]
    >>> from ldpopt.interop.pure_ldp_rappor import server_design
    >>> X = server_design(rappor)
    >>> X.shape, X.nnz
    ((8, 4), 8)
    """
    return sp.csc_matrix(oracle.design_matrix())


def server_estimates(oracle: RAPPOR, Y, N, reg_const: float | None = None, lasso: bool = False,
                     device=None) -> np.ndarray:
    """pure-ldp's ``RAPPORServer`` estimates (``estimated_data``, one per index) from the bit counts
    Y (C, T) and cohort sizes N, with the oracle's f (module notes). ``device``: "cpu" (or
    None/"auto" with Numba installed) runs the server's coordinate descent update for update
    (:func:`ldpopt.kernels.ridge.coordinate_descent` with ``sklearn_rule``: its 10,000 sweeps, its
    stopping test), so the estimates are the server's to rounding; "numpy" returns the exact
    minimiser of the same problem (:func:`ldpopt.sketches.ridge.nonneg_ridge`), which the server's
    answer approaches only to its solver's tolerance.

    Parameters
    ----------
    oracle : RAPPOR
        From :func:`peer_oracle`.
    Y : array_like, shape (C, T)
        Bit counts per cohort.
    N : array_like, shape (C,)
        Cohort sizes.
    reg_const : float, optional
        The server's ``reg_const`` (default 0.025·f), >= 0.
    lasso : bool, default False
        The server's LASSO selection (always on above d = 1000).
    device : {None, "auto", "numpy", "cpu"}, optional
        As above.

    Returns
    -------
    ndarray, shape (d,)
        The server's count estimates.

    Raises
    ------
    ValueError
        Shapes that do not match the oracle, a negative ``reg_const``, ``device="cuda"``, or LASSO
        off the CPU kernels.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_rappor import peer_oracle, peer_positions
    >>> family = [[lambda x: int(x) % 8, lambda x: (3 * int(x) + 1) % 8]]  # 1 cohort, h = 2, as get_hash_funcs()
    >>> rappor = peer_oracle(0.5, 8, peer_positions(family, 4))
    >>> reports = [([1, 1, 0, 0, 0, 0, 0, 0], 0), ([0, 1, 0, 0, 1, 0, 0, 0], 0), ([1, 1, 0, 0, 0, 0, 0, 1], 0)]
    >>> from ldpopt.interop.pure_ldp_rappor import rappor_arrays, server_estimates
    >>> Y, N = rappor.sketch(rappor_arrays(reports, 8))
    >>> server_estimates(rappor, Y, N, device="numpy").round(3)
    array([2.845, 1.026, 0.   , 0.   ])
    """
    Y, N = np.asarray(Y, dtype=np.float64), np.asarray(N, dtype=np.float64)
    C, T = oracle.cohorts, oracle.num_bits
    if Y.shape != (C, T) or N.shape != (C,):
        raise ValueError(f"Y must be ({C}, {T}) and N ({C},), got {Y.shape} and {N.shape}")
    f = oracle.f
    reg = 0.025 * f if reg_const is None else float(reg_const)
    if not (np.isfinite(reg) and reg >= 0):
        raise ValueError(f"reg_const must be finite and >= 0, got {reg_const!r}")
    y = ((Y - 0.5 * f * N[:, None]) / (1 - f)).ravel()  # the server's arithmetic, operation for operation
    X = server_design(oracle)
    dev = "cpu" if device in (None, "auto") and kernels.numba_available() else kernels.resolve(device)
    if dev == "cuda":
        raise ValueError("device: the RAPPOR server's regression runs on 'numpy' or 'cpu', not 'cuda'")
    out = np.zeros(oracle.d)
    cols = np.arange(oracle.d)
    if lasso or oracle.d > LASSO_ABOVE:  # Lasso(alpha=0.8, positive=True) selects, with its intercept
        if dev != "cpu":
            raise ValueError("device: pure-ldp's LASSO selection (lasso=True or d > 1000) is reproduced on "
                             "'cpu' (Numba) only")
        from ..kernels.ridge import lasso_support

        w, _ = lasso_support(X.indptr, X.indices, y, SERVER_LASSO_ALPHA)
        cols = np.flatnonzero(w)
        if cols.size == 0:
            return out
        X = X[:, cols]
    if reg == 0:  # LinearRegression(positive=True, fit_intercept=False): scipy's nnls on (X, y)
        out[cols] = nnls(X.toarray(), y)[0] * C
    elif dev == "cpu":
        from ..kernels.ridge import coordinate_descent

        w, _, _ = coordinate_descent(X.indptr, X.indices, X.data, y, reg * C * T, max_sweeps=SERVER_MAX_ITER,
                                     tol=SERVER_TOL, sklearn_rule=True)
        out[cols] = w * C
    else:
        out[cols] = nonneg_ridge(X, y, reg * C * T, "numpy").w * C
    return out


@dataclass(frozen=True)
class PeerRAPPOR:
    """What :func:`read_rappor` returns: ldpopt's ``oracle`` with the peer's family and client, the bit
    counts ``Y`` and cohort sizes ``N``, ldpopt's ``estimate`` (pure-oracle view of the client as it is)
    and the peer server's estimates ``server`` (one per index, as ``RAPPORServer.estimate`` returns
    them).

    Parameters
    ----------
    oracle : RAPPOR
        ldpopt's oracle for the peer's client.
    Y : ndarray, shape (C, T)
        Bit counts.
    N : ndarray, shape (C,)
        Cohort sizes.
    estimate : Estimate
        ldpopt's unbiased estimate.
    server : ndarray, shape (d,)
        The peer server's estimates.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_rappor import peer_oracle, peer_positions
    >>> family = [[lambda x: int(x) % 8, lambda x: (3 * int(x) + 1) % 8]]  # 1 cohort, h = 2, as get_hash_funcs()
    >>> rappor = peer_oracle(0.5, 8, peer_positions(family, 4))
    >>> reports = [([1, 1, 0, 0, 0, 0, 0, 0], 0), ([0, 1, 0, 0, 1, 0, 0, 0], 0), ([1, 1, 0, 0, 0, 0, 0, 1], 0)]
    >>> from ldpopt.interop.pure_ldp_rappor import read_rappor
    >>> read_rappor(reports, 0.5, 8, peer_positions(family, 4), device="numpy").N
    array([3])
    """

    oracle: RAPPOR
    Y: np.ndarray
    N: np.ndarray
    estimate: Estimate
    server: np.ndarray


def read_rappor(reports, f: float, num_bits: int, positions, reg_const: float | None = None,
                lasso: bool = False, device=None) -> PeerRAPPOR:
    """RAPPORClient reports → :class:`PeerRAPPOR`; ``server`` equals RAPPORServer's estimates of the
    indexes 0 … d−1 (``positions``: :func:`peer_positions` of the server's family).

    Parameters
    ----------
    reports : list of (bits, cohort) or tuple of ndarray
        The clients' reports (:func:`rappor_arrays`).
    f : float
        pure-ldp's f (the permanent response's parameter), in (0, 1).
    num_bits : int
        T, the Bloom filter's size.
    positions : array_like of int, shape (C, h, d)
        The family's table.
    reg_const : float, optional
        As in :func:`server_estimates`.
    lasso : bool, default False
        As in :func:`server_estimates`.
    device : str, optional
        As in :func:`server_estimates`.

    Returns
    -------
    PeerRAPPOR

    Raises
    ------
    ValueError
        Bad reports or arguments (see :func:`rappor_arrays`, :func:`server_estimates`).

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_rappor import peer_oracle, peer_positions
    >>> family = [[lambda x: int(x) % 8, lambda x: (3 * int(x) + 1) % 8]]  # 1 cohort, h = 2, as get_hash_funcs()
    >>> rappor = peer_oracle(0.5, 8, peer_positions(family, 4))
    >>> reports = [([1, 1, 0, 0, 0, 0, 0, 0], 0), ([0, 1, 0, 0, 1, 0, 0, 0], 0), ([1, 1, 0, 0, 0, 0, 0, 1], 0)]
    >>> from ldpopt.interop.pure_ldp_rappor import read_rappor
    >>> read_rappor(reports, 0.5, 8, peer_positions(family, 4), device="numpy").server.round(3)
    array([2.845, 1.026, 0.   , 0.   ])
    """
    orc = peer_oracle(f, num_bits, positions)
    c, bits = rappor_arrays(reports, orc.num_bits)
    Y, N = orc.sketch((c, bits), device)
    server = server_estimates(orc, Y, N, reg_const, lasso, device)
    return PeerRAPPOR(orc, Y, N, orc.estimate(orc.counts_from_sketch(Y, N), int(N.sum())), server)
