"""Mergeable aggregation of reports: partial aggregates (:mod:`.partial`), Parquet report shards
(:mod:`.shards`) and the out-of-core Dask map + tree reduction over a directory of shards
(:mod:`.dask`). The single-machine path is the same code with one partition."""

from .partial import FORMAT_VERSION, MergeError, Partial

__all__ = ["FORMAT_VERSION", "MergeError", "Partial"]
