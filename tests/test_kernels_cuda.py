"""device="cuda": the GPU kernels' logic under Numba's CUDA simulator (no GPU needed: the kernels run
as Python threads on small cases, in a subprocess with NUMBA_ENABLE_CUDASIM=1), bit-identical to the
numpy aggregators for every oracle; the errors naming what is missing; and the same comparison on a
real GPU, skipped where there is none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ldpopt import oracles

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("numba", reason="the CUDA kernels need numba (the 'gpu' extra)")

# (oracle, ε, d, n): small, the simulator runs each GPU thread as a Python thread
SIM_CASES = [("grr", 1.0, 2, 1), ("grr", 2.0, 9, 300), ("oue", 1.0, 13, 40), ("sue", 0.5, 8, 30),
             ("olh", 1.0, 2, 1), ("olh", 4.0, 37, 300), ("blh", 1.0, 5, 260), ("hr", 1.0, 6, 200),
             ("oue", 1.0, 13, 600), ("olh", 1.0, 3, 700),
             ("ss", 1.0, 10, 100)]

_SCRIPT = """
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
from ldpopt import oracles
out = []
for name, eps, d, n in json.loads(sys.argv[1]):
    gen = np.random.default_rng(n)
    orc = oracles.get(name, eps, d)
    rep = orc.perturb(gen.integers(0, d, n), gen)
    out.append([orc.aggregate(rep, device="numpy").tolist(), orc.aggregate(rep, device="cuda").tolist()])
print(json.dumps(out))
"""


def _gpu_present() -> bool:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    from numba import cuda

    try:
        return bool(cuda.is_available())
    except Exception:
        return False


def test_cuda_kernels_under_the_simulator_equal_numpy():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(SIM_CASES)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert len(results) == len(SIM_CASES)
    for case, (ref, got) in zip(SIM_CASES, results):
        assert got == ref, case


def test_cuda_without_a_gpu_is_a_clear_error():
    if _gpu_present():
        pytest.skip("a CUDA GPU is present here")
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        oracles.get("grr", 1.0, 3).aggregate([0, 1, 2], device="cuda")


def test_cuda_and_cpu_without_numba_name_the_extra(monkeypatch):
    from ldpopt.kernels import cuda as kc

    monkeypatch.setitem(sys.modules, "numba", None)  # as if numba were not installed
    monkeypatch.setattr(kc, "cuda", None)
    with pytest.raises(ImportError, match=r"ldpopt\[gpu\]"):
        oracles.get("olh", 1.0, 3).aggregate([[1, 0]], device="cuda")
    with pytest.raises(ImportError, match=r"ldpopt\[kernels\]"):
        oracles.get("olh", 1.0, 3).aggregate([[1, 0]], device="cpu")


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_present(), reason="needs a CUDA GPU (numba.cuda.is_available() is False here)")
@pytest.mark.parametrize("name,eps,d,n", [("olh", 1.0, 42178, 20000), ("olh", 4.0, 1000, 100000),
                                          ("oue", 1.0, 4100, 5000), ("grr", 1.0, 1000, 10**6),
                                          ("hr", 1.0, 1000, 10**6), ("ss", 1.0, 500, 10**5),
                                          ("sue", 1.0, 64, 10**5), ("blh", 1.0, 300, 10**5)])
def test_cuda_kernels_on_the_gpu_equal_numpy(name, eps, d, n):
    gen = np.random.default_rng(0)
    orc = oracles.get(name, eps, d)
    rep = orc.perturb(gen.integers(0, d, n), gen)
    assert np.array_equal(orc.aggregate(rep, device="cuda"), orc.aggregate(rep, device="numpy"))
