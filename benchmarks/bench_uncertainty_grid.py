"""The per-band coverage grid: what one cell costs, and the summary of a finished (or unfinished) run.

``python benchmarks/bench_uncertainty_grid.py profile`` times one cell of the ``coverage-batch`` kind
(Zipf(1.1), d = 20,000, n = 10⁶, OLH ε = 0.5, 200 repetitions, two levels, the nine methods of the
shipped configs) in CPU seconds (``time.process_time``): the vectorised part (Base/Norm score
intervals per value and per subset sum, the conditional top-10 of every method) and, per bootstrapped
repetition of the seven methods that ``intervals`` bootstraps (200 resamples, two repetitions timed),
the per-call path (one ``intervals`` call per method) beside the batched one of the grid
(:func:`ldpopt.uncertainty.batch.bootstrap_many`, the same intervals).

The same profile times the methods that fit or iterate (EM, Power, PowerNS, Calibrate,
MLE-Apx-paper): each alone per call (its memos cleared first, so no method finds another's power-law
fit), the five batched together, and all twelve bootstrapped methods batched together (one draw of
resamples, one power-law fit per resample).

``python benchmarks/bench_uncertainty_grid.py summarise FOLDER...`` reads each run folder
(``results.parquet``, else its ``parts/``) and merges into ``benchmarks/results/uncertainty_grid.parquet``
(a cell the run holds replaces that cell's rows; the cells of earlier runs are kept):
per (experiment, dataset, oracle, ε, method, level, band) the coverage, its Monte-Carlo SE, count,
repetitions and median width relative to Base (:func:`ldpopt.experiments.task_kinds.uncertainty.coverage_stats`),
and for the bootstrapped methods of runs that count them the flag columns of
:func:`ldpopt.experiments.task_kinds.uncertainty.flag_stats` (share flagged; coverage of the unflagged
entries by what the user gets, ``free_*``, and by the method's own basic interval, ``raw_*``);
and ``uncertainty_grid_ranks.parquet``: per rank the top-10 coverage. ``uncertainty_grid.json`` keeps
``machine``, ``date``, ``command``, ``profile`` (when measured) and the number of rows.

``python benchmarks/bench_uncertainty_grid.py tables EXPERIMENT... [--methods M,...] [--levels 0.9,0.95] [--groups | --failures]``
prints, from the committed summary alone, the per-band tables of ``docs/uncertainty.md`` for the
cells of those experiments taken together (one design: e.g. ``ext_uncertainty_coverage
ext_uncertainty_coverage_fit``): :func:`ldpopt.experiments.coverage_report.band_summary_from_stats`
and :func:`~ldpopt.experiments.coverage_report.flag_summary_markdown`; with ``--groups`` one range
table per band over the method groups (:func:`~ldpopt.experiments.coverage_report.group_summary_markdown`);
with ``--failures`` every band more than 3 points under nominal
(:func:`~ldpopt.experiments.coverage_report.failures_markdown`).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

OUT = H.BENCH_DIR / "results" / "uncertainty_grid.json"
METHODS = ["base", "norm", "base-pos", "base-cut", "norm-mul", "norm-sub", "norm-cut", "norm-hyb", "mle-apx"]
FIT_METHODS = ["em", "power", "power-ns", "calibrate", "mle-apx-paper"]


def _clear_memos() -> None:
    """Empty the power-law fit and posterior-mean memos, so a timed call finds no earlier fit."""
    from ldpopt.methods.bayes import posterior as bayes
    from ldpopt.methods.bayes import exponent_fit as exponent_fit

    exponent_fit._FIT_MEMO.clear()
    bayes._PM_MEMO.clear()


def profile() -> dict:
    """CPU seconds of one cell's vectorised part and of one bootstrapped repetition per method."""
    import numpy as np

    from ldpopt import oracles
    from ldpopt.datasets.synthetic import zipf
    from ldpopt.experiments.task_kinds.uncertainty import _bands, _subsets, bootstrap_rows
    from ldpopt.queries import query_matrix
    from ldpopt.uncertainty.analytic import analytic
    from ldpopt.uncertainty.batch import bootstrap_many

    ds = zipf(d=20_000, s=1.1, rng=1)
    cfg = (f'name = "profile"\nkind = "coverage-batch"\ndescription = "one cell, timed"\n'
           f'datasets = [{{name = "zipf", d = 20000, s = 1.1, rng = 1}}]\noracles = ["olh"]\nepsilons = [0.5]\n'
           f'methods = {json.dumps(METHODS)}\nrepetitions = 1\nseed = 1\n'
           f'[params]\nlevels = [0.9, 0.95]\nreps = 200\nbootstrap_reps = 0\n')
    import tempfile

    from ldpopt.experiments import run as run_experiment

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "profile.toml"
        path.write_text(cfg)
        t0 = H.cpu_clock()
        run_experiment(str(path), out=Path(tmp) / "res", progress=False)
        vec = H.cpu_clock() - t0
    o = oracles.get("olh", 0.5, ds.d)
    ests = [o.simulate(ds.counts, 3 + r) for r in range(2)]
    rng = np.random.default_rng(0)
    f = ds.frequencies
    subs = {k: query_matrix(M, ds.d) for k, M in _subsets(rng, f, 10, 50).items()}
    f_sub = {k: np.asarray(U @ f).ravel() for k, U in subs.items()}
    levels = [0.9, 0.95]
    per = dict.fromkeys(METHODS[2:], 0.0)
    for est in ests:  # the per-call path: one intervals() call (its own resamples) per method
        base = {lv: analytic(est, "base", lv) for lv in levels}
        base_q = {(lv, k): analytic(est, "base", lv, queries=U) for lv in levels for k, U in subs.items()}
        for m in METHODS[2:]:
            t0 = H.cpu_clock()
            bootstrap_rows(est, m, levels, 200, 1, f, _bands(f, est.sigma), subs, f_sub, base, base_q, topk=False)
            per[m] += (H.cpu_clock() - t0) / len(ests)
    def batched(methods, seed):
        _clear_memos()
        t0 = H.cpu_clock()  # the batched path of the coverage-batch kind, the same work
        for _ in bootstrap_many(ests, methods, levels, 200, [seed] * len(ests), queries=subs, raw=True):
            pass
        return (H.cpu_clock() - t0) / len(ests)

    import warnings

    fit = dict.fromkeys(FIT_METHODS, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FallbackWarning per call, the power fit's bound warnings
        for i, est in enumerate(ests):  # each alone, fresh resamples (seed 2 + i) and empty memos
            base = {lv: analytic(est, "base", lv) for lv in levels}
            base_q = {(lv, k): analytic(est, "base", lv, queries=U) for lv in levels for k, U in subs.items()}
            for m in FIT_METHODS:
                _clear_memos()
                t0 = H.cpu_clock()
                bootstrap_rows(est, m, levels, 200, 2 + i, f, _bands(f, est.sigma), subs, f_sub, base, base_q,
                               topk=False)
                fit[m] += (H.cpu_clock() - t0) / len(ests)
        seven, five, twelve = batched(METHODS[2:], 1), batched(FIT_METHODS, 3), batched(METHODS[2:] + FIT_METHODS, 4)
    return {"cell": "zipf1.1-d20000, OLH eps = 0.5, 200 repetitions, 9 methods, 2 levels",
            "vectorised_cpu_s": round(vec, 1), "bootstrap_cpu_s_per_repetition": {m: round(v, 2) for m, v in per.items()},
            "bootstrap_cpu_s_per_repetition_all_seven": {"per_call": round(sum(per.values()), 2),
                                                          "batched": round(seven, 2)},
            "bootstrap_cpu_s_per_repetition_fit": {m: round(v, 2) for m, v in fit.items()},
            "bootstrap_cpu_s_per_repetition_all_five_fit": {"per_call": round(sum(fit.values()), 2),
                                                             "batched": round(five, 2)},
            "bootstrap_cpu_s_per_repetition_all_twelve_batched": round(twelve, 2),
            "repetitions_timed": len(ests)}


def _table(folder: Path):
    import pandas as pd

    if (folder / "results.parquet").exists():
        return pd.read_parquet(folder / "results.parquet")
    parts = sorted((folder / "parts").glob("*.parquet"))
    return pd.concat([pd.read_parquet(p) for p in parts]) if parts else None


def summarise(folders) -> tuple[list, list]:
    from ldpopt.experiments.task_kinds.uncertainty import coverage_stats, flag_stats

    rows, ranks = [], []
    by = ("experiment", "dataset", "oracle", "epsilon", "method")
    for folder in map(Path, folders):
        t = _table(folder)
        if t is None:
            continue
        cov = t[t["metric"] == "coverage"]
        st = coverage_stats(cov, by=by)
        fl = flag_stats(t, by=by)
        st = (st.join(fl, how="left") if not fl.empty else st).reset_index()
        rows += [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in st.to_dict("records")]
        rk = t[t["metric"] == "coverage_rank"]
        rk = rk.assign(hits=rk["value"] * rk["count"]).groupby([*by, "level", "band"])[["hits", "count"]].sum()
        rk["coverage"] = rk["hits"] / rk["count"]
        ranks += [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
                  for r in rk.drop(columns="hits").reset_index().to_dict("records")]
    return rows, ranks


CELL = ["experiment", "dataset", "oracle", "epsilon"]


def _merge(old, new):
    """The summary file after a run: every (experiment, dataset, oracle, ε) cell of ``new`` replaces
    that cell's rows of ``old``; the other cells of ``old`` (earlier runs) are kept."""
    import pandas as pd

    if old is None or old.empty or new.empty:
        return new if old is None or old.empty else old
    done = set(map(tuple, new[CELL].astype(str).to_numpy()))
    keep = [tuple(r) not in done for r in old[CELL].astype(str).to_numpy()]
    return pd.concat([old[keep], new], ignore_index=True)


# the method groups of the per-band range tables (``tables --groups``)
GROUPS = {"base/norm": ["base", "norm"], "closed forms": METHODS[2:], "fit or iterate": FIT_METHODS}


def tables(experiments, methods=None, levels=None, path: Path = OUT.with_suffix(".parquet"), groups=False,
           failures=False) -> str:
    """The per-band summary and the flag summary of the committed ``path`` for the cells of
    ``experiments`` taken together (``methods``: only those, in that order); ``groups``: instead,
    one range table over the method groups of :data:`GROUPS`
    (:func:`ldpopt.experiments.coverage_report.group_summary_markdown`); ``failures``: instead, every
    band more than 3 points under nominal (:func:`~ldpopt.experiments.coverage_report.failures_markdown`)."""
    import pandas as pd

    from ldpopt.experiments.coverage_report import (FLAG_COLUMNS, band_summary_from_stats, failures_markdown,
                                                    flag_summary_markdown, group_summary_markdown)

    st = pd.read_parquet(path)
    if unknown := sorted(set(experiments) - set(st["experiment"])):
        raise ValueError(f"experiments: {unknown} are not in {path.name} (have {sorted(set(st['experiment']))})")
    st = st[st["experiment"].isin(experiments)]
    # Base in a _fit/_power run is the same draws as in its sibling's: keep it once when both are asked for
    twin = st["experiment"].str.replace(r"_(fit|power)$", "", regex=True)
    st = st[~((twin != st["experiment"]) & twin.isin(experiments) & st["method"].isin(["base", "norm"]))]
    if methods:
        if unknown := sorted(set(methods) - set(st["method"])):
            raise ValueError(f"methods: {unknown} are not in these experiments")
        st = st[st["method"].isin(methods)]
        st = st.assign(_o=st["method"].map({m: i for i, m in enumerate(methods)})).sort_values("_o", kind="stable")
    for c in FLAG_COLUMNS:
        st = st if c in st.columns else st.assign(**{c: float("nan")})
    if failures:
        return failures_markdown(st)
    if groups:
        return group_summary_markdown(st, GROUPS, levels=levels or (0.9, 0.95))
    return band_summary_from_stats(st, levels=levels) + flag_summary_markdown(st, levels=levels)


def main(argv=None, out: Path = OUT) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["profile", "summarise", "tables"])
    ap.add_argument("folders", nargs="*", help="run folders to summarise (tables: experiment names)")
    ap.add_argument("--methods", default=None, help="tables: only these methods, comma-separated")
    ap.add_argument("--levels", default=None, help="tables: only these levels, comma-separated")
    ap.add_argument("--groups", action="store_true", help="tables: one range table over the method groups")
    ap.add_argument("--failures", action="store_true", help="tables: every band more than 3 points under nominal")
    a = ap.parse_args(argv)
    if a.what == "tables":
        return {"tables": tables(a.folders, a.methods.split(",") if a.methods else None,
                                 [float(x) for x in a.levels.split(",")] if a.levels else None,
                                 out.with_suffix(".parquet"), groups=a.groups, failures=a.failures)}
    old = json.loads(out.read_text()) if out.exists() else {}
    head = {"machine": H.environment(), "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join(["python", "benchmarks/bench_uncertainty_grid.py", a.what]
                                + [Path(f).name for f in a.folders])}
    if a.what == "profile":
        result = {**old, "profile": {**head, **profile()}}
    else:
        import pandas as pd

        rows, ranks = summarise(a.folders)
        n = {}
        for new, path in ((rows, out.with_suffix(".parquet")), (ranks, out.with_name("uncertainty_grid_ranks.parquet"))):
            merged = _merge(pd.read_parquet(path) if path.exists() else None, pd.DataFrame(new))
            merged.to_parquet(path, index=False)
            n[path.name] = len(merged)
        result = {**head, "profile": old.get("profile"), "rows": n[out.with_suffix(".parquet").name],
                  "ranks": n["uncertainty_grid_ranks.parquet"], "runs": [*old.get("runs", []), head]}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=0, default=float))
    return result


def run(quick: bool = False, **opts) -> dict:
    """The harness's entry point (``benchmarks/run.py``): the one-cell profile, or with
    ``what="summarise"`` and ``folders`` the summary of finished runs; ``quick`` and ``out`` as every
    bench (a quick run writes under ``results/quick/``, never over the measured file). The grid itself
    is an experiment (``ldpopt experiment run ext_uncertainty_coverage`` and its held-out and large
    siblings), too long for a benchmark section."""
    folder = Path(opts["out"]) if opts.get("out") else OUT.parent / ("quick" if quick else "")
    return main([opts.get("what", "profile"), *opts.get("folders", [])], out=folder / OUT.name)


if __name__ == "__main__":
    r = main()
    if "tables" in r:
        print(r["tables"])
    else:
        print(json.dumps(r.get("profile"), indent=1) if sys.argv[1:2] == ["profile"] else f"{r['rows']} rows written")
