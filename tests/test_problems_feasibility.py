"""Infeasible built-in constraints are decided exactly before any solver runs (ldpopt.problems.constraints.feasibility):
the cases of the own-variant report at d = 10 and d = 42,178, exact boundaries (a Box whose lower bounds
sum to exactly 1 is feasible, one float step more is not), a random grid against an independent LP
and every certificate re-checked with Fractions, and the solver's own certificate for a user constraint."""

from __future__ import annotations

import time
import warnings
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
from conftest import examples, solve_contexts
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpopt import oracles
from ldpopt.problems import Box, Fixed, PartitionTotals, Problem, Simplex, SolverWarning, SubsetSum, SumTo
from ldpopt.problems.constraints.feasibility import find_infeasibility


def _est(d, seed=0):
    rng = np.random.default_rng(seed)
    o = oracles.get("oue", 1.0, d)
    return o.estimate(o.sample_counts(rng.multinomial(10**6, rng.dirichlet(np.ones(d))), rng=rng), 10**6)


def _solve(est, objective, cons):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverWarning)
        t = time.process_time()
        sol = Problem(est, objective, cons).solve()
        return sol, time.process_time() - t


@pytest.fixture(scope="module")
def big():
    return _est(42_178, 1)


_S = np.arange(0, 42_178, 3)  # every third value


@pytest.mark.parametrize("objective", ["cls", "weighted-mle"])
@pytest.mark.parametrize("cons,names", [
    ([Simplex(), SubsetSum(_S, 1.2)], ["nonnegative", "sum", "subset_sum"]),
    ([Simplex(), SubsetSum(_S, 1 + 1e-3)], ["nonnegative", "sum", "subset_sum"]),
    ([Simplex(), SubsetSum(_S, -0.1)], ["nonnegative", "subset_sum"]),
    ([Simplex(), SubsetSum(_S[:2], 1.5, ">=")], ["nonnegative", "sum", "subset_sum"]),
    ([Simplex(), Box(lower=(1 + 1e-6) / 42_178)], ["sum", "box.lower"]),
    ([Simplex(), Fixed([0, 3], 0.4), SubsetSum([0, 3, 6], 0.5, "<=")], ["nonnegative", "fixed", "subset_sum"]),
    ([Simplex(), PartitionTotals({"a": _S, "b": _S[:-1] + 1}, {"a": 0.6, "b": 0.6})], ["nonnegative", "sum", "partition"]),
    ([Simplex(), Box(upper=0.9), Fixed([5], 0.95)], ["box.upper", "fixed"]),
    # thin: empty in exact arithmetic by 1e-13 / 1e-12, far below any solver's or the check's tolerance
    ([Simplex(), SubsetSum(_S, 1 + 1e-13, ">=")], ["nonnegative", "sum", "subset_sum"]),
    ([Simplex(), Box(lower=np.full(42_178, (1 + 1e-12) / 42_178))], ["sum", "box.lower"]),
    # overlapping subset sums (no interval family: the phase-one LP's duals, verified exactly)
    ([Simplex(), SubsetSum(_S, 0.5, ">="), SubsetSum(_S[:-1] + 1, 0.3, ">="), SubsetSum(np.concatenate([_S, _S[:-1] + 1]),
                                                                              0.8 - 1e-13, "<=")],
     ["subset_sum", "subset_sum_1", "subset_sum_2"]),
])
def test_infeasible_at_kosarak_size_is_decided_before_any_solver(big, objective, cons, names):
    sol, cpu = _solve(big, objective, cons)
    assert sol.status == "infeasible" and not sol.success and np.all(np.isnan(sol.f))
    assert [a["solver"] for a in sol.attempts] == ["LDPOPT-FEASIBILITY"]  # no solver was asked
    assert sol.infeasibility.names == names and sol.infeasibility.margin > 0
    assert cpu < 1.0, cpu  # CPU seconds for the whole solve() call (shared machine: CPU, not wall)


