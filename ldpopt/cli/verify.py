"""``ldpopt verify``: the papers' claims, each row saying exactly what was checked (:mod:`ldpopt.verify`).

:mod:`ldpopt.verify` builds cvxpy problems only when a solver referee runs; it is imported inside the
subcommand, never at the top of the CLI."""

from __future__ import annotations

import argparse
import sys

from ._args import int_arg, positive_number
from ._commands import help_of

__all__ = ["add_parser"]

#: from this d on, this process keeps freed large blocks instead of unmapping them (:mod:`ldpopt._malloc`)
_KEEP_MEMORY_D = 1_000_000


def _description() -> str:
    from ..verify.instances import LIKELIHOOD_MAX_D, MC_MAX_D, SOLVER_MAX_D

    return f"""\
Check the papers' claims and print exactly what was checked.

Each output row: the claim (id and statement), the instance actually run (oracle, eps, n, d, seed;
reps for Monte-Carlo), the referee, one named metric with its unit, its value against a tolerance,
and a verdict:
  holds          the row passed (exit code unaffected);
  fails          a claim expected to hold failed on this row: exit 1;
  does not hold  a finding (a statement reported either way) did not hold here: exit code unaffected;
  not refereed   the referee could not decide (with why): exit code unaffected, or exit 3 with
                 --require-referee when the claim is expected to hold.

What is checked:
  equivalences  Norm-Sub = CLS, MLE-Apx and the paper's iteration = weighted MLE (Eq. 13), EM = exact
                likelihood, PowerNS = posterior projection. Referee: a solver-free KKT certificate at
                every d (metric: a rigorous bound on max|f - f*|, tolerance: its float64 rounding,
                which must be below 1/(10 d)); and a solver at d <= --solver-max-d
                (default {SOLVER_MAX_D}): cvxpy, tolerance from its stopping criteria; for the exact
                likelihoods above d = {LIKELIHOOD_MAX_D} ldpopt's sequential-QP route (no exponential
                cones), tolerance its certified distance bound.
  findings      printed MLE-Apx formulas, CLS ~ MLE, Norm-Cut/Norm-Hyb/order statements: reported
                either way, never change the exit code.
  Monte-Carlo   unbiasedness, Var(Norm) = (d-1)/d Var(Base), NDSS Lemmas 1, 2, 4, Post-Pos, Norm-Hyb(theta),
                order preservation; at each --mc-d (default: the --d values, else 16) with n = --mc-n
                (default 1e4); d > {MC_MAX_D} is reported as not refereed, with why.
A referee failure (solver error, infeasible, inaccurate, size limit) is 'not refereed', never a failure.

Exit codes: 0 every refereed row of a claim expected to hold holds (rows not refereed are listed);
1 some such row fails; 2 usage or input error; 3 with --require-referee, nothing fails but some
expected claim could not be refereed somewhere.
"""


def _add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """All ``verify`` options on ``parser`` (a subparser); its --help says what is checked."""
    from .. import oracles
    from ..verify.instances import MC_MAX_D, SOLVER_MAX_D

    parser.description = _description()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--oracles", nargs="+", default=None,
                        help=f"oracles (default all: {oracles.available()}); FILE.py:NAME for one of your own")
    parser.add_argument("--epsilons", nargs="+", type=positive_number, default=None, help="privacy budgets (default 0.5 2 8)")
    parser.add_argument("--n", nargs="+", type=int_arg(1), default=None, help="numbers of users (default 1e4 1e6)")
    parser.add_argument("--d", nargs="+", type=int_arg(1), default=None, help="domain sizes (default 10 1000)")
    parser.add_argument("--seeds", nargs="+", type=int_arg(0), default=None, help="seeds (default 0)")
    parser.add_argument("--solver", default=None,
                        help="solver referee in addition to the certificate (default Clarabel, and OSQP for "
                             "Norm-Sub = CLS outside --quick); 'none' for the certificate only")
    parser.add_argument("--solver-max-d", type=int_arg(1), default=None,
                        help=f"largest d given to the solver referee (default {SOLVER_MAX_D})")
    parser.add_argument("--mc-d", nargs="+", type=int_arg(1), default=None,
                        help=f"domain sizes of the Monte-Carlo claims (default: --d, else 16; at most {MC_MAX_D})")
    parser.add_argument("--mc-n", type=int_arg(1), default=None, help="users in the Monte-Carlo claims (default 1e4)")
    parser.add_argument("--no-mc", action="store_true", help="skip the Monte-Carlo claims")
    parser.add_argument("--quick", action="store_true", help="small grid (~15 s)")
    parser.add_argument("--require-referee", action="store_true",
                        help="exit 3 when nothing fails but an expected claim was not refereed somewhere")
    parser.add_argument("--json", action="store_true",
                        help="print every row, the summary and the findings as JSON (full-precision floats)")
    parser.add_argument("--method", nargs="+", default=None, metavar="METHOD",
                        help="equivalence rows of these methods only: registered names or FILE.py:NAME "
                             "(a method registered with a problem statement)")
    return parser


