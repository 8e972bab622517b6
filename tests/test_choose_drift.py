"""``ldpopt.choose`` over rounds knows drift: the drift statistic's calibration, the drift sampler
against a per-user reference, and the pick against the real best candidate on generated drifts.
The larger run: benchmarks/bench_choose_drift.py."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
import ldpopt
from ldpopt import methods
from ldpopt.estimate import Estimate
from ldpopt.multi.drift import Z_DRIFT, Z_UNCLEAR, drifting_collection, rounds_drift, sample_drift_rounds
from ldpopt.multi.rounds import ACROSS, rounds_covariance, rounds_problem
from ldpopt.oracles.longitudinal import LGRR, LOSUE


def _zipf_counts(n, d, s=1.2, seed=0):
    w = 1.0 / np.arange(1, d + 1) ** s
    return np.random.default_rng(seed).multinomial(n, w / w.sum())


def _real_mse(ests, truths, o, names):
    out = {}
    for m in names:
        if m in ACROSS:
            coupling, lam = ACROSS[m]
            F = rounds_problem(ests, o, coupling=coupling, smooth=lam).solve().f.reshape(len(ests), -1)
        else:
            F = np.stack([methods.postprocess(e, m) for e in ests])
        out[m] = float(np.mean((F - truths) ** 2))
    return out


def test_no_drift_statistic_is_calibrated():
    """Users keeping their value (exact joint law): z has mean ≈ 0 and "drift" (z ≥ 3) is rare."""
    o = LOSUE(2.0, 16, eps_1=1.0)
    pop = _zipf_counts(5000, 16)
    gen = np.random.default_rng(3)
    z = np.array([rounds_drift([o.estimate(c, 5000) for c in o.sample_rounds(pop, 4, gen)], o)["z"]
                  for _ in range(300)])
    assert abs(z.mean()) < 0.3
    assert (z >= Z_DRIFT).mean() <= 0.02


def test_drift_sampler_matches_per_user_users():
    """Two rounds, 30 of 100 users moving from value 0 to value 2 (new memo): the counts' means and
    each value's cross-round covariance agree with per-user simulation (LongitudinalClients) within
    4.5 standard errors over 3,000 draws each."""
    o = LGRR(2.0, 3, eps_1=1.0)
    P = np.array([[50, 30, 20], [20, 30, 50]])
    V = np.stack([np.repeat([0, 1, 2], [50, 30, 20]), np.repeat([2, 0, 1, 2], [30, 20, 30, 20])])
    gen = np.random.default_rng(5)
    R = 3000
    A = np.stack([sample_drift_rounds(o, P, gen) for _ in range(R)]).astype(float)
    B = np.stack([o.clients(100, gen).rounds(V, gen) for _ in range(R)]).astype(float)
    for stat in (lambda X: X[:, 0, :], lambda X: X[:, 1, :],
                 lambda X: (X[:, 0, :] - X[:, 0, :].mean(0)) * (X[:, 1, :] - X[:, 1, :].mean(0))):
        a, b = stat(A), stat(B)
        se = np.sqrt(a.var(0) / R + b.var(0) / R)
        assert np.all(np.abs(a.mean(0) - b.mean(0)) <= 4.5 * se)


def test_heavy_drift_avoids_the_smoothing():
    """75 % of users change value each round: the smoothing λ = 10 is worse than per-round Norm-Sub,
    and choose does not pick it; the drift is reported."""
    o = LOSUE(4.0, 32, eps_1=2.0)
    ests, truths = drifting_collection(o, _zipf_counts(20_000, 32), 4, 0.75, rng=11)
    c = ldpopt.choose(ests, longitudinal=o, n_repeats=6, rng=0)
    mse = _real_mse(ests, truths, o, list(c.table.index))
    assert mse["rounds-shared-smooth"] > mse["norm-sub"]
    assert c.best != "rounds-shared-smooth"
    assert c.drift["status"] == "drift" and "drift drift" in c.how
    assert mse[c.best] <= 1.2 * min(mse.values())


def test_no_drift_still_picks_the_best():
    o = LOSUE(4.0, 32, eps_1=2.0)
    ests, truths = drifting_collection(o, _zipf_counts(20_000, 32), 4, 0.0, rng=12)
    c = ldpopt.choose(ests, longitudinal=o, n_repeats=6, rng=0)
    mse = _real_mse(ests, truths, o, list(c.table.index))
    assert c.drift["status"] in ("none", "unclear")
    assert mse[c.best] <= 1.05 * min(mse.values())


def _shape(name, d, gen):
    if name == "zipf":
        w = 1.0 / np.arange(1, d + 1) ** gen.uniform(0.8, 1.6)
    elif name == "near-two-point":
        top = gen.uniform(0.3, 0.5)
        w = np.concatenate([[top, 0.99 - top], np.full(d - 2, 0.01 / (d - 2))])
    else:
        w = gen.dirichlet(np.full(d, 0.5))
    return w / w.sum()


def _pattern(f, tau, n, direction, rho, gen):
    """Users' values over τ rounds: none, movers to the rarest value (rising), the top value's users
    leaving it (falling), or movers re-drawn from f under a fresh permutation (permuted)."""
    d = f.size
    V = np.empty((tau, n), dtype=np.int64)
    V[0] = gen.choice(d, size=n, p=f)
    for t in range(1, tau):
        V[t] = V[t - 1]
        if direction == "rising":
            V[t, gen.random(n) < rho] = int(np.argmin(f))
        elif direction == "falling":
            moved = (V[t] == int(np.argmax(f))) & (gen.random(n) < rho)
            V[t, moved] = gen.integers(0, d, size=int(moved.sum()))
        elif direction == "permuted":
            moved = gen.random(n) < rho
            V[t, moved] = gen.choice(gen.permutation(d), size=int(moved.sum()), p=f)
    return V


@settings(max_examples=examples(6), deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from(["zipf", "near-two-point", "dirichlet"]),
       direction=st.sampled_from(["none", "rising", "falling", "permuted"]), rho=st.floats(0.02, 0.3),
       grr=st.booleans(), d=st.sampled_from([16, 32]), seed=st.integers(0, 2 ** 16))
def test_pick_within_factor_of_best_over_generated_drifts(shape, direction, rho, grr, d, seed):
    """Generated drift patterns (shape, direction, share of users moving, oracle): the pick's expected
    MSE on the collection's own users (4 fresh collections of the same users' values, common to all
    candidates) is within 1.2× of the best candidate's, up to 2 paired SEs of that estimate; or
    ``cannot_tell`` is set and the pick is the safe choice, the smallest worst ratio over the worlds
    (the benchmark: benchmarks/bench_choose_patterns.py)."""
    gen = np.random.default_rng(seed)
    o = (LGRR if grr else LOSUE)(4.0, d, eps_1=2.0)
    n, tau, K = 10_000, 3, 4
    V = _pattern(_shape(shape, d, gen), tau, n, direction, rho, gen)
    truths = np.stack([np.bincount(v, minlength=d) / n for v in V])
    ests = [o.estimate(c, n) for c in o.clients(n, gen).rounds(V, gen)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        c = ldpopt.choose(ests, longitudinal=o, n_repeats=4, rng=seed)
    assert c.best == c.table["worst"].idxmin()
    if c.cannot_tell:
        return
    names = list(c.table.index)
    M = np.array([list(_real_mse([o.estimate(x, n) for x in o.clients(n, gen).rounds(V, gen)], truths, o,
                                 names).values()) for _ in range(K)])  # (K, methods)
    b = int(M.mean(axis=0).argmin())
    diff = M[:, names.index(c.best)] - 1.2 * M[:, b]
    assert diff.mean() <= 2.0 * diff.std(ddof=1) / np.sqrt(K), (shape, direction, rho, o.label, c.best, names[b])


def test_unclear_drift_warns():
    """Rounds whose consecutive change is 2.5 no-drift standard errors beyond the noise: a warning
    that it cannot tell, and the statistic in Choice.drift."""
    o = LOSUE(2.0, 8, eps_1=1.0)
    pop = np.array([4000, 3000, 1000, 800, 600, 300, 200, 100])
    base = o.estimate(pop * o.p + (10_000 - pop) * o.q, 10_000)
    flat = [base, base]
    a, _ = rounds_covariance(flat, o)
    se = rounds_drift(flat, o)["se"]
    u = np.zeros(8)
    u[0], u[1] = 1.0, -1.0
    delta = np.sqrt((2 * a.sum() + 2.5 * se) / 2.0)
    ests = [Estimate.from_frequencies(base.f_tilde + delta * u, 10_000, base.epsilon, base.p, base.q, oracle=o.name)
            for _ in range(1)] + [base]
    st_ = rounds_drift(ests, o)
    assert Z_UNCLEAR <= st_["z"] < Z_DRIFT and st_["status"] == "unclear"
    with pytest.warns(UserWarning, match="cannot tell"):
        c = ldpopt.choose(ests, longitudinal=o, methods=["norm-sub"], n_repeats=2, rng=0)
    assert c.drift["status"] == "unclear" and 0.0 <= c.drift["weight"] <= 1.0
