"""Recovery from poisoned reports: the CCS 2025 anchors' own code beside ldpopt, on the same estimates.

Setting (the anchors' Zipf suite): Zipf(a = 1.5) with n = 10⁶ genuine users over d = 1,024 values
(``_harness.zipf_counts``), ε = 1, fake fraction β = 0.05 (m = βn/(1 − β) fake users, N = n + m),
10 targets drawn at random per repetition, the maximal gain attack (and input poisoning) on GRR, OUE
and OLH through ldpopt's exact fast paths (``ldpopt.robust.poisoned_estimate``). Every repetition's
poisoned estimate is written to a file; the anchors' functions then run on exactly those numbers in
their own interpreter and environment (``post_process/LDPRecover.py`` ``LDP_Recover``,
``post_process/Segmented_V2.py`` ``Segmented_V2`` = RSN, ``post_process/norm_sub.py``), called as their
``Recovery.py`` calls them (count scale n·f̃ with n the total number of users; LDP_Recover with
η = 0.2 as hard-coded there) and once more with the true η = m/n.

Metrics, as the anchors' ``Recovery.py`` computes them: MSE = mean over the d values of (f_v − f̂_v)²
against the genuine users' frequencies f; target gain = Σ_{t∈T} f̂_t − f_T. Mean and standard error
over the repetitions.

    python benchmarks/bench_poisoning_anchor.py --anchor-python PY --anchor-src DIR [--quick]

``PY``: a Python with numpy, scipy and sympy (the anchors' environment.yml pins numpy 1.24, sympy
1.12); ``DIR``: a checkout of github.com/Marvin-huoshan/MDPA_LDP (its ``post_process`` folder is
imported from there). Writes ``results/poisoning_anchor.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402

D, N, EPS, BETA, R_TARGETS = 1024, 1_000_000, 1.0, 0.05, 10

# runs in the anchors' interpreter: their functions on our estimates
_ANCHOR_SIDE = r"""
import sys, numpy as np, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1])
from post_process.LDPRecover import LDP_Recover
from post_process.Segmented_V2 import Segmented_V2
from post_process.norm_sub import NormSub
z = np.load(sys.argv[2])
proto = {"grr": "GRR", "oue": "OUE", "olh": "OLH_User"}[str(z["oracle"])]
out = {"ldprecover_as_called": [], "ldprecover_true_eta": [], "rsn": [], "norm_sub": []}
for est, n_tot, eta in zip(z["counts_scale"], z["n_total"], z["eta"]):
    n_tot = int(n_tot)
    out["ldprecover_as_called"].append(LDP_Recover(est.copy(), 0.2, float(z["epsilon"]), est.size, n_tot) / n_tot)
    out["ldprecover_true_eta"].append(LDP_Recover(est.copy(), float(eta), float(z["epsilon"]), est.size, n_tot) / n_tot)
    out["rsn"].append(np.asarray(Segmented_V2(est.copy(), n_tot, float(z["epsilon"]), proto), dtype=float) / n_tot)
    out["norm_sub"].append(NormSub(n_tot, None, None).calibrate(est.copy()) / n_tot)
