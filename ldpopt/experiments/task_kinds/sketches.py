"""Task kind ``sketches`` (``ext_sketches``): how much the consistency methods help on Apple's sketch
estimates (CMS, HCMS; :mod:`ldpopt.oracles.cms`, :mod:`ldpopt.oracles.hcms`).

One task = one repetition: a fresh hash family (its seed drawn from the task rng, so the error is
over the family as deployments see it across collections), the sketch's support counts from the
exact fast path, the Estimate with the family's extra variance (:func:`ldpopt.sketches.sketch_estimate`,
which the σ-using methods read), then every method in the config. Rows: full-domain ``mse`` and
``mae`` per method (as the ``full-domain`` kind), and ``predicted-mse`` for ``base``: the mean over v
of the oracle's exact variance over the family at the true f (what ``base``'s MSE should be).
``params.k`` and ``params.m``: the sketch's hash functions and buckets.
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
