"""Range-query attacks under every post-processing: on the hierarchical histogram
(ldpopt.hierarchy.attacks with ``post``) and on the HDG-like grid of 1-D and 2-D marginals
(ldpopt.multi.grid_attacks). On generated trees, grids, ranges and rectangles: the optimal attack
gains at least what the simple baselines gain and what any random report gains, the answers under
each post-processing against direct computations, the grid's agreement test's false alarms at or
below α on clean draws and its detection, and the recovery's blame."""

import numpy as np
import pytest
from scipy import stats

from ldpopt import hierarchy, multi, oracles
from ldpopt.hierarchy.attacks import POSTS, answer_from_fit, gof_test, poison, range_answer
from ldpopt.hierarchy.consistency import level_slices
from ldpopt.methods.normalize import project_simplex
from ldpopt.multi.calm_consistency import _plan, consistency_step
from ldpopt.multi.grid_attacks import (
    GRID_POSTS,
    _linear_consistency,
    _linear_consistency_adjoint,
    grid_gof_test,
    poison_grid,
    rake_blamed,
    rect_answer,
)


def _tree_case(seed):
    gen = np.random.default_rng(seed)
    branching = int(gen.choice([2, 4]))
    d = int(branching ** gen.integers(3, 5 if branching == 4 else 8))
    counts = gen.multinomial(int(gen.integers(50_000, 300_000)), gen.dirichlet(np.full(d, 0.5)))
    est = hierarchy.collect(counts, "oue", float(gen.choice([0.5, 1.0, 2.0])), branching=branching, rng=gen)
    a = int(gen.integers(0, d))
    b = int(gen.integers(a, d))
    return est, a, b, gen


