"""HR's fast path (``sample_counts``) at large n against its previous exact path
(``HR.sample_counts_mixture``, kept in the tree as the reference), optionally a previous revision's
``ldpopt/oracles/hadamard.py`` with that revision's ``_hadamard_tree.py`` (git archive; its
``sample_counts_tree`` is timed too when it has one), and the other six oracles' fast paths, in one
process.
d = 42,178, ε = 1, Zipf(1.5) true counts (``_harness.zipf_counts``); CPU seconds
(``time.process_time``) of one call, the best of ``--repeat`` calls (one call when the first took
over 1 s), wall seconds beside.

    python benchmarks/bench_hr_fastpath.py [--n 1e6 1e8 1e9] [--repeat 3] [--previous REV] [--skip ss]

Writes ``results/hr_fastpath.json`` (``_harness.save``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402

OTHERS = ("grr", "oue", "sue", "olh", "blh", "ss")


def best_of(fn, repeat: int) -> dict:
    """Best CPU (and the wall of that call) over up to ``repeat`` calls; slow calls are not repeated."""
    best = None
    for i in range(repeat):
        c0, w0 = H.cpu_clock(), time.perf_counter()
        fn(i)
        t = {"cpu": H.cpu_clock() - c0, "wall": time.perf_counter() - w0}
        if best is None or t["cpu"] < best["cpu"]:
            best = t
        if t["cpu"] > 1.0:
            break
    return best


def load_previous(rev: str, tmp: str):
    """That revision's ``hadamard.py`` with its own ``_hadamard_tree.py`` (when it has one): loaded
    inside the ldpopt.oracles package so its other relative imports resolve, with the tree import
    pointed at the old tree (else the old HR would run today's tree)."""
    files = ["ldpopt/oracles/hadamard.py"]
    has_tree = subprocess.run(["git", "-C", str(HERE.parent), "cat-file", "-e",
                               f"{rev}:ldpopt/oracles/_hadamard_tree.py"], capture_output=True).returncode == 0
    if has_tree:
        files.append("ldpopt/oracles/_hadamard_tree.py")
    src = H.extract(rev, files, tmp) / "ldpopt/oracles"
    if has_tree:
        spec = importlib.util.spec_from_file_location("ldpopt.oracles._previous_hadamard_tree",
                                                      src / "_hadamard_tree.py")
        tree = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = tree
        spec.loader.exec_module(tree)
        text = (src / "hadamard.py").read_text()
        assert "from ._hadamard_tree import" in text
        (src / "hadamard.py").write_text(text.replace("from ._hadamard_tree import",
                                                      "from ._previous_hadamard_tree import"))
    spec = importlib.util.spec_from_file_location("ldpopt.oracles._previous_hadamard", src / "hadamard.py")
    prev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prev)
    return prev


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--n", type=float, nargs="+", default=[1e6, 1e8, 1e9])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--previous", default=None, help="also time this revision's hadamard.py (git rev)")
    ap.add_argument("--skip", nargs="*", default=[], choices=OTHERS, help="other oracles not to time")
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: n = 10⁴, one repeat."""
    a = H.options(parser(), "bench_hr_fastpath.py", quick, opts)
    if a.quick:
        a.n, a.repeat = [1e4], 1
    from ldpopt import oracles

    d = 42_178
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        prev = load_previous(a.previous, tmp) if a.previous else None
        for n in a.n:
            tc = H.zipf_counts(d, int(n))
            hr = oracles.get("hr", epsilon=1.0, d=d)
            row = {"n": int(n), "d": d}
            row["hr"] = best_of(lambda i: hr.sample_counts(tc, i), a.repeat)
            row["hr[mixture]"] = best_of(lambda i: hr.sample_counts_mixture(tc, i), a.repeat)
            row["hr[tree]"] = best_of(lambda i: hr.sample_counts_tree(tc, i), a.repeat)
            if prev is not None:
                old = prev.HR(1.0, d)
                row[f"hr[{a.previous}]"] = best_of(lambda i: old.sample_counts(tc, i), a.repeat)
                if hasattr(old, "sample_counts_tree"):
                    row[f"hr[{a.previous} tree]"] = best_of(lambda i: old.sample_counts_tree(tc, i), a.repeat)
            for k in (k for k in OTHERS if k not in a.skip):
                o = oracles.get(k, epsilon=1.0, d=d)
                row[k] = best_of(lambda i: o.sample_counts(tc, i), a.repeat)
            row["loadavg_1min"] = os.getloadavg()[0]
            print(json.dumps(row), flush=True)
            rows.append(row)
    return H.save("hr_fastpath", a, {"rows": rows})


if __name__ == "__main__":
    H.cli(parser(), run)
