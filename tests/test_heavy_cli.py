"""``ldpopt heavy-hitters``: the command finds planted heavy strings (stdout and --out agree with the
Python API on the same seed), makes the levels consistent under ldpopt's check, and refuses bad input
with one line. The first run goes through the real entry point (a subprocess); the others call
``ldpopt.cli.main`` in this process (``main_in_process``: the same output, files and exit status,
without a fresh interpreter's imports per call)."""

from __future__ import annotations

import csv
import io

import numpy as np
from _cli import ldpopt, main_in_process, one_line_error

from ldpopt import heavy


def _strings_file(tmp_path):
    rng = np.random.default_rng(0)
    words = ["ab", "zq", "k9", "m!"] + [f"{chr(97 + i % 26)}{chr(65 + i // 26)}" for i in range(120)]
    p = np.r_[[0.25, 0.2, 0.15, 0.1], np.full(120, 0.3 / 120)]
    lines = rng.choice(words, size=6000, p=p)
    path = tmp_path / "users.txt"
    path.write_text("\n".join(lines) + "\n")
    return path, lines


def test_heavy_hitters_command_matches_the_api(tmp_path):
    path, lines = _strings_file(tmp_path)
    proc = ldpopt("heavy-hitters", "--strings", path, "--epsilon", 6, "-k", 3, "--bytes", 2, "--step", 4)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert [r["string"] for r in rows] == ["ab", "zq", "k9"]
    codes, counts = np.unique(heavy.encode(list(lines), 2), return_counts=True)
    api = heavy.pem(codes, counts, total_bits=16, epsilon=6.0, k=3, step_bits=4, rng=0)
    np.testing.assert_allclose([float(r["frequency"]) for r in rows], api.frequencies, rtol=1e-15)
    out = tmp_path / "hh.csv"
    proc = main_in_process("heavy-hitters", "--strings", path, "--epsilon", 6, "-k", 3, "--bytes", 2, "--step", 4,
                           "--consistent", "--out", out)
    assert proc.returncode == 0 and "consistent: optimal" in proc.stderr, proc.stderr
    assert [r["string"] for r in csv.DictReader(out.open())] == ["ab", "zq", "k9"]


def test_heavy_hitters_command_errors(tmp_path):
    path, _ = _strings_file(tmp_path)
    assert "exactly one of --strings" in one_line_error(main_in_process("heavy-hitters", "--epsilon", 1))
    assert "--consistent needs" in one_line_error(
        main_in_process("heavy-hitters", "--strings", path, "--epsilon", 1, "--protocol", "sfp", "--consistent"))
    assert "--bytes" in one_line_error(main_in_process("heavy-hitters", "--strings", path, "--epsilon", 1,
                                                       "--bytes", 9))
    assert "no such file" in one_line_error(main_in_process("heavy-hitters", "--strings", tmp_path / "nope",
                                                            "--epsilon", 1))
    assert "step_bits" in one_line_error(main_in_process("heavy-hitters", "--strings", path, "--epsilon", 1,
                                                         "--bytes", 2, "--step", 3, "--protocol", "treehist"))
