"""``ldpopt aggregate --engine duckdb --sql``: one read-only query runs, nothing else.

Generated statements (seeded: every statement kind DuckDB parses that is not a SELECT, a second
statement after ``;``, comments, case and whitespace varied, file names drawn at random) are refused
with one line naming ``--sql`` before anything runs; SELECTs that would read a file other than the
shards (``read_csv``, ``read_text``, ``glob``, ``read_parquet`` of another file) fail in one line,
because the engine's file access is off but for the shards; in every case no file of the working
folder is created, changed or read into the output. The cases run in process (``main``). Cost: ~2 s.
"""

from __future__ import annotations

import functools
import random

import pytest
from _cli import main_in_process, one_line_error

from ldpopt import cli, oracles
from ldpopt.aggregate.shards import write_shard

pytest.importorskip("duckdb", reason="duckdb is in the test extra")

SEED = 20_261_126
SECRET = "s3cr3t-value"


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("lake")
    shards = root / "shards"
    shards.mkdir()
    orc = oracles.get("grr", 1.0, 5)
    write_shard(shards / "part-0.parquet", orc, orc.perturb([0, 1, 2, 3, 4] * 20, rng=1), run="r", part=0)
    (root / "counts.csv").write_text("value,count\n0,1\n", encoding="utf-8")
    (root / "secret.csv").write_text(f"x\n{SECRET}\n", encoding="utf-8")
    return root


@pytest.fixture(autouse=True)
def one_parser(monkeypatch):
    """main() builds its parser once here, not once per case (parse_args makes a fresh namespace)."""
    monkeypatch.setattr(cli, "build_parser", functools.cache(cli.build_parser))


def _snapshot(root):
    return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*") if p.is_file()}


def _vary(rng: random.Random, sql: str) -> str:
    """The same statement as a user might write it: case, spacing, a leading comment."""
    words = [w.upper() if rng.random() < 0.5 else w.lower() if w.isidentifier() else w for w in sql.split(" ")]
    text = (" " * rng.randrange(1, 3)).join(words)
    return rng.choice(["", "-- note\n", "/* c */ ", "\n  "]) + text


def _refused_statements(rng: random.Random, name: str) -> list[str]:
    return [
        f"COPY (SELECT 1) TO '{name}.csv'", "COPY (SELECT * FROM reports) TO 'counts.csv'",
        f"COPY reports FROM '{name}.csv'", f"ATTACH '{name}.db' AS w", f"ATTACH '{name}.db'; SELECT 1",
        "INSTALL httpfs", "LOAD httpfs", f"CREATE TABLE {name} AS SELECT * FROM reports",
        f"CREATE VIEW {name} AS SELECT 1", "PRAGMA version", "PRAGMA enable_profiling",
        "SET enable_external_access = true", "SET threads = 1", "CALL pragma_version()",
        f"EXPORT DATABASE '{name}'", "DROP VIEW reports", "DELETE FROM reports", "INSERT INTO reports VALUES (1)",
        f"SELECT * FROM reports; COPY (SELECT 1) TO '{name}.csv'", "SELECT * FROM reports; SELECT 1",
        "SELECT * FROM reports;;SELECT 2", "EXPLAIN SELECT * FROM reports", "", "   ", "-- only a comment",
        f"DETACH {name}", "CHECKPOINT", "VACUUM", "BEGIN TRANSACTION",
    ]


def _fenced_selects(name: str) -> list[str]:
    return ["SELECT * FROM read_csv('secret.csv')", "SELECT * FROM read_text('secret.csv')",
            "SELECT * FROM glob('*')", f"SELECT * FROM read_parquet('{name}.parquet')",
            "SELECT * FROM read_csv_auto('/etc/hostname')",
            "SELECT * FROM query('COPY (SELECT 1) TO ''counts.csv''')"]


def test_only_one_select_runs_and_nothing_is_written_or_read(lake, monkeypatch):
    monkeypatch.chdir(lake)
    rng = random.Random(SEED)
    before = _snapshot(lake)
    for _ in range(2):
        name = "".join(rng.choice("abcdefghij") for _ in range(6))
        for sql in _refused_statements(rng, name):
            sql = _vary(rng, sql) if sql.strip() else sql
            line = one_line_error(main_in_process("aggregate", "shards", "--engine", "duckdb", "--sql", sql))
            assert line.startswith("ldpopt aggregate: error: --sql: "), (sql, line)
        for sql in _fenced_selects(name):
            proc = main_in_process("aggregate", "shards", "--engine", "duckdb", "--sql", sql)
            line = one_line_error(proc)
            assert "--sql" in line and SECRET not in proc.stdout + proc.stderr, (sql, line)
        assert _snapshot(lake) == before, sql
    # what a query may do still works: one SELECT (any spelling) over the shards' rows
    for sql in ("SELECT * FROM reports", "select * from reports;", "FROM reports WHERE value >= 0",
                "WITH r AS (SELECT * FROM reports) SELECT * FROM r", "-- keep all\nSELECT * FROM reports"):
        proc = main_in_process("aggregate", "shards", "--engine", "duckdb", "--sql", sql)
        assert proc.returncode == 0 and sum(int(x.split(",")[1]) for x in proc.stdout.split()[1:]) == 100, (sql, proc.stderr)
    assert _snapshot(lake) == before
