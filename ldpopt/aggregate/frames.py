"""Report tables in dataframe engines → :class:`~.partial.Partial`: pandas, Polars, DuckDB and Spark.

Notes: docs/notes/devices.md, "ldpopt.aggregate.frames".
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._extras import require
from ..oracles.base import FrequencyOracle, ReportColumn
from .partial import Partial
from .shards import BATCH_ROWS

__all__ = ["ENGINES", "PLANS", "engine_of", "from_dataframe", "plan_of", "to_engine"]

#: the engines :func:`from_dataframe` reads, by the name :func:`engine_of` gives them
ENGINES = ("pandas", "polars", "polars-lazy", "duckdb", "spark")
#: the plans :func:`from_dataframe` may be asked for (``plan=``)
PLANS = ("auto", "native", "batches")
#: the position that carries a batch's report count in the (position, count) rows; -2: an error row
_N_ROW, _ERR_ROW = -1, -2
#: histogram keys for a null and for a value outside the range
_NULL_KEY, _OUT_KEY = -2, -1


# -- which engine, which plan --------------------------------------------------------------------
def engine_of(frame) -> str:
    """The engine that holds ``frame``: one of :data:`ENGINES`, from the frame's class (no engine is
    imported to find out).

    Parameters
    ----------
    frame : object
        A pandas DataFrame, a Polars DataFrame or LazyFrame, a DuckDB relation or a Spark DataFrame
        (classic or Spark Connect).

    Returns
    -------
    str

    Raises
    ------
    TypeError
        ``frame`` is none of these.

    Examples
    --------
    >>> import pandas as pd
    >>> from ldpopt.aggregate.frames import engine_of
    >>> engine_of(pd.DataFrame({"value": [0, 1]}))
    'pandas'
    """
    for cls in type(frame).__mro__:
        mod, name = cls.__module__.split(".")[0], cls.__name__
        if mod == "pandas" and name == "DataFrame":
            return "pandas"
        if mod == "polars" and name in ("DataFrame", "LazyFrame"):
            return "polars" if name == "DataFrame" else "polars-lazy"
        if mod in ("duckdb", "_duckdb") and name == "DuckDBPyRelation":
            return "duckdb"
        if mod == "pyspark" and cls.__module__.startswith("pyspark.sql") and name == "DataFrame":
            return "spark"
    raise TypeError(f"frame must be a pandas DataFrame, a Polars DataFrame or LazyFrame, a DuckDB relation or a "
                    f"Spark DataFrame, got {type(frame).__module__}.{type(frame).__name__}")


def _columns_of(oracle) -> tuple[ReportColumn, ...]:
    if not isinstance(oracle, FrequencyOracle):
        raise TypeError(f"oracle must be a FrequencyOracle (ldpopt.oracles.get(...)), got {type(oracle).__name__}")
    try:
        return oracle.report_columns()
    except ValueError as exc:
        raise ValueError(f"oracle: {exc}; only an oracle that declares report_columns can be read from a table") from None


def plan_of(oracle: FrequencyOracle) -> tuple:
    """How :func:`from_dataframe` counts ``oracle``'s reports by default: ``("native", "histogram",
    column, size, finish)`` for an oracle whose support counts are a histogram of one integer
    column (GRR and its subclasses: over d; HR: over K, ``finish`` its FWHT step), ``("native",
    "subset", column, k)`` for SS, ``("batches",)`` for every other oracle.

    The choice is made on the oracle's ``aggregate`` and ``report_columns`` methods being those of
    GRR, HR or SS (an oracle of one's own that overrides either gets the batch plan, which calls its
    own ``aggregate``).

    Parameters
    ----------
    oracle : FrequencyOracle

    Returns
    -------
    tuple

    Examples
    --------
    >>> from ldpopt import oracles
    >>> from ldpopt.aggregate.frames import plan_of
    >>> plan_of(oracles.get("grr", 1.0, 4))[:4], plan_of(oracles.get("olh", 1.0, 4))
    (('native', 'histogram', 'value', 4), ('batches',))
    """
    from ..oracles.grr import GRR
    from ..oracles.hadamard import HR
    from ..oracles.subset import SS

    cls = type(oracle)

    def same(base) -> bool:
        return cls.aggregate is base.aggregate and cls.report_columns is base.report_columns

    if isinstance(oracle, GRR) and same(GRR):
        return ("native", "histogram", "value", oracle.d, None)
    if isinstance(oracle, HR) and same(HR):
        return ("native", "histogram", "y", int(oracle.K), oracle._counts_from_histogram)
    if isinstance(oracle, SS) and same(SS):
        return ("native", "subset", "subset", int(oracle.k))
    return ("batches",)


# -- Arrow columns → the numpy arrays reports_from_columns reads -----------------------------------
def _int_column(col: pa.Array, name: str) -> np.ndarray:
    if not pa.types.is_integer(col.type):
        raise ValueError(f"column {name!r} must hold integers, got {col.type}")
    try:
        out = pc.cast(col, pa.int64())
    except pa.ArrowInvalid as exc:
        raise ValueError(f"column {name!r}: {str(exc).splitlines()[0]}") from None
    return np.asarray(out.to_numpy(zero_copy_only=False), dtype=np.int64)


def _bytes_column(col: pa.Array, name: str, size: int) -> np.ndarray:
    t = col.type
    if pa.types.is_fixed_size_binary(t):
        if t.byte_width != size:
            raise ValueError(f"column {name!r} must hold {size} bytes per report, got fixed_size_binary({t.byte_width})")
        if len(col) == 0:
            return np.zeros((0, size), np.uint8)
        buf = np.frombuffer(col.buffers()[1], dtype=np.uint8)
        return buf[col.offset * size:(col.offset + len(col)) * size].reshape(len(col), size)
    if not (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)):
        raise ValueError(f"column {name!r} must hold bytes, got {t}")
    if len(col) == 0:
        return np.zeros((0, size), np.uint8)
    col = pc.cast(col, pa.large_binary())
    offs = np.frombuffer(col.buffers()[1], dtype=np.int64)[col.offset:col.offset + len(col) + 1]
    lens = np.diff(offs)
    if np.any(lens != size):
        i = int(np.flatnonzero(lens != size)[0])
        raise ValueError(f"column {name!r} must hold {size} bytes per report; row {i} holds {int(lens[i])}")
    data = np.frombuffer(col.buffers()[2], dtype=np.uint8)
    return data[offs[0]:offs[-1]].reshape(len(col), size)


def _list_column(col: pa.Array, name: str, size: int) -> np.ndarray:
    t = col.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
            or pa.types.is_list_view(t)):
        raise ValueError(f"column {name!r} must hold lists of {size} integers, got {t}")
    if len(col) == 0:
        return np.zeros((0, size), np.int64)
    lens = np.asarray(pc.list_value_length(col).to_numpy(zero_copy_only=False))
    if np.any(lens != size):
        i = int(np.flatnonzero(lens != size)[0])
        raise ValueError(f"column {name!r} must hold lists of {size} integers; row {i} holds {int(lens[i])}")
    flat = col.flatten()
    if flat.null_count:
        raise ValueError(f"column {name!r} holds a null inside a list; every member must be an integer")
    return _int_column(flat, name).reshape(len(col), size)


def _arrays(oracle: FrequencyOracle, batch: pa.RecordBatch) -> list[np.ndarray]:
    out = []
    for c in oracle.report_columns():
        col = batch.column(c.name)
        if col.null_count:
            raise ValueError(f"column {c.name!r} holds {col.null_count} null(s); every row must be a report")
        if c.kind == "bytes":
            out.append(_bytes_column(col, c.name, c.size))
        elif c.kind == "int64_list":
            out.append(_list_column(col, c.name, c.size))
        else:
            out.append(_int_column(col, c.name))
    return out


def _count(oracle: FrequencyOracle, batches: Iterable[pa.RecordBatch], device) -> Partial:
    """The partial of some record batches, counted by ``oracle.aggregate`` batch by batch."""
    total = Partial.empty(oracle)
    for batch in batches:
        if batch.num_rows:
            arrays = _arrays(oracle, batch)
            try:
                part = Partial.from_reports(oracle, oracle.reports_from_columns(arrays), device=device)
            except ValueError as exc:  # the oracle's own check of its reports: say which columns hold them
                names = ", ".join(repr(c.name) for c in oracle.report_columns())
                raise ValueError(f"column(s) {names}: {str(exc).splitlines()[0]}") from None
            total = total.merge(part)
    return total


#: the schema of the (position, count) rows a batch emits
_ROWS = pa.schema([("pos", pa.int64()), ("cnt", pa.int64()), ("err", pa.string())])


def _rows(oracle: FrequencyOracle, batches: Iterable[pa.RecordBatch], device) -> pa.RecordBatch:
    """The (position, count) rows of some record batches: one row (-1, n), one per nonzero count
    (kept as h·c for RAPPOR); a malformed batch gives one error row (-2, 0, message) instead, so the
    driver raises it as one line rather than as an engine's worker traceback."""
    try:
        part = _count(oracle, batches, device)
    except ValueError as exc:
        return pa.record_batch([pa.array([_ERR_ROW]), pa.array([0]), pa.array([str(exc).splitlines()[0]])],
                               schema=_ROWS)
    nz = np.flatnonzero(part.counts)
    pos = np.concatenate([[_N_ROW], nz]).astype(np.int64)
    cnt = np.concatenate([[part.n], part.counts[nz]]).astype(np.int64)
    return pa.record_batch([pa.array(pos), pa.array(cnt), pa.nulls(len(pos), pa.string())], schema=_ROWS)