@pytest.mark.parametrize("seed", range(6))
def test_tree_optimal_attack_gains_at_least_the_baselines_under_every_post(seed):
    est, a, b, gen = _tree_case(seed)
    m = max(1, est.n // 1000)
    for post in POSTS:
        opt = poison(est, a, b, m, post=post).predicted_gain
        cons = poison(est, a, b, m, "consistent", post=post).predicted_gain
        inp = poison(est, a, b, m, "input", post=post, rng=gen).predicted_gain
        # 2 % for the n_k + m dilution of one level against the spread's smaller dilution
        assert opt >= max(cons, inp) - 0.02 * abs(max(cons, inp)) - 1e-9, (post, opt, cons, inp)
        # and the attack made for another post does no better on this one
        base = range_answer(est, a, b, post)
        for other in POSTS:
            new = poison(est, a, b, m, post=other).estimate
            assert (range_answer(new, a, b, post) - base) * (est.n + m) / m <= opt + 1e-9 * max(1.0, abs(opt))


@pytest.mark.parametrize("seed", range(4))
def test_tree_optimal_report_beats_random_reports_at_its_post(seed):
    """No random unary report at any level moves the released answer more than the optimal one."""
    est, a, b, gen = _tree_case(10 + seed)
    m = max(1, est.n // 2000)
    lv = level_slices(est.tree)
    for post in ("none", "norm-sub", "gls", "gls-norm-sub"):
        best = poison(est, a, b, m, post=post).predicted_gain
        base = range_answer(est, a, b, post)
        for k in range(len(lv) - 1):
            fo = oracles.get("oue", est.epsilon, int(est.tree.level_size[k]))
            nk = int(est.n_level[k])
            for _ in range(5):
                r = (gen.random(int(est.tree.level_size[k])) < gen.random()).astype(float)
                y = est.y.copy()
                y[lv[k]] = (nk * est.y[lv[k]] + m * (r - fo.q) / (fo.p - fo.q)) / (nk + m)
                n_level = est.n_level.copy()
                n_level[k] += m
                cand = hierarchy.HierarchicalEstimate(est.tree, y, est.var, n_level, est.n + m, "oue", est.epsilon)
                gain = (range_answer(cand, a, b, post) - base) * (est.n + m) / m
                assert gain <= best + 1e-9 * max(1.0, abs(best)), (post, k, gain, best)


def test_padded_attacks_send_a_genuine_reports_bit_count_and_lose_to_the_optimal_on_linear_answers():
    """Padded fake reports set, on average, the p + (d − 1)q bits of a genuine report (the summed
    counts' excess over m times the optimal report, against its binomial law); a padded bit has
    weight <= 0, so on a linear answer the padded attack gains no more than the optimal one."""
    for seed in range(4):
        est, a, b, gen = _tree_case(60 + seed)
        m = max(50, est.n // 200)
        for post in ("none", "gls"):
            opt = poison(est, a, b, m, post=post)
            pad = poison(est, a, b, m, "padded", post=post, rng=gen)
            assert pad.level == opt.level and np.array_equal(pad.report, opt.report)
            assert pad.predicted_gain <= opt.predicted_gain + 1e-9 * max(1.0, abs(opt.predicted_gain))
            k, lv = opt.level, level_slices(est.tree)
            fo = oracles.get("oue", est.epsilon, int(est.tree.level_size[k]))
            nk = int(est.n_level[k])
            counts = (pad.estimate.y[lv[k]] * (fo.p - fo.q) + fo.q) * (nk + m) - (est.y[lv[k]] * (fo.p - fo.q) + fo.q) * nk
            extra = counts.sum() - m * opt.report.sum()
            off = int((opt.report == 0).sum())
            rate = (fo.p + (off + opt.report.sum() - 1) * fo.q - opt.report.sum()) / off
            if rate > 0:
                assert abs(extra - m * off * rate) < 5 * np.sqrt(m * off * rate * (1 - rate)) + 1e-6
    _, _, est, rect, gen = _grid_case(90, g=8)
    pad = poison_grid(est, (0, 1), rect, 2000, "padded", post="none", rng=gen)
    opt = poison_grid(est, (0, 1), rect, 2000, post="none")
    assert pad.gain <= opt.gain + 1e-9 * abs(opt.gain)


def test_tree_answers_against_direct_computation():
    for seed in range(3):
        est, a, b, _ = _tree_case(20 + seed)
        tree, lv = est.tree, level_slices(est.tree)
        cover = tree.cover(a, b)
        assert range_answer(est, a, b, "none") == pytest.approx(est.y[cover].sum())
        y = est.y.copy()
        for k in range(len(lv) - 1):
            lo, hi = int(tree.level_start[k]), int(tree.level_start[k] + tree.level_size[k])
            y[lo:hi] = project_simplex(est.y[lo:hi])
        assert range_answer(est, a, b, "norm-sub") == pytest.approx(y[cover].sum())
        x = hierarchy.consistency(tree, est.y, est.var)
        assert range_answer(est, a, b, "gls") == pytest.approx(x[a:b + 1].sum())
        nn = hierarchy.nonnegative_heuristic(tree, est.y, est.var)
        assert range_answer(est, a, b, "gls-norm-sub") == pytest.approx(nn[a:b + 1].sum())
        cr = hierarchy.clip_round(hierarchy.Tree(tree.parent), x * est.n)
        assert range_answer(est, a, b, "gls-clip-round") == pytest.approx(cr[a:b + 1].sum() / est.n)
        assert answer_from_fit(tree, x, a, b, "gls") == pytest.approx(x[a:b + 1].sum())


def test_tree_input_baseline_is_a_genuine_users_influence():
    """Fake users who report honestly move the consistent answer by about one user each (the average
    over draws, the range holding a small share of the users)."""
    counts = np.full(256, 2000)
    gains = []
    for s in range(20):
        est = hierarchy.collect(counts, "oue", 2.0, branching=4, rng=s)
        gains.append(poison(est, 40, 71, 5000, "input", post="gls", rng=100 + s).predicted_gain)
    se = np.std(gains) / np.sqrt(len(gains))
    assert abs(np.mean(gains) - (1 - 32 / 256)) < 4 * se + 0.05


def test_tree_attack_arguments():
    est = hierarchy.collect(np.full(16, 100), "oue", 1.0, rng=0)
    with pytest.raises(ValueError, match="post must be one of"):
        poison(est, 0, 3, 10, post="clip")
    with pytest.raises(ValueError, match="rng must be given"):
        poison(est, 0, 3, 10, "input")
    with pytest.raises(ValueError, match="strategy must be"):
        poison(est, 0, 3, 10, "greedy")
    with pytest.raises(ValueError, match="0 <= a <= b < d"):
        range_answer(est, 3, 16)


def test_tree_detection_of_the_new_strategies():
    counts = np.random.default_rng(5).multinomial(500_000, np.full(256, 1 / 256))
    est = hierarchy.collect(counts, "oue", 1.0, branching=4, rng=6)
    for post in ("none", "norm-sub"):
        assert gof_test(poison(est, 30, 90, 2_000, post=post).estimate)[2] < 1e-6


# ---------------------------------------------------------------- grids

def _grid_case(seed, g=None):
    gen = np.random.default_rng(seed)
    g = int(g or gen.integers(4, 11))
    data = multi.dirichlet_joint(int(gen.integers(30_000, 150_000)), 2, domains=g, alpha=float(gen.uniform(0.3, 2)),
                                 rng=gen)
    proto = multi.calm(data.domains, float(gen.choice([0.5, 1.0, 2.0])), attrs=[(0,), (1,), (0, 1)])
    est = proto.simulate(data, rng=gen)
    lo0, lo1 = (int(v) for v in gen.integers(0, g, 2))
    rect = [(lo0, int(gen.integers(lo0, g))), (lo1, int(gen.integers(lo1, g)))]
    return data, proto, est, rect, gen


@pytest.mark.parametrize("seed", range(4))
def test_grid_optimal_attack_gains_at_least_the_input_baseline_and_random_reports(seed):
    _, proto, est, rect, gen = _grid_case(seed)
    m = max(1, est.n // 1000)
    ms = est.marginals
    for post in GRID_POSTS:
        opt = poison_grid(est, (0, 1), rect, m, post=post)
        inp = poison_grid(est, (0, 1), rect, m, "input", post=post, rng=gen)
        assert opt.gain >= inp.gain - 1e-9, (post, opt.gain, inp.gain)
        for other in GRID_POSTS:                            # the attack made for another post does no better here
            new = poison_grid(est, (0, 1), rect, m, post=other).estimate
            gain = (rect_answer(new, (0, 1), rect, post) - rect_answer(est, (0, 1), rect, post)) * (est.n + m) / m
            assert gain <= opt.gain + 1e-9 * max(1.0, abs(opt.gain)), (post, other, gain, opt.gain)
        if post == "calm":
            continue                                        # iterated: the random reports below are for the one-pass posts
        base = rect_answer(est, (0, 1), rect, post)
        for i in range(ms.m):
            o = proto.oracles[i]
            for _ in range(4):
                r = (gen.random(ms.sizes[i]) < gen.random()).astype(float)
                ests = list(est.estimates)
                ests[i] = o.estimate(ests[i].counts + m * r, ests[i].n + m)
                cand = multi.MarginalEstimates(ms, tuple(ests), est.protocol, est.epsilon, est.exact_epsilon, est.n + m)
                gain = (rect_answer(cand, (0, 1), rect, post) - base) * (est.n + m) / m
                assert gain <= opt.gain + 1e-9 * max(1.0, abs(opt.gain)), (post, i, gain, opt.gain)


def test_grid_linear_step_equals_calms_own_step():
    for seed in range(3):
        _, _, est, _, gen = _grid_case(30 + seed)
        ms = est.marginals
        plan = _plan(ms, np.array([e.sigma2 for e in est.estimates]))
        F = gen.normal(size=(ms.size, 3))
        got = _linear_consistency(est, F)
        for j in range(3):
            f = F[:, j].copy()
            for i in range(ms.m):
                b = ms.block(i)
                f[b] += (1 - f[b].sum()) / (b.stop - b.start)
            np.testing.assert_allclose(got[:, j], consistency_step(f, plan), atol=1e-12)


def test_grid_adjoint_against_the_dense_linear_map():
    """The reverse passes give (L(I) − L(0))ᵀu for the linear step L, also with three attributes
    (three 2-D grids sharing 1-D margins, and the 1-D grids)."""
    for seed in range(3):
        _, _, est, _, gen = _grid_case(100 + seed)
        ests = [est]
        data = multi.dirichlet_joint(20_000, 3, domains=int(gen.integers(2, 5)), rng=gen)
        attrs = [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]
        ests.append(multi.calm(data.domains, 1.0, attrs=attrs).simulate(data, rng=gen))
        for e in ests:
            size = e.marginals.size
            L = _linear_consistency(e, np.eye(size)) - _linear_consistency(e, np.zeros((size, 1)))
            u = gen.normal(size=size)
            np.testing.assert_allclose(_linear_consistency_adjoint(e, u), L.T @ u, atol=1e-10)


def test_grid_answers_against_direct_computation():
    _, _, est, rect, _ = _grid_case(40, g=6)
    f2 = est.estimates[2].f_tilde.reshape(6, 6)
    (a0, b0), (a1, b1) = rect
    assert rect_answer(est, (0, 1), rect, "none") == pytest.approx(f2[a0:b0 + 1, a1:b1 + 1].sum())
    ns = project_simplex(est.estimates[2].f_tilde).reshape(6, 6)
    assert rect_answer(est, (0, 1), rect, "norm-sub") == pytest.approx(ns[a0:b0 + 1, a1:b1 + 1].sum())
    cm = multi.calm_consistency(est).split()[2].reshape(6, 6)
    assert rect_answer(est, (0, 1), rect, "calm") == pytest.approx(cm[a0:b0 + 1, a1:b1 + 1].sum())


def test_grid_gof_false_alarms_at_most_alpha_on_clean_draws():
    """Over generated joints and grids, the clean p-values' rate below α stays within α plus a
    binomial margin (the plug-in covariance leaves out the split's finite-population correction: the
    test is conservative)."""
    alphas = (0.05, 0.1)
    ps = []
    for seed in range(12):
        data, proto, _, _, gen = _grid_case(50 + seed)
        ps += [grid_gof_test(proto.simulate(data, rng=gen))[2] for _ in range(10)]
    ps = np.array(ps)
    for alpha in alphas:
        k = int((ps < alpha).sum())
        assert stats.binom.sf(k - 1, ps.size, alpha) > 0.001, (alpha, k, ps.size)   # not above α
    assert (ps < 0.5).mean() > 0.25                          # and not a test that never rejects


def test_grid_detection_and_blame():
    data, proto, est, _, _ = _grid_case(70, g=8)
    rect = [(1, 4), (2, 5)]
    atk = poison_grid(est, (0, 1), rect, est.n // 100, post="none")
    assert atk.marginal == 2 and grid_gof_test(atk.estimate)[2] < 1e-6
    f, blamed = rake_blamed(atk.estimate, (0, 1))
    truth = data.marginal((0, 1)).reshape(8, 8)[1:5, 2:6].sum()
    assert blamed == 2 and f.sum() == pytest.approx(1.0) and (f >= 0).all()
    assert abs(f.reshape(8, 8)[1:5, 2:6].sum() - truth) < abs(rect_answer(atk.estimate, (0, 1), rect, "none") - truth)
    # fake reports on one 1-D grid (the rows of the rectangle) are blamed on it
    for i in (0, 1):
        r = np.zeros(8)
        r[rect[i][0]:rect[i][1] + 1] = 1.0
        m = est.n // 100
        ests = list(est.estimates)
        ests[i] = proto.oracles[i].estimate(ests[i].counts + m * r, ests[i].n + m)
        lone = multi.MarginalEstimates(est.marginals, tuple(ests), est.protocol, est.epsilon, est.exact_epsilon,
                                       est.n + m)
        assert rake_blamed(lone, (0, 1))[1] == i


def test_grid_arguments():
    _, _, est, rect, _ = _grid_case(80, g=5)
    with pytest.raises(ValueError, match="post must be one of"):
        rect_answer(est, (0, 1), rect, "gls")
    with pytest.raises(ValueError, match="pair must be"):
        rect_answer(est, (1, 0), rect)
    with pytest.raises(ValueError, match="lo <= hi"):
        rect_answer(est, (0, 1), [(0, 5), (0, 1)])
    with pytest.raises(ValueError, match="rng must be given"):
        poison_grid(est, (0, 1), rect, 10, "input")
    with pytest.raises(ValueError, match="share no attribute"):
        lone = multi.calm((5, 5), 1.0, attrs=[(0, 1)]).simulate(multi.dirichlet_joint(1000, 2, domains=5, rng=0), rng=0)
        grid_gof_test(lone)
    with pytest.raises(TypeError, match="MarginalEstimates"):
        grid_gof_test(np.zeros(3))
