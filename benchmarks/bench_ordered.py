"""Ordered domains: the Wiener filters of Fang et al. (IEEE S&P 2023) beside Norm-Sub, the
smoothness-penalised CLS and EMS-style smoothing, per frequency band; empirical-Bayes shrinkage's
bias and interval coverage per band beside Power and Calibrate; conformance with the authors' code.

Comparison (``compare``): GRR at ε ∈ {0.5, 1, 2}; ``--reps`` repetitions (20) on the exact fast path.
Smooth data: Beta(5, 2) bucketised on d = 256 (n = 10⁵), Wang et al.'s Beta(50, 2) on d = 400
(n = 10⁵), the retail basket sizes (real, ordered, d = 76, n = 88,162; ldpopt ships no ages column:
basket size stands in). Non-smooth data: Zipf(1.5) on d = 256 with its values in a fixed random order
(a categorical domain: n = 10⁵), FIMI retail items 0–255 in id order (real, n = 230,743). Methods:
Base, Norm-Sub, DW, IIW (5 filters), AMRP (10 orderings), DW-simplex, DW-posterior (the Wiener-prior
posterior on the simplex as one certified problem, :func:`dw_posterior`), EB-Shrink, the smoothness-
penalised CLS (argmin ‖f − f̃‖² + λ‖D₁f‖² on the simplex, ``ldpopt.Problem``, certified; λ minimises
Stein's unbiased risk of the unconstrained smoother over a grid, in the DCT basis that diagonalises
D₁ᵀD₁) and EMS (:func:`ldpopt.numeric.ems` with GRR's channel). Bands by the true frequency: ``head``
(the top 10 % of values), ``mid`` (the next 40 %), ``tail`` (the rest); MSE per band = mean over its
values of (f' − f)², mean and SE over repetitions.

EB coverage (``coverage``): Zipf(1.5) in rank order (d = 64, n = 10⁵) and Beta(5, 2) (d = 64),
GRR at ε = 1, ``--reps`` estimates; EB-Shrink's own posterior interval
(:func:`ldpopt.methods.shrink.eb_interval`, Morris) and the library's parametric bootstrap
(:func:`ldpopt.uncertainty.bootstrap`, basic interval, 100 resamples, ``boundary=None``: the method's
own interval, without the Base fallback that would otherwise replace most entries) for EB-Shrink and
Power (Calibrate with its default power-law prior is Power's answer, ``variant_of``); level 0.9. Per band: bias (mean f' − f), coverage (share of the
values × repetitions whose interval holds f).

Conformance (``anchor``): the authors' ``deconvolution_ldp.py`` (github.com/SEUNICK/LDP) in its own
interpreter on the same support counts (GRR and OUE, ε ∈ {0.5, 2}, the smooth and non-smooth data):
max |ldpopt − authors| for DW, IIW (5 filters) and AMRP (10 orderings, the authors' generator seeded
as ldpopt's ``rng``).

    python benchmarks/bench_ordered.py [--quick] [--reps R] [--anchor-python PY --anchor-src DIR]

Writes ``results/ordered.json`` and ``results/ordered.md`` (``results/quick/`` with ``--quick``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402

# the bands, the SURE-penalised CLS and EMS with GRR's channel: the experiment kind's (one definition)
from ldpopt.experiments.task_kinds.ordered import BANDS, bands, ems_grr, pen_cls  # noqa: E402

METHODS = ("base", "norm-sub", "dw", "iiw", "amrp", "dw-simplex", "dw-posterior", "eb-shrink", "pen-cls", "ems")


def datasets_(quick: bool) -> dict:
    """name -> (kind, counts): the comparison's data (module docstring)."""
    from ldpopt import datasets
    from ldpopt.datasets.synthetic import beta_probabilities, zipf_probabilities

    gen = np.random.default_rng(20260611)
    out = {"beta-5-2": ("smooth", gen.multinomial(100_000, beta_probabilities(256, 5.0, 2.0))),
           "beta-50-2": ("smooth", datasets.load("beta", rng=0).counts),
           "basket-size": ("smooth", datasets.load("retail-basket-size").counts)}
    z = gen.multinomial(100_000, zipf_probabilities(256, 1.5))
    out["zipf-shuffled"] = ("non-smooth", z[gen.permutation(256)])
    out["retail-0-255"] = ("non-smooth", datasets.load("retail").counts[:256])
    if quick:
        out = {k: out[k] for k in ("beta-5-2", "zipf-shuffled")}
    return {k: (kind, np.asarray(c, dtype=np.int64)) for k, (kind, c) in out.items()}


