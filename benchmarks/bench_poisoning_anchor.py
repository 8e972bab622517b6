"""Recovery from poisoned reports: the CCS 2025 anchors' own code beside ldpopt, on the same estimates,
on the anchors' whole suite.

Suite (Li, Li, Wang & Sun, CCS 2025, arXiv 2506.02156, §6.1), the settings of
``bench_poisoning_recovery.py`` and its very draws (same seeds, so the ldpopt columns here equal
``results/poisoning_recovery.json``): Zipf(a = 1.5) with n = 10⁶ over d = 1,024; Emoji as ldpopt
ships it (n = 156,941, d = 969); **the anchors' own Emoji** (``datasets/emoji.npy`` of their
repository, read from ``--anchor-src``: n = 218,477 users over d = 1,496 ids, the data their
``Recovery.py`` uses); SF Fire (their ``fire.csv`` is not in the stored copy of their repository)
→ **stand-in** BMS-WebView-1 (d = 497); Kosarak (not in their repository) → **stand-in** FIMI
retail (d = 16,470). GRR, OUE, OLH; ε ∈ {0.5, 1, 2, 4}; β = 0.05 (m = round(βn/(1 − β)) fake
users); 10 targets drawn uniformly per repetition; the maximal gain attack and input poisoning through
ldpopt's exact-in-law fast paths (``robust.poisoned_estimate``); ``--reps`` repetitions (30).

Every repetition's poisoned estimate is written to a file; the anchors' functions then run on exactly
those numbers in their own interpreter and environment: ``post_process/LDPRecover.py``
``LDP_Recover``, ``post_process/Segmented_V2.py`` ``Segmented_V2`` (= RSN) and
``post_process/norm_sub.py`` ``NormSub``, called as their ``Recovery.py`` calls them: count scale
N·f̃ with N the total number of users, their protocol names ("GRR", "OUE", "OLH_User"), LDP_Recover
with η = 0.2 as hard-coded there ("as called"), and once more with η = β/(1 − β), the η ldpopt's
``ldprecover`` uses ("same η"). Their code draws no random numbers in these functions, so seeds do
not enter; the same inputs give a deterministic comparison.

Metrics as the anchors' ``Recovery.py``: MSE = mean over the d values of (f̂_v − f_v)² against the
genuine users' frequencies f; target gain = Σ_{t∈T} f̂_t − f_T. Mean and standard error over the
repetitions. Per setting also: max |ldpopt − anchor| over values and repetitions for the methods both
codes have (Norm-Sub, RSN, LDPRecover at the same η), the anchor outputs that are not finite, and
max |anchor LDP_Recover(η) − Norm-Sub((1 + η)f̃)| (what their LDPRecover reduces to, module
docs/poisoning.md).

    python benchmarks/bench_poisoning_anchor.py --anchor-python PY --anchor-src DIR [--quick] [--reps R]

``PY``: a Python with numpy, scipy and sympy (the anchors' environment.yml pins numpy 1.24.3, scipy
1.11.4, sympy 1.12); ``DIR``: a checkout of github.com/Marvin-huoshan/MDPA_LDP (its ``post_process``
folder is imported from there, its ``datasets/emoji.npy`` read). ``--quick``: Zipf, ε = 1, 3
repetitions. Writes ``results/poisoning_anchor.json`` (``results/quick/`` with ``--quick``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402
import bench_poisoning_recovery as R  # noqa: E402

BETA, R_TARGETS = R.BETA, R.R_TARGETS
#: dataset -> (what it is, the seed offset of bench_poisoning_recovery's draws)
DATASETS = {"zipf": ("Zipf a=1.5 (n=1e6, d=1024)", 0), "emoji": ("Emoji (ldpopt's copy)", 1),
            "emoji-anchor": ("Emoji (the anchors' copy, their datasets/emoji.npy)", 4),
            "bms-webview-1": ("stand-in for SF Fire", 2), "retail": ("stand-in for Kosarak", 3)}
ORACLES = ("grr", "oue", "olh")
OURS = ("norm_sub", "ldprecover", "rsn", "lift")
THEIRS = ("norm_sub", "ldprecover_as_called", "ldprecover_same_eta", "rsn")

# runs in the anchors' interpreter: their functions on our estimates, one file per setting
_ANCHOR_SIDE = r"""
import sys, numpy as np, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1])
from post_process.LDPRecover import LDP_Recover
from post_process.Segmented_V2 import Segmented_V2
from post_process.norm_sub import NormSub
for src, dst in zip(sys.argv[2::2], sys.argv[3::2]):
    z = np.load(src)
    proto = {"grr": "GRR", "oue": "OUE", "olh": "OLH_User"}[str(z["oracle"])]
    eps, eta = float(z["epsilon"]), float(z["eta"])
    out = {"ldprecover_as_called": [], "ldprecover_same_eta": [], "rsn": [], "norm_sub": []}
    for est, n_tot in zip(z["counts_scale"], z["n_total"]):
        n_tot = int(n_tot)
        out["ldprecover_as_called"].append(LDP_Recover(est.copy(), 0.2, eps, est.size, n_tot) / n_tot)
        out["ldprecover_same_eta"].append(LDP_Recover(est.copy(), eta, eps, est.size, n_tot) / n_tot)
        out["rsn"].append(np.asarray(Segmented_V2(est.copy(), n_tot, eps, proto), dtype=float) / n_tot)
        out["norm_sub"].append(NormSub(n_tot, None, None).calibrate(est.copy()) / n_tot)
    np.savez(dst, **{k: np.array(v, dtype=float) for k, v in out.items()})
