"""``ldpopt perturb``: run an oracle's client randomiser over a population and write Parquet report
shards (schema per oracle: :mod:`ldpopt.aggregate.shards`), for tests and simulations.

Notes: docs/notes/cli.md, "ldpopt.cli.perturb"."""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path

import numpy as np

from .. import oracles
from ._args import InputError, int_arg, positive_number
from ._commands import help_of
from .postprocess import add_oracle_params, build_oracle

__all__ = ["add_parser"]

_MAX_USERS = 2.0**63  # n and every report count are int64
_SHARD = re.compile(r"part-(\d+)\.parquet")


def _population(args, d):
    """(values of every user as a function of a user range, n, d, labels or None)."""
    from ._io import input_file, read_counts_table

    if args.values is not None:
        import io

        import pandas as pd

        from ._io import text_bytes

        path = input_file(args.values, "--values")
        try:
            frame = pd.read_parquet(path) if path.suffix.lower() in (".parquet", ".pq") else \
                pd.read_csv(io.BytesIO(text_bytes(path, "--values")))
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - pandas / pyarrow raise several types for a bad file
            raise InputError(f"--values {path}: cannot read it: {_first_line(exc)}") from None
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
        return (lambda a, b: vals[a:b]), int(vals.size), d, None, (lambda m: vals[np.linspace(0, vals.size - 1, m)
                                                                             .astype(np.int64)])
    table = read_counts_table(args.histogram, d, "--histogram")
    c = table.counts
    if np.any(c != np.round(c)) or np.any(c < 0) or c.sum() < 1:
        raise InputError(f"--histogram {args.histogram}: counts must be whole numbers >= 0 describing at least one user")
    total = math.fsum(c.tolist())
    if total >= _MAX_USERS:
        raise InputError(f"--histogram {args.histogram}: the counts add up to {total:.4g} users, more than the "
                         f"{_MAX_USERS:.4g} (2^63) a report count can hold")
    ends = np.cumsum(c.astype(np.int64))
    labels = None if d is not None else [str(v) for v in table.values]  # without --d: labels, file order
    n = int(ends[-1])
    return ((lambda a, b: np.searchsorted(ends, np.arange(a, b), side="right")), n, table.d, labels,
            lambda m: np.searchsorted(ends, np.linspace(0, n - 1, m).astype(np.int64), side="right"))


#: populations from this size on have their shards' size estimated, and checked against the disk
SIZE_CHECK_USERS = 2**20
#: users of the sample shard that estimates it (spread over the population, so a sorted histogram's
#: values mix as they do in the run's shards)
SAMPLE_USERS = 2**15


def _check_disk(args, oracle, n, labels, spread, nshards) -> None:
    """Refuse, naming the population's argument and the numbers, a run whose shards would not fit the
    free space at ``--out``: the bytes per user of a sample shard of :data:`SAMPLE_USERS` users spread
    over the population, written as the run writes (Parquet, the oracle's schema), times n. (Perturbing
    10^12 users would otherwise start a 63-137 h run towards ~10 TB.) Skipped below
    :data:`SIZE_CHECK_USERS` users."""
    import tempfile

    from ..aggregate.shards import write_shard_batches
    from ._limits import refuse_over_disk

    if n < SIZE_CHECK_USERS:
        return
    with tempfile.TemporaryDirectory(prefix="ldpopt-size-") as tmp:
        gen = np.random.default_rng(0)
        sample = write_shard_batches(Path(tmp) / "sample.parquet", oracle, [oracle.perturb(spread(SAMPLE_USERS), gen)],
                                     labels=labels)
        per_user = sample.stat().st_size / SAMPLE_USERS
    arg = "--values" if args.values is not None else "--histogram"
    refuse_over_disk(per_user * n, arg, f"{n:.4g} users of {oracle.name} in {nshards} shard(s) "
                     f"({per_user:.3g} bytes a user)", args.out)


def _folder(args) -> tuple[Path, str, list[Path]]:
    """(--out, how :func:`ldpopt._atomic.fill_folder` puts the shards there, the shards already
    there), after the checks that need no work: a missing parent is an error without --parents (and
    created with it), a folder holding anything needs --append or --overwrite."""
    out = Path(args.out)
    if os.path.lexists(out) and not out.is_dir():
        raise InputError(f"--out {out} is not a folder")
    if not out.exists():
        parent = Path(os.path.realpath(out)).parent
        if not parent.is_dir() and not args.parents:
            raise InputError(f"--out {out}: the folder {parent} does not exist; create it, or give --parents "
                             f"to create the missing folders")
        return out, "new", []
    held = sorted(p.name for p in out.iterdir())
    if not held:
        return out, "new", []
    if not (args.append or args.overwrite):
        raise InputError(f"--out {out} is not empty ({len(held)} entr{'y' if len(held) == 1 else 'ies'}, e.g. "
                         f"{held[0]}); give --append to add shards to it or --overwrite to replace its content")
    shards = sorted(p for p in out.glob("part-*.parquet") if _SHARD.fullmatch(p.name))
    return out, "append" if args.append else "overwrite", shards


