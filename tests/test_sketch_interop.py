"""pure-ldp's CMS / HCMS reports read by ldpopt.interop.pure_ldp_sketch and decoded to the peer
server's own estimates (the peer drives its client and server on the same reports). Skipped, with
the reason, where pure-ldp is not installed."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ldpopt.interop import pure_ldp_sketch as P

pytestmark = pytest.mark.filterwarnings("ignore:non-integer arguments to randrange:DeprecationWarning")


def _peer_run(hadamard: bool, epsilon=2.0, k=8, m=32, d=20, n=1500, seed=3):
    pytest.importorskip("pure_ldp", reason="pure-ldp not installed (pip install -e '.[peers]')")
    from pure_ldp.frequency_oracles.apple_cms import CMSClient

    random.seed(seed)
    np.random.seed(seed)
    server = P.peer_server(epsilon, k, m, hadamard)
    client = CMSClient(epsilon, server.get_hash_funcs(), m, is_hadamard=hadamard)
    items = np.random.default_rng(seed).integers(1, d + 1, size=n)
    reports = [client.privatise(int(x)) for x in items]
    for r in reports:
        server.aggregate(r)
    peer = np.array([server.estimate(x, suppress_warnings=True) for x in range(1, d + 1)])
    return server, reports, peer, items


@pytest.mark.parametrize("hadamard", [False, True], ids=["cms", "hcms"])
def test_reader_decodes_to_the_peer_servers_estimates(hadamard):
    server, reports, peer, items = _peer_run(hadamard)
    d, n = peer.shape[0], len(reports)
    buckets = P.peer_buckets(server.get_hash_funcs(), range(1, d + 1))
    read = P.read_hcms if hadamard else P.read_cms
    orc, est = read(reports, 2.0, 32, buckets)
    assert est.n == n
    np.testing.assert_allclose(est.f_tilde * n, peer, rtol=1e-9, atol=1e-9 * n)
    # and the peer's sketch matrix is Apple's matrix built from ldpopt's sketch
    sk = orc.sketch(P.hcms_array(reports) if hadamard else P.cms_arrays(reports, 32))
    mine = orc.sketch_matrix(*sk)
    theirs = server.transformed_matrix if hadamard else server.sketch_matrix
    np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-6)


def test_reader_rejects_malformed_reports():
    with pytest.raises(ValueError, match="±1 vector of length m"):
        P.cms_arrays([(np.zeros(8), 0)], 8)
    with pytest.raises(ValueError, match="±1 vector of length m"):  # one report one entry short
        P.cms_arrays([(np.ones(8, int), 0), (np.ones(7, int), 1)], 8)
    j, bits = P.cms_arrays([(np.array([1, -1, 1]), 2)] * 2000, 3)  # more than one block of 1,024
    assert j.tolist() == [2] * 2000 and bits.shape == (2000, 3) and bits[:, 0].all() and not bits[:, 1].any()
    r = P.hcms_array([(np.int64(-1), 3, 5), (1, 0, 2)])
    assert r.tolist() == [[3, 5, -1], [0, 2, 1]]
    with pytest.raises(ValueError, match=r"\(y, j, l\) triples"):
        P.hcms_array([(1, 0)])
    with pytest.raises(ValueError, match="hash_funcs must be"):
        P.peer_buckets([], range(5))
