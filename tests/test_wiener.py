"""The ordered-domain Wiener methods (DW, IIW, AMRP, DW-simplex) and empirical-Bayes shrinkage."""

import cvxpy as cp
import numpy as np
import pytest

import ldpopt
from ldpopt import Estimate, oracles
from ldpopt.methods.shrink import eb_interval, shrinkage
from ldpopt.methods.wiener import noise_power
from ldpopt.recommend import candidates
from ldpopt.testing import check_method, estimates_for_checks

WIENER = ("dw", "iiw", "amrp", "dw-simplex")


@pytest.fixture(scope="module")
def smooth_est():
    d = 12
    f = np.exp(-0.5 * ((np.arange(d) - 5.0) / 2.5) ** 2)
    counts = np.random.default_rng(3).multinomial(20_000, f / f.sum())
    return oracles.get("oue", 1.0, d).simulate(counts, rng=4).as_ordered()


def test_dw_is_the_generalised_ridge_solved_by_cvxpy(smooth_est):
    """DW's FFT filter equals argmin_f Σ_k |F̃_k − F_k|²/N_k + |F_k|²/S_k written in the value basis
    with the dense DFT matrix and solved by cvxpy (an independent route: no FFT, no filter)."""
    est = smooth_est
    d = est.d
    W = np.exp(-2j * np.pi * np.outer(np.arange(d), np.arange(d)) / d)
    H = np.full(d, est.p - est.q)
    H[0] = est.p + (d - 1) * est.q
    G = W @ (est.counts / est.n)
    N = noise_power(est) / H**2
    S = np.abs(G / H) ** 2
    A = (W.conj().T @ np.diag(1 / N) @ W).real
    P = (W.conj().T @ np.diag(1 / S) @ W).real
    f0 = (np.linalg.solve(W, G / H)).real
    f = cp.Variable(d)
    cp.Problem(cp.Minimize(cp.quad_form(f - f0, cp.psd_wrap((A + A.T) / 2))
                           + cp.quad_form(f, cp.psd_wrap((P + P.T) / 2)))).solve(solver="CLARABEL")
    assert np.max(np.abs(f.value - ldpopt.postprocess(est, "dw"))) < 1e-7


def test_iiw_and_amrp_reduce_to_dw(smooth_est):
    dw = ldpopt.postprocess(smooth_est, "dw")
    np.testing.assert_allclose(ldpopt.postprocess(smooth_est, "iiw", iterations=1), dw, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ldpopt.postprocess(smooth_est, "amrp", permutations=1), dw, rtol=0, atol=1e-15)
    assert not np.allclose(ldpopt.postprocess(smooth_est, "iiw"), dw)


def test_dw_smooths_a_smooth_truth():
    """On a smooth truth with heavy noise DW is closer to the truth than the raw estimate, averaged
    over repetitions (the property the prior is for)."""
    d = 64
    f = np.exp(-0.5 * ((np.arange(d) - 30.0) / 8.0) ** 2)
    f /= f.sum()
    orc = oracles.get("grr", 1.0, d)
    errs = np.array([[np.sum((ldpopt.postprocess(e, m) - f) ** 2) for m in ("base", "dw")]
                     for e in (orc.simulate(np.random.default_rng(r).multinomial(20_000, f), rng=r).as_ordered()
                               for r in range(5))])
    assert errs[:, 1].mean() < 0.7 * errs[:, 0].mean()


@pytest.mark.parametrize("name", WIENER)
def test_wiener_methods_conform(name):
    done = check_method(name, [e.as_ordered() for e in estimates_for_checks()])
    assert done["output"] == 5 and done["batched"] == 5
    if name == "dw-simplex":
        assert done["problem"] == 5 and done["sums_to_one"] == 5


def test_eb_shrink_conforms():
    assert check_method("eb-shrink")["batched"] == 5


@pytest.mark.parametrize("name", WIENER)
def test_wiener_needs_a_declared_order(name):
    est = estimates_for_checks()[1]
    assert ldpopt.methods.get(name).needs_order
    with pytest.raises(ValueError, match="ordered domain"):
        ldpopt.postprocess(est, name)
    with pytest.raises(ValueError, match="ordered"):
        ldpopt.methods.get(name).func(est)


def test_ordered_declaration_is_checked():
    with pytest.raises(ValueError, match="ordered must be True or False"):
        Estimate.from_frequencies([0.5, 0.5], 100, epsilon=1.0, p=0.6, q=0.2, ordered="yes")
    est = Estimate.from_frequencies([0.5, 0.5], 100, epsilon=1.0, p=0.6, q=0.2)
    with pytest.raises(ValueError, match="ordered"):
        est.as_ordered(1)
    assert est.as_ordered().with_f_tilde([0.4, 0.6]).ordered