def _check_append(shards, oracle, labels, out) -> int:
    """The index of the first appended shard (after the last one there); the shards there must be of
    this configuration (oracle, ε, d, parameters, labels), or aggregating the folder would fail."""
    from ..aggregate import Partial
    from ..aggregate.shards import read_labels, read_oracle

    if not shards:
        return 0
    try:
        there = Partial.empty(read_oracle(shards[-1]), read_labels(shards[-1]))
        there.check_compatible(Partial.empty(oracle, tuple(labels) if labels is not None else None))
    except (ValueError, OSError) as exc:
        raise InputError(f"--append: {shards[-1]} does not match these reports: {exc}") from None
    last = _SHARD.fullmatch(shards[-1].name)
    assert last is not None  # the shards were listed by this pattern
    return int(last.group(1)) + 1


def _first_line(exc) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _run(args) -> int:
    from tqdm import tqdm

    from .._atomic import fill_folder
    from ..aggregate.identity import new_run_id
    from ..aggregate.shards import write_shard_batches
    from ._paths import refuse_collisions

    if (args.values is None) == (args.histogram is None):
        raise InputError("give exactly one of --histogram or --values")
    refuse_collisions([], [("--histogram", args.histogram), ("--values", args.values)], [("--out", args.out)])
    out, how, shards = _folder(args)
    values_of, n, d, labels, spread = _population(args, args.d)
    oracle = build_oracle(args, d)
    first = _check_append(shards, oracle, labels, out) if how == "append" else 0
    step = max(1, min(args.shard_rows, oracle.chunk_size()))
    nshards = -(-n // args.shard_rows)
    _check_disk(args, oracle, n, labels, spread, nshards)

    run = new_run_id()  # one per call: every shard records it and its index (ldpopt.aggregate.identity)

    def fill(tmp):
        # a bar on stderr once the run has taken 2 s (tqdm's delay): quick runs print nothing
        with tqdm(total=n, desc="perturb", unit="user", unit_scale=True, file=sys.stderr, delay=2.0) as bar:
            for i in range(nshards):
                gen = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(first + i,)))
                a, b = i * args.shard_rows, min(n, (i + 1) * args.shard_rows)

                def batches(a=a, b=b, gen=gen):
                    for s in range(a, b, step):
                        yield oracle.perturb(values_of(s, min(b, s + step)), gen)
                        bar.update(min(b, s + step) - s)
                write_shard_batches(tmp / f"part-{first + i:05d}.parquet", oracle, batches(), labels=labels,
                                    run=run, part=first + i)

    Path(os.path.realpath(out)).parent.mkdir(parents=True, exist_ok=True)  # --parents (checked above)
    fill_folder(out, fill, how)
    added = f" (shards {first}..{first + nshards - 1} added)" if how == "append" else \
        " (its content replaced)" if how == "overwrite" else ""
    print(f"wrote {n} {oracle.name} reports in {nshards} shard(s) to {out}{added}", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    pp = sub.add_parser("perturb", help=help_of("perturb"),
                        description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    src = pp.add_mutually_exclusive_group(required=True)
    src.add_argument("--histogram", help="CSV or Parquet table with columns value,count (users per value)")
    src.add_argument("--values", help="CSV or Parquet table with an integer column 'value', one row per user")
    pp.add_argument("--oracle", required=True,
                    help=f"one of {oracles.available(sketches=True)}, or FILE.py:NAME (an oracle of your own)")
    pp.add_argument("--epsilon", required=True, type=positive_number, help="privacy budget ε > 0")
    pp.add_argument("--d", type=int_arg(2), default=None,
                    help="domain size (values 0..d-1); required with --values; without it a histogram's "
                         "values are labels, kept in the shards")
    add_oracle_params(pp)
    pp.add_argument("--seed", type=int_arg(0), required=True, help="seed (shard i uses SeedSequence(seed, spawn_key=(i,)))")
    pp.add_argument("--shard-rows", type=int_arg(1), default=1_000_000, help="users per shard (default 1e6)")
    pp.add_argument("--out", required=True,
                    help="folder for the shards part-00000.parquet, ...: absent or empty, unless --append or "
                         "--overwrite; the shards appear all at once when the run is done (an error or Ctrl-C "
                         "leaves the folder as it was)")
    how = pp.add_mutually_exclusive_group()
    how.add_argument("--append", action="store_true",
                     help="--out holds shards of the same oracle, ε, d and labels: add these after them "
                          "(numbered on; shard i is randomised with spawn_key=(i,), so no stream repeats)")
    how.add_argument("--overwrite", action="store_true",
                     help="replace everything --out holds by the new shards (swapped in when they are done)")
    pp.add_argument("--parents", action="store_true", help="create --out's missing parent folders")
    pp.set_defaults(func=_run)
