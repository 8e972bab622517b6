"""Decoding sketches as problems: RAPPOR's §4 decoder (LASSO then least squares), ldpopt's
constrained decoder through Problem (cvxpy as referee), and CMS/HCMS estimates with the family's
variance for the consistency methods."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import ldpopt
from ldpopt import oracles, sketches

D = 60
F = np.zeros(D)
F[:8] = np.array([30, 20, 15, 10, 8, 6, 4, 3]) / 100
F[20:24] = 0.01


def _rappor_draw(seed=1, n=200_000):
    o = oracles.get("rappor", 4.0, D, num_bits=32, num_hashes=2, cohorts=8, hash_seed=seed)
    tc = np.rint(F * n).astype(int)
    Y, N = o.sample_sketch(tc, seed)
    return o, tc, Y, N


def test_constrained_decoder_matches_cvxpy_referee_and_is_checked():
    o, tc, Y, N = _rappor_draw()
    sol = sketches.constrained(o, Y, N)
    assert sol.status == "optimal"
    Dm, t, var = sketches.regression(o, Y, N)
    w = 1 / np.sqrt(var)
    f = cp.Variable(D)
    ref = cp.Problem(cp.Minimize(cp.sum_squares(cp.multiply(w, Dm @ f - t))), [f >= 0, cp.sum(f) <= 1])
    ref.solve(solver=cp.CLARABEL)
    assert np.abs(sol.f - f.value).max() < 1e-5
    assert sol.f.min() >= -1e-9 and sol.f.sum() <= 1 + 1e-9
    assert np.abs(sol.f - tc / tc.sum()).sum() < 0.2  # and it decodes


def test_lasso_step_satisfies_its_kkt_conditions_and_ls_recovers_the_heavy_candidates():
    o, tc, Y, N = _rappor_draw(seed=2)
    res = sketches.lasso_ls(o, Y, N, alpha=0.05, significance=None)
    Dm, t, _ = sketches.regression(o, Y, N)
    lam = 0.05 * float(np.max(Dm.T @ t))
    g = Dm.T @ (t - Dm @ res.lasso_f)  # non-negative LASSO: g_v = λ where f_v > 0, g_v ≤ λ elsewhere
    on = res.lasso_f > 0
    assert np.allclose(g[on], lam, rtol=1e-4)
    assert np.all(g[~on] <= lam * (1 + 1e-4))
    assert set(range(8)) <= set(res.selected)  # every candidate with f ≥ 3% is selected
    # least squares on the selected columns: the normal equations hold
    sel = res.selected
    assert np.allclose(Dm[:, sel].T @ (t - Dm @ res.f), 0, atol=1e-6 * np.abs(Dm.T @ t).max())
    assert np.abs(res.f[:8] - F[:8]).max() < 0.02


def test_bonferroni_step_drops_candidates_that_are_not_significant():
    o, tc, Y, N = _rappor_draw(seed=3, n=20_000)
    loose = sketches.lasso_ls(o, Y, N, significance=None)
    strict = sketches.lasso_ls(o, Y, N, significance=0.05)
    kept = np.flatnonzero(strict.f)
    assert set(kept) <= set(loose.selected)
    assert np.all(strict.pvalue[np.isin(strict.selected, kept)] < 0.05 / D)


def test_decoders_name_bad_input():
    o, tc, Y, N = _rappor_draw()
    with pytest.raises(ValueError, match="Y must have shape"):
        sketches.lasso_ls(o, Y[:, :4], N)
    with pytest.raises(ValueError, match="alpha must lie"):
        sketches.lasso_ls(o, Y, N, alpha=2.0)
    with pytest.raises(TypeError, match="RAPPOR"):
        sketches.constrained(oracles.get("oue", 1.0, D), Y, N)


@pytest.mark.parametrize("name", ["cms", "hcms"])
def test_sketch_estimate_carries_the_family_variance(name):
    """The Estimate's σ_v² (Eq. 2 + the plug-in extra term) against the oracle's exact family variance."""
    o = oracles.get(name, 2.0, D, k=8, m=32)
    n = 100_000
    tc = np.rint(F * n).astype(int)
    est = sketches.sketch_estimate(o, o.sample_counts(tc, 5), int(tc.sum()))
    exact = o.variance(tc / tc.sum(), int(tc.sum()))
    assert est.meta["extra_variance"] > 0
    zero = F == 0  # the scalar extra term is the family variance at f_v → 0 (as Eq. 7 is Eq. 2's)
    assert np.allclose(est.variance(tc / tc.sum())[zero], exact[zero], rtol=0.15)
    assert est.sigma2 == pytest.approx(exact[zero].mean(), rel=0.15)
    # without the extra term the variance is understated by the collisions (here by > 2×)
    plain = o.estimate(o.sample_counts(tc, 5), int(tc.sum()))
    assert exact.mean() > 2 * plain.variance(tc / tc.sum()).mean()
    f = ldpopt.postprocess(est, "norm-sub")
    assert f.min() >= 0 and abs(f.sum() - 1) < 1e-9
