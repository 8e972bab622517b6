"""The route grid: ldpopt's ``Problem.solve()`` beside cvxpy + Clarabel and + PIQP on the same problems,
every objective class × every constraint kind ldpopt routes, d from 10² to 10⁶, 3 seeds.

    python benchmarks/bench_route_grid.py            # the grid (~15 min on the shared 2-core box)
    python benchmarks/bench_route_grid.py --quick    # d = 100, one seed, a few classes (seconds)
    python benchmarks/bench_route_grid.py --classes "cls / subset sums,multi 3-way cls"   # some classes
    python benchmarks/bench_route_grid.py --generated 12 --d 100 1000   # 12 generated classes (below)

Generated classes (``--generated N``, results in ``results/route_grid_generated.json``, the named
grid's file untouched): N classes drawn, seeded by ``--gen-seed``, from the families of
``tests/problem_strategies.py`` that the property tests draw from — objective family × constraint
family × data shape × margin (feasible or thin: a speed class needs a point) — each timed like a
named class (ldpopt's whole call against cvxpy + Clarabel, + PIQP for QPs, interleaved, at every
``--d``, ``--seeds`` seeds), and flagged (``found``) where ldpopt's answer is not ``optimal`` while a
cvxpy call's is, where the two answers differ by more than ldpopt's reported bound plus 1e-6, or where
ldpopt's call is slower than the best valid cvxpy call (ratio < 1).

Data: a Zipf(1.5) histogram of n = max(10⁵, 10·d) users (``_harness.zipf_counts``), one OUE draw at
ε = 1 per seed (``OUE.sample_counts``, seeds 1–3). Classes (``CLASSES``): the built-in objectives
``cls`` and ``weighted-mle``, and four user objectives — ``recognised`` (a cvxpy callable ‖f − f̃‖² +
1e-4·Σ kl_div(f, 1/d), recognised as separable), ``declared`` (the same J as a
:class:`~ldpopt.problems.SeparableObjective` with numpy h, h', h'' and a curvature bound), ``smooth``
(‖f − f̃‖² + Σ (f_{v+1} − f_v)², not separable: the Newton route) and ``nonsmooth`` (‖f − f̃‖² +
1e-3·Σ |f_{v+1} − f_v|, total variation) — each with the simplex and: nothing more, a Box (f ≤ 0.1),
three SubsetSum rows (random halves at their true totals), a Monotone chain (the 50 values with the
largest true counts, nonincreasing), PartitionTotals (9 of 10 contiguous groups at their true totals), a
LinearEquality (3 random sparse rows at the true values), and the binary range tree
(``range_tree(d/2, 2).constraints()`` on per-node OUE counts: d nodes) for the built-ins; and the
consistent marginals of :mod:`ldpopt.multi` (CALM-style OUE collection, ε = 1, chain-network data:
2-way over 6/10/16 binary attributes, 3-way over domains (2, 3, 3, 4, 5) — the 367-cell case — and
over 8 and 12 binary attributes), cls and the weighted objective; and consistent key–value estimation
(:func:`ldpopt.keyvalue.consistent.consistent_problem`: the ``posterior`` objective over z = (h⁺, h⁻, r) on the
simplex) for PCKV-UE and PrivKV at ε = 1 on ``keyvalue.power_law`` data with 10², 10³, 10⁴ keys
(:data:`KEYVALUE_KEYS`; n = max(10⁵, 10·keys) users, one draw per seed) — d is the problem's length.

Timing: CPU seconds (``time.process_time`` plus waited-for child processes: PIQP runs in one; wall
seconds beside) of one call each (the fastest of :data:`REPEATS` rounds up to d = 10⁴, :data:`REPEAT_MAX_D`), after a :data:`QUIESCE_S` wait once the point's data are drawn
(the simulation's thread pool spins on for a while: its CPU is no route's), **interleaved**: for every (class, d, seed) ldpopt's
``Problem(...).solve()`` (no time limit on either side but for the exponential-cone user
objectives: :func:`ldpopt_call`) then
``Problem(...).solve(solver="CLARABEL")`` then ``solve(solver="PIQP")``
(QPs only; PIQP takes no cones) run back to back, so the machine's load hits them alike (CPU time:
the box is shared by eight sessions, load average 10–13 during the run, and wall times swing 5×).
Both sides are the whole user call — Problem construction, the exact feasibility decision that runs
before any solver, the route, ldpopt's check of the answer (status, ``error_bound``) — so the ratio
is the choice a user (or the router) makes between ``solve()`` and ``solve(solver=...)``; cvxpy's own
``compile_time + solve_time`` is kept beside (``cvxpy_s``). One untimed call of each route at the
smallest size comes first (imports, first-use set-up). **ratio** = best cvxpy CPU / ldpopt CPU for
the same (d, seed), cvxpy answers that passed ldpopt's check only; per class: min, median and max
over the grid points. Sizes: d = 10², …, 10⁶ (``--d``); a route is not run at the next d once its
CPU time at this one, ×10 (growth about linear), would pass ``--cvxpy-cap`` (cvxpy, default 3 s)
or ``--ldpopt-cap`` (default 20 s) — so cvxpy stops at 10⁴–10⁵ in the default grid, said per class
(``cvxpy_max_d``); the 60 s per solve the question allowed would not fit 15 minutes.

Growth (:func:`growth`): per route (the solver that answered) the least-squares exponent of log CPU
time against log d with its standard error — over all the class's d values (4 decades for ldpopt,
2–3 for cvxpy) and over the top two decades the route ran (the asymptotic growth, fixed costs
aside) — and against the number of constraint rows where they span a decade. Results: ``results/route_grid.json``.
"""

