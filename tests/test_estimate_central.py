"""Estimate.from_central: central noise (Laplace, discrete Laplace, Gaussian, discrete Gaussian) as an
Estimate. The stated per-cell variance against the empirical one over many draws (generated scales,
domains, n known or estimated), the file round trip, one-line refusals of bad input, and every
registered method and objective on central estimates: it either matches its definition or refuses in
one line, by its record."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
import ldpopt
from ldpopt import Estimate, Problem, methods, testing
from ldpopt.estimate import simulate_central
from ldpopt.methods.bayes.posterior import noise_sd_counts
from ldpopt.privacy import central
from ldpopt.problems import available_objectives
from ldpopt.uncertainty.resample import draw_counts, oracle_of

NAMES = sorted(central.MECHANISMS)

# the closed-form variances of the references (Laplace 2b², Gaussian σ², discrete Laplace
# 2r/(1 − r)², r = e^{−1/b}): written here from the textbooks, not read from the records
_REFERENCE_VAR = {
    "laplace": lambda b: 2 * b * b,
    "gaussian": lambda s: s * s,
    "discrete-laplace": lambda b: 2 * math.exp(-1 / b) / (1 - math.exp(-1 / b)) ** 2,
}


@st.composite
def histograms(draw, min_d: int = 2, max_d: int = 40):
    """A Zipf-like histogram of generated size and domain, with some zero cells."""
    d = draw(st.integers(min_d, max_d))
    n = draw(st.integers(50, 100_000))
    s = draw(st.floats(0.0, 2.0))
    w = 1.0 / np.arange(1, d + 1) ** s
    counts = np.floor(n * w / w.sum()).astype(np.int64)
    counts[0] += n - counts.sum()
    return counts


def _draws(true_counts, mech: str, scale: float, reps: int, rng) -> np.ndarray:
    return np.stack([simulate_central(true_counts, mech, scale, rng=rng).counts for _ in range(reps)])


@settings(max_examples=examples(12), deadline=None)
@given(mech=st.sampled_from(NAMES), scale=st.floats(0.3, 40.0), counts=histograms(), n_known=st.booleans(),
       seed=st.integers(0, 2**31))
def test_stated_variance_matches_the_empirical_variance(mech, scale, counts, n_known, seed):
    """Var(f̃_v) stated (meta["extra_variance"], sigma2, sigma2_v, variance(f)) equals the empirical variance
    of the noisy counts over 400·d cells / n², within 6 standard errors of a variance estimate (the
    kurtosis of Laplace noise is 6: SE = √((κ − 1)/N)·Var)."""
    rng = np.random.default_rng(seed)
    d = counts.shape[0]
    est = simulate_central(counts, mech, scale, rng=rng, n_known=n_known)
    stated = est.meta["extra_variance"] * est.n**2
    assert est.sigma2 == pytest.approx(est.meta["extra_variance"], rel=1e-12)
    np.testing.assert_allclose(est.sigma2_v, est.meta["extra_variance"], rtol=1e-12)
    np.testing.assert_allclose(est.variance(np.full(d, 1.0 / d)), est.meta["extra_variance"], rtol=1e-12)
    if mech in _REFERENCE_VAR:
        assert stated == pytest.approx(_REFERENCE_VAR[mech](scale), rel=1e-10)
    noise = _draws(counts, mech, scale, max(2, 4_000 // d), rng) - counts   # the end-to-end path's noise
    noise = np.concatenate([noise.ravel(), central.get(mech).sample(40_000, scale, rng)])
    emp = float(np.mean(noise**2))
    assert abs(emp - stated) <= 6 * math.sqrt(5.0 / noise.size) * stated, (emp, stated)
    assert est.meta["privacy"]["n_known"] is n_known
    if n_known:
        assert est.n == counts.sum()
    else:
        assert est.n == max(round(float(est.counts.sum())), 1)


@pytest.mark.parametrize("mech", NAMES)
def test_the_variance_of_f_tilde_over_draws_at_known_n(mech):
    """Per mechanism: f̃'s per-cell variance over 3,000 draws against the stated Var/n² (the numbers of
    the closing note's variance check)."""
    rng = np.random.default_rng(7)
    counts = np.array([500, 300, 150, 50, 0, 0, 0, 0])
    scale = 3.0
    F = np.stack([simulate_central(counts, mech, scale, rng=rng).f_tilde for _ in range(3000)])
    stated = central.get(mech).variance(scale) / counts.sum() ** 2
    emp = F.var(axis=0, ddof=1).mean()
    assert abs(emp / stated - 1) < 6 * math.sqrt(5.0 / F.size), (emp, stated)
    np.testing.assert_allclose(F.mean(axis=0), counts / counts.sum(), atol=6 * math.sqrt(stated / 3000))


