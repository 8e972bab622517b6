"""RAPPOR's published privacy numbers (Erlingsson, Pihur & Korolova, CCS 2014, §3) checked against
the enumerated law of ldpopt's RAPPOR client, and Apple's CMS count estimator's scale (Apple 2017)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpopt import oracles


def test_rappor_epsilons_of_the_papers_parameters_by_enumeration():
    """h = 2, f = 0.5, p = 0.5, q = 0.75: ε_∞ = 2h ln((1 − f/2)/(f/2)) = 4 ln 3 ≈ 4.394 and
    ε₁ = h ln(q*(1 − p*)/(p*(1 − q*))) ≈ 1.0743 (q* = 0.6875, p* = 0.5625)."""
    o = oracles.RAPPOR.from_f(0.5, 8, num_hashes=2, num_bits=6, cohorts=1, inst_p=0.5, inst_q=0.75, hash_seed=0)
    assert o.q_star == pytest.approx(0.6875) and o.p_star == pytest.approx(0.5625)
    assert o.epsilon_inf == pytest.approx(4 * math.log(3))
    assert o.epsilon_one == pytest.approx(1.0743, abs=1e-4)
    L = np.log(o.output_distribution())
    enum = float((L[:, None, :] - L[None, :, :]).max())  # one report, every output, every pair
    assert enum == pytest.approx(o.exact_epsilon_one(), rel=1e-12)
    B = o.bloom()[0]  # (T, d)
    disjoint = ((B[:, :, None] & B[:, None, :]).sum(axis=0) == 0) & (B.sum(axis=0)[:, None] == 2) & (B.sum(axis=0)[None, :] == 2)
    assert disjoint.any()  # this family has two values with disjoint full filters: the bound is reached
    assert enum == pytest.approx(o.epsilon_one, rel=1e-12)
    assert enum <= o.epsilon_one * (1 + 1e-12)
    # the permanent response alone: the memo's law, one bit per filter position
    a, b = o._pair_bits()
    assert o.exact_epsilon_inf() <= o.epsilon_inf * (1 + 1e-12)
    assert o.exact_epsilon_inf() == pytest.approx(float((a + b).max()) * math.log(3))
