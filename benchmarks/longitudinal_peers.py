"""Conformance of ldpopt's longitudinal oracles with multi-freq-ldpy 0.2.5's ``long_freq_est``, run in
the library's own environment (a Python given by ``--peer-python``, with multi-freq-ldpy installed).

Per oracle × (ε∞, ε₁, k):

* ``params``: max |Δ| of (p₁, q₁, p₂, q₂) — the library's closed forms against ldpopt's solved roots;
* ``mi``: the library's ``L_*_Aggregator_MI`` on ldpopt's reports (the same reports) against ldpopt's
  f̃ clipped and renormalised (the library's post-processing), max |Δ|;
* ``mi_same_params``: the same, ldpopt's estimator given the library's (p₁, q₁, p₂, q₂) — the estimator
  alone; ``library_eps_1_exact``: one report's exact ε under the library's (p₂, q₂). Its L-GRR solves
  p₂ from e^ε₁ = (p₁p₂ + q₁q₂)/(p₁q₂ + q₁p₂), the k = 2 case of one report's ratio
  (p₁p₂ + (1 − p₁)q₂)/(q₁p₂ + (1 − q₁)q₂); for k > 2 its one report is more private than the ε₁ it is
  given (ε₁ = 0.5 → 0.40 at ε∞ = 2, k = 5), so its L-GRR estimates are noisier than the ε₁ asked for;
  ldpopt solves the exact equation (enumeration agrees, tests/test_oracles_longitudinal.py);
* ``var0``: the library's ``VAR_Long_Pure`` at f = 0 against ldpopt's ``variance`` (Eq. 2) at f = 0
  (at f > 0 the library's is the variance under users drawn i.i.d. from f, sig(1 − sig) with
  sig = q + f(p − q); ldpopt's is for the fixed histogram; they differ by f²/n exactly);
* dBitFlipPM (b = k buckets): the library's ``dBitFlipPM_Aggregator_MI`` against ldpopt's
  ``ding_estimate`` clipped and renormalised, and its clients' counts against ldpopt's exact law;
* ``client_z``: the library's own clients on n users (its reports, counted by ldpopt's ``aggregate``)
  against ldpopt's exact expected counts n_v p + (n − n_v) q: the largest |z| over values.

Run: ``python benchmarks/longitudinal_peers.py --peer-python /path/to/venv/bin/python``; writes
benchmarks/results/longitudinal_peers.json and .md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ldpopt.interop._common import clip_renormalise
from ldpopt.oracles.longitudinal import DBitFlipPM, longitudinal_oracle

_PEER = r"""
import json, sys
import numpy as np
from multi_freq_ldpy.long_freq_est import L_GRR, L_SUE, L_SOUE, L_OUE, L_OSUE
from multi_freq_ldpy.long_freq_est.Variance_LONG_PURE import VAR_Long_Pure
from multi_freq_ldpy.estimators.Histogram_estimator import MI_long as orig
mods = {"l-grr": L_GRR, "l-sue": L_SUE, "l-soue": L_SOUE, "l-oue": L_OUE, "l-osue": L_OSUE}
cases = json.load(open(sys.argv[1]))
out = []
from multi_freq_ldpy.long_freq_est import dBitFlipPM as DB
for c in cases:
    if c["name"] == "dbitflippm":
        data = np.load(c["reports"])
        k, b = c["k"], c["bits"]
        mi = DB.dBitFlipPM_Aggregator_MI(list(data["reports"].astype(float)), k, b, c["eps_perm"])
        np.random.seed(c["seed"]); DB.np.random.seed(c["seed"])
        theirs = np.array([DB.dBitFlipPM_Client(int(v), k, k, b, c["eps_perm"]) for v in data["values"]])
        out.append({"mi": list(map(float, mi)), "params": [], "var0": 0.0,
                    "counts": list(map(int, (theirs == 1).sum(axis=0)))})
        continue
    m = mods[c["name"]]
    tag = c["name"][2:].upper()
    data = np.load(c["reports"])
    reports, values = data["reports"], data["values"]
    ep, e1, k = c["eps_perm"], c["eps_1"], c["k"]
    seen = {}
    def spy(count_report, n, p1, q1, p2, q2):  # the library's own (p1, q1, p2, q2), as its MI receives them
        seen.update(p1=p1, q1=q1, p2=p2, q2=q2)
        return orig(count_report, n, p1, q1, p2, q2)
    m.MI_long = spy
    if c["name"] == "l-grr":
        mi = m.L_GRR_Aggregator_MI(list(reports), k, ep, e1)
        np.random.seed(c["seed"])
        client = getattr(m, "L_GRR_Client")
        theirs = np.array([client(int(v), k, ep, e1) for v in values])
        counts = np.bincount(theirs, minlength=k)
    else:
        mi = getattr(m, "L_%s_Aggregator_MI" % tag)(reports.astype(float), ep, e1)
        client = getattr(m, "L_%s_Client" % tag)
        np.random.seed(c["seed"])
        counts = np.sum([client(int(v), k, ep, e1) for v in values], axis=0)
    var0 = VAR_Long_Pure(seen["p1"], seen["q1"], seen["p2"], seen["q2"], n=len(reports), f=0)
    out.append({"mi": list(map(float, mi)), "params": [float(seen[x]) for x in ("p1", "q1", "p2", "q2")],
                "var0": float(var0), "counts": list(map(int, counts))})
