"""``ldpopt heavy-hitters``: find the frequent strings of a population with PEM, TreeHist or SFP
(:mod:`ldpopt.heavy`), simulated under local differential privacy, and print them as CSV.

The population: a text file with one user's string per line (``--strings``), or the shipped AOL
prefixes (``--dataset aol``). Strings are cut or space-padded to ``--bytes`` bytes. Output: one row
per heavy hitter, ``string,frequency`` (largest first), on stdout or atomically into ``--out``.
"""

from __future__ import annotations

import sys

from ._args import InputError, int_arg, positive_number
from ._commands import help_of
from ._io import atomic_write, input_file, text_bytes

__all__ = ["add_parser"]

PROTOCOLS = ("pem", "treehist", "sfp")


def _population(args):
    import numpy as np

    from .. import heavy

    if args.dataset is not None:
        from .. import datasets

        ds = datasets.load(args.dataset)
        if ds.labels is None:
            raise InputError(f"--dataset {args.dataset} has no string labels")
        return heavy.encode(list(ds.labels), args.bytes), ds.counts
    lines = text_bytes(input_file(args.strings, "--strings"), "--strings").splitlines()
    if not lines:
        raise InputError(f"--strings {args.strings} holds no line")
    codes, counts = np.unique(heavy.encode(lines, args.bytes), return_counts=True)
    return codes, counts


def _check_k(args) -> None:
    """``-k`` against the string length and step, before any work: at most 2^(8·bytes) strings exist;
    PEM starts from the ⌈log2 k⌉-bit prefixes (Wang et al. 2019, §4), and its first round estimates
    every prefix of min(γ + step, 8·bytes) bits, so γ < 8·bytes and that length ≤ 24 (a first-round
    domain of at most 2^24 prefixes: :func:`ldpopt.heavy.pem.pem_lengths`) bound k."""
    import math

    from ..heavy.pem import MAX_FIRST_BITS

    m = 8 * args.bytes
    if args.k > 2 ** m:
        raise InputError(f"-k {args.k}: more than the 2^{m} strings of --bytes {args.bytes} exist")
    if args.protocol != "pem":
        return
    gamma = max(0, math.ceil(math.log2(args.k)))
    top = m - 1 if m <= MAX_FIRST_BITS else min(m - 1, MAX_FIRST_BITS - args.step)
    if gamma > top:
        raise InputError(f"-k {args.k}: {args.protocol} starts from the ceil(log2 k) = {gamma}-bit prefixes and needs "
                         f"that below the {m} bits of --bytes {args.bytes} and at most {MAX_FIRST_BITS} with --step "
                         f"{args.step}: k <= {2 ** top} here")


def _run(args) -> int:
    from .. import heavy
    from ..heavy.consistency import consistent

    if (args.strings is None) == (args.dataset is None):
        raise InputError("give exactly one of --strings FILE and --dataset NAME")
    if args.bytes > 7:
        raise InputError(f"--bytes must be an integer in [1, 7], got {args.bytes}")
    if args.consistent and args.protocol == "sfp":
        raise InputError("--consistent needs a prefix tree: --protocol pem or treehist")
    _check_k(args)
    from ._paths import refuse_collisions

    refuse_collisions([("--out", args.out)], [("--strings", args.strings)])
    codes, counts = _population(args)
    users = int(counts.sum())
    if args.k > users:  # at most one distinct string a user: the rest of the top-k would be noise
        raise InputError(f"-k {args.k}: more heavy hitters than the {users} users of "
                         f"{'--strings ' + str(args.strings) if args.strings else '--dataset ' + str(args.dataset)}")
    kw = dict(total_bits=8 * args.bytes, epsilon=args.epsilon, k=args.k, oracle=args.oracle, rng=args.seed,
              exact=args.exact)
    try:
        if args.protocol == "pem":
            res = heavy.pem(codes, counts, step_bits=args.step, **kw)
        elif args.protocol == "treehist":
            res = heavy.treehist(codes, counts, step_bits=args.step, **kw)
        else:
            res = heavy.sfp(codes, counts, fragment_bits=args.step, **kw)
        status = ""
        if args.consistent:
            res, sol = consistent(res)
            if sol.status != "optimal":
                raise InputError(f"the consistent levels did not pass ldpopt's check: {sol.status} ({sol.message})")
            status = sol.status
    except ValueError as exc:
        raise InputError(str(exc)) from None
    rows = ["string,frequency"] + [f'"{s.replace(chr(34), chr(34) * 2)}",{f!r}'
                                   for s, f in zip(res.strings(), res.frequencies.tolist())]
    text = "\n".join(rows) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        atomic_write([(args.out, lambda tmp: tmp.write_text(text, encoding="utf-8"))])
        print(f"wrote {len(rows) - 1} heavy hitters to {args.out}" + (f" (levels made consistent: {status})" if status else ""),
              file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    hp = sub.add_parser("heavy-hitters", help=help_of("heavy-hitters"))
    hp.add_argument("--strings", default=None, help="text file, one user's string per line")
    hp.add_argument("--dataset", default=None, help="a shipped dataset with string labels instead (aol)")
    hp.add_argument("--protocol", choices=PROTOCOLS, default="pem", help="pem (default), treehist or sfp")
    hp.add_argument("--epsilon", type=positive_number, required=True, help="privacy budget of each user")
    hp.add_argument("-k", type=int_arg(1), default=16, help="heavy hitters wanted (default 16)")
    hp.add_argument("--bytes", type=int_arg(1), default=6, help="string length in bytes, cut or space-padded (default 6)")
    hp.add_argument("--step", type=int_arg(1), default=8,
                    help="bits per round: PEM's extension, TreeHist's level, SFP's fragment (default 8)")
    hp.add_argument("--oracle", default="olh", help="frequency oracle of every round (default olh)")
    hp.add_argument("--consistent", action="store_true", help="make the prefix levels consistent (pem, treehist)")
    hp.add_argument("--exact", action="store_true", help="run the real protocol instead of the exact-in-law fast path")
    hp.add_argument("--seed", type=int_arg(0), default=0, help="seed (default 0)")
    hp.add_argument("--out", default=None, help="CSV file to write (default: stdout)")
    hp.set_defaults(func=_run)
