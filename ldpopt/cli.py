"""The ``ldpopt`` command.

``ldpopt postprocess --counts FILE --oracle oue --epsilon 1 --n N [--method norm-sub|all] --out FILE``
turns aggregated support counts (a CSV or Parquet table with columns ``value,count``) into
post-processed frequencies: one column per method, the raw estimate (``base``) always kept alongside.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__, methods, oracles

__all__ = ["main", "read_counts", "write_table"]


class InputError(ValueError):
    """A problem with the user's input file or arguments (exit status 2, message on stderr)."""


def read_counts(path) -> pd.DataFrame:
    """Read a ``value,count`` table (CSV, or Parquet by suffix ``.parquet``/``.pq``).

    Counts must be finite, non-negative numbers; values must be unique. A malformed row is reported
    with its line number in the file (the header is line 1).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"--counts: no such file: {path}")
    if path.suffix.lower() in (".parquet", ".pq"):
        try:
            raw = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises several types for a bad file
            raise InputError(f"--counts: cannot read Parquet file {path}: {exc}") from None
        raw = raw.astype({c: "string" for c in raw.columns})
        first_line = 1  # Parquet has no lines; report 1-based row numbers
        unit = "row"
    else:
        try:
            raw = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
        except pd.errors.ParserError as exc:
            raise InputError(f"--counts: malformed CSV {path}: {exc}") from None
        except pd.errors.EmptyDataError:
            raise InputError(f"--counts: {path} is empty (expected a header 'value,count')") from None
        first_line = 2  # line 1 is the header
        unit = "line"
    cols = [c.strip().lower() for c in raw.columns]
    if cols[:2] != ["value", "count"] or len(cols) != 2:
        raise InputError(f"--counts: {path} must have exactly the columns value,count; got {list(raw.columns)}")
    raw.columns = ["value", "count"]
    if len(raw) < 2:
        raise InputError(f"--counts: {path} must have at least 2 rows (a domain of d >= 2 values)")
    values = raw["value"].astype(str).str.strip()
    counts = pd.to_numeric(raw["count"].str.strip(), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(counts) | (counts < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"--counts: {unit} {i + first_line} of {path}: count must be a finite number >= 0, "
                         f"got {raw['count'].iloc[i]!r}")
    empty = (values == "").to_numpy()
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise InputError(f"--counts: {unit} {i + first_line} of {path}: value is empty")
    dup = values.duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise InputError(f"--counts: {unit} {i + first_line} of {path}: value {values.iloc[i]!r} repeats an earlier row")
    return pd.DataFrame({"value": values.to_numpy(dtype=object), "count": counts})


def _atomic_write_text(path: Path, text: str) -> None:
    """Write a text file through a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_table(table: pd.DataFrame, out, fmt: str) -> None:
    """Write atomically: to a temporary file in the same folder, then rename, so a failure never
    leaves a partial output file. CSV floats use 17 significant digits (they round-trip exactly)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    try:
        if fmt == "csv":
            table.to_csv(tmp, index=False, float_format="%.17g")
        elif fmt == "parquet":
            table.to_parquet(tmp, index=False)
        elif fmt == "json":
            Path(tmp).write_text(json.dumps(_as_json(table)))
        else:  # pragma: no cover - argparse restricts the choices
            raise InputError(f"--format must be csv, parquet or json, got {fmt!r}")
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _as_json(table: pd.DataFrame) -> dict:
    return {"columns": list(table.columns),
            "data": {c: (table[c].tolist()) for c in table.columns}}


def _parse_params(items) -> dict:
    params = {}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"--param must look like name=value, got {item!r}")
        key, val = item.split("=", 1)
        try:
            params[key.strip()] = json.loads(val)
        except json.JSONDecodeError:
            params[key.strip()] = val
    return params


def _cmd_postprocess(args) -> int:
    table = read_counts(args.counts)
    d = len(table)
    oracle_params = {}
    if args.g is not None:
        oracle_params["g"] = args.g
    if args.k is not None:
        oracle_params["k"] = args.k
    try:
        oracle = oracles.get(args.oracle, epsilon=args.epsilon, d=d, **oracle_params)
    except TypeError as exc:
        raise InputError(f"--oracle {args.oracle}: {exc}") from None
    n = args.n
    if n is None:
        if oracle.name != "grr":
            raise InputError("--n is required for this oracle (support counts do not sum to n)")
        n = int(round(table["count"].sum()))
    if oracle.name == "grr" and not np.isclose(table["count"].sum(), n):
        raise InputError(f"--n: GRR support counts sum to the number of users; they sum to "
                         f"{table['count'].sum():g}, not --n {n}")
    estimate = oracle.estimate(table["count"].to_numpy(), n)
    names = list(methods.available().index) if args.method == "all" else [args.method]
    params = _parse_params(args.param)
    out = pd.DataFrame({"value": table["value"], "count": table["count"], "base": estimate.f_tilde})
    for name in names:
        if name == "base":
            continue
        kwargs = params if args.method != "all" else {}
        out[name] = methods.postprocess(estimate, name, **kwargs)
    fmt = args.format or (Path(args.out).suffix.lstrip(".").lower() if args.out else "csv")
    fmt = {"pq": "parquet"}.get(fmt, fmt)
    if fmt not in ("csv", "parquet", "json"):
        raise InputError(f"--format must be csv, parquet or json (or give --out a .csv/.parquet/.json name), got {fmt!r}")
    if args.out:
        write_table(out, args.out, fmt)
    if args.json:
        doc = {"oracle": oracle.name, "epsilon": oracle.epsilon, "d": d, "n": n, "p": oracle.p, "q": oracle.q,
               "methods": names, "out": str(args.out) if args.out else None, **_as_json(out)}
        json.dump(doc, sys.stdout)
        sys.stdout.write("\n")
    elif not args.out:
        out.to_csv(sys.stdout, index=False, float_format="%.17g")
    else:
        print(f"wrote {len(out)} rows x {len(out.columns)} columns to {args.out}", file=sys.stderr)
    return 0


def _config_names(name: str) -> list[str]:
    """``all`` → every shipped config (``ldpopt/experiments/configs/``), else ``[name]``."""
    if name != "all":
        return [name]
    from .experiments.config import config_paths

    return [p.stem for p in config_paths()]


def _cmd_experiment_run(args) -> int:
    """Run one config, or ``all`` of them one after another (the full sweep). ``all`` records the
    wall time of each config and of the whole sweep in ``<out>/sweep_timings[-quick].json``, with the
    number of tasks this invocation actually ran (a resumed sweep runs only the missing ones); each
    invocation appends one entry to that file."""
    import datetime as dt
    import os
    import time

    from .datasets import DataNotFoundError
    from .experiments import run
    from .experiments.config import load_config
    from .experiments.runner import _versions, tasks_of

    names = _config_names(args.name)
    record = []
    t_all = time.perf_counter()
    for name in names:
        cfg = load_config(name, quick=args.quick)
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
        wall = time.perf_counter() - t0
        ran = len(list((folder / "parts").glob("*.parquet"))) - before
        record.append({"experiment": cfg.name, "tasks": len(tasks_of(cfg)), "tasks_run": ran,
                       "rows": len(table), "wall_s": round(wall, 2)})
        print(f"{len(table)} rows -> {folder / 'results.parquet'}  ({ran} tasks run, {wall:.1f} s)")
    if args.name == "all":
        doc = {"command": f"ldpopt experiment run all --jobs {args.jobs}" + (" --quick" if args.quick else ""),
               "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
               "wall_s": round(time.perf_counter() - t_all, 2), "jobs": args.jobs,
               "scheduler": args.scheduler, "cpus": os.cpu_count(), "loadavg_end": os.getloadavg(),
               "tasks": sum(r["tasks"] for r in record), "tasks_run": sum(r["tasks_run"] for r in record),
               "versions": _versions(), "experiments": record}
        # one entry per invocation, appended: a sweep resumed or extended later keeps its history
        path = Path(args.out) / ("sweep_timings" + ("-quick" if args.quick else "") + ".json")
        history = json.loads(path.read_text()) if path.is_file() else []
        history = history if isinstance(history, list) else [history]
        _atomic_write_text(path, json.dumps(history + [doc], indent=2) + "\n")
        skipped = sum("skipped" in r for r in record)
        print(f"full sweep: {len(names)} configs" + (f" ({skipped} skipped for missing data)" if skipped else "")
              + f", {doc['tasks_run']} tasks run in {doc['wall_s']:.0f} s -> {path}")
    return 0


def _cmd_experiment_plot(args) -> int:
    from .experiments.plot import plot

    for name in _config_names(args.name):
        for path in plot(name, out=args.out_dir, quick=args.quick, root=args.out):
            print(path)
    return 0


def _cmd_experiment_claims(args) -> int:
    """``ldpopt experiment claims``: the numbers behind REPRODUCTION.md's claims, from saved results."""
    import importlib

    papers = ("wang", "jia") if args.paper == "all" else (args.paper,)
    mods = [importlib.import_module(f".experiments.claims_{p}", __package__) for p in papers]
    import inspect

    def kw(fn):  # --partial only where the module reads unfinished sweeps
        ok = inspect.signature(fn).parameters
        return {k: v for k, v in (("quick", args.quick), ("partial", args.partial)) if k in ok}

    if args.json:
        doc = {p: m.claims(args.out, **kw(m.claims)) for p, m in zip(papers, mods)}
        json.dump(doc, sys.stdout, default=float)
        sys.stdout.write("\n")
        return 0
    for p, m in zip(papers, mods):
        print(f"## {'Wang et al.' if p == 'wang' else 'Jia & Gong'}\n")
        print(m.summary_markdown(args.out, **kw(m.claims)))
        print()
    return 0


