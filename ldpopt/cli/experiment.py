"""``ldpopt experiment run|plot|claims|coverage-table|winrate|evaluate|list``: the papers' experiments from
their TOML configs, and ``evaluate``: your methods beside the papers' over their grid.

Every import of the experiment machinery (and through it cvxpy) is inside the subcommand that needs
it, so ``ldpopt postprocess`` and ``ldpopt --version`` never pay for it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ._args import int_arg, level
from ._commands import help_of
from ._io import write_text

__all__ = ["AGAINST_HELP", "add_parser", "config_paths", "results_name"]


def config_paths() -> list[Path]:
    """Every config the package ships (the ones ``run NAME`` finds by name), sorted by name; raises
    ``ValueError`` (exit 2) when there is none rather than list or run an empty set."""
    from ..experiments.config import config_paths as shipped

    return shipped()


def _config_names(name: str) -> list[str]:
    """``all`` → every known config, else ``[name]``."""
    return [p.stem for p in config_paths()] if name == "all" else [name]


def results_name(arg: str, quick: bool) -> str:
    """What ``plot`` reads for ``arg``: a results folder as is; otherwise the experiment name of the
    config ``arg`` resolves to — by the same lookup ``run`` uses (:func:`find_config`: a ``.toml``
    path or a NAME), since results are saved under the config's ``name``, not the file's stem; an
    ``arg`` that resolves to no config is taken as an experiment name (results whose config is gone)."""
    from ..experiments.config import find_config, load_config

    if (Path(arg) / "results.parquet").is_file():
        return arg
    try:
        path = find_config(arg)
    except ValueError:
        return arg
    return load_config(path, quick=quick).name


def _run(args) -> int:
    """Run one config, or ``all`` of them one after another (the full sweep). ``all`` records the
    wall time of each config and of the whole sweep in ``<out>/sweep_timings[-quick].json``, with the
    number of tasks this invocation actually ran (a resumed sweep runs only the missing ones); each
    invocation appends one entry to that file."""
    import datetime as dt
    import os
    import time

    from ..datasets import DataNotFoundError
    from ..experiments import run
    from ..experiments.config import load_config
    from ..experiments.runner import tasks_of, versions

    names = _config_names(args.name)
    _check_scheduler(args.scheduler)
    configs = [load_config(name, quick=args.quick) for name in names]
    for cfg in configs:  # every config's size before the first task runs
        _check_size(cfg, args.out)
    record: list[dict[str, Any]] = []  # one JSON object per config
    t_all = time.perf_counter()
    for name, cfg in zip(names, configs):
        folder = Path(args.out) / (cfg.name + ("-quick" if args.quick else ""))
        before = len(list((folder / "parts").glob("*.parquet"))) if (folder / "parts").is_dir() else 0
        t0 = time.perf_counter()
        try:
            table = run(name, quick=args.quick, out=args.out, jobs=args.jobs, scheduler=args.scheduler,
                        progress=not args.no_progress)
        except DataNotFoundError as exc:
            if args.name != "all":
                raise
            # the sweep goes on without a config whose data are absent (e.g. your own Kosarak)
            print(f"{cfg.name} skipped: {exc}")
            record.append({"experiment": cfg.name, "tasks": len(tasks_of(cfg)), "tasks_run": 0, "rows": 0,
                           "wall_s": round(time.perf_counter() - t0, 2), "skipped": str(exc)})
            continue
        if table is None:  # run returns None only when task results are missing after it (none is skipped here)
            raise RuntimeError(f"{cfg.name}: task results missing from {folder / 'parts'} after the run")
        wall = time.perf_counter() - t0
        ran = len(list((folder / "parts").glob("*.parquet"))) - before
        record.append({"experiment": cfg.name, "tasks": len(tasks_of(cfg)), "tasks_run": ran,
                       "rows": len(table), "wall_s": round(wall, 2)})
        print(f"{len(table)} rows -> {folder / 'results.parquet'}  ({ran} tasks run, {wall:.1f} s)")
    print(f"ldpopt experiment: scheduler: {_scheduler_line(args)}", file=sys.stderr)  # after: an error is one line
    if args.name == "all":
        doc = {"command": f"ldpopt experiment run all --jobs {args.jobs}" + (" --quick" if args.quick else ""),
               "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
               "wall_s": round(time.perf_counter() - t_all, 2), "jobs": args.jobs,
               "scheduler": args.scheduler, "cpus": os.cpu_count(), "loadavg_end": os.getloadavg(),
               "tasks": sum(r["tasks"] for r in record), "tasks_run": sum(r["tasks_run"] for r in record),
               "versions": versions(), "experiments": record}
        # one entry per invocation, appended: a sweep resumed or extended later keeps its history
        path = Path(args.out) / ("sweep_timings" + ("-quick" if args.quick else "") + ".json")
        history = json.loads(path.read_text()) if path.is_file() else []
        history = history if isinstance(history, list) else [history]
        write_text(path, json.dumps(history + [doc], indent=2) + "\n")
        skipped = sum("skipped" in r for r in record)
        print(f"full sweep: {len(names)} configs" + (f" ({skipped} skipped for missing data)" if skipped else "")
              + f", {doc['tasks_run']} tasks run in {doc['wall_s']:.0f} s -> {path}")
    return 0


#: bytes of one task's results file (parts/KEY.parquet) at its smallest: 5.0 KB for the two methods of
#: docs/experiments.md's tiny config, and more with more methods; so a lower bound of what a run writes
PART_BYTES = 4096
#: bytes one task holds in memory while the run lists them (tracemalloc over 10^5 tasks: 200)
TASK_BYTES = 200


def _check_size(cfg, out) -> None:
    """Refuse a config whose task list cannot fit in memory or whose results files cannot fit on the
    disk of ``out`` (one file per dataset × oracle × ε × repetition), before its tasks are listed:
    ``repetitions = 100000000000`` is a one-line error naming the key and the numbers, not a run that
    grows silently past the machine's memory."""
    from ._limits import refuse_over_disk, refuse_oversized

    tasks = len(cfg.datasets) * len(cfg.oracles) * len(cfg.epsilons) * cfg.repetitions
    what = (f"experiment {cfg.name}'s {tasks:.4g} tasks ({len(cfg.datasets)} dataset(s) x {len(cfg.oracles)} "
            f"oracle(s) x {len(cfg.epsilons)} epsilon(s) x {cfg.repetitions} repetitions)")
    refuse_oversized(tasks * TASK_BYTES, f"repetitions = {cfg.repetitions} in {cfg.source}", what)
    refuse_over_disk(tasks * PART_BYTES, f"repetitions = {cfg.repetitions} in {cfg.source}", what, out)


