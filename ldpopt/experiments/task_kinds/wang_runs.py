"""Wang et al. task kinds that simulate many estimates per task: the per-value bias and variance
over thousands of runs (NDSS §V-B, Fig. 1–3) and the benefit n → n′ of post-processing (NDSS §V-C,
Fig. 5). The shared conventions (datasets, slow methods, ``post-pos``) are those of
:mod:`ldpopt.experiments.task_kinds.wang`.
"""

from __future__ import annotations

import numpy as np

from ...queries import post_pos
from ..registry import kind
from ..toolkit import QUERY_METHODS, active_methods, dataset_of, outputs, params, resample, simulate

__all__ = ["base_mse", "benefit", "bias_variance", "combine_bias_variance"]


@kind("bias-variance", registry_methods=QUERY_METHODS, oracle_params=True)
def bias_variance(task) -> list[dict]:
    """Per-value bias and variance over many runs (NDSS §V-B, Fig. 1–3: 5000 runs, Zipf, ε = 1).

    One task runs ``params.runs`` (default 100) estimates and writes, per method and value v,
    ``sum`` = Σ_runs (f'_v − f_v) and ``sumsq`` = Σ_runs (f'_v − f_v)² (frequency scale), plus a
    ``runs`` and an ``n_users`` column (for the paper's count scale); the truth is stored once per
    task as method ``truth``, metric ``f``. Combine blocks in analysis
    (:func:`combine_bias_variance`): total runs R = Σ runs; bias = Σsum / R, variance =
    Σsumsq / R − bias² (times R/(R−1) for the unbiased sample variance). Errors, not raw f', are
    accumulated so the variance of a large f_v does not cancel catastrophically. ``post-pos`` on single
    values is Base-Pos.
    """
    ds = dataset_of(task)
    rng = task.rng()
    p = params(task)
    runs = int(p.get("runs", 100))
    names = active_methods(task)
    mp = p.get("method_params")
    f = ds.frequencies
    acc = {m: [np.zeros(ds.d), np.zeros(ds.d)] for m in names}
    for _ in range(runs):
        est = simulate(task, ds.counts, ds.d, rng)
        fs = outputs(est, names, mp)
        if "post-pos" in names:
            fs["post-pos"] = post_pos(np.asarray(est.f_tilde, dtype=np.float64))
        for m in names:
            e = fs[m] - f
            acc[m][0] += e
            acc[m][1] += e * e
    v = np.arange(ds.d)
    cols = {"v": v, "runs": np.full(ds.d, runs), "n_users": np.full(ds.d, ds.n)}
    rows = [{"method": "truth", "metric": "f", "value": f, **cols}]
    for m in names:
        rows.append({"method": m, "metric": "sum", "value": acc[m][0], **cols})
        rows.append({"method": m, "metric": "sumsq", "value": acc[m][1], **cols})
    return _explode(rows)


def _explode(rows: list[dict]):
    """Column-wise blocks (arrays of length d) → one tidy DataFrame (the runner accepts it)."""
    import pandas as pd

    return pd.concat([pd.DataFrame(r) for r in rows], ignore_index=True)


def combine_bias_variance(table):
    """Per (dataset, oracle, ε, method, v): runs, bias, variance (frequency scale, the unbiased
    sample variance over the R runs), mse, truth f and n_users, from the ``bias-variance`` blocks of
    a results table (vectorised: the full table has ~6·10⁶ rows)."""
    import pandas as pd

    keys = ["dataset", "oracle", "epsilon"]
    truth = table[table.method == "truth"].groupby(keys + ["v"], observed=True).value.first().rename("f")
    n = table.groupby(keys, observed=True).n_users.first()
    t = table[table.method != "truth"]
    g = t.groupby(keys + ["method", "v", "metric"], observed=True).value.sum().unstack("metric")
    runs = t[t.metric == "sum"].groupby(keys + ["method", "v"], observed=True).runs.sum()
    out = pd.DataFrame({"runs": runs, "bias": g["sum"] / runs})
    out["variance"] = (g["sumsq"] / runs - out["bias"] ** 2) * runs / (runs - 1)
    out["mse"] = g["sumsq"] / runs
    return out.reset_index().join(truth, on=keys + ["v"]).join(n, on=keys)


def base_mse(est, f) -> float:
    """Analytic full-domain MSE of Base: (1/d) Σ_v Var(f̃_v), Var from Eq. 2 (NDSS §V-C: for pure
    oracles (1/d)Σσ_v² = q(1−q)/(n(p−q)²) + (1−p−q)/(d n (p−q)))."""
    return float(np.mean(est.variance(f)))


@kind("benefit", registry_methods=QUERY_METHODS, oracle_params=True)
def benefit(task) -> list[dict]:
    """Benefit of post-processing, n → n′ (NDSS §V-C, Fig. 5; Eq. 5).

    For each n in ``params.n`` the dataset's distribution is redrawn as Multinomial(n, f) with a
    fixed seed (``params.sample_seed``, default 0; the same truth in every repetition; *choice*: the
    paper only says it varies n), one estimate is simulated, and for each method
    n′ = n · MSE_Base^analytic(n) / MSE_method, the number of users Base would need, analytically,
    to reach the method's empirical full-domain MSE (analytic MSE ∝ 1/n). Rows: metric ``mse``,
    ``n_prime`` and ``ratio`` (= n′/n), with column ``n_users``.
    """
    base_ds = dataset_of(task)
    rng = task.rng()
    p = params(task)
    names = active_methods(task)
    mp = p.get("method_params")
    rows = []
    for n in p.get("n", [200000, 1000000, 2000000]):
        n = int(n)
        ds = resample(base_ds, n, (int(p.get("sample_seed", 0)), n))
        est = simulate(task, ds.counts, ds.d, rng)
        fs = outputs(est, names, mp)
        if "post-pos" in names:
            fs["post-pos"] = post_pos(np.asarray(est.f_tilde, dtype=np.float64))
        f = ds.frequencies
        analytic = base_mse(est, f)
        for m in names:
            mse = float(np.mean((fs[m] - f) ** 2))
            for metric, val in (("mse", mse), ("n_prime", n * analytic / mse), ("ratio", analytic / mse)):
                rows.append({"method": m, "metric": metric, "value": val, "n_users": n})
        rows.append({"method": "base-analytic", "metric": "mse", "value": analytic, "n_users": n})
    return rows
