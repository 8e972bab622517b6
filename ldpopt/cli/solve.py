"""``ldpopt solve``: aggregated support counts in, the solution of a post-processing problem out.

Notes: docs/notes/cli.md, "ldpopt.cli.solve"."""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings

import numpy as np

from .. import __version__
from ._args import InputError, number
from ._commands import help_of
from ._io import FORMATS, as_json, format_of, out_files, output_target, write_table
from ._paths import refuse_collisions
from ._problemtypes import help_text
from .postprocess import add_counts_options, central_spec, counts_estimate, recorded_params

__all__ = ["add_parser"]


def _finite(x):
    """JSON-safe: NaN/inf → None, numpy → Python, containers recursively (full precision kept)."""
    if isinstance(x, dict):
        return {str(k): _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, np.ndarray):
        return _finite(x.tolist())
    if isinstance(x, (np.floating, float)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def _seconds(text: str) -> float:
    from ..problems.progress import check_time_limit

    try:
        seconds = check_time_limit(number(text))
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}") from None
    assert seconds is not None  # None only for None: a number in, a number out
    return seconds


def _checks(sol) -> dict | None:
    ch = sol.checks
    if ch is None:
        return None
    return {"passed": ch.passed, "certified": ch.certified, "verified": ch.passed and ch.certified,
            "max_violation": ch.max_violation,
            "violations": ch.violations, "stationarity": ch.stationarity, "stationarity_step": ch.stationarity_step,
            "dual_infeasibility": ch.dual_infeasibility,
            "gap": ch.gap, "error_bound": ch.error_bound, "tolerance": ch.tolerance, "failed": list(ch.failed),
            "not_run": ch.not_run}


def exit_status(status: str) -> int:
    """0 ``optimal``, 3 ``optimal_unverified``, 1 any other status (module notes)."""
    return 0 if status == "optimal" else 3 if status == "optimal_unverified" else 1


def _simplex_dropped_text(message: str) -> str:
    """The library's SimplexDroppedWarning in the problem file's terms: what is missing (the library's
    own words, up to its Python advice), then how to keep the simplex or silence the warning here."""
    missing = message.split(": add Simplex()")[0]
    return (f"{missing}: add a [[constraints]] entry with type = \"simplex\" (or \"nonnegative\" and "
            "\"sum\") to the problem file to keep it; if dropping it is intended (a Box-only variant), "
            "pass --allow-no-simplex")


