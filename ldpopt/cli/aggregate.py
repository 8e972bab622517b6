"""``ldpopt aggregate``: a folder of Parquet report shards in, support counts (and optionally
post-processed estimates) out, computed out of core with Dask (:mod:`ldpopt.aggregate.dask`).

Notes: docs/notes/cli.md, "ldpopt.cli.aggregate"."""

from __future__ import annotations

import sys
import tempfile

from .. import __version__
from ._args import InputError, int_arg
from ._commands import help_of

__all__ = ["add_parser"]


def _run(args) -> int:
    import numpy as np
    import pandas as pd

    from .._extras import require
    from ..aggregate import AlreadyHeldError, MergeError
    from ..aggregate.dask import aggregate_shards
    from ..aggregate.shards import list_shards

    if args.ci is not None and not args.method:
        raise InputError("--ci: the intervals of a post-processing; give --method too")
    files = list_shards(args.shards)
    if args.sql is not None and args.engine != "duckdb":
        raise InputError("--sql: a DuckDB query; give it with --engine duckdb")
    if args.sql is not None and args.merge_into:
        raise InputError("--merge-into: not with --sql (a query's rows are not whole shards, so the merge could "
                         "not refuse counting a shard's reports twice)")
    if args.sql is not None:  # parsed, not run: a statement that is not one SELECT never reaches the engine
        try:
            check_select(args.sql)
        except ImportError as e:
            raise InputError(str(e)) from None
    if args.engine != "dask" and (args.scheduler != "auto" or args.workers is not None):
        raise InputError(f"--scheduler/--workers: Dask's options; --engine {args.engine} runs in this process")
    picked = None  # auto's pick, said on stderr once the counts are in (an error stays one line)
    if args.engine != "dask":
        args.scheduler = args.engine
    elif args.scheduler == "auto":
        args.scheduler, why = pick_scheduler(files)
        picked = f"ldpopt aggregate: scheduler: {args.scheduler} ({why})"
    try:
        if args.engine == "duckdb":
            require("duckdb", "test", "--engine duckdb")
        elif args.engine == "polars":
            require("polars", "test", "--engine polars")
        require("dask", None, "ldpopt aggregate")
        if args.scheduler not in ("threads", "synchronous", "duckdb", "polars"):
            require("distributed", None, f"--scheduler {args.scheduler}")
    except ImportError as e:
        raise InputError(str(e)) from None
    from ._io import format_of, out_files, output_target, write_table, write_text
    from ._paths import refuse_collisions
    from ._recorded import input_digests

    fmt = format_of(args.out, args.format) if args.out else "csv"
    for path, arg in ((args.out, "--out"), (args.partial, "--partial")):  # before the work, and before
        if path is not None:  # --partial is written: a refused --out must not leave it behind
            output_target(path, arg)
    refuse_collisions(out_files(args.out, fmt) + [("--partial", args.partial)],
                      [("SHARDS", args.shards, "*.parquet"), *(("SHARDS", f) for f in files),
                       ("--merge-into", args.merge_into)])
    base = _merge_base(args.merge_into) if args.merge_into else None
    workers = _workers(args)
    if args.method:
        from .postprocess import method_names

        names = method_names(args.method)  # an unknown name before the work, not after it
    _check_shards(args.shards, files)
    if args.device != "auto" and args.scheduler in ("threads", "synchronous", "local", "duckdb", "polars"):
        from ..kernels import resolve

        try:
            resolve(args.device)  # before any work: a missing GPU or extra is a one-line error
        except (ImportError, RuntimeError) as e:
            raise InputError(f"--device {args.device}: {e}") from None
    try:
        # the partial of --merge-into (read and checked above) takes the shards: its configuration and
        # its shards' identities are checked before any counting (ldpopt.aggregate.identity)
        if args.engine == "dask":
            total = aggregate_shards(files, scheduler=args.scheduler, workers=workers, progress=not args.no_progress,
                                     device=args.device, into=base)
        else:
            total = _by_engine(args, files, base)
    except (AlreadyHeldError, MergeError) as exc:  # the partial's, or two shards that do not merge
        where = f"--merge-into {args.merge_into}" if args.merge_into else f"SHARDS {args.shards}"
        raise InputError(f"{where}: {exc}") from None
    if picked:
        print(picked, file=sys.stderr)
    from ..privacy.statement import statement_of

    oracle = total.build_oracle()
    out = pd.DataFrame({"value": total.values(), "count": total.support_counts()})
    skipped: dict[str, str] = {}  # method → why it was skipped
    ci: dict | None = None  # --ci's record
    if not args.method:
        names = []
    else:
        from .postprocess import estimate_of, for_domain, run_methods

        est = estimate_of(oracle, total.support_counts(), total.n)
        columns: dict[str, np.ndarray] = {}
        if args.method == "all":
            names = for_domain(names, est)
        names, skipped = run_methods(columns, est, names, {}, "--method all" if args.method == "all" else None,
                                     f"oracle {oracle.name}")
        for name, col in columns.items():
            out[name] = col
        if args.ci is not None:
            from .postprocess import _add_intervals

            ci = _add_intervals(out, est, names, {}, args)
    metadata = {
        "ldpopt_version": __version__, "oracle": oracle.name, "epsilon": oracle.epsilon, "n": total.n,
        "d": total.d, "p": oracle.p, "q": oracle.q, "oracle_params": dict(total.params),
        "methods": names, "shards": [str(f) for f in files], "scheduler": args.scheduler, "device": args.device,
        "engine": args.engine, **({"sql": args.sql} if args.sql is not None else {}),
        "merged_into": args.merge_into, "partial_format_version": total.version,
        "labelled": total.labels is not None, **({"skipped": skipped} if skipped else {}),
        **({"ci": ci} if ci is not None else {}),
        "sha256": input_digests(args),
        "privacy": statement_of(dict(total.params), oracle.epsilon).as_dict(),  # what an estimate from them says
    }
    if args.partial:
        write_text(args.partial, total.to_json() + "\n", "--partial")
    if args.out:
        written = write_table(out, args.out, fmt, metadata)
        print(f"aggregated {total.n} reports from {len(files)} shard(s); wrote {', '.join(map(str, written))}",
              file=sys.stderr)
    else:
        out.to_csv(sys.stdout, index=False, float_format="%.17g")
    return 0


