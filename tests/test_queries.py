"""ldpopt.queries: subset-query answers against plain Python sums, Post-Pos, metrics, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from ldpopt import Estimate
from ldpopt.methods import postprocess
from ldpopt.queries import answer, mae, mse, post_pos, query_matrix


def test_answers_match_python_sums_for_every_query_form():
    rng = np.random.default_rng(0)
    d = 40
    f = rng.normal(0.02, 0.05, d)
    sets = [rng.choice(d, size=rng.integers(1, d), replace=False) for _ in range(25)] + [np.array([], dtype=int)]
    ref = np.array([sum(f[i] for i in s) for s in sets])
    masks = [np.isin(np.arange(d), s) for s in sets]
    dense = np.array(masks, dtype=float)
    for form in (sets, masks, dense, dense.astype(bool), sp.csr_matrix(dense), sp.coo_matrix(dense)):
        np.testing.assert_allclose(answer(f, form), ref, atol=1e-15)
    # a single mask or index array is one query; repeated indices count once (sets)
    np.testing.assert_allclose(answer(f, sets[0]), ref[:1], atol=1e-15)
    np.testing.assert_allclose(answer(f, [np.array([3, 3, 5])]), [f[3] + f[5]], atol=1e-16)
    assert query_matrix(sets, d).shape == (26, d)


def test_post_pos_on_singletons_is_base_pos():
    f = np.array([0.7, 0.5, -0.1, -0.1])
    p, q = 0.5, 1 / (np.e + 1)
    est = Estimate.from_frequencies(f, 1000, 1.0, p, q, "oue")
    singletons = [np.array([v]) for v in range(4)]
    np.testing.assert_array_equal(post_pos(answer(est.f_tilde, singletons)), postprocess(est, "base-pos"))


def test_post_pos_is_not_additive_over_disjoint_queries():
    """NDSS §IV-A: answers for disjoint A, B need not add up to the answer for A ∪ B."""
    f = np.array([0.6, -0.1, 0.5])
    a, b = post_pos(answer(f, [np.array([1]), np.array([0, 2])]))
    (ab,) = post_pos(answer(f, [np.array([0, 1, 2])]))
    assert a == 0.0 and b == pytest.approx(1.1) and ab == pytest.approx(1.0)
    assert a + b != pytest.approx(ab)


def test_metrics_against_hand_values():
    est, true = np.array([0.1, 0.4, -0.2]), np.array([0.0, 0.5, 0.0])
    assert mse(est, true) == pytest.approx((0.01 + 0.01 + 0.04) / 3)
    assert mae(est, true) == pytest.approx((0.1 + 0.1 + 0.2) / 3)
    reps = np.array([[0.1, 0.4, -0.2], [0.0, 0.5, 0.0]])
    np.testing.assert_allclose(mse(reps, np.tile(true, (2, 1)), axis=1), [0.02, 0.0], atol=1e-16)


def test_bad_input():
    f = np.array([0.5, 0.3, 0.2])
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        answer(f, [np.array([0, 3])])
    with pytest.raises(ValueError, match="length d = 3"):
        answer(f, [np.array([True, False])])
    with pytest.raises(ValueError, match="0 or 1"):
        answer(f, np.array([[0, 2, 0]]))
    with pytest.raises(ValueError, match="shape"):
        answer(f, np.ones((2, 4)))
    with pytest.raises(ValueError, match="integer"):
        answer(f, [np.array([0.5])])
    with pytest.raises(ValueError, match="at least one query"):
        query_matrix([], 3)
    with pytest.raises(ValueError, match="same shape"):
        mse([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="finite"):
        post_pos([np.nan])
    with pytest.raises(ValueError, match="finite"):
        mae([np.inf], [0.0])
