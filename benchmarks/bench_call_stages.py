"""Where ldpopt's whole call spends its CPU beside plain cvxpy, stage by stage, on the grammar's
families that ldpopt solves with cvxpy + Clarabel (the random-families bench's largest class), and
what the ratio would be if ldpopt's own Python cost nothing.

    python benchmarks/bench_call_stages.py                   # 100 families from seed 1000 at d = 100
    python benchmarks/bench_call_stages.py --d 1000 --seed 4000 --n 40

Families: ``tests/problem_strategies.py``'s :func:`draw_family` (seeds ``--seed`` + i, as
``bench_random_families.py``); those whose answer came from the cvxpy chain's Clarabel (the first
attempt's solver) and where plain Clarabel says ``optimal`` are measured, the rest counted. Per family, after one untimed call of each, the
least of ``--rounds`` calls of

- ldpopt's whole call, ``Problem(...)`` + ``.solve(time_limit=30)``: its CPU with children
  (``_harness.timed_cpu``), this process's own (``time.process_time``; the rest is the solver
  worker's child: the solve and the isolation's round trip), and the CPU of each of ldpopt's stages
  in the thread that ran it (``time.thread_time`` around ldpopt's functions: recognition of the
  objective, its automatic multiplier, the exact pre-check, cvxpy's compilation, ldpopt's check, the
  settling of the answer's feasibility);
- plain cvxpy + Clarabel at its defaults, built afresh: its CPU with children, split into the
  expression's construction, cvxpy's compilation and the rest (Clarabel's solve and cvxpy's
  unpacking).

``floor`` = plain CPU / (plain construction + ldpopt's compilation + ldpopt's child): the ratio
ldpopt's call would have if its own Python in this process (recognition, multiplier, pre-check,
check, settling, the rest of the solve's bookkeeping) cost nothing — what the tighter tolerances
and the isolation alone leave. Results: ``results/NAME.json``.
"""

from __future__ import annotations

import collections
import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import _harness as H  # noqa: E402

#: the stages timed: name → (module, attribute) of the function wrapped
STAGES = {
    "recognition": ("ldpopt.problems.problem", "route_objective"),
    "multiplier": ("ldpopt.problems.objectives.base", "_auto_multiplier"),
    "pre_check": ("ldpopt.problems.solvers.routes", "pre_checked"),
    "check": ("ldpopt.problems.solvers.attempts", "check_solution"),
    "settle": ("ldpopt.problems.solvers.routes", "settle"),
}


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--d", type=int, default=100, help="the families' size")
    ap.add_argument("--n", type=int, default=100, help="families drawn")
    ap.add_argument("--seed", type=int, default=1000, help="the first family's seed")
    ap.add_argument("--rounds", type=int, default=3, help="timed calls per family (the least kept)")
    ap.add_argument("--name", default=None, help="results file name (default call_stages_dD)")
    return ap


class _Clock:
    """CPU seconds of the wrapped functions, by stage, in the thread that ran each (outermost call only)."""

    def __init__(self):
        import importlib

        import cvxpy as cp

        self.spent: collections.Counter = collections.Counter()
        self.depth: collections.Counter = collections.Counter()
        for stage, (mod, attr) in STAGES.items():
            m = importlib.import_module(mod)
            setattr(m, attr, self._wrap(stage, getattr(m, attr)))
        cp.Problem.get_problem_data = self._wrap("compile", cp.Problem.get_problem_data)

    def _wrap(self, stage: str, fn):
        def timed(*args, **kwargs):
            self.depth[stage] += 1
            t = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.depth[stage] -= 1
                if not self.depth[stage]:
                    self.spent[stage] += time.thread_time() - t
        return timed


