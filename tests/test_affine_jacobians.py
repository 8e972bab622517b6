"""The rows of an affine cvxpy expression by reverse accumulation
(:func:`ldpopt.problems.objectives.recognise.affine_jacobians`) against cvxpy's own ``expr.grad`` on
generated compositions of its affine atoms, and that a ``cumsum`` never has its d × d Jacobian built."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpopt.problems.objectives.recognise import affine_jacobians, cvxpy_grad, set_value


def _dense(g):
    return g.toarray() if sp.issparse(g) else np.atleast_2d(np.asarray(g, dtype=float))


def _affine(f, k, rng, P):
    d = f.shape[0]
    forms = [
        lambda e: cp.cumsum(e),
        lambda e: e[1:] - e[:-1],
        lambda e: e[::2] * 3.0 - 1.0,
        lambda e: e[::-1],
        lambda e: cp.multiply(P[: e.size], e) if e.size <= d else e,
        lambda e: rng.standard_normal((3, e.size)) @ e,
        lambda e: cp.hstack([cp.sum(e), e[0], e]),
        lambda e: cp.reshape(e, (e.size, 1), order="F")[:, 0],
        lambda e: e[[0, e.size - 1, 0]] - P[:3],
        lambda e: (e - 2.0) / 4.0,
        lambda e: -e + cp.sum(e),
        lambda e: cp.cumsum(e, axis=None)[-1:],
        lambda e: cp.diff(e) if e.size > 2 else e,
    ]
    return forms[k % len(forms)]


def _composed(d, chain, seed):
    """(f, e, rng): e the composition of :func:`_affine`'s forms ``chain`` applied to f, f set to a
    random point."""
    rng = np.random.default_rng(seed)
    f = cp.Variable(d)
    P = cp.Parameter(d + 2, value=rng.random(d + 2))
    e = f
    for k in chain:
        e = _affine(f, k, rng, P)(e)
    set_value(f, rng.random(d))
    return f, e, rng


@settings(max_examples=30, deadline=None)
@given(d=st.integers(3, 12), chain=st.lists(st.integers(0, 12), min_size=1, max_size=3), seed=st.integers(0, 2**31 - 1))
def test_reverse_rows_equal_cvxpys_jacobian(d, chain, seed):
    f, e, _ = _composed(d, chain, seed)
    mine = affine_jacobians(e)
    ref = e.grad[f]
    assert mine is not None
    np.testing.assert_allclose(_dense(mine[f]), _dense(ref).reshape(d, -1), rtol=1e-12, atol=1e-12)


def test_cumsum_rows_never_build_the_d_by_d_jacobian(monkeypatch):
    from cvxpy.atoms.affine.cumsum import cumsum

    def refuse(self, values):  # cvxpy's d × d lower-triangular ones
        raise AssertionError("cumsum's dense Jacobian was built")

    monkeypatch.setattr(cumsum, "_grad", refuse)
    d = 200_000
    f = cp.Variable(d)
    set_value(f, np.zeros(d))
    at = np.array([10, 1000, 99_999, 150_000])
    g = cvxpy_grad(cp.cumsum(f)[at] - 0.5, {})[f]
    assert g.shape == (d, at.size)
    for j, a in enumerate(at):  # row j: ones on 0..a
        col = _dense(g[:, [j]]).ravel()
        assert col[: a + 1].min() == 1.0 and col[: a + 1].max() == 1.0 and not col[a + 1:].any()


def test_a_matrix_cumsum_is_left_to_cvxpy():
    X = cp.Variable((3, 2))
    set_value(X, np.ones((3, 2)))
    assert affine_jacobians(cp.cumsum(X, axis=0)) is None
    got = cvxpy_grad(cp.cumsum(X, axis=0), {})[X]
    np.testing.assert_allclose(_dense(got), _dense(cp.cumsum(X, axis=0).grad[X]))


@pytest.mark.parametrize("expr", [lambda f: cp.sum_squares(cp.cumsum(f)), lambda f: cp.norm(f, 2)])
def test_non_affine_expressions_take_the_chain_rule(expr):
    f = cp.Variable(4)
    set_value(f, np.arange(1.0, 5.0))
    e = expr(f)
    assert not e.is_affine()
    np.testing.assert_array_equal(_dense(cvxpy_grad(e, {})[f]), _dense(e.grad[f]))


def test_an_inf_ball_s_rows_are_read_without_cvxpys_hstack_jacobian(monkeypatch):
    """cvxpy states ‖f − c‖∞ ≤ r as the rows hstack(f − c, c − f) ≤ r: they are read by cutting the
    adjoint's columns apart (not through cvxpy's Jacobian of ``hstack``, built by cvxcore), and equal
    cvxpy's own rows."""
    from cvxpy.atoms.affine.hstack import Hstack

    d = 500
    f = cp.Variable(d)
    c = np.random.default_rng(3).random(d)
    expr = cp.hstack([f - c, c - f, f[:3]])
    set_value(f, np.full(d, 0.5))
    ref = _dense(expr.grad[f])

    def refuse(self, values):
        raise AssertionError("cvxpy's Jacobian of hstack was built")

    monkeypatch.setattr(Hstack, "_grad", refuse)
    got = affine_jacobians(expr)
    assert got is not None
    np.testing.assert_array_equal(_dense(got[f]), ref)


