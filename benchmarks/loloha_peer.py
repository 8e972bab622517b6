"""Conformance of ldpopt's LOLOHA with the authors' code (``hharcolezi/LOLOHA``, ``LDP/protocols.py``), run in
its own environment: ``--peer-python`` (numpy, numba, xxhash) and ``--peer-src`` (the folder holding
``LDP/protocols.py``).

Per (ε∞, ε₁, g): the authors' ``LOLOHA_Client`` on n users holding one value each for τ = 1 round
(its reports: (r, xxh32 seed)), then on the same reports

* ``agg``: the authors' ``LOLOHA_Aggregator`` against ldpopt's f̃ (the support counts of its xxh32 hash,
  ldpopt's ``LOLOHA.estimate``) clipped and renormalised (the authors' post-processing), max |Δ|; given
  the same (p₂, q₂) they are the same estimator, f̃ = (c/n − 1/g)/(p − 1/g);
  (for LOLOHA q = 1/g whatever (p₂, q₂), so the clipped and renormalised estimate does not see a
  different p₂: only the scale of f̃ depends on it, and the renormalisation cancels it);
* ``eps_1_exact``: one report's exact ε under the authors' (p₂, q₂) — their closed form is the g = 2
  case of one report's ratio, exact for BiLOLOHA (g = 2), more private than ε₁ for g > 2;
* ``client_z``: the authors' clients' support counts against the exact mean n_v p + (n − n_v)/g under
  their own (p₂, q₂): the largest |z| over values.

Run: ``python benchmarks/loloha_peer.py --peer-python PY --peer-src DIR``; writes
benchmarks/results/loloha_peer.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ldpopt.interop._common import clip_renormalise, lh_support_counts
from ldpopt.oracles.longitudinal import LOLOHA

_PEER = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from LDP import protocols as P
cases = json.load(open(sys.argv[2]))
out = []
for c in cases:
    P.setting_seed(c["seed"]); np.random.seed(c["seed"])
    reports = []
    for v in c["values"]:
        rep, _ = P.LOLOHA_Client([int(v)], c["k"], c["eps_perm"], c["eps_1"], c["alpha"], optimal=c["optimal"])
        reports.append(rep[0])
    est = P.LOLOHA_Aggregator(reports, c["k"], c["eps_perm"], c["eps_1"], c["alpha"], optimal=c["optimal"])
    out.append({"y": [int(r[0]) for r in reports], "seed": [int(r[1]) for r in reports], "est": list(map(float, est))})
json.dump(out, open(sys.argv[3], "w"))
"""

#: (ε∞, ε₁, optimal g?) — α = ε₁/ε∞ is the authors' parameter of the optimal g
SETTINGS = [(1.0, 0.5, False), (2.0, 1.0, False), (4.0, 2.0, False), (2.0, 1.0, True), (4.0, 2.0, True)]


def _authors_g(eps_perm: float, alpha: float, optimal: bool) -> int:
    if not optimal:
        return 2
    e = math.exp
    return int(max(np.rint((np.sqrt(e(4 * eps_perm) - 14 * e(2 * eps_perm) - 12 * e(2 * eps_perm * (alpha + 1))
                                     + 12 * e(eps_perm * (alpha + 1)) + 12 * e(eps_perm * (alpha + 3)) + 1)
                             - e(2 * eps_perm) + 6 * e(eps_perm) - 6 * e(eps_perm * alpha) + 1)
                            / (6 * (e(eps_perm) - e(eps_perm * alpha)))), 2))


def run(peer_python: str, peer_src: str, n: int = 3000, k: int = 8, seed: int = 0) -> dict:
    gen = np.random.default_rng(seed)
    values = np.minimum(gen.geometric(0.3, size=n) - 1, k - 1)
    cases = [{"k": k, "eps_perm": ep, "eps_1": e1, "alpha": e1 / ep, "optimal": opt, "seed": seed + i,
              "values": values.tolist()} for i, (ep, e1, opt) in enumerate(SETTINGS)]
    tmp = Path(tempfile.mkdtemp(prefix="ldpopt-loloha-"))
    (tmp / "cases.json").write_text(json.dumps(cases))
    (tmp / "peer.py").write_text(_PEER)
    subprocess.run([peer_python, str(tmp / "peer.py"), str(Path(peer_src).resolve()), str(tmp / "cases.json"),
                    str(tmp / "out.json")], check=True)
    peer = json.loads((tmp / "out.json").read_text())
    tc = np.bincount(values, minlength=k)
    rows = []
    for c, p in zip(cases, peer):
        g = _authors_g(c["eps_perm"], c["alpha"], c["optimal"])
        o = LOLOHA(c["eps_perm"], k, eps_1=c["eps_1"], g=g)
        counts = lh_support_counts(np.array(p["y"], dtype=np.int64), np.array(p["seed"], dtype=np.int64), k, g)
        ours = clip_renormalise(o.estimate(counts, n).f_tilde)
        # the authors' (p₂, q₂): their closed form
        E = math.exp(c["eps_1"])
        p2 = (o.q1 - E * o.p1) / (-o.p1 * E + g * o.q1 * E - o.q1 * E - o.p1 * (g - 1) + o.q1)
        q2 = (1 - p2) / (g - 1)
        keep, move = o.p1 * p2 + (1 - o.p1) * q2, o.q1 * p2 + (1 - o.q1) * q2
        same = clip_renormalise((counts / n - 1 / g) / (keep - 1 / g))
        mean = tc * keep + (n - tc) / g
        sd = np.sqrt(tc * keep * (1 - keep) + (n - tc) * (1 / g) * (1 - 1 / g))
        rows.append({"eps_inf": c["eps_perm"], "eps_1": c["eps_1"], "g": g, "n": n, "k": k,
                     "p2_abs_diff": abs(p2 - o.p2),
                     "agg_max_abs_diff": float(np.max(np.abs(np.array(p["est"]) - ours))),
                     "agg_same_params_max_abs_diff": float(np.max(np.abs(np.array(p["est"]) - same))),
                     "eps_1_exact": math.log(keep / move),
                     "client_max_abs_z": float(np.max(np.abs((counts - mean) / sd)))})
    return {"peer": "hharcolezi/LOLOHA LDP/protocols.py", "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peer-python", required=True)
    ap.add_argument("--peer-src", required=True, help="the folder holding LDP/protocols.py")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "loloha_peer"))
    a = ap.parse_args()
    res = run(a.peer_python, a.peer_src)
    Path(a.out + ".json").write_text(json.dumps(res, indent=1))
    lines = [("| ε∞ | ε₁ | g | n | k | |Δp₂| | max Δ estimate | same, authors' (p₂, q₂) | authors' exact ε₁ | "
             "authors' client max |z| |"), "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        lines.append(f"| {r['eps_inf']:g} | {r['eps_1']:g} | {r['g']} | {r['n']} | {r['k']} | {r['p2_abs_diff']:.1e} | "
                     f"{r['agg_max_abs_diff']:.1e} | {r['agg_same_params_max_abs_diff']:.1e} | "
                     f"{r['eps_1_exact']:.4f} | {r['client_max_abs_z']:.2f} |")
    Path(a.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
