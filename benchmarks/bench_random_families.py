"""Random families from cvxpy's grammar: ldpopt's whole call beside the best *valid* plain cvxpy call,
at least 100 fresh families per run and size, the worst ratio first.

    python benchmarks/bench_random_families.py                       # 100 families at d = 10², 10³, 10⁴
    python benchmarks/bench_random_families.py --n 100 --d 100,1000  # the sizes and the count
    python benchmarks/bench_random_families.py --seed 7              # the same families again
    python benchmarks/bench_random_families.py --src /tmp/old --name random_families_before --seed 7
    python benchmarks/bench_random_families.py --seeds 1021,1029 --d 100  # those families only
    python benchmarks/bench_random_families.py --cone-form psd       # the constraints written as a cone
    python benchmarks/bench_random_families.py --multiplier auto --seed 1000 --d 100  # the callable's K measured
    python benchmarks/bench_random_families.py --rerender --name random_families_d100  # its summary again, nothing run

Families: ``tests/problem_strategies.py``'s :func:`draw_family` (objective = CLS, a linear objective,
maximum entropy or KL to the prior, plus up to two convex atoms of an affine argument of f composed up
to three deep; up to two constraints of any cone, built around a point of the simplex; data plain,
with ties, zeros or huge negative estimates), each drawn from seed ``--seed + i`` (``--seed`` is the
clock's when not given: fresh families every run; the results file records it).

Contenders, one call each per family and round (``--rounds``; the minimum CPU kept; untimed warm-up families first, three at d = 50 and the run's first two at each size, then ldpopt's solver worker started and waited for, :func:`_harness.solver_worker_ready`) (:mod:`bench_offgrid`'s: ``PLAIN``, ``LIMIT``, ``timed``): ldpopt's
whole call ``Problem(...)`` + ``.solve(time_limit=--call-limit)`` and the plain cvxpy call at defaults
for Clarabel, PIQP and OSQP (QPs only), SCS, each with the same limit where the solver takes one; cvxpy + Clarabel at 1e-10 is the reference. Time: CPU seconds of the
process and its children. **Valid** plain call: status ``optimal``, constraint violation ≤ 1e-6,
and within 1e-6 of the reference (‖f − f_ref‖∞, or the objective within 1e-8 relative where the
optimum is not unique, e.g. an LP). **ratio** = best valid plain CPU / ldpopt CPU (< 1: ldpopt
slower); a family with no valid plain call has none. ldpopt's answer is counted ``wrong`` where it
says ``optimal`` and lies farther from the reference than 1e-5 (objective and point) — the
reference being valid. What the tolerance accounts for, per size: the median ratio to the reference
call (plain Clarabel at ldpopt's own 1e-10) instead of the best valid plain call, and the median CPU
of plain Clarabel at its defaults over at 1e-10. Results: ``results/NAME.json`` and ``NAME.md``.

``--cone-form psd`` / ``soc``: each family's constraints replaced by one written as a cvxpy cone
around its point f0 — λ_max of the symmetric part of ``reshape(f[:9], (3, 3))`` at most its value at
f0 + 0.01 as ``λ·I − sym(M) >> 0``, or ``cp.constraints.SOC(0.01, f − f0)`` — the objective and data
as drawn.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import _harness as H
from benchmarks.bench_offgrid import FEAS_TOL, LIMIT, PLAIN, timed

DIST_TOL = 1e-6
OBJ_TOL = 1e-8
CONTENDERS = ("CLARABEL", "PIQP", "OSQP", "SCS")


def _strategies():
    here = ROOT / "tests"
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    import problem_strategies

    return problem_strategies


def cone_written(fam, form: str):
    """``fam`` with its constraints replaced by one written as a cvxpy cone (module docstring)."""
    import dataclasses

    import cvxpy as cp

    f0, r = np.asarray(fam.f0, float), 0.01
    if form == "psd":
        M0 = f0[:9].reshape(3, 3, order="F")
        lam = float(np.linalg.eigvalsh((M0 + M0.T) / 2).max()) + r

        def cons(f):
            M = cp.reshape(f[:9], (3, 3), order="F")
            return [lam * np.eye(3) - (M + M.T) / 2 >> 0]
        text = f"lambda_max(sym(reshape(f[:9], (3, 3)))) <= at f0 + {r:g} as a PSD cone"
    else:
        def cons(f):
            return [cp.constraints.SOC(cp.Constant(r), f - f0)]
        text = f"SOC({r:g}, f - f0)"
    objective, data = fam.text.split(";")[0].split("  [")[0], fam.text.rsplit("  [", 1)[-1]
    return dataclasses.replace(fam, constraints=cons, has_constraints=True, text=f"{objective}; {text}  [{data}")


def plain_call(fam, solver: str, opts: dict) -> dict:
    """The plain cvxpy call of family ``fam`` (built afresh: the whole call)."""
    prob, f, cons = fam.cvxpy_problem()
    try:
        prob.solve(solver=solver, **opts)
    except Exception as exc:  # noqa: BLE001 - a solver that refuses the class or fails: not valid
        return {"status": f"error: {type(exc).__name__}", "f": None, "violation": None, "value": None}
    if f.value is None:
        return {"status": prob.status, "f": None, "violation": None, "value": None}
    viol = max((float(np.max(c.violation())) for c in cons), default=0.0)
    return {"status": prob.status, "f": np.array(f.value), "violation": viol, "value": prob.value}


def objective_at(fam, f) -> float | None:
    import cvxpy as cp

    try:
        return float(fam.objective(cp.Constant(f), np.asarray(fam.est.f_tilde, float)).value)
    except Exception:  # noqa: BLE001 - outside the objective's domain
        return None


def measure(fam, call_limit: float, rounds: int = 1, scale: float | None = None,
            clarabel_tol: float | None = None, multiplier=None) -> dict:
    """One family: every contender once per round, interleaved (the minimum CPU kept); the reference;
    validity; the ratio. ``scale``, ``clarabel_tol``, ``multiplier``: ldpopt's call with ``Problem(...,
    scale=)``, Clarabel's gap and feasibility tolerances set, and the callable's multiplier K
    (``UserObjective(..., multiplier=)``) (default: ldpopt's own)."""
    own = {} if clarabel_tol is None else {"CLARABEL": dict.fromkeys(("tol_gap_abs", "tol_gap_rel", "tol_feas"), clarabel_tol)}
    is_qp = fam.cvxpy_problem()[0].is_qp()
    row: dict = {"text": fam.text, "qp": bool(is_qp), "rounds": rounds, "contenders": {}}

    def ld_call():
        try:
            return fam.ldpopt_problem(scale, multiplier).solve(time_limit=call_limit, progress=False, **own)
        except Exception as exc:  # noqa: BLE001 - a library exception escaping solve(): recorded, no ratio
            return exc

    res: dict = {}
    for _ in range(rounds):
        c, w, sol = timed(ld_call)
        if isinstance(sol, Exception):
            ld = {"cpu_s": c, "wall_s": w, "status": f"raised {type(sol).__name__}", "solver": None, "f": None}
        else:
            ld = {"cpu_s": c, "wall_s": w, "status": sol.status, "solver": sol.solver,
                  "attempts": " → ".join(a["solver"] for a in getattr(sol, "attempts", None) or []) or "-",
                  "f": None if sol.f is None else np.asarray(sol.f, float)}
        if "ldpopt" not in res or c < res["ldpopt"]["cpu_s"]:
            res["ldpopt"] = ld
        for name in ("CLARABEL-tight", *CONTENDERS):
            solver, o = PLAIN[name]
            if solver in ("PIQP", "OSQP") and not is_qp:
                continue
            o = {**o, **LIMIT.get(solver, lambda t: {})(call_limit)}
            c, w, r = timed(lambda solver=solver, o=o: plain_call(fam, solver, o))
            if name not in res or c < res[name]["cpu_s"]:
                res[name] = {**r, "cpu_s": c, "wall_s": w}
    ld = res["ldpopt"]
    ref = res["CLARABEL-tight"]
    ok_ref = ref["status"] == "optimal" and ref["violation"] is not None and ref["violation"] <= FEAS_TOL
    ref_f = ref["f"] if ok_ref else None
    ref_v = objective_at(fam, ref_f) if ok_ref else None
    row["reference"] = "CLARABEL-tight" if ok_ref else None
    for name, r in res.items():
        out = {k: v for k, v in r.items() if k != "f"}
        dist = None if ref_f is None or r["f"] is None else float(np.max(np.abs(r["f"] - ref_f)))
        val = None if r["f"] is None else objective_at(fam, r["f"])
        gap = None if val is None or ref_v is None else abs(val - ref_v) / max(1.0, abs(ref_v))
        out.update(dist_ref=dist, obj_gap=gap)
        if name != "ldpopt":
            feas = r["violation"] is not None and r["violation"] <= FEAS_TOL
            close = dist is not None and (dist <= DIST_TOL or (gap is not None and gap <= OBJ_TOL))
            out["valid"] = name in CONTENDERS and r["status"] == "optimal" and feas and close
        row["contenders"][name] = out
    valid = {k: v for k, v in row["contenders"].items() if v.get("valid")}
    ldr = row["contenders"]["ldpopt"]
    if valid:
        best = min(valid, key=lambda k: valid[k]["cpu_s"])
        row["best_plain"] = {"name": best, "cpu_s": valid[best]["cpu_s"]}
        if ld["f"] is not None and np.all(np.isfinite(ld["f"])):  # a ratio only for an answer with a point
            row["ratio"] = valid[best]["cpu_s"] / ldr["cpu_s"]
    if ok_ref and ld["status"] == "optimal":
        d, g = ldr["dist_ref"], ldr["obj_gap"]
        row["ldpopt_wrong"] = bool(d is not None and d > 1e-5 and (g is None or g > 1e-5))
    return row


def _multiplier(text: str):
    """``--multiplier``: ``"default"`` (None: ldpopt's own), ``"auto"`` or a finite number > 0
    (``UserObjective``'s own rule)."""
    import argparse
    import math

    if text == "default":
        return None
    if text == "auto":
        return text
    try:
        k = float(text)
    except ValueError:
        k = math.nan
    if not (math.isfinite(k) and k > 0):
        raise argparse.ArgumentTypeError(f"must be 'default', 'auto' or a finite number > 0, got {text!r}")
    return k


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--n", type=int, default=100, help="families per size")
    ap.add_argument("--d", default="100,1000,10000", help="comma-separated sizes")
    ap.add_argument("--seed", type=int, default=None, help="the first family's seed (default: the clock's)")
    ap.add_argument("--seeds", default=None, help="comma-separated family seeds, instead of --seed and --n")
    ap.add_argument("--cone-form", default="grammar", choices=("grammar", "psd", "soc"),
                    help="the constraints as drawn, or one written as a PSD / second-order cone")
    ap.add_argument("--rounds", default="2,2,1", help="rounds per size (minimum CPU kept), in --d's order")
    ap.add_argument("--call-limit", type=float, default=30.0, help="each plain solver's own time limit, seconds")
    ap.add_argument("--scale", type=float, default=None,
                    help="Problem(..., scale=S) for ldpopt's call (default: ldpopt's own, objectives.base.default_scale)")
    ap.add_argument("--multiplier", default=None, type=_multiplier,
                    help="the callable's multiplier K in ldpopt's call, 'default', 'auto' or a number (default: "
                         "ldpopt's own, objectives.base.UserObjective)")
    ap.add_argument("--clarabel-tol", type=float, default=None,
                    help="Clarabel's gap and feasibility tolerances in ldpopt's call (default: ldpopt's own, "
                         "solvers.policy.DEFAULT_SOLVER_OPTIONS)")
    ap.add_argument("--src", default=str(ROOT), help="the checkout to import ldpopt from")
    ap.add_argument("--name", default="random_families", help="results file name (NAME.json, NAME.md)")
    ap.add_argument("--rerender", action="store_true",
                    help="measure nothing: NAME.json's summary computed again from its rows, and NAME.md written")
    return ap


def _cpu(row: dict, name: str) -> float | None:
    """The CPU seconds of contender ``name`` in ``row`` where it ended ``optimal``, else None."""
    c = row["contenders"].get(name) or {}
    return c.get("cpu_s") if c.get("status") == "optimal" and c.get("cpu_s") else None


def tight_call_counted(row: dict) -> bool:
    """Whether the family ``row`` counts in the reference call's own ratio (:func:`summary`'s
    ``tight_call``): ldpopt's call has a ratio and the reference call (plain cvxpy + Clarabel at
    ldpopt's 1e-10) is valid, so its CPU measures what a call that solves by Clarabel at ldpopt's
    tolerance, with no stage of ldpopt's around it, would cost."""
    return "ratio" in row and row.get("reference") == "CLARABEL-tight" and bool(_cpu(row, "CLARABEL-tight"))


def summary(rows: list[dict]) -> dict:
    """Per d: families, with a ratio, worst, median, share below 0.8, ldpopt not optimal, wrong; and
    what the tolerance accounts for: the median ratio against plain cvxpy + Clarabel at ldpopt's own
    1e-10 (the reference call) instead of the best valid plain call, and the median CPU of plain
    Clarabel at its defaults over at 1e-10 (both where those calls ended ``optimal``); and
    ``tight_call``, the reference call's own ratio (best valid plain CPU / its CPU) over the families
    with a ratio whose reference is valid: the ratio a call would get that solves by Clarabel at
    ldpopt's tolerance with no stage of ldpopt's around it (worst, median, share below 0.8, and how
    many of ldpopt's ratios below 0.8 are on families where that call is below 0.8 too)."""
    out = {}
    for d in sorted({r["d"] for r in rows}):
        rs = [r for r in rows if r["d"] == d]
        ratios = np.array([r["ratio"] for r in rs if "ratio" in r])
        tight = np.array([_cpu(r, "CLARABEL-tight") / r["contenders"]["ldpopt"]["cpu_s"] for r in rs
                          if "ratio" in r and _cpu(r, "CLARABEL-tight")])
        loose = np.array([_cpu(r, "CLARABEL") / _cpu(r, "CLARABEL-tight") for r in rs
                          if _cpu(r, "CLARABEL") and _cpu(r, "CLARABEL-tight")])
        counted = [r for r in rs if tight_call_counted(r)]
        own = np.array([r["best_plain"]["cpu_s"] / _cpu(r, "CLARABEL-tight") for r in counted])
        both = sum(1 for r, o in zip(counted, own) if r["ratio"] < 0.8 and o < 0.8)
        out[d] = {"families": len(rs), "with_ratio": int(ratios.size),
                  "worst": float(ratios.min()) if ratios.size else None,
                  "median": float(np.median(ratios)) if ratios.size else None,
                  "below_0.8": float(np.mean(ratios < 0.8)) if ratios.size else None,
                  "median_against_tight": float(np.median(tight)) if tight.size else None,
                  "clarabel_defaults_over_tight": float(np.median(loose)) if loose.size else None,
                  "tight_call": {"families": int(own.size), "worst": float(own.min()) if own.size else None,
                                 "median": float(np.median(own)) if own.size else None,
                                 "below_0.8": float(np.mean(own < 0.8)) if own.size else None,
                                 "below_0.8_with_ldpopt": both},
                  "ldpopt_not_optimal": sum(r["contenders"]["ldpopt"]["status"] != "optimal" for r in rs),
                  "ldpopt_raised": sum(r["contenders"]["ldpopt"]["status"].startswith("raised") for r in rs),
                  "ldpopt_wrong": sum(bool(r.get("ldpopt_wrong")) for r in rs),
                  "worst5": [(r["seed"], r["ratio"], r["contenders"]["ldpopt"]["status"],
                              r["contenders"]["ldpopt"]["solver"], r["best_plain"]["name"], r["text"])
                             for r in sorted((r for r in rs if "ratio" in r), key=lambda r: r["ratio"])[:5]]}
    return out


def run(quick: bool = False, **opts) -> dict:
    args = H.options(parser(), "bench_random_families.py", quick, opts)
    if args.rerender:
        return {"summary": rerender(args.name, H.results_dir(args))}
    sys.path.insert(0, args.src)
    import ldpopt

    if Path(args.src).resolve() != ROOT:  # the results name the checkout by its commit, not its path
        import subprocess

        rev = subprocess.run(["git", "-C", args.src, "rev-parse", "--short=8", "HEAD"], capture_output=True,
                             text=True, check=False).stdout.strip() or "unknown"
        args.command = args.command.replace(f"--src {args.src}", f"--src CHECKOUT_OF_{rev}")

    ps = _strategies()
    seed = int(time.time()) % 2**31 if args.seed is None else args.seed
    ds = [100] if args.quick else [int(x) for x in args.d.split(",")]
    n = 3 if args.quick else args.n
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [seed + i for i in range(n)]
    seed = seeds[0]
    rounds = [1] if args.quick else [int(x) for x in args.rounds.split(",")]
    print(f"ldpopt from {ldpopt.__file__}; seeds {seeds[0]} .. {seeds[-1]} ({len(seeds)})", flush=True)
    warnings.simplefilter("ignore")

    def family(sd: int, d: int):
        fam = ps.draw_family(sd, d)
        return fam if args.cone_form == "grammar" else cone_written(fam, args.cone_form)

    # warm-up, untimed: the first calls' imports (ldpopt's routes, cvxpy's solvers), then the run's
    # first two families at each size, whose routes the first timed calls take (the spin of BLAS
    # threads that made the first timed family read 30-40 ms for a 6-13 ms solve is kept out by
    # timed, which waits for it: _harness.timed_cpu)
    for k in range(3):
        measure(ps.draw_family(10**6 + k, 50), args.call_limit)
    for d in ds:
        for sd in seeds[:2]:
            measure(family(sd, d), args.call_limit)
    if H.solver_worker_ready() is None:
        print("ldpopt's solver worker did not start within 60 s: its start is in the first timed calls", flush=True)
    rows: list[dict] = []
    for j, d in enumerate(ds):
        for sd in seeds:
            fam = family(sd, d)
            row = {"d": d, "seed": sd, **measure(fam, args.call_limit, rounds[min(j, len(rounds) - 1)], args.scale,
                                                     args.clarabel_tol, args.multiplier)}
            rows.append(row)
            ld = row["contenders"]["ldpopt"]
            print(f"d={d:>6d} seed={sd} ldpopt {ld['cpu_s']:7.3f} s {ld['status']:>18s} {ld['solver']!s:>14s} | "
                  f"best plain {row.get('best_plain', {}).get('name', '-'):>8s} "
                  f"{row.get('best_plain', {}).get('cpu_s', float('nan')):7.3f} s | ratio {row.get('ratio', float('nan')):6.2f}"
                  f"{' WRONG' if row.get('ldpopt_wrong') else ''} | {fam.text[:90]}", flush=True)
            H.save(args.name, args, {"rows": rows, "seed": seed, "summary": summary(rows)})
    summ = summary(rows)
    H.save(args.name, args, {"rows": rows, "seed": seed, "summary": summ})
    table(summ, H.results_dir(args) / f"{args.name}.md",
          f"Seeds {args.seeds}" if args.seeds else f"Seeds {seed} + i", rows if args.seeds else None)
    return {"rows": rows, "summary": summ}


def _own_ratio(t: dict | None, f) -> str:
    """The reference call's own ratio (:func:`summary`'s ``tight_call``) as one table cell."""
    if not t or not t["families"]:
        return "-"
    return (f"{f(t['worst'])}, {f(t['median'])}, {f(t['below_0.8'])} of {t['families']}; "
            f"{t['below_0.8_with_ldpopt']} of ldpopt's")


def rerender(name: str, out: Path) -> dict:
    """``out/NAME.json``'s summary computed again from its rows (:func:`summary`) and written back
    with ``NAME.md`` (:func:`table`): a results file written before a summary field existed gets it,
    from the same measurements; nothing is measured again."""
    import json

    path = out / f"{name}.json"
    doc = json.loads(path.read_text())
    for row in doc["rows"]:
        row.pop("tight_call_counted", None)  # written by an earlier version: derived from the row, not kept
    doc["summary"] = summary(doc["rows"])
    path.write_text(json.dumps(doc, indent=1) + "\n")
    seeds = sorted({r["seed"] for r in doc["rows"]})
    listed = "--seeds " in doc.get("command", "")
    table({int(k): v for k, v in doc["summary"].items()}, out / f"{name}.md",
          f"Seeds {','.join(map(str, seeds))}" if listed else f"Seeds {doc['seed']} + i", doc["rows"] if listed else None)
    return doc["summary"]


def table(summ: dict, path: Path, seeds: str, rows: list[dict] | None = None) -> None:
    """The summary (and with ``rows``, every family: a ``--seeds`` run) as markdown at ``path``."""
    lines = [(f"{seeds}. ratio = best valid plain cvxpy CPU / ldpopt CPU (whole call). Against 1e-10: the median "
             "ratio to plain cvxpy + Clarabel at ldpopt's own tolerance (the reference call) instead; defaults / "
             "1e-10: the median CPU of plain Clarabel at its defaults over at 1e-10. The 1e-10 call's own ratio: "
             "best valid plain CPU / the reference call's CPU, the ratio a call that solves by Clarabel at "
             "ldpopt's tolerance with nothing of ldpopt's around it would get (worst, median, share < 0.8, and "
             "of ldpopt's ratios below 0.8, how many are on families where that call is below 0.8 too)."), "",
             ("| d | families | with a ratio (a valid plain call, ldpopt's point) | worst | median | share < 0.8 | "
             "ldpopt not optimal | of which raised | ldpopt wrong | against 1e-10 | defaults / 1e-10 | "
             "the 1e-10 call's own ratio |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    f = lambda x, s=".2f": "-" if x is None else format(x, s)
    for d, s in summ.items():
        lines.append(f"| {d} | {s['families']} | {s['with_ratio']} | {f(s['worst'])} | {f(s['median'])} | "
                     f"{f(s['below_0.8'])} | {s['ldpopt_not_optimal']} | {s['ldpopt_raised']} | {s['ldpopt_wrong']} | "
                     f"{f(s.get('median_against_tight'))} | {f(s.get('clarabel_defaults_over_tight'))} | "
                     f"{_own_ratio(s.get('tight_call'), f)} |")
    for d, s in summ.items():
        lines += ["", f"Five worst at d = {d}:", "", "| seed | ratio | ldpopt status | route | best plain | family |",
                  "|---|---|---|---|---|---|"]
        for sd, r, st, so, bp, text in s["worst5"]:
            lines.append(f"| {sd} | {r:.3f} | {st} | {so} | {bp} | `{text}` |")
    if rows:
        lines += ["", "Every family:", "", "| d | seed | ldpopt CPU s | status | route | attempts | best plain | its CPU s | ratio |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            ld, bp = r["contenders"]["ldpopt"], r.get("best_plain", {})
            lines.append(f"| {r['d']} | {r['seed']} | {ld['cpu_s']:.3f} | {ld['status']} | {ld['solver']} | "
                         f"{ld.get('attempts', '-')} | {bp.get('name', '-')} | {f(bp.get('cpu_s'), '.3f')} | "
                         f"{f(r.get('ratio'))} |")
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    H.cli(parser(), run)
