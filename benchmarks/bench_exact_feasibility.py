"""The exact feasibility decision of the built-in linear constraints
(``ldpopt.problems.constraints.feasibility.decide``): verdict, the step that decided it and CPU seconds at
d = 42,178 on conflicts and near-conflicts at margins 10⁻³ … 10⁻¹⁵ on both sides, and a random grid
of mixed built-in constraints (d = 2–10) against an independent exact reference (Fourier–Motzkin in
rational arithmetic, ``tests/_lp_reference.py``), and a grid of range trees and Monotone partial
orders over 500–3,000 values at margins ±10⁻¹³ … ±10⁻¹⁷, each planted with a hand-derived answer
(``nested_grid``).

    python benchmarks/bench_exact_feasibility.py              # d = 42,178, 2,000 random systems
    python benchmarks/bench_exact_feasibility.py --d 1000000 --grid 0

Beyond the rational simplex (``large`` rows, d = 42,178 and 10⁵): a full-domain Monotone chain with
Σ f = 1 against a SubsetSum of the first half (≤ 1/2 ∓ m: empty for −m, since a nonincreasing f
puts at least 1/2 there) and against a LinearEquality "first half − second half = ∓m" (empty for
−m), dense dyadic LinearEquality rows M (R rows) with b = M x* at a planted x* = 2⁻¹⁷ plus the
row M₀ + M₁ with b₀ + b₁ + m (empty for m ≠ 0: multipliers (1, 1, −1); R = 200 up to d = 50,000
only), and R = 20, 59, 100 float rows (uniform(−1, 1)) met by a Dirichlet(1) point of the simplex
(59 and 100 up to d = 50,000 only: with Σ f = 1, 60 and 101 tight rows, the first at the bound of the
rational basis solve, the second beyond it: undecided); ``expected`` is that
hand-derived answer, ``feasible`` the decision (None: not decided); CPU seconds of one run.

Data: OUE at ε = 1 on a Dirichlet(1) distribution, n = 10⁶. S is every third value, T every fifth.
CPU seconds are ``time.process_time``, best of 3. Results: ``benchmarks/results/exact_feasibility.json``.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--d", type=int, nargs="+", default=[42_178])
    ap.add_argument("--grid", type=int, default=2000, help="random systems against the exact reference")
    ap.add_argument("--seed", type=int, default=20261124)
    ap.add_argument("--large-d", type=int, nargs="+", default=[42_178, 100_000])
    ap.add_argument("--nested", type=int, default=60, help="planted range trees and partial orders (500-3,000 values)")
    return ap


def _cases(d: int) -> dict:
    import cvxpy as cp

    from ldpopt.problems import Box, LinearEquality, Monotone, PartitionTotals, Simplex, SubsetSum

    S, T = np.arange(0, d, 3), np.arange(0, d, 5)
    out = {}
    for k in (3, 6, 9, 12, 13, 15):
        m = 10.0 ** -k
        out[f"SubsetSum(S) >= 1 + 1e-{k}"] = [Simplex(), SubsetSum(S, 1 + m, ">=")]
        out[f"SubsetSum(S) >= 1 - 1e-{k} (feasible)"] = [Simplex(), SubsetSum(S, 1 - m, ">=")]
        # overlapping subset sums: S ∩ T is every 15th value, S ∪ T carries at most 1
        out[f"S >= 0.5, T >= 0.5 + 1e-{k}, S u T <= 1 - |S n T| share"] = [
            Simplex(), SubsetSum(S, 0.5, ">="), SubsetSum(T, 0.5 + m, ">="), SubsetSum(np.union1d(S, T), 1.0, "<="),
            SubsetSum(np.intersect1d(S, T), 0.0, "<=")]
        # a chain on six values against a subset total: f0 <= f1 <= ... <= f5, f0 + f1 + f2 >= f3 + f4 + f5 + 1e-k
        out[f"Monotone chain on 6 values vs a float row, margin 1e-{k}"] = [
            Simplex(), Monotone("nondecreasing", order=[0, 1, 2, 3, 4, 5]),
            LinearEquality(np.r_[[1.0, 1.0, 1.0, -1.0, -1.0, -1.0], np.zeros(d - 6)][None, :], m)]
        out[f"Box lower (1 + 1e-{k})/d"] = [Simplex(), Box(lower=np.full(d, (1 + m) / d))]
        out[f"user rows f_a + f_b >= 1 + 1e-{k}"] = [Simplex(), lambda f, e, m=m: f[0] + f[1] >= 1 + m]
    out["partition 0.6 + 0.6 (S, S+1)"] = [Simplex(), PartitionTotals({"a": S, "b": S[:-1] + 1}, {"a": 0.6, "b": 0.6})]
    out["user row sum(f) <= 1 - 1e-9"] = [Simplex(), lambda f, e: cp.sum(f) <= 1 - 1e-9]
    return out


def _large_cases(d: int) -> dict:
    """{name: (constraints, expected)} of the module docstring's large cases (d even)."""
    from ldpopt.problems import LinearEquality, Monotone, NonNegative, Simplex, SubsetSum, SumTo

    out = {}
    half = np.r_[np.ones(d // 2), -np.ones(d - d // 2)][None, :]
    for m in (1e-13, 1e-16):
        for sign, expected in ((-1, False), (1, True)):
            out[f"chain + SubsetSum(first half) <= 1/2 {'+-'[sign < 0]} {m:g}"] = (
                [Simplex(), Monotone("nonincreasing"), SubsetSum(np.arange(d // 2), 0.5 + sign * m, "<=")], expected)
            out[f"chain + LinearEquality(first - second half) = {sign * m:g}"] = (
                [Simplex(), Monotone("nonincreasing"), LinearEquality(half, sign * m)], expected)
    rng = np.random.default_rng(7)
    for R in (20, 200) if d <= 50_000 else (20,):  # 201 dense rows × 10⁵ values: 2·10⁷ entries
        M = rng.integers(-8, 9, size=(R, d)) / 8.0
        x = np.full(d, 2.0**-17)
        b = M @ x
        for m, expected in ((1e-13, False), (0.0, True)):
            out[f"dense LinearEquality {R + 1} rows, conflict {m:g}"] = (
                [NonNegative(), SumTo(float(x.sum())), LinearEquality(np.vstack([M, M[0] + M[1]]), np.r_[b, b[0] + b[1] + m])],
                expected)
    # float rows (uniform(-1, 1) coefficients) met by an interior, non-uniform point of the simplex
    # (Dirichlet(1)): no LP when the least-squares point from the centre is inside (docs/problems.md)
    for R in (20, 59, 100) if d <= 50_000 else (20,):
        M = rng.uniform(-1, 1, (R, d))
        b = M @ rng.dirichlet(np.ones(d))
        out[f"dense float LinearEquality {R} rows, interior solution"] = ([Simplex(), LinearEquality(M, b)], True)
    return out


def run(quick: bool = False, **opts) -> dict:
    """Writes ``results/exact_feasibility.json``; ``--quick``: d = 300, 50 random systems."""
    args = H.options(parser(), "bench_exact_feasibility.py", quick, opts)
    from _lp_reference import feasible, random_system

    from ldpopt import oracles
    from ldpopt.problems import Problem
    from ldpopt.problems.constraints.feasibility import decide

    warnings.simplefilter("ignore")
    rows = []
    for d in [300] if args.quick else args.d:
        rng = np.random.default_rng(1)
        o = oracles.get("oue", 1.0, d)
        est = o.estimate(o.sample_counts(rng.multinomial(10**6, rng.dirichlet(np.ones(d))), rng=rng), 10**6)
        for name, cons in _cases(d).items():
            P = Problem(est, "cls", cons)
            cpu, got = H.best_cpu(lambda P=P: decide(P), 3)
            row = {"d": d, "constraints": name, "feasible": got.feasible, "how": got.how,
                   "conflicting": got.certificate.names if got.certificate is not None else None,
                   "margin": got.certificate.margin if got.certificate is not None else None, "cpu_s": cpu}
            print(row, flush=True)
            rows.append(row)
    large = []
    for d in [2048] if args.quick else args.large_d:
        rng = np.random.default_rng(2)
        o = oracles.get("oue", 1.0, d)
        est = o.estimate(o.sample_counts(rng.multinomial(10**6, rng.dirichlet(np.ones(d))), rng=rng), 10**6)
        for name, (cons, expected) in _large_cases(d).items():
            P = Problem(est, "cls", cons)
            cpu, got = H.best_cpu(lambda P=P: decide(P), 1)  # one run: the dense cases take seconds
            row = {"d": d, "constraints": name, "expected": expected, "feasible": got.feasible, "how": got.how,
                   "cpu_s": cpu}
            print(row, flush=True)
            large.append(row)
    grid = {"systems": 0, "feasible": 0, "infeasible": 0, "undecided": 0, "disagreements": [], "how": {}}
    n_grid = 50 if args.quick else args.grid
    rng = np.random.default_rng(args.seed)
    ests = {}
    t0 = H.cpu_clock()
    for i in range(n_grid):
        d = int(rng.integers(2, 11))
        if d not in ests:
            o = oracles.get("oue", 1.0, d)
            ests[d] = o.estimate(o.sample_counts(np.full(d, 100), rng=rng), 100 * d)
        cons, sys_rows = random_system(rng, d)
        truth = feasible(sys_rows, d)
        if truth is None:
            grid["reference_too_large"] = grid.get("reference_too_large", 0) + 1
            continue  # Fourier–Motzkin grows too fast there
        got = decide(Problem(ests[d], "cls", cons))
        grid["systems"] += 1
        grid["feasible" if truth else "infeasible"] += 1
        grid["how"][got.how] = grid["how"].get(got.how, 0) + 1
        if got.feasible is None:
            grid["undecided"] += 1
        elif got.feasible != truth:
            grid["disagreements"].append({"case": i, "d": d, "constraints": repr(cons), "truth": truth})
    grid["cpu_s"] = round(H.cpu_clock() - t0, 1)
    print({k: v for k, v in grid.items()}, flush=True)
    return H.save("exact_feasibility", args, {"rows": rows, "large": large, "grid": grid,
                                              "nested_grid": _nested_grid(args, oracles, Problem, decide),
                                              "basis": _basis_cost(args, oracles, Problem, decide)})


def _basis_cost(args, oracles, Problem, decide) -> list:
    """What the bound on the exact basis solve (``exact_point.MAX_BASIS`` tight rows) keeps out: a
    dense LinearEquality of R rows with Σ f = 1 (R + 1 tight rows) met by a Dirichlet(1) point, float
    entries uniform(−1, 1) or short ones k/8 (k in −8..8, the point on a 2⁻³⁰ grid), decided with
    the bound lifted, at d = 10⁴ (``--quick``: 2,048): CPU seconds of one run. The docstring of
    ``ldpopt.problems.constraints.exact_point`` states the rule from these."""
    from ldpopt.problems import LinearEquality, NonNegative, Simplex, SumTo
    from ldpopt.problems.constraints import exact_point

    d = 2048 if args.quick else 10_000
    rng = np.random.default_rng(5)
    o = oracles.get("oue", 1.0, d)
    est = o.estimate(o.sample_counts(np.full(d, 100), rng=rng), 100 * d)
    out = []
    kept, exact_point.MAX_BASIS = exact_point.MAX_BASIS, 10**6
    try:
        for R, entries in ((20, "float"), (60, "float"), (60, "k/8"), (100, "k/8")):
            if entries == "float":
                M = rng.uniform(-1, 1, (R, d))
                cons = [Simplex(), LinearEquality(M, M @ rng.dirichlet(np.ones(d)))]
            else:
                M = rng.integers(-8, 9, size=(R, d)) / 8.0
                x = np.round(rng.dirichlet(np.ones(d)) * 2**30) / 2**30
                cons = [NonNegative(), SumTo(float(x.sum())), LinearEquality(M, M @ x)]
            t0 = H.cpu_clock()
            got = decide(Problem(est, "cls", cons))
            row = {"d": d, "tight_rows": R + 1, "entries": entries, "feasible": got.feasible, "how": got.how,
                   "cpu_s": round(H.cpu_clock() - t0, 2)}
            print(row, flush=True)
            out.append(row)
    finally:
        exact_point.MAX_BASIS = kept
    return out


def _nested_grid(args, oracles, Problem, decide) -> dict:
    """Range trees (500–3,000 leaves) and Monotone partial orders (500–3,000 values), alternately,
    each planted with a hand-derived answer (``tests/_lp_reference.planted_nested_system``) at a
    margin ±10^-k, k in 13..17: counts by answer, undecided, disagreements, CPU seconds in total
    and the largest for one decision."""
    from _lp_reference import planted_nested_system

    rng = np.random.default_rng(args.seed + 1)
    out = {"systems": 0, "feasible": 0, "infeasible": 0, "undecided": {"tree": 0, "pairs": 0}, "disagreements": [],
           "how": {}, "cpu_s": 0.0, "max_cpu_s": 0.0}
    for i in range(8 if args.quick else args.nested):
        kind = ["tree", "pairs"][i % 2]
        size = int(rng.integers(500, 3001))
        margin = float(rng.choice([-1.0, 1.0])) * 10.0 ** -int(rng.integers(13, 18))
        cons, truth = planted_nested_system(rng, kind, size, margin)
        d = cons[2].tree.size if kind == "tree" else size
        o = oracles.get("oue", 1.0, d)
        P = Problem(o.estimate(o.sample_counts(np.full(d, 100), rng=rng), 100 * d), "cls", cons)
        t0 = H.cpu_clock()
        got = decide(P)
        cpu = H.cpu_clock() - t0
        out["systems"] += 1
        out["feasible" if truth else "infeasible"] += 1
        out["how"][got.how] = out["how"].get(got.how, 0) + 1
        out["cpu_s"] += cpu
        out["max_cpu_s"] = max(out["max_cpu_s"], cpu)
        if got.feasible is None:
            out["undecided"][kind] += 1
        elif got.feasible != truth:
            out["disagreements"].append({"case": i, "kind": kind, "size": size, "margin": margin, "truth": truth})
    out["cpu_s"] = round(out["cpu_s"], 1)
    print(out, flush=True)
    return out


if __name__ == "__main__":
    H.cli(parser(), run)
