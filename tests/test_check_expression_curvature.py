"""The strong-convexity modulus read from a cvxpy objective's own expression
(:func:`ldpopt.problems.objectives.recognise.squares_floor`, :func:`ldpopt.problems.check.verdict.expression_curvature`)
and the distance bound ldpopt's check builds from it where a cvxpy objective's KKT test fails.

References independent of the code: the modulus against the generating coefficients (min_v 2·w_v·a_v²) and
against the midpoint inequality J((x+y)/2) ≤ (J(x) + J(y))/2 − μ/8·‖x − y‖² at random points; the bound
against the distance to Clarabel at 1e-12 tolerances."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt.problems.check.verdict import GAP_TOL, accuracy_tol, check_solution, expression_curvature
from ldpopt.problems.objectives.recognise import squares_floor

#: the Clarabel reference's own accuracy at 1e-12 (as tests/test_referee_plants.py's REF_ALLOW)
REF_ALLOW = 1e-7

EXTRAS = ("none", "norm2", "norm1", "exp", "max", "quad")


@st.composite
def square_objectives(draw):
    """(expr, x, expected μ, d): Σ of 1–2 weighted squares of per-value affine arguments plus a convex
    extra of another kind, written in one of cvxpy's spellings."""
    d = draw(st.integers(2, 8))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    x = cp.Variable(d)
    expected = np.zeros(d)
    expr = 0
    for _ in range(draw(st.integers(1, 2))):
        a = rng.uniform(0.2, 3.0, d) * rng.choice([-1.0, 1.0], d)
        b = rng.normal(size=d)
        w = float(rng.uniform(0.1, 5.0))
        form = draw(st.sampled_from(("sum_squares", "sum_square", "quad_over_lin", "scaled")))
        arg = cp.multiply(a, x) + b
        if form == "sum_squares":
            expr = expr + w * cp.sum_squares(arg)
        elif form == "sum_square":
            expr = expr + cp.sum(w * cp.square(arg))
        elif form == "quad_over_lin":
            expr = expr + cp.quad_over_lin(arg, 1.0 / w)
        else:
            expr = expr - (-(cp.sum_squares(arg) * (2 * w)) / 2.0)
        expected += 2.0 * w * a * a
    extra = draw(st.sampled_from(EXTRAS))
    c = float(rng.uniform(0.01, 2.0))
    M = rng.normal(size=(3, d))
    if extra == "norm2":
        expr = expr + c * cp.norm(M @ x - 1.0, 2)
    elif extra == "norm1":
        expr = expr + c * cp.norm1(x - 0.5)
    elif extra == "exp":
        expr = expr + c * cp.sum(cp.exp(0.3 * x))
    elif extra == "max":
        expr = expr + c * cp.max(M @ x)
    elif extra == "quad":
        expr = expr + c * cp.sum_squares(M @ x)
    return expr, x, float(expected.min()), d, seed


def _value(expr, x, v):
    x.value = v
    return float(expr.value)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(square_objectives())
def test_squares_floor_is_the_squares_modulus_and_a_strong_convexity_bound(case):
    expr, x, expected, d, seed = case
    mu = squares_floor(expr, x, d)
    assert mu == pytest.approx(expected, rel=1e-12)
    rng = np.random.default_rng(seed + 1)
    for _ in range(5):
        u, v = rng.normal(size=d) * 3, rng.normal(size=d) * 3
        lhs = _value(expr, x, (u + v) / 2)
        rhs = (_value(expr, x, u) + _value(expr, x, v)) / 2 - mu / 8 * float(np.sum((u - v) ** 2))
        assert lhs <= rhs + 1e-9 * (1 + abs(rhs))


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(square_objectives(), st.sampled_from(("cumsum", "dense")), st.floats(0.1, 2.0))
def test_squares_floor_reads_no_quadratic_forms_jacobian(case, form, c):
    """A sum of squares of an argument that is not per value (a ``cumsum``, a dense map) gives the
    floor nothing, so adding one leaves μ as it was and computes no Jacobian: the walk's Jacobian
    calls are counted with and without it."""
    from ldpopt.problems.objectives import recognise as rec

    expr, x, expected, d, seed = case
    inner = cp.cumsum(x - 0.1) if form == "cumsum" else np.random.default_rng(seed + 2).normal(size=(3, d)) @ x
    calls = []
    real = rec._jacobian

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rec, "_jacobian", counted)
        assert squares_floor(expr, x, d) == pytest.approx(expected, rel=1e-12)
        before = len(calls)
        assert squares_floor(expr + c * cp.sum_squares(inner), x, d) == pytest.approx(expected, rel=1e-12)
    assert len(calls) == 2 * before, calls


