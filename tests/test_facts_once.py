"""A fact ldpopt states in several features lives in one place that every feature reads: the default δ."""

from __future__ import annotations

import inspect

import numpy as np

import ldpopt
from ldpopt import Estimate, planning
from ldpopt.privacy import statement


def test_every_default_delta_is_the_one_constant():
    d = statement.DEFAULT_DELTA
    assert planning.DEFAULT_DELTA is d
    for f in (statement.compose, statement.local, Estimate.shuffled):
        assert inspect.signature(f).parameters["delta"].default is d, f
    # a Gaussian-type central mechanism is calibrated at it when no δ is given; a pure one at 0
    assert Estimate.from_central([3, 5], "gaussian", 2.0).meta["privacy"]["delta"] == d
    assert Estimate.from_central([3, 5], "laplace", 2.0).meta["privacy"]["delta"] == 0.0
    est = ldpopt.oracles.get("grr", 1.0, 3).estimate(np.array([50, 30, 20]), 100)
    assert est.shuffled(n=10**5).privacy.delta == d
