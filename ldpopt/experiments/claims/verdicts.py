"""The papers' claims as data: ``experiments/claims/<paper>.toml`` rows → numbers, verdicts and the
claims tables of REPRODUCTION.md, recomputed from saved results tables (``<root>/<config>/
results.parquet``), never simulated.

Details: docs/experiments.md, section `ldpopt.experiments.claims.verdicts`.
"""

from __future__ import annotations

import math
import tomllib
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from ..config import DATA_DIR, load_config
from . import named
from .format import by_groups, fmt, num, reps_text
from .table import GROUPS, Missing, Tables, at_level, cell_means, rep_counts

__all__ = ["GROUPS", "PAPERS", "REDUCTIONS", "claims", "markdown", "paper_title", "quick_verdict", "reproduction", "required_reps", "rows",
           "summary_markdown", "verdict"]

_XNAME = {"epsilon": "eps", "rho": "rho", "k": "k", "n_users": "n", "query_set": "set", "fit": "fit"}
_TRANSFORM = {"log10": np.log10, "saved": lambda x: 1 - 1 / x, "dev": lambda x: (x - 1).abs()}


def _claim_files() -> tuple[str, ...]:
    """The claim files ``experiments/claims/<paper>.toml``, in their stated ``order``: each file states
    its own title, table columns and place, so a new file is a new claims table with no code change."""
    found = []
    for path in sorted((DATA_DIR / "claims").glob("*.toml")):
        with open(path, "rb") as fh:
            found.append((tomllib.load(fh).get("order", 99), path.stem))
    return tuple(stem for _, stem in sorted(found))


_PAPERS = _claim_files()
#: the claim files (``experiments/claims/<paper>.toml``), in their stated order
PAPERS = _PAPERS


@cache
def _file(paper: str) -> dict:
    if paper not in _PAPERS:
        raise ValueError(f"paper must be one of {_PAPERS}, got {paper!r}")
    with open(DATA_DIR / "claims" / f"{paper}.toml", "rb") as fh:
        return tomllib.load(fh)


def rows(paper: str) -> tuple[dict, ...]:
    """The claim rows of ``experiments/claims/<paper>.toml``, in id order."""
    return tuple(sorted(_file(paper)["claim"], key=lambda r: r["id"]))


def paper_title(paper: str) -> str | None:
    """The file's ``title`` (the heading of its claims), None when it gives none."""
    return _file(paper).get("title")


# -- recording numbers ----------------------------------------------------------------------------

def _lv(v) -> str:
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{v:g}" if isinstance(v, (float, np.floating)) else str(v)


def _parts(names, idx) -> list[str]:
    return [str(k) if n in ("dataset", "oracle", "method", None) else f"{_XNAME.get(n, n)}={_lv(k)}"
            for n, k in zip(names, idx)]


class Claim:
    """One claim's numbers as they are measured (``put``: every cell under its label)."""

    def __init__(self, tables: Tables, row: dict):
        self.tables, self.row, self.id = tables, row, row["id"]
        self.config: list[str] = []
        self.numbers: dict[str, Any] = {}  # label → a number, or a list of them
        self.text: list[str] = []
        self.reps: dict[str, Any] = {}  # config → its repetitions per method (rep_counts)
        self.missing_extra: list[str] = []

    def use(self, name: str, t: pd.DataFrame, reps=None) -> pd.DataFrame:
        if name not in self.config:
            self.config.append(name)
            self.reps[name] = rep_counts(t) if reps is None else reps
        return t

    def put(self, cfg: str, s, quantity: str):
        if not isinstance(s, pd.Series):
            self.numbers[f"{cfg} | {quantity}"] = num(s)
            return
        for idx, v in s.items():
            self.numbers[" | ".join([cfg, *_parts(s.index.names, idx if isinstance(idx, tuple) else (idx,)),
                                     quantity])] = num(v)

    def put_list(self, cfg: str, s: pd.Series, quantity: str, x: str):
        others = [n for n in s.index.names if n != x]
        for key, sub in (s.groupby(level=others, observed=True, sort=False) if others else [((), s)]):
            xs = ",".join(_lv(v) for v in sub.index.get_level_values(x))
            label = [cfg, *_parts(others, key if isinstance(key, tuple) else (key,)), f"{quantity} [{_XNAME.get(x, x)}={xs}]"]
            self.numbers[" | ".join(label)] = [num(v) for v in sub.values]


