"""Attacks on the oracles' report paths (ldpopt.robust.attacks / attack_counts).

* the fast path (``fake_counts``) against the per-report path (``craft_reports`` + supports) on the
  joint law of the fake counts — means and every covariance entry, two-sample z ≤ 5, fixed seeds;
* the best-bucket law of the OLH key search against enumeration of every hash of the targets;
* the simulated target gain against the closed form G = β(s̄ − rq)/(p − q) − βf_T, and that closed form
  against Cao, Jia & Gong's printed special cases (GRR and OUE/OLH MGA, input poisoning).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpopt import oracles, robust
from ldpopt.robust.attacks import padding_ones

NAMES = ["grr", "oue", "sue", "olh", "blh", "hr", "ss"]


def _two_sample_z(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Largest |z| of the mean differences and of the covariance-entry differences of two samples."""
    def se2(x):
        return x.var(axis=0, ddof=1) / x.shape[0]
    zm = np.abs(a.mean(0) - b.mean(0)) / np.sqrt(np.maximum(se2(a) + se2(b), 1e-300))
    j, k = np.triu_indices(a.shape[1])
    pa = (a - a.mean(0))[:, j] * (a - a.mean(0))[:, k]
    pb = (b - b.mean(0))[:, j] * (b - b.mean(0))[:, k]
    diff = np.abs(pa.mean(0) - pb.mean(0))
    se = np.sqrt(se2(pa) + se2(pb))
    zc = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.where(diff > 1e-9, np.inf, 0.0))
    zm = np.where(np.isnan(zm), 0.0, zm)
    return float(zm.max()), float(zc.max())


CASES = ([(name, attack, [1, 4]) for name in NAMES for attack in ("input", "mga")]
         + [("ss", "mga", [0, 1, 4, 6]), ("oue", "apa", [1, 4]), ("sue", "apa", [0, 1, 4, 6, 7])])


@pytest.mark.parametrize("name,attack,targets", CASES)
def test_fast_path_matches_per_report_path_in_joint_law(name, attack, targets):
    o = oracles.get(name, epsilon=0.5, d=8)
    reps, m, cand = 700, 4, 2  # two keys per OLH fake user: the best bucket is random, not always r
    gen = np.random.default_rng(7 + NAMES.index(name))
    reports = robust.craft_reports(o, attack, targets, reps * m, gen, candidates=cand)
    real = o.support_matrix(reports).reshape(reps, m, o.d).sum(axis=1).astype(float)
    fast = np.array([robust.fake_counts(o, attack, targets, m, gen, candidates=cand) for _ in range(reps)], float)
    zm, zc = _two_sample_z(real, fast)
    assert zm <= 5 and zc <= 5, (zm, zc)
    # the per-report path's mean target support is the closed-form s̄
    s_bar = robust.attacks.mean_target_support(o, attack, targets, candidates=cand)
    per = o.support_matrix(reports)[:, targets].sum(axis=1)
    assert abs(per.mean() - s_bar) <= 5 * per.std() / math.sqrt(per.size) + 1e-12


def test_padding_matches_expected_ones_of_a_genuine_report():
    o = oracles.get("oue", epsilon=0.5, d=8)
    rep = robust.craft_reports(o, "mga", [1, 4], 50, 0)
    ones = o.support_matrix(rep).sum(axis=1)
    assert np.all(ones == 2 + padding_ones(o, 2)) and padding_ones(o, 2) == math.floor(o.p + 7 * o.q - 2)


@pytest.mark.parametrize("r,g,cand", [(3, 3, 1), (4, 2, 3), (4, 5, 2)])
def test_best_bucket_law_against_enumeration(r, g, cand):
    sizes = np.array([max(np.bincount(h, minlength=g)) for h in itertools.product(range(g), repeat=r)])
    single = np.bincount(sizes, minlength=r + 1) / sizes.size
    cdf = np.cumsum(single) ** cand
    np.testing.assert_allclose(robust.best_bucket_pmf(r, g, cand), np.diff(np.concatenate([[0], cdf])), atol=1e-14)


def test_best_bucket_law_at_huge_g_is_all_distinct():
    pmf = robust.best_bucket_pmf(5, 1 << 30, 1000)
    assert abs(pmf.sum() - 1) < 1e-12 and pmf[1] > 0.99999 and pmf[0] == 0


@pytest.mark.parametrize("name,attack", [(n, a) for n in NAMES for a in ("input", "mga")] + [("oue", "apa")])
def test_simulated_gain_matches_closed_form(name, attack):
    d, n, beta, reps = 32, 5000, 0.05, 40
    o = oracles.get(name, epsilon=1.0, d=d)
    tc = np.random.default_rng(1).multinomial(n, np.arange(1, d + 1) ** -1.5 / (np.arange(1, d + 1) ** -1.5).sum())
    targets = [5, 20, 30]
    f_t = tc[targets].sum() / n
    gen = np.random.default_rng(2)
    gains = np.array([robust.poisoned_estimate(o, tc, attack, targets, beta, gen).f_tilde[targets].sum() - f_t
                      for _ in range(reps)])
    g_star = robust.expected_gain(o, attack, targets, beta, f_t)
    assert abs(gains.mean() - g_star) <= 5 * gains.std(ddof=1) / math.sqrt(reps)


