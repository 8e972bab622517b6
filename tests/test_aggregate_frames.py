"""Report tables in dataframe engines (ldpopt.aggregate.frames): the same Partial as ldpopt's own count.

The reference is ``Partial.from_reports(oracle, reports)`` (``oracle.aggregate``, tested elsewhere
against its support matrix) and, for the Parquet lake, ``shard_partial`` of the shards themselves; the
property is bit-identity for every registered oracle that declares report columns, on every engine
(pandas, a Polars DataFrame and LazyFrame, a DuckDB relation, a local Spark session), with the native
plan and the batch plan, on generated report sets (sizes 0 … 300, one report, the values 0 and d − 1,
duplicated rows, any batch size). Spark runs when pyspark and Java are present (the ``spark`` extra;
``.ci/run`` installs it), else its tests skip with one line saying why.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from _cli import ldpopt, main_in_process, one_line_error
from conftest import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ldpopt import oracles
from ldpopt.aggregate import Partial, from_dataframe
from ldpopt.aggregate.frames import ENGINES, engine_of, plan_of
from ldpopt.aggregate.shards import read_oracle, shard_partial, to_table, write_shard
from ldpopt.oracles.base import ReportColumn

pl = pytest.importorskip("polars", reason="polars is in the test extra")
duckdb = pytest.importorskip("duckdb", reason="duckdb is in the test extra")
pd = pytest.importorskip("pandas")

D = 11


def _has_columns(name: str) -> bool:
    try:
        oracles.get(name, 1.0, D).report_columns()
    except ValueError:
        return False
    return True


ORACLES = [n for n in oracles.available(sketches=True, longitudinal=True) if _has_columns(n)]
NATIVE = [n for n in ORACLES if plan_of(oracles.get(n, 1.0, D))[0] == "native"]
LOCAL = ("pandas", "polars", "polars-lazy", "duckdb")


def _table(orc, reports) -> pa.Table:
    return to_table(orc, reports).replace_schema_metadata(None)


def _frame(engine: str, table: pa.Table, spark=None):
    if engine == "pandas":
        return table.to_pandas()
    if engine == "polars":
        return pl.from_arrow(table)
    if engine == "polars-lazy":
        return pl.from_arrow(table).lazy()
    if engine == "duckdb":
        return duckdb.connect().from_arrow(table)
    return spark.createDataFrame(table)


def _reports(name: str, m: int, seed: int, dup: int = 0, d: int = D):
    """m reports of oracle ``name`` from values that include 0 and d − 1, the first ``dup`` rows repeated."""
    orc = oracles.get(name, 1.0, d)
    rng = np.random.default_rng(seed)
    values = rng.integers(0, d, max(m, 1))
    values[: min(m, 2)] = [0, d - 1][: min(m, 2)]
    reports = orc.perturb(values, rng)  # perturb takes at least one value: m = 0 keeps none of them
    idx = np.concatenate([np.arange(m), np.arange(min(dup, m))]).astype(np.int64)
    reports = orc.reports_from_columns([c[idx] for c in orc.reports_to_columns(reports)])
    return orc, reports


# -- every oracle, every local engine, both plans ------------------------------------------------
@pytest.mark.parametrize("engine", LOCAL)
@pytest.mark.parametrize("name", ORACLES)
def test_every_oracle_on_every_engine_is_bit_identical_to_oracle_aggregate(name, engine):
    orc, reports = _reports(name, 400, seed=7, dup=25)
    ref = Partial.from_reports(orc, reports)
    frame = _frame(engine, _table(orc, reports))
    got = from_dataframe(frame, orc, batch_rows=97)
    assert got == ref and got.n == 425 and got.counts.dtype == np.int64, (got.counts, ref.counts)
    assert from_dataframe(frame, orc, plan="batches", batch_rows=1 << 18) == ref


@st.composite
def report_sets(draw, engines=LOCAL):
    """(engine, oracle name, m, seed, duplicated rows, batch rows, plan): m from 0, 1, small and up to 300."""
    name = draw(st.sampled_from(ORACLES))
    m = draw(st.one_of(st.sampled_from([0, 1, 2]), st.integers(3, 300)))
    return (draw(st.sampled_from(engines)), name, m, draw(st.integers(0, 2**32 - 1)),
            draw(st.integers(0, 20)), draw(st.integers(1, 64)), draw(st.sampled_from(["auto", "batches"])))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=report_sets())
def test_generated_report_sets_give_the_same_partial(case):
    engine, name, m, seed, dup, rows, plan = case
    orc, reports = _reports(name, m, seed, dup)
    ref = Partial.from_reports(orc, reports)
    got = from_dataframe(_frame(engine, _table(orc, reports)), orc, plan=plan, batch_rows=rows)
    assert got == ref
    assert got.n == m + (min(dup, m) if m else 0)


@pytest.mark.parametrize("name", NATIVE)
@pytest.mark.parametrize("engine", ("polars-lazy", "duckdb"))
def test_native_plan_and_batch_plan_agree_on_large_domains(name, engine):
    """d = 300: the native group-bys (HR: K = 512 outputs and the FWHT step) against the batch plan."""
    orc, reports = _reports(name, 2000, seed=3, d=300)
    frame = _frame(engine, _table(orc, reports))
    native = from_dataframe(frame, orc, plan="native")
    assert native == from_dataframe(frame, orc, plan="batches") == Partial.from_reports(orc, reports)
    assert int(native.counts.sum()) == int(orc.aggregate(reports).sum())


def test_a_parquet_lake_read_by_duckdb_and_polars_matches_the_shards(tmp_path):
    """Shards written by ldpopt, scanned as a lake (a glob) by DuckDB and Polars, against shard_partial."""
    for name in ("olh", "oue", "grr", "ss"):
        folder = tmp_path / name
        folder.mkdir()
        parts = []
        for part in range(3):
            orc, reports = _reports(name, 150 + part, seed=part)
            write_shard(folder / f"part-{part}.parquet", orc, reports, run="r", part=part, row_group_rows=64)
            parts.append(shard_partial(folder / f"part-{part}.parquet"))
        ref = parts[0] + parts[1] + parts[2]
        orc = read_oracle(folder / "part-0.parquet")
        glob = str(folder / "*.parquet")
        by_duckdb = from_dataframe(duckdb.connect().read_parquet(glob), orc)
        by_polars = from_dataframe(pl.scan_parquet(glob), orc)
        assert by_duckdb == ref == by_polars and by_duckdb.n == 453


def test_labels_and_extra_columns():
    orc, reports = _reports("grr", 50, seed=1)
    table = _table(orc, reports).append_column("user", pa.array(np.arange(50)))
    labels = [f"v{i}" for i in range(D)]
    got = from_dataframe(pl.from_arrow(table), orc, labels=labels)
    assert got.labels == tuple(labels) and got.counts.tolist() == orc.aggregate(reports).tolist()


def test_a_plain_pandas_frame_with_python_bytes_and_int32_values():
    """A table built by hand (bytes objects, int32 values) rather than through ldpopt's Arrow schema."""
    oue = oracles.get("oue", 1.0, D)
    reports = oue.perturb(np.arange(D), rng=0)
    frame = pd.DataFrame({"bits": [bytes(r) for r in reports]})
    assert from_dataframe(frame, oue) == Partial.from_reports(oue, reports)
    grr = oracles.get("grr", 1.0, D)
    values = np.array([0, D - 1, 3, 3], dtype=np.int32)
    got = from_dataframe(pd.DataFrame({"value": values}), grr)
    assert got.counts.tolist() == np.bincount(values, minlength=D).tolist()  # an independent histogram


