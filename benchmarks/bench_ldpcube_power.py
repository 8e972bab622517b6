"""LDP³'s Power variance, measured: its code (github.com/alrzakh/LDPcube, IFIP SEC 2025) run in its own
interpreter on the same estimates as ldpopt's Power, as LDP³ calls it and with the variance corrected.

The defect read in ``ldpcube.py``: ``postprocess(..., original_data=counts_list, ...)`` receives the
per-value true counts where the raw data (one value per user) are expected, so ``pop_size =
len(counts_list) = d`` and ``dom_size = len(set(counts_list))`` (the number of distinct counts). Power
(``post_processing/power.py``) then works on counts with the Gaussian noise variance ``var = variance ·
Σ counts = V·N/d`` where the count-scale variance of the estimate is N·V (V = n·Var f̃ without the f
term, ``protocols/variance.py``): d times too small for OUE, OLH, BLH and RAPPOR (V does not depend
on d), and for GRR and SS also computed with dom_size in place of d.

Measured here on ldpopt's exact-in-law draws of the estimates (count scale N·f̃) of a Zipf(1.5)
population (n = 100,000, d = 256) for LDP³'s six protocols (RAPPOR is its basic one-hot RAPPOR =
ldpopt's SUE) and ε ∈ {1, 4}, ``--reps`` repetitions each (LDP³'s Power is a Python loop over the
domain with a 50,000-wide window: seconds a call):

* the variance LDP³ hands to Power as called, and corrected (``variance = V``, so var = N·V), their ratio;
* L1, L2, KL, EMD (LDP³'s own ``metrics/`` functions) of: LDP³'s seven methods as called (Base-Pos,
  Norm, Norm-Cut, Norm-Mul, Norm-Sub, Power, PowerNS), its Power/PowerNS with the variance corrected,
  and ldpopt's ``power``/``power-ns`` on the same estimates; mean ± SE over the repetitions;
* the win percentages among LDP³'s seven methods (:func:`ldpopt.experiments.winrate_report.win_table`)
  with Power/PowerNS as called and with them corrected: the effect of the defect on its ranking.

    python benchmarks/bench_ldpcube_power.py --anchor-python PY --anchor-src DIR [--quick] [--reps R]

``PY``: a Python with numpy 2.1.3 and xxhash 3.5.0 (LDP³'s requirements.txt); ``DIR``: a checkout of
github.com/alrzakh/LDPcube. ``--quick``: OUE at ε = 1, 2 repetitions. Writes ``results/ldpcube_power.json``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H

from ldpopt import methods, oracles
from ldpopt.experiments.winrate_report import win_table

#: LDP³ protocol -> ldpopt oracle
PROTOCOLS = {"grr": "grr", "blh": "blh", "olh": "olh", "rappor": "sue", "oue": "oue", "subset": "ss"}
LDPCUBE_METHODS = ("base_pos", "norm", "norm_cut", "norm_mul", "norm_sub", "power", "power_ns")

_ANCHOR_SIDE = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
from protocols.variance import calculate_variances
from post_processing import norm, norm_mul, norm_cut, norm_sub, base_pos, power
from metrics import l1_error, l2_error, kl_divergence
from metrics.EMD import earth_movers_distance
M = {"l1": l1_error, "l2": l2_error, "kl": kl_divergence, "emd": earth_movers_distance}
z = np.load(sys.argv[2])
proto, eps, counts = str(z["protocol"]), float(z["epsilon"]), [int(c) for c in z["counts"]]
N, d = sum(counts), len(counts)
freq = [c / N for c in counts]
# as ldpcube.py's postprocess() computes it from original_data = counts_list
var_called = calculate_variances(proto, eps, len(set(counts)), len(counts))
var_fixed = calculate_variances(proto, eps, d, 1)  # = V, so power()'s var = V * N, the count variance
out = {"var_called": var_called, "var_fixed": var_fixed}
rows = {k: [] for k in ("base_pos", "norm", "norm_cut", "norm_mul", "norm_sub", "power", "power_ns",
                        "power_fixed", "power_ns_fixed", "ldpopt_power", "ldpopt_power_ns")}
for est, mine, mine_ns in zip(z["est_counts"], z["ldpopt_power"], z["ldpopt_power_ns"]):
    est_norm = est / N
    for m, fn in (("base_pos", base_pos), ("norm", norm), ("norm_cut", norm_cut), ("norm_mul", norm_mul),
                  ("norm_sub", norm_sub)):
        rows[m].append(fn(est_norm.copy(), freq))
    for tag, v in (("", var_called), ("_fixed", var_fixed)):
        pw = power(est.copy(), counts, v)
        rows["power" + tag].append(pw)
        rows["power_ns" + tag].append(norm_sub(np.array(pw), freq))
    rows["ldpopt_power"].append(mine)
    rows["ldpopt_power_ns"].append(mine_ns)
for m, outs in rows.items():
    for name, fn in M.items():
        out[f"{m}:{name}"] = np.array([fn(np.asarray(o, dtype=float), freq) for o in outs])
np.savez(sys.argv[3], **out)
"""


