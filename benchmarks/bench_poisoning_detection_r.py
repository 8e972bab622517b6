"""Detection by the number of targets r: ldpopt's report flag beside the anchors' Diffstats, r ∈ {1, 2, 3, 5, 10}.

The setting and both detectors of ``bench_poisoning_detection.py`` (OUE, d = 1,024, Zipf(1.5),
19,000 genuine and 1,000 fake reports, β = 0.05, the maximal gain attack crafted by
``ldpopt.robust.craft_reports``; Diffstats told the true r, as the anchors' ``Fake_User_Detection.py``
is), with r random targets, r ∈ ``--rs`` (1, 2, 3, 5, 7, 10), ε ∈ ``--epsilons`` (1, 4), ``--reps`` repetitions (5) of
ldpopt's side, Diffstats on the first ``--anchor-reps`` of them (all by default; Diffstats takes about 50 s per
repetition on two shared cores, ldpopt's flag well under one; ``--anchor-reps 0`` runs the flag alone,
no anchor needed, into ``poisoning_detection_r_flag.json``). ldpopt's
flag, two suspect sets: ``lift`` = the lift cluster (chains of ≥ 5), else the 10 largest estimates
(the defender does not know r; what the headline numbers used); ``chain2`` = the cluster with chains
of ≥ 2 (``lift_suspects(..., min_size=2)``, the guarded lift's), else the 10 largest. Per row: mean ±
SE of F1, FPR and the AUC of the suspect-support score. The results file is written after each ε.

    python benchmarks/bench_poisoning_detection_r.py --anchor-python PY --anchor-src DIR [--quick] [--reps R]
        [--anchor-reps A] [--epsilons 1,4] [--rs 1,2,3,5,7,10]

The per-ε thresholds of docs/poisoning.md ("Detection by the number of targets"): the flag alone,
``--reps 20 --anchor-reps 0 --epsilons 0.5,1,2,4``; Diffstats beside it, the ε = 1 rows of ``--reps 3
--epsilons 1`` and ``--reps 2 --epsilons 4 --rs 1,3,5,7 --name poisoning_detection_r_eps4``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H
import bench_poisoning_detection as B

R_LIST = (1, 2, 3, 5, 7, 10)
FALLBACK = 10


def _ours(eps: float, r: int, reps: int, gen, keep_mats: int | None = None):
    from ldpopt import oracles, robust

    o = oracles.get("oue", epsilon=eps, d=B.D)
    values = np.repeat(np.arange(B.D), H.zipf_counts(B.D, B.N_GENUINE))
    beta = B.M_FAKE / (B.N_GENUINE + B.M_FAKE)
    fake = np.r_[np.zeros(B.N_GENUINE, bool), np.ones(B.M_FAKE, bool)]
    rows, mats = [], []
    for _ in range(reps):
        t = np.sort(gen.choice(B.D, r, replace=False))
        reports = np.vstack([o.perturb(gen.permutation(values), gen), robust.craft_reports(o, "mga", t, B.M_FAKE, gen)])
        est = o.estimate(o.aggregate(reports), reports.shape[0])
        row = {}
        for label, size in (("lift", 5), ("chain2", 2)):
            s = robust.lift_suspects(est, beta, min_size=size)
            s = s if s.size else robust.suspects(est.f_tilde, FALLBACK)
            score = robust.suspect_scores(o, reports, s)
            flag = score >= B._flag_threshold(s.size, o.q)
            rates = B._rates(flag, fake)
            row.update({f"{label}_{k}": v for k, v in rates.items()})
            row[f"{label}_auc"] = robust.roc(score, fake)[2]
        rows.append(row)
        if keep_mats is None or len(mats) < keep_mats:  # the reports Diffstats is run on
            mats.append((np.unpackbits(reports, axis=1)[:, :B.D].astype(np.int8), robust.support_sizes(o, reports)))
    return rows, mats, beta


def run(quick: bool = False, **opts) -> dict:
    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    reps = 1 if a.quick else a.reps
    anchor_reps = reps if a.quick or a.anchor_reps is None else max(0, min(a.anchor_reps, reps))
    name = a.name or ("poisoning_detection_r" if anchor_reps else "poisoning_detection_r_flag")
    env = H.anchor_env(a)
    if env is None and anchor_reps:
        print(f"bench_poisoning_detection_r: {H.ANCHOR_NOT_RUN}")
        return {"not_run": H.ANCHOR_NOT_RUN}
    py, src = env if env else ("", "")
    r_list = (3,) if a.quick else tuple(int(x) for x in a.rs.split(","))
    gen = np.random.default_rng(31)
    rows = []
    for eps in ((1.0,) if a.quick else tuple(float(e) for e in a.epsilons.split(","))):
        for r in r_list:
            t0 = H.cpu_clock()
            ours, mats, beta = _ours(eps, r, reps, gen, keep_mats=anchor_reps)
            theirs = _diffstats(py, src, eps, r, beta, mats[:anchor_reps]) if anchor_reps else []
            row = {"epsilon": eps, "r": r, "reps": reps, "anchor_reps": anchor_reps,
                   "ldpopt": {k: B._mean(ours, k) for k in ours[0]},
                   "ldpopt_per_rep": {k: [x[k] for x in ours] for k in ("lift_f1", "chain2_f1")},
                   "diffstats": {k: B._mean(theirs, k) for k in ("fpr", "fnr", "f1")} if theirs else None,
                   "diffstats_found_nothing": sum(x["returned"] == 5 for x in theirs),
                   "ldpopt_cpu_s": H.cpu_clock() - t0}
            rows.append(row)
            L, T = row["ldpopt"], row["diffstats"]
            print(f"eps={eps} r={r}: lift F1 {L['lift_f1']['mean']:.3f} AUC {L['lift_auc']['mean']:.4f} "
                  f"FPR {L['lift_fpr']['mean']:.2e} | chain2 F1 {L['chain2_f1']['mean']:.3f} AUC {L['chain2_auc']['mean']:.4f} "
                  f"FPR {L['chain2_fpr']['mean']:.2e}"
                  + (f" | Diffstats F1 {T['f1']['mean']:.3f} FPR {T['fpr']['mean']:.2e}" if T else ""), flush=True)
        H.save(name, a, {"setting": {"oracle": "oue", "d": B.D, "n_genuine": B.N_GENUINE,
                                     "m_fake": B.M_FAKE, "fallback_suspects": FALLBACK}, "rows": rows})
    return H.save(name, a, {"setting": {"oracle": "oue", "d": B.D, "n_genuine": B.N_GENUINE,
                                        "m_fake": B.M_FAKE, "fallback_suspects": FALLBACK}, "rows": rows})


def _diffstats(py: str, src: str, eps: float, r: int, beta: float, mats: list) -> list[dict]:
    """The anchors' Diffstats on the reports of ``mats`` (support matrix, support sizes), in their interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        arrays = {"reps": len(mats), "epsilon": eps, "ratio": beta, "r": r}
        for k, (sup, ones) in enumerate(mats):
            arrays[f"support{k}"], arrays[f"ones{k}"] = sup, ones
        np.savez(Path(tmp) / "in.npz", **arrays)
        subprocess.run([py, "-c", B._ANCHOR_SIDE, src, str(Path(tmp) / "in.npz"), str(Path(tmp) / "out.json")],
                       check=True)
        return json.loads((Path(tmp) / "out.json").read_text())


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="repetitions per setting (default 5)")
    ap.add_argument("--anchor-reps", type=int, default=None,
                    help="repetitions Diffstats runs on, the first of --reps (default all; 0: the flag alone, "
                         "written to poisoning_detection_r_flag.json, no anchor needed)")
    ap.add_argument("--epsilons", default="1,4", help="comma-separated ε values (default 1,4)")
    ap.add_argument("--name", default=None, help="the results file's name (default poisoning_detection_r[_flag])")
    ap.add_argument("--rs", default=",".join(map(str, R_LIST)), help="comma-separated numbers of targets")
    ap.add_argument("--anchor-python", default=None, help="the anchors' interpreter")
    ap.add_argument("--anchor-src", default=None, help="a checkout of the anchors' repository")
    return ap