def test_an_oracle_of_ones_own_that_declares_its_report_columns():
    """A user oracle (GRR with its column named ``answer``) is counted by batches with its own aggregate."""

    class Renamed(oracles.GRR):
        name = "grr-renamed-frames-test"

        def report_columns(self):
            return (ReportColumn("answer", "int64"),)

    oracles.register(Renamed)
    try:
        orc = Renamed(1.0, D)
        reports = orc.perturb(np.arange(40) % D, rng=2)
        assert plan_of(orc) == ("batches",)
        for engine in LOCAL:
            frame = _frame(engine, pa.table({"answer": reports}))
            got = from_dataframe(frame, orc)
            assert got == Partial.from_reports(orc, reports) and got.oracle == Renamed.name
    finally:
        oracles._REGISTRY.pop(Renamed.name, None)


def test_engine_of_names_each_engine():
    table = pa.table({"value": [0, 1]})
    assert [engine_of(_frame(e, table)) for e in LOCAL] == list(LOCAL)
    assert set(LOCAL) < set(ENGINES)


# -- refusals: one line, naming the argument -------------------------------------------------------
@pytest.mark.parametrize("engine", LOCAL)
def test_bad_tables_are_one_line_errors_naming_frame(engine):
    grr, oue, olh, ss = (oracles.get(n, 1.0, D) for n in ("grr", "oue", "olh", "ss"))
    cases = [
        (pa.table({"val": [1, 2]}), grr, ValueError, "frame: no column 'value'"),
        (pa.table({"value": [0.5, 1.0]}), grr, TypeError, "frame: column 'value' must hold integers"),
        (pa.table({"value": [0, D]}), grr, ValueError, "[0, 11)"),
        (pa.table({"value": [0, -1, 2]}), grr, ValueError, "[0, 11)"),
        # a null: pandas holds an integer column with a null as floats (a TypeError), the others keep it
        (pa.table({"value": pa.array([0, None], pa.int64())}), grr, TypeError if engine == "pandas" else ValueError,
         "double" if engine == "pandas" else "null"),
        (pa.table({"bits": [b"\x00\x01", b"\x00"]}), oue, ValueError, "2 bytes per report"),
        (pa.table({"bits": [1, 2]}), oue, TypeError, "must hold bytes"),
        (pa.table({"seed": [1, 2]}), olh, ValueError, "frame: no column 'hash'"),
        (pa.table({"seed": [1, 2], "hash": [0, 9]}), olh, ValueError, "frame:"),
        (pa.table({"subset": [[0, 1, 1], [0, 1, 2]]}), ss, ValueError, "subset"),
        (pa.table({"subset": [[0, 1, D], [0, 1, 2]]}), ss, ValueError, "subset"),
    ]
    for table, orc, exc, words in cases:
        with pytest.raises(exc) as info:
            from_dataframe(_frame(engine, table), orc)
        msg = str(info.value)
        assert words in msg and "\n" not in msg and msg.startswith("frame"), (engine, orc.name, msg)


