"""Parquet report shards: one documented schema per oracle, read and written in record batches.

Notes: docs/notes/devices.md, "ldpopt.aggregate.shards"."""

from __future__ import annotations

import json
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Literal, overload

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .. import oracles
from ..oracles.base import FrequencyOracle
from .identity import IDENTITY_KEY, ContentDigest, ShardIdentity, check_distinct, new_run_id
from .partial import FORMAT_VERSION, MergeError, Partial, _structural_params, check_labels

__all__ = [
    "BATCH_ROWS",
    "META_KEY",
    "UnknownOracleError",
    "from_batch",
    "list_shards",
    "read_identities",
    "read_identity",
    "read_labels",
    "read_oracle",
    "schema",
    "shard_partial",
    "to_table",
    "write_shard",
    "write_shard_batches",
]

META_KEY = b"ldpopt.shard"
#: reports per record batch when reading (bounds memory per task)
BATCH_ROWS = 1 << 18


def _binary_column(packed: np.ndarray, width: int):
    r = np.ascontiguousarray(packed, dtype=np.uint8)
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), r.shape[0], [None, pa.py_buffer(r.tobytes())])


def _binary_rows(col, width: int, what: str) -> np.ndarray:
    if col.type != pa.binary(width):
        raise ValueError(f"column {what} must be fixed_size_binary({width}), got {col.type}")
    buf = np.frombuffer(col.buffers()[1], dtype=np.uint8)
    return buf[col.offset * width:(col.offset + len(col)) * width].reshape(len(col), width)


#: a report column's kind (``oracle.report_columns()``) → its Arrow type
_ARROW_TYPES = {"int64": lambda size: pa.int64(), "bytes": pa.binary, "int64_list": lambda size: pa.list_(pa.int64(), size)}


def _header(oracle: FrequencyOracle, labels=None) -> dict:
    head = {"format_version": FORMAT_VERSION, "oracle": oracle.name, "epsilon": oracle.epsilon,
            "d": oracle.d, "params": _structural_params(oracle)}
    labels = check_labels(labels, oracle.d)
    if labels is not None:
        head["labels"] = list(labels)
    return head


def schema(oracle: FrequencyOracle, labels=None) -> pa.Schema:
    """The Parquet schema (with the ``ldpopt.shard`` metadata) of ``oracle``'s report shards, from
    ``oracle.report_columns()``; ``labels``: the d value labels, position order (None: the values
    are the positions)."""
    fields = [pa.field(c.name, _ARROW_TYPES[c.kind](c.size), nullable=False) for c in oracle.report_columns()]
    return pa.schema(fields, metadata={META_KEY: json.dumps(_header(oracle, labels)).encode()})


def _to_arrow(column, values: np.ndarray):
    if column.kind == "bytes":
        return _binary_column(values, column.size)
    if column.kind == "int64_list":
        return pa.FixedSizeListArray.from_arrays(pa.array(np.asarray(values, dtype=np.int64).ravel()), column.size)
    return pa.array(np.asarray(values, dtype=np.int64))


def to_table(oracle: FrequencyOracle, reports, labels=None) -> pa.Table:
    """``oracle.perturb``'s reports as a table of :func:`schema` (``oracle.reports_to_columns``)."""
    sch = schema(oracle, labels)
    cols = [_to_arrow(c, v) for c, v in zip(oracle.report_columns(), oracle.reports_to_columns(reports), strict=True)]
    return pa.Table.from_arrays(cols, schema=sch)


def _column(batch, name: str):
    col = batch.column(name)
    if col.null_count:
        raise ValueError(f"column {name!r} holds {col.null_count} null(s); every row must be a report")
    return col


def _ints(col) -> np.ndarray:
    """An integer column as a numpy array: an int64 column without nulls as a zero-copy view of its
    data buffer; any other through pyarrow's ``to_numpy``. *Why not always to_numpy*: its first call
    in a process imports pandas (about 0.5 CPU-seconds, paid again in every new Dask worker process),
    which the view does not need."""
    if col.type == pa.int64() and not col.null_count:
        return np.frombuffer(col.buffers()[1], dtype=np.int64, count=col.offset + len(col))[col.offset:]
    return col.to_numpy()


def _from_arrow(column, batch, oracle: FrequencyOracle) -> np.ndarray:
    col = _column(batch, column.name)
    if column.kind == "bytes":
        return _binary_rows(col, column.size, f"{column.name!r} of oracle {oracle.name!r}")
    if column.kind == "int64_list":
        return _ints(col.flatten()).reshape(len(col), column.size)
    return _ints(col)


def from_batch(oracle: FrequencyOracle, batch: pa.RecordBatch):
    """The reports of one record batch, in ``oracle.perturb``'s format (``oracle.reports_from_columns``)."""
    return oracle.reports_from_columns([_from_arrow(c, batch, oracle) for c in oracle.report_columns()])