def dw_posterior(est) -> np.ndarray:
    """The Wiener-prior posterior on the simplex as one problem: argmin Σ_k |X_k − F_k|²/N + |F_k|²/S_k
    over f ≥ 0, Σf = 1 (X = G/H, S_k = |X_k|² as DW's plug-in, N = P_n/(p − q)²). On the simplex
    F_0 = 1 is fixed, so the DC terms are constants; by Parseval (unnormalised DFT: Σ|Y_k|² = d‖y‖²)
    the objective is d/N · (‖f − x‖² + ‖Lf‖²), L the real DFT rows (cos; sin) scaled by
    √(N/(d S_k)), k ≠ 0. Solved and certified by ``ldpopt.Problem`` (its quadratic-form route)."""
    import cvxpy as cp

    import ldpopt
    from ldpopt.methods.wiener import noise_power
    from ldpopt.problems import Simplex

    d = est.d
    H = np.full(d, est.p - est.q)
    H[0] = est.p + (d - 1) * est.q
    X = np.fft.fft(est.counts / est.n) / H
    x = np.fft.ifft(X).real
    N = noise_power(est) / (est.p - est.q) ** 2
    w = np.where(np.arange(d) == 0, 0.0, N / np.maximum(np.abs(X) ** 2, 1e-300) / d)
    ang = 2 * np.pi * np.outer(np.arange(d), np.arange(d)) / d
    L = np.vstack([np.sqrt(w)[:, None] * np.cos(ang), np.sqrt(w)[:, None] * np.sin(ang)])
    sol = ldpopt.Problem(est, lambda f, e: cp.sum_squares(f - x) + cp.sum_squares(L @ f), [Simplex()]).solve(progress=False)
    if sol.status != "optimal":
        raise RuntimeError(f"Wiener posterior on the simplex not certified: {sol.status} {sol.message}")
    return sol.f


def run_method(name: str, est) -> np.ndarray:
    import ldpopt

    if name == "pen-cls":
        return pen_cls(est)[0]
    if name == "ems":
        return ems_grr(est)
    if name == "dw-posterior":
        return dw_posterior(est)
    return ldpopt.postprocess(est, name)


def compare(quick: bool, reps: int, epsilons) -> list[dict]:
    from ldpopt import oracles

    rows = []
    for dname, (kind, counts) in datasets_(quick).items():
        f = counts / counts.sum()
        B = bands(f)
        for eps in epsilons:
            orc = oracles.get("grr", eps, f.size)
            err = {m: {b: [] for b in ("all", *BANDS)} for m in METHODS}
            secs = dict.fromkeys(METHODS, 0.0)
            for r in range(reps):
                est = orc.simulate(counts, rng=np.random.default_rng([7, r, int(eps * 10)])).as_ordered()
                for m in METHODS:
                    t = time.perf_counter()
                    out = run_method(m, est)
                    secs[m] += time.perf_counter() - t
                    sq = (out - f) ** 2
                    err[m]["all"].append(float(sq.mean()))
                    for b, idx in B.items():
                        err[m][b].append(float(sq[idx].mean()))
            for m in METHODS:
                row = {"dataset": dname, "kind": kind, "d": int(f.size), "n": int(counts.sum()), "epsilon": eps,
                       "method": m, "seconds_per_call": secs[m] / reps}
                for b, v in err[m].items():
                    v = np.asarray(v)
                    row[f"mse_{b}"] = float(v.mean())
                    row[f"se_{b}"] = float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan")
                rows.append(row)
            print(f"{dname} eps={eps}: " + ", ".join(f"{m} {err[m]['all'] and np.mean(err[m]['all']):.2e}"
                                                   for m in METHODS), file=sys.stderr)
    return rows


