"""ldpopt.plan's central-noise rows: the calibrated scale, the closed forms against an independent
simulation (simulate_central), the n a target needs, refused methods, side-by-side tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import norm as normal

import ldpopt
from ldpopt.estimate import simulate_central
from ldpopt.planning import calibrate_scale, central_closed_form, prior_histogram
from ldpopt.privacy import central
from ldpopt.uncertainty.fit import population

MECHS = sorted(central.MECHANISMS)


@st.composite
def calibrations(draw):
    """(mechanism, ε, δ, relation): δ None (the default) or a power of ten; ε across two decades."""
    mech = draw(st.sampled_from(MECHS))
    eps = draw(st.floats(0.1, 5.0))
    delta = draw(st.sampled_from([None, 1e-9, 1e-6, 1e-3]))
    return mech, eps, delta, draw(st.sampled_from(sorted(central.RELATIONS)))


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calibrations())
def test_calibrated_scale_gives_epsilon_at_delta_and_is_the_smallest(case):
    name, eps, delta, relation = case
    mech = central.get(name)
    dl = (0.0 if mech.pure else 1e-6) if delta is None else delta
    s = calibrate_scale(name, eps, delta, relation)
    got = mech.epsilon(s, dl, relation)
    assert got <= eps and got == pytest.approx(eps, rel=1e-9), (s, got)
    # the smallest: a scale 1e-6 smaller exceeds ε
    assert mech.epsilon(s * (1 - 1e-6), dl, relation) > eps


def test_calibration_against_textbook_formulas():
    # pure: b = Δ₁/ε (Dwork et al.), by hand
    for name in ("laplace", "discrete-laplace"):
        assert calibrate_scale(name, 0.7) == pytest.approx(1 / 0.7, rel=1e-12)
        assert calibrate_scale(name, 0.7, relation="replace") == pytest.approx(2 / 0.7, rel=1e-12)
    # Gaussian: Balle & Wang's Theorem 8 written here with scipy's normal cdf, δ(ε, σ) = the asked δ, and σ
    # below the classical sqrt(2 ln(1.25/δ))·Δ₂/ε (Dwork & Roth, Theorem A.1), which is loose
    for eps, delta, l2 in ((0.5, 1e-6, 1.0), (1.0, 1e-5, math.sqrt(2)), (0.9, 1e-8, 1.0)):
        rel = "add-remove" if l2 == 1.0 else "replace"
        s = calibrate_scale("gaussian", eps, delta, rel)
        a, c = l2 / (2 * s), eps * s / l2
        assert normal.cdf(a - c) - math.exp(eps) * normal.cdf(-a - c) == pytest.approx(delta, rel=1e-6)
        assert s < math.sqrt(2 * math.log(1.25 / delta)) * l2 / eps
    # a δ > 0 for a pure mechanism is allowed: its exact profile, a hair below Δ₁/ε
    b = calibrate_scale("laplace", 1.0, 1e-6)
    assert 1 - 1e-5 < b < 1.0
    assert central.get("laplace").epsilon(b, 1e-6) == pytest.approx(1.0, rel=1e-9)


@st.composite
def central_cases(draw):
    d = draw(st.integers(3, 40))
    prior = draw(st.sampled_from(["uniform", "zipf:1.5", "beta:5,2", f"tied:{draw(st.integers(1, d))}"]))
    return (d, draw(st.integers(50, 50_000)), draw(st.sampled_from([0.25, 0.5, 1.0, 2.0])), prior,
            draw(st.sampled_from(MECHS)), draw(st.integers(1, d)))


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(central_cases())
def test_closed_forms_match_an_independent_simulation(case):
    d, n, eps, prior, name, k = case
    queries = ["full", f"topk:{max(1, d // 3)}", f"subsets:{k}"]
    p = ldpopt.plan(d, n, eps, prior, queries, mechanism=name, methods=["base", "norm"])
    scale = p.central[name]["scale"]
    # the independent reference: the record's own sampler on the exact counts (simulate_central's draws, one
    # batch), the estimates and the losses written here
    f, _ = prior_histogram(prior, d)
    pop = population(f, n)
    truth = pop / n
    R = 400
    F = (pop + central.get(name).sample(R * d, scale, rng=d * n).reshape(R, d)) / n
    one = simulate_central(pop, name, scale, rng=0, delta=p.central[name]["delta"])
    assert one.n == n and one.epsilon == pytest.approx(eps, rel=1e-9)   # the row's scale is that ε's
    methods = {"base": F, "norm": F + (1 - F.sum(axis=1, keepdims=True)) / d}
    top = np.argsort(-f, kind="stable")[:max(1, d // 3)]
    for row in p.table.itertuples():
        E = methods[row.method] - truth
        if row.query == "full":
            L = (E**2).mean(axis=1)
        elif row.query.startswith("topk"):
            L = (E[:, top] ** 2).mean(axis=1)
        else:  # every k-subset has the same variance: the first k values
            L = E[:, :k].sum(axis=1) ** 2
        se = L.std(ddof=1) / math.sqrt(R)
        assert row.how == "exact" and row.family == "central" and row.scale == scale
        tol = 4.5 * se + 1e-12 * central.get(name).variance(scale) / n**2   # Norm on k = d: 0, rounding aside
        assert abs(L.mean() - row.expected_mse) <= tol, (row.method, row.query, L.mean(), se, row.expected_mse)
        want = central_closed_form(name, scale, row.method, row.query, d, n, delta=p.central[name]["delta"])
        assert row.expected_mse == pytest.approx(want, rel=1e-12)


def test_base_full_is_var_over_n_squared():
    d, n = 100, 10**4
    p = ldpopt.plan(d, n, 0.5, "zipf:1.5", mechanism="all", methods=["base"])
    got = dict(zip(p.table["oracle"], p.table["expected_mse"], strict=True))
    assert got["central:laplace"] == pytest.approx(2 * (1 / 0.5) ** 2 / n**2, rel=1e-9)   # 2b², b = 1/ε
    r = math.exp(-0.5)   # discrete Laplace of b = 2: 2r/(1 − r)², written here
    assert got["central:discrete-laplace"] == pytest.approx(2 * r / (1 - r) ** 2 / n**2, rel=1e-9)
    sigma = p.central["gaussian"]["scale"]
    assert got["central:gaussian"] == pytest.approx(sigma**2 / n**2, rel=1e-12)
    assert set(p.table["family"]) == {"central"} and len(p.table) == 4


def test_exact_rows_target_is_the_square_root_ratio():
    p = ldpopt.plan(50, 10**4, 1.0, "beta:5,2", ["full", "subsets:7"], mechanism=["gaussian", "discrete-laplace"],
                    methods=["base", "norm"], target=1e-9)
    for row in p.table.itertuples():
        assert row.n_target_how == "exact (∝ 1/n²)"
        name = row.oracle.split(":")[1]
        m = p.central[name]
        def at(n, row=row, name=name, m=m):
            return central_closed_form(name, m["scale"], row.method, row.query, 50, n, delta=m["delta"])
        assert at(int(row.n_target)) <= 1e-9 < at(int(row.n_target) - 1)


@pytest.mark.parametrize("name", ["gaussian", "discrete-laplace"])
def test_n_for_target_is_met_when_resimulated(name):
    d, eps, t = 32, 0.5, 2e-7
    p = ldpopt.plan(d, 2000, eps, "zipf:1.5", mechanism=name, methods=["norm-sub"], target=t, n_repeats=20, rng=3)
    row = p.table.iloc[0]
    assert row["n_target_how"].startswith("estimated") and row["how"].startswith("simulated")
    n_t = int(row["n_target"])
    # independent draws (another seed) at the planned n meet the target within the stated SE ...
    s = ldpopt.plan(d, n_t, eps, "zipf:1.5", mechanism=name, methods=["norm-sub"], n_repeats=80, rng=99).table.iloc[0]
    assert s["expected_mse"] <= t * 1.1 + 3 * s["se"], (n_t, s["expected_mse"], s["se"])
    # ... and a clearly smaller n does not
    s2 = ldpopt.plan(d, int(n_t / 1.6), eps, "zipf:1.5", mechanism=name, methods=["norm-sub"], n_repeats=80,
                     rng=98).table.iloc[0]
    assert s2["expected_mse"] > t, (n_t, s2["expected_mse"])


def test_methods_refusing_central_noise_give_no_rows():
    p = ldpopt.plan(16, 5000, 1.0, mechanism="gaussian", methods=["base", "norm-sub", "mle-apx"], n_repeats=3)
    assert set(p.table["method"]) == {"base", "norm-sub"}
    assert [s[:2] for s in p.skipped] == [("central:gaussian", "mle-apx")] and "MLE-Apx" in p.skipped[0][2]
    with pytest.raises(ValueError, match="methods: none of"):
        ldpopt.plan(16, 5000, 1.0, mechanism="gaussian", methods=["mle-apx"])


def test_local_and_central_side_by_side():
    kw = {"oracles": ["oue"], "methods": ["base", "norm-sub"], "n_repeats": 4}
    both = ldpopt.plan(64, 10**5, 1.0, "zipf:1.5", ["full", "topk:4"], mechanism=("local", "gaussian"), **kw)
    local = ldpopt.plan(64, 10**5, 1.0, "zipf:1.5", ["full", "topk:4"], **kw)
    t = both.table
    assert {"family", "scale", "delta"} <= set(t.columns) and set(t["family"]) == {"local", "central"}
    loc = t[t["family"] == "local"].drop(columns=["scale", "delta", "rank"]).reset_index(drop=True)
    pd_local = local.table.drop(columns="rank").reset_index(drop=True)
    assert loc[pd_local.columns].equals(pd_local)   # the local rows are the local plan's rows
    assert t.loc[t["family"] == "local", "scale"].isna().all()
    for _, g in t.groupby("query", sort=False):   # one ranking over both families
        assert list(g["rank"]) == list(range(1, len(g) + 1))
        assert np.all(np.diff(g["expected_mse"].to_numpy()) >= 0)
    assert both.best("full")[0] == "central:gaussian"   # central noise at the same ε: far smaller error
    assert "central:gaussian" in str(both) and "scale" in str(both).splitlines()[1]
    assert "scale" not in str(local).splitlines()[1]
    # None and "local" are the same family, named once
    assert ldpopt.plan(16, 1000, 1.0, mechanism=[None, "local"], oracles=["grr"], methods=["base"]).table.shape[0] == 1


def test_mechanism_all_and_the_plan_states_each_scale():
    p = ldpopt.plan(100, 10**5, 1.0, mechanism="all", methods=["base"], delta=1e-7, relation="replace")
    assert sorted(p.central) == MECHS
    for name, m in p.central.items():
        assert m["relation"] == "replace" and m["delta"] == 1e-7
        assert central.get(name).epsilon(m["scale"], 1e-7, "replace") == pytest.approx(1.0, rel=1e-9)
    assert "calibrated to ε = 1 (replace)" in p.how


def test_simulate_draws_central_rows_for_every_method():
    from ldpopt.planning import simulate

    t = simulate(20, 5000, 1.0, "zipf:1.5", ["full"], mechanism=["local", "laplace"], oracles=["oue"],
                 methods=["base", "norm-sub"], n_repeats=200, rng=5)
    assert sorted(set(t["oracle"])) == ["central:laplace", "oue"]
    base = t[(t["oracle"] == "central:laplace") & (t["method"] == "base")].iloc[0]
    want = 2 * (1 / 1.0) ** 2 / 5000**2   # 2b²/n², b = 1/ε: simulated here, not read from the closed form
    assert base["se"] > 0 and abs(base["mse"] - want) <= 4.5 * base["se"]


@pytest.mark.parametrize(("args", "match"), [
    (("nosuch", 1.0), "mechanism must be one of"),
    (("gaussian", 0.0), "epsilon must be"),
    (("gaussian", 1.0, 0.0), "delta must be > 0"),
    (("laplace", 1.0, 1.0), r"delta must be a real number in \[0, 1\)"),
    (("laplace", 1.0, None, "swap"), "relation must be"),
    (("discrete-gaussian", 1e-4), "past what its exact delta is computed for"),
])
def test_calibrate_scale_refuses_in_one_line(args, match):
    with pytest.raises(ValueError, match=match) as info:
        calibrate_scale(*args)
    assert "\n" not in str(info.value)
