"""Published designs and formulas of the three heavy-hitter protocols, checked (REPRODUCTION.md,
"Heavy-hitter discovery"; the papers are not in the papers folder, each test names its source):

* PEM (Wang, Li & Jha, IEEE TDSC 2019, §IV): g = ⌈(m − γ)/η⌉ groups, γ = ⌈log2 k⌉; each round's
  estimate has OLH's variance at n/g users, ≈ g·4e^ε/(n(e^ε − 1)²) (Wang et al. USENIX Security 2017,
  §4.4, at g_OLH = e^ε + 1) — the price of splitting the users — plus, against the population's
  frequency, the sampling variance of the random split;
* TreeHist (Bassily et al., NeurIPS 2017, §3): the word estimates of the found items, every user at
  ε/2, are within τ = σ·√(2 ln(C/β)) of the truth for all C candidates at once w.p. ≥ 1 − β (the
  paper's O(√(n log(|V|/β))/ε) error bound with our explicit sub-Gaussian constant);
* SFP (Apple, "Learning with Privacy at Scale", 2017): the puzzle's word hash has 256 values, so two
  distinct words share it w.p. 1/256, and a fragment report lives in a domain of 256·2^r values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpopt import heavy, oracles
from ldpopt.heavy.pem import pem_lengths
from ldpopt.heavy.sfp import HASH_VALUES, fragment_values, word_hash
from ldpopt.heavy.treehist import threshold


def _population(m=16, size=40, n=20000, seed=11):
    rng = np.random.default_rng(seed)
    codes = rng.choice(1 << m, size=size, replace=False).astype(np.int64)
    p = 1.0 / np.arange(1, size + 1) ** 1.2
    return codes, rng.multinomial(n, p / p.sum()).astype(np.int64)


def test_pem_group_design_and_round_variance():
    eps, k, n = 3.0, 4, 20000
    codes, counts = _population(n=n)
    lengths = pem_lengths(16, k, 4)
    g = math.ceil((16 - math.ceil(math.log2(k))) / 4)
    assert len(lengths) == g == 4 and lengths == [6, 10, 14, 16]
    top = heavy.true_top(codes, counts, 1)[0]
    f_top = counts[codes == top][0] / n
    gen = np.random.default_rng(3)
    est = []
    for _ in range(500):
        r = heavy.pem(codes, counts, total_bits=16, epsilon=eps, k=k, step_bits=4, rng=gen)
        est.append(r.frequencies[r.items == top][0])
    est = np.array(est)
    o = oracles.get("olh", eps, 2)
    exact = float(o.variance(f_top, n // g))       # OLH's variance at the group's n/g users
    paper = g * 4 * math.exp(eps) / (n * (math.exp(eps) - 1) ** 2)   # the f-free approximation
    # against the population frequency, the random split adds the group's sampling variance
    # f(1 − f)(1 − 1/g)/(n/g) (hypergeometric, our addition: the paper's variance is the oracle's alone)
    split = f_top * (1 - f_top) * (g - 1) / n
    assert est.var(ddof=1) == pytest.approx(exact + split, rel=0.2)   # 500 draws: s.e. of a variance ≈ 6 %
    assert abs(est.mean() - f_top) < 4 * math.sqrt(exact / est.size)
    # the paper's form is OLH's f-free variance (arXiv Eq. 7) at n/g users, up to rounding g_OLH
    assert paper == pytest.approx(o.approx_variance(n // g), rel=0.02)
    assert exact > (g - 0.5) * float(o.variance(f_top, n))


def test_treehist_word_estimates_meet_the_error_bound():
    eps, beta, n = 4.0, 0.05, 20000
    codes, counts = _population(n=n)
    f_true = dict(zip(codes.tolist(), (counts / n).tolist()))
    gen = np.random.default_rng(5)
    worst, errs = [], []
    for _ in range(300):
        r = heavy.treehist(codes, counts, total_bits=16, epsilon=eps, k=4, step_bits=8, rng=gen)
        e = np.array([f - f_true.get(int(c), 0.0) for c, f in zip(r.items, r.frequencies)])
        tau = threshold(r.params["word_sigma2"], r.levels[-1].kept.size, beta)
        worst.append(np.max(np.abs(e)) > tau)
        errs.append(e[0])
    # w.p. ≥ 1 − β no found item is off by more than τ (binomial slack of 3 s.e. over 300 runs)
    assert np.mean(worst) <= beta + 3 * math.sqrt(beta * (1 - beta) / 300)
    # the word report: all n users at ε/2 — OLH's variance (f term included) at n, ε/2
    o = oracles.get("olh", eps / 2, 2)
    f_top = counts.max() / n
    assert np.var(errs, ddof=1) == pytest.approx(float(o.variance(f_top, n)), rel=0.25)


def test_sfp_hash_and_fragment_design():
    codes = np.random.default_rng(2).choice(1 << 48, size=200_000, replace=False).astype(np.int64)
    h = word_hash(codes)
    p = np.bincount(h, minlength=HASH_VALUES) / h.size
    assert HASH_VALUES == 256 and p.size == 256
    # collision probability of two distinct words: Σ p_h² = 1/256 (+ the sampling noise of p, ~1/n)
    assert np.sum(p ** 2) == pytest.approx(1 / 256, rel=0.02)
    v = fragment_values(codes, 48, 16, 2)   # 2-byte fragments (Apple's 2 characters), position 2 of 3
    assert v.min() >= 0 and v.max() < 256 * (1 << 16)
    assert np.array_equal(v & 0xFFFF, codes & 0xFFFF) and np.array_equal(v >> 16, h)
