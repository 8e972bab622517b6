"""The cost of shard identities (ldpopt.aggregate.identity): the content digest's throughput, and
``aggregate_shards`` on shards that record their identity against the same shards without one
(written by an older ldpopt: the digest computed on read, one more pass over the file).

For each oracle one shard of ``--reports`` reports (uniformly random valid reports: the digest and
the counting do not depend on their law) is written with ``write_shard`` and again without its
identity. Measured, best of ``--repeats``: ``write_shard`` (to_table + digest + write) against
to_table + write without identity; ``ContentDigest`` over the in-memory table (hashing
only: MB of report bytes per second and per CPU-second); ``read_identity`` of the shard without identity (Parquet decoding +
hashing); ``aggregate_shards(scheduler="threads")`` of each shard (the identity read or computed,
then the counting).

    PYTHONPATH=. python benchmarks/bench_identity.py --quick          # 10^5 reports
    PYTHONPATH=. python benchmarks/bench_identity.py                  # 10^7 reports, GRR and OUE

Results: benchmarks/results/identity.json (or --out DIR).
"""

from __future__ import annotations

import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import _harness as H  # noqa: E402  (benchmarks/ is the script's folder)


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--reports", type=float, default=1e7)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--oracles", nargs="+", default=["grr", "oue"])
    ap.add_argument("--repeats", type=int, default=3)
    return ap


def _best(fn, repeats: int):
    """(best wall seconds over ``repeats`` calls, the last result)."""
    return H.best_cpu(fn, repeats, clock=time.perf_counter)


def run(quick: bool = False, **opts) -> dict:
    args = H.options(parser(), "bench_identity.py", quick, opts)
    import pyarrow.parquet as pq

    from ldpopt import oracles
    from ldpopt.aggregate.dask import aggregate_shards
    from ldpopt.aggregate.identity import ContentDigest
    from ldpopt.aggregate.shards import read_identity, to_table, write_shard

    n = 10**5 if args.quick else int(args.reports)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ldpopt-bench-identity-") as tmp:
        for name in args.oracles:
            orc = oracles.get(name, 1.0, args.d)
            rng = np.random.default_rng(0)
            reports = (rng.integers(0, args.d, n) if name == "grr" else
                       rng.integers(0, 256, (n, (args.d + 7) // 8), dtype=np.uint8))
            table = to_table(orc, reports)
            mb = sum(c.nbytes for c in table.columns) / 1e6
            new, old = Path(tmp) / f"{name}-new.parquet", Path(tmp) / f"{name}-old.parquet"
            write_new, _ = _best(lambda: write_shard(new, orc, reports), args.repeats)
            # as an older ldpopt wrote it (write_shard's row groups, no identity)
            write_old, _ = _best(lambda: pq.write_table(to_table(orc, reports), old, row_group_size=1 << 18),
                                 args.repeats)
            hash_s, digest = _best(lambda: ContentDigest(table.schema).update(table).hexdigest(), args.repeats)
            # hashing is one thread: its CPU time is the fair measure on a shared machine
            hash_cpu, _ = H.best_cpu(lambda: ContentDigest(table.schema).update(table).hexdigest(), args.repeats)
            read_s, ident = _best(lambda: read_identity(old), args.repeats)
            assert ident.digest == digest == read_identity(new).digest, "recorded and computed digests differ"
            agg_new, part_new = _best(lambda: aggregate_shards([new], scheduler="threads"), args.repeats)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the one-line "computed on read" warning, expected here
                agg_old, part_old = _best(lambda: aggregate_shards([old], scheduler="threads"), args.repeats)
            assert np.array_equal(part_new.counts, part_old.counts)
            row = {"oracle": name, "d": args.d, "n": n, "report_mb": mb, "digest_s": hash_s,
                   "digest_mb_per_s": mb / hash_s, "digest_cpu_s": hash_cpu, "digest_mb_per_cpu_s": mb / hash_cpu, "read_and_digest_s": read_s,
                   "read_and_digest_mb_per_s": mb / read_s, "aggregate_recorded_s": agg_new,
                   "aggregate_computed_s": agg_old, "computed_overhead": agg_old / agg_new - 1,
                   "write_with_identity_s": write_new, "write_without_s": write_old}
            rows.append(row)
            print(f"{name} n={n:,d} ({mb:.0f} MB): digest {row['digest_mb_per_s']:.0f} MB/s "
                  f"({row['digest_mb_per_cpu_s']:.0f} MB/CPU-s), read+digest "
                  f"{row['read_and_digest_mb_per_s']:.0f} MB/s; aggregate {agg_new:.2f} s with the identity "
                  f"recorded, {agg_old:.2f} s computed on read (+{100 * row['computed_overhead']:.0f}%); write_shard "
                  f"{write_new:.2f} s with the identity, {write_old:.2f} s without", flush=True)
    return H.save("identity", args, {"rows": rows})


if __name__ == "__main__":
    H.cli(parser(), run)
