"""``ldpopt solve``: aggregated support counts in, the solution of a post-processing problem out.

The counts and the oracle are read exactly as by ``ldpopt postprocess`` (same options, same checks,
same metadata); the problem — a built-in objective and a list of constraints — comes from a small
TOML or JSON file (:mod:`._problemfile`), and is solved by :class:`ldpopt.problems.Problem`, whose
answer ldpopt checks itself. The output has the columns ``value, count, base, f`` and carries the
solver, the status and ldpopt's check numbers in its metadata.

Exit status: 0 when the status is ``optimal`` (ldpopt's own check passed); 1 when the solve ended
otherwise (the file is still written, with the status and the failed check in its metadata, and
the reason on stderr); 2 for bad input (one line on stderr naming the option, key or line).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings

import numpy as np

from .. import __version__
from ._args import InputError
from ._io import FORMATS, as_json, format_of, read_counts_table, write_table
from .postprocess import add_counts_options, estimate_from

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


def _checks(sol) -> dict | None:
    ch = sol.checks
    if ch is None:
        return None
    return {"passed": ch.passed, "certified": ch.certified, "max_violation": ch.max_violation,
            "violations": ch.violations, "stationarity": ch.stationarity, "dual_infeasibility": ch.dual_infeasibility,
            "gap": ch.gap, "error_bound": ch.error_bound, "tolerance": ch.tolerance, "failed": list(ch.failed),
            "not_run": ch.not_run}


def _simplex_dropped_text(message: str) -> str:
    """The library's SimplexDroppedWarning in the problem file's terms: what is missing (the library's
    own words, up to its Python advice), then how to keep the simplex or silence the warning here."""
    missing = message.split(": add Simplex()")[0]
    return (f"{missing}: add a [[constraints]] entry with type = \"simplex\" (or \"nonnegative\" and "
            "\"sum\") to the problem file to keep it; if dropping it is intended (a Box-only variant), "
            "pass --allow-no-simplex")


def _run(args) -> int:
    from ..problems import Problem, SimplexDroppedWarning
    from ._problemfile import read_problem

    fmt = format_of(args.out, args.format)
    spec = read_problem(args.problem)  # a bad problem file is refused before the counts are read
    table = read_counts_table(args.counts, args.d)
    oracle, n, estimate = estimate_from(table, args)
    constraints = spec.build(table)
    solver = args.solver if args.solver is not None else spec.solver
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            problem = Problem(estimate, spec.objective, constraints)
        except ValueError as exc:  # the objective cannot be used with this estimate, or not DCP
            raise spec.error(None, f"objective {spec.objective!r} with these constraints: {exc}") from None
        try:
            sol = problem.solve(solver=solver)
        except (ValueError, TypeError) as exc:
            raise InputError(f"{'--solver' if args.solver is not None else f'--problem {spec.path}: solver'}: "
                             f"{exc}") from None
    for w in caught:
        if issubclass(w.category, SimplexDroppedWarning) and not args.allow_no_simplex:
            print(f"ldpopt solve: warning: {_simplex_dropped_text(str(w.message))}", file=sys.stderr)
    out = table.frame()
    out["base"] = estimate.f_tilde
    out["f"] = sol.f
    metadata = _finite({
        "ldpopt_version": __version__, "oracle": oracle.name, "epsilon": oracle.epsilon, "n": n,
        "d": table.d, "p": oracle.p, "q": oracle.q,
        "oracle_params": {k: getattr(oracle, k) for k in ("g", "k") if hasattr(oracle, k)},
        "counts_file": str(args.counts), "values": "0..d-1 (--d)" if args.d is not None else "labels",
        "problem_file": str(args.problem), "objective": spec.objective, "constraints": problem.constraint_names,
        "solver": sol.solver, "status": sol.status, "success": sol.success, "message": sol.message,
        "optimal_value": sol.optimal_value, "checks": _checks(sol),
        "attempts": [{k: a[k] for k in ("solver", "status", "checks", "seconds")} for a in sol.attempts],
        "wall_time": sol.wall_time, "scale": problem.scale,
    })
    written = write_table(out, args.out, fmt, metadata) if args.out else []
    if args.json:
        doc = {"oracle": oracle.name, "epsilon": oracle.epsilon, "d": table.d, "n": n, "objective": spec.objective,
               "solver": sol.solver, "status": sol.status, "out": str(args.out) if args.out else None,
               "metadata": metadata, **_finite(as_json(out))}
        json.dump(doc, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
    elif not args.out:
        out.to_csv(sys.stdout, index=False, float_format="%.17g")
    else:
        print(f"wrote {len(out)} rows x {len(out.columns)} columns to {', '.join(map(str, written))}; "
              f"{sol.solver}: {sol.status}", file=sys.stderr)
    if not sol.success:
        print(f"ldpopt solve: {sol.solver}: status {sol.status}: {sol.message}", file=sys.stderr)
        return 1
    return 0


_EPILOG = """\
problem file (TOML or JSON; values named by label, or by 0-based position as integers):
  objective = "cls"                   # cls, weighted-mle, multinomial, binomial, l1, weighted-mle-naive
  solver = "CLARABEL"                 # optional (--solver overrides; default: ldpopt's solver chain)
  [[constraints]]                     # none: the simplex f >= 0, sum f = 1; a list replaces it
  type = "simplex"                    # simplex | nonnegative | sum (total) | box (lower, upper)
                                      # subset_sum (indices, value, sense) | fixed (indices, frequency)
                                      # monotone (direction, order | pairs) | partition (groups, totals)
                                      # hierarchy (branching, leaves: counts are range-tree nodes | groups)
  see examples/solve_problem.toml and README ("ldpopt solve").

output: columns value, count, base (the raw estimate), f (the solution). Metadata (as postprocess,
plus objective, constraints, solver, status, message and ldpopt's check: max_violation per
constraint, stationarity, gap, error_bound, tolerances): Parquet key "ldpopt", JSON "metadata",
CSV sidecar OUT.meta.json.

exit status: 0 optimal (ldpopt's own check passed); 1 solved but not optimal (output still
written, status and failed check in the metadata); 2 bad input.
"""


def add_parser(sub) -> None:
    sp = sub.add_parser("solve", help="solve a post-processing problem (objective + constraints from a file)",
                        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_counts_options(sp)
    sp.add_argument("--problem", required=True, help="TOML or JSON file: objective and constraints (see below)")
    sp.add_argument("--solver", default=None,
                    help="a cvxpy solver name (e.g. CLARABEL, PIQP, OSQP, SCS); default: the file's, "
                         "else ldpopt's chain")
    sp.add_argument("--out", default=None, help="output file (.csv, .parquet or .json); stdout if omitted")
    sp.add_argument("--format", choices=FORMATS, default=None,
                    help="output format (default: from the suffix of --out; must agree with it)")
    sp.add_argument("--json", action="store_true", help="print a JSON document (results and metadata) to stdout")
    sp.add_argument("--allow-no-simplex", action="store_true",
                    help="the constraint list drops f >= 0 or sum f = 1 on purpose: no warning about it")
    sp.set_defaults(func=_run)
