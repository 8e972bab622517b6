"""Partial aggregates (ldpopt.aggregate.partial): a monoid over shards of reports.

The reference for every oracle is ``oracle.aggregate`` of the concatenated reports (the real
aggregator, tested elsewhere against its support matrix); the property is that any cut of the
reports into shards, merged in any order and grouping, gives those counts exactly.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt import oracles
from ldpopt.aggregate import MergeError, Partial
from ldpopt.aggregate.partial import FORMAT_VERSION

D = 13
ORACLES = oracles.available()


def _reports(name, m, seed, eps=1.0, d=D):
    orc = oracles.get(name, eps, d)
    rng = np.random.default_rng(seed)
    return orc, orc.perturb(rng.integers(0, d, m), rng)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(ORACLES), m=st.integers(1, 300), seed=st.integers(0, 2**32 - 1),
       cuts=st.lists(st.integers(0, 300), max_size=6), order=st.randoms(use_true_random=False))
def test_merge_of_shards_equals_aggregate_of_concatenation(name, m, seed, cuts, order):
    orc, reports = _reports(name, m, seed)
    bounds = [0, *sorted(min(c, m) for c in cuts), m]  # empty shards allowed
    parts = [Partial.from_reports(orc, reports[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    order.shuffle(parts)
    # left fold in a shuffled order, and the balanced tree: both equal the whole
    left = parts[0]
    for p in parts[1:]:
        left = left + p
    tree = Partial.merge_all(parts)
    whole = orc.aggregate(reports)
    for total in (left, tree):
        assert total.n == m
        assert total.counts.dtype == np.int64
        assert np.array_equal(total.counts, whole)
    # finalize equals the oracle's own estimate, bit for bit
    assert np.array_equal(tree.finalize().f_tilde, orc.estimate(whole, m).f_tilde)


@settings(max_examples=examples(40), deadline=None)
@given(name=st.sampled_from(ORACLES), seeds=st.tuples(*[st.integers(0, 2**32 - 1)] * 3),
       sizes=st.tuples(*[st.integers(0, 50)] * 3))
def test_associative_commutative_with_identity(name, seeds, sizes):
    orc = oracles.get(name, 0.7, D)
    a, b, c = (Partial.from_reports(orc, _reports(name, m, s, 0.7)[1]) if m else Partial.empty(orc)
               for m, s in zip(sizes, seeds))
    assert (a + b) + c == a + (b + c)
    assert a + b == b + a
    e = Partial.empty(orc)
    assert a + e == a and e + a == a


@pytest.mark.parametrize("name", ORACLES)
def test_serialisation_round_trips_exactly(name):
    orc, reports = _reports(name, 200, 5, eps=0.1 + 0.2)  # an ε with no short decimal form
    p = Partial.from_reports(orc, reports)
    q = Partial.from_json(p.to_json())
    assert q == p and q.epsilon == orc.epsilon
    assert np.array_equal(q.finalize().f_tilde, p.finalize().f_tilde)


def _olh(eps=1.0, d=D, g=None):
    return oracles.get("olh", eps, d, **({} if g is None else {"g": g}))


@pytest.mark.parametrize("other, field", [
    (oracles.get("oue", 1.0, D), "oracle"),
    (oracles.get("olh", 1.5, D), "epsilon"),
    (oracles.get("olh", 1.0, D + 1), "d"),
    (oracles.get("olh", 1.0, D, g=5), "params.g"),
])
def test_mismatched_partials_refused_naming_the_field(other, field):
    a = Partial.empty(_olh())
    with pytest.raises(MergeError, match=rf"{field} differs"):
        a.merge(Partial.empty(other))
    with pytest.raises(MergeError, match=rf"{field} differs"):
        Partial.merge_all([Partial.empty(other), a])


def test_bad_serialised_partials_refused():
    doc = json.loads(Partial.empty(_olh()).to_json())
    with pytest.raises(MergeError, match="version"):
        Partial.from_dict({**doc, "version": FORMAT_VERSION + 1})
    with pytest.raises(ValueError, match="kind"):
        Partial.from_dict({**doc, "kind": "something"})
    with pytest.raises(ValueError, match="counts"):
        Partial.from_dict({**doc, "counts_int64le_base64": "AAAA"})
    with pytest.raises(ValueError, match="lacks"):
        Partial.from_dict({k: v for k, v in doc.items() if k != "n"})
    with pytest.raises(ValueError, match="do not fit"):
        Partial.from_dict({**doc, "oracle": "grr"})  # g given to GRR
    with pytest.raises(ValueError, match=r"counts must lie in \[0, n"):
        Partial("grr", 1.0, 3, {}, 2, np.array([3, 0, 0]))
    with pytest.raises(ValueError, match="empty"):
        Partial.empty(_olh()).finalize()
    with pytest.raises(TypeError, match="Partial"):
        Partial.empty(_olh()).merge(np.zeros(D))


def test_labels_travel_with_the_counts_and_must_agree_to_merge():
    orc, reps = _reports("grr", 50, 3)
    labels = [f"v{i}" for i in range(D)]
    a = Partial.from_reports(orc, reps).with_labels(labels)
    assert a.labels == tuple(labels) and list(a.values()) == labels
    back = Partial.from_json(a.to_json())
    assert back == a and back.labels == tuple(labels)
    assert json.loads(Partial.from_reports(orc, reps).to_json()).keys() == json.loads(a.to_json()).keys() - {"labels"}
    assert np.array_equal((a + a).counts, 2 * a.counts) and (a + a).labels == a.labels
    other = a.with_labels([*labels[:5], "other", *labels[6:]])
    with pytest.raises(MergeError, match=r"labels differ \(position 5: 'v5' vs 'other'\)"):
        a.merge(other)
    with pytest.raises(MergeError, match="labels differ"):
        a.merge(a.with_labels(None))
    # the positions written as strings are no labels: they merge with an unlabelled partial
    same = a.with_labels([str(i) for i in range(D)])
    assert same.labels is None and np.array_equal(same.values(), np.arange(D))
    for bad, msg in ((labels[:-1], "hold d = 13"), ([*labels[:-1], "v0"], "entry 12 .'v0'. repeats entry 0"),
                     ([*labels[:-1], ""], "non-empty"), ("abc", "sequence")):
        with pytest.raises(ValueError, match=msg):
            a.with_labels(bad)


def test_rappor_clients_of_another_permanent_response_do_not_merge():
    """pure-ldp's one-sided permanent response (oracles.rappor) changes what a count means: its
    partials carry ``permanent`` and refuse to merge with the paper's symmetric one."""
    a = oracles.get("rappor", 2.0, D, num_bits=32, cohorts=2)
    b = oracles.get("rappor", 2.0, D, num_bits=32, cohorts=2, permanent="one-sided")
    rng = np.random.default_rng(3)
    pa = Partial.from_reports(a, a.perturb(rng.integers(0, D, 50), rng))
    pb = Partial.from_reports(b, b.perturb(rng.integers(0, D, 50), rng))
    with pytest.raises(MergeError, match="params.permanent differs"):
        pa.merge(pb)
    assert pb.build_oracle().params() == b.params()  # the variant is rebuilt from the partial


