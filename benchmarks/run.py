"""ldpopt benchmarks, one entry point.

    python benchmarks/run.py [--quick] [--only SECTION|BENCH,...] [--out DIR]
    python benchmarks/run.py --table          # rewrite BENCHMARKS.md from benchmarks/results/
    python benchmarks/run.py --list           # the sections and their benches
    python benchmarks/run.py --verify         # re-run every BENCHMARKS.md row's command (quick sizes), flag
                                              # a ratio outside the row's stated range

Every bench is ``benchmarks/bench_NAME.py`` with ``run(quick: bool = False, **options) -> dict``
(it writes ``results/NAME.json``: see ``_harness``; ``--out`` needs the ``out`` option); each also runs alone with its own flags
(``python benchmarks/bench_NAME.py --help``). ``SECTIONS`` groups them; a new bench is a file and
one name added to its section. ``--quick`` runs every bench at tiny sizes, ldpopt only (under a
minute: the smoke check) and writes to ``results/quick`` unless ``--out`` is given. The full run
needs ``bash benchmarks/setup_peers.sh`` first (the peer libraries live in their own venv).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: section -> its benches (``bench_<name>.py``), in the order they run. collect: perturbation and
#: aggregation (oracles vs the peers, fast paths, shards, schedulers); estimate: the post-processing
#: methods; solve: the constrained problems (closed forms vs solvers, the structured solver, checks);
#: variants: the user's own objectives; cli: start-up and the command-line fuzz; robust: poisoning recovery against the anchor's code.
#: discovery: heavy-hitter discovery over strings against the peer. privacy: the shuffle model's accountants
#: against the authors' numbers, composition over rounds, the client auditor, the numbers at the extremes.
SECTIONS: dict[str, tuple[str, ...]] = {
    "collect": ("oracles", "rws_conformance", "rws_pool", "hr_fastpath", "ss_fastpath", "ss_memory", "hash_pool", "aggregate", "identity",
                "schedulers", "frames",
                "kernels", "kernels_dask", "gpu", "sketches", "billion", "design", "design_scale", "mss"),
    "estimate": ("methods", "bayes", "power_fit", "projection", "uncertainty", "uncertainty_heldout", "uncertainty_grid", "choose_candidates",
                 "ci_all", "ldpcube_power", "choose_drift", "choose_patterns", "central", "plan", "plan_target",
                 "hierarchy_gls", "cell_coverage"),
    "solve": ("solvers", "policy", "likelihood", "feasibility", "exact_feasibility", "structured", "structured_blocks",
              "structured_tree", "user_call", "table", "grouped", "check_property", "bound_property", "routes", "multi",
              "keyvalue", "route_grid", "rsrfd", "referee_property", "time_limit", "offgrid", "random_families",
              "clarabel_stop", "never_stuck", "worker", "worker_calls", "kinked_units", "referee_search", "call_stages",
              "conic_format"),
    "variants": ("own_variant", "kl_user_call", "ordered"),
    "cli": ("startup", "cli_fuzz"),
    "robust": ("poisoning_anchor", "poisoning_recovery", "poisoning_detection", "poisoning_adaptive", "poisoning_kernels",
               "poisoning_experiment", "poisoning_anchor_pipeline", "poisoning_stress",
               "poisoning_detection_r", "robust_defaults", "attacker", "evidence_alarms", "range_attacks"),
    "discovery": ("heavy",),
    "privacy": ("shuffle", "audit", "regimes"),
}


def module(name: str):
    return importlib.import_module(f"bench_{name}")


def chosen(only: str) -> list[str]:
    """The benches named by ``--only`` (section or bench names, comma-separated); all if empty."""
    names = []
    for word in [w for w in only.split(",") if w] or list(SECTIONS):
        if word in SECTIONS:
            names += SECTIONS[word]
        elif any(word in b for b in SECTIONS.values()):
            names.append(word)
        else:
            raise SystemExit(f"--only: unknown section or bench {word!r}; sections {list(SECTIONS)}, "
                             f"benches {[b for bs in SECTIONS.values() for b in bs]}")
    return list(dict.fromkeys(names))


def verify(only: str = "", quick: bool = True, timeout: float = 300.0, out: str | None = None) -> int:
    """Re-run each headline row's command (each distinct command once, into a temporary folder; with
    ``--quick`` unless ``quick`` is False), read the row's ratio from what it wrote by the row's own
    picks (at quick sizes, with their size fields dropped: :func:`headline.ratio_of`), and print one
    line per row: the row, its stated range (:func:`headline.stated_range`), the ratio measured, and a
    flag: ``ok``, ``OUTSIDE`` (the exit status is 1 if any), ``not measured`` (the quick run has no
    such entry: peers are not run at quick sizes) or ``FAILED`` (the command failed or timed out).
    ``out``: also write the lines as JSON there (``verify.json``)."""
    import json
    import os
    import shlex
    import subprocess
    import tempfile

    import headline

    words = [w for w in only.split(",") if w]
    rows = [r for r in headline.ROWS if r.anchor is not None
            and (not words or any(w in r.work or w in r.command for w in words))]
    runs: dict[str, tuple[Path, str]] = {}
    lines, outside = [], 0
    with tempfile.TemporaryDirectory(prefix="ldpopt-verify-") as tmp:
        for row in rows:
            if row.command not in runs:
                folder = Path(tmp) / f"run{len(runs)}"
                argv = shlex.split(row.command) + (["--quick"] if quick else []) + ["--out", str(folder)]
                argv[0] = sys.executable
                t0 = time.perf_counter()
                env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                    p for p in (str(HERE.parent), os.environ.get("PYTHONPATH")) if p)}
                try:
                    proc = subprocess.run(argv, cwd=HERE.parent, env=env, capture_output=True, text=True, check=False,
                                          timeout=timeout)
                    if quick and "unrecognized arguments: --out" in proc.stderr:  # a script with its own flags:
                        folder = HERE / "results" / "quick"  # its quick run writes there
                        proc = subprocess.run(argv[:-2], cwd=HERE.parent, env=env, capture_output=True, text=True,
                                              check=False, timeout=timeout)
                    status = "ok" if proc.returncode == 0 else \
                        f"exit {proc.returncode}: {(proc.stderr.strip().splitlines() or [''])[-1][:160]}"
                except subprocess.TimeoutExpired:
                    status = f"timed out after {timeout:.0f} s"
                runs[row.command] = (folder, status)
                print(f"# {row.command}{' --quick' if quick else ''}: {status} ({time.perf_counter() - t0:.0f} s)",
                      flush=True)
            folder, status = runs[row.command]
            stated = headline.stated_range(row)
            path = folder / row.file
            doc = json.loads(path.read_text()) if path.exists() else None
            got = headline.ratio_of(row, doc, quick=quick) if status == "ok" else None
            if status != "ok":
                flag = f"FAILED ({status})"
            elif got is None:
                flag = "not measured" + (" at quick sizes" if quick else "")
            elif stated is None or stated[0] <= got <= stated[1]:
                flag = "ok"
            else:
                flag, outside = "OUTSIDE", outside + 1
            rng = "—" if stated is None else f"{stated[0]:.3g}–{stated[1]:.3g}×"
            meas = "—" if got is None else f"{got:.3g}×"
            lines.append({"row": row.work, "command": row.command, "stated_range": stated, "measured": got,
                          "flag": flag})
            print(f"{row.work[:90]:90s} | {rng:>16s} | {meas:>9s} | {flag}", flush=True)
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "verify.json").write_text(json.dumps({"quick": quick, "rows": lines}, indent=1) + "\n")
    print(f"{len(lines)} rows: {sum(x['flag'] == 'ok' for x in lines)} ok, {outside} outside their range, "
          f"{sum(x['flag'].startswith('not') for x in lines)} not measured, "
          f"{sum(x['flag'].startswith('FAILED') for x in lines)} failed")
    return 1 if outside else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, no peers, < 1 min (the smoke check)")
    ap.add_argument("--only", default="", help="comma-separated sections or benches (default: all)")
    ap.add_argument("--out", default=None, help="results directory (default benchmarks/results[/quick])")
    ap.add_argument("--table", action="store_true", help="rewrite BENCHMARKS.md from the results files")
    ap.add_argument("--list", action="store_true", help="print the sections and their benches")
    ap.add_argument("--verify", action="store_true",
                    help="re-run every BENCHMARKS.md row's command (with --quick unless --full) into a temporary "
                         "folder and flag a ratio outside the row's stated range; --only: rows whose work or "
                         "command contains one of the comma-separated words")
    ap.add_argument("--full", action="store_true", help="with --verify: the commands as written, at full size")
    ap.add_argument("--timeout", type=float, default=300.0, help="with --verify: seconds a command may take")
    a = ap.parse_args(argv)
    if a.verify:
        return verify(a.only, quick=not a.full, timeout=a.timeout, out=a.out)
    if a.table:
        import headline

        headline.PAGE.write_text(headline.page())
        print(f"wrote {headline.PAGE}")
        return 0
    if a.list:
        for s, benches in SECTIONS.items():
            print(f"{s}: {', '.join(benches)}")
        return 0
    where = {"out": a.out} if a.out else {}  # a bench may take only ``quick`` (the minimal contract)
    for name in chosen(a.only):
        t0 = time.perf_counter()
        print(f"== {name} ==", flush=True)
        module(name).run(quick=a.quick, **where)
        print(f"== {name}: done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