@pytest.mark.parametrize("objective", ["cls", "weighted-mle"])
def test_nearly_infeasible_at_d_10(objective):
    est = _est(10, 2)
    for cons in ([Simplex(), Box(lower=(1 + 1e-6) / 10)], [Simplex(), SubsetSum([1, 4, 7], 1 + 1e-3)]):
        sol, _ = _solve(est, objective, cons)
        assert sol.status == "infeasible" and sol.infeasibility.source == "ldpopt"
    # and just inside: solved as usual, to ldpopt's check
    for cons in ([Simplex(), Box(lower=(1 - 1e-6) / 10)], [Simplex(), SubsetSum([1, 4, 7], 1 - 1e-3)]):
        sol, _ = _solve(est, objective, cons)
        assert sol.status == "optimal" and sol.infeasibility is None


def test_exact_boundary_of_box_lower_bounds():
    """lower = 1/8 at d = 8 sums to exactly 1 (feasible: f = 1/8). Any exact excess is a conflict,
    whatever its size: four float steps (2⁻⁵⁰ = 8.9e-16), (1 + 1e-13)/8 with its exact margin, and
    partition totals 0.1, 0.1, 0.8 over the whole domain (1 + 2⁻⁵⁴ in binary) — the last two within
    the data's own rounding, which the message says, with how to give such totals."""
    est = _est(8, 3)
    step = np.nextafter(0.125, 1) - 0.125
    assert find_infeasibility(Problem(est, "cls", [Simplex(), Box(lower=0.125)])) is None
    four = find_infeasibility(Problem(est, "cls", [Simplex(), Box(lower=0.125 + 4 * step)]))
    assert four is not None and four.margin == float(8 * Fraction(0.125 + 4 * step) - 1) and four.at_rounding
    lower = 0.125 * (1 + 1e-13)
    cert = find_infeasibility(Problem(est, "cls", [Simplex(), Box(lower=lower)]))
    assert cert is not None and cert.names == ["sum", "box.lower"] and not cert.at_rounding
    assert cert.margin == float(8 * Fraction(lower) - 1)
    decimal = PartitionTotals({"a": [0, 1, 2], "b": [3, 4], "c": [5, 6, 7]}, {"a": 0.1, "b": 0.1, "c": 0.8})
    assert Fraction(0.1) * 2 + Fraction(0.8) == 1 + Fraction(1, 2**54)
    with pytest.warns(SolverWarning, match="exact in binary"):
        sol = Problem(est, "cls", [Simplex(), decimal]).solve()
    assert sol.status == "infeasible" and sol.infeasibility.at_rounding and "decimal" in sol.message
    assert sol.infeasibility.margin == 2.0**-54
    implied = PartitionTotals({"a": [0, 1, 2], "b": [3, 4]}, {"a": 0.1, "b": 0.1})  # c's total left out
    assert find_infeasibility(Problem(est, "cls", [Simplex(), implied])) is None
    dyadic = PartitionTotals({"a": [0, 1, 2], "b": [3, 4], "c": [5, 6, 7]}, {"a": 0.125, "b": 0.125, "c": 0.75})
    assert find_infeasibility(Problem(est, "cls", [Simplex(), dyadic])) is None
    tiny = Problem(est, "cls", [Simplex(), SubsetSum([0, 1], 1 + 1e-13)])
    assert find_infeasibility(tiny).names == ["nonnegative", "sum", "subset_sum"]


def _rows_by_hand(c, name, d):
    """(name, row vector a, rhs, sense) of a built-in, written out for the Fraction re-check."""
    if isinstance(c, Simplex):
        return [("sum", [1] * d, Fraction(1), "==")]
    if isinstance(c, SumTo):
        return [(name, [1] * d, Fraction(c.total), "==")]
    if isinstance(c, SubsetSum):
        a = [1 if v in set(np.asarray(c.indices).tolist()) else 0 for v in range(d)]
        if c.sense == ">=":
            return [(name, [-x for x in a], -Fraction(c.value), "<=")]
        return [(name, a, Fraction(c.value), c.sense)]
    if isinstance(c, PartitionTotals):
        return [(name, [1 if v in set(c.groups[key].tolist()) else 0 for v in range(d)], Fraction(c.totals[k]), "==")
                for k, key in enumerate(c.keys)]
    return []


