"""Detection under the adaptive attack on local hashing (OLH, BLH): the support-size test and the ROC
of the suspect-support score, against the plain maximal gain attack, on the real report path.

Setting: d = 256, Zipf(1.5) values of 20,000 genuine users (``oracle.perturb``) and 1,000 fake
users (β ≈ 0.048) running MGA or the adaptive search of ``ldpopt.robust.apa_hashing`` (attack
``"apa"``: each fake report's support size drawn from the genuine law), 10 random targets,
ε ∈ {1, 2}, ``--reps`` repetitions (default 3). The size is smaller than the suite's because the
adaptive search hashes candidates × d values per fake user (10⁹ at d = 1,024 and 1,000 users).
Per row: the range of the size-test p-values, the mean ± standard error of the AUC of the
suspect-support score (suspects: the lift cluster, else the top-10 estimates) and the fraction of
suspects that are targets.

    python benchmarks/bench_poisoning_adaptive.py [--quick] [--reps R]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402

D, N_GENUINE, M_FAKE, R_TARGETS = 256, 20_000, 1_000, 10


def run(quick: bool = False, **opts) -> dict:
    from ldpopt import oracles, robust

    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    reps = 1 if a.quick else a.reps
    w = np.arange(1, D + 1) ** -1.5
    gen = np.random.default_rng(29)
    fake = np.r_[np.zeros(N_GENUINE, bool), np.ones(M_FAKE, bool)]
    rows = []
    for name in (("olh",) if a.quick else ("olh", "blh")):
        for eps in ((1.0,) if a.quick else (1.0, 2.0)):
            o = oracles.get(name, epsilon=eps, d=D)
            for attack in ("mga", "apa"):
                t0, got = H.cpu_clock(), []
                for _ in range(reps):
                    t = np.sort(gen.choice(D, R_TARGETS, replace=False))
                    reports = np.vstack([o.perturb(gen.choice(D, N_GENUINE, p=w / w.sum()), gen),
                                         robust.craft_reports(o, attack, t, M_FAKE, gen)])
                    est = o.estimate(o.aggregate(reports), reports.shape[0])
                    s = robust.lift_suspects(est, M_FAKE / reports.shape[0])
                    s = s if s.size else robust.suspects(est.f_tilde, R_TARGETS)
                    _, _, auc = robust.roc(robust.suspect_scores(o, reports, s), fake)
                    got.append((robust.size_test(o, robust.support_sizes(o, reports))[1], auc, np.isin(s, t).mean()))
                g = np.array(got)
                rows.append({"oracle": name, "epsilon": eps, "attack": attack, "reps": reps,
                             "size_test_p_min": float(g[:, 0].min()), "size_test_p_max": float(g[:, 0].max()),
                             "auc": float(g[:, 1].mean()),
                             "auc_se": float(g[:, 1].std(ddof=1) / np.sqrt(reps)) if reps > 1 else None,
                             "suspects_are_targets": float(g[:, 2].mean()), "cpu_s": H.cpu_clock() - t0})
                print(rows[-1], flush=True)
    return H.save("poisoning_adaptive", a, {"setting": {"d": D, "n_genuine": N_GENUINE, "m_fake": M_FAKE,
                                                        "targets": R_TARGETS}, "rows": rows})


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="repetitions per setting (default 3)")
    return ap


if __name__ == "__main__":
    H.cli(_parser(), run)
