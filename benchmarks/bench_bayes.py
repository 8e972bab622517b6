"""Power / Calibrate where the posterior windows are long (GRR).

What the Euler–Maclaurin tail changed, measured here, old and new path side by side in one process:

* **Long windows.** ``engine.exact_logsums`` sums the part k ≥ 1000 of a window of ≥ 20,000
  points by Euler–Maclaurin when the Gaussian scale √v ≥ 1000 (module doc, "Long windows"). The old
  path is the plain windowed sum, still available (``tail_em=False``; for whole methods, by setting
  ``EM_MIN_TERMS`` above n). Cases: Zipf(1.5), d = 1,024, n = 10⁶ (the Wang et al. configs) for GRR,
  OUE, OLH at ε = 0.2, 1, 4; GRR and OUE at d = 42,178 (Kosarak's d), n = 10⁶, ε = 1.
  Per case: the exact log-sums of every distinct f̃·n (moments z, k, log k, log² k, at the fitted
  s), and the whole Power call (s fit by Eq. 16 + posterior means), new and old, interleaved
  (new, old, new, …), median wall and CPU time; the largest relative difference of the outputs.
* **Gaussian-prior normaliser** (Calibrate with ``prior="gaussian"``, MLE fit): the windowed engine
  against the plain O(n) sum (``bayes._prior_gauss_moments_direct``), the whole fit side by side.

The old path of a whole Power call with GRR at ε = 0.2 takes about a minute, so repetitions are few
(``REPEATS``); the quick run uses d = 64, n ≤ 5·10⁴. In-process (no child process, no RSS watch):
memory is not what changed. Every timed call starts with Power's memos empty (:func:`caches_off`):
they are keyed by content, so a repeated call on one estimate would time a lookup. ``python benchmarks/bench_bayes.py [--quick]``.
"""

from __future__ import annotations

import os
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

CASES = [("grr", 1024, 10**6, e) for e in (0.2, 1.0, 4.0)] + \
        [(o, 1024, 10**6, e) for o in ("oue", "olh") for e in (0.2, 1.0, 4.0)] + \
        [("grr", 42_178, 10**6, 1.0), ("oue", 42_178, 10**6, 1.0)]
CASES_QUICK = [("grr", 64, 50_000, 0.2), ("oue", 64, 20_000, 1.0)]
REPEATS = 3


@contextmanager
def _old_path():
    """The plain windowed sums everywhere (what ldpopt did before the Euler–Maclaurin tail)."""
    from ldpopt.methods.bayes import engine as core

    saved = core.EM_MIN_TERMS
    core.EM_MIN_TERMS = 1 << 62
    try:
        yield
    finally:
        core.EM_MIN_TERMS = saved


@contextmanager
def _old_gauss():
    from ldpopt.methods.bayes import posterior as bayes

    saved = bayes._prior_gauss_moments
    bayes._prior_gauss_moments = bayes._prior_gauss_moments_direct
    try:
        yield
    finally:
        bayes._prior_gauss_moments = saved


def caches_off() -> None:
    """Empty Power's memos (the posterior means by (x, S, prior) and the exponent fits by x): each is
    keyed by content, so a second call on the same estimate is answered from them and would time a
    dictionary lookup, not Power (a repeated call read 0.31× the old path where fresh ones read
    ~1,600×). Called before every timed call, outside its clock."""
    from ldpopt.methods.bayes import exponent_fit, posterior_memo

    posterior_memo.MEMO.clear()
    exponent_fit._FIT_MEMO.clear()


def _side_by_side(new, old, repeats):
    """Interleave new/old, every call after :func:`caches_off`; medians of wall and CPU, and both
    outputs of the first round."""
    t = {"new": ([], []), "old": ([], [])}
    outs = {}
    for _ in range(repeats):
        for key, fn in (("new", new), ("old", old)):
            caches_off()
            out, w, c = H.timed(fn)
            t[key][0].append(w)
            t[key][1].append(c)
            outs.setdefault(key, out)
    med = {f"{k}_{m}": float(np.median(v[i])) for k, v in t.items() for i, m in enumerate(("wall", "cpu"))}
    return med, outs


def _rel(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b) / (1.0 + np.abs(b))))