def _random_case(rng, d):
    cons = [Simplex()]
    for _ in range(rng.integers(1, 4)):
        kind = rng.integers(4)
        idx = rng.choice(d, rng.integers(1, d), replace=False)
        if kind == 0:
            cons.append(SubsetSum(idx, float(np.round(rng.uniform(-0.2, 1.3), 2)), ["==", "<=", ">="][rng.integers(3)]))
        elif kind == 1:
            cons.append(Box(lower=float(np.round(rng.uniform(0, 0.3), 2))) if rng.random() < 0.5 else
                        Box(upper=float(np.round(rng.uniform(0, 0.4), 2))))
        elif kind == 2:
            cons.append(Fixed(idx[:2], float(np.round(rng.uniform(0, 0.6), 2))))
        else:
            cons.append(PartitionTotals({"a": idx[:1], "b": idx[1:2] if idx.size > 1 else [(idx[0] + 1) % d]},
                                        {"a": float(np.round(rng.uniform(0, 0.8), 2)),
                                         "b": float(np.round(rng.uniform(0, 0.8), 2))}))
    return cons


def _independent_lp(P) -> bool:
    """Feasible by Clarabel on cvxpy's own constraints (a zero objective, no aggregation)."""
    prob = cp.Problem(cp.Minimize(0), list(P.named_constraints.values()))
    prob.solve(solver="CLARABEL")
    assert prob.status in ("optimal", "infeasible"), prob.status
    return prob.status == "optimal"


