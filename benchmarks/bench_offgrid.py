"""Off the route grid: ldpopt's whole call beside the best *valid* plain cvxpy call, ten problem classes
a researcher writes by hand, d = 10², 10³, 10⁴ (10⁵ where a call is predicted to end within the cap).

    python benchmarks/bench_offgrid.py                    # the ten classes, d = 10²–10⁴ (+10⁵ under the cap)
    python benchmarks/bench_offgrid.py --quick            # d = 100, one round (seconds)
    python benchmarks/bench_offgrid.py --classes lowrank,tv --d 100,1000
    python benchmarks/bench_offgrid.py --src /tmp/old --name offgrid_before   # another checkout's ldpopt
    python benchmarks/bench_offgrid.py --compare offgrid_before offgrid offgrid_1e5 offgrid_klrow   # the table

Data: a Zipf(1.5) histogram of n = max(10⁵, 10·d) users (``_harness.zipf_counts``), one OUE draw at
ε = 1 (seed 1); f̃ the unbiased estimate, ``truth`` the true frequencies, ``p`` the uniform prior.
Classes (:data:`CLASSES`; every one on the simplex f ≥ 0, Σ f = 1, plus):

 1. ``rows``      cls + 20 user affine rows (a cvxpy callable: 10 dense rows ``A f <= A·truth``, 10 ``== A·truth``)
 2. ``lowrank``   ‖f − f̃‖² + 1e-3·KL(f‖p) + 10‖Uᵀ(f − p)‖², U dense d × 3 (a cvxpy callable)
 3. ``pinball``   ‖f − f̃‖² + 1e-3·Σ pinball₀.₃(f − f̃)
 4. ``norm2``     ‖f − f̃‖² + 1e-2·‖f − p‖₂
 5. ``monotone``  cls + Monotone(the 50 largest true values) + Fixed (5 values at their truth)
 6. ``huber``     Σ huber(f − f̃, 1/d) + SubsetSum (a random half at its true total)
 7. ``tv``        ‖f − f̃‖² + w·Σ |f_{v+1} − f_v|, w = 1e-3 (and 1e-2, 1e-1 at d = 10³: ``tv1e-2``, ``tv1e-1``)
 8. ``smooth``    ‖f − f̃‖² + Σ (f_{v+1} − f_v)²
 9. ``geomean``   ‖f − f̃‖² − 1e-3·geo_mean(f)
10. ``klrow``     ‖f − f̃‖² + 1e-4·KL(f‖p) + one user row (a cvxpy callable: the first half at its true total)

Contenders, **interleaved** (each round runs every contender once, back to back, so the shared
machine's load hits them alike; the time kept is the minimum over the rounds): ldpopt's whole call
``Problem(est, objective, constraints).solve()`` (construction, the exact pre-check, the route,
ldpopt's check), and the plain cvxpy call a user would write — ``cp.Problem(...)`` built from numpy
arrays and ``.solve(solver=S, **options)`` — for S in Clarabel, PIQP (QPs only), OSQP and SCS, at
cvxpy's defaults and tuned (:data:`PLAIN`). Time: CPU seconds of the process and its children
(``_harness.cpu_clock``: ldpopt's PIQP runs in a child), wall seconds beside.

Reference: cvxpy + Clarabel at 1e-10 tolerances (``CLARABEL-tight``, also a contender) where it
says ``optimal``, else ldpopt's answer where ldpopt's check certified it (``optimal``, with its bound).
That reference is itself only as tight as Clarabel through cvxpy at 1e-10: at d = 100 it sat 8e-8
(smoothness) and 1.4e-7 (TV) from Clarabel at 1e-14, where ldpopt's answers sat 2.3e-9 and 2.0e-7 from
the 1e-14 one (bounds 1.3e-8 and 1.6e-6); at d = 10⁴ (rows, tv) ldpopt's answers sat 3e-12 and 1.4e-11
from Clarabel at 1e-14 but 2.9e-7 and 7.3e-7 from this reference — distances below ~1e-6 measure
the reference, not the answers. **Valid** plain call: cvxpy status ``optimal``, constraint
violation ≤ :data:`FEAS_TOL` and ‖f − f_ref‖∞ ≤ :data:`DIST_TOL` (a loose answer is not the answer the
user asked for; the fastest call that is merely ``optimal`` and feasible is kept beside as
``best_loose``). **ratio** = best valid plain CPU / ldpopt CPU (> 1: ldpopt faster).

Caps: each plain call runs under its solver's own time limit (``--call-limit``; PIQP has none). A contender is not run at the next d once its time here, extrapolated with the growth
exponent measured between the last two sizes (at least linear), passes ``--cap`` seconds; the
larger sizes say ``skipped (predicted X s)``. Results: ``results/NAME.json`` and ``NAME.md``.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import _harness as H

#: a plain call's largest constraint violation (frequency units) to count as feasible
FEAS_TOL = 1e-6
#: a plain call's largest distance to the reference (frequency units) to count as the answer
DIST_TOL = 1e-6
#: plain cvxpy calls: name -> (solver, options)
PLAIN = {
    "CLARABEL": ("CLARABEL", {}),
    "CLARABEL-tight": ("CLARABEL", {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}),
    "PIQP": ("PIQP", {}),
    "PIQP-tight": ("PIQP", {"eps_abs": 1e-10, "eps_rel": 1e-10}),
    "OSQP": ("OSQP", {}),
    "OSQP-tight": ("OSQP", {"eps_abs": 1e-9, "eps_rel": 1e-9, "polish": True, "max_iter": 100_000}),
    "SCS": ("SCS", {}),
    "SCS-tight": ("SCS", {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 100_000}),
}
#: each plain call's own time limit (``--call-limit`` seconds; PIQP has none): past it, not valid
LIMIT = {"CLARABEL": lambda t: {"time_limit": t}, "SCS": lambda t: {"time_limit_secs": t},
         "OSQP": lambda t: {"time_limit": t}}
CLASSES = ("rows", "lowrank", "pinball", "norm2", "monotone", "huber", "tv", "smooth", "geomean", "klrow")


def data(d: int, seed: int = 1):
    from ldpopt.oracles import OUE

    n = max(10**5, 10 * d)
    counts = H.zipf_counts(d, n)
    oracle = OUE(1.0, d)
    est = oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(seed)), n)
    return est, counts / n


def make(cls: str, d: int):
    """(ldpopt_problem_factory, plain_factory, is_qp) for class ``cls`` at size d: each factory builds
    the problem anew (the whole call)."""
    import cvxpy as cp

    from ldpopt.problems import Fixed, Monotone, Problem, Simplex, SubsetSum

    est, truth = data(d)
    ft = np.asarray(est.f_tilde, dtype=float)
    rng = np.random.default_rng(7)
    p = np.full(d, 1.0 / d)
    extra_ld: list = []

    def extra_cv(f):
        return []

    weight = 1e-3
    if cls.startswith("tv") and cls != "tv":
        weight = float(cls[2:])
    if cls == "rows":
        A = rng.random((20, d))
        b = A @ truth
        obj = lambda f, ft: cp.sum_squares(f - ft)
        extra_ld = [lambda f, e: [A[:10] @ f <= b[:10], A[10:] @ f == b[10:]]]
        extra_cv = lambda f: [A[:10] @ f <= b[:10], A[10:] @ f == b[10:]]
    elif cls == "lowrank":
        U = rng.standard_normal((d, 3))
        obj = lambda f, ft: (cp.sum_squares(f - ft) + 1e-3 * cp.sum(cp.kl_div(f, p))
                             + 10 * cp.sum_squares(U.T @ (f - p)))
    elif cls == "pinball":
        tau = 0.3
        obj = lambda f, ft: cp.sum_squares(f - ft) + 1e-3 * cp.sum(cp.maximum(tau * (f - ft), (tau - 1) * (f - ft)))
    elif cls == "norm2":
        obj = lambda f, ft: cp.sum_squares(f - ft) + 1e-2 * cp.norm(f - p, 2)
    elif cls == "monotone":
        top = np.argsort(-truth, kind="stable")[:50]
        rest = np.setdiff1d(np.arange(d), top)
        fix = rng.choice(rest, size=min(5, rest.size), replace=False)
        obj = None
        extra_ld = [Monotone(order=top), Fixed(fix, truth[fix])]
        extra_cv = lambda f: [f[top[:-1]] >= f[top[1:]], f[fix] == truth[fix]]
    elif cls == "huber":
        idx = np.flatnonzero(rng.random(d) < 0.5)
        obj = lambda f, ft: cp.sum(cp.huber(f - ft, 1.0 / d))
        extra_ld = [SubsetSum(idx, float(truth[idx].sum()), "==")]
        extra_cv = lambda f: [cp.sum(f[idx]) == float(truth[idx].sum())]
    elif cls.startswith("tv"):
        obj = lambda f, ft: cp.sum_squares(f - ft) + weight * cp.norm1(f[1:] - f[:-1])
    elif cls == "smooth":
        obj = lambda f, ft: cp.sum_squares(f - ft) + cp.sum_squares(f[1:] - f[:-1])
    elif cls == "geomean":
        obj = lambda f, ft: cp.sum_squares(f - ft) - 1e-3 * cp.geo_mean(f)
    elif cls == "klrow":
        half = d // 2
        tot = float(truth[:half].sum())
        obj = lambda f, ft: cp.sum_squares(f - ft) + 1e-4 * cp.sum(cp.kl_div(f, p))
        extra_ld = [lambda f, e: cp.sum(f[:half]) == tot]
        extra_cv = lambda f: [cp.sum(f[:half]) == tot]
    else:
        raise SystemExit(f"--classes: unknown class {cls!r}; have {CLASSES} (and tv1e-2, tv1e-1)")

    def ldpopt_call():
        objective = "cls" if obj is None else (lambda f, e: obj(f, e.f_tilde))
        return Problem(est, objective, [Simplex(), *extra_ld]).solve()

    def plain(solver, opts):
        f = cp.Variable(d)
        J = cp.sum_squares(f - ft) if obj is None else obj(f, ft)
        cons = [f >= 0, cp.sum(f) == 1, *extra_cv(f)]
        prob = cp.Problem(cp.Minimize(J), cons)
        try:
            prob.solve(solver=solver, **opts)
        except Exception as exc:  # noqa: BLE001 - a solver that refuses the class or fails: not valid
            return {"status": f"error: {type(exc).__name__}: {str(exc)[:80]}", "f": None, "violation": None}
        viol = max((float(np.max(c.violation())) for c in cons), default=0.0) if f.value is not None else None
        return {"status": prob.status, "f": None if f.value is None else np.array(f.value), "violation": viol}

    is_qp = obj is None or cp.Problem(cp.Minimize(obj(cp.Variable(d), ft))).is_qp()
    return ldpopt_call, plain, is_qp


def timed(fn):
    """(CPU seconds with children, wall seconds, fn()) of one call (:func:`_harness.timed_cpu`: the
    spin of BLAS helper threads it started counted, none an earlier call started)."""
    return H.timed_cpu(fn)


def predicted(times: dict, name: str, d: int) -> float | None:
    """The time of ``name`` at d extrapolated from its last two sizes (growth at least linear)."""
    pts = sorted((dd, t) for dd, t in times.get(name, {}).items() if dd < d and t is not None)
    if not pts:
        return None
    d1, t1 = pts[-1]
    k = 1.0
    if len(pts) >= 2:
        d0, t0 = pts[-2]
        if t0 > 0 and t1 > 0:
            k = max(1.0, math.log(t1 / t0) / math.log(d1 / d0))
    return t1 * (d / d1) ** k


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--classes", default=",".join(CLASSES), help="comma-separated classes (CLASSES, tv1e-2, tv1e-1)")
    ap.add_argument("--d", default="100,1000,10000,100000", help="comma-separated sizes")
    ap.add_argument("--rounds", default="3,3,2,1", help="rounds per size (min kept), in --d's order")
    ap.add_argument("--cap", type=float, default=60.0, help="skip a contender predicted past this many CPU s")
    ap.add_argument("--call-limit", type=float, default=20.0, help="each plain solver's own time limit, seconds")
    ap.add_argument("--src", default=str(ROOT), help="the checkout to import ldpopt from")
    ap.add_argument("--name", default="offgrid", help="results file name (NAME.json, NAME.md)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    args = H.options(parser(), "bench_offgrid.py", quick, opts)
    sys.path.insert(0, args.src)
    import ldpopt

    ds = [100] if args.quick else [int(x) for x in args.d.split(",")]
    rounds = [1] if args.quick else [int(x) for x in args.rounds.split(",")]
    classes = [c for c in args.classes.split(",") if c]
    if not args.quick and "tv" in classes and 1000 in ds:
        classes += [c for c in ("tv1e-2", "tv1e-1") if c not in classes]
    print(f"ldpopt from {ldpopt.__file__}", flush=True)
    H.solver_worker_ready()  # its one start is not charged to the first timed call
    rows, times = [], {}
    warnings.simplefilter("ignore")
    for cls in classes:
        tcls = times.setdefault(cls, {})
        for i, d in enumerate(ds):
            if cls.startswith("tv") and cls != "tv" and d != 1000:
                continue
            reps = rounds[min(i, len(rounds) - 1)]
            ld_call, plain, is_qp = make(cls, d)
            names = ["ldpopt"] + [k for k, (s, _) in PLAIN.items() if is_qp or s != "PIQP"]
            row = {"class": cls, "d": d, "rounds": reps, "contenders": {}}
            run_now = []
            for name in names:
                pred = predicted(tcls, name, d)
                if pred is not None and pred > args.cap:
                    row["contenders"][name] = {"skipped": f"predicted {pred:.0f} s > cap {args.cap:.0f} s"}
                    tcls.setdefault(name, {})[d] = None
                else:
                    run_now.append(name)
            best: dict = {}
            for _ in range(reps):
                for name in run_now:
                    if name == "ldpopt":
                        c, w, sol = timed(ld_call)
                        res = {"status": sol.status, "solver": sol.solver, "f": np.asarray(sol.f),
                               "error_bound": None if sol.checks is None else sol.checks.error_bound}
                    else:
                        solver, o = PLAIN[name]
                        o = {**o, **LIMIT.get(solver, lambda t: {})(args.call_limit)}
                        c, w, res = timed(lambda plain=plain, solver=solver, o=o: plain(solver, o))
                    old = best.get(name)
                    if old is None or c < old["cpu_s"]:
                        best[name] = {**res, "cpu_s": c, "wall_s": w}
            ref = best.get("CLARABEL-tight")
            ref_f = ref["f"] if ref is not None and ref["status"] == "optimal" else None
            row["reference"] = "CLARABEL-tight" if ref_f is not None else None
            if ref_f is None and best.get("ldpopt", {}).get("status") == "optimal":  # ldpopt's certified point
                ref_f, row["reference"] = best["ldpopt"]["f"], "ldpopt (certified)"
            for name, r in best.items():
                dist = None if ref_f is None or r["f"] is None else float(np.max(np.abs(r["f"] - ref_f)))
                out = {k: v for k, v in r.items() if k != "f"}
                out["dist_ref"] = dist
                if name != "ldpopt":
                    feas = r["violation"] is not None and r["violation"] <= FEAS_TOL
                    out["loose_valid"] = r["status"] == "optimal" and feas
                    out["valid"] = out["loose_valid"] and (dist is None or dist <= DIST_TOL)
                row["contenders"][name] = out
                tcls.setdefault(name, {})[d] = r["cpu_s"]
            plain_ok = {k: v for k, v in row["contenders"].items() if k != "ldpopt" and v.get("valid")}
            loose = {k: v for k, v in row["contenders"].items() if k != "ldpopt" and v.get("loose_valid")}
            ld = row["contenders"].get("ldpopt", {})
            if plain_ok:
                k = min(plain_ok, key=lambda n: plain_ok[n]["cpu_s"])
                row["best_plain"] = {"name": k, **plain_ok[k]}
                if "cpu_s" in ld:
                    row["ratio"] = plain_ok[k]["cpu_s"] / ld["cpu_s"]
            if loose:
                k = min(loose, key=lambda n: loose[n]["cpu_s"])
                row["best_loose"] = {"name": k, "cpu_s": loose[k]["cpu_s"], "dist_ref": loose[k]["dist_ref"]}
            rows.append(row)
            bp = row.get("best_plain", {})
            print(f"{cls:9s} d={d:>6d} ldpopt {ld.get('cpu_s', float('nan')):8.3f} s {ld.get('status', ld.get('skipped', ''))} "
                  f"{ld.get('solver', '')} | best plain {bp.get('name', '-')} {bp.get('cpu_s', float('nan')):8.3f} s | "
                  f"ratio {row.get('ratio', float('nan')):6.2f} | dist ldpopt {ld.get('dist_ref')} plain {bp.get('dist_ref')}",
                  flush=True)
            H.save(args.name, args, {"rows": rows, "feas_tol": FEAS_TOL, "dist_tol": DIST_TOL})
    table(rows, H.results_dir(args) / f"{args.name}.md")
    return {"rows": rows}


def _fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def table(rows: list[dict], path: Path) -> None:
    lines = ["| class | d | ldpopt CPU s (status, route) | best valid plain cvxpy (solver) | ratio | dist ldpopt | dist plain |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        ld, bp = r["contenders"].get("ldpopt", {}), r.get("best_plain", {})
        ldt = ld.get("skipped") or f"{_fmt(ld.get('cpu_s'))} ({ld.get('status')}, {ld.get('solver')})"
        lines.append(f"| {r['class']} | {r['d']} | {ldt} | {_fmt(bp.get('cpu_s'))} ({bp.get('name', 'none valid')}) | "
                     f"{_fmt(r.get('ratio'), '.2f')} | {_fmt(ld.get('dist_ref'), '.1e')} | {_fmt(bp.get('dist_ref'), '.1e')} |")
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}", file=sys.stderr)


def compare(before: str, after: list[str]) -> str:
    """The before/after table (markdown) from results files under ``results/``: ``before`` one run's
    NAME, ``after`` the NAMEs of later runs (a later file's row replaces an earlier one's)."""
    R = H.BENCH_DIR / "results"
    B = {(r["class"], r["d"]): r for r in json.loads((R / f"{before}.json").read_text())["rows"]}
    A: dict = {}
    for name in after:
        for r in json.loads((R / f"{name}.json").read_text())["rows"]:
            A[(r["class"], r["d"])] = r

    def cells(r):
        if r is None:
            return ["-"] * 5
        ld, bp = r["contenders"].get("ldpopt", {}), r.get("best_plain", {})
        head = (f"not run: {ld['skipped']}" if "skipped" in ld
                else f"{_fmt(ld.get('cpu_s'))} {ld.get('status')} {ld.get('solver')}")
        return [head, f"{_fmt(bp.get('cpu_s'))} {bp.get('name', 'none valid')}", _fmt(r.get("ratio"), ".2f"),
                _fmt(ld.get("dist_ref"), ".1e"), _fmt(bp.get("dist_ref"), ".1e")]

    lines = [("| class | d | BEFORE ldpopt CPU s | plain (best valid) | ratio | AFTER ldpopt CPU s | plain (best valid) "
             "| ratio | dist ldpopt (after) | dist plain |"), "|---|---|---|---|---|---|---|---|---|---|"]
    for k in list(B) + [k for k in A if k not in B]:
        b, a = cells(B.get(k)), cells(A.get(k))
        if k not in A:
            a = ["(route unchanged: not re-run)", "", "", b[3], b[4]]
        lines.append(f"| {k[0]} | {k[1]} | {b[0]} | {b[1]} | {b[2]} | {a[0]} | {a[1]} | {a[2]} | {a[3]} | {a[4]} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--compare":  # --compare BEFORE AFTER [AFTER ...]: print the table
        print(compare(sys.argv[2], sys.argv[3:]), end="")
    else:
        H.cli(parser(), run)
