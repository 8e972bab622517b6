"""Mergeable aggregation of reports: partial aggregates (:mod:`.partial`), Parquet report shards
(:mod:`.shards`), the shard identities that keep a report from being counted twice (:mod:`.identity`) and the out-of-core Dask map + tree reduction over a directory of shards
(:mod:`.dask`), and report tables in pandas, Polars, DuckDB or Spark counted inside their engine
(:mod:`.frames`). The single-machine path is the same code with one partition."""

from .frames import from_dataframe
from .identity import AlreadyHeldError, DuplicateShardError, ShardIdentity
from .partial import FORMAT_VERSION, MergeError, Partial

__all__ = ["FORMAT_VERSION", "AlreadyHeldError", "DuplicateShardError", "MergeError", "Partial", "ShardIdentity",
           "from_dataframe"]