def test_closed_form_reproduces_the_published_special_cases():
    eps, d, beta, f_t, t = 1.0, 1024, 0.05, 0.01, list(range(10))
    r = len(t)
    grr, oue, olh = (oracles.get(x, epsilon=eps, d=d) for x in ("grr", "oue", "olh"))
    e = math.exp(eps)
    # input poisoning: β(1 − f_T) for every oracle
    for o in (grr, oue, olh):
        assert robust.expected_gain(o, "input", t, beta, f_t) == pytest.approx(beta * (1 - f_t), rel=1e-12)
    # GRR MGA: β(1 − f_T) + β(d − r)q/(p − q)
    assert robust.expected_gain(grr, "mga", t, beta, f_t) == pytest.approx(
        beta * (1 - f_t) + beta * (d - r) * grr.q / (grr.p - grr.q), rel=1e-12)
    # OUE MGA: β(2r e^ε/(e^ε − 1) − f_T); OLH the same when every target shares a bucket (g = e^ε + 1)
    assert robust.expected_gain(oue, "mga", t, beta, f_t) == pytest.approx(beta * (2 * r * e / (e - 1) - f_t), rel=1e-12)
    olh_exact_g = oracles.OLH(epsilon=math.log(3.0), d=d)  # g = e^ε + 1 = 4 exactly
    assert robust.expected_gain(olh_exact_g, "mga", t[:3], beta, f_t) == pytest.approx(
        beta * (2 * 3 * 3.0 / 2.0 - f_t), rel=1e-9)  # 3 targets: some key of 1000 hashes all together
    # 10 targets: 1000 keys almost never put all 10 in one of 4 buckets, so the printed form overstates
    assert 7.5 < robust.attacks.mean_target_support(olh_exact_g, "mga", t) < 8.5


def test_apa_sizes_follow_the_genuine_law():
    o = oracles.get("oue", epsilon=1.0, d=40)
    sizes = robust.support_sizes(o, robust.craft_reports(o, "apa", [1, 2, 3], 20000, 6))
    pmf = robust.genuine_size_pmf(o)
    assert abs(sizes.mean() - np.arange(41) @ pmf) < 5 * math.sqrt((np.arange(41) ** 2 @ pmf - (np.arange(41) @ pmf) ** 2) / 20000)
    assert robust.size_test(o, sizes)[1] > 1e-3


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="OUE, SUE, OLH and BLH"):
        robust.craft_reports(oracles.get("grr", epsilon=1.0, d=8), "apa", [1], 3, 0)
    o = oracles.get("grr", epsilon=1.0, d=8)
    with pytest.raises(ValueError, match="attack"):
        robust.craft_reports(o, "nope", [1], 3, 0)
    with pytest.raises(ValueError, match="targets"):
        robust.craft_reports(o, "mga", [1, 1], 3, 0)
    with pytest.raises(ValueError, match="targets"):
        robust.craft_reports(o, "mga", list(range(8)), 3, 0)
    with pytest.raises(ValueError, match="beta"):
        robust.fake_user_count(100, 1.0)
    with pytest.raises(ValueError, match="beta"):
        robust.expected_gain(o, "mga", [1], -0.1, 0.0)


@pytest.mark.parametrize("name", ["olh", "blh"])
def test_adaptive_hashing_reports_pass_the_size_test_and_keep_most_targets(name):
    # the adaptive search matches a genuine support size: the χ² test passes where MGA's fails; each
    # report still supports far more targets than an honest one (input poisoning: p + (r − 1)q)
    o = oracles.get(name, epsilon=1.0, d=64)
    t = [3, 7, 11, 20, 40]
    apa = robust.craft_reports(o, "apa", t, 2000, 1)
    mga = robust.craft_reports(o, "mga", t, 2000, 1)
    assert robust.size_test(o, robust.support_sizes(o, apa))[1] > 1e-3
    assert robust.size_test(o, robust.support_sizes(o, mga))[1] < 1e-6
    s_apa = robust.suspect_scores(o, apa, t).mean()
    assert o.p + (len(t) - 1) * o.q + 1.0 < s_apa <= robust.suspect_scores(o, mga, t).mean()


def test_adaptive_hashing_counts_are_the_aggregate_and_its_roc_separates():
    o = oracles.get("olh", epsilon=1.0, d=64)
    t = [3, 7, 11, 20, 40]
    np.testing.assert_array_equal(robust.fake_counts(o, "apa", t, 300, 5),
                                  o.aggregate(robust.craft_reports(o, "apa", t, 300, 5)))
    w = np.arange(1, 65) ** -1.5
    values = np.random.default_rng(0).choice(64, 6000, p=w / w.sum())
    reports = np.vstack([o.perturb(values, 1), robust.craft_reports(o, "apa", t, 300, 2)])
    fake = np.r_[np.zeros(6000, bool), np.ones(300, bool)]
    _, _, auc = robust.roc(robust.suspect_scores(o, reports, t), fake)
    assert auc > 0.95


def test_best_bucket_law_at_hundreds_of_targets():
    """r! and g^r leave floating point beyond r ≈ 170 (an OLH suspect cluster of hundreds of values
    made estimate_beta raise OverflowError): the scaled series gives a law that sums to 1, puts no
    mass below r/g, and matches the unscaled one where both are finite."""
    big = robust.best_bucket_pmf(300, 4, 1000)
    assert np.isfinite(big).all() and abs(big.sum() - 1) < 1e-9 and big[: 300 // 4].sum() < 1e-9
    small = robust.best_bucket_pmf(20, 3, 50)
    ref = []
    for k in range(1, 21):  # Pr[every bucket ≤ k] by the unscaled formula, finite at r = 20
        base = [1.0 / (math.factorial(j) * 3.0 ** j) if j <= k else 0.0 for j in range(21)]
        acc = np.array([1.0] + [0.0] * 20)
        for _ in range(3):
            acc = np.convolve(acc, base)[:21]
        ref.append(min(1.0, acc[20] * math.factorial(20)))
    ref[-1] = 1.0
    cdf = np.concatenate([[0.0, 0.0], np.array(ref) ** 50])  # Pr[max ≤ k], k = −1, 0, 1, …, 20
    assert np.allclose(small, np.diff(cdf), atol=1e-12)
