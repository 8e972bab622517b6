"""LDP³'s distances (task_kinds/ldpcube: L1, L2, KL, EMD) against scipy, the win-percentage table
(winrate_report) against a count by hand, and the quick LDP³ grid run end to end through the CLI
(``ldpopt experiment run ldpcube_grid --quick`` then ``ldpopt experiment winrate``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from _cli import ldpopt, main_in_process, one_line_error
from scipy.special import rel_entr
from scipy.stats import wasserstein_distance

from ldpopt.experiments.task_kinds.ldpcube import DISTANCES, emd, kl, l1, l2
from ldpopt.experiments.winrate_report import win_table, winrate_markdown, winrate_report


def test_distances_against_scipy():
    gen = np.random.default_rng(0)
    d = 17
    f, g = gen.dirichlet(np.ones(d)), gen.dirichlet(np.ones(d))
    x = np.arange(d, dtype=np.float64)
    # equal totals: EMD is the 1-D Wasserstein-1 distance on the ordered domain, unit spacing
    assert math.isclose(emd(g, f), wasserstein_distance(x, x, g, f), rel_tol=1e-10)
    assert math.isclose(l1(g, f), float(np.abs(g - f).sum()) / d, rel_tol=1e-12)
    assert math.isclose(l2(g, f), float(np.linalg.norm(g - f)), rel_tol=1e-12)
    g0 = g.copy()
    g0[[2, 5]] = 0.0
    f0 = f.copy()
    f0[7] = 0.0  # g0 > 0 there: left out, as LDP³'s mask does
    both = (g0 > 0) & (f0 > 0)
    assert math.isclose(kl(g0, f0), float(rel_entr(g0[both], f0[both]).sum()), rel_tol=1e-12)
    # unequal totals: the surplus counts once, as mass moved past the last value
    assert emd(np.array([0.5, 0.0]), np.array([0.0, 0.0])) == 1.0
    assert set(DISTANCES) == {"l1", "l2", "kl", "emd"}


def _reference_wins(t: pd.DataFrame) -> dict:
    """(oracle, metric, method) -> win share, counted rep by rep with ties split."""
    wins: dict = {}
    for (oracle, metric, _rep), g in t.groupby(["oracle", "metric", "rep"]):
        best = g["value"].min()
        tied = list(g.loc[g["value"] == best, "method"])
        for m in g["method"]:
            wins[(oracle, metric, m)] = wins.get((oracle, metric, m), 0.0) + (1 / len(tied) if m in tied else 0.0)
    return wins


def test_win_table_counts_the_lowest_error_with_ties_split():
    gen = np.random.default_rng(1)
    rows = []
    for oracle in ("oue", "grr"):
        for rep in range(7):
            vals = gen.integers(0, 3, size=3).astype(float)  # small integers: ties happen
            rows += [{"oracle": oracle, "metric": "l1", "rep": rep, "method": m, "value": v}
                     for m, v in zip(("a", "b", "c"), vals)]
    t = pd.DataFrame(rows)
    wt = win_table(t)
    ref = _reference_wins(t)
    for r in wt.itertuples():
        w = ref[(r.oracle, r.metric, r.method)] / 7
        assert r.contests == 7
        assert r.win == pytest.approx(100 * w)
        assert r.win_se == pytest.approx(100 * math.sqrt(w * (1 - w) / 7))
    assert wt.groupby("oracle")["win"].sum().round(9).eq(100).all()  # every contest is won once


def test_win_table_refuses_what_it_cannot_count():
    with pytest.raises(ValueError, match="table: .*missing \\['rep'\\]"):
        win_table(pd.DataFrame({"method": ["a"], "metric": ["l1"], "value": [1.0]}))
    with pytest.raises(ValueError, match="table: a value is not finite"):
        win_table(pd.DataFrame({"method": ["a"], "metric": ["l1"], "value": [np.nan], "rep": [0]}))
    t = pd.DataFrame({"method": ["a"], "metric": ["l1"], "value": [1.0], "rep": [0]})
    with pytest.raises(ValueError, match="metrics: \\['emd'\\] not in the results"):
        winrate_markdown(t, metrics=["emd"])


def test_quick_ldpcube_grid_through_the_cli(tmp_path):
    root = str(tmp_path)
    p = ldpopt("experiment", "run", "ldpcube_grid", "--quick", "--out", root, "--no-progress")
    assert p.returncode == 0, p.stderr
    t = pd.read_parquet(tmp_path / "ldpcube_grid-quick" / "results.parquet")
    assert set(t["oracle"]) == {"grr", "blh", "olh", "sue", "oue", "ss"}
    assert set(t["metric"]) == {"l1", "l2", "kl", "emd"}
    assert set(t["method"]) == {"base", "base-pos", "norm", "norm-cut", "norm-mul", "norm-sub", "power", "power-ns"}
    assert np.isfinite(t["value"]).all()
    assert (t.loc[t["metric"] != "kl", "value"] >= 0).all()  # LDP³'s masked KL of an unnormalised f' can be < 0
    # the run above through the real entry point; the report and the refusal in this process (the same
    # output and exit status, without a fresh interpreter's imports)
    p = main_in_process("experiment", "winrate", "ldpcube_grid", "--quick", "--out", root, "--metric", "emd")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == winrate_report("ldpcube_grid", quick=True, root=root, metrics=["emd"]).strip()
    assert "**emd**" in p.stdout and "**l1**" not in p.stdout
    # each printed win % is the hand count's
    ref = _reference_wins(t.assign(rep=t["rep"]))
    line = next(s for s in p.stdout.splitlines() if s.startswith("| zipf | oue |"))
    cells = [c.strip() for c in line.strip("|").split("|")][3:]
    methods = list(dict.fromkeys(t["method"]))
    for m, c in zip(methods, cells):
        shown = float(c.replace("**", "").split("±")[0])
        assert shown == pytest.approx(round(100 * ref[("oue", "emd", m)] / 3), abs=0.5)
    assert "metrics: ['nope'] not in the results" in one_line_error(
        main_in_process("experiment", "winrate", "ldpcube_grid", "--quick", "--out", root, "--metric", "nope"))
