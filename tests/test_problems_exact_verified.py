"""The floating-point proof of a feasible point (ldpopt.problems.constraints.exact_point.verified_point):
a True is a proof, so on generated small systems — a planted point on a face, right-hand sides moved by
a few ulps, 1e-15 or 1e-9 either way, bounds at the point, a float point off the planted one — every
True is checked against the exact Fourier–Motzkin reference of tests/_lp_reference.py (rational
arithmetic, no float step); the conflicts thinner than rounding that a float check cannot see are
refused; and the point the solvers return for the simplex with dense rows is proved, as the exact
rational repair (exact_point) proves it. Also: a user's rows C @ f read without cvxpy's
canonicalisation are cvxpy's Jacobian bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _lp_reference import feasible
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt.problems.constraints.exact_point import exact_point, verified_point

ENTRIES = [0.0, 0.0, 1.0, -1.0, 0.5, -0.25, 0.1, -0.3, 3.0, 1.0 / 3.0, 2.0 / 3.0, -7.0, 1e-3]
MOVES = [0.0, 0.0, 1.0, -1.0, 2.0, -2.0, 1e-15, -1e-15, 1e-9, -1e-9]


@st.composite
def systems(draw):
    """(A, b, ineq, lo, up, x0, tol): a point x* in [0, 1]^n, rows A (entries from ENTRIES), b = fl(A x*)
    moved by a few ulps or by 1e-15 / 1e-9 of its size, bounds 0 / 1 / infinite or at x* itself, and
    the float point x0 = x* + noise (0, 1e-13, 1e-10) that the proof starts from."""
    n = draw(st.integers(1, 4))
    m = draw(st.integers(0, 3))
    xs = np.array(draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 1.0 / 3.0, 0.7, 1.0]),
                                min_size=n, max_size=n)))
    A = np.array(draw(st.lists(st.sampled_from(ENTRIES), min_size=m * n, max_size=m * n)), float).reshape(m, n)
    b = A @ xs
    for k in range(m):
        mv = draw(st.sampled_from(MOVES))
        if abs(mv) >= 1.0:  # ulps
            for _ in range(int(abs(mv))):
                b[k] = np.nextafter(b[k], np.inf if mv > 0 else -np.inf)
        else:
            b[k] = b[k] + mv * max(1.0, abs(b[k]))
    ineq = np.array(draw(st.lists(st.booleans(), min_size=m, max_size=m)), bool)
    lo = np.array(draw(st.lists(st.sampled_from(["0", "inf", "at"]), min_size=n, max_size=n)))
    up = np.array(draw(st.lists(st.sampled_from(["1", "inf", "at"]), min_size=n, max_size=n)))
    lo = np.where(lo == "0", 0.0, np.where(lo == "inf", -np.inf, xs))
    up = np.where(up == "1", 1.0, np.where(up == "inf", np.inf, xs))
    noise = draw(st.sampled_from([0.0, 1e-13, 1e-10]))
    signs = np.array(draw(st.lists(st.sampled_from([-1.0, 0.0, 1.0]), min_size=n, max_size=n)))
    x0 = xs + noise * signs
    tol = draw(st.sampled_from([0.0, 1e-12, 1e-9]))
    return A, b, ineq, lo, up, x0, tol


def _reference(A, b, ineq, lo, up) -> bool | None:
    n = A.shape[1]
    rows = [(list(a), float(bk), "<=" if le else "==") for a, bk, le in zip(A, b, ineq)]
    for v in range(n):
        e = [0.0] * n
        e[v] = 1.0
        if np.isfinite(up[v]):
            rows.append((e, float(up[v]), "<="))
        if np.isfinite(lo[v]):
            rows.append(([-x for x in e], -float(lo[v]), "<="))
    return feasible(rows, n)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(systems())
def test_a_proof_is_never_given_for_an_empty_set(case):
    """Every True of verified_point is a non-empty set by the rational reference."""
    A, b, ineq, lo, up, x0, tol = case
    if not verified_point(A, b, ineq, lo, up, x0, tol):
        return
    assert _reference(A, b, ineq, lo, up) is not False, case


def test_generated_systems_are_proved_where_they_should_be():
    """The search above has teeth: on the same kind of systems with right-hand sides exact at the
    planted point and room inside the bounds, the proof succeeds (most of them), and every success
    agrees with the reference."""
    rng = np.random.default_rng(5)
    proved = total = 0
    for _ in range(200):
        n, m = int(rng.integers(3, 7)), int(rng.integers(1, 3))
        xs = rng.uniform(0.2, 0.8, n)
        A = rng.choice(ENTRIES, size=(m, n))
        A[:, 0] = 1.0  # every row has a free value
        b = A @ xs
        ineq = rng.random(m) < 0.3
        x0 = xs + 1e-12 * rng.standard_normal(n)
        lo, up = np.zeros(n), np.ones(n)
        ok = verified_point(A, b, ineq, lo, up, x0, 1e-9)
        total += 1
        proved += ok
        if ok:
            assert _reference(A, b, ineq, lo, up) is not False
    assert proved >= 0.8 * total, (proved, total)


def test_conflicts_thinner_than_rounding_are_refused():
    """Two = rows equal but for one ulp of b; lower bounds summing to 1 + 2⁻⁵² against Σ f = 1; a ≤
    row exceeded by one ulp at a point with no room to move: each float check passes, no proof."""
    lo, up = np.zeros(3), np.ones(3)
    x = np.full(3, 1 / 3)
    A = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    assert not verified_point(A, np.array([1.0, np.nextafter(1.0, 2.0)]), np.zeros(2, bool), lo, up, x, 1e-9)
    lo2 = np.array([0.5, 0.5, 2.0**-52])
    assert not verified_point(A[:1], np.array([1.0]), np.zeros(1, bool), lo2, up, lo2, 1e-9)
    B = np.array([[1.0, 1.0]])
    at = np.array([0.5, np.nextafter(0.5, 1.0)])
    assert not verified_point(B, np.array([1.0]), np.ones(1, bool), at, at, at, 0.0)
    assert verified_point(B, np.array([1.0]), np.ones(1, bool), np.zeros(2), np.ones(2), np.array([0.5, 0.5]), 0.0)


@pytest.mark.parametrize("d", [100, 1000])
def test_the_simplex_with_dense_rows_is_proved_as_the_rational_repair_proves_it(d):
    """Σ f = 1, f ≥ 0, 10 dense = rows and 10 dense ≤ rows met at a Dirichlet point with a few values
    at 0 (the benchmark's 'rows' class): proved, at the float point 1e-12 off the planted one."""
    rng = np.random.default_rng(d)
    f = rng.dirichlet(np.ones(d))
    f[rng.choice(d, d // 10, replace=False)] = 0.0
    f /= f.sum()
    M = rng.standard_normal((20, d))
    A = np.vstack([np.ones(d), M])
    b = np.r_[1.0, M @ f + np.r_[np.zeros(10), 1e-3 * rng.random(5), np.zeros(5)]]
    ineq = np.r_[False, np.zeros(10, bool), np.ones(10, bool)]
    x0 = np.where(f > 0, f + 1e-13 * rng.standard_normal(d), 0.0)
    assert exact_point(A, b, ineq, np.zeros(d), np.full(d, np.inf), x0, 1e-9) is not None
    assert verified_point(A, b, ineq, np.zeros(d), np.full(d, np.inf), x0, 1e-9)


@st.composite
def _constant_rows(draw):
    """A constant C (dense m × d, a vector, integers, sparse, with zeros) and how the row is written."""
    d = draw(st.integers(1, 6))
    m = draw(st.integers(1, 4))
    kind = draw(st.sampled_from(["dense", "vector", "int", "sparse"]))
    vals = draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, -2.5, 0.1, 1e-300, 3e300, 1.0 / 3.0]),
                         min_size=m * d, max_size=m * d))
    C = np.array(vals).reshape(m, d)
    if kind == "vector":
        C = C[0]
    elif kind == "int":
        C = np.rint(C).clip(-5, 5).astype(np.int64)
    elif kind == "sparse":
        C = sp.csr_matrix(C)
    return d, C, draw(st.sampled_from(["le", "eq", "ge", "shifted"]))


