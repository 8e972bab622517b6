"""``ldpopt postprocess``: aggregated support counts in, post-processed frequencies out.

Building the parser imports the standard library only (numpy, pandas, the method and oracle
registries load when the command runs, or when its help is printed: :func:`help_on_demand`), so an
argument error costs the interpreter's start and nothing more."""

from __future__ import annotations

import argparse
import inspect
import json
import math
import sys

from .. import __version__
from ..privacy.statement import DEFAULT_DELTA
from ._args import InputError, int_arg, number, plain, positive_number
from ._commands import help_of
from ._io import FORMATS
from .postprocess_robust import add_robust_options, robust_column

__all__ = ["add_parser", "build_oracle", "central_spec", "check_counts", "count_step", "counts_estimate", "estimate_of", "help_on_demand",
           "privacy_line", "read_counts_of", "recorded_params", "reports_support", "with_privacy"]


def help_on_demand(parser, fill) -> None:
    """Call ``fill(parser)`` just before ``parser``'s help is formatted (``-h``, ``format_help``), and
    only then: for help text read from a registry whose import costs more than the whole argument
    check (the oracle names, the methods' parameters). Usage and error messages do not need it."""
    formatted = parser.format_help

    def format_help():
        fill(parser)
        return formatted()

    parser.format_help = format_help


def add_counts_options(parser) -> None:
    """The options :func:`estimate_from` reads (--counts, --oracle, --epsilon, --n, --d, --g, --k, --ordered),
    declared once for every subcommand that starts from a counts file. What the counts' record states
    (:mod:`._recorded`: the sidecar ``FILE.meta.json`` or a Parquet file's metadata) fills an option
    left out; without a record --oracle and --epsilon must be given."""
    parser.add_argument("--counts", required=True,
                        help="CSV or Parquet table with columns value,count; its record (FILE.meta.json beside a "
                             "CSV, the metadata of a Parquet file, as `ldpopt aggregate` writes) fills the options "
                             "below that are left out, and one that contradicts it is an error")
    oracle = parser.add_argument("--oracle", default=None,
                                 help="a frequency oracle: a registered name or FILE.py:NAME (one of your own); "
                                      "required unless the counts' record states it")

    def fill(_):
        from .. import oracles

        oracle.help = f"one of {oracles.available(sketches=True)}; required unless the counts' record states it"

    help_on_demand(parser, fill)
    parser.add_argument("--epsilon", default=None, type=positive_number,
                        help="privacy budget ε > 0; required unless the counts' record states it")
    parser.add_argument("--n", type=int_arg(1), default=None,
                        help="number of users, an integer (1e6 accepted); optional when the counts' record states "
                             "it, or for an oracle whose every report supports the same number of values (GRR, SS: "
                             "the counts then sum to a multiple of n)")
    parser.add_argument("--d", type=int_arg(2), default=None,
                        help="domain size: values are the integers 0..d-1 and a value absent from the file has "
                             "count 0 (for aggregators that omit zero counts); integer values with gaps need it")
    parser.add_argument("--ordered", action="store_true",
                        help="the domain is ordered (ages, hours, ratings): the table's row order, or with --d the "
                             "values 0..d-1, is meaningful; the Wiener methods (dw, iiw, amrp, dw-simplex) need it")
    parser.add_argument("--shuffled-among", type=int_arg(1), default=None, metavar="N",
                        help="the reports were shuffled among N users (the shuffle model): the privacy statement "
                             "written with the output is then the central (ε, δ) of Feldman, McMillan & Talwar's "
                             "numerical bound from ε as each report's ε₀")
    parser.add_argument("--delta", type=_delta, default=None, metavar="D",
                        help="central δ of --shuffled-among, in (0, 1) (default 1e-6)")
    parser.add_argument("--central", default=None, metavar="MECH:SCALE",
                        help="the counts are exact counts plus central noise: MECH one of laplace, discrete-laplace, "
                             "gaussian, discrete-gaussian, SCALE its b or sigma in counts (e.g. gaussian:12.5); no "
                             "--oracle/--epsilon then; --n when the total is known, else it is estimated as the "
                             "rounded sum of the noisy counts")
    add_oracle_params(parser)


def _delta(text) -> float:
    value = number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1), got {text!r}")
    return value


