"""The numbers behind the Wang et al. claims of REPRODUCTION.md (table "Claims", rows 1–32),
recomputed from saved results tables (``<root>/<config>/results.parquet``), never simulated.

Each claim of Wang et al. (arXiv "Consistent and Accurate Frequency Oracles under LDP" §4 + App. C;
NDSS 2020 §V) has one function here that reads the configs the claim rests on, reduces them with the
helpers below (means over repetitions, ratios between methods, argmins, ranks) and returns

``{"id": int, "config": [names], "numbers": {label: float | list}, "text": str, "reps": {...}}``

* ``numbers``: every quantity the "we measure" cell quotes, one entry per cell of the sweep, labelled
  ``"config | dataset | oracle | eps=… | rho=… | quantity"`` (so each can be audited against the
  table). Argmin results are lists of method names (one per x value, in the order the label says).
* ``text``: a one-paragraph "we measure" sentence with the numbers at 3 significant digits.
* ``reps``: per config, the number of repetitions each method has rows for (an int, or
  ``[min, max]`` over the sweep's cells when it differs); for the bias–variance config the number of
  runs (50 per repetition block).
* ``missing``: present instead of ``numbers`` when a config the claim needs has no
  ``results.parquet`` under ``root``; ``missing_extra`` lists absent *extra* configs (a claim also
  measured on a config the REPRODUCTION.md row did not use: arXiv Fig. 1 on the IPUMS stand-in,
  arXiv Fig. 5, arXiv Fig. 7 on Beta/POS/Fire, NDSS Fig. 6–7), whose numbers are simply left out.

Conventions (*choices*, the papers give none for these summaries):

* An MSE/MAE "cell" is the mean over the repetitions of the rows of one (dataset, oracle, ε,
  query parameter, method); every method is averaged over the repetitions it has rows for (the old
  designs ran Power on fewer repetitions; ``reps`` says how many).
* A ratio A/B is the ratio of the two cell means (not the mean of per-repetition ratios).
* "Non-norm" methods (claims 12, 19) are Base, Base-Pos, Post-Pos, Base-Cut and Power (arXiv §4.3:
  the methods without the sum-to-one constraint); "norm-based" methods are Norm, Norm-Mul,
  Norm-Sub, MLE-Apx, Norm-Cut, Norm-Hyb and PowerNS.
* Bias–variance (claims 8–10): per value v, bias_v = Σ err / R and the unbiased sample variance over
  the R runs (:func:`ldpopt.experiments.tasks_wang_runs.combine_bias_variance`); counts = frequencies × n.
  The standard error of a bias sum Σ_v bias_v is approximated as √(Σ_v Var_v / R), i.e. treating
  the values as independent (the per-run sums are not stored, so their covariances are unknown).

Verdicts (agree/disagree) are not computed here: they stay a human judgement.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .plot_wang import LABELS, LEFT, RIGHT

__all__ = ["WANG_METHODS", "claims", "summary_markdown", "load_table", "cell_means", "ratio", "rep_counts",
           "best_method", "fmt", "NON_NORM", "NORM_BASED"]

#: the 12 methods of the Wang configs; absent ones become NaN columns of :func:`cell_means`
WANG_METHODS = ("base", "base-pos", "post-pos", "norm", "norm-mul", "norm-sub", "mle-apx", "base-cut",
                "norm-cut", "norm-hyb", "power", "power-ns")
NON_NORM = ("base", "base-pos", "post-pos", "base-cut", "power")
NORM_BASED = ("norm", "norm-mul", "norm-sub", "mle-apx", "norm-cut", "norm-hyb", "power-ns")
_KEYS = ("dataset", "oracle", "epsilon")
_XNAME = {"epsilon": "eps", "rho": "rho", "k": "k", "n_users": "n", "query_set": "set", "fit": "fit"}


# -- loading -------------------------------------------------------------------------------------

def _folder(root, name: str, quick: bool) -> Path:
    return Path(root) / (name + ("-quick" if quick else ""))


def load_table(root, name: str, *, quick: bool = False, partial: bool = False,
               columns=None) -> pd.DataFrame | None:
    """The saved table of config ``name`` under ``root`` (``NAME-quick`` with ``quick``), or None if
    it has no ``results.parquet``. With ``partial`` an unfinished sweep's ``parts/*.parquet`` are
    read instead (the same rows, for the tasks done so far). String columns come back as
    categoricals (the bias–variance table has ~6·10⁶ rows)."""
    import pyarrow.parquet as pq

    folder = _folder(root, name, quick)
    path = folder / "results.parquet"
    if path.is_file():
        files = [path]
    elif partial and (folder / "parts").is_dir():
        files = sorted((folder / "parts").glob("*.parquet"))
        if not files:
            return None
    else:
        return None
    frames = []
    for f in files:
        schema = pq.read_schema(f)
        cols = [c for c in (columns or schema.names) if c in schema.names]
        strs = [c for c in cols if str(schema.field(c).type) in ("string", "large_string")]
        frames.append(pq.read_table(f, columns=cols, read_dictionary=strs).to_pandas())
    t = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    for c in ("dataset", "oracle", "method", "metric", "query_set", "fit"):
        if c in t and not isinstance(t[c].dtype, pd.CategoricalDtype):
            t[c] = t[c].astype("category")
    return t


def _meta(root, name: str, quick: bool) -> dict:
    p = _folder(root, name, quick) / "meta.json"
    if p.is_file():
        return json.loads(p.read_text())
    return {}


# -- reductions ----------------------------------------------------------------------------------

def cell_means(table: pd.DataFrame, metric: str = "mse", by=()) -> pd.DataFrame:
    """Mean over repetitions of ``metric`` per (dataset, oracle, ε, *by) × method, as a wide frame
    (index: the keys, columns: methods; NaN where a method has no rows, e.g. Power in a quick run;
    every method of :data:`WANG_METHODS` is a column)."""
    t = table[table.metric == metric]
    keys = [*_KEYS, *by]
    m = t.groupby(keys + ["method"], observed=True).value.mean()
    w = m.unstack("method").sort_index()
    w.columns = w.columns.astype(str)
    return w.reindex(columns=[*w.columns, *[x for x in WANG_METHODS if x not in w.columns]])


def ratio(wide: pd.DataFrame, num: str, den: str) -> pd.Series:
    """Cell-wise ratio of two methods' means (NaN where either is absent)."""
    if num not in wide or den not in wide:
        return pd.Series(np.nan, index=wide.index)
    return wide[num] / wide[den]


def best_method(wide: pd.DataFrame, methods=None, largest: bool = False) -> pd.Series:
    """Per cell, the method (among ``methods``, default all columns) with the smallest mean (largest
    with ``largest``), ignoring methods without rows in that cell."""
    cols = [m for m in (methods or wide.columns) if m in wide]
    w = wide[cols].dropna(axis=0, how="all")
    return (w.idxmax(axis=1) if largest else w.idxmin(axis=1)).astype(object)