def test_a_band_on_the_running_sum_is_solved_without_reading_its_rows(monkeypatch):
    """``F - ε <= cumsum(f) <= F + ε`` in all its rows at d = 3,000: 4.5 million row entries each. Past
    the dense budget its rows are never written — not by cvxpy's d × d Jacobian of ``cumsum`` (refused
    here), and the reverse accumulation is only ever given budgets below d² (each recorded) — and the
    solve is the reference's: ``optimal``, within 1e-6 of cvxpy + Clarabel at 1e-10 on the problem as
    written. The same band moved off Σ f = 1 is never ``optimal``."""
    import ldpopt.problems.objectives.recognise as rec
    from _count_estimates import oue_counts
    from cvxpy.atoms.affine.cumsum import cumsum

    from ldpopt.problems import Problem, Simplex

    def refuse(self, values):
        raise AssertionError("cumsum's dense Jacobian was built")

    monkeypatch.setattr(cumsum, "_grad", refuse)
    written = []
    original = rec.affine_jacobians

    def recorded(expr, budget=rec._DENSE_CUMSUM):
        written.append(budget)
        return original(expr, budget)

    monkeypatch.setattr(rec, "affine_jacobians", recorded)
    d = 3000
    est = oue_counts(d, 200_000, seed=1)
    F = np.cumsum(np.random.default_rng(0).dirichlet(np.ones(d)))
    x = cp.Variable(d)
    set_value(x, np.zeros(d))
    with pytest.raises(rec.DenseRunningSum):
        cvxpy_grad(cp.cumsum(x) - F, {})
    sol = Problem(est, "cls", [Simplex(), lambda f, e: [cp.cumsum(f) <= F + 0.02, cp.cumsum(f) >= F - 0.02]]).solve()
    assert written and max(written) <= max(rec.RUNNING_SUM_ENTRIES * d, rec._DENSE_CUMSUM) < d * d
    g = cp.Variable(d)
    cp.Problem(cp.Minimize(cp.sum_squares(g - est.f_tilde)), [g >= 0, cp.sum(g) == 1, cp.cumsum(g) <= F + 0.02,
                                                              cp.cumsum(g) >= F - 0.02]).solve(
        solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert sol.status == "optimal" and np.max(np.abs(sol.f - g.value)) < 1e-6
    G = F.copy()
    G[-1] = 0.9  # the band's last value excludes Σ f = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        off = Problem(est, "cls", [Simplex(), lambda f, e: [cp.cumsum(f) <= G + 0.02, cp.cumsum(f) >= G - 0.02]]).solve()
    assert off.status != "optimal"


@settings(max_examples=40, deadline=None)
@given(d=st.integers(3, 12), chain=st.lists(st.integers(0, 12), min_size=1, max_size=3), seed=st.integers(0, 2**31 - 1))
def test_the_multipliers_term_by_one_reverse_pass_equals_the_rows_times_y(d, chain, seed):
    """What the check reads for an affine constraint's rows it did not read, Σ_k y_k ∇g_k as the
    gradient of y · g (``numpy_grad``, one reverse pass), is cvxpy's Jacobian times y, on generated
    compositions of cvxpy's affine atoms; where ``numpy_grad`` declines the check asks cvxpy's grad."""
    from ldpopt.problems.objectives.recognise import numpy_grad

    f, e, rng = _composed(d, chain, seed)
    fv = np.asarray(f.value, dtype=np.float64)
    y = rng.standard_normal(e.shape) if e.shape else float(rng.standard_normal())
    got = numpy_grad(cp.sum(cp.multiply(y, e)), f, fv)
    if got is None:
        return
    ref = _dense(e.grad[f]).reshape(d, -1) @ np.atleast_1d(y).ravel(order="F")
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
