"""PCKV outside its regime, made loud: users holding more keys than the padding length ℓ (a warning naming
ℓ, the bias it names), and PCKV-UE's exact ε when ℓ > d (its closed form against enumeration)."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt import keyvalue as kv


@settings(max_examples=examples(25), deadline=None)
@given(eps=st.floats(0.2, 5.0), d=st.integers(2, 4), ell=st.integers(1, 3), kind=st.sampled_from(["ue", "grr"]))
def test_exact_epsilon_is_the_enumerated_epsilon(eps, d, ell, kind):
    proto = kv.PCKV(eps, d, ell, kind)
    assert proto.exact_epsilon == pytest.approx(kv.epsilon(proto), rel=1e-9, abs=1e-9)
    assert proto.exact_epsilon <= eps + 1e-12
    if kind == "ue" and ell > d:
        assert proto.exact_epsilon < eps  # the budget is not spent: the padding always dilutes


def test_pckv_ue_spends_less_than_its_budget_when_ell_exceeds_d():
    assert kv.epsilon(kv.pckv_ue(1.0, 2, ell=3)) == pytest.approx(0.763, abs=1e-3)
    assert kv.pckv_ue(1.0, 2, ell=3).exact_epsilon == pytest.approx(np.log1p(2 / 3 * np.expm1(1.0)))


def _sets(sizes, d, rng):
    """KVData whose user u holds sizes[u] distinct keys (key 0 always), values uniform in [−1, 1]."""
    keys = [np.concatenate(([0], 1 + rng.permutation(d - 1)[:s - 1])) for s in sizes]
    off = np.concatenate(([0], np.cumsum(sizes)))
    flat = np.concatenate(keys)
    return kv.KVData(off, flat, rng.uniform(-1, 1, flat.size), d)


@settings(max_examples=examples(25), deadline=None)
@given(sizes=st.lists(st.integers(1, 5), min_size=1, max_size=30), ell=st.integers(1, 5),
       kind=st.sampled_from(["ue", "grr"]), seed=st.integers(0, 2 ** 16))
def test_padding_warning_names_ell_exactly_when_a_set_exceeds_it(sizes, ell, kind, seed):
    data = _sets(np.array(sizes), 6, np.random.default_rng(seed))
    proto = kv.PCKV(1.0, 6, ell, kind)
    for path in (proto.sample_counts, proto.collect):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            path(data, rng=seed)
        got = [x for x in w if issubclass(x.category, kv.PaddingWarning)]
        over = sum(s > ell for s in sizes)
        assert len(got) == (1 if over else 0)
        if over:
            assert f"ell = {ell}" in str(got[0].message) and f"{over} of {len(sizes)} users" in str(got[0].message)


@pytest.mark.parametrize(("held", "ell"), [(4, 2), (3, 1), (2, 2)])
def test_the_warned_bias_is_ell_over_the_set_size(held, ell):
    # every user holds key 0 among `held` keys: both estimators find min(1, ell/held) of its frequency 1
    data = _sets(np.full(40_000, held), 8, np.random.default_rng(0))
    proto = kv.pckv_ue(4.0, 8, ell=ell)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kv.PaddingWarning)
        counts = proto.sample_counts(data, rng=1)
    paper = proto.estimate(counts, data.n).freq[0]
    cons = kv.solve_consistent(proto, counts, data.n).freq[0]
    expect = min(1.0, ell / held)
    assert abs(paper - expect) < 0.03 and abs(cons - expect) < 0.03


@pytest.mark.parametrize("make, ell", [(kv.pckv_grr, 1), (kv.pckv_ue, 1), (kv.pckv_grr, 2), (kv.pckv_ue, 2)])
def test_means_beyond_ell_cannot_be_corrected(make, ell):
    """No unbiased mean exists once users hold more than ℓ keys: two populations over d = 3 keys whose
    key 0 has plain mean below 0 in one and above 0 in the other, but the same 1/max(|S|, ℓ)-weighted
    sums, have the same report law (the mixture of the users' laws), so every estimator has one
    expectation for both. ℓ = 1: one user {0: ±1} and two {0: ∓1, 1: +1}; ℓ = 2: two users {0: ±1}
    (weight ½) and three {0: ∓1, 1: +1, 2: +1} (weight ⅓). The warning says the means are weighted."""
    proto = make(1.0, 3, ell)
    lone, many = (1, 2) if ell == 1 else (2, 3)
    other = [1.0] * (1 if ell == 1 else 2)

    def pop(sign):
        return ([([0], [sign])] * lone
                + [(list(range(1 + len(other))), [-sign, *other])] * many)

    a, b = pop(1.0), pop(-1.0)
    law = [sum(proto.report_distribution(k, v) for k, v in p) / len(p) for p in (a, b)]
    mean0 = [np.mean([v[0] for _, v in p]) for p in (a, b)]
    assert np.allclose(law[0], law[1], atol=1e-15)
    assert mean0[0] < 0 < mean0[1]  # the plain means differ; the reports cannot tell them apart
    offsets = np.concatenate([[0], np.cumsum([len(k) for k, _ in a])])
    data = kv.KVData(offsets, np.concatenate([k for k, _ in a]), np.concatenate([v for _, v in a]), 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        proto.check_padding(data)
    assert any(issubclass(x.category, kv.PaddingWarning) and "means are weighted by 1/max(|S|, ell)"
               in str(x.message) for x in w)
