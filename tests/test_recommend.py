"""ldpopt.choose picks the known-best method on constructed cases (checked against the real truth)."""

import numpy as np
import pandas as pd
import pytest

import ldpopt
from ldpopt import oracles
from ldpopt.recommend import CLOSED_FORM, losses
from ldpopt.uncertainty.resample import apply_batch, draw_counts


def _case(shape, eps=0.5, d=100, n=20000, seed=1):
    f = np.ones(d) if shape == "flat" else np.r_[[50.0, 20, 10, 5], np.zeros(d - 4)]
    f /= f.sum()
    o = oracles.get("oue", eps, d)
    tc = np.round(f * n).astype(np.int64)
    return o, tc, o.simulate(tc, seed)


def _true_losses(o, tc, est, query):
    """Ground truth: each method's mean loss over 60 fresh runs of the oracle on the real truth."""
    C = draw_counts(o, tc, 60, np.random.default_rng(99))
    F = (C / tc.sum() - o.q) / (o.p - o.q)
    q = ldpopt.uncertainty.parse_query(query)
    return {m: losses(q, apply_batch(est, m, F, counts=C), tc / tc.sum()).mean() for m in CLOSED_FORM}


def test_flat_data_small_epsilon_picks_the_true_best():
    o, tc, est = _case("flat")
    c = ldpopt.choose(est, "full", rng=0)
    true = _true_losses(o, tc, est, "full")
    assert c.best == min(true, key=true.get) == "norm-mul"
    assert list(c.table["rank"]) == list(range(1, len(CLOSED_FORM) + 1))
    assert np.all(c.table["se"] > 0) and abs(c.table["p_best"].sum() - 1) < 1e-12  # a distribution


def test_skewed_data_small_epsilon_picks_a_near_best_clipping_method():
    o, tc, est = _case("skew")
    c = ldpopt.choose(est, "full", rng=0)
    true = _true_losses(o, tc, est, "full")
    best = min(true.values())
    # the clear answer here: a method that zeroes the tail, not Base/Norm/Norm-Mul/Base-Pos
    assert c.best in {"base-cut", "norm-sub", "norm-cut", "norm-hyb", "mle-apx"}
    assert true[c.best] <= 2 * best
    # the methods that are ≥ 5× worse on this data are ranked below every near-best one
    bad = [m for m in true if true[m] > 5 * best]
    assert {"base", "norm", "norm-mul"} <= set(bad)
    assert c.table.loc[bad, "rank"].min() > c.table.loc[c.best, "rank"]
    # flat vs skewed: the choice changes
    assert c.best != ldpopt.choose(_case("flat")[2], "full", rng=0).best


def test_heavy_hitter_and_topk_queries():
    o, tc, est = _case("skew", eps=2.0)
    c = ldpopt.choose(est, "hh:0.05", rng=0)
    assert c.query.metric == "f1" and (c.table["loss"] >= 0).all() and (c.table["loss"] <= 1).all()
    true = _true_losses(o, tc, est, "hh:0.05")
    assert true[c.best] <= min(true.values()) + 0.05
    t = ldpopt.choose(est, "topk:4", methods=["base", "norm", "norm-sub", "base-cut"], rng=0)
    assert set(t.table.index) == {"base", "norm", "norm-sub", "base-cut"}
    s = ldpopt.choose(est, "subsets:10:20", rng=0)
    assert "MSE" in s.how


def test_bad_input_names_the_argument():
    _, _, est = _case("flat", d=10, n=500)
    with pytest.raises(ValueError, match="query"):
        ldpopt.choose(est, "top:3")
    with pytest.raises(ValueError, match="K must be <= d"):
        ldpopt.choose(est, "topk:11")
    with pytest.raises(ValueError, match="n_repeats"):
        ldpopt.choose(est, n_repeats=1)
    with pytest.raises(ValueError, match="method must be one of"):
        ldpopt.choose(est, methods=["nope"])
    with pytest.raises(ValueError, match="metric"):
        ldpopt.choose(est, metric="rmse")


def _zipf_case(oracle="oue", eps=0.5, d=500, n=100_000, s=1.5, seed=1):
    f = np.arange(1, d + 1.0) ** -s
    tc = np.round(f / f.sum() * n).astype(np.int64)
    o = oracles.get(oracle, eps, d)
    return o, tc, o.simulate(tc, seed)


def test_power_is_chosen_where_the_truth_says_it_wins():
    """Very skewed data (Zipf 1.5) at small ε: the power-law prior of Power fits the truth, and its
    true full-domain MSE (20 fresh runs of the real data) beats every closed form by > 1.25×; offered
    as a candidate, choose picks it. Without it (the default set) it cannot."""
    o, tc, est = _zipf_case()
    cand = ["base-cut", "norm-sub", "mle-apx", "norm-mul", "power"]
    C = draw_counts(o, tc, 20, np.random.default_rng(99))
    F = (C / tc.sum() - o.q) / (o.p - o.q)
    q = ldpopt.uncertainty.parse_query("full")
    true = {m: losses(q, apply_batch(est, m, F, counts=C), tc / tc.sum()).mean() for m in cand}
    closed = min(v for m, v in true.items() if m != "power")
    assert min(true, key=true.get) == "power" and true["power"] < closed / 1.25  # ground truth, not assumed
    c = ldpopt.choose(est, "full", methods=cand, n_repeats=10, rng=0)
    assert c.best == "power" and c.table.loc["power", "p_best"] >= 0.8
    assert "power" not in ldpopt.choose(est, "full", n_repeats=5, rng=0).table.index


