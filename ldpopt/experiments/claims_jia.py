"""The numbers behind REPRODUCTION.md's Jia & Gong claims, recomputed from saved results only.

Jia & Gong, *Calibrate: Frequency Estimation and Heavy Hitter Identification with Local Differential
Privacy via Incorporating Prior Knowledge* (INFOCOM 2019), §III-B and §IV-B. Each claim of the
"Claims" table (rows 1–7) is reduced from the tidy tables that ``ldpopt experiment run NAME`` saves
in ``<root>/NAME/results.parquet`` (columns and metrics: :mod:`ldpopt.experiments.tasks_jia`);
claims 8 and 9 are the all-oracle extensions of Fig. 7 and Fig. 8/9 (``jia_fig7_error_oracles``,
``jia_fig8_9_hh_epsilon_oracles``). Nothing is simulated here, and there are no verdicts: only the
quantities the verdicts rest on.

Reductions (the same as the figures of :mod:`ldpopt.experiments.plots_jia`):

* a "cell" is one (dataset, oracle, ε, method[, threshold ratio]); its value is the mean over
  repetitions of a metric, NaN repetitions left out (precision/recall are NaN when nothing is
  predicted/truly heavy);
* the estimation error of Eq. 5 is an expectation over runs, so error *ratios* and improvements are
  ratios of cell means (``mean(mse_a) / mean(mse_b)``), not means of per-repetition ratios;
* ranges ("0.997–1.003") are min–max over the cells named in the label.

Only finished sweeps are read (``results.parquet``; an unfinished sweep has only ``parts/``): a
claim whose config has none yields ``{"id", "config", "missing": [...], "numbers": {}, "text"}``.

Labels of :func:`claims`' ``numbers`` are ``/``-joined paths, e.g. ``var_ratio/retail/oue/eps=4``,
``improvement/retail/oue/eps=1`` (a fraction, 1 − E_cal/E_zero; ``improvement_se/...`` its paired
standard error, :func:`ratio_se`), ``f_score/retail/oue/eps=4/calibrate/ratio=0.5``. Each claim also
carries ``reps`` = {config: {method: [min, max] repetitions over its cells}}, also as
``reps_min/<config>/<method>`` numbers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["CLAIMS", "claims", "summary_markdown", "load_table", "rep_counts", "cell_means", "ratio_se",
           "select", "fmt", "fmt_span", "oue_eps_for_variance"]

# ε ≤ this is "small" in claim 1 (REPRODUCTION.md: the noise model holds for ε ≤ 4, not at ε = 8)
EPS_SMALL = 4.0
EXAMPLE_RATIO = 0.5  # claim 6 quotes the three F-scores at this threshold ratio
# Jia & Gong's printed Fig. 4 numbers and Kosarak's size (§IV-A1), for claim 2's consistency checks
PAPER_FIG4 = {"predicted_var": 5434.0, "fitted_mean": -3.2, "fitted_var": 5405.0}
KOSARAK = {"n_clicks": 8_019_015, "n_transactions": 990_002, "d": 41_270}


# -- shared reduction helpers -------------------------------------------------------------------
def load_table(root, config: str, quick: bool = False) -> pd.DataFrame | None:
    """``root/config[-quick]/results.parquet`` or None when the sweep has not finished."""
    path = Path(root) / (config + ("-quick" if quick else "")) / "results.parquet"
    if not path.is_file():
        return None
    return pd.read_parquet(path)


def select(table: pd.DataFrame, metric=None, **eq) -> pd.DataFrame:
    """Rows with ``metric`` and column == value for each ``eq`` (a list means "is in"); float
    columns (ε, threshold ratio) compare with ``np.isclose`` so 0.1 from TOML matches 0.1."""
    mask = np.ones(len(table), dtype=bool)
    if metric is not None:
        mask &= table["metric"].isin([metric] if isinstance(metric, str) else list(metric)).to_numpy()
    for col, val in eq.items():
        vals = list(val) if isinstance(val, (list, tuple, set)) else [val]
        c = table[col]
        if pd.api.types.is_float_dtype(c):
            m = np.zeros(len(table), dtype=bool)
            for v in vals:
                m |= np.isclose(c.to_numpy(dtype=float), float(v), rtol=0, atol=1e-9)
        else:
            m = c.isin(vals).to_numpy()
        mask &= m
    return table[mask]


def cell_means(table: pd.DataFrame, metric: str, by: list[str], **eq) -> pd.Series:
    """NaN-mean over repetitions of ``metric`` per group ``by`` (a Series indexed by ``by``)."""
    t = select(table, metric, **eq)
    return t.groupby(by, sort=False)["value"].mean()  # pandas mean skips NaN


def rep_counts(table: pd.DataFrame) -> dict[str, list[int]]:
    """{method: [min, max]} distinct repetitions over the (dataset, oracle, ε[, ratio]) cells."""
    keys = [c for c in ("dataset", "oracle", "epsilon", "threshold_ratio") if c in table]
    n = table.groupby([*keys, "method"], dropna=False, sort=False)["rep"].nunique()
    out = {}
    for m in pd.unique(table["method"]):
        v = n.xs(m, level="method")
        out[str(m)] = [int(v.min()), int(v.max())]
    return out


def _eps_list(table) -> list[float]:
    return sorted(float(e) for e in pd.unique(table["epsilon"]))


def _ordered(table, col) -> list:
    return list(pd.unique(table[col]))  # task order = config order (runner.collect)


def _e(eps: float) -> str:
    return f"eps={eps:g}"


def _span(values) -> tuple[float, float]:
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    if v.size == 0:
        return float("nan"), float("nan")
    return float(v.min()), float(v.max())


def fmt(x, unit: str = "") -> str:
    """3 significant digits, no exponent, thousands separators; ``unit`` "%" scales a fraction."""
    if x is None or not np.isfinite(x):
        return "n/a"
    x = float(x) * (100.0 if unit == "%" else 1.0)
    if x == 0:
        s = "0"
    elif abs(x) < 1e-3:  # e.g. GRR's |mean| ~ 1e-11 (round-off): no 12 leading zeros
        s = f"{x:.3g}"
    else:
        r = round(x, 2 - math.floor(math.log10(abs(x))))
        dec = 2 - math.floor(math.log10(abs(r))) if r != 0 else 0  # 9.996 → 10.0, not 10.00
        s = f"{r:,.{dec}f}" if dec > 0 else f"{r:,.0f}"
    s = s.replace("-", "\u2212")  # typographic minus, as in REPRODUCTION.md
    return s + {"%": " %", "x": "×"}.get(unit, unit)


def fmt_span(lo, hi, unit: str = "") -> str:
    a, b = fmt(lo, unit), fmt(hi, unit)
    return a if a == b else f"{a.rstrip(' %×')}–{b}"


def _series(vals: dict, unit: str = "", first: str = "ε = ") -> str:
    """"159× (ε = 1), 37.3× (2), …" over an {ε: value} dict."""
    parts = []
    for i, (k, v) in enumerate(vals.items()):
        parts.append(f"{fmt(v, unit)} ({first if i == 0 else ''}{k:g})")
    return ", ".join(parts)


def _reps_text(reps: dict[str, list[int]]) -> str:
    lo = {m: r[0] for m, r in reps.items()}
    hi = {m: r[1] for m, r in reps.items()}
    if len(set(lo.values()) | set(hi.values())) == 1:
        return f"{next(iter(lo.values()))} reps"
    return ", ".join(f"{m} {lo[m]}" + (f"–{hi[m]}" if hi[m] != lo[m] else "") for m in reps) + " reps"


def oue_eps_for_variance(var: float, n: float) -> float:
    """ε at which OUE's Eq. 14 variance n·4e^ε/(e^ε − 1)² equals ``var`` (count scale).

    With x = e^ε: var·x² − (2 var + 4n)·x + var = 0; the root > 1 is the one with ε > 0.
    """
    b = 2.0 * var + 4.0 * n
    x = (b + math.sqrt(b * b - 4.0 * var * var)) / (2.0 * var)
    return math.log(x)


def _ratio(a, b):
    return float(a) / float(b) if b not in (0, 0.0) and np.isfinite(b) else float("nan")


# -- claims ---------------------------------------------------------------------------------------
def _claim1(t: dict) -> tuple[dict, str]:
    """Eq. 13–14: the noise of one trial is ≈ N(0, n q*(1−q*)/(p*−q*)²), every oracle."""
    tab = t["jia_fig4_noise"]
    nums: dict[str, float] = {}
    by = ["dataset", "oracle", "epsilon"]
    cm = {m: cell_means(tab, m, by) for m in ("var_ratio", "ks_distance", "skewness", "excess_kurtosis",
                                               "fitted_var", "exact_pooled_var")}
    mz = select(tab, "mean_z")
    within = (mz["value"].abs() <= 3.0).groupby([mz[c] for c in by], sort=False).mean()
    for key in cm["var_ratio"].index:
        ds, orc, eps = key
        lab = f"{ds}/{orc}/{_e(eps)}"
        nums[f"var_ratio/{lab}"] = float(cm["var_ratio"][key])
        nums[f"ks/{lab}"] = float(cm["ks_distance"][key])
        nums[f"skewness/{lab}"] = float(cm["skewness"][key])
        nums[f"excess_kurtosis/{lab}"] = float(cm["excess_kurtosis"][key])
        if key in cm["exact_pooled_var"].index:
            # fitted variance against the exact pooled one (Eq. 14 plus the f-dependent term)
            nums[f"var_ratio_exact/{lab}"] = _ratio(cm["fitted_var"][key], cm["exact_pooled_var"][key])
        if key in within.index:
            nums[f"frac_mean_z_le3/{lab}"] = float(within[key])
    vr, ks, sk, ku = cm["var_ratio"], cm["ks_distance"], cm["skewness"], cm["excess_kurtosis"]
    idx = vr.index.to_frame(index=False)
    small = idx[idx.epsilon <= EPS_SMALL + 1e-9]
    large = idx[idx.epsilon > EPS_SMALL + 1e-9]
    parts = []
    for ds in _ordered(tab, "dataset"):
        s_all = [tuple(r) for r in small[small.dataset == ds].itertuples(index=False)]
        s_ng = [k for k in s_all if k[1] != "grr"]
        s_g = [k for k in s_all if k[1] == "grr"]
        lo, hi = _span(vr[k] for k in s_all)
        nums[f"var_ratio_small_eps_min/{ds}"], nums[f"var_ratio_small_eps_max/{ds}"] = lo, hi
        klo, khi = _span(ks[k] for k in s_ng)
        nums[f"ks_small_eps_nongrr_min/{ds}"], nums[f"ks_small_eps_nongrr_max/{ds}"] = klo, khi
        kmax = max((abs(ku[k]) for k in s_ng), default=float("nan"))
        nums[f"abs_kurtosis_small_eps_nongrr_max/{ds}"] = kmax
        txt = (f"{ds}: for ε ≤ {EPS_SMALL:g} fitted/predicted variance {fmt_span(lo, hi)}, KS distance "
               f"{fmt_span(klo, khi)} for the non-GRR oracles, |excess kurtosis| ≤ {fmt(kmax)}")
        if s_g:
            glo, ghi = _span(sk[k] for k in s_g)
            gklo, gkhi = _span(ks[k] for k in s_g)
            gku = max(abs(ku[k]) for k in s_g)
            nums[f"grr_skewness_small_eps_min/{ds}"], nums[f"grr_skewness_small_eps_max/{ds}"] = glo, ghi
            nums[f"grr_ks_small_eps_min/{ds}"], nums[f"grr_ks_small_eps_max/{ds}"] = gklo, gkhi
            nums[f"grr_abs_kurtosis_small_eps_max/{ds}"] = gku
            txt += f"; GRR skewness {fmt_span(glo, ghi)}, KS {fmt_span(gklo, gkhi)}, |excess kurtosis| ≤ {fmt(gku)}"
        l_all = [tuple(r) for r in large[large.dataset == ds].itertuples(index=False)]
        if l_all:
            llo, lhi = _span(vr[k] for k in l_all)
            worst = max(l_all, key=lambda k: vr[k])
            kulo, kuhi = _span(ku[k] for k in l_all)
            nums[f"var_ratio_large_eps_min/{ds}"], nums[f"var_ratio_large_eps_max/{ds}"] = llo, lhi
            nums[f"excess_kurtosis_large_eps_min/{ds}"] = kulo
            nums[f"excess_kurtosis_large_eps_max/{ds}"] = kuhi
            emax = max(k[2] for k in l_all)
            per = ", ".join(f"{k[1].upper()} {fmt(vr[k])}" for k in l_all if k[2] == emax)
            txt += (f"; at ε > {EPS_SMALL:g} the ratio is {fmt_span(llo, lhi)} (max {worst[1].upper()}, "
                    f"ε = {worst[2]:g}; at ε = {emax:g}: {per}), excess kurtosis {fmt_span(kulo, kuhi)}")
            ex = [nums.get(f"var_ratio_exact/{ds}/{k[1]}/{_e(k[2])}") for k in l_all]
            if any(x is not None for x in ex):
                elo, ehi = _span(x for x in ex if x is not None)
                nums[f"var_ratio_exact_large_eps_min/{ds}"] = elo
                nums[f"var_ratio_exact_large_eps_max/{ds}"] = ehi
                txt += f", fitted/exact pooled variance {fmt_span(elo, ehi)}"
        parts.append(txt)
    ng = mz[mz.oracle != "grr"]
    frac = float((ng["value"].abs() <= 3.0).mean()) if len(ng) else float("nan")
    nums["frac_mean_z_le3_nongrr"] = frac
    nums["n_trials_nongrr"] = float(len(ng))
    g = select(tab, "fitted_mean", oracle="grr")
    gtxt = ""
    if len(g):
        nums["grr_max_abs_fitted_mean"] = float(g["value"].abs().max())
        gtxt = f" (GRR: |mean| ≤ {fmt(nums['grr_max_abs_fitted_mean'])} counts, Σ f̂ = n)"
    flat = [o for o in ("sue", "blh", "hr") if o in set(idx.oracle)]
    ftxt = ""
    if flat:
        flo, fhi = _span(vr[tuple(r)] for r in idx[idx.oracle.isin(flat)].itertuples(index=False))
        nums["var_ratio_sue_blh_hr_min"], nums["var_ratio_sue_blh_hr_max"] = flo, fhi
        ftxt = f" {'/'.join(o.upper() for o in flat)}: fitted/predicted variance {fmt_span(flo, fhi)} at every ε."
    text = ("; ".join(parts) + f". The one-trial mean is within 3 standard errors of 0 in {fmt(frac, '%')} "
            f"of {len(ng):,} non-GRR trials{gtxt}." + ftxt)
    return nums, text


def _claim2(t: dict) -> tuple[dict, str]:
    """Fig. 4: OUE on Kosarak, "predicted mean 0 and variance 5434; fitted mean −3.2, variance 5405"."""
    tab = t["jia_fig4_noise"]
    nums: dict[str, float] = {}
    # paper-only arithmetic: ε at which Eq. 14 gives 5434 on Kosarak; the printed mean in SEs
    nums["paper/eps_for_var_5434_clicks"] = oue_eps_for_variance(PAPER_FIG4["predicted_var"], KOSARAK["n_clicks"])
    nums["paper/eps_for_var_5434_transactions"] = oue_eps_for_variance(PAPER_FIG4["predicted_var"],
                                                                       KOSARAK["n_transactions"])
    x = math.exp(4.0)
    nums["paper/oue_eq14_var_eps4_clicks"] = KOSARAK["n_clicks"] * 4 * x / (x - 1) ** 2
    nums["paper/fitted_mean_in_se"] = PAPER_FIG4["fitted_mean"] / math.sqrt(PAPER_FIG4["fitted_var"] / KOSARAK["d"])
    dsets = _ordered(tab, "dataset")
    ds = "retail" if "retail" in dsets else dsets[0]
    eps = 4.0 if any(np.isclose(_eps_list(tab), 4.0)) else _eps_list(tab)[-1]
    cell = select(tab, dataset=ds, oracle="oue", epsilon=eps)
    per = cell.pivot_table(index="rep", columns="metric", values="value", aggfunc="first")
    text = (f"Eq. 14 for OUE gives 5434 at ε = {fmt(nums['paper/eps_for_var_5434_clicks'])} with n = 8,019,015 "
            f"(ε = {fmt(nums['paper/eps_for_var_5434_transactions'])} with the 990,002 transactions; at ε = 4 it is "
            f"{fmt(nums['paper/oue_eq14_var_eps4_clicks'])}); the printed mean −3.2 with variance 5405 over "
            f"d = 41,270 is {fmt(nums['paper/fitted_mean_in_se'])} standard errors from 0.")
    if len(per):
        pv = float(per["predicted_var"].mean())
        fm = per["fitted_mean"].to_numpy(dtype=float)
        mzv = per["mean_z"].to_numpy(dtype=float)
        ok = np.abs(fm) > 0
        # d from the saved scalars: mean_z = mean / √(Var/d)  ⇒  d = Var·(mean_z/mean)²
        d = float(np.round(np.median(pv * (mzv[ok] / fm[ok]) ** 2))) if ok.any() else float("nan")
        pre = f"oue_{ds}_{_e(eps)}"
        nums[f"{pre}/predicted_var"] = pv
        nums[f"{pre}/fitted_var_mean"] = float(per["fitted_var"].mean())
        nums[f"{pre}/fitted_mean_mean"] = float(fm.mean())
        nums[f"{pre}/fitted_mean_sd"] = float(fm.std(ddof=1)) if fm.size > 1 else float("nan")
        nums[f"{pre}/d"] = d
        nums[f"{pre}/se_of_mean"] = math.sqrt(pv / d) if np.isfinite(d) else float("nan")
        nums[f"{pre}/n_trials"] = float(fm.size)
        text += (f" In our {fm.size} OUE trials on {ds} at ε = {eps:g} the fitted mean is "
                 f"{fmt(nums[f'{pre}/fitted_mean_mean'])} ± {fmt(nums[f'{pre}/fitted_mean_sd'])} counts "
                 f"(predicted variance {fmt(pv)}, fitted {fmt(nums[f'{pre}/fitted_var_mean'])}; SE of one trial's "
                 f"mean √({fmt(pv)}/{d:,.0f}) = {fmt(nums[f'{pre}/se_of_mean'])})")
    oz = select(tab, "mean_z", oracle="oue")
    if len(oz):
        nums["oue_max_abs_mean_z"] = float(oz["value"].abs().max())
        nums["oue_frac_mean_z_le3"] = float((oz["value"].abs() <= 3).mean())
        text += (f"; over all {len(oz)} OUE trials (every dataset and ε) max |mean/SE| = "
                 f"{fmt(nums['oue_max_abs_mean_z'])}.")
    return nums, text


def ratio_se(tab: pd.DataFrame, a: str, b: str, metric: str = "mse") -> pd.Series:
    """Standard error of R = mean(a)/mean(b) per (dataset, oracle, ε), paired over repetitions.

    Methods a and b run on the same oracle output in each repetition, so the delta method on the
    paired sample gives Var(R) ≈ Var(a_r − R·b_r) / (k · mean(b)²) over the k repetitions both
    have (the SE of 1 − R, the relative improvement, is the same). NaN with fewer than 2 pairs.
    """
    t = select(tab, metric, method=[a, b])
    w = t.pivot_table(index=["dataset", "oracle", "epsilon", "rep"], columns="method", values="value",
                      aggfunc="first")
    if a not in w or b not in w:
        return pd.Series(dtype=float)
    w = w[[a, b]].dropna()

    def se(g):
        k = len(g)
        if k < 2:
            return float("nan")
        r = g[a].mean() / g[b].mean()
        return float(np.std(g[a] - r * g[b], ddof=1) / (np.sqrt(k) * abs(g[b].mean())))

    return w.groupby(level=["dataset", "oracle", "epsilon"]).apply(se)


def _mse(tab) -> pd.Series:
    return cell_means(tab, "mse", ["dataset", "oracle", "method", "epsilon"]).sort_index()


def _by_eps(s: pd.Series, ds, orc, method) -> dict[float, float]:
    try:
        v = s.loc[(ds, orc, method)]
    except KeyError:
        return {}
    return {float(e): float(x) for e, x in v.sort_index().items()}


def _ratio_series(a: dict, b: dict, f=lambda x, y: x / y) -> dict:
    return {e: f(a[e], b[e]) for e in a if e in b}


def _cells(tab: pd.DataFrame):
    """(dataset, oracle) pairs of a table, in table order."""
    for ds in _ordered(tab, "dataset"):
        for orc in _ordered(select(tab, dataset=ds), "oracle"):
            yield ds, orc


def _store(nums: dict, key: str, ds: str, orc: str, series: dict) -> None:
    """nums["key/ds/orc/eps=…"] = value for every ε of a {ε: value} series."""
    for e, v in series.items():
        nums[f"{key}/{ds}/{orc}/{_e(e)}"] = v


def _claim3(t: dict) -> tuple[dict, str]:
    """Fig. 7: OUE-Zero and OUE-Calibrate have orders of magnitude smaller error than OUE."""
    tab = t["jia_fig7_error"]
    s = _mse(tab)
    nums, parts = {}, []
    for ds, orc in _cells(tab):
        base = _by_eps(s, ds, orc, "base")
        rz = _ratio_series(base, _by_eps(s, ds, orc, "zero"))
        rc = _ratio_series(base, _by_eps(s, ds, orc, "calibrate"))
        _store(nums, "base_over_zero", ds, orc, rz)
        _store(nums, "base_over_calibrate", ds, orc, rc)
        O = orc.upper()
        parts.append(f"{ds}, {O}: {O}/{O}-Zero error ratio {_series(rz, 'x')}; "
                     f"{O}/{O}-Calibrate {_series(rc, 'x')}")
    return nums, "; ".join(parts) + "."


def _claim4(t: dict) -> tuple[dict, str]:
    """OUE-Calibrate beats OUE-Zero, more so at larger ε (Retail 2.4 % → 65 %, Kosarak 16 % → 97 %)."""
    tab = t["jia_fig7_error"]
    s = _mse(tab)
    nums, parts = {}, []
    imp = lambda c, z: 1.0 - c / z  # noqa: E731  relative improvement 1 − E_cal/E_zero
    for ds, orc in _cells(tab):
        zero = _by_eps(s, ds, orc, "zero")
        ic = _ratio_series(_by_eps(s, ds, orc, "calibrate"), zero, imp)
        im = _ratio_series(_by_eps(s, ds, orc, "calibrate-mv"), zero, imp)
        se = ratio_se(select(tab, dataset=ds, oracle=orc), "calibrate", "zero")
        ise = {e: float(se.get((ds, orc, e), np.nan)) for e in ic}
        _store(nums, "improvement", ds, orc, ic)
        _store(nums, "improvement_se", ds, orc, ise)
        _store(nums, "improvement_mv", ds, orc, im)
        pm = {e: f"{fmt(v, '%').rstrip(' %')} ± {fmt(ise[e], '%')}" for e, v in ic.items()}
        txt = (f"{ds}, {orc.upper()}: 1 − E_cal/E_zero "
               + ", ".join(f"{v} ({'ε = ' if i == 0 else ''}{e:g})" for i, (e, v) in enumerate(pm.items())))
        if im:
            txt += f" (mean–variance fit {_series(im, '%')})"
        parts.append(txt)
    return nums, "; ".join(parts) + "."


def _claim5(t: dict) -> tuple[dict, str]:
    """Further resetting Calibrate's estimates below the significance threshold has negligible impact."""
    tab = t["jia_fig7_error"]
    s = _mse(tab)
    nums, parts = {}, []
    for ds, orc in _cells(tab):
        cz = _by_eps(s, ds, orc, "calibrate-zero")
        rc = _ratio_series(cz, _by_eps(s, ds, orc, "calibrate"))
        rz = _ratio_series(cz, _by_eps(s, ds, orc, "zero"))
        _store(nums, "calzero_over_cal", ds, orc, rc)
        _store(nums, "calzero_over_zero", ds, orc, rz)
        worse = [e for e, v in rz.items() if v > 1]
        O = orc.upper()
        txt = (f"{ds}, {O}: {O}-Calibrate+cut / {O}-Calibrate = {_series(rc)}; "
               f"/ {O}-Zero = {_series(rz)}")
        txt += (f" (worse than {O}-Zero at ε = {', '.join(f'{e:g}' for e in worse)})" if worse
                else f" (never worse than {O}-Zero)")
        parts.append(txt)
    return nums, "; ".join(parts) + "."


