"""Tests for ldpopt.verify and `ldpopt verify`: closed forms equal their solver problems on random
instances (oracles, eps in [0.1, 8], d from 2 to 1e5), the printed MLE-Apx formula findings, and a
planted wrong closed form is caught.

Tolerances are the ones ldpopt.verify derives from the solver's stated accuracy (module docstring of
ldpopt.verify): J(closed) - J(solver) <= 10 (abs + rel |J_s|)/K and |f_closed - f_solver| <= sqrt(2 dJ/mu).
"""

from __future__ import annotations

import io
import json
import math
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

from ldpopt import cli, oracles, verify
from ldpopt.methods import em, mle, normalize


def _random_instances(k: int, d_max: int, seed: int):
    """k (oracle, eps, n, d, seed): eps log-uniform in [0.1, 8], d log-uniform in [2, d_max]."""
    rng = np.random.default_rng(seed)
    names = oracles.available()
    out = []
    for i in range(k):
        eps = float(np.exp(rng.uniform(np.log(0.1), np.log(8.0))))
        d = int(np.exp(rng.uniform(np.log(2), np.log(d_max))))
        n = int(10 ** rng.uniform(3, 6))
        out.append((names[i % len(names)], eps, n, max(d, 2), i))
    # the ends of the ranges, explicitly
    out += [("grr", 0.1, 1000, 2, 100), ("oue", 8.0, 10**5, 2, 101), ("sue", 0.1, 10**4, 3, 102)]
    return out


def _est(oracle, eps, n, d, seed):
    return verify._instance(oracle, eps, n, d, seed)


def _assert_holds(r: verify.ClaimResult):
    m = r.metrics
    assert r.holds, (r.claim, r.oracle, r.epsilon, r.n, r.d, r.solver, r.value, r.tolerance, r.note,
                     {k: m.get(k) for k in ("objective_gap", "objective_tol", "kkt", "referee", "min_f", "sum_error")})
    # the deciding numbers themselves, so a regression in the bookkeeping is caught too
    assert m["objective_gap"] <= m["objective_tol"]
    assert m["kkt"] <= verify.KKT_TOL
    assert r.value <= r.tolerance


@pytest.mark.parametrize("oracle,eps,n,d,seed", _random_instances(14, 3000, 1))
def test_norm_sub_is_cls(oracle, eps, n, d, seed):
    est = _est(oracle, eps, n, d, seed)
    for solver in ("CLARABEL", "OSQP"):
        _assert_holds(verify.check_equivalence(est, normalize.norm_sub, "cls", solver=solver))


@pytest.mark.parametrize("oracle,eps,n,d,seed", _random_instances(14, 3000, 2))
def test_mle_apx_and_paper_iteration_are_weighted_mle(oracle, eps, n, d, seed):
    est = _est(oracle, eps, n, d, seed)
    _assert_holds(verify.check_equivalence(est, mle.mle_apx, "weighted-mle"))
    r = verify.check_equivalence(est, mle.mle_apx_paper, "weighted-mle")
    _assert_holds(r)


@pytest.mark.parametrize("oracle,eps,n,d,seed", _random_instances(14, verify.LIKELIHOOD_MAX_D, 3))
def test_em_maximises_the_likelihood(oracle, eps, n, d, seed):
    est = _est(oracle, eps, n, d, seed)
    like = em.likelihood_for(est)
    _assert_holds(verify.check_equivalence(est, em.em, like, fallback=("SCS",)))


@pytest.mark.parametrize("oracle,eps,n,d,seed", _random_instances(7, 2000, 4))
def test_power_ns_is_the_posterior_projection(oracle, eps, n, d, seed):
    from ldpopt.methods import bayes

    est = _est(oracle, eps, n, d, seed)
    s = 1.1  # any fixed exponent: the claim is about the projection, not the fit
    mean = bayes.power(est, s=s)
    _assert_holds(verify.check_equivalence(est, lambda e: bayes.power_ns(e, s=s), "posterior", mean=mean))


def test_large_domain_with_clarabel():
    """d = 1e5 (CLS) and d = 3e4 (weighted MLE), Clarabel: the large end of the range."""
    est = _est("oue", 1.0, 10**6, 100_000, 7)
    r = verify.check_equivalence(est, normalize.norm_sub, "cls", solver="CLARABEL")
    _assert_holds(r)
    est = _est("olh", 2.0, 10**6, 30_000, 8)
    _assert_holds(verify.check_equivalence(est, mle.mle_apx, "weighted-mle", solver="CLARABEL"))


