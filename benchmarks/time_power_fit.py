"""Power with s fitted (Jia & Gong Eq. 16): the old local fit vs the global fit (not a test).

    python benchmarks/time_power_fit.py OLD_BAYES_DIR

OLD_BAYES_DIR holds ``old_bayes.py``: ``git show e8a8160~1:ldpopt/methods/bayes.py`` with its
relative imports made absolute (``from ldpopt.methods import _bayes_core as core`` etc.). One run
each, CPU time (process_time), same process, same estimate; the log k table is warmed first.
"""

import sys
import time
import warnings

sys.path.insert(0, "benchmarks")
sys.path.insert(0, sys.argv[1])

from time_bayes import build  # noqa: E402

import old_bayes  # noqa: E402
from ldpopt.methods import bayes  # noqa: E402

warnings.simplefilter("ignore")
for orc in ("grr", "oue"):
    est = build(42178, 1_000_000, 1.0, orc)
    bayes.power(est, s=1.0)  # warm the log k table
    for name, mod in (("before", old_bayes), ("after", bayes)):
        c0 = time.process_time()
        w0 = time.perf_counter()
        out = mod.power(est)
        c, w = time.process_time() - c0, time.perf_counter() - w0
        print(f"{orc} d=42178 n=1e6 eps=1 power(s fitted) {name}: cpu {c:.3f} s wall {w:.3f} s  "
              f"s={mod.fit_power_law(est):.10f}")
