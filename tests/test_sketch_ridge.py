"""The non-negative ridge decoder (ldpopt.sketches.ridge): coordinate descent (cpu) and scipy's nnls on
the stacked system (numpy) against cvxpy on the same problem, the certified distance bound against
the true distance, and the errors."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from ldpopt.sketches.ridge import distance_bound, nonneg_ridge


def _problem(seed, rows=60, d=25):
    gen = np.random.default_rng(seed)
    X = (gen.random((rows, d)) < 0.15).astype(float)
    w = np.where(gen.random(d) < 0.5, gen.exponential(50, d), 0.0)
    y = X @ w + gen.normal(0, 20, rows) - 30.0  # the offset pushes some coefficients to the bound
    return X, y, float(gen.uniform(0.5, 5.0))


@pytest.mark.parametrize("seed", range(4))
def test_both_solvers_reach_cvxpys_minimiser_within_their_bounds(seed):
    pytest.importorskip("numba", reason="the coordinate descent needs numba")
    X, y, beta = _problem(seed)
    w = cp.Variable(X.shape[1], nonneg=True)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - X @ w) + beta / 2 * cp.sum_squares(w))).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    ref = np.maximum(w.value, 0)
    fits = [nonneg_ridge(X, y, beta, dev) for dev in ("cpu", "numpy")]
    for fit in fits:
        assert fit.bound < 1e-8 * np.abs(ref).max()
        assert np.linalg.norm(fit.w - ref) <= fit.bound + distance_bound(X, y, beta, ref)
    assert np.linalg.norm(fits[0].w - fits[1].w) <= fits[0].bound + fits[1].bound
    assert (fits[0].w == 0).any() and fits[0].sweeps > 1  # the constraint binds; the sweeps iterate


def test_distance_bound_is_an_upper_bound_away_from_the_minimiser():
    X, y, beta = _problem(7)
    w_star = nonneg_ridge(X, y, beta, "numpy").w
    gen = np.random.default_rng(0)
    for scale in (1e-6, 1e-2, 1.0, 30.0):
        w = np.maximum(w_star + scale * gen.normal(size=w_star.shape), 0)
        dist = np.linalg.norm(w - w_star)
        assert dist <= distance_bound(X, y, beta, w) + 1e-9
        assert distance_bound(X, y, beta, w) <= 1e4 * dist + 1e-6  # not vacuous either


def test_errors_name_the_argument():
    X, y, _ = _problem(1)
    with pytest.raises(ValueError, match="beta must be"):
        nonneg_ridge(X, y, 0.0)
    with pytest.raises(ValueError, match="y must be"):
        nonneg_ridge(X, y[:-1], 1.0)
    with pytest.raises(ValueError, match="w must be"):
        distance_bound(X, y, 1.0, -np.ones(X.shape[1]))
    with pytest.raises(ValueError, match="device"):
        nonneg_ridge(X, y, 1.0, "gpu")


def test_coordinate_descent_cycle_shortcut_equals_running_every_sweep():
    """scikit-learn's stopping rule (the reproduction of pure-ldp's server): reading the last state off
    a detected cycle gives, bit for bit, what running all the sweeps gives."""
    pytest.importorskip("numba", reason="the coordinate descent needs numba")
    import scipy.sparse as sp

    from ldpopt.kernels.ridge import coordinate_descent

    seen = set()
    for seed in range(6):
        X, y, beta = _problem(seed, rows=80, d=40)
        A = sp.csc_matrix(X)
        for max_sweeps in (997, 1000, 1003):
            args = (A.indptr, A.indices, A.data, y, beta)
            fast, n_fast, period = coordinate_descent(*args, max_sweeps=max_sweeps, tol=1e-4, sklearn_rule=True)
            slow, n_slow, none = coordinate_descent(*args, max_sweeps=max_sweeps, tol=1e-4, sklearn_rule=True,
                                                    cycles=False)
            assert np.array_equal(fast, slow) and n_fast == n_slow == max_sweeps and none == 0
            seen.add(period)
    assert 0 not in seen and len(seen) > 1  # a cycle was read off every time, of more than one length