def run(quick: bool = False, **opts) -> dict:
    """``opts``: ``anchor_python``, ``anchor_src`` (else LDPOPT_ANCHOR_PYTHON / LDPOPT_ANCHOR_SRC),
    ``reps``, ``out``."""
    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    env = H.anchor_env(a)
    if env is None:
        print(f"bench_ldpcube_power: {H.ANCHOR_NOT_RUN}")
        return {"not_run": H.ANCHOR_NOT_RUN}
    py, src = env
    a.command = "python benchmarks/bench_ldpcube_power.py --anchor-python PY --anchor-src DIR" + \
        (" --quick" if a.quick else "") + (f" --reps {a.reps}" if a.reps != 5 else "")
    reps = 2 if a.quick else a.reps
    protos = {"oue": "oue"} if a.quick else PROTOCOLS
    epsilons = [1.0] if a.quick else [1.0, 4.0]
    tc = H.zipf_counts(256, 100_000, s=1.5)
    n, f = int(tc.sum()), tc / tc.sum()
    rows, cells = [], []
    t0 = time.perf_counter()
    for proto, name in protos.items():
        for eps in epsilons:
            o = oracles.get(name, eps, tc.size)
            gen = np.random.default_rng([2025, list(PROTOCOLS).index(proto), int(eps * 4)])
            ests = [o.estimate(o.sample_counts(tc, gen), n) for _ in range(reps)]
            mine = [methods.postprocess(e, "power") for e in ests]
            mine_ns = [methods.postprocess(e, "power-ns") for e in ests]
            with tempfile.TemporaryDirectory() as tmp:
                src_f, dst_f = Path(tmp) / "in.npz", Path(tmp) / "out.npz"
                np.savez(src_f, protocol=proto, epsilon=eps, counts=tc,
                         est_counts=np.array([e.f_tilde * n for e in ests]), ldpopt_power=np.array(mine),
                         ldpopt_power_ns=np.array(mine_ns))
                done = subprocess.run([py, "-c", _ANCHOR_SIDE, src, str(src_f), str(dst_f)], check=False,
                                      capture_output=True, text=True)
                if done.returncode:
                    raise RuntimeError(f"LDP³'s code failed on {proto} ε={eps}: {done.stderr.strip().splitlines()[-1:]}")
                z = {k: np.asarray(v) for k, v in np.load(dst_f).items()}
            cell = {"protocol": proto, "oracle": name, "epsilon": eps, "reps": reps,
                    "var_called": float(z["var_called"]), "var_fixed": float(z["var_fixed"]),
                    "count_var_called": float(z["var_called"]) * n, "count_var_fixed": float(z["var_fixed"]) * n,
                    "ratio_fixed_over_called": float(z["var_fixed"] / z["var_called"]), "distances": {}}
            for key, vals in z.items():
                if ":" not in key:
                    continue
                m, metric = key.split(":")
                cell["distances"].setdefault(m, {})[metric] = {"mean": float(vals.mean()),
                                                              "se": float(vals.std(ddof=1) / np.sqrt(reps))}
                for r, v in enumerate(vals):
                    rows.append({"oracle": proto, "epsilon": eps, "metric": metric, "rep": r, "method": m,
                                 "value": float(v)})
            cells.append(cell)
            print(f"{proto} ε={eps}: var ratio {cell['ratio_fixed_over_called']:.1f}", flush=True)
    t = pd.DataFrame(rows)
    rankings = {}
    for tag, swap in (("as_called", {}), ("corrected", {"power_fixed": "power", "power_ns_fixed": "power_ns"})):
        keep = [m for m in LDPCUBE_METHODS if m not in swap.values()] + list(swap)
        sub = t[t["method"].isin(keep)].replace({"method": swap})
        wt = win_table(sub)
        rankings[tag] = wt[["oracle", "epsilon", "metric", "method", "contests", "win", "win_se", "mean", "se"]] \
            .to_dict(orient="records")
        # pooled over the protocols and ε: each method's share of all contests, per metric
        pooled = sub.assign(cell=sub["oracle"] + "/" + sub["epsilon"].astype(str) + "/" + sub["rep"].astype(str))
        rankings[tag + "_pooled"] = win_table(pooled.drop(columns=["oracle", "epsilon", "rep"])
                                              .rename(columns={"cell": "rep"}))[["metric", "method", "contests", "win",
                                                                                   "win_se"]].to_dict(orient="records")
    return H.save("ldpcube_power", a, {"setting": {"dataset": "zipf s=1.5", "n": n, "d": int(tc.size),
                                                   "epsilons": epsilons, "reps": reps,
                                                   "protocols": protos},
                                       "wall_s": time.perf_counter() - t0, "cells": cells, "rankings": rankings,
                                       "truth_l1_norm": float(np.abs(f).sum())})


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="repetitions per protocol and ε (default 5)")
    ap.add_argument("--anchor-python", help="LDP³'s venv python (numpy 2.1.3, xxhash 3.5.0)")
    ap.add_argument("--anchor-src", help="a checkout of github.com/alrzakh/LDPcube")
    return ap


if __name__ == "__main__":
    H.cli(_parser(), run)