from __future__ import annotations

import json
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _harness as H

SEEDS = (1, 2, 3)
DS = (100, 1_000, 10_000, 100_000, 1_000_000)
KL_WEIGHT = 1e-4


# ---------------------------------------------------------------------------------------------------
# objectives

def _recognised(est):
    import cvxpy as cp

    prior = np.full(est.d, 1.0 / est.d)
    return lambda f, e: cp.sum_squares(f - e.f_tilde) + KL_WEIGHT * cp.sum(cp.kl_div(f, prior))


def _declared(est):
    import cvxpy as cp

    from ldpopt.problems import SeparableObjective

    p, w = 1.0 / est.d, KL_WEIGHT
    with np.errstate(divide="ignore", invalid="ignore"):
        def h(f, e):
            return (f - e.f_tilde) ** 2 + w * (np.where(f > 0, f * np.log(f / p), 0.0) - f + p)

        def dh(f, e):
            return 2.0 * (f - e.f_tilde) + w * np.log(f / p)

        def d2h(f, e):
            return 2.0 + w / f

    return SeparableObjective(h, dh, d2h, name="cls+kl", curvature=lambda l, u, e: 2.0 + w / np.maximum(u, 1e-300),
                              cvxpy_expr=lambda f, e: cp.sum_squares(f - e.f_tilde) + w * cp.sum(cp.kl_div(f, p)))


def _smooth(est):
    import cvxpy as cp

    return lambda f, e: cp.sum_squares(f - e.f_tilde) + cp.sum_squares(f[1:] - f[:-1])


def _nonsmooth(est):
    import cvxpy as cp

    return lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.norm1(f[1:] - f[:-1])


OBJECTIVES = {"cls": lambda est: "cls", "weighted-mle": lambda est: "weighted-mle", "recognised": _recognised,
              "declared": _declared, "smooth": _smooth, "nonsmooth": _nonsmooth}
#: objectives cvxpy states as a QP (PIQP runs on them)
QP = {"cls", "smooth", "nonsmooth"}  # the QPs (total variation: its |·| an LP epigraph, as PIQP takes it)


# ---------------------------------------------------------------------------------------------------
# constraints: (d, truth, rng) -> list

def _simplex(d, truth, rng):
    from ldpopt.problems import Simplex

    return [Simplex()]


def _box(d, truth, rng):
    from ldpopt.problems import Box, Simplex

    return [Simplex(), Box(upper=0.1)]


def _subset(d, truth, rng):
    from ldpopt.problems import Simplex, SubsetSum

    out = [Simplex()]
    for i in range(3):
        idx = np.flatnonzero(rng.random(d) < 0.5)
        out.append(SubsetSum(idx, float(truth[idx].sum()), "==", name=f"half{i}"))
    return out


def _monotone(d, truth, rng):
    from ldpopt.problems import Monotone, Simplex

    return [Simplex(), Monotone("nonincreasing", order=np.argsort(-truth, kind="stable")[:min(50, d)])]