@settings(max_examples=examples(10), deadline=None)
@given(mech=st.sampled_from(NAMES), scale=st.floats(0.3, 50.0), counts=histograms(), n_known=st.booleans(),
       seed=st.integers(0, 2**31))
def test_save_load_round_trip(tmp_path_factory, mech, scale, counts, n_known, seed):
    est = simulate_central(counts, mech, scale, rng=seed, n_known=n_known)
    path = tmp_path_factory.mktemp("central") / "est.json"
    est.save(path)
    again = Estimate.load(path, oracle=f"central:{mech}")
    assert np.array_equal(again.counts, est.counts) and np.array_equal(again.f_tilde, est.f_tilde)
    assert again.meta["privacy"] == est.meta["privacy"] and again.sigma2 == est.sigma2
    assert again.n == est.n and again.epsilon == est.epsilon and (again.noise.mechanism, again.noise.scale) == (est.noise.mechanism, est.noise.scale)


def test_privacy_statement_written_per_schema():
    est = Estimate.from_central([10, -3, 7], "gaussian", 4.0, n=20, relation="replace", delta=1e-8)
    p = est.meta["privacy"]
    assert set(p) == {"model", "relation", "mechanism", "scale", "epsilon", "delta", "n_known"}
    assert p["model"] == "central" and p["relation"] == "replace" and p["delta"] == 1e-8
    assert est.epsilon == pytest.approx(central.get("gaussian").epsilon(4.0, 1e-8, "replace"))
    assert est.p == 1.0 and est.q == 0.0 and est.oracle == "central:gaussian"
    lap = Estimate.from_central([10, -3, 7], "laplace", 4.0)
    assert lap.epsilon == 0.25 and lap.meta["privacy"]["delta"] == 0.0 and lap.n == 14


def test_negative_counts_and_counts_above_n_only_for_central():
    est = Estimate.from_central([-5, 30, 2], "laplace", 2.0, n=20)
    assert est.counts.min() < 0 and est.counts.max() > est.n
    moved = est.with_f_tilde([-0.5, 1.7, 0.1])   # a method's output keeps the relaxation
    assert moved.counts[0] == -10
    with pytest.raises(ValueError, match="counts must be >= 0"):
        Estimate.from_counts([-5, 30, 2], 20, 1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="implied support counts"):
        Estimate.from_frequencies([-0.5, 1.7, 0.1], 20, 1.0, 1.0, 0.0)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"mechanism": "poisson"}, ValueError, "mechanism must be one of"),
    ({"scale": 0.0}, ValueError, "scale must be finite and > 0"),
    ({"scale": "2"}, TypeError, "scale must be a real number"),
    ({"n": 0}, ValueError, "n"),
    ({"relation": "swap"}, ValueError, "relation must be one of"),
    ({"delta": 1.5}, ValueError, "delta must be a real number in"),
    ({"delta": "x"}, TypeError, "delta must be a real number"),
    ({"mechanism": "gaussian", "delta": 0.0}, ValueError, "delta must be > 0"),
    ({"noisy_counts": [1.5, 2.0]}, ValueError, "noisy_counts must be integers"),
    ({"noisy_counts": [1.0]}, ValueError, "noisy_counts"),
    ({"noisy_counts": [1.0, float("nan")]}, ValueError, "noisy_counts"),
    ({"mechanism": "gaussian", "scale": 1e9}, ValueError, "epsilon"),
    ({"extra_variance": 1.0}, ValueError, "extra_variance is written by from_central"),
])
def test_bad_input_is_one_line_naming_the_argument(kwargs, error, match):
    args = {"noisy_counts": [3.0, -1.0, 4.0], "mechanism": "discrete-laplace", "scale": 2.0, **kwargs}
    with pytest.raises(error, match=match) as info:
        Estimate.from_central(**args)
    assert "\n" not in str(info.value)


