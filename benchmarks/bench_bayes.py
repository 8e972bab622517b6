"""Benchmark section "bayes": Power / Calibrate where the posterior windows are long (GRR).

What the Euler–Maclaurin tail changed, measured here, old and new path side by side in one process:

* **Long windows.** ``_bayes_core.exact_logsums`` sums the part k ≥ 1000 of a window of ≥ 20,000
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
memory is not what changed.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

SECTION = "bayes"
CASES = [("grr", 1024, 10**6, e) for e in (0.2, 1.0, 4.0)] + \
        [(o, 1024, 10**6, e) for o in ("oue", "olh") for e in (0.2, 1.0, 4.0)] + \
        [("grr", 42_178, 10**6, 1.0), ("oue", 42_178, 10**6, 1.0)]
CASES_QUICK = [("grr", 64, 50_000, 0.2), ("oue", 64, 20_000, 1.0)]
REPEATS = 3


@contextmanager
def _old_path():
    """The plain windowed sums everywhere (what ldpopt did before the Euler–Maclaurin tail)."""
    from ldpopt.methods import _bayes_core as core

    saved = core.EM_MIN_TERMS
    core.EM_MIN_TERMS = 1 << 62
    try:
        yield
    finally:
        core.EM_MIN_TERMS = saved


@contextmanager
def _old_gauss():
    from ldpopt.methods import bayes

    saved = bayes._prior_gauss_moments
    bayes._prior_gauss_moments = bayes._prior_gauss_moments_direct
    try:
        yield
    finally:
        bayes._prior_gauss_moments = saved


def _side_by_side(new, old, repeats):
    """Interleave new/old; medians of wall and CPU, and both outputs of the first round."""
    t = {"new": ([], []), "old": ([], [])}
    outs = {}
    for _ in range(repeats):
        for key, fn in (("new", new), ("old", old)):
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
    from ldpopt.methods import _bayes_core as core
    from ldpopt.methods import bayes

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
    from ldpopt.methods import bayes

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


def run(opts) -> dict:
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    cases = CASES_QUICK if opts.quick else CASES
    reps = 1 if opts.quick else REPEATS
    rows = []
    for c in cases:
        r = measure_case(*c, repeats=reps)
        rows.append(r)
        print(f"  {c}: sums {H.fmt_seconds(r['sums_new_wall'])} vs {H.fmt_seconds(r['sums_old_wall'])}, "
              f"power {H.fmt_seconds(r['power_new_wall'])} vs {H.fmt_seconds(r['power_old_wall'])}", flush=True)
    gcase = ("oue", 64, 20_000, 1.0) if opts.quick else ("grr", 42_178, 10**6, 1.0)
    gauss = measure_gauss(*gcase)
    doc = {"section": SECTION, "command": getattr(opts, "command", ""), "environment": H.environment(),
           "rows": rows, "gauss": gauss}
    (out / f"{SECTION}.json").write_text(json.dumps(doc, indent=2))
    import pandas as pd

    pd.DataFrame(rows).to_csv(out / f"{SECTION}.csv", index=False)
    (out / f"{SECTION}.md").write_text(markdown(doc))
    return doc


def markdown(doc: dict) -> str:
    env = doc["environment"]
    lines = [f"Command: `{doc['command']}`  ",
             f"Machine: {env['cpu']}, {env['cores']} cores; Python {env['python']}, numpy {env['numpy']}; "
             f"commit {env['git_commit'][:10]}; {env['date']}", "",
             "Zipf(1.5) true counts, fast-path estimate (seed 7). New = Euler–Maclaurin tail for long "
             "windows; old = plain windowed sums (same code otherwise). Interleaved, median wall time "
             "(CPU in parentheses). Sums: exact log-sums (z, k, log k, log² k) of every distinct f̃·n at "
             "the fitted s. Power: the whole call (s fit + posterior means). Max rel. diff: between "
             "the new and old outputs.", "",
             "| oracle | d | n | ε | σn | sums new | sums old | × | Power new | Power old | × | max rel. diff (sums / Power) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        lines.append(
            f"| {r['oracle'].upper()} | {r['d']:,} | {r['n']:.0e} | {r['epsilon']:g} | {r['S']:.3g} | "
            f"{H.fmt_seconds(r['sums_new_wall'])} ({H.fmt_seconds(r['sums_new_cpu'])}) | "
            f"{H.fmt_seconds(r['sums_old_wall'])} ({H.fmt_seconds(r['sums_old_cpu'])}) | "
            f"{r['sums_old_cpu'] / max(r['sums_new_cpu'], 1e-9):.0f} | "
            f"{H.fmt_seconds(r['power_new_wall'])} ({H.fmt_seconds(r['power_new_cpu'])}) | "
            f"{H.fmt_seconds(r['power_old_wall'])} ({H.fmt_seconds(r['power_old_cpu'])}) | "
            f"{r['power_old_cpu'] / max(r['power_new_cpu'], 1e-9):.0f} | "
            f"{r['sums_maxrel']:.1e} / {r['power_maxrel']:.1e} |")
    g = doc["gauss"]
    lines += ["", f"Calibrate, Gaussian prior, MLE fit ({g['oracle'].upper()}, d = {g['d']:,}, n = {g['n']:.0e}, "
              f"ε = {g['epsilon']:g}): windowed normaliser {H.fmt_seconds(g['new_wall'])} "
              f"(CPU {H.fmt_seconds(g['new_cpu'])}) vs plain O(n) sums {H.fmt_seconds(g['old_wall'])} "
              f"(CPU {H.fmt_seconds(g['old_cpu'])}), {g['old_cpu'] / max(g['new_cpu'], 1e-9):.0f}× in CPU; "
              f"fitted (μ, τ) differ by {g['maxrel']:.1e} relative.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    H.section_main(SECTION, lambda cfg: None, markdown)
