"""Modular Subset Selection (ldpopt.oracles.modular) beside SS, OLH and OUE: full-domain MSE (30
draws of each fast path, mean ± s.e., Base and Norm-Sub), bits per report, and the server's seconds
at d = 22,000, n = 10⁴ (the paper's decoding setting: MSS's LSMR decoder, the others' aggregate +
estimate on the real reports).

    PYTHONPATH=. python benchmarks/bench_mss.py --quick
    PYTHONPATH=. python benchmarks/bench_mss.py

Results: benchmarks/results/mss.json (or --out DIR).
"""

from __future__ import annotations

import math
import time

import _harness as H  # benchmarks/ is the script's folder
import numpy as np


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--d", type=int, nargs="+", default=[200, 1024])
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 4.0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--decode-d", type=int, default=22_000)
    ap.add_argument("--decode-n", type=int, default=10_000)
    ap.add_argument("--decode-eps", type=float, nargs="+", default=[1.0, 4.0])
    ap.add_argument("--maxiter", type=int, default=2000, help="LSMR's iteration cap at the decoding setting")
    return ap


def _bits(o) -> int:
    """Bits of one report as the oracle sends it."""
    name = o.name
    if name == "mss":
        return o.bits
    if name == "ss":
        return math.ceil(math.log2(math.comb(o.d, o.k)))
    if name == "olh":
        return 32 + math.ceil(math.log2(o.g))  # a 32-bit hash seed and the bucket
    if name == "oue":
        return o.d
    raise ValueError(name)


def run(quick: bool = False, **opts) -> dict:
    args = H.options(parser(), "bench_mss.py", quick, opts)
    from ldpopt import oracles
    from ldpopt.methods.normalize import norm_sub
    from ldpopt.oracles.modular import MSS, default_moduli, mss_decode

    ds = [40] if args.quick else args.d
    rows = []
    for d in ds:
        tc = H.zipf_counts(d, args.n)
        n = int(tc.sum())
        f = tc / n
        for eps in args.eps:
            cands = {"mss": MSS(eps, d), "mss-l2": MSS(eps, d, moduli=default_moduli(d, 2)),
                     "ss": oracles.get("ss", eps, d), "olh": oracles.get("olh", eps, d), "oue": oracles.get("oue", eps, d)}
            for label, o in cands.items():
                gen = np.random.default_rng([d, int(eps * 10)])
                errs = {"base": [], "norm_sub": []}
                for _ in range(args.reps):  # repetitions
                    est = o.simulate(tc, gen)
                    errs["base"].append(float(np.mean((est.f_tilde - f) ** 2)))
                    errs["norm_sub"].append(float(np.mean((norm_sub(est) - f) ** 2)))
                row = {"d": d, "epsilon": eps, "n": n, "oracle": label, "bits": _bits(o),
                       "moduli": list(getattr(o, "moduli", [])),
                       **{f"mse_{m}": float(np.mean(v)) for m, v in errs.items()},
                       **{f"se_{m}": float(np.std(v, ddof=1) / np.sqrt(len(v))) for m, v in errs.items()}}
                rows.append(row)
                print(row, flush=True)
    # the server's time at the paper's decoding setting
    dd, nn = (2000, 1000) if args.quick else (args.decode_d, args.decode_n)
    tc = H.zipf_counts(dd, nn)
    values = np.repeat(np.arange(dd), tc)
    decode = []
    for eps in args.decode_eps:
        gen = np.random.default_rng(7)
        ms = default_moduli(dd)
        j = gen.integers(0, len(ms), values.size)
        C, nb = [], []
        for b, m in enumerate(ms):  # ℓ blocks: SS on the residues of the block's users
            ss = oracles.SS(eps, m)
            rep = ss.perturb(values[j == b] % m, gen)
            C.append(ss.aggregate(rep, device="numpy").astype(float))
            nb.append(int((j == b).sum()))
        t0 = time.perf_counter()
        fh, solve_s = mss_decode(C, nb, ms, eps, dd, maxiter=args.maxiter)
        mss_s = time.perf_counter() - t0
        decode.append({"d": dd, "n": int(values.size), "epsilon": eps, "oracle": "mss", "moduli": list(ms),
                       "server_s": mss_s, "lsmr_s": solve_s, "lsmr_maxiter": args.maxiter, "mse": float(np.mean((fh - tc / values.size) ** 2))})
        for name in ("ss", "olh", "oue"):
            o = oracles.get(name, eps, dd)
            rep = o.perturb(values, gen)
            t0 = time.perf_counter()
            est = o.estimate(o.aggregate(rep, device="numpy"), values.size)
            decode.append({"d": dd, "n": int(values.size), "epsilon": eps, "oracle": name,
                           "server_s": time.perf_counter() - t0,
                           "mse": float(np.mean((est.f_tilde - tc / values.size) ** 2))})
        print(decode[-4:], flush=True)
    return H.save("mss", args, {"rows": rows, "decode": decode, "reps": args.reps})


def table(path) -> str:
    """The results page's tables (Markdown) from a saved ``mss.json``."""
    import json

    with open(path) as fh:
        doc = json.load(fh)
    out = ["| d | ε | oracle | moduli | bits | MSE Base ± s.e. | MSE Norm-Sub ± s.e. | ratio to SS (Base) |",
           "|---|---|---|---|---|---|---|---|"]
    ss = {(r["d"], r["epsilon"]): r["mse_base"] for r in doc["rows"] if r["oracle"] == "ss"}
    for r in doc["rows"]:
        out.append(f"| {r['d']} | {r['epsilon']:g} | {r['oracle']} | {', '.join(map(str, r['moduli'])) or '–'} | {r['bits']} | "
                   f"{r['mse_base']:.3g} ± {r['se_base']:.2g} | {r['mse_norm_sub']:.3g} ± {r['se_norm_sub']:.2g} | "
                   f"{r['mse_base'] / ss[(r['d'], r['epsilon'])]:.2f} |")
    out += ["", "| d | n | ε | oracle | server seconds | MSE (one draw) |", "|---|---|---|---|---|---|"]
    out += [f"| {r['d']} | {r['n']} | {r['epsilon']:g} | {r['oracle']} | {r['server_s']:.3f} | {r['mse']:.3g} |"
            for r in doc["decode"]]
    return "\n".join(out)


if __name__ == "__main__":
    H.cli(parser(), run)
