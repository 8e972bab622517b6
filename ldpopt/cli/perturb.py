"""``ldpopt perturb``: run an oracle's client randomiser over a population and write Parquet report
shards (schema per oracle: :mod:`ldpopt.aggregate.shards`), for tests and simulations.

The population is a histogram (a ``value,count`` CSV/Parquet file, as ``postprocess`` reads) or a
values file (one user per row, integer column ``value`` in [0, d)). A histogram without ``--d`` is
keyed by labels: its i-th row is position i for the oracle, and the labels (in file order) are written
into every shard's metadata, so that ``ldpopt aggregate`` gives counts keyed by the same labels. With
``--d`` the values are the positions 0..d-1 themselves. Users are laid out in order
(histogram: value by value) and cut into shards of ``--shard-rows`` users; shard i is randomised with
its own generator ``numpy.random.default_rng(SeedSequence(seed, spawn_key=(i,)))``, so the output
depends only on (population, oracle, seed, shard size), never on how it is later aggregated. Each
shard records its identity (content digest, this call's run id, its index), so that ``aggregate``
refuses to count a copied shard twice.
The sketch oracles (cms, hcms, rappor) take their hash family with ``--oracle-param`` (for example
``--oracle-param m=256 --oracle-param hash_seed=7``); the shards record it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .. import oracles
from ._args import InputError, int_arg, positive_number
from ._commands import help_of
from .postprocess import add_oracle_params, build_oracle

__all__ = ["add_parser"]


def _population(args, d):
    """(values of every user as a function of a user range, n, d, labels or None)."""
    from ._io import input_file, read_counts_table

    if args.values is not None:
        import pandas as pd

        path = input_file(args.values, "--values")
        frame = pd.read_parquet(path) if path.suffix.lower() in (".parquet", ".pq") else pd.read_csv(path)
        if "value" not in frame.columns:
            raise InputError(f"--values {path}: needs a column 'value' (one row per user)")
        vals = frame["value"].to_numpy()
        if vals.dtype.kind not in "iu":
            raise InputError(f"--values {path}: column 'value' must hold integers, got {vals.dtype}")
        if d is None:
            raise InputError("--d is required with --values (the domain is 0..d-1)")
        if vals.size == 0 or vals.min() < 0 or vals.max() >= d:
            raise InputError(f"--values {path}: values must be integers in [0, --d {d}) and at least one user")
        vals = vals.astype(np.int64)
        return (lambda a, b: vals[a:b]), int(vals.size), d, None
    table = read_counts_table(args.histogram, d, "--histogram")
    c = table.counts
    if np.any(c != np.round(c)) or np.any(c < 0) or c.sum() < 1:
        raise InputError(f"--histogram {args.histogram}: counts must be whole numbers >= 0 describing at least one user")
    ends = np.cumsum(c.astype(np.int64))
    labels = None if d is not None else [str(v) for v in table.values]  # without --d: labels, file order
    return (lambda a, b: np.searchsorted(ends, np.arange(a, b), side="right")), int(ends[-1]), table.d, labels


def _run(args) -> int:
    from ..aggregate.identity import new_run_id
    from ..aggregate.shards import write_shard_batches

    if (args.values is None) == (args.histogram is None):
        raise InputError("give exactly one of --histogram or --values")
    values_of, n, d, labels = _population(args, args.d)
    oracle = build_oracle(args, d)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if any(out.glob("*.parquet")):
        raise InputError(f"--out {out}: already holds *.parquet shards; choose an empty folder")
    step = max(1, min(args.shard_rows, oracle.chunk_size()))
    nshards = -(-n // args.shard_rows)
    run = new_run_id()  # one per call: every shard records it and its index (ldpopt.aggregate.identity)
    for i in range(nshards):
        gen = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(i,)))
        a, b = i * args.shard_rows, min(n, (i + 1) * args.shard_rows)
        batches = (oracle.perturb(values_of(s, min(b, s + step)), gen) for s in range(a, b, step))
        write_shard_batches(out / f"part-{i:05d}.parquet", oracle, batches, labels=labels, run=run, part=i)
    print(f"wrote {n} {oracle.name} reports in {nshards} shard(s) to {out}", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    pp = sub.add_parser("perturb", help=help_of("perturb"),
                        description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    src = pp.add_mutually_exclusive_group(required=True)
    src.add_argument("--histogram", help="CSV or Parquet table with columns value,count (users per value)")
    src.add_argument("--values", help="CSV or Parquet table with an integer column 'value', one row per user")
    pp.add_argument("--oracle", required=True, help=f"one of {oracles.available(sketches=True)}")
    pp.add_argument("--epsilon", required=True, type=positive_number, help="privacy budget ε > 0")
    pp.add_argument("--d", type=int_arg(2), default=None,
                    help="domain size (values 0..d-1); required with --values; without it a histogram's "
                         "values are labels, kept in the shards")
    add_oracle_params(pp)
    pp.add_argument("--seed", type=int_arg(0), required=True, help="seed (shard i uses SeedSequence(seed, spawn_key=(i,)))")
    pp.add_argument("--shard-rows", type=int_arg(1), default=1_000_000, help="users per shard (default 1e6)")
    pp.add_argument("--out", required=True, help="folder for the shards part-00000.parquet, ... (must hold none yet)")
    pp.set_defaults(func=_run)
