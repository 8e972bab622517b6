"""Poisoning the hierarchical histogram (ldpopt.hierarchy.attacks): the optimal report's gain against
every other single report at every level (brute force on a small tree), the poisoned estimate against
aggregating the fake reports by hand, the goodness-of-fit test's calibration on clean draws, and the
recovery of a leaf-level attack."""

import numpy as np
import pytest
from scipy import stats

from ldpopt import hierarchy, oracles
from ldpopt.hierarchy.attacks import gof_test, poison, range_weights, refit_without_worst_level
from ldpopt.hierarchy.consistency import level_slices


def test_the_optimal_report_beats_every_other_report_at_every_level():
    rng = np.random.default_rng(0)
    est = hierarchy.collect(rng.integers(0, 200, 16), "oue", 1.0, branching=2, rng=1)
    lv = level_slices(est.tree)
    for a, b in [(3, 9), (0, 0), (5, 15)]:
        atk = poison(est, a, b, 1)
        w = range_weights(est, a, b)
        best = -np.inf
        for k in range(len(lv) - 1):
            fo = oracles.get("oue", 1.0, int(est.tree.level_size[k]))
            if est.tree.level_size[k] > 16:
                continue
            # every report at this level, brute force (all 2^size bit vectors at once)
            size = int(est.tree.level_size[k])
            R = ((np.arange(2**size)[:, None] >> np.arange(size)) & 1).astype(np.float64)
            best = max(best, float(((R - fo.q) @ w[lv[k]]).max() / ((fo.p - fo.q) * est.n_level[k])))
        first_order = atk.predicted_gain / (est.n + 1)
        assert first_order == pytest.approx(best, rel=0.05)        # the (n_k + 1) dilution aside


def test_poisoned_estimate_equals_aggregating_the_fake_reports():
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 100, 64)
    est = hierarchy.collect(counts, "oue", 2.0, branching=4, rng=3)
    atk = poison(est, 8, 30, 50)
    k = atk.level
    lv = level_slices(est.tree)
    fo = oracles.get("oue", 2.0, int(est.tree.level_size[k]))
    nk = int(est.n_level[k])
    c = (est.y[lv[k]] * (fo.p - fo.q) + fo.q) * nk + 50 * atk.report      # the genuine counts + the fakes'
    np.testing.assert_allclose(atk.estimate.y[lv[k]], (c / (nk + 50) - fo.q) / (fo.p - fo.q))
    others = np.ones(est.tree.size, bool)
    others[lv[k]] = False
    np.testing.assert_array_equal(atk.estimate.y[others], est.y[others])
    assert atk.estimate.n_level[k] == nk + 50 and atk.estimate.n == est.n + 50
    # the answer moved as predicted
    x0 = hierarchy.consistency(est.tree, est.y, est.var)[8:31].sum()
    x1 = hierarchy.consistency(est.tree, atk.estimate.y, est.var)[8:31].sum()
    assert (x1 - x0) * (est.n + 50) / 50 == pytest.approx(atk.predicted_gain)
    assert atk.predicted_gain > 1.0


def test_gof_test_is_calibrated_on_clean_draws_and_detects_and_recovers():
    rng = np.random.default_rng(4)
    counts = rng.multinomial(200_000, np.full(64, 1 / 64))
    ps = [gof_test(hierarchy.collect(counts, "oue", 1.0, branching=4, rng=rng))[2] for _ in range(60)]
    assert stats.kstest(ps, "uniform").pvalue > 1e-3                 # p-values uniform under no attack
    est = hierarchy.collect(counts, "oue", 1.0, branching=4, rng=5)
    atk = poison(est, 10, 25, 4_000)
    assert gof_test(atk.estimate)[2] < 1e-6
    x, k = refit_without_worst_level(atk.estimate)
    assert k == atk.level
    truth = counts[10:26].sum() / counts.sum()
    raw = hierarchy.consistency(est.tree, atk.estimate.y, est.var)[10:26].sum()
    assert abs(x[10:26].sum() - truth) < 0.25 * abs(raw - truth)
    with pytest.raises(ValueError, match="n_fake"):
        poison(est, 1, 2, 0)
    with pytest.raises(ValueError, match="range"):
        poison(est, 5, 70, 10)
    with pytest.raises(ValueError, match="strategy"):
        poison(est, 1, 2, 3, "mga")
    with pytest.raises(ValueError, match="unary"):
        poison(hierarchy.collect(counts, "grr", 1.0, branching=4, rng=5), 1, 2, 3)