def _from_rows(oracle: FrequencyOracle, pos, cnt, err) -> Partial:
    """The partial from the engine's summed (position, count, error) rows."""
    for p, e in zip(pos, err):
        if p == _ERR_ROW:
            raise ValueError(f"frame: {e}")
    pos, cnt = np.asarray(pos, dtype=np.int64), np.asarray(cnt, dtype=np.int64)
    counts = np.zeros(oracle.d, np.int64)
    keep = pos >= 0
    counts[pos[keep]] = cnt[keep]
    n = int(cnt[pos == _N_ROW].sum())
    base = Partial.empty(oracle)
    return Partial(base.oracle, base.epsilon, base.d, dict(base.params), n, counts)


def _from_histogram(oracle: FrequencyOracle, plan: tuple, keys, counts, what: str) -> Partial:
    """The partial from a histogram of the report column (keys -2: null, -1: outside [0, size))."""
    _, _, column, size, finish = plan
    keys, counts = np.asarray(keys, dtype=np.int64), np.asarray(counts, dtype=np.int64)
    if np.any(keys == _NULL_KEY):
        raise ValueError(f"frame: column {column!r} holds {int(counts[keys == _NULL_KEY].sum())} null(s); "
                         f"every row must be a report")
    if np.any(keys == _OUT_KEY):
        raise ValueError(f"frame: column {column!r} holds {int(counts[keys == _OUT_KEY].sum())} {what} outside "
                         f"[0, {size})")
    hist = np.zeros(size, np.int64)
    hist[keys] = counts
    n = int(hist.sum())
    if n == 0:
        return Partial.empty(oracle)
    return Partial.from_counts(oracle, hist if finish is None else finish(hist), n)


