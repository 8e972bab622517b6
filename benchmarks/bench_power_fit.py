"""Power with s fitted (Jia & Gong Eq. 16) at Kosarak scale, this tree against a
previous revision, side by side in one run.

The previous revision's ``ldpopt/`` is extracted with ``git archive`` into a temporary directory;
each measurement is a fresh child process importing one of the two trees (new, previous, new,
previous, … interleaved), which builds the same estimate (``time_bayes.build``: Zipf(1.1), OUE or
GRR sampled exactly, fixed seed; OLH by the oracle's fast path ``simulate(exact=False)``, fixed seed), warms the log k table with one Power at s = 1, then times in CPU
(process_time) and wall time: ``fit_power_law`` (the s fit alone), ``power`` with s fitted, and
``power`` with the fitted s given (the posterior sums alone: the "bare" reference inside the same
code). Outputs are compared: |s_new − s_prev| and max relative difference of Power's outputs.

    python benchmarks/bench_power_fit.py [--previous REV] [--repeats R] [--quick]

Writes ``results/power_fit[_quick].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASES = tuple((o, d, 10**6, 1.0) for d in (42_178, 1_024) for o in ("oue", "grr", "olh"))
CASES_QUICK = (("oue", 3000, 10**6, 1.0),)


def worker(spec: dict) -> None:
    import warnings

    sys.path.insert(0, str(HERE))
    from time_bayes import build
    from ldpopt.methods import bayes

    warnings.simplefilter("ignore")
    if spec["oracle"] == "olh":  # time_bayes.build samples OUE and GRR only: OLH by its fast path
        from ldpopt import oracles
        w = np.arange(1, spec["d"] + 1, dtype=np.float64) ** -1.1
        rng = np.random.default_rng(0)
        tc = rng.multinomial(spec["n"], w / w.sum())
        est = oracles.get("olh", epsilon=spec["eps"], d=spec["d"]).simulate(tc, rng, exact=False)
    else:
        est = build(spec["d"], spec["n"], spec["eps"], spec["oracle"])
    bayes.power(est, s=1.0)                       # warm the log k table
    # which tree was loaded, named by its role (no machine path in the committed results)
    out = {"ldpopt": "working tree" if Path(bayes.__file__).resolve().is_relative_to(ROOT) else "--previous revision"}
    for lab, fn in (("fit_power_law", lambda: bayes.fit_power_law(est)),
                    ("power[s fitted]", lambda: bayes.power(est)),
                    ("power[s given]", lambda: bayes.power(est, s=out["s"]))):
        getattr(bayes._pf, "_FIT_MEMO", {}).clear()  # time the fit, not a memo hit
        c0, w0 = time.process_time(), time.perf_counter()
        r = fn()
        out[lab] = {"cpu": time.process_time() - c0, "wall": time.perf_counter() - w0}
        if lab == "fit_power_law":
            out["s"] = float(r)
        elif lab == "power[s fitted]":
            np.save(spec["save"], r)
    print(json.dumps(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--previous", default="de6e2ee")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", default=None)
    a = ap.parse_args(argv)
    if a.worker:
        worker(json.loads(a.worker))
        return 0
    res = []
    with tempfile.TemporaryDirectory() as tmp:
        prev = Path(tmp) / "previous"
        prev.mkdir()
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", a.previous, "ldpopt"], check=True,
                             capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(prev)], input=tar, check=True)
        trees = {"new": str(ROOT), "previous": str(prev)}
        for oracle, d, n, eps in (CASES_QUICK if a.quick else CASES):
            runs = {k: [] for k in trees}
            for _ in range(a.repeats):
                for lab, tree in trees.items():
                    spec = dict(oracle=oracle, d=d, n=n, eps=eps, save=str(Path(tmp) / f"{lab}.npy"))
                    env = dict(os.environ, PYTHONPATH=tree)
                    p = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)],
                                       env=env, check=True, capture_output=True, text=True)
                    runs[lab].append(json.loads(p.stdout.strip().splitlines()[-1]))
            o_new, o_prev = np.load(Path(tmp) / "new.npy"), np.load(Path(tmp) / "previous.npy")
            row = {"oracle": oracle, "d": d, "n": n, "eps": eps,
                   "s_new": runs["new"][0]["s"], "s_previous": runs["previous"][0]["s"],
                   "power_max_rel_diff": float(np.max(np.abs(o_new - o_prev) / np.abs(o_prev))),
                   "ldpopt": {k: v[0]["ldpopt"] for k, v in runs.items()}}
            print(f"\n{oracle} d={d:,} n={n:,} eps={eps}  (CPU s, best / median of {a.repeats} child runs)")
            for what in ("fit_power_law", "power[s fitted]", "power[s given]"):
                for lab in trees:
                    cpu = [r[what]["cpu"] for r in runs[lab]]
                    row[f"{what}|{lab}"] = {"cpu_best": min(cpu), "cpu_median": float(np.median(cpu)),
                                            "wall_best": min(r[what]["wall"] for r in runs[lab])}
                    print(f"  {what:<16} {lab:<9} {min(cpu):8.3f} {float(np.median(cpu)):8.3f}")
                ratio = row[f"{what}|previous"]["cpu_best"] / row[f"{what}|new"]["cpu_best"]
                print(f"  {what:<16} previous/new = {ratio:.1f}x")
            print(f"  s new {row['s_new']!r} previous {row['s_previous']!r}; Power max rel diff "
                  f"{row['power_max_rel_diff']:.2e}")
            res.append(row)
    out = HERE / "results" / ("power_fit_quick.json" if a.quick else "power_fit.json")
    out.write_text(json.dumps({"command": "python benchmarks/bench_power_fit.py"
                               + (" --quick" if a.quick else "") + f" --previous {a.previous}",
                               "results": res}, indent=1))
    print("wrote", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
