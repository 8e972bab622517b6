"""Privacy numbers at the extremes, before and after, against independent references.

Each case runs in a child process (a time limit per case) under the checkout named by ``--code`` (a
folder put first on PYTHONPATH: this worktree by default; run it once more with an older checkout for
the "before" column), and its reference is computed here in mpmath (60 digits): the Gaussian's ε at
δ = 1e-9 solves Balle & Wang's δ(ε) = Φ(a − c) − e^ε Φ(−a − c); the discrete Gaussian's sums
Σ_k N(k)(1 − e^{ε − L(k)})₊ over its support; the shuffle's is the authors' closed form (Theorem 3.1,
an upper bound the numerical bound must not exceed) or ε₀ where no clone is expected (n·e^{−ε₀} <
δ·1e-4). The CLI case runs ``ldpopt postprocess --n 1000 --shuffled-among 10``.

Run: ``python benchmarks/bench_regimes.py [--quick] [--code PATH] [--label after] [--limit 120]``;
writes ``benchmarks/results/regimes_<label>.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mpmath

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H

ROOT = Path(__file__).resolve().parents[1]

CENTRAL = [("gaussian", s) for s in (1.0, 0.1, 0.05, 0.03, 0.01, 1e-3, 1e-6)] + \
          [("discrete-gaussian", s) for s in (0.1, 0.03, 0.01)] + [("laplace", 1e-3)]
SHUFFLE = [(1.0, 10**6), (1.0, 10**8), (1.0, 10**9), (1.0, 10**12), (4.0, 10**12), (400.0, 1000), (400.0, 10**12),
           (699.0, 10**9)]
DELTA_C, DELTA_S = 1e-9, 1e-6


def _mp_gauss_eps(sigma: float) -> float:
    with mpmath.workdps(60):
        s = mpmath.mpf(sigma)

        def delta(e):
            a, c = 1 / (2 * s), e * s
            return mpmath.ncdf(a - c) - mpmath.e ** e * mpmath.ncdf(-a - c)
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while delta(hi) > DELTA_C:
            hi *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if delta(mid) > DELTA_C else (lo, mid)
        return float(hi)


def _mp_dgauss_eps(sigma: float) -> float:
    with mpmath.workdps(60):
        s = mpmath.mpf(sigma)
        K = int(40 * sigma) + 40
        w = {k: mpmath.e ** (-(k * k) / (2 * s * s)) for k in range(-K, K + 1)}
        Z = mpmath.fsum(w.values())

        def delta(e):  # add-remove, one count: L(k) = (1 − 2k)/(2σ²)
            return mpmath.fsum(w[k] / Z * (1 - mpmath.e ** (e - (1 - 2 * k) / (2 * s * s)))
                               for k in w if (1 - 2 * k) / (2 * s * s) > e)
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while delta(hi) > DELTA_C:
            hi *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if delta(mid) > DELTA_C else (lo, mid)
        return float(hi)


def _mp_closed(eps0: float, n: int) -> float | None:
    with mpmath.workdps(60):
        e0 = mpmath.e ** mpmath.mpf(eps0)
        if eps0 > float(mpmath.log(n / (16 * mpmath.log(4 / mpmath.mpf(DELTA_S))))):
            return eps0 if n * float(mpmath.e ** (-mpmath.mpf(eps0))) < DELTA_S * 1e-4 else None
        a = 8 * mpmath.sqrt(e0 * mpmath.log(4 / mpmath.mpf(DELTA_S))) / mpmath.sqrt(n)
        c = 8 * e0 / n
        e1 = mpmath.log(1 + a + c)
        return float(mpmath.log(1 + (1 - 1 / e0) / (1 + mpmath.e ** (-mpmath.mpf(eps0) - e1)) * (a + c)))


def _child(code: str, setup: str, snippet: str, limit: float) -> dict:
    env = {**os.environ, "PYTHONPATH": code}
    prog = ("import json, time\n" + setup + "\nt = time.process_time()\ntry:\n"
            + "".join(f"    {x}\n" for x in snippet.splitlines())
            + "    out = {'value': repr(v)}\nexcept Exception as e:\n    out = {'error': f'{type(e).__name__}: {e}'}\n"
            "out['cpu_seconds'] = round(time.process_time() - t, 3)\nprint(json.dumps(out))\n")
    try:
        p = subprocess.run([sys.executable, "-c", prog], check=False, env=env, capture_output=True, text=True,
                           timeout=limit, cwd=tempfile.gettempdir())  # not this folder: its ldpopt would come first
        return json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {"error": p.stderr[-300:]}
    except subprocess.TimeoutExpired:
        return {"error": f"still running after {limit:g} s (stopped)"}


def _parser():
    ap = H.parser(__doc__)
    ap.add_argument("--code", default=str(ROOT), help="the checkout whose ldpopt is measured")
    ap.add_argument("--label", default="after", help="written to regimes_<label>.json")
    ap.add_argument("--limit", type=float, default=120.0, help="seconds per case")
    return ap


def run(quick: bool = False, **opts) -> dict:
    """Every case under ``--code``, with its reference; ``--quick``: two central cases, one shuffle."""
    a = H.options(_parser(), Path(__file__).name, quick, opts)
    central_cases, shuffle_cases = (CENTRAL[:2], SHUFFLE[:1]) if a.quick else (CENTRAL, SHUFFLE)
    rows = []
    for name, s in central_cases:
        got = _child(a.code, "from ldpopt.privacy import central", f"v = central.get({name!r}).epsilon({s!r}, "
                             f"{0.0 if name == 'laplace' else DELTA_C!r})", a.limit)
        ref = 1 / s if name == "laplace" else (_mp_gauss_eps(s) if name == "gaussian" else _mp_dgauss_eps(s))
        rows.append({"case": f"{name} scale {s:g}, δ = {0 if name == 'laplace' else DELTA_C:g}: ε", **got,
                     "reference": ref})
    for e0, n in shuffle_cases:
        got = _child(a.code, "from ldpopt.privacy.shuffle import shuffled", f"v = shuffled({e0!r}, {n!r}, {DELTA_S!r}).epsilon",
                     a.limit)
        rows.append({"case": f"shuffled ε₀ = {e0:g}, n = {n:.0e}, δ = 1e-6: ε", **got,
                     "reference": _mp_closed(e0, n), "reference_kind": "closed form (upper bound) or ε₀"})
    with tempfile.TemporaryDirectory() as tmp:
        counts = Path(tmp) / "c.csv"
        counts.write_text("value,count\nv0,340\nv1,300\nv2,285\nv3,275\n")
        t0 = time.time()
        p = subprocess.run([sys.executable, "-m", "ldpopt", "postprocess", "--counts", str(counts), "--oracle", "oue",
                            "--epsilon", "1", "--n", "1000", "--method", "norm-sub", "--shuffled-among", "10"],
                           check=False, env={**os.environ, "PYTHONPATH": a.code}, capture_output=True, text=True,
                           timeout=a.limit, cwd=tmp)
        rows.append({"case": "postprocess --n 1000 --shuffled-among 10: exit status", "value": p.returncode,
                     "stderr": p.stderr.strip()[-200:], "seconds": round(time.time() - t0, 2),
                     "reference": "refused (exit 2)"})
    doc = {"command": a.command, "machine": H.environment(), "rows": rows}
    out = H.results_dir(a)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"regimes_{a.label}.json").write_text(json.dumps(doc, indent=1, default=str))
    for r in rows:
        print(r)
    return doc


if __name__ == "__main__":
    H.cli(_parser(), run)
