"""A researcher's own variant, written as a cvxpy callable, at real size: route, time, status, accuracy.

    python benchmarks/bench_own_variant.py                      # Retail and AOL, 5 variants × 3 sets
    python benchmarks/bench_own_variant.py --datasets retail    # one dataset
    python benchmarks/bench_own_variant.py --datasets "" --today 900   # today's route once (SCS alone, KL, Retail)

OUE, ε = 1, one draw (seed 1) of the support counts of the shipped Retail (d = 16,470) and AOL
prefixes (d = 120,978) histograms (``ldpopt.datasets``; ``OUE.sample_counts`` is exact in
distribution). Five objectives, each a plain ``objective(f, estimate) -> cvxpy expression``:

* ``kl``: ‖f − f̃‖² + 1e-4·KL(f ‖ uniform) with ``cp.kl_div`` (the user's call that took 1,840 s on SCS);
* ``huber``: Σ huber(f − f̃, σ), σ the noise level of one value (Wang et al. Eq. 7);
* ``smooth``: ‖f − f̃‖² + Σ (f_{v+1} − f_v)² (a smoothness penalty in the dataset's value order);
* ``entropy``: ‖f − f̃‖² − 1e-4·Σ entr(f) (entropy-regularised CLS);
* ``kl_smooth``: ‖f − f̃‖² + 1e-4·KL(f ‖ uniform) + Σ (f_{v+1} − f_v)² (smooth, not separable, not a
  quadratic: the Newton route — its interior-point method, sequential QP as the fallback);

each with (a) the simplex, (b) the simplex + one SubsetSum (a random half of the values at its true
total), (c) the simplex + a Monotone chain (nonincreasing) on the 50 values with the largest f̃.

Columns: the route ``Problem`` chose (``Problem.objective_route``), the solver, CPU seconds
(``time.process_time``: all threads; the machine was shared, wall seconds are given too) of the whole
user call ``Problem(est, func, constraints).solve(time_limit=120)`` (``--time-limit``: wall seconds, so
raise it when the machine is loaded; each row records its own), the status from ldpopt's check
(and whether stationarity and the gap ran: ``certified``), and max |f − f_ref| against a referee:
Clarabel on the same cvxpy expression at tol 1e-14 (time limit 60 s; at 1e-10 it was 4e-7 off the
certified optimum of ``smooth`` at Retail, at 1e-14 3.6e-11; not tried for the exponential-cone
variants at AOL). Clarabel's ``optimal_inaccurate``
point is used (and labelled so) where it returns one; for the simplex case of the two entropy-type
variants, where Clarabel stops short on the exponential cones, the referee is an independent vectorised
bisection written here (per-value root of h_v'(f) = −t from the
closed-form derivative of each variant, nested in a bisection on t for Σ f = 1), and otherwise none
(the table says so). Huber is linear past ±σ, so its minimiser need not be unique: its column is the
objective gap J(f) − J(f_ref) (relative) instead.

``--quick``: ``kl_smooth`` at Retail only (``run(quick=True)``, the benchmark harness's entry point).
``--today SECONDS``: the route of an unrecognised callable before this change — SCS alone at the
tight settings of ``policy.SCS_TIGHT`` — once for ``kl`` on Retail, with SCS's own time limit.
Writes ``benchmarks/results/own_variant.json`` (rows of the datasets run replace theirs) and, with
``--today``, ``own_variant_today.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import cvxpy as cp
import numpy as np

from ldpopt import datasets
from ldpopt.oracles.unary import OUE
from ldpopt.problems import Problem
from ldpopt.problems.constraints.base import Simplex, SubsetSum
from ldpopt.problems.constraints.order import Monotone
from ldpopt.problems.solvers.policy import SCS_TIGHT

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402 - the CPU clock (children included)

OUT = Path(__file__).resolve().parent / "results" / "own_variant.json"
TODAY = OUT.with_name("own_variant_today.json")
LAM = 1e-4
REF_LIMIT = 60.0  # seconds for the Clarabel referee
EXP_CONES = ("kl", "entropy", "kl_smooth")  # at AOL no Clarabel referee for these (exponential cones at d = 120,978)


def estimate_for(name: str):
    ds = datasets.load(name)
    oracle = OUE(1.0, ds.d)
    n = int(ds.counts.sum())
    return ds, oracle.estimate(oracle.sample_counts(ds.counts, np.random.default_rng(1)), n)


def sigma(est) -> float:
    return float(np.sqrt(est.q * (1 - est.q) / (est.n * (est.p - est.q) ** 2)))


def variants(est):
    prior = np.full(est.d, 1.0 / est.d)
    s = sigma(est)
    return {
        "kl": lambda f, e: cp.sum_squares(f - e.f_tilde) + LAM * cp.sum(cp.kl_div(f, prior)),
        "huber": lambda f, e: cp.sum(cp.huber(f - e.f_tilde, s)),
        "smooth": lambda f, e: cp.sum_squares(f - e.f_tilde) + cp.sum_squares(f[1:] - f[:-1]),
        "entropy": lambda f, e: cp.sum_squares(f - e.f_tilde) - LAM * cp.sum(cp.entr(f)),
        "kl_smooth": lambda f, e: (cp.sum_squares(f - e.f_tilde) + LAM * cp.sum(cp.kl_div(f, prior))
                                   + cp.sum_squares(f[1:] - f[:-1])),
    }


def constraint_sets(ds, est):
    d = est.d
    half = np.sort(np.random.default_rng(2).choice(d, d // 2, replace=False))
    top = np.argsort(-est.f_tilde, kind="stable")[:50]
    total = float(ds.counts[half].sum() / ds.counts.sum())
    return {"simplex": lambda: [Simplex()],
            "simplex+subset": lambda: [Simplex(), SubsetSum(half, total)],
            "simplex+monotone50": lambda: [Simplex(), Monotone(order=top)]}


def bisection_referee(name, est):
    """Independent simplex referee for the strictly convex separable variants: h_v'(f) = 2(f − f̃) +
    LAM·(log(f·d)) (kl) or LAM·(log f + 1) (entropy); f_v(t) = its root at −t (0 when h_v'(0⁺) + t ≥ 0,
    never for a log term), by 64 bisections in log f; t by 64 bisections for Σ f = 1."""
    ft, d = est.f_tilde, est.d
    if name == "kl":
        dh = lambda f: 2 * (f - ft) + LAM * np.log(f * d)  # noqa: E731
    elif name == "entropy":
        dh = lambda f: 2 * (f - ft) + LAM * (np.log(f) + 1.0)  # noqa: E731
    else:
        return None

    def f_of(t):
        lo, hi = np.full(d, -745.0), np.zeros(d)  # log f in [log(min float), log 1]
        for _ in range(64):  # width 745·2⁻⁶⁴ in log f: below float64 resolution
            mid = 0.5 * (lo + hi)
            pos = dh(np.exp(mid)) + t > 0
            hi, lo = np.where(pos, mid, hi), np.where(pos, lo, mid)
        return np.exp(0.5 * (lo + hi))

    tlo, thi = -10.0, 10.0
    for _ in range(64):
        t = 0.5 * (tlo + thi)
        if f_of(t).sum() > 1.0:
            tlo = t
        else:
            thi = t
    return f_of(0.5 * (tlo + thi))


def clarabel_referee(func, est, cons, limit):
    f = cp.Variable(est.d)
    built = [con for c in cons for _, con in c.build(f, est)]
    prob = cp.Problem(cp.Minimize(func(f, est)), built)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-14, tol_gap_rel=1e-14, tol_feas=1e-14, time_limit=limit)
    except cp.error.SolverError as exc:
        return None, f"Clarabel: {str(exc)[:60]}", time.perf_counter() - t0
    status = prob.status
    if status not in ("optimal", "optimal_inaccurate") or f.value is None:
        return None, f"Clarabel: {status}", time.perf_counter() - t0
    return np.asarray(f.value), f"Clarabel 1e-14 ({status})", time.perf_counter() - t0


def run_case(name, func, est, cons_fn, ref_limit, referee=True, time_limit=120.0):
    t0, c0 = time.perf_counter(), H.cpu_clock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr = Problem(est, func, cons_fn())
        sol = pr.solve(time_limit=time_limit)
    cpu, wall = H.cpu_clock() - c0, time.perf_counter() - t0
    row = {"route": pr.objective_route, "solver": sol.solver, "cpu_s": cpu, "wall_s": wall, "status": sol.status,
           "certified": bool(sol.checks is not None and sol.checks.certified),
           "error_bound": None if sol.checks is None else sol.checks.error_bound}
    ref, how = (clarabel_referee(func, est, cons_fn(), ref_limit)[:2] if referee else (None, "not run"))
    if len(cons_fn()) == 1 and (ref is None or how.endswith("inaccurate)")):
        alt = bisection_referee(name, est)  # the stronger referee where Clarabel stops short
        if alt is not None:
            ref, how = alt, "bisection" + (f" ({how})" if referee else "")
    row["referee"] = how
    if ref is not None:
        if name == "huber":
            jf, jr = pr.objective.value(sol.f, est), pr.objective.value(ref, est)
            row["objective_gap_rel"] = float((jf - jr) / abs(jr))
        row["max_abs_diff"] = float(np.max(np.abs(sol.f - ref)))
    return row


def today(est, func, limit):
    """The route before recognition: the user's expression to SCS alone (the chain of a user objective with
    exponential cones past d = 10⁴ then)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr = Problem(est, func)
        t0, c0 = time.perf_counter(), H.cpu_clock()
        sol = pr.solve(solver="SCS", SCS={**SCS_TIGHT, "time_limit_secs": float(limit)}, progress=False)
    return {"cpu_s": H.cpu_clock() - c0, "wall_s": time.perf_counter() - t0, "status": sol.status,
            "solver": sol.solver, "time_limit_s": limit, "message": sol.message[:300]}


