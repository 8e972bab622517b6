"""Heavy-hitter discovery (PEM): ldpopt against pure-ldp 1.2.0 on the same users, side by side in one
process, CPU seconds (process_time; the reference machine is shared).

Users: n strings of m bits, a Zipf law (s = 1.3) over 300 random m-bit strings (fixed seed). PEM with
pure-ldp's parameters start = 2, fragment = 2 bits (G = ⌈(m − 2)/2⌉ groups), top-k = 8, ε = 4, OLH.
Measured:

* pure-ldp: ``PEMClient.privatise`` per user, ``PEMServer.aggregate`` per report (its LH server
  hashes every prefix of the group's 2^(s_j) for every user) and ``find_heavy_hitters(k)``;
* ldpopt on pure-ldp's reports: :func:`ldpopt.interop.pure_ldp_hh.read_pem` (the same search, support
  counts of the candidates only) — the server-side ratio, and whether the items are the same;
* ldpopt's own PEM (:func:`ldpopt.heavy.pem`) on the same users: the real protocol (``exact=True``:
  every user's group draw, OLH client and aggregator) and the exact-in-law fast path — the
  end-to-end ratios against pure-ldp's client + server; F1 of each against the true top-k.

    PYTHONPATH=. python benchmarks/bench_heavy.py [--quick]
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402
from ldpopt import heavy  # noqa: E402
from ldpopt.interop.pure_ldp_hh import peer_frequencies, read_pem  # noqa: E402


def _users(n: int, m: int, seed: int = 27):
    rng = np.random.default_rng(seed)
    support = rng.choice(1 << m, size=300, replace=False).astype(np.int64)
    p = 1.0 / np.arange(1, 301) ** 1.3
    counts = rng.multinomial(n, p / p.sum())
    return support[counts > 0], counts[counts > 0]


def run(quick: bool = False, **opts) -> dict:
    args = H.options(H.parser(__doc__), "bench_heavy.py", quick, opts)
    from pure_ldp.heavy_hitters.prefix_extending import PEMClient, PEMServer

    n, m = (3000, 10) if args.quick else (20000, 12)
    eps, start, frag, k = 4.0, 2, 2, 8
    codes, counts = _users(n, m)
    truth = heavy.true_top(codes, counts, k)
    values = np.repeat(codes, counts)
    strings = [format(int(v), f"0{m}b") for v in values]
    np.random.seed(0)
    random.seed(0)
    cl = PEMClient(epsilon=eps, start_length=start, max_string_length=m, fragment_length=frag)
    sv = PEMServer(epsilon=eps, start_length=start, max_string_length=m, fragment_length=frag)
    t0 = H.cpu_clock()
    reports = [cl.privatise(s) for s in strings]
    t1 = H.cpu_clock()
    for r in reports:
        sv.aggregate(r)
    t2 = H.cpu_clock()
    hh, fr = sv.find_heavy_hitters(k=k)
    t3 = H.cpu_clock()
    res = read_pem(reports, epsilon=eps, start_length=start, max_string_length=m, fragment_length=frag, k=k)
    t4 = H.cpu_clock()
    real = heavy.pem(codes, counts, total_bits=m, epsilon=eps, k=k, step_bits=frag, start_bits=start, rng=1,
                     exact=True)
    t5 = H.cpu_clock()
    fast = heavy.pem(codes, counts, total_bits=m, epsilon=eps, k=k, step_bits=frag, start_bits=start, rng=1)
    t6 = H.cpu_clock()
    peer_items = [int(h, 2) for h in hh]
    # tied estimates may come in another order (pure_ldp_hh's docstring): compare as sets and sorted values
    same = set(peer_items) == set(res.items.tolist()) and bool(np.allclose(peer_frequencies(res), np.array(fr, float)))
    pure_server, pure_total = (t2 - t1) + (t3 - t2), t3 - t0
    rows = {
        "n": n, "m_bits": m, "epsilon": eps, "k": k, "start_bits": start, "step_bits": frag,
        "pure_ldp_client_s": t1 - t0, "pure_ldp_aggregate_s": t2 - t1, "pure_ldp_find_s": t3 - t2,
        "ldpopt_read_pem_s": t4 - t3, "ldpopt_real_path_s": t5 - t4, "ldpopt_fast_path_s": t6 - t5,
        "server_speedup": pure_server / (t4 - t3),
        "end_to_end_speedup_real_path": pure_total / (t5 - t4),
        "end_to_end_speedup_fast_path": pure_total / (t6 - t5),
        "same_items_and_estimates_on_pure_ldp_reports": same,
        "f1_pure_ldp": heavy.precision_recall_f1(peer_items, truth)[2],
        "f1_ldpopt_real_path": heavy.precision_recall_f1(real.items, truth)[2],
        "f1_ldpopt_fast_path": heavy.precision_recall_f1(fast.items, truth)[2],
    }
    print(f"PEM n={n:,} m={m} ε={eps:g} k={k}: pure-ldp client {t1 - t0:.2f} s, aggregate {t2 - t1:.2f} s, "
          f"find {t3 - t2:.3f} s | ldpopt read_pem {t4 - t3:.4f} s (server ×{rows['server_speedup']:.0f}, "
          f"same items and estimates: {same}) | ldpopt real path {t5 - t4:.3f} s "
          f"(×{rows['end_to_end_speedup_real_path']:.0f}), fast path {t6 - t5:.4f} s "
          f"(×{rows['end_to_end_speedup_fast_path']:.0f})")
    return H.save("heavy", args, rows)


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
