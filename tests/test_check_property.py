"""ldpopt's status against exact references on random small problems (every built-in smooth
objective × Simplex / Box / Fixed / SubsetSum ==, <=, >= / two disjoint SubsetSums, some infeasible):
optimal ⇔ within accuracy_tol(d) of the exact optimum; never optimal when no point is feasible
(decided exactly). And the δ-grid: an infeasibility spread thinly over many values is never
``optimal``. References: :mod:`_exact_reference`; cases: :mod:`_status_property`."""

import collections
import functools
import warnings

import numpy as np
import pytest
from _status_property import FAMILIES, OBJECTIVES, judge, ldpopt_status, make_case, references
from conftest import examples

#: random problems of the status property: 2,000 under make test, 10,000 under the slow profile
CASES = examples(2_000)
INFEASIBLE = 0.02  # infeasible cases go through the whole solver chain (~0.1 s each): a few suffice


@functools.lru_cache(maxsize=1)
def _cases(seed, n_cases):
    """The n_cases random problems of one seed, grouped by objective (one stream, so every objective's
    share is the same whichever objective a test runs; cached per process)."""
    rng = np.random.default_rng(seed)
    by_obj = collections.defaultdict(list)
    for i in range(n_cases):
        o = OBJECTIVES[i % len(OBJECTIVES)]
        fam = FAMILIES[(i // len(OBJECTIVES)) % len(FAMILIES)]
        by_obj[o].append(make_case(o, fam, int(rng.integers(2, 7)), rng, infeasible=rng.random() < INFEASIBLE))
    return by_obj


def _run(o, cases):
    verdicts = collections.Counter()
    bad = []
    for case, ref in zip(cases, references(o, cases)):
        status, f = ldpopt_status(o, case)
        v = judge(o, case, ref, status, f)
        verdicts[(ref[0], v == "agree")] += 1
        if v != "agree":
            bad.append((o, [type(c).__name__ for c in case[1]], case[0].d, v))
    return verdicts, bad


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_status_agrees_with_the_exact_reference_on_random_problems(objective):
    """The CASES problems of one seed, one objective's fifth per test (so the share runs in parallel);
    each fifth must exercise both kinds, so the whole run does (≥ 0.5 % infeasible, ≥ 90 % feasible)."""
    by_obj = _cases(20261123, CASES)
    assert sum(len(c) for c in by_obj.values()) == CASES
    cases = by_obj[objective]
    assert len(cases) == CASES // len(OBJECTIVES)
    verdicts, bad = _run(objective, cases)
    assert sum(verdicts.values()) == len(cases)
    assert not bad, bad[:10]
    # both kinds were exercised
    assert verdicts[(False, True)] >= CASES // 200 // len(OBJECTIVES) and verdicts[(True, True)] >= 9 * CASES // 10 // len(OBJECTIVES)
    print(f"{objective}: cases {len(cases)}: agreements {sum(v for (_, a), v in verdicts.items() if a)}, "
          f"disagreements {len(bad)}; infeasible {sum(v for (f, _), v in verdicts.items() if not f)}")


@pytest.mark.parametrize("k", [2, 10, 100])
def test_thin_infeasibility_is_never_optimal(k):
    """Weighted MLE, d = 1,000, [Simplex(), SubsetSum(S, 1 + δ)] with S every third value and
    δ = k × the violation tolerance: Σ_{v∉S} f = −δ for every f with both sums exact, so no point is
    feasible; spread over 667 values each negative is far below the per-value tolerance."""
    from test_problems import oue_estimate

    from ldpopt.problems import Problem
    from ldpopt.problems.check.verdict import violation_tol
    from ldpopt.problems.constraints.base import Simplex, SubsetSum
    from ldpopt.problems.solvers.attempts import cvxpy_attempt

    d = 1000
    est, _ = oue_estimate(d, 100_000, 1.0, 0)
    delta = k * violation_tol(d)
    problem = Problem(est, "weighted-mle", [Simplex(), SubsetSum(np.arange(0, d, 3), 1 + delta)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = problem.solve(solver="CLARABEL")
        # the solver's own point, judged by ldpopt's check alone (no pre-solve decision in the way)
        raw = cvxpy_attempt(problem, "CLARABEL")
    # decided exactly before any solver runs: infeasible, the two constraints named
    assert sol.status == "infeasible" and sol.infeasibility is not None
    assert raw.status != "optimal" and raw.checks is not None
    assert any("admit no point" in t for t in raw.checks.failed), raw.checks.failed
    # the aggregate measure alone also rejects it: at least δ in l1, though each value is within tolerance
    assert raw.checks.aggregate_violation >= delta * (1 - 1e-6) > violation_tol(d)