def _partition(d, truth, rng):
    from ldpopt.problems import PartitionTotals, Simplex

    # 9 of 10 contiguous groups: with all 10 the totals' float sum need not be exactly 1, and the
    # exact feasibility decision would rightly call the problem infeasible
    parts = np.array_split(np.arange(d), 10)[:9]
    return [Simplex(), PartitionTotals({f"g{k}": g for k, g in enumerate(parts)},
                                       {f"g{k}": float(truth[g].sum()) for k, g in enumerate(parts)})]


def _lineq(d, truth, rng):
    import scipy.sparse as sp

    from ldpopt.problems import LinearEquality, Simplex

    A = sp.random(3, d, density=min(1.0, 50.0 / d), random_state=np.random.RandomState(int(rng.integers(2**31))),
                  data_rvs=lambda k: np.random.default_rng(k).uniform(0.5, 2.0, k)).tocsr()
    return [Simplex(), LinearEquality(A, A @ truth)]


CONSTRAINTS = {"simplex": _simplex, "box": _box, "subset sums": _subset, "monotone": _monotone,
               "partition totals": _partition, "linear equality": _lineq}


def _classes():
    """name -> (kind, objective, constraint kind or None); the grid's rows."""
    out = {}
    for obj in ("cls", "weighted-mle"):
        for con in (*CONSTRAINTS, "range tree"):
            out[f"{obj} / {con}"] = ("vector", obj, con)
    for obj in ("recognised", "declared"):
        for con in ("simplex", "box", "subset sums", "partition totals", "linear equality"):
            out[f"{obj} / {con}"] = ("vector", obj, con)
    for obj in ("smooth", "nonsmooth"):
        for con in ("simplex", "subset sums"):
            out[f"{obj} / {con}"] = ("vector", obj, con)
    for way in (2, 3):
        for obj in ("cls", "weighted"):
            out[f"multi {way}-way {obj}"] = ("multi", obj, way)
    for protocol in ("pckv", "privkv"):
        out[f"key-value {protocol}"] = ("keyvalue", "posterior", protocol)
    return out


CLASSES = _classes()

#: the marginal data sets per way: (label, attributes' domains) — d is the number of cells
MULTI = {2: (("k=6 binary", (2,) * 6), ("k=10 binary", (2,) * 10), ("k=16 binary", (2,) * 16)),
         3: (("k=5 (2,3,3,4,5)", (2, 3, 3, 4, 5)), ("k=8 binary", (2,) * 8), ("k=12 binary", (2,) * 12))}


#: the key–value data sets: (label, keys)
KEYVALUE_KEYS = tuple((f"{k:,} keys", k) for k in (100, 1_000, 10_000))
#: wall seconds a cvxpy solve of a key–value problem may take from 10⁴ values on (its solver then runs in
#: a child process, killed at the limit: a point past it counts as failed). Measured before it: PrivKV
#: at 3,000 keys took 24 s with Clarabel and 20 s with PIQP, both ``inaccurate``; at 10⁴ keys the
#: grid's 3 seeds × 2 solvers would run for many minutes.
KEYVALUE_CVXPY_LIMIT = 20.0

# ---------------------------------------------------------------------------------------------------
# problems

def vector_problem(obj: str, con: str, d: int, seed: int):
    """(problem factory, d, rows): a fresh ``Problem`` per call (nothing cached between the routes)."""
    from ldpopt import Estimate
    from ldpopt.oracles.unary import OUE
    from ldpopt.problems import Problem, range_tree

    rng = np.random.default_rng(1000 + seed)
    if con == "range tree":
        leaves = max(d // 2, 2)
        t = range_tree(leaves, 2)
        n = max(10**5, 10 * leaves)
        true = t.node_totals(H.zipf_counts(leaves, n) / n)
        p, q = 0.5, 1.0 / (1.0 + np.exp(1.0))
        c = np.random.default_rng(seed).binomial(n, q + (p - q) * true).astype(float)
        est = Estimate.from_counts(c, n, 1.0, p, q, oracle="oue")
        cons = t.constraints()
    else:
        n = max(10**5, 10 * d)
        counts = H.zipf_counts(d, n)
        oracle = OUE(1.0, d)
        est = oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(seed)), n)
        cons = CONSTRAINTS[con](d, counts / n, rng)
    objective = OBJECTIVES[obj]
    # the objective made anew per call too: a declared SeparableObjective keeps, per estimate, its
    # cvxpy_expr's DCP verdict and its elementwise probe's, which a second call would read warm
    # (measured at d = 1,000: 3.2 ms a call with a fresh objective, 2.4 ms with a shared one)
    return (lambda: Problem(est, objective(est), cons)), est.d