def _hh_means(tab) -> pd.Series:
    """Mean precision/recall/F (and true heavy hitters, false positives) per (metric, dataset, oracle,
    ε, ratio, method) (NaN-mean)."""
    t = select(tab, ["precision", "recall", "f_score", "n_true", "fp"])
    return t.groupby(["metric", "dataset", "oracle", "epsilon", "threshold_ratio", "method"], sort=True)["value"].mean()


def _max_trial_diff(tab, a: str, b: str, **eq) -> float:
    """max |a − b| over repetitions, cells and P/R/F of two methods (NaN = NaN counts as equal)."""
    t = select(tab, ["precision", "recall", "f_score"], method=[a, b], **eq)
    keys = ["metric", "dataset", "oracle", "epsilon", "threshold_ratio", "rep"]
    w = t.pivot_table(index=keys, columns="method", values="value", aggfunc="first", dropna=False)
    if a not in w or b not in w:
        return float("nan")
    x, y = w[a].to_numpy(dtype=float), w[b].to_numpy(dtype=float)
    both = ~(np.isnan(x) & np.isnan(y))
    d = np.abs(x[both] - y[both])
    return float(np.where(np.isnan(d), np.inf, d).max()) if d.size else 0.0


def _claim6(t: dict) -> tuple[dict, str]:
    """Fig. 5/6 (ε = 4): Calibrate has higher precision, lower recall, better F-score than OUE,
    especially below the significance threshold; OUE = OUE-Zero above it."""
    tab = t["jia_fig5_6_hh_threshold"]
    hm = _hh_means(tab)
    nums, parts = {}, []
    for (met, ds, orc, eps, r, m), v in hm.items():
        nums[f"{met}/{ds}/{orc}/{_e(eps)}/{m}/ratio={r:g}"] = float(v)
    for ds in _ordered(tab, "dataset"):
        sub = select(tab, dataset=ds)
        for orc in _ordered(sub, "oracle"):
            for eps in _eps_list(select(sub, oracle=orc)):
                g = lambda met, m, r: float(hm.get((met, ds, orc, eps, r, m), np.nan))  # noqa: E731
                ratios = sorted(float(r) for r in pd.unique(select(sub, oracle=orc, epsilon=eps)["threshold_ratio"]))
                below = [r for r in ratios if r < 1 - 1e-9]
                above = [r for r in ratios if r >= 1 - 1e-9]
                pre = f"{ds}/{orc}/{_e(eps)}"
                O = orc.upper()
                wins = [r for r in below
                        if g("f_score", "calibrate", r) > max(g("f_score", "base", r), g("f_score", "zero", r))]
                for r in below:
                    nums[f"cal_f_best/{pre}/ratio={r:g}"] = float(r in wins)
                nums[f"n_below_cal_f_best/{pre}"] = float(len(wins))
                nums[f"n_below/{pre}"] = float(len(below))
                txt = (f"{ds}, {O}, ε = {eps:g}: below the threshold Calibrate's F-score exceeds {O}'s and "
                       f"{O}-Zero's at {len(wins)} of {len(below)} ratios"
                       + (f" ({', '.join(f'{r:g}' for r in wins)})" if wins and len(wins) < len(below) else ""))
                ex = min(below, key=lambda r: abs(r - EXAMPLE_RATIO)) if below else None
                if ex is not None:
                    txt += (f" (ratio {ex:g}: {fmt(g('f_score', 'calibrate', ex))} vs {fmt(g('f_score', 'base', ex))}"
                            f" ({O}) and {fmt(g('f_score', 'zero', ex))} (Zero))")
                spans = {}
                for met in ("precision", "recall"):
                    for m in ("calibrate", "base", "zero"):
                        lo, hi = _span(g(met, m, r) for r in below)
                        nums[f"{met}_below_min/{pre}/{m}"], nums[f"{met}_below_max/{pre}/{m}"] = lo, hi
                        spans[met, m] = fmt_span(lo, hi)
                n_rec_lower = sum(g("recall", "calibrate", r) < g("recall", "base", r) for r in below)
                nums[f"n_below_cal_recall_lt_base/{pre}"] = float(n_rec_lower)
                txt += (f"; precision {spans['precision', 'calibrate']} vs {O} {spans['precision', 'base']}, "
                        f"recall {spans['recall', 'calibrate']} vs {spans['recall', 'base']} "
                        f"(below {O}'s at {n_rec_lower} of {len(below)} ratios)")
                if below:
                    r0 = below[0]
                    txt += (f"; at ratio {r0:g} F {fmt(g('f_score', 'calibrate', r0))} (Calibrate) vs "
                            f"{fmt(g('f_score', 'base', r0))} ({O}); {O}-Zero precision "
                            f"{fmt(g('precision', 'zero', r0))}, recall {fmt(g('recall', 'zero', r0))}")
                    nums[f"zero_precision_smallest_ratio/{pre}"] = g("precision", "zero", r0)
                    nums[f"zero_recall_smallest_ratio/{pre}"] = g("recall", "zero", r0)
                if above:
                    db = [g("f_score", "calibrate", r) - g("f_score", "base", r) for r in above]
                    dz = [g("f_score", "calibrate", r) - g("f_score", "zero", r) for r in above]
                    dmax = max(np.nanmax(np.abs(db)), np.nanmax(np.abs(dz)))
                    nums[f"max_abs_f_diff_at_or_above/{pre}"] = float(dmax)
                    lo, hi = _span(d for d, r in zip(db, above) if r <= 1.5 + 1e-9)
                    nums[f"f_cal_minus_base_ratio_1_to_1.5_min/{pre}"] = lo
                    nums[f"f_cal_minus_base_ratio_1_to_1.5_max/{pre}"] = hi
                    bz = _max_trial_diff(sub, "base", "zero", oracle=orc, epsilon=eps, threshold_ratio=above)
                    nums[f"max_trial_diff_base_zero_at_or_above/{pre}"] = bz
                    txt += (f"; at and above the threshold the three F-scores are within {fmt(dmax)} "
                            f"(Calibrate − {O} {fmt_span(lo, hi)} at ratios 1–1.5); per-trial max "
                            f"|{O} − {O}-Zero| there = {fmt(bz)}")
                parts.append(txt)
    return nums, "; ".join(parts) + "."


