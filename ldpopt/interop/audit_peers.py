"""Privacy audits of third-party clients with :func:`ldpopt.audit.audit`.

Notes: docs/notes/reliability.md, "ldpopt.interop.audit_peers"."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import oracles
from ..oracles.base import FrequencyOracle
from ._common import as_int_array
from ._xxh32 import hash_values

__all__ = ["PeerClient", "peer_clients", "support_functions"]


class PeerClient(FrequencyOracle):
    """A peer client seen as an oracle: ``privatise(value)`` (value 0-based) gives one report in the
    peer's format, ``support(reports)`` the (m, d) bool support matrix of a list of them.

    Parameters
    ----------
    label : str
        The client's name in audit tables.
    inner : FrequencyOracle
        The equivalent ldpopt oracle (its p, q and fast path).
    privatise : callable
        ``value -> report`` (0-based value), the peer's client.
    support : callable
        ``reports -> (m, d) bool`` support matrix (:func:`support_functions`).
    claimed_epsilon : float, optional
        The ε the peer claims (default ``inner.epsilon``).

    Examples
    --------
    >>> from ldpopt import oracles
    >>> from ldpopt.interop.audit_peers import PeerClient, support_functions
    >>> echo = PeerClient("echo", oracles.get("grr", 1.0, 4), lambda v: v, support_functions(4)["value"])
    >>> echo  # a client that releases its value: any audit finds ε unbounded
    PeerClient(epsilon=1, d=4)
    """

    name = "peer"

    def __init__(self, label: str, inner: FrequencyOracle, privatise: Callable, support: Callable,
                 claimed_epsilon: float | None = None):
        super().__init__(inner.epsilon if claimed_epsilon is None else claimed_epsilon, inner.d)
        self.label, self.inner, self._privatise, self._support = label, inner, privatise, support

    @property
    def p(self) -> float:
        """The equivalent oracle's p (a report supports its own value w.p. p).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.interop.audit_peers import PeerClient, support_functions
        >>> echo = PeerClient("echo", oracles.get("grr", 1.0, 4), lambda v: v, support_functions(4)["value"])
        >>> round(float(echo.p), 4)
        0.4754
        """
        return self.inner.p

    @property
    def q(self) -> float:
        """The equivalent oracle's q (a report supports another value w.p. q).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.interop.audit_peers import PeerClient, support_functions
        >>> echo = PeerClient("echo", oracles.get("grr", 1.0, 4), lambda v: v, support_functions(4)["value"])
        >>> round(float(echo.q), 4)
        0.1749
        """
        return self.inner.q

    def perturb(self, values, rng=None) -> list:
        """One peer report per value, by calling the peer's client once per user (audits only).

        Parameters
        ----------
        values : array_like of int
            0-based values.
        rng : optional
            Not used: the peers draw from their own global generators.

        Returns
        -------
        list
            The reports in the peer's format.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.interop.audit_peers import PeerClient, support_functions
        >>> echo = PeerClient("echo", oracles.get("grr", 1.0, 4), lambda v: v, support_functions(4)["value"])
        >>> echo.perturb([0, 3, 3])
        [0, 3, 3]
        """
        return [self._privatise(int(v)) for v in np.asarray(values)]

    def support_matrix(self, reports) -> np.ndarray:
        """The support matrix by the peer's support rule (``support_functions``). See
        ``FrequencyOracle.support_matrix``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.interop.audit_peers import PeerClient, support_functions
        >>> echo = PeerClient("echo", oracles.get("grr", 1.0, 4), lambda v: v, support_functions(4)["value"])
        >>> echo.support_matrix([0, 3]).astype(int).tolist()
        [[1, 0, 0, 0], [0, 0, 0, 1]]
        """
        return np.asarray(self._support(reports), dtype=bool)

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Support counts through the peer's support rule, counted by numpy (``device``: None, "auto"
        or "numpy"; the base class's signature).

        Parameters
        ----------
        reports : list
            Peer reports.
        device : {None, "auto", "numpy"}, optional
            Where to count.

        Returns
        -------
        ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            Another device.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.interop.audit_peers import PeerClient, support_functions
        >>> echo = PeerClient("echo", oracles.get("grr", 1.0, 4), lambda v: v, support_functions(4)["value"])
        >>> echo.aggregate([0, 3, 3])
        array([1, 0, 0, 2])
        """
        if device not in (None, "auto", "numpy"):
            raise ValueError(f"device: a peer client's reports are counted on 'numpy', got {device!r}")
        return self.support_matrix(reports).sum(axis=0).astype(np.int64)

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """The equivalent oracle's fast path (``inner.sample_counts``).

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            Users per value.
        rng : int or numpy.random.Generator
            The randomness.

        Returns
        -------
        ndarray of int64, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.interop.audit_peers import PeerClient, support_functions
        >>> echo = PeerClient("echo", oracles.get("grr", 1.0, 4), lambda v: v, support_functions(4)["value"])
        >>> int(echo.sample_counts([5, 0, 0, 5], rng=0).sum())  # GRR: one supported value per report
        10
        """
        return self.inner.sample_counts(true_counts, rng)

    def output_distribution(self) -> np.ndarray:
        """Not available: a peer client's outputs are not enumerated.

        Returns
        -------
        ndarray
            Never; always raises.

        Raises
        ------
        ValueError
            Always (audit the client empirically).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> from ldpopt.interop.audit_peers import PeerClient, support_functions
        >>> echo = PeerClient("echo", oracles.get("grr", 1.0, 4), lambda v: v, support_functions(4)["value"])
        >>> echo.output_distribution()
        Traceback (most recent call last):
        ...
        ValueError: a peer client's output distribution is not enumerated; audit it empirically
        """
        raise ValueError("a peer client's output distribution is not enumerated; audit it empirically")