def test_planted_wrong_closed_forms_are_caught():
    est = _est("oue", 1.0, 10**4, 50, 0)
    r = verify.check_equivalence(est, normalize.norm_mul, "cls")  # Norm-Mul passed off as CLS
    assert not r.holds
    assert r.metrics["objective_gap"] > 100 * r.metrics["objective_tol"]
    assert r.metrics["kkt"] > 1e-3
    # Norm-Sub passed off as the weighted MLE (they differ when p + q != 1, as for OUE)
    r = verify.check_equivalence(est, normalize.norm_sub, "weighted-mle")
    assert not r.holds and r.metrics["objective_gap"] > r.metrics["objective_tol"]
    # ... and agree when p + q = 1 (SUE): then MLE-Apx is Norm-Sub (gamma = 1), so the check passes
    r = verify.check_equivalence(_est("sue", 1.0, 10**4, 50, 0), normalize.norm_sub, "weighted-mle")
    assert r.holds


def test_printed_mle_formulas():
    """arXiv Eq. 14 on the optimal support is the exact optimum; the NDSS print does not sum to one
    unless p + q = 1 (SUE), where its wrong term (p - q)(1 - p - q) vanishes."""
    for oracle in ("grr", "oue", "olh"):
        rows = {r.claim: r for r in verify.check_mle_formulas(_est(oracle, 1.0, 10**4, 100, 3))}
        assert rows["mle-apx-formula-arxiv"].holds
        assert rows["mle-apx-formula-arxiv"].metrics["max_abs_diff_to_exact"] < 1e-12
        assert not rows["mle-apx-formula-ndss"].holds
        assert rows["mle-apx-formula-ndss"].metrics["sum_error"] > 1e-4
    rows = {r.claim: r for r in verify.check_mle_formulas(_est("sue", 1.0, 10**4, 100, 3))}
    assert rows["mle-apx-formula-ndss"].holds


def test_simplex_kkt_on_known_points():
    # J = ||f - y||^2 with y = (0.7, 0.5, -0.2): projection (0.6, 0.4, 0); g = 2(f - y) = (-0.2, -0.2, 0.4)
    y = np.array([0.7, 0.5, -0.2])
    f = np.array([0.6, 0.4, 0.0])
    k = verify.simplex_kkt(2 * (f - y), f)
    assert k["kkt"] < 1e-15 and math.isclose(k["multiplier"], -0.2)
    f_bad = np.array([0.5, 0.5, 0.0])
    assert verify.simplex_kkt(2 * (f_bad - y), f_bad)["kkt"] > 0.1


def test_true_histogram_and_bad_input():
    h = verify.true_histogram(1000, 7, "half-zero")
    assert h.sum() == 1000 and np.all(h[4:] == 0) and np.all(np.diff(h[:4]) <= 0)
    with pytest.raises(ValueError, match="kind"):
        verify.true_histogram(10, 3, "uniform")
    with pytest.raises(ValueError, match="oracles"):
        verify.run(oracles=["nope"], quick=True)


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def test_cli_quick_json_exits_0_and_names_the_formula_findings():
    code, out, _ = _cli(["verify", "--quick", "--json"])
    assert code == 0
    doc = json.loads(out)
    assert doc["exit_code"] == 0 and doc["failures"] == []
    assert doc["findings"]["mle-apx-formula-arxiv"] == "holds"
    assert doc["findings"]["mle-apx-formula-ndss"] == "does not hold"
    claims = {r["claim"] for r in doc["rows"]}
    assert {"norm-sub=cls", "mle-apx=weighted-mle", "em=likelihood", "power-ns=posterior",
            "lemma1:base-pos-positive-bias", "norm-variance=(d-1)/d"} <= claims
    exp_rows = [r for r in doc["rows"] if r["expected"] is True]
    assert exp_rows and all(r["holds"] for r in exp_rows)


def test_cli_exits_1_on_a_planted_wrong_closed_form(monkeypatch):
    monkeypatch.setitem(verify.EQUIVALENCES, "norm-sub=cls",
                        dict(verify.EQUIVALENCES["norm-sub=cls"], closed=normalize.norm_mul))
    code, out, _ = _cli(["verify", "--quick", "--oracles", "oue", "--d", "30"])
    assert code == 1
    assert "do NOT hold" in out and "norm-sub=cls" in out.split("do NOT hold")[1]