np.savez(sys.argv[3], **{k: np.array(v) for k, v in out.items()})
"""


def _ldpopt_side(oracle_name: str, attack: str, reps: int, seed: int):
    from ldpopt import oracles, robust
    from ldpopt.methods.normalize import project_simplex

    o = oracles.get(oracle_name, epsilon=EPS, d=D)
    tc = H.zipf_counts(D, N)
    f = tc / tc.sum()
    gen = np.random.default_rng(seed)
    ests, targets, out = [], [], {"raw": [], "norm_sub": [], "ldprecover": [], "rsn": [], "mixture": []}
    checks = []
    for _ in range(reps):
        t = np.sort(gen.choice(D, R_TARGETS, replace=False))
        est = robust.poisoned_estimate(o, tc, attack, t, BETA, gen)
        s = robust.suspects(est.f_tilde, R_TARGETS)
        sol = robust.recover(est, "mixture", beta=BETA, suspects=s)
        checks.append(sol.status)
        for k, v in (("raw", est.f_tilde), ("norm_sub", project_simplex(est.f_tilde)),
                     ("ldprecover", robust.ldprecover(est, BETA)), ("rsn", robust.rsn(est)), ("mixture", sol.f)):
            out[k].append(v)
        ests.append(est)
        targets.append(t)
    return f, ests, targets, {k: np.array(v) for k, v in out.items()}, checks


def _metrics(f, outs: np.ndarray, targets) -> dict:
    mse = ((outs - f) ** 2).mean(axis=1)
    gain = np.array([o[t].sum() - f[t].sum() for o, t in zip(outs, targets)])
    k = outs.shape[0]
    return {"mse": float(mse.mean()), "mse_se": float(mse.std(ddof=1) / np.sqrt(k)) if k > 1 else None,
            "gain": float(gain.mean()), "gain_se": float(gain.std(ddof=1) / np.sqrt(k)) if k > 1 else None}


def run(quick: bool = False, **opts) -> dict:
    """``opts``: ``anchor_python`` (the anchor venv's python) and ``anchor_src`` (its source folder),
    else the LDPOPT_ANCHOR_PYTHON / LDPOPT_ANCHOR_SRC environment variables."""
    anchor_python = opts.get("anchor_python") or os.environ.get("LDPOPT_ANCHOR_PYTHON")
    anchor_src = opts.get("anchor_src") or os.environ.get("LDPOPT_ANCHOR_SRC")
    if not anchor_python or not anchor_src:
        # the anchor's code lives in its own venv outside the repository: without it (make bench,
        # bench-quick) this bench says so instead of stopping the run
        reason = "not run: give --anchor-python and --anchor-src (or LDPOPT_ANCHOR_PYTHON / LDPOPT_ANCHOR_SRC)"
        print(f"bench_poisoning_anchor: {reason}")
        return {"not_run": reason}
    reps = 3 if quick else 30
    rows = []
    for oracle_name in ("grr", "oue", "olh"):
        for attack in ("mga", "input"):
            t0 = time.process_time()
            f, ests, targets, ours, checks = _ldpopt_side(oracle_name, attack, reps, seed=29)
            with tempfile.TemporaryDirectory() as tmp:
                src = Path(tmp) / "in.npz"
                dst = Path(tmp) / "out.npz"
                np.savez(src, oracle=oracle_name, epsilon=EPS,
                         counts_scale=np.array([e.f_tilde * e.n for e in ests]),
                         n_total=np.array([e.n for e in ests]),
                         eta=np.array([e.meta["fake_users"] / (e.n - e.meta["fake_users"]) for e in ests]))
                subprocess.run([anchor_python, "-c", _ANCHOR_SIDE, anchor_src, str(src), str(dst)], check=True)
                z = np.load(dst)
                theirs = {k: z[k] for k in z.files}
            base = {"oracle": oracle_name, "attack": attack, "reps": reps, "mixture_checks_optimal":
                    int(sum(c == "optimal" for c in checks))}
            for k, v in ours.items():
                rows.append({**base, "code": "ldpopt", "method": k, **_metrics(f, v, targets)})
            for k, v in theirs.items():
                rows.append({**base, "code": "anchor", "method": k, **_metrics(f, v, targets)})
            # the same method in both codes, entry by entry
            rows.append({**base, "code": "both", "method": "rsn max|ldpopt - anchor|",
                         "value": float(np.abs(ours["rsn"] - theirs["rsn"]).max())})
            rows.append({**base, "code": "both", "method": "ldprecover (true eta) max|ldpopt - anchor|",
                         "value": float(np.abs(ours["ldprecover"] - theirs["ldprecover_true_eta"]).max())})
            rows.append({**base, "code": "both", "method": "norm_sub max|ldpopt - anchor|",
                         "value": float(np.abs(ours["norm_sub"] - theirs["norm_sub"]).max())})
            print(f"{oracle_name} {attack}: {time.process_time() - t0:.1f} s CPU", flush=True)
    result = {"machine": H.environment(), "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "command": "python benchmarks/bench_poisoning_anchor.py --anchor-python PY --anchor-src DIR"
                         + (" --quick" if quick else ""),
              "setting": {"d": D, "n": N, "epsilon": EPS, "beta": BETA, "targets": R_TARGETS, "dataset": "zipf a=1.5"},
              "rows": rows}
    name = "poisoning_anchor_quick.json" if quick else "poisoning_anchor.json"
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / name).write_text(json.dumps(result, indent=1))
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--anchor-python")
    ap.add_argument("--anchor-src")
    a = ap.parse_args()
    if not (a.anchor_python or os.environ.get("LDPOPT_ANCHOR_PYTHON")) or not (
            a.anchor_src or os.environ.get("LDPOPT_ANCHOR_SRC")):
        raise SystemExit("give --anchor-python and --anchor-src (or LDPOPT_ANCHOR_PYTHON / LDPOPT_ANCHOR_SRC)")
    res = run(a.quick, anchor_python=a.anchor_python, anchor_src=a.anchor_src)
    for r in res["rows"]:
        if "mse" in r:
            print(f"{r['oracle']:4} {r['attack']:6} {r['code']:7} {r['method']:22} mse {r['mse']:.3e} gain {r['gain']:+.4f}")
        else:
            print(f"{r['oracle']:4} {r['attack']:6} {r['method']:44} {r['value']:.2e}")


if __name__ == "__main__":
    main()