def test_random_grid_agrees_with_an_independent_lp_and_certificates_hold_in_fractions():
    rng = np.random.default_rng(11)
    d = 6
    est = _est(d, 4)
    counts = {True: 0, False: 0}
    for _ in range(150):
        cons = _random_case(rng, d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            P = Problem(est, "cls", cons)
            P.cvxpy_problem  # noqa: B018 — built, for the independent LP
        cert = find_infeasibility(P)
        assert (cert is None) == _independent_lp(P), cons
        counts[cert is None] += 1
        if cert is None:
            continue
        # re-check the certificate with Fractions: rows by hand, bounds by hand
        lo = [Fraction(0)] * d
        up = [None] * d
        for c in cons:
            if isinstance(c, Box) and c.lower is not None:
                lo = [max(x, Fraction(float(c.lower))) for x in lo]
            if isinstance(c, Box) and c.upper is not None:
                up = [Fraction(float(c.upper)) if u is None else min(u, Fraction(float(c.upper))) for u in up]
            if isinstance(c, Fixed):
                for v in np.asarray(c.indices).tolist():
                    lo[v] = max(lo[v], Fraction(float(c.values[0])))
                    up[v] = Fraction(float(c.values[0])) if up[v] is None else min(up[v], Fraction(float(c.values[0])))
        if any(u is not None and u < x for x, u in zip(lo, up)):
            continue  # a bound clash: the certificate is the clash itself
        names = P.constraint_names
        rows = [r for c in cons for r in _rows_by_hand(c, names[[P.owners[n][0] for n in names].index(c) +
                                                           (1 if isinstance(c, Simplex) else 0)], d)]
        used = {}
        for name, a, rhs, sense in rows:
            y = cert.rows.get(name, 0.0)
            y = y if isinstance(y, list) else [y]
            used.setdefault(name, list(y))
        coef = [Fraction(0)] * d
        right = Fraction(0)
        for name, a, rhs, sense in rows:
            y = Fraction(used[name].pop(0)) if used[name] else Fraction(0)
            assert sense == "==" or y >= 0
            coef = [cv + y * av for cv, av in zip(coef, a)]
            right += y * rhs
        left = sum((cv * (lo[v] if cv > 0 else up[v]) for v, cv in enumerate(coef) if cv != 0), Fraction(0))
        assert left > right, (cons, cert)
    assert counts[True] >= 20 and counts[False] >= 20, counts  # both verdicts exercised


def test_a_solver_certificate_names_a_user_constraint():
    """A user's affine row is in the exact pre-check (named with the simplex it conflicts with); a
    non-affine one is outside it, and the phase one's point and multipliers, checked by ldpopt, name it
    (after at most one route)."""
    est = _est(5, 5)
    cons = [Simplex(), lambda f, e: {"mine": cp.sum(f[:2]) >= 1.5}, Box(upper=0.9)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, "cls", cons).solve(solver="OSQP")
        conic = Problem(est, "cls", [Simplex(), lambda f, e: {"mine": cp.sum_squares(f) <= 0.1}]).solve()
    assert sol.status == "infeasible" and sol.infeasibility.source == "ldpopt" and sol.infeasibility.margin == 0.5
    assert set(sol.infeasibility.names) == {"nonnegative", "sum", "mine"}
    # min Σ f² = 1/5 > 0.1: the phase one's conflict, proved by ldpopt's check (.check.conflict)
    assert conic.status == "infeasible" and conic.infeasibility.verified and conic.infeasibility.kind == "non-affine"
    assert 0.1 * (1 - 1e-6) <= conic.infeasibility.margin <= 0.1  # a lower bound on s* = 1/5 - 0.1
    solvers = [a["solver"] for a in conic.attempts]  # after at most one route (.phase_one.pre_check)
    assert solvers[-1] == "LDPOPT-PHASE-ONE" and len(solvers) <= 2, solvers
    assert "mine" in conic.infeasibility.names


@pytest.mark.parametrize("row,names", [
    (lambda f, e: cp.sum(f) <= 1 - 1e-9, ["sum", "user"]),
    (lambda f, e: f[0] + f[1] >= 1 + 1e-10, ["nonnegative", "sum", "user"]),
    (lambda f, e: 0.3 * f[0] + 0.7 * f[1] >= 0.7 + 1e-13, ["nonnegative", "sum", "user"]),  # float coefficients
])
def test_thin_conflicts_with_a_user_row_are_decided_before_any_solver(big, row, names):
    """A user's affine rows join the exact pre-check, coefficients as written (these ran to a 120 s
    time limit on the solvers)."""
    sol, cpu = _solve(big, "cls", [Simplex(), row])
    assert sol.status == "infeasible" and [a["solver"] for a in sol.attempts] == ["LDPOPT-FEASIBILITY"]
    assert sol.infeasibility.names == names and sol.infeasibility.source == "ldpopt"
    assert cpu < 1.0, cpu


def test_a_user_row_at_the_exact_boundary_is_not_claimed():
    """Feasible in exact arithmetic (f = e_1; f = 0 on five values; the uniform point) — nothing claimed."""
    est = _est(10, 4)
    for row in (lambda f, e: 0.3 * f[0] + 0.7 * f[1] >= 0.7, lambda f, e: cp.sum(f[:5]) <= 0.0,
                lambda f, e: cp.norm(f, 2) <= 0.999):  # non-affine: left to the solvers
        assert find_infeasibility(Problem(est, "cls", [Simplex(), row])) is None


@st.composite
def _dense_rows(draw):
    """A simplex with dense user rows over d = 20…60 values (aggregated: more than DEFER_MIN_VALUES,
    so the exact pre-check's costly steps are deferred) at a planted point, with one row pair split
    over two callables — A₀f ≤ b₀ and A₀f ≥ b₀ + δ — δ = ±1e-13: a thin slack or a thin conflict."""
    d = draw(st.integers(20, 60))
    seed = draw(st.integers(0, 2**31 - 1))
    delta = draw(st.sampled_from([-1e-13, 1e-13]))
    rng = np.random.default_rng(seed)
    A = rng.random((4, d))
    b = A @ rng.dirichlet(np.ones(d))
    cons = [Simplex(), lambda f, e: A[0] @ f <= b[0], lambda f, e: A[0] @ f >= b[0] + delta,
            lambda f, e: A[2:] @ f == b[2:]]
    return _est(d, seed % 1000), cons


@settings(max_examples=examples(6), deadline=None)
@given(_dense_rows())
def test_a_deferred_decision_agrees_with_the_one_made_first(case):
    """The pre-check's costly steps run after the route (a returned point made exact proves the set
    non-empty; else the full decision): the status is what the full decision made first says —
    "infeasible" exactly where it finds a verified certificate, never "optimal" there."""
    from ldpopt.problems.constraints.feasibility import DEFER_MIN_VALUES, decide

    est, cons = case
    first = decide(Problem(est, "cls", cons))
    assert first.feasible is not None and est.d > DEFER_MIN_VALUES
    P = Problem(est, "cls", cons)
    with solve_contexts() as made:
        sol, _ = _solve_problem(P)
    if first.feasible:
        assert sol.status != "infeasible" and made[-1].feasibility.feasible is True
    else:
        assert sol.status == "infeasible" and sol.infeasibility.verified
        assert sol.infeasibility.names == first.certificate.names
        assert [a["solver"] for a in sol.attempts][-1] == "LDPOPT-FEASIBILITY"


def test_a_returned_point_made_exact_proves_feasibility():
    """Dense user rows with room: the route's point, made exact on its active set, decides; no LP runs."""
    est = _est(40, 3)
    rng = np.random.default_rng(3)
    A = rng.random((6, 40))
    b = A @ rng.dirichlet(np.ones(40))
    P = Problem(est, "cls", [Simplex(), lambda f, e: A[:3] @ f <= b[:3], lambda f, e: A[3:] @ f == b[3:]])
    with solve_contexts() as made:
        sol, _ = _solve_problem(P)
    assert sol.status == "optimal" and made[-1].feasibility.feasible is True
    assert made[-1].feasibility.how == "the returned point, made exact on its active set"


def _solve_problem(P):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverWarning)
        t = time.process_time()
        sol = P.solve()
        return sol, time.process_time() - t


