"""The anchors' own attack-and-collection pipeline beside ldpopt's fast path: GRR under the maximal gain
attack on the anchors' Emoji, their simulation against ldpopt's exact-in-law estimate.

The CCS 2025 code (github.com/Marvin-huoshan/MDPA_LDP, ``GRR/GRR.py`` ``GRR``) simulates every user
in a Python loop: users i < n(1 − β) are genuine and report GRR of their value, the others are fake
and report a target drawn from a random ``splits``-subset of T (``Recovery.py``'s default splits =
4, so a uniform target: the maximal gain attack on GRR). It is run here, in its own interpreter, as
``Recovery.py`` runs it: their Emoji (``datasets/emoji.npy``, n = 218,477 users over d = 1,496), β =
0.05, 10 targets drawn by ``random.sample`` per repetition; then their ``NormSub``, ``Segmented_V2``
(RSN) and ``LDP_Recover`` (η = 0.2, as hard-coded there) on the estimate. Their code draws from
Python's ``random`` and numpy's global generator, unseeded; here both are seeded per repetition
(``random.seed`` and ``np.random.seed`` with 1000·ε + repetition), the only change.

ldpopt, same setting: the genuine users are the same first users of the file, the fake users m =
round(βn_g/(1 − β)) (their m = n − ⌈n(1 − β)⌉ differs by at most one), targets drawn by ldpopt,
``robust.poisoned_estimate`` (exact in law), then the same recoveries (ldpopt's closed forms) and the
lift recovery. On the anchors' own estimates ldpopt's lift recovery is run too. Metrics: MSE over
the d values and target gain Σ_T f̂ − f_T, both against the genuine users' frequencies; mean ±
standard error over ``--reps`` repetitions (10). The two pipelines share no random numbers: their
means should agree within a few standard errors where the laws are the same.

    python benchmarks/bench_poisoning_anchor_pipeline.py --anchor-python PY --anchor-src DIR [--quick] [--reps R]

``PY``: the anchors' environment (numpy, scipy, sympy, tqdm); ``DIR``: a checkout of their repository.
``--quick``: the first 20,000 users, ε = 1, 2 repetitions. Writes ``results/poisoning_anchor_pipeline.json``.
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
import bench_poisoning_recovery as R  # noqa: E402

BETA, R_TARGETS, SPLITS = 0.05, 10, 4

# runs in the anchors' interpreter: their GRR simulation and recoveries, as Recovery.py calls them
_ANCHOR_SIDE = r"""
import sys, random, io, contextlib, numpy as np, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1])
from GRR.GRR import GRR
from post_process.LDPRecover import LDP_Recover
from post_process.Segmented_V2 import Segmented_V2
from post_process.norm_sub import NormSub
X = np.load(sys.argv[1] + "/datasets/emoji.npy")[: int(sys.argv[2])]
n, domain, ratio, splits = X.size, 1496, float(sys.argv[3]), int(sys.argv[4])
epsilons, reps = [float(e) for e in sys.argv[5].split(",")], int(sys.argv[6])
out = {k: [] for k in ("est", "targets", "norm_sub", "rsn", "ldprecover_as_called")}
for e in epsilons:
    for i in range(reps):
        random.seed(int(1000 * e) + i)
        np.random.seed(int(1000 * e) + i)
        target_set = random.sample(range(0, domain), 10)
        with contextlib.redirect_stderr(io.StringIO()):  # their tqdm bar
            est = GRR(X, ratio, domain, e, n, target_set, splits)
        out["est"].append(est / n)
        out["targets"].append(sorted(target_set))
        out["norm_sub"].append(NormSub(n, None, None).calibrate(est.copy()) / n)
        out["rsn"].append(np.asarray(Segmented_V2(est.copy(), n, e, "GRR"), dtype=float) / n)
        out["ldprecover_as_called"].append(LDP_Recover(est.copy(), 0.2, e, domain, n) / n)