def with_privacy(estimate, args):
    """``estimate`` with the privacy statement the options give: shuffled among ``--shuffled-among``
    users at ``--delta`` (:meth:`ldpopt.Estimate.shuffled`), or as it is (local, from ε)."""
    among, delta = _privacy_options(args)
    if among is not None and among < estimate.n:
        raise InputError(f"--shuffled-among must be >= the number of reports (n = {estimate.n}): reports are "
                         f"shuffled among at least the users who sent them, got {among}")
    return estimate if among is None else estimate.shuffled(DEFAULT_DELTA if delta is None else delta, n=among)


def _privacy_options(args) -> tuple:
    among, delta = getattr(args, "shuffled_among", None), getattr(args, "delta", None)
    if among is None and delta is not None:
        raise InputError("--delta needs --shuffled-among N (it is the central δ of the shuffled reports)")
    n = getattr(args, "n", None)
    if among is not None and isinstance(n, int) and among < n:
        raise InputError(f"--shuffled-among must be >= --n ({n}): reports are shuffled among at least the users "
                         f"who sent them, got {among}")
    return among, delta


def privacy_line(estimate, command: str) -> str:
    """The line ``ldpopt COMMAND`` prints on stderr: ``ldpopt COMMAND: privacy: STATEMENT``."""
    return f"ldpopt {command}: privacy: {estimate.privacy}"


def add_oracle_params(parser) -> None:
    """The oracle's parameters: ``--g`` (OLH), ``--k`` (SS; CMS and HCMS's hash count) and
    ``--oracle-param NAME=VALUE`` for any constructor parameter (:func:`._params.oracle_params`)."""
    parser.add_argument("--g", type=int_arg(2), default=None, help="hash range g for OLH (default round(e^ε + 1))")
    parser.add_argument("--k", type=int_arg(1), default=None,
                        help="subset size k for SS (default d/(e^ε + 1)); number of hash functions for CMS, HCMS")
    parser.add_argument("--oracle-param", action="append", default=[], metavar="NAME=VALUE",
                        help="an oracle parameter, repeatable: cms, hcms: k, m, hash_seed; rappor: num_bits, "
                             "num_hashes, cohorts, inst_p, inst_q, hash_seed")


def build_oracle(args, d: int):
    """The oracle of ``--oracle``, ``--epsilon`` and its parameters (:func:`add_oracle_params`, and
    those the counts' record filled: ``args.recorded_params``) for domain size d; a bad parameter is a
    one-line error naming it."""
    from .. import oracles
    from ._params import oracle_params

    given = {k: v for k, v in (("g", args.g), ("k", args.k)) if v is not None}
    params = {**getattr(args, "recorded_params", {}), **oracle_params(args.oracle_param, args.oracle, given)}
    try:
        oracle = oracles.get(args.oracle, epsilon=args.epsilon, d=d, **params)
    except TypeError as exc:
        from ._params import oracle_param_specs

        takes = oracle_param_specs(args.oracle)
        for key in given:  # --g/--k for an oracle without that parameter: the option, not the constructor
            if key not in takes:
                raise InputError(f"--{key}: oracle {args.oracle} takes no {key} (its parameters: "
                                 f"{', '.join(takes) or 'none'})") from None
        raise InputError(f"--oracle {args.oracle}: {exc}") from None
    except ValueError as exc:
        raise InputError(f"--oracle-param: {exc}" if params else f"--oracle {args.oracle}: {exc}") from None
    check_budget(oracle, args.epsilon, d)
    return oracle


def check_budget(oracle, epsilon: float, d: int) -> None:
    """Refuse an ε so large that the oracle's p rounds to 1 or its q to 0 in float64 (OUE's q =
    1/(e^ε + 1) is 0 past ε ≈ 745): the estimator's variance (Eq. 7) is then 0 and every method that
    divides by it fails or answers without noise. The rule ``ldpopt verify`` applies to --epsilons."""
    p, q = getattr(oracle, "p", None), getattr(oracle, "q", None)
    if p is None or q is None:
        return
    if not (float(q) > 0.0 and float(p) < 1.0):
        raise InputError(f"--epsilon {epsilon:g}: too large for oracle {oracle.name} at d = {d}: p = {float(p)!r} and "
                         f"q = {float(q)!r} in float64, and the estimators need 0 < q and p < 1 (a smaller ε)")


