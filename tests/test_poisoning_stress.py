"""Attacks outside the lift's threat model (ldpopt.robust.profile, .evasion, .guarded), the
poisoning-stress task kind, and the re-run of two heavy-tailed rows of the committed bench results."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from ldpopt import oracles, robust

ROOT = Path(__file__).resolve().parents[1]


def test_profile_rates_match_the_split_by_hand():
    oue = oracles.get("oue", epsilon=1.0, d=32)
    grr = oracles.get("grr", epsilon=1.0, d=32)
    t = [3, 9, 20, 30]
    # OUE: every report supports the top target, rates k/r; GRR: one target per report, rates k/Σk
    assert np.allclose(robust.profile_rates(oue, t, robust.split_shape(4)), np.arange(1, 5) / 4)
    assert np.allclose(robust.profile_rates(grr, t, robust.split_shape(4)), np.arange(1, 5) / 10)


@pytest.mark.parametrize("name", ["oue", "grr", "olh"])
def test_profile_counts_support_each_target_at_its_rate(name):
    o = oracles.get(name, epsilon=1.0, d=32)
    t = np.array([2, 5, 11, 17, 29])
    shape = [5.0, 1.0, 3.0, 0.0, 2.0]
    m = 40_000
    c = robust.profile_counts(o, t, shape, m, rng=1)
    rates = robust.profile_rates(o, t, shape)
    # each target's support count is a sum of Bernoulli(π) over the fake users (+ q for OLH's others)
    # each target's support count is a sum over the fake users of Bernoulli(π_t) (π includes the padding)
    assert np.all(np.abs(c[t] / m - rates) < 5 * np.sqrt(0.25 / m))
    assert rates[3] == rates.min() and rates[0] == rates.max()
    if name == "grr":
        assert c.sum() == m and math.isclose(rates.sum(), 1.0)


def test_profile_rejects_bad_shape():
    oue = oracles.get("oue", epsilon=1.0, d=16)
    with pytest.raises(ValueError, match="shape"):
        robust.profile_rates(oue, [1, 2], [1.0])
    with pytest.raises(ValueError, match="shape"):
        robust.profile_counts(oue, [1, 2], [0.0, 0.0], 10, rng=0)


@pytest.mark.parametrize("name", ["oue", "grr", "olh"])
def test_evasive_shape_keeps_groups_apart_and_is_realisable(name):
    o = oracles.get(name, epsilon=2.0, d=256)
    beta, n = 0.05, 1_000_000
    gap = (3 + 3) * math.sqrt(2) * 0.5 / (math.sqrt(n) * (o.p - o.q)) * (o.p - o.q) / beta  # in rate units
    t = np.arange(10)
    pi = robust.evasive_shape(o, t, beta, n)
    levels = np.unique(pi[pi > 0])
    assert np.all(np.diff(levels) >= gap * (1 - 1e-9))          # groups apart by the gap
    assert all((pi == v).sum() <= 4 for v in levels)            # at most min_size - 1 per level
    assert np.allclose(robust.profile_rates(o, t, pi)[pi > 0], pi[pi > 0])  # the fake users realise it
    if name == "grr":
        assert math.isclose(pi.sum(), 1.0)                      # GRR: the whole MGA gain kept
    with pytest.raises(ValueError, match="beta"):
        robust.evasive_shape(o, t, 0.0, n)


def test_adaptive_attacker_evades_the_lift_but_mga_does_not():
    o = oracles.get("oue", epsilon=1.0, d=256)
    tc = np.full(256, 4000)
    t = np.arange(100, 110)
    beta = 0.05
    m = robust.fake_user_count(int(tc.sum()), beta)
    n_total = int(tc.sum()) + m
    mga = o.estimate(o.sample_counts(tc, 2) + robust.fake_counts(o, "mga", t, m, 3), n_total)
    assert set(robust.lift_suspects(mga, beta)) == set(t)
    shape = robust.evasive_shape(o, t, beta, n_total)
    ada = o.estimate(o.sample_counts(tc, 2) + robust.profile_counts(o, t, shape, m, 3), n_total)
    assert robust.lift_suspects(ada, beta).size == 0
    gain = robust.lift(ada, beta)[t].sum() - (tc[t] / tc.sum()).sum()
    assert gain > 0.5  # the attack's gain survives the lift


def test_estimate_beta_and_guarded_lift():
    o = oracles.get("oue", epsilon=2.0, d=128)
    tc = np.r_[np.full(10, 400), np.full(118, 250)]  # ten values popular before any attack (1.5× 1/d)
    pop = np.arange(10)
    f = tc / tc.sum()
    beta = 0.05
    m = robust.fake_user_count(int(tc.sum()), beta)
    est = o.estimate(o.sample_counts(tc, 5) + robust.fake_counts(o, "mga", pop, m, 6), int(tc.sum()) + m)
    # the lift sets the popular targets to 1/d: genuine mass erased (10 × 0.004); the guarded lift keeps it
    assert set(robust.lift_suspects(est, beta)) == set(pop)
    assert robust.lift(est, beta)[pop].sum() - f[pop].sum() < -0.03
    assert abs(robust.guarded_lift(est, beta)[pop].sum() - f[pop].sum()) < 0.015
    # β̂ on unpopular targets is within 15 % of β; 0 without an attack on a flat population
    low = np.arange(50, 60)
    est2 = o.estimate(o.sample_counts(np.full(128, 1000), 7) + robust.fake_counts(o, "mga", low, 6737, 8), 128_000 + 6737)
    assert abs(robust.estimate_beta(est2, o) / (6737 / 134_737) - 1) < 0.15
    clean = o.estimate(o.sample_counts(np.full(128, 1000), 9), 128_000)
    assert robust.estimate_beta(clean, o) == 0.0
    with pytest.raises(ValueError, match="beta_max"):
        robust.estimate_beta(clean, o, beta_max=0.0)


def test_stress_kind_rejects_unknown_names():
    from ldpopt.experiments.task_kinds.poisoning_stress import stress_rows

    o = oracles.get("oue", epsilon=1.0, d=16)
    with pytest.raises(ValueError, match="attacks"):
        stress_rows(o, np.full(16, 100), ["mga-r4"], [0.1], np.random.default_rng(0))


def test_heavy_rows_rerun_inside_their_committed_interval():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_poisoning_stress as B

    doc = json.loads((ROOT / "benchmarks" / "results" / "poisoning_stress.json").read_text())
    assert doc["rerun_setting"] == B.RERUN["setting"]
    again = B.rerun_values(seed=doc["rerun_setting"]["seed"] + 1, reps=B.RERUN_REPS)
    for key, row in doc["rerun"].items():
        assert row["shapiro_p"] < B.HEAVY_P  # heavy-tailed by the bench's test: why the interval is bootstrapped
        lo, hi = row["rerun_interval"]
        assert lo <= again[key].mean() <= hi, (key, again[key].mean(), lo, hi)