def test_a_deferred_decision_without_time_left_is_not_claimed_optimal(monkeypatch):
    """The returned point does not verify and the deferred steps run out of time: the answer that
    passed the check comes back ``time_limit``, never ``optimal`` on a set not proved non-empty."""
    import ldpopt.problems.constraints.feasibility as F
    import ldpopt.problems.solvers.phase_one as P1

    est = _est(40, 3)
    rng = np.random.default_rng(3)
    A = rng.random((6, 40))
    b = A @ rng.dirichlet(np.ones(40))
    P = Problem(est, "cls", [Simplex(), lambda f, e: A[:3] @ f <= b[:3], lambda f, e: A[3:] @ f == b[3:]])

    def out_of_time(problem, time_limit=None, decision=None, ctx=None):
        time.sleep(max(time_limit or 0.0, 0.0) + 0.01)
        ctx.feasibility = F.Decision(None, how="the exact pre-check: time limit")

    monkeypatch.setattr(F, "point_feasible", lambda *a, **k: False)
    monkeypatch.setattr(P1, "infeasible_solution", out_of_time)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverWarning)
        sol = P.solve(time_limit=3.0)  # room for the route on a loaded machine; the patched step waits out the rest
    assert sol.status == "time_limit" and not sol.success and "not claimed optimal" in sol.message
    assert sol.checks is not None and sol.checks.passed  # the route's point itself passed the check


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data(), d=st.integers(2, 6), m=st.integers(1, 8), le=st.booleans())
def test_rows_of_one_value_read_as_bounds_hold_exactly_where_the_rows_do(data, d, m, le):
    """Rows a·f_i (≤ or =) r are bounds where every a is a power of two (any exponent, either sign,
    values repeated, quotients that underflow): at points on, just inside and just outside each r/a,
    the bounds hold exactly where every row holds in Fractions. Any other coefficient keeps the rows."""
    import scipy.sparse as sp

    from ldpopt.problems.constraints.feasibility import per_value_bounds

    idx = np.array(data.draw(st.lists(st.integers(0, d - 1), min_size=m, max_size=m)))
    power = data.draw(st.booleans())
    exps = data.draw(st.lists(st.integers(-1074, 1000), min_size=m, max_size=m))
    coef = np.array([np.ldexp(1.0, e) if power else data.draw(st.floats(0.1, 10.0)) for e in exps])
    coef *= np.array(data.draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=m, max_size=m)))
    rhs = np.array(data.draw(st.lists(st.floats(-1e300, 1e300, allow_subnormal=True), min_size=m, max_size=m)))
    M = sp.csr_matrix((coef, idx, np.arange(m + 1)), shape=(m, d))
    got = per_value_bounds(M, rhs, le)
    if not all(np.frexp(abs(a))[0] == 0.5 for a in coef):
        assert got is None
        return
    if got is None:  # only a quotient that is not exact keeps power-of-two rows
        with np.errstate(all="ignore"):
            q = rhs / coef
        assert any(not np.isfinite(qk) or Fraction(float(r)) / Fraction(float(a)) != Fraction(float(qk))
                   for a, r, qk in zip(coef, rhs, q))
        return
    lo, up = np.full(d, -np.inf), np.full(d, np.inf)
    for which, i, v in got:
        for k, val in zip(i.tolist(), v.tolist()):
            if which == "lower":
                lo[k] = max(lo[k], val)
            else:
                up[k] = min(up[k], val)
    near = [float(r / a) for a, r in zip(coef, rhs)]
    for _ in range(12):
        f = np.array([data.draw(st.sampled_from(near)) for _ in range(d)])
        f = np.array([data.draw(st.sampled_from([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])) for x in f])
        f = f[np.isfinite(f)] if np.all(np.isfinite(f)) else np.array(near[:1] * d)
        rows_hold = all((Fraction(float(a)) * Fraction(float(f[k])) <= Fraction(float(r))) if le
                        else (Fraction(float(a)) * Fraction(float(f[k])) == Fraction(float(r)))
                        for a, k, r in zip(coef, idx, rhs))
        assert rows_hold == bool(np.all(lo <= f) and np.all(f <= up)), (f, lo, up)


