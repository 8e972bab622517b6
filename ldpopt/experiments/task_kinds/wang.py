"""Task kinds for the experiments of Wang et al. (arXiv "Consistent and Accurate Frequency Oracles
under LDP" §4 + App. C; NDSS 2020 "Locally Differentially Private Frequency Estimation with
Consistency" §V).

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.wang`.
"""

from __future__ import annotations

import numpy as np

from ...queries import post_pos
from ..registry import kind
from ..toolkit import (
    QUERY_METHODS,
    answers,
    error_rows,
    method_names,
    one_estimate,
    outputs,
    params,
    simulate,
    with_base,
)

__all__ = ["choose_method", "chosen_methods", "fixed_sets", "full_domain", "random_subsets", "set_value", "top_k"]


# -- kinds ----------------------------------------------------------------------------------------

@kind("full-domain", registry_methods=QUERY_METHODS, oracle_params=True)
def full_domain(task) -> list[dict]:
    """Full-domain MSE = (1/d) Σ_v (f'_v − f_v)² and MAE = (1/d) Σ_v |f'_v − f_v| (arXiv §4.2 Fig. 1,
    App. C.2 Fig. 7; NDSS §V-C Fig. 4). Same rows (and same random numbers) as the runner's original
    ``full-domain`` kind, plus ``post-pos`` (= Base-Pos on single values, arXiv §4.2) when asked."""
    ds, _, est, names, fs = one_estimate(task)
    f = ds.frequencies
    ans = dict(fs)
    if "post-pos" in names:
        ans["post-pos"] = post_pos(np.asarray(est.f_tilde, dtype=np.float64))
    return error_rows(names, ans, f)


def random_subsets(rng, d: int, size: int, count: int) -> np.ndarray:
    """``count`` uniform random subsets of ``size`` values (without replacement) as a 0-1 float
    matrix (count × d): the arg-partition of i.i.d. uniforms is a uniform random size-subset."""
    if size >= d:
        return np.ones((count, d))
    u = rng.random((count, d))
    idx = np.argpartition(u, size - 1, axis=1)[:, :size]
    Q = np.zeros((count, d))
    np.put_along_axis(Q, idx, 1.0, axis=1)
    return Q


@kind("set-value", registry_methods=QUERY_METHODS, oracle_params=True)
def set_value(task) -> list[dict]:
    """Random set-value queries (arXiv §4.3 Fig. 2–3, App. C.3 Fig. 8; NDSS §V-D Fig. 6–7).

    For each ρ in ``params.rho`` (percent), ``params.n_sets`` (default 100) subsets of
    ``max(1, round(ρ/100·d))`` values are drawn without replacement, fresh in every repetition from
    the task rng (the same subsets for every method); MSE/MAE over those subsets of
    f'(A) − f(A). *Choice*: the paper says only "we sample D_sρ multiple times".
    """
    ds, rng, _est, names, fs = one_estimate(task)
    p = params(task)
    n_sets = int(p.get("n_sets", 100))
    f = ds.frequencies
    rows = []
    for rho in p.get("rho", [10, 50, 90]):
        size = max(1, round(float(rho) / 100.0 * ds.d))
        Q = random_subsets(rng, ds.d, size, n_sets)
        rows += error_rows(names, answers(Q, fs, names), Q @ f, rho=float(rho))
    return rows


def _partition_matrix(part: dict, d: int) -> np.ndarray:
    groups = list(part.values())
    Q = np.zeros((len(groups), d))
    for i, idx in enumerate(groups):
        Q[i, idx] = 1.0
    return Q


@kind("fixed-sets", registry_methods=QUERY_METHODS, oracle_params=True)
def fixed_sets(task) -> list[dict]:
    """Fixed category queries: every group of each dataset partition in ``params.partitions`` (arXiv
    §4.3 Fig. 4, IPUMS SEA/State/Region; NDSS §V-D Fig. 8, 68 emoji categories). MSE/MAE over the
    groups of a partition; ``query_set`` names the partition, ``rho`` is its mean group size in % of d."""
    ds, _, _est, names, fs = one_estimate(task)
    p = params(task)
    levels = p.get("partitions") or sorted(ds.partitions)
    f = ds.frequencies
    rows = []
    for level in levels:
        if level not in ds.partitions:
            raise ValueError(f"params.partitions: dataset {ds.name!r} has no partition {level!r} "
                             f"(it has {sorted(ds.partitions)})")
        Q = _partition_matrix(ds.partitions[level], ds.d)
        rho = 100.0 * Q.sum() / Q.shape[0] / ds.d
        rows += error_rows(names, answers(Q, fs, names), Q @ f, query_set=str(level), rho=rho)
    return rows