# -- the generic reductions -----------------------------------------------------------------------

def _wide(t, m):
    w = cell_means(t, m.get("metric", "mse"), m.get("by", ()))
    if "order" in m:
        w = w.reorder_levels(m["order"]).sort_index()
    for level, vals in m.get("where", {}).items():
        w = w[w.index.get_level_values(level).isin(vals)]
    return w


def _col(w, name, num_=None):
    if isinstance(name, list) or name == "*":
        cols = [c for c in w if c != num_] if name == "*" else [c for c in GROUPS.get(name[0], name) if c in w]
        return w[cols].min(axis=1)
    return w[name] if name in w else pd.Series(np.nan, index=w.index)


def _ratio(c, cfg, t, m):
    w, out = _wide(t, m), None
    for numer in m.get("nums", [m.get("num")]):
        r, kw = _col(w, numer) / _col(w, m["den"], numer), {}
        if "at" in m:
            r, kw["at"] = at_level(r, m.get("level", "rho"), m["at"])
        if "transform" in m:
            r = _TRANSFORM[m["transform"]](r)
        if m.get("aggregate") == "max":
            r = r.max()
        out = (m.get("label", "{num}/{den} {metric}").format(num=numer, den=m["den"], metric=m.get("metric", "mse"), **kw), r)
        c.put(cfg, r, out[0])
    return out


def _cell(c, cfg, t, m):
    w, out = _wide(t, m), None
    for meth in m.get("methods", [m.get("method")]):
        s, kw = w[meth], {}
        if "at" in m:
            s, kw["at"] = at_level(s, m.get("level", "rho"), m["at"])
        if "transform" in m:
            s = _TRANSFORM[m["transform"]](s)
        out = (m.get("label", "{m} {metric}").format(m=meth, metric=m.get("metric", "mse"), **kw), s)
        c.put(cfg, s, out[0])
    return out


def _ends(c, cfg, t, m):
    w, level, out = _wide(t, m), m["level"], None
    for meth in [x for x in m["methods"] if x in w]:
        lo, lv = at_level(w[meth], level, m.get("lo", "min"))
        hi, hv = at_level(w[meth], level, m.get("hi", "max"))
        out = (m["label"].format(m=meth, lo=lv, hi=hv), lo / hi)
        c.put(cfg, out[1], out[0])
    return out


def _spread(c, cfg, t, m):
    w, out = _wide(t, m), None
    keys = [n for n in w.index.names if n != m["over"]]
    for meth in m["methods"]:
        g = w[meth].groupby(level=keys, observed=True)
        out = (m.get("label", "{m} max/min {metric} over {over}").format(m=meth, metric=m.get("metric", "mse"), over=m["over"]),
               g.max() / g.min())
        c.put(cfg, out[1], out[0])
    return out


def _best(c, cfg, t, m):
    w = _wide(t, m).drop(columns=m.get("drop", []), errors="ignore")
    methods = m.get("methods")
    named = GROUPS.get(methods, methods) if isinstance(methods, str) else methods  # a group's name or a list
    cols = [x for x in (named if methods else w.columns) if x in w]
    b = w[cols].dropna(axis=0, how="all")
    b = (b.idxmax(axis=1) if m.get("largest") else b.idxmin(axis=1)).astype(object)
    c.put_list(cfg, b, m["label"], m.get("x", "epsilon"))
    return m["label"], b


def _rank(c, cfg, t, m):
    w = _wide(t, m)
    keys = [n for n in w.index.names if n != "epsilon"]
    mean_rank = w.rank(axis=1, method="average").groupby(level=keys, observed=True).mean()
    for meth in mean_rank:
        c.put(cfg, mean_rank[meth], f"{meth} mean rank over eps")
    return "mean rank over eps", mean_rank.mean(axis=1)