def _run_part(run, part) -> tuple[str, int]:
    run = new_run_id() if run is None else run
    if not isinstance(run, str) or not run:
        raise ValueError(f"run must be a non-empty string or None, got {run!r}")
    if isinstance(part, bool) or not isinstance(part, (int, np.integer)) or part < 0:
        raise ValueError(f"part must be an integer >= 0, got {part!r}")
    return run, int(part)


def write_shard(path, oracle: FrequencyOracle, reports, row_group_rows: int = BATCH_ROWS, labels=None,
                run: str | None = None, part: int = 0) -> Path:
    """Write ``reports`` as one Parquet shard (via a temporary file, then renamed), recording its
    identity (:mod:`.identity`): ``run`` the id of the run writing it (None: a fresh one), ``part``
    its position in that run."""
    run, part = _run_part(run, part)
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    table = to_table(oracle, reports, labels)
    ident = ContentDigest(table.schema).update(table).identity(run, part)
    table = table.replace_schema_metadata({**table.schema.metadata, **ident.metadata()})
    pq.write_table(table, tmp, row_group_size=row_group_rows)
    tmp.replace(path)
    return path


def write_shard_batches(path, oracle: FrequencyOracle, batches, labels=None, run: str | None = None,
                        part: int = 0) -> Path:
    """Write an iterable of report arrays as one shard, one row group per array, without holding
    more than one array in memory (via a temporary file, then renamed); its identity (``run``,
    ``part``: as :func:`write_shard`) is digested batch by batch and added to the footer."""
    run, part = _run_part(run, part)
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        sch = schema(oracle, labels)
        digest = ContentDigest(sch)
        with pq.ParquetWriter(tmp, sch) as writer:
            for reports in batches:
                table = to_table(oracle, reports).replace_schema_metadata(sch.metadata)
                digest.update(table)
                writer.write_table(table)
            writer.add_key_value_metadata(digest.identity(run, part).metadata())
        tmp.replace(path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def _read_header(path) -> dict:
    meta = pq.read_schema(path).metadata or {}
    if META_KEY not in meta:
        raise ValueError(f"{path}: not an ldpopt report shard (no {META_KEY.decode()!r} schema metadata)")
    head = json.loads(meta[META_KEY])
    if head.get("format_version") != FORMAT_VERSION:
        raise MergeError(f"{path}: version: shard format version {head.get('format_version')!r}, this ldpopt "
                         f"reads version {FORMAT_VERSION}")
    return head


class UnknownOracleError(ValueError):
    """A shard's oracle is not registered in this process; ``oracle`` is the name its header records."""

    def __init__(self, message: str, oracle: str):
        super().__init__(message)
        self.oracle = oracle


def read_oracle(path) -> FrequencyOracle:
    """The oracle a shard's ``ldpopt.shard`` metadata declares. An oracle name not registered in this
    process (an oracle of one's own whose file was not loaded) is a ValueError saying to load it:
    ``ldpopt --plugin FILE.py`` on the command line, ``oracles.oracle_class("FILE.py:NAME")`` in Python."""
    head = _read_header(path)
    try:
        cls = oracles.oracle_class(head["oracle"])
    except ValueError:
        raise UnknownOracleError(f"{path}: the reports are of oracle {head['oracle']!r}, which is not registered here: load "
                         f"the file that defines it first (ldpopt --plugin FILE.py aggregate ...; in Python, "
                         f"oracles.oracle_class('FILE.py:NAME'))", head["oracle"]) from None
    return cls(epsilon=head["epsilon"], d=head["d"], **head.get("params", {}))


def read_labels(path) -> tuple | None:
    """The value labels a shard declares (position order), or None: its values are the positions."""
    head = _read_header(path)
    try:
        return check_labels(head.get("labels"), int(head["d"]))
    except ValueError as exc:
        raise ValueError(f"{path}: shard metadata: {exc}") from None


@overload
def read_identity(path, compute: Literal[True] = ...) -> ShardIdentity: ...
@overload
def read_identity(path, compute: bool) -> ShardIdentity | None: ...
def read_identity(path, compute: bool = True) -> ShardIdentity | None:
    """The identity a shard records (``ldpopt.identity`` in its footer's key-value metadata), with
    ``file`` = ``path``; for a shard that records none, its content digest computed from the file (a
    full read, run and part None), or None when ``compute`` is False."""
    meta = pq.read_metadata(path)
    kv = meta.metadata or {}
    if IDENTITY_KEY in kv:
        try:
            ident = ShardIdentity.from_dict(json.loads(kv[IDENTITY_KEY]), file=str(path))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}: shard metadata {IDENTITY_KEY.decode()!r}: {exc}") from None
        if ident.n != meta.num_rows:
            raise ValueError(f"{path}: shard metadata {IDENTITY_KEY.decode()!r} records n = {ident.n} reports, "
                             f"the file holds {meta.num_rows}")
        return ident
    if not compute:
        return None
    pf = pq.ParquetFile(path)
    digest = ContentDigest(pf.schema_arrow)
    for batch in _prefetched(pf.iter_batches(batch_size=BATCH_ROWS)):  # decode the next while hashing
        digest.update(batch)
    return digest.identity(file=str(path))


