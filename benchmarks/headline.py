"""The headline table of ``BENCHMARKS.md``, declared as data and rendered from ``benchmarks/results/``.

``python benchmarks/run.py --table`` rewrites ``BENCHMARKS.md`` from the committed results files;
``tests/test_benchmarks_harness.py`` fails when the page and the results disagree. No number on the
page is typed by hand: each cell is read from a results file through a :class:`Pick` (a path of
keys, list indices and ``{field: value}`` filters); a row whose file or keys are missing says
"not measured". Where a file holds several runs of one case, a filter takes the **last** matching
entry (the latest run). Adding a headline row is one :class:`Row` in ``ROWS``; a comparison measured
over a grid of settings is one :class:`Span` (the ratio's minimum, median and maximum, each with its
setting).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
PAGE = HERE.parent / "BENCHMARKS.md"


@dataclass(frozen=True)
class Pick:
    """One number in a results file: ``path`` steps are dict keys, list indices, or a dict of
    ``{field: value}`` that selects the last list entry whose fields all equal those values.
    ``unit``: "s" (seconds), "ms" (milliseconds, shown as seconds), "ns" (shown as nanoseconds),
    "MB", "/s" (a rate);
    ``what``: the clock or quantity (``CPU``, ``wall``, ``peak RSS``, ``reports/CPU-s``)."""

    path: tuple
    what: str = "CPU"
    unit: str = "s"
    label: str = ""     # for an anchor: what ldpopt is compared with


@dataclass(frozen=True)
class Row:
    """A headline row: ``work`` (what is measured), the results ``file`` both picks read, ldpopt's
    number, the anchor's (None: no comparison) and the command that regenerates the file.
    The ratio is anchor / ldpopt (> 1: ldpopt is faster or smaller)."""

    work: str
    file: str
    ldpopt: Pick
    anchor: Pick | None
    command: str


@dataclass(frozen=True)
class Span:
    """A headline row over a grid of settings: every entry of the list at ``rows`` (a path of keys)
    whose fields equal ``where`` is one setting; the ratio ``anchor`` / ``ldpopt`` (two fields of
    the entry, or a tuple of keys into its nested dicts) is shown as min – median – max over them,
    the extremes with their ``setting`` (the entry's fields named there), and the two times as their
    ranges. ``label`` names the anchor."""

    work: str
    file: str
    rows: tuple
    where: dict
    ldpopt: str | tuple
    anchor: str | tuple
    label: str
    setting: tuple
    command: str
    what: str = "CPU"

    def entries(self, doc) -> list[dict]:
        """The settings' entries that have both numbers (finite, ldpopt's > 0)."""
        found = pick(doc, self.rows) if doc is not None else None
        out = []
        for e in found if isinstance(found, list) else []:
            if isinstance(e, dict) and all(e.get(k) == v for k, v in self.where.items()):
                a, b = _field(e, self.anchor), _field(e, self.ldpopt)
                if all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in (a, b)) \
                        and b > 0:
                    out.append(e)
        return out

    def cells(self, results: Path = RESULTS) -> list[str]:
        path = results / self.file
        doc = json.loads(path.read_text()) if path.exists() else None
        es = self.entries(doc)
        if not es:
            return [self.work, "—", "not measured", "—", f"`{self.command}`", "—", "—"]
        es = sorted(es, key=lambda e: _field(e, self.anchor) / _field(e, self.ldpopt))
        r = [_field(e, self.anchor) / _field(e, self.ldpopt) for e in es]
        p = Pick((), self.what)

        def span(key):
            lo, hi = min(_field(e, key) for e in es), max(_field(e, key) for e in es)
            return _fmt(lo, p) if lo == hi else f"{_fmt(lo, Pick((), ''))}–{_fmt(hi, p)}"

        def named(e):
            return ", ".join(f"{k} = {e[k]}" for k in self.setting)

        mid = statistics.median(r)
        ratio = (f"{_times(r[0])} ({named(es[0])}) – median {_times(mid)} – {_times(r[-1])} ({named(es[-1])}), "
                 f"{len(es)} settings")
        return [self.work, f"{self.label}: {span(self.anchor)}", span(self.ldpopt), ratio,
                f"`{self.command}`", machine_of(doc), date_of(doc)]


def _field(entry: dict, key):
    """An entry's field: ``key`` a name, or a tuple of names into nested dicts (None where absent)."""
    for k in (key if isinstance(key, tuple) else (key,)):
        entry = entry.get(k) if isinstance(entry, dict) else None
    return entry


def _times(x: float) -> str:
    """A ratio: whole above 10, one decimal from 1, two below 1 (0.045 is not "0.0×")."""
    return f"{x:,.{0 if x >= 10 else 1 if x >= 1 else 2}f}×"


def _oracle(case, impl, oracle):
    return ("rows", {"case": case, "impl": impl, "oracle": oracle})


