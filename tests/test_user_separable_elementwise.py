"""A declared separable objective (:class:`~ldpopt.problems.SeparableObjective`) evaluated value by
value: the elementwise probe, the restricted evaluation equal to the whole one bit for bit, functions
that are not elementwise (they read d, or an array of length d they closed over) solved on the whole
vector to the same exact answer, and the dual method on rows whose values sit in the KL term's
exponential tail (CLS + KL with partition totals: certified, where the Newton step on the rows'
multipliers ran away and the route stalled)."""

from __future__ import annotations

import functools

import cvxpy as cp
import numpy as np
import pytest
from _kl_reference import _inner, cls_kl_simplex
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
import ldpopt
from ldpopt import Estimate
from ldpopt.problems import PartitionTotals, Problem, SeparableObjective, Simplex
from ldpopt.problems.objectives.user_separable import elementwise, estimate_on

W = 1e-4


def _estimate(d, seed=1):
    """OUE at ε = 1 over a Zipf(1.5) histogram of max(10⁵, 10 d) users."""
    n = max(10**5, 10 * d)
    p = np.arange(1, d + 1, dtype=float) ** -1.5
    counts = np.random.default_rng(20240601).multinomial(n, p / p.sum())
    oracle = ldpopt.oracles.get("oue", 1.0, d)
    return oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(seed)), n), counts / n


def _cls_kl(prior, reads_d=False):
    """Σ (f − f̃)² + W Σ [f log(f/p) − f + p]; ``prior`` a float (closed over), an array of length d
    (closed over: not elementwise) or None with ``reads_d`` (p = 1/e.d read inside: not elementwise)."""
    def pr(e):
        return 1.0 / e.d if reads_d else prior

    def h(f, e):
        with np.errstate(divide="ignore", invalid="ignore"):
            return (f - e.f_tilde) ** 2 + W * (np.where(f > 0, f * np.log(f / pr(e)), 0.0) - f + pr(e))

    def dh(f, e):
        with np.errstate(divide="ignore"):
            return 2.0 * (f - e.f_tilde) + W * np.log(f / pr(e))

    def d2h(f, e):
        with np.errstate(divide="ignore"):
            return 2.0 + W / f

    return SeparableObjective(h, dh, d2h, name="cls+kl",
                              cvxpy_expr=lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, pr(e))))


def test_elementwise_functions_restrict_bit_for_bit():
    d = 500
    est, _ = _estimate(d)
    obj = _cls_kl(1.0 / d)
    assert elementwise(obj, est)
    sep = obj.per_value(est)
    rng = np.random.default_rng(5)
    f = rng.uniform(1e-6, 3.0 / d, d)
    for idx in (rng.choice(d, 37, replace=False), np.arange(d) % 3 == 0, slice(10, 70), np.array([7])):
        sub = sep.restrict(idx)
        assert sub.est.d == np.arange(d)[idx].size
        for method in ("value", "d1", "d2"):
            assert np.array_equal(getattr(sub, method)(f[idx]), getattr(sep, method)(f)[idx])
    # the restricted estimate is a slice: the same scalars, read-only arrays
    part = estimate_on(est, slice(0, 4))
    assert (part.n, part.p, part.q, part.epsilon) == (est.n, est.p, est.q, est.epsilon)
    assert np.array_equal(part.counts, est.counts[:4]) and not part.f_tilde.flags.writeable


@pytest.mark.parametrize("kind", ["reads d", "closes over an array"])
def test_functions_that_are_not_elementwise_are_evaluated_whole(kind):
    """p = 1/e.d read inside the functions (a different number on a restricted estimate) or a length-d
    prior closed over (a shape error there): not elementwise, no restriction, no groups — and the
    answer is still the exact reference's, certified (d = 4500: past the grouping threshold)."""
    d = 4500
    est, _ = _estimate(d, seed=3)
    prior = np.full(d, 1.0 / d) if kind == "reads d" else np.random.default_rng(4).dirichlet(np.ones(d))
    obj = _cls_kl(None, reads_d=True) if kind == "reads d" else _cls_kl(prior)
    assert not elementwise(obj, est)
    sep = obj.per_value(est)
    assert sep.restrict(np.arange(5)) is None and not sep.count_grouped
    sol = Problem(est, obj, [Simplex()]).solve(progress=False)
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal"
    ref = _uniform_reference(3) if kind == "reads d" else cls_kl_simplex(est.f_tilde, prior, W)
    assert np.max(np.abs(sol.f - ref)) <= max(sol.checks.error_bound, 1e-14) + 1e-15


@functools.cache
def _uniform_reference(seed, d=4500):
    return cls_kl_simplex(_estimate(d, seed)[0].f_tilde, np.full(d, 1.0 / d), W)