def read_identities(files) -> list[ShardIdentity]:
    """The identities of ``files`` (:func:`read_identity`), refused with
    :class:`~.identity.DuplicateShardError` naming both files if two hold the same reports; one
    warning line says how many had no recorded identity and had their digests computed."""
    recorded = [read_identity(f, compute=False) for f in files]
    missing = [i for i, x in enumerate(recorded) if x is None]
    idents = [x if x is not None else read_identity(f) for f, x in zip(files, recorded)]  # computed in order
    if missing:
        warnings.warn(f"{len(missing)} of {len(files)} shard(s) record no identity (written by an older ldpopt), "
                      f"first {files[missing[0]]}: their content digests were computed on read", stacklevel=2)
    check_distinct(idents)
    return idents


def _prefetched(batches):
    """The items of the iterator ``batches``, the next one read by a background thread while the
    caller counts the current one (pyarrow releases the GIL while it reads and decodes)."""
    with ThreadPoolExecutor(1) as pool:
        nxt = pool.submit(next, batches, None)
        while (item := nxt.result()) is not None:
            nxt = pool.submit(next, batches, None)
            yield item


def _in_lanes(fn, items, lanes: int):
    """fn(item) for each item, in order, with up to ``lanes`` calls running at once, each on one of
    ``lanes`` threads (so each call finds its thread's CUDA stream free: ``ldpopt.kernels.cuda.Lane``;
    one lane's host→device copy runs while the other's kernel does)."""
    from collections import deque

    with ThreadPoolExecutor(lanes) as pool:
        running: deque[Future] = deque()
        for item in items:
            if len(running) == lanes:
                yield running.popleft().result()
            running.append(pool.submit(fn, item))
        while running:
            yield running.popleft().result()


#: host threads that count a shard's batches on the GPU (two: a copy overlaps a kernel)
CUDA_LANES = 2


def shard_partial(path, row_groups=None, batch_rows: int = BATCH_ROWS, labelled: bool = True,
                  device=None) -> Partial:
    """The partial aggregate of one shard (or of some of its row groups), read batch by batch;
    with the shard's labels unless ``labelled=False`` (Dask's map tasks: the labels are checked
    once per shard by the plan and attached to the merged total, not shipped with every task).
    ``device``: who counts (``oracle.aggregate``'s argument; None: its default). Unless
    ``device="numpy"``, the next batch is read while the current one is counted (the kernels leave the core
    idle otherwise: decoding a batch costs about as much as counting it); with ``device="cuda"`` the
    batches are counted in ``CUDA_LANES`` host threads, each with its own stream and pinned buffers
    (:func:`_in_lanes`), so that a batch's copy to the GPU overlaps the previous batch's kernel.
    The partial of a whole shard (``row_groups`` None) records the shard's identity when the shard
    records one (:func:`read_identity`), so merging it twice does not double its counts."""
    oracle = read_oracle(path)
    pf = pq.ParquetFile(path)
    total = Partial.empty(oracle)
    batches = pf.iter_batches(batch_size=batch_rows, row_groups=row_groups)
    if device != "numpy":
        batches = _prefetched(batches)

    def count(batch):
        return Partial.from_reports(oracle, from_batch(oracle, batch), device=device) if batch.num_rows else None

    parts = _in_lanes(count, batches, CUDA_LANES) if device == "cuda" else map(count, batches)
    for part in parts:
        if part is not None:
            total = total.merge(part)
    if row_groups is None:  # the whole shard: its identity (a shard without one: not computed here)
        recorded = read_identity(path, compute=False)
        total = total.with_shards([recorded] if recorded is not None else [])
    return total.with_labels(read_labels(path)) if labelled else total


def list_shards(directory) -> list[Path]:
    """The ``*.parquet`` files of ``directory`` (sorted by name), refusing an empty directory."""
    d = Path(directory)
    if not d.is_dir():
        raise FileNotFoundError(2, "No such directory", str(d))
    files = sorted(p for p in d.glob("*.parquet") if p.is_file())
    if not files:
        raise ValueError(f"{d}: no *.parquet report shards found")
    return files
