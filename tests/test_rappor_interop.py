"""pure-ldp's RAPPOR reports read by ldpopt.interop.pure_ldp_rappor and decoded to the peer server's
own estimates (the peer drives its client and server on the same reports); the peer client's
one-sided permanent response checked against ldpopt's reading of it. Skipped, with the reason,
where pure-ldp is not installed."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from ldpopt.interop import pure_ldp_rappor as R
from ldpopt.sketches.ridge import distance_bound

pytestmark = pytest.mark.filterwarnings("ignore::Warning")  # the peer's scikit-learn convergence notices


def _peer(f=0.5, T=32, h=2, C=4, d=40, n=4000, seed=3, reg_const=None, lasso=False):
    pytest.importorskip("pure_ldp", reason="pure-ldp not installed (pip install -e '.[peers]')")
    from pure_ldp.frequency_oracles.rappor import RAPPORClient

    random.seed(seed)
    np.random.seed(seed)
    server = R.peer_server(f, T, h, d, C, reg_const=reg_const, lasso=lasso)
    client = RAPPORClient(f, T, server.get_hash_funcs(), num_of_cohorts=C)
    items = np.random.default_rng(seed).zipf(1.3, n) % d + 1
    reports = [client.privatise(int(x)) for x in items]
    for r in reports:
        server.aggregate(r)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = np.array([server.estimate(x, suppress_warnings=True) for x in range(1, d + 1)])
    return server, reports, peer


@pytest.mark.parametrize("f,seed", [(0.5, 3), (0.25, 4), (0.5, 4)])
def test_reader_decodes_to_the_peer_servers_estimates(f, seed):
    server, reports, peer = _peer(f=f, seed=seed)
    d, C, T = peer.shape[0], 4, 32
    pos = R.peer_positions(server.get_hash_funcs(), d)
    res = R.read_rappor(reports, f, T, pos)
    # the sufficient statistics and the design are the peer's, exactly
    assert np.array_equal(res.Y, np.array(server.bloom_filters)) and np.array_equal(res.N, server.cohort_count)
    X = R.server_design(res.oracle)
    assert np.array_equal(X.toarray(), server._create_X())
    # the server's coordinate descent, update for update: its estimates to rounding (the sums in a
    # column's dot product run in another order; ~1e-13 relative observed)
    np.testing.assert_allclose(res.server, peer, rtol=0, atol=1e-9 * np.abs(peer).max())
    # the exact minimiser (device="numpy"): within the certified distances of both answers
    exact = R.server_estimates(res.oracle, res.Y, res.N, device="numpy")
    y = ((res.Y - 0.5 * f * res.N[:, None]) / (1 - f)).ravel()
    beta = 0.025 * f * C * T
    bound = C * (distance_bound(X, y, beta, peer / C) + distance_bound(X, y, beta, exact / C))
    assert np.linalg.norm(exact - peer) <= bound + 1e-9 * np.abs(peer).max()


@pytest.mark.parametrize("d,T,C,n,seed,lasso", [(60, 32, 4, 4000, 0, True), (60, 32, 4, 4000, 2, True),
                                                 (1100, 64, 4, 30000, 11, False)], ids=["lasso-0", "lasso-2", "d1100"])
def test_reader_reproduces_the_servers_lasso_selection(d, T, C, n, seed, lasso):
    """lasso=True, or d > 1000 (the server turns it on by itself): the same selected candidates, the
    same estimates on them, 0 elsewhere."""
    server, reports, peer = _peer(T=T, C=C, d=d, n=n, seed=seed, lasso=lasso)
    res = R.read_rappor(reports, 0.5, T, R.peer_positions(server.get_hash_funcs(), d), lasso=lasso)
    assert np.array_equal(res.server > 0, peer > 0) and 0 < np.count_nonzero(peer) < d
    np.testing.assert_allclose(res.server, peer, rtol=0, atol=1e-9 * np.abs(peer).max())
    with pytest.raises(ValueError, match="'cpu'"):
        R.server_estimates(res.oracle, res.Y, res.N, lasso=True, device="numpy")


def test_reader_without_regularisation_calls_the_peers_nnls():
    server, reports, peer = _peer(reg_const=0, n=3000, seed=5)
    res = R.read_rappor(reports, 0.5, 32, R.peer_positions(server.get_hash_funcs(), peer.shape[0]), reg_const=0)
    assert np.allclose(res.server, peer, rtol=1e-12, atol=1e-9)


def test_peer_client_never_clears_a_set_bit():
    """pure-ldp's client (module docstring of the reader): the filter's bits are 1 in every report, the
    other bits are 1 w.p. f/2 — ldpopt's one-sided permanent response (p* = f/2, q* = 1)."""
    pytest.importorskip("pure_ldp", reason="pure-ldp not installed (pip install -e '.[peers]')")
    from pure_ldp.frequency_oracles.rappor import RAPPORClient

    f, T, d, n = 0.5, 32, 10, 3000
    random.seed(1)
    server = R.peer_server(f, T, 2, d, 2)
    client = RAPPORClient(f, T, server.get_hash_funcs(), num_of_cohorts=2)
    c, bits = R.rappor_arrays([client.privatise(4) for _ in range(n)], T)  # index 3
    orc = R.peer_oracle(f, T, R.peer_positions(server.get_hash_funcs(), d))
    assert orc.q_star == 1.0 and orc.p_star == pytest.approx(f / 2)
    inB = orc.bloom()[c, :, 3]  # (n, T): the bits of each report's filter
    assert bits[inB].all()
    rate, m = bits[~inB].mean(), (~inB).sum()
    assert abs(rate - f / 2) <= 5 * np.sqrt(f / 2 * (1 - f / 2) / m)
    assert orc.exact_epsilon_inf() == np.inf and orc.epsilon_one == np.inf


def test_reader_refuses_what_it_does_not_reproduce_and_malformed_reports():
    from ldpopt.oracles.rappor import RAPPOR

    pos = np.random.default_rng(0).integers(0, 8, (2, 2, 5))
    orc = R.peer_oracle(0.5, 8, pos)
    Y, N = np.zeros((2, 8)), np.array([3.0, 4.0])
    with pytest.raises(ValueError, match="reg_const"):
        R.server_estimates(orc, Y, N, reg_const=-1)
    with pytest.raises(ValueError, match="num_bits = 8 entries"):
        R.rappor_arrays([([0, 1, 0], 0)], 8)
    with pytest.raises(ValueError, match="0/1"):
        R.rappor_arrays([([0, 2] * 4, 0)], 8)
    with pytest.raises(ValueError, match="hash_family"):
        R.peer_positions([], 5)
    with pytest.raises(ValueError, match="positions must lie"):
        RAPPOR(2.0, 5, num_bits=4, positions=pos)
    with pytest.raises(ValueError, match="cohorts = 3 disagrees"):
        RAPPOR(2.0, 5, num_bits=8, cohorts=3, positions=pos)
    with pytest.raises(ValueError, match="permanent must be"):
        RAPPOR(2.0, 5, permanent="two-sided")
