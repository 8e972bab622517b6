"""multi-freq-ldpy's SPL / SMP / RS+FD reports read into ldpopt.multi's protocols: the library's own
clients make the reports, its own aggregators estimate from them, and ldpopt's aggregate of the same
reports, clipped and renormalised as the library does, must equal them (1e-12); ldpopt's unbiased
estimate is then post-processed. Skipped, with the reason, where multi-freq-ldpy is not installed."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import multi
from ldpopt.interop import multi_freq_ldpy_multi as M

DOMS, EPS = (2, 3, 5), 2.0


def _users(n=2000, seed=4):
    data = multi.chain_network(n, 3, domains=DOMS, strength=0.7, rng=seed)
    return data.values()


CASES = {  # protocol, inner → (library client, library aggregator, its extra args, reader, ldpopt protocol)
    ("spl", "grr"): ("SPL_solution", "SPL_GRR_Client", "SPL_GRR_Aggregator_MI", True, M.read_spl),
    ("spl", "oue"): ("SPL_solution", "SPL_UE_Client", "SPL_UE_Aggregator_MI", False, M.read_spl),
    ("smp", "grr"): ("SMP_solution", "SMP_GRR_Client", "SMP_GRR_Aggregator_MI", True, M.read_smp),
    ("smp", "oue"): ("SMP_solution", "SMP_UE_Client", "SMP_UE_Aggregator_MI", False, M.read_smp),
    ("rsfd", "grr"): ("RSpFD_solution", "RSpFD_GRR_Client", "RSpFD_GRR_Aggregator_MI", True, M.read_rsfd),
    ("rsfd", "oue"): ("RSpFD_solution", "RSpFD_UE_zero_Client", "RSpFD_UE_zero_Aggregator_MI", True, M.read_rsfd),
}


def _protocol(name, inner):
    return {"spl": multi.spl, "smp": multi.smp, "rsfd": multi.rsfd}[name](DOMS, EPS, inner)


@pytest.mark.parametrize("case", list(CASES), ids=lambda c: f"{c[0]}-{c[1]}")
def test_reader_matches_the_library_on_its_own_reports(case):
    pytest.importorskip("multi_freq_ldpy", reason="multi-freq-ldpy not installed (pip install -e '.[peers]')")
    import importlib

    modname, client, aggregator, with_k, reader = CASES[case]
    mod = importlib.import_module(f"multi_freq_ldpy.mdim_freq_est.{modname}")
    np.random.seed(11)
    k, lst = len(DOMS), list(DOMS)
    reports = [getattr(mod, client)(list(x), lst, k, EPS) for x in _users()]
    agg = getattr(mod, aggregator)
    theirs = agg(reports, lst, k, EPS) if with_k else agg(reports, k, EPS)
    est = _protocol(*case).aggregate(reader(reports, DOMS, case[1]))
    assert est.n == len(reports) and est.protocol == _protocol(*case).name
    ours = M.peer_mi_marginals(e.f_tilde for e in est.estimates)
    for j in range(k):
        np.testing.assert_allclose(ours[j], np.asarray(theirs[j], dtype=np.float64), atol=1e-12, rtol=0)
    # ldpopt's post-processing of the same reports: the one-way marginals are consistent already, the
    # weighted problem is Norm-Sub per attribute and ldpopt's check certifies it
    sol = multi.consistency_problem(est, "weighted").solve()
    assert sol.status == "optimal"
    assert all(abs(x.sum() - 1) < 1e-9 and x.min() >= -1e-12 for x in est.marginals.split(sol.f))


def test_reader_errors_name_the_problem():
    with pytest.raises(ValueError, match="inner"):
        M.read_spl([[0, 1, 2]], DOMS, "olh")
    with pytest.raises(ValueError, match="3 entries"):
        M.read_spl([[0, 1]], DOMS)
    with pytest.raises(ValueError, match="attribute 2"):
        M.read_rsfd([[0, 1, 7]], DOMS)
    with pytest.raises(ValueError, match="pair"):
        M.read_smp([(0, 1, 2)], DOMS)
    with pytest.raises(ValueError, match="SMP attribute"):
        M.read_smp([(5, 1)], DOMS)
    with pytest.raises(ValueError, match="at least one user"):
        M.read_rsfd([], DOMS)


def test_reader_layout_is_the_protocols_own():
    # without the library: ldpopt's own RS+FD[GRR] reports pass through the reader unchanged
    proto = multi.rsfd(DOMS, EPS, "grr")
    rep = proto.perturb(_users(500), 3)
    np.testing.assert_array_equal(M.read_rsfd(rep.tolist(), DOMS, "grr"), rep)
    spl = multi.spl(DOMS, EPS, "oue")
    bits = [spl.oracles[j].support_matrix(r).astype(int) for j, r in enumerate(spl.perturb(_users(500), 4))]
    got = M.read_spl([[bits[j][u] for j in range(3)] for u in range(500)], DOMS, "oue")
    for j in range(3):
        np.testing.assert_array_equal(spl.oracles[j].support_matrix(got[j]), bits[j].astype(bool))
