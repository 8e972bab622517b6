"""The certificate on the support (ldpopt/problems/check/certificate.py) against the full
computation (certificate._certify_full) on the same (f, multipliers): every reported number."""

from __future__ import annotations

import numpy as np
import pytest
from _count_estimates import grr_counts, oue_counts

from ldpopt.methods.normalize import project_simplex
from ldpopt.problems import Box, NonNegative, Simplex, SumTo
from ldpopt.problems.check.certificate import _certify_full, certify, certify_on_support, recover_multipliers
from ldpopt.problems.objectives.builtins import make_objective
from ldpopt.problems.solvers.structured import compile_constraints, separable_for, solve_structured


def _oue(d, n, seed, eps=1.0):
    return oue_counts(d, n, seed, eps, alpha=0.2)


def _grr(d, n, seed, eps=2.0):
    return grr_counts(d, n, seed, eps, alpha=0.2)


def _same(a, b, lam):
    """Equal up to the order of summation: values to 1e-7 relative; the gap to its rounding floor
    plus λ × the rounding of Σ f, and what derives from it (√(2·gap/μ) bounds) to their rounding level."""
    floor = 4 * max(a.gap_floor, b.gap_floor) + abs(lam) * 1e-14
    rnd = max(np.nan_to_num(a.distance_rounding), np.nan_to_num(b.distance_rounding))
    for key, va in a.as_dict().items():
        vb = getattr(b, key)
        if isinstance(va, dict):
            assert va.keys() == vb.keys(), key
            for k in va:
                assert np.isclose(va[k], vb[k], rtol=1e-9, atol=1e-14, equal_nan=True), (key, k, va[k], vb[k])
        elif isinstance(va, str):
            assert va == vb, key
        elif key in ("gap", "dual_value"):
            assert abs(va - vb) <= floor + 1e-12 * abs(vb), (key, va, vb)
        elif key == "relative_gap":
            assert abs(va - vb) <= floor / max(abs(a.primal_value), 1e-300) + 1e-14, (key, va, vb)
        elif key in ("distance_l2", "distance_linf", "distance_rounding"):
            # √(2·gap/μ): the squares differ by the gaps' rounding, relative to the gap
            gmin = max(min(abs(a.gap), abs(b.gap)), 1e-300)
            ok = (np.isnan(va) and np.isnan(vb)) or abs(va - vb) <= 2 * rnd + 1e-9 * abs(vb) or (
                abs(va**2 - vb**2) <= max(va, vb) ** 2 * floor / gmin)
            assert ok, (key, va, vb)
        else:
            assert np.isclose(va, vb, rtol=1e-7, atol=1e-14, equal_nan=True), (key, va, vb)
    assert a.multipliers.keys() == b.multipliers.keys()
    for k, v in b.multipliers.items():
        np.testing.assert_allclose(a.multipliers[k], v, rtol=1e-12, atol=1e-15, err_msg=k)


@pytest.mark.parametrize("objective,make", [("cls", _oue), ("weighted-mle", _oue), ("binomial", _oue),
                                             ("multinomial", _grr)])
def test_support_certificate_equals_the_full_one(objective, make):
    est = make(30_000, 10**6, 1)
    sep = separable_for(make_objective(objective), est)
    rng = np.random.default_rng(2)
    for cons in (None, [NonNegative(), SumTo(0.7)], [Simplex(), Box(upper=0.5)]):
        st = compile_constraints(cons, est.d)
        r = solve_structured(est, objective, cons)
        f0, lam0 = r.f, float(r.duals[st.sum_name])
        bad = f0.copy()
        sup = np.flatnonzero(f0 > 0)
        bad[sup[:5]] += 1e-6 / est.d  # off the optimum by a millionth of 1/d
        neg = f0.copy()
        neg[rng.integers(0, est.d, 3)] = -1e-9  # infeasible: negative values
        for f in (f0, bad, neg):
            for duals, lam in ((r.duals, lam0), (None, recover_multipliers(sep, st, f)[0])):
                got = certify_on_support(sep, st, f, lam, np.zeros(0), duals, None)
                assert got is not None
                _same(got, _certify_full(sep, st, f, lam, np.zeros(0), duals, None), lam)
        assert certify(sep, st, f0, lam0, np.zeros(0), r.duals).distance_linf <= 1e-12


def test_support_certificate_does_not_apply_where_it_should_not():
    est = _oue(30_000, 10**6, 3)
    sep = separable_for(make_objective("cls"), est)
    st = compile_constraints(None, est.d)
    f = project_simplex(est.f_tilde)
    lam = recover_multipliers(sep, st, f)[0]
    assert certify_on_support(sep, st, f, lam, np.zeros(0), None, None) is not None
    assert certify_on_support(sep, st, np.full(est.d, 1.0 / est.d), lam, np.zeros(0), None, None) is None
    small = _oue(1000, 10**6, 3)
    s2 = separable_for(make_objective("cls"), small)
    st2 = compile_constraints(None, small.d)
    assert certify_on_support(s2, st2, project_simplex(small.f_tilde), 0.0, np.zeros(0), None, None) is None