def _hh_eps_text(tab, hm, nums, ds, orc) -> str:
    """Fig. 8/9 reduction at ratio 1 for one dataset and oracle."""
    O = orc.upper()
    eps_all = _eps_list(select(tab, dataset=ds, oracle=orc))
    g = lambda met, m, e: float(hm.get((met, ds, orc, e, 1.0, m), np.nan))  # noqa: E731
    pre = f"{ds}/{orc}"
    for met in ("f_score", "precision", "recall"):
        for m in ("calibrate", "base", "zero"):
            for e in eps_all:
                nums[f"{met}/{pre}/{m}/{_e(e)}"] = g(met, m, e)
    for e in eps_all:
        nums[f"n_true/{pre}/{_e(e)}"] = g("n_true", "base", e)
        for m in ("calibrate", "base"):
            nums[f"fp/{pre}/{m}/{_e(e)}"] = g("fp", m, e)
    # an ε whose threshold no item truly exceeds (small n, small ε): recall and F undefined in every
    # trial, precision 0 or undefined; say so and give the false positives instead
    empty = [e for e in eps_all if g("n_true", "base", e) == 0]

    def pair(e):
        if e in empty:
            return (f"no true heavy hitter, false positives/trial {fmt(g('fp', 'calibrate', e))} vs "
                    f"{fmt(g('fp', 'base', e))}")
        return f"{fmt(g('f_score', 'calibrate', e))} vs {fmt(g('f_score', 'base', e))}"

    pairs = ", ".join(f"{pair(e)} ({'ε = ' if i == 0 else ''}{e:g})" for i, e in enumerate(eps_all))
    wins = sum(g("f_score", "calibrate", e) > g("f_score", "base", e) for e in eps_all)
    nums[f"n_eps_cal_f_gt_base/{pre}"] = float(wins)
    defined = [e for e in eps_all if e not in empty]
    nums[f"n_eps_defined/{pre}"] = float(len(defined))
    sp = {(met, m): fmt_span(*_span(g(met, m, e) for e in defined))
          for met in ("precision", "recall") for m in ("calibrate", "base")}
    bz = _max_trial_diff(select(tab, dataset=ds, oracle=orc), "base", "zero", threshold_ratio=1.0)
    nums[f"max_trial_diff_base_zero/{pre}"] = bz
    return (f"{ds}, {O}: F-score {O}-Calibrate vs {O} {pairs} (Calibrate higher at {wins} of {len(defined)} ε); "
            f"precision {sp['precision', 'calibrate']} vs {sp['precision', 'base']}, recall "
            f"{sp['recall', 'calibrate']} vs {sp['recall', 'base']}; per-trial max |{O} − {O}-Zero| = {fmt(bz)}")