def multi_problem(obj: str, way: int, domains, seed: int):
    from ldpopt import multi

    data = multi.chain_network(100_000, len(domains), domains=domains, strength=0.6, rng=1)
    est = multi.calm(data.domains, 1.0, way=way, oracle="oue").simulate(data, seed)
    return (lambda: multi.consistency_problem(est, obj)), est.marginals.size


_KV_DATA: dict = {}


def keyvalue_problem(protocol: str, keys: int, seed: int):
    """(problem factory, d): consistent key–value estimation for ``protocol`` (``"pckv"``: PCKV-UE,
    ``"privkv"``) at ε = 1 over ``keys`` keys; the data drawn once (rng 0), the reports per seed."""
    from ldpopt import keyvalue as kv

    if keys not in _KV_DATA:  # power_law draws n × keys Gumbel numbers: 17 s at 10⁴ keys, so once per size
        _KV_DATA[keys] = kv.power_law(max(10**5, 10 * keys), keys, rng=0)
    data = _KV_DATA[keys]
    proto = {"pckv": kv.pckv_ue, "privkv": kv.privkv}[protocol](1.0, keys)
    counts = proto.sample_counts(data, rng=seed)
    make = lambda: kv.consistent_problem(proto, counts, data.n)[0]
    return make, make().estimate.d


def problem_for(kind: str, obj: str, con, size, seed: int):
    """(problem factory, d) of one grid point of a class of kind ``kind``."""
    if kind == "multi":
        return multi_problem(obj, con, size, seed)
    if kind == "keyvalue":
        return keyvalue_problem(con, size, seed)
    return vector_problem(obj, con, size, seed)


def rows_of(pr) -> int:
    """The number of linear constraint rows other than bounds (Σ f = 1 included): what the Newton
    systems on the multipliers grow with."""
    from ldpopt.problems.solvers.structured import NotApplicable
    from ldpopt.problems.dual.structure import compile_constraints

    try:
        return int(compile_constraints(pr.constraints, pr.estimate.d).m) + 1
    except NotApplicable:  # a constraint the structured compiler does not take
        return -1


# ---------------------------------------------------------------------------------------------------
# timing

def _ok(row: dict) -> bool:
    return row["status"] == "optimal"


def _cpu() -> float:
    """CPU seconds of this process and of its waited-for children (PIQP runs in a child process)."""
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + ch.ru_utime + ch.ru_stime


def _call(make, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), _cpu()
        sol = make().solve(progress=False, **kw)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
    eb = None if sol.checks is None or sol.checks.error_bound is None else float(sol.checks.error_bound)
    return sol, {"s": cpu, "wall_s": wall, "status": sol.status, "error_bound": eb}


#: ldpopt's call on the exponential-cone user objectives has a time limit (wall seconds): where the
#: structured route does not certify, their fallback chain above d = 10⁴ is SCS alone, which can run
#: for many minutes (Clarabel then SCS up to 10⁴: ``policy.EXP_CONE_CLARABEL_MAX_D``)
LDPOPT_TIME_LIMIT = 30.0
#: the objectives that get it
EXP_CONE_OBJECTIVES = ("recognised", "declared")
#: seconds waited after drawing a grid point's data, before its timed calls: the simulation's
#: parallel kernels leave their thread pool spinning for a while after they return (measured: the
#: first call after a 3-way marginals draw at 1,760 cells read 0.17–0.20 s CPU for 0.08–0.09 s wall,
#: the next ones CPU = wall; after a 0.5 s wait the first reads CPU = wall too) — CPU that is not the
#: route's, and that the grid charged to ldpopt, whose call comes first
QUIESCE_S = 0.5


#: up to this d every route of a grid point runs REPEATS rounds (interleaved: ldpopt, Clarabel, PIQP,
#: ldpopt, ...) and each keeps its fastest call: a single call there is a few ms, and the shared
#: machine's load or the simulation's spinning threads put single calls at 2-5x their siblings
#: (measured: a declared objective with linear equality at d = 100, 16-17 ms alone, read 48 ms once).
#: Past it one call each (a call there is long against the noise, and the grid's time is there).
REPEAT_MAX_D = 10_000
REPEATS = 2