def test_bootstrap_draws_the_mechanism_noise():
    est = simulate_central(np.array([400, 300, 200, 100]), "discrete-gaussian", 6.0, rng=0)
    C = draw_counts(oracle_of(est), np.array([400, 300, 200, 100]), 4000, np.random.default_rng(1))
    assert C.shape == (4000, 4) and np.array_equal(C, np.round(C))
    assert C.var(axis=0, ddof=1).mean() == pytest.approx(central.get("discrete-gaussian").variance(6.0), rel=0.05)
    sd = math.sqrt(central.get("discrete-gaussian").variance(6.0) / 4000)
    np.testing.assert_allclose(C.mean(axis=0), [400, 300, 200, 100], atol=6 * sd)   # the world's counts + noise
    r = ldpopt.uncertainty.analytic(est, "norm")
    np.testing.assert_allclose(r.se, math.sqrt(est.meta["extra_variance"] * (1 - 1 / 4)), rtol=1e-12)


# -- every method and objective on central estimates ------------------------------------------------

def _central_estimates():
    rng = np.random.default_rng(3)
    w = 1.0 / np.arange(1, 41) ** 1.1
    w[rng.choice(40, 10, replace=False)] = 0
    counts = rng.multinomial(20_000, w / w.sum())
    return [simulate_central(counts, m, s, rng=rng, n_known=k).as_ordered()
            for m, s, k in [("laplace", 20.0, True), ("discrete-laplace", 5.0, False),
                            ("gaussian", 30.0, True), ("discrete-gaussian", 8.0, False)]]


CENTRAL = _central_estimates()


@pytest.mark.parametrize("name", methods.names())
def test_every_method_matches_its_definition_or_refuses_in_one_line(name):
    info = methods.get(name)
    reasons = [info.why_not(e) for e in CENTRAL]
    if all(r is None for r in reasons):
        done = testing.check_method(name, CENTRAL)   # its declared properties and problem statement
        assert done["output"] == len(CENTRAL)
        return
    for est, why in zip(CENTRAL, reasons):
        assert why is not None and "\n" not in why and why.strip()
        with pytest.raises(ValueError, match="does not apply") as err:
            info(est)
        assert "\n" not in str(err.value)


def test_refusals_come_from_the_records_of_the_methods_whose_derivation_is_an_oracles():
    refused = {n for n in methods.names() if methods.get(n).why_not(CENTRAL[0]) is not None}
    assert refused == {"em", "mle-apx", "mle-apx-paper"}
    assert all(methods.get(n).applies is not None for n in refused)


@pytest.mark.parametrize("est", CENTRAL, ids=lambda e: e.oracle)
def test_power_and_calibrate_take_the_mechanism_variance(est):
    mech, scale = est.noise.mechanism, est.noise.scale
    assert noise_sd_counts(est) ** 2 == pytest.approx(mech.variance(scale), rel=1e-12)


@pytest.mark.parametrize("obj", available_objectives())
@pytest.mark.parametrize("est", CENTRAL, ids=lambda e: e.oracle)
def test_every_objective_solves_its_problem_or_refuses_in_one_line(obj, est):
    if obj == "posterior":
        sol = Problem(est, obj, mean=ldpopt.postprocess(est, "power")).solve()
        assert sol.status == "optimal"
        return
    try:
        prob = Problem(est, obj)
    except ValueError as exc:
        assert "\n" not in str(exc) and obj in {"multinomial", "binomial", "weighted-mle-naive"}
        return
    assert obj not in {"multinomial", "binomial", "weighted-mle-naive"}
    sol = prob.solve()
    assert sol.status == "optimal" and abs(sol.f.sum() - 1) < 1e-9 and sol.f.min() >= -1e-12
    if obj in ("cls", "weighted-mle"):   # constant σ_v²: both are the projection, Norm-Sub
        np.testing.assert_allclose(sol.f, ldpopt.postprocess(est, "norm-sub"), atol=1e-9)


