"""Key–value estimation: the papers' estimators (PCKV-UE, PCKV-GRR, PrivKV) against ldpopt's
consistent estimator on the same reports, per ε and per key-frequency band, with SE over repetitions.

    python benchmarks/bench_keyvalue.py          # n = 10⁵ power law (d = 100, 2 keys/user, ℓ = 2) and the
                                                 # synthetic rating stand-in (n = 2·10⁴, d = 200, ℓ = 3); ε ∈ {0.5, 1, 2, 4}; 20 reps
    python benchmarks/bench_keyvalue.py --quick  # one small power-law set, ε ∈ {1, 4}, 3 reps (seconds)

Data: ``keyvalue.power_law`` (α = 1, the PCKV/PrivKV synthetic power-law setting) and
``keyvalue.ratings_like`` — a SYNTHETIC stand-in for a rating dataset (no real rating set ships
with an installed package; nothing downloads). Each repetition draws one set of reports per
protocol (the fast path, exact in law); on the same counts:

* ``paper``: the protocol's own estimator (PCKV §4.5 with its clipping; PrivKV §IV-C, one round);
* ``consistent``: :func:`ldpopt.keyvalue.solve_consistent` (weighted least squares over the cell
  shares, f ≥ 0, m ∈ [−1, 1], the sampling's totals), ldpopt's structured solver.

Metrics per (data, protocol, ε, estimator): frequency MSE over all keys and per band (``head``: the
10 % most frequent keys; ``tail``: the rest); mean MSE over the keys someone holds, per band; each
the mean over repetitions with its SE. Per (data, protocol, ε), on the first repetition: the
certificate of the consistent solution (primal violation, relative duality gap, distance bound) and
max |z − z_Clarabel| against cvxpy (Clarabel). Results: results/keyvalue.json.

PrivECE's code side by side (``--anchor-python PY --anchor-src DIR``, DIR its ``protocols/`` folder,
run in its own venv; or LDPOPT_ANCHOR_PYTHON / LDPOPT_ANCHOR_SRC): its PCKV decoders
(``pckv_ue.revise_ue``, ``pckv_grr.revise``, with the clipping of its callers) on the same counts of
every PCKV repetition, as the row ``privece``. Its own protocol (a piecewise value mechanism decoded
by EM, one key at a time) perturbs differently, so it cannot share these reports and is not run.
``revise`` is called with all_length = d + ℓ, the value under which its (p, q) are PCKV-GRR's a·p and
b/2 (a choice: its own caller passes 2(d + ℓ) with its own perturbation).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _harness as H  # noqa: E402
from ldpopt import keyvalue as kv  # noqa: E402


#: the child run in PrivECE's venv: per key, its decoders on our counts (stdin JSON), clipped as its callers clip
PRIVECE = r"""
import json, math, sys
sys.path.insert(0, sys.argv[1])
import pckv_grr, pckv_ue
job = json.load(sys.stdin)
e, n, ell, d, kind = math.exp(job["epsilon"]), job["n"], job["ell"], job["d"], job["kind"]
out = []
for c in job["counts"]:
    fs, ms = [], []
    for k in range(d):
        n1, n2 = c[0][k], c[1][k]
        try:
            if kind == "ue":
                f, v = pckv_ue.revise_ue(n, n1, n2, e)
                f = 0.0 if f < 0.00001 else f
                f = f * ell
            else:
                f, v = pckv_grr.revise([n1, n2], e, d + ell, n, ell)
                f = f * ell
                f = 0.9 if f > 1 else f
        except ZeroDivisionError:
            f, v = 0.0, 0.0
        fs.append(f)
        ms.append(max(-1.0, min(1.0, v)))
    out.append([fs, ms])
