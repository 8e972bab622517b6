"""Heavy-hitter and pooled users as they run (ldpopt.heavy.client, pooling.PooledClient): every field
the server receives — the route (round, level, position or group), the oracle's report, the word
report — audited against each user's stated ε at bounded samples (benchmarks/bench_audit.py --only
heavy / --only pooled runs 10⁶ per input), the routes independent of the value, and the reports
aggregated by each route's oracle unbiased."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldpopt import oracles, pooling
from ldpopt.audit import audit_client
from ldpopt.heavy import encode, pem, sfp, treehist
from ldpopt.heavy.client import HeavyClient
from ldpopt.oracles.routed import report_fields, routed

CODES = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
COUNTS = np.array([4000, 3000, 1000, 800, 700, 500])


def _run(protocol, eps=1.0, oracle="olh"):
    if protocol == "pem":
        return pem(CODES, COUNTS, total_bits=16, epsilon=eps, k=2, step_bits=4, oracle=oracle, rng=0)
    if protocol == "treehist":
        return treehist(CODES, COUNTS, total_bits=16, epsilon=eps, step_bits=4, k=2, oracle=oracle, rng=0)
    return sfp(CODES, COUNTS, total_bits=16, epsilon=eps, k=2, fragment_bits=4, oracle=oracle, rng=0)


@pytest.mark.parametrize("oracle", ["olh", "grr"])
@pytest.mark.parametrize("protocol", ["pem", "treehist", "sfp"])
def test_heavy_hitter_users_within_their_epsilon(protocol, oracle):
    client = HeavyClient(_run(protocol, oracle=oracle), oracle=oracle)
    # a heavy hitter against another, and against a string no round keeps
    r = audit_client(samples=4_000, rng=1, **client.audit_spec([(CODES[0], CODES[1]), (CODES[0], CODES[5])]))
    assert r.stated == 1.0 and not r.violated, r.row()
    # the model's test has power at this size (GRR at ε/2 over thousands of candidates has little)
    assert oracle == "grr" or r.selection["model"] > 0.2, r.row()


@pytest.mark.parametrize("protocol", ["pem", "treehist", "sfp"])
def test_heavy_hitter_routes_are_fresh_and_reports_unbiased(protocol):
    found = _run(protocol, eps=4.0)
    client = HeavyClient(found)
    rng = np.random.default_rng(5)
    values = np.repeat(CODES, COUNTS)
    reps = client(values, rng)
    G = len(client.rounds)
    # every user sends her route and her round's report (and, TreeHist and SFP, her word's)
    assert len(reps) == (2 if protocol == "pem" else 3) and reps[0].min() >= 0 and reps[0].max() < G
    # the route is a fresh uniform draw: independent of the value (no public field from a private one)
    table = np.array([np.bincount(reps[0][values == c], minlength=G) for c in CODES])
    assert stats.chi2_contingency(table).pvalue > 1e-4
    # each route's reports, aggregated by its oracle, estimate the frequencies of that round's inputs
    for rnd in {id(r): r for r in reps.rounds}.values():  # the rounds' memory chunks summed
        mine = [j for j, r in enumerate(reps.rounds) if r is rnd]
        o = rnd.oracle
        users = np.concatenate([reps.parts[j][1] for j in mine])
        counts = sum(o.aggregate(reps.parts[j][3]) for j in mine)
        est = o.estimate(counts, users.size)
        truth = np.bincount(rnd.index(values[users]), minlength=o.d) / users.size
        assert np.all(np.abs(est.f_tilde - truth) < 6 * np.sqrt(est.sigma2)), protocol


def test_heavy_client_refuses_a_result_it_cannot_replay():
    with pytest.raises(ValueError, match="found must be the HeavyHitters"):
        HeavyClient("pem")


def test_pooled_users_within_the_largest_group_epsilon():
    low, high = oracles.get("grr", 0.5, 6), oracles.get("grr", 3.0, 6)
    client = pooling.PooledClient([(low, 0.2), (high, 0.8)])
    r = audit_client(samples=4_000, rng=2, **client.audit_spec([(0, 1)]))
    assert r.stated == 3.0 and not r.violated, r.row()
    # the users of the ε = 3 group are found above the small group's ε: the pool's ε is the largest, not an average
    assert r.epsilon_lb > 0.5, r.row()


@pytest.mark.parametrize("seed", range(3))
def test_pooled_users_on_generated_groups(seed):
    rng = np.random.default_rng(seed)
    names = rng.choice(["grr", "olh", "oue", "hr", "ss"], size=int(rng.integers(2, 4)), replace=False)
    eps = rng.uniform(0.3, 2.0, size=names.size)
    share = rng.dirichlet(np.ones(names.size) * 3)
    client = pooling.PooledClient([(oracles.get(str(n), float(e), 5), float(s)) for n, e, s in zip(names, eps, share)])
    r = audit_client(samples=2_000, rng=seed, extra_pairs=1, **client.audit_spec())
    assert r.stated == pytest.approx(eps.max()) and not r.violated, r.row()
    values = rng.integers(0, 5, 20_000)
    reps = client(values, rng)
    table = np.array([np.bincount(reps[0][values == v], minlength=names.size) for v in range(5)])
    assert stats.chi2_contingency(table).pvalue > 1e-4
    # the routes follow the shares
    assert stats.chisquare(np.bincount(reps[0], minlength=names.size), share * values.size).pvalue > 1e-4


def test_pooled_client_checks_its_groups():
    grr = oracles.get("grr", 1.0, 4)
    with pytest.raises(ValueError, match="groups must be a non-empty list"):
        pooling.PooledClient([])
    with pytest.raises(ValueError, match="groups must share one domain size d"):
        pooling.PooledClient([(grr, 0.5), (oracles.get("grr", 1.0, 5), 0.5)])
    with pytest.raises(ValueError, match="shares must be > 0 and sum to 1"):
        pooling.PooledClient([(grr, 0.5), (grr, 0.2)])
    with pytest.raises(ValueError, match="values"):
        pooling.PooledClient([(grr, 1.0)])([0, 7], rng=0)


def test_routed_reports_pad_each_channel_and_unpack_bits():
    oue, grr = oracles.get("oue", 1.0, 10), oracles.get("grr", 1.0, 3)
    rep = oue.perturb(np.arange(10), rng=0)
    F = report_fields(oue, rep, 10)
    assert F.shape[0] == 10 and F.shape[1] >= 10 and set(np.unique(F)) <= {0, 1}
    route = np.array([0, 1, 1, 0])
    out = routed(route, [(0, np.array([0, 3]), oue, oue.perturb([1, 2], rng=0)),
                         (0, np.array([1, 2]), grr, grr.perturb([0, 1], rng=0))])
    assert out[1].shape == (4, F.shape[1]) and np.all(out[1][[1, 2], 1:] == -1)


@pytest.mark.parametrize("name", oracles.available())
def test_support_columns_are_the_support_matrix_columns(name):
    rng = np.random.default_rng(len(name))
    o = oracles.get(name, float(rng.uniform(0.5, 3.0)), int(rng.integers(2, 40)))
    rep = o.perturb(rng.integers(0, o.d, 300), rng)
    cols = rng.integers(0, o.d, 3)
    assert np.array_equal(o.support_columns(rep, cols), o.support_matrix(rep)[:, cols])


# -- a public field derived from a private seed ----------------------------------------------------------

def _replayed_coin_agreement(reports, x):
    """Over every local-hashing part of ``reports`` (users all holding code/value ``x``): how often the
    kept-or-moved coin read from the report agrees with the coin the library's derivation
    (``memo_uniforms``) would draw from the reported key, and the agreement expected were they independent."""
    from ldpopt.oracles.longitudinal import memo_uniforms

    agree, expect, n = 0.0, 0.0, 0
    for j, (_, users, o, rep) in enumerate(reports.parts):
        if not hasattr(o, "hash") or users.size == 0:
            continue
        ix = reports.rounds[j].index([x])[0] if hasattr(reports, "rounds") else int(x)
        s = np.asarray(rep)[:, 0]
        kept = o.support_columns(rep, [ix])[:, 0]
        pred = memo_uniforms(s.view(np.uint64), o.hash(s, np.full(s.size, ix)), 2)[:, 0] < o._keep
        agree += np.sum(kept == pred)
        expect += np.sum(kept.mean() * pred + (1 - kept.mean()) * (1 - pred))
        n += s.size
    return agree / n, expect / n, n


def test_no_reported_key_seeds_the_private_coins():
    from ldpopt.audit.planted import KeyedCoinOLH

    found = _run("treehist", eps=2.0)
    heavy = HeavyClient(found)
    rep = heavy(np.full(20_000, CODES[0]), rng=3)
    a, e, n = _replayed_coin_agreement(rep, CODES[0])
    assert n == 40_000 and abs(a - e) < 5 * np.sqrt(e * (1 - e) / n)
    honest = pooling.PooledClient([(oracles.get("olh", 1.0, 8), 0.5), (oracles.get("grr", 1.0, 8), 0.5)])
    a, e, n = _replayed_coin_agreement(honest(np.full(20_000, 3), rng=4), 3)
    assert abs(a - e) < 5 * np.sqrt(e * (1 - e) / n)
    # the check has power: a group whose coins come from its reported key agrees every time
    leaky = pooling.PooledClient([(KeyedCoinOLH(1.0, 8), 0.5), (oracles.get("grr", 1.0, 8), 0.5)])
    a, e, _ = _replayed_coin_agreement(leaky(np.full(20_000, 3), rng=4), 3)
    assert a == 1.0 and e < 0.7