def rep_counts(table: pd.DataFrame) -> dict:
    """Per method, the number of repetitions it has rows for: an int if the same in every (dataset,
    oracle, ε) cell, else ``[min, max]``. For bias–variance tables the total number of runs."""
    t = table[table.method != "truth"]
    if "runs" in t:
        first = t[t.metric == "sum"].drop_duplicates(list(_KEYS) + ["method", "rep"])
        per = first.groupby(list(_KEYS) + ["method"], observed=True).runs.sum()
    else:
        per = t.groupby(list(_KEYS) + ["method"], observed=True).rep.nunique()
    out = {}
    for m, s in per.groupby(level="method", observed=True):
        lo, hi = int(s.min()), int(s.max())
        out[str(m)] = lo if lo == hi else [lo, hi]
    return out


# -- formatting ----------------------------------------------------------------------------------

def fmt(x) -> str:
    """3 significant digits; thousands separators for large numbers; 'n/a' for NaN."""
    if isinstance(x, str):
        return x
    x = float(x)
    if not math.isfinite(x):
        return "n/a"
    if x == 0:
        return "0"
    e = math.floor(math.log10(abs(x)))
    if 3 <= e < 9:
        return f"{round(x, 2 - e):,.0f}"
    if e < -3 or e >= 9:
        return f"{x:.2e}".replace("e-0", "e-").replace("e+0", "e")
    return f"{x:.{max(0, 2 - e)}f}"


def _lab(x) -> str:
    return LABELS.get(x, x) if isinstance(x, str) else fmt(x)


def _rng(values) -> str:
    v = np.asarray([x for x in np.ravel(np.asarray(values, dtype=float)) if np.isfinite(x)])
    if v.size == 0:
        return "n/a"
    lo, hi = fmt(v.min()), fmt(v.max())
    return lo if lo == hi else f"{lo}–{hi}"


def _lv(v) -> str:
    """A label's key value: plain (no thousands separators), so labels are easy to parse."""
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{v:g}" if isinstance(v, (float, np.floating)) else str(v)


def _xv(v) -> str:
    if isinstance(v, (int, np.integer)) and abs(v) >= 10000:
        return f"{v:,}"
    return f"{v:g}" if isinstance(v, (float, np.floating)) else str(v)