print(json.dumps(out))
"""


def privece(env, proto, all_counts, n):
    """PrivECE's decoders (module docstring) on every repetition's counts: a list of KVEstimate."""
    py, src = env
    job = {"epsilon": proto.epsilon, "n": n, "ell": proto.ell, "d": proto.d, "kind": proto.kind,
           "counts": [c.tolist() for c in all_counts]}
    res = subprocess.run([py, "-c", PRIVECE, src], input=json.dumps(job), capture_output=True, text=True, check=True)
    return [kv.KVEstimate(np.array(f), np.array(m), "PrivECE-code") for f, m in json.loads(res.stdout)]


def datasets(quick: bool):
    if quick:
        return [("power-law n=2e4 d=30", kv.power_law(20_000, 30, items=2, rng=1), 2)]
    return [("power-law n=1e5 d=100", kv.power_law(100_000, 100, items=2, rng=1), 2),
            ("ratings-like (synthetic) n=2e4 d=200", kv.ratings_like(20_000, 200, rng=1), 3)]


def _protocols(eps, d, ell):
    return [kv.pckv_ue(eps, d, ell), kv.pckv_grr(eps, d, ell), kv.privkv(eps, d)]


def _scores(est, F, M, head, held):
    out = {}
    for band, mask in (("all", np.ones_like(head)), ("head", head), ("tail", ~head)):
        out[f"freq_{band}"] = float(np.mean((est.freq[mask] - F[mask]) ** 2))
        hm = mask & held
        out[f"mean_{band}"] = float(np.mean((est.mean[hm] - M[hm]) ** 2)) if hm.any() else float("nan")
    return out


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: one small power-law set, ε ∈ {1, 4}, 3 repetitions."""
    a = H.options(parser(), "bench_keyvalue.py", quick, opts)
    env = H.anchor_env(a)
    eps_grid = (1.0, 4.0) if quick else (0.5, 1.0, 2.0, 4.0)
    reps = 3 if quick else 20
    rows = []
    for label, data, ell in datasets(quick):
        F, M = data.frequencies(), data.means()
        head = F >= np.quantile(F, 0.9)
        held = F > 0
        for eps in eps_grid:
            for proto in _protocols(eps, data.d, ell):
                rng = np.random.default_rng(11)
                per: dict[str, list] = {"paper": [], "consistent": []}
                cert_row = {}
                kept = []
                for r in range(reps):
                    counts = proto.sample_counts(data, rng)
                    kept.append(counts)
                    paper = proto.estimate(counts, data.n)
                    cons = kv.solve_consistent(proto, counts, data.n)
                    per["paper"].append(_scores(paper, F, M, head, held))
                    per["consistent"].append(_scores(cons, F, M, head, held))
                    if r == 0:
                        ref = kv.solve_consistent(proto, counts, data.n, solver="CLARABEL")
                        c = cons.certificate
                        cert_row = {"status": cons.solution.status, "solver": cons.solution.solver,
                                    "primal_violation": float(c.primal_violation),
                                    "relative_gap": float(c.relative_gap), "distance_linf": float(c.distance_linf),
                                    "clarabel_status": ref.solution.status,
                                    "max_abs_diff_clarabel": float(np.max(np.abs(cons.solution.f - ref.solution.f)))}
                if env is not None and isinstance(proto, kv.PCKV):
                    per["privece"] = [_scores(e, F, M, head, held) for e in privece(env, proto, kept, data.n)]
                for method, scores in per.items():
                    row = {"data": label, "protocol": proto.name, "epsilon": eps, "ell": getattr(proto, "ell", 1),
                           "method": method, "reps": reps, "n": data.n, "d": data.d}
                    for key in scores[0]:
                        v = np.array([s[key] for s in scores])
                        row[key] = float(v.mean())
                        row[key + "_se"] = float(v.std(ddof=1) / np.sqrt(reps)) if reps > 1 else float("nan")
                    if method == "consistent":
                        row["certificate"] = cert_row
                    rows.append(row)
                p, c = rows[-len(per)], rows[-len(per) + 1]
                print(f"{label:38s} {proto.name:9s} eps={eps:<4} freq MSE paper={p['freq_all']:.2e}±{p['freq_all_se']:.1e} "
                      f"cons={c['freq_all']:.2e}±{c['freq_all_se']:.1e} | mean MSE head paper={p['mean_head']:.3f} "
                      f"cons={c['mean_head']:.3f} all paper={p['mean_all']:.3f} cons={c['mean_all']:.3f} | "
                      f"gap={cert_row['relative_gap']:.1e} |Δ clarabel|={cert_row['max_abs_diff_clarabel']:.1e}", flush=True)
                H.save("keyvalue", a, {"rows": rows})
    return H.save("keyvalue", a, {"rows": rows})


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--anchor-python", default=None, help="PrivECE's venv python (side-by-side rows)")
    ap.add_argument("--anchor-src", default=None, help="PrivECE's protocols/ folder")
    return ap


if __name__ == "__main__":
    H.cli(parser(), run)
