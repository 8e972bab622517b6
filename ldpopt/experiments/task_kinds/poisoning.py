"""Task kind ``poisoning``: attacks on the oracles, detection, and recovery (:mod:`ldpopt.robust`).

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.poisoning`.
"""

from __future__ import annotations

import numpy as np

from ... import robust
from ...methods.normalize import project_simplex
from ...queries import mse
from ..registry import kind
from ..toolkit import dataset_of, params, task_oracle

__all__ = ["METHODS", "poisoning"]

METHODS = ("detect", "raw", "norm-sub", "ldprecover", "rsn", "mixture", "lift")


def _detect(o, counts, attack, t, beta, rng, rows):
    n = int(counts.sum())
    m = robust.fake_user_count(n, beta)
    genuine = o.perturb(np.repeat(np.arange(o.d), counts), rng)
    fake = robust.craft_reports(o, attack, t, m, rng)
    reports = np.concatenate([genuine, fake])
    is_fake = np.r_[np.zeros(n, bool), np.ones(m, bool)]
    est = o.estimate(o.aggregate(reports), n + m)
    sus = robust.suspects(est.f_tilde, t.size)
    score = robust.suspect_scores(o, reports, sus)
    _, _, auc = robust.roc(score, is_fake)
    flag = score >= sus.size
    rows += [("detect", "auc", auc), ("detect", "tpr", flag[is_fake].mean()), ("detect", "fpr", flag[~is_fake].mean()),
             ("detect", "suspects-hit", np.isin(sus, t).mean())]
    try:  # the size test needs the genuine size law (HR has none: |C_y| depends on y)
        o.support_size_pmf()
    except ValueError:
        pass
    else:
        rows.append(("detect", "size-test-p", robust.size_test(o, robust.support_sizes(o, reports))[1]))
    return est


@kind("poisoning", oracle_params=True)
def poisoning(task) -> list[dict]:
    want = list(task.methods)
    if set(want) - set(METHODS):
        raise ValueError(f"methods of a poisoning config must be among {list(METHODS)}, got {sorted(set(want) - set(METHODS))}")
    prm = params(task)
    beta, r = float(prm.get("beta", 0.05)), int(prm.get("targets", 10))
    attacks = prm.get("attacks", ["mga", "input"])
    ds = dataset_of(task)
    rng = task.rng()
    o = task_oracle(task, ds.d)
    f = ds.frequencies
    out = []
    for attack in attacks:
        t = np.sort(rng.choice(ds.d, r, replace=False))
        rows: list = []
        if "detect" in want:
            est = _detect(o, ds.counts, attack, t, beta, rng, rows)
        else:
            est = robust.poisoned_estimate(o, ds.counts, attack, t, beta, rng)
        status = {}
        for meth in want:
            if meth == "detect":
                continue
            if meth == "mixture":
                sol = robust.recover(est, "mixture", beta=beta, suspects=robust.suspects(est.f_tilde, r))
                fhat, status[meth] = sol.f, sol.status
            else:
                fhat = {"raw": lambda e: e.f_tilde, "norm-sub": lambda e: project_simplex(e.f_tilde),
                        "ldprecover": lambda e: robust.ldprecover(e, beta), "rsn": robust.rsn,
                        "lift": lambda e: robust.lift(e, beta)}[meth](est)
            rows += [(meth, "mse", mse(fhat, f)), (meth, "gain", fhat[t].sum() - f[t].sum())]
        out += [{"method": a, "metric": b, "value": float(c), "attack": attack, "beta": beta,
                 "status": status.get(a, "")} for a, b, c in rows]
    return out