@pytest.mark.parametrize("name", ["cms", "rappor"])
def test_a_given_family_table_is_recorded_and_never_rebuilt_from_hash_seed(name):
    """A family given as another implementation's table is not the one hash_seed draws: the partial
    records the table's digest, shards of different tables refuse to merge, finalize without the
    oracle is an error naming the remedy, and with it the estimate is the oracle's own."""
    rng = np.random.default_rng(5)
    if name == "cms":
        table = lambda: rng.integers(0, 16, size=(4, D))  # noqa: E731
        make = lambda t: oracles.get("cms", 2.0, D, m=16, buckets=t)  # noqa: E731
    else:
        table = lambda: rng.integers(0, 32, size=(2, 2, D))  # noqa: E731
        make = lambda t: oracles.get("rappor", 2.0, D, num_bits=32, positions=t)  # noqa: E731
    o1, o2 = make(table()), make(table())
    values = rng.integers(0, D, 200)
    reports = o1.perturb(values, rng)
    p1 = Partial.from_reports(o1, reports)
    p2 = Partial.from_reports(o2, o2.perturb(values, rng))
    assert "family_sha1" in p1.params and "hash_seed" not in p1.params
    with pytest.raises(MergeError, match="params.family_sha1 differs"):
        p1.merge(p2)
    with pytest.raises(ValueError, match=r"finalize\(oracle=\.\.\.\)"):
        p1.finalize()
    with pytest.raises(ValueError, match="is not the partial's"):
        p1.finalize(oracle=o2)
    np.testing.assert_array_equal(p1.finalize(oracle=o1).f_tilde, o1.estimate(o1.aggregate(reports), 200).f_tilde)
    back = Partial.from_json(p1.to_json())  # the digest survives serialisation
    assert back.params == p1.params
