"""``ldpopt choose``: rank the post-processing methods for a counts file and a query (NDSS §V-D)."""

from __future__ import annotations

import json
import sys

from ._args import InputError, int_arg
from ._commands import help_of
from ._limits import refuse_oversized
from .postprocess import add_counts_options, counts_estimate

__all__ = ["add_parser"]


def _run(args) -> int:
    from .. import __version__
    from ..recommend import choose
    from ._recorded import input_digests
    from .postprocess import recorded_params

    table, oracle, n, estimate = counts_estimate(args)
    # the re-simulated counts, their estimates and one method's outputs at a time, R x d float64 each,
    # with numpy's temporaries: 6 such arrays at the peak (recommend.choose)
    refuse_oversized(6 * 8 * args.repeats * table.d, "--repeats",
                     f"{args.repeats} re-simulations of d = {table.d} values")
    names = args.methods
    if names is not None and names not in ("all", "closed-form", "extended"):
        names = [m.strip() for m in names.split(",") if m.strip()]
        from ..methods import resolve

        for name in names:  # a named method that does not apply: the refusal postprocess gives, before any work
            try:
                info = resolve(name)
            except (ValueError, TypeError, KeyError):
                continue  # an unknown name: choose's own message
            why = info.why_not(estimate)
            if why is not None:
                raise InputError(f"--methods {name}: method {info.name!r} does not apply to this estimate: {why}")
    else:  # a set of methods: the ones that apply to this estimate (each refusal one note line)
        from ..recommend import candidates
        from .postprocess import run_methods

        names, _ = run_methods({}, estimate, candidates(names, ordered=estimate.ordered), {},
                               f"--methods {args.methods or 'closed-form'}",
                               f"--oracle {oracle.name}" if oracle is not None else f"--central {args.central}")
    try:
        c = choose(estimate, args.query, methods=names, n_repeats=args.repeats, metric=args.metric,
                   rng=args.seed, progress=True)
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    if args.json:
        t = c.table.reset_index()
        json.dump({"query": str(c.query), "best": c.best, "n_repeats": c.n_repeats, "how": c.how,
                   "ranking": t.to_dict(orient="records"), "oracle": estimate.oracle,
                   "epsilon": estimate.epsilon, "n": n, "d": table.d,
                   "oracle_params": {} if oracle is None else recorded_params(oracle),
                   "seed": args.seed, "ldpopt_version": __version__, "privacy": estimate.privacy.as_dict(),
                   "sha256": input_digests(args, {"counts": args.counts})}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(c)
    return 0


def add_parser(sub) -> None:
    cp = sub.add_parser("choose", help=help_of("choose"))
    add_counts_options(cp)
    cp.add_argument("--query", default="full",
                    help="full | topk:K | hh:PHI | subsets:SIZE[:COUNT] (default full)")
    cp.add_argument("--metric", choices=("mse", "mae"), default=None, help="loss for full/topk/subsets (default mse)")
    cp.add_argument("--methods", default=None,
                    help="comma-separated candidates (registered names or FILE.py:NAME), or "
                         "closed-form (default), extended (+ power, power-ns, em) or all; the Wiener "
                         "methods are in the sets with --ordered only")
    cp.add_argument("--repeats", type=int_arg(2), default=20, help="re-simulations (default 20)")
    cp.add_argument("--seed", type=int_arg(0), default=0, help="seed (default 0)")
    cp.add_argument("--json", action="store_true",
                    help="print the ranking as JSON, with its inputs: oracle, ε, n, d, the oracle's parameters, "
                         "seed, ldpopt version, SHA-256 of the counts and --plugin files")
    cp.set_defaults(func=_run)
