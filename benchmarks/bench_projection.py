"""Norm-Sub and MLE-Apx by the expected-O(d) pivot search, side by side in one run
with the previous (sort-based) implementation and a bare numpy projection.

Estimate: OUE, ε = 1, Zipf(1.5) true counts (``_harness.zipf_counts``), fast-path simulation, as in
``bench_methods.py``. Sizes: d = 42,178 at n = 10⁶ and d = 10⁷ at n = 10⁸ (``--quick``: 10⁴ and
10⁵). Contenders, interleaved per repetition (A B C … A B C …), best and median of the repetitions:

* ``norm-sub`` / ``mle-apx``: the registered functions (``ldpopt.methods.get(name).func``);
* ``norm-sub[previous]`` / ``mle-apx[previous]``: the previous sort-based code (``benchmarks/_previous_projection.py``,
  verbatim copies: validation copy, pre-filter, sort, scan, polish);
* ``bare sort projection``: the textbook numpy projection of f̃ (sort, cumsum, scan, one
  ``maximum``; no validation, no polish): the "bare numpy projection" reference;
* ``floor: max(f̃ − c, 0)``: one pass producing the output, the memory-traffic floor.

The outputs are compared (max |new − previous|). Writes ``results/projection.json``.

    python benchmarks/bench_projection.py [--quick] [--repeats R]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402


def bare_projection(y: np.ndarray) -> np.ndarray:
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, y.shape[0] + 1)
    rho = np.flatnonzero(u * k > css)[-1]
    return np.maximum(y - css[rho] / (rho + 1), 0.0)


def measure(d: int, n: int, repeats: int) -> dict:
    import ldpopt
    import _previous_projection as prev

    est = ldpopt.oracles.get("oue", epsilon=1.0, d=d).simulate(H.zipf_counts(d, n), 7, exact=False)
    ns, ma = ldpopt.methods.get("norm-sub").func, ldpopt.methods.get("mle-apx").func
    f = est.f_tilde
    cons = {
        "norm-sub": lambda: ns(est),
        "norm-sub[previous]": lambda: prev.project_simplex_sort(f, 1.0),
        "mle-apx": lambda: ma(est),
        "mle-apx[previous]": lambda: prev.mle_apx_sort(est),
        "bare sort projection": lambda: bare_projection(f),
        "floor: max(f - c, 0)": lambda: np.maximum(f - 1e-3, 0.0),
    }
    times = {k: [] for k in cons}
    outs = {}
    for _ in range(repeats):
        for k, fn in cons.items():
            t0 = time.perf_counter()
            outs[k] = fn()
            times[k].append(time.perf_counter() - t0)
    rows = [dict(contender=k, best_ms=1e3 * min(v), median_ms=1e3 * float(np.median(v))) for k, v in times.items()]
    check = {"norm-sub_vs_previous": float(np.max(np.abs(outs["norm-sub"] - outs["norm-sub[previous]"]))),
             "norm-sub_vs_bare": float(np.max(np.abs(outs["norm-sub"] - outs["bare sort projection"]))),
             "mle-apx_vs_previous": float(np.max(np.abs(outs["mle-apx"] - outs["mle-apx[previous]"])))}
    return {"d": d, "n": n, "repeats": repeats, "rows": rows, "max_abs_diff": check}


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: d = 10⁴ and 10⁵."""
    a = H.options(parser(), "bench_projection.py", quick, opts)
    sizes = ((10**4, 10**5), (10**5, 10**6)) if a.quick else ((42_178, 10**6), (10**7, 10**8))
    res = []
    for d, n in sizes:
        r = measure(d, n, a.repeats)
        res.append(r)
        print(f"\nd = {d:,}, n = {n:,} (best / median of {r['repeats']} interleaved, ms)")
        base = {x["contender"]: x["best_ms"] for x in r["rows"]}
        for x in r["rows"]:
            print(f"  {x['contender']:<24} {x['best_ms']:9.2f} {x['median_ms']:9.2f}"
                  f"   ×{x['best_ms'] / base['bare sort projection']:.2f} of bare")
        print("  max |diff|:", r["max_abs_diff"])
    return H.save("projection", a, {"results": res})


if __name__ == "__main__":
    H.cli(parser(), run)