def test_elementwise_functions_solve_once_per_distinct_count():
    d = 4500
    est, _ = _estimate(d, seed=3)
    obj = _cls_kl(1.0 / d)
    from ldpopt.problems.solvers.structured import solve_structured

    res = solve_structured(est, obj, [Simplex()])
    assert res.status == "optimal" and 0 < res.iterations["distinct_counts"] < d // 4
    ref = _uniform_reference(3)
    sol = Problem(est, obj, [Simplex()]).solve(progress=False)
    assert sol.status == "optimal" and np.max(np.abs(sol.f - ref)) <= max(sol.checks.error_bound, 1e-14) + 1e-15
    assert np.max(np.abs(res.f - ref)) <= max(sol.checks.error_bound, 1e-14) + 1e-15


def _blocks_reference(f_tilde, p, gid, mass):
    """argmin Σ (f − f̃)² + W Σ KL(f, p) with Σ_{gid = k} f = mass_k for every block k: the blocks are
    independent simplices, each with its own ν_k (bisection on all of them at once, 200 halvings;
    each f_v the root of 2f + W log f = 2f̃_v − ν + W log p by :func:`_inner`)."""
    base = 2.0 * f_tilde + W * np.log(p)
    G = mass.shape[0]
    lo, hi = np.full(G, -1e3), np.full(G, 1e3)
    for _ in range(200):
        nu = 0.5 * (lo + hi)
        s = np.bincount(gid, weights=_inner(base - nu[gid], W), minlength=G)
        lo, hi = np.where(s > mass, nu, lo), np.where(s > mass, hi, nu)
    return _inner(base - (0.5 * (lo + hi))[gid], W)


def test_partition_totals_with_an_exponential_tail_certify():
    """d = 3000, 9 of 10 contiguous groups at their true totals: after the first Newton step on the
    rows' multipliers the small groups' values all sit at ~1e-300 (h'' = 2 + W/f ~ 1e296), their rows'
    curvature vanishes and the next step was ~1e11 — the line search then ran out (status
    inaccurate). The step is now bounded by the range of h' above the smallest normal float."""
    d = 3000
    est, truth = _estimate(d, seed=2)
    parts = np.array_split(np.arange(d), 10)
    cons = [Simplex(), PartitionTotals({f"g{k}": g for k, g in enumerate(parts[:9])},
                                       {f"g{k}": float(truth[g].sum()) for k, g in enumerate(parts[:9])})]
    from ldpopt.problems.solvers.structured import solve_structured

    res = solve_structured(est, _cls_kl(1.0 / d), cons)
    assert res.status == "optimal", res.message
    gid = np.repeat(np.arange(10), [g.size for g in parts])
    mass = np.array([float(truth[g].sum()) for g in parts[:9]])
    ref = _blocks_reference(est.f_tilde, np.full(d, 1.0 / d), gid, np.append(mass, 1.0 - mass.sum()))
    bound = res.certificate.distance_linf
    assert np.isfinite(bound) and np.max(np.abs(res.f - ref)) <= bound + 1e-15


def test_long_rows_are_summed_pairwise():
    """A long row (``PAIRWISE_ROW_MIN`` entries or more) is summed within the pairwise bound (~log n·ε·Σ|terms|, against
    math.fsum's exact sum), where the sparse product's running sum drifts with n; short rows are the
    sparse product's, bit for bit."""
    import math

    import scipy.sparse as sp

    from ldpopt.problems.dual.structure import row_sums

    rng = np.random.default_rng(7)
    d = 600_000
    A = sp.csr_matrix(np.vstack([rng.random(d) < 0.5, np.arange(d) < 40]).astype(float))
    f = rng.dirichlet(np.full(d, 0.3))
    got = row_sums(A, f)
    long_terms = f[A.indices[A.indptr[0]:A.indptr[1]]]
    exact = math.fsum(long_terms)
    assert abs(got[0] - exact) <= 2 * np.log2(long_terms.size) * np.finfo(float).eps * float(np.sum(long_terms))
    assert abs(got[0] - exact) <= abs(float((A @ f)[0]) - exact)
    assert got[1] == (A @ f)[1]


