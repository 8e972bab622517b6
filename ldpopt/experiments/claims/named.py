"""The bespoke reductions a claim row names (``reduce = "bias-z"`` …) where no generic reduction of
:mod:`ldpopt.experiments.claims` fits. Each is ``fn(claim, config, table, measure)`` and records its
numbers with ``claim.put``.

Details: docs/experiments.md, section `ldpopt.experiments.claims.named`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..task_kinds.wang_runs import combine_bias_variance
from .format import lab
from .jia import jia
from .table import GROUPS, at_level, cell_means

__all__ = ["bias_sums", "bias_z", "choose", "dataset_n", "equal_prefix", "jia", "rising_steps",
           "symmetry", "variance_by_rank"]

_BV_COLS = ["dataset", "oracle", "epsilon", "rep", "method", "metric", "value", "v", "runs", "n_users"]


def _bv(c, cfg):
    bv = c.tables.derived(("bv", cfg), cfg, combine_bias_variance, _BV_COLS)
    c.use(cfg, bv, {str(m): (int(s.min()) if s.min() == s.max() else [int(s.min()), int(s.max())])
                    for m, s in bv.groupby("method", observed=True).runs})
    return bv


def bias_z(c, cfg, _t, m):
    """max over values of |bias|/SE and the count beyond 5 SE (NDSS Fig. 2: Base, Norm unbiased)."""
    bv = _bv(c, cfg)
    bv = bv[bv.method.isin(m.get("methods", ["base", "norm"]))]
    bv = bv.assign(z=bv.bias.abs() / np.sqrt(bv.variance / bv.runs))
    g = bv.groupby(["dataset", "oracle", "method"], observed=True).z
    c.put(cfg, g.max(), "max_v |bias|/SE")
    c.put(cfg, g.apply(lambda x: int((x > 5).sum())), "values with |bias|/SE > 5")


def bias_sums(c, cfg, _t, m):
    """n·Σ_v bias_v per method (counts), its standard error and the runs (NDSS Fig. 2)."""
    grp = _bv(c, cfg).groupby(["dataset", "oracle", "method"], observed=True)
    c.put(cfg, grp.apply(lambda x: float((x.bias * x.n_users).sum()), include_groups=False), "bias sum (counts)")
    c.put(cfg, grp.apply(lambda x: float(x.n_users.iloc[0] * np.sqrt((x.variance / x.runs).sum())), include_groups=False),
          "SE of bias sum (counts, independent values)")
    c.put(cfg, grp.runs.first(), "runs")


def variance_by_rank(c, cfg, _t, m):
    """Var/n (counts) per method: over all values, the top 5 and the lowest 500 (NDSS Fig. 3)."""
    bv = _bv(c, cfg)
    bv = bv.assign(var_n=bv.variance * bv.n_users)
    for (ds, orc), sub in bv.groupby(["dataset", "oracle"], observed=True, sort=False):
        d = sub.v.nunique()
        order = sub[sub.method == sub.method.iloc[0]].sort_values("f", ascending=False).v.to_numpy()
        top, low = set(order[:5]), set(order[-min(500, d):])
        mean = sub.groupby("method", observed=True).var_n.mean()
        tops = sub[sub.v.isin(top)].groupby("method", observed=True).var_n.mean()
        lows = sub[sub.v.isin(low)].groupby("method", observed=True).var_n.mean()
        key = f"{cfg} | {ds} | {orc}"
        for meth in mean.index:
            c.put(key, mean[meth], f"{meth} mean Var/n (counts)")
            c.put(key, tops[meth], f"{meth} top-5 Var/n")
            c.put(key, lows[meth], f"{meth} lowest-{len(low)} Var/n")
        c.put(key, mean["norm"] / mean["base"], "norm/base Var")
        c.put(key, (d - 1) / d, "(d-1)/d")


def symmetry(c, cfg, t, m):
    """MSE(ρ)/MSE(100 − ρ) for ρ < 50 of every method of ``methods`` (arXiv Fig. 2: norm-based
    methods are symmetric about ρ = 50)."""
    w = cell_means(t, by=("rho",))
    rhos = sorted(set(w.index.get_level_values("rho")))
    for meth in [x for x in GROUPS.get(m["methods"], m["methods"]) if x in w]:
        for r in [r for r in rhos if r < 50 and (100 - r) in rhos]:
            ratio = at_level(w[meth], "rho", r)[0] / at_level(w[meth], "rho", 100 - r)[0]
            c.put(cfg, ratio, f"{meth} mse(rho={r:g})/mse(rho={100 - r:g})")


def rising_steps(c, cfg, t, m):
    """How many steps ρ → next ρ increase the MSE of every method but Power/PowerNS (arXiv Fig. 3)."""
    w = cell_means(t, by=("rho",))
    total, exceptions = 0, []
    for (ds, orc, _), sub in w.groupby(level=["dataset", "oracle", "epsilon"], observed=True, sort=False):
        sub = sub.droplevel(["dataset", "oracle", "epsilon"]).sort_index()
        for meth in [x for x in w if x not in ("power", "power-ns") and not sub[x].isna().all()]:
            dv = np.diff(sub[meth].to_numpy())
            total += dv.size
            rho = sub.index.to_numpy()
            exceptions += [f"{ds} {orc.upper()} {lab(meth)} ρ {rho[i]:g}→{rho[i + 1]:g}" for i in np.flatnonzero(~(dv > 0))]
    c.put(cfg, total, "steps rho->next rho (non-Power methods)")
    c.put(cfg, len(exceptions), "steps without an increase")
    c.numbers[f"{cfg} | steps without an increase (list)"] = exceptions


def equal_prefix(c, cfg, t, m):
    """The largest k up to which Base-Cut equals Base within 0.1 % (NDSS Fig. 10: the top values
    Base-Cut leaves untouched)."""
    w = cell_means(t, by=("k",))
    r = w["base-cut"] / w["base"]
    for (ds, orc), s in r.groupby(level=["dataset", "oracle"], observed=True, sort=False):
        ks = s.index.get_level_values("k").to_numpy()
        eq = np.abs(s.to_numpy() - 1) <= 1e-3
        lead = int(np.argmin(eq)) if not eq.all() else len(eq)
        c.put(f"{cfg} | {ds} | {orc}", float(ks[lead - 1]) if lead else np.nan, "largest k up to which base-cut = base")


def dataset_n(c, cfg, t, m):
    """Base's MAE against 1/√n per dataset (arXiv App. C.2); n from the datasets the config names."""
    from ..toolkit import load_dataset

    base = cell_means(t, metric="mae")["base"]
    c.put(cfg, base, "base mae")
    for spec in c.tables.meta(cfg).get("config", {}).get("datasets", []):
        key = spec if isinstance(spec, str) else tuple(sorted((str(k), v) for k, v in spec))
        label = spec if isinstance(spec, str) else str(dict(key).get("label") or dict(key)["name"])
        try:
            n = int(load_dataset(key).n)
        except Exception:  # noqa: BLE001, S112 - a dataset not available offline (any loader's error): 1/√n left out
            continue
        c.put(f"{cfg} | {label}", n, "n")
        c.put(f"{cfg} | {label}", 1 / math.sqrt(n), "1/sqrt(n)")
        c.put(f"{cfg} | {label}", at_level(base, "dataset", label)[0] * math.sqrt(n), "base mae * sqrt(n)")


def choose(c, cfg, t, m):
    """The method each fit picks per ε and its real-data MSE over the best (NDSS Fig. 9)."""
    from ..task_kinds.wang import chosen_methods

    ch = chosen_methods(t.astype({"method": str, "fit": str, "dataset": str, "oracle": str}))
    ch = ch.set_index(["dataset", "oracle", "fit", "epsilon"]).sort_index()
    real = t[t.fit == "real"].groupby(["dataset", "oracle", "epsilon", "method"], observed=True).value.mean().unstack("method")
    for fit, sub in ch.groupby(level="fit", sort=False):
        s = sub.chosen.droplevel("fit")
        c.put_list(cfg, s, f"chosen by fit={fit}", "epsilon")
        if fit != "real":
            loss = pd.Series([real.loc[k, meth] / real.loc[k].min() for k, meth in s.items()], index=s.index)
            c.put(cfg, loss, f"real mse of method chosen by fit={fit} / best real mse")
