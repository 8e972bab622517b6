"""The client auditor at scale: every built-in client's audited ε lower bound against its stated ε, and
the auditor's power on planted leaks of known ε.

Each row is ``ldpopt.audit.audit_client`` run on the client as it runs (every field of its reports,
τ rounds of users who keep their state), ``--samples`` runs per input (a quarter fits the learned
attack, a quarter selects pair, attack and threshold, half tests), the pair (0, 1) and one random
pair, confidence 99.9 %. Clients: every oracle's ``perturb`` (``oracles.available(sketches=True)``,
ε = 1, d = 8, sketch families of k = 4 rows of m = 16, RAPPOR 16 bits in 2 cohorts); the oracles of a
general channel (a strategy designed for all ranges at d = 16, ε = 1; Modular Subset Selection at ε = 1,
d = 10, moduli 3, 4, 5); every longitudinal client (ε∞ = 2, ε₁ = 1, d = 8) at τ ∈ {1, 5, 20}; the
multi-attribute protocols (ε = 1, three attributes of 3 values); the key–value clients
(``perturb_users``: PCKV-UE, PCKV-GRR at ℓ = 1 and 2, PrivKV; ε = 1 composed over key and value,
d = 4; PCKV-UE at ℓ = 3 > d = 2, stated its exact ε; the enumeration's worst pair of sets and three
more); the heavy-hitter users (``heavy.client``: PEM, TreeHist and SFP at ε = 1 over OLH and GRR on
the candidate sets of a run over six 16-bit strings: the route, the round's report and the word
report); the pooled users (``pooling.PooledClient``, d = 8, stated the largest group ε); the central samplers (scale 1, one
count, δ = 1e-6 for the Gaussians), each through ``release`` where it releases (the discrete ones: exact
integer sampling) and through ``sample`` (double precision, simulation only), the row saying which. Planted (``ldpopt.audit.planted``): LOLOHA as it was (its memo
seeded by its reported key), an L-GRR whose memo is keyed by a reported cohort, and oracles that
send one bit of the value beside their report; each with its true ε.

Run: ``python benchmarks/bench_audit.py [--quick] [--samples 1000000] [--only NAME] [--tag TAG] [--out DIR] [--docs]``.
Writes ``<out>/audit<TAG>.json`` (rows as they finish) and ``<out>/audit<TAG>.md`` (the tables);
``--docs`` rewrites docs/privacy.md's audit table from ``results/audit_<group>.json``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from ldpopt import keyvalue, multi, oracles, pooling
from ldpopt.audit import audit_client
from ldpopt.audit.attacks import ungroup
from ldpopt.audit.planted import PublicKeyedMemo, ReportsABit, SeedAsKeyLOLOHA
from ldpopt.heavy import encode, pem, sfp, treehist
from ldpopt.heavy.client import HeavyClient
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


def _central_client(m, exact: bool):
    def client(values, rng):   # the exact integer sampler (release), or the double-precision one (sample)
        if exact:
            return m.release(values.astype(np.int64), 1.0, rng).astype(np.float64)
        return values.astype(np.float64) + m.sample(values.shape[0], 1.0, rng)
    return client


def _channel_oracles():
    """The oracles of a general channel: a designed strategy (all ranges, d = 16, ε = 1) and Modular Subset
    Selection (ε = 1, d = 10, moduli 3, 4, 5), each audited through its own ``perturb``."""
    from ldpopt.design import design
    from ldpopt.oracles.modular import MSS

    yield "designed (ranges, d = 16)", design("ranges", 1.0, d=16, iterations=200, init="random", rng=0).oracle()
    yield "mss (d = 10, moduli 3, 4, 5)", MSS(1.0, 10, moduli=(3, 4, 5))


def cases():
    """(group, label, τ, kwargs of audit_client, true ε or None)."""
    for name in oracles.available(sketches=True):
        params = {k: v for k, v in SMALL.items() if k in oracles.oracle_class(name).structural}
        yield "oracle", name, 1, {"client": oracles.get(name, 1.0, 8, **params)}, None
    for label, o in _channel_oracles():
        yield "channel", label, 1, {"client": o}, None
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
    for proto in (keyvalue.pckv_ue(1.0, 4), keyvalue.pckv_grr(1.0, 4), keyvalue.privkv(1.0, 4),
                  keyvalue.pckv_ue(1.0, 4, ell=2), keyvalue.pckv_grr(1.0, 4, ell=2), keyvalue.pckv_ue(1.0, 2, ell=3)):
        spec = proto.audit_spec()
        label = spec.pop("name") + (f" (d = {proto.d}, ℓ = {proto.ell})" if hasattr(proto, "ell") else f" (d = {proto.d})")
        yield "keyvalue", label, 1, spec, None
    codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
    counts = np.array([4000, 3000, 1000, 800, 700, 500])
    for orc in ("olh", "grr"):
        runs = (pem(codes, counts, total_bits=16, epsilon=1.0, k=2, step_bits=4, oracle=orc, rng=0),
                treehist(codes, counts, total_bits=16, epsilon=1.0, step_bits=4, k=2, oracle=orc, rng=0),
                sfp(codes, counts, total_bits=16, epsilon=1.0, k=2, fragment_bits=4, oracle=orc, rng=0))
        for found in runs:
            spec = HeavyClient(found, oracle=orc).audit_spec([(codes[0], codes[1]), (codes[0], codes[5])])
            yield "heavy", spec.pop("name"), 1, spec, None
    for groups in ([("grr", 0.5, 0.5), ("olh", 1.0, 0.3), ("oue", 1.0, 0.2)], [("grr", 0.5, 0.2), ("grr", 1.0, 0.8)]):
        spec = pooling.PooledClient([(oracles.get(n, e, 8), s) for n, e, s in groups]).audit_spec()
        spec["pairs"] = [(0, 1)]
        yield "pooled", spec.pop("name"), 1, spec, None
    for name in central.MECHANISMS:
        m = central.get(name)
        delta = 0.0 if m.pure else 1e-6
        # each mechanism through the sampler that releases (the discrete ones: exact integers), and through
        # the double-precision simulation sampler (every mechanism has one; the continuous ones only it)
        for exact in ((True, False) if m.release_safe else (False,)):
            label = f"{name} · {'release (exact)' if exact else 'sample (float, simulation)'}"
            yield "central", label, 1, {"client": _central_client(m, exact), "stated": m.epsilon(1.0, delta),
                                        "delta": delta, "pairs": [(0, 1)],
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


def keyvalue_speed(n_loop: int = 20_000, n_vec: int = 1_000_000) -> list[dict]:
    """Runs per second of each key–value client: one user at a time (``perturb``, the loop the audit
    needed before) against every user at once (``perturb_users``), one key per user, d = 4."""
    rows = []
    for proto in (keyvalue.pckv_ue(1.0, 4), keyvalue.pckv_grr(1.0, 4), keyvalue.privkv(1.0, 4)):
        small, big = keyvalue.power_law(n_loop, 4, rng=0), keyvalue.power_law(n_vec, 4, rng=0)
        gen = np.random.default_rng(1)
        t0 = time.perf_counter()
        for u in range(small.n):  # the per-user client, measured as it is called on a device
            proto.perturb(*small.user(u), gen)
        t1 = time.perf_counter()
        proto.perturb_users(big, gen)
        t2 = time.perf_counter()
        rows.append({"client": proto.name, "per_user_runs_per_s": round(small.n / (t1 - t0)),
                     "vectorised_runs_per_s": round(big.n / (t2 - t1))})
    return rows


def _parser():
    ap = H.parser(__doc__)
    ap.add_argument("--samples", type=int, default=1_000_000, help="runs per input (--quick: 4000)")
    ap.add_argument("--only", default=None, help="run the rows whose group or label contains this text")
    ap.add_argument("--tag", default="", help="written to audit<tag>.json and audit<tag>.md")
    ap.add_argument("--docs", action="store_true",
                    help="run nothing: rewrite docs/privacy.md's audit table from results/audit_<group>.json")
    return ap


#: the groups' result files, in the docs table's order
GROUP_FILES = ("oracles", "channel", "longitudinal", "multi", "keyvalue", "heavy", "pooled", "central")
KINDS = {"oracle": "oracle", "channel": "oracle (general channel)", "longitudinal": "longitudinal", "multi": "multi-attribute", "keyvalue": "key–value",
         "heavy": "heavy hitters", "pooled": "pooled", "central": "central"}


def docs_table(results: Path) -> str:
    """The docs' audit table: every client row of ``results/audit_<group>.json`` (:data:`GROUP_FILES`)."""
    out = ["| client | kind | τ | stated ε | audited ε ≥ (99.9 %) | attack | runs per input | seconds |",
           "|---|---|---:|---:|---:|---|---:|---:|"]
    for g in GROUP_FILES:
        doc = json.loads((results / f"audit_{g}.json").read_text())
        for r in sorted(doc["rows"], key=lambda r: (r["client"], r["tau"])):
            out.append(f"| {r['client']} | {KINDS[r['group']]} | {r['tau']} | {r['stated']:.4g} | {r['audited']:.4g} | "
                       f"{r['attack']} | {r['samples']:,} | {r['seconds']:.0f} |")
    return "\n".join(out) + "\n"