def table(result) -> str:
    """The markdown table of BENCHMARKS.md from the results file."""
    out = ["| variant | constraints | d | route | solver | CPU s | wall s | status | certified | referee | "
           "max abs(f - f_ref) |", "|" + "---|" * 11]
    for r in result["rows"]:
        diff = "—" if "max_abs_diff" not in r else f"{r['max_abs_diff']:.1e}"
        if "objective_gap_rel" in r:
            diff += f" (J gap {r['objective_gap_rel']:.0e})"
        route = r["route"].split(":")[0]
        out.append(f"| {r['variant']} | {r['constraints']} | {r['d']:,} | {route} | {r['solver']} | {r['cpu_s']:.2f} | "
                   f"{r['wall_s']:.1f} | {r['status']} | {'yes' if r['certified'] else 'no'} | {r['referee']} | {diff} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="retail,aol")
    ap.add_argument("--today", type=float, default=None, metavar="SECONDS",
                    help="also time today's route (SCS alone) once for kl on Retail, with this time limit")
    ap.add_argument("--variants", default=None, help="comma-separated subset of kl,huber,smooth,entropy,kl_smooth")
    ap.add_argument("--no-referee", action="store_true", help="skip the Clarabel referee")
    ap.add_argument("--time-limit", type=float, default=120.0,
                    help="solve(time_limit=...) of each case, wall seconds (default 120; raise it on a loaded machine)")
    ap.add_argument("--table", action="store_true", help="print the markdown table of the results file and stop")
    a = ap.parse_args(argv)
    if a.table:
        print(table(json.loads(OUT.read_text())))
        return
    rows = json.loads(OUT.read_text())["rows"] if OUT.exists() else []
    command = "python benchmarks/bench_own_variant.py " + " ".join(sys.argv[1:] if argv is None else argv)
    past = json.loads(OUT.read_text()).get("commands", []) if OUT.exists() else []
    # the runs whose rows the file holds, in order; machine and date of the last one
    result = {"machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "command": command,
              "rows": rows, "commands": past + [command]}
    for name in [x.strip() for x in a.datasets.split(",") if x.strip()]:
        ds, est = estimate_for(name)
        funcs, sets = variants(est), constraint_sets(ds, est)
        chosen = [v.strip() for v in a.variants.split(",")] if a.variants else list(funcs)
        rows[:] = [r for r in rows if not (r["d"] == est.d and r["variant"] in chosen)]
        for vname, func in ((v, funcs[v]) for v in chosen):
            for cname, cons in sets.items():
                row = {"dataset": name, "d": est.d, "variant": vname, "constraints": cname,
                       **run_case(vname, func, est, cons, REF_LIMIT,
                                  referee=not a.no_referee and not (vname in EXP_CONES and est.d > 20_000),
                                  time_limit=a.time_limit), "time_limit_s": a.time_limit}
                rows.append(row)
                print(json.dumps(row), flush=True)
        # re-read before writing: another run may have written its rows meanwhile; rows run here replace
        # the same (d, variant, constraints)
        key = lambda r: (r["d"], r["variant"], r["constraints"])  # noqa: E731
        mine = {key(r): r for r in rows if r["d"] == est.d and r["variant"] in chosen}
        old = json.loads(OUT.read_text())["rows"] if OUT.exists() else []
        result["rows"] = [mine.pop(key(r), r) for r in old] + list(mine.values())
        OUT.write_text(json.dumps(result, indent=1))
    if a.today:
        ds, est = estimate_for("retail")
        row = today(est, variants(est)["kl"], a.today)
        TODAY.write_text(json.dumps(row, indent=1))
        print(json.dumps(row), flush=True)
    return result


def machine() -> str:
    """CPU model and core count (the machine was shared: see the module docstring)."""
    import os
    import platform

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, shared"


def run(quick: bool = False, **opts) -> dict:
    """Entry of ``benchmarks/run.py``. Full: ``main`` at its defaults (its other options are its
    command-line flags). ``--quick``: kl on the simplex at Retail's first 1,000 values (bisection
    referee only), written to ``results/quick/own_variant.json``."""
    a = H.options(H.parser(__doc__), "bench_own_variant.py", quick, opts)
    if not a.quick:
        main([])
        return json.loads(OUT.read_text())
    counts = datasets.load("retail").counts[:1000]
    oracle = OUE(1.0, counts.size)
    est = oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(1)), int(counts.sum()))
    row = {"d": est.d, "variant": "kl", "constraints": "simplex",
           **run_case("kl", variants(est)["kl"], est, lambda: [Simplex()], REF_LIMIT, referee=False)}
    return H.save("own_variant", a, {"rows": [row]})


if __name__ == "__main__":
    if "--quick" in sys.argv[1:]:
        run(quick=True)
    else:
        main()