def _faster(kept: dict | None, new: dict) -> dict:
    """The faster of two calls of one route (an answer that passed ldpopt's check before one that did
    not); the number of calls kept in ``calls``."""
    if kept is None:
        return {**new, "calls": 1}
    best = min((kept, new), key=lambda r: (not _ok(r), r["s"]))
    return {**best, "calls": kept["calls"] + 1}


def ldpopt_call(make, time_limit: float | None = None) -> dict:
    """``Problem(...).solve(time_limit=...)``: CPU and wall seconds of the whole call, status, route,
    bound. ``time_limit`` only for :data:`EXP_CONE_OBJECTIVES`, none elsewhere, as on the cvxpy
    side: with a limit every cvxpy solver of ldpopt's chain runs in a child process
    (:mod:`ldpopt.problems.solvers.isolate`; the fork: ~15 ms a call at d = 100, measured) while the
    named solver it is compared with runs in-process. For those objectives ldpopt's route is the
    structured solver, which runs in-process either way."""
    sol, row = _call(make, time_limit=time_limit)
    return {**row, "solver": sol.solver, "not_unique": sol.not_unique, "f": sol.f}


def cvxpy_call(make, solver: str, time_limit: float | None = None) -> dict:
    """``Problem(...).solve(solver=...)``: the whole call's CPU and wall seconds (``s``: build, cvxpy's
    compile and solve, ldpopt's check — the same check ldpopt's route pays), and ``cvxpy_s``: cvxpy's
    own compile + solve seconds alone (wall). ``time_limit``: only :data:`KEYVALUE_CVXPY_LIMIT`."""
    sol, row = _call(make, solver=solver, time_limit=time_limit)
    return {**row, "cvxpy_s": (sol.compile_time or 0.0) + (sol.solve_time or 0.0), "f": sol.f}


def fit(x, y):
    """(slope, its standard error) of log y against log x (least squares); None where < 3 points or
    under one decade of x."""
    x, y = np.log10(np.asarray(x, float)), np.log10(np.asarray(y, float))
    if x.size < 3 or x.max() - x.min() < 1.0:
        return None
    A = np.vstack([x, np.ones_like(x)]).T
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    r = y - A @ coef
    s2 = float(r @ r) / max(x.size - 2, 1)
    se = float(np.sqrt(s2 / np.sum((x - x.mean()) ** 2)))
    return {"exponent": float(coef[0]), "se": se, "points": int(x.size), "decades": float(x.max() - x.min())}


def growth(points) -> list[dict]:
    """Per route (the solver that answered) the exponent of CPU time against d over all the points
    (``vs_d``: fixed costs — the feasibility decision, the check — flatten it at small d), over the
    top two decades the route ran (``vs_d_top``: d ≥ its largest d / 100, the asymptotic growth), and
    against the constraint rows where they span a decade (``vs_rows``)."""
    by_route: dict = {}
    for p in points:
        by_route.setdefault(("ldpopt", p["ldpopt"]["solver"]), []).append((p["d"], p["rows"], p["ldpopt"]["s"]))
        for s, c in p["cvxpy"].items():
            if _ok(c):
                by_route.setdefault(("cvxpy", s), []).append((p["d"], p["rows"], c["s"]))
    out = []
    for (side, route), pts in by_route.items():
        ds, rs, ts = (np.array(v, float) for v in zip(*pts))
        top = ds >= ds.max() / 100.0
        g = {"side": side, "route": route, "vs_d": fit(ds, ts), "vs_d_top": fit(ds[top], ts[top])}
        if np.all(rs > 0) and np.ptp(np.log10(rs)) >= 1.0:
            g["vs_rows"] = fit(rs, ts)
        out.append(g)
    return out


