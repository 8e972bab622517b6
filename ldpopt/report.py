"""The headline report that ``make run`` prints: an end-to-end demo of ldpopt, then a short
reproduction of both papers' experiments.

Notes: docs/notes/python.md, "ldpopt.report"."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import ldpopt
from ldpopt import oracles


def _zipf_counts(n: int, d: int, s: float, rng: np.random.Generator) -> np.ndarray:
    w = np.arange(1, d + 1, dtype=np.float64) ** -s
    return rng.multinomial(n, w / w.sum())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ldpopt.report", description=__doc__)
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=2020)
    ap.add_argument("--no-experiments", action="store_true", help="skip the quick reproduction")
    ap.add_argument("--out", default="results", help="where the quick runs and figures go")
    args = ap.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    true_counts = _zipf_counts(args.n, args.d, 1.5, rng)
    f = true_counts / args.n
    oue = oracles.get("oue", epsilon=args.epsilon, d=args.d)
    print(f"ldpopt {ldpopt.__version__}: OUE, ε = {args.epsilon:g}, Zipf(s=1.5), n = {args.n:,}, d = {args.d:,}")
    print(f"{'path':<28}{'time (s)':>10}{'MSE Base':>14}{'MSE Norm-Sub':>15}{'ratio':>8}")
    for label, exact in (("real (perturb + aggregate)", True), ("fast (sample_counts)", False)):
        t0 = time.perf_counter()
        est = oue.simulate(true_counts, rng, exact=exact)
        elapsed = time.perf_counter() - t0
        f_ns = ldpopt.postprocess(est, "norm-sub")
        mse_base = float(np.mean((est.f_tilde - f) ** 2))
        mse_ns = float(np.mean((f_ns - f) ** 2))
        print(f"{label:<28}{elapsed:>10.3f}{mse_base:>14.3e}{mse_ns:>15.3e}{mse_base / mse_ns:>7.1f}x")
    print(f"analytic Var[f̃_v] (Eq. 7): σ² = {oue.approx_variance(args.n):.3e}")
    if not args.no_experiments:
        _quick_reproduction(Path(args.out))
    return 0


def _quick_reproduction(out: Path, configs=None) -> None:
    """Quick-run and plot every shipped config (or ``configs``, a list of paths). A config whose
    data are not available here is skipped with one line saying why; the others still run."""
    from .datasets import DataNotFoundError
    from .experiments import run
    from .experiments.config import config_paths
    from .experiments.figures.draw import plot

    configs = config_paths() if configs is None else list(configs)
    print(f"\nquick reproduction of {len(configs)} experiments (full sweeps: ldpopt experiment run NAME)")
    skipped = 0
    for path in configs:
        t0 = time.perf_counter()
        try:
            table = run(path, quick=True, out=out, progress=False)
            assert table is not None  # run returns None only when max_tasks stops it
        except DataNotFoundError as exc:
            skipped += 1
            print(f"  {path.stem:<34}skipped: {exc}")
            continue
        figures = plot(path.stem, quick=True, root=out)
        print(f"  {path.stem:<34}{len(table):>6} rows {time.perf_counter() - t0:>6.1f} s  "
              f"{len(figures)} figure(s) in {out / (path.stem + '-quick')}")
    if skipped:
        print(f"{skipped} of {len(configs)} experiments skipped for missing data (see above)")
    print("claims and measurements of the full runs: REPRODUCTION.md")


if __name__ == "__main__":
    raise SystemExit(main())
