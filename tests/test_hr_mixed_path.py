"""HR's previous exact fast path (``sample_counts_mixture``, the reference of the tree path since
issue 16) draws each value's informative outputs by whichever exact sampler is cheaper for that
value (per user when m_v ≤ K/4, a folded multinomial above). Both kinds of values in
one call, against the exact mean and covariance by enumeration (``oracles.jointlaw.count_moments``);
the counts of HR are correlated, so the covariance test sees a wrong mixture."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.oracles.jointlaw import count_moments


def _z(x, mean, cov):
    xc = x - mean
    j, k = np.triu_indices(x.shape[1])
    prod = xc[:, j] * xc[:, k]
    se = prod.std(axis=0, ddof=1) / math.sqrt(x.shape[0])
    cov_z = np.abs(prod.mean(axis=0) - cov[j, k]) / se
    mean_z = np.abs(x.mean(axis=0) - mean) / np.sqrt(np.diag(cov) / x.shape[0])
    return mean_z.max(), cov_z.max()


@pytest.mark.parametrize("eps, tc", [
    (1.5, [40, 2, 15, 1, 5, 0]),                 # K = 8: m_v > 2 folds; tc = 2, 1 always per user
    (0.5, [300, 0, 7, 120, 3, 9, 0, 60, 1, 2]),  # K = 16: m_v > 4 folds
])
def test_mixed_per_user_and_folded_values_have_the_exact_joint_law(eps, tc):
    tc = np.array(tc)
    o = oracles.get("hr", epsilon=eps, d=tc.shape[0])
    lam = math.tanh(eps / 2)
    assert tc.max() * lam > o.K // 4 and 0 < tc[tc > 0].min() <= o.K // 4   # both samplers used
    mean, cov = count_moments(o, tc)
    gen = np.random.default_rng(77)
    x = np.array([o.sample_counts_mixture(tc, gen) for _ in range(20000)], dtype=np.float64)
    mz, cz = _z(x, mean, cov)
    assert mz <= 5 and cz <= 5
