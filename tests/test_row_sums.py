"""Long constraint rows summed pairwise (structure.row_sums, Structure.residual) against their exact
sums (math.fsum, the reference), and the structured solver's answer on long overlapping subset sums
meeting them to rounding when summed exactly, as the check sums them.

The failure this pins: at d = 10⁶ three subset sums over random halves (5·10⁵ values each) of a CLS +
KL answer came out 2.5–4.9e-13 off their totals while scipy's sequential A f − b was 0 to the last
bit; the check's l1 over the constraints, 1e-6/d = 1e-12, refused the point and the route fell to the
interior point past its time limit. The same rounding shows at d = 4·10⁴ as 3e-15 (below that
tolerance there, above the solver's own 4ε)."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

import ldpopt
from ldpopt.problems import Problem, Simplex, SubsetSum
from ldpopt.problems.solvers.structured import solve_structured
from ldpopt.problems.dual.structure import PAIRWISE_ROW_MIN, row_sums

EPS = np.finfo(float).eps


def test_long_rows_are_summed_to_rounding_short_rows_as_before():
    n = 40_000
    rng = np.random.default_rng(0)
    # a row whose sequential sum loses every small term: 0.5 then 2⁻⁵⁴ each (half an ulp: rounds away)
    x = np.r_[0.5, np.full(n - 1, 2.0**-54), rng.random(50)]
    rows = [np.arange(n), np.arange(n, n + 50), np.arange(0, n + 50, 2), np.zeros(0, int)]
    A = sp.csr_matrix((np.concatenate([np.ones(r.size) for r in rows]),
                       (np.concatenate([np.full(r.size, k) for k, r in enumerate(rows)]), np.concatenate(rows))),
                      shape=(len(rows), x.size))
    exact = np.array([math.fsum(x[r].tolist()) for r in rows])
    got = row_sums(A, x)
    plain = A @ x
    assert abs(plain[0] - exact[0]) > 1e-12  # the sequential sum is off by (n − 1)·2⁻⁵⁴
    for k, r in enumerate(rows):
        if r.size >= PAIRWISE_ROW_MIN:
            assert abs(got[k] - exact[k]) <= 4 * math.log2(r.size) * EPS * float(np.sum(np.abs(x[r])))
        else:  # short rows: scipy's product itself, bit for bit
            assert got[k] == plain[k]
    assert got[3] == 0.0


def test_structured_answer_meets_long_overlapping_subset_sums_when_summed_exactly():
    d = 40_000
    counts = np.random.default_rng(2).multinomial(10 * d, np.arange(1, d + 1) ** -1.5 / np.sum(np.arange(1, d + 1) ** -1.5))
    oracle = ldpopt.oracles.get("oue", 1.0, d)
    est = oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(2)), int(counts.sum()))
    truth = counts / counts.sum()
    rng = np.random.default_rng(1002)
    halves = [np.flatnonzero(rng.random(d) < 0.5) for _ in range(3)]
    assert min(h.size for h in halves) >= PAIRWISE_ROW_MIN
    cons = [Simplex()] + [SubsetSum(h, float(truth[h].sum())) for h in halves]
    prior = np.full(d, 1.0 / d)
    pr = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-4 * cp.sum(cp.kl_div(f, prior)), cons)
    r = solve_structured(est, pr.objective, pr.constraints)
    assert r.status == "optimal"
    worst = max(abs(math.fsum(r.f[h].tolist()) - c.value) for h, c in zip(halves, cons[1:]))
    # the solver's own stop (4ε) plus the pairwise sum's rounding (measured: 2.2e-16 here, ≤ 8.9e-16
    # over six seeds); scipy's sequential rows left 2.8e-15 (0.4–2.8e-15 over the same six seeds)
    assert worst <= 8 * EPS