def _family_rows(a) -> tuple[list[dict], int]:
    sys.path.insert(0, str(HERE.parent / "tests"))
    import problem_strategies as ps

    from benchmarks.bench_random_families import plain_call

    clock = _Clock()
    for k in range(3):  # warm-up: imports, the first solves
        fam = ps.draw_family(10**6 + k, 50)
        fam.ldpopt_problem(None).solve(time_limit=30, progress=False)
        plain_call(fam, "CLARABEL", {})
    H.solver_worker_ready()
    rows, skipped = [], 0
    for i in range(a.n):
        seed = a.seed + i
        fam = ps.draw_family(seed, a.d)
        try:
            first = fam.ldpopt_problem(None).solve(time_limit=30, progress=False)
        except Exception:  # noqa: BLE001 - a family ldpopt refuses: not this bench's class
            skipped += 1
            continue
        if not first.attempts or first.attempts[0]["solver"] != "CLARABEL":
            skipped += 1
            continue
        best: dict = {}
        for _ in range(a.rounds):
            clock.spent.clear()

            def call(fam=fam):
                p0 = time.process_time()
                sol = fam.ldpopt_problem(None).solve(time_limit=30, progress=False)
                return sol, time.process_time() - p0

            cpu, _, (sol, own) = H.timed_cpu(call)
            stages = dict(clock.spent)
            if "ldpopt" not in best or cpu < best["ldpopt"]["cpu"]:
                best["ldpopt"] = {"cpu": cpu, "this_process": own, "child": max(cpu - own, 0.0), **stages,
                                  "status": sol.status, "attempts": len(sol.attempts)}
            clock.spent.clear()
            built: list = []

            def plain(fam=fam, built=built):
                t = time.thread_time()
                prob, _, _ = fam.cvxpy_problem()
                built.append(time.thread_time() - t)
                try:
                    prob.solve(solver="CLARABEL")
                except Exception:  # noqa: BLE001 - Clarabel failed: no plain answer to compare with
                    return "error"
                return prob.status

            cpu, _, status = H.timed_cpu(plain)
            if "plain" not in best or cpu < best["plain"]["cpu"]:
                best["plain"] = {"cpu": cpu, "construction": built[-1], "compile": clock.spent["compile"],
                                 "status": status}
        ld, pl = best["ldpopt"], best["plain"]
        if pl["status"] != "optimal":  # plain Clarabel gave no answer: nothing to compare with
            skipped += 1
            continue
        floor_cost = pl["construction"] + ld.get("compile", 0.0) + ld["child"]
        rows.append({"seed": seed, "text": fam.text, "status": ld["status"], "attempts": ld["attempts"],
                     "ldpopt": ld, "plain": pl, "ratio": pl["cpu"] / ld["cpu"], "floor": pl["cpu"] / floor_cost})
        print(f"{seed} {ld['status']:20s} ratio {rows[-1]['ratio']:.2f} floor {rows[-1]['floor']:.2f}  "
              f"ldpopt {ld['cpu'] * 1e3:7.1f} ms  plain {pl['cpu'] * 1e3:7.1f} ms", flush=True)
    return rows, skipped


def summary(rows: list[dict], skipped: int) -> dict:
    """Stage totals (ms, over the families) and the ratios' medians and shares below 0.8."""
    if not rows:
        return {"families": 0, "skipped": skipped}
    tot: collections.Counter = collections.Counter()
    for r in rows:
        ld, pl = r["ldpopt"], r["plain"]
        for k in ("cpu", "this_process", "child", "compile", *STAGES):
            tot[f"ldpopt_{k}"] += ld.get(k, 0.0)
        for k in ("cpu", "construction", "compile"):
            tot[f"plain_{k}"] += pl[k]
    named = sum(tot[f"ldpopt_{k}"] for k in ("compile", *STAGES))
    tot["ldpopt_other_this_process"] = tot["ldpopt_this_process"] - named
    tot["plain_solve"] = tot["plain_cpu"] - tot["plain_construction"] - tot["plain_compile"]
    ratios, floors = [r["ratio"] for r in rows], [r["floor"] for r in rows]
    return {"families": len(rows), "skipped": skipped,
            "ms": {k: round(v * 1e3, 1) for k, v in sorted(tot.items())},
            "ratio_median": statistics.median(ratios), "ratio_below_0.8": sum(x < 0.8 for x in ratios) / len(rows),
            "floor_median": statistics.median(floors), "floor_below_0.8": sum(x < 0.8 for x in floors) / len(rows)}


def run(quick: bool = False, **opts) -> dict:
    """Writes ``results/<name>.json``; ``--quick``: 3 families at d = 50, one round."""
    a = H.options(parser(), "bench_call_stages.py", quick, opts)
    if a.quick:
        a.n, a.d, a.rounds = 3, 50, 1
    warnings.filterwarnings("ignore")
    rows, skipped = _family_rows(a)
    doc = H.save(a.name or f"call_stages_d{a.d}", a, {"summary": summary(rows, skipped), "rows": rows})
    s = doc["summary"]
    print({k: v for k, v in s.items() if k != "ms"})
    print(s.get("ms"))
    return doc


if __name__ == "__main__":
    H.cli(parser(), run)
