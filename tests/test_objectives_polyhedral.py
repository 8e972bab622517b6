"""The ∞-norm and other maxima of affine pieces (ldpopt.problems.objectives.polyhedral): the pieces
read from generated cvxpy expressions reproduce the expression's value; CLS + w·‖f − p‖∞ (each way a
user writes it) is ``optimal``, certified, at cvxpy + Clarabel's optimum; a user ℓ∞ ball is solved
``optimal`` or proved ``infeasible``."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.problems import Problem, Simplex
from ldpopt.problems.objectives.polyhedral import affine_bound, max_pieces

#: the ways a user writes w·‖v‖∞
FORMS = {
    "norm-inf": lambda v: cp.norm(v, "inf"),
    "pnorm-inf": lambda v: cp.pnorm(v, "inf"),
    "norm_inf": lambda v: cp.norm_inf(v),
    "max-abs": lambda v: cp.max(cp.abs(v)),
    "max-of-both": lambda v: cp.max(cp.hstack([cp.max(v), cp.max(-v)])),
}


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _est(d, rng):
    counts = rng.multinomial(4000, rng.dirichlet(np.full(d, 0.5)))
    return Estimate.from_counts(counts, n=4000, epsilon=1.5, p=0.6, q=0.4 / (d - 1))


def _reference(d, objective, extra):
    """cvxpy + Clarabel at tight tolerances: (status, f, value)."""
    f = cp.Variable(d)
    prob = cp.Problem(cp.Minimize(objective(f)), [f >= 0, cp.sum(f) == 1] + extra(f))
    _quiet(prob.solve, solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.status, f.value, prob.value


def _random_max(rng, x, depth=0):
    """A random convex expression of x read as a maximum of affine pieces: a scalar (the second value
    False) or one of x's shape (True)."""
    n = x.shape[0]
    A = rng.normal(size=(int(rng.integers(1, 5)), n))
    b = rng.normal(size=A.shape[0])
    leaf = [lambda: (cp.norm_inf(A @ x + b), False), lambda: (cp.max(A @ x - b), False),
            lambda: (cp.abs(x - rng.normal(size=n)), True),
            lambda: (cp.maximum(x, rng.normal(size=n), 2 * x - 1), True)]
    if depth >= 2:
        return leaf[int(rng.integers(len(leaf)))]()
    kind = int(rng.integers(7))
    if kind < 4:
        return leaf[kind]()
    inner, vec = _random_max(rng, x, depth + 1)
    if kind == 4:  # a positive multiple plus an affine shift
        c = float(rng.uniform(0.1, 3.0))
        return (c * inner + (rng.normal(size=n) @ x if not vec else x), vec)
    if kind == 5:  # the largest entry
        return (cp.max(inner), False) if vec else (cp.max(cp.hstack([inner, cp.norm_inf(x)])), False)
    other, ovec = _random_max(rng, x, depth + 1)
    if vec == ovec:
        return cp.maximum(inner, other), vec
    return cp.maximum(inner if not vec else cp.max(inner), other if not ovec else cp.max(other)), False


@pytest.mark.parametrize("seed", range(40))
def test_the_pieces_reproduce_the_expression_at_random_points(seed):
    rng = np.random.default_rng(seed)
    x = cp.Variable(int(rng.integers(2, 9)))
    e, vec = _random_max(rng, x)
    pieces = max_pieces(e)
    assert pieces is not None and all(P.is_affine() for P in pieces)
    for _ in range(3):
        x.value = rng.normal(size=x.shape[0]) * 3
        want = np.asarray(e.value, float)
        if vec:
            got = np.max(np.stack([np.broadcast_to(np.asarray(P.value, float), e.shape) for P in pieces]), axis=0)
        else:
            got = max(float(np.max(P.value)) for P in pieces)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        # the bound e <= t as affine rows: the same largest violation
        t = float(rng.normal())
        rows = affine_bound(e <= t)
        assert rows is not None and rows.expr.is_affine()
        assert np.max(rows.expr.value) == pytest.approx(float(np.max(want - t)), rel=1e-12, abs=1e-12)


def test_what_is_not_a_maximum_of_affine_pieces_is_not_read():
    x = cp.Variable(4)
    for e in (cp.norm(x, 2), -cp.abs(x), cp.norm_inf(x) + cp.max(x), cp.max(cp.square(x)), cp.norm_inf(cp.square(x)),
              -2 * cp.norm_inf(x), cp.sum(cp.abs(x)), np.ones((4, 4)) @ cp.abs(x)):
        assert max_pieces(e) is None, e
    assert affine_bound(cp.norm(x, 2) <= 1) is None and affine_bound(x <= 1) is None
    assert affine_bound(cp.norm_inf(x) == 1) is None  # not an inequality: left as written


