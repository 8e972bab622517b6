"""Whole-horizon privacy of every longitudinal oracle against the exact joint law of a user's reports
over all her value sequences (ldpopt.oracles.horizon), under both neighbouring relations."""

import inspect
import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt import oracles
from ldpopt.oracles import longitudinal as L
from ldpopt.oracles.horizon import HorizonEpsilon, horizon_law, worst_pair

RELATIONS = ("any", "memo-pattern")


def _build(kind, eps_inf, ratio, d, draw_extra):
    eps_1 = ratio * eps_inf
    if kind == "dbitflippm":
        return L.DBitFlipPM(eps_inf, d, bits=draw_extra % d + 1)
    if kind == "loloha":
        return L.LOLOHA(eps_inf, d, eps_1=eps_1, g=2 + draw_extra % 2)
    if kind == "l-rappor":
        return L.LRAPPOR(eps_inf, d, eps_1=eps_1, num_bits=3, num_hashes=1 + draw_extra % 2,
                         cohorts=1 + draw_extra % 2, hash_seed=draw_extra)
    return L.longitudinal_oracle(kind, eps_inf, d, eps_1=eps_1)


KINDS = ["l-grr", "l-sue", "l-soue", "l-oue", "l-osue", "loloha", "l-rappor", "dbitflippm"]


@settings(max_examples=examples(100), deadline=None)
@given(kind=st.sampled_from(KINDS), eps_inf=st.floats(0.2, 3.0),
       ratio=st.one_of(st.floats(0.05, 0.95), st.floats(0.95, 0.999)),
       d=st.integers(2, 3), tau=st.integers(1, 3), extra=st.integers(0, 5), data=st.data())
def test_every_stated_horizon_epsilon_bounds_the_worst_pair(kind, eps_inf, ratio, d, tau, extra, data):
    k = data.draw(st.integers(1, min(tau, d)), label="distinct_values")
    try:
        o = _build(kind, eps_inf, ratio, d, extra)
    except ValueError:  # an ε₁ the OUE instantaneous responses cannot reach
        assume(False)
    for relation in RELATIONS:
        stated = o.epsilon_horizon(tau, k, relation=relation)
        assert isinstance(stated, HorizonEpsilon) and stated.relation == relation
        worst, x, x2 = worst_pair(o, tau, k, relation)
        assert worst <= stated * (1 + 1e-9) + 1e-9, (relation, worst, stated, x, x2)
        if k == 1:  # one value held: ε(τ), exact for all but L-RAPPOR (the paper's bound there)
            assert stated == pytest.approx(o.epsilon_rounds(tau))
            if kind != "l-rappor":
                assert worst == pytest.approx(float(stated), rel=1e-7, abs=1e-9)
        if relation == "memo-pattern" and kind in ("l-grr", "l-sue", "l-soue", "l-oue", "l-osue"):
            assert worst == pytest.approx(float(stated), rel=1e-7, abs=1e-9)  # exact, as documented
    # the usual relation admits every memo-pattern pair: never a smaller ε
    assert o.epsilon_horizon(tau, k) >= o.epsilon_horizon(tau, k, relation="memo-pattern") - 1e-9
    # monotone in the number of values held (at most k)
    if k > 1:
        assert o.epsilon_horizon(tau, k) >= o.epsilon_horizon(tau, k - 1) - 1e-9


@pytest.mark.parametrize(("eps_inf", "eps_1", "tau", "least"), [(1.0, 0.5, 3, 1.90), (3.0, 2.7, 3, 8.94),
                                                                   (3.0, 2.997, 2, 11.06)])
def test_the_change_pattern_leaks_beyond_epsilon_inf_per_value(eps_inf, eps_1, tau, least):
    # between any two sequences with two values, L-GRR's reports reveal more than the memo-pattern charge
    o = L.LGRR(eps_inf, 3, eps_1=eps_1)
    worst, _, _ = worst_pair(o, tau, 2, "any")
    charge = o.epsilon_horizon(tau, 2, relation="memo-pattern")
    assert worst > least - 5e-3 and worst > charge + 0.2
    assert worst <= o.epsilon_horizon(tau, 2)  # the usual relation's statement holds