np.savez(sys.argv[7], **{k: np.array(v, dtype=float) for k, v in out.items()})
"""


def _genuine(ids: np.ndarray, beta: float) -> np.ndarray:
    """Their genuine users: i < n(1 − β), as ``GRR.py`` splits them; counts over d = 1,496."""
    n = ids.size
    g = ids[: int(np.ceil(n * (1 - beta)))]
    return np.bincount(g.astype(np.int64), minlength=1496).astype(np.int64)


def _metrics(f, outs, targets) -> dict:
    mse = ((np.asarray(outs) - f) ** 2).mean(axis=1)
    gain = np.array([o[t].sum() - f[t].sum() for o, t in zip(outs, targets)])
    (m, m_se), (g, g_se) = R.mean_se(mse), R.mean_se(gain)
    return {"mse": m, "mse_se": m_se, "gain": g, "gain_se": g_se}


def run(quick: bool = False, **opts) -> dict:
    """``opts``: ``anchor_python``, ``anchor_src`` (else LDPOPT_ANCHOR_PYTHON / LDPOPT_ANCHOR_SRC),
    ``reps``, ``out``."""
    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    env = H.anchor_env(a)
    if env is None:
        print(f"bench_poisoning_anchor_pipeline: {H.ANCHOR_NOT_RUN}")
        return {"not_run": H.ANCHOR_NOT_RUN}
    py, src = env
    a.command = "python benchmarks/bench_poisoning_anchor_pipeline.py --anchor-python PY --anchor-src DIR" + \
        (" --quick" if a.quick else "") + (f" --reps {a.reps}" if a.reps != 10 else "")
    from ldpopt import oracles, robust
    from ldpopt.estimate import Estimate

    n_users = 20_000 if a.quick else 218_477
    epsilons = (1.0,) if a.quick else (0.5, 1.0, 2.0, 4.0)
    reps = 2 if a.quick else a.reps
    ids = np.load(Path(src) / "datasets" / "emoji.npy")[:n_users]
    tc = _genuine(ids, BETA)
    f = tc / tc.sum()
    with tempfile.TemporaryDirectory() as tmp:
        dst = Path(tmp) / "anchor.npz"
        w0 = time.perf_counter()
        subprocess.run([py, "-c", _ANCHOR_SIDE, src, str(n_users), str(BETA), str(SPLITS),
                        ",".join(f"{e:g}" for e in epsilons), str(reps), str(dst)], check=True)
        anchor_wall = time.perf_counter() - w0
        z = {k: v for k, v in np.load(dst).items()}
    rows = []
    for k, eps in enumerate(epsilons):
        sl = slice(k * reps, (k + 1) * reps)
        o = oracles.get("grr", epsilon=eps, d=tc.size)
        theirs_t = [np.asarray(t, dtype=np.int64) for t in z["targets"][sl]]
        # their estimates through ldpopt's lift (their n is every user, genuine and fake)
        lift_theirs = []
        for est_f in z["est"][sl]:
            e = Estimate.from_frequencies(est_f, n_users, eps, o.p, o.q, oracle="grr")
            lift_theirs.append(robust.lift(e, BETA))
        base = {"dataset": "emoji (the anchors' copy)", "n_users": n_users, "n_genuine": int(tc.sum()),
                "d": int(tc.size), "oracle": "grr", "epsilon": eps, "attack": "mga", "reps": reps}
        for m, v in (("raw", z["est"][sl]), ("norm_sub", z["norm_sub"][sl]), ("rsn", z["rsn"][sl]),
                     ("ldprecover_as_called", z["ldprecover_as_called"][sl]), ("lift (ldpopt, on their estimates)", lift_theirs)):
            rows.append({**base, "pipeline": "anchor", "method": m, **_metrics(f, v, theirs_t)})
        _, draws = R.draws(tc, "grr", eps, "mga", reps, seed=4242 + k)
        ours_t = [t for t, _ in draws]
        outs = {"raw": [], "norm_sub": [], "rsn": [], "ldprecover": [], "lift": []}
        for _, est in draws:
            rec, _ = R.recoveries(est)
            outs["raw"].append(est.f_tilde)
            for m in ("norm_sub", "rsn", "ldprecover", "lift"):
                outs[m].append(rec[m])
        for m, v in outs.items():
            rows.append({**base, "pipeline": "ldpopt", "method": m, **_metrics(f, v, ours_t)})
        print(f"eps={eps:g}: done", flush=True)
    return H.save("poisoning_anchor_pipeline", a, {"setting": {"beta": BETA, "targets": R_TARGETS, "splits": SPLITS,
                                                               "anchor_wall_s": anchor_wall}, "rows": rows})


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=10, help="repetitions per ε (default 10)")
    ap.add_argument("--anchor-python", help="the anchors' venv python")
    ap.add_argument("--anchor-src", help="a checkout of github.com/Marvin-huoshan/MDPA_LDP")
    return ap


def table(result: dict) -> str:
    """docs/poisoning.md's table: per ε, MSE and target gain of each method in both pipelines."""
    rows = result["rows"]
    cols = (("raw", "raw"), ("norm_sub", "norm_sub"), ("rsn", "rsn"), ("ldprecover_as_called", "ldprecover"),
            ("lift (ldpopt, on their estimates)", "lift"))
    out = ["| ε | pipeline | raw f̃ | Norm-Sub | RSN | LDPRecover (anchor: η = 0.2; ldpopt: η = β/(1 − β)) | lift (ldpopt) |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for eps in dict.fromkeys(r["epsilon"] for r in rows):
        for pipe in ("anchor", "ldpopt"):
            cells = []
            for theirs, ours in cols:
                c = [r for r in rows if r["epsilon"] == eps and r["pipeline"] == pipe
                     and r["method"] == (theirs if pipe == "anchor" else ours)][0]
                cells.append(f"{c['mse']:.2e} ± {c['mse_se']:.1e}; {c['gain']:+.3f} ± {c['gain_se']:.3f}")
            out.append(f"| {eps:g} | {'the anchors' if pipe == 'anchor' else 'ldpopt'} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = _parser()
    ap.add_argument("--table", metavar="FILE", help="print the markdown table of a saved result and stop")
    a = ap.parse_args()
    if a.table:
        print(table(json.loads(Path(a.table).read_text())))
        return
    res = run(**{k: v for k, v in vars(a).items() if k != "table"})
    if "rows" in res:
        print(table(res))


if __name__ == "__main__":
    main()
