"""ldpopt.privacy.statement: the composition accountants against references that share nothing with
them (the hockey-stick divergence of τ-fold randomised response by enumerating its 2^τ outcomes;
dp-accounting's privacy-loss distributions where installed), their order on generated settings, the
statement read from each model's record and printed, and the Estimate's privacy (repr, save,
with_privacy, shuffled, the memoised oracles' default)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt import Estimate, oracles
from ldpopt.privacy import shuffle
from ldpopt.privacy.statement import PrivacyStatement, compose, local, statement_of

eps_round = st.floats(min_value=0.02, max_value=2.0)
rounds_st = st.integers(min_value=1, max_value=400)
deltas = st.sampled_from([1e-3, 1e-6, 1e-9])


def _rr_delta_enumerated(eps_g: float, eps: float, rounds: int) -> float:
    """δ(ε_g) of τ independent randomised responses at ε by enumerating every output sequence."""
    p = math.exp(eps) / (1 + math.exp(eps))
    total = 0.0
    for y in itertools.product((0, 1), repeat=rounds):
        k = sum(y)
        P = p ** k * (1 - p) ** (rounds - k)
        Q = (1 - p) ** k * p ** (rounds - k)
        total += max(P - math.exp(eps_g) * Q, 0.0)
    return total


@settings(max_examples=examples(15), deadline=None)
@given(eps=st.floats(min_value=0.05, max_value=1.5), rounds=st.integers(min_value=1, max_value=9),
       delta=st.sampled_from([1e-2, 1e-3, 1e-4]))
def test_exact_composition_against_enumeration(eps, rounds, delta):
    got = compose(eps, rounds, delta)
    assert _rr_delta_enumerated(got, eps, rounds) <= delta * (1 + 1e-9) + 1e-15
    if got > 1e-6:
        assert _rr_delta_enumerated(got - 1e-6 * max(got, 1.0), eps, rounds) > delta


@settings(max_examples=examples(30), deadline=None)
@given(eps=eps_round, rounds=rounds_st, delta=deltas)
def test_exact_never_looser_than_advanced_or_basic(eps, rounds, delta):
    exact = compose(eps, rounds, delta)
    assert exact <= compose(eps, rounds, delta, "advanced") * (1 + 1e-12)
    assert compose(eps, rounds, delta, "advanced") <= compose(eps, rounds, delta, "basic") == pytest.approx(rounds * eps)
    assert exact <= rounds * eps
    assert compose(eps, 1, delta) <= eps


def test_compose_at_huge_epsilon_is_basic_without_overflow():
    assert [compose(800.0, 10, 1e-6, a) for a in ("exact", "advanced", "basic")] == [8000.0] * 3


@settings(max_examples=examples(20), deadline=None)
@given(eps=eps_round, rounds=rounds_st, delta=deltas)
def test_exact_grows_with_rounds_and_falls_with_delta(eps, rounds, delta):
    assert compose(eps, rounds, delta) <= compose(eps, rounds + 1, delta) * (1 + 1e-9) + 1e-12
    assert compose(eps, rounds, delta * 10) <= compose(eps, rounds, delta) * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize(("eps", "rounds"), [(0.1, 100), (0.2, 50), (0.5, 30), (1.0, 10)])
def test_exact_against_dp_accounting_pld(eps, rounds):
    pld_mod = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution",
                                  reason="dp-accounting not installed (its attrs<24 pin conflicts with the lock)")
    from dp_accounting.pld import common

    pld = pld_mod.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, 0.0),
                                          value_discretization_interval=1e-4).self_compose(rounds)
    theirs = pld.get_epsilon_for_delta(1e-6)
    ours = compose(eps, rounds, 1e-6)
    # randomised response's losses are multiples of ε (on their grid): both are exact, ours rounded up
    assert ours == pytest.approx(theirs, rel=1e-8)


def test_local_record_and_line():
    one = PrivacyStatement.from_dict(local(1.0))
    assert str(one) == "local ε = 1 per report (replace), 1 round"
    assert one.epsilon == 1.0 and one.delta == 0.0 and one.relation == "replace"
    many = PrivacyStatement.from_dict(local(0.2, rounds=50))
    assert many.epsilon == pytest.approx(compose(0.2, 50, 1e-6)) and many.delta == 1e-6
    assert str(many).startswith("local ε = 0.2 per report (replace), 50 rounds: ε = 6.884, δ = 1e-06")
    assert "Kairouz" in str(many)
    basic = PrivacyStatement.from_dict(local(0.2, rounds=50, accountant="basic"))
    assert basic.epsilon == pytest.approx(10.0) and basic.delta == 0.0 and "basic" in str(basic)


def test_shuffled_and_central_lines():
    s = PrivacyStatement.from_dict(shuffle.shuffled(1.0, 10**6, 1e-6).as_privacy())
    assert str(s).startswith("shuffled among n = 1000000: central (ε = 0.004335, δ = 1e-06) from ε₀ = 1 per report")
    assert "FMT 2021 numerical" in str(s)
    c = PrivacyStatement.from_dict({"model": "central", "mechanism": "laplace", "scale": 10.0, "epsilon": 0.1,
                                    "delta": 0.0, "n_known": True, "relation": "add-remove"})
    assert str(c) == "central: Laplace b = 10 → ε = 0.1 (add-remove), n known"
    g = PrivacyStatement.from_dict({"model": "central", "mechanism": "discrete-gaussian", "scale": 5.0,
                                    "epsilon": 0.9, "delta": 1e-6, "n_known": False})
    assert str(g) == ("central: Discrete Gaussian σ = 5 → (ε = 0.9, δ = 1e-06) (add-remove), "
                      "n estimated from the noisy total")


@settings(max_examples=examples(20), deadline=None)
@given(eps=eps_round, rounds=st.integers(min_value=1, max_value=50))
def test_record_round_trips_through_json(eps, rounds):
    record = local(eps, rounds=rounds)
    again = PrivacyStatement.from_dict(json.loads(json.dumps(record)))
    assert again.as_dict() == record and str(again) == str(PrivacyStatement.from_dict(record))


@pytest.mark.parametrize(("record", "word"), [
    ([1], "privacy must be a dict"),
    ({"model": "trusted", "epsilon": 1.0}, "privacy\\['model'\\]"),
    ({"model": "local"}, "privacy\\['epsilon'\\]"),
    ({"model": "local", "epsilon": -1.0}, "privacy\\['epsilon'\\]"),
    ({"model": "local", "epsilon": 1.0, "rounds": 0}, "rounds"),
    ({"model": "shuffled", "epsilon": 0.1, "delta": 1e-6, "epsilon0": 1.0}, "privacy\\['n'\\]"),
    ({"model": "shuffled", "epsilon": 0.1, "delta": 2.0, "epsilon0": 1.0, "n": 10}, "privacy\\['delta'\\]"),
    ({"model": "central", "epsilon": 0.1, "mechanism": "laplace"}, "privacy\\['scale'\\]"),
])
def test_bad_records_name_the_field(record, word):
    with pytest.raises(ValueError, match=word) as info:
        PrivacyStatement.from_dict(record)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("args", "exc", "word"), [
    ((0.0, 3), ValueError, "epsilon"), ((1.0, 0), ValueError, "rounds"), ((1.0, 2.5), ValueError, "rounds"),
    ((1.0, 3, 1.5), ValueError, "delta"), ((1.0, 3, 1e-6, "rdp"), ValueError, "accountant"),
    ((1.0, 3, 0.0, "advanced"), ValueError, "delta"), (("1", 3), TypeError, "epsilon"),
])
def test_compose_bad_inputs(args, exc, word):
    with pytest.raises(exc, match=word):
        compose(*args)


def _est(eps=1.0, **meta):
    return oracles.get("grr", eps, 4).estimate([4600, 3000, 1500, 900], 10_000, **meta)


def test_estimate_default_statement_and_repr():
    est = _est()
    assert est.privacy.model == "local" and est.privacy.epsilon == 1.0
    assert "privacy='local ε = 1 per report (replace), 1 round'" in repr(est)


def test_memoised_oracle_estimate_states_eps1_and_eps_inf():
    o = oracles.get("l-grr", 2.0, 4)
    est = o.estimate([46, 30, 15, 9], 100)
    line = str(est.privacy)
    assert line.startswith(f"local ε₁ = {o.eps_1:g} per report (replace), memoised: ε = 2 over any number of rounds")
    assert est.privacy.epsilon == 2.0
    assert statement_of({}, 2.0).record["composition"] == "one report"


def test_with_privacy_and_shuffled_are_recorded_and_saved(tmp_path):
    est = _est().shuffled(1e-6)
    bound = shuffle.shuffled(1.0, 10_000, 1e-6)
    assert est.meta["privacy"] == bound.as_privacy() and est.privacy.epsilon == bound.epsilon
    assert "shuffled among n = 10000" in repr(est)
    assert _est().shuffled(1e-6, n=10**6).privacy.record["n"] == 10**6
    path = tmp_path / "est.json"
    est.save(path)
    doc = json.loads(path.read_text())
    assert doc["privacy"] == bound.as_privacy()
    assert Estimate.load(path).privacy.as_dict() == bound.as_privacy()
    plain = tmp_path / "plain.json"
    _est().save(plain)
    assert json.loads(plain.read_text())["privacy"] == local(1.0)
    composed = _est(0.2).with_privacy(local(0.2, rounds=50))
    assert composed.privacy.epsilon == pytest.approx(compose(0.2, 50, 1e-6))
    with pytest.raises(ValueError, match="privacy\\['model'\\]"):
        _est().with_privacy({"model": "nope", "epsilon": 1.0})
    assert np.array_equal(composed.f_tilde, _est(0.2).f_tilde)


@settings(max_examples=examples(10), deadline=None)
@given(name=st.sampled_from(["l-grr", "l-osue", "l-sue"]), tau=st.integers(min_value=1, max_value=40),
       k=st.integers(min_value=1, max_value=3), relation=st.sampled_from(["any", "memo-pattern"]))
def test_memoised_oracle_writes_its_own_horizon_epsilon(name, tau, k, relation):
    o = oracles.get(name, 2.0, 6)
    k = min(k, tau)
    record = o.privacy(tau, k, relation)
    st_ = _est().with_privacy(record).privacy
    assert st_.epsilon == float(o.epsilon_horizon(tau, k, relation))  # asked of the oracle, not restated
    assert record["epsilon"] == pytest.approx(o.eps_1) and record["rounds"] == tau
    line = str(st_)
    assert line.startswith(f"local ε₁ = {o.eps_1:.4g} per report (replace), memoised: ε = {st_.epsilon:.4g} over {tau} rounds")
    assert ("any two value sequences" if relation == "any" else "memo public") in line
