"""ldpopt benchmarks: ``python benchmarks/run.py [--quick] [--only oracles,...] [--out DIR] [--resume]``.

Sections are the modules ``benchmarks/bench_<name>.py``; each defines ``SECTION`` (its name),
``run(opts) -> dict`` (measures, writes its own files under ``opts.out``) and optionally
``add_arguments(parser)``. A new section (methods, solvers, …) is a new file; nothing here changes.

``--quick``: tiny sizes, ldpopt only, under a minute: a smoke check that the scripts work; it writes
to ``benchmarks/results/quick`` unless ``--out`` is given. Full runs need ``bash
benchmarks/setup_peers.sh`` first (the peer libraries live in their own venv).
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def sections() -> dict:
    mods = {}
    for path in sorted(HERE.glob("bench_*.py")):
        mod = importlib.import_module(path.stem)
        mods[getattr(mod, "SECTION", path.stem[len("bench_"):])] = mod
    return mods


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    mods = sections()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, no peers, < 1 min")
    ap.add_argument("--only", default="", help=f"comma-separated sections (have: {', '.join(mods)})")
    ap.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    ap.add_argument("--resume", action="store_true",
                    help="keep finished measurements already in OUT, measure only the rest")
    for mod in mods.values():
        if hasattr(mod, "add_arguments"):
            mod.add_arguments(ap)
    opts = ap.parse_args(argv)
    chosen = [s for s in opts.only.split(",") if s] or list(mods)
    unknown = [s for s in chosen if s not in mods]
    if unknown:
        ap.error(f"--only: unknown section(s) {unknown}; have {list(mods)}")
    if opts.out is None:
        opts.out = str(HERE / "results" / ("quick" if opts.quick else ""))
    opts.command = "python benchmarks/run.py " + shlex.join(argv)
    for name in chosen:
        t0 = time.perf_counter()
        print(f"== {name} ==", flush=True)
        mods[name].run(opts)
        print(f"== {name}: done in {time.perf_counter() - t0:.1f} s; results in {opts.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
