"""The client auditor at scale: every built-in client's audited ε lower bound against its stated ε, and
the auditor's power on planted leaks of known ε.

Each row is ``ldpopt.audit.audit_client`` run on the client as it runs (every field of its reports,
τ rounds of users who keep their state), ``--samples`` runs per input (a quarter fits the learned
attack, a quarter selects pair, attack and threshold, half tests), the pair (0, 1) and one random
pair, confidence 99.9 %. Clients: every oracle's ``perturb`` (``oracles.available(sketches=True)``,
ε = 1, d = 8, sketch families of k = 4 rows of m = 16, RAPPOR 16 bits in 2 cohorts); every longitudinal client (ε∞ = 2, ε₁ = 1, d = 8) at τ ∈ {1, 5, 20}; the
multi-attribute protocols (ε = 1, three attributes of 3 values); the central samplers (scale 1, one
count, δ = 1e-6 for the Gaussians). Planted (``ldpopt.audit.planted``): LOLOHA as it was (its memo
seeded by its reported key), an L-GRR whose memo is keyed by a reported cohort, and oracles that
send one bit of the value beside their report; each with its true ε.

Run: ``python benchmarks/bench_audit.py [--quick] [--samples 1000000] [--only NAME] [--tag TAG] [--out DIR]``.
Writes ``<out>/audit<TAG>.json`` (rows as they finish) and ``<out>/audit<TAG>.md`` (the tables).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from ldpopt import multi, oracles
from ldpopt.audit import audit_client
from ldpopt.audit.attacks import ungroup
from ldpopt.audit.planted import PublicKeyedMemo, ReportsABit, SeedAsKeyLOLOHA
from ldpopt.oracles.longitudinal import DBitFlipPM, longitudinal_oracle
from ldpopt.privacy import central

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H

ALPHA = 1e-3
TAUS = (1, 5, 20)
#: the sketches' families kept small (a report of CMS at m = 1024 is 1024 bits: 10⁶ of them take hours
#: on a shared machine); the client's code path is the same at any size
SMALL = {"k": 4, "m": 16, "num_bits": 16, "cohorts": 2}


def _multi_client(p):
    def client(values, rng):
        reps = p.perturb(values, rng)
        return ungroup(reps[0], reps[1]) if len(reps) == 2 and isinstance(reps[1], tuple) else reps
    return client


def _central_client(m):
    def client(values, rng):   # the exact integer sampler where the mechanism releases, else numpy's
        if m.release_safe:
            return m.release(values.astype(np.int64), 1.0, rng).astype(np.float64)
        return values.astype(np.float64) + m.sample(values.shape[0], 1.0, rng)
    return client


def cases():
    """(group, label, τ, kwargs of audit_client, true ε or None)."""
    for name in oracles.available(sketches=True):
        params = {k: v for k, v in SMALL.items() if k in oracles.oracle_class(name).structural}
        yield "oracle", name, 1, {"client": oracles.get(name, 1.0, 8, **params)}, None
    longi = [(n, longitudinal_oracle(n, 2.0, 8, **({"num_bits": 16, "cohorts": 2} if n == "l-rappor" else {})))
             for n in ("l-grr", "l-sue", "l-soue", "l-oue", "l-osue", "loloha", "l-rappor")]
    longi.append(("dbitflippm", DBitFlipPM(2.0, 8, bits=2)))
    for name, o in longi:
        for tau in TAUS:
            yield "longitudinal", name, tau, {"client": o, "tau": tau}, None
    for make in (multi.spl, multi.rsfd, multi.smp, multi.calm):
        p = make((3, 3, 3), 1.0)
        yield "multi", make.__name__, 1, {"client": _multi_client(p), "stated": p.exact_epsilon,
                                          "pairs": [((0, 0, 0), (1, 1, 1)), ((0, 1, 2), (2, 1, 0))]}, None
    for name in central.MECHANISMS:
        m = central.get(name)
        delta = 0.0 if m.pure else 1e-6
        yield "central", name, 1, {"client": _central_client(m), "stated": m.epsilon(1.0, delta), "delta": delta,
                                   "pairs": [(0, 1)],
                                   "model_score": lambda rounds, x, x2: (x2 - x) * rounds[0]}, None
    for tau in TAUS:
        o = SeedAsKeyLOLOHA(2.0, 16, eps_1=1.0, g=4)
        yield "planted", "loloha (key = memo seed)", tau, {"client": o, "tau": tau}, o.true_epsilon(tau)
        yield "planted", "loloha (fixed)", tau, {"client": longitudinal_oracle("loloha", 2.0, 16, eps_1=1.0, g=4),
                                                 "tau": tau}, None
    for tau in (1, 2):
        o = PublicKeyedMemo(1.0, 4, eps_1=0.5, cohorts=4)
        yield "planted", "l-grr memo keyed by cohort", tau, {"client": o, "tau": tau}, o.true_epsilon(tau)
    for name in ("grr", "oue", "olh"):
        leaky = ReportsABit(oracles.get(name, 0.5, 4), 1.5)
        yield "planted", f"{name} + one bit (ε_bit 1.5)", 1, {"client": leaky, "stated": 0.5, "pairs": [(0, 1)]}, \
            leaky.true_epsilon


def _parser():
    ap = H.parser(__doc__)
    ap.add_argument("--samples", type=int, default=1_000_000, help="runs per input (--quick: 4000)")
    ap.add_argument("--only", default=None, help="run the rows whose group or label contains this text")
    ap.add_argument("--tag", default="", help="written to audit<tag>.json and audit<tag>.md")
    return ap


def run(quick: bool = False, **opts) -> dict:
    """Audit the clients (``--only`` selects), writing each row as it finishes."""
    a = H.options(_parser(), Path(__file__).name, quick, opts)
    samples = min(a.samples, 4_000) if a.quick else a.samples
    out = H.results_dir(a)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"audit{a.tag}.json"
    doc = {"command": a.command, "machine": H.environment(), "alpha": ALPHA, "rows": []}
    for group, label, tau, kw, true in cases():
        if a.only and a.only not in group and a.only not in label:
            continue
        t0 = time.process_time()
        r = audit_client(samples=samples, alpha=ALPHA, extra_pairs=1, name=label, rng=20261126, **kw)
        row = {"group": group, **r.row(), "cpu_seconds": round(time.process_time() - t0, 2), "true_epsilon": true}
        doc["rows"].append(row)
        print(f"{group:12s} {label:28s} tau={tau:2d} stated={r.stated:.4g} audited={r.epsilon_lb:.4g} "
              f"({r.attack}) true={true} {row['seconds']:.1f}s", flush=True)
        path.write_text(json.dumps(doc, indent=1, default=str))
    (out / f"audit{a.tag}.md").write_text(table(doc))
    return doc


def table(doc: dict) -> str:
    """The Markdown tables of a run: clients (stated vs audited) and planted leaks (true vs audited)."""
    out = [f"Command: `{doc['command']}`; confidence {1 - doc['alpha']:g}; samples are runs per input.", "",
           "| client | group | τ | stated ε | audited ε ≥ | attack | samples | seconds |",
           "|---|---|---:|---:|---:|---|---:|---:|"]
    for r in doc["rows"]:
        if r["group"] != "planted":
            out.append(f"| {r['client']} | {r['group']} | {r['tau']} | {r['stated']:.4g} | {r['audited']:.4g} | "
                       f"{r['attack']} | {r['samples']:,} | {r['seconds']:.1f} |")
    out += ["", "| planted leak | τ | stated ε | true ε | audited ε ≥ | audited / true | attack | samples | seconds |",
            "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for r in doc["rows"]:
        if r["group"] == "planted":
            true = r["true_epsilon"]
            ratio = f"{r['audited'] / true:.2f}" if true else "–"
            out.append(f"| {r['client']} | {r['tau']} | {r['stated']:.4g} | {true if true is None else f'{true:.4g}'} | "
                       f"{r['audited']:.4g} | {ratio} | {r['attack']} | {r['samples']:,} | {r['seconds']:.1f} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    H.cli(_parser(), run)
