"""Fuzzing the ``ldpopt`` command's input files: seeded mutations of CSV and Parquet counts (``postprocess``)
and of TOML and JSON problem files (``solve``), tests/_file_mutations.py.

For every case: exit 0 with a correct output file, or exit 2 with one line on stderr naming what is
wrong, no traceback, and no file left behind (``solve`` may also exit 1, as documented: solved but not
optimal, the file written with its status). The cases run in process through the command's
``main(argv)`` with stdout and stderr captured (what the console script calls); a few run through the
real entry point in a subprocess, where warnings and exit codes reach the terminal as a user sees them.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import _file_mutations as M
import ldpopt.cli as cli
from _cli import ldpopt
from conftest import examples
from ldpopt import methods, oracles

SEED = 20_261_123
CASES = {"csv": examples(280), "parquet": examples(150), "toml": examples(50), "json": examples(40)}
OUT_SUFFIXES = (".csv", ".parquet", ".json")
# what a refusal must name (a counts file's errors name --counts and the line/row or column); the
# problem-file cases check the one-line contract only
NAMES = {"csv": ("--counts",), "parquet": ("--counts",), "toml": (), "json": ()}


@pytest.fixture(autouse=True)
def one_parser(monkeypatch):
    """main() builds its parser once here, not once per case (2/3 of a case's time; parse_args makes a
    fresh namespace each call, so the cases stay independent)."""
    monkeypatch.setattr(cli, "build_parser", functools.cache(cli.build_parser))


def _in_process(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("default")
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code
        except Exception as exc:  # noqa: BLE001 - an uncaught exception is what the user would see as a traceback
            return -1, out.getvalue(), f"Traceback: {type(exc).__name__}: {exc}"
    return code, out.getvalue(), err.getvalue()


def _read(out) -> pd.DataFrame:
    if out.suffix == ".csv":
        return pd.read_csv(out, dtype={"value": str}, keep_default_na=False)
    if out.suffix == ".parquet":
        return pd.read_parquet(out)
    doc = json.loads(out.read_text())
    return pd.DataFrame(doc["data"])[doc["columns"]]


def _check_postprocess_output(out, d_arg):
    """The file a successful run wrote: whole counts within [0, N], one row per value, and Norm-Sub of
    exactly those counts (the library's reference), summing to 1."""
    back = _read(out)
    assert list(back.columns) == ["value", "count", "base", "norm-sub"]
    c = back["count"].to_numpy(np.float64)
    assert len(c) >= 2 and np.all((c >= 0) & (c <= M.N) & (c == np.round(c)))
    if d_arg is not None:
        assert back["value"].astype(int).tolist() == list(range(d_arg))
    else:  # labels: text, none empty or missing, none repeated
        assert all(isinstance(v, str) and v.strip() for v in back["value"]) and back["value"].is_unique
    est = oracles.get("oue", 1.0, len(c)).estimate(c, M.N)
    np.testing.assert_allclose(back["base"], est.f_tilde, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(back["norm-sub"], methods.get("norm-sub").func(est), rtol=1e-9, atol=1e-12)
    assert abs(back["norm-sub"].sum() - 1) < 1e-9
    if out.suffix == ".csv":
        assert out.with_name(out.name + ".meta.json").is_file()


def _check_solve_output(out, code):
    back = _read(out)
    assert list(back.columns) == ["value", "count", "base", "f"] and len(back) == M.D_PROBLEM
    meta = json.loads(out.with_name(out.name + ".meta.json").read_text()) if out.suffix == ".csv" else None
    if code == 0:
        assert np.all(np.isfinite(back["f"].to_numpy(np.float64)))
    if meta is not None:
        assert meta["success"] is (code == 0)


def _case(kind, i, folder):
    """(argv, input files, output path, check) for case i of ``kind``; the files are written."""
    rng = np.random.default_rng([SEED, i, list(CASES).index(kind)])
    folder.mkdir()
    out = folder / ("o" + OUT_SUFFIXES[i % 3])
    if kind in ("csv", "parquet"):
        name, data, what, d_arg = M.csv_case(rng) if kind == "csv" else M.parquet_case(rng)
        (folder / name).write_bytes(data)
        argv = ["postprocess", "--counts", str(folder / name), "--oracle", "oue", "--epsilon", "1", "--n", str(M.N),
                "--method", "norm-sub", "--out", str(out)] + (["--d", str(d_arg)] if d_arg else [])
        return argv, {name}, out, what, lambda code: _check_postprocess_output(out, d_arg)
    name, data, what, _ = M.problem_case(rng, kind)
    (folder / name).write_bytes(data)
    (folder / "c.csv").write_text(M.counts_file_for_problems(rng))
    argv = ["solve", "--counts", str(folder / "c.csv"), "--oracle", "oue", "--epsilon", "1", "--n", str(M.N),
            "--problem", str(folder / name), "--out", str(out)]
    return argv, {name, "c.csv"}, out, what, lambda code: _check_solve_output(out, code)


def _verdict(code, err, folder, inputs, out, check, ok_codes, names=()) -> str | None:
    """None if the case ended as it must, else what went wrong."""
    if code in ok_codes:
        try:
            check(code)
        except Exception as exc:  # noqa: BLE001
            return f"exit {code} but the output is wrong: {type(exc).__name__}: {exc}"
        return None
    if code != 2:
        return f"exit {code}: {err.strip()[-400:]}"
    lines = err.strip().splitlines()
    if "Traceback" in err or len(lines) != 1 or "error" not in lines[0]:
        return f"exit 2 but stderr is not one error line: {err[-400:]!r}"
    if names and not any(n in lines[0] for n in names):
        return f"exit 2 but the message names none of {names}: {lines[0]}"
    left = sorted(p.name for p in folder.iterdir() if p.name not in inputs)
    return f"exit 2 but left {left}" if left else None


@pytest.mark.parametrize("kind", list(CASES))
def test_mutated_input_files_are_handled_or_named_in_one_line(kind, tmp_path, case_counter):
    ok_codes = (0,) if kind in ("csv", "parquet") else (0, 1)
    failures, codes = [], {0: 0, 1: 0, 2: 0}
    for i in range(CASES[kind]):
        folder = tmp_path / f"case{i}"
        argv, inputs, out, what, check = _case(kind, i, folder)
        code, _, err = _in_process(argv)
        case_counter(f"cli {argv[0]} ({kind} file mutations)")
        codes[code] = codes.get(code, 0) + 1
        problem = _verdict(code, err, folder, inputs, out, check, ok_codes, NAMES[kind])
        if problem:
            failures.append(f"case {i} ({what}): {problem}")
    assert not failures, f"{len(failures)} of {CASES[kind]} cases:\n" + "\n".join(failures[:15])
    # the mutations reach both outcomes: accepted files and refused files
    assert codes[0] >= CASES[kind] // 20 and codes[2] >= CASES[kind] // 4, codes


# through the real entry point: an accepted and a refused CSV, a refused Parquet file and a refused
# problem file, each in a subprocess (four at once: a process costs seconds of imports)
SUBPROCESS_CASES = [("csv", 0), ("csv", 2), ("parquet", 2), ("toml", 2)]


def test_some_cases_through_the_real_entry_point(tmp_path):
    picked = []
    for kind, want in SUBPROCESS_CASES:
        for i in range(CASES[kind]):
            folder = tmp_path / f"{kind}{want}-{i}"
            argv, inputs, out, what, check = _case(kind, i, folder)
            if _in_process(argv)[0] == want:
                for p in folder.iterdir():  # the subprocess starts from the inputs alone
                    if p.name not in inputs:
                        p.unlink()
                picked.append((kind, want, folder, inputs, out, check, argv, what))
                break
    assert [(p[0], p[1]) for p in picked] == SUBPROCESS_CASES
    with ThreadPoolExecutor(len(picked)) as pool:
        procs = list(pool.map(lambda p: ldpopt(*p[6]), picked))
    for (kind, want, folder, inputs, out, check, argv, what), proc in zip(picked, procs):
        assert proc.returncode == want, (kind, what, proc.returncode, proc.stderr)
        problem = _verdict(proc.returncode, proc.stderr, folder, inputs, out, check, (0,), NAMES[kind])
        assert problem is None, (kind, what, problem)


# -- every subcommand: seeded command lines of every kind (tests/_cli_cases.py: collisions, output
# folders, overflows, malformed data, option ranges, encodings, special files, permissions,
# --method all, valid runs, a run stopped by Ctrl-C); the whole set (600 cases, with the heavy ones)
# is benchmarks/bench_cli_fuzz.py
CLI_SEED = 20_261_124


def test_every_subcommand_ends_as_it_must(tmp_path, case_counter):
    """Each case: exit 0 with a checked output, or one error line naming the argument (exit 2), or
    exit 130 after a Ctrl-C; never a traceback or a run past its time; every input byte-identical;
    nothing left behind but a successful run's outputs."""
    import _cli_cases as C

    from ldpopt.cli._commands import COMMANDS

    results = []
    for i, case in enumerate(C.cases(CLI_SEED, examples(1), heavy=False)):
        outcome, detail = C.run_case(case, tmp_path, i, CLI_SEED)
        case_counter(f"cli {case.argv[0]} (command lines)")
        results.append((case, outcome, detail))
    bad = [f"{c.cls}: {c.what}: {o}: {d}" for c, o, d in results if o not in ("ok", "refused", "interrupted")]
    assert not bad, f"{len(bad)} of {len(results)} cases:\n" + "\n".join(bad[:15])
    assert {c.argv[0] for c, _, _ in results} == set(COMMANDS)  # every subcommand is reached
    outcomes = {o for _, o, _ in results}
    assert outcomes == {"ok", "refused", "interrupted"}, outcomes


ENTRY_POINT_CASES = ("postprocess --out = a link to --counts", "aggregate --out = a shard",
                     "perturb into a non-empty folder", "perturb --overwrite")


def test_command_lines_through_the_real_entry_point(tmp_path):
    """A few of those cases in a fresh process each (four at once), as a user runs them."""
    import _cli_cases as C

    picked = [c for c in C.cases(CLI_SEED, 1, heavy=False) if c.what in ENTRY_POINT_CASES]
    assert sorted(c.what for c in picked) == sorted(ENTRY_POINT_CASES)

    def subprocess_runner(argv, case, folder):
        proc = ldpopt(*argv, cwd=folder, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr

    with ThreadPoolExecutor(len(picked)) as pool:
        verdicts = list(pool.map(lambda ic: C.run_case(ic[1], tmp_path, ic[0], CLI_SEED, subprocess_runner),
                                 enumerate(picked)))
    for case, (outcome, detail) in zip(picked, verdicts):
        assert outcome == ("ok" if case.expect == "ok" else "refused"), (case.what, outcome, detail)


@pytest.mark.parametrize("sig, code, word", [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")])
def test_ctrl_c_leaves_the_output_folder_as_it_was(tmp_path, sig, code, word):
    """SIGINT (Ctrl-C) or SIGTERM (``kill PID``) to ``perturb --overwrite`` of 2·10^9 users (it fits
    the disk: 10^12 is refused before any work) once its first new shard is written (in the temporary
    folder beside --out): exit 130 / 143 with one line, no traceback, the old shards byte-identical
    and no temporary ``.shards.<hex>.tmp`` left behind."""
    import signal
    import subprocess
    import sys
    import time

    import _cli_cases as C
    from _cli import ROOT

    C._shards(tmp_path)
    (tmp_path / "big.csv").write_text("value,count\na,1000000000\nb,1000000000\n")
    before = C._snapshot(tmp_path)
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "ldpopt.cli", "perturb", "--histogram", "big.csv", "--oracle",
                             "grr", "--epsilon", "1", "--seed", "0", "--out", "shards", "--overwrite",
                             "--shard-rows", "100000"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".shards.*.tmp/part-00001.parquet")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    assert list(tmp_path.glob(".shards.*.tmp/part-00001.parquet")), "no shard written within 60 s"
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert proc.returncode == code, err
    assert "Traceback" not in err and lines[-1] == f"ldpopt perturb: {word}; outputs not finished were not " \
                                                  "written", err
    assert C._snapshot(tmp_path) == before  # the old shards as they were, nothing beside them