def thresholds(flag_path: str, diffstats_paths: list[str], level: float = 0.9) -> str:
    """Markdown: per ε, the least r from which the flag's F1 stays ≥ ``level``, and from which it stays above
    Diffstats' mean F1 at that (ε, r) where Diffstats was run; per repetition (seed) of the flag's file, so
    each threshold is a mean ± SE over its repetitions (those that never get there are counted apart)."""
    with open(flag_path) as fh:
        flag = json.load(fh)
    ds: dict[tuple[float, int], dict] = {}
    for p in diffstats_paths:
        with open(p) as fh:
            for x in json.load(fh)["rows"]:
                ds[(x["epsilon"], x["r"])] = x["diffstats"]["f1"]
    out = [f"From `{flag['command']}` ({flag['rows'][0]['reps']} repetitions per cell) and Diffstats' F1 from "
           + ", ".join(f"`{p}`" for p in diffstats_paths) + ".", "",
           (f"| ε | suspects | F1 by r (mean ± SE) | least r, F1 ≥ {level} at every larger r | "
           "least r, above Diffstats' F1 at every larger r it was run at | Diffstats F1 by r |"),
           "| --- | --- | --- | --- | --- | --- |"]
    for eps in sorted({x["epsilon"] for x in flag["rows"]}):
        rows = sorted((x for x in flag["rows"] if x["epsilon"] == eps), key=lambda x: x["r"])
        grid = [x["r"] for x in rows]
        for label, key in (("lift (≥ 5)", "lift_f1"), ("chains ≥ 2", "chain2_f1")):
            F = np.array([x["ldpopt_per_rep"][key] for x in rows])  # r × reps

            def least(ok, rs):  # per repetition: least r of rs from which ok holds at every larger r of rs
                r_star = np.full(ok.shape[1], np.inf)
                for j in range(len(rs) - 1, -1, -1):
                    r_star[ok[j:].all(axis=0)] = rs[j]
                return r_star

            def mean_se(x):
                f = np.isfinite(x)
                return (f"{x[f].mean():.2f} ± {x[f].std(ddof=1) / np.sqrt(f.sum()):.2f}" if f.sum() > 1 else "–") + \
                    (f" (never in {int((~f).sum())} of {x.size})" if (~f).any() else "")
            by_r = ", ".join(f"{g}: {F[j].mean():.2f} ± {F[j].std(ddof=1) / np.sqrt(F.shape[1]):.2f}" for j, g in enumerate(grid))
            cell = mean_se(least(F >= level, grid))
            measured = [j for j, g in enumerate(grid) if (eps, g) in ds]
            if measured:
                ref = np.array([ds[(eps, grid[j])]["mean"] for j in measured])
                beat = mean_se(least(F[measured] > ref[:, None], [grid[j] for j in measured]))
                dsr = ", ".join(f"{grid[j]}: {ds[(eps, grid[j])]['mean']:.2f} ± {ds[(eps, grid[j])]['se'] or 0:.2f}"
                                for j in measured)
            else:
                beat, dsr = "not measured", "–"
            out.append(f"| {eps:g} | {label} | {by_r} | {cell} | {beat} | {dsr} |")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--table":  # --table FLAG.json [DIFFSTATS.json ...]
        print(thresholds(sys.argv[2], sys.argv[3:]))
    else:
        H.cli(_parser(), run)
