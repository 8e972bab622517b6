"""Task kind ``sketches`` (``ext_sketches``): how much the consistency methods help on Apple's sketch
estimates (CMS, HCMS; :mod:`ldpopt.oracles.cms`, :mod:`ldpopt.oracles.hcms`).

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.sketches`.
"""

from __future__ import annotations

import numpy as np

from ... import oracles as _oracles
from ...oracles.cms import SketchOracle
from ...sketches import sketch_estimate
from ..registry import kind
from ..toolkit import active_methods, dataset_of, error_rows, outputs, params, with_base

__all__ = ["sketches"]


@kind("sketches")
def sketches(task) -> list[dict]:
    if not issubclass(_oracles.oracle_class(task.oracle), SketchOracle):
        sketch = [n for n in _oracles.available(sketches=True) if issubclass(_oracles.oracle_class(n), SketchOracle)]
        raise ValueError(f"oracles of a sketches config must be sketch oracles {sketch}, got {task.oracle!r}")
    ds = dataset_of(task)
    rng = task.rng()
    p = params(task)
    seed = int(rng.integers(0, 2**31 - 1))
    o = _oracles.get(task.oracle, epsilon=task.epsilon, d=ds.d, k=p.get("k"), m=p.get("m"), hash_seed=seed)
    assert isinstance(o, SketchOracle)  # its class checked above
    n = int(ds.counts.sum())
    est = sketch_estimate(o, o.sample_counts(ds.counts, rng), n)
    names = active_methods(task)
    fs = with_base(est, outputs(est, names, p.get("method_params")))
    rows = error_rows(names, fs, ds.frequencies)
    rows.append({"method": "base", "metric": "predicted-mse", "value": float(np.mean(o.variance(ds.frequencies, n)))})
    return rows
