"""benchmarks/validate_choose.py: the loss ratio and the win rule at a zero best loss (exact
heavy-hitter sets), and the tie counts of its summary."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from _benchmarks import bench_module


@pytest.fixture(scope="module")
def vc():
    return bench_module("validate_choose")


def test_ratio_and_win_at_zero_best_loss(vc):
    assert vc.loss_ratio(0.0, 0.0) == 1.0 and vc.wins(0.0, 0.0)
    assert math.isinf(vc.loss_ratio(0.05, 0.0)) and not vc.wins(0.05, 0.0)
    assert vc.loss_ratio(0.3, 0.25) == pytest.approx(1.2) and vc.wins(0.3, 0.25) and not vc.wins(0.31, 0.25)
    with pytest.raises(ValueError, match="best <= chosen"):
        vc.loss_ratio(0.1, 0.2)
    with pytest.raises(ValueError, match="losses"):
        vc.loss_ratio(float("nan"), 0.0)


def test_cell_with_every_method_exact_reports_ratio_one(vc):
    # two heavy values far above phi = 0.01 at eps = 4: every method finds the set in every run, so
    # the best true loss is 0 and choose's pick ties it: ratio 1 (was 0/1e-300 = 0)
    d, n = 60, 40000
    f = np.r_[[0.5, 0.3], np.full(d - 2, 0.2 / (d - 2))]
    counts = np.round(f * n).astype(np.int64)
    ds = SimpleNamespace(name="toy", d=d, counts=counts, frequencies=counts / counts.sum())
    rows = vc.cell(ds, "oue", 4.0, ["hh:0.01"], seed=5, runs=4)
    (r,) = rows
    assert r["best_loss"] == 0.0 and r["ratio_chosen"] == 1.0 and r["win_choose"]
    assert r["n_within"] == len(vc.CLOSED_FORM)              # a cell that cannot tell the rules apart


def test_summary_counts_ties(vc):
    t = pd.DataFrame({"query": ["hh", "hh", "full"], "win_choose": [True, False, True],
                      "win_norm-sub": [True, True, False], "win_paper": [True, False, False],
                      "best_loss": [0.0, 0.1, 0.2], "n_within": [len(vc.CLOSED_FORM), 3, 1]})
    s = vc.summary(t)
    assert s.loc["hh", "exact_best"] == 1 and s.loc["hh", "all_within"] == 1
    assert s.loc["hh", "choose_open"] == 0.0 and s.loc["all", "choose_open"] == 0.5
    assert s.loc["all", "win_choose"] == pytest.approx(2 / 3) and s.loc["all", "cells"] == 3
