"""The structured solver's simplex-only fast path (ldpopt/problems/dual/simplex.py) against its
general dual method (safeguarded Newton on λ, :mod:`ldpopt.problems.dual.dual`): the slow,
independent path on the same problem."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.problems import Box, NonNegative, Simplex, SumTo
from ldpopt.problems.objectives.builtins import make_objective
from ldpopt.problems.solvers.structured import compile_constraints, separable_for, solve_structured
from ldpopt.problems.dual.dual import solve_multipliers
from ldpopt.problems.dual.simplex import simplex_fast


def _general(est, objective, constraints=None):
    sep = separable_for(make_objective(objective), est)
    st = compile_constraints(constraints, est.d)
    f, lam, _, _ = solve_multipliers(sep, st)
    return f, lam


@pytest.mark.parametrize("oracle", ["grr", "oue", "olh", "hr", "ss"])
def test_fast_path_equals_the_dual_method(oracle):
    rng = np.random.default_rng(3)
    grid = [*itertools.product([0.1, 1.0, 8.0], [3, 500], [100, 10**7]), (1.0, 30_000, 10**6)]
    for eps, d, n in grid:
        est = oracles.get(oracle, eps, d).simulate(rng.multinomial(n, rng.dirichlet(np.full(d, 0.3))), rng)
        for obj in ("cls", "weighted-mle"):
            r = solve_structured(est, obj)
            f, lam = _general(est, obj)
            scale = max(1.0, float(np.max(np.abs(est.f_tilde))))
            assert r.status == "optimal", (oracle, eps, d, n, obj, r.message)
            assert np.max(np.abs(r.f - f)) <= 1e-12 * scale, (oracle, eps, d, n, obj)
            if "closed_form" in r.iterations and np.count_nonzero(r.f) > 1:
                # the fast path's multiplier too (at a vertex any λ in an interval is optimal)
                # in frequency units: Δλ moves the mass by Δλ·Σ_support 1/h_v''
                sep = separable_for(make_objective(obj), est)
                sup = r.f > 0
                moved = abs(r.duals["sum"] - lam) * float(np.sum(1.0 / sep.d2(r.f)[sup]))
                assert moved <= 1e-12, (oracle, eps, d, n, obj, moved)


def test_fast_path_is_taken_and_only_where_it_applies():
    rng = np.random.default_rng(4)
    est = oracles.get("oue", 1.0, 42_178).simulate(rng.multinomial(10**6, rng.dirichlet(np.full(42_178, 0.3))), rng)
    for obj in ("cls", "weighted-mle"):
        assert solve_structured(est, obj).iterations.get("closed_form") == obj
        assert solve_structured(est, obj, [NonNegative(), SumTo(1.0)]).iterations.get("closed_form") == obj
    d = est.d
    for cons in ([Simplex(), Box(upper=0.01)], [NonNegative(), SumTo(0.5)]):
        st = compile_constraints(cons, d)
        assert simplex_fast(separable_for(make_objective("weighted-mle"), est), st) is None
    st = compile_constraints([Simplex(), Box(upper=0.01)], d)
    assert simplex_fast(separable_for(make_objective("cls"), est), st) is None
    # a total other than 1 with cls: the fast path applies and agrees with the dual method
    r = solve_structured(est, "cls", [NonNegative(), SumTo(0.5)])
    f, _ = _general(est, "cls", [NonNegative(), SumTo(0.5)])
    assert r.iterations.get("closed_form") == "cls" and np.max(np.abs(r.f - f)) <= 1e-13
    # per-value posterior weights: not a top set of one vector, the general method
    mean = est.f_tilde
    var = np.linspace(1.0, 2.0, d)
    r = solve_structured(est, "posterior", mean=mean, variance=var)
    assert "closed_form" not in r.iterations and r.status == "optimal"


@pytest.mark.parametrize("cons", [None, [Simplex()], [Simplex(name="s")], [NonNegative(), SumTo(0.3)],
                                  [SumTo(2.0, name="t"), NonNegative(name="n")]])
def test_plain_simplex_structure_equals_the_general_pass(cons):
    """compile_constraints' broadcast shortcut for the plain simplex against its general pass."""
    from ldpopt.problems.dual.structure import compile_constraints

    d = 37
    fast, ref = compile_constraints(cons, d), compile_constraints(cons, d, fast=False)
    assert fast.l.base is not None and not fast.l.flags.writeable  # the shortcut was taken
    for k in ("l", "u", "implied_upper", "b", "ineq"):
        a, b = getattr(fast, k), getattr(ref, k)
        assert a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b), k
    assert (fast.d, fast.total, fast.sum_name, fast.chain, fast.A.shape) == (ref.d, ref.total, ref.sum_name, ref.chain,
                                                                              ref.A.shape)
    assert list(fast.duals) == list(ref.duals)
    for name, spec in ref.duals.items():
        assert fast.duals[name][0] == spec[0] and all(np.array_equal(x, y) for x, y in zip(fast.duals[name][1:], spec[1:]))


