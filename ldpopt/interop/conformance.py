"""Conformance of the readers against the real peer libraries (needs the ``peers`` extra).

Notes: docs/notes/reliability.md, "ldpopt.interop.conformance"."""

from __future__ import annotations

import random
import warnings

import numpy as np

from .._extras import require
from .._validation import _check_int
from . import multi_freq_ldpy as M
from . import opendp as O
from . import pure_ldp as P

__all__ = ["CASES", "run_case", "seed_all"]


def seed_all(seed: int) -> None:
    """Seed every generator a peer library draws from: Python's ``random``, numpy's global one and
    numba's (when numba is installed), so that a peer's run is repeatable.

    Parameters
    ----------
    seed : int
        The seed of all three.

    Examples
    --------
    >>> import random
    >>> from ldpopt.interop.conformance import seed_all
    >>> seed_all(3); first = random.random()  # doctest: +SKIP
    >>> seed_all(3); first == random.random()  # doctest: +SKIP
    True

    (Skipped: each call compiles a small Numba function, 0.4 s.)
    """
    random.seed(seed)
    np.random.seed(seed)
    try:
        import numba

        @numba.njit
        def _seed(s):  # numba keeps its own generator; only a jitted call seeds it
            np.random.seed(s)

        _seed(seed)
    except ImportError:
        pass


def _pure(kind, eps, d, **kw):
    require("pure_ldp", "peers", "the pure-ldp conformance cases")
    from pure_ldp.frequency_oracles import direct_encoding as de
    from pure_ldp.frequency_oracles import hadamard_response as hr
    from pure_ldp.frequency_oracles import local_hashing as lh
    from pure_ldp.frequency_oracles import unary_encoding as ue

    if kind == "DE":
        cl, sv, rd = de.DEClient(eps, d), de.DEServer(eps, d), lambda r: P.read_de(r, eps, d)
    elif kind in ("UE", "OUE"):
        o = kind == "OUE"
        cl, sv, rd = ue.UEClient(eps, d, use_oue=o), ue.UEServer(eps, d, use_oue=o), lambda r: P.read_ue(r, eps, d, o)
    elif kind in ("LH", "OLH"):
        o = kind == "OLH"
        cl, sv = lh.LHClient(eps, d, use_olh=o), lh.LHServer(eps, d, use_olh=o)
        rd = lambda r: P.read_lh(r, eps, d, use_olh=o)
    elif kind == "FLH":
        k = kw.get("k", 64)
        # FastLHServer defaults to use_olh=True while FastLHClient defaults to False: pass it to both
        cl, sv = lh.FastLHClient(eps, d, k, use_olh=True), lh.FastLHServer(eps, d, k, use_olh=True)
        rd = lambda r: P.read_flh(r, eps, d, k, use_olh=True)
    elif kind == "HR":
        sv = hr.HadamardResponseServer(eps, d)
        cl, rd = hr.HadamardResponseClient(eps, d, sv.get_hash_funcs()), lambda r: P.read_hr(r, eps, d)
    else:
        raise ValueError(kind)

    def one(values):
        sv.reset()
        if kind == "FLH":  # FastLHServer.reset() leaves its per-seed hash_counts in place (peer bug)
            sv.hash_counts[:] = 0
        reps = [cl.privatise(int(v) + 1) for v in values]  # pure-ldp data items are 1..d
        for r in reps:
            sv.aggregate(r)
        part = rd(reps)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = np.array([sv.estimate(i + 1, suppress_warnings=True) for i in range(d)])
        peer_counts = None if kind == "HR" else np.asarray(sv.aggregated_data)
        if kind == "HR":  # the server keeps the raw outputs; its C_v count is what decode_string uses
            ys = np.asarray(sv.aggregated_data)
            peer_counts = np.array([np.sum(np.bitwise_count((v + 1) & ys) % 2 == 0) for v in range(d)])
        return part, peer_counts, est, P.peer_estimates(part)
    return one


def _mfl(kind, eps, d, **kw):
    require("multi_freq_ldpy", "peers", "the multi-freq-ldpy conformance cases")
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

    if kind == "GRR":
        cl, ag, rd = (lambda v: GRR.GRR_Client(v, d, eps)), (lambda r: GRR.GRR_Aggregator_MI(r, d, eps)), \
            (lambda r: M.read_grr(r, eps, d))
        cnt = lambda r: np.bincount(np.asarray(r), minlength=d)
    elif kind == "UE":
        cl, ag, rd = (lambda v: UE.UE_Client(v, d, eps, True)), (lambda r: UE.UE_Aggregator_MI(r, eps, True)), \
            (lambda r: M.read_ue(r, eps, d))
        cnt = lambda r: sum(r)
    elif kind == "LH":
        xxhash = require("xxhash", "peers", "the multi-freq-ldpy LH conformance case")

        g = round(np.exp(eps)) + 1
        cl, ag, rd = (lambda v: LH.LH_Client(v, d, eps, True)), (lambda r: LH.LH_Aggregator_MI(r, d, eps, True)), \
            (lambda r: M.read_lh(r, eps, d))
        cnt = lambda r: np.array([sum(y == xxhash.xxh32(str(v), seed=int(s)).intdigest() % g for y, s in r)
                                  for v in range(d)])
    elif kind == "SS":
        cl, ag, rd = (lambda v: SS.SS_Client(v, d, eps)), (lambda r: SS.SS_Aggregator_MI(r, d, eps)), \
            (lambda r: M.read_ss(r, eps, d))
        cnt = lambda r: np.bincount(np.concatenate(r), minlength=d)
    else:
        raise ValueError(kind)

    def one(values):
        reps = [cl(int(v)) for v in values]
        part = rd(reps)
        return part, np.asarray(cnt(reps)), ag(reps), M.peer_mi(part)
    return one