@pytest.mark.parametrize("seed", range(10))
def test_cls_plus_an_inf_norm_penalty_is_optimal_certified_and_matches_clarabel(seed):
    rng = np.random.default_rng(1000 + seed)
    name = list(FORMS)[seed % len(FORMS)]
    d = int(rng.integers(4, 80))
    est = _est(d, rng)
    w = float(10 ** rng.uniform(-3, 0.5))
    p = rng.dirichlet(np.ones(d)) if seed % 2 else rng.uniform(-0.2, 0.4, d)  # a centre on or off the simplex
    form = FORMS[name]

    def obj(f, e=est):
        return cp.sum_squares(f - e.f_tilde) + w * form(f - p)

    sol = _quiet(Problem(est, obj, [Simplex()]).solve, progress=False)
    status, ref, value = _reference(d, obj, lambda f: [])
    assert status == "optimal"
    assert sol.status == "optimal", (name, sol.status, sol.message)
    assert sol.checks.error_bound is not None and sol.checks.error_bound <= 1e-5
    assert np.max(np.abs(sol.f - ref)) <= 1e-6, name
    assert abs(sol.optimal_value - value) <= 1e-6 * max(1.0, abs(value))


@pytest.mark.parametrize("seed", range(10))
def test_a_user_inf_norm_ball_is_solved_or_proved_empty(seed):
    rng = np.random.default_rng(2000 + seed)
    d = int(rng.integers(3, 60))
    est = _est(d, rng)
    form = list(FORMS.values())[seed % len(FORMS)]
    empty = seed % 3 == 2
    if empty:  # every point of the simplex has f_0 <= 1 < c_0 − r
        c = rng.dirichlet(np.ones(d))
        c[0] += 1.0 + float(rng.uniform(0.05, 1.0))
        r = float(rng.uniform(0.0, 0.04))
    else:
        c = rng.dirichlet(np.ones(d))
        r = float(rng.uniform(0.05, 1.0)) / d

    def ball(f, e=None):
        return form(f - c) <= r

    objective = "cls" if seed % 2 else (lambda f, e: cp.sum_squares(f - e.f_tilde) + 0.01 * cp.norm1(f - c))
    sol = _quiet(Problem(est, objective, [Simplex(), ball]).solve, progress=False)
    J = (lambda f: cp.sum_squares(f - est.f_tilde)) if seed % 2 else (
        lambda f: cp.sum_squares(f - est.f_tilde) + 0.01 * cp.norm1(f - c))
    status, ref, _ = _reference(d, J, lambda f: [ball(f)])
    if empty:
        assert status == "infeasible"
        assert sol.status == "infeasible", sol.message
        assert sol.infeasibility is not None
    else:
        assert status == "optimal"
        assert sol.status == "optimal", sol.message
        assert np.max(np.abs(sol.f - ref)) <= 1e-6
        assert np.max(np.abs(sol.f - c)) <= r + 1e-9


def test_a_ball_bound_by_an_affine_right_side_and_an_elementwise_bound():
    rng = np.random.default_rng(5)
    d = 30
    est = _est(d, rng)
    c = rng.dirichlet(np.ones(d))
    cons = [lambda f, e: cp.norm_inf(f - c) <= 0.5 * f[0] + 0.01,
            lambda f, e: cp.abs(f - c) <= 0.02 + 0.5 * c]
    for con in cons:
        sol = _quiet(Problem(est, "cls", [Simplex(), con]).solve, progress=False)
        status, ref, _ = _reference(d, lambda f: cp.sum_squares(f - est.f_tilde), lambda f, con=con: [con(f, None)])
        assert status == "optimal" and sol.status == "optimal", sol.message
        assert np.max(np.abs(sol.f - ref)) <= 1e-6


@pytest.mark.parametrize("seed", range(0, 160, 20))
def test_affine_by_form_is_affine_to_cvxpy_on_the_grammars_expressions(seed):
    """Every sub-expression of 20 grammar families (objective and constraints): ``affine_tree`` True
    only where cvxpy's ``is_affine`` is (it is the sufficient side), and True wherever cvxpy says
    affine and no atom of the subtree needs its data to say so (quad_form and the like)."""
    from problem_strategies import draw_family

    from ldpopt.problems.objectives.polyhedral import affine_tree

    agree = implied = 0
    for s in range(seed, seed + 20):
        fam = draw_family(s, 12)
        f = cp.Variable(12)
        roots = [fam.objective(f, np.asarray(fam.est.f_tilde, float))]
        roots += [c.expr if hasattr(c, "expr") else c.args[0] for c in fam.constraints(f)]
        stack = list(roots)
        while stack:
            node = stack.pop()
            stack.extend(node.args)
            mine, theirs = affine_tree(node), node.is_affine()
            assert not mine or theirs, node
            implied += mine
            data_curvature = any(type(a).__name__ in ("quad_form", "QuadForm", "matrix_frac") for a in _atoms(node))
            if theirs and node.variables() and not data_curvature:
                assert mine, node
                agree += 1
    assert implied >= 20 and agree >= 20, (implied, agree)


def _atoms(e):
    out, stack = [], [e]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.args)
    return out
