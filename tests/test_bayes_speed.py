"""Issue 16, item 2: the faster Power / s-fit evaluation equals the previous windowed sums.

* Euler–Maclaurin now also sums windows of 2,000–20,000 terms above k = 1000 (before: only
  ≥ 20,000; the ~15,000-term windows of OUE at n = 10⁶ were summed term by term and were 90 % of
  the s fit). Reference: the plain windowed direct sums (``tail_em=False``), at the cases the new
  threshold newly covers, small and large n and ε.
* The fit evaluates the likelihood once per distinct count with its multiplicity. Reference: the
  same likelihood summed over every value.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.methods.bayes import engine as core
from ldpopt.methods.bayes import exponent_fit as pf
from ldpopt.methods.bayes import posterior as bayes


@pytest.mark.parametrize("n,S,s", [
    (10**6, 1919.0, 1.83),      # OUE, ε = 1, n = 10⁶ (Kosarak scale)
    (10**6, 1919.0, 0.0),
    (10**6, 1919.0, 9.7),
    (40_000, 1100.0, 1.2),       # small n: windows clipped at n
    (10**9, 1005.0, 2.5),        # large n, √v just above EM_MIN_SCALE (large ε)
    (10**5, 1500.0, 0.4),        # mid n, flat prior
])
def test_new_em_windows_match_direct_sums(n, S, s):
    rng = np.random.default_rng(5)
    prior = core.Prior("power-law", n, s=s)
    x = np.r_[rng.uniform(-6 * S, 8 * S, 60), 0.0, 1.0, 999.5, 2500.0, -12 * S, min(n, 20 * S)]
    lo, hi = core.windows(x, S, prior)
    terms = hi - np.maximum(lo, core.EM_START) + 1
    newly = (terms >= core.EM_MIN_TERMS) & (terms < 20_000)
    assert newly.any()                       # the cases the old threshold summed term by term
    moments = ("z", "k", "l1", "l2")
    fast = core.exact_logsums(x, S, prior, moments, relative=True)
    direct = core.exact_logsums(x, S, prior, moments, relative=True, tail_em=False)
    assert np.all(np.abs(fast - direct) <= 1e-13 * (1 + np.abs(direct)))


def _oue(d, n, eps, seed):
    rng = np.random.default_rng(seed)
    w = np.arange(1, d + 1, dtype=np.float64) ** -1.2
    tc = rng.multinomial(n, w / w.sum())
    p, q = 0.5, 1.0 / (np.exp(eps) + 1.0)
    c = rng.binomial(tc, p) + rng.binomial(n - tc, q)
    return Estimate.from_counts(c, n, eps, p, q, oracle="oue")


@pytest.mark.parametrize("d,n,eps", [(3000, 10**6, 1.0), (500, 2000, 4.0), (4000, 10**5, 0.2)])
def test_weighted_distinct_count_likelihood_equals_the_full_sum(d, n, eps):
    est = _oue(d, n, eps, 2)
    x, S = bayes._x(est), bayes.noise_sd_counts(est)
    ux, w = np.unique(x, return_counts=True)
    assert ux.shape[0] < x.shape[0]          # counts repeat: the weighting does something
    for s in (0.0, 1.1, 4.0):
        full = pf.loglik_score(x, S, n, s)
        fast = pf.loglik_score(ux, S, n, s, w)
        for a, b in zip(fast, full):
            assert abs(a - b) <= 1e-12 * max(1.0, abs(b))
