"""Where Clarabel could stop: on grammar families whose cvxpy chain starts with Clarabel, the fewest
iterations after which ldpopt's check certifies Clarabel's iterate, beside the iterations Clarabel
runs to its own stop. No timing: iteration counts are deterministic, so this bounds what any stopping
rule for the chain's Clarabel could save, on any machine.

    python benchmarks/bench_clarabel_stop.py --d 1000 --n 100 --seed 4000
    python benchmarks/bench_clarabel_stop.py --d 100 --n 100 --seed 1000 --name clarabel_stop_d100
    python benchmarks/bench_clarabel_stop.py --seeds 4011,4066 --d 1000

Families: ``tests/problem_strategies.py``'s :func:`draw_family` (as :mod:`bench_random_families`),
seed ``--seed + i``. A family counts where ldpopt's solve makes its first attempt with the cvxpy
chain's Clarabel (families that an earlier route answers or tries, such as ldpopt's structured
solver, are not counted) and Clarabel at ldpopt's options (1e-10) ends ``optimal`` to ldpopt's
check. Per family, on ldpopt's own compiled problem (its unit and multiplier):

- **T**: Clarabel's iterations to its own stop at ldpopt's options (the chain's first attempt);
- **k**: the fewest iterations k (``max_iter = k``, scanned upward from 1) after which Clarabel's
  iterate, taken as the answer, passes ldpopt's check: the check reads the iterate and its
  multipliers as it reads any answer (its status ``optimal``). Clarabel's status at its iteration
  limit is read as a solution for this scan only, and the solver runs in this process;
- **L**: Clarabel's iterations to its own stop at its default tolerances (1e-8) on the same problem,
  and whether ldpopt's check certifies that answer;
- **P**: plain cvxpy + Clarabel's iterations at its defaults on the problem as a user writes it.

No rule that stops Clarabel on what it reports can certify an answer in fewer than k iterations, so
Σk against ΣT is the most any such rule saves on the solve. Results: ``results/NAME.json`` and
``NAME.md``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import _harness as H

#: Clarabel's tolerances at its own defaults (what plain cvxpy runs)
DEFAULT_TOLS = {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8}


def _strategies():
    here = ROOT / "tests"
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    import problem_strategies

    return problem_strategies


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--n", type=int, default=100, help="families")
    ap.add_argument("--d", type=int, default=1000, help="the domain size")
    ap.add_argument("--seed", type=int, default=4000, help="the first family's seed")
    ap.add_argument("--seeds", default=None, help="comma-separated family seeds, instead of --seed and --n")
    ap.add_argument("--name", default="clarabel_stop", help="results file name (NAME.json, NAME.md)")
    return ap


def family_row(fam) -> dict | None:
    """T, k, L (and whether its answer is certified) and P for one family (module docstring); None
    where the family does not count."""
    import cvxpy.settings as S
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL

    from ldpopt.problems.progress import SolveContext
    from ldpopt.problems.solvers import attempts

    problem = fam.ldpopt_problem()
    try:
        first_attempt = (problem.solve(progress=False).attempts or [{}])[0].get("solver")
    except Exception:  # noqa: BLE001 - a family whose solve raises does not count
        return None
    if first_attempt != "CLARABEL":  # another route answered or ran first
        return None

    def attempt(options):
        return attempts.cvxpy_attempt(problem, "CLARABEL", SolveContext(), False, None, options)

    full = attempt(None)
    if full.status != "optimal":
        return None
    at_default = attempt(DEFAULT_TOLS)
    first = None
    saved = CLARABEL.STATUS_MAP["MaxIterations"]
    CLARABEL.STATUS_MAP["MaxIterations"] = S.OPTIMAL  # the iterate at the limit, read as an answer
    try:
        for k in range(1, int(full.iterations) + 1):
            if attempt({"max_iter": k}).status == "optimal":
                first = k
                break
    finally:
        CLARABEL.STATUS_MAP["MaxIterations"] = saved
    prob = fam.cvxpy_problem()[0]
    try:
        prob.solve(solver="CLARABEL")
        plain = int(prob.solver_stats.num_iters)
    except Exception:  # noqa: BLE001 - plain Clarabel's failure: no count
        plain = None
    return {"T": int(full.iterations), "k": first, "L": int(at_default.iterations or 0),
            "L_status": at_default.status, "P": plain, "P_status": prob.status}


def summary(rows: list[dict]) -> dict:
    both = [r for r in rows if r["k"] is not None and r["P"] is not None]
    return {"families": len(rows), "with_plain": len(both),
            "T": sum(r["T"] for r in both), "k": sum(r["k"] for r in both), "L": sum(r["L"] for r in both),
            "P": sum(r["P"] for r in both),
            "L_certified": sum(r["L_status"] == "optimal" for r in rows),
            "k_at_most_P": sum(r["k"] <= r["P"] for r in both),
            "k_equals_T": sum(r["k"] == r["T"] for r in rows if r["k"] is not None)}


def run(quick: bool = False, **opts) -> dict:
    args = H.options(parser(), "bench_clarabel_stop.py", quick, opts)
    from ldpopt.problems.solvers import attempts

    ps = _strategies()
    d = 30 if args.quick else args.d
    seeds = ([int(x) for x in args.seeds.split(",")] if args.seeds else
             [args.seed + i for i in range(5 if args.quick else args.n)])
    warnings.simplefilter("ignore")
    # every attempt in this process: the scan patches cvxpy's reading of Clarabel's status here,
    # which the solver worker's child would not see (T and L are the same counts there)
    attempts.runs_isolated = lambda *a, **k: False
    rows = []
    for sd in seeds:
        fam = ps.draw_family(sd, d)
        got = family_row(fam)
        if got is None:
            continue
        rows.append({"d": d, "seed": sd, "text": fam.text, **got})
        print(f"d={d} seed={sd} T={got['T']} k={got['k']} L={got['L']} ({got['L_status']}) P={got['P']} | "
              f"{fam.text[:90]}", flush=True)
    summ = summary(rows)
    H.save(args.name, args, {"rows": rows, "summary": summ})
    table(summ, rows, H.results_dir(args) / f"{args.name}.md", d,
          f"Seeds {args.seeds}" if args.seeds else f"Seeds {seeds[0]} + i ({len(seeds)} drawn)")
    return {"rows": rows, "summary": summ}


def table(summ: dict, rows: list[dict], path: Path, d: int, seeds: str) -> None:
    """The summary and every counted family as markdown at ``path``."""
    lines = [(f"{seeds}, d = {d}: the families whose chain starts with Clarabel and ends `optimal` at "
             "ldpopt's options. T: Clarabel's iterations at ldpopt's 1e-10; k: the fewest after which its "
             "iterate passes ldpopt's check; L: at Clarabel's 1e-8 on ldpopt's problem; P: plain cvxpy + "
             "Clarabel at its defaults."), "",
             "| counted | with a plain count | ΣT | Σk | ΣL | ΣP | L's answer certified | k ≤ P | k = T |",
             "|---|---|---|---|---|---|---|---|---|",
             (f"| {summ['families']} | {summ['with_plain']} | {summ['T']} | {summ['k']} | {summ['L']} | {summ['P']} | "
             f"{summ['L_certified']} of {summ['families']} | {summ['k_at_most_P']} of {summ['with_plain']} | "
             f"{summ['k_equals_T']} |"), "",
             "| seed | T | k | L | L's status | P | plain's status | family |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['seed']} | {r['T']} | {r['k']} | {r['L']} | {r['L_status']} | {r['P']} | "
                     f"{r['P_status']} | `{r['text']}` |")
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:5]))


if __name__ == "__main__":
    H.cli(parser(), run)
