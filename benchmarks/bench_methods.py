"""Every registered post-processing method, side by side, at growing d.

Estimate: OUE, ε = 1, Zipf(s = 1.5) true counts (``_harness.zipf_counts``), support counts from the
fast path ``simulate(exact=False)`` (fixed seed). d and n: 10³ and 42,178 (Kosarak's d) at n = 10⁶,
10⁶ at n = 10⁷, 10⁷ at n = 10⁸.

One fresh child process per d (timeout ``--methods-timeout``, RSS watched by
``_harness.run_process``). In it the methods are *interleaved*: repetition r runs every method once
(A B C … A B C …), so a burst of load from other work on the shared machine hits all of them alike;
each method's time is the median over the repetitions, in wall time (perf_counter) and CPU time
(process_time). Every call is the registered function (``ldpopt.methods.get(name).func(est)``, what ``postprocess`` runs) with the method's defaults, plus
variants that ``benchmarks/time_closed_forms.py`` and ``time_bayes.py`` used to time (those scripts
are folded into this section): ``mle-apx`` with ``method="brentq"``, the paper's iterative MLE-Apx
(iterations reported), Power with s given, the two power-law fits alone (Jia & Gong Eq. 16, Eq. 17),
Calibrate with the Gaussian prior (both fits).

Skipped where not O(d)-ish: ``power``, ``power-ns``, ``calibrate`` (and their variants) run at
d ≤ 42,178 only: beyond the posterior sums, their s fit (Newton on the Eq. 16 score) and the prior's
normaliser scale with n, and the target for them is at Kosarak scale (d = 42,178, n = 10⁶).

Slow references (d = 42,178 only, and the quick run): ``bayes.power_reference`` (Wang et al. Eq. 10
summed over every i = 1..n) and ``bayes.calibrate_reference`` (Jia & Gong Eq. 11–12 over every k) are
O(n·d); they are timed on a random subset of ``--reference-subset`` values (default 20), interleaved
with the fast routines (fast, reference, fast, reference…), and their time scaled by d / subset
(linear in d: one independent sum per value). The fast outputs on that subset are compared with
them (max relative difference). PowerNS's reference time is Power's (the projection adds O(d log d)).

``python benchmarks/bench_methods.py [--quick]``; also a worker: ``--worker '<json>'``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

EPS = 1.0
SIZES = ((1_000, 10**6), (42_178, 10**6), (10**6, 10**7), (10**7, 10**8))
SIZES_QUICK = ((64, 10**4), (300, 10**4))
REPEATS = {1_000: 7, 42_178: 5, 10**6: 3, 10**7: 3}
BAYES = ("power", "power-ns", "calibrate")
BAYES_MAX_D = 42_178


def contenders(d: int, d_bayes: int) -> list[tuple[str, str, dict]]:
    """(label, registry name or special, kwargs), in the order of one repetition."""
    import ldpopt

    c = [(m, m, {}) for m in ldpopt.methods.available().index if m not in BAYES or d <= d_bayes]
    c.append(("mle-apx[brentq]", "mle-apx", {"method": "brentq"}))
    if d <= d_bayes:
        c += [("fit-s[mle]", "_fit", {"fit": "mle"}), ("fit-s[mean-variance]", "_fit", {"fit": "mean-variance"}),
              ("power[s given]", "power", {"s": "fitted"}), ("calibrate[s given]", "calibrate", {"s": "fitted"}),
              ("calibrate[gaussian,mean-variance]", "calibrate", {"prior": "gaussian", "fit": "mean-variance"}),
              ("calibrate[gaussian,mle]", "calibrate", {"prior": "gaussian", "fit": "mle"})]
    return c


def measure_inproc(cfg: dict) -> dict:
    """All methods at one d, interleaved over repetitions; references on a subset; one JSON dict."""
    import warnings

    import ldpopt
    from ldpopt import Estimate
    from ldpopt.methods import bayes, mle

    d, n = cfg["d"], cfg["n"]
    counts = np.load(cfg["counts"]) if "counts" in cfg else H.zipf_counts(d, n)
    est = ldpopt.oracles.get("oue", epsilon=EPS, d=d).simulate(counts, cfg["seed"], exact=False)
    del counts
    d_bayes = cfg.get("bayes_max_d", BAYES_MAX_D)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # fits clipped to their bounds warn; not what is timed
        s_fit = bayes.fit_power_law(est) if d <= d_bayes else None
    cons = contenders(d, d_bayes)
    if cfg.get("quick"):
        cons = [c for c in cons if c[0] != "calibrate[gaussian,mle]"]   # seconds even at tiny d
    res = {lab: {"wall": [], "cpu": []} for lab, _, _ in cons}
    info: dict[str, dict] = {lab: {} for lab, _, _ in cons}

    def call(name, kw):
        if name == "_fit":
            return bayes.fit_power_law(est, **kw)
        kw = {k: (s_fit if v == "fitted" else v) for k, v in kw.items()}
        # the registered function itself: postprocess only adds the estimate and parameter-name checks
        info_ = ldpopt.methods.get(name)
        return info_.func(est.as_ordered() if info_.needs_order else est, **kw)

    budget, t_start = cfg.get("budget", 120.0), time.perf_counter()
    for r in range(cfg["repeats"]):
        for lab, name, kw in cons:
            if lab == "calibrate[gaussian,mle]" and r > 0:
                continue   # an L-BFGS fit: one run is enough (it is not one of the targets)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out, w, c = H.timed(lambda: call(name, kw))
            res[lab]["wall"].append(w)
            res[lab]["cpu"].append(c)
            if r == 0 and isinstance(out, np.ndarray):
                info[lab] = {"sum_minus_1": float(out.sum() - 1.0), "min": float(out.min()),
                             "finite": bool(np.all(np.isfinite(out)))}
            elif r == 0:
                info[lab] = {"value": float(out)}
        if r >= 1 and time.perf_counter() - t_start > budget:
            break   # at least 2 interleaved repetitions; more while within the budget
    rows = []
    for lab, name, kw in cons:
        rows.append(dict(method=lab, seconds=float(np.median(res[lab]["wall"])),
                         cpu_seconds=float(np.median(res[lab]["cpu"])), seconds_min=float(min(res[lab]["wall"])),
                         repeats=len(res[lab]["wall"]), **info[lab]))
    out = {"d": d, "n": n, "rows": rows, "s_fit": s_fit,
           "mle_apx_paper_iterations": int(mle.mle_apx_paper_iterate(est)[1])}

    k = cfg.get("reference_subset", 0)
    if k and d <= d_bayes:
        idx = np.sort(np.random.default_rng(1).choice(d, min(k, d), replace=False))
        sub = Estimate.from_counts(est.counts[idx], est.n, est.epsilon, est.p, est.q, oracle=est.oracle)
        pairs = {"power": (lambda: bayes.power(est, s=s_fit), lambda: bayes.power_reference(sub, s_fit)),
                 "calibrate": (lambda: bayes.calibrate(est, s=s_fit),
                               lambda: bayes.calibrate_reference(sub, "power-law", s=s_fit))}
        ref = {}
        for name, (fast, slow) in pairs.items():
            fw, fc, sw, sc = [], [], [], []
            for _ in range(cfg.get("reference_repeats", 2)):   # fast, slow, fast, slow
                f, w, c = H.timed(fast)
                fw.append(w)
                fc.append(c)
                g, w, c = H.timed(slow)
                sw.append(w)
                sc.append(c)
            scale = d / len(idx)
            ref[name] = {"subset": int(len(idx)), "fast_seconds": float(np.median(fw)),
                         "fast_cpu": float(np.median(fc)), "ref_subset_seconds": float(np.median(sw)),
                         "ref_subset_cpu": float(np.median(sc)),
                         "ref_scaled_seconds": float(np.median(sw)) * scale,
                         "ref_scaled_cpu": float(np.median(sc)) * scale,
                         "max_rel_diff": float(np.max(np.abs(f[idx] / g - 1.0)))}
        out["reference"] = ref
    return out


# -- the section ----------------------------------------------------------------------------------
def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--methods-timeout", type=float, default=1800.0,
                    help="seconds before the process measuring one d is stopped (default 1800)")
    ap.add_argument("--reference-subset", type=int, default=20,
                    help="values on which the slow Power/Calibrate references are timed (default 20)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    opts = H.options(parser(), "bench_methods.py", quick, opts)
    timeout, ksub = opts.methods_timeout, opts.reference_subset
    sizes = SIZES_QUICK if opts.quick else SIZES
    per_d = []
    with tempfile.TemporaryDirectory(prefix="ldpopt-bench-") as tmp:
        for d, n in sizes:
            cfg = dict(d=d, n=n, seed=12345, repeats=REPEATS.get(d, 3), budget=5.0 if opts.quick else 120.0,
                       reference_subset=ksub if (opts.quick or d == 42_178) else 0,
                       bayes_max_d=max(BAYES_MAX_D, 1_000) if not opts.quick else 1_000)
            entry = {"d": d, "n": n, "loadavg_1min": os.getloadavg()[0], "status": "ok", "error": "",
                     "maxrss_mb": math.nan}
            if opts.quick:
                cfg.update(reference_subset=min(ksub, 5), quick=True)
                entry.update(measure_inproc(cfg))
            else:
                cfg["counts"] = str(H.counts_file(d, n, Path(tmp)))
                H.wait_for_memory(1024, max_wait=120)
                r = H.run_process([sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(cfg)],
                                  timeout=timeout)
                entry.update(status=r.status, maxrss_mb=r.maxrss_mb, process_wall=r.wall)
                if r.status == "ok":
                    entry.update(r.payload)
                else:
                    entry["error"] = (f"> {timeout:.0f} s (stopped)" if r.status == "timeout"
                                      else r.error or r.status)
            per_d.append(entry)
            print(f"  d={d:>9} n={n:.0e}: {entry['status']} " + ", ".join(
                f"{x['method']} {H.fmt_seconds(x['seconds'])}" for x in entry.get("rows", [])), flush=True)
    return H.save("methods", opts, {"epsilon": EPS, "oracle": "oue", "zipf_s": 1.5, "sizes": per_d})


if __name__ == "__main__":
    H.main(parser(), run, lambda cfg: print(json.dumps(measure_inproc(cfg), default=float)))
