"""Random problems for the status property (every built-in smooth objective × Simplex, Box, Fixed,
SubsetSum ==/<=/>=, two disjoint SubsetSums), their exact references (:mod:`_exact_reference`) and
ldpopt's status on each; shared by ``tests/test_check_property.py`` (small d) and
``benchmarks/bench_check_property.py`` (d = 42,178 and 10⁶)."""

from __future__ import annotations

import warnings

import numpy as np
from _exact_reference import block_feasible, solve_blocks

OBJECTIVES = ("cls", "weighted-mle", "multinomial", "binomial", "posterior")
FAMILIES = ("simplex", "box", "fixed", "subset==", "subset<=", "subset>=", "two-subsets")
K = 4  # blocks: S1, S2, pool, padding


def _dy(v):
    """Rounded to a multiple of 2⁻¹⁰: sums of such numbers are exact in float64, so the exact
    feasibility decision and ldpopt's data describe the same set."""
    return np.round(np.asarray(v, float) * 1024.0) / 1024.0


def _estimate(objective, d, rng, n=None, eps=None):
    from ldpopt import Estimate

    eps = float(rng.choice([0.05, 0.5, 2.0, 5.0])) if eps is None else eps
    n = int(rng.choice([10, 1000, 10**6])) if n is None else n
    w = rng.dirichlet(np.full(d, 0.5))
    if objective == "multinomial":  # GRR reports, every count ≥ 1 (a zero count has no unique optimum)
        e = np.exp(eps)
        p, q = e / (e + d - 1), 1.0 / (e + d - 1)
        c = 1 + rng.multinomial(max(n - d, 0), p * w + q * (1 - w) if d > 1 else w)
        return Estimate.from_counts(c, int(c.sum()), eps, p, q, oracle="grr")
    p, q = 0.5, 1.0 / (np.exp(eps) + 1.0)
    tc = rng.multinomial(n, w)
    c = rng.binomial(tc, p) + rng.binomial(n - tc, q)
    return Estimate.from_counts(c, n, eps, p, q, oracle="oue")


def make_case(objective, family, d, rng, infeasible: bool, n=None, eps=None):
    """(estimate, constraints, mean, l, u, block, mass, row): the problem for ldpopt and its block
    form for the reference (``row``: (S, b, sense) of an inequality row, else None)."""
    from ldpopt.problems.constraints.base import Box, Fixed, Simplex, SubsetSum

    est = _estimate(objective, d, rng, n, eps)
    mean = rng.dirichlet(np.ones(d)) if objective == "posterior" else None
    l, u = np.zeros(d), np.full(d, np.inf)
    block = np.full(d, 2)
    mass = [0.0, 0.0, 1.0, 0.0]
    cons, row = [Simplex()], None
    pick = rng.permutation(d)
    if family == "box":
        ub = _dy(rng.uniform(0.0, 1.0, d))
        lb = _dy(ub * rng.uniform(0.0, 0.5, d))
        if infeasible:
            if rng.random() < 0.5:
                ub, lb = np.full(d, _dy(0.9 / d)), np.zeros(d)
            else:
                lb = np.full(d, _dy(1.1 / d) + 2.0**-10)
                ub = np.maximum(ub, lb)
        elif ub.sum() < 1.0:
            ub = np.minimum(_dy(ub + (1.0 - ub.sum()) / d + 0.01), 1.0)
        if lb.sum() > 1.0 and not infeasible:
            lb = _dy(lb * (0.5 / lb.sum()))
        cons.append(Box(lower=lb, upper=ub))
        l, u = lb.copy(), ub.copy()
    elif family == "fixed":
        k = int(rng.integers(1, d + 1))
        idx = np.sort(pick[:k])
        vals = _dy(rng.dirichlet(np.ones(d + 1))[:k])
        if k == d:  # every value fixed: feasible only when they sum to 1
            vals[-1] = 1.0 - float(np.sum(vals[:-1])) if not infeasible else vals[-1]
            if infeasible and abs(float(np.sum(vals)) - 1.0) < 1e-3:
                vals[-1] += 2.0**-6
        elif infeasible:
            vals[0] = _dy(1.0 + 0.01 + rng.random()) - float(np.sum(vals[1:]))
        cons.append(Fixed(idx, vals))
        l[idx] = u[idx] = vals
    elif family in ("subset==", "subset<=", "subset>="):
        k = int(rng.integers(1, d + 1))
        S = np.sort(pick[:k])
        sense = family[6:]
        b = float(_dy(rng.uniform(0.0, 1.0)))
        if infeasible:
            b = float(_dy({"==": 1.01 + rng.random(), "<=": -0.01 - rng.random(), ">=": 1.01 + rng.random()}[sense]))
            if sense == "==" and rng.random() < 0.5 and k < d:
                b = -2.0**-6
        if k == d and sense != ">=" and not infeasible:  # Σ_S f = Σ f = 1
            b = 1.0
        cons.append(SubsetSum(S, b, sense))
        if sense == "==":
            block[S] = 0
            mass[0], mass[2] = b, 1.0 - b
        else:
            row = (S, b, sense)
    elif family == "two-subsets" and d >= 2:
        k1 = int(rng.integers(1, d))
        k2 = int(rng.integers(1, d - k1 + 1))
        S1, S2 = np.sort(pick[:k1]), np.sort(pick[k1:k1 + k2])
        b1, b2 = _dy(rng.dirichlet(np.ones(3))[:2])
        if k1 + k2 == d:
            b2 = 1.0 - b1
        if infeasible:
            b2 = _dy(1.0 - b1 + 0.01 + rng.random())
        cons += [SubsetSum(S1, float(b1)), SubsetSum(S2, float(b2))]
        block[S1], block[S2] = 0, 1
        mass = [float(b1), float(b2), 1.0 - float(b1) - float(b2), 0.0]
    return est, cons, mean, l, u, block, np.array(mass), row