def support_functions(d: int) -> dict[str, Callable]:
    """Support rules of the peer report formats (module table of pure_ldp.py / multi_freq_ldpy.py).

    Parameters
    ----------
    d : int
        Domain size.

    Returns
    -------
    dict of str to callable
        ``"value"``, ``"bits"``, ``"subset"``, ``"hr"``, ``"packed"`` (each ``reports -> (m, d)
        bool``) and ``"lh"`` (``g -> rule``).

    Examples
    --------
    >>> from ldpopt.interop.audit_peers import support_functions
    >>> rules = support_functions(4)
    >>> sorted(rules), rules["subset"]([[0, 2]]).astype(int).tolist()
    (['bits', 'hr', 'lh', 'packed', 'subset', 'value'], [[1, 0, 1, 0]])
    """
    dom = np.arange(d)

    def lh(g):
        def f(reps):
            a = as_int_array(reps, "LH reports", 2, 0, np.iinfo(np.int64).max, width=2)
            return hash_values(a[:, 1], dom, g) == a[:, :1]
        return f

    def hr(reps):
        y = as_int_array(reps, "HR reports", 1, 0, 1 << 62)
        return np.bitwise_count((dom[None, :] + 1) & y[:, None]) % 2 == 0

    return {
        "value": lambda reps: as_int_array(reps, "reports", 1, 0, d)[:, None] == dom[None, :],
        "bits": lambda reps: as_int_array(reps, "bit reports", 2, 0, 2, width=d).astype(bool),
        "subset": lambda reps: (as_int_array(reps, "SS reports", 2, 0, d)[:, :, None] == dom).any(axis=1),
        "lh": lh, "hr": hr,
        "packed": lambda reps: np.unpackbits(np.frombuffer(b"".join(reps), np.uint8).reshape(len(reps), -1),
                                             axis=1)[:, :d].astype(bool),
    }