def test_bad_arguments_are_named():
    grr = oracles.get("grr", 1.0, D)
    frame = pd.DataFrame({"value": [0, 1]})
    for bad in ({"value": [0, 1]}, np.arange(3), pa.table({"value": [0]})):
        with pytest.raises(TypeError, match=r"^frame must be a pandas DataFrame"):
            from_dataframe(bad, grr)
    with pytest.raises(TypeError, match=r"^oracle must be a FrequencyOracle"):
        from_dataframe(frame, "grr")
    with pytest.raises(ValueError, match=r"^plan must be one of"):
        from_dataframe(frame, grr, plan="sql")
    with pytest.raises(ValueError, match=r"^plan: 'native' is for GRR"):
        from_dataframe(frame, oracles.get("olh", 1.0, D), plan="native")
    with pytest.raises(ValueError, match=r"^batch_rows must be an integer >= 1"):
        from_dataframe(frame, grr, batch_rows=0)


def test_a_report_column_the_engine_cannot_tell_apart_is_refused_on_every_engine():
    """Generated frames whose report columns are each held twice (the same name, or on DuckDB, which
    ignores case, another case) among other columns: one line naming the column, never the first copy
    counted; the same frame without the copy counts as the reports do. Polars refuses duplicate names
    itself; Spark's case is in test_spark_refusals_are_one_line."""
    import random

    rng = random.Random(20_261_126)
    for name in ("grr", "olh", "oue", "hr", "ss"):
        orc, reports = _reports(name, 40, seed=rng.randrange(100))
        table = _table(orc, reports)
        for col in table.column_names:
            other = "".join(ch.upper() if rng.random() < 0.5 else ch for ch in col)
            other = other if other != col else col.upper()
            extra = [f"x{i}" for i in range(rng.randrange(3))]
            names = table.column_names + extra
            arrays = table.columns + [pa.array(range(table.num_rows))] * len(extra)
            at = rng.randrange(len(names) + 1)
            same = pa.Table.from_arrays(arrays[:at] + [table[col]] + arrays[at:], names=names[:at] + [col] + names[at:])
            with pytest.raises(ValueError, match=rf"^frame: column names must be distinct; repeated: '{col}'$"):
                from_dataframe(same.to_pandas(), orc)
            con = duckdb.connect()
            base = con.from_arrow(pa.Table.from_arrays(arrays, names=names))
            for dup in (col, other):  # a query's projection keeps both names (from_arrow would rename one)
                rel = base.project(f'*, "{rng.choice(extra or [col])}" AS "{dup}"')
                with pytest.raises(ValueError, match=rf"^frame: column '{col}' is ambiguous: 2 columns"):
                    from_dataframe(rel, orc)
            with pytest.raises(Exception, match="(?i)duplicate|more than once"):  # Polars refuses the frame itself
                pl.from_arrow(same)
            assert from_dataframe(base, orc) == Partial.from_reports(orc, reports)


