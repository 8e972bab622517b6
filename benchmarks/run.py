"""ldpopt benchmarks, one entry point.

    python benchmarks/run.py [--quick] [--only SECTION|BENCH,...] [--out DIR]
    python benchmarks/run.py --table          # rewrite BENCHMARKS.md from benchmarks/results/
    python benchmarks/run.py --list           # the sections and their benches

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
#: discovery: heavy-hitter discovery over strings against the peer.
SECTIONS: dict[str, tuple[str, ...]] = {
    "collect": ("oracles", "rws_conformance", "rws_pool", "hr_fastpath", "ss_fastpath", "ss_memory", "hash_pool", "aggregate", "identity",
                "schedulers",
                "kernels", "kernels_dask", "gpu", "sketches", "billion"),
    "estimate": ("methods", "bayes", "power_fit", "projection", "uncertainty", "uncertainty_heldout", "uncertainty_grid", "choose_candidates",
                 "ci_all", "ldpcube_power"),
    "solve": ("solvers", "policy", "likelihood", "feasibility", "exact_feasibility", "structured", "structured_blocks",
              "structured_tree", "user_call", "table", "grouped", "check_property", "bound_property", "routes", "multi",
              "keyvalue", "route_grid", "rsrfd"),
    "variants": ("own_variant", "kl_user_call", "ordered"),
    "cli": ("startup", "cli_fuzz"),
    "robust": ("poisoning_anchor", "poisoning_recovery", "poisoning_detection", "poisoning_adaptive", "poisoning_kernels",
               "poisoning_experiment", "poisoning_anchor_pipeline", "poisoning_stress",
               "poisoning_detection_r"),
    "discovery": ("heavy",),
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, no peers, < 1 min (the smoke check)")
    ap.add_argument("--only", default="", help="comma-separated sections or benches (default: all)")
    ap.add_argument("--out", default=None, help="results directory (default benchmarks/results[/quick])")
    ap.add_argument("--table", action="store_true", help="rewrite BENCHMARKS.md from the results files")
    ap.add_argument("--list", action="store_true", help="print the sections and their benches")
    a = ap.parse_args(argv)
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
