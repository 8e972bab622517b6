"""RWS, RUE and RLH against the authors' own code (Fang, Chen & Liu, USENIX Security 2025;
github.com/SEUNICK/LDP_Frequency_Protocols, ``fp/``), run in its own interpreter, and the paper's
accuracy comparison side by side with GRR/OUE/OLH/SS.

1. **Parameters** on a grid of ε × d (ε ∈ {0.25, 0.5, …, 6}, d ∈ {2, 3, 4, 5, 8, 16, …, 4096}): the
   authors' k (RWS), g (RLH), p*, q* (``pure_p``, ``pure_q``) and analytic MSE (``get_ana_MSE``) against
   ldpopt's ``k``, ``g``, ``p``, ``q`` and ``oracles.reoptimized.mean_mse``: max |difference| and the
   number of cells where the integer parameter differs.
2. **The same reports**: the authors' clients (``perturb_data_list``; RWS with seeds in [0, n) as their
   ``perturb_data_list_mp`` draws them) perturb a Zipf population, their ``aggregate_data_list``
   estimates. ldpopt then estimates from the same reports: RUE's packed bit vectors are read by
   ``RUE.aggregate`` directly (the same np.packbits layout); RWS's and RLH's (y, seed) name subsets /
   hash functions through ``numpy.random.default_rng(seed)``, which the anchor side evaluates (their
   own lines) into support counts that ``RWS/RLH.estimate`` turns into f̃. Reported: max |ldpopt −
   authors| of the count-scale estimates, and the χ² of the d z-scores of the authors' support counts
   against ldpopt's law (mean n_v p + (n − n_v) q, variance n_v p(1 − p) + (n − n_v) q(1 − q)), with its
   p-value; ldpopt's own real path on the same histogram beside it.
3. **Accuracy** (the paper's comparison over ε, its main.py settings): Zipf s = 1.1, n = 100,000 users
   drawn by the authors' ``generate_zipf_data`` (seed 6), d = 128, ε ∈ {1, 2, 3, 4, 5}: MSE = mean over
   v of (f̂_v − f_v)² for GRR, OUE, OLH, SS, RUE, RLH, RWS — the authors' code (``--anchor-reps`` runs;
   their 100 take hours of per-user Python), ldpopt's fast path (``--reps`` draws, mean ± s.e.),
   ldpopt's real path for RUE/RLH/RWS (3 runs) and the analytic mean_mse/n. The paper publishes this
   comparison as figures only; the authors' numbers here are those of their code.

    python benchmarks/bench_rws_conformance.py --anchor-python PY --anchor-src DIR [--quick]

``PY``: a Python with numpy 1.26.4 and xxhash (the authors' requirements.txt); ``DIR``: a checkout of
github.com/SEUNICK/LDP_Frequency_Protocols (its ``fp`` package is imported from there).
``--quick``: a small grid, n = 2,000, ε = 4 only. Writes ``results/rws_conformance.json``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H

from ldpopt import oracles
from ldpopt.oracles.reoptimized import mean_mse

PROTOCOLS = ("GRR", "OUE", "OLH", "SS", "RUE", "RLH", "RWS")

# runs in the authors' interpreter
_ANCHOR_SIDE = r"""
import sys, json, numpy as np
sys.path.insert(0, sys.argv[1])
from fp.GRR import GRR
from fp.OUE import OUE
from fp.OLH import OLH
from fp.SS import SS
from fp.RUE import RUE
from fp.RLH import RLH
from fp.RWS import RWS
mode, cfg = sys.argv[2], json.loads(sys.argv[3])
P = {"GRR": GRR, "OUE": OUE, "OLH": OLH, "SS": SS, "RUE": RUE, "RLH": RLH, "RWS": RWS}

def zipf(s, d, n):  # main.py's generate_zipf_data, verbatim in effect (seed 6, first draw discarded)
    rng = np.random.default_rng(6)
    v = np.arange(1, d + 1)
    p = 1.0 / np.power(v, s)
    p /= np.sum(p)
    rng.choice(v, size=n, replace=True, p=p)
    return rng.choice(v, size=n, replace=True, p=p) - 1

def run(name, prot, values):
    n = values.size
    if name in ("OUE", "SS", "RUE"):
        return prot.aggregate_data_list_sum(prot.perturb_data_list_sum(values), n), None
    if name == "RWS":
        rep = prot.perturb_data_list(values, n)
    else:
        rep = prot.perturb_data_list(values)
    return prot.aggregate_data_list(rep), rep

if mode == "params":
    rows = []
    for eps, d in cfg["grid"]:
        row = {"epsilon": eps, "d": d}
        for name in ("RWS", "RUE", "RLH", "OUE", "OLH", "SS", "GRR"):
            prot = P[name](eps, d, 1)
            row[name] = {"p": float(prot.pure_p), "q": float(prot.pure_q), "mse": float(prot.get_ana_MSE()),
                         "k": int(getattr(prot, "k", 0)), "g": int(getattr(prot, "g", 0))}
        rows.append(row)
    print(json.dumps(rows))
