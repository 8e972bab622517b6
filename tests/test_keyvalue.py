"""Key–value protocols (ldpopt.keyvalue): exact ε by enumeration against hand-derived values, the
real client path and the fast path against the enumerated law of a report, unbiased pair estimates,
and the consistent problem against cvxpy (Clarabel) with its certificate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldpopt import keyvalue as kv

PROTOS = [("ue", 1), ("ue", 2), ("grr", 1), ("grr", 3)]


def _make(kind, eps, d, ell):
    return kv.privkv(eps, d) if kind == "privkv" else kv.PCKV(eps, d, ell, kind)


@pytest.mark.parametrize("kind,ell", PROTOS)
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_pckv_epsilon_exact(kind, ell, eps):
    # PCKV's allocation (Eqs. 19-20) is calibrated so the sampled report is exactly eps-LDP when ell <= d
    # (PCKV-UE spends less when ell > d: tests/test_keyvalue_padding.py)
    assert kv.epsilon(kv.PCKV(eps, 3, ell, kind)) == pytest.approx(eps, abs=1e-9)


@pytest.mark.parametrize("eps", [0.5, 2.0, 6.0])
def test_privkv_epsilon_below_composition(eps):
    # by hand: the worst ratio is max(e, 2e^2/(e+1)), e = e^{eps/2} (a missing key reports a fake value)
    e = np.exp(eps / 2)
    got = kv.epsilon(kv.privkv(eps, 3))
    assert got == pytest.approx(np.log(max(e, 2 * e * e / (e + 1))), abs=1e-9)
    assert got < eps


def _report_index(proto, report):
    if isinstance(proto, kv.PCKV) and proto.kind == "ue":
        return int(np.ravel_multi_index(tuple(np.asarray(report) + 1), (3,) * proto.K))
    return proto.outputs().index(tuple(int(t) for t in report))


def _counts_of(proto, report):
    return proto.aggregate([report]).reshape(-1)


@pytest.mark.filterwarnings("ignore::ldpopt.keyvalue.PaddingWarning")  # two keys at ell = 1: the law holds all the same
@pytest.mark.parametrize("kind,ell", [("ue", 1), ("grr", 2), ("privkv", 1)])
def test_real_and_fast_paths_follow_the_enumerated_law(kind, ell):
    proto = _make(kind, 1.5, 3, ell)
    keys, vals = np.array([0, 2]), np.array([0.6, -0.2])
    law = proto.report_distribution(keys, vals)
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    outs = proto.outputs()
    # the counts of one user identify the report: map counts -> report index
    table = {tuple(_counts_of(proto, o)): i for i, o in enumerate(outs)}
    rng = np.random.default_rng(7)
    R = 6000
    real = np.bincount([_report_index(proto, proto.perturb(keys, vals, rng)) for _ in range(R)], minlength=len(outs))
    one = kv.KVData(np.array([0, 2]), keys, vals, 3)
    fast = np.bincount([table[tuple(proto.sample_counts(one, rng).reshape(-1))] for _ in range(R)],
                       minlength=len(outs))
    for obs in (real, fast):
        keep = law * R >= 5  # pool the rare reports (chi-square validity)
        o = np.append(obs[keep], obs[~keep].sum())
        e = np.append(law[keep], law[~keep].sum()) * R
        o, e = o[e > 0], e[e > 0]
        assert stats.chisquare(o, e).pvalue > 1e-4


@pytest.mark.parametrize("kind,ell", [("ue", 2), ("grr", 2), ("privkv", 1)])
def test_fast_path_mean_and_pairs_unbiased(kind, ell):
    rng = np.random.default_rng(3)
    data = kv.power_law(300, 4, items=2, alpha=1.0, rng=1)
    proto = _make(kind, 1.0, 4, ell)
    # expected counts: the sum over users of each report's count vector weighted by its law
    C = np.array([_counts_of(proto, o) for o in proto.outputs()], dtype=float)
    expected = sum(proto.report_distribution(*data.user(u)) @ C for u in range(data.n))
    draws = np.array([proto.sample_counts(data, rng).reshape(-1) for _ in range(400)], dtype=float)
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws)) + 1e-9
    assert np.all(np.abs(draws.mean(axis=0) - expected) < 5 * se)
    # the pair estimates are unbiased for the true cell shares
    if kind == "privkv":
        return
    w = sum(proto.cell_law(*data.user(u)) for u in range(data.n)) / data.n
    pe = [proto.pairs(d.reshape(2, -1), data.n) for d in draws]
    plus = np.array([p.plus for p in pe])
    s = plus.std(axis=0, ddof=1) / np.sqrt(len(pe))
    assert np.all(np.abs(plus.mean(axis=0) - w[0, :4]) < 5 * s)
    # and the plug-in variance is of the right size (within 25 % of the spread over draws)
    assert np.allclose(np.mean([p.var_plus for p in pe], axis=0), plus.var(axis=0, ddof=1), rtol=0.25)


def test_paper_estimators_recover_truth():
    data = kv.power_law(100_000, 8, items=2, rng=0)
    F, M = data.frequencies(), data.means()
    for proto in (kv.pckv_ue(4.0, 8, 2), kv.pckv_grr(4.0, 8, 2), kv.privkv(6.0, 8)):
        est = proto.estimate(proto.sample_counts(data, rng=1), data.n)
        assert np.max(np.abs(est.freq - F)) < 0.03, proto
        top = F > 0.2
        assert np.max(np.abs(est.mean[top] - M[top])) < 0.15, proto


@pytest.mark.parametrize("proto", [kv.pckv_ue(1.0, 12, 2), kv.pckv_grr(1.0, 12, 2), kv.privkv(1.0, 12)],
                         ids=["ue", "grr", "privkv"])
def test_consistent_problem_certified_and_refereed(proto):
    data = kv.power_law(20_000, 12, items=2, rng=2)
    counts = proto.sample_counts(data, rng=3)
    ours = kv.solve_consistent(proto, counts, data.n)
    ref = kv.solve_consistent(proto, counts, data.n, solver="CLARABEL")
    assert ours.solution.status == "optimal" and ref.solution.status == "optimal"
    assert np.max(np.abs(ours.solution.f - ref.solution.f)) < 1e-6
    cert = ours.certificate
    assert cert.primal_violation < 1e-9 and abs(cert.relative_gap) < 1e-9 and cert.distance_linf < 1e-8
    assert np.all(ours.freq >= 0) and np.all(np.abs(ours.mean) <= 1)
    if isinstance(proto, kv.PCKV):
        assert ours.freq.sum() <= proto.ell + 1e-9
    else:
        assert np.all(ours.freq <= 1 + 1e-9)


def test_privkv_rest_variance_stays_positive_where_every_sampled_user_reported_holding():
    """A key all of whose few sampling users reported holding it: the plug-in share of "holds" reports
    is 1, outside the range [1 − p1, p1] the protocol can produce, and its variance was 0 there — the
    consistent problem then weighted the key by 1e300 and no solver answered it. The variance is the
    binomial one at the clipped share, p1(1 − p1)/n_j/(2p1 − 1)², and the problem is certified."""
    proto = kv.privkv(1.0, 3)
    counts = np.array([[2.0, 30.0, 40.0], [1.0, 25.0, 20.0], [3.0, 200.0, 300.0]])  # rows n1, n2, n_j
    pe = proto.pairs(counts)
    p1 = proto.p1
    assert pe.var_rest[0] == pytest.approx(p1 * (1 - p1) / 3 / (2 * p1 - 1) ** 2, rel=1e-12)
    assert np.all(pe.var_rest > 0)
    pr, _ = kv.consistent_problem(proto, counts, 500)
    sol = pr.solve()
    assert sol.status == "optimal" and sol.solver == "LDPOPT-STRUCTURED"
    ref = pr.solve(solver="CLARABEL")
    assert ref.status == "optimal" and np.max(np.abs(sol.f - ref.f)) < 1e-6


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="epsilon"):
        kv.pckv_ue(0.0, 5)
    with pytest.raises(ValueError, match="kind"):
        kv.PCKV(1.0, 5, 1, "oue")
    with pytest.raises(ValueError, match="ell"):
        kv.pckv_grr(1.0, 5, 0)
    with pytest.raises(ValueError, match="counts"):
        kv.pckv_ue(1.0, 5).estimate(np.zeros((2, 5)), 10)
    with pytest.raises(ValueError, match="values"):
        kv.KVData(np.array([0, 1]), np.array([0]), np.array([1.5]), 3)
    with pytest.raises(ValueError, match="distinct"):
        kv.KVData(np.array([0, 2]), np.array([1, 1]), np.array([0.1, 0.2]), 3)
    with pytest.raises(ValueError, match="d=5"):
        kv.privkv(1.0, 5).sample_counts(kv.power_law(10, 4, rng=0))
    with pytest.raises(TypeError, match="protocol"):
        kv.consistent_problem(object(), np.zeros((2, 3)), 3)