def one_class(name, spec, a) -> dict:
    kind, obj, con = spec
    seeds = SEEDS[:a.seeds]
    points = []
    run_cvxpy, run_ldpopt = True, True
    cvxpy_max_d = None
    sizes = {"multi": lambda: MULTI[con], "keyvalue": lambda: KEYVALUE_KEYS}.get(kind, lambda: [(None, d) for d in a.d])()
    if a.quick:
        sizes = sizes[:1]
    # one untimed call of each route at the smallest size first: imports and first-use set-up (cvxpy's
    # and ldpopt's lazy modules, the BLAS controller) are not a route's cost
    _, size0 = sizes[0]
    make0, _ = problem_for(kind, obj, con, size0, 1)
    limit = LDPOPT_TIME_LIMIT if obj in EXP_CONE_OBJECTIVES else None
    ldpopt_call(make0, limit)
    cvxpy_call(make0, "CLARABEL")
    for label, size in sizes:
        if not run_ldpopt:
            break
        worst_l, worst_c = 0.0, 0.0
        for seed in seeds:
            make, d = problem_for(kind, obj, con, size, seed)
            point = {"d": d, "seed": seed, "rows": rows_of(make())}
            time.sleep(QUIESCE_S)  # the data's simulation threads stop spinning before any timed call
            if label:
                point["data"] = label
            solvers = [sv for sv in ("CLARABEL", "PIQP") if run_cvxpy and (
                sv == "CLARABEL" or (kind == "vector" and obj in QP) or (kind == "multi" and obj == "cls")
                or kind == "keyvalue")]
            lp, refs = None, {}
            for _ in range(REPEATS if d <= REPEAT_MAX_D else 1):  # rounds of every route, interleaved
                got = ldpopt_call(make, limit)
                lp = _faster(lp, got)
                for solver in solvers:
                    c = cvxpy_call(make, solver, KEYVALUE_CVXPY_LIMIT if kind == "keyvalue" and d >= 10**4 else None)
                    refs[solver] = _faster(refs.get(solver), c)
            assert lp is not None
            worst_l = max(worst_l, lp["s"])
            worst_c = max([worst_c] + [c["s"] for c in refs.values()])
            if solvers:
                cvxpy_max_d = d
            f = lp.pop("f")
            point["ldpopt"] = lp
            for c in refs.values():
                g = c.pop("f")
                c["max_abs_diff"] = float(np.max(np.abs(g - f))) if np.all(np.isfinite(g)) else None
            point["cvxpy"] = refs
            good = {s: c["s"] for s, c in refs.items() if _ok(c)}
            if good and _ok(lp):
                best = min(good, key=good.get)
                point["best_cvxpy"], point["ratio"] = best, good[best] / lp["s"]
            points.append(point)
            print(f"{name:34s} d={d:8d} seed={seed} rows={point['rows']:5d} ldpopt={lp['s']:.4f}s[{lp['status']},"
                  f"{lp['solver']}] " + " ".join(f"{s}={c['s']:.4f}s[{c['status']}]" for s, c in refs.items())
                  + (f" ratio={point['ratio']:.2f}" if "ratio" in point else ""), flush=True)
        run_cvxpy = run_cvxpy and 10 * worst_c <= a.cvxpy_cap
        run_ldpopt = 10 * worst_l <= a.ldpopt_cap
    ratios = [p["ratio"] for p in points if "ratio" in p]
    out = {"class": name, "points": points, "cvxpy_max_d": cvxpy_max_d, "cvxpy_cap": a.cvxpy_cap,
           "ratio": ({"min": float(np.min(ratios)), "median": float(np.median(ratios)), "max": float(np.max(ratios)),
                      "n": len(ratios)} if ratios else None),
           "ldpopt_all_optimal": all(_ok(p["ldpopt"]) for p in points)}
    out["growth"] = growth(points)
    return out


# ---------------------------------------------------------------------------------------------------
# generated classes (tests/problem_strategies.py's families)

#: objective families whose calls get :data:`LDPOPT_TIME_LIMIT` (exponential cones or a likelihood:
#: cvxpy's conic fallback can run for minutes)
GEN_LIMITED = ("weighted-mle", "user-cls-kl", "user-smooth-kl", "multinomial")
#: the QP families (PIQP is timed beside Clarabel)
GEN_QP = ("cls", "user-smooth")


def _strategies():
    here = Path(__file__).resolve().parent.parent / "tests"
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    import problem_strategies

    return problem_strategies


def generated_classes(n: int, seed: int) -> list[dict]:
    """``n`` classes (objective, constraint, shape, margin, slack) drawn by a seeded numpy generator
    from :mod:`problem_strategies`' families; feasible or thin margins (a point to time)."""
    ps = _strategies()
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        obj, con = str(rng.choice(ps.OBJECTIVES)), str(rng.choice(ps.CONSTRAINTS))
        margin = "feasible" if con in ("simplex", "monotone") else str(rng.choice(["feasible", "thin"]))
        slack = float(rng.choice(ps.THIN)) if margin == "thin" else 0.0
        out.append({"objective": obj, "constraint": con, "shape": str(rng.choice(ps.SHAPES)), "margin": margin,
                    "slack": slack, "name": f"gen {obj} / {con} / {margin}"})
    return out


