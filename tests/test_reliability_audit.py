"""Privacy audit of every oracle's real randomiser, planted bugs, and rng="secure" (RELIABILITY.md,
family "audit")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt import oracles
from ldpopt._validation import as_generator
from ldpopt.audit import audit
from ldpopt.audit.bounds import clopper_pearson
from ldpopt.oracles import GRR, OUE

ALPHA = 1e-3  # each bound holds with confidence 99.9 %; fixed seeds make the tests deterministic


@pytest.mark.parametrize("name", oracles.available())
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_audit_never_exceeds_claimed_epsilon(name, eps):
    o = oracles.get(name, eps, 6)
    res = audit(o, trials=100_000, alpha=ALPHA, rng=17)
    assert not res.violated and res.epsilon_lb <= eps, res
    if name in ("grr", "oue", "sue"):
        # "supports v and not v'" attains e^ε exactly for these: the audit has power (CI width at
        # N = 1e5 is a few percent of the probabilities)
        assert res.epsilon_lb >= 0.85 * eps, res


class GRRTooLikelyToKeep(GRR):
    """Planted bug: keeps the true value with the probability of GRR at 2ε, claims ε."""

    def perturb(self, values, rng):
        v = np.asarray(values, dtype=np.int64)
        gen = as_generator(rng)
        p_bad = 1.0 / (1.0 + (self.d - 1) * math.exp(-2 * self.epsilon))
        other = gen.integers(0, self.d - 1, size=v.shape[0])
        other += other >= v
        return np.where(gen.random(v.shape[0]) < p_bad, v, other)


class OUEWrongQ(OUE):
    """Planted bug: q = 1/(e^{2ε} + 1) (the exponent doubled), claims ε."""

    @property
    def q(self):
        return 1.0 / (math.exp(2 * self.epsilon) + 1.0)


@pytest.mark.parametrize("cls", [GRRTooLikelyToKeep, OUEWrongQ])
def test_audit_flags_a_broken_mechanism(cls):
    o = cls(1.0, 6)
    res = audit(o, trials=100_000, alpha=ALPHA, rng=5)
    assert res.violated and res.epsilon_lb > 1.5, res  # real ε is 2


def test_clopper_pearson_against_mpmath_and_edges():
    import mpmath as mp

    lo, hi = clopper_pearson(30, 100, 0.025)
    # lower bound L solves Pr[Bin(100, L) >= 30] = 0.025; upper U solves Pr[Bin(100, U) <= 30] = 0.025
    tail_ge = lambda p: mp.fsum(mp.binomial(100, k) * p**k * (1 - p) ** (100 - k) for k in range(30, 101))
    tail_le = lambda p: mp.fsum(mp.binomial(100, k) * p**k * (1 - p) ** (100 - k) for k in range(31))
    assert abs(float(tail_ge(mp.mpf(lo))) - 0.025) < 1e-9
    assert abs(float(tail_le(mp.mpf(hi))) - 0.025) < 1e-9
    assert clopper_pearson(0, 10, 0.05)[0] == 0.0 and clopper_pearson(10, 10, 0.05)[1] == 1.0


def test_audit_bad_input():
    o = oracles.get("grr", 1.0, 4)
    with pytest.raises(ValueError, match="v_prime"):
        audit(o, 0, 9)
    with pytest.raises(ValueError, match="differ"):
        audit(o, 1, 1)
    with pytest.raises(ValueError, match="alpha"):
        audit(o, alpha=1.5)
    with pytest.raises(ValueError, match="trials"):
        audit(o, trials=0)
    with pytest.raises(TypeError, match="oracle"):
        audit("grr")


@pytest.mark.parametrize("name", oracles.available())
def test_support_matrix_matches_aggregate(name):
    o = oracles.get(name, 1.5, 21)
    r = o.perturb(np.arange(21).repeat(40), 3)
    S = o.support_matrix(r)
    assert S.shape == (840, 21) and S.dtype == bool
    np.testing.assert_array_equal(S.sum(axis=0), o.aggregate(r))


# -- rng="secure": a CSPRNG stream ------------------------------------------------------------------
@pytest.mark.parametrize("name", oracles.available())
def test_secure_rng_perturb_is_valid_and_fresh(name):
    o = oracles.get(name, 1.0, 20)
    values = np.arange(20).repeat(25)
    r1, r2 = o.perturb(values, "secure"), o.perturb(values, "secure")
    for r in (r1, r2):
        c = o.aggregate(r)  # validates the reports
        assert c.shape == (20,) and c.min() >= 0 and c.max() <= values.shape[0]
    assert not np.array_equal(r1, r2)  # 500 users: equal only with negligible probability


def test_secure_generator_reads_the_os_csprng(monkeypatch):
    import os

    calls = []
    real = os.urandom
    monkeypatch.setattr(os, "urandom", lambda k: (calls.append(k), real(k))[1])
    g = as_generator("secure")
    x = g.random(10_000)
    assert calls and sum(calls) >= 8 * 10_000  # every double consumed a word from os.urandom
    # the stream is uniform: 10 bins, chi-square below the 99.99 % quantile (33.7 at 9 df)
    h = np.bincount((x * 10).astype(int), minlength=10)
    assert ((h - 1000.0) ** 2 / 1000.0).sum() < 33.7
    assert g.bit_generator.random_raw(4).dtype == np.uint64


@settings(max_examples=examples(60), deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.booleans(),
                 st.text(max_size=3), st.none()))
def test_check_delta_accepts_exactly_the_reals_in_0_1(value):
    """A privacy δ is a real number in [0, 1): everything else is refused in one line naming it."""
    from ldpopt._validation import check_delta

    real = isinstance(value, (int, float)) and not isinstance(value, bool)
    if real and 0.0 <= float(value) < 1.0:
        assert check_delta(value, "dlt") == float(value)
    else:
        with pytest.raises((TypeError, ValueError), match=r"^dlt must be a real number in \[0, 1\)"):
            check_delta(value, "dlt")