ROWS: tuple[Row | Span, ...] = (
    # -- oracles vs the peer libraries (each in its own venv, fresh process per measurement)
    *(Span(f"real path {o.upper()} (each library's own client, then its aggregator and estimate, from the users' "
           f"values), n = 10⁶, d ∈ {ds}", "oracles.json", ("pairs",),
           {"oracle": o, "lib": lib}, field, anchor, f"{lib} {version}", ("d",), "python benchmarks/bench_oracles.py",
           what)
      for o, lib, version, field, anchor, what, ds in (
          ("oue", "multi-freq-ldpy", "0.2.5", "ldpopt_seconds", "peer_seconds", "wall", "{128, 1024, 8192, 42,178}"),
          ("oue", "pure-ldp", "1.2.0", "ldpopt_seconds", "peer_seconds", "wall", "{128, 1024, 8192, 42,178}"),
          ("hr", "pure-ldp", "1.2.0", "ldpopt_cpu_seconds", "peer_cpu_seconds", "CPU", "{128, 1024, 8192}"))),
    Row("fast path OUE (exact=False), n = 10⁹, d = 42,178", "oracles.json",
        Pick(("rows", {"impl": "ldpopt", "path": "fast", "oracle": "oue", "n": 1000000000}, "cpu_seconds")),
        None, "python benchmarks/bench_oracles.py --no-peers"),
    Row("HR fast path (tree draws), n = 10⁹, d = 42,178", "hr_fastpath.json",
        Pick(("rows", {"n": 1000000000}, "hr[tree]", "cpu")),
        Pick(("rows", {"n": 1000000000}, "hr[dd90cb5]", "cpu"), label="previous sampler"),
        "python benchmarks/bench_hr_fastpath.py --previous dd90cb5"),
    Row("aggregate OUE reports from Parquet shards, n ≈ 10⁸, d = 128", "aggregate.json",
        Pick(("rows", {"oracle": "oue", "n": 100663296}, "reports_per_cpu_s"), "reports/CPU-s", "/s"),
        None, "python benchmarks/bench_aggregate.py --sizes 1e7 1e8 --schedulers synchronous"),
    Row("count OUE reports from Parquet inside Polars (`from_dataframe`, streaming `map_batches`), n ≈ 10⁷, "
        "d = 1,000: as the Dask threads, DuckDB and Spark rows of docs/frames.md", "frames.json",
        Pick(("rows", {"oracle": "oue", "d": 1000, "engine": "polars"}, "reports_per_cpu_s"), "reports/CPU-s", "/s"),
        None, "python benchmarks/bench_frames.py"),
    Row("central noise: a Gaussian hierarchy of 131,072 leaves (133,153 nodes) made consistent as a certified "
        "`Problem`, median of 3 interleaved rounds (docs/privacy.md)", "central.json",
        Pick(("hierarchy", "routes", {"route": "ldpopt"}, "median_s"), "wall"),
        Pick(("hierarchy", "routes", {"route": "OSQP"}, "median_s"), "wall", label="best cvxpy route (OSQP)"),
        "python benchmarks/bench_central.py"),
    Row("`ldpopt.plan`: every pure oracle × method, full-domain query, d = 10⁵, n = 10⁶ (docs/plan.md)", "plan.json",
        Pick(("timing", {"d": 100000, "target": None}, "cpu")), None, "python benchmarks/bench_plan.py"),
    Row("aggregate OUE with the threads scheduler, n = 2²¹, d = 128", "schedulers.json",
        Pick(("rows", {"oracle": "oue", "scheduler": "threads"}, "wall_s"), "wall"),
        Pick(("rows", {"oracle": "oue", "scheduler": "local"}, "wall_s"), "wall",
             label="Dask LocalCluster"),
        "python benchmarks/bench_schedulers.py"),
    Row("OLH aggregate (fused kernel, one thread), d = 42,178, ε = 1, per user·value", "kernels.json",
        Pick(("rows", {"oracle": "olh", "epsilon": 1.0}, "kernel_1_threads", "ns_per_cell_cpu"), unit="ns"),
        Pick(("rows", {"oracle": "olh", "epsilon": 1.0}, "numpy", "ns_per_cell_cpu"), unit="ns",
             label="numpy aggregator"),
        "python benchmarks/bench_kernels.py"),
    Row("OLH aggregate (fused kernel, one thread), d = 42,178, ε = 4, per user·value", "kernels.json",
        Pick(("rows", {"oracle": "olh", "epsilon": 4.0}, "kernel_1_threads", "ns_per_cell_cpu"), unit="ns"),
        Pick(("rows", {"oracle": "olh", "epsilon": 4.0}, "numpy", "ns_per_cell_cpu"), unit="ns",
             label="numpy aggregator"),
        "python benchmarks/bench_kernels.py"),
    Row("binomial EM (exact) written on the array namespace, run on numpy, d = 10⁷", "kernels.json",
        Pick(("closed_forms", {"method": "em (OLH, binomial)"}, "xp_numpy_cpu_s")),
        Pick(("closed_forms", {"method": "em (OLH, binomial)"}, "methods_cpu_s"), label="ldpopt.methods em"),
        "python benchmarks/bench_kernels.py"),
    Row("GRR aggregate (fused kernel, one thread), d = 42,178, per report", "kernels.json",
        Pick(("rows", {"oracle": "grr"}, "kernel_1_threads", "ns_per_report_cpu"), unit="ns"),
        Pick(("rows", {"oracle": "grr"}, "numpy", "ns_per_report_cpu"), unit="ns", label="numpy aggregator"),
        "python benchmarks/bench_kernels.py"),
    Row("OLH aggregate on a GPU (numba.cuda, end to end: copies included), d = 42,178, ε = 1, n = 10⁶, "
        "per user·value", "gpu.json",
        Pick(("kernels", {"oracle": "olh", "epsilon": 1.0, "d": 42178, "large": True}, "ns_per_cell", "cuda"),
             what="wall", unit="ns"),
        Pick(("kernels", {"oracle": "olh", "epsilon": 1.0, "d": 42178, "large": True}, "ns_per_cell", "cpu_all"),
             what="wall", unit="ns", label="fused CPU kernel, 16 cores"),
        "python benchmarks/bench_gpu.py"),
    Row("GRR aggregate on a GPU (end to end), n = 10⁷, d = 42,178: bound by the host → device copy, use the CPU",
        "gpu.json", Pick(("kernels", {"oracle": "grr", "reports": 10_000_000}, "cuda_s"), what="wall"),
        Pick(("kernels", {"oracle": "grr", "reports": 10_000_000}, "cpu_16_threads_s"), what="wall",
             label="fused CPU kernel, 16 cores"),
        "python benchmarks/bench_gpu.py"),
    Row("Norm-Sub on CuPy arrays (GPU), d = 10⁷", "gpu.json",
        Pick(("closed", {"method": "norm-sub"}, "cupy_s"), what="wall"),
        Pick(("closed", {"method": "norm-sub"}, "numpy_s"), what="wall", label="the same code on numpy"),
        "python benchmarks/bench_gpu.py"),
    Row("OLH, 10⁸ reports in Parquet shards counted on a GPU (threads scheduler), d = 1,000, ε = 1", "gpu.json",
        Pick(("billion", {"reports": 100000000}, "aggregate", "cuda", "wall_s"), what="wall"),
        Pick(("billion", {"reports": 100000000}, "aggregate", "cpu", "wall_s"), what="wall",
             label="fused CPU kernels, 16 cores"),
        "python benchmarks/bench_gpu.py"),
    *(Span(f"{name} server, n = 100,000, d ∈ {{100, 1000, 5000}} × m ∈ {{256, 512}}, k = 64, ε = 2: "
           f"aggregate + estimate {start}", "sketches.json", ("rows",), {"oracle": oracle},
           field, "peer_s", "pure-ldp 1.2.0 server", ("d", "m"), "python benchmarks/bench_sketches.py")
      for name, oracle in (("Apple's CMS", "cms"), ("Apple's HCMS", "hcms"))
      for start, field in (("from pure-ldp's report lists (what its user holds)", "ldpopt_list_s"),
                           ("on ldpopt's arrays", "ldpopt_arrays_s"))),
    *(Span(f"RAPPOR server (pure-ldp's decoder reproduced), n = 100,000, d ∈ {{100, 1000, 5000}} × (f, T) ∈ "
           f"{{(0.5, 128), (0.25, 256)}}, {regression}: aggregate + estimate {start}", "sketches.json", ("rows",),
           {"oracle": "rappor", "peer_converged": converged}, field, "peer_s", "pure-ldp 1.2.0 server",
           ("d", "f", "num_bits", "lasso"), "python benchmarks/bench_sketches.py")
      for converged, regression in ((True, "settings where the peer's scikit-learn fits converged"),
                                    (False, ("settings where the peer's ElasticNet ran all 10,000 sweeps "
                                             "without converging (ldpopt reproduces those sweeps)")))
      for start, field in (("from pure-ldp's report lists", "ldpopt_list_s"), ("on ldpopt's arrays", "ldpopt_arrays_s"))),
    *(Span("PEM heavy hitters (pure-ldp's `PEMServer` search, same reports), n = 20,000, m ∈ {10, 12, 14} bits (domains "
           f"1,024–16,384 strings) × ε ∈ {{1, 4}}, top-k = 8, start = fragment = 2 bits: aggregate + find {start}",
           "sketches.json", ("rows",), {"oracle": "pem"}, field, "peer_s", "pure-ldp 1.2.0 server",
           ("m_bits", "epsilon"), "python benchmarks/bench_sketches.py")
      for start, field in (("from pure-ldp's `PEMClient` report lists (what its user holds)", "ldpopt_list_s"),
                           ("on ldpopt's arrays", "ldpopt_arrays_s"))),
    # -- the billion-report case end to end (OLH, Parquet shards, the commands in fresh processes)
    Row("OLH end to end, n = 10⁸, d = 1,000, ε = 1: `ldpopt perturb` writes the Parquet shards", "billion.json",
        Pick(("rows", {"part": "big", "stage": "perturb"}, "reports_per_cpu_s"), "reports/CPU-s", "/s"),
        None, "python benchmarks/bench_billion.py"),
    Row("OLH end to end, n = 10⁸, d = 1,000, ε = 1: `ldpopt aggregate --scheduler threads` reads and counts them",
        "billion.json",
        Pick(("rows", {"part": "big", "stage": "aggregate"}, "reports_per_cpu_s"), "reports/CPU-s", "/s"),
        None, "python benchmarks/bench_billion.py"),
    Span("OLH aggregation per report, d ∈ {1,000, 10,000, 40,000} × ε ∈ {1, 4}: ldpopt's reader of pure-ldp's "
         "own (hash, seed) reports (`read_lh`)", "billion.json", ("peers",), {"status": "ok"}, "read_lh_cpu_s",
         "peer_cpu_s", "pure-ldp 1.2.0 `LHServer.aggregate` loop, same reports", ("d", "epsilon"),
         "python benchmarks/bench_billion.py"),
    Span("OLH aggregation per report, d ∈ {1,000, 10,000, 40,000} × ε ∈ {1, 4}: `ldpopt aggregate` (whole command) "
         "from ldpopt's Parquet shards", "billion.json", ("pure_ldp",), {}, "ldpopt_cpu_s_per_report",
         "pure_ldp_cpu_s_per_report", "pure-ldp 1.2.0 `LHServer.aggregate` loop", ("d", "epsilon"),
         "python benchmarks/bench_billion.py"),
    # -- the whole call on families drawn from cvxpy's grammar, against the best valid plain cvxpy call
    *(Span(f"`Problem(...).solve()` on {n} random families from cvxpy's grammar (objectives, atoms up to three "
           f"deep, constraints of every cone), d = {d:,}: the families with a valid plain call", f"{name}.json",
           ("rows",), {}, ("contenders", "ldpopt", "cpu_s"), ("best_plain", "cpu_s"),
           "best valid plain cvxpy call", ("seed",),
           f"python benchmarks/bench_random_families.py --n {n} --d {d} --rounds {r} --seed {seed}")
      for d, n, name, r, seed in ((100, 100, "random_families_d100", 2, 1000),
                                  (1000, 100, "random_families_d1000", 1, 4000),
                                  (10_000, 100, "random_families_d10000", 1, 5000),
                                  (100_000, 20, "random_families_d100000", 1, 6000))),
    # -- cvxpy's compilation for Clarabel with ldpopt's conic data (the same arrays, bit for bit)
    *(Span(f"cvxpy's compilation for Clarabel (`get_problem_data`) of grammar families, d = {d:,}: ldpopt's "
           "`CompiledProblem` (Clarabel's data written without the restructuring product)", "conic_format.json",
           ("sizes", str(d), "rows"), {"identical": True}, "compile_ldpopt", "compile_cvxpy",
           "cvxpy.Problem, the same objective and constraints", ("seed",),
           "python benchmarks/bench_conic_format.py")
      for d in (100, 1000, 10_000)),
    # -- closed forms and solvers
    Row("Norm-Sub (closed form of CLS on the simplex), d = 42,178", "solvers.json",
        Pick(("rows", {"d": 42178, "objective": "cls", "solver": "CLARABEL"}, "closed_cpu")),
        Pick(("rows", {"d": 42178, "objective": "cls", "solver": "CLARABEL"}, "solver_cpu"),
             label="cvxpy + Clarabel"),
        "python benchmarks/bench_solvers.py"),
    Row("MLE-Apx (closed form of weighted MLE), d = 10⁶", "solvers.json",
        Pick(("rows", {"d": 1000000, "objective": "weighted-mle", "solver": "CLARABEL"}, "closed_cpu")),
        Pick(("rows", {"d": 1000000, "objective": "weighted-mle", "solver": "CLARABEL"}, "solver_cpu"),
             label="cvxpy + Clarabel"),
        "python benchmarks/bench_solvers.py"),
    Row("`Problem(cls).solve()` on the simplex, d = 42,178 (structured solver)", "user_call.json",
        Pick(("rows", {"objective": "cls"}, "problem_solve_cpu_s")),
        Pick(("rows", {"objective": "cls"}, "reference_cpu_s"), label="cvxpy + PIQP"),
        "python benchmarks/bench_user_call.py"),
    Row("`Problem(cls)` with a subset-sum constraint, d = 42,178", "user_call_subset.json",
        Pick(("rows", {"objective": "cls"}, "problem_solve_cpu_s")),
        Pick(("rows", {"objective": "cls"}, "reference_cpu_s"), label="cvxpy + PIQP"),
        "python benchmarks/bench_user_call.py --subset"),
    Row("`Problem(binomial).solve()` (exact likelihood), d = 42,178", "user_call.json",
        Pick(("rows", {"objective": "binomial"}, "problem_solve_cpu_s")),
        Pick(("rows", {"objective": "binomial"}, "reference_cpu_s"), label="sequential QP (cvxpy + PIQP)"),
        "python benchmarks/bench_user_call.py"),
    Row("`Problem(cls)` + 10 subset sums, d = 10⁶", "user_call_d1000000_rows10.json",
        Pick(("rows", {"objective": "cls"}, "problem_solve_cpu_s")), None,
        "python benchmarks/bench_user_call.py --d 1000000 --rows 10 --no-piqp"),
    Row("exact feasibility decision: full Monotone chain + $\\sum f = 1$ + SubsetSum(first half) ≤ 1/2 − 1e-16 "
        "(empty), d = 10⁵", "exact_feasibility.json",
        Pick(("large", {"d": 100000, "constraints": "chain + SubsetSum(first half) <= 1/2 - 1e-16"}, "cpu_s")),
        None, "python benchmarks/bench_exact_feasibility.py"),
    Row("exact feasibility decision: 201 dense LinearEquality rows conflicting by 1e-13, d = 42,178",
        "exact_feasibility.json",
        Pick(("large", {"d": 42178, "constraints": "dense LinearEquality 201 rows, conflict 1e-13"}, "cpu_s")),
        None, "python benchmarks/bench_exact_feasibility.py"),
    Row("exact feasibility decision: 20 dense float LinearEquality rows with $\\sum f = 1$, met inside the simplex "
        "(proved feasible without an LP), d = 42,178", "exact_feasibility.json",
        Pick(("large", {"d": 42178, "constraints": "dense float LinearEquality 20 rows, interior solution"}, "cpu_s")),
        None, "python benchmarks/bench_exact_feasibility.py"),
    Row("structured solver, weighted MLE on the simplex, d = 42,178", "structured.json",
        Pick(("rows", {"case": "weighted-mle simplex", "d": 42178}, "ldpopt_cpu_s")),
        Pick(("rows", {"case": "weighted-mle simplex", "d": 42178}, "CLARABEL", "cpu_s"),
             label="cvxpy + Clarabel"),
        "python benchmarks/bench_structured.py"),
    Row("exact multinomial likelihood by sequential QP, d = 10⁴", "likelihood.json",
        Pick(("rows", {"objective": "multinomial", "d": 10000, "cset": "simplex", "route": "SQP"}, "cpu")),
        Pick(("rows", {"objective": "multinomial", "d": 10000, "cset": "simplex", "route": "SCS"}, "cpu"),
             label="cvxpy exponential cones + SCS"),
        "python benchmarks/bench_likelihood.py"),
    Row("your own variant: CLS + KL, Retail d = 16,470", "own_variant_kl_side_by_side.json",
        Pick(("runs", {"tree": "after"}, "cpu_s")),
        Pick(("runs", {"tree": "15db1ce"}, "cpu_s"), label="previous route (cvxpy + SCS, inaccurate)"),
        "python benchmarks/bench_own_variant.py"),
    # -- methods and their ingredients
    Row("Norm-Sub, d = 10⁷, n = 10⁸", "methods.json",
        Pick(("sizes", {"d": 10000000}, "rows", {"method": "norm-sub"}, "cpu_seconds")), None,
        "python benchmarks/bench_methods.py"),
    Row("Power (s fitted), d = 42,178", "methods.json",
        Pick(("sizes", {"d": 42178}, "rows", {"method": "power"}, "cpu_seconds")), None,
        "python benchmarks/bench_methods.py"),
    Row("Power with long posterior windows (GRR, d = 42,178, n = 10⁶, ε = 1; memos emptied before every call)",
        "bayes_grr_d42178.json",
        Pick(("rows", {"oracle": "grr", "d": 42178}, "power_new_cpu")),
        Pick(("rows", {"oracle": "grr", "d": 42178}, "power_old_cpu"), label="plain windowed sums"),
        "python benchmarks/bench_bayes.py --case grr,42178,1000000,1"),
    Row("Power's exponent fit (OUE, d = 42,178)", "power_fit.json",
        Pick(("results", {"oracle": "oue", "d": 42178}, "fit_power_law|new", "cpu_best")),
        Pick(("results", {"oracle": "oue", "d": 42178}, "fit_power_law|previous", "cpu_best"),
             label="previous fit"),
        "python benchmarks/bench_power_fit.py --previous 2ca8968"),
    Row("simplex projection (Norm-Sub), d = 10⁷", "projection.json",
        Pick(("results", {"d": 10000000}, "rows", {"contender": "norm-sub"}, "best_ms"), "wall", "ms"),
        Pick(("results", {"d": 10000000}, "rows", {"contender": "bare sort projection"}, "best_ms"),
             "wall", "ms", label="sort-based projection"),
        "python benchmarks/bench_projection.py"),
    Row("`postprocess --ci 0.95 --method all` (every method, 200 resamples), d = 42,178",
        "ci_all_d42178.json", Pick(("total_cpu_s",)), None, "python benchmarks/bench_ci_all.py --d 42178"),
    Row("bootstrap CI of Norm-Sub (B = 200), OUE d = 42,178", "uncertainty.json",
        Pick(("rows", {"oracle": "oue", "d": 42178}, "ci_cpu")), None,
        "python benchmarks/bench_uncertainty.py"),
    Row("`make sweep`: every experiment config at 30 repetitions, then every figure", "sweep.json",
        Pick(("total_seconds",), "wall"), None, "make sweep"),
    # -- checks, memory, start-up
    Row("status property: ldpopt's check vs a reference solve, d = 10⁶", "check_property_d1000000.json",
        Pick(("cpu_seconds_ldpopt",)), Pick(("cpu_seconds_reference",), label="exact reference (bisection)"),
        "python benchmarks/bench_check_property.py --d 1000000 --objectives cls weighted-mle --families simplex subset=="),
    Row("SS exact fast path, peak memory, n = 10⁹, d = 42,178", "ss_memory.json",
        Pick(("rows", {"n": 1000000000}, "new", "maxrss_mb"), "peak RSS", "MB"),
        Pick(("rows", {"n": 1000000000}, "old", "maxrss_mb"), "peak RSS", "MB", label="previous sampler"),
        "python benchmarks/bench_ss_memory.py --mem-limit-mb 7000"),
    Row("`ldpopt --version` (fresh process)", "startup.json",
        Pick(("rows", {"case": "ldpopt --version"}, "cpu_best_s")),
        Pick(("rows", {"case": "ldpopt --version"}, "target_s"), "", label="target"),
        "python benchmarks/bench_startup.py --reps 5"),
    Row("`import ldpopt` (fresh process)", "startup.json",
        Pick(("rows", {"case": "import ldpopt"}, "cpu_best_s")),
        Pick(("rows", {"case": "import ldpopt"}, "target_s"), "", label="target"),
        "python benchmarks/bench_startup.py --reps 5"),
)