json.dump(out, open(sys.argv[2], "w"))
"""

SETTINGS = [(2.0, 0.5, 5), (4.0, 1.0, 5), (4.0, 2.0, 10)]
#: dBitFlipPM (ε, k, bits), Ding et al.'s estimator against the library's ``dBitFlipPM_Aggregator_MI`` (b = k)
DBIT_SETTINGS = [(2.0, 5, 1), (2.0, 5, 2), (4.0, 10, 3)]
NAMES = ["l-grr", "l-sue", "l-soue", "l-oue", "l-osue"]


def run(peer_python: str, n: int = 4000, seed: int = 0) -> dict:
    """Every oracle × setting; returns the rows (see the module docstring)."""
    rows, cases = [], []
    tmp = Path(tempfile.mkdtemp(prefix="ldpopt-longit-"))
    gen = np.random.default_rng(seed)
    for name in NAMES:
        for ep, e1, k in SETTINGS:
            o = longitudinal_oracle(name, ep, k, eps_1=e1)
            values = np.minimum(gen.geometric(0.35, size=n) - 1, k - 1)
            reports = o.clients(n, gen).report(values, gen)
            if name != "l-grr":
                reports = np.unpackbits(reports, axis=1, count=k)
            path = tmp / f"{name}_{ep}_{e1}_{k}.npz"
            np.savez(path, reports=reports, values=values)
            cases.append({"name": name, "eps_perm": ep, "eps_1": e1, "k": k, "reports": str(path),
                          "seed": int(seed)})
            counts = o.aggregate(reports if name == "l-grr" else np.packbits(reports, axis=1))
            f_tilde = o.estimate(counts, n).f_tilde
            tc = np.bincount(values, minlength=k)
            rows.append({"oracle": o.label, "eps_inf": ep, "eps_1": e1, "k": k, "n": n,
                         "ours_mi": clip_renormalise(f_tilde).tolist(),
                         "ours_params": [o.p1, o.q1, o.p2, o.q2],
                         "ours_var0": float(o.variance(0.0, n)), "counts": counts.tolist(),
                         "expected_counts": (tc * o.p + (n - tc) * o.q).tolist(),
                         "count_sd": np.sqrt(tc * o.p * (1 - o.p) + (n - tc) * o.q * (1 - o.q)).tolist()})
    for eps, k, bits in DBIT_SETTINGS:
        o = DBitFlipPM(eps, k, bits=bits)
        values = np.minimum(gen.geometric(0.35, size=n) - 1, k - 1)
        reports = o.clients(n, gen).report(values, gen)
        path = tmp / f"dbit_{eps}_{k}_{bits}.npz"
        np.savez(path, reports=reports, values=values)
        cases.append({"name": "dbitflippm", "eps_perm": eps, "k": k, "bits": bits, "reports": str(path),
                      "seed": int(seed)})
        tc = np.bincount(values, minlength=k)
        rows.append({"oracle": f"dBitFlipPM (bits={bits})", "eps_inf": eps, "eps_1": eps, "k": k, "n": n,
                     "ours_mi": clip_renormalise(o.ding_estimate(reports)).tolist(), "ours_params": [],
                     "ours_var0": 0.0, "counts": o.aggregate(reports).tolist(),
                     "expected_counts": (tc * o.p + (n - tc) * o.q).tolist(),
                     "count_sd": np.sqrt(tc * o.p * (1 - o.p) + (n - tc) * o.q * (1 - o.q)).tolist(), "dbit": True})
    (tmp / "cases.json").write_text(json.dumps(cases))
    (tmp / "peer.py").write_text(_PEER)
    subprocess.run([peer_python, str(tmp / "peer.py"), str(tmp / "cases.json"), str(tmp / "out.json")], check=True)
    peer = json.loads((tmp / "out.json").read_text())
    table = []
    for r, p in zip(rows, peer):
        if r.get("dbit"):
            z = (np.array(p["counts"]) - np.array(r["expected_counts"])) / np.array(r["count_sd"])
            table.append({k: r[k] for k in ("oracle", "eps_inf", "eps_1", "k", "n")} | {
                "params_max_abs_diff": float("nan"),
                "mi_max_abs_diff": float(np.max(np.abs(np.array(p["mi"]) - r["ours_mi"]))),
                "mi_same_params_max_abs_diff": float("nan"), "library_eps_1_exact": float("nan"),
                "var0_rel_diff": float("nan"), "client_max_abs_z": float(np.max(np.abs(z)))})
            continue
        p1, q1, p2, q2 = p["params"]
        pp, qq = p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2  # the library's rounds, composed exactly
        same = clip_renormalise((np.array(r["counts"]) / r["n"] - qq) / (pp - qq))
        eps1_exact = np.log(pp / qq) if r["oracle"] == "L-GRR" else np.log(pp * (1 - qq) / (qq * (1 - pp)))
        z = (np.array(p["counts"]) - np.array(r["expected_counts"])) / np.array(r["count_sd"])
        table.append({k: r[k] for k in ("oracle", "eps_inf", "eps_1", "k", "n")} | {
            "params_max_abs_diff": float(np.max(np.abs(np.array(p["params"]) - r["ours_params"]))),
            "mi_max_abs_diff": float(np.max(np.abs(np.array(p["mi"]) - r["ours_mi"]))),
            "mi_same_params_max_abs_diff": float(np.max(np.abs(np.array(p["mi"]) - same))),
            "library_eps_1_exact": float(eps1_exact),
            "var0_rel_diff": abs(p["var0"] - r["ours_var0"]) / r["ours_var0"],
            "client_max_abs_z": float(np.max(np.abs(z)))})
    return {"peer": "multi-freq-ldpy 0.2.5 long_freq_est", "rows": table}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peer-python", required=True, help="a Python with multi-freq-ldpy 0.2.5 installed")
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "longitudinal_peers"))
    a = ap.parse_args()
    res = run(a.peer_python, n=a.n)
    Path(a.out + ".json").write_text(json.dumps(res, indent=1))
    lines = ["| oracle | ε∞ | ε₁ | k | n | max Δ(p₁,q₁,p₂,q₂) | max Δ MI estimate | same, library's (p, q) | library's exact ε₁ | rel Δ var(f=0) | library client max |z| |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        lines.append(f"| {r['oracle']} | {r['eps_inf']:g} | {r['eps_1']:g} | {r['k']} | {r['n']} | "
                     f"{r['params_max_abs_diff']:.1e} | {r['mi_max_abs_diff']:.1e} | {r['mi_same_params_max_abs_diff']:.1e} | "
                     f"{r['library_eps_1_exact']:.4f} | {r['var0_rel_diff']:.1e} | "
                     f"{r['client_max_abs_z']:.2f} |")
    Path(a.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