# -- the command: ldpopt aggregate --engine duckdb|polars [--sql] ------------------------------------
def test_cli_engines_give_the_dask_counts_and_keep_the_shard_rules(tmp_path, monkeypatch):
    """The same CSV from Dask, DuckDB, Polars and a DuckDB query of every row; a filtering query counts
    exactly the rows it keeps (reference: those rows' reports by oracle.aggregate); the shard rules hold.
    The Dask run goes through the real entry point (a subprocess); the others call ``ldpopt.cli.main``
    in this process (``main_in_process``: the same output and exit status, without a fresh
    interpreter's imports per call), from the same working directory."""
    monkeypatch.chdir(tmp_path)
    shards = tmp_path / "shards"
    shards.mkdir()
    orc, reports = _reports("olh", 900, seed=4)
    cols = orc.reports_to_columns(reports)
    for part in range(3):
        write_shard(shards / f"part-{part}.parquet", orc,
                    orc.reports_from_columns([c[part * 300:(part + 1) * 300] for c in cols]), run="r", part=part)
    outs = {}
    for name, extra in (("dask", ["--scheduler", "threads"]), ("duckdb", ["--engine", "duckdb"]),
                        ("polars", ["--engine", "polars"]),
                        ("sql", ["--engine", "duckdb", "--sql", "SELECT * FROM reports"])):
        if name == "dask":  # the real entry point, once
            proc = ldpopt("aggregate", shards, "--no-progress", *extra, cwd=tmp_path)
        else:
            proc = main_in_process("aggregate", shards, "--no-progress", *extra)
        assert proc.returncode == 0, proc.stderr
        outs[name] = proc.stdout
    assert len(set(outs.values())) == 1, outs
    assert pd.read_csv(io.StringIO(outs["dask"]))["count"].tolist() == orc.aggregate(reports).tolist()
    proc = main_in_process("aggregate", shards, "--engine", "duckdb", "--sql",
                           "SELECT * FROM reports WHERE seed % 2 = 0")
    keep = cols[0] % 2 == 0
    got = pd.read_csv(io.StringIO(proc.stdout))["count"].tolist()
    assert got == orc.aggregate(reports[keep]).tolist()
    assert main_in_process("aggregate", shards, "--engine", "polars", "--partial", tmp_path / "p.json").returncode == 0
    assert "already holds" in one_line_error(main_in_process("aggregate", shards, "--engine", "duckdb", "--merge-into",
                                                             tmp_path / "p.json"))
    refusals = {("--engine", "duckdb", "--sql", "SELECT seed FROM reports"): "--sql: frame: no column 'hash'",
                ("--sql", "SELECT * FROM reports"): "--sql: a DuckDB query; give it with --engine duckdb",
                ("--engine", "duckdb", "--sql", "SELEC"): "--sql: Parser Error",
                ("--engine", "polars", "--scheduler", "local"): "--scheduler/--workers: Dask's options",
                ("--engine", "duckdb", "--sql", "SELECT * FROM reports", "--merge-into", "p.json"): "--merge-into: not with --sql"}
    for args, words in refusals.items():
        assert words in one_line_error(main_in_process("aggregate", shards, *args)), args


