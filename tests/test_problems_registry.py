"""The registries of objectives and constraint types: what they refuse, and that the built-ins are in
them as a user's item would be (the problem-file lists are read from them)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.cli._problemtypes import constraint_kinds, objective_docs
from ldpopt.problems import Problem, SubsetSum, registry
from ldpopt.problems.objectives.builtins import LeastSquares, Posterior


def test_the_builtins_are_registered_items():
    assert registry.objective_factory("cls") is LeastSquares
    assert registry.constraint_type("subset_sum") is SubsetSum
    assert "posterior" in registry.available_objectives() and "posterior" not in objective_docs()  # no file form
    assert list(constraint_kinds())[0] == "simplex" and constraint_kinds()["subset_sum"] is SubsetSum.file_kind


def test_registration_refuses_what_is_not_an_item_and_a_second_item_under_one_name():
    with pytest.raises(TypeError, match="Objective subclass or instance"):
        registry.register_objective(lambda f, e: f)
    with pytest.raises(ValueError, match="'cls' is already registered"):
        registry.register_objective(type("Other", (LeastSquares,), {}))
    with pytest.raises(TypeError, match="Constraint subclass"):
        registry.register_constraint(dict)
    with pytest.raises(TypeError, match="needs file_kind"):
        registry.register_constraint(type("NoKind", (SubsetSum,), {"file_type": "no-kind", "file_kind": None}))
    with pytest.raises(ValueError, match="'subset_sum' is already registered"):
        registry.register_constraint(type("Other", (SubsetSum,), {}))
    with pytest.raises(ValueError, match="kind must be"):
        registry.unregister("oracle", "x")


def test_a_registered_instance_and_a_class_needing_arguments():
    est = oracles.get("grr", 1.0, 6).simulate(np.array([50, 30, 10, 5, 5, 0]) * 10, 1)
    prior = Posterior(np.full(6, 1 / 6))
    prior.name = "to-uniform"
    registry.register_objective(prior)
    try:
        assert "to-uniform" in registry.available_objectives()
        sol = Problem(est, "to-uniform").solve()
        np.testing.assert_allclose(sol.f, np.full(6, 1 / 6), atol=1e-12)  # the projection of uniform
    finally:
        registry.unregister("objective", "to-uniform")
    needs = type("Needs", (LeastSquares,), {"name": "needs-args", "__init__": lambda self, w: None})
    registry.register_objective(needs)
    try:
        with pytest.raises(ValueError, match="'needs-args' cannot be made from its name alone"):
            Problem(est, "needs-args")
    finally:
        registry.unregister("objective", "needs-args")
    with pytest.raises(ValueError, match="objective must be one of"):
        Problem(est, "needs-args")