def _from_subset(oracle: FrequencyOracle, plan: tuple, n: int, bad: int, keys, counts) -> Partial:
    _, _, column, k = plan
    if bad:
        raise ValueError(f"frame: column {column!r}: {bad} row(s) are not sets of k = {k} distinct integers in "
                         f"[0, {oracle.d}) (or are null)")
    if n == 0:
        return Partial.empty(oracle)
    keys, counts = np.asarray(keys, dtype=np.int64), np.asarray(counts, dtype=np.int64)
    hist = np.zeros(oracle.d, np.int64)
    hist[keys] = counts
    return Partial.from_counts(oracle, hist, n)


# -- the engines ---------------------------------------------------------------------------------
def _kind_arrow(t: pa.DataType) -> str:
    if pa.types.is_integer(t):
        return "int64"
    if (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
            or pa.types.is_binary_view(t)):
        return "bytes"
    if (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
            or pa.types.is_list_view(t)) and pa.types.is_integer(t.value_type):
        return "int64_list"
    if pa.types.is_null(t):
        return "null"
    return str(t)


def _kind_polars(t) -> str:
    pl = require("polars", "test", "from_dataframe on a Polars frame")

    if t.is_integer():
        return "int64"
    if t == pl.Binary:
        return "bytes"
    if isinstance(t, (pl.List, pl.Array)) and t.inner is not None and t.inner.is_integer():
        return "int64_list"
    if t == pl.Null:
        return "null"
    return str(t)


