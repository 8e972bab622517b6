"""Values the verify runner shares across claims / instances equal a fresh computation."""

import numpy as np

from ldpopt.verify import instances


def _fresh(n, d, kind):
    k = np.arange(1, d + 1, dtype=np.float64)
    w = k ** -1.1 if kind == "zipf" else np.where(k <= np.ceil(d / 2), 1.0 / k, 0.0)
    return instances._round_counts(w, n)


def test_true_histograms_sharing_weights_equal_fresh_ones():
    instances._weights.cache_clear()
    instances._true_histogram.cache_clear()
    for kind in ("zipf", "half-zero"):
        for n in (10_000, 1_000_000, 10_000):  # the second n reuses the first's cached weights
            c = instances.true_histogram(n, 30_001, kind)
            assert np.array_equal(c, _fresh(n, 30_001, kind)) and int(c.sum()) == n
    assert instances._weights.cache_info().hits >= 2
    w = instances._weights(30_001, "zipf")
    assert not w.flags.writeable  # a caller cannot corrupt the shared weights
