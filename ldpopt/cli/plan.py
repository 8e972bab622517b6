"""``ldpopt plan``: the expected error of every oracle × method × query before collection, and the n a
target needs (:func:`ldpopt.plan`)."""

from __future__ import annotations

import json
import sys

from ._args import InputError, int_arg, integer, positive_number
from ._commands import help_of

__all__ = ["add_parser"]


def _list(text):
    return None if text is None else [x.strip() for x in text.split(",") if x.strip()]


#: the library's argument (how its message starts) → the option that gave it
_OPTIONS = (("queries", "--query"), ("query", "--query"), ("prior", "--prior"), ("oracle", "--oracles"),
            ("method", "--methods"), ("n_repeats", "--repeats"), ("target", "--target"), ("epsilon", "--epsilon"),
            ("n ", "--n"), ("d ", "--d"), ("mechanism", "--mechanism"), ("delta", "--delta"),
            ("relation", "--relation"))


def _delta(text: str) -> float:
    """``--delta``: a number in [0, 1) (the library says more, e.g. > 0 for a Gaussian mechanism)."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1), got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1), got {text!r}")
    return value


def _option_of(message: str) -> str:
    """The option a library error is about (its message starts with the argument's name)."""
    return next((opt for arg, opt in _OPTIONS if message.startswith(arg)), "plan")


def _run(args) -> int:
    from .. import __version__
    from ..planning import plan

    n = integer(args.n, "--n", 1)
    methods = args.methods
    if methods is not None and methods not in ("all", "closed-form", "extended"):
        methods = _list(methods)
    try:
        p = plan(args.d, n, args.epsilon, args.prior, queries=args.query or ["full"], target=args.target,
                 oracles=_list(args.oracles), methods=methods, n_repeats=args.repeats, rng=args.seed,
                 ordered=args.ordered, mechanism=_list(args.mechanism), delta=args.delta, relation=args.relation)
    except ValueError as exc:
        raise InputError(f"{_option_of(str(exc))}: {exc}") from exc
    if args.json:
        t = p.table.astype(object).where(p.table.notna(), None)
        json.dump({"d": p.d, "n": p.n, "epsilon": p.epsilon, "prior": p.prior_how, "target": p.target,
                   "seed": args.seed, "n_repeats": args.repeats, "how": p.how, "ldpopt_version": __version__,
                   "skipped": [list(s) for s in p.skipped], "central": p.central, "table": t.to_dict(orient="records")},
                  sys.stdout)
        sys.stdout.write("\n")
    else:
        print(p)
    return 0


def add_parser(sub) -> None:
    cp = sub.add_parser("plan", help=help_of("plan"))
    cp.add_argument("--d", type=int_arg(2), required=True, help="domain size (>= 2)")
    cp.add_argument("--n", required=True, help="users (an integer, 1e6 accepted)")
    cp.add_argument("--epsilon", type=positive_number, required=True, help="privacy budget ε > 0")
    cp.add_argument("--prior", default=None,
                    help="uniform (default) | zipf:S | beta:A,B | tied:K | a real dataset's name (ldpopt.datasets)")
    cp.add_argument("--query", action="append", default=None,
                    help="full (default) | topk:K | hh:PHI | subsets:SIZE[:COUNT]; repeat for several")
    cp.add_argument("--target", type=positive_number, default=None,
                    help="the loss to meet (MSE; 1 - F1 for hh): adds the smallest n per row")
    cp.add_argument("--oracles", default=None, help="comma-separated oracles (default: the pure one-shot oracles)")
    cp.add_argument("--methods", default=None,
                    help="comma-separated methods, or closed-form (default), extended or all")
    cp.add_argument("--mechanism", default=None,
                    help="comma-separated row families: local (default), a central mechanism (laplace, "
                         "discrete-laplace, gaussian, discrete-gaussian: a curator's noise on the exact counts, its "
                         "scale calibrated to --epsilon and --delta) or all (the four), e.g. local,gaussian")
    cp.add_argument("--delta", type=_delta, default=None,
                    help="the delta the central mechanisms are calibrated at, in [0, 1) (default 0 for the Laplace "
                         "ones, 1e-6 for the Gaussian ones)")
    cp.add_argument("--relation", default=None, choices=("add-remove", "replace"),
                    help="the central guarantee's neighbouring relation (default add-remove)")
    cp.add_argument("--ordered", action="store_true", help="the domain is ordered (the Wiener filters join the sets)")
    cp.add_argument("--repeats", type=int_arg(2), default=20, help="draws per simulated evaluation (default 20)")
    cp.add_argument("--seed", type=int_arg(0), default=0, help="seed (default 0)")
    cp.add_argument("--json", action="store_true", help="print the plan as JSON with its inputs")
    cp.set_defaults(func=_run)