REDUCTIONS = {"ratio": _ratio, "cell": _cell, "ends": _ends, "spread": _spread, "best": _best, "rank": _rank}


# -- claims ---------------------------------------------------------------------------------------

def _measure(c: Claim, row: dict):
    if row.get("read") == "as-saved":  # the table as saved; the named reductions count repetitions
        sets = [(name, c.tables.need(name, as_saved=True)) for name in row["configs"]]
    else:
        sets = [(name, c.use(name, c.tables.need(name))) for name in row["configs"]]
    for name in row.get("extra", []):
        t = c.tables.get(name)
        if t is None:
            c.missing_extra.append(name)
        else:
            sets.append((name, c.use(name, t)))
    for m in row.get("measure", []):
        for cfg, t in sets:
            if m.get("only", cfg) != cfg:
                continue
            if m["reduce"] in REDUCTIONS:
                label, s = REDUCTIONS[m["reduce"]](c, cfg, t, m) or (None, None)
                if isinstance(s, pd.Series) and label:
                    c.text.append(f"{cfg}: {label}: {by_groups(s)}.")
            else:
                fn = getattr(named, m["reduce"].replace("-", "_"))
                if not fn(c, cfg, t, m):  # True: it said what it measured itself
                    c.text.append(f"{cfg}: {fn.__doc__.split(chr(10))[0]}")


def verdict(row: dict, numbers: dict) -> str:
    """The row's verdict wording when every ``check`` holds, else what failed. A check
    reads the numbers whose label ends with its ``label`` (or lists over x: ``label [x=…]``) and
    contains every ``match``; all of them (but ``count``) must lie ``within`` [lo, hi], or, for
    lists of methods, be the method ``is``."""
    for chk in row.get("check", []):
        keys = [k for k in numbers if (k.endswith(chk["label"]) or f"| {chk['label']} [" in k)
                and all(s in k for s in chk.get("match", []))]
        vals = [x for k in keys for x in (numbers[k] if isinstance(numbers[k], list) else [numbers[k]])
                if isinstance(x, str) or math.isfinite(x)]
        lo, hi = chk.get("within", [-math.inf, math.inf])
        out = [v for v in vals if (v != chk["is"] if "is" in chk else not lo <= v <= hi)]
        if not vals or len(out) > chk.get("count", 0):
            want = f"= {chk['is']}" if "is" in chk else f"in [{fmt(lo)}, {fmt(hi)}]"
            where = " ".join(chk.get("match", [])) or "every cell"
            return (f"check failed: {chk['label']} ({where}) {want}: "
                    + (f"{len(out)} of {len(vals)} not, e.g. {fmt(out[0])}" if vals else "no numbers"))
    return row["verdict"]


@cache
def _config_reps(name: str, quick: bool) -> int:
    return load_config(name, quick=quick).repetitions


def required_reps(row: dict) -> int:
    """The repetitions a verdict of ``row`` needs (docs/experiments.md): its ``needs_reps``, else the
    most ``repetitions`` of the full versions of its ``configs``."""
    if "needs_reps" in row:
        reps = row["needs_reps"]
        if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
            raise ValueError(f"claim {row['id']}: needs_reps must be an integer >= 1, got {reps!r}")
        return reps
    return max(_config_reps(name, False) for name in row["configs"])


def quick_verdict(row: dict, numbers: dict) -> str:
    """The verdict of ``row`` on a quick run: not decided, the repetitions it needs and those the quick
    configs run, then what its checks give at that size (:func:`verdict`)."""
    ran = max(_config_reps(name, True) for name in row["configs"])
    said = verdict(row, numbers)
    at_size = ("its checks hold at this size" if said == row["verdict"]
               else "a check at this size: " + said.removeprefix("check failed: "))
    return f"not decided at quick size (needs ≥ {required_reps(row)} repetitions, ran {ran}); {at_size}"


