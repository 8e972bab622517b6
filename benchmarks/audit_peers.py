"""Privacy audit of the peer LDP clients (pure-ldp, multi-freq-ldpy, OpenDP) with ldpopt.audit.

Each installed peer client (ldpopt.interop.audit_peers.peer_clients) is run ``--trials`` times on
v = 0 and on v' = 1; ``ldpopt.audit.audit`` gives a lower bound on its real ε at confidence
1 − α (Clopper–Pearson, Bonferroni over 3 events). A bound above the claimed ε is a violation.

    PYTHONPATH=. python benchmarks/audit_peers.py --trials 40000 --out results/audit_peers.json

needs the peers extra (pip install -e '.[peers]'); prints a markdown table (RELIABILITY.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

from ldpopt.audit import audit
from ldpopt.interop.audit_peers import peer_clients
from ldpopt.interop.conformance import seed_all


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--d", type=int, default=8)
    ap.add_argument("--trials", type=int, default=40_000)
    ap.add_argument("--alpha", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    print(f"| client | claimed ε | ε lower bound (1−α = {1 - args.alpha:g}) | event | violated |")
    print("|---|---|---|---|---|")
    for client in peer_clients(args.epsilon, args.d):
        seed_all(args.seed)
        t = time.perf_counter()
        res = audit(client, 0, 1, trials=args.trials, alpha=args.alpha, rng=args.seed)
        rows.append({"client": client.label, "claimed": res.claimed, "epsilon_lb": res.epsilon_lb,
                     "event": res.event, "violated": res.violated, "trials": args.trials,
                     "alpha": args.alpha, "d": args.d, "seconds": time.perf_counter() - t})
        print(f"| {client.label} | {res.claimed:g} | {res.epsilon_lb:.3f} | {res.event} | "
              f"{'**yes**' if res.violated else 'no'} |", flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"argv": sys.argv[1:], "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