def generated_problem(spec: dict, d: int, seed: int):
    """(problem factory, d) of a generated class at d: :func:`problem_strategies.estimate` and its
    objective and constraint builders, drawn from ``seed``."""
    ps = _strategies()
    from ldpopt.problems import Problem

    rng = np.random.default_rng(seed)
    est = ps.estimate(spec["shape"], d, rng, grr=spec["objective"] == "multinomial")
    cons, _ = ps.constraints_for(spec["constraint"], spec["margin"], d, rng, spec["slack"])
    return (lambda: Problem(est, ps.objective_for(spec["objective"], est), cons)), d


def one_generated(spec: dict, a) -> dict:
    """One generated class over ``a.d`` and ``a.seeds`` seeds: ldpopt's call, cvxpy + Clarabel (+ PIQP
    for QPs), the ratio and what was found (module docstring)."""
    limit = LDPOPT_TIME_LIMIT if spec["objective"] in GEN_LIMITED else None
    solvers = ["CLARABEL"] + (["PIQP"] if spec["objective"] in GEN_QP else [])
    points, run_cvxpy, run_ldpopt = [], True, True
    make0, _ = generated_problem(spec, a.d[0], 1)
    ldpopt_call(make0, limit)  # first-use set-up, untimed
    for d in a.d:
        if not run_ldpopt:
            break
        worst_l = worst_c = 0.0
        for seed in SEEDS[:a.seeds]:
            make, _ = generated_problem(spec, d, 100 * seed + d)
            time.sleep(QUIESCE_S)
            lp, refs = None, {}
            for _ in range(REPEATS if d <= REPEAT_MAX_D else 1):
                lp = _faster(lp, ldpopt_call(make, limit))
                for sv in solvers if run_cvxpy else []:
                    refs[sv] = _faster(refs.get(sv), cvxpy_call(make, sv, limit))
            assert lp is not None
            worst_l = max(worst_l, lp["s"])
            worst_c = max([worst_c] + [c["s"] for c in refs.values()])
            f = lp.pop("f")
            found = []
            for sv, c in refs.items():
                g = c.pop("f")
                c["max_abs_diff"] = float(np.max(np.abs(g - f))) if np.all(np.isfinite(g)) and np.all(np.isfinite(f)) else None
                if _ok(c) and not _ok(lp):
                    found.append(f"ldpopt {lp['status']} where {sv} is optimal")
                if _ok(c) and _ok(lp) and c["max_abs_diff"] is not None and c["max_abs_diff"] > (
                        (lp["error_bound"] or 0.0) + (c["error_bound"] or 0.0) + 1e-6):
                    found.append(f"answers {c['max_abs_diff']:.1e} apart against bounds {lp['error_bound']} + "
                                 f"{c['error_bound']} ({sv})")
            point = {"d": d, "seed": seed, "ldpopt": lp, "cvxpy": refs}
            good = {sv: c["s"] for sv, c in refs.items() if _ok(c)}
            if good and _ok(lp):
                best = min(good, key=good.get)
                point["best_cvxpy"], point["ratio"] = best, good[best] / lp["s"]
                if point["ratio"] < 1.0:
                    found.append(f"slower than {best}: ratio {point['ratio']:.2f}")
            point["found"] = found
            points.append(point)
            print(f"{spec['name']:44s} d={d:7d} seed={seed} ldpopt={lp['s']:.4f}s[{lp['status']},{lp['solver']}] "
                  + " ".join(f"{sv}={c['s']:.4f}s[{c['status']}]" for sv, c in refs.items())
                  + (f" ratio={point['ratio']:.2f}" if "ratio" in point else "") + (f" FOUND {found}" if found else ""),
                  flush=True)
        run_cvxpy = run_cvxpy and 10 * worst_c <= a.cvxpy_cap
        run_ldpopt = 10 * worst_l <= a.ldpopt_cap
    ratios = [p["ratio"] for p in points if "ratio" in p]
    return {**spec, "points": points,
            "ratio": ({"min": float(np.min(ratios)), "median": float(np.median(ratios)), "max": float(np.max(ratios)),
                       "n": len(ratios)} if ratios else None),
            "ldpopt_all_optimal": all(_ok(p["ldpopt"]) for p in points),
            "found": sorted({x for p in points for x in p["found"]})}