def _opendp(kind, eps, d, **kw):
    dp = require("opendp.prelude", "peers", "the OpenDP conformance cases")

    dp.enable_features("contrib")
    if kind == "RR":
        cats = [f"c{i}" for i in range(d)]
        prob = 1.0 / (1.0 + (d - 1) * np.exp(-eps))  # ε = ln(prob(t−1)/(1−prob))
        meas = dp.m.make_randomized_response(categories=cats, prob=prob)

        def one(values):
            reps = [meas(cats[int(v)]) for v in values]
            part = O.read_categorical(reps, cats, prob)
            return part, np.array([reps.count(c) for c in cats]), None, None
    elif kind == "bitvec":
        f = 2.0 / (1.0 + np.exp(eps / 2))  # ε = 2 ln((2 − f)/f)
        meas = dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=1), dp.discrete_distance(), f=f)
        nb = (d + 7) // 8

        def one(values):
            onehot = np.zeros((len(values), 8 * nb), np.uint8)
            onehot[np.arange(len(values)), values] = 1
            reps = [meas(np.packbits(row).tobytes()) for row in onehot]
            part = O.read_bitvec(reps, d, f)
            bits = np.unpackbits(np.frombuffer(b"".join(reps), np.uint8).reshape(len(reps), nb), axis=1)[:, :d]
            return part, bits.sum(axis=0), None, None
    else:
        raise ValueError(kind)
    return one


CASES = {
    ("pure-ldp", "DE (GRR)"): (_pure, "DE"), ("pure-ldp", "UE (SUE)"): (_pure, "UE"),
    ("pure-ldp", "UE (OUE)"): (_pure, "OUE"), ("pure-ldp", "LH (BLH, g=2)"): (_pure, "LH"),
    ("pure-ldp", "LH (OLH)"): (_pure, "OLH"), ("pure-ldp", "FastLH (k=64)"): (_pure, "FLH"),
    ("pure-ldp", "HR (ε≤1)"): (_pure, "HR"),
    ("multi-freq-ldpy", "GRR"): (_mfl, "GRR"), ("multi-freq-ldpy", "UE (OUE)"): (_mfl, "UE"),
    ("multi-freq-ldpy", "LH (OLH)"): (_mfl, "LH"), ("multi-freq-ldpy", "SS"): (_mfl, "SS"),
    ("opendp", "randomized response (GRR)"): (_opendp, "RR"), ("opendp", "bit vector (SUE)"): (_opendp, "bitvec"),
}


def run_case(case, eps: float = 1.0, true=(40, 0, 10, 20, 30, 0, 25, 25), reps: int = 60, seed: int = 0) -> dict:
    """Run one case (see the module notes); ``true`` is the histogram of one repetition.

    Parameters
    ----------
    case : tuple of str
        A key of ``CASES``: (library, the peer's oracle), e.g. ``("pure-ldp", "DE (GRR)")``.
    eps : float, default 1.0
        ε of the peer's mechanism.
    true : sequence of int, default (40, 0, 10, 20, 30, 0, 25, 25)
        The population's histogram.
    reps : int, default 60
        Repetitions, >= 1.
    seed : int, default 0
        Seed of every generator the peer draws from (:func:`seed_all`).

    Returns
    -------
    dict
        ``library``, ``oracle``, ``ldpopt`` (the oracle read as), ``epsilon``, ``d``, ``n``, ``reps``,
        ``counts_equal``, ``max_abs_diff`` (None for OpenDP) and ``max_abs_z``.

    Raises
    ------
    KeyError
        ``case`` is not a key of ``CASES``.
    ValueError
        ``reps`` below 1.
    ImportError
        The peer library is not installed (the ``peers`` extra).

    Examples
    --------
    >>> from ldpopt.interop.conformance import run_case
    >>> result = run_case(("pure-ldp", "DE (GRR)"), reps=5)  # doctest: +SKIP
    >>> result["counts_equal"], result["max_abs_diff"] < 1e-12  # doctest: +SKIP
    (True, True)

    (Skipped: needs the ``peers`` extra, and importing a peer library takes seconds.)
    """
    reps = _check_int(reps, "reps", 1)
    make, kind = CASES[case]
    true = np.asarray(true)
    d, n = len(true), int(np.sum(true))
    one = make(kind, eps, d)
    seed_all(seed)
    values = np.repeat(np.arange(d), true)
    equal, diff, ests = True, 0.0, []
    part = None
    for _ in range(reps):
        part, peer_counts, peer_est, our_est = one(values)
        equal &= bool(np.array_equal(part.counts, np.asarray(peer_counts, dtype=np.int64)))
        if peer_est is not None:
            diff = max(diff, float(np.max(np.abs(np.asarray(peer_est, float) - our_est))))
        ests.append(part.finalize().f_tilde)
    assert part is not None  # reps >= 1
    f = true / n
    var = part.build_oracle().variance(f, n)
    z = (np.mean(ests, axis=0) - f) / np.sqrt(var / reps)
    return {"library": case[0], "oracle": case[1], "ldpopt": part.oracle, "epsilon": eps, "d": d, "n": n,
            "reps": reps, "counts_equal": equal, "max_abs_diff": diff if case[0] != "opendp" else None,
            "max_abs_z": float(np.max(np.abs(z)))}
