"""The whole seeded command-line fuzz (tests/_cli_cases.py) over every ``ldpopt`` subcommand: the
table of outcomes by class of case, and every case that did not end as it must.

Each round draws every template once with its own random parts (path spellings, numbers,
encodings, methods, formats); ``--rounds 6`` gives 600 cases, including the heavy ones (a local
Dask cluster, a long post-processing stopped by Ctrl-C) that the test suite's quick subset leaves
out. The cases run in a child process, in process there (``ldpopt.cli.main`` with captured
output and a timer), with ``--tree``'s ``ldpopt`` first on the path: ``--tree`` another checkout
measures its behaviour on the same cases (the "before" of a change).

    python benchmarks/bench_cli_fuzz.py [--quick] [--rounds 6] [--tree PATH --light --name cli_fuzz_before]

``--light`` leaves the heavy cases out: a checkout without the ``--workers`` cap would start 1,000
worker processes for ``aggregate --workers 1000``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

REPO = H.REPO
SEED = 20_261_124


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=6, help="draws of every template (100 cases each)")
    ap.add_argument("--tree", default=str(REPO), help="the checkout whose ldpopt runs the cases")
    ap.add_argument("--name", default="cli_fuzz", help="results file name (NAME.json)")
    ap.add_argument("--light", action="store_true",
                    help="leave out the heavy cases (for a tree that would start 1000 local Dask workers)")
    return ap


def _child(rounds: int, heavy: bool) -> None:
    """In the child: run the cases, print one JSON document."""
    import functools

    sys.path.insert(0, str(REPO / "tests"))
    import _cli_cases as C

    import ldpopt.cli as cli

    cli.build_parser = functools.cache(cli.build_parser)  # one parser per command, as the suite does
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(C.cases(SEED, rounds, heavy)):
            t0 = time.perf_counter()
            outcome, detail = C.run_case(case, Path(tmp), i, SEED)
            results.append({"class": case.cls, "case": case.what, "argv": case.argv, "expect": case.expect,
                            "outcome": outcome, "detail": detail, "wall_s": round(time.perf_counter() - t0, 3)})
    print(json.dumps({"ldpopt_file": cli.__file__, "results": results}))


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: one round without the heavy cases."""
    args = H.options(parser(), "bench_cli_fuzz.py", quick, opts)
    rounds, heavy = (1, False) if args.quick else (args.rounds, not args.light)
    tree = Path(args.tree).resolve()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH")) if p)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", str(rounds), str(int(heavy))], env=env, cwd=REPO,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the cases' process failed: {proc.stderr[-2000:]}")
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = doc["results"]
    table: dict = {}
    for r in rows:
        table.setdefault(r["class"], {}).setdefault(r["outcome"], 0)
        table[r["class"]][r["outcome"]] += 1
    good = ("ok", "refused", "interrupted")
    failures = [r for r in rows if r["outcome"] not in good]
    by_command: dict = {}  # the same outcomes by subcommand (the argv's first word)
    for r in rows:
        by_command.setdefault(r["argv"][0], {}).setdefault(r["outcome"], 0)
        by_command[r["argv"][0]][r["outcome"]] += 1
    for cls, counts in [*table.items(), *((f"[{c}]", v) for c, v in sorted(by_command.items()))]:
        print(f"{cls:16s} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), flush=True)
    print(f"{len(rows)} cases, {len(failures)} not as they must end ({time.perf_counter() - t0:.0f} s)")
    # the tree by its commit (a checkout elsewhere is no path of this repository)
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    if tree != REPO.resolve():
        args.command = args.command.replace(str(args.tree), f"CHECKOUT_OF_{commit}")
    return H.save(args.name, args, {"seed": SEED, "rounds": rounds, "heavy": heavy,
                                    "tree": "this checkout" if tree == REPO.resolve() else f"a checkout of {commit}",
                                    "tree_commit": commit,
                                    "ldpopt_file": str(Path(doc["ldpopt_file"]).relative_to(tree)), "cases": len(rows),
                                    "failures": len(failures), "table": table, "by_command": by_command,
                                    "not_as_they_must": failures,
                                    "rows": rows})


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(int(sys.argv[2]), sys.argv[3] == "1")
    else:
        H.cli(parser(), run)
