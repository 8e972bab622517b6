"""Sketch, Bloom-filter and heavy-hitter aggregators: ldpopt against pure-ldp 1.2.0's servers (CMS,
HCMS, RAPPOR, PEM) on the same reports, side by side in one process, CPU seconds (process_time, all
threads; the machine is shared).

The reports are drawn once and handed to each side in its own format: pure-ldp's list of per-user
tuples, ldpopt's arrays. CMS, HCMS and RAPPOR reports come from ldpopt's client with the peer's own
hash family (for RAPPOR, ldpopt's reading of pure-ldp's one-sided client,
:mod:`ldpopt.interop.pure_ldp_rappor`), PEM's from pure-ldp's ``PEMClient``. Per oracle:

* ``peer_s``: pure-ldp's server, ``aggregate`` per report (``peer_aggregate_s``) then the estimates
  (``peer_estimate_s``: ``estimate`` of each of the d items — RAPPOR's regression runs there — or
  PEM's ``find_heavy_hitters``);
* ``ldpopt_list_s``: ldpopt's reader on the peer's list (``read_cms``, ``read_hcms``, ``read_rappor``,
  ``read_pem``), of which ``list_convert_s`` is the list → array conversion alone, the part the
  peer's format imposes (Python objects per report);
* ``ldpopt_arrays_s``: ldpopt's aggregate + estimate on the arrays (CMS/HCMS/RAPPOR: the sketch on
  ``device="cpu"``, the fused kernels of :mod:`ldpopt.kernels.sketch`, then the support counts and
  the Estimate; RAPPOR also the server's regression, :func:`~ldpopt.interop.pure_ldp_rappor.server_estimates`;
  PEM: ``read_pem`` on the (n, 3) array of (y, seed, group)).

Each ldpopt timing is the median of 5 runs after one warm-up call (Numba loads its cached kernels on
the first call of a process; the reader and the conversion alone run alternately); each pure-ldp
timing is one run. The peer family's table (k·d calls of
pure-ldp's hash, once per family) is built before the clocks start (``table_s``). The estimates are
compared: ``max_abs_diff_over_n`` (CMS/HCMS counts, RAPPOR estimates, over n) and, for PEM, the same
items and count estimates, with ``tie_at_kth``: whether a round's k-th estimate was tied with one left
out (there the two keep different prefixes by their tie rules, and the found items may differ).

Over a grid of settings (``grid``): CMS and HCMS at d ∈ {100, 1000, 5000} × m ∈ {256, 512} (k = 64,
ε = 2; pure-ldp's CMS server has no default k or m), RAPPOR at d ∈ {100, 1000, 5000} × (f, T) ∈
{(0.5, 128), (0.25, 256)} × the server's default regression (ElasticNet, ``lasso=False``) and its
LASSO selection (``lasso=True``; above d = 1000 the server always selects, so both are one case),
with the server's defaults otherwise (8 cohorts, 2 hashes, ``reg_const`` = 0.025·f), n = 100,000;
PEM at string lengths m ∈ {10, 12, 14} bits (domains 2^m, from 1,024 to 16,384 strings) × ε ∈ {1, 4},
n = 20,000 (``bench_heavy``'s Zipf users), top-k = 8, pure-ldp's start = 2 and fragment = 2 bits
with the server's defaults otherwise (its OLH frequency oracle, ``estimator_norm`` = 0; PEM itself
has no default ε, m or fragment). Below m = 10 the 300-string support does not fit in 2^m.
For each RAPPOR case the peer's scikit-learn fits are recorded (``peer_fits``: estimator,
iterations run ``n_iter``, ``max_iter``, ``converged`` = no ConvergenceWarning), and
``peer_converged`` says whether every fit converged. The headline ratio is from the peer's report
lists (``speedup_list``: what a pure-ldp user holds); ``speedup_arrays`` starts from ldpopt's arrays.
RAPPOR's reproduction to rounding (``max_rel_diff``) is measured with the scikit-learn version
recorded in ``versions`` (the peer's coordinate descent is what ldpopt reproduces: another release
of scikit-learn may stop it elsewhere).

    PYTHONPATH=. python benchmarks/bench_sketches.py [--quick]
"""