def claims(root="results", *, paper: str = "wang", quick: bool = False, partial: bool = False, ids=None) -> list[dict]:
    """Recompute every claim of ``paper`` from the tables under ``root``: one dict per claim,
    ``{"id", "config", "numbers", "text", "reps", "decided", "needs_reps", "verdict"}`` (``missing``
    instead of numbers when a config it needs has no results; ``missing_extra``, ``partial`` when
    so). ``quick`` reads the ``NAME-quick`` folders: no verdict is decided there
    (:func:`quick_verdict`); ``partial`` the ``parts/`` of unfinished sweeps."""
    tables, out = Tables(root, quick, partial), []
    for row in rows(paper):
        if ids is not None and row["id"] not in ids:
            continue
        c = Claim(tables, row)
        try:
            _measure(c, row)
        except Missing as exc:
            saved = row.get("read") == "as-saved"
            need = [n for n in row["configs"] if tables.get(n, as_saved=saved) is None] or [str(exc)]
            out.append({"id": c.id, "config": list(row["configs"]), "missing": need,
                        "text": f"not measured: no results for {', '.join(need)}"})
            continue
        res = {"id": c.id, "config": c.config, "numbers": c.numbers, "reps": c.reps,
               "text": " ".join(c.text), "decided": not quick, "needs_reps": required_reps(row),
               "verdict": quick_verdict(row, c.numbers) if quick else verdict(row, c.numbers)}
        if c.missing_extra:
            res["missing_extra"] = c.missing_extra
        if partial and (p := [n for n in c.config if tables.is_partial(n)]):
            res["partial"] = p
        out.append(res)
    return out


def summary_markdown(root="results", *, paper: str = "wang", **kw) -> str:
    """``| # | we measure | verdict | configs |`` of :func:`claims` (keyword arguments as there); a
    quick run's table is preceded by a line saying that it decides no claim."""
    lines = ["| # | we measure | verdict | configs |", "| --- | --- | --- | --- |"]
    if kw.get("quick"):
        lines[:0] = [("Quick run: its tables are too small to decide a claim; each verdict names the repetitions "
                      "it needs (the full sweep: `ldpopt experiment run all`)."), ""]
    for c in claims(root, paper=paper, **kw):
        cfgs = reps_text(c["reps"]) if "reps" in c else ", ".join(f"`{n}` (missing)" for n in c["missing"])
        cells = (str(c["id"]), c["text"], c.get("verdict", "not measured"), cfgs)
        lines.append("| " + " | ".join(x.replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    return "\n".join(lines) + "\n"


def markdown(paper: str, verdicts: dict | None = None) -> str:
    """REPRODUCTION.md's claims table of ``paper`` from the rows' text (the numbers quoted there are
    those of the full sweep; :func:`claims` recomputes them); ``verdicts`` (id → text, e.g. the
    computed ones) replace the rows' wording."""
    verdicts = verdicts or {}
    cols = [(h, k) for h, k in _file(paper)["columns"]]  # the file states its columns: [header, field]
    sep = "| " + " | ".join("---" for _ in cols) + " |"
    body = ["| " + " | ".join(str({**r, **({"verdict": verdicts[r["id"]]} if r["id"] in verdicts else {})}[k])
                              if k in r else "" for _, k in cols) + " |" for r in rows(paper)]
    return "\n".join(["| " + " | ".join(h for h, _ in cols) + " |", sep, *body]) + "\n"


def reproduction(text: str, verdicts: dict | None = None) -> str:
    """``text`` (REPRODUCTION.md) with each paper's claims table replaced by :func:`markdown`; the
    prose around the tables is kept as is. ``verdicts``: paper → {id → verdict}."""
    lines = text.split("\n")
    for paper in _PAPERS:
        head = markdown(paper).split("\n")[0]
        if head not in lines:
            raise ValueError(f"no claims table of {paper!r} (a line {head!r}) to replace")
        i = lines.index(head)
        j = next((k for k in range(i, len(lines)) if not lines[k].startswith("|")), len(lines))
        lines[i:j] = markdown(paper, (verdicts or {}).get(paper)).rstrip("\n").split("\n")
    return "\n".join(lines)


