"""Privacy audits of third-party clients (ldpopt.interop.audit_peers + ldpopt.audit): an honest
client passes, a client that is less private than it claims is flagged."""

from __future__ import annotations

import numpy as np
import pytest

import _peer_encoders as enc
from ldpopt import oracles
from ldpopt.audit import audit
from ldpopt.interop.audit_peers import PeerClient, support_functions

D = 6


def _grr_client(true_eps, claimed_eps, seed=0):
    rng = np.random.default_rng(seed)
    privatise = lambda v: int(enc.grr(np.array([v]), true_eps, D, rng)[0])  # noqa: E731
    return PeerClient("peer-format GRR", oracles.get("grr", claimed_eps, D), privatise,
                      support_functions(D)["value"])


def test_honest_peer_format_client_passes_and_a_lying_one_is_flagged():
    honest = audit(_grr_client(1.0, 1.0), 0, 1, trials=20_000, alpha=1e-3)
    assert not honest.violated and 0.7 < honest.epsilon_lb <= 1.0, honest
    # a client that really runs at ε = 2.5 but claims ε = 1: caught
    liar = audit(_grr_client(2.5, 1.0), 0, 1, trials=20_000, alpha=1e-3)
    assert liar.violated and liar.epsilon_lb > 1.0, liar


def test_real_peer_client_breaking_its_claim_is_flagged():
    pytest.importorskip("pure_ldp", reason="pure-ldp not installed (pip install -e '.[peers]')")
    from ldpopt.interop.conformance import seed_all
    from pure_ldp.frequency_oracles.unary_encoding import UEClient

    seed_all(5)
    sup = support_functions(D)["bits"]
    for real, claimed, flagged in ((1.0, 1.0, False), (3.0, 1.0, True)):
        cl = UEClient(real, D, use_oue=True)
        client = PeerClient("pure-ldp OUE", oracles.get("oue", claimed, D), lambda v, cl=cl: cl.privatise(v + 1), sup)
        res = audit(client, 0, 1, trials=20_000, alpha=1e-3)
        assert res.violated is flagged, res


def test_peer_client_aggregate_counts_supports_and_names_a_bad_device():
    client = _grr_client(1.0, 1.0)
    reports = [0, 3, 3, 5, 1]  # peer-format GRR reports are the values themselves
    expected = np.bincount(reports, minlength=D)
    for device in (None, "auto", "numpy"):
        assert np.array_equal(client.aggregate(reports, device), expected)
    with pytest.raises(ValueError, match="^device"):
        client.aggregate(reports, "cpu")