#: bytes of shards on disk past which the default scheduler starts a local Dask cluster: 16 GiB,
#: about 10^9 OUE reports at d = 128. Below it the threads scheduler is faster: on 2 cores it took
#: 0.9-4.5 s where the cluster took 6.2-14.2 s for 2·10^6-10^8 reports (benchmarks/results/
#: schedulers.json: the cluster's start alone 4.5-5.7 s, its shutdown 1.5-1.9 s); a 1,000-report
#: folder took 235 s through the cluster under a load average of 16 (10.7 s with threads), and 10^6
#: reports 2.86 s against 0.98 s on a quiet moment. Past it the threads run lasts a
#: minute or more (0.36 GB/s measured), the cluster's ~7 s start and shutdown are a tenth of that,
#: and worker processes count in parallel without one interpreter's lock.
AUTO_CLUSTER_BYTES = 16 * 2**30
#: ...and only where more than this many cores are usable: on 2 cores the cluster was slower at every size
AUTO_CLUSTER_CORES = 2


def pick_scheduler(files) -> tuple[str, str]:
    """``--scheduler auto``: (the scheduler, why, for the one line on stderr): ``threads`` for what
    fits one process, ``local`` (a distributed.LocalCluster) past :data:`AUTO_CLUSTER_BYTES` of
    shards with more than :data:`AUTO_CLUSTER_CORES` usable cores."""
    import os

    from ..aggregate.cluster import usable_cores
    from ._limits import size_text

    size = sum(os.path.getsize(f) for f in files)
    cores = usable_cores()
    if size > AUTO_CLUSTER_BYTES and cores > AUTO_CLUSTER_CORES:
        return "local", (f"auto: {size_text(size)} of shards, over {size_text(AUTO_CLUSTER_BYTES)}, and {cores} "
                         f"cores: a local Dask cluster; --scheduler threads to count in process")
    limit = f"over {size_text(AUTO_CLUSTER_BYTES)} with more than {AUTO_CLUSTER_CORES} cores"
    return "threads", (f"auto: {size_text(size)} of shards on {cores} core(s); a local cluster is started for "
                       f"{limit} or with --scheduler local")


