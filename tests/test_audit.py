"""The client auditor (ldpopt.audit): its bound against an independent binomial inversion, its power on
planted leaks of known ε, and every built-in client held to its stated ε at bounded samples (the
benchmark runs ≥ 10⁶ samples per client: benchmarks/bench_audit.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from ldpopt import keyvalue, multi, oracles
from ldpopt.audit import audit_client
from ldpopt.audit.bounds import epsilon_bound
from ldpopt.audit.attacks import report_matrix, ungroup
from ldpopt.audit.planted import KeyedCoinOLH, PublicKeyedMemo, ReportsABit, SeedAsKeyLOLOHA
from ldpopt.oracles.longitudinal import LOLOHA, DBitFlipPM, longitudinal_oracle

N = 4_000  # runs per input in the suite: every bound holds at 99.9 % whatever N; power needs more


@pytest.mark.parametrize("name", oracles.available(sketches=True))
def test_every_oracle_perturb_within_its_epsilon(name):
    r = audit_client(oracles.get(name, 1.0, 6), samples=N, extra_pairs=1, rng=3)
    assert not r.violated, r.row()


def test_general_channel_clients_within_their_epsilon():
    """A designed strategy's client and MSS's, audited on their perturb: within ε, and the audit has
    power on them (its bound passes a third of ε at N runs)."""
    from ldpopt.design import design
    from ldpopt.oracles.modular import MSS

    for client in (design("ranges", 1.0, d=8, iterations=30, init="random", rng=0).oracle(),
                   MSS(1.0, 8, moduli=(3, 4, 5))):
        r = audit_client(client, samples=N, extra_pairs=1, rng=3)
        assert not r.violated and r.epsilon_lb > 1.0 / 3, r.row()


@pytest.mark.parametrize("name", ["l-grr", "l-sue", "l-soue", "l-oue", "l-osue", "loloha", "l-rappor", "dbitflip"])
@pytest.mark.parametrize("tau", [1, 5, 20])
def test_every_longitudinal_client_within_its_epsilon_over_rounds(name, tau):
    if name == "dbitflip":
        o = DBitFlipPM(2.0, 6, bits=2)
    else:
        o = longitudinal_oracle(name, 2.0, 6, **({"num_bits": 16, "cohorts": 2} if name == "l-rappor" else {}))
    r = audit_client(o, tau=tau, samples=N, extra_pairs=0, rng=tau)
    assert not r.violated and r.stated == pytest.approx(o.epsilon_rounds(tau)), r.row()


@pytest.mark.parametrize("make", [multi.spl, multi.rsfd, multi.smp, multi.calm])
def test_multi_attribute_clients_within_their_epsilon(make):
    p = make((3, 3, 3), 1.0)

    def client(values, rng):
        reps = p.perturb(values, rng)
        # the sampling protocols send (group, that group's reports): one row per user
        return ungroup(reps[0], reps[1]) if len(reps) == 2 and isinstance(reps[1], tuple) else reps

    r = audit_client(client, stated=p.exact_epsilon, pairs=[((0, 0, 0), (1, 1, 1)), ((0, 1, 2), (2, 1, 0))],
                     samples=N, rng=0)
    assert not r.violated, r.row()


@pytest.mark.parametrize("make", [keyvalue.pckv_grr, keyvalue.pckv_ue, keyvalue.privkv])
def test_key_value_clients_within_their_epsilon(make):
    # every user's report at once (perturb_users, no loop over users): the model's worst pair and three more
    p = make(2.0, 4)
    r = audit_client(samples=N, rng=0, **p.audit_spec())
    assert not r.violated and r.stated == p.epsilon, r.row()


@pytest.mark.parametrize("name", ["laplace", "discrete-laplace", "gaussian", "discrete-gaussian"])
def test_central_samplers_within_their_epsilon(name):
    from ldpopt.privacy import central

    m = central.get(name)
    delta = 0.0 if m.pure else 1e-6
    stated = m.epsilon(1.0, delta)

    def client(values, rng):  # one count, released with this noise (the exact sampler where it releases)
        if m.release_safe:
            return m.release(values.astype(np.int64), 1.0, rng).astype(np.float64)
        return values.astype(np.float64) + m.sample(values.shape[0], 1.0, rng)

    r = audit_client(client, stated=stated, delta=delta, pairs=[(0, 1)], samples=N,
                     model_score=lambda rounds, x, x2: (x2 - x) * rounds[0], rng=5)
    if m.release_safe:  # integer noise: within its ε, and the model's test has power
        assert not r.violated and r.selection["model"] > (0.5 * stated if m.pure else 0.2 * stated), r.row()
    elif m.pure:
        # numpy's float Laplace: x + L lands on a coarser grid of doubles for x = 1 than L alone, so the
        # low bits tell x (Mironov 2012); the learned attack proves more than the stated ε
        assert r.violated and r.attack == "learned", r.row()


# -- power: planted leaks of known true ε are found at >= half of it -------------------------------

def test_old_loloha_leak_is_found_and_the_fixed_client_holds():
    # the setting where the leak was reported: ε∞ = 2, ε₁ = 1, d = 16, g = 4
    for tau in (1, 3):
        old = SeedAsKeyLOLOHA(2.0, 16, eps_1=1.0, g=4)
        r_old = audit_client(old, tau=tau, samples=20_000, extra_pairs=0, rng=tau)
        assert r_old.violated and r_old.epsilon_lb >= 0.5 * old.true_epsilon(tau), r_old.row()
        r_new = audit_client(LOLOHA(2.0, 16, eps_1=1.0, g=4), tau=tau, samples=20_000, extra_pairs=0, rng=tau)
        assert not r_new.violated, r_new.row()


def test_memo_keyed_by_a_public_cohort_is_found():
    o = PublicKeyedMemo(1.0, 4, eps_1=0.5, cohorts=4)
    r = audit_client(o, tau=2, samples=20_000, extra_pairs=0, rng=1)
    assert r.violated and r.epsilon_lb >= 0.5 * o.true_epsilon(2), r.row()


@pytest.mark.parametrize("name", ["grr", "oue", "olh"])
def test_a_client_reporting_one_bit_is_found(name):
    leaky = ReportsABit(oracles.get(name, 0.5, 4), 1.5)
    r = audit_client(leaky, stated=0.5, pairs=[(0, 1)], samples=20_000, rng=2)
    assert r.violated and r.epsilon_lb >= 0.5 * leaky.true_epsilon, r.row()


def test_a_one_round_coin_seeded_by_the_reported_key_is_found_by_replay():
    o = KeyedCoinOLH(1.0, 8)
    r = audit_client(o, replay=o.replay, samples=8_000, extra_pairs=0, rng=3)
    assert r.violated and r.attack == "seed" and r.epsilon_lb > 4.0, r.row()
    # without the derivation the generic attacks see OLH's law: nothing proven
    assert not audit_client(o, samples=8_000, extra_pairs=0, rng=3).violated


def test_nothing_private_is_derived_from_a_reported_field():
    # generated seeds: the memo's randomness moves with the secret and not with the public draw
    rng = np.random.default_rng(7)
    o = LOLOHA(2.0, 8, g=4)
    users = o.clients(500, rng)
    v = rng.integers(0, 8, 500)
    key, memo = users.memo(v)
    users.secret = rng.integers(0, 2**62, 500).astype(np.uint64)
    key2, memo2 = users.memo(v)
    assert np.array_equal(key, key2) and not np.array_equal(memo, memo2)
    users.public = rng.integers(0, 2**62, 500).astype(np.uint64)
    assert not np.array_equal(users.memo(v)[0], key)


# -- the bound ---------------------------------------------------------------------------------------

def _cp_by_root(x, n, a, lower):
    # independent of scipy's beta quantile: the binomial tail solved by Brent's method
    if lower:
        return 0.0 if x == 0 else optimize.brentq(lambda p: stats.binom.sf(x - 1, n, p) - a, 1e-15, 1 - 1e-15, xtol=1e-14)
    return 1.0 if x == n else optimize.brentq(lambda p: stats.binom.cdf(x, n, p) - a, 1e-15, 1 - 1e-15, xtol=1e-14)


@settings(max_examples=40, deadline=None)
@given(st.integers(10, 5000), st.data())
def test_epsilon_bound_matches_binomial_inversion(n, data):
    x1 = data.draw(st.integers(0, n))
    x0 = data.draw(st.integers(0, n))
    alpha = data.draw(st.sampled_from([1e-3, 0.05]))
    p1_lo = _cp_by_root(x1, n, alpha / 2, True)
    p0_hi = _cp_by_root(x0, n, alpha / 2, False)
    ref = max(math.log(p1_lo / p0_hi) if p1_lo > 0 else -math.inf,
              math.log((1 - p0_hi) / (1 - p1_lo)) if p0_hi < 1 else -math.inf)
    got = float(epsilon_bound(x1, n, x0, n, alpha))
    assert got == pytest.approx(ref, rel=1e-6, abs=1e-9) or (got == ref == -math.inf)


def test_report_fields_and_bad_input():
    X = report_matrix((np.array([1, 2]), (np.array([[3], [4]]), np.array([[True], [False]]))), 2)
    assert X.tolist() == [[1, 3, 1], [2, 4, 0]]
    o = oracles.get("grr", 1.0, 4)
    for kw, word in [({"samples": 10}, "samples"), ({"alpha": 2.0}, "alpha"), ({"delta": 1.0}, "delta"),
                     ({"attacks": ("x",)}, "attacks"), ({"tau": 3}, "tau"), ({"extra_pairs": -1}, "extra_pairs"),
                     ({"replay": 3}, "replay")]:
        with pytest.raises(ValueError, match=word):
            audit_client(o, **kw)
    with pytest.raises(ValueError, match="stated"):
        audit_client(lambda v, rng: v, d=4)
    with pytest.raises(ValueError, match="one row per user"):
        audit_client(lambda v, rng: v[:1], stated=1.0, d=4)
