"""The referee property at a larger scale than ``tests/test_referee_plants.py`` and
``tests/test_referee_infeasible.py``, on the same generated problems (``tests/problem_strategies.py``):

* the plant table: the reported plants (user CLS + 1e-3·KL, and cls + SubsetSum ==, d = 1,000, the
  structured solver's answer moved by δ = 1e-6 and 1e-4 with Σ f kept, its certificate handed on),
  and every route (structured, direct QP, interior point, sequential QP, cvxpy chain) planted at
  δ = 0.1, 10 and 100 × accuracy_tol(d) on one generated problem each — status, bound and the true
  distance (to Clarabel at 1e-12, unplanted);
* the generated plant run: ``--plants`` problems per route (d = 10–40), each planted at a random δ
  and level, every guarantee of the test checked;
* the false-infeasible run: ``--sets`` generated thin or empty sets (d = 10–``--d-max``), their
  pre-solve (exact pre-check and phase one) judged against the construction.

    python benchmarks/bench_referee_property.py            # writes results/referee_property.json
"""

from __future__ import annotations

import collections
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import _harness as H
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from problem_strategies import CONES, cases
from test_referee_infeasible import SETS, pre_solve, true_violation
from test_referee_plants import (
    REF_ALLOW,
    ROUTE_CONSTRAINTS,
    ROUTES,
    check_verdict,
    planted_solve,
    reference,
    tight_reference,
)

from ldpopt.problems.check.verdict import accuracy_tol


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--plants", type=int, default=12, help="generated problems per route")
    ap.add_argument("--sets", type=int, default=150, help="generated thin or empty sets")
    ap.add_argument("--d-max", type=int, default=3000, help="largest d of the false-infeasible run")
    ap.add_argument("--d-min", type=int, default=10, help="smallest d of the false-infeasible run")
    ap.add_argument("--set-families", default=",".join(SETS),
                    help="comma-separated constraint families of the false-infeasible run (e.g. user-ball,user-energy)")
    ap.add_argument("--parts", default="issue,routes,plants,sets",
                    help="which tables to run: issue (the reported plants), routes (the route table), plants "
                         "(generated plants), sets (false-infeasible); the others are kept from the results file")
    ap.add_argument("--seed", type=int, default=20261125, help="hypothesis's seed (the run is reproducible)")
    ap.add_argument("--timing", action="store_true",
                    help="also time the digests the referee adds per structured solve (three: the certificate's stamp, "
                         "the check's, the returned Solution's) against the whole solve, d = 1e4, 1e5, 1e6")
    return ap


def _issue_table() -> list[dict]:
    import dataclasses

    import cvxpy as cp
    from problem_strategies import plant

    import ldpopt.problems.solvers.structured.solver as S
    from ldpopt import oracles
    from ldpopt.problems import Problem, Simplex, SubsetSum
    from ldpopt.problems.solvers.attempts import structured_attempt

    rng = np.random.default_rng(0)
    d = 1000
    est = oracles.get("oue", 1.0, d).simulate(rng.multinomial(10**5, rng.dirichlet(np.ones(d))), rng=1)
    prior = np.full(d, 1.0 / d)
    makes = {"user CLS + 1e-3 KL": lambda: Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde)
                                                  + 1e-3 * cp.sum(cp.kl_div(f, prior))),
             "cls + SubsetSum(==)": lambda: Problem(est, "cls", [Simplex(), SubsetSum(np.arange(100), 0.3)])}
    rows = []
    orig = S.solve_structured
    for name, make in makes.items():
        truth = make().solve().f
        for delta in (1e-6, 1e-4):
            prob = make()
            S.solve_structured = lambda *a, delta=delta, prob=prob, orig=orig, **k: dataclasses.replace(
                               r := orig(*a, **k), f=plant(r.f, delta, prob))
            try:
                first, _ = structured_attempt(prob)
                whole = prob.solve(progress=False)
            finally:
                S.solve_structured = orig
            rows.append({"problem": name, "d": d, "delta": delta, "structured_status": first.status,
                         "structured_bound": first.checks.error_bound,
                         "true_distance": float(np.max(np.abs(first.f - truth))),
                         "solve_status": whole.solver + ": " + whole.status,
                         "solve_distance": float(np.max(np.abs(whole.f - truth)))})
            print(rows[-1], flush=True)
    return rows