def _merge_base(path):
    """The partial aggregate of ``--merge-into``, read and checked before any shard is: a missing or
    malformed file, or a non-finite number anywhere in it (``NaN``, ``Infinity``: Python's JSON
    reader accepts them, and no field of a partial may hold one), is one line naming the option."""
    import json

    from ..aggregate import Partial
    from ._io import input_file, text_bytes

    path = input_file(path, "--merge-into")

    def refuse(constant):
        raise InputError(f"--merge-into {path}: holds the non-finite number {constant}; a partial aggregate's "
                         f"counts and fields are finite")
    try:
        doc = json.loads(text_bytes(path, "--merge-into").decode("utf-8"), parse_constant=refuse)
        return Partial.from_dict(doc)
    except InputError:
        raise
    except UnicodeDecodeError as exc:
        raise InputError(f"--merge-into {path}: not UTF-8 text: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"--merge-into {path}: not a partial aggregate (invalid JSON: {exc})") from None
    except RecursionError:
        raise InputError(f"--merge-into {path}: not a partial aggregate (nested too deeply)") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise InputError(f"--merge-into {path}: {exc}") from None


def _check_shards(folder, files) -> None:
    """Each shard's header read before the work, so that a file that is not an ldpopt report shard
    (another Parquet file, a truncated one) is named, not reported by pyarrow without its path."""
    from ..aggregate.shards import UnknownOracleError, read_oracle

    for f in files:
        try:
            read_oracle(f)
        except UnknownOracleError as exc:  # an oracle of one's own: say which argument loads it
            raise InputError(f"SHARDS {folder}: {f.name} holds reports of oracle {exc.oracle!r}, which is not "
                             f"registered: load the file that defines it, ldpopt --plugin FILE.py aggregate "
                             f"{folder} ...") from None
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"SHARDS {folder}: {f.name} is not a readable ldpopt report shard: {why}") from None


def _by_engine(args, files, base):
    """``--engine duckdb|polars``: the shards read as one table by DuckDB (``read_parquet``, or the
    ``--sql`` query over the view ``reports``) or Polars (``scan_parquet``) and counted inside that engine
    (:func:`ldpopt.aggregate.from_dataframe`); every shard must declare the same oracle and labels. The
    whole folder's partial records the shards' identities, as Dask's does; a query's does not."""
    from .._extras import require
    from ..aggregate import Partial, from_dataframe
    from ..aggregate.identity import check_not_held
    from ..aggregate.shards import read_identities, read_labels, read_oracle

    oracle, labels = read_oracle(files[0]), read_labels(files[0])
    key = Partial.empty(oracle, labels).key()
    for f in files[1:]:
        if Partial.empty(read_oracle(f), read_labels(f)).key() != key:
            raise InputError(f"SHARDS {args.shards}: {f.name} declares another oracle configuration or labels than "
                             f"{files[0].name}; --engine {args.engine} reads one table of one oracle's reports")
    idents = read_identities(files) if args.sql is None else []  # two copies of one shard: refused here
    if base is not None:  # before any counting, as Dask's plan does
        base.check_compatible(Partial.empty(oracle, labels))
        check_not_held(base.shards, idents, "the partial merged into")
    paths = [str(f.resolve()) for f in files]
    device = None if args.device == "auto" else args.device
    with tempfile.TemporaryDirectory(prefix="ldpopt-duckdb-") as scratch:
        if args.engine == "polars":
            pl = require("polars", "test", "--engine polars")
            frame = pl.scan_parquet(paths)
        else:
            duckdb = require("duckdb", "test", "--engine duckdb")
            con = sealed_connection(paths, scratch)
            frame = con.read_parquet(paths)
            if args.sql is not None:
                frame.create_view("reports")
                try:
                    frame = con.sql(args.sql)
                except duckdb.Error as exc:
                    raise InputError(f"--sql: {str(exc).splitlines()[0]}") from None
                if frame is None:
                    raise InputError("--sql: the query returns no rows (a SELECT over the view 'reports' is expected)")
        try:
            total = from_dataframe(frame, oracle, labels=labels, device=device)
        except (ValueError, TypeError) as exc:
            where = "--sql" if args.sql is not None else f"SHARDS {args.shards}"
            raise InputError(f"{where}: {exc}") from None
        except Exception as exc:  # the engine's own error while it runs the query (a file it may not read)
            if args.engine != "duckdb" or not isinstance(exc, duckdb.Error):
                raise
            where = "--sql" if args.sql is not None else f"SHARDS {args.shards}"
            raise InputError(f"{where}: {str(exc).splitlines()[0]}") from None
    if idents:
        total = total.with_shards(idents)
    return base.merge(total) if base is not None else total


def check_select(sql: str) -> None:
    """Refuse an ``--sql`` that is not exactly one read-only query, before anything runs: DuckDB parses
    it (``extract_statements`` runs nothing) and it must be one statement of type SELECT (``SELECT``,
    ``WITH ... SELECT``, ``FROM ...``, ``VALUES``, ``DESCRIBE``/``SUMMARIZE``); ``COPY``, ``ATTACH``,
    ``INSTALL``/``LOAD``, ``CREATE``, ``PRAGMA``, ``SET``, ``CALL``, ``EXPORT``, a second statement
    after ``;`` and an empty query are refused with a one-line :class:`InputError` naming ``--sql``.
    What a SELECT could still reach (``read_csv`` of any file) is closed by :func:`sealed_connection`."""
    from .._extras import require

    duckdb = require("duckdb", "test", "--engine duckdb")
    try:
        statements = duckdb.connect().extract_statements(sql)
    except duckdb.Error as exc:
        raise InputError(f"--sql: {str(exc).splitlines()[0]}") from None
    if len(statements) != 1:
        raise InputError(f"--sql: one query is expected, {len(statements)} statements given"
                         + (" (a second one after ';')" if len(statements) > 1 else ""))
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise InputError(f"--sql: only one read-only SELECT over the view 'reports' runs; this is a "
                         f"{kind.name} statement")