def _claim7(t: dict) -> tuple[dict, str]:
    """Fig. 8/9: at each ε's significance threshold Calibrate beats OUE = OUE-Zero in F-score."""
    tab = t["jia_fig8_9_hh_epsilon"]
    hm = _hh_means(select(tab, threshold_ratio=1.0))
    nums, parts = {}, []
    for ds, orc in _cells(tab):
        parts.append(_hh_eps_text(tab, hm, nums, ds, orc))
    return nums, "; ".join(parts) + "."


def _claim8(t: dict) -> tuple[dict, str]:
    """Fig. 7 for every oracle X: X-Calibrate vs X-Zero vs X."""
    tab = t["jia_fig7_error_oracles"]
    s = _mse(tab)
    nums, parts = {}, []
    for ds in _ordered(tab, "dataset"):
        imps, rzs, rcs = [], [], []
        for orc in _ordered(select(tab, dataset=ds), "oracle"):
            base, zero, cal = (_by_eps(s, ds, orc, m) for m in ("base", "zero", "calibrate"))
            ic = _ratio_series(cal, zero, lambda c, z: 1.0 - c / z)
            rz, rc = _ratio_series(base, zero), _ratio_series(base, cal)
            se = ratio_se(select(tab, dataset=ds, oracle=orc), "calibrate", "zero")
            _store(nums, "improvement", ds, orc, ic)
            _store(nums, "improvement_se", ds, orc, {e: float(se.get((ds, orc, e), np.nan)) for e in ic})
            _store(nums, "base_over_zero", ds, orc, rz)
            _store(nums, "base_over_calibrate", ds, orc, rc)
            neg = [e for e, v in ic.items() if v < 0]
            nums[f"n_eps_cal_worse_than_zero/{ds}/{orc}"] = float(len(neg))
            O = orc.upper()
            imps.append(f"{O} {_series(ic, '%')}")
            rzs.append(f"{O} {_series(rz, 'x')}")
            rcs.append(f"{O} {_series(rc, 'x')}")
        allimp = {k: v for k, v in nums.items() if k.startswith(f"improvement/{ds}/")}
        cell = lambda k: k.split("/")[2].upper() + " ε = " + k.split("/")[3][4:]  # noqa: E731
        exc = [cell(k) for k, v in allimp.items() if not v > 0]
        # |improvement| under 2 paired standard errors: the sign is not resolved by these repetitions
        unres = [cell(k) for k, v in allimp.items()
                 if abs(v) < 2 * nums.get(k.replace("improvement/", "improvement_se/", 1), np.nan)]
        nums[f"n_cells_cal_better_than_zero/{ds}"] = float(len(allimp) - len(exc))
        nums[f"n_cells_within_2se/{ds}"] = float(len(unres))
        nums[f"n_cells/{ds}"] = float(len(allimp))
        parts.append(f"{ds}: X-Calibrate's error is below X-Zero's in {len(allimp) - len(exc)} of {len(allimp)} "
                     f"(oracle, ε) cells" + (f" (not: {', '.join(exc)})" if exc else "")
                     + (f"; within 2 paired SE of no change: {', '.join(unres)}" if unres else "")
                     + ". 1 − E_cal/E_zero: " + "; ".join(imps)
                     + ". X/X-Zero error ratio: " + "; ".join(rzs)
                     + ". X/X-Calibrate: " + "; ".join(rcs))
    return nums, " ".join(p + "." for p in parts)