_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss", "inproc")


def _check_scheduler(address) -> None:
    """``--scheduler`` before any work: a Dask scheduler address SCHEME://HOST:PORT (tcp, tls, ucx,
    ws, wss, inproc) with ``distributed`` installed; else one line naming the option."""
    if address is None:
        return
    from urllib.parse import urlsplit

    from ._args import InputError

    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError:
        port, parts = None, None
    if parts is None or parts.scheme not in _SCHEMES or not parts.hostname or (port is None and parts.scheme != "inproc"):
        raise InputError(f"--scheduler {address!r}: not a Dask scheduler address (SCHEME://HOST:PORT, SCHEME one of "
                         f"{', '.join(_SCHEMES)}; e.g. tcp://127.0.0.1:8786); leave it out to run in this process")
    from .._extras import require

    try:
        require("distributed", None, "--scheduler")
    except ImportError as exc:
        raise InputError(str(exc)) from None


def _scheduler_line(args) -> str:
    """Which scheduler ``experiment run`` uses, for its one line on stderr."""
    if args.scheduler:
        return f"the Dask cluster at {args.scheduler} (--scheduler)"
    if args.jobs > 1:
        return f"{args.jobs} joblib worker processes on this machine (--jobs {args.jobs})"
    return "this process, one task after another (--jobs 1; --jobs N or --scheduler ADDRESS for more)"


def _plot(args) -> int:
    """Draw one config's figures; ``all`` draws every config that has saved results and lists, one
    line each, the configs that have none (e.g. skipped by ``run all`` for missing data)."""
    from ..experiments.figures.draw import plot, results_folder

    names = _config_names(args.name)
    drawn = 0
    for name in names:
        target = results_name(name, args.quick)
        if args.name == "all":
            try:
                results_folder(target, args.quick, args.out)
            except ValueError:
                print(f"{name}: no saved results under {args.out}/, no figure drawn")
                continue
        for path in plot(target, out=args.out_dir, quick=args.quick, root=args.out):
            print(path)
        drawn += 1
    if not drawn:
        raise ValueError(f"no config has saved results under {args.out}/: run 'ldpopt experiment run all' first")
    return 0