def _cmd_experiment_list(args) -> int:
    from .experiments.config import config_paths, load_config

    for path in config_paths():  # raises (exit 2) rather than list nothing
        cfg = load_config(path)
        print(f"{cfg.name:<28}{cfg.kind:<20}{cfg.description}")
    return 0


def _cmd_verify(args) -> int:
    """``ldpopt verify``: run the claims of :mod:`ldpopt.verify`; exit 0 iff every expected claim holds."""
    from . import verify

    def floats(xs):
        return None if xs is None else [float(x) for x in xs]

    def ints(xs):
        return None if xs is None else [int(float(x)) for x in xs]

    say = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    df = verify.run(oracles=args.oracles, epsilons=floats(args.epsilons), ns=ints(args.n), ds=ints(args.d),
                    seeds=ints(args.seeds), solver=args.solver, quick=args.quick, progress=say)
    fails = verify.failures(df)
    found = verify.findings(df)
    code = verify.exit_code(df)
    if args.json:
        doc = {"exit_code": code, "findings": found, "failures": sorted(set(fails["claim"])),
               "summary": json.loads(verify.summary(df).to_json(orient="records")),
               "rows": json.loads(df.to_json(orient="records"))}
        json.dump(doc, sys.stdout)
        sys.stdout.write("\n")
        return code
    with pd.option_context("display.width", 200, "display.max_colwidth", 60, "display.max_rows", 500):
        print(verify.summary(df).drop(columns=["failing_settings"]).to_string(index=False))
    print("\nFindings (reported either way):")
    for claim, outcome in found.items():
        print(f"  {claim}: {outcome}")
    if len(fails):
        print("\nClaims expected to hold that do NOT hold:")
        for r in fails.itertuples():
            print(f"  {r.claim} [{r.oracle} eps={r.epsilon} n={r.n} d={r.d} {r.solver or ''}]: "
                  f"{r.metric}={r.value:.3g} (tolerance {r.tolerance}) {r.note}")
    else:
        print("\nEvery claim expected to hold holds.")
    return code


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ldpopt", description="Post-processing of LDP frequency estimates.")
    ap.add_argument("--version", action="version", version=f"ldpopt {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    pp = sub.add_parser("postprocess", help="post-process aggregated support counts from a file")
    pp.add_argument("--counts", required=True, help="CSV or Parquet table with columns value,count")
    pp.add_argument("--oracle", required=True, help=f"one of {oracles.available()}")
    pp.add_argument("--epsilon", required=True, type=float, help="privacy budget ε > 0")
    pp.add_argument("--n", type=int, default=None, help="number of users (optional for GRR: sum of counts)")
    pp.add_argument("--method", default="all", help="a registered method name, or 'all' (default)")
    pp.add_argument("--param", action="append", metavar="NAME=VALUE",
                    help="method parameter (repeatable), e.g. --param alpha=0.05")
    pp.add_argument("--g", type=int, default=None, help="hash range g for OLH (default round(e^ε + 1))")
    pp.add_argument("--k", type=int, default=None, help="subset size k for SS (default d/(e^ε + 1))")
    pp.add_argument("--out", default=None, help="output file (.csv, .parquet or .json); stdout if omitted")
    pp.add_argument("--format", choices=["csv", "parquet", "json"], default=None)
    pp.add_argument("--json", action="store_true", help="print a JSON document (results and metadata) to stdout")
    pp.set_defaults(func=_cmd_postprocess)

    ex = sub.add_parser("experiment", help="run the papers' experiments (configs in ldpopt/experiments/configs/)")
    exsub = ex.add_subparsers(dest="experiment_command", required=True)
    er = exsub.add_parser("run", help="run or resume an experiment sweep")
    er.add_argument("name", help="config name (see 'ldpopt experiment list'), a path to a .toml file, or 'all' (the full sweep)")
    er.add_argument("--quick", action="store_true", help="the config's small [quick] version")
    er.add_argument("--jobs", type=int, default=1, help="joblib worker processes (default 1)")
    er.add_argument("--scheduler", default=None, help="Dask scheduler address, e.g. tcp://127.0.0.1:8786")
    er.add_argument("--out", default="results", help="results folder (default: results/)")
    er.add_argument("--no-progress", action="store_true", help="no progress bar")
    er.set_defaults(func=_cmd_experiment_run)
    ep = exsub.add_parser("plot", help="draw the figures of a finished run from its saved results")
    ep.add_argument("name", help="experiment name (results/NAME[-quick]), a results folder, or 'all'")
    ep.add_argument("--quick", action="store_true", help="the results of the --quick run")
    ep.add_argument("--out", default="results", help="results root (default: results/)")
    ep.add_argument("--out-dir", default=None, help="where to write the PNGs (default: the results folder)")
    ep.set_defaults(func=_cmd_experiment_plot)
    ec = exsub.add_parser("claims", help="the numbers behind REPRODUCTION.md's claims, from saved results")
    ec.add_argument("--paper", choices=["wang", "jia", "all"], default="all")
    ec.add_argument("--out", default="results", help="results root (default: results/)")
    ec.add_argument("--quick", action="store_true", help="read the --quick runs")
    ec.add_argument("--partial", action="store_true", help="also read unfinished sweeps (their parts/)")
    ec.add_argument("--json", action="store_true", help="print every number as JSON")
    ec.set_defaults(func=_cmd_experiment_claims)
    el = exsub.add_parser("list", help="list the experiment configs")
    el.set_defaults(func=_cmd_experiment_list)

    vf = sub.add_parser("verify", help="check the papers' claims, closed forms vs the cvxpy solver")
    vf.add_argument("--oracles", nargs="+", default=None, help=f"oracles (default all: {oracles.available()})")
    vf.add_argument("--epsilons", nargs="+", default=None, help="privacy budgets (default 0.5 2 8)")
    vf.add_argument("--n", nargs="+", default=None, help="numbers of users (default 1e4 1e6)")
    vf.add_argument("--d", nargs="+", default=None, help="domain sizes (default 10 1000)")
    vf.add_argument("--seeds", nargs="+", default=None, help="seeds (default 0)")
    vf.add_argument("--solver", default=None, help="referee for Norm-Sub = CLS (default OSQP and Clarabel)")
    vf.add_argument("--quick", action="store_true", help="small grid (~15 s)")
    vf.add_argument("--json", action="store_true", help="print the table, summary and findings as JSON")
    vf.set_defaults(func=_cmd_verify)
    return ap


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (InputError, ValueError, TypeError) as exc:
        print(f"ldpopt {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
