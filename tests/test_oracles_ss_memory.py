"""Subset Selection's exact fast path (``oracles.subset_counts``) merges each piece of a level's
splits as it is drawn: the counts must not depend on the piece sizes, must stay those stored in
``tests/data/ss_counts.npz`` and as digests below, and the peak memory must stay bounded.

Provenance of the stored counts: the code that merged once per level (commit 15db1ce) drew the
first reference; the piece-wise merge reproduced it bit for bit. The references were drawn again
when the hypergeometric tables became products of exact ratios (the same bits on every CPU, where
numpy's SIMD ``exp``/``log`` had made the draws differ between AVX2 and AVX-512 machines), by this
file's own calls, and checked equal with numpy's AVX-512, AVX2 and baseline code paths
(``NPY_DISABLE_CPU_FEATURES``). Their law is held by tests/test_oracles_joint_law.py."""

from __future__ import annotations

import hashlib
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from ldpopt.oracles import subset_counts as _subset_counts
from ldpopt.oracles.subset import SS

REFERENCE = Path(__file__).resolve().parent / "data" / "ss_counts.npz"


def _zipf(d, n, seed):
    p = np.arange(1, d + 1, dtype=np.float64) ** -1.5
    return np.random.default_rng(seed).multinomial(n, p / p.sum())


@pytest.mark.parametrize("batch_cells", [None, 1 << 12])
@pytest.mark.parametrize("case", range(6))
def test_counts_are_bit_identical_to_the_per_level_merge(case, batch_cells, monkeypatch):
    """Six (d, k, n, seed) cases (per-user and multinomial splits, k = 1, k > d/2, n up to 10⁸), with
    the default piece size and with tiny pieces (many per-user pieces, many multinomial batches,
    many folds of the pinned buffer): the counts equal the stored ones whatever the piece size."""
    if batch_cells is not None:
        monkeypatch.setattr(_subset_counts, "_BATCH_CELLS", batch_cells)
    ref = np.load(REFERENCE)
    d, k, n, seed = (int(v) for v in ref[f"case{case}_params"])
    lam = float(ref[f"case{case}_lam"][0])
    got = _subset_counts.sample_subset_counts(np.random.default_rng(seed), d, k, lam, _zipf(d, n, seed))
    assert got.sum() == n * k
    np.testing.assert_array_equal(got, ref[f"case{case}"])


# (d, n): the peak traced by tracemalloc over one call (ε = 1, Zipf(1.5) data, seed 7), the digest
# of the stored counts (module docstring), and a bound on the peak. Measured peaks: 169 MB and 484 MB
# for the code that kept a level's pieces until the end of the level; 78 MB and 93 MB now.
@pytest.mark.parametrize("d, n, sha1, bound_mb", [
    (42_178, 10**7, "9f88aef3f373a3e279de3a0c9a70ad1f08aff977", 120),
    (2048, 10**9, "546070e96e7e46e436546c098629e496104d21cc", 200),
])
def test_peak_memory_is_bounded_and_counts_unchanged(d, n, sha1, bound_mb):
    o = SS(1.0, d)
    tc = _zipf(d, n, 20240601)
    tracemalloc.start()
    try:
        c = _subset_counts.sample_subset_counts(np.random.default_rng(7), d, o.k, o.mixture_weight, tc)
        peak = tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()
    assert hashlib.sha1(np.ascontiguousarray(c, np.int64).tobytes()).hexdigest() == sha1
    assert peak < bound_mb, f"peak {peak:.0f} MB"