def count_step(args) -> int:
    """What the counts file's counts are multiples of the inverse of: the oracle's ``count_scale``
    (RAPPOR's h: its support counts are multiples of 1/h, :mod:`ldpopt.oracles.rappor`), 1 for an
    oracle that keeps the base class's (whole numbers of reports), asked of the class without
    building it."""
    from .. import oracles
    from ..oracles.base import FrequencyOracle

    try:
        cls = oracles.oracle_class(args.oracle)
    except ValueError as exc:
        raise InputError(f"--oracle {args.oracle}: {exc}") from None
    if cls.count_scale is FrequencyOracle.count_scale:
        return 1
    return int(build_oracle(args, args.d or 2).count_scale)  # RAPPOR's h does not depend on d


def recorded_params(oracle) -> dict:
    """The oracle parameters an output's metadata records: those that change what a count means
    (``oracle.structural_params()``: OLH's g, SS's k, the sketches' hash family, RAPPOR's Bloom
    parameters), which a later command reading the output's counts fills or checks."""
    return dict(oracle.structural_params())


def read_counts_of(args):
    """The counts table of ``args.counts`` after its record was reconciled with ``args``
    (:func:`._recorded.apply_recorded`, which the command calls first, before any work): read with
    the d given or recorded, and checked against the d its record states."""
    from ._io import read_counts_table
    from ._recorded import check_recorded_d

    _privacy_options(args)  # refused before the counts are read
    table = read_counts_table(args.counts, args.d, step=count_step(args))
    check_recorded_d(table, getattr(args, "recorded", None))
    return table


def counts_estimate(args):
    """(table, oracle or None, n, Estimate) of the common counts options, for ``solve`` and ``choose``:
    with ``--central`` the noisy counts as :func:`_central_estimate` reads them (no oracle), else the
    counts' record reconciled with the options (:func:`._recorded.apply_recorded`, into
    ``args.recorded``), the table read (:func:`read_counts_of`) and :func:`estimate_from`."""
    if getattr(args, "central", None) is not None:
        table, est = _central_estimate(args)
        args.recorded = None
        return table, None, est.n, est
    from ._recorded import apply_recorded

    if not hasattr(args, "recorded"):  # the command may have reconciled it first, before other files
        args.recorded = apply_recorded(args)  # the counts' record against the options, before any work
    table = read_counts_of(args)
    oracle, n, est = estimate_from(table, args)
    return table, oracle, n, est


def estimate_from(table, args):
    """(oracle, n, Estimate) from a counts table and the common options (--oracle, --epsilon, --g,
    --k, --oracle-param, --n, --ordered: the estimate declares an ordered domain; --shuffled-among, --delta:
    its privacy statement, :func:`with_privacy`): the oracle built for the table's d, the counts checked against what it
    makes possible (:func:`check_counts`). Shared by ``postprocess``, ``solve`` and ``choose``.
    CMS and HCMS: the estimate of :func:`ldpopt.sketches.consistency.sketch_estimate` (the fixed hash
    family's extra variance in its meta, which every method's variance then includes)."""
    oracle = build_oracle(args, table.d)
    n = check_counts(table, oracle, args.n)
    est = with_privacy(estimate_of(oracle, table.counts, n), args)
    return oracle, n, est.as_ordered() if getattr(args, "ordered", False) else est


def estimate_of(oracle, counts, n: int):
    """``oracle.estimate(counts, n)``, or for CMS and HCMS :func:`ldpopt.sketches.consistency.sketch_estimate`
    (the same f̃, plus the fixed family's extra variance). RAPPOR: the oracle's own estimate (its
    variance over the family; the sketches module gives no extra term for it)."""
    from ..oracles.cms import SketchOracle

    if isinstance(oracle, SketchOracle):
        from ..sketches.consistency import sketch_estimate

        return sketch_estimate(oracle, counts, n)
    return oracle.estimate(counts, n)


def reports_support(oracle) -> int | None:
    """How many values every report of ``oracle`` supports when that number is fixed (its
    ``support_size_pmf`` is a point mass: GRR 1, SS and RWS k), else None (OUE, OLH, HR, RAPPOR, an
    oracle without a size law)."""
    import numpy as np

    from ..oracles.base import IndependentSupports

    if isinstance(oracle, IndependentSupports) and 0 < oracle.q < 1:  # 1 + Bin(d − 1, q): never one size (and
        return None  # its law would import scipy.stats, a second of a command's start-up on a busy machine)
    try:
        pmf = np.asarray(oracle.support_size_pmf(), dtype=np.float64)
    except (ValueError, NotImplementedError):
        return None
    at = np.flatnonzero(pmf)
    return int(at[0]) if at.size == 1 and pmf[at[0]] == 1.0 and at[0] >= 1 else None