def pick(doc, path: tuple):
    """Follow ``path`` into ``doc`` (see :class:`Pick`); None when a step finds nothing."""
    for step in path:
        if isinstance(step, dict):
            if not isinstance(doc, list):
                return None
            hits = [e for e in doc if isinstance(e, dict) and all(e.get(k) == v for k, v in step.items())]
            doc = hits[-1] if hits else None
        elif isinstance(step, int):
            doc = doc[step] if isinstance(doc, list) and -len(doc) <= step < len(doc) else None
        else:
            doc = doc.get(step) if isinstance(doc, dict) else None
        if doc is None:
            return None
    return doc


def _number(doc, p: Pick) -> float | None:
    v = pick(doc, p.path)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return v * 1e-3 if p.unit == "ms" else float(v)


def _fmt(v: float, p: Pick) -> str:
    if p.unit == "ns":
        text = f"{v:.3g} ns"
    elif p.unit == "MB":
        text = f"{v:.0f} MB" if v < 1024 else f"{v / 1024:.2f} GB"
    elif p.unit == "/s":
        text = f"{v:.3g}".replace("e+0", "e").replace("e+", "e")
    elif v < 1e-3:
        text = f"{v * 1e6:.0f} µs"
    elif v < 1:
        text = f"{v * 1e3:.3g} ms"
    else:
        text = f"{v:.3g} s" if v < 1000 else f"{v:.0f} s"
    return f"{text} {p.what}".rstrip()