def coverage(quick: bool, reps: int, level: float = 0.9) -> list[dict]:
    import ldpopt
    from ldpopt import oracles
    from ldpopt.datasets.synthetic import beta_probabilities, zipf_probabilities
    from ldpopt.methods.shrink import eb_interval
    from ldpopt.uncertainty import bootstrap

    gen = np.random.default_rng(11)
    data = {"zipf-64": gen.multinomial(100_000, zipf_probabilities(64, 1.5)),
            "beta-5-2-64": gen.multinomial(100_000, beta_probabilities(64, 5.0, 2.0))}
    settings = [("grr", 1.0)]
    resamples = 60 if quick else 100
    rows = []
    for dname, counts in data.items():
        f = counts / counts.sum()
        B = bands(f)
        for oname, eps in settings:
            orc = oracles.get(oname, eps, f.size)
            acc: dict = {}
            for r in range(reps):
                est = orc.simulate(counts, rng=np.random.default_rng([13, r]))
                lo, hi = eb_interval(est, level)
                pt = ldpopt.postprocess(est, "eb-shrink")
                acc.setdefault(("eb-shrink", "eb-posterior (Morris)"), []).append((pt, lo, hi))
                for m in ("eb-shrink", "power"):
                    u = bootstrap(est, m, level, n_resamples=resamples, rng=r, boundary=None)
                    acc.setdefault((m, f"bootstrap ({u.interval}, own)"), []).append((u.values, u.lo, u.hi))
            for (m, interval), trips in acc.items():
                P = np.stack([t[0] for t in trips])
                inside = np.stack([(t[1] <= f) & (f <= t[2]) for t in trips])
                row = {"dataset": dname, "oracle": oname, "epsilon": eps, "method": m, "interval": interval,
                       "level": level, "reps": reps}
                for b, idx in {"all": np.arange(f.size), **B}.items():
                    row[f"bias_{b}"] = float((P[:, idx] - f[idx]).mean())
                    row[f"mse_{b}"] = float(((P[:, idx] - f[idx]) ** 2).mean())
                    row[f"coverage_{b}"] = float(inside[:, idx].mean())
                rows.append(row)
            print(f"coverage {dname} {oname}: done", file=sys.stderr)
    return rows


_ANCHOR_SCRIPT = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import deconvolution_ldp as A
job = json.load(open(sys.argv[2]))
out = []
for j in job:
    p, q, d, n = j["p"], j["q"], j["d"], j["n"]
    g = np.asarray(j["counts"], float) / n
    h = np.full(d, q); h[0] = p
    psd = A.get_est_noise_psd(p, q, d, n)
    r = {"dw": A.direct_wiener(h, g, psd).tolist(), "iiw": A.improved_iterative_wiener(h, g, psd, 5).tolist()}
    seeded = np.random.default_rng
    A.np.random.default_rng = lambda *a: seeded(j["seed"])
    try:
        r["amrp"] = A.average_multiple_random_permuted(h, g, psd, 10).tolist()
    finally:
        A.np.random.default_rng = seeded
    out.append(r)