def sealed_connection(paths: list[str], scratch: str):
    """A DuckDB connection that reads only the shards ``paths`` and writes nothing the user sees:
    file access off except for those files (``enable_external_access=false``, ``allowed_paths``), no
    extension installed or loaded on demand, spilling (if any) in ``scratch`` (a temporary folder
    removed afterwards, not ``.tmp`` in the working folder), and the configuration locked so that a
    query cannot change it back."""
    from .._extras import require

    duckdb = require("duckdb", "test", "--engine duckdb")

    con = duckdb.connect()
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET temp_directory = ?", [scratch])
    con.execute("SET allowed_paths = ?", [paths])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def _workers(args) -> int | None:
    """``--workers``, capped for the local cluster at the cores this process may use, with one line
    on stderr: more worker processes than cores only slow the run (each takes memory and a start)."""
    if args.workers is None or args.scheduler != "local":
        return args.workers
    from ..aggregate.cluster import usable_cores

    cores = usable_cores()
    if args.workers > cores:
        print(f"ldpopt aggregate: warning: --workers {args.workers} is more than the {cores} core(s) this "
              f"process may use; starting {cores}", file=sys.stderr)
        return cores
    return args.workers


def _ci_level(text) -> float:
    from .postprocess import _level

    return _level(text)


def add_parser(sub) -> None:
    from ._io import FORMATS

    ap = sub.add_parser("aggregate", help=help_of("aggregate"),
                        description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    ap.add_argument("shards", help="folder of *.parquet report shards (as `ldpopt perturb` writes)")
    ap.add_argument("--out", default=None, help="output file (.csv, .parquet or .json); CSV on stdout if omitted")
    ap.add_argument("--format", choices=FORMATS, default=None, help="output format (default: from --out's suffix)")
    ap.add_argument("--scheduler", default="auto",
                    help="auto (default: threads in process, or a local cluster past 16 GiB of shards with more "
                         "than 2 cores; one line on stderr says which), local (a distributed.LocalCluster for "
                         "this run), a cluster address such as tcp://host:8786, or threads / synchronous")
    ap.add_argument("--workers", type=int_arg(1), default=None,
                    help="worker processes (local; default: usable cores, at most one per task) or threads "
                         "(threads; default: Dask's)")
    ap.add_argument("--device", choices=("auto", "numpy", "cpu", "cuda"), default="auto",
                    help="who counts the reports: auto (default: the fused CPU kernels on large inputs when "
                         "numba is installed, else numpy), numpy, cpu (fused kernels, every core) or cuda "
                         "(a GPU: the 'gpu' extra); the counts are the same on every device")
    ap.add_argument("--engine", choices=("dask", "duckdb", "polars"), default="dask",
                    help="who reads and counts the shards: dask (default: ldpopt's map + tree of merges), duckdb "
                         "or polars (the folder read as one table and counted inside that engine: "
                         "ldpopt.aggregate.from_dataframe; the 'test' extra installs both)")
    ap.add_argument("--sql", default=None,
                    help="with --engine duckdb: one read-only SELECT over the view 'reports' (the shards' rows) "
                         "whose result holds the report columns, e.g. \"SELECT * FROM reports WHERE seed %% 2 = 0\"; "
                         "any other statement, or a second one, is refused before it runs, and the query "
                         "reads no file but the shards")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    ap.add_argument("--method", default=None,
                    help="also post-process: a registered method name or 'all' (default: counts only)")
    ap.add_argument("--ci", type=_ci_level, default=None, metavar="LEVEL",
                    help="with --method: add METHOD_se, METHOD_ci_low, METHOD_ci_high, METHOD_correction_sigma "
                         "and METHOD_flagged columns, as `ldpopt postprocess --ci` writes them")
    ap.add_argument("--resamples", type=int_arg(10), default=200, help="bootstrap resamples for --ci (default 200)")
    ap.add_argument("--seed", type=int_arg(0), default=0, help="seed of the --ci bootstrap (default 0)")
    ap.add_argument("--partial", default=None, help="also save the merged partial aggregate as JSON here")
    ap.add_argument("--merge-into", default=None,
                    help="a partial aggregate JSON (from --partial) to merge these shards into")
    ap.set_defaults(func=_run)
