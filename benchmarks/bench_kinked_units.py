"""The check on cvxpy objectives with coupled kinks: the generated families of
``tests/test_check_kinked_units.py`` (CLS or the linear f̃·f plus weighted ``pos`` of an index, a
running sum, a running sum of one or a dense row, each kink within 1/d of a point of the simplex).
Per seed: ldpopt's answer (status, its distance to the reference, Clarabel at 1e-12 on the
expression as written), and the check's verdict on a point planted 30–100 accuracy_tol from the
reference (for the linear objective only where the plant's objective is above the reference's).

    python benchmarks/bench_kinked_units.py --n 40                  # writes results/kinked_units.json
    python benchmarks/bench_kinked_units.py --n 40 --src /tmp/old --name kinked_units_old  # another checkout's ldpopt

No timing: statuses and distances. ``--src``: the ldpopt package of another checkout (its folder),
judged on the same families (the generator is this checkout's).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402

TESTS = HERE.parent / "tests"


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--n", type=int, default=40, help="families (seeds 0 .. n-1)")
    ap.add_argument("--src", default=None, help="a checkout whose ldpopt is judged (default: this one)")
    ap.add_argument("--name", default="kinked_units", help="results file name")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # the --src run's process
    return ap


def _generator():
    sys.path.insert(0, str(TESTS))
    spec = importlib.util.spec_from_file_location("kinked_units", TESTS / "test_check_kinked_units.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def rows(n: int) -> list[dict]:
    """One row per seed (this process's ldpopt)."""
    import cvxpy as cp

    import ldpopt
    from ldpopt.problems.check.verdict import accuracy_tol, check_solution, status_after_check

    gen = _generator()
    out = []
    for seed in range(n):
        est, J, linear, rng = gen._kinked(seed)
        d = est.d
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = gen._reference(est, J)
            sol = ldpopt.Problem(est, J).solve(progress=False)
        value = lambda x: float(J(cp.Constant(x), est).value)  # noqa: E731
        plant, above, judged = gen._plant(est, J, linear, ref, rng)  # the test's plant
        verdict = (status_after_check("optimal", check_solution(ldpopt.Problem(est, J), plant, sol.duals))
                   if judged else None)
        out.append({"seed": seed, "d": d, "objective": "linear" if linear else "cls", "status": sol.status,
                    "solver": sol.solver, "distance": float(np.max(np.abs(sol.f - ref))),
                    "objective_above": value(sol.f) - value(ref), "accuracy_tol": accuracy_tol(d),
                    "plant_off": float(np.max(np.abs(plant - ref))) / accuracy_tol(d),
                    "plant_above": above, "plant_status": verdict})
    return out


def summary(rs: list[dict]) -> dict:
    answers = collections.Counter(f"{r['objective']}: {r['status']}" for r in rs)
    plants = collections.Counter(f"{r['objective']}: {r['plant_status']}" for r in rs if r["plant_status"])
    wrong = [r["seed"] for r in rs if r["status"] == "optimal" and r["objective"] == "cls"
             and r["distance"] > r["accuracy_tol"]]
    return {"answers": dict(sorted(answers.items())), "plants": dict(sorted(plants.items())),
            "plants_optimal": [round(r["plant_off"]) for r in rs if r["plant_status"] == "optimal"],
            "cls_optimal_beyond_accuracy_tol": wrong}


def run(quick: bool = False, **opts) -> dict:
    """Writes ``results/<name>.json``; ``--quick``: 3 families."""
    a = H.options(parser(), "bench_kinked_units.py", quick, opts)
    n = 3 if a.quick else a.n
    if a.child:  # the --src run: rows on stdout
        print(json.dumps(rows(n)))
        return {}
    if a.src:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(Path(a.src).resolve()),
                                                                          os.environ.get("PYTHONPATH")) if p)}
        proc = subprocess.run([sys.executable, __file__, "--child", "--n", str(n)], env=env, cwd=a.src,
                              capture_output=True, text=True, check=True)
        rs = json.loads(proc.stdout.strip().splitlines()[-1])
        src = subprocess.run(["git", "-C", a.src, "rev-parse", "--short=8", "HEAD"], capture_output=True,
                             text=True, check=False).stdout.strip() or a.src
    else:
        rs, src = rows(n), "this checkout"
    doc = H.save(a.name, a, {"ldpopt": src, "summary": summary(rs), "rows": rs})
    print(json.dumps(doc["summary"], indent=1))
    return doc


if __name__ == "__main__":
    H.cli(parser(), run)