@pytest.mark.parametrize("objective", ["cls", "weighted-mle", "binomial"])
def test_support_certificate_with_rows_equals_the_full_one(objective):
    """Rows (SubsetSum ==/≤, PartitionTotals): the values left out move their A l to the right-hand
    side; every number matches the full certificate, also off the optimum and infeasible."""
    from ldpopt.problems import PartitionTotals, SubsetSum
    from ldpopt.problems.dual.multipliers import multipliers_from_dict

    est = _oue(30_000, 10**6, 4)
    d = est.d
    sep = separable_for(make_objective(objective), est)
    perm = np.random.default_rng(5).permutation(d)
    groups = {f"g{i}": g for i, g in enumerate(np.array_split(perm[: d // 2], 4))}
    for cons in ([Simplex(), SubsetSum(perm[:5000], 0.3)],
                 [Simplex(), SubsetSum(perm[:5000], 0.05, "<=")],
                 [Simplex(), PartitionTotals(groups, {k: 0.1 for k in groups})]):
        st = compile_constraints(cons, d)
        r = solve_structured(est, objective, cons)
        assert r.status == "optimal"
        lam, y = multipliers_from_dict(st, r.duals)
        bad = r.f.copy()
        bad[np.flatnonzero(r.f > 0)[:5]] += 1e-6 / d
        neg = r.f.copy()
        neg[perm[-3:]] = -1e-9
        for f in (r.f, bad, neg):
            for duals in (r.duals, None):
                got = certify_on_support(sep, st, f, lam, y, duals, None)
                assert got is not None
                _same(got, _certify_full(sep, st, f, lam, y, duals, None), lam)


class _D2One:
    def restrict(self, idx):
        return self

    def d2(self, lv):
        return np.full(np.shape(lv), 3.0)


def _rest(d1l, scale, left, l, u):
    from ldpopt.problems.check.certificate import Rest

    sc = np.asarray(scale, float)
    smax = float(np.max(sc, initial=-np.inf, where=~np.isnan(sc)))
    return Rest(d1l.size, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, np.inf, left, l, d1l, u, _D2One(), scale, smax)


@pytest.mark.parametrize("scalar_scale", [False, True])
def test_filtered_argmin_rounding_equals_the_full_test(scalar_scale):
    """Rest.argmin_rounding (values pre-filtered by a bound on the threshold) decides and returns
    exactly what the whole-domain test returns, at λ on and around the thresholds (ties, one ulp
    either side), with NaN / inf entries and fixed values (l = u)."""
    rng = np.random.default_rng(5)
    d = 5000
    d1l = rng.normal(0.0, 1.0, d) * 10.0 ** rng.integers(-3, 3, d)
    d1l[rng.integers(0, d, 20)] = np.nan
    d1l[rng.integers(0, d, 5)] = np.inf
    scale = 1.0 if scalar_scale else np.abs(rng.normal(0.0, 1e3, d))
    if not scalar_scale:
        scale[rng.integers(0, d, 10)] = np.nan
    l = np.zeros(d)
    u = np.where(rng.random(d) < 0.1, 0.0, 1.0)
    ks = rng.integers(0, d, 40)
    lams = [float(-d1l[k]) for k in ks if np.isfinite(d1l[k])]
    lams = [x for lam in lams for x in (lam, np.nextafter(lam, np.inf), np.nextafter(lam, -np.inf),
                                        lam + 1e-13 * abs(lam), lam - 1e-13 * abs(lam))]
    seen_near = 0
    for lam in lams:
        # left: every value with g >= 0 (so the None branch is not taken), plus a None case below
        with np.errstate(invalid="ignore"):
            left = ~(d1l + lam < 0)
        r = _rest(d1l, scale, left, l, u)
        a, b = r.argmin_rounding(lam), _rounding_full(r, lam)
        assert (a is None) == (b is None)
        assert np.array_equal(a, b), lam
        seen_near += a.size > 0
        left_all = np.ones(d, bool)
        r2 = _rest(d1l, scale, left_all, l, u)
        assert (r2.argmin_rounding(lam) is None) == (_rounding_full(r2, lam) is None)
    assert seen_near >= 10  # the tests did reach the near-threshold branch


def _rounding_full(rest, lam):
    """The reference for Rest.argmin_rounding: every test over the whole domain."""
    _EPS = np.finfo(float).eps
    with np.errstate(invalid="ignore"):
        g = rest.d1l + lam
        if np.any((g < 0) & rest.left):
            return None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = np.broadcast_to(rest.d1_scale_l, g.shape) + np.abs(lam)
        near = rest.left & (rest.l < rest.u) & (np.abs(g) <= 8 * _EPS * scale)
    if not near.any():
        return np.zeros(0)
    cand = np.flatnonzero(near)
    lv = rest.l[cand]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d2 = np.broadcast_to(rest.sep.restrict(cand).d2(lv), lv.shape)
        return 8 * _EPS * (2.0 * np.abs(lv) + scale[cand] / d2)


def _recover_reference(sep, st, f, active_tol=0.0):
    """recover_multipliers' λ written plainly: h'(f) over the whole domain, then the mask of the
    values inside their explicit bounds (the simplex's implied f_v ≤ 1 has no multiplier)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g = sep.d1(f)
    u = np.where(st.implied_upper, np.inf, st.u)
    inner = (f > st.l + active_tol) & (f < u - active_tol) & np.isfinite(g)
    assert inner.any()  # every point below has a value off its bounds
    return float(-np.mean(g[inner]))


@pytest.mark.parametrize("objective,make", [("cls", _oue), ("weighted-mle", _oue), ("binomial", _oue),
                                             ("multinomial", _grr)])
def test_recover_multipliers_on_the_inner_values_equals_the_full_pass(objective, make):
    est = make(20_000, 10**5, 4)
    sep = separable_for(make_objective(objective), est)
    st = compile_constraints(None, est.d)
    f = solve_structured(est, objective, None).f
    vertex = np.zeros(est.d)
    vertex[3] = 1.0
    for x in (f, np.where(f > 0, f + 1e-7, f), vertex, np.full(est.d, 1.0 / est.d)):
        for tol in (0.0, 1e-12):
            lam, y = recover_multipliers(sep, st, x, tol)
            assert lam == _recover_reference(sep, st, x, tol) and y.size == 0


@pytest.mark.parametrize("objective,make", [("binomial", _oue), ("weighted-mle", _oue), ("multinomial", _grr)])
def test_grouped_lower_bound_terms_equal_the_elementwise_ones(objective, make):
    """_AtLower evaluated once per distinct count and gathered (d ≥ GROUP_MIN_D) against the same
    terms over every value: bit for bit, and the whole certificate too."""
    import dataclasses

    from ldpopt.problems.check import certificate as cs

    d = cs.GROUP_MIN_D + 1000
    est = make(d, 10**6, 3)
    sep = separable_for(make_objective(objective), est)
    st = compile_constraints(None, d)
    grp = cs._groups(sep, st)
    assert grp is not None and grp[2] < d // 20  # a few thousand counts among 1.3e5 values
    fast, ref = cs._AtLower(sep, st), cs._AtLower(sep, st, group=False)
    for k, v in vars(ref).items():
        got = getattr(fast, k)
        if isinstance(v, np.ndarray):
            assert got.shape == v.shape and np.array_equal(got, v, equal_nan=True), k
            assert np.array_equal(np.signbit(got), np.signbit(v)), k
        else:
            assert got == v or (v != v and got != got), k
    r = solve_structured(est, objective, None)
    a = certify(sep, st, r.f, r.duals["sum"], np.zeros(0), r.duals)
    assert getattr(sep, "_at_lower", None) is not None  # the support path (and so the grouping) ran
    sep2 = separable_for(make_objective(objective), est)
    sep2._at_lower = (st, ref)  # the certificate with the elementwise terms
    b = certify(sep2, st, r.f, r.duals["sum"], np.zeros(0), r.duals)
    for k, v in dataclasses.asdict(b).items():
        if k != "multipliers":
            assert getattr(a, k) == v or (v != v and getattr(a, k) != getattr(a, k)), k


def test_grouping_declines_when_a_term_is_not_a_function_of_the_count():
    from ldpopt.problems.check import certificate as cs

    d = cs.GROUP_MIN_D + 10
    est = _oue(d, 10**6, 4)
    sep = separable_for(make_objective("weighted-mle"), est)
    st = compile_constraints(None, d)
    assert cs._groups(sep, st) is not None
    sep = separable_for(make_objective("weighted-mle"), est)  # the groups are cached on a separable
    sep.a = sep.a.copy()
    sep.a[7] = np.nextafter(sep.a[7], 1.0)  # one value off its count's a by one ulp
    assert cs._groups(sep, st) is None
    assert cs._groups(sep, compile_constraints([NonNegative(), SumTo(1.0), Box(upper=0.9)], d)) is None
    small = _oue(1000, 10**6, 4)
    assert cs._groups(separable_for(make_objective("binomial"), small), compile_constraints(None, 1000)) is None
