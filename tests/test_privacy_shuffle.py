"""ldpopt.privacy.shuffle: the two accountants of Feldman, McMillan & Talwar (FOCS 2021) against
references that share nothing with the code (Theorem 3.1 transcribed in mpmath; the reduction's
hockey-stick divergence summed over its whole two-dimensional support by brute force), their order
(numerical never looser than closed form, never above ε₀), monotonicity in n and ε₀ on generated
settings, and the authors' published example."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from conftest import examples
from ldpopt.privacy import shuffle
from ldpopt.privacy.shuffle import closed_form_applies, hockey_stick, shuffled

eps0s = st.floats(min_value=0.1, max_value=6.0)
deltas = st.sampled_from([1e-4, 1e-6, 1e-8])
ns = st.integers(min_value=100, max_value=200_000)


def _closed_form_mp(eps0: float, n: int, delta: float) -> float:
    # Theorem 3.1 as the authors' code states it (the larger of its two written forms)
    e0 = mpmath.e ** mpmath.mpf(eps0)
    a = 8 * mpmath.sqrt(e0 * mpmath.log(4 / mpmath.mpf(delta))) / mpmath.sqrt(n)
    c = 8 * e0 / n
    e1 = mpmath.log(1 + a + c)
    return float(mpmath.log(1 + (1 - 1 / e0) / (1 + mpmath.e ** (-mpmath.mpf(eps0) - e1)) * (a + c)))


def _closed_form_arxiv_mp(eps0: float, n: int, delta: float) -> float:
    e0 = mpmath.e ** mpmath.mpf(eps0)
    inner = 8 * mpmath.sqrt(e0 * mpmath.log(4 / mpmath.mpf(delta))) / mpmath.sqrt(n) + 8 * e0 / n
    return float(mpmath.log(1 + (e0 - 1) / (e0 + 1) * inner))


def _brute_delta(eps: float, eps0: float, n: int) -> float:
    """δ(ε) of the pair P = (A + Δ, C − A + 1 − Δ), Q = (A + 1 − Δ, C − A + Δ) by summing
    max(P − e^ε Q, 0) and max(Q − e^ε P, 0) over every (x, y) of the joint support."""
    alpha = math.exp(eps0) / (math.exp(eps0) + 1)
    pc = stats.binom.pmf(np.arange(n), n - 1, math.exp(-eps0))
    P = np.zeros((n + 1, n + 1))
    Q = np.zeros((n + 1, n + 1))
    for c in range(n):
        a = np.arange(c + 1)
        pa = stats.binom.pmf(a, c, 0.5) * pc[c]
        # Δ = 1 (prob α): P at (a + 1, c − a), Q at (a, c − a + 1); Δ = 0: the other way round
        np.add.at(P, (a + 1, c - a), alpha * pa)
        np.add.at(P, (a, c - a + 1), (1 - alpha) * pa)
        np.add.at(Q, (a, c - a + 1), alpha * pa)
        np.add.at(Q, (a + 1, c - a), (1 - alpha) * pa)
    e = math.exp(eps)
    return max(float(np.clip(P - e * Q, 0, None).sum()), float(np.clip(Q - e * P, 0, None).sum()))


@settings(max_examples=examples(25), deadline=None)
@given(eps0=eps0s, n=ns, delta=deltas)
def test_closed_form_is_theorem_3_1(eps0, n, delta):
    got = shuffled(eps0, n, delta, method="closed-form")
    if closed_form_applies(eps0, n, delta):
        assert got.epsilon == pytest.approx(min(_closed_form_mp(eps0, n, delta), eps0), rel=1e-12)
        assert got.clamped == (_closed_form_mp(eps0, n, delta) >= eps0)
        # the stated form is never below the arXiv text's (the larger holds whichever is proved)
        assert got.epsilon >= min(_closed_form_arxiv_mp(eps0, n, delta), eps0) * (1 - 1e-12)
        assert eps0 <= math.log(n / (16 * math.log(2 / delta)))   # the stricter condition implies the other
    else:
        assert eps0 > math.log(n / (16 * math.log(4 / delta)))
        assert got.epsilon == eps0 and got.clamped


@settings(max_examples=examples(12), deadline=None)
@given(eps0=st.floats(min_value=0.2, max_value=3.0), n=st.integers(min_value=1, max_value=60),
       frac=st.floats(min_value=0.0, max_value=0.99))
def test_hockey_stick_against_brute_force_sum(eps0, n, frac):
    eps = frac * eps0
    assert hockey_stick(eps, eps0, n, tail=1e-300) == pytest.approx(_brute_delta(eps, eps0, n), rel=1e-9, abs=1e-15)


@settings(max_examples=examples(20), deadline=None)
@given(eps0=eps0s, n=ns, delta=deltas)
def test_numerical_never_looser_than_closed_form_nor_above_eps0(eps0, n, delta):
    num = shuffled(eps0, n, delta)
    closed = shuffled(eps0, n, delta, method="closed-form")
    assert num.epsilon <= closed.epsilon <= eps0
    assert num.epsilon <= eps0
    # the ε returned satisfies the reduction at δ, and a clearly smaller ε does not
    assert hockey_stick(num.epsilon, eps0, n, tail=1e-300) <= delta * (1 + 1e-9)
    if num.epsilon > 1e-6:
        assert hockey_stick(num.epsilon * (1 - 1e-4), eps0, n, tail=1e-300) > delta


@settings(max_examples=examples(15), deadline=None)
@given(eps0=eps0s, n=st.integers(min_value=100, max_value=50_000), factor=st.integers(min_value=2, max_value=10),
       delta=deltas)
def test_numerical_falls_with_n(eps0, n, factor, delta):
    small, large = shuffled(eps0, n, delta), shuffled(eps0, n * factor, delta)
    assert large.epsilon <= small.epsilon * (1 + 1e-6) + 1e-12


@settings(max_examples=examples(15), deadline=None)
@given(eps0=eps0s, step=st.floats(min_value=0.05, max_value=2.0), n=ns, delta=deltas)
def test_numerical_grows_with_eps0(eps0, step, n, delta):
    low, high = shuffled(eps0, n, delta), shuffled(eps0 + step, n, delta)
    assert low.epsilon <= high.epsilon * (1 + 1e-6) + 1e-12


def test_no_amplification_is_clamped_and_said():
    got = shuffled(8.0, 1000, 1e-6)
    assert got.epsilon == 8.0 and got.clamped and "no amplification" in str(got)
    assert shuffled(1.0, 1, 1e-6).epsilon <= 1.0
    for method in shuffle.METHODS:  # e^{ε₀} beyond a double: no amplification, said, no overflow
        huge = shuffled(800.0, 10**6, 1e-6, method=method)
        assert huge.epsilon == 800.0 and huge.clamped


def test_authors_published_example():
    # github.com/apple/ml-shuffling-amplification README: n = 1e5, ε₀ = 4, δ = 1e-6 gives ε between
    # 0.1675385583317841 and 0.172790550755978 (their numerical lower and upper bounds); our exact
    # sum lies in their bracket. Their closed form there: 0.5378040242374512, which ldpopt's states
    got = shuffled(4.0, 10**5, 1e-6)
    assert 0.1675385583317841 <= got.epsilon <= 0.172790550755978
    closed = shuffled(4.0, 10**5, 1e-6, method="closed-form")
    assert got.epsilon < closed.epsilon and closed.epsilon == pytest.approx(0.5378040242374512, rel=1e-12)


def test_statement_fields():
    got = shuffled(1.0, 10**4, 1e-6)
    priv = got.as_privacy()
    assert priv["model"] == "shuffled" and priv["relation"] == "replace"
    assert priv["epsilon0"] == 1.0 and priv["n"] == 10**4 and priv["delta"] == 1e-6
    assert priv["epsilon"] == got.epsilon and priv["accountant"] == "fmt-numerical"
    assert "Feldman" in got.reference and "FOCS 2021" in got.reference
    assert set(shuffle.METHODS) == {"numerical", "closed-form"}


@pytest.mark.parametrize(("args", "kwargs", "exc", "word"), [
    ((0.0, 100, 1e-6), {}, ValueError, "epsilon0"),
    ((-1.0, 100, 1e-6), {}, ValueError, "epsilon0"),
    (("1", 100, 1e-6), {}, TypeError, "epsilon0"),
    ((1.0, 0, 1e-6), {}, ValueError, "n must"),
    ((1.0, 2.5, 1e-6), {}, ValueError, "n must"),
    ((1.0, 100, 0.0), {}, ValueError, "delta"),
    ((1.0, 100, 1.0), {}, ValueError, "delta"),
    ((1.0, 100, "x"), {}, TypeError, "delta"),
    ((1.0, 100, 1e-6), {"method": "rdp"}, ValueError, "method"),
])
def test_bad_inputs_name_the_argument(args, kwargs, exc, word):
    with pytest.raises(exc, match=word) as info:
        shuffled(*args, **kwargs)
    assert "\n" not in str(info.value)


def test_inside_the_authors_brackets_on_their_settings():
    """Every (n, ε₀) of the recorded run of the authors' code up to n = 10⁵ (benchmarks/bench_shuffle.py's
    AUTHORS, δ = 1e-6): our exact sum lies in their stepped bracket (up to their bisection's 2⁻²⁰), and
    our closed form equals their code's."""
    from _benchmarks import bench_module

    authors = bench_module("bench_shuffle").AUTHORS
    checked = 0
    for (n, e0), (lo, hi, their_closed) in authors.items():
        if n > 10**5:
            continue
        slack = min(their_closed, e0) * 2.0 ** -20
        got = shuffled(e0, n, 1e-6).epsilon
        assert lo - slack <= got <= hi + slack, (n, e0, lo, got, hi)
        assert shuffled(e0, n, 1e-6, method="closed-form").epsilon == pytest.approx(their_closed, rel=1e-12), (n, e0)
        checked += 1
    assert checked == 15


def _shuffled_rr_delta(eps: float, eps0: float, n: int) -> float:
    """The true δ(ε) of n shuffled binary randomised responses at ε₀ (the analyst sees the count of
    ones), worst case over the other users' bits: user 1's bit 0 or 1, m of the n − 1 others hold 1."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    worst = 0.0
    for m in range(n):
        s = np.convolve(stats.binom.pmf(np.arange(m + 1), m, p), stats.binom.pmf(np.arange(n - m), n - 1 - m, 1 - p))
        P = np.convolve(s, [p, 1 - p])  # user 1 holds 0: reports 1 with probability 1 − p
        Q = np.convolve(s, [1 - p, p])
        e = math.exp(eps)
        worst = max(worst, float(np.clip(P - e * Q, 0, None).sum()), float(np.clip(Q - e * P, 0, None).sum()))
    return worst


@settings(max_examples=examples(15), deadline=None)
@given(eps0=st.floats(min_value=0.2, max_value=4.0), n=st.integers(min_value=2, max_value=150),
       delta=st.sampled_from([1e-2, 1e-3, 1e-4]))
def test_bound_holds_for_shuffled_binary_randomised_response(eps0, n, delta):
    """A real randomiser under the bound: the exact δ of n shuffled binary randomised responses at the
    ε the numerical bound returns is at most δ (the bound is for every ε₀-LDP randomiser)."""
    got = shuffled(eps0, n, delta)
    assert _shuffled_rr_delta(got.epsilon, eps0, n) <= delta * (1 + 1e-9)


# -- every regime: ε₀ up to 700, n up to 10¹² ------------------------------------------------------

def _mp_delta(eps: float, eps0: float, n: int) -> float:
    """The reduction's δ(ε) in mpmath (60 digits): Σ_c P(C = c) Σ_k (P_c(k) − e^ε Q_c(k))₊, first
    coordinate A + Bern(α) under P and A + Bern(1 − α) under Q, A ~ Bin(c, ½); no overflow at any ε₀."""
    with mpmath.workdps(60):
        e0, e = mpmath.e ** mpmath.mpf(eps0), mpmath.e ** mpmath.mpf(eps)
        pcl = 1 / e0
        alpha, beta = 1 / (1 + pcl), pcl / (1 + pcl)  # 1 − α written out: α rounds to 1 at 60 digits
        total = mpmath.mpf(0)
        for c in range(n):
            w = mpmath.binomial(n - 1, c) * pcl ** c * (1 - pcl) ** (n - 1 - c)
            b = [mpmath.mpf(0)] + [mpmath.binomial(c, k) / mpmath.mpf(2) ** c for k in range(c + 1)] + [mpmath.mpf(0)]
            # b[k + 1] = Pr[A = k]; the first coordinate k = 0 … c + 1
            s = sum(max(alpha * b[k] + beta * b[k + 1] - e * (beta * b[k] + alpha * b[k + 1]), 0) for k in range(c + 2))
            total += w * s
        return float(total)


@settings(max_examples=15, deadline=None)
@given(eps0=st.floats(min_value=300.0, max_value=700.0), n=st.integers(1, 12), frac=st.floats(0.0, 0.999))
def test_hockey_stick_at_large_eps0_against_mpmath(eps0, n, frac):
    # ε₀ between 355 and 700 raised OverflowError (e^{ε+ε₀} in a double)
    assert hockey_stick(frac * eps0, eps0, n, tail=1e-300) == pytest.approx(_mp_delta(frac * eps0, eps0, n),
                                                                            rel=1e-9, abs=1e-300)


@settings(max_examples=10, deadline=None)
@given(eps0=st.floats(min_value=0.01, max_value=700.0), logn=st.floats(min_value=0.0, max_value=12.0))
def test_shuffled_is_fast_and_valid_at_any_n(eps0, logn):
    import time

    n = max(1, round(10**logn))
    t0 = time.process_time()
    b = shuffled(eps0, n, 1e-6)
    assert time.process_time() - t0 < 3.0  # was 21 s of CPU at 10⁹, more than 180 s at 10¹²
    assert 0.0 <= b.epsilon <= eps0 and b.clamped == (not b.epsilon < eps0)
    assert hockey_stick(b.epsilon, eps0, n) <= 1e-6 * (1 + 1e-9)


def test_blocks_of_clone_counts_bound_the_exact_sum(monkeypatch):
    exact = [hockey_stick(e, 1.0, 10**6, tail=1e-12) for e in (0.001, 0.004, 0.01)]
    monkeypatch.setattr(shuffle, "_EXACT_CLONES", 256)
    monkeypatch.setattr(shuffle, "_EXACT_CLONES_MAX", 256)
    monkeypatch.setattr(shuffle, "_BLOCK_WIDTH", 1e-5)
    shuffle._clone_law.cache_clear()
    blocked = [hockey_stick(e, 1.0, 10**6, tail=1e-12) for e in (0.001, 0.004, 0.01)]
    shuffle._clone_law.cache_clear()
    for x, y in zip(exact, blocked):
        assert x <= y <= x * (1 + 1e-3) + 1e-15


def test_shuffled_among_fewer_users_than_reports_is_refused():
    from ldpopt import oracles

    est = oracles.get("grr", 1.0, 4).estimate([4600, 3000, 1500, 900], 10_000)
    with pytest.raises(ValueError, match="n must be >= the estimate's n = 10000"):
        est.shuffled(1e-6, n=10)
    assert est.shuffled(1e-6, n=10_000).privacy.record["n"] == 10_000