@pytest.mark.parametrize("r", [1e-3, 2e-3])
def test_an_inf_norm_ball_is_a_box_to_the_exact_decision(r):
    """‖f − c‖∞ ≤ r (2d rows as cvxpy reads it) is decided as a box: around a point of the simplex
    feasible before any solver, and proved from the answer without the phase-one LP; shifted so that
    its upper ends sum below 1, infeasible with the ball named by its bounds."""
    from unittest import mock

    from ldpopt.problems.constraints import farkas

    d = 4000
    est = _est(d, 3)
    c = np.random.default_rng(3).dirichlet(np.ones(d))
    with mock.patch.object(farkas, "phase_one", side_effect=farkas.phase_one) as lp:
        sol, _ = _solve(est, "cls", [Simplex(), lambda f, e: cp.norm(f - c, "inf") <= r])
    assert sol.status == "optimal" and lp.call_count == 0, (sol.status, lp.call_count)
    assert np.max(np.abs(sol.f - c)) <= r * (1 + 1e-9)
    u, rho = np.full(d, 1.0 / d), 0.1 / d  # upper ends 1/d - rho / 2 > 0 sum to 0.95 < 1
    shifted = lambda f, e: cp.norm(f - (u - 1.5 * rho), "inf") <= rho
    sol, _ = _solve(est, "cls", [Simplex(), shifted])
    assert sol.status == "infeasible" and [a["solver"] for a in sol.attempts] == ["LDPOPT-FEASIBILITY"]
    assert sol.infeasibility.names == ["sum", "user"] and sol.infeasibility.bounds["user"] == d
