"""Reproducibility (RELIABILITY.md, family "repro"): same seed, same bytes, in this process and in a
fresh one (different PYTHONHASHSEED), for every oracle's two paths, every method, and an experiment
table rebuilt after SIGKILLs at several seeded random points."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from ldpopt import methods, oracles
from ldpopt.experiments import run

DIGEST_CODE = r"""
import hashlib, warnings, numpy as np
from ldpopt import methods, oracles
warnings.simplefilter("ignore")
h = {}
tc = np.random.default_rng(3).multinomial(4000, np.random.default_rng(4).dirichlet(np.full(33, 0.4)))
for name in oracles.available():
    o = oracles.get(name, 1.3, 33)
    for exact in (False, True):
        est = o.simulate(tc, 11, exact=exact)
        h[f"{name}/exact={exact}"] = hashlib.sha256(est.counts.tobytes()).hexdigest()
    h[f"{name}/perturb"] = hashlib.sha256(np.ascontiguousarray(o.perturb(np.arange(33).repeat(5), 12)).tobytes()).hexdigest()
est = oracles.get("oue", 1.3, 33).simulate(tc, 11)
for m in methods.available().index:
    h[f"method/{m}"] = hashlib.sha256(methods.postprocess(est.as_ordered() if methods.get(m).needs_order else est, m).tobytes()).hexdigest()
print(repr(sorted(h.items())))
"""


def _digests_here() -> list:
    ns: dict = {}
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(DIGEST_CODE, ns)
    return eval(buf.getvalue())


def test_same_seed_same_bytes_across_processes():
    here = _digests_here()
    assert here == _digests_here()  # same process, twice
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", DIGEST_CODE], capture_output=True, text=True, check=True,
                           env=env).stdout
    assert eval(other) == here
    keys = [k for k, _ in here]
    assert len(keys) == 3 * len(oracles.available()) + len(methods.available())


CONFIG = """
name = "kill_test"
kind = "full-domain"
description = "killed at random points"
datasets = [{name = "zipf", n = 2000, d = 64, rng = 1}]
oracles = ["grr", "oue"]
epsilons = [0.5, 1.0]
methods = ["base", "norm-sub"]
repetitions = 100
seed = 7
"""


@pytest.mark.slow
def test_killed_at_random_points_resumes_to_the_same_table(tmp_path):
    path = tmp_path / "kill_test.toml"
    path.write_text(CONFIG)
    out = tmp_path / "killed"
    parts = out / "kill_test" / "parts"
    total = 2 * 2 * 100  # enough tasks that a quiet machine cannot finish between kills
    rng = np.random.default_rng(2024)  # seeded kill points
    done_after = []
    for _ in range(3):
        target = len(list(parts.glob("*.parquet"))) + int(rng.integers(3, 15)) if parts.exists() else int(rng.integers(3, 15))
        proc = subprocess.Popen([sys.executable, "-m", "ldpopt.cli", "experiment", "run", str(path),
                                 "--out", str(out), "--no-progress"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONHASHSEED": "random"})
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None and (
                not parts.exists() or len(list(parts.glob("*.parquet"))) < target):
            time.sleep(0.01)
        time.sleep(float(rng.uniform(0, 0.2)))  # land anywhere, also mid-write
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done_after.append(len(list(parts.glob("*.parquet"))))
    assert done_after == sorted(done_after) and done_after[-1] < total, done_after
    resumed = run(path, out=out, progress=False)
    assert not list(parts.glob(".*.tmp"))
    full = run(path, out=tmp_path / "full", progress=False)
    pd.testing.assert_frame_equal(full, resumed)