elif mode == "reports":
    values = np.repeat(np.arange(cfg["d"]), np.load(cfg["counts"]))
    out = {}
    for name in ("RUE", "RLH", "RWS"):
        prot = P[name](cfg["epsilon"], cfg["d"], 1)
        d, n = cfg["d"], values.size
        if name == "RUE":
            rep = prot.perturb_data_list(values)
            est = prot.aggregate_data_list(rep)
            out[name + "_reports"] = rep
        else:
            rep = prot.perturb_data_list(values, n) if name == "RWS" else prot.perturb_data_list(values)
            est = prot.aggregate_data_list(rep)
            c = np.zeros(d)
            for y, seed in rep:  # the support of each report, as their aggregate_data_list computes it
                if name == "RWS":
                    sub = np.random.default_rng(seed).choice(d, prot.k, replace=False)
                    c[(sub + y) % d] += 1
                else:
                    c[np.random.default_rng(seed).integers(prot.g, size=d) == y] += 1
            out[name + "_support"] = c
        out[name + "_estimate"] = est
    np.savez(cfg["out"], **out)
elif mode == "accuracy":
    values = zipf(1.1, cfg["d"], cfg["n"])
    true = np.bincount(values, minlength=cfg["d"]).astype(float)
    rows = []
    for eps in cfg["epsilons"]:
        for name in cfg["protocols"]:
            mses, secs = [], []
            for r in range(cfg["reps"]):
                import time
                t0 = time.process_time()
                est, _ = run(name, P[name](eps, cfg["d"], 1), values)
                secs.append(time.process_time() - t0)
                mses.append(float(np.mean((est - true) ** 2)) / values.size ** 2)
            rows.append({"protocol": name, "epsilon": eps, "mse": mses, "cpu_s": secs})
    print(json.dumps({"true_counts": true.tolist(), "rows": rows}))
"""


def _anchor(py: str, src: str, mode: str, cfg: dict) -> str:
    done = subprocess.run([py, "-c", _ANCHOR_SIDE, src, mode, json.dumps(cfg)], check=False, capture_output=True,
                          text=True)
    if done.returncode:
        raise RuntimeError(f"the authors' code failed in mode {mode}: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout


def _ours(name: str, eps: float, d: int):
    return oracles.get(name.lower(), eps, d)


def parameters(py: str, src: str, quick: bool) -> dict:
    """Part 1: the authors' k, g, p*, q*, analytic MSE against ldpopt's on a grid."""
    eps = [1.0, 4.0] if quick else [x / 4 for x in range(1, 25)]
    ds = [2, 8, 128] if quick else [2, 3, 4, 5, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    grid = [(e, d) for e in eps for d in ds]
    theirs = json.loads(_anchor(py, src, "params", {"grid": grid}))
    out = {}
    for name in ("RWS", "RUE", "RLH", "OUE", "OLH", "SS", "GRR"):
        dp = dq = dm = rel_m = 0.0
        int_diff = []
        for row in theirs:
            o, t = _ours(name, row["epsilon"], row["d"]), row[name]
            dp, dq = max(dp, abs(o.p - t["p"])), max(dq, abs(o.q - t["q"]))
            m = float(mean_mse(o.p, o.q, o.d))
            dm, rel_m = max(dm, abs(m - t["mse"])), max(rel_m, abs(m - t["mse"]) / t["mse"])
            for attr in ("k", "g"):
                if t[attr] and getattr(o, attr) != t[attr]:
                    int_diff.append({"epsilon": row["epsilon"], "d": row["d"], attr: [getattr(o, attr), t[attr]]})
        out[name] = {"cells": len(theirs), "max_abs_p": dp, "max_abs_q": dq, "max_abs_mse": dm,
                     "max_rel_mse": rel_m, "integer_parameter_differs": int_diff}
    return {"epsilons": eps, "ds": ds, "protocols": out}


def _law_chi2(c: np.ndarray, tc: np.ndarray, o) -> dict:
    """χ² of the d z-scores of support counts c against the oracle's per-value law (module docstring)."""
    from scipy.stats import chi2

    n = int(tc.sum())
    mean = tc * o.p + (n - tc) * o.q
    var = tc * o.p * (1 - o.p) + (n - tc) * o.q * (1 - o.q)
    x2 = float(np.sum((c - mean) ** 2 / var))
    return {"chi2": x2, "dof": int(tc.size), "p_value": float(chi2.sf(x2, tc.size))}