from __future__ import annotations

import random
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402
from ldpopt.interop import pure_ldp_rappor as R  # noqa: E402
from ldpopt.interop import pure_ldp_sketch as P  # noqa: E402

_REPEATS = 5


def _clock(fn):
    t = H.cpu_clock()
    out = fn()
    return out, H.cpu_clock() - t


def _median(fn) -> tuple[object, float]:
    """fn's result and its median CPU time over _REPEATS runs, after one untimed warm-up run."""
    out = fn()
    times = []
    for _ in range(_REPEATS):
        out, t = _clock(fn)
        times.append(t)
    return out, statistics.median(times)


def _medians(read, convert) -> tuple[object, float, float]:
    """The reader's result, its median CPU time and the conversion's, the two run alternately (one
    warm-up each, then _REPEATS pairs), so the machine's load drifts over both alike."""
    out = read()
    convert()
    a, b = [], []
    for _ in range(_REPEATS):
        out, t = _clock(read)
        a.append(t)
        b.append(_clock(convert)[1])
    return out, statistics.median(a), statistics.median(b)


def _row(name: str, params: dict, peer_agg: float, peer_est: float, t_list: float, t_conv: float, t_arr: float,
         **extra) -> dict:
    peer = peer_agg + peer_est
    row = {"oracle": name, **params, "peer_s": peer, "peer_aggregate_s": peer_agg, "peer_estimate_s": peer_est,
           "ldpopt_list_s": t_list, "list_convert_s": t_conv, "ldpopt_arrays_s": t_arr,
           "speedup_list": peer / t_list, "speedup_arrays": peer / t_arr,
           **extra}
    print(f"{name}: {params}: pure-ldp {peer:.3f} s (aggregate {peer_agg:.3f}, estimate {peer_est:.3f}) | ldpopt from "
          f"its list {t_list:.4f} s ({row['speedup_list']:.0f}×; conversion {t_conv:.4f} s) | ldpopt on arrays "
          f"{t_arr:.4f} s ({row['speedup_arrays']:.0f}×) | {extra}", flush=True)
    return row


def sketch_row(hadamard: bool, eps: float, n: int, d: int, k: int, m: int) -> dict:
    server = P.peer_server(eps, k, m, hadamard)
    buckets, t_table = _clock(lambda: P.peer_buckets(server.get_hash_funcs(), range(1, d + 1)))
    orc = (P.HCMS if hadamard else P.CMS)(eps, d, m=m, buckets=buckets)
    values = np.repeat(np.arange(d), H.zipf_counts(d, n))
    reports = orc.perturb(values, np.random.default_rng(1))
    if hadamard:
        peer_list = [(int(y), int(j), int(l)) for j, l, y in reports]
    else:
        j, bits = reports
        peer_list = list(zip(np.where(bits, 1, -1), j.tolist()))

    def aggregate():
        for r in peer_list:
            server.aggregate(r)

    _, t_agg = _clock(aggregate)
    theirs, t_est = _clock(lambda: np.array([server.estimate(x, suppress_warnings=True) for x in range(1, d + 1)]))
    read = P.read_hcms if hadamard else P.read_cms
    (_, est), t_list, t_conv = _medians(lambda: read(peer_list, eps, m, buckets, device="cpu"),
                                        lambda: P.hcms_array(peer_list) if hadamard else P.cms_arrays(peer_list, m))
    est2, t_arr = _median(lambda: orc.estimate(orc.aggregate(reports, device="cpu"), n))
    return _row("hcms" if hadamard else "cms", {"epsilon": eps, "n": n, "d": d, "k": k, "m": m}, t_agg, t_est,
                t_list, t_conv, t_arr, table_s=t_table,
                max_abs_diff_over_n=float(np.max(np.abs(est.f_tilde * n - theirs)) / n),
                same_as_arrays=bool(np.array_equal(est.f_tilde, est2.f_tilde)))


