"""Adapters to the peer LDP libraries, and the driver that measures one of them in a fresh process.

Runs in ``benchmarks/.peer-venv`` (made by ``setup_peers.sh``), never in ldpopt's venv:

    benchmarks/.peer-venv/bin/python benchmarks/peers.py '{"lib": "pure-ldp", "oracle": "oue",
        "n": 1000000, "d": 1024, "epsilon": 1.0, "seed": 1, "counts": "/tmp/x.npy"}'

prints one JSON line: seconds (perturb + aggregate + estimate, time.perf_counter), the process's peak
RSS (ru_maxrss) and its RSS before the measured call, and a sanity number (max |f̂ − f|).

Each library is driven the way its own README shows:

* pure-ldp 1.2.0: one ``*Client`` and one ``*Server``; per user ``server.aggregate(client.privatise(v))``
  (streaming, so reports are not kept), then ``server.estimate_all(range(d))``.
* multi-freq-ldpy 0.2.5: ``reports = [X_Client(v, k, eps) for v in data]`` (a list of every report,
  as in its README), then ``X_Aggregator_MI(reports, ...)``.

Both loop over users in Python; that is the point of the comparison. multi-freq-ldpy's numba
functions are compiled by a 10-user warm-up before the clock starts (compilation is not counted).
The global ``random``/``np.random`` state both libraries use is seeded from ``seed``.

Class names matched to ldpopt's oracles (read from the peers' source):

=======  ==================================  ================================
ldpopt   pure-ldp                            multi-freq-ldpy
=======  ==================================  ================================
grr      DEClient/DEServer                   GRR_Client / GRR_Aggregator_MI
oue      UEClient/UEServer(use_oue=True)     UE_Client / UE_Aggregator_MI (optimal=True)
sue      UEClient/UEServer(use_oue=False)    UE_Client / UE_Aggregator_MI (optimal=False)
olh      LHClient/LHServer(use_olh=True)     LH_Client / LH_Aggregator_MI (optimal=True)
blh      LHClient/LHServer(g=2)              LH_Client / LH_Aggregator_MI (optimal=False)
hr       HadamardResponseClient/Server       —
ss       —                                   SS_Client / SS_Aggregator_MI
=======  ==================================  ================================

(pure-ldp's FastLH is a heuristic with k shared hash functions, not OLH; it is left out.)
"""

from __future__ import annotations

import json
import random
import resource
import sys
import time

SUPPORTED = {
    "pure-ldp": ("grr", "oue", "sue", "olh", "blh", "hr"),
    "multi-freq-ldpy": ("grr", "oue", "sue", "olh", "blh", "ss"),
}


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# -- pure-ldp -----------------------------------------------------------------------------------

def _pure_ldp_pair(oracle: str, eps: float, d: int):
    from pure_ldp.frequency_oracles import direct_encoding as de
    from pure_ldp.frequency_oracles import hadamard_response as hr
    from pure_ldp.frequency_oracles import local_hashing as lh
    from pure_ldp.frequency_oracles import unary_encoding as ue

    ident = lambda x: x  # noqa: E731 — our values are already 0..d-1 (pure-ldp's default maps x → x−1)
    if oracle == "grr":
        return de.DEClient(eps, d, index_mapper=ident), de.DEServer(eps, d, index_mapper=ident)
    if oracle in ("oue", "sue"):
        oue = oracle == "oue"
        return (ue.UEClient(eps, d, use_oue=oue, index_mapper=ident),
                ue.UEServer(eps, d, use_oue=oue, index_mapper=ident))
    if oracle in ("olh", "blh"):
        olh = oracle == "olh"
        return (lh.LHClient(eps, d, g=2, use_olh=olh, index_mapper=ident),
                lh.LHServer(eps, d, g=2, use_olh=olh, index_mapper=ident))
    if oracle == "hr":
        server = hr.HadamardResponseServer(eps, d, index_mapper=ident)
        client = hr.HadamardResponseClient(eps, d, server.get_hash_funcs(), index_mapper=ident)
        return client, server
    raise ValueError(f"pure-ldp has no adapter for oracle {oracle!r}")


