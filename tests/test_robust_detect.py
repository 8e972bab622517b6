"""Detection of fake reports (ldpopt.robust.detect): the genuine support-size law against enumeration,
the size test's behaviour with and without an attack, suspect scores against the support matrix, and
the ROC's AUC against the Mann–Whitney statistic."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldpopt import oracles, robust
from ldpopt.oracles.jointlaw import output_supports


@pytest.mark.parametrize("name", ["oue", "sue", "olh", "blh", "grr", "ss"])
def test_genuine_size_law_matches_enumeration(name):
    o = oracles.get(name, epsilon=0.7, d=6)
    P = o.output_distribution()
    size = output_supports(o).sum(axis=0)
    for x in (0, 4):
        enum = np.bincount(size, weights=P[x], minlength=o.d + 1)
        np.testing.assert_allclose(robust.genuine_size_pmf(o), enum, atol=1e-12)


@pytest.mark.parametrize("name", ["oue", "sue", "olh"])
def test_size_test_passes_genuine_reports_and_flags_mga(name):
    d, n = 128, 20000
    o = oracles.get(name, epsilon=1.0, d=d)
    gen = np.random.default_rng(3)
    vals = gen.integers(0, d, size=n)
    genuine = o.perturb(vals, gen)
    _, p_clean = robust.size_test(o, robust.support_sizes(o, genuine))
    assert p_clean > 1e-3
    fake = robust.craft_reports(o, "mga", list(range(10)), 2000, gen)
    sizes = robust.support_sizes(o, np.concatenate([genuine, fake]))
    _, p_att = robust.size_test(o, sizes)
    assert p_att < 1e-6 if name != "olh" else p_att < p_clean


@pytest.mark.parametrize("name", ["oue", "olh", "grr", "ss", "hr"])
def test_suspect_scores_and_sizes_match_the_support_matrix(name):
    o = oracles.get(name, epsilon=1.0, d=40)
    gen = np.random.default_rng(4)
    rep = o.perturb(gen.integers(0, 40, size=500), gen)
    S = o.support_matrix(rep)
    c = [3, 17, 39]
    np.testing.assert_array_equal(robust.suspect_scores(o, rep, c), S[:, c].sum(axis=1))
    np.testing.assert_array_equal(robust.support_sizes(o, rep), S.sum(axis=1))


def test_suspects_are_the_top_estimates():
    f = np.array([0.1, 0.5, -0.2, 0.3, 0.05])
    np.testing.assert_array_equal(robust.suspects(f, 2), [1, 3])
    with pytest.raises(ValueError, match="k"):
        robust.suspects(f, 5)


def test_roc_auc_is_the_mann_whitney_statistic():
    gen = np.random.default_rng(5)
    fake = gen.integers(0, 6, size=300) + 1
    real = gen.integers(0, 6, size=900)
    scores = np.concatenate([fake, real])
    is_fake = np.r_[np.ones(300, bool), np.zeros(900, bool)]
    fpr, tpr, auc = robust.roc(scores, is_fake)
    u = stats.mannwhitneyu(fake, real).statistic
    assert auc == pytest.approx(u / (300 * 900), abs=1e-12)
    assert fpr[0] == tpr[0] == 0 and fpr[-1] == tpr[-1] == 1 and np.all(np.diff(fpr) >= 0)
    with pytest.raises(ValueError, match="is_fake"):
        robust.roc(scores, np.zeros(1200, bool))


def test_size_test_rejects_bad_sizes():
    o = oracles.get("oue", epsilon=1.0, d=8)
    with pytest.raises(ValueError, match="sizes"):
        robust.size_test(o, [9])
    with pytest.raises(ValueError, match="HR"):
        robust.genuine_size_pmf(oracles.get("hr", epsilon=1.0, d=8))