class _Fits:
    """Records every scikit-learn fit pure-ldp's RAPPOR server makes (its module's ``ElasticNet`` and
    ``Lasso`` replaced by subclasses that note ``n_iter_``, ``max_iter`` and whether the fit warned
    that it did not converge)."""

    def __init__(self):
        from pure_ldp.frequency_oracles.rappor import rappor_server as mod

        self.mod, self.log = mod, []
        self.saved = {name: getattr(mod, name) for name in ("ElasticNet", "Lasso")}

    def __enter__(self):
        log = self.log

        def recording(base):
            class Recorded(base):
                def fit(self, X, y, *a, **kw):
                    from sklearn.exceptions import ConvergenceWarning

                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        out = super().fit(X, y, *a, **kw)
                    log.append({"estimator": base.__name__, "n_iter": int(np.max(self.n_iter_)),
                                "max_iter": int(self.max_iter), "features": int(X.shape[1]),
                                "converged": not any(issubclass(w.category, ConvergenceWarning) for w in caught)})
                    return out
            Recorded.__name__ = base.__name__
            return Recorded

        for name, base in self.saved.items():
            setattr(self.mod, name, recording(base))
        return self

    def __exit__(self, *exc):
        for name, base in self.saved.items():
            setattr(self.mod, name, base)


def rappor_row(f: float, n: int, d: int, T: int, h: int, C: int, lasso: bool = False) -> dict:
    random.seed(0)
    server = R.peer_server(f, T, h, d, C, lasso=lasso)
    pos, t_table = _clock(lambda: R.peer_positions(server.get_hash_funcs(), d))
    orc = R.peer_oracle(f, T, pos)
    values = np.repeat(np.arange(d), H.zipf_counts(d, n))
    cohort, bits = orc.perturb(values, np.random.default_rng(1))
    peer_list = list(zip(bits.astype(np.uint8).tolist(), cohort.tolist()))

    def aggregate():
        for r in peer_list:
            server.aggregate(r)

    _, t_agg = _clock(aggregate)
    with _Fits() as fits:
        theirs, t_est = _clock(lambda: np.array([server.estimate(x, suppress_warnings=True) for x in range(1, d + 1)]))
    res, t_list, t_conv = _medians(lambda: R.read_rappor(peer_list, f, T, pos, lasso=lasso, device="cpu"),
                                   lambda: R.rappor_arrays(peer_list, T))

    def arrays():
        Y, N = orc.sketch((cohort, bits), "cpu")
        return (R.server_estimates(orc, Y, N, lasso=lasso, device="cpu"),
                orc.estimate(orc.counts_from_sketch(Y, N), n))

    (server2, _), t_arr = _median(arrays)
    (Y, N), t_sketch = _median(lambda: orc.sketch((cohort, bits), "cpu"))
    return _row("rappor", {"f": f, "n": n, "d": d, "num_bits": T, "num_hashes": h, "cohorts": C,
                           "lasso": bool(lasso or d > 1000)}, t_agg, t_est,
                t_list, t_conv, t_arr, table_s=t_table, ldpopt_sketch_s=t_sketch, peer_fits=fits.log,
                peer_converged=all(x["converged"] for x in fits.log),
                max_abs_diff_over_n=float(np.max(np.abs(res.server - theirs)) / n),
                max_rel_diff=float(np.max(np.abs(res.server - theirs)) / np.max(np.abs(theirs))),
                same_as_arrays=bool(np.array_equal(res.server, server2)))