def run_pure_ldp(oracle: str, values: list, eps: float, d: int):
    import numpy as np

    client, server = _pure_ldp_pair(oracle, eps, d)
    for v in values:
        server.aggregate(client.privatise(v))
    est = np.asarray(server.estimate_all(range(d), suppress_warnings=True), dtype=float)
    return est / len(values)  # pure-ldp estimates counts


# -- multi-freq-ldpy ----------------------------------------------------------------------------

def _mfl_funcs(oracle: str, eps: float, d: int):
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

    if oracle == "grr":
        return (lambda v: GRR.GRR_Client(v, d, eps)), (lambda r: GRR.GRR_Aggregator_MI(r, d, eps))
    if oracle in ("oue", "sue"):
        opt = oracle == "oue"
        return (lambda v: UE.UE_Client(v, d, eps, opt)), (lambda r: UE.UE_Aggregator_MI(r, eps, opt))
    if oracle in ("olh", "blh"):
        opt = oracle == "olh"
        return (lambda v: LH.LH_Client(v, d, eps, opt)), (lambda r: LH.LH_Aggregator_MI(r, d, eps, opt))
    if oracle == "ss":
        return (lambda v: SS.SS_Client(v, d, eps)), (lambda r: SS.SS_Aggregator_MI(r, d, eps))
    raise ValueError(f"multi-freq-ldpy has no adapter for oracle {oracle!r}")


def run_mfl(oracle: str, values: list, eps: float, d: int, warm=None):
    client, agg = _mfl_funcs(oracle, eps, d)
    if warm is not None:  # compile the numba functions outside the clock
        agg([client(v) for v in warm])
        return None
    reports = [client(v) for v in values]
    return agg(reports)


# -- ε-LDP check of the peers' OUE ---------------------------------------------------------------

def oue_privacy_ratio(lib: str, eps: float, d: int) -> dict:
    """Worst-case likelihood ratio of the peer's OUE, from the p, q its code uses.

    For a unary encoding with Pr[bit_v = 1 | x = v] = p and Pr[bit_u = 1 | x = v] = q (u ≠ v), the
    largest ratio Pr[y | v] / Pr[y | v'] over outputs y is p(1 − q) / (q(1 − p)); ε-LDP needs it ≤ e^ε.
    """
    import math

    if lib == "pure-ldp":
        from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer

        c, s = UEClient(eps, d, use_oue=True), UEServer(eps, d, use_oue=True)
        p, q = c.p, c.q
        where = "pure_ldp/frequency_oracles/unary_encoding/ue_client.py:40-42 (server: ue_server.py:34-36)"
        consistent = (s.p, s.q) == (p, q)
    else:
        # UE_Client is numba-compiled and keeps p, q local: they are read from its source.
        import inspect

        from multi_freq_ldpy.pure_frequency_oracles import UE

        src = inspect.getsource(UE.UE_Client.py_func)
        assert "p = 1 / 2" in src and "q = 1 / (np.exp(epsilon) + 1)" in src, "UE.py changed"
        p, q = 0.5, 1.0 / (math.exp(eps) + 1.0)
        where = "multi_freq_ldpy/pure_frequency_oracles/UE.py:36-37 (UE_Client, optimal=True)"
        consistent = True
    ratio = p * (1 - q) / (q * (1 - p))
    emp = oue_empirical(lib, eps)
    return {"lib": lib, "p": p, "q": q, "ratio": ratio, "e_eps": math.exp(eps),
            "satisfies_ldp": bool(ratio <= math.exp(eps) * (1 + 1e-12)),
            "client_server_agree": bool(consistent), "where": where, **emp}