def _kind_duckdb(t) -> str:
    s = str(t).upper()
    if s in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "HUGEINT"):
        return "int64"
    if s == "BLOB":
        return "bytes"
    if s.endswith("]") and s.split("[")[0] in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT",
                                                "USMALLINT", "UINTEGER", "UBIGINT"):
        return "int64_list"
    if s == '"NULL"' or s == "NULL":
        return "null"
    return s


def _kind_spark(t) -> str:
    name = t.typeName()
    if name in ("long", "integer", "short", "byte"):
        return "int64"
    if name == "binary":
        return "bytes"
    if name == "array" and t.elementType.typeName() in ("long", "integer", "short", "byte"):
        return "int64_list"
    if name == "void":
        return "null"
    return t.simpleString()


_WANT = {"int64": "integers", "bytes": "bytes (binary)", "int64_list": "lists of integers"}


def _check_schema(oracle: FrequencyOracle, kinds: dict[str, str], empty_ok: bool) -> None:
    """Every report column present with the kind the oracle reads (a null-typed column: only in an
    empty pandas frame, whose object columns carry no type)."""
    cols = oracle.report_columns()
    for c in cols:
        if c.name not in kinds:
            raise ValueError(f"frame: no column {c.name!r}; oracle {oracle.name!r} reads the columns "
                             f"{[x.name for x in cols]}")
        got = kinds[c.name]
        if got != c.kind and not (got == "null" and empty_ok):
            raise TypeError(f"frame: column {c.name!r} must hold {_WANT[c.kind]} for oracle {oracle.name!r}, got {got}")


#: engines whose column references ignore case (DuckDB always; Spark unless spark.sql.caseSensitive)
_CASELESS = ("duckdb", "spark")


def _check_names(oracle: FrequencyOracle, names: list[str], caseless: bool) -> None:
    """No report column the engine could not tell from another: a name held by two columns (a DuckDB
    relation or a Spark join may carry both), or, where the engine ignores case, two names that differ
    only in case; the first would be counted silently."""
    key = (lambda x: x.casefold()) if caseless else (lambda x: x)
    for c in oracle.report_columns():
        same = [x for x in names if key(x) == key(c.name)]
        if len(same) > 1:
            spelled = ", ".join(repr(x) for x in same)
            raise ValueError(f"frame: column {c.name!r} is ambiguous: {len(same)} columns are named {spelled}"
                             f"{' (the engine ignores case)' if caseless and len(set(same)) > 1 else ''}; "
                             f"rename or drop all but one")


class _Arrow:
    """An in-process Arrow table (a pandas frame converted once; a Polars DataFrame)."""

    def __init__(self, table: pa.Table):
        self.table = table

    def kinds(self) -> dict[str, str]:
        return {f.name: _kind_arrow(f.type) for f in self.table.schema}

    def names(self) -> list[str]:
        return list(self.table.column_names)

    def batches(self, oracle, device, rows: int) -> Partial:
        names = [c.name for c in oracle.report_columns()]
        tab = self.table.select(names)
        if any(pa.types.is_null(f.type) for f in tab.schema):
            return Partial.empty(oracle)  # an empty pandas frame with untyped (object) columns
        out = _rows(oracle, tab.to_batches(max_chunksize=rows), device)
        return _from_rows(oracle, *(out.column(i).to_pylist() for i in range(3)))

    native = None  # pandas has no engine of its own: the batch plan is its group-by


def _pandas(frame) -> _Arrow:
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        twice = sorted({x for x in names if names.count(x) > 1})
        raise ValueError(f"frame: column names must be distinct; repeated: {', '.join(map(repr, twice))}")
    return _Arrow(pa.Table.from_pandas(frame, preserve_index=False))


