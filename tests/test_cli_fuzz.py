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
