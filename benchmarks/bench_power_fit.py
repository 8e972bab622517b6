"""Power with s fitted (Jia & Gong Eq. 16) at Kosarak scale, this tree against a
previous revision, side by side in one run.

The previous revision's ``ldpopt/`` is extracted with ``git archive`` into a temporary directory;
each measurement is a fresh child process importing one of the two trees (new, previous, new,
previous, … interleaved), which builds the same estimate (``build``: Zipf(1.1), OUE or
GRR sampled exactly, fixed seed; OLH by the oracle's fast path ``simulate(exact=False)``, fixed seed), warms the log k table with one Power at s = 1, then times in CPU
(process_time) and wall time: ``fit_power_law`` (the s fit alone), ``power`` with s fitted, and
``power`` with the fitted s given (the posterior sums alone: the "bare" reference inside the same
code). Outputs are compared: |s_new − s_prev| and max relative difference of Power's outputs.

    python benchmarks/bench_power_fit.py [--previous REV] [--repeats R] [--quick]

Writes ``results/power_fit.json`` (``results/quick/`` with ``--quick``).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASES = tuple((o, d, 10**6, 1.0) for d in (42_178, 1_024) for o in ("oue", "grr", "olh"))
CASES_QUICK = (("oue", 300, 10**4, 1.0),)


def build(d, n, eps, oracle, seed=0):
    """Zipf(1.1) true counts over d values; OUE support counts sampled exactly (Bin(t, 1/2) +
    Bin(n − t, q)), or GRR (kept w.p. p, else moved uniformly: an approximation)."""
    from ldpopt.estimate import Estimate

    rng = np.random.default_rng(seed)
    w = np.arange(1, d + 1, dtype=np.float64) ** -1.1
    tc = rng.multinomial(n, w / w.sum())
    if oracle == "oue":
        p, q = 0.5, 1.0 / (np.exp(eps) + 1.0)
        c = rng.binomial(tc, p) + rng.binomial(n - tc, q)
    else:  # GRR: each user keeps the value w.p. p, else a uniform other value
        p = np.exp(eps) / (np.exp(eps) + d - 1)
        q = 1.0 / (np.exp(eps) + d - 1)
        keep = rng.binomial(tc, p)
        moved = rng.multinomial(n - keep.sum(), np.full(d, 1.0 / d))  # approx.: others uniform
        c = keep + moved
    return Estimate.from_counts(c, n, eps, p, q, oracle=oracle)


def worker(spec: dict) -> None:
    import warnings

    try:  # the methods as one module per idea (bayes/ a package), or an earlier revision's bayes.py
        from ldpopt.methods.bayes import posterior as bayes
    except ImportError:
        from ldpopt.methods import bayes  # type: ignore[no-redef]

    warnings.simplefilter("ignore")
    if spec["oracle"] == "olh":  # build samples OUE and GRR only: OLH by its fast path
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
        c0, w0 = H.cpu_clock(), time.perf_counter()
        r = fn()
        out[lab] = {"cpu": H.cpu_clock() - c0, "wall": time.perf_counter() - w0}
        if lab == "fit_power_law":
            out["s"] = float(r)
        elif lab == "power[s fitted]":
            np.save(spec["save"], r)
    print(json.dumps(out))


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--previous", default="de6e2ee")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: OUE at d = 300, n = 10⁴, one repeat."""
    a = H.options(parser(), "bench_power_fit.py", quick, opts)
    if a.quick:
        a.repeats = 1
    res = []
    with tempfile.TemporaryDirectory() as tmp:
        prev = H.extract(a.previous, ["ldpopt"], Path(tmp) / "previous")
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
    return H.save("power_fit", a, {"results": res})


if __name__ == "__main__":
    a = parser().parse_args()
    worker(json.loads(a.worker)) if a.worker else run(**vars(a))