@kind("top-k", registry_methods=QUERY_METHODS, oracle_params=True)
def top_k(task) -> list[dict]:
    """Frequent-value queries: MSE/MAE over the k values with the highest true frequency (arXiv §4.4
    Fig. 5, App. C.4 Fig. 9; NDSS §V-E Fig. 10). Neither oracle nor method knows the top set."""
    ds, _, est, names, fs = one_estimate(task)
    f = ds.frequencies
    ans = dict(fs)
    if "post-pos" in names:
        ans["post-pos"] = post_pos(np.asarray(est.f_tilde, dtype=np.float64))
    rows = []
    for k in params(task).get("k", [2, 4, 8, 16, 32]):
        top = ds.top(int(k))
        rows += error_rows(names, {m: a[top] for m, a in ans.items()}, f[top], k=int(k))
    return rows


@kind("choose-method", registry_methods=QUERY_METHODS, oracle_params=True)
def choose_method(task) -> list[dict]:
    """Choosing a method on a synthetic dataset (NDSS §V-D, Fig. 9).

    One estimate f̃ of the real data; for every ``fit`` in ``params.fits`` (default norm-sub and
    power-ns) the post-processed f̂ (consistent) is taken as a synthetic distribution; a synthetic
    population of the same n is drawn as Multinomial(n, f̂) (*choice*: the paper says "fit a
    synthetic dataset from the estimation"), the oracle is re-run on it ``params.inner_runs``
    (default 5) times, every method answers the fixed category queries of ``params.partition``, and
    its MSE against the synthetic truth is recorded (``fit`` = the fit method). The methods' MSE on
    the real data for the same original estimate is recorded with ``fit = "real"``; the method a fit
    would pick is the argmin of its mean MSE (see :func:`chosen_methods`).
    """
    ds, rng, est, names, fs = one_estimate(task)
    p = params(task)
    level = p.get("partition", "subgroup")
    if level not in ds.partitions:
        raise ValueError(f"params.partition: dataset {ds.name!r} has no partition {level!r}")
    Q = _partition_matrix(ds.partitions[level], ds.d)
    mp = p.get("method_params")
    rows = []
    real = answers(Q, fs, names)
    truth = Q @ ds.frequencies
    for m in names:
        rows.append({"method": m, "metric": "mse", "value": float(np.mean((real[m] - truth) ** 2)),
                     "fit": "real", "query_set": level})
    dropped = set(method_names(task)) - set(names)  # slow methods not run in this repetition
    fits = [f for f in p.get("fits", ["norm-sub", "power-ns"]) if f not in dropped]
    fit_outputs = outputs(est, fits, mp)
    for fit, fhat in fit_outputs.items():
        fhat = np.clip(fhat, 0.0, None)
        syn = rng.multinomial(est.n, fhat / fhat.sum()).astype(np.int64)
        syn_truth = Q @ (syn / syn.sum())
        acc = {m: 0.0 for m in names}
        inner = int(p.get("inner_runs", 5))
        for _ in range(inner):
            e2 = simulate(task, syn, ds.d, rng)
            a2 = answers(Q, with_base(e2, outputs(e2, names, mp)), names)
            for m in names:
                acc[m] += float(np.mean((a2[m] - syn_truth) ** 2)) / inner
        rows += [{"method": m, "metric": "mse", "value": acc[m], "fit": fit, "query_set": level} for m in names]
    return rows


def chosen_methods(table):
    """Per (dataset, oracle, ε, fit): the method with the smallest mean MSE (over repetitions)."""
    g = table.groupby(["dataset", "oracle", "epsilon", "fit", "method"]).value.mean().reset_index()
    idx = g.groupby(["dataset", "oracle", "epsilon", "fit"]).value.idxmin()
    return g.loc[idx].rename(columns={"method": "chosen", "value": "mse"}).reset_index(drop=True)