def check_counts(table, oracle, n: int | None) -> int:
    """Check what a support count file can prove about itself and return n.

    Every oracle: a count is at most n (a value is supported by at most one report per user).
    An oracle whose every report supports exactly s values (:func:`reports_support`: GRR s = 1, SS
    and RWS s = k, Wang et al. 2016 / arXiv §2.4): the counts of all d values sum to s·n exactly; no
    tolerance, since counts of reports are integers and their float sum is exact below 2⁵³ (we use
    :func:`math.fsum`, exact for any float input). Without ``--n`` that sum gives n. Nothing tighter
    is provable for OUE/SUE (d independent bits per user), OLH/BLH (a hash bucket may hold 0..d
    values) or HR (the supported rows depend on the report).
    """
    import numpy as np

    total = math.fsum(table.counts.tolist())
    s = reports_support(oracle)
    if n is None:
        if s is None:
            raise InputError(f"--n is required for oracle {oracle.name} (its reports do not each support the same "
                             f"number of values, so the counts do not give n)")
        if total < s or not float(total / s).is_integer():
            raise InputError(f"--n: {oracle.name} counts sum to {plain(total)}, not {s} × a whole number of "
                             f"users >= 1; give --n")
        n = int(total // s)
    over = table.counts > n
    if over.any():
        i = int(np.flatnonzero(over)[0])
        raise InputError(f"--counts: {table.where(i)}: count {plain(table.counts[i])} is more than --n {n} "
                         f"(each user's report supports a value at most once)")
    if s == 1 and total != n:
        raise InputError(f"--n: {oracle.name} counts sum to {plain(total)}, not --n {n}: every {oracle.name} "
                         f"report supports exactly one value, so the counts of all d = {table.d} values sum to n "
                         f"({plain(n - total)} reports unaccounted for)")
    if s is not None and s > 1 and total != s * n:
        raise InputError(f"--n: {oracle.name} counts sum to {plain(total)}, not k·n = {s} × {n} = {s * n}: "
                         f"every {oracle.name} report is a set of exactly k = {s} values")
    return n


def method_names(method: str) -> list[str]:
    """The methods ``--method`` names: every registered one for ``all`` (the command leaves out those
    assuming an ordered domain unless ``--ordered``), else the one it names (an unknown name is an
    error naming ``--method``)."""
    from .. import methods

    if method == "all":
        return sorted(methods.names())  # available()'s order, without building its pandas table
    try:  # a registered name or FILE.py:NAME (a plain function from a file is registered under NAME)
        return [methods.resolve(method, where="--method").name]
    except (KeyError, ValueError, TypeError) as exc:
        raise InputError(str(exc)) from None


def for_domain(names: list, estimate) -> list:
    """``--method all``'s methods for this estimate: those assuming an ordered domain (the record's
    ``needs_order``) only when the estimate declares one (``--ordered``)."""
    from .. import methods

    return [m for m in names if estimate.ordered or not methods.get(m).needs_order]


def run_methods(out: dict, estimate, names: list, params: dict, every: str | None, context: str) -> tuple[list, dict]:
    """Add ``base`` (f̃) and each method's column to ``out``; return (the names that ran, {skipped
    name: why}). Shared by ``postprocess``, ``aggregate --method`` and ``choose --methods``.

    ``every``: the option that asked for every method of a set (``"--method all"``: "all that
    apply"), or None for methods named one by one. With it, a method that refuses this estimate
    (it does not apply to the oracle, e.g. EM's likelihoods for a sketch, or it cannot finish on it)
    is skipped with one line on stderr saying why, ``context`` (e.g. ``--oracle cms``) naming what it
    refused, and the others run; a method given a ``--param`` is not skipped (its error may be the
    parameter's). Otherwise a method's error is the command's error, naming ``--method``. A bar on
    stderr counts the methods once the run has taken 2 s (large d)."""
    from tqdm import tqdm

    from .. import methods
    from . import _one_line

    out["base"] = estimate.f_tilde
    ran, skipped = [], {}
    for name in tqdm(names, desc="methods", unit="method", file=sys.stderr, delay=2.0, leave=False):
        if name == "base":
            ran.append(name)
            continue
        given = ", ".join(f"{k}={v!r}" for k, v in params.get(name, {}).items())
        why = methods.get(name).why_not(estimate, **params.get(name, {})) if every and not given else None
        if why:  # the method says itself that it does not apply here
            skipped[name] = _one_line(why)
            print(f"note: {every}: skipped {name} for {context}: {skipped[name]}", file=sys.stderr)
            continue
        try:  # postprocess's own arguments are positional-only: no keyword of a method clashes
            out[name] = methods.postprocess(estimate, name, **params.get(name, {}))
            ran.append(name)
        except (ValueError, TypeError, RuntimeError) as exc:  # RuntimeError: EM's ConvergenceError
            if every and not given:
                skipped[name] = _one_line(exc)
                print(f"note: {every}: skipped {name} for {context}: {skipped[name]}", file=sys.stderr)
                continue
            hint = f" (with --param {given}" if given else ""
            hint += ("; METHOD.NAME=VALUE gives a parameter to one method)" if len(names) > 1 else ")") if given else ""
            raise InputError(f"--method {name}: {exc}{hint}") from exc  # the chain: --debug shows it
    return ran, skipped


def _effective(name: str, given: dict) -> dict:
    """The keyword values a method ran with: its signature's defaults, overridden by ``--param``."""
    from .. import methods
    from ._params import method_params

    out = {}
    for p in list(inspect.signature(methods.get(name).func).parameters.values())[1:]:
        if p.name in method_params(name):
            out[p.name] = given.get(p.name, p.default)
    return out


def central_spec(text: str) -> tuple[str, float]:
    """``MECH:SCALE`` of ``--central`` as (mechanism, scale), checked against the mechanisms'
    records (:mod:`ldpopt.privacy.central`) before any work; a one-line error naming ``--central``."""
    from ..privacy import central

    mech, sep, scale = str(text).partition(":")
    if not sep:
        raise InputError(f"--central must be MECH:SCALE (e.g. laplace:2.5), got {text!r}")
    try:
        central.get(mech.strip())
        return mech.strip(), central.check_scale(number(scale), "scale")
    except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
        raise InputError(f"--central {text}: {exc}") from None


#: ``--n`` is refused when the noisy counts' total is this improbable under it (a Chernoff bound)
CENTRAL_TOTAL_ALPHA = 1e-9


def central_total_tail(t: float, mech: str, scale: float, d: int) -> float:
    """An upper bound on P(|Σ noise| ≥ t) for d independent draws of central noise ``mech`` at
    ``scale``: the noise source's own (:meth:`ldpopt.privacy.central.CentralNoise.sum_tail`)."""
    from ..privacy.central import CentralNoise

    return CentralNoise(mech, scale).sum_tail(t, d)


def check_central_total(counts, source, n: int) -> None:
    """Refuse ``--n`` that the noisy counts contradict: exact counts of n users sum to n, so their noisy
    total T differs from n by the sum of d noise draws; when P(|Σ noise| ≥ |T − n|) is below
    :data:`CENTRAL_TOTAL_ALPHA` by the source's ``sum_tail``, the counts are not n users' counts
    plus that noise (a wrong ``--n``, a wrong scale, or counts of another histogram). One line naming
    ``--n`` and both totals; nothing checked for a source that states no tail bound."""
    import math

    total = math.fsum(float(c) for c in counts)
    gap = abs(total - n)
    try:
        tail = source.sum_tail(gap, len(counts))
    except ValueError:
        return
    if tail < CENTRAL_TOTAL_ALPHA:
        raise InputError(f"--n {n}: the noisy counts sum to {total:.6g}, which {source.name} noise "
                         f"on {len(counts)} counts makes implausible for {n} users (chance below "
                         f"{CENTRAL_TOTAL_ALPHA:g}); give the number of users the counts describe, or leave --n out "
                         f"to estimate it")


def _central_estimate(args):
    """(table, Estimate) for ``--central MECH:SCALE``: the noisy counts (any finite numbers) read, the
    options that describe a frequency oracle refused, n from ``--n`` (known) or estimated
    (``Estimate.from_central``), and a record of the counts that names an oracle refused."""
    from .._provenance import read_recorded
    from ..estimate import Estimate
    from ..privacy.central import CentralNoise
    from ._io import read_counts_table

    mech, scale = central_spec(args.central)
    for option, value in (("--oracle", args.oracle), ("--epsilon", args.epsilon), ("--g", args.g), ("--k", args.k),
                          ("--oracle-param", args.oracle_param or None), ("--robust", getattr(args, "robust", None)),
                          ("--shuffled-among", getattr(args, "shuffled_among", None)),
                          ("--delta", getattr(args, "delta", None))):
        if value is not None:
            raise InputError(f"{option} contradicts --central: a central-noise histogram came through no frequency "
                             f"oracle (its epsilon is the mechanism's, from the scale)")
    try:
        rec = read_recorded(args.counts)
    except ValueError as exc:
        raise InputError(f"--counts: {exc}") from None
    if rec is not None and rec.oracle is not None:
        raise InputError(f"--central: {rec.source} records oracle {rec.oracle!r}: these are a frequency oracle's "
                         f"support counts, not noisy counts")
    table = read_counts_table(args.counts, args.d, signed=True)
    try:
        source = CentralNoise(mech, scale, n_known=args.n is not None)
    except (ValueError, TypeError) as exc:
        raise InputError(f"--central {args.central}: {exc}") from None
    if args.n is not None:
        check_central_total(table.counts, source, args.n)
    try:
        est = Estimate.from_source(table.counts, source, n=args.n)
    except (ValueError, TypeError) as exc:
        raise InputError(f"--central {args.central}: {exc}") from None
    return table, est.as_ordered() if args.ordered else est


def _run_central(args) -> int:
    from ._io import as_json, csv_text, format_of, out_files, output_target, write_table
    from ._params import route_params
    from ._paths import refuse_collisions
    from ._recorded import input_digests

    fmt = format_of(args.out, args.format)
    if args.out:
        output_target(args.out, "--out")
    refuse_collisions(out_files(args.out, fmt), [("--counts", args.counts)])
    names = method_names(args.method)
    table, estimate = _central_estimate(args)
    if args.method == "all":
        names = for_domain(names, estimate)
    params = route_params(args.param, names)
    out = table.columns()
    names, skipped = run_methods(out, estimate, names, params, "--method all" if args.method == "all" else None,
                                 f"--central {args.central}")
    ci = _add_intervals(out, estimate, names, params, args) if args.ci is not None else None
    metadata = {
        "ldpopt_version": __version__, "oracle": estimate.oracle, "epsilon": estimate.epsilon, "n": estimate.n,
        "d": table.d, "p": estimate.p, "q": estimate.q, "privacy": estimate.privacy.as_dict(),
        "methods": names, "method_params": {m: _effective(m, params[m]) for m in names},
        **({"skipped": skipped} if skipped else {}),
        "counts_file": str(args.counts), "values": "0..d-1 (--d)" if args.d is not None else "labels",
        "labelled": args.d is None, "sha256": input_digests(args, {"counts": args.counts}),
    }
    if ci is not None:
        metadata["ci"] = ci
    written = write_table(out, args.out, fmt, metadata) if args.out else []
    if args.json:
        doc = {"oracle": estimate.oracle, "epsilon": estimate.epsilon, "d": table.d, "n": estimate.n,
               "p": estimate.p, "q": estimate.q, "methods": names, "out": str(args.out) if args.out else None,
               "metadata": metadata, **as_json(out)}
        json.dump(doc, sys.stdout, default=str)
        sys.stdout.write("\n")
    elif not args.out:
        sys.stdout.write(csv_text(out))
    else:
        print(f"wrote {table.d} rows x {len(out)} columns to {', '.join(map(str, written))}", file=sys.stderr)
    print(privacy_line(estimate, "postprocess"), file=sys.stderr)
    return 0


def _run(args) -> int:
    from ._io import as_json, csv_text, format_of, out_files, output_target, write_table
    from ._limits import refuse_oversized
    from ._params import route_params
    from ._paths import refuse_collisions
    from ._recorded import apply_recorded, input_digests

    if getattr(args, "central", None) is not None:
        return _run_central(args)
    args.recorded = apply_recorded(args)  # the counts' record against the options, before any work
    fmt = format_of(args.out, args.format)  # refuse a mismatch before any work
    if args.out:
        output_target(args.out, "--out")  # a folder, a missing folder: refused before the work
    refuse_collisions(out_files(args.out, fmt), [("--counts", args.counts)])
    names = method_names(args.method)

    def fits(d, arg):  # measured: 2.7 GB at d = 1e7 for all 14 methods (the columns and their temporaries)
        refuse_oversized(d * 8 * (2 * len(names) + 6), arg,
                         f"post-processing d = {d} values with {len(names)} method(s)")

    if args.d is not None:
        fits(args.d, "--d")  # before the table of d counts is allocated
    table = read_counts_of(args)
    fits(table.d, "--counts")
    oracle, n, estimate = estimate_from(table, args)
    if args.method == "all":
        names = for_domain(names, estimate)
    params = route_params(args.param, names)
    out = table.columns()  # a dict of columns: a plain CSV in and out never loads pandas
    names, skipped = run_methods(out, estimate, names, params, "--method all" if args.method == "all" else None,
                                 f"--oracle {oracle.name}")
    ci = _add_intervals(out, estimate, names, params, args) if args.ci is not None else None
    robust_meta = robust_column(out, table, estimate, args)
    metadata = {
        "ldpopt_version": __version__, "oracle": oracle.name, "epsilon": oracle.epsilon, "n": n,
        "d": table.d, "p": oracle.p, "q": oracle.q,
        "oracle_params": recorded_params(oracle),
        "methods": names, "method_params": {m: _effective(m, params[m]) for m in names},
        **({"skipped": skipped} if skipped else {}),
        "counts_file": str(args.counts), "values": "0..d-1 (--d)" if args.d is not None else "labels",
        "labelled": args.d is None, "sha256": input_digests(args, {"counts": args.counts}),
        "privacy": estimate.privacy.as_dict(),
    }
    if ci is not None:
        metadata["ci"] = ci
    if robust_meta is not None:
        metadata["robust"] = robust_meta
    written = write_table(out, args.out, fmt, metadata) if args.out else []
    if args.json:
        doc = {"oracle": oracle.name, "epsilon": oracle.epsilon, "d": table.d, "n": n, "p": oracle.p,
               "q": oracle.q, "methods": names, "out": str(args.out) if args.out else None,
               "privacy": str(estimate.privacy), "metadata": metadata, **as_json(out)}
        json.dump(doc, sys.stdout, default=str)
        sys.stdout.write("\n")
    elif not args.out:
        sys.stdout.write(csv_text(out))
    else:
        print(f"wrote {table.d} rows x {len(out)} columns to {', '.join(map(str, written))}",
              file=sys.stderr)
    print(privacy_line(estimate, "postprocess"), file=sys.stderr)
    return 0


def _add_intervals(out, estimate, names, params, args) -> dict:
    """``--ci LEVEL``: each method's cell table (:meth:`ldpopt.uncertainty.Uncertainty.cells`, the one
    table every output form is made from) beside its column: <method>_se, <method>_ci_low,
    <method>_ci_high (:func:`ldpopt.uncertainty.intervals`: analytic for Base/Norm, parametric
    bootstrap otherwise), <method>_correction_sigma and <method>_flagged (the move from the raw
    estimate in units of σ_v, flagged beyond max(7σ_v, one count)); <method>_fallback (1 where the
    interval is Base's analytic one because the method's estimate is pinned at 0 or biased there)
    for the bootstrap methods. One line on stderr counts the flags, one note the fallbacks."""
    import warnings

    import numpy as np
    from tqdm import tqdm

    from ..uncertainty import FallbackWarning, intervals
    from ..uncertainty.analytic import supports_analytic
    from ..uncertainty.resample import BATCHED

    how, flagged, moved = {}, {}, {}
    order = ["base", *[m for m in names if m != "base"]]
    # a bar over the resamples of the methods that run resample by resample, on stderr, shown only
    # once the run has taken 2 s (tqdm's delay): quick runs print nothing
    slow = [m for m in order if m not in BATCHED and not supports_analytic(estimate, m, None)]
    with tqdm(total=len(slow) * args.resamples, desc="--ci bootstrap", unit="resample", file=sys.stderr,
              delay=2.0, disable=not slow) as bar:
        for name in order:
            bar.set_postfix_str(name, refresh=False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FallbackWarning)  # one note for all methods, below
                r = intervals(estimate, name, args.ci, n_resamples=args.resamples, rng=args.seed,
                              params=params.get(name, {}), progress=bar.update)
            tab = r.cells()
            for col in ("se", "ci_low", "ci_high"):
                out[f"{name}_{col}"] = tab[col].to_numpy()
            if "fallback" in r.extra:
                out[f"{name}_fallback"] = r.fallback.astype(np.int64)
                if r.fallback.any():
                    flagged[name] = int(r.fallback.sum())
            how[name] = r.how
            out[f"{name}_correction_sigma"] = tab["correction_sigma"].to_numpy()
            out[f"{name}_flagged"] = tab["flagged"].to_numpy().astype(np.int64)
            moved[name] = int(tab["flagged"].sum())
    print("corrections flagged (|method - raw| > max(7 sigma_v, one count); METHOD_flagged = 1): "
          + ", ".join(f"{m}: {k} of {estimate.d}" for m, k in moved.items()), file=sys.stderr)
    if flagged:
        print("note: " + ", ".join(f"{m}: {k} of {estimate.d}" for m, k in flagged.items())
              + " values get Base's analytic interval, where the method's estimate is pinned at 0 or "
              "biased by its clipping (METHOD_fallback = 1)", file=sys.stderr)
    return {"level": args.ci, "resamples": args.resamples, "seed": args.seed, "how": how}


def _level(text) -> float:
    v = number(text)
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text}")
    return v