# -- Spark: a local session, one per module --------------------------------------------------------
def _spark_missing() -> str | None:
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (the 'spark' extra: pip install '.[spark]')"
    java = os.environ.get("JAVA_HOME")
    if not (shutil.which("java") or (java and os.path.exists(os.path.join(java, "bin", "java")))):
        return "no Java runtime (pyspark needs Java 17+ on PATH or JAVA_HOME)"
    return None


@pytest.fixture(scope="module")
def spark():
    why = _spark_missing()
    if why:
        pytest.skip(why)
    import warnings

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark's note on pandas 3
        session = (SparkSession.builder.master("local[2]").appName("ldpopt-frames-test")
                   .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
                   .config("spark.driver.memory", "1g").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


SPARK_ORACLES = ("grr", "hr", "ss", "olh", "oue", "rappor", "cms", "rws")


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_matches_oracle_aggregate_for_each_form(spark):
    """One Spark DataFrame per oracle (two partitions), the native and the batch plan; an empty frame."""
    for name in SPARK_ORACLES:
        orc, reports = _reports(name, 300, seed=11, dup=10)
        ref = Partial.from_reports(orc, reports)
        frame = _frame("spark", _table(orc, reports), spark).repartition(2)
        assert engine_of(frame) == "spark"
        assert from_dataframe(frame, orc, batch_rows=64) == ref, name
        if name in NATIVE:
            assert from_dataframe(frame, orc, plan="batches") == ref, name
    orc, reports = _reports("olh", 0, seed=0)
    assert from_dataframe(_frame("spark", _table(orc, reports), spark), orc) == Partial.empty(orc)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_refusals_are_one_line(spark):
    grr, oue = oracles.get("grr", 1.0, D), oracles.get("oue", 1.0, D)
    cases = [(pa.table({"value": [0, D]}), grr, ValueError, "outside [0, 11)"),
             (pa.table({"bits": [b"\x00\x01", b"\x00"]}), oue, ValueError, "2 bytes per report"),
             (pa.table({"value": ["a", "b"]}), grr, TypeError, "must hold integers")]
    for table, orc, exc, words in cases:
        with pytest.raises(exc) as info:
            from_dataframe(spark.createDataFrame(table), orc)
        assert words in str(info.value) and "\n" not in str(info.value)
    for names in (["value", "value"], ["value", "VALUE"], ["seed", "value", "Value"]):
        frame = spark.createDataFrame([tuple(range(len(names)))], names)
        with pytest.raises(ValueError, match=r"^frame: column 'value' is ambiguous: .* rename or drop all but one$"):
            from_dataframe(frame, grr)



CONNECT_CHECK = """
import os, sys, warnings
warnings.simplefilter("ignore")
from pyspark.sql import SparkSession
from ldpopt import oracles
from ldpopt.aggregate import Partial, from_dataframe
from ldpopt.aggregate.frames import engine_of
from ldpopt.aggregate.shards import to_table
import numpy as np

spark = (SparkSession.builder.remote("local[2]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2").getOrCreate())
for name in ("grr", "hr", "ss", "olh", "oue"):
    orc = oracles.get(name, 1.0, 11)
    reports = orc.perturb(np.random.default_rng(5).integers(0, 11, 200), rng=6)
    frame = spark.createDataFrame(to_table(orc, reports).replace_schema_metadata(None))
    assert type(frame).__module__.startswith("pyspark.sql.connect") and engine_of(frame) == "spark"
    assert from_dataframe(frame, orc, batch_rows=50) == Partial.from_reports(orc, reports), name
spark.stop()
print("connect ok")
"""


def test_spark_connect_gives_the_same_partials(tmp_path):
    """The DataFrame API only: a Spark Connect session on a local server (``remote("local[2]")``, the
    DataFrame API over gRPC, no SparkContext in the client) counts the same, native plan (GRR, HR, SS)
    and batch plan (mapInArrow: OLH, OUE). In a child process: its own JVM, whose Python workers import
    this checkout's ldpopt (as a cluster's executors must have ldpopt installed)."""
    import importlib.util
    import subprocess

    why = _spark_missing()
    if why:
        pytest.skip(why)
    if importlib.util.find_spec("grpc") is None:
        pytest.skip("Spark Connect's client packages are not installed (the 'spark' extra: pyspark[connect])")
    import ldpopt

    root = str(Path(ldpopt.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
           "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run([sys.executable, "-c", CONNECT_CHECK], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=600, check=False)
    assert proc.returncode == 0 and "connect ok" in proc.stdout, proc.stderr[-3000:]


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_cell_table_same_numbers(spark):
    """A released-cell table handed back in Spark (``to_engine``): the index a leading column, the
    same numbers."""
    import numpy as np

    from ldpopt.aggregate.frames import to_engine
    from ldpopt.uncertainty import intervals

    orc, reports = _reports("oue", 400, seed=3, dup=1)
    est = Partial.from_reports(orc, reports).finalize()
    tab = intervals(est, "base").cells()
    frame = spark.createDataFrame(pd.DataFrame({"x": [1]}))
    out = to_engine(tab, like=frame).toPandas()
    assert out.columns.tolist() == ["cell", *tab.columns]
    for col in tab.columns:
        np.testing.assert_array_equal(out[col].to_numpy(), tab[col].to_numpy())
    with pytest.raises(ValueError, match="engine must be one of"):
        to_engine(tab, "arrow")


@pytest.mark.parametrize("kwargs", [dict(kind="int64", bits=3), dict(kind="bytes", size=2, bits=3),
                                    dict(kind="bytes", size=1, bits=-1)])
def test_a_bits_column_must_hold_its_bits(kwargs):
    from ldpopt.oracles.base import ReportColumn

    with pytest.raises(ValueError, match="bits"):
        ReportColumn("bits", **kwargs)


@pytest.mark.parametrize("bits", [1, 7, 8, 9, 33])
def test_tuple_reports_round_trip_through_their_derived_columns(bits):
    # an oracle declaring (index, packed bits) columns gets both conversions from the base class
    import types

    from ldpopt.oracles.base import FrequencyOracle, ReportColumn

    cols_of = (ReportColumn("j", "int64"), ReportColumn("bits", "bytes", (bits + 7) // 8, bits=bits))
    tupled = types.SimpleNamespace(name="tupled", report_columns=lambda: cols_of)
    gen = np.random.default_rng(bits)
    reports = (gen.integers(0, 5, 40), gen.random((40, bits)) < 0.5)
    cols = FrequencyOracle.reports_to_columns(tupled, reports)
    assert cols[0].dtype == np.int64 and cols[1].dtype == np.uint8 and cols[1].shape == (40, (bits + 7) // 8)
    j, b = FrequencyOracle.reports_from_columns(tupled, cols)
    assert np.array_equal(j, reports[0]) and np.array_equal(b, reports[1]) and b.dtype == bool