def _route_table(seed: int = 5) -> list[dict]:
    rows = []
    for route, (objectives, levels) in ROUTES.items():
        from problem_strategies import Case, constraints_for, estimate

        rng = np.random.default_rng(seed)
        obj = objectives[0]
        est = estimate("plain", 30, rng, grr=obj == "multinomial")
        cons, _ = constraints_for("subset==", "feasible", 30, rng, 0.0)
        case = Case(obj, "subset==", "plain", "feasible", 30, seed, 0.0, est, cons,
                    "SQP" if obj == "multinomial" else None, True)
        tight = tight_reference(case)
        ref, allow = (reference(case), REF_ALLOW) if tight is None else (tight[0], tight[1] + 1e-15)
        for level in levels:
            for k in (0.1, 10.0, 100.0):
                delta = k * accuracy_tol(case.d)
                sol, hits = planted_solve(case, route, level, delta)
                dist = check_verdict(sol, ref, case.d, allow)
                rows.append({"route": route, "level": level, "objective": obj, "d": case.d, "delta": delta,
                             "delta_over_tol": k, "planted": hits, "solver": sol.solver, "status": sol.status,
                             "bound": None if sol.checks is None else sol.checks.error_bound,
                             "bound_why_not": None if sol.checks is None else sol.checks.not_run.get("error_bound"),
                             "true_distance": dist,
                             "reference": "bisection (tests/_exact_reference.py)" if tight else "Clarabel at 1e-12"})
                print(rows[-1], flush=True)
    return rows