_EPILOG = """\
method parameters (--param NAME=VALUE goes to every selected method that takes NAME;
--param METHOD.NAME=VALUE to that method only; int accepts 1e6, bool true/false, none where shown):
{table}

output metadata (oracle, epsilon, n, d, p, q, oracle parameters, ldpopt version, method parameters,
SHA-256 of the counts and --plugin files, the privacy statement: local ε per report, or with
--shuffled-among N the shuffled central (ε, δ); its line is printed on stderr): Parquet schema metadata key "ldpopt"; JSON "metadata"
object; CSV a sidecar OUT.meta.json.

the counts' own record (COUNTS.meta.json beside a CSV, the "ldpopt" metadata of a Parquet file, as
`ldpopt aggregate` writes them) fills --oracle, --epsilon, --n, --d and the oracle's parameters when
they are left out (one line on stderr says so); one given otherwise is an error naming both values.
"""


def add_parser(sub) -> None:
    pp = sub.add_parser("postprocess", help=help_of("postprocess"),
                        formatter_class=argparse.RawDescriptionHelpFormatter)

    def fill(parser):
        from ._params import params_help

        parser.epilog = _EPILOG.format(table=params_help())

    help_on_demand(pp, fill)
    add_counts_options(pp)
    pp.add_argument("--method", default="all",
                    help="a registered method name, FILE.py:NAME (a method of your own), or 'all' (default)")
    pp.add_argument("--param", action="append", metavar="[METHOD.]NAME=VALUE",
                    help="method parameter (repeatable), e.g. --param alpha=0.05; see the list below")
    pp.add_argument("--out", default=None, help="output file (.csv, .parquet or .json); stdout if omitted")
    pp.add_argument("--format", choices=FORMATS, default=None,
                    help="output format (default: from the suffix of --out; must agree with it)")
    pp.add_argument("--json", action="store_true", help="print a JSON document (results and metadata) to stdout")
    pp.add_argument("--ci", type=_level, default=None, metavar="LEVEL",
                    help="add METHOD_se, METHOD_ci_low, METHOD_ci_high, METHOD_correction_sigma and METHOD_flagged "
                         "columns: standard error, a LEVEL confidence interval (e.g. 0.95; analytic for "
                         "base/norm, parametric bootstrap otherwise, with METHOD_fallback = 1 where the "
                         "interval is base's), and the move from the raw estimate in units of sigma_v, "
                         "flagged beyond max(7 sigma_v, one count)")
    pp.add_argument("--resamples", type=int_arg(10), default=200,
                    help="bootstrap resamples for --ci (default 200)")
    pp.add_argument("--seed", type=int_arg(0), default=0, help="seed of the --ci bootstrap (default 0)")
    add_robust_options(pp)
    pp.set_defaults(func=_run)