def test_choose_offers_wiener_only_on_an_ordered_domain():
    assert not set(WIENER) & set(candidates("extended"))
    assert set(WIENER) <= set(candidates(ordered=True))
    est = oracles.get("grr", 2.0, 8).simulate(np.array([50, 80, 120, 150, 140, 100, 60, 30]) * 20, rng=0)
    with pytest.raises(ValueError, match="assume an ordered domain"):
        ldpopt.choose(est, methods=["norm-sub", "dw"], n_repeats=2)
    c = ldpopt.choose(est.as_ordered(), n_repeats=3)
    assert set(WIENER) <= set(c.table.index)


def test_amrp_rng_is_validated(smooth_est):
    with pytest.raises(ValueError, match="rng"):
        ldpopt.postprocess(smooth_est, "amrp", rng=None)
    with pytest.raises(ValueError, match="permutations"):
        ldpopt.postprocess(smooth_est, "amrp", permutations=0)


def test_eb_shrinkage_is_james_stein():
    """B̂ = min(1, (d − 2)σ̄²/‖f̃ − m‖²), computed here from Eq. 2's per-value variances at the truth
    averaged over the domain (independent of the module's formula for σ̄²)."""
    d, n = 40, 50_000
    f = np.full(d, 1.0 / d) + np.linspace(-0.01, 0.01, d)
    est = oracles.get("oue", 1.0, d).simulate(np.random.default_rng(0).multinomial(n, f), rng=1)
    p, q = est.p, est.q
    s2 = np.mean((q * (1 - q) + f * (p - q) * (1 - p - q)) / (n * (p - q) ** 2))
    r = est.f_tilde - 1.0 / d
    B = min(1.0, (d - 2) * s2 / np.sum(r**2))
    assert abs(float(shrinkage(est)[0]) - B) < 1e-12
    np.testing.assert_allclose(ldpopt.postprocess(est, "eb-shrink"), 1.0 / d + (1 - B) * r, rtol=0, atol=1e-15)
    prior = np.linspace(1, 2, d) / np.linspace(1, 2, d).sum()
    out = ldpopt.postprocess(est, "eb-shrink", prior=prior)
    Bp = min(1.0, (d - 2) * s2 / np.sum((est.f_tilde - prior) ** 2))
    np.testing.assert_allclose(out, prior + (1 - Bp) * (est.f_tilde - prior), rtol=0, atol=1e-15)


def test_eb_refuses_bad_input(smooth_est):
    with pytest.raises(ValueError, match="prior"):
        ldpopt.postprocess(smooth_est, "eb-shrink", prior=[0.5, 0.5])
    with pytest.raises(ValueError, match="level"):
        eb_interval(smooth_est, 1.5)
    lo, hi = eb_interval(smooth_est, 0.9)
    pt = ldpopt.postprocess(smooth_est, "eb-shrink")
    assert np.all(lo < pt) and np.all(pt < hi)


def test_dw_simplex_claim_is_certified_and_refereed_by_cvxpy():
    """verify's equivalence rows for DW-simplex (on an estimate not declared ordered: the identity is
    checked on it declared ordered): the certificate and cvxpy's Clarabel both confirm it."""
    from ldpopt.verify.equivalences import equivalence_rows

    rows = equivalence_rows(estimates_for_checks()[1], 0, ["CLARABEL"], 200, 50, methods=["dw-simplex"])
    assert [r.verdict for r in rows] == ["holds", "holds"]
    assert rows[1].value < rows[1].tolerance


def test_the_command_line_declares_the_order(tmp_path):
    import subprocess
    import sys

    est = oracles.get("grr", 1.0, 16).simulate(np.arange(1, 17) * 100, rng=0)
    path = tmp_path / "counts.csv"
    path.write_text("value,count\n" + "".join(f"{i},{int(c)}\n" for i, c in enumerate(est.counts)))
    cmd = [sys.executable, "-m", "ldpopt.cli", "postprocess", "--counts", str(path), "--oracle", "grr",
           "--epsilon", "1", "--method", "dw", "--out", str(tmp_path / "out.csv")]
    refused = subprocess.run(cmd, capture_output=True, text=True)
    assert refused.returncode != 0 and "--ordered" in refused.stderr
    done = subprocess.run([*cmd, "--ordered"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    dw = np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1, usecols=3)
    np.testing.assert_allclose(dw, ldpopt.postprocess(est.as_ordered(), "dw"), rtol=0, atol=1e-12)