def test_the_leak_grows_without_bound_as_eps_1_nears_eps_inf():
    worst = [worst_pair(L.LGRR(2.0, 3, eps_1=e1), 2, 2, "any")[0] for e1 in (1.0, 1.9, 1.99, 1.999)]
    assert all(b > a + 1.0 for a, b in itertools.pairwise(worst[1:]))
    assert worst[-1] > 2 * 2.0  # beyond ε∞ per distinct value


def test_horizon_epsilon_keeps_its_relation_through_copies():
    import copy
    import pickle

    e = L.LGRR(2.0, 4, eps_1=1.0).epsilon_horizon(5, 2, relation="memo-pattern")
    for back in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        assert back == e and back.relation == "memo-pattern"
    with pytest.raises(ValueError, match="relation"):
        HorizonEpsilon(1.0, "public")


def test_the_leak_grows_with_the_horizon_past_epsilon_inf_per_value():
    # d = 2, eps_1 = eps_inf / 2: the memo pattern bounds two values by 2·ε∞; any two sequences do not
    o = L.LGRR(1.0, 2, eps_1=0.5)
    worst = [worst_pair(o, tau, 2, "any")[0] for tau in (2, 4, 6)]
    assert worst[0] < worst[1] < worst[2] and worst[2] > 2 * 1.0 + 1.0
    assert all(w <= o.epsilon_horizon(t, 2) for w, t in zip(worst, (2, 4, 6), strict=True))
    assert o.epsilon_horizon(6, 2, relation="memo-pattern") < 2.0


def test_dbitflippm_reveals_a_change_outright():
    o = L.DBitFlipPM(2.0, 3, bits=2)
    assert math.isinf(worst_pair(o, 2, 2, "any")[0]) and math.isinf(o.epsilon_horizon(2, 2))


def test_horizon_law_is_a_law_and_matches_rounds_channel_for_one_value():
    o = L.LGRR(1.5, 3, eps_1=0.7)
    seqs, law = horizon_law(o, 2)
    assert np.allclose(law.sum(axis=(0, 1)), 1.0)
    const = [i for i, x in enumerate(seqs) if x[0] == x[1]]
    assert np.allclose(law[0][:, const], o.rounds_channel(2).matrix)
    with pytest.raises(ValueError, match="relation"):
        worst_pair(o, 2, 1, "public")


def test_available_longitudinal_lists_every_longitudinal_class():
    defined = {cls.name for _, cls in inspect.getmembers(L, inspect.isclass)
               if cls.__module__ == L.__name__ and getattr(cls, "longitudinal", False) and isinstance(
                   getattr(cls, "name", None), str)}
    assert len(defined) == 8
    listed = set(oracles.available(longitudinal=True)) - set(oracles.available())
    assert listed == defined


@pytest.mark.parametrize("make", [lambda: L.LGRR(2.0, 3, eps_1=1.6), lambda: L.LOSUE(2.0, 3, eps_1=1.0),
                                  lambda: L.LOLOHA(2.0, 3, eps_1=1.6, g=2)], ids=["l-grr", "l-osue", "loloha"])
def test_real_clients_follow_the_enumerated_law_of_a_changing_user(make):
    # users who hold 0, 0, then 1 (a change, then the value kept): the real memoised clients' joint reports
    # against horizon_law's column for that sequence (summed over the public state)
    from scipy import stats

    o = make()
    seqs, law = horizon_law(o, 3)
    col = law.sum(axis=0)[:, next(i for i, x in enumerate(seqs) if tuple(x) == (0, 0, 1))]
    n = 20_000
    users = o.clients(n, rng=3)
    gen = np.random.default_rng(4)
    rounds = [users.report(np.full(n, v), gen) for v in (0, 0, 1)]
    if isinstance(o, L.LOLOHA):
        idx = [r[:, 1] for r in rounds]
        Y = o.g
    elif isinstance(o, L.LGRR):
        idx, Y = rounds, o.d
    else:  # packed bits, value 0's bit most significant
        idx = [np.unpackbits(r, axis=1, count=o.d) @ (1 << np.arange(o.d)[::-1]) for r in rounds]
        Y = 2 ** o.d
    obs = np.bincount((idx[0] * Y + idx[1]) * Y + idx[2], minlength=Y ** 3)
    keep = col * n >= 5
    o_, e_ = np.append(obs[keep], obs[~keep].sum()), np.append(col[keep], col[~keep].sum()) * n
    assert stats.chisquare(o_[e_ > 0], e_[e_ > 0]).pvalue > 1e-4