def _claims(args) -> int:
    """The numbers behind REPRODUCTION.md's claims, from saved results, and each claim's verdict."""
    from ..experiments.claims.verdicts import PAPERS, claims, paper_title, summary_markdown

    if args.reproduction:
        return _reproduction(args)
    if args.paper != "all" and args.paper not in PAPERS:
        raise ValueError(f"--paper must be one of {', '.join(PAPERS)} or all (a file of experiments/claims/), got {args.paper!r}")
    papers = PAPERS if args.paper == "all" else (args.paper,)
    kw = {"quick": args.quick, "partial": args.partial}
    if args.json:
        json.dump({p: claims(args.out, paper=p, **kw) for p in papers}, sys.stdout, default=float)
        sys.stdout.write("\n")
        return 0
    for p in papers:
        print(f"## {paper_title(p)}\n")
        print(summary_markdown(args.out, paper=p, **kw))
    return 0


def _reproduction(args) -> int:
    """``--reproduction FILE``: FILE (REPRODUCTION.md) with its claims tables regenerated from
    experiments/claims/*.toml; with ``--verdicts`` each verdict is the one the rows' checks give on
    the saved results under ``--out``."""
    from ..experiments.claims.verdicts import PAPERS, claims, reproduction

    verdicts = None
    if args.verdicts:
        # a claim whose results are missing is said to be not measured, never given the row's verdict
        verdicts = {p: {c["id"]: c.get("verdict") or c["text"] for c in claims(args.out, paper=p, quick=args.quick)}
                    for p in PAPERS}
    text = reproduction(Path(args.reproduction).read_text(encoding="utf-8"), verdicts)
    if args.write:
        write_text(Path(args.reproduction), text)
    else:
        sys.stdout.write(text)
    return 0


def _coverage_table(args) -> int:
    """The coverage run's markdown tables (per method × band × level, the ±2-point target marked)."""
    from ..experiments.coverage_report import coverage_report

    by = tuple(c.strip() for c in args.by.split(",") if c.strip())
    if not by:
        raise ValueError("--by must name at least one column, e.g. method or oracle,method")
    print(coverage_report(results_name(args.name, args.quick), quick=args.quick, root=args.out, by=by,
                          levels=args.level))
    return 0


def _winrate(args) -> int:
    """The win-percentage tables of a finished run (per oracle × method × metric, ± SE)."""
    from ..experiments.winrate_report import winrate_report

    metrics = [m.strip() for m in args.metric.split(",") if m.strip()] if args.metric else None
    print(winrate_report(results_name(args.name, args.quick), quick=args.quick, root=args.out, metrics=metrics))
    return 0


#: the default of ``evaluate --against`` (ldpopt.experiments.evaluation.AGAINST, which a test keeps equal);
#: written here so that building the parser imports no experiment module
AGAINST_HELP = "base,base-pos,post-pos,norm,norm-mul,norm-sub,mle-apx,base-cut,norm-cut,norm-hyb"


def _evaluate(args) -> int:
    """Your methods beside the papers' over a grid: one table (markdown + CSV) and one figure per
    metric; prints where they were written (:func:`ldpopt.experiments.evaluation.evaluate`)."""
    from ..experiments.evaluation import evaluate

    ev = evaluate(args.methods, against=args.against if args.against is not None else AGAINST_HELP, grid=args.grid,
                  out=args.out, jobs=args.jobs, resume=args.resume, progress=not args.no_progress)
    print(f"{', '.join(ev.methods)} beside {', '.join(ev.against)}: {ev.grid} grid, {ev.tasks} tasks "
          f"({ev.tasks_run} run now, {ev.tasks - ev.tasks_run} saved before)")
    print(f"table: {ev.markdown}")
    print(f"table (CSV): {ev.csv}")
    for path in ev.figures:
        print(f"figure: {path}")
    return 0


def _list(args) -> int:
    """One row per config: NAME, KIND, DESCRIPTION, in aligned columns under a header."""
    from ..experiments.config import load_config

    rows = [("NAME", "KIND", "DESCRIPTION")]
    rows += [(c.name, c.kind, " ".join(c.description.split())) for c in map(load_config, config_paths())]
    w0, w1 = (max(len(r[i]) for r in rows) for i in (0, 1))
    for name, kind, desc in rows:
        print(f"{name:<{w0}}  {kind:<{w1}}  {desc}".rstrip())
    return 0