def feasible(l, u, block, mass, row) -> bool:
    from fractions import Fraction

    if row is None:
        return block_feasible(l, u, block, mass)
    S, b, sense = row  # lower bounds are 0 here: Σ_S f ranges over [0, 1], or is 1 when S is everything
    lo = 1 if S.size == l.size else 0
    return (Fraction(float(b)) >= lo) if sense == "<=" else (Fraction(float(b)) <= 1)


def params(objective, ests, means, dmax):
    """The reference's per-problem arrays, padded to ``dmax`` values."""
    B = len(ests)
    P = {k: np.zeros((B, 1)) for k in ("p", "q", "n")}
    P.update(c=np.zeros((B, dmax)), ft=np.zeros((B, dmax)), mean=np.zeros((B, dmax)))
    for i, (e, m) in enumerate(zip(ests, means)):
        P["p"][i], P["q"][i], P["n"][i] = e.p, e.q, e.n
        P["c"][i, :e.d] = e.counts
        P["ft"][i, :e.d] = e.f_tilde
        if m is not None:
            P["mean"][i, :e.d] = m
    return P


def references(objective, cases):
    """Per case: (feasible, x_ref or None, err) — the exact decision and the reference optimum."""
    dmax = max(c[0].d for c in cases)
    B = len(cases)
    L, U = np.zeros((B, dmax)), np.zeros((B, dmax))
    BL = np.full((B, dmax), K - 1)
    M = np.zeros((B, K))
    feas = np.zeros(B, bool)
    for i, (est, _, _, l, u, block, mass, row) in enumerate(cases):
        d = est.d
        feas[i] = feasible(l, u, block, mass, row)
        L[i, :d], U[i, :d], BL[i, :d] = l, u, block
        M[i] = mass if feas[i] else [0, 0, 1, 0]
        if not feas[i]:
            L[i, :d], U[i, :d], BL[i, :d] = 0.0, np.inf, 2
    P = params(objective, [c[0] for c in cases], [c[2] for c in cases], dmax)
    x, err = solve_blocks(objective, P, L, U, BL, M)
    # an inequality row the free optimum violates is active: solve again with it as an equality
    redo = []
    for i, (est, _, _, l, u, block, mass, row) in enumerate(cases):
        if row is not None and feas[i]:
            S, b, sense = row
            s = float(np.sum(x[i, S]))
            if (sense == "<=" and s > b) or (sense == ">=" and s < b):
                redo.append(i)
                BL[i, S] = 0
                M[i] = [b, 0.0, 1.0 - b, 0.0]
    if redo:
        r = np.array(redo)
        sub = {k: v[r] for k, v in P.items()}
        x2, e2 = solve_blocks(objective, sub, L[r], U[r], BL[r], M[r])
        x[r], err[r] = x2, e2
    return [(bool(feas[i]), x[i, :c[0].d] if feas[i] else None, float(err[i])) for i, c in enumerate(cases)]


def ldpopt_status(objective, case):
    from ldpopt.problems import Problem

    est, cons, mean = case[:3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            sol = Problem(est, objective, cons, mean=mean).solve()
        except ValueError as exc:  # constraints rejected up front (exactly infeasible data)
            return "rejected: " + str(exc)[:60], None
    return sol.status, sol.f


def judge(objective, case, ref, status, f) -> str:
    """'agree' or why not: optimal ⇔ within accuracy_tol(d) of the exact optimum (feasible),
    never optimal when no point is feasible."""
    from ldpopt.problems.check.verdict import accuracy_tol

    ok, x, err = ref
    d = case[0].d
    if not ok:
        return "agree" if status != "optimal" else "optimal on an infeasible set"
    if status != "optimal":
        return f"feasible but status {status}"
    dist = float(np.max(np.abs(f - x)))
    return "agree" if dist <= accuracy_tol(d) + err else f"optimal but {dist:.2e} from the optimum"