def machine_of(doc) -> str:
    """The machine a results file names (``machine`` or ``environment``: a dict or a line)."""
    m = doc.get("machine") or doc.get("environment") if isinstance(doc, dict) else None
    if isinstance(m, dict):
        cpu, cores = m.get("cpu") or "CPU not recorded", m.get("cores") or m.get("cpus")
        return f"{cpu}, {cores} cores" if cores else cpu
    return m if isinstance(m, str) and m else "not recorded"


def date_of(doc) -> str:
    """The date (YYYY-MM-DD) of a results file: ``date`` at the top, else inside machine/environment."""
    if not isinstance(doc, dict):
        return "not recorded"
    for d in (doc, doc.get("machine"), doc.get("environment")):
        if isinstance(d, dict) and isinstance(d.get("date"), str):
            return d["date"][:10]
    return "not recorded"


def cells(row: Row, results: Path = RESULTS) -> list[str]:
    """The seven cells of one row: work, anchor, ldpopt, ratio, command, machine, date."""
    path = results / row.file
    doc = json.loads(path.read_text()) if path.exists() else None
    mine = _number(doc, row.ldpopt) if doc is not None else None
    if mine is None:
        return [row.work, "—", "not measured", "—", f"`{row.command}`", "—", "—"]
    theirs = _number(doc, row.anchor) if row.anchor else None
    anchor = ("—" if row.anchor is None else
              f"{row.anchor.label}: " + ("not measured" if theirs is None else _fmt(theirs, row.anchor)))
    ratio = _times(theirs / mine) if theirs and mine > 0 else "—"
    return [row.work, anchor, _fmt(mine, row.ldpopt), ratio, f"`{row.command}`", machine_of(doc),
            date_of(doc)]