def _check(args) -> None:
    """The options the run would otherwise ignore or fail on midway, refused before it starts:
    ``--solver`` must be an installed cvxpy solver or ``none``; ``--mc-d`` at most MC_MAX_D (its
    documented range: the Monte-Carlo claims hold repetitions × d outputs of every method); each
    ``--epsilons`` value must leave every oracle's p < 1 and q > 0 in float64 at the smallest d run
    (at larger ε, p rounds to 1 or q to 0 and the closed forms' variance, Eq. 7, is 0), else the run
    would stop at the first instance with the method's own message."""
    from .. import oracles
    from ..verify.instances import MC_MAX_D
    from ._args import InputError

    if args.solver is not None and args.solver.lower() != "none":
        import cvxpy

        installed = cvxpy.installed_solvers()
        if args.solver.upper() not in installed:
            raise InputError(f"--solver {args.solver}: not an installed cvxpy solver (one of {', '.join(installed)}, "
                             f"or none for the certificate alone)")
    over = [d for d in args.mc_d or [] if d > MC_MAX_D]
    if over:
        raise InputError(f"--mc-d {over[0]}: the Monte-Carlo claims run at d <= {MC_MAX_D} (they keep repetitions "
                         f"x d outputs of every method); give a smaller --mc-d or --no-mc")
    if args.oracles:  # an oracle of one's own, FILE.py:NAME, is registered and checked by its name
        from .._userfunc import is_reference

        try:
            args.oracles = [oracles.oracle_class(o).name if is_reference(o) else o for o in args.oracles]
        except ValueError as exc:
            raise InputError(f"--oracles: {exc}") from None
    names = args.oracles or oracles.available()
    unknown = [o for o in names if o not in oracles.available()]
    if unknown:
        raise InputError(f"--oracles {unknown[0]}: not an oracle verify checks (one of {oracles.available()})")
    d = max(2, min(args.d)) if args.d else 2  # p is largest (GRR) at the smallest d
    for eps in args.epsilons or []:
        if eps <= 0:
            raise InputError(f"--epsilons {eps:g}: a privacy budget must be > 0")
        for name in names:
            o = oracles.get(name, eps, d)
            if not (o.q > 0.0 and o.p < 1.0):
                raise InputError(f"--epsilons {eps:g}: too large for oracle {name} at d = {d}: p = {float(o.p)!r} and "
                                 f"q = {float(o.q)!r} in float64, and the closed forms need 0 < q and p < 1 (a "
                                 f"smaller ε)")


def _run(args) -> int:
    """Run the claims for parsed ``args``, print the report (text or ``--json``), return the exit code."""
    from ..verify.report import exit_code, render_json, render_text
    from ..verify.runner import run

    _check(args)

    say = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    if max(args.d or [0]) >= _KEEP_MEMORY_D:
        from .._malloc import keep_freed_memory

        keep_freed_memory()  # half of the CPU at d = 10⁷ was page faults of fresh 80 MB temporaries
    df = run(oracles=args.oracles, epsilons=args.epsilons, ns=args.n, ds=args.d, seeds=args.seeds,
             solver=args.solver, quick=args.quick, mc=not args.no_mc, mc_ds=args.mc_d, mc_n=args.mc_n,
             solver_max_d=args.solver_max_d, progress=say, methods=args.method)
    code = exit_code(df, args.require_referee)
    print(render_json(df, args.require_referee) if args.json else render_text(df, args.require_referee))
    return code


def add_parser(sub, oracle_names=None) -> None:
    vf = sub.add_parser("verify", help=help_of("verify"))
    _add_arguments(vf)
    vf.set_defaults(func=_run)