class _Polars:
    """A Polars LazyFrame (a DataFrame is read through ``.lazy()``), run on Polars' streaming engine."""

    def __init__(self, lf):
        self.lf = lf

    def kinds(self) -> dict[str, str]:
        return {k: _kind_polars(v) for k, v in self.lf.collect_schema().items()}

    def names(self) -> list[str]:
        return list(self.lf.collect_schema().names())

    def _hist(self, expr, size: int):
        pl = require("polars", "test", "from_dataframe on a Polars frame")

        key = (pl.when(expr.is_null()).then(pl.lit(_NULL_KEY)).when((expr >= 0) & (expr < size)).then(expr)
               .otherwise(pl.lit(_OUT_KEY)).cast(pl.Int64).alias("k"))
        return self.lf.select(key).group_by("k").agg(pl.len().cast(pl.Int64).alias("c"))

    def native(self, oracle, plan) -> Partial:
        pl = require("polars", "test", "from_dataframe on a Polars frame")

        col = pl.col(plan[2])
        if plan[1] == "histogram":
            out = self._hist(col, plan[3]).collect(engine="streaming")
            return _from_histogram(oracle, plan, out["k"].to_numpy(), out["c"].to_numpy(), "value(s)")
        k, d = plan[3], oracle.d
        lst = col.cast(pl.List(pl.Int64))
        ok = ((lst.list.len() == k) & (lst.list.drop_nulls().list.n_unique() == k)
              & (lst.list.min() >= 0) & (lst.list.max() < d)).fill_null(False)
        stats = self.lf.select(pl.len().cast(pl.Int64).alias("n"), (~ok).sum().cast(pl.Int64).alias("bad"))
        member = lst.explode().alias("m")
        hist = (self.lf.select(member).filter(pl.col("m").is_not_null() & (pl.col("m") >= 0) & (pl.col("m") < d))
                .group_by("m").agg(pl.len().cast(pl.Int64).alias("c")))
        s, h = pl.collect_all([stats, hist], engine="streaming")
        return _from_subset(oracle, plan, int(s["n"][0]), int(s["bad"][0]), h["m"].to_numpy(), h["c"].to_numpy())

    def batches(self, oracle, device, rows: int) -> Partial:
        pl = require("polars", "test", "from_dataframe on a Polars frame")

        names = [c.name for c in oracle.report_columns()]

        def count(df):
            return pl.from_arrow(_rows(oracle, df.to_arrow().to_batches(max_chunksize=rows), device))

        schema = {"pos": pl.Int64, "cnt": pl.Int64, "err": pl.String}
        out = (self.lf.select(names).map_batches(count, schema=schema, streamable=True)
               .group_by("pos", "err").agg(pl.col("cnt").sum()).collect(engine="streaming"))
        return _from_rows(oracle, out["pos"].to_list(), out["cnt"].to_list(), out["err"].to_list())


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class _DuckDB:
    """A DuckDB relation: group-bys in DuckDB; the batch plan streams Arrow record batches of the report
    columns out of DuckDB into this process (DuckDB runs in it) and counts them one at a time."""

    def __init__(self, rel):
        self.rel = rel

    def kinds(self) -> dict[str, str]:
        return {c: _kind_duckdb(t) for c, t in zip(self.rel.columns, self.rel.types, strict=True)}

    def names(self) -> list[str]:
        return list(self.rel.columns)

    def _hist(self, rel, expr: str, size: int):
        key = (f"CASE WHEN {expr} IS NULL THEN {_NULL_KEY} WHEN {expr} >= 0 AND {expr} < {size} "
               f"THEN CAST({expr} AS BIGINT) ELSE {_OUT_KEY} END")
        rows = rel.aggregate(f"{key} AS k, count(*) AS c", key).fetchall()
        return [r[0] for r in rows], [r[1] for r in rows]

    def native(self, oracle, plan) -> Partial:
        col = _quote(plan[2])
        if plan[1] == "histogram":
            keys, counts = self._hist(self.rel, col, plan[3])
            return _from_histogram(oracle, plan, keys, counts, "value(s)")
        k, d = plan[3], oracle.d
        s = f"CAST({col} AS BIGINT[])"
        ok = (f"coalesce(len({s}) = {k} AND len(list_distinct({s})) = {k} AND list_min({s}) >= 0 "
              f"AND list_max({s}) < {d}, false)")
        n, bad = self.rel.aggregate(f"count(*), count(*) FILTER (WHERE NOT {ok})", "").fetchall()[0]
        members = self.rel.project(f"unnest({s}) AS m").filter(f"m IS NOT NULL AND m >= 0 AND m < {d}")
        rows = members.aggregate("m, count(*) AS c", "m").fetchall()
        return _from_subset(oracle, plan, int(n), int(bad), [r[0] for r in rows], [r[1] for r in rows])

    def batches(self, oracle, device, rows: int) -> Partial:
        names = ", ".join(_quote(c.name) for c in oracle.report_columns())
        reader = self.rel.project(names).to_arrow_reader(rows)
        out = _rows(oracle, _rebatch(reader, rows), device)
        return _from_rows(oracle, *(out.column(i).to_pylist() for i in range(3)))


