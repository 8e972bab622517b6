"""Clarabel's conic data written straight from cvxpy's stuffed tensor (:mod:`ldpopt.problems.solvers.conic_format`)
beside cvxpy's own ``ConicSolver.apply`` (its restructuring product and tensor reduction), on the
grammar's families, and what that does to cvxpy's whole compilation.

    python benchmarks/bench_conic_format.py                          # 40 families at d = 10², 10³; 10 at 10⁴
    python benchmarks/bench_conic_format.py --d 100 --n 100 --seed 1000

Families: ``tests/problem_strategies.py``'s :func:`draw_family` (seeds ``--seed`` + i; at d = 10⁴
``--n-large`` of them), as the plain user writes them (``Family.cvxpy_problem``). Per family, the
least thread CPU of ``--rounds`` calls of

- ``apply``: Clarabel's ``apply`` on the same stuffed program (the chain's reductions run once
  before), cvxpy's ``CLARABEL`` against ldpopt's :class:`~ldpopt.problems.solvers.conic_format.Clarabel`;
  ``identical``: whether the two gave the same ``A``, ``b``, ``c``, ``P`` bit for bit (index types
  included) and the same cone sizes;
- ``compile``: ``get_problem_data("CLARABEL")`` of a fresh ``cvxpy.Problem`` against a fresh
  :class:`~ldpopt.problems.solvers.conic_format.CompiledProblem` of the same objective and
  constraints (each built anew every round, so nothing is cached between calls).

Results: ``results/NAME.json`` (per size: medians, totals, ratios, identical count; per family rows).
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import _harness as H  # noqa: E402


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--d", default="100,1000,10000", help="sizes, comma-separated")
    ap.add_argument("--n", type=int, default=40, help="families per size up to 10³")
    ap.add_argument("--n-large", type=int, default=10, help="families per size above 10³")
    ap.add_argument("--seed", type=int, default=1000, help="the first family's seed at each size")
    ap.add_argument("--rounds", type=int, default=3, help="timed calls per family (the least kept)")
    ap.add_argument("--name", default="conic_format", help="results file name")
    return ap


def _same(a: dict, b: dict) -> bool:
    from cvxpy import settings as s

    for key in (s.A, s.P):
        x, y = a.get(key), b.get(key)
        if (x is None) != (y is None):
            return False
        if x is not None and not (x.shape == y.shape and x.indices.dtype == y.indices.dtype
                                  and np.array_equal(x.indptr, y.indptr) and np.array_equal(x.indices, y.indices)
                                  and x.data.tobytes() == y.data.tobytes()):
            return False
    return (all(a[k].tobytes() == b[k].tobytes() for k in (s.B, s.C))
            and str(a["dims"]) == str(b["dims"]))


def _family_row(fam, seed: int, rounds: int) -> dict | None:
    import cvxpy as cp
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL

    from ldpopt.problems.solvers.conic_format import CompiledProblem

    prob, _, cons = fam.cvxpy_problem()
    ours = CompiledProblem(prob.objective, cons)
    try:
        chain = ours._construct_chain(solver="CLARABEL")
    except cp.error.SolverError:
        return None
    def stuffed():
        """The program before the solver's apply, stuffed afresh (nothing cached from a timed call)."""
        p = CompiledProblem(prob.objective, cons)
        for reduction in chain.reductions[:-1]:
            p, _ = reduction.apply(p)
        return p

    theirs_data, _ = CLARABEL().apply(stuffed())
    ours_data, _ = chain.solver.apply(stuffed())

    def least_apply(solver) -> float:
        best = np.inf
        for _ in range(rounds):
            p = stuffed()
            t = time.thread_time()
            solver.apply(p)
            best = min(best, time.thread_time() - t)
        return float(best)

    row = {"seed": seed, "text": fam.text, "identical": _same(theirs_data, ours_data),
           "apply_cvxpy": least_apply(CLARABEL()), "apply_ldpopt": least_apply(chain.solver)}

    def plain():
        p, _, _ = fam.cvxpy_problem()
        t = time.thread_time()
        p.get_problem_data("CLARABEL")
        return time.thread_time() - t

    def compiled():
        p, _, c = fam.cvxpy_problem()
        q = CompiledProblem(p.objective, c)
        t = time.thread_time()
        q.get_problem_data("CLARABEL")
        return time.thread_time() - t

    row["compile_cvxpy"] = min(plain() for _ in range(rounds))
    row["compile_ldpopt"] = min(compiled() for _ in range(rounds))
    return row


def run(quick: bool = False, **opts) -> dict:
    """Writes ``results/<name>.json``; ``--quick``: 3 families at d = 50, one round."""
    a = H.options(parser(), "bench_conic_format.py", quick, opts)
    sizes = [int(x) for x in str(a.d).split(",") if x]
    if a.quick:
        sizes, a.n, a.rounds = [50], 3, 1
    sys.path.insert(0, str(HERE.parent / "tests"))
    import problem_strategies as ps

    warnings.filterwarnings("ignore")
    out: dict = {"sizes": {}}
    for d in sizes:
        n = a.n if d <= 1000 else a.n_large
        rows = []
        for i in range(n):
            row = _family_row(ps.draw_family(a.seed + i, d), a.seed + i, a.rounds)
            if row is not None:
                rows.append(row)
        if not rows:
            continue
        summary = {"families": len(rows), "identical": sum(r["identical"] for r in rows)}
        for k in ("apply_cvxpy", "apply_ldpopt", "compile_cvxpy", "compile_ldpopt"):
            summary[f"{k}_median_ms"] = statistics.median(r[k] for r in rows) * 1e3
            summary[f"{k}_total_ms"] = sum(r[k] for r in rows) * 1e3
        summary["apply_ratio"] = summary["apply_cvxpy_total_ms"] / summary["apply_ldpopt_total_ms"]
        summary["compile_ratio"] = summary["compile_cvxpy_total_ms"] / summary["compile_ldpopt_total_ms"]
        out["sizes"][str(d)] = {"summary": summary, "rows": rows}
        print(f"d = {d}: {summary['identical']} of {summary['families']} identical; apply "
              f"{summary['apply_cvxpy_median_ms']:.2f} → {summary['apply_ldpopt_median_ms']:.2f} ms (median), "
              f"{summary['apply_ratio']:.2f}x in total; compile {summary['compile_cvxpy_median_ms']:.2f} → "
              f"{summary['compile_ldpopt_median_ms']:.2f} ms, {summary['compile_ratio']:.2f}x", flush=True)
    return H.save(a.name, a, out)


if __name__ == "__main__":
    H.cli(parser(), run)
