"""Mergeable aggregation of reports: partial aggregates (:mod:`.partial`), Parquet report shards
(:mod:`.shards`), the shard identities that keep a report from being counted twice (:mod:`.identity`) and the out-of-core Dask map + tree reduction over a directory of shards
(:mod:`.dask`), and report tables in pandas, Polars, DuckDB or Spark counted inside their engine
(:mod:`.frames`). The single-machine path is the same code with one partition."""

from .. import _deprecated
from .frames import from_dataframe
from .identity import AlreadyHeldError, DuplicateShardError
from .partial import MergeError, Partial

__all__ = ["AlreadyHeldError", "DuplicateShardError", "MergeError", "Partial",
           "from_dataframe"]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "FORMAT_VERSION": "ldpopt.aggregate.partial",
    "ShardIdentity": "ldpopt.aggregate.identity",
})