def same_reports(py: str, src: str, quick: bool) -> list[dict]:
    """Part 2: the authors' reports, their estimates and ldpopt's on the same reports."""
    rows = []
    settings = [(4.0, 128, 2_000)] if quick else [(1.0, 16, 20_000), (4.0, 128, 20_000), (2.0, 1024, 10_000)]
    for eps, d, n in settings:
        tc = H.zipf_counts(d, n, s=1.1)
        with tempfile.TemporaryDirectory() as tmp:
            cf, of = Path(tmp) / "tc.npy", Path(tmp) / "out.npz"
            np.save(cf, tc)
            t0 = time.perf_counter()
            _anchor(py, src, "reports", {"epsilon": eps, "d": d, "counts": str(cf), "out": str(of)})
            wall = time.perf_counter() - t0
            z = {k: np.asarray(v) for k, v in np.load(of).items()}
        for name in ("RUE", "RLH", "RWS"):
            o = _ours(name, eps, d)
            if name == "RUE":
                c = o.aggregate(z["RUE_reports"].astype(np.uint8), device="numpy")
            else:
                c = z[name + "_support"]
            mine = o.estimate(c, n).f_tilde * n
            real = o.aggregate(o.perturb(np.repeat(np.arange(d), tc), np.random.default_rng([7, d])), device="numpy")
            rows.append({"protocol": name, "epsilon": eps, "d": d, "n": n, "anchor_wall_s": wall,
                         "max_abs_count_estimate_diff": float(np.max(np.abs(mine - z[name + "_estimate"]))),
                         "anchor_reports_law": _law_chi2(np.asarray(c, float), tc, o),
                         "ldpopt_real_path_law": _law_chi2(real.astype(float), tc, o)})
    return rows


def accuracy(py: str, src: str, quick: bool, reps: int, anchor_reps: int) -> dict:
    """Part 3: MSE over ε, the authors' code beside ldpopt's paths and the analytic value."""
    d, n = 128, (2_000 if quick else 100_000)
    epsilons = [4.0] if quick else [1.0, 2.0, 3.0, 4.0, 5.0]
    t0 = time.perf_counter()
    theirs = json.loads(_anchor(py, src, "accuracy", {"d": d, "n": n, "epsilons": epsilons, "protocols": list(PROTOCOLS),
                                                      "reps": anchor_reps}))
    anchor_wall = time.perf_counter() - t0
    tc = np.asarray(theirs["true_counts"], dtype=np.int64)
    f = tc / n
    rows = []
    for t in theirs["rows"]:
        o = _ours(t["protocol"], t["epsilon"], d)
        gen = np.random.default_rng([11, int(t["epsilon"] * 4), PROTOCOLS.index(t["protocol"])])
        fast = np.array([np.mean((o.estimate(o.sample_counts(tc, gen), n).f_tilde - f) ** 2) for _ in range(reps)])
        row = {"protocol": t["protocol"], "epsilon": t["epsilon"], "analytic": float(np.mean(o.variance(f, n))),
               "analytic_uniform_f": float(mean_mse(o.p, o.q, d)) / n,
               "ldpopt_fast_mean": float(fast.mean()), "ldpopt_fast_se": float(fast.std(ddof=1) / math.sqrt(reps)),
               "anchor_mse": t["mse"], "anchor_mean": float(np.mean(t["mse"])), "anchor_cpu_s": t["cpu_s"]}
        if t["protocol"] in ("RUE", "RLH", "RWS"):
            values = np.repeat(np.arange(d), tc)
            real = [np.mean((o.estimate(o.aggregate(o.perturb(values, gen), device="numpy"), n).f_tilde - f) ** 2)
                    for _ in range(1 if quick else 3)]
            row["ldpopt_real_mean"] = float(np.mean(real))
        rows.append(row)
    return {"d": d, "n": n, "zipf_s": 1.1, "epsilons": epsilons, "reps": reps, "anchor_reps": anchor_reps,
            "anchor_wall_s": anchor_wall, "rows": rows}


def run(quick: bool = False, **opts) -> dict:
    """``opts``: ``anchor_python``, ``anchor_src`` (else LDPOPT_ANCHOR_PYTHON / LDPOPT_ANCHOR_SRC),
    ``reps``, ``anchor_reps``, ``out``."""
    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    env = H.anchor_env(a)
    if env is None:
        print(f"bench_rws_conformance: {H.ANCHOR_NOT_RUN}")
        return {"not_run": H.ANCHOR_NOT_RUN}
    py, src = env
    a.command = "python benchmarks/bench_rws_conformance.py --anchor-python PY --anchor-src DIR" + \
        (" --quick" if a.quick else "")
    reps = 20 if a.quick else a.reps
    doc = {"parameters": parameters(py, src, a.quick), "same_reports": same_reports(py, src, a.quick),
           "accuracy": accuracy(py, src, a.quick, reps, 1 if a.quick else a.anchor_reps)}
    return H.save("rws_conformance", a, doc)


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200, help="ldpopt fast-path draws per accuracy cell (default 200)")
    ap.add_argument("--anchor-reps", type=int, default=1, help="runs of the authors' code per accuracy cell (default 1)")
    ap.add_argument("--anchor-python", help="the authors' venv python (numpy 1.26.4, xxhash)")
    ap.add_argument("--anchor-src", help="a checkout of github.com/SEUNICK/LDP_Frequency_Protocols")
    return ap


if __name__ == "__main__":
    H.cli(_parser(), run)