def _by(s: pd.Series, levels=("dataset", "oracle"), fn=_rng) -> str:
    """'zipf OLH 0.5–0.6; zipf OUE …': ``fn`` of ``s`` per group of ``levels``."""
    levels = [lv for lv in levels if lv in s.index.names]
    if not levels:
        return fn(s)
    parts = []
    for key, sub in s.groupby(level=levels, observed=True, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        name = " ".join(str(k).upper() if lv == "oracle" else _xv(k) for lv, k in zip(levels, key))
        parts.append(f"{name} {fn(sub)}")
    return "; ".join(parts)


def _seq(s: pd.Series, xname: str, level: str) -> str:
    """'17.3 (ε = 0.2), 10.9 (0.5), …' over the ``level`` values of a series."""
    s = s.dropna()
    xs = s.index.get_level_values(level) if isinstance(s.index, pd.MultiIndex) else s.index
    out = [f"{fmt(v)} ({xname} = {_xv(x)})" if i == 0 else f"{fmt(v)} ({_xv(x)})"
           for i, (x, v) in enumerate(zip(xs, s.values))]
    return ", ".join(out) if out else "n/a"


def _ends(s: pd.Series, xname: str, level: str) -> str:
    s = s.dropna()
    if s.empty:
        return "n/a"
    xs = s.index.get_level_values(level)
    return f"{fmt(s.iloc[0])} ({xname} = {_xv(xs[0])}) → {fmt(s.iloc[-1])} ({xname} = {_xv(xs[-1])})"


def _sel(s: pd.Series, **kw) -> pd.Series:
    """Rows of a MultiIndex series with the given level values (levels dropped)."""
    for k, v in kw.items():
        if k not in s.index.names:
            continue
        s = s[s.index.get_level_values(k) == v]
        if isinstance(s.index, pd.MultiIndex) and s.index.nlevels > 1:
            s = s.droplevel(k)
    return s


# -- the claim context ---------------------------------------------------------------------------

class _Missing(Exception):
    pass


class _Ctx:
    def __init__(self, root, quick: bool, partial: bool):
        self.root, self.quick, self.partial = root, quick, partial
        self._cache: dict[str, pd.DataFrame | None] = {}

    def get(self, name: str, columns=None) -> pd.DataFrame | None:
        if name not in self._cache:
            self._cache[name] = load_table(self.root, name, quick=self.quick, partial=self.partial,
                                           columns=columns)
        return self._cache[name]

    def is_partial(self, name: str) -> bool:
        return not (_folder(self.root, name, self.quick) / "results.parquet").is_file()

    def meta(self, name: str) -> dict:
        return _meta(self.root, name, self.quick)

    def bias_variance(self, name: str) -> pd.DataFrame | None:
        """:func:`_bias_variance` of a config, computed once (claims 8–10 share it)."""
        key = ("bv", name)
        if key not in self._cache:
            t = self.get(name, _BV_COLS)
            self._cache[key] = None if t is None else _bias_variance(t)
            self._cache.pop(name, None)  # the raw table (~6·10⁶ rows) is no longer needed
        return self._cache[key]


class _Claim:
    """Accumulates one claim's configs, numbers and text pieces."""

    def __init__(self, ctx: _Ctx, cid: int):
        self.ctx, self.id = ctx, cid
        self.config: list[str] = []
        self.numbers: dict = {}
        self.text: list[str] = []
        self.missing_extra: list[str] = []
        self.reps: dict = {}

    def need(self, name: str, columns=None) -> pd.DataFrame:
        t = self.ctx.get(name, columns)
        if t is None:
            raise _Missing(name)
        self._use(name, t)
        return t

    def need_bv(self, name: str) -> pd.DataFrame:
        bv = self.ctx.bias_variance(name)
        if bv is None:
            raise _Missing(name)
        if name not in self.config:
            self.config.append(name)
            self.reps[name] = {str(m): (int(s.min()) if s.min() == s.max() else [int(s.min()), int(s.max())])
                               for m, s in bv.groupby("method", observed=True).runs}
        return bv

    def extra(self, name: str) -> pd.DataFrame | None:
        t = self.ctx.get(name)
        if t is None:
            self.missing_extra.append(name)
            return None
        self._use(name, t)
        return t

    def _use(self, name, t):
        if name not in self.config:
            self.config.append(name)
            self.reps[name] = rep_counts(t)

    def put(self, cfg: str, s, quantity: str):
        """Record every cell of series ``s`` (or a scalar) under an explicit label."""
        if not isinstance(s, pd.Series):
            self.numbers[f"{cfg} | {quantity}"] = _num(s)
            return
        names = list(s.index.names)
        for idx, v in s.items():
            idx = idx if isinstance(idx, tuple) else (idx,)
            parts = [str(k) if n in ("dataset", "oracle", "method", None) else f"{_XNAME.get(n, n)}={_lv(k)}"
                     for n, k in zip(names, idx)]
            self.numbers[" | ".join([cfg, *parts, quantity])] = _num(v)

    def put_list(self, cfg: str, s: pd.Series, quantity: str, x: str):
        """Record a series as lists over its ``x`` level, one list per remaining key."""
        others = [n for n in s.index.names if n != x]
        groups = s.groupby(level=others, observed=True, sort=False) if others else [((), s)]
        for key, sub in groups:
            key = key if isinstance(key, tuple) else (key,)
            xs = [_lv(v) for v in sub.index.get_level_values(x)]
            parts = [str(k) if n in ("dataset", "oracle", "method") else f"{_XNAME.get(n, n)}={_lv(k)}"
                     for n, k in zip(others, key)]
            label = " | ".join([cfg, *parts, f"{quantity} [{_XNAME.get(x, x)}={','.join(xs)}]"])
            self.numbers[label] = [_num(v) for v in sub.values]

    def say(self, s: str):
        self.text.append(s)

    def result(self) -> dict:
        partial = [c for c in self.config if self.ctx.is_partial(c)]
        text = " ".join(self.text)
        if self.missing_extra:
            text += f" (no results yet for {', '.join(self.missing_extra)})"
        if partial:
            text += f" [partial sweep: {', '.join(partial)}]"
        out = {"id": self.id, "config": self.config, "numbers": self.numbers, "text": text,
               "reps": self.reps}
        if self.missing_extra:
            out["missing_extra"] = self.missing_extra
        if partial:
            out["partial"] = partial
        return out


def _num(v):
    if isinstance(v, (str, list)):
        return v
    return float(v)


_CLAIMS: dict[int, Callable[[_Claim], None]] = {}
_CLAIM_CONFIGS: dict[int, tuple[str, ...]] = {}


def _claim(cid: int, *configs: str):
    def deco(fn):
        _CLAIMS[cid] = fn
        _CLAIM_CONFIGS[cid] = configs
        return fn
    return deco


# config names
ARX1, ARX2, ARX3, ARX4, ARX5 = ("wang_arxiv_fig1_full_domain", "wang_arxiv_fig2_set_value",
                                "wang_arxiv_fig3_set_value", "wang_arxiv_fig4_fixed_sets",
                                "wang_arxiv_fig5_top_k")
ARX7, ARX7K = "wang_arxiv_fig7_mae", "wang_arxiv_fig7_mae_kosarak"
ND13, ND4, ND5, ND6, ND7 = ("wang_ndss_fig1_3_bias_variance", "wang_ndss_fig4_full_domain",
                            "wang_ndss_fig5_benefit", "wang_ndss_fig6_set_value", "wang_ndss_fig7_set_value")
ND8, ND9, ND10 = "wang_ndss_fig8_fixed_sets_emoji", "wang_ndss_fig9_choose_method", "wang_ndss_fig10_top_k"


def _short(cfg: str) -> str:
    return cfg.replace("wang_", "").replace("_", " ", 1).split("_")[0]


# -- full domain (claims 1–7, 31) -----------------------------------------------------------------

def _full_domain_ratio(c: _Claim, cfg: str, t, num: str, den: str, q: str, datasets=None):
    w = cell_means(t)
    r = ratio(w, num, den)
    if datasets is not None:
        r = r[r.index.get_level_values("dataset").isin(datasets)]
    c.put(cfg, r, q)
    return r


def _sets(c: _Claim, main: str, extra: str | None):
    """[(main, its table)] plus (extra, its table) when that config has results."""
    out = [(main, c.need(main))]
    if extra:
        t = c.extra(extra)
        if t is not None:
            out.append((extra, t))
    return out


@_claim(1, ND4)
def _c1(c):
    for cfg, t in _sets(c, ND4, ARX1):
        r = _full_domain_ratio(c, cfg, t, "norm", "base", "norm/base mse")
        c.say(f"{_short(cfg)}: Norm/Base MSE over ε: {_by(r)}.")


@_claim(2, ND4)
def _c2(c):
    for cfg, t in _sets(c, ND4, ARX1):
        w = cell_means(t)
        r = ratio(w, "base-pos", "base")
        c.put(cfg, r, "base-pos/base mse")
        d = (ratio(w, "post-pos", "base-pos") - 1).abs().max()
        c.put(cfg, d, "max |post-pos/base-pos - 1|")
        c.say(f"{_short(cfg)}: Base-Pos/Base over ε: {_by(r, levels=('dataset', 'oracle'))}; "
              f"Post-Pos/Base-Pos − 1 at most {fmt(d)}.")


def _base_over_normsub(c, datasets, cfgs):
    for cfg, t in cfgs:
        r = _full_domain_ratio(c, cfg, t, "base", "norm-sub", "base/norm-sub mse",
                               datasets=datasets if cfg == ND4 else None)
        if r.dropna().empty:
            c.say(f"{_short(cfg)}: no rows for {', '.join(datasets or ['any dataset'])}.")
            continue
        pieces = []
        for (ds, orc), s in r.groupby(level=["dataset", "oracle"], observed=True, sort=False):
            f = _seq if orc != "grr" else _ends
            pieces.append(f"{ds} {orc.upper()} {f(s, 'ε', 'epsilon')}")
        c.say(f"{_short(cfg)}: Base/Norm-Sub MSE: " + "; ".join(pieces) + ".")


@_claim(3, ND4)
def _c3(c):
    _base_over_normsub(c, ["zipf"], _sets(c, ND4, ARX1))


@_claim(4, ND4)
def _c4(c):
    _base_over_normsub(c, ["emoji"], _sets(c, ND4, None))


@_claim(5, ND4)
def _c5(c):
    for cfg, t in _sets(c, ND4, ARX1):
        w = cell_means(t)
        eps = w.index.get_level_values("epsilon")
        lo, hi = eps.min(), eps.max()
        falls = {}
        for m in ("norm-mul", "base", "norm-sub"):
            if m not in w:
                continue
            s = w[m]
            f = _sel(s, epsilon=lo) / _sel(s, epsilon=hi)
            c.put(cfg, f, f"{m} mse(eps={lo:g})/mse(eps={hi:g})")
            falls[m] = f
        r = ratio(w, "norm-mul", "base")
        c.put(cfg, r, "norm-mul/base mse")
        above = (r > 1).groupby(level=["dataset", "oracle"], observed=True).agg(["sum", "size"])
        pieces = []
        for (ds, orc) in above.index:
            fl = ", ".join(f"{LABELS[m]} {fmt(falls[m].loc[(ds, orc)])}×" for m in falls)
            rr = _sel(_sel(r, dataset=ds), oracle=orc)
            pieces.append(f"{ds} {orc.upper()}: fall ε {lo:g}→{hi:g} {fl}; Norm-Mul > Base at "
                          f"{int(above.loc[(ds, orc), 'sum'])}/{int(above.loc[(ds, orc), 'size'])} ε "
                          f"(Norm-Mul/Base {fmt(rr.iloc[-1])} at ε = {hi:g})")
        c.say(f"{_short(cfg)}: " + "; ".join(pieces) + ".")


@_claim(6, ND4)
def _c6(c):
    for cfg, t in _sets(c, ND4, ARX1):
        r = _full_domain_ratio(c, cfg, t, "mle-apx", "norm-sub", "mle-apx/norm-sub mse")
        c.say(f"{_short(cfg)}: MLE-Apx/Norm-Sub MSE over ε: {_by(r)}.")


@_claim(7, ND4)
def _c7(c):
    t = c.need(ND4)
    w = cell_means(t)
    best = best_method(w)
    c.put_list(ND4, best, "lowest-mse method", "epsilon")
    r = ratio(w, "power-ns", "base-cut")
    c.put(ND4, r, "power-ns/base-cut mse")
    pieces = []
    for (ds, orc), b in best.groupby(level=["dataset", "oracle"], observed=True, sort=False):
        other = [f"{_lab(m)} at ε = {_xv(e)}" for e, m in zip(b.index.get_level_values("epsilon"), b) if m != "power-ns"]
        pieces.append(f"{ds} {orc.upper()} PowerNS lowest at {sum(b == 'power-ns')}/{len(b)} ε"
                      + (f" (else {', '.join(other)})" if other else ""))
    c.say("; ".join(pieces) + f". PowerNS/Base-Cut MSE: {_by(r)}.")


@_claim(31, ARX1)
def _c31(c):
    t = c.need(ARX1)
    w = cell_means(t)
    pieces = []
    for m in ("mle-apx", "norm-hyb", "base-cut", "power", "power-ns", "norm-cut"):
        r = ratio(w, m, "norm-sub")
        c.put(ARX1, r, f"{m}/norm-sub mse")
        pieces.append(f"{LABELS[m]} {_by(r)}")
    best = best_method(w)
    c.put_list(ARX1, best, "lowest-mse method", "epsilon")
    bests = "; ".join(f"{ds} {orc.upper()} " + ", ".join(sorted({_lab(m) for m in b}))
                      for (ds, orc), b in best.groupby(level=["dataset", "oracle"], observed=True, sort=False))
    c.say("MSE relative to Norm-Sub over ε = 0.2–2: " + " — ".join(pieces)
          + f". Lowest-MSE method(s) over ε: {bests}.")


# -- bias and variance (claims 8–10) -------------------------------------------------------------

def _bias_variance(t: pd.DataFrame) -> pd.DataFrame:
    """Per (oracle, method, v): R, f, bias, variance (frequency scale), n. Sums over the repetition
    blocks, as :func:`tasks_wang_runs.combine_bias_variance` (vectorised for ~6·10⁶ rows)."""
    keys = ["dataset", "oracle", "epsilon"]
    truth = t[t.method == "truth"].groupby(keys + ["v"], observed=True).value.first().rename("f")
    n = t.groupby(keys, observed=True).n_users.first().rename("n")
    s = t[t.method != "truth"]
    g = s.groupby(keys + ["method", "v", "metric"], observed=True).value.sum().unstack("metric")
    runs = s[s.metric == "sum"].groupby(keys + ["method", "v"], observed=True).runs.sum()
    out = pd.DataFrame({"runs": runs, "bias": g["sum"] / runs})
    out["variance"] = (g["sumsq"] / runs - out["bias"] ** 2) * runs / (runs - 1)
    out = out.reset_index()
    out = out.join(truth, on=keys + ["v"]).join(n, on=keys)
    return out


_BV_COLS = ["dataset", "oracle", "epsilon", "rep", "method", "metric", "value", "v", "runs", "n_users"]


@_claim(8, ND13)
def _c8(c):
    bv = c.need_bv(ND13)
    bv = bv[bv.method.isin(["base", "norm"])]
    z = (bv.bias.abs() / np.sqrt(bv.variance / bv.runs))
    bv = bv.assign(z=z)
    mx = bv.groupby(["dataset", "oracle", "method"], observed=True).z.max()
    n5 = bv.groupby(["dataset", "oracle", "method"], observed=True).z.apply(lambda x: int((x > 5).sum()))
    c.put(ND13, mx, "max_v |bias|/SE")
    c.put(ND13, n5, "values with |bias|/SE > 5")
    pieces = [f"{orc.upper()} Base {fmt(mx.loc[(ds, orc, 'base')])}, Norm {fmt(mx.loc[(ds, orc, 'norm')])}"
              for ds, orc in mx.droplevel("method").index.unique()]
    c.say(f"max over values of |bias|/SE: {'; '.join(pieces)}; values beyond 5σ: {int(n5.sum())}.")


@_claim(9, ND13)
def _c9(c):
    bv = c.need_bv(ND13)
    grp = bv.groupby(["dataset", "oracle", "method"], observed=True)
    sums = grp.apply(lambda x: float((x.bias * x.n).sum()), include_groups=False)
    se = grp.apply(lambda x: float(x.n.iloc[0] * np.sqrt((x.variance / x.runs).sum())), include_groups=False)
    runs = grp.runs.first()
    c.put(ND13, sums, "bias sum (counts)")
    c.put(ND13, se, "SE of bias sum (counts, independent values)")
    c.put(ND13, runs, "runs")
    pieces = []
    for ds, orc in sums.droplevel("method").index.unique():
        s = _sel(_sel(sums, dataset=ds), oracle=orc)
        e = _sel(_sel(se, dataset=ds), oracle=orc)
        rr = _sel(_sel(runs, dataset=ds), oracle=orc)
        items = [f"{_lab(m)} {fmt(v)}" + (f" ({int(rr[m])} runs)" if m in ("power", "power-ns") else "")
                 for m, v in s.items()]
        pieces.append(f"{ds} {orc.upper()}: " + ", ".join(items) + f" (SE of Base's sum ≈ {fmt(e.get('base', np.nan))})")
    c.say("Bias sums in counts, n·Σ_v bias_v: " + "; ".join(pieces) + ".")


@_claim(10, ND13)
def _c10(c):
    bv = c.need_bv(ND13)
    bv = bv.assign(var_n=bv.variance * bv.n)  # counts²/n = Var_freq · n
    pieces = []
    for (ds, orc), sub in bv.groupby(["dataset", "oracle"], observed=True, sort=False):
        d = sub.v.nunique()
        order = sub[sub.method == sub.method.iloc[0]].sort_values("f", ascending=False).v.to_numpy()
        top, low = set(order[:5]), set(order[-min(500, d):])
        mean = sub.groupby("method", observed=True).var_n.mean()
        tops = sub[sub.v.isin(top)].groupby("method", observed=True).var_n.mean()
        lows = sub[sub.v.isin(low)].groupby("method", observed=True).var_n.mean()
        cfg = f"{ND13} | {ds} | {orc}"
        for m in mean.index:
            c.put(cfg, mean[m], f"{m} mean Var/n (counts)")
            c.put(cfg, tops[m], f"{m} top-5 Var/n")
            c.put(cfg, lows[m], f"{m} lowest-{len(low)} Var/n")
        c.put(cfg, mean["norm"] / mean["base"], "norm/base Var")
        c.put(cfg, (d - 1) / d, "(d-1)/d")
        tl = ", ".join(f"{_lab(m)} {fmt(tops[m])} vs {fmt(lows[m])}" for m in ("norm-sub", "base-cut", "base-pos")
                       if m in tops)
        pieces.append(f"{ds} {orc.upper()}: Var/n Base {fmt(mean['base'])}, Norm {fmt(mean['norm'])} (ratio "
                      f"{mean['norm'] / mean['base']:.4f}, (d−1)/d = {(d - 1) / d:.4f}); top-5 vs lowest-{len(low)} "
                      f"values: {tl}")
    c.say("; ".join(pieces) + ".")


# -- random set-value queries (claims 11–14, 19–21, 23–25) ---------------------------------------

@_claim(11, ARX2)
def _c11(c):
    for cfg, t in _sets(c, ARX2, ND6):
        w = cell_means(t, by=("rho",))
        rhos = sorted(set(w.index.get_level_values("rho")))
        pieces = []
        for m in [m for m in NORM_BASED if m in w]:
            for r in [r for r in rhos if r < 50 and (100 - r) in rhos]:
                sym = _sel(w[m], rho=r) / _sel(w[m], rho=100 - r)
                c.put(cfg, sym, f"{m} mse(rho={r:g})/mse(rho={100 - r:g})")
        ns = w["norm-sub"]
        c.put(cfg, ns, "norm-sub mse")
        sym_ns = pd.concat([_sel(ns, rho=r) / _sel(ns, rho=100 - r) for r in rhos if r < 50 and (100 - r) in rhos])
        growth = _sel(w["base"], rho=max(rhos)) / _sel(w["base"], rho=min(rhos))
        c.put(cfg, growth, f"base mse(rho={max(rhos):g})/mse(rho={min(rhos):g})")
        z = _sel(_sel(ns, dataset="zipf"), oracle="olh")
        if len(z):
            z = z.groupby(level="rho").first()  # one ε in these configs
            pairs = ", ".join(f"ρ = {r:g}/{100 - r:g}: {fmt(z.get(r))}/{fmt(z.get(100 - r))}"
                              for r in rhos if r < 50 and (100 - r) in rhos)
            pieces.append(f"Norm-Sub (zipf OLH) {pairs}")
        pieces.append(f"Norm-Sub MSE(ρ)/MSE(100−ρ), ρ < 50: {_by(sym_ns.sort_index())}")
        pieces.append(f"Base MSE(ρ = {max(rhos):g})/MSE(ρ = {min(rhos):g}): {_by(growth, fn=lambda s: fmt(s.iloc[0]))}")
        c.say(f"{_short(cfg)}: " + "; ".join(pieces) + ".")


def _log_best_over(c, cfg, w, target, rho_max):
    others = [m for m in NON_NORM if m in w]
    best = w[others].min(axis=1)
    lg = np.log10(_sel(best, rho=rho_max) / _sel(w[target], rho=rho_max))
    c.put(cfg, lg, f"log10(best non-norm / {target}) at rho={rho_max:g}")
    return lg


@_claim(12, ARX2)
def _c12(c):
    t = c.need(ARX2)
    w = cell_means(t, by=("rho",))
    rmax = max(w.index.get_level_values("rho"))
    lg = _log_best_over(c, ARX2, w, "norm-hyb", rmax)
    c.say(f"log₁₀(best of Base, Base-Pos, Post-Pos, Base-Cut, Power / Norm-Hyb) at ρ = {rmax:g}: "
          f"{_by(lg, fn=lambda s: fmt(s.iloc[0]))}.")


@_claim(13, ARX2)
def _c13(c):
    t = c.need(ARX2)
    w = cell_means(t, by=("rho",))
    rmax = max(w.index.get_level_values("rho"))
    rb, rn = ratio(w, "base-pos", "base"), ratio(w, "base-pos", "norm-sub")
    c.put(ARX2, rb, "base-pos/base mse")
    c.put(ARX2, rn, "base-pos/norm-sub mse")
    top = _sel(w, rho=rmax)
    c.put(ARX2, top["base-pos"], f"base-pos mse rho={rmax:g}")
    c.put(ARX2, top["base"], f"base mse rho={rmax:g}")
    z = top.loc[("zipf", "olh")] if ("zipf", "olh") in top.droplevel("epsilon").index else None
    head = ""
    if z is not None:
        z = z.iloc[0]
        head = (f"ρ = {rmax:g}, zipf OLH: Base-Pos {fmt(z['base-pos'])} vs Base {fmt(z['base'])} "
                f"({fmt(z['base-pos'] / z['base'])}×), vs Norm-Sub {fmt(z['base-pos'] / z['norm-sub'])}×. ")
    c.say(head + f"Base-Pos/Base over ρ: {_by(rb)}; Base-Pos/Norm-Sub over ρ: {_by(rn)}.")


def _ratio_over_rho(c, cfgs, num, den, what):
    for cfg, t in cfgs:
        w = cell_means(t, by=("rho",))
        r = ratio(w, num, den)
        c.put(cfg, r, f"{num}/{den} mse")
        pieces = [f"{ds} {orc.upper()} {_seq(s, 'ρ', 'rho')}"
                  for (ds, orc), s in r.groupby(level=["dataset", "oracle"], observed=True, sort=False)]
        c.say(f"{_short(cfg)}: {what}: " + "; ".join(pieces) + ".")


@_claim(14, ARX2)
def _c14(c):
    _ratio_over_rho(c, _sets(c, ARX2, ND6), "post-pos", "base", "Post-Pos/Base")


@_claim(19, ARX2)
def _c19(c):
    for cfg, t in _sets(c, ARX2, ND6):
        w = cell_means(t, by=("rho",))
        rmax = max(w.index.get_level_values("rho"))
        lg = _log_best_over(c, cfg, w, "power-ns", rmax)
        best = best_method(w)
        c.put_list(cfg, best, "lowest-mse method", "rho")
        pieces = []
        for (ds, orc), b in best.groupby(level=["dataset", "oracle"], observed=True, sort=False):
            other = [f"{_lab(m)} at ρ = {_xv(r)}" for r, m in zip(b.index.get_level_values("rho"), b) if m != "power-ns"]
            pieces.append(f"{ds} {orc.upper()} {sum(b == 'power-ns')}/{len(b)}" + (f" (else {', '.join(other)})" if other else ""))
        c.say(f"{_short(cfg)}: log₁₀(best non-norm / PowerNS) at ρ = {rmax:g}: {_by(lg, fn=lambda s: fmt(s.iloc[0]))}. "
              f"PowerNS has the lowest MSE at: {'; '.join(pieces)} values of ρ.")


@_claim(20, ARX2)
def _c20(c):
    _ratio_over_rho(c, _sets(c, ARX2, ND6), "base-cut", "base", "Base-Cut/Base")


@_claim(21, ARX2)
def _c21(c):
    t = c.need(ARX2)
    w = cell_means(t, by=("rho",))
    rhos = sorted(set(w.index.get_level_values("rho")))
    lo, hi = min(rhos), max(rhos)
    top = _sel(w, rho=hi)
    c.put(ARX2, top["power"], f"power mse rho={hi:g}")
    c.put(ARX2, top["base"], f"base mse rho={hi:g}")
    c.put(ARX2, top["power"] / top["base"], f"power/base mse rho={hi:g}")
    pieces = []
    for m in ("power", "base"):
        g = _sel(w[m], rho=hi) / _sel(w[m], rho=lo)
        c.put(ARX2, g, f"{m} mse(rho={hi:g})/mse(rho={lo:g})")
        pieces.append(f"{LABELS[m]} {_by(g, fn=lambda s: f'{fmt(s.iloc[0])}× ({fmt(np.log10(s.iloc[0]))} orders)')}")
    pb = top["power"] / top["base"]
    c.say(f"Power/Base MSE at ρ = {hi:g}: {_by(pb, fn=lambda s: fmt(s.iloc[0]))}. Growth ρ {lo:g} → {hi:g}: "
          + " — ".join(pieces) + ".")


@_claim(23, ARX3)
def _c23(c):
    for cfg, t in _sets(c, ARX3, ND7):
        w = cell_means(t, by=("rho",))
        methods = [m for m in w if m not in ("power", "power-ns")]
        total, exceptions = 0, []
        for (ds, orc, eps), sub in w.groupby(level=["dataset", "oracle", "epsilon"], observed=True, sort=False):
            sub = sub.droplevel(["dataset", "oracle", "epsilon"]).sort_index()
            for m in methods:
                if sub[m].isna().all():
                    continue  # a method this config does not run (NDSS configs have no Norm-Hyb)
                dv = np.diff(sub[m].to_numpy())
                total += dv.size
                rho = sub.index.to_numpy()
                exceptions += [f"{ds} {orc.upper()} {_lab(m)} ρ {rho[i]:g}→{rho[i + 1]:g}"
                               for i in np.flatnonzero(~(dv > 0))]
        c.put(cfg, total, "steps rho->next rho (non-Power methods)")
        c.put(cfg, len(exceptions), "steps without an increase")
        c.numbers[f"{cfg} | steps without an increase (list)"] = exceptions
        c.say(f"{_short(cfg)}: {total - len(exceptions)} of {total} steps ρ → next ρ increase the MSE "
              f"(every non-Power method, oracle, dataset)" + (f"; not: {', '.join(exceptions)}" if exceptions else "") + ".")


@_claim(24, ARX3)
def _c24(c):
    _ratio_over_rho(c, _sets(c, ARX3, ND7), "norm-cut", "base-cut", "Norm-Cut/Base-Cut")


@_claim(25, ARX3)
def _c25(c):
    for cfg, t in _sets(c, ARX3, ND7):
        w = cell_means(t, by=("rho",))
        rb, rn = ratio(w, "norm-mul", "base"), ratio(w, "norm-mul", "norm-sub")
        c.put(cfg, rb, "norm-mul/base mse")
        c.put(cfg, rn, "norm-mul/norm-sub mse")
        c.say(f"{_short(cfg)}: Norm-Mul/Base over ρ: {_by(rb)}; Norm-Mul/Norm-Sub: {_by(rn)}.")


# -- top-k (claims 15–17) -------------------------------------------------------------------------

@_claim(15, ND10)
def _c15(c):
    cfgs = [(ND10, c.need(ND10))]
    if (t := c.extra(ARX5)) is not None:
        cfgs.append((ARX5, t))
    for cfg, t in cfgs:
        w = cell_means(t, by=("k",))
        flat = {}
        for m in ("base", "base-pos", "post-pos", "norm"):
            g = w[m].groupby(level=["dataset", "oracle", "epsilon"], observed=True)
            flat[m] = g.max() / g.min()
            c.put(cfg, flat[m], f"{m} max/min mse over k")
        c.put(cfg, w["base"], "base mse")
        others = [m for m in w if m != "norm-mul"]
        nm = w["norm-mul"] / w[others].min(axis=1)
        ns = ratio(w, "norm-sub", "base")
        c.put(cfg, nm, "norm-mul/best other mse")
        c.put(cfg, ns, "norm-sub/base mse")
        fl = ", ".join(f"{LABELS[m]} {_rng(v)}" for m, v in flat.items())
        c.say(f"{_short(cfg)}: Base MSE over k: {_by(w['base'])}; max/min over k: {fl}. "
              f"Norm-Mul/best other: {_by(nm)}. Norm-Sub/Base: {_by(ns)}.")


@_claim(16, ND10)
def _c16(c):
    cfgs = [(ND10, c.need(ND10))]
    if (t := c.extra(ARX5)) is not None:
        cfgs.append((ARX5, t))
    for cfg, t in cfgs:
        w = cell_means(t, by=("k",))
        r = ratio(w, "base-cut", "base")
        c.put(cfg, r, "base-cut/base mse")
        pieces = []
        for (ds, orc), s in r.groupby(level=["dataset", "oracle"], observed=True, sort=False):
            ks = s.index.get_level_values("k").to_numpy()
            eq = np.abs(s.to_numpy() - 1) <= 1e-3  # Base-Cut leaves every top value untouched
            lead = int(np.argmin(eq)) if not eq.all() else len(eq)  # leading run of equal k
            last_eq = ks[lead - 1] if lead else None
            c.put(f"{cfg} | {ds} | {orc}", np.nan if last_eq is None else float(last_eq),
                  "largest k up to which base-cut = base")
            rest = s.iloc[lead:]
            pieces.append(f"{ds} {orc.upper()}: = Base up to k = {last_eq if last_eq is not None else '—'}"
                          + (f", then {_ends(rest, 'k', 'k')}" if len(rest) else ""))
        c.say(f"{_short(cfg)}: Base-Cut/Base: " + "; ".join(pieces) + ".")


@_claim(17, ND10)
def _c17(c):
    t = c.need(ND10)
    w = cell_means(t, by=("k",))
    a, b = ratio(w, "power-ns", "power"), ratio(w, "power-ns", "base-cut")
    c.put(ND10, a, "power-ns/power mse")
    c.put(ND10, b, "power-ns/base-cut mse")
    above = [f"{ds} {orc.upper()} k = " + ", ".join(f"{k:g}" for k in s[s > 1].index.get_level_values("k"))
             for (ds, orc), s in b.groupby(level=["dataset", "oracle"], observed=True, sort=False) if (s > 1).any()]
    c.say(f"PowerNS/Power over k: {_by(a)}. PowerNS/Base-Cut over k: {_by(b)}"
          + (f"; PowerNS above Base-Cut at {'; '.join(above)}" if above else "; never above Base-Cut") + ".")


# -- fixed sets (claims 18, 32) -------------------------------------------------------------------

@_claim(18, ND8)
def _c18(c):
    t = c.need(ND8)
    w2 = cell_means(t, by=("query_set",)).reorder_levels(["dataset", "oracle", "query_set", "epsilon"]).sort_index()
    left, right = best_method(w2, list(LEFT)), best_method(w2, list(RIGHT))
    overall = best_method(w2)
    c.put_list(ND8, left, "best of left panel", "epsilon")
    c.put_list(ND8, right, "best of right panel", "epsilon")
    c.put_list(ND8, overall, "best overall", "epsilon")
    r = ratio(w2, "norm-cut", "post-pos")
    c.put(ND8, r, "norm-cut/post-pos mse")
    pieces = []
    for (ds, orc, qs), lb in left.groupby(level=["dataset", "oracle", "query_set"], observed=True, sort=False):
        rb = right.loc[(ds, orc, qs)]
        eps = lb.index.get_level_values("epsilon")
        pieces.append(f"{ds} {qs} {orc.upper()}: left/right best by ε " + ", ".join(
            f"{_xv(e)}: {_lab(a)}/{_lab(b_)}" for e, a, b_ in zip(eps, lb.values, rb.values)))
    c.say("; ".join(pieces) + f". Norm-Cut/Post-Pos: {_by(r, levels=('dataset', 'query_set', 'oracle'))}.")


@_claim(32, ARX4)
def _c32(c):
    t = c.need(ARX4)
    w = cell_means(t, by=("query_set",)).reorder_levels(["dataset", "oracle", "query_set", "epsilon"]).sort_index()
    ranks = w.rank(axis=1, method="average")
    mean_rank = ranks.groupby(level=["dataset", "oracle", "query_set"], observed=True).mean()
    for m in mean_rank:
        c.put(ARX4, mean_rank[m], f"{m} mean rank over eps")
    a, b = ratio(w, "norm-mul", "norm-sub"), ratio(w, "power", "norm-sub")
    c.put(ARX4, a, "norm-mul/norm-sub mse")
    c.put(ARX4, b, "power/norm-sub mse")
    pieces = []
    for orc, mr in mean_rank.groupby(level="oracle", observed=True, sort=False):
        order = mr.mean().sort_values().index
        pieces.append(f"{orc.upper()} (over {', '.join(mr.index.get_level_values('query_set'))}): "
                      + ", ".join(f"{_lab(m)} {_rng(mr[m])}" for m in order))
    c.say(f"Mean rank of {int(w.notna().any().sum())} methods over ε: " + "; ".join(pieces)
          + f". Norm-Mul/Norm-Sub: {_by(a, levels=('oracle', 'query_set'))}. Power/Norm-Sub: {_by(b, levels=('oracle',))}.")


# -- MAE (claims 26, 27) --------------------------------------------------------------------------

@_claim(26, ARX7K)
def _c26(c):
    cfgs = [(ARX7K, c.need(ARX7K))]
    if (t := c.extra(ARX7)) is not None:
        cfgs.append((ARX7, t))
    for cfg, t in cfgs:
        w = cell_means(t, metric="mae")
        r = ratio(w, "base-cut", "norm-hyb")
        c.put(cfg, r, "base-cut/norm-hyb mae")
        best = best_method(w)
        c.put_list(cfg, best, "lowest-mae method", "epsilon")
        bests = "; ".join(f"{ds} {orc.upper()} " + ", ".join(f"{_lab(m)} ×{int((b == m).sum())}" for m in b.unique())
                          for (ds, orc), b in best.groupby(level=["dataset", "oracle"], observed=True, sort=False))
        c.say(f"{_short(cfg)}: Base-Cut/Norm-Hyb MAE over ε: {_by(r)}. Lowest-MAE method (count of ε): {bests}.")


def _dataset_n(meta: dict) -> dict[str, int]:
    """Number of users n per dataset label of a config (loads the datasets; NaN-free on failure)."""
    from .tasks_wang import _load

    out = {}
    for spec in meta.get("config", {}).get("datasets", []):
        if isinstance(spec, str):
            key, label = spec, spec
        else:
            key = tuple(sorted((str(k), v) for k, v in spec))
            label = str(dict(key).get("label") or dict(key)["name"])
        try:
            out[label] = int(_load(key).n)
        except Exception:  # a dataset not available offline: 1/√n left out, not an error
            continue
    return out


@_claim(27, ARX7K)
def _c27(c):
    cfgs = [(ARX7K, c.need(ARX7K))]
    if (t := c.extra(ARX7)) is not None:
        cfgs.append((ARX7, t))
    for cfg, t in cfgs:
        w = cell_means(t, metric="mae")
        base = w["base"]
        c.put(cfg, base, "base mae")
        ns = _dataset_n(c.ctx.meta(cfg))
        pieces = []
        for ds, n in ns.items():
            c.put(f"{cfg} | {ds}", n, "n")
            c.put(f"{cfg} | {ds}", 1 / math.sqrt(n), "1/sqrt(n)")
            s = _sel(base, dataset=ds)
            c.put(f"{cfg} | {ds}", s * math.sqrt(n), "base mae * sqrt(n)")
            olh = _sel(s, oracle="olh") if "olh" in s.index.get_level_values("oracle") else s
            pieces.append(f"{ds} (n = {n:,}, 1/√n = {fmt(1 / math.sqrt(n))}): Base MAE OLH {_seq(olh, 'ε', 'epsilon')}; "
                          f"MAE·√n {_by(s * math.sqrt(n), levels=('oracle',))}")
        c.say(f"{_short(cfg)}: " + "; ".join(pieces) + ".")


# -- benefit n → n′ (claims 28–30) -----------------------------------------------------------------

def _benefit(c):
    t = c.need(ND5)
    return cell_means(t, metric="ratio", by=("n_users",))


@_claim(28, ND5)
def _c28(c):
    w = _benefit(c)
    for m in ("base", "norm"):
        c.put(ND5, w[m], f"{m} n'/n")
    c.say(f"n′/n (mean over reps): Base {_by(w['base'], levels=('oracle',))}; Norm {_by(w['norm'], levels=('oracle',))} (over n).")


@_claim(29, ND5)
def _c29(c):
    w = _benefit(c)
    c.put(ND5, w["norm-mul"], "norm-mul n'/n")
    pieces = [f"{orc.upper()} {_ends(s, 'n', 'n_users')}"
              for (ds, orc), s in w["norm-mul"].groupby(level=["dataset", "oracle"], observed=True, sort=False)]
    c.say("Norm-Mul n′/n: " + "; ".join(pieces) + ".")


@_claim(30, ND5)
def _c30(c):
    w = _benefit(c)
    pn = w["power-ns"]
    c.put(ND5, pn, "power-ns n'/n")
    c.put(ND5, 1 - 1 / pn, "power-ns users saved (1 - n/n')")
    best = best_method(w.drop(columns=[m for m in ("base-analytic",) if m in w]), largest=True)
    c.put_list(ND5, best, "largest n'/n method", "n_users")
    pieces = []
    for (ds, orc), s in pn.groupby(level=["dataset", "oracle"], observed=True, sort=False):
        b = best.loc[(ds, orc)]
        nb = int((b == "power-ns").sum())
        pieces.append(f"{orc.upper()} {_seq(s, 'n', 'n_users')} (saved {_rng(1 - 1 / s)}; largest at {nb}/{len(b)} n)")
    saved = []
    for m in ("norm-sub", "mle-apx", "base-cut"):
        sv = 1 - 1 / w[m]
        c.put(ND5, sv, f"{m} users saved (1 - n/n')")
        saved.append(f"{LABELS[m]} {_by(sv, levels=('oracle',))}")
    c.say("PowerNS n′/n: " + "; ".join(pieces) + ". Users saved (1 − n/n′): " + " — ".join(saved) + ".")


# -- choosing a method (claim 22) -----------------------------------------------------------------

@_claim(22, ND9)
def _c22(c):
    from .tasks_wang import chosen_methods

    t = c.need(ND9)
    ch = chosen_methods(t.astype({"method": str, "fit": str, "dataset": str, "oracle": str}))
    ch = ch.set_index(["dataset", "oracle", "fit", "epsilon"]).sort_index()
    real = (t[t.fit == "real"].groupby(["dataset", "oracle", "epsilon", "method"], observed=True).value.mean()
            .unstack("method"))
    pieces = []
    for fit, sub in ch.groupby(level="fit", sort=False):
        s = sub.chosen.droplevel("fit")
        c.put_list(ND9, s, f"chosen by fit={fit}", "epsilon")
        if fit == "real":
            continue
        # real-data MSE of the chosen method over the real-data best
        loss = pd.Series([real.loc[k, m] / real.loc[k].min() for k, m in s.items()], index=s.index)
        c.put(ND9, loss, f"real mse of method chosen by fit={fit} / best real mse")
        # one labelled group per (dataset, oracle): the picks are listed by ε inside it
        pieces.append(f"{LABELS.get(fit, fit)} fit chooses — " + "; ".join(
            f"{ds} {str(orc).upper()}: " + ", ".join(
                f"{_lab(m)} at ε = {_xv(e)} ({fmt(l)}×)" for (_, _, e), m, l in zip(g.index, g.values, loss[g.index].values))
            for (ds, orc), g in s.groupby(level=["dataset", "oracle"], sort=False)))
    realbest = ch.xs("real", level="fit").chosen if "real" in ch.index.get_level_values("fit") else pd.Series(dtype=object)
    best = "; ".join(f"{ds} {str(orc).upper()}: " + ", ".join(f"{_lab(m)} at ε = {_xv(e)}" for (_, _, e), m in g.items())
                     for (ds, orc), g in realbest.groupby(level=["dataset", "oracle"], sort=False))
    c.say("(× = real MSE of the pick over the best real MSE) " + " | ".join(pieces) + f" | best on the real data — {best}.")


# -- public API -----------------------------------------------------------------------------------

def claims(root="results", *, quick: bool = False, partial: bool = False, ids=None) -> list[dict]:
    """Recompute the "we measure" numbers of Wang claims 1–32 from the tables under ``root``.

    One dict per claim, in id order: ``{"id", "config", "numbers", "text", "reps"}`` (see the module
    docstring), or ``{"id", "config", "missing", "text"}`` when a config it needs has no
    ``results.parquet``. ``quick`` reads ``NAME-quick`` folders (``ldpopt experiment run --quick``);
    ``partial`` reads the ``parts/`` of unfinished sweeps (flagged in ``partial``); ``ids`` restricts
    to some claims.
    """
    ctx = _Ctx(root, quick, partial)
    out = []
    for cid in sorted(_CLAIMS):
        if ids is not None and cid not in ids:
            continue
        c = _Claim(ctx, cid)
        try:
            _CLAIMS[cid](c)
            out.append(c.result())
        except _Missing as e:
            need = [n for n in _CLAIM_CONFIGS[cid] if ctx.get(n) is None] or [str(e)]
            out.append({"id": cid, "config": list(_CLAIM_CONFIGS[cid]), "missing": need,
                        "text": f"not measured: no results for {', '.join(need)}"})
    return out


def _reps_text(reps: dict) -> str:
    parts = []
    for cfg, r in reps.items():
        vals = {m: (v if isinstance(v, int) else f"{v[0]}–{v[1]}") for m, v in r.items()}
        common = max(set(vals.values()), key=list(vals.values()).count) if vals else ""
        odd = [f"{_lab(m)} {v}" for m, v in vals.items() if v != common]
        unit = "runs" if cfg == ND13 else "reps"
        parts.append(f"`{cfg}` ({common} {unit}" + (f"; {', '.join(odd)}" if odd else "") + ")")
    return ", ".join(parts)


def summary_markdown(root="results", **kw) -> str:
    """A markdown table ``| # | we measure | configs |`` of every claim (keyword arguments as
    :func:`claims`)."""
    rows = ["| # | we measure | configs |", "| --- | --- | --- |"]
    for c in claims(root, **kw):
        cfgs = _reps_text(c["reps"]) if "reps" in c else ", ".join(f"`{n}` (missing)" for n in c["missing"])
        rows.append(f"| {c['id']} | {c['text'].replace('|', chr(92) + '|')} | {cfgs} |")  # escaped pipes
    return "\n".join(rows) + "\n"
