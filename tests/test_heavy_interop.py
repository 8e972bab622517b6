"""pure-ldp 1.2.0's PEM reports read by ldpopt.interop.pure_ldp_hh: the search on the same reports
finds the same items with the same count estimates as pure-ldp's own server (skipped, with the reason,
where pure-ldp is not installed), every round's candidate estimates included; format errors."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ldpopt.interop.pure_ldp_hh import parse_pem_reports, peer_frequencies, read_pem


@pytest.mark.parametrize("eps,start,m,frag,k", [(4.0, 2, 8, 2, 4), (3.0, 1, 10, 3, 3)])
def test_pem_reports_give_pure_ldps_heavy_hitters(eps, start, m, frag, k):
    pytest.importorskip("pure_ldp", reason="pure-ldp not installed (pip install -e '.[peers]')")
    pytest.importorskip("bitstring", reason="pure-ldp's PEM needs bitstring")
    from pure_ldp.heavy_hitters.prefix_extending import PEMClient, PEMServer

    np.random.seed(1)
    random.seed(1)
    cl = PEMClient(epsilon=eps, start_length=start, max_string_length=m, fragment_length=frag)
    sv = PEMServer(epsilon=eps, start_length=start, max_string_length=m, fragment_length=frag)
    rng = np.random.default_rng(5)
    heavy = rng.choice(1 << m, size=6, replace=False)
    vals = rng.choice(heavy, size=900, p=[.3, .25, .2, .12, .08, .05])
    reports = [cl.privatise(format(int(v), f"0{m}b")) for v in vals]
    for r in reports:
        sv.aggregate(r)
    hh, fr = sv.find_heavy_hitters(k=k)
    res = read_pem(reports, epsilon=eps, start_length=start, max_string_length=m, fragment_length=frag, k=k)
    assert [int(h, 2) for h in hh] == list(res.items)
    np.testing.assert_allclose(peer_frequencies(res), np.array(fr, dtype=float), rtol=1e-12, atol=1e-9)
    # round 1: every prefix's estimate, against pure-ldp's oracle of group 0 (scaled by the groups)
    first = res.levels[0]
    names = [format(int(c), f"0{first.bits}b") for c in first.candidates]
    peer = res.params["groups"] * np.array(sv.oracles[0].estimate_all(names, suppress_warnings=True))
    np.testing.assert_allclose(res.params["groups"] * first.estimate.n * first.f_tilde, peer, rtol=1e-12, atol=1e-9)


def test_pem_report_format_errors():
    with pytest.raises(ValueError, match="groups must lie"):
        parse_pem_reports([((1, 5), 3)], 2)
    with pytest.raises(ValueError, match="PEMClient outputs"):
        parse_pem_reports([1, 2, 3], 2)
    with pytest.raises(ValueError, match="y must lie"):
        read_pem([((500, 5), 0)], epsilon=1.0, start_length=1, max_string_length=4, fragment_length=3, k=1)
    with pytest.raises(ValueError, match="start_length"):
        read_pem([((0, 5), 0)], epsilon=1.0, start_length=4, max_string_length=4, fragment_length=1, k=1)
    # an (n, 3) array reads like the list of tuples
    y, s, g = parse_pem_reports(np.array([[1, 7, 0], [2, 9, 1]]), 2)
    assert list(y) == [1, 2] and list(s) == [7, 9] and list(g) == [0, 1]