def _run(args) -> int:
    from ..problems import Problem, SimplexDroppedWarning
    from ..problems.constraints.feasibility import Infeasibility
    from ._problemfile import read_problem
    from ._recorded import apply_recorded, input_digests

    if getattr(args, "central", None) is None:
        args.recorded = apply_recorded(args)  # the counts' record against the options, before any work
    else:
        central_spec(args.central)  # a bad MECH:SCALE refused before any file is read
    fmt = format_of(args.out, args.format)
    if args.out:
        output_target(args.out, "--out")  # a folder, a missing folder: refused before the work
    refuse_collisions(out_files(args.out, fmt), [("--counts", args.counts), ("--problem", args.problem)])
    spec = read_problem(args.problem)  # a bad problem file is refused before the counts are read
    refuse_collisions(out_files(args.out, fmt), spec.files())  # the files it names (matrix_file, FILE.py)
    table, oracle, n, estimate = counts_estimate(args)
    constraints = spec.build(table)
    solver = args.solver if args.solver is not None else spec.solver
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            problem = Problem(estimate, spec.objective, constraints)
        except InputError:  # a user function failed: its message names the key
            raise
        except ValueError as exc:  # the objective cannot be used with this estimate, or not DCP
            raise spec.error(None, "objective", f"{spec.objective_name!r} with these constraints: {exc}") from exc
        try:
            sol = problem.solve(solver=solver, time_limit=args.time_limit)
        except InputError:
            raise
        except (ValueError, TypeError) as exc:
            raise InputError(f"{'--solver' if args.solver is not None else f'--problem {spec.path}: solver'}: "
                             f"{exc}") from exc
    for w in caught:
        if issubclass(w.category, SimplexDroppedWarning) and not args.allow_no_simplex:
            print(f"ldpopt solve: warning: {_simplex_dropped_text(str(w.message))}", file=sys.stderr)
    metadata = _finite({
        "ldpopt_version": __version__, "oracle": estimate.oracle, "epsilon": estimate.epsilon, "n": n,
        "d": table.d, "p": estimate.p, "q": estimate.q,
        "oracle_params": {} if oracle is None else recorded_params(oracle),
        "counts_file": str(args.counts), "values": "0..d-1 (--d)" if args.d is not None else "labels",
        "labelled": args.d is None, "privacy": estimate.privacy.as_dict(),
        "problem_file": str(args.problem), "objective": spec.objective_name,
        "objective_params": spec.objective_params,
        "sha256": input_digests(args, {"counts": args.counts, "problem": args.problem,
                                       **{f"{arg} {path}": path for arg, path, *_ in spec.files()}}),
        "constraints": problem.constraint_names,
        "solver": sol.solver, "status": sol.status, "success": sol.success, "message": sol.message,
        "optimal_value": sol.optimal_value, "checks": _checks(sol),
        "infeasibility": sol.infeasibility.to_dict() if isinstance(sol.infeasibility, Infeasibility) else None,
        "attempts": [{k: a[k] for k in ("solver", "status", "checks", "seconds")} for a in sol.attempts],
        "wall_time": sol.wall_time, "scale": problem.scale,
    })
    if not np.any(np.isfinite(sol.f)):  # no point (infeasible, solver error): no table of blanks
        if args.json:
            doc = {"oracle": estimate.oracle, "epsilon": estimate.epsilon, "d": table.d, "n": n,
                   "objective": spec.objective_name, "solver": sol.solver, "status": sol.status, "out": None,
                   "infeasibility": metadata["infeasibility"], "metadata": metadata}
            json.dump(doc, sys.stdout, allow_nan=False)
            sys.stdout.write("\n")
        note = f" (nothing written to {args.out})" if args.out else ""
        print(f"ldpopt solve: {sol.solver}: status {sol.status}: {sol.message}{note}", file=sys.stderr)
        return 1
    out = table.frame()
    out["base"] = estimate.f_tilde
    out["f"] = sol.f
    written = write_table(out, args.out, fmt, metadata) if args.out else []
    if args.json:
        doc = {"oracle": estimate.oracle, "epsilon": estimate.epsilon, "d": table.d, "n": n,
               "objective": spec.objective_name, "solver": sol.solver, "status": sol.status,
               "out": str(args.out) if args.out else None, "metadata": metadata, **_finite(as_json(out))}
        json.dump(doc, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
    elif not args.out:
        out.to_csv(sys.stdout, index=False, float_format="%.17g")
    else:
        print(f"wrote {len(out)} rows x {len(out.columns)} columns to {', '.join(map(str, written))}; "
              f"{sol.solver}: {sol.status}", file=sys.stderr)
    if not sol.success:
        print(f"ldpopt solve: {sol.solver}: status {sol.status}: {sol.message}", file=sys.stderr)
    return exit_status(sol.status)


_EPILOG = help_text() + """

  see examples/solve_problem.toml and docs/cli.md ("Solve your own variant").

output: columns value, count, base (the raw estimate), f (the solution). Metadata (as postprocess,
plus objective, constraints, solver, status, message and ldpopt's check: max_violation per
constraint, stationarity, gap, error_bound, tolerances): Parquet key "ldpopt", JSON "metadata",
CSV sidecar OUT.meta.json.

infeasible constraints: no output file is written (no column of blanks); stderr names the
constraints that conflict, and --json prints the status, the metadata and "infeasibility": the
Farkas certificate (the conflicting constraints and their multipliers), verified in exact arithmetic.

exit status: 0 optimal (ldpopt's own check passed: feasibility, stationarity, duality gap);
3 optimal_unverified (feasible, but stationarity or the gap could not be checked: checks.not_run in
the metadata says why); 1 solved but not optimal (output still written, status and failed check in
the metadata), or no point at all (infeasible: nothing written); 2 bad input (a problem file's error
names the key and its line).
"""


def add_parser(sub) -> None:
    sp = sub.add_parser("solve", help=help_of("solve"),
                        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_counts_options(sp)
    sp.add_argument("--problem", required=True, help="TOML or JSON file: objective and constraints (see below)")
    sp.add_argument("--solver", default=None,
                    help="a cvxpy solver name (e.g. CLARABEL, PIQP, OSQP, SCS); default: the file's, "
                         "else ldpopt's chain")
    sp.add_argument("--time-limit", type=_seconds, default=None, metavar="SECONDS",
                    help="stop after this many seconds: the best point checked is written with status "
                         "time_limit unless it passed ldpopt's check (a progress line goes to stderr after 2 s)")
    sp.add_argument("--out", default=None, help="output file (.csv, .parquet or .json); stdout if omitted")
    sp.add_argument("--format", choices=FORMATS, default=None,
                    help="output format (default: from the suffix of --out; must agree with it)")
    sp.add_argument("--json", action="store_true", help="print a JSON document (results and metadata) to stdout")
    sp.add_argument("--allow-no-simplex", action="store_true",
                    help="the constraint list drops f >= 0 or sum f = 1 on purpose: no warning about it")
    sp.set_defaults(func=_run)
