"""Win percentages: how often each method has the lowest error, per protocol × method × metric, over
the repetitions of a run (LDP³'s table), with standard errors; ties split the contest.

Notes: docs/notes/python.md, section ``ldpopt.experiments.winrate_report``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["win_table", "winrate_markdown", "winrate_report"]

#: the task columns that name a cell (those present in a results table are used)
CELL = ("dataset", "oracle", "epsilon", "metric")


def win_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell and method: ``contests`` (R), ``win`` (%), ``win_se`` (%), ``mean``, ``se`` (module
    docstring).

    Parameters
    ----------
    table : pandas.DataFrame
        Results rows with ``method``, ``metric``, ``value``, ``rep`` (and any of dataset, oracle,
        epsilon).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        If a required column is missing, or a value is not finite.

    Examples
    --------
    >>> import pandas as pd
    >>> from ldpopt.experiments.winrate_report import win_table
    >>> t = pd.DataFrame({"method": ["a", "b"] * 3, "metric": "l1", "rep": [0, 0, 1, 1, 2, 2],
    ...                   "value": [1.0, 2.0, 3.0, 1.0, 1.0, 1.0]})
    >>> win_table(t)[["method", "contests", "win"]].round(1).values.tolist()
    [['a', 3, 50.0], ['b', 3, 50.0]]
    """
    missing = [c for c in ("method", "metric", "value", "rep") if c not in table.columns]
    if missing:
        raise ValueError(f"table: a win table needs the columns method, metric, value, rep; missing {missing}")
    if not np.all(np.isfinite(table["value"].to_numpy(dtype=np.float64))):
        raise ValueError("table: a value is not finite; a win count needs every method's error")
    cell = [c for c in CELL if c in table.columns]
    contest = [*cell, "rep"]
    t = table[[*contest, "method", "value"]].copy()
    best = t.groupby(contest, dropna=False)["value"].transform("min")
    t["tied"] = t["value"] == best
    t["share"] = t["tied"] / t.groupby(contest, dropna=False)["tied"].transform("sum")
    g = t.groupby([*cell, "method"], dropna=False)
    out = g.agg(contests=("rep", "nunique"), wins=("share", "sum"), mean=("value", "mean"),
                sd=("value", "std")).reset_index()
    w = out["wins"] / out["contests"]
    out["win"] = 100 * w
    out["win_se"] = 100 * np.sqrt(w * (1 - w) / out["contests"])
    out["se"] = out["sd"].fillna(0.0) / np.sqrt(out["contests"])
    return out.drop(columns=["sd", "wins"])


def winrate_markdown(table: pd.DataFrame, *, metrics=None) -> str:
    """Markdown: per metric (``metrics``: default every metric in ``table``) one table, a row per
    (dataset, oracle, ε) cell, a column per method, cells ``win % ± SE`` (the cell's best in bold) and,
    under it, the mean value ± SE.

    Parameters
    ----------
    table : pandas.DataFrame
        What :func:`win_table` takes.
    metrics : list of str, optional
        The metrics to show, in order.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``metrics`` names a metric the table does not have, or :func:`win_table` refuses the table.
    """
    wt = win_table(table)
    have = list(dict.fromkeys(wt["metric"]))
    metrics = have if metrics is None else list(metrics)
    unknown = [m for m in metrics if m not in have]
    if unknown:
        raise ValueError(f"metrics: {unknown} not in the results (they have {have})")
    methods = list(dict.fromkeys(table["method"]))
    cell = [c for c in CELL if c in wt.columns and c != "metric"]
    parts = []
    for metric in metrics:
        sub = wt[wt["metric"] == metric]
        reps = sorted(set(sub["contests"]))
        parts.append(f"**{metric}** — win % ± SE over {', '.join(map(str, reps))} repetitions "
                     "(mean value ± SE below)\n")
        parts.append("| " + " | ".join([*cell, *methods]) + " |")
        parts.append("|" + "---|" * (len(cell) + len(methods)))
        for key, rows in sub.groupby(cell, sort=False, dropna=False):
            key = key if isinstance(key, tuple) else (key,)
            by = {r.method: r for r in rows.itertuples()}
            top = max(r.win for r in by.values())
            cells = []
            for m in methods:
                r = by.get(m)
                if r is None:
                    cells.append("–")
                    continue
                win = f"{r.win:.0f} ± {r.win_se:.0f}"
                win = f"**{win}**" if math.isclose(r.win, top) else win
                cells.append(f"{win}<br>{r.mean:.3g} ± {r.se:.1g}")
            parts.append("| " + " | ".join([*map(str, key), *cells]) + " |")
        parts.append("")
    return "\n".join(parts)


def winrate_report(name_or_folder, *, quick: bool = False, root="results", metrics=None) -> str:
    """:func:`winrate_markdown` of a saved run (a results folder, or an experiment name under ``root``),
    headed by the run's name.

    Parameters
    ----------
    name_or_folder : str or path
        A results folder, or an experiment name.
    quick : bool, default False
        The ``--quick`` run's results.
    root : path-like, default "results"
        Where runs are saved.
    metrics : list of str, optional
        As :func:`winrate_markdown`.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the results refuse a win table (:func:`win_table`) or ``metrics`` names one they lack.
    """
    from .figures.draw import load_results

    table, meta, folder = load_results(name_or_folder, quick, Path(root))
    name = meta.get("config", {}).get("name", folder.name)
    return f"Win percentages of `{name}`.\n\n" + winrate_markdown(table, metrics=metrics)
