"""`ldpopt postprocess --ci` and `ldpopt choose`. The first test runs the real entry point (a
subprocess: the note on stderr as the user sees it); the others call ``ldpopt.cli.main`` in this
process (``run``, ``main_in_process``: the same output and exit status, without a fresh interpreter's
imports per call)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from _cli import ldpopt as subprocess_run
from _cli import main_in_process as run
from _cli import one_line_error
from ldpopt import oracles
from ldpopt.recommend import choose
from ldpopt.uncertainty import FallbackWarning, intervals

COUNTS = [340, 300, 285, 275, 265, 250, 240, 230]
N = 1000


def _csv(path, counts=COUNTS):
    path.write_text("value,count\n" + "".join(f"{v},{c}\n" for v, c in enumerate(counts)))
    return path


def _est(counts=COUNTS):
    return oracles.get("oue", 1.0, len(counts)).estimate(np.array(counts, float), N)


def test_postprocess_ci_adds_se_lo_hi_columns_equal_to_the_api(tmp_path):
    out = tmp_path / "o.csv"
    p = subprocess_run("postprocess", "--counts", _csv(tmp_path / "c.csv"), "--oracle", "oue", "--epsilon", 1,
                       "--n", N, "--method", "norm-sub", "--ci", "0.9", "--resamples", 50, "--seed", 3, "--out", out)
    assert p.returncode == 0, p.stderr
    t = pd.read_csv(out)
    for m in ("base", "norm-sub"):
        assert {f"{m}_se", f"{m}_ci_low", f"{m}_ci_high"} <= set(t.columns)
    with pytest.warns(FallbackWarning):
        r = intervals(_est(), "norm-sub", 0.9, n_resamples=50, rng=3)
    np.testing.assert_allclose(t["norm-sub_ci_low"], r.lo, rtol=1e-12)
    np.testing.assert_allclose(t["norm-sub_ci_high"], r.hi, rtol=1e-12)
    # the per-value flag of the Base fallback, and one note on stderr with its count
    np.testing.assert_array_equal(t["norm-sub_fallback"], r.fallback.astype(int))
    assert "base_fallback" not in t.columns and r.fallback.sum() > 0  # n = 1,000: every value within 5 se
    assert f"norm-sub: {int(r.fallback.sum())} of {len(r.fallback)} values get Base's" in p.stderr
    assert p.stderr.count("note:") == 1
    b = intervals(_est(), "base", 0.9)
    np.testing.assert_allclose(t["base_se"], b.se, rtol=1e-12)
    meta = json.loads((tmp_path / "o.csv.meta.json").read_text())
    assert meta["ci"]["level"] == 0.9 and "bootstrap" in meta["ci"]["how"]["norm-sub"]
    assert "analytic" in meta["ci"]["how"]["base"]


def test_postprocess_ci_json_and_bad_level(tmp_path):
    c = _csv(tmp_path / "c.csv")
    p = run("postprocess", "--counts", c, "--oracle", "oue", "--epsilon", 1, "--n", N, "--method", "norm",
            "--ci", "0.95", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert {"norm_se", "norm_ci_low", "norm_ci_high", "base_se"} <= set(doc["columns"])
    assert all(lo <= hi for lo, hi in zip(doc["data"]["norm_ci_low"], doc["data"]["norm_ci_high"]))
    bad = run("postprocess", "--counts", c, "--oracle", "oue", "--epsilon", 1, "--n", N, "--ci", "95")
    assert bad.returncode == 2 and "--ci" in bad.stderr


def test_choose_prints_the_ranking_of_the_api(tmp_path):
    counts = [900, 40, 30, 10, 5, 0, 0, 0, 0, 15]
    c = _csv(tmp_path / "c.csv", counts)
    p = run("choose", "--counts", c, "--oracle", "oue", "--epsilon", 0.5, "--n", N, "--query", "topk:3",
            "--json", "--seed", 4)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    api = choose(_est(counts).__class__.from_counts(np.array(counts, float), N, 0.5,
                                                    *[getattr(oracles.get("oue", 0.5, 10), a) for a in "pq"],
                                                    oracle="oue"), "topk:3", rng=4)
    assert doc["best"] == api.best and [r["method"] for r in doc["ranking"]] == list(api.table.index)
    text = run("choose", "--counts", c, "--oracle", "oue", "--epsilon", 0.5, "--n", N, "--query", "topk:3")
    assert text.returncode == 0 and f"best: {api.best}" in text.stdout
    err = one_line_error(run("choose", "--counts", c, "--oracle", "oue", "--epsilon", 0.5, "--n", N,
                             "--query", "topk:99"))
    assert "K must be <= d" in err