def test_candidate_sets():
    from ldpopt.recommend import EXTENDED, candidates

    assert candidates() == candidates("closed-form") == list(CLOSED_FORM)
    assert candidates("extended") == list(EXTENDED) and {"power", "power-ns", "em"} <= set(EXTENDED)
    assert set(candidates("all")) >= set(EXTENDED)
    assert candidates(["norm-sub", "base", "norm-sub"]) == ["norm-sub", "base"]  # duplicates dropped
    with pytest.raises(ValueError, match="methods must be 'closed-form'"):
        candidates("closed")
    with pytest.raises(ValueError, match="at least one"):
        candidates([])
    _, _, est = _zipf_case(d=50, n=20_000, eps=2.0)
    c = ldpopt.choose(est, "topk:5", methods="extended", n_repeats=3, rng=0)
    assert set(c.table.index) == set(EXTENDED) and np.isfinite(c.table["loss"]).all()


def test_exact_ties_are_broken_by_the_stated_secondary_score():
    # heavy hitters far above phi at eps = 4: every method but Norm-Mul finds the set in every
    # repetition (1 - F1 = 0 for all): the tie must be ordered by `tiebreak` (smoothed 1 - F1),
    # not by the candidate list (which put Base first)
    from scipy.stats import norm as N

    o, tc, est = _case("skew", eps=4.0, d=200, n=50000)
    c = ldpopt.choose(est, "hh:0.05", rng=3, n_repeats=6)
    # tied: exact in both re-simulated worlds (the Norm-Sub fit's loss and the worst regret over the
    # fits); Norm-Cut, exact in the Norm-Sub world, misses a heavy value in the sparse one (it cuts when
    # the four estimates sum over 1) and is ranked below every tied method
    tied = c.table[(c.table["loss"] == 0.0) & (c.table["worst"] == 0.0)]
    assert c.table.loc["norm-cut", "worst"] > 0 and c.table.loc["norm-cut", "rank"] > len(tied)
    # a tie splits each repetition's win: the tied methods share it equally, p_best sums to 1
    assert len(tied) >= 3 and np.allclose(tied["p_best"], tied["p_best"].iloc[0], rtol=0, atol=1e-15)
    assert 0 < tied["p_best"].iloc[0] <= 1 / len(tied) + 1e-15 and abs(c.table["p_best"].sum() - 1) < 1e-12
    assert list(tied.index) == list(tied.sort_values("tiebreak", kind="stable").index)
    assert c.best == tied["tiebreak"].idxmin() and list(c.table["rank"]) == list(range(1, len(c.table) + 1))
    # the smoothed F1 against a per-row loop (the obvious path)
    from ldpopt.recommend import tiebreak

    rng = np.random.default_rng(0)
    truth = np.array([0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    F = truth + 0.05 * rng.standard_normal((4, 6))
    q = ldpopt.uncertainty.parse_query("hh:0.2")
    want = []
    for row in F:
        soft = [N.cdf((x - 0.2) / 0.03) for x in row]
        tp = sum(s for s, t in zip(soft, truth) if t >= 0.2)
        want.append(1 - 2 * tp / (sum(soft) + 2))
    assert abs(tiebreak(q, F, truth, 0.03) - np.mean(want)) < 1e-12
    full = ldpopt.uncertainty.parse_query("full")
    assert abs(tiebreak(full, F, truth, 0.03) - np.mean((F - truth) ** 2)) < 1e-15


def test_p_best_splits_ties_equally_and_sums_to_one():
    from ldpopt.recommend import win_shares

    L = np.array([[0.0, 1.0, 2.0, 0.5, np.nan],
                  [0.0, 1.0, 3.0, 0.7, np.nan],
                  [0.0, 2.0, 2.0, 0.5, np.nan]])
    # by hand, per repetition (column): all three tie; A and B; A and C; A and C; no number, won by none
    want = np.array([1 / 3 + 1 / 2 + 1 / 2 + 1 / 2, 1 / 3 + 1 / 2, 1 / 3 + 1 / 2 + 1 / 2]) / 5
    assert np.allclose(win_shares(L), want, rtol=0, atol=1e-15)
    assert abs(win_shares(L[:, :4]).sum() - 1) < 1e-15


def test_progress_bar_counts_the_candidates_and_changes_nothing(monkeypatch, capsys):
    """``choose(progress=True)`` (what ``ldpopt choose`` asks for) draws a bar on stderr once the run
    has taken PROGRESS_DELAY seconds; the ranking is the same as without it."""
    import ldpopt
    from ldpopt import recommend

    est = ldpopt.oracles.get("oue", epsilon=1.0, d=16).simulate(np.arange(16, 0, -1) * 50, rng=3)
    quiet = recommend.choose(est, n_repeats=5, rng=1)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(recommend, "PROGRESS_DELAY", 0.0)
    loud = recommend.choose(est, n_repeats=5, rng=1, progress=True)
    err = capsys.readouterr().err
    assert "choose:" in err and f"/{len(quiet.table)} " in err  # the bar counts the candidates
    pd.testing.assert_frame_equal(quiet.table, loud.table)
