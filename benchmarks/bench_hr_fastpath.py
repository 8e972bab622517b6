"""Issue 16, item 3: HR's fast path (``sample_counts``) at large n, this tree against a previous
revision's ``ldpopt/oracles/hadamard.py`` (git archive), in one process, with the other oracles'
fast paths as the reference. d = 42,178, ε = 1, Zipf(1.5) true counts (``_harness.zipf_counts``);
one call each (seconds: wall, CPU).

    python benchmarks/bench_hr_fastpath.py [--n 1e8 1e9] [--previous REV]

Writes ``results/hr_fastpath.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402


def timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return {"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, nargs="+", default=[1e8, 1e9])
    ap.add_argument("--previous", default="de6e2ee")
    a = ap.parse_args(argv)
    from ldpopt import oracles

    d = 42_178
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tar = subprocess.run(["git", "-C", str(HERE.parent), "archive", a.previous, "ldpopt/oracles/hadamard.py"],
                             check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=tar, check=True)
        # loaded inside the ldpopt.oracles package so its relative imports resolve
        spec = importlib.util.spec_from_file_location("ldpopt.oracles._previous_hadamard",
                                                      Path(tmp) / "ldpopt/oracles/hadamard.py")
        prev = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(prev)
        for n in a.n:
            tc = H.zipf_counts(d, int(n))
            row = {"n": int(n), "d": d}
            row["hr"] = timed(lambda: oracles.get("hr", epsilon=1.0, d=d).sample_counts(tc, 1))
            row["hr[previous]"] = timed(lambda: prev.HR(1.0, d).sample_counts(tc, 1))
            for k in ("grr", "oue", "sue", "olh", "blh", "ss"):
                row[k] = timed(lambda: oracles.get(k, epsilon=1.0, d=d).sample_counts(tc, 1))
            print(json.dumps(row))
            rows.append(row)
    (HERE / "results" / "hr_fastpath.json").write_text(json.dumps(
        {"command": "python benchmarks/bench_hr_fastpath.py --previous " + a.previous, "results": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