def run_generated(a) -> dict:
    """``--generated N``: results/route_grid_generated.json (written after every class)."""
    t0 = time.perf_counter()
    results: list = []
    specs = generated_classes(a.generated, a.gen_seed)

    def doc():
        return {"generated": a.generated, "gen_seed": a.gen_seed, "d": list(a.d), "seeds": a.seeds,
                "classes": results, "problems_solved": sum(len(c["points"]) for c in results),
                "classes_with_findings": sum(bool(c["found"]) for c in results),
                "elapsed_s": time.perf_counter() - t0}

    for spec in specs:
        results.append(one_generated(spec, a))
        H.save("route_grid_generated", a, doc())
    return H.save("route_grid_generated", a, doc())


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--generated", type=int, default=0,
                    help="time N classes drawn from tests/problem_strategies.py's families instead of the named ones")
    ap.add_argument("--gen-seed", type=int, default=20261125, help="the generated classes' seed (reproducible)")
    ap.add_argument("--classes", default="", help="comma-separated class names (default: all; see CLASSES)")
    ap.add_argument("--d", type=int, nargs="+", default=list(DS), help="the domain sizes (vector classes)")
    ap.add_argument("--seeds", type=int, default=len(SEEDS), help="how many seeds (1–3)")
    ap.add_argument("--cvxpy-cap", type=float, default=3.0, help="cvxpy's next d only when 10× this d's time fits")
    ap.add_argument("--regrow", action="store_true", help="only recompute the growth fits of the results file")
    ap.add_argument("--ldpopt-cap", type=float, default=20.0, help="ldpopt's next d only when 10× this d's time fits")
    ap.add_argument("--note", default="", help="with --classes: why these classes are measured again (kept in the "
                                               "results file beside the command and printed with the table)")
    return ap


QUICK_CLASSES = ("cls / subset sums", "recognised / simplex", "multi 3-way cls")


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: d = 100, one seed, three classes."""
    a = H.options(parser(), "bench_route_grid.py", quick, opts)
    if a.generated:
        if a.quick:
            a.d, a.seeds, a.generated = [100], 1, min(a.generated, 4)
        return run_generated(a)
    names = [c for c in a.classes.split(",") if c] or (list(QUICK_CLASSES) if a.quick else list(CLASSES))
    unknown = [c for c in names if c not in CLASSES]
    if unknown:
        raise SystemExit(f"--classes: unknown {unknown}; have {list(CLASSES)}")
    if a.regrow:  # the growth fits of the results file again (after a change to growth())
        path = H.results_dir(a) / "route_grid.json"
        doc = json.loads(path.read_text())
        for c in doc["classes"]:
            c["growth"] = growth(c["points"])
        return H.save("route_grid", a, {k: v for k, v in doc.items() if k not in ("machine", "date", "command")})
    if a.quick:
        a.d, a.seeds = [100], 1
    if not 1 <= a.seeds <= len(SEEDS):
        raise SystemExit(f"--seeds must be 1–{len(SEEDS)}, got {a.seeds}")
    t0 = time.perf_counter()
    # a run of some classes replaces those in the results file and keeps the others, in CLASSES' order;
    # the full run's command, date and length stay in the file ("full_run"), and each such run is
    # listed ("reruns": its classes, command, date and --note)
    path = H.results_dir(a) / "route_grid.json"
    prev = json.loads(path.read_text()) if path.exists() and a.classes else None
    kept = [c for c in (prev.get("classes", []) if prev else []) if c["class"] not in names]
    extra: dict = {}
    if prev is not None:
        full = prev.get("full_run") or {k: prev.get(k) for k in ("command", "date", "elapsed_s")}
        rerun = {"classes": names, "command": a.command, "date": H.environment()["date"], "note": a.note}
        extra = {"full_run": full, "reruns": prev.get("reruns", []) + [rerun]}
    order = list(CLASSES)
    results: list = []

    def doc():
        merged = sorted(kept + results, key=lambda c: order.index(c["class"]) if c["class"] in order else len(order))
        return {"classes": merged, "elapsed_s": time.perf_counter() - t0, **extra}

    for name in names:
        results.append(one_class(name, CLASSES[name], a))
        H.save("route_grid", a, doc())
    return H.save("route_grid", a, doc())


if __name__ == "__main__":
    H.cli(parser(), run)