def test_values_off_their_count_group_are_evaluated_on_their_own():
    """t = λ on every value but 12 (a sparse row's): the other values are evaluated once per distinct
    count, the 12 on their own — h' bit for bit the whole vector's, the argmin within rounding of the
    ungrouped bracketed Newton's (both against the exact root's neighbourhood)."""
    d = 4500
    est, _ = _estimate(d, seed=3)
    obj = _cls_kl(1.0 / d)
    sep = obj.per_value(est)
    assert sep.count_grouped
    rng = np.random.default_rng(9)
    t = np.full(d, 0.02)
    row = rng.choice(d, 12, replace=False)
    t[row] += rng.uniform(-0.01, 0.01, row.size)
    f = np.where(est.counts > np.median(est.counts), 2.0, 0.5) / d
    f[row] *= 1.5
    assert np.array_equal(sep.d1(f), obj.dh(f, est))
    l, u = np.zeros(d), np.ones(d)
    got, plain = sep.argmin(t, l, u), sep._argmin(t, l, u)
    ref = _inner(2.0 * est.f_tilde - t + W * np.log(1.0 / d), W)
    tol = 64 * np.finfo(float).eps * (np.abs(t) + 2.0 * np.abs(ref - est.f_tilde) + W * np.abs(np.log(ref * d)))
    tol = tol / (2.0 + W / ref) + 4 * np.finfo(float).eps * ref
    assert np.all(np.abs(got - ref) <= tol) and np.all(np.abs(plain - ref) <= tol)


def test_without_cvxpy_expr_the_structured_route_solves_it():
    """No cvxpy form: Problem builds nothing for cvxpy, the structured route answers (Σ (f − f̃)² on the
    simplex and a cap: Clarabel's answer for the built-in CLS), and what only cvxpy could do is refused
    with the argument named, before any solver runs."""
    est, _ = _estimate(50)
    squares = SeparableObjective(lambda f, e: (f - e.f_tilde) ** 2, lambda f, e: 2.0 * (f - e.f_tilde),
                                 lambda f, e: np.full(e.d, 2.0), name="squares")
    cons = [Simplex(), ldpopt.problems.Box(upper=0.1)]
    prob = Problem(est, squares, cons)
    assert prob._cvx is None
    sol = prob.solve()
    ref = Problem(est, "cls", cons).solve(solver="CLARABEL")
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal"
    assert np.abs(sol.f - ref.f).max() < 1e-7 and ref.f.max() > 0.1 - 1e-9  # the cap binds
    with pytest.raises(ValueError, match="^solver: objective 'squares' has no cvxpy_expr"):
        prob.solve(solver="CLARABEL")
    with pytest.raises(ValueError, match="^objective: 'squares' has no cvxpy_expr.*does not cover"):
        Problem(est, squares, [Simplex(), lambda f, e: [f[0] >= 0.1]])


@settings(max_examples=examples(30), deadline=None)
@given(d=st.integers(2, 40), seed=st.integers(0, 2**31 - 1), tilt=st.booleans(), spread=st.sampled_from([1e-3, 1.0, 1e3]))
def test_a_recognised_sum_of_squares_argmin_in_closed_form_is_the_bracketed_newtons(d, seed, tilt, spread):
    """The argmin of h_v(f) + t_v f on [l_v, u_v] for a recognised sum of squares (``affine_d1``: the
    root −(C + t)/A) against the bracketed Newton the other forms take (the same form with
    ``affine_d1`` withheld), on generated weights, offsets, linear tilts, multipliers and brackets
    (some from 0, some at a bound): the same point to a few ulps of its scale."""
    from ldpopt.problems.objectives.recognise import recognise
    from ldpopt.problems.solvers.user_forms import _RecognisedSep

    rng = np.random.default_rng(seed)
    est = Estimate.from_counts(rng.integers(0, 100, d), n=1000 + d, epsilon=1.0, p=0.6, q=0.3)
    w, a, c = rng.uniform(0.1, 5.0, d), rng.uniform(0.2, 3.0, d) * rng.choice([-1.0, 1.0], d), rng.normal(0, 1, d)
    lin = rng.normal(0, 1, d) if tilt else np.zeros(d)
    form = recognise(lambda f, e: cp.sum(cp.multiply(w, cp.square(cp.multiply(a, f) - c))) + lin @ f, est)
    assert form.affine_d1 is not None
    t = rng.normal(0, spread, d)
    l = np.where(rng.random(d) < 0.5, 0.0, rng.uniform(-1, 0, d))
    u = np.where(rng.random(d) < 0.2, np.inf, l + rng.uniform(0.1, 3.0, d))
    fast = _RecognisedSep(form, "sq")._argmin_new(t, l, u, None, None)
    slow_form = recognise(lambda f, e: cp.sum(cp.multiply(w, cp.square(cp.multiply(a, f) - c))) + lin @ f, est)
    slow_form.__dict__["affine_d1"] = None  # the bracketed Newton
    slow = _RecognisedSep(slow_form, "sq")._argmin_new(t, l, u, None, None)
    scale = np.abs(t) + np.abs(form.affine_d1[1]) + np.abs(form.affine_d1[0]) * np.abs(slow) + 1.0
    assert np.all((fast >= l) & (fast <= u))
    assert np.all(np.abs(fast - slow) <= 64 * np.finfo(float).eps * scale / np.asarray(form.affine_d1[0]))
