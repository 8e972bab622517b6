"""Detecting fake reports: the CCS 2025 anchors' Diffstats beside ldpopt's detection, on the same reports.

Setting: OUE, d = 1,024, Zipf(1.5) genuine values, β = 0.05 with N = 20,000 reports (19,000 genuine
first, 1,000 fake last, as the anchors' code orders them), 10 random targets, the maximal gain attack
(MGA, padded to about the genuine number of ones) and the adaptive pattern attack (APA: the number
of ones drawn from the genuine law), crafted by ``ldpopt.robust.craft_reports``; ``--reps``
repetitions per ε. N is 50× below the anchors' 10⁶ because Diffstats loops over users in Python
(its candidate removal is a list comprehension over the flagged users per target combination).

* **Diffstats** (github.com/Marvin-huoshan/MDPA_LDP, ``Diffstats.py`` ``diffstats``), run in its own
  interpreter on the reports' 0-1 support matrix and numbers of ones, as ``Fake_User_Detection.py``
  calls it; its FPR, FNR and F1 (it returns five values instead of seven when it finds nothing: read
  as no report flagged).
* **ldpopt**: the support-size χ² test (``robust.size_test``: aggregate, its p-value), and a
  report-level flag: a report is fake when it supports at least j* of the suspects S (the lift
  recovery's cluster, ``robust.lift_suspects``; the top-10 estimates when it finds none), j* the
  least j with Pr[1 + Binomial(|S| − 1, q) ≥ j] ≤ 10⁻² — a genuine report supports its own value
  (at most one suspect) and each other suspect independently with probability q, so the false
  positive rate is ≤ 1 % by construction (this bench's choice); FPR, FNR, F1 of that flag, and the
  AUC of the suspect-support score (``robust.roc``).

    python benchmarks/bench_poisoning_detection.py --anchor-python PY --anchor-src DIR [--quick]

``PY``: a Python with numpy, scipy, pandas, matplotlib, seaborn, tqdm; ``DIR``: a checkout of the
anchors' repository (``Diffstats.py`` is imported from there). Without them the bench says so.
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

D, N_GENUINE, M_FAKE, R_TARGETS = 1024, 19_000, 1_000, 10

_ANCHOR_SIDE = r"""
import sys, os, io, contextlib, json, warnings, numpy as np
warnings.filterwarnings("ignore")
import matplotlib
matplotlib.use("Agg")
sys.path.insert(0, sys.argv[1])
from Diffstats import diffstats
z = np.load(sys.argv[2])
out = []
for k in range(int(z["reps"])):
    support, ones = z[f"support{k}"].astype(int), z[f"ones{k}"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        res = diffstats(float(z["epsilon"]), support.shape[1], support.shape[0], ones, support, float(z["ratio"]),
                        "x", int(z["r"]) if "r" in z.files else 10, 1, None, "OUE")
    import matplotlib.pyplot as plt
    plt.close("all")
    out.append({"fpr": float(res[2]), "fnr": float(res[3]), "f1": float(res[4]), "returned": len(res)})
json.dump(out, open(sys.argv[3], "w"))
"""


def _flag_threshold(s: int, q: float, alpha: float = 1e-2) -> int:
    """Least j with Pr[1 + Binomial(s − 1, q) ≥ j] ≤ α (module docstring); s + 1 when none."""
    from scipy import stats

    j = np.arange(1, s + 1)
    ok = stats.binom.sf(j - 2, s - 1, q) <= alpha
    return int(j[ok][0]) if ok.any() else s + 1


def _rates(flag: np.ndarray, fake: np.ndarray) -> dict:
    tp, fp = int((flag & fake).sum()), int((flag & ~fake).sum())
    prec = tp / max(int(flag.sum()), 1)
    rec = tp / int(fake.sum())
    return {"fpr": fp / int((~fake).sum()), "fnr": 1 - rec, "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0}


def _ldpopt_side(eps: float, attack: str, reps: int, seed: int):
    from ldpopt import oracles, robust

    o = oracles.get("oue", epsilon=eps, d=D)
    tc = H.zipf_counts(D, N_GENUINE)
    values = np.repeat(np.arange(D), tc)
    gen = np.random.default_rng(seed)
    beta = M_FAKE / (N_GENUINE + M_FAKE)
    fake = np.r_[np.zeros(N_GENUINE, bool), np.ones(M_FAKE, bool)]
    rows, mats = [], []
    for _ in range(reps):
        t = np.sort(gen.choice(D, R_TARGETS, replace=False))
        reports = np.vstack([o.perturb(gen.permutation(values), gen), robust.craft_reports(o, attack, t, M_FAKE, gen)])
        est = o.estimate(o.aggregate(reports), reports.shape[0])
        sizes = robust.support_sizes(o, reports)
        _, p_size = robust.size_test(o, sizes)
        s = robust.lift_suspects(est, beta)
        s = s if s.size else robust.suspects(est.f_tilde, R_TARGETS)
        score = robust.suspect_scores(o, reports, s)
        flag = score >= _flag_threshold(s.size, o.q)
        _, _, auc = robust.roc(score, fake)
        rows.append({"size_test_p": p_size, "auc": auc, "suspects_are_targets": float(np.isin(s, t).mean()),
                     **_rates(flag, fake)})
        mats.append((np.unpackbits(reports, axis=1)[:, :D].astype(np.int8), sizes))
    return rows, mats, beta


def _mean(rows, key):
    a = np.array([r[key] for r in rows], dtype=float)
    return {"mean": float(a.mean()), "se": float(a.std(ddof=1) / np.sqrt(a.size)) if a.size > 1 else None}


def run(quick: bool = False, **opts) -> dict:
    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    env = H.anchor_env(a)
    if env is None:
        print(f"bench_poisoning_detection: {H.ANCHOR_NOT_RUN}")
        return {"not_run": H.ANCHOR_NOT_RUN}
    py, src = env
    reps = 1 if a.quick else a.reps
    rows = []
    for eps in ((1.0,) if a.quick else (0.5, 1.0, 2.0, 4.0)):
        for attack in ("mga", "apa"):
            t0 = H.cpu_clock()
            ours, mats, beta = _ldpopt_side(eps, attack, reps, seed=29)
            t_ours = H.cpu_clock() - t0
            with tempfile.TemporaryDirectory() as tmp:
                arrays = {"reps": reps, "epsilon": eps, "ratio": beta}
                for k, (sup, ones) in enumerate(mats):
                    arrays[f"support{k}"], arrays[f"ones{k}"] = sup, ones
                np.savez(Path(tmp) / "in.npz", **arrays)
                w0 = time.perf_counter()
                subprocess.run([py, "-c", _ANCHOR_SIDE, src, str(Path(tmp) / "in.npz"), str(Path(tmp) / "out.json")],
                               check=True)
                t_theirs = time.perf_counter() - w0
                theirs = json.loads((Path(tmp) / "out.json").read_text())
            row = {"epsilon": eps, "attack": attack, "reps": reps, "n_reports": N_GENUINE + M_FAKE,
                   "ldpopt_cpu_s": t_ours, "anchor_wall_s": t_theirs,
                   "ldpopt": {k: _mean(ours, k) for k in ("fpr", "fnr", "f1", "auc", "size_test_p", "suspects_are_targets")},
                   "diffstats": {k: _mean(theirs, k) for k in ("fpr", "fnr", "f1")},
                   "diffstats_found_nothing": sum(r["returned"] == 5 for r in theirs)}
            rows.append(row)
            print(f"eps={eps} {attack}: ldpopt F1 {row['ldpopt']['f1']['mean']:.3f} FPR {row['ldpopt']['fpr']['mean']:.2e}"
                  f" | Diffstats F1 {row['diffstats']['f1']['mean']:.3f} FPR {row['diffstats']['fpr']['mean']:.2e}",
                  flush=True)
    return H.save("poisoning_detection", a, {"setting": {"oracle": "oue", "d": D, "n_genuine": N_GENUINE,
                                                         "m_fake": M_FAKE, "targets": R_TARGETS}, "rows": rows})


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="repetitions per setting (default 5)")
    ap.add_argument("--anchor-python", default=None, help="the anchors' interpreter")
    ap.add_argument("--anchor-src", default=None, help="a checkout of the anchors' repository")
    return ap


if __name__ == "__main__":
    H.cli(_parser(), run)