def _rebatch(reader, rows: int):
    """The batches of a RecordBatchReader (DuckDB's vectors are 2048 rows: its batches are concatenated
    into batches of about ``rows`` rows before counting)."""
    held: list[pa.RecordBatch] = []
    size = 0
    for batch in reader:
        held.append(batch)
        size += batch.num_rows
        if size >= rows:
            yield pa.Table.from_batches(held).combine_chunks().to_batches()[0]
            held, size = [], 0
    if size:
        yield pa.Table.from_batches(held).combine_chunks().to_batches()[0]


class _Spark:
    """A Spark DataFrame, through the DataFrame API only (so Spark Connect works): group-bys in Spark;
    the batch plan's counting in ``mapInArrow`` on the executors, summed by a Spark group-by."""

    def __init__(self, frame):
        self.frame = frame

    def kinds(self) -> dict[str, str]:
        return {f.name: _kind_spark(f.dataType) for f in self.frame.schema.fields}

    def names(self) -> list[str]:
        return [f.name for f in self.frame.schema.fields]

    def _hist(self, frame, col, size: int):
        F = require("pyspark.sql.functions", "spark", "from_dataframe on a Spark DataFrame")

        key = (F.when(col.isNull(), F.lit(_NULL_KEY)).when((col >= 0) & (col < size), col)
               .otherwise(F.lit(_OUT_KEY)).cast("long").alias("k"))
        rows = frame.select(key).groupBy("k").count().collect()
        return [r["k"] for r in rows], [r["count"] for r in rows]

    def native(self, oracle, plan) -> Partial:
        F = require("pyspark.sql.functions", "spark", "from_dataframe on a Spark DataFrame")

        col = F.col(_backtick(plan[2]))
        if plan[1] == "histogram":
            keys, counts = self._hist(self.frame, col, plan[3])
            return _from_histogram(oracle, plan, keys, counts, "value(s)")
        k, d = plan[3], oracle.d
        s = col.cast("array<long>")
        ok = F.coalesce((F.size(s) == k) & (F.size(F.array_distinct(s)) == k) & ~F.exists(s, lambda x: x.isNull())
                        & (F.array_min(s) >= 0) & (F.array_max(s) < d), F.lit(False))
        row = self.frame.agg(F.count(F.lit(1)).alias("n"), F.sum((~ok).cast("long")).alias("bad")).collect()[0]
        members = self.frame.select(F.explode(s).alias("m")).where(F.col("m").isNotNull() & (F.col("m") >= 0)
                                                                    & (F.col("m") < d))
        rows = members.groupBy("m").count().collect()
        return _from_subset(oracle, plan, int(row["n"]), int(row["bad"] or 0), [r["m"] for r in rows],
                            [r["count"] for r in rows])

    def batches(self, oracle, device, rows: int) -> Partial:
        F = require("pyspark.sql.functions", "spark", "from_dataframe on a Spark DataFrame")

        names = [F.col(_backtick(c.name)) for c in oracle.report_columns()]

        def count(batches):  # runs on the executors, once per partition
            yield _rows(oracle, _rebatch(batches, rows), device)

        out = (self.frame.select(*names).mapInArrow(count, "pos long, cnt long, err string")
               .groupBy("pos", "err").agg(F.sum("cnt").alias("cnt")).collect())
        return _from_rows(oracle, [r["pos"] for r in out], [r["cnt"] for r in out], [r["err"] for r in out])


