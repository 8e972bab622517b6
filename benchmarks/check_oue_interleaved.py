"""OUE real path, n = 10⁶, d = 1024, ε = 1: ldpopt and both peers interleaved (ldpopt, pure-ldp,
ldpopt, multi-freq-ldpy, ldpopt), each a fresh process measured by the oracle section's harness.
A cross-check of the main table's OUE row on a quiet machine (needs `bash benchmarks/setup_peers.sh`).

    .venv/bin/python benchmarks/check_oue_interleaved.py
"""

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_oracles as B  # noqa: E402

tmp = Path(tempfile.mkdtemp())
for impl in ("ldpopt", "pure-ldp", "ldpopt", "multi-freq-ldpy", "ldpopt"):
    s = dict(case="interleaved", impl=impl, oracle="oue", path="real", d=1024, n=10**6, n_target=10**6,
             timeout=900, repeats=3 if impl == "ldpopt" else 1, note="")
    r = B.measure(s, tmp, 12000)
    print(json.dumps({k: r[k] for k in ("impl", "status", "seconds", "cpu_seconds", "maxrss_mb", "loadavg_1min")}))