def _duals_dict_reference(st, f, lam, y, r):
    """duals_dict as first written (every bound source masked and copied): the reference."""
    at_l = (f <= st.l) & (st.l < st.u)
    at_u = (f >= st.u) & (st.l < st.u) & ~at_l
    ylo, yup = np.where(at_l, r, 0.0), np.where(at_u, -r, 0.0)
    out, took_lo, took_up = {}, np.zeros(st.d, bool), np.zeros(st.d, bool)
    for name, spec in st.duals.items():
        kind = spec[0]
        if kind == "sum":
            out[name] = float(lam)
        elif kind == "row":
            v = np.asarray(y[spec[1]], float)
            out[name] = v.copy() if spec[2] is False else float(v[0])
        elif kind == "fixed":
            out[name] = -np.asarray(r[spec[1]], float)
        elif kind in ("lower", "upper"):
            bnd = np.broadcast_to(spec[1], (st.d,))
            mine = (bnd == (st.l if kind == "lower" else st.u)) & ~(took_lo if kind == "lower" else took_up)
            out[name] = np.where(mine, ylo if kind == "lower" else yup, 0.0)
            (took_lo if kind == "lower" else took_up)[mine] = True
    imp = st.implied_upper & (yup != 0)
    if imp.any():
        out[st.sum_name + ".implied"] = np.where(st.implied_upper, yup, 0.0)
    return out


@pytest.mark.parametrize("case", range(6))
def test_duals_dict_equals_the_masked_reference(case):
    """duals_dict (a sole binding source takes y^lo itself) against the masked-copy reference, with
    several lower/upper sources, fixed values, a vertex (implied bound active) and the plain simplex."""
    from ldpopt.problems import Fixed, SubsetSum
    from ldpopt.problems.dual.multipliers import duals_dict

    d = 40
    rng = np.random.default_rng(case)
    lo2 = np.where(rng.random(d) < 0.5, 0.01, 0.0)
    cons = [[Simplex()],
            [NonNegative(), SumTo(1.0), Box(lower=lo2, upper=0.5, name="b")],
            [Simplex(), Box(lower=0.0, name="b0"), Box(upper=np.where(rng.random(d) < 0.5, 0.04, 0.9), name="b1"),
             Box(upper=0.9, name="b2")],
            [Simplex(), Fixed([3, 4], 0.02), SubsetSum([1, 2], 0.1, "<=")],
            [Simplex()],
            [Box(lower=0.0, name="b0"), Box(lower=lo2, name="b1"), SumTo(1.0)]][case]
    st = compile_constraints(cons, d)
    f = np.where(rng.random(d) < 0.4, st.l, np.minimum(st.u, st.l + rng.random(d) * 0.05))
    if case == 4:  # a vertex: all the mass on one value, at its implied upper bound
        f = np.zeros(d)
        f[7] = 1.0
    r = rng.standard_normal(d)
    r[7] = -abs(r[7])
    y = rng.random(st.m)
    got, ref = duals_dict(st, f, 0.3, y, r), _duals_dict_reference(st, f, 0.3, y, r)
    assert list(got) == list(ref)
    for k in ref:
        assert np.array_equal(np.asarray(got[k]), np.asarray(ref[k])), k
        assert np.array_equal(np.signbit(got[k]), np.signbit(ref[k])), k
    if case == 4:
        assert "sum.implied" in got