def _claim9(t: dict) -> tuple[dict, str]:
    """Fig. 8/9 for every oracle X at the significance threshold."""
    tab = t["jia_fig8_9_hh_epsilon_oracles"]
    hm = _hh_means(select(tab, threshold_ratio=1.0))
    nums, parts = {}, []
    for ds, orc in _cells(tab):
        parts.append(_hh_eps_text(tab, hm, nums, ds, orc))
    wins = sum(v for k, v in nums.items() if k.startswith("n_eps_cal_f_gt_base/"))
    cells = sum(v for k, v in nums.items() if k.startswith("n_eps_defined/"))
    nums["n_cells_cal_f_gt_base"], nums["n_cells"] = float(wins), float(cells)
    return nums, (f"X-Calibrate's F-score is above X's in {wins:.0f} of {cells:.0f} (dataset, oracle, ε) cells. "
                  + "; ".join(parts) + ".")


# id -> (configs, reducer, the paper's claim in brief)
CLAIMS: dict[int, tuple[list[str], object, str]] = {
    1: (["jia_fig4_noise"], _claim1, "§III-B Eq. 13–14: one trial's noise is ≈ N(0, Eq. 14)"),
    2: (["jia_fig4_noise"], _claim2, "§IV-B Fig. 4: predicted variance 5434, fitted mean −3.2, variance 5405"),
    3: (["jia_fig7_error"], _claim3, "§IV-B Fig. 7: Zero and Calibrate have orders of magnitude smaller error"),
    4: (["jia_fig7_error"], _claim4, "§IV-B: Calibrate beats Zero, more at larger ε (Retail 2.4 %→65 %)"),
    5: (["jia_fig7_error"], _claim5, "§IV-B: cutting Calibrate's small estimates has negligible impact"),
    6: (["jia_fig5_6_hh_threshold"], _claim6, "§IV-B Fig. 5/6: Calibrate better F below the threshold"),
    7: (["jia_fig8_9_hh_epsilon"], _claim7, "§IV-B Fig. 8/9: Calibrate better F at the significance threshold"),
    8: (["jia_fig7_error_oracles"], _claim8, "Fig. 7 for every oracle (extension)"),
    9: (["jia_fig8_9_hh_epsilon_oracles"], _claim9, "Fig. 8/9 for every oracle (extension)"),
}