"""


def _counts(name: str, anchor_src: str) -> np.ndarray:
    if name == "emoji-anchor":
        ids = np.load(Path(anchor_src) / "datasets" / "emoji.npy")
        return np.bincount(ids.astype(np.int64), minlength=int(ids.max()) + 1).astype(np.int64)
    return R._counts(name)


def _metrics(f, outs: np.ndarray, targets) -> dict:
    mse = ((outs - f) ** 2).mean(axis=1)
    gain = np.array([o[t].sum() - f[t].sum() for o, t in zip(outs, targets)])
    (m, m_se), (g, g_se) = R.mean_se(mse), R.mean_se(gain)
    return {"mse": m, "mse_se": m_se, "gain": g, "gain_se": g_se}


def _maxdiff(a: np.ndarray, b: np.ndarray) -> float | None:
    ok = np.isfinite(b).all(axis=1)
    return float(np.abs(a[ok] - b[ok]).max()) if ok.any() else None


def _ldpopt_side(tc, oracle_name, eps, attack, reps, seed):
    from ldpopt.methods.normalize import project_simplex

    f, reps_ = R.draws(tc, oracle_name, eps, attack, reps, seed)
    ours = {k: [] for k in ("raw", *OURS)}
    scaled = {"as_called": [], "same_eta": []}  # Norm-Sub((1 + η) f̃): what LDPRecover reduces to
    for _, est in reps_:
        outs, _ = R.recoveries(est)
        ours["raw"].append(est.f_tilde)
        for k in OURS:
            ours[k].append(outs[k])
        scaled["as_called"].append(project_simplex(1.2 * est.f_tilde))
        scaled["same_eta"].append(project_simplex((1 + BETA / (1 - BETA)) * est.f_tilde))
    return f, reps_, {k: np.array(v) for k, v in ours.items()}, {k: np.array(v) for k, v in scaled.items()}


def _setting_rows(base, f, targets, ours, theirs, scaled) -> list[dict]:
    rows = [{**base, "code": "ldpopt", "method": k, **_metrics(f, v, targets)} for k, v in ours.items()]
    for k, v in theirs.items():
        bad = int((~np.isfinite(v).all(axis=1)).sum())
        ok = np.isfinite(v).all(axis=1)
        m = _metrics(f, v[ok], [t for t, g in zip(targets, ok) if g]) if ok.any() else {}
        rows.append({**base, "code": "anchor", "method": k, "not_finite": bad, **m})
    agree = {"norm_sub": ("norm_sub", "norm_sub"), "rsn": ("rsn", "rsn"),
             "ldprecover (same eta)": ("ldprecover", "ldprecover_same_eta")}
    for label, (a, b) in agree.items():
        rows.append({**base, "code": "both", "method": f"{label} max|ldpopt - anchor|", "value": _maxdiff(ours[a], theirs[b])})
    for eta in ("as_called", "same_eta"):
        rows.append({**base, "code": "both", "method": f"ldprecover ({eta}) max|anchor - norm_sub((1+eta) f)|",
                     "value": _maxdiff(scaled[eta], theirs[f"ldprecover_{eta}"])})
    return rows


def run(quick: bool = False, **opts) -> dict:
    """``opts``: ``anchor_python`` (the anchor venv's python), ``anchor_src`` (its source folder), else
    the LDPOPT_ANCHOR_PYTHON / LDPOPT_ANCHOR_SRC environment variables; ``reps``; ``out``."""
    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    env = H.anchor_env(a)
    if env is None:
        print(f"bench_poisoning_anchor: {H.ANCHOR_NOT_RUN}")
        return {"not_run": H.ANCHOR_NOT_RUN}
    anchor_python, anchor_src = env
    # the command as recorded: the two paths are this machine's, not the repository's
    a.command = "python benchmarks/bench_poisoning_anchor.py --anchor-python PY --anchor-src DIR" + \
        (" --quick" if a.quick else "") + (f" --reps {a.reps}" if a.reps != 30 else "")
    reps = 3 if a.quick else a.reps
    names = ("zipf",) if a.quick else tuple(DATASETS)
    epsilons = (1.0,) if a.quick else (0.5, 1.0, 2.0, 4.0)
    rows = []
    for name in names:
        what, k = DATASETS[name]
        tc = _counts(name, anchor_src)
        for oracle_name in ORACLES:  # one anchor process per dataset and oracle (8 settings)
            t0, cells, args = H.cpu_clock(), [], []
            with tempfile.TemporaryDirectory() as tmp:
                for eps in epsilons:
                    for attack in ("mga", "input"):
                        f, reps_, ours, scaled = _ldpopt_side(tc, oracle_name, eps, attack, reps, 29 + k)
                        src, dst = Path(tmp) / f"in{len(cells)}.npz", Path(tmp) / f"out{len(cells)}.npz"
                        ests = [e for _, e in reps_]
                        np.savez(src, oracle=oracle_name, epsilon=eps, eta=BETA / (1 - BETA),
                                 counts_scale=np.array([e.f_tilde * e.n for e in ests]), n_total=np.array([e.n for e in ests]))
                        args += [str(src), str(dst)]
                        base = {"dataset": name, "what": what, "n": int(tc.sum()), "d": int(tc.size),
                                "oracle": oracle_name, "epsilon": eps, "attack": attack, "reps": reps}
                        cells.append((base, f, [t for t, _ in reps_], ours, scaled, dst))
                ours_cpu = H.cpu_clock() - t0
                w0 = time.perf_counter()
                subprocess.run([anchor_python, "-c", _ANCHOR_SIDE, anchor_src, *args], check=True)
                anchor_wall = time.perf_counter() - w0
                for base, f, targets, ours, scaled, dst in cells:
                    z = np.load(dst)
                    rows += _setting_rows(base, f, targets, ours, {m: z[m] for m in THEIRS}, scaled)
            print(f"{name} {oracle_name}: ldpopt side {ours_cpu:.1f} s CPU, anchor side {anchor_wall:.1f} s wall",
                  flush=True)
    return H.save("poisoning_anchor", a, {"setting": {"beta": BETA, "targets": R_TARGETS, "epsilons": list(epsilons),
                                                      "oracles": list(ORACLES), "reps": reps,
                                                      "eta_as_called": 0.2, "eta_same": BETA / (1 - BETA)},
                                          "rows": rows})


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=30, help="repetitions per setting (default 30)")
    ap.add_argument("--anchor-python", help="the anchors' venv python (numpy, scipy, sympy)")
    ap.add_argument("--anchor-src", help="a checkout of github.com/Marvin-huoshan/MDPA_LDP")
    return ap


def _cell(rows, **key) -> dict:
    hit = [r for r in rows if all(r.get(k) == v for k, v in key.items())]
    return hit[0] if hit else {}


def _mse(c) -> str:
    return "—" if "mse" not in c else f"{c['mse']:.2e} ± {c['mse_se']:.1e}" if c.get("mse_se") is not None else f"{c['mse']:.2e}"


def _gain(c) -> str:
    return "—" if "gain" not in c else f"{c['gain']:+.3f} ± {c['gain_se']:.3f}" if c.get("gain_se") is not None else f"{c['gain']:+.3f}"


def tables(result: dict, agree_tol: float = 1e-9) -> str:
    """The markdown of docs/poisoning.md's side-by-side section from a saved result: the agreement
    over the suite, then per attack the MSE and the target gain of the anchors' code beside ldpopt's
    (a method both codes have is printed once, "(both)", where they agree to ``agree_tol``)."""
    rows = result["rows"]
    both = [r for r in rows if r["code"] == "both"]
    names = {"norm_sub max|ldpopt - anchor|": "Norm-Sub: ldpopt − anchor",
             "rsn max|ldpopt - anchor|": "RSN: ldpopt − anchor",
             "ldprecover (same eta) max|ldpopt - anchor|": "LDPRecover at η = β/(1 − β): ldpopt − anchor",
             "ldprecover (as_called) max|anchor - norm_sub((1+eta) f)|": "anchor LDP_Recover(η = 0.2) − Norm-Sub(1.2 f̃)",
             "ldprecover (same_eta) max|anchor - norm_sub((1+eta) f)|": "anchor LDP_Recover(η) − Norm-Sub((1 + η) f̃), η = β/(1 − β)"}
    out = ["| largest absolute difference over every value, repetition and setting | value | where |", "| --- | --- | --- |"]
    for label in dict.fromkeys(r["method"] for r in both):
        vals = [r for r in both if r["method"] == label and r["value"] is not None]
        top = max(vals, key=lambda r: r["value"])
        out.append(f"| {names.get(label, label)} | {top['value']:.1e} | {top['dataset']} {top['oracle'].upper()} ε = {top['epsilon']:g} {top['attack']} |")
    bad = [r for r in rows if r["code"] == "anchor" and r.get("not_finite")]
    out.append(f"| anchor outputs not finite | {sum(r['not_finite'] for r in bad)} repetitions | "
               + (", ".join(f"{r['method']} {r['dataset']} {r['oracle'].upper()} ε = {r['epsilon']:g} {r['attack']} ({r['not_finite']})"
                            for r in bad) or "none") + " |")
    settings = list(dict.fromkeys((r["dataset"], r["oracle"], r["epsilon"], r["attack"]) for r in rows))
    for attack, title in (("mga", "maximal gain attack"), ("input", "input poisoning")):
        for metric, fmt in (("MSE", _mse), ("target gain", _gain)):
            out += ["", f"{title}, {metric}:", "",
                    "| dataset | oracle | ε | Norm-Sub | LDPRecover, ldpopt | LDPRecover, anchor as called (η = 0.2) | RSN | lift (ldpopt) |",
                    "| --- | --- | --- | --- | --- | --- | --- | --- |"]
            for ds, orc, eps, att in settings:
                if att != attack:
                    continue
                key = {"dataset": ds, "oracle": orc, "epsilon": eps, "attack": att}
                cells = []
                for ours, theirs, check in (("norm_sub", "norm_sub", "norm_sub"), ("ldprecover", None, None),
                                            (None, "ldprecover_as_called", None), ("rsn", "rsn", "rsn")):
                    a = _cell(rows, code="ldpopt", method=ours, **key) if ours else None
                    b = _cell(rows, code="anchor", method=theirs, **key) if theirs else None
                    if a is not None and b is not None:
                        d = _cell(rows, code="both", method=f"{check} max|ldpopt - anchor|", **key).get("value")
                        cells.append(f"{fmt(a)} (both)" if d is not None and d <= agree_tol and not b.get("not_finite")
                                     else f"ldpopt {fmt(a)}; anchor {fmt(b)}")
                    else:
                        cells.append(fmt(a if a is not None else b))
                cells.append(fmt(_cell(rows, code="ldpopt", method="lift", **key)))
                out.append(f"| {ds} | {orc.upper()} | {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = _parser()
    ap.add_argument("--table", metavar="FILE", help="print the markdown tables of a saved result and stop")
    a = ap.parse_args()
    if a.table:
        print(tables(json.loads(Path(a.table).read_text())))
        return
    if H.anchor_env(a) is None:
        raise SystemExit(H.ANCHOR_NOT_RUN)
    opts = {k: v for k, v in vars(a).items() if k != "table"}
    res = run(**opts)
    print(tables(res))


if __name__ == "__main__":
    main()
