"""The fused sketch kernels (ldpopt.kernels.sketch) give the numpy references' sketches bit for bit:
CMS and RAPPOR through ``grouped_column_sums`` (sort + packed column counts per group), HCMS through
its ``bincount``; the 8-bit counters' flush (groups of more than 255, 510 and 765 reports), widths
that are not multiples of 8, empty groups, one report, and the errors for out-of-range reports."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.oracles.cms import grouped_column_sums

pytest.importorskip("numba", reason="the sketch kernels need numba (the 'kernels' extra)")
from ldpopt.kernels import sketch as K  # noqa: E402


@pytest.mark.parametrize("n,size,T,seed", [(1, 3, 5, 0), (2000, 1, 8, 1), (3000, 4, 13, 2), (5000, 64, 256, 3),
                                           (700, 9, 1, 4)])
def test_grouped_bit_sums_equal_the_numpy_reference(n, size, T, seed):
    gen = np.random.default_rng(seed)
    groups = gen.integers(0, max(1, size - 1), n)  # the last group stays empty (when size > 1)
    bits = gen.random((n, T)) < gen.random()
    S_ref, N_ref = grouped_column_sums(groups, bits, size, "numpy")
    S, N = grouped_column_sums(groups, bits, size, "cpu")
    assert S.dtype == np.int64 and np.array_equal(S, S_ref) and np.array_equal(N, N_ref)
    # a plain count, independent of both (np.add.at of the rows)
    want = np.zeros((size, T), np.int64)
    np.add.at(want, groups, bits.astype(np.int64))
    assert np.array_equal(S, want) and N.sum() == n
    S8, N8, bad = K.grouped_bit_sums(groups, bits.astype(np.uint8), size)  # 0/1 bytes read as they are
    assert bad == 0 and np.array_equal(S8, want) and np.array_equal(N8, N)


def test_grouped_bit_sums_flush_keeps_every_count():
    """One group with 255·3 + 7 all-ones reports: every counter wraps three times if not flushed."""
    n = 255 * 3 + 7
    S, N, bad = K.grouped_bit_sums(np.zeros(n, np.int64), np.ones((n, 33), bool), 2)
    assert bad == 0 and np.all(S[0] == n) and np.all(S[1] == 0) and N.tolist() == [n, 0]


def test_grouped_bit_sums_counts_out_of_range_groups():
    groups = np.array([0, 1, -1, 2, 5])
    S, N, bad = K.grouped_bit_sums(groups, np.ones((5, 4), bool), 3)
    assert bad == 2 and N.tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="bits must be bool or uint8"):
        K.grouped_bit_sums(groups, np.ones((5, 4)), 3)


@pytest.mark.parametrize("eps,d,k,m,n", [(1.0, 20, 4, 16, 1), (2.0, 300, 16, 64, 4000), (4.0, 50, 3, 8, 2500)])
def test_cms_and_rappor_sketches_on_the_kernel_equal_numpy(eps, d, k, m, n):
    gen = np.random.default_rng(n)
    values = gen.integers(0, d, n)
    cms = oracles.CMS(eps, d, k=k, m=m, hash_seed=5)
    rep = cms.perturb(values, gen)
    for a, b in zip(cms.sketch(rep, "numpy"), cms.sketch(rep, "cpu")):
        assert np.array_equal(a, b)
    assert np.array_equal(cms.aggregate(rep, "numpy"), cms.aggregate(rep, "cpu"))
    rap = oracles.RAPPOR(eps, d, num_bits=m + 3, cohorts=k, hash_seed=5)
    rep = rap.perturb(values, gen)
    for a, b in zip(rap.sketch(rep, "numpy"), rap.sketch(rep, "cpu")):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("k,m,n", [(1, 2, 1), (4, 16, 3000), (64, 256, 20000)])
def test_hcms_sketch_on_the_kernel_equals_numpy(k, m, n):
    gen = np.random.default_rng(k)
    o = oracles.HCMS(2.0, 100, k=k, m=m, hash_seed=1)
    rep = o.perturb(gen.integers(0, 100, n), gen)
    z_ref, N_ref = o.sketch(rep, "numpy")
    z, N = o.sketch(rep, "cpu")
    assert np.array_equal(z, z_ref) and np.array_equal(N, N_ref)
    z2, N2, bad = K.signed_cell_sums(rep, k, m)
    assert bad == 0 and np.array_equal(z2, z_ref)
    assert np.array_equal(o.aggregate(rep, "cpu"), o.aggregate(rep, "numpy"))


@pytest.mark.parametrize("K_", [1, 2, 8, 256])
def test_fwht_rows_equals_the_numpy_transform(K_):
    from ldpopt.oracles.hadamard import fwht

    x = np.random.default_rng(K_).integers(-10**6, 10**6, (5, K_))
    assert np.array_equal(K.fwht_rows(x), fwht(x))
    assert np.array_equal(K.fwht_rows(K.fwht_rows(x)), K_ * x)  # H·H = K·I
    with pytest.raises(ValueError, match="power of 2"):
        K.fwht_rows(np.ones((2, 6), int))


def test_hcms_kernel_refuses_bad_rows_with_the_numpy_errors():
    o = oracles.HCMS(2.0, 10, k=4, m=8)
    good = np.array([[0, 1, 1], [3, 7, -1]])
    for bad, msg in (([[4, 0, 1]], "j must lie"), ([[0, 8, 1]], "l in"), ([[0, 0, 0]], "y must be")):
        r = np.vstack([good, bad])
        assert K.signed_cell_sums(r, 4, 8)[2] == 1
        with pytest.raises(ValueError, match=msg):
            o.sketch(r, "cpu")