def claims(root="results", *, quick: bool = False, ids=None) -> list[dict]:
    """One dict per claim (ids 1–9): ``{"id", "config", "claim", "numbers", "reps", "text"}``.

    ``numbers`` maps labels to floats (fractions, not percent), ``text`` is a "we measure" paragraph
    with them to 3 significant digits, ``reps`` = {config: {method: [min, max]}}. A claim whose
    config has no ``results.parquet`` under ``root`` has ``missing`` = those configs instead.
    ``quick`` reads the ``NAME-quick`` folders of ``ldpopt.experiments.run(..., quick=True)``.
    """
    cache: dict[str, pd.DataFrame | None] = {}
    out = []
    for cid, (configs, fn, what) in CLAIMS.items():
        if ids is not None and cid not in ids:
            continue
        for c in configs:
            if c not in cache:
                cache[c] = load_table(root, c, quick)
        missing = [c for c in configs if cache[c] is None]
        entry = {"id": cid, "config": list(configs), "claim": what}
        if missing:
            entry.update(missing=missing, numbers={}, reps={},
                         text=f"missing: no results.parquet for {', '.join(missing)}")
            out.append(entry)
            continue
        tabs = {c: cache[c] for c in configs}
        reps = {c: rep_counts(tab) for c, tab in tabs.items()}
        nums, text = fn(tabs)
        for c in configs:
            for m, (lo, hi) in reps[c].items():
                nums[f"reps_min/{c}/{m}"], nums[f"reps_max/{c}/{m}"] = float(lo), float(hi)
        rtxt = "; ".join(f"`{c}`, {_reps_text(r)}" for c, r in reps.items())
        entry.update(numbers=nums, reps=reps, text=f"({rtxt}) We measure: {text}")
        out.append(entry)
    return out


def summary_markdown(root="results", *, quick: bool = False) -> str:
    """``| # | ours | configs |`` table of :func:`claims` (one row per claim)."""
    lines = ["| # | ours | configs |", "|---|---|---|"]
    for c in claims(root, quick=quick):
        cfg = ", ".join(f"`{x}`" for x in c["config"])
        text = c["text"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {c['id']} | {text} | {cfg} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m ldpopt.experiments.claims_jia [root] [--json]
    import sys

    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = args[0] if args else "results"
    if "--json" in sys.argv:
        print(json.dumps(claims(root), indent=1, ensure_ascii=False))
    else:
        print(summary_markdown(root))
