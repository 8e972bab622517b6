"""``ldpopt.choose`` at d = 42,178 with the closed forms vs the extended candidates.

Side by side in one process, per oracle (OUE, GRR, OLH; Zipf(1.5), n = 10⁶, ε = 1, fast-path estimate,
the data of ``bench_uncertainty.py``): ``choose(est, "full", n_repeats=20)`` with
``methods="closed-form"`` (the 9 O(d) closed forms, the default) and ``methods="extended"`` (+ Power,
PowerNS, EM: one call per repetition each). Wall and CPU time of one call; the 1-min load average at
the start (the 2-core box is shared). The target is < 30 s for the closed forms.

``python benchmarks/bench_choose_candidates.py [--quick]`` writes choose_candidates.{json,md}
(``--quick``: d = 128, n = 10⁴, 2 repeats, under results/quick/).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

ORACLES = ("oue", "grr", "olh")


def run(quick: bool = False, **opts) -> dict:
    import ldpopt

    a = H.options(H.parser(__doc__), "bench_choose_candidates.py", quick, opts)
    d, n = (128, 10**4) if a.quick else (42_178, 10**6)
    rows = []
    for oracle in ORACLES:
        est = ldpopt.oracles.get(oracle, 1.0, d).simulate(H.zipf_counts(d, n), 7)
        row = {"oracle": oracle, "d": d, "n": n, "load": os.getloadavg()[0]}
        for cand in ("closed-form", "extended"):
            c, wall, cpu = H.timed(lambda: ldpopt.choose(est, "full", methods=cand, n_repeats=2 if a.quick else 20, rng=3))
            row |= {f"{cand}_wall": wall, f"{cand}_cpu": cpu, f"{cand}_best": c.best,
                    f"{cand}_ranking": list(c.table.index)}
        rows.append(row)
        print(f"  {oracle}: closed forms {H.fmt_seconds(row['closed-form_cpu'])} CPU, extended "
              f"{H.fmt_seconds(row['extended_cpu'])} CPU (load {row['load']:.1f})", flush=True)
    doc = H.save("choose_candidates", a, {"rows": rows})
    env = doc["machine"]
    md = [f"Command: `{a.command}`  ", f"Machine: {env['cpu']}, {env['cores']} cores; commit {env['git_commit'][:10]}; "
          f"{env['date']}", "",
          f"Zipf(1.5), d = {d:,}, n = {n:.0e}, ε = 1; `ldpopt.choose(est, 'full', n_repeats=20)`, wall (CPU) of one "
          "call; load = 1-min load average at the start.", "",
          "| oracle | load | closed forms (9) | extended (+ power, power-ns, em) | best (closed / extended) |",
          "|---|---|---|---|---|",
          *[f"| {r['oracle'].upper()} | {r['load']:.1f} | {H.fmt_seconds(r['closed-form_wall'])} "
            f"({H.fmt_seconds(r['closed-form_cpu'])}) | {H.fmt_seconds(r['extended_wall'])} "
            f"({H.fmt_seconds(r['extended_cpu'])}) | {r['closed-form_best']} / {r['extended_best']} |" for r in rows], ""]
    (H.results_dir(a) / "choose_candidates.md").write_text("\n".join(md))
    print("\n".join(md))
    return doc


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