def _plant_run(per_route: int, rng_seed: int) -> dict:
    tally = collections.Counter()
    failures = []
    def make(route, objectives, levels):
        @seed(rng_seed)
        @settings(max_examples=per_route, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def one(data):
            case = data.draw(cases(objectives=objectives, constraints=ROUTE_CONSTRAINTS[route], margins=("feasible",),
                                   d_min=10, d_max=40))
            level = data.draw(st.sampled_from(levels))
            k = data.draw(st.sampled_from([0.1, 1.0, 10.0, 100.0]))
            tight = tight_reference(case)
            ref, allow = (reference(case), REF_ALLOW) if tight is None else (tight[0], tight[1] + 1e-15)
            tally["tight reference" if tight is not None else "Clarabel reference"] += 1
            sol, hits = planted_solve(case, route, level, k * accuracy_tol(case.d))
            if not hits:
                tally[(route, "NOT PLANTED")] += 1
            try:
                check_verdict(sol, ref, case.d, allow)
                tally[(route, sol.status)] += 1
            except AssertionError as exc:
                failures.append({"route": route, "case": repr(case), "level": level, "k": k, "error": str(exc)})
                tally[(route, "FAILED")] += 1
        return one

    for route, (objectives, levels) in ROUTES.items():
        make(route, objectives, levels)()
    refs = {k: tally.pop(k) for k in ("tight reference", "Clarabel reference") if k in tally}
    return {"problems": sum(v for k, v in tally.items() if k[1] != "NOT PLANTED"), "references": refs,
            "by_route_status": {f"{r}: {s}": n for (r, s), n in sorted(tally.items())}, "failures": failures}


def _infeasible_run(n_sets: int, d_max: int, rng_seed: int, d_min: int = 10, families=SETS) -> dict:
    rows = []

    @seed(rng_seed)
    @settings(max_examples=n_sets, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(case=cases(objectives=("cls",), constraints=tuple(families), margins=("thin", "empty"), d_min=d_min,
                      d_max=d_max))
    def one(case):
        t = time.perf_counter()
        _, sol = pre_solve(case)
        claim = sol is not None
        truth = true_violation(case)
        ok = True
        if case.feasible:
            ok = not claim
        elif case.feasible is False and case.constraint not in CONES:
            ok = claim and sol.infeasibility.verified and sol.infeasibility.margin > 0
        elif claim:
            ok = sol.infeasibility.verified and (truth is None or sol.infeasibility.margin <= truth * (1 + 1e-9) + 1e-15)
        rows.append({"constraint": case.constraint, "margin": case.margin, "slack": case.slack, "d": case.d,
                     "feasible": case.feasible, "claimed": claim,
                     "reported_margin": sol.infeasibility.margin if claim else None, "true_violation": truth,
                     "ok": bool(ok), "seconds": round(time.perf_counter() - t, 3)})
    one()
    non_empty = [r for r in rows if r["feasible"]]
    cones_empty = [r for r in rows if r["constraint"] in CONES and r["feasible"] is False]
    return {"families": list(families), "d_range": [d_min, d_max], "sets": len(rows), "non_empty": len(non_empty),
            "non_empty_refused": sum(r["claimed"] for r in non_empty),
            "thinnest_non_empty_slack": min((r["slack"] for r in non_empty if r["margin"] == "thin"), default=None),
            "thin_non_empty_cones": sum(r["constraint"] in CONES and r["margin"] == "thin" for r in non_empty),
            "empty_linear": sum(r["feasible"] is False and r["constraint"] not in CONES for r in rows),
            "empty_linear_refused": sum(r["claimed"] for r in rows if r["feasible"] is False and r["constraint"] not in CONES),
            "empty_cones": len(cones_empty), "empty_cones_refused": sum(r["claimed"] for r in cones_empty),
            "thinnest_empty_cone_refused": min((r["true_violation"] for r in cones_empty if r["claimed"]), default=None),
            "widest_empty_cone_not_refused": max((r["true_violation"] for r in cones_empty if not r["claimed"]), default=None),
            "max_d": max(r["d"] for r in rows), "not_ok": [r for r in rows if not r["ok"]]}


def _timing() -> list[dict]:
    """Per d: the fastest of repeated structured solves (cls) and of one inputs_digest of its (f, duals),
    × 3 (what the referee adds to such a solve)."""
    from ldpopt import oracles
    from ldpopt.problems import Problem
    from ldpopt.problems.check.certificate import inputs_digest

    rows = []
    for d in (10**4, 10**5, 10**6):
        rng = np.random.default_rng(0)
        est = oracles.get("oue", 1.0, d).simulate(rng.multinomial(10**6, rng.dirichlet(np.ones(d))), rng=1)
        prob = Problem(est, "cls")
        sol = prob.solve(progress=False)
        reps = 15 if d < 10**6 else 5
        solve_s, _ = H.best_cpu(lambda prob=prob: prob.solve(progress=False), reps, clock=time.perf_counter)
        dig_s, _ = H.best_cpu(lambda sol=sol: inputs_digest(sol.f, sol.duals), reps, clock=time.perf_counter)
        rows.append({"d": d, "solve_ms": 1e3 * solve_s, "digest_ms": 1e3 * dig_s, "three_digests_ms": 3e3 * dig_s,
                     "share_of_solve": 3 * dig_s / solve_s})
        print(rows[-1], flush=True)
    return rows


def run(quick: bool = False, **opts) -> dict:
    """Writes ``results/referee_property.json``; ``--quick``: 2 plants per route, 20 sets up to d = 300."""
    a = H.options(parser(), "bench_referee_property.py", quick, opts)
    if a.quick:
        a.plants, a.sets, a.d_max = 2, 20, 300
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    parts = set(a.parts.split(","))
    families = [f for f in a.set_families.split(",") if f]
    if unknown := sorted(parts - {"issue", "routes", "plants", "sets"}) + sorted(set(families) - set(SETS)):
        raise SystemExit(f"--parts / --set-families: unknown {unknown}")
    path = H.results_dir(a) / "referee_property.json"
    prev = json.loads(path.read_text()) if path.exists() and parts != {"issue", "routes", "plants", "sets"} else {}
    out = {k: prev[k] for k in ("issue_plants", "route_plants", "generated_plants", "false_infeasible",
                                "false_infeasible_large_d", "timing") if k in prev}
    # each table's command (a partial run keeps the others, with the commands that made them)
    out["table_commands"] = dict(prev.get("table_commands", {}))
    names = {"issue": ["issue_plants"], "routes": ["route_plants"], "plants": ["generated_plants"],
             "sets": ["false_infeasible" if a.d_min == 10 and families == list(SETS) else "false_infeasible_large_d"]}
    for part in parts:
        for key in names[part] + (["timing"] if part == "sets" and a.timing else []):
            out["table_commands"][key] = a.command
    if "issue" in parts:
        out["issue_plants"] = _issue_table()
    if "routes" in parts:
        out["route_plants"] = _route_table()
    if "plants" in parts:
        out["generated_plants"] = _plant_run(a.plants, a.seed)
    if "sets" in parts:
        key = "false_infeasible" if a.d_min == 10 and families == list(SETS) else "false_infeasible_large_d"
        out[key] = _infeasible_run(a.sets, a.d_max, a.seed, a.d_min, families)
    if a.timing:
        out["timing"] = _timing()
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps({k: v for k, v in out.items() if k not in ("issue_plants", "route_plants")}, default=str)[:3000])
    return H.save("referee_property", a, out)


if __name__ == "__main__":
    res = run(**vars(parser().parse_args()))
    bad = res.get("generated_plants", {}).get("failures") or any(
        res.get(k, {}).get("not_ok") for k in ("false_infeasible", "false_infeasible_large_d"))
    raise SystemExit(1 if bad else 0)