json.dump(out, open(sys.argv[3], "w"))
"""


def anchor(py: str, src: str, quick: bool) -> list[dict]:
    import ldpopt
    from ldpopt import oracles

    cases = []
    for dname, (kind, counts) in datasets_(quick).items():
        for oname in ("grr", "oue"):
            for eps in ((1.0,) if quick else (0.5, 2.0)):
                est = oracles.get(oname, eps, counts.size).simulate(counts, rng=np.random.default_rng(5)).as_ordered()
                cases.append((dname, oname, eps, est))
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "a.py").write_text(_ANCHOR_SCRIPT)
        (t / "job.json").write_text(json.dumps([{"p": e.p, "q": e.q, "d": e.d, "n": e.n, "seed": 0,
                                                 "counts": e.counts.tolist()} for *_, e in cases]))
        subprocess.run([py, str(t / "a.py"), src, str(t / "job.json"), str(t / "out.json")], check=True)
        theirs = json.loads((t / "out.json").read_text())
    rows = []
    for (dname, oname, eps, est), ref in zip(cases, theirs):
        mine = {"dw": ldpopt.postprocess(est, "dw"), "iiw": ldpopt.postprocess(est, "iiw", iterations=5),
                "amrp": ldpopt.postprocess(est, "amrp", permutations=10, rng=np.random.default_rng(0))}
        row = {"dataset": dname, "oracle": oname, "epsilon": eps, "d": est.d}
        for m, v in mine.items():
            a = np.asarray(ref[m])
            row[f"max_abs_{m}"] = float(np.max(np.abs(v - a))) if np.all(np.isfinite(a)) else float("nan")
            row[f"scale_{m}"] = float(np.max(np.abs(a)))
        rows.append(row)
    return rows


def markdown(doc: dict) -> str:
    lines = ["# Ordered domains (bench_ordered.py)", "", f"`{doc['command']}`", "",
             "## MSE per band (GRR; mean ± SE over repetitions)", "",
             "| data | kind | ε | method | all | head | mid | tail | s/call |", "|---|---|---|---|---|---|---|---|---|"]
    for r in doc["compare"]:
        cells = [f"{r[f'mse_{b}']:.2e} ± {r[f'se_{b}']:.1e}" for b in ("all", *BANDS)]
        lines.append(f"| {r['dataset']} | {r['kind']} | {r['epsilon']:g} | {r['method']} | " + " | ".join(cells)
                     + f" | {r['seconds_per_call']:.3f} |")
    lines += ["", "## Empirical-Bayes: bias and coverage per band", "",
              "| data | oracle | method | interval | cov all | cov head | cov mid | cov tail | bias head | bias tail |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["coverage"]:
        lines.append(f"| {r['dataset']} | {r['oracle']} | {r['method']} | {r['interval']} | "
                     + " | ".join(f"{r[f'coverage_{b}']:.3f}" for b in ("all", *BANDS))
                     + f" | {r['bias_head']:.2e} | {r['bias_tail']:.2e} |")
    lines += ["", "## Conformance with the authors' code (max |ldpopt − authors|)", ""]
    if isinstance(doc["anchor"], str):
        lines.append(doc["anchor"])
    else:
        lines += ["| data | oracle | ε | DW | IIW | AMRP |", "|---|---|---|---|---|---|"]
        for r in doc["anchor"]:
            lines.append(f"| {r['dataset']} | {r['oracle']} | {r['epsilon']:g} | {r['max_abs_dw']:.1e} | "
                         f"{r['max_abs_iiw']:.1e} | {r['max_abs_amrp']:.1e} |")
    return "\n".join(lines) + "\n"


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20, help="repetitions per setting (default 20)")
    ap.add_argument("--anchor-python", default=None, help="a Python with numpy for the authors' code")
    ap.add_argument("--anchor-src", default=None, help="folder holding the authors' deconvolution_ldp.py")
    return ap


def run(quick: bool = False, **opts) -> dict:
    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    reps = 3 if quick and "reps" not in opts else a.reps
    epsilons = (1.0,) if quick else (0.5, 1.0, 2.0)
    env = H.anchor_env(a)
    doc = {"setting": {"reps": reps, "epsilons": list(epsilons), "methods": list(METHODS), "bands": list(BANDS)},
           "compare": compare(quick, reps, epsilons),
           "coverage": coverage(quick, reps),
           "anchor": anchor(*env, quick) if env else H.ANCHOR_NOT_RUN}
    out = H.save("ordered", a, doc)
    (H.results_dir(a) / "ordered.md").write_text(markdown(out))
    return out


if __name__ == "__main__":
    H.cli(_parser(), run)