def write_docs(results: Path, page: Path) -> None:
    """Replace the table between ``<!-- AUDIT -->`` and ``<!-- /AUDIT -->`` of ``page``."""
    text = page.read_text()
    head, rest = text.split("<!-- AUDIT -->\n", 1)
    _, tail = rest.split("<!-- /AUDIT -->", 1)
    page.write_text(head + "<!-- AUDIT -->\n" + docs_table(results) + "<!-- /AUDIT -->" + tail)


def run(quick: bool = False, **opts) -> dict:
    """Audit the clients (``--only`` selects), writing each row as it finishes."""
    a = H.options(_parser(), Path(__file__).name, quick, opts)
    if a.docs:
        write_docs(H.results_dir(a), H.REPO / "docs" / "privacy.md")
        return {}
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
    if any(r["group"] == "keyvalue" for r in doc["rows"]):
        doc["keyvalue_speed"] = keyvalue_speed(2_000 if a.quick else 20_000, 20_000 if a.quick else 1_000_000)
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
    if doc.get("keyvalue_speed"):
        out += ["", "| key–value client | one user at a time (runs/s) | all users at once (runs/s) |", "|---|---:|---:|"]
        out += [f"| {r['client']} | {r['per_user_runs_per_s']:,} | {r['vectorised_runs_per_s']:,} |"
                for r in doc["keyvalue_speed"]]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    H.cli(_parser(), run)
