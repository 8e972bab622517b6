"""``ldpopt verify``: the papers' claims and closed forms against the solver (:mod:`ldpopt.verify`).

:mod:`ldpopt.verify` builds cvxpy problems, so it is imported inside the subcommand, never here."""

from __future__ import annotations

import json
import sys

from ._args import int_arg, number

__all__ = ["add_parser"]


def _run(args) -> int:
    """Run the claims; exit 0 iff every expected claim holds."""
    import pandas as pd

    from .. import verify

    say = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    df = verify.run(oracles=args.oracles, epsilons=args.epsilons, ns=args.n, ds=args.d,
                    seeds=args.seeds, solver=args.solver, quick=args.quick, progress=say)
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


def add_parser(sub, oracle_names) -> None:
    vf = sub.add_parser("verify", help="check the papers' claims, closed forms vs the cvxpy solver")
    vf.add_argument("--oracles", nargs="+", default=None, help=f"oracles (default all: {oracle_names})")
    vf.add_argument("--epsilons", nargs="+", type=number, default=None, help="privacy budgets (default 0.5 2 8)")
    vf.add_argument("--n", nargs="+", type=int_arg(1), default=None,
                    help="numbers of users, integers (1e6 accepted; default 1e4 1e6)")
    vf.add_argument("--d", nargs="+", type=int_arg(2), default=None, help="domain sizes (default 10 1000)")
    vf.add_argument("--seeds", nargs="+", type=int_arg(0), default=None, help="seeds (default 0)")
    vf.add_argument("--solver", default=None, help="referee for Norm-Sub = CLS (default OSQP and Clarabel)")
    vf.add_argument("--quick", action="store_true", help="small grid (~15 s)")
    vf.add_argument("--json", action="store_true", help="print the table, summary and findings as JSON")
    vf.set_defaults(func=_run)