def measure_case(oracle: str, d: int, n: int, eps: float, repeats: int) -> dict:
    import ldpopt
    from ldpopt.methods.bayes import engine as core
    from ldpopt.methods.bayes import posterior as bayes

    est = ldpopt.oracles.get(oracle, epsilon=eps, d=d).simulate(H.zipf_counts(d, n), 7, exact=False)
    S = bayes.noise_sd_counts(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s_fit = bayes.fit_power_law(est)
    x = np.unique(est.f_tilde * est.n)
    prior = core.Prior("power-law", est.n, s=s_fit)
    mom = ("z", "k", "l1", "l2")
    sums, sums_out = _side_by_side(lambda: core.exact_logsums(x, S, prior, mom, relative=True),
                                   lambda: core.exact_logsums(x, S, prior, mom, relative=True, tail_em=False),
                                   repeats)

    def power_new():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bayes.power(est)

    def power_old():
        with _old_path():
            return power_new()

    pw, pw_out = _side_by_side(power_new, power_old, repeats)
    return {"oracle": oracle, "d": d, "n": n, "epsilon": eps, "S": S, "s_fit": s_fit, "points": int(x.size),
            **{f"sums_{k}": v for k, v in sums.items()}, "sums_maxrel": _rel(sums_out["new"], sums_out["old"]),
            **{f"power_{k}": v for k, v in pw.items()}, "power_maxrel": _rel(pw_out["new"], pw_out["old"]),
            "loadavg_1min": os.getloadavg()[0]}


def measure_gauss(oracle: str, d: int, n: int, eps: float) -> dict:
    import ldpopt
    from ldpopt.methods.bayes import posterior as bayes

    est = ldpopt.oracles.get(oracle, epsilon=eps, d=d).simulate(H.zipf_counts(d, n), 7, exact=False)

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.array(bayes.fit_gaussian(est, "mle"))

    def fit_old():
        with _old_gauss():
            return fit()

    med, outs = _side_by_side(fit, fit_old, 1)
    return {"oracle": oracle, "d": d, "n": n, "epsilon": eps, **med, "maxrel": _rel(outs["new"], outs["old"])}


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--case", default=None, metavar="ORACLE,D,N,EPS",
                    help="this one case only (no Gaussian part), written to bayes_ORACLE_dD.json: a headline row's "
                         "own run (e.g. grr,42178,1000000,1)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    opts = H.options(parser(), "bench_bayes.py", quick, opts)
    reps = 1 if opts.quick else REPEATS
    if getattr(opts, "case", None):
        o, d, n, e = opts.case.split(",")
        case = name_case = (o.strip(), int(float(d)), int(float(n)), float(e))
        if opts.quick:  # the file keeps the case's name: --verify reads the row's file at quick sizes
            case = (case[0], 64, 20_000, case[3])
        r = measure_case(*case, repeats=reps)
        print(f"  {case}: power {H.fmt_seconds(r['power_new_cpu'])} vs {H.fmt_seconds(r['power_old_cpu'])} CPU "
              f"({r['power_old_cpu'] / r['power_new_cpu']:.0f}x)", flush=True)
        return H.save(f"bayes_{name_case[0]}_d{name_case[1]}", opts, {
            "rows": [r], "caches": "Power's memos emptied before every timed call (caches_off)",
            "cpu": "this process and its children (_harness.cpu_clock)"})
    cases = CASES_QUICK if opts.quick else CASES
    rows = []
    for c in cases:
        r = measure_case(*c, repeats=reps)
        rows.append(r)
        print(f"  {c}: sums {H.fmt_seconds(r['sums_new_wall'])} vs {H.fmt_seconds(r['sums_old_wall'])}, "
              f"power {H.fmt_seconds(r['power_new_wall'])} vs {H.fmt_seconds(r['power_old_wall'])}", flush=True)
    gcase = ("oue", 64, 20_000, 1.0) if opts.quick else ("grr", 42_178, 10**6, 1.0)
    gauss = measure_gauss(*gcase)
    return H.save("bayes", opts, {"rows": rows, "gauss": gauss,
                                  "caches": "Power's memos emptied before every timed call (caches_off)",
                                  "cpu": "this process and its children (_harness.cpu_clock)"})


if __name__ == "__main__":
    H.cli(parser(), run)