def add_parser(sub) -> None:
    ex = sub.add_parser("experiment", help=help_of("experiment"))
    exsub = ex.add_subparsers(dest="experiment_command", required=True)
    er = exsub.add_parser("run", help="run or resume an experiment sweep")
    er.add_argument("name", help="config name (see 'experiment list'), a path to a .toml file, or 'all' (the full sweep)")
    er.add_argument("--quick", action="store_true", help="the config's small [quick] version")
    er.add_argument("--jobs", type=int_arg(1), default=1, help="joblib worker processes (default 1)")
    er.add_argument("--scheduler", default=None, help="Dask scheduler address, e.g. tcp://127.0.0.1:8786")
    er.add_argument("--out", default="results", help="results folder (default: results/)")
    er.add_argument("--no-progress", action="store_true", help="no progress bar")
    er.set_defaults(func=_run)
    ep = exsub.add_parser("plot", help="draw the figures of a finished run from its saved results")
    ep.add_argument("name", help="what 'run' accepts (a config name or .toml path), a results folder, or 'all'")
    ep.add_argument("--quick", action="store_true", help="the results of the --quick run")
    ep.add_argument("--out", default="results", help="results root (default: results/)")
    ep.add_argument("--out-dir", default=None, help="where to write the PNGs (default: the results folder)")
    ep.set_defaults(func=_plot)
    ec = exsub.add_parser("claims", help="the numbers behind REPRODUCTION.md's claims, from saved results")
    ec.add_argument("--paper", default="all",
                    help="a claims file of experiments/claims/ (wang, jia, poisoning, multi, ...) or all (default)")
    ec.add_argument("--out", default="results", help="results root (default: results/)")
    ec.add_argument("--quick", action="store_true", help="read the --quick runs")
    ec.add_argument("--partial", action="store_true", help="also read unfinished sweeps (their parts/)")
    ec.add_argument("--json", action="store_true", help="print every number as JSON")
    ec.add_argument("--reproduction", metavar="FILE", help="print FILE (REPRODUCTION.md) with its claims tables "
                    "regenerated from the claim rows (experiments/claims/*.toml)")
    ec.add_argument("--write", action="store_true", help="with --reproduction: rewrite FILE in place")
    ec.add_argument("--verdicts", action="store_true", help="with --reproduction: the verdicts the rows' checks "
                    "give on the saved results under --out")
    ec.set_defaults(func=_claims)
    et = exsub.add_parser("coverage-table", help="markdown coverage tables of a finished coverage run "
                                                 "(ext_uncertainty_coverage): method x band, 90/95 %%")
    et.add_argument("name", help="config name or a results folder holding results.parquet")
    et.add_argument("--quick", action="store_true", help="the results of the --quick run")
    et.add_argument("--out", default="results", help="results root (default: results/)")
    et.add_argument("--by", default="method", help="row grouping, comma-separated columns (default method; "
                                                   "e.g. oracle,method or epsilon,method)")
    et.add_argument("--level", type=level, action="append", default=None,
                    help="nominal level to show (repeatable; default every level in the results)")
    et.set_defaults(func=_coverage_table)

    ew = exsub.add_parser("winrate", help="win percentages of a finished run: how often each method has the lowest "
                                          "error, per oracle x method x metric, +- SE over the repetitions")
    ew.add_argument("name", help="config name or a results folder holding results.parquet")
    ew.add_argument("--quick", action="store_true", help="the results of the --quick run")
    ew.add_argument("--out", default="results", help="results root (default: results/)")
    ew.add_argument("--metric", default=None, help="comma-separated metrics to show (default: every metric)")
    ew.set_defaults(func=_winrate)

    ev = exsub.add_parser("evaluate", help="your methods beside the papers' methods over the papers' grid: "
                                           "one table (mean ± SE) and a figure per metric")
    ev.add_argument("methods", nargs="+", metavar="METHOD",
                    help="a registered method name or FILE.py:NAME (the file relative to the current directory)")
    ev.add_argument("--against", default=None, metavar="LIST",
                    help=f"comma-separated registered methods to compare with (default {AGAINST_HELP}; add power,"
                         f"power-ns for the fitted ones)")
    ev.add_argument("--grid", default="standard", help="standard (Wang et al. NDSS §V-A: Zipf and Emoji, GRR/OUE/OLH, "
                                                       "30 repetitions) or quick (seconds); default standard")
    ev.add_argument("--out", default="evaluation", help="the evaluation's folder, new or empty (default: evaluation/)")
    ev.add_argument("--resume", action="store_true", help="continue the evaluation in --out: only missing tasks run")
    ev.add_argument("--jobs", type=int_arg(1), default=1, help="joblib worker processes (default 1)")
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    ev.set_defaults(func=_evaluate)

    el = exsub.add_parser("list", help="list the experiment configs")
    el.set_defaults(func=_list)
