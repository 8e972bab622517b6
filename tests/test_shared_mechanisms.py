"""Pieces written once and read by several callers: the Structure's derived blocks (computed once per
problem), the damped Newton's backtracking, Norm-Mul over a batch, and the top-k calibration set-up.
Each against an independent reference written here."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ldpopt import methods
from ldpopt.estimate import Estimate
from ldpopt.methods.normalize import norm_mul_rows, positive_mass
from ldpopt.problems import Problem, Simplex, SubsetSum
from ldpopt.problems.check.certificate import block_rows
from ldpopt.problems.solvers.structured import compile_constraints
from ldpopt.problems.dual.blocks import indicator_rows
from ldpopt.problems.dual.dual import backtrack, damping
from ldpopt.uncertainty.calibrate import calibrated_level, calibrated_topk


def _est(d=40, seed=0):
    rng = np.random.default_rng(seed)
    p, q = 0.5, 1 / (1 + np.e)
    t = rng.dirichlet(np.full(d, 0.3))
    return Estimate.from_counts(rng.binomial(20000, q + (p - q) * t).astype(float), 20000, 1.0, p, q)


def test_structure_is_frozen_and_its_blocks_are_derived_once():
    st = compile_constraints([Simplex(), SubsetSum([0, 1, 2], 0.3), SubsetSum([5, 6], 0.2, "<=")], 10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        st.l = np.zeros(10)
    got = indicator_rows(st)
    assert got is indicator_rows(st)  # the same object: computed once
    rowof, sign, empty = got
    assert rowof.tolist() == [0, 0, 0, -1, -1, 1, 1, -1, -1, -1] and sign.tolist() == [1.0, 1.0] and not empty.any()
    with pytest.raises(ValueError):
        rowof[0] = 1  # read-only: nothing derived may be written by a reader
    assert block_rows(st) is None  # an inequality row: no block-wise argmin bound
    eq = compile_constraints([Simplex(), SubsetSum([0, 1, 2], 0.3), SubsetSum([5, 6], 0.2, ">=")], 10)
    overlap = compile_constraints([Simplex(), SubsetSum([0, 1], 0.3), SubsetSum([1, 2], 0.2)], 10)
    assert indicator_rows(eq)[1].tolist() == [1.0, -1.0]  # a >= row is stored negated
    assert indicator_rows(overlap) is None


def test_a_problem_compiles_its_constraints_once_for_solver_check_and_feasibility():
    est = _est()
    p = Problem(est, "cls", [Simplex(), SubsetSum(np.arange(10), 0.4)])
    sol = p.solve()
    assert sol.status == "optimal" and sol.solver == "LDPOPT-STRUCTURED"
    st = p.compiled
    # the solver's block rows and the feasibility test's were read from this one Structure
    assert "indicator_rows" in st._derived and "block_rows" in st._derived
    gid, sign, value = block_rows(st)
    assert np.array_equal(gid[:10], np.zeros(10)) and np.all(gid[10:] == 1) and value.tolist() == [0.4]
    # and the answer is the one a fresh compile gives
    fresh = Problem(est, "cls", [Simplex(), SubsetSum(np.arange(10), 0.4)]).solve()
    assert np.array_equal(sol.f, fresh.f)


def test_backtrack_halves_until_the_test_passes_and_damping_moves_mu():
    seen = []

    def trial(alpha):
        seen.append(alpha)
        return ("point", alpha) if alpha <= 0.25 else None

    assert backtrack(trial, 10) == (0.25, ("point", 0.25)) and seen == [1.0, 0.5, 0.25]
    assert backtrack(lambda a: None, 3) == (0.125, None)
    assert damping(1e-3, 1.0, 1.0) == 1e-4 and damping(1e-11, 1.0, 1.0) == 1e-10
    assert damping(1e-3, 0.5, 1.0) == pytest.approx(0.1) and damping(0.5, 0.5, 1.0) == 1.0


def test_norm_mul_rows_is_norm_mul_of_each_row():
    est = _est(d=30, seed=3)
    rng = np.random.default_rng(1)
    F = np.vstack([est.f_tilde, rng.normal(0, 0.05, (4, 30)), -np.ones(30)])
    got = norm_mul_rows(F)
    for row, g in zip(F, got):
        pos = np.maximum(row, 0.0)
        want = pos / pos.sum() if pos.sum() > 0 else np.full(30, 1 / 30)
        assert np.array_equal(g, want)
    assert np.array_equal(methods.get("norm-mul").func(est), got[0])
    assert np.array_equal(positive_mass(F), np.where(np.maximum(F, 0).sum(1) > 0, np.maximum(F, 0).sum(1), 1.0))


def test_calibrated_topk_is_the_selected_deviation_set_up():
    rng = np.random.default_rng(5)
    world = rng.dirichlet(np.ones(20))
    boot = world + rng.normal(0, 0.01, (200, 20))
    Sb = np.argsort(-boot, axis=1, kind="stable")[:, :5]
    dev = np.take_along_axis(boot, Sb, axis=1) - world[Sb]
    assert calibrated_topk(world, boot, Sb, 0.9) == calibrated_level(dev, Sb, 0.9, dev_fixed=boot - world)
    se = np.full(20, 0.01)
    assert calibrated_topk(world, boot, Sb, 0.9, se=se) == calibrated_level(dev, Sb, 0.9, se=se)