def test_squares_floor_is_zero_without_a_modulus():
    x = cp.Variable(4)
    ones = np.ones(4)
    assert squares_floor(cp.norm(x, 2), x, 4) == 0.0                          # no square at all
    assert squares_floor(cp.sum_squares(x[:3]) + cp.norm(x, 2), x, 4) == 0.0  # a value no per-value square covers
    assert squares_floor(cp.sum_squares(cp.multiply(np.array([1.0, 1, 1, 0]), x)), x, 4) == 0.0
    # a concave addend: not convex, no bound (DCP rejects the sum; the floor must not pretend)
    assert squares_floor(cp.sum_squares(x - ones) + cp.sqrt(cp.sum(x)), x, 4) == 0.0
    p = cp.Parameter(nonneg=True)
    assert squares_floor(p * cp.sum_squares(x), x, 4) == 0.0                  # a parameter without a value
    p.value = 3.0
    assert squares_floor(p * cp.sum_squares(x) + cp.norm(x, 2), x, 4) == pytest.approx(6.0)


def _norm2_problem(d, seed, weight):
    import ldpopt
    from ldpopt.problems import Problem, Simplex

    rng = np.random.default_rng(seed)
    counts = np.floor(5_000 / np.arange(1, d + 1) ** 1.5).astype(int)
    est = ldpopt.oracles.get("oue", 1.0, d).simulate(counts, rng=rng)
    p = np.full(d, 1.0 / d)
    return Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + weight * cp.norm(f - p, 2), [Simplex()])


def _reference(problem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = problem.solve(solver="CLARABEL", progress=False,
                            CLARABEL={"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12})
    return ref


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(20, 60), st.integers(0, 10_000), st.sampled_from((1e-3, 1e-2, 1e-1)),
       st.floats(-9.0, -4.0), st.floats(0.0, 3.0))
def test_a_failed_gap_is_bounded_by_the_expression_modulus_and_the_bound_holds(d, seed, weight, log_eps, shift):
    """An interior point's answer, made by hand: the reference's zeros lifted to ε·(1 + shift·u) (the mass
    taken from the support), its multipliers kept. The gap of the KKT test then grows with ε; whenever
    the check passes, its bound is at least the distance to the reference, and a point off by more
    than the tolerance never passes."""
    problem = _norm2_problem(d, seed, weight)
    ref = _reference(problem)
    zero = ref.f <= 1e-9
    if not zero.any() or zero.all():
        return
    rng = np.random.default_rng(seed)
    lift = 10.0**log_eps * (1.0 + shift * rng.random(d)) * zero
    f = np.where(zero, 0.0, ref.f) + lift
    f[~zero] -= lift.sum() * ref.f[~zero] / ref.f[~zero].sum()
    ch = check_solution(problem, f, ref.duals)
    dist = float(np.max(np.abs(f - ref.f)))
    if ch.passed:
        assert ch.error_bound is None or ch.error_bound >= dist - REF_ALLOW
        assert dist <= accuracy_tol(d) + REF_ALLOW
    if ch.gap is not None and ch.gap > GAP_TOL and ch.passed:  # passed on the bound alone
        assert ch.error_bound is not None and ch.error_bound <= accuracy_tol(d)
        assert expression_curvature(problem) == pytest.approx(2.0)


def test_a_gap_above_the_tolerance_passes_on_the_bound():
    """The regime of the off-grid norm2 class at d = 10⁵ (Clarabel at 1e-10: gap 1.1e-6, its zeros at
    1e-13–1e-9), at d = 50: the check passes on the distance bound where the gap alone fails."""
    d = 50
    problem = _norm2_problem(d, 3, 1e-2)
    ref = _reference(problem)
    zero = ref.f <= 1e-9
    assert zero.any() and not zero.all()
    f = np.where(zero, 1e-5 / d, ref.f)
    f[~zero] -= (f.sum() - 1.0) * ref.f[~zero] / ref.f[~zero].sum()
    ch = check_solution(problem, f, ref.duals)
    assert ch.gap > GAP_TOL
    assert ch.passed, ch.summary()
    assert np.max(np.abs(f - ref.f)) - REF_ALLOW <= ch.error_bound <= accuracy_tol(d)