def oue_empirical(lib: str, eps: float, d: int = 8, m: int = 100_000, seed: int = 7) -> dict:
    """What the client actually does: Pr[own bit = 1] and Pr[other bit = 1] from m reports of value 0.

    p/q attributes can be right while the sampling is wrong (pure-ldp ≤ 1.1.2 set the own bit to 1
    w.p. p *on top of* a Bernoulli(q) draw, so it was 1 w.p. p + (1 − p)q). The ratio
    p̂(1 − q̂)/(q̂(1 − p̂)) is compared with e^ε; its standard error is from the delta method.
    """
    import math

    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    if lib == "pure-ldp":
        from pure_ldp.frequency_oracles.unary_encoding import UEClient

        c = UEClient(eps, d, use_oue=True, index_mapper=lambda x: x)
        reps = np.array([c.privatise(0) for _ in range(m)], dtype=float)
    else:
        from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Client

        reps = np.array([UE_Client(0, d, eps, True) for _ in range(m)], dtype=float)
    ph, qh = reps[:, 0].mean(), reps[:, 1:].mean()
    r = ph * (1 - qh) / (qh * (1 - ph))
    # delta method: Var(log r) ≈ Var(p̂)/(p̂(1−p̂))² + Var(q̂)/(q̂(1−q̂))²
    se_log = math.sqrt(1 / (m * ph * (1 - ph)) + 1 / (m * (d - 1) * qh * (1 - qh)))
    return {"p_hat": ph, "q_hat": qh, "ratio_hat": r, "ratio_hat_se": r * se_log, "m": m,
            "empirical_ldp_ok": bool(r <= math.exp(eps) * math.exp(5 * se_log))}


# -- pure-ldp's LH server loop on given reports -------------------------------------------------

def lh_aggregate(eps: float, d: int, reports_path: str) -> dict:
    """pure-ldp's ``LHServer(use_olh=True).aggregate`` called once per report ``(y, seed)`` (rows of
    the (m, 2) array in ``reports_path``), as its README streams reports: the support counts it
    accumulates (``aggregated_data``) and the CPU / wall seconds of the loop."""
    import numpy as np
    from pure_ldp.frequency_oracles import local_hashing as lh

    pairs = np.load(reports_path).tolist()  # Python ints, what a per-report loop consumes
    server = lh.LHServer(eps, d, use_olh=True, index_mapper=lambda x: x)
    c0, t0 = time.process_time(), time.perf_counter()
    for y, seed in pairs:
        server.aggregate((y, seed))
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    return {"counts": [int(c) for c in server.aggregated_data], "cpu_seconds": cpu, "seconds": wall,
            "n": len(pairs), "g": server.g, "maxrss_mb": _maxrss_mb()}


# -- driver -------------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    import numpy as np

    cfg = json.loads(argv[1])
    if cfg.get("task") == "privacy":
        print(json.dumps([oue_privacy_ratio(lib, cfg["epsilon"], cfg["d"]) for lib in SUPPORTED]))
        return 0
    if cfg.get("task") == "lh_aggregate":
        print(json.dumps(lh_aggregate(float(cfg["epsilon"]), int(cfg["d"]), cfg["reports"])))
        return 0
    lib, oracle, eps, d, seed = cfg["lib"], cfg["oracle"], float(cfg["epsilon"]), int(cfg["d"]), cfg["seed"]
    if oracle not in SUPPORTED[lib]:
        raise ValueError(f"{lib} has no {oracle}")
    counts = np.load(cfg["counts"])
    n = int(counts.sum())
    # users laid out value by value, as Python ints (what a per-user loop consumes)
    values = np.repeat(np.arange(d), counts).tolist()
    random.seed(seed)
    np.random.seed(seed % (2**32))
    if lib == "pure-ldp":
        import pure_ldp.frequency_oracles  # noqa: F401 — imports are not part of the measurement
    if lib == "multi-freq-ldpy":
        run_mfl(oracle, values, eps, d, warm=values[:: max(1, n // 10)][:10])
    rss0 = _rss_mb()
    c0, t0 = time.process_time(), time.perf_counter()
    f_hat = run_pure_ldp(oracle, values, eps, d) if lib == "pure-ldp" else run_mfl(oracle, values, eps, d)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    f = counts / n
    out = {"seconds": seconds, "cpu_seconds": cpu, "rss_before_mb": rss0, "maxrss_mb": _maxrss_mb(),
           "linf_err": float(np.max(np.abs(np.asarray(f_hat, dtype=float) - f))), "n": n}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