@settings(max_examples=examples(75), deadline=None)
@given(_constant_rows())
def test_constant_rows_are_cvxpy_s_jacobian_bit_for_bit(case):
    """The rows of ``C @ f <= b`` read without cvxpy's canonicalisation (feasibility._constant_times)
    equal cvxpy's Jacobian of the constraint (recognise.cvxpy_grad), entry for entry."""
    import cvxpy as cp

    from ldpopt.problems.constraints.feasibility import _constant_times
    from ldpopt.problems.objectives.recognise import cvxpy_grad

    d, C, how = case
    f = cp.Variable(d)
    f.value = np.zeros(d)  # as feasibility._affine_rows reads them
    g = C @ f
    con = {"le": g <= 1.0, "eq": g == 0.5, "ge": 2.0 >= g, "shifted": g - 0.25 <= 0}[how]
    M = _constant_times(con.expr, f)
    assert M is not None
    J = sp.csr_matrix(cvxpy_grad(con.expr, {}).get(f)).T.tocsr()
    assert M.shape == J.shape and M.dtype == np.float64
    assert np.array_equal(M.toarray(), J.toarray())
    assert _constant_times((C @ f + f[0]) - 1.0, f) is None  # two terms in f: cvxpy's Jacobian


@settings(max_examples=examples(50), deadline=None)
@given(st.integers(1, 12), st.integers(-14, 14), st.integers(-14, 14), st.sampled_from([None, 1, 2, 3, -1, -2]),
       st.sampled_from(["sum", "slice"]))
def test_sums_over_slices_are_cvxpy_s_jacobian_bit_for_bit(d, start, stop, step, kind):
    """Σ f and Σ f[a:b:c] (a user's row over a subset, as the benchmark's ``klrow`` writes it) read
    without cvxpy's canonicalisation: cvxpy's Jacobian, entry for entry; a negative step is left to it."""
    import cvxpy as cp

    from ldpopt.problems.constraints.feasibility import _constant_times
    from ldpopt.problems.objectives.recognise import cvxpy_grad

    f = cp.Variable(d)
    f.value = np.zeros(d)
    sel = slice(start, stop, step)
    if kind == "slice" and np.arange(d)[sel].size == 0:
        return
    con = (cp.sum(f) if kind == "sum" else cp.sum(f[sel])) == 0.25
    M = _constant_times(con.expr, f)
    if M is None:  # a negative step is left to cvxpy's Jacobian (its normalised slice is not Python's)
        assert kind == "slice" and step is not None and step < 0
        return
    J = sp.csr_matrix(cvxpy_grad(con.expr, {}).get(f)).T.tocsr()
    assert M.shape == J.shape == (1, d)
    assert np.array_equal(M.toarray(), J.toarray())
