"""Estimate's check that f_tilde and counts describe the same estimate (count scale, absolute
tolerance 1e-9 n): the 3-pass form against np.allclose(rtol=0), the form it replaces."""

import numpy as np
import pytest

from ldpopt import Estimate


@pytest.mark.parametrize("shift", [0.0, 0.5e-9, 0.99e-9, 1.01e-9, 2e-9, -1.01e-9, 1e300])
def test_agreement_check_matches_allclose(shift):
    n, p, q = 1000, 0.5, 0.25
    counts = np.array([100.0, 250.0, 400.0, 0.0])
    f = (counts / n - q) / (p - q)
    f_bad = f.copy()
    f_bad[2] += shift / (p - q)  # n·(p − q)·Δf = shift·n on the count scale
    agree = np.allclose(n * (q + (p - q) * f_bad), counts, rtol=0.0, atol=1e-9 * n)
    if agree:
        est = Estimate(f_tilde=f_bad, counts=counts, n=n, epsilon=1.0, p=p, q=q, oracle="oue")
        assert est.counts.tolist() == counts.tolist()
    else:
        with pytest.raises(ValueError, match="f_tilde and counts disagree"):
            Estimate(f_tilde=f_bad, counts=counts, n=n, epsilon=1.0, p=p, q=q, oracle="oue")
    assert agree == (abs(shift) < 1e-9 or shift == 0.0) or abs(abs(shift) - 1e-9) < 1e-11