def pem_row(n: int, m: int, eps: float = 4.0, start: int = 2, frag: int = 2, k: int = 8) -> dict:
    from bench_heavy import _users
    from pure_ldp.heavy_hitters.prefix_extending import PEMClient, PEMServer

    from ldpopt.interop.pure_ldp_hh import parse_pem_reports, peer_frequencies, read_pem

    codes, counts = _users(n, m)
    strings = [format(int(v), f"0{m}b") for v in np.repeat(codes, counts)]
    np.random.seed(0)
    random.seed(0)
    cl = PEMClient(epsilon=eps, start_length=start, max_string_length=m, fragment_length=frag)
    sv = PEMServer(epsilon=eps, start_length=start, max_string_length=m, fragment_length=frag)
    reports = [cl.privatise(s) for s in strings]

    def aggregate():
        for r in reports:
            sv.aggregate(r)

    _, t_agg = _clock(aggregate)
    (hh, fr), t_find = _clock(lambda: sv.find_heavy_hitters(k=k))
    opts = dict(epsilon=eps, start_length=start, max_string_length=m, fragment_length=frag, k=k)
    G = -(-(m - start) // frag)
    res, t_list, t_conv = _medians(lambda: read_pem(reports, **opts),
                                   lambda: np.column_stack(parse_pem_reports(reports, G)))
    arr = np.column_stack(parse_pem_reports(reports, G))
    res2, t_arr = _median(lambda: read_pem(arr, **opts))
    same = {int(x, 2) for x in hh} == set(res.items.tolist()) and bool(
        np.allclose(np.sort(peer_frequencies(res)), np.sort(np.array(fr, float))))
    return _row("pem", {"epsilon": eps, "n": n, "m_bits": m, "k": k, "start_bits": start, "step_bits": frag},
                t_agg, t_find, t_list, t_conv, t_arr,
                same_items_and_estimates=same, tie_at_kth=_tie_at_kth(res),
                same_as_arrays=bool(np.array_equal(res.items, res2.items)))


def _tie_at_kth(res) -> bool:
    """Whether a round of a PEM search (the last included: it keeps the top-k found) had the k-th kept
    estimate tied (rtol 1e-12) with a candidate left out: there pure-ldp (``Counter.most_common``) and
    ldpopt (smaller prefix first) may keep different prefixes, so the found items may differ without
    either being wrong (:mod:`ldpopt.interop.pure_ldp_hh`)."""
    for lv in res.levels:
        f = lv.f_tilde
        out = np.setdiff1d(np.arange(f.size), lv.kept)
        if out.size and np.isclose(f[lv.kept].min(), f[out].max(), rtol=1e-12, atol=0.0):
            return True
    return False


def run(quick: bool = False, **opts) -> dict:
    args = H.options(H.parser(__doc__), "bench_sketches.py", quick, opts)
    try:
        import pure_ldp  # noqa: F401
    except ImportError:
        print("pure-ldp is not installed in this interpreter (pip install '.[peers]'): nothing to compare")
        return H.save("sketches", args, {"rows": [], "skipped": "pure-ldp not installed"})
    import sklearn

    if args.quick:
        n, ds, k, ms, fts, C = 3000, (64, 128, 256), 16, (64,), ((0.5, 32),), 4
        pem_n, pem_ms = 2000, (10,)
    else:
        n, ds, k, ms, fts, C = 100_000, (100, 1000, 5000), 64, (256, 512), ((0.5, 128), (0.25, 256)), 8
        pem_n, pem_ms = 20_000, (10, 12, 14)
    rows = [sketch_row(h, 2.0, n, d, k, m) for h in (False, True) for d in ds for m in ms]
    rows += [rappor_row(f, n, d, T, 2, C, lasso) for d in ds for f, T in fts
             for lasso in ((False, True) if d <= 1000 else (True,))]
    rows += [pem_row(pem_n, m, eps) for m in pem_ms for eps in (1.0, 4.0)]
    versions = {"pure-ldp": _version("pure-ldp"), "scikit-learn": sklearn.__version__, "numpy": np.__version__}
    return H.save("sketches", args, {"versions": versions, "rows": rows})


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