def _backtick(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def to_engine(table, engine: str = "pandas", *, like=None, session=None):
    """A pandas result table handed back in a dataframe engine: the way every released-cell table
    (``Uncertainty.cells``, ``hierarchy.tree_cells``, ``multi.marginal_cells``) reaches Polars,
    DuckDB or Spark with the same columns and numbers. The pandas index becomes leading columns
    (named by the index's names, ``"cell"`` where unnamed) outside pandas, which has no index.

    Parameters
    ----------
    table : pandas.DataFrame
    engine : str, default "pandas"
        One of :data:`ENGINES` (``"polars-lazy"``: a LazyFrame).
    like : frame or None
        A frame of the wanted engine (its :func:`engine_of` overrides ``engine``); a Spark frame
        also gives the session.
    session : SparkSession or None
        Spark only: the session that makes the frame (None: ``like``'s, else the active one).

    Returns
    -------
    frame of ``engine``

    Raises
    ------
    ValueError
        An unknown ``engine``, or Spark without a session.
    ImportError
        The engine's package is not installed (naming the extra that installs it).

    Examples
    --------
    >>> import pandas as pd
    >>> from ldpopt.aggregate.frames import to_engine
    >>> t = pd.DataFrame({"estimate": [0.5, 0.5], "se": [0.1, 0.1]})
    >>> to_engine(t, "polars").columns
    ['cell', 'estimate', 'se']
    """
    if like is not None:
        engine = engine_of(like)
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "pandas":
        return table
    names = [n if n is not None else ("cell" if table.index.nlevels == 1 else f"level_{i}")
             for i, n in enumerate(table.index.names)]
    flat = table.rename_axis(names).reset_index()
    if engine in ("polars", "polars-lazy"):
        pl = require("polars", "test", "a Polars table")
        out = pl.from_pandas(flat)
        return out.lazy() if engine == "polars-lazy" else out
    arrow = pa.Table.from_pandas(flat, preserve_index=False)
    if engine == "duckdb":
        duckdb = require("duckdb", "test", "a DuckDB relation")
        return duckdb.from_arrow(arrow)
    sql = require("pyspark.sql", "spark", "a Spark table")
    spark = session if session is not None else (like.sparkSession if like is not None else
                                                sql.SparkSession.getActiveSession())
    if spark is None:
        raise ValueError("session: a Spark table needs a SparkSession (pass session= or like=); none is active")
    return spark.createDataFrame(flat)


def _adapter(frame, engine: str):
    if engine == "pandas":
        return _pandas(frame)
    if engine == "polars":
        return _Polars(frame.lazy())
    if engine == "polars-lazy":
        return _Polars(frame)
    if engine == "duckdb":
        return _DuckDB(frame)
    return _Spark(frame)


def from_dataframe(frame, oracle: FrequencyOracle, *, labels=None, plan: str = "auto", device=None,
                   batch_rows: int = BATCH_ROWS) -> Partial:
    """The partial aggregate of a table of ``oracle``'s reports, counted inside the engine that holds it.

    The table has one row per report and (at least) the columns ``oracle.report_columns()`` names,
    the same names and kinds as a Parquet report shard (:func:`ldpopt.aggregate.shards.schema`):
    ``int64`` columns may be any integer type, ``bytes`` columns any binary type holding exactly
    ``size`` bytes per row (``np.packbits`` rows, as :meth:`~ldpopt.oracles.base.FrequencyOracle.reports_to_columns`
    gives them), ``int64_list`` columns lists (or fixed-size arrays) of ``size`` integers. Other
    columns are ignored. The result equals ``Partial.from_reports(oracle, reports)`` of the same
    reports bit for bit (and so the partial of their shards, :func:`~ldpopt.aggregate.shards.shard_partial`).

    Parameters
    ----------
    frame : pandas.DataFrame, polars.DataFrame, polars.LazyFrame, duckdb.DuckDBPyRelation or pyspark.sql.DataFrame
        The reports. A Spark DataFrame is read through the DataFrame API only (Spark Connect works).
    oracle : FrequencyOracle
        The oracle (with its ε, d and parameters) that produced the reports; it must declare
        ``report_columns`` (every registered oracle but the given-table ones does; an oracle of one's
        own does when it defines ``report_columns``/``reports_from_columns``).
    labels : sequence of str, optional
        d value labels, attached to the partial (:meth:`Partial.with_labels`).
    plan : {"auto", "native", "batches"}, default "auto"
        ``"native"``: the engine's group-by over the sufficient statistic (GRR, L-GRR, HR, SS only;
        :func:`plan_of`); ``"batches"``: ``oracle.aggregate`` on Arrow record batches inside the
        engine, the counts summed by the engine; ``"auto"``: native where the oracle has one. pandas
        has no engine of its own: its frame is converted to Arrow once and counted by batches.
    device : {None, "auto", "numpy", "cpu", "cuda"}, optional
        Who counts a batch (``oracle.aggregate``'s argument; None: its default). Unused by the native plan.
    batch_rows : int, default 2¹⁸
        Reports per record batch the batch plan counts at a time (bounds memory per worker).

    Returns
    -------
    Partial
        n = the table's row count; no shard identities (a table is not a shard file).

    Raises
    ------
    TypeError
        ``frame`` is not of a known engine, ``oracle`` is not an oracle, or a report column has the
        wrong type.
    ValueError
        A report column is missing, a row holds a null or a malformed report (a value outside
        [0, d), a bit row of the wrong length, a subset that is not k distinct members), an oracle
        without report columns, or a bad ``plan``/``batch_rows``.

    References
    ----------
    The support counts are each oracle's (``oracle.aggregate``): Wang et al., "Locally Differentially
    Private Protocols for Frequency Estimation", USENIX Security 2017, §4 (GRR, OUE, OLH: :math:`c_v` counts the
    reports that support v). The histogram + FWHT of HR: Acharya, Sun and Zhang, "Hadamard Response",
    AISTATS 2019, §3. SS: Ye and Barg, IEEE Trans. Inf. Theory 64(8), 2018, §III. Where the papers are
    silent: how the engine splits the table (any split gives the same integers, sums are exact in int64)
    and that a malformed row is refused before a count is returned (no partial answer).

    Examples
    --------
    >>> import pandas as pd
    >>> from ldpopt import oracles
    >>> from ldpopt.aggregate import Partial
    >>> from ldpopt.aggregate.frames import from_dataframe
    >>> olh = oracles.get("olh", epsilon=2.0, d=8)
    >>> reports = olh.perturb([0, 1, 1, 7, 3, 3, 3, 2], rng=0)
    >>> frame = pd.DataFrame(dict(zip(["seed", "hash"], olh.reports_to_columns(reports))))
    >>> from_dataframe(frame, olh) == Partial.from_reports(olh, reports)
    True
    """
    engine = engine_of(frame)
    _columns_of(oracle)
    if plan not in PLANS:
        raise ValueError(f"plan must be one of {PLANS}, got {plan!r}")
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, (int, np.integer)) or batch_rows < 1:
        raise ValueError(f"batch_rows must be an integer >= 1, got {batch_rows!r}")
    chosen = plan_of(oracle)
    if plan == "native" and chosen[0] != "native":
        raise ValueError(f"plan: 'native' is for GRR, L-GRR, HR and SS; oracle {oracle.name!r} is counted by batches")
    adapter = _adapter(frame, engine)
    _check_names(oracle, adapter.names(), engine in _CASELESS)
    _check_schema(oracle, adapter.kinds(), engine == "pandas")
    if plan != "batches" and chosen[0] == "native" and adapter.native is not None:
        part = adapter.native(oracle, chosen)
    else:
        part = adapter.batches(oracle, device, int(batch_rows))
    return part.with_labels(labels) if labels is not None else part