def peer_clients(epsilon: float, d: int) -> list[PeerClient]:
    """Every installed peer client at (ε, d), wrapped; each with its claimed ε.

    Parameters
    ----------
    epsilon : float
        The ε each client is configured with (pure-ldp's HR: min(ε, 1)).
    d : int
        Domain size.

    Returns
    -------
    list of PeerClient
        pure-ldp's, multi-freq-ldpy's and OpenDP's clients, whichever are installed.

    Examples
    --------
    >>> from ldpopt.interop.audit_peers import peer_clients
    >>> [c.label for c in peer_clients(1.0, 4)][:2]  # doctest: +SKIP
    ['pure-ldp DE', 'pure-ldp UE (SUE)']

    (Skipped: needs the ``peers`` extra; importing the peer libraries takes seconds.)
    """
    import importlib.util

    from ._common import peer_g
    from .multi_freq_ldpy import sub_k

    sup = support_functions(d)
    out: list[PeerClient] = []
    if importlib.util.find_spec("pure_ldp"):
        from pure_ldp.frequency_oracles import direct_encoding as de
        from pure_ldp.frequency_oracles import hadamard_response as hrm
        from pure_ldp.frequency_oracles import local_hashing as lhm
        from pure_ldp.frequency_oracles import unary_encoding as ue

        g = peer_g(epsilon, None, True)
        hr_eps = min(epsilon, 1.0)
        clients = [
            ("pure-ldp DE", "grr", {}, de.DEClient(epsilon, d), sup["value"], epsilon),
            ("pure-ldp UE (SUE)", "sue", {}, ue.UEClient(epsilon, d), sup["bits"], epsilon),
            ("pure-ldp UE (OUE)", "oue", {}, ue.UEClient(epsilon, d, use_oue=True), sup["bits"], epsilon),
            ("pure-ldp LH (g=2)", "olh", {"g": 2}, lhm.LHClient(epsilon, d), sup["lh"](2), epsilon),
            ("pure-ldp LH (OLH)", "olh", {"g": g}, lhm.LHClient(epsilon, d, use_olh=True), sup["lh"](g), epsilon),
            ("pure-ldp FastLH (OLH, k=64)", "olh", {"g": g}, lhm.FastLHClient(epsilon, d, 64, use_olh=True),
             sup["lh"](g), epsilon),
            (f"pure-ldp HR (ε={hr_eps:g})", "hr", {}, hrm.HadamardResponseClient(hr_eps, d, None), sup["hr"], hr_eps),
        ]
        for label, name, kw, cl, s, eps in clients:
            out.append(PeerClient(label, oracles.get(name, eps, d, **kw), lambda v, cl=cl: cl.privatise(v + 1), s))
    if importlib.util.find_spec("multi_freq_ldpy"):
        from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

        g = peer_g(epsilon, None, True)
        out += [
            PeerClient("multi-freq-ldpy GRR", oracles.get("grr", epsilon, d),
                       lambda v: GRR.GRR_Client(v, d, epsilon), sup["value"]),
            PeerClient("multi-freq-ldpy UE (OUE)", oracles.get("oue", epsilon, d),
                       lambda v: UE.UE_Client(v, d, epsilon, True), sup["bits"]),
            PeerClient("multi-freq-ldpy LH (OLH)", oracles.get("olh", epsilon, d, g=g),
                       lambda v: LH.LH_Client(v, d, epsilon, True), sup["lh"](g)),
            PeerClient("multi-freq-ldpy SS", oracles.get("ss", epsilon, d, k=sub_k(epsilon, d)),
                       lambda v: SS.SS_Client(v, d, epsilon), sup["subset"]),
        ]
    if importlib.util.find_spec("opendp"):
        import opendp.prelude as dp

        dp.enable_features("contrib")
        cats = list(range(d))
        prob = 1.0 / (1.0 + (d - 1) * np.exp(-epsilon))
        rr = dp.m.make_randomized_response(categories=cats, prob=prob)
        f = 2.0 / (1.0 + np.exp(epsilon / 2))
        bv = dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=1), dp.discrete_distance(), f=f)
        nb = (d + 7) // 8
        onehot = [np.packbits(np.eye(8 * nb, dtype=np.uint8)[v]).tobytes() for v in range(d)]
        out += [
            PeerClient(f"opendp RR (ε from map {rr.map(1):.6g})", oracles.get("grr", epsilon, d),
                       lambda v: rr(v), sup["value"]),
            PeerClient(f"opendp RR bitvec (ε from map {bv.map(1):.6g})", oracles.get("sue", epsilon, d),
                       lambda v: bv(onehot[v]), sup["packed"]),
        ]
    return out
