"""Apple's sketches: ldpopt's CMS / HCMS aggregators against pure-ldp 1.2.0's ``CMSServer`` on the
same reports, side by side in one process, CPU seconds (process_time; the machine is shared).

The reports are drawn once with ldpopt's client and handed to each side in its own format (pure-ldp:
its list of per-user tuples; ldpopt: arrays). Three timings per sketch:

* ``peer_s``: pure-ldp's server, ``aggregate`` per report then ``estimate`` of every one of the d items;
* ``ldpopt_s``: ldpopt's :mod:`ldpopt.interop.pure_ldp_sketch` reading the same list (the list → array
  conversion is Python work per report, the format's) then ``aggregate`` + ``estimate``;
* ``ldpopt_arrays_s``: ldpopt's ``aggregate`` + ``estimate`` on the arrays its own client returns.

The family table h_l(v) (k·d calls of pure-ldp's hash, once per family) is built before the clocks
start and timed separately (``table_s``). Estimates are checked equal (max |Δ| relative to n).

    PYTHONPATH=. python benchmarks/bench_sketches.py [--quick]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402
from ldpopt.interop import pure_ldp_sketch as P  # noqa: E402


def _clock(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def one(hadamard: bool, eps: float, n: int, d: int, k: int, m: int) -> dict:
    server = P.peer_server(eps, k, m, hadamard)
    buckets, t_table = _clock(lambda: P.peer_buckets(server.get_hash_funcs(), range(1, d + 1)))
    orc = (P.HCMS if hadamard else P.CMS)(eps, d, m=m, buckets=buckets)
    f = H.zipf_counts(d, n)
    rng = np.random.default_rng(1)
    values = np.repeat(np.arange(d), f)
    reports = orc.perturb(values, rng)
    if hadamard:
        peer_list = [(int(y), int(j), int(l)) for j, l, y in reports]
    else:
        j, bits = reports
        peer_list = list(zip(np.where(bits, 1, -1), j.tolist()))

    def peer():
        for r in peer_list:
            server.aggregate(r)
        return np.array([server.estimate(x, suppress_warnings=True) for x in range(1, d + 1)])

    read = P.read_hcms if hadamard else P.read_cms
    theirs, t_peer = _clock(peer)
    (_, est), t_read = _clock(lambda: read(peer_list, eps, m, buckets))
    est2, t_arr = _clock(lambda: orc.estimate(orc.aggregate(reports), n))
    row = {"sketch": "hcms" if hadamard else "cms", "epsilon": eps, "n": n, "d": d, "k": k, "m": m,
           "peer_s": t_peer, "ldpopt_s": t_read, "ldpopt_arrays_s": t_arr, "table_s": t_table,
           "speedup_list": t_peer / t_read, "speedup_arrays": t_peer / t_arr,
           "max_abs_diff_over_n": float(np.max(np.abs(est.f_tilde * n - theirs)) / n),
           "same_as_arrays": bool(np.array_equal(est.f_tilde, est2.f_tilde))}
    print(f"{row['sketch']}: n={n:,} d={d} k={k} m={m}: pure-ldp {t_peer:.2f} s, ldpopt from its list "
          f"{t_read:.3f} s ({row['speedup_list']:.0f}×), ldpopt on arrays {t_arr:.4f} s "
          f"({row['speedup_arrays']:.0f}×); max |Δ|/n = {row['max_abs_diff_over_n']:.1e}")
    return row


def run(quick: bool = False, **opts) -> dict:
    args = H.options(H.parser(__doc__), "bench_sketches.py", quick, opts)
    try:
        import pure_ldp  # noqa: F401
    except ImportError:
        print("pure-ldp is not installed in this interpreter (pip install '.[peers]'): nothing to compare")
        return H.save("sketches", args, {"rows": [], "skipped": "pure-ldp not installed"})
    n, d, k, m = (3000, 64, 16, 64) if args.quick else (200_000, 1000, 64, 256)
    rows = [one(h, 2.0, n, d, k, m) for h in (False, True)]
    return H.save("sketches", args, {"rows": rows})


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