@pytest.mark.parametrize("est", CENTRAL, ids=lambda e: e.oracle)
def test_central_mle_maximises_the_mechanism_likelihood(est):
    """The relaxed likelihood Σ logpdf(c̃ − n f) at central-mle's f is at least that of every other
    method's consistent output and of random points of the simplex (the reference: the mechanism's
    own log density, evaluated by numpy, not the objective's code)."""
    mech, scale = est.noise.mechanism, est.noise.scale
    sol = Problem(est, "central-mle").solve()
    assert sol.status == "optimal"

    def loglik(f):
        return float(np.sum(mech.logpdf(est.counts - est.n * f, scale)))

    best = loglik(sol.f)
    rng = np.random.default_rng(0)
    others = [ldpopt.postprocess(est, m) for m in ("norm-sub", "norm-mul", "power-ns")]
    others += list(rng.dirichlet(np.ones(est.d), 50)) + [0.9 * sol.f + 0.1 * o for o in others]
    tol = 1e-7 * abs(best) + 1e-6
    assert all(loglik(o) <= best + tol for o in others)


def test_central_mle_refuses_an_oracle_estimate():
    est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([40, 30, 20, 10]), 100)
    with pytest.raises(ValueError, match="needs noise added to exact counts"):
        Problem(est, "central-mle")


def test_choose_ranks_only_the_methods_that_apply():
    ranked = ldpopt.choose(CENTRAL[2], rng=0, n_repeats=4, methods="extended").table.index
    assert {"mle-apx", "em"}.isdisjoint(ranked) and {"norm-sub", "power"} <= set(ranked)


@settings(max_examples=examples(6), deadline=None)
@given(d=st.integers(8, 300), branching=st.integers(2, 9), sigma=st.floats(1.0, 50.0), seed=st.integers(0, 2**31))
def test_hierarchy_consistency_on_central_noise_is_the_certified_problem(d, branching, sigma, seed):
    """Hay et al.'s two-pass closed form (ldpopt.hierarchy.consistency) with every node's variance
    Var(noise)/n² equals the tree-constrained least squares solved by Problem on the central estimate
    (no sign or total constraint: the closed form's problem); with f ≥ 0 and the total added, the
    certified Problem is feasible and consistent."""
    import warnings

    from ldpopt.hierarchy.consistency import consistency
    from ldpopt.problems import range_tree

    tree = range_tree(d, branching)
    rng = np.random.default_rng(seed)
    leaves = rng.multinomial(10_000, rng.dirichlet(np.ones(d)))
    nodes = np.rint(tree.node_totals(leaves.astype(float))).astype(np.int64)
    noisy = simulate_central(nodes, "gaussian", sigma, rng=rng).counts
    est = Estimate.from_central(noisy, "gaussian", sigma, n=10_000)
    hay = consistency(tree, est.f_tilde, np.full(tree.size, est.meta["extra_variance"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, "cls", [tree.hierarchy()]).solve()
    assert sol.status == "optimal"
    np.testing.assert_allclose(sol.f, hay, atol=1e-9)
    full = Problem(est, "cls", tree.constraints()).solve()
    assert full.status == "optimal" and full.f.min() >= 0
    np.testing.assert_allclose(full.f, tree.node_totals(full.f[:d]), atol=1e-9)


@settings(max_examples=examples(10), deadline=None)
@given(sigma=st.floats(1.0, 50.0), cells=st.integers(1, 8))
def test_a_hierarchy_states_the_whole_release_not_one_level(sigma, cells):
    """Counts that hold each record ``cells`` times (a tree's noisy levels): the estimate's ε is the
    Gaussian's at Δ₂ = √cells, i.e. one level's at σ/√cells (Balle–Wang depends on Δ₂/σ only), never
    one level's ε; the statement says how many counts a record is in."""
    from ldpopt.privacy import central

    est = Estimate.from_central([5.0, 3.0, 8.0, 1.0], "gaussian", sigma, n=17, contributions=cells)
    one = central.get("gaussian").epsilon(sigma / np.sqrt(cells), 1e-6)
    assert est.epsilon == pytest.approx(one, rel=1e-9)
    assert est.epsilon >= central.get("gaussian").epsilon(sigma, 1e-6) - 1e-12
    assert est.meta["privacy"].get("contributions", 1) == cells
    assert (f"each record in {cells} counts" in str(est.privacy)) is (cells > 1)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "2"])
def test_contributions_must_be_a_count(bad):
    with pytest.raises(ValueError, match=r"^contributions must be an integer >= 1") as info:
        Estimate.from_central([5.0, 3.0], "gaussian", 2.0, n=8, contributions=bad)
    assert "\n" not in str(info.value)