def table(rows=ROWS, results: Path = RESULTS) -> str:
    head = ["work", "anchor", "ldpopt", "ratio", "command", "machine", "date"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r.cells(results) if isinstance(r, Span) else cells(r, results)) + " |"
              for r in rows]
    return "\n".join(lines) + "\n"


def _int(v) -> str:
    return "—" if v is None else f"{v:,}"


def _exp(g) -> str:
    return "—" if not g else f"{g['exponent']:.2f} ± {g['se']:.2f} ({g['decades']:.0f} dec.)"


def _rerun_command(r: dict) -> str:
    """A re-run's command line as it can be typed again: its ``--classes`` value quoted, its ``--note``
    left out (printed beside it)."""
    import shlex

    names = ",".join(r["classes"])
    return r["command"].split(" --note ")[0].replace(f"--classes {names}", f"--classes {shlex.quote(names)}")


def route_grid(results: Path = RESULTS) -> str:
    """The route grid section (``results/route_grid.json``, ``benchmarks/bench_route_grid.py``): per
    class the ratio best cvxpy CPU / ldpopt CPU (min, median, max over d × seeds), where cvxpy ran to,
    whether every ldpopt answer was certified optimal; then the growth exponents per route."""
    path = results / "route_grid.json"
    head = "\n## Route grid: `Problem.solve()` against the best cvxpy route\n\n"
    if not path.exists():
        return head + "not measured (`python benchmarks/bench_route_grid.py`)\n"
    doc = json.loads(path.read_text())
    full = doc.get("full_run") or doc
    command = full.get("command") or "python benchmarks/bench_route_grid.py"
    again = "".join(f" Measured again afterwards: {', '.join(r['classes'])} (`{_rerun_command(r)}`, {r['date'][:10]})"
                    + (f": {r['note']}" if r.get("note") else "") + "; their points replace the first run's."
                    for r in doc.get("reruns", []))
    out = [head + (f"`{command}` ({machine_of(doc)}, {str(full.get('date') or '')[:10]}, "
                   f"{(full.get('elapsed_s') or 0) / 60:.0f} min).{again} ratio = best of cvxpy + Clarabel / + PIQP, CPU "
                   "of the whole call, ÷ ldpopt's; both answers through ldpopt's check (method in the "
                   "script's docstring). A ratio between 0.8 and 1.25 is a tie within this machine's noise. "
                   "cvxpy failed: grid points where cvxpy ran and no answer of it passed ldpopt's check "
                   "(no ratio there).\n"),
           "| class | d | ldpopt route | ldpopt certified | cvxpy up to d | cvxpy failed | ratio min | median | max | points |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for c in doc["classes"]:
        ds = sorted({p["d"] for p in c["points"]})
        routes = sorted({p["ldpopt"]["solver"] for p in c["points"]})
        r = c.get("ratio")
        nums = [f"{r[k]:,.2f}" for k in ("min", "median", "max")] if r else ["—"] * 3
        out.append(f"| {c['class']} | {ds[0]:,}–{ds[-1]:,} | {', '.join(routes)} | "
                   f"{'all' if c['ldpopt_all_optimal'] else 'not all'} | {_int(c['cvxpy_max_d'])} | "
                   f"{sum(1 for p in c['points'] if p['cvxpy'] and 'ratio' not in p)} | "
                   + " | ".join(nums) + f" | {r['n'] if r else 0} |")
    out += ["", ("Growth: least-squares exponent of CPU time against d, ± its standard error, over all the d "
                 "the route ran (fixed costs flatten it at small d) and over its top two decades (the "
                 "asymptotic growth); and against the constraint rows where they span a decade."), "",
            "| class | side | route | exponent vs d (all) | vs d (top two decades) | vs rows |", "|---|---|---|---|---|---|"]
    for c in doc["classes"]:
        for g in c["growth"]:
            if g.get("vs_d") or g.get("vs_rows"):
                out.append(f"| {c['class']} | {g['side']} | {g['route']} | {_exp(g.get('vs_d'))} | "
                           f"{_exp(g.get('vs_d_top'))} | {_exp(g.get('vs_rows'))} |")
    by = {c["class"]: c for c in doc["classes"]}
    base = by.get("weighted-mle / simplex")
    users = [by[k] for k in ("recognised / simplex", "declared / simplex") if k in by]
    if base and users:
        def med(c, d):
            v = [p["ldpopt"]["s"] for p in c["points"] if p["d"] == d]
            return float(sorted(v)[len(v) // 2]) if v else None
        out += ["", ("User separable objectives (CLS + 1e-4·KL to uniform) against the built-in weighted MLE, "
                     "both on the simplex through `Problem.solve()`: median CPU over the seeds, and the user's ÷ "
                     "the built-in's."), "", "| d | weighted MLE | " + " | ".join(c["class"] for c in users) + " |",
                "|---|---|" + "---|" * len(users)]
        for d in sorted({p["d"] for p in base["points"]}):
            b = med(base, d)
            cols = [(med(c, d), b) for c in users]
            out.append(f"| {d:,} | {b * 1e3:.2f} ms | " + " | ".join(
                "—" if u is None else f"{u * 1e3:.2f} ms ({u / b:.1f}×)" for u, b in cols) + " |")
    return "\n".join(out) + "\n"


def offgrid(results: Path = RESULTS) -> str:
    """The off-grid section (``results/offgrid.json``, ``benchmarks/bench_offgrid.py``): per class and
    d, the ratio best valid plain cvxpy CPU / ldpopt's whole-call CPU, ldpopt's status and route, and
    the plain call that was fastest (none valid: ldpopt's time and why)."""
    path = results / "offgrid.json"
    head = "\n## Off the route grid: the whole call against the best valid plain cvxpy call\n\n"
    if not path.exists():
        return head + "not measured (`python benchmarks/bench_offgrid.py`)\n"
    doc = json.loads(path.read_text())
    runs = doc.get("merged_from") or [{"command": doc.get("command"), "date": doc.get("date")}]
    cmds = "; ".join(f"`{r['command']}` ({str(r.get('date') or '')[:10]})" for r in runs)
    out = [head + (f"{cmds} ({machine_of(doc)}). ratio = the fastest plain cvxpy call (Clarabel, PIQP, OSQP, SCS, "
                   "each at defaults and tuned) whose answer is `optimal`, feasible to 1e-6 and within 1e-6 of "
                   "the tight reference, CPU ÷ ldpopt's `Problem(...).solve()`, CPU of the process and its "
                   "children, interleaved, minimum over the rounds (method in the script's docstring). "
                   + (doc.get("note", "").capitalize() + "." if doc.get("note") else "") + "\n"),
           "| class | d | ldpopt CPU s | ldpopt status (route) | best valid plain | plain CPU s | ratio |",
           "|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        ld, bp = r["contenders"].get("ldpopt", {}), r.get("best_plain") or {}
        ratio = r.get("ratio")
        out.append(f"| {r['class']} | {r['d']:,} | {ld.get('cpu_s', float('nan')):.3f} | {ld.get('status')} "
                   f"({ld.get('solver')}) | {bp.get('name', 'none valid')} | "
                   + (f"{bp['cpu_s']:.3f}" if 'cpu_s' in bp else "—") + " | "
                   + (f"{ratio:.2f}" if isinstance(ratio, (int, float)) and math.isfinite(ratio) else "—") + " |")
    return "\n".join(out) + "\n"


def page(results: Path = RESULTS) -> str:
    """The whole of ``BENCHMARKS.md``: the headline table, the route grid, the off-grid classes, then
    the method section."""
    return HEADER + table(results=results) + route_grid(results) + offgrid(results) + METHOD


HEADER = """\
# Benchmarks

<!-- Generated by `python benchmarks/run.py --table` from benchmarks/results/; do not edit by hand:
change the row specifications in benchmarks/headline.py or re-run a benchmark. -->

How fast ldpopt is against the peer LDP libraries, the cvxpy solvers and its own previous
versions. Every number below is read from a results file under `benchmarks/results/` (the file
also records the machine, the date, the command and the rows not shown here); the history of
each measurement is in those files and in git. Re-run them, don't trust them: the box they came
from is shared (see *Method*). **ratio** = anchor / ldpopt (above 1: ldpopt is faster or smaller).

"""

METHOD = """
## Method

* **Run them.** `make bench` (every section, ~1.5 h with the peers) or `python benchmarks/run.py
  --only SECTION`; each `benchmarks/bench_NAME.py` also runs alone (`python
  benchmarks/bench_NAME.py [--quick]`) and writes `benchmarks/results/NAME.json`. `make
  bench-quick` runs every section at tiny sizes (under a minute): the smoke check.
  `python benchmarks/run.py --table` rewrites this page from the results files.
* **Anchor** is what ldpopt is compared with on the same machine, in the same run: a peer
  library (pure-ldp 1.2.0, multi-freq-ldpy 0.2.5, pinned in `benchmarks/peer-requirements.lock`,
  installed by `bash benchmarks/setup_peers.sh` in their own venv `benchmarks/.peer-venv` and
  driven the way their READMEs show), a cvxpy solver on the same problem, the previous revision
  of the same code (`--previous REV`), or a stated target.
* **Timing.** CPU time of the measured call (`time.process_time`) unless the cell says *wall*
  (`time.perf_counter`); best or median of repeats inside one process, as each results file
  says. ldpopt and its anchor are measured **side by side in one run**, each in a fresh process
  where memory matters (peak RSS is that process's `ru_maxrss`, interpreter and imports included).
  Peer runs that loop over users in Python are measured at a smaller n and scaled linearly; such
  rows say so in their results file (`note`).
* **The machine is shared** (2 cores, 24 GB, other people's test suites running): wall times are
  inflated for everyone, ratios measured side by side hold better than absolute times, and CPU
  ratios are the less load-sensitive comparison. The load average is recorded in the results.
* **Data.** Zipf(s = 1.5) over d values, one multinomial draw with a fixed seed
  (`benchmarks/_harness.py: zipf_counts`), ε = 1 unless a row says otherwise; the real datasets
  (Retail, AOL) where a row names them.
* **Ranges, not one setting.** A peer row spans a grid of settings (at least three domain sizes and
  the peer's defaults): its ratio is min – median – max with the setting of each extreme. The
  sketch and OLH rows start from the input the peer's user holds (pure-ldp's per-report lists, or
  its (hash, seed) reports) beside ldpopt's own arrays or Parquet shards; the oracle rows start from
  the users' values on both sides (each library's own client). Where a peer iterates (RAPPOR's
  scikit-learn ElasticNet / LASSO) the results file records the iterations run and whether each fit
  converged, and settings where it did not are a row of their own, never the headline.
* **Versions an equality rests on.** RAPPOR's estimates equal pure-ldp's server to ≤ 4e-16
  relative with scikit-learn 1.9.1 (recorded in `sketches.json` under `versions`, in both venvs);
  the server's coordinate descent is what ldpopt reproduces, and another scikit-learn release may
  stop it elsewhere (a review measured pure-ldp's own server moving by 1.4e-6 relative under 1.3.0;
  not re-run here).
* **Per-row detail** is in the results file a row names (every case, every repeat, the load
  average); the experiment sweep's time per config is in `benchmarks/results/sweep.json`.
* **Guards.** A measurement is killed past 12 GB of its own RSS (or when the machine's available
  memory falls under 1 GB while it holds over 1 GB) and reported as such, never as a time.
"""


# -- re-running the rows: `python benchmarks/run.py --verify` ----------------------------------------------
#: the filter fields that name a size: a row re-run at quick sizes is found by its other fields
SIZE_FIELDS = frozenset({"d", "n", "reports", "m_bits", "num_bits"})
#: a row's stated range, where it states none of its own: the page's ratio within this factor either
#: way (the regime changes at quick sizes; a ratio that moves further, or to the other side of 1, is
#: what a row that no longer re-runs by its command looks like: 41× read 2.2× without a child's CPU)
RANGE_FACTOR = 4.0


def _relaxed(path: tuple) -> tuple:
    return tuple({k: v for k, v in step.items() if k not in SIZE_FIELDS} if isinstance(step, dict) else step
                 for step in path)


def ratio_of(row, doc, quick: bool = False) -> float | None:
    """anchor / ldpopt of ``row`` in the results ``doc`` (a Span: the median over its settings);
    ``quick``: the picks' size fields dropped (a quick run measures smaller sizes of the same case)."""
    if doc is None:
        return None
    if isinstance(row, Span):
        span = Span(**{**row.__dict__, "where": {k: v for k, v in row.where.items() if k not in SIZE_FIELDS}}) \
            if quick else row
        es = span.entries(doc)
        return statistics.median(e[row.anchor] / e[row.ldpopt] for e in es) if es else None
    if row.anchor is None:
        return None
    mine_p, theirs_p = (Pick(_relaxed(p.path), p.what, p.unit, p.label) if quick else p
                        for p in (row.ldpopt, row.anchor))
    mine, theirs = _number(doc, mine_p), _number(doc, theirs_p)
    return theirs / mine if mine and theirs else None


def stated_range(row, results: Path = RESULTS) -> tuple[float, float] | None:
    """The ratio range a row states: the page's ratio (from the committed results) within
    :data:`RANGE_FACTOR` either way; None for a row without a comparison or without results."""
    path = results / row.file
    r = ratio_of(row, json.loads(path.read_text()) if path.exists() else None)
    return None if r is None else (r / RANGE_FACTOR, r * RANGE_FACTOR)
