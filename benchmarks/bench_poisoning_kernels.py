"""Per-report OLH work of the poisoning experiment: the numpy reference against the fused CPU kernels
(``ldpopt.kernels.cpu_reports``), side by side in one process, on one ``ext_poisoning`` OLH setting.

Setting: Zipf(a = 1.5) with n = 10⁶ genuine users over d = 1,024 (``_harness.zipf_counts``),
β = 0.05 (m = 52,632 fake users), 10 random targets, the maximal gain attack, ε ∈ {0.5, 4} (g = 3
and 56). Timed, each on ``device="numpy"`` and ``device="cpu"``: the fake users' key search
(``robust.craft_reports``, 1,000 keys × 10 targets hashed per fake user), the support size of every
report (``robust.support_sizes``, N·d hashes) and the suspect-support score (``robust.suspect_scores``,
10 suspects). Every pair of outputs is checked equal. CPU time (``time.process_time``, all threads
of this process) and wall time, best of ``--repeats``; the machine is shared.

    python benchmarks/bench_poisoning_kernels.py [--quick] [--repeats K]

``--quick``: n = 50,000, ε = 1, one repeat. Writes ``results/poisoning_kernels.json``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402

D, BETA, R_TARGETS = 1024, 0.05, 10


def _best(fn, repeats: int):
    """(the output, the least CPU seconds, the least wall seconds) over ``repeats`` calls."""
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = H.cpu_clock(), time.perf_counter()
        out = fn()
        cpu.append(H.cpu_clock() - c0)
        wall.append(time.perf_counter() - w0)
    return out, min(cpu), min(wall)


def _setting(n: int, eps: float, repeats: int) -> list[dict]:
    from ldpopt import oracles, robust

    o = oracles.get("olh", epsilon=eps, d=D)
    gen = np.random.default_rng(7)
    tc = H.zipf_counts(D, n)
    m = robust.fake_user_count(n, BETA)
    t = np.sort(gen.choice(D, R_TARGETS, replace=False))
    genuine = o.perturb(np.repeat(np.arange(D), tc), gen)
    seed = int(gen.integers(1 << 31))
    # warm-up: the kernels compile once per environment (cached on disk)
    robust.craft_reports(o, "mga", t, 4, seed, device="cpu")
    robust.support_sizes(o, genuine[:4], device="cpu")
    jobs = {"mga key search": lambda dev: robust.craft_reports(o, "mga", t, m, seed, device=dev)}
    fake = robust.craft_reports(o, "mga", t, m, seed, device="cpu")
    reports = np.concatenate([genuine, fake])
    sus = robust.suspects(o.estimate(o.aggregate(reports), reports.shape[0]).f_tilde, R_TARGETS)
    jobs["support sizes"] = lambda dev: robust.support_sizes(o, reports, device=dev)
    jobs["suspect scores"] = lambda dev: robust.suspect_scores(o, reports, sus, device=dev)
    rows = []
    for what, fn in jobs.items():
        ref, c_np, w_np = _best(lambda: fn("numpy"), repeats)
        got, c_k, w_k = _best(lambda: fn("cpu"), repeats)
        rows.append({"what": what, "n": n, "fake": m, "d": D, "epsilon": eps, "g": o.g, "equal": bool(np.array_equal(ref, got)),
                     "cpu_s_numpy": c_np, "cpu_s_kernel": c_k, "wall_s_numpy": w_np, "wall_s_kernel": w_k,
                     "cpu_ratio": c_np / c_k})
        print(f"eps={eps:g} {what:15} numpy {c_np:7.2f} s CPU, kernel {c_k:6.2f} s CPU: {c_np / c_k:5.1f}x, "
              f"equal {rows[-1]['equal']}", flush=True)
    return rows


def run(quick: bool = False, **opts) -> dict:
    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    from ldpopt.kernels import cpu

    n, epsilons, repeats = (50_000, (1.0,), 1) if a.quick else (1_000_000, (0.5, 4.0), a.repeats)
    rows = [r for eps in epsilons for r in _setting(n, eps, repeats)]
    if not all(r["equal"] for r in rows):
        raise SystemExit("bench_poisoning_kernels: a kernel's output differs from the numpy reference")
    return H.save("poisoning_kernels", a, {"setting": {"beta": BETA, "targets": R_TARGETS, "threads": cpu.threads(),
                                                       "repeats": repeats}, "rows": rows})


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=2, help="timed runs per device, the best kept (default 2)")
    return ap


if __name__ == "__main__":
    H.cli(_parser(), run)
