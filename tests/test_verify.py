"""Tests for ldpopt.verify (``ldpopt verify``): every row says what it checked, verdicts follow from
the row's own numbers, referee failures are never failed claims, tolerances resolve the frequency
scale 1/d, and the closed forms hold against the certificate (any d) and a solver (small d).

Reference: the certificate (ldpopt.problems.check.certificate) is written from the KKT conditions alone; the
solver rows use cvxpy, an independent implementation.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest

from ldpopt import oracles, verify
from ldpopt.methods import bayes, em, mle, normalize, registry
from ldpopt.verify import montecarlo, report
from ldpopt.verify.result import ClaimResult


def _random_instances(k: int, d_max: int, seed: int):
    """k (oracle, eps, n, d, seed): eps log-uniform in [0.05, 20], d log-uniform in [2, d_max]."""
    rng = np.random.default_rng(seed)
    names = oracles.available()
    out = []
    for i in range(k):
        eps = float(np.exp(rng.uniform(np.log(0.05), np.log(20.0))))
        d = int(np.exp(rng.uniform(np.log(2), np.log(d_max))))
        n = int(10 ** rng.uniform(2, 8))
        out.append((names[i % len(names)], eps, n, max(d, 2), i))
    return out + [("grr", 0.1, 1000, 2, 100), ("oue", 20.0, 10**5, 2, 101), ("sue", 0.1, 10**4, 3, 102)]


def _holds(r: ClaimResult):
    assert r.verdict == "holds", (r.claim, r.oracle, r.epsilon, r.n, r.d, r.referee, r.value, r.tolerance, r.why)
    assert r.value <= r.tolerance <= verify.tolerances.resolution(r.d)


# -- closed forms against the certificate (any d) and a solver (small d) -----------------------------------
@pytest.mark.parametrize("oracle,eps,n,d,seed", _random_instances(21, 100_000, 1))
def test_closed_forms_hold_against_the_certificate(oracle, eps, n, d, seed):
    est = verify.instance(oracle, eps, n, d, seed)
    _holds(verify.check_equivalence(est, normalize.norm_sub, "cls"))
    _holds(verify.check_equivalence(est, mle.mle_apx, "weighted-mle"))
    _holds(verify.check_equivalence(est, mle.mle_apx_paper, "weighted-mle"))
    _holds(verify.check_equivalence(est, em.em, em.likelihood_for(est)))
    mean = bayes.power(est, s=1.1)
    _holds(verify.check_equivalence(est, lambda e: bayes.power_ns(e, s=1.1), "posterior", mean=mean))


@pytest.mark.parametrize("oracle,eps,n,d,seed", _random_instances(7, 1000, 2))
def test_closed_forms_hold_against_clarabel(oracle, eps, n, d, seed):
    est = verify.instance(oracle, eps, n, d, seed)
    for closed, obj in ((normalize.norm_sub, "cls"), (mle.mle_apx, "weighted-mle")):
        r = verify.check_equivalence(est, closed, obj, referee="CLARABEL")
        assert r.verdict in ("holds", "not refereed"), (r.claim, r.value, r.tolerance, r.why)
        if r.verdict == "not refereed":  # only ever for a stated reason about the referee
            assert "CLARABEL" in r.why or "resolution" in r.why


def test_planted_error_of_a_tenth_of_the_frequency_scale_is_caught_at_42178():
    """A closed form off by 1/(10 d) on two values (mass kept) fails, without any solver."""
    d = 42_178
    est = verify.instance("oue", 1.0, 10**6, d, 0)
    for closed, obj in ((normalize.norm_sub, "cls"), (mle.mle_apx, "weighted-mle"), (em.em, "binomial")):
        f = closed(est)
        _holds(verify.check_equivalence(est, f, obj))
        top = np.argsort(f)[-2:]
        wrong = f.copy()
        wrong[top[0]] += 1 / (10 * d)
        wrong[top[1]] -= 1 / (10 * d)
        r = verify.check_equivalence(est, wrong, obj, claim="planted")
        assert r.verdict == "fails" and r.value >= 1 / (10 * d) * (1 - 1e-9), (obj, r.value, r.tolerance)
        assert r.tolerance < 1e-4 / d  # the tolerance cannot hide an error at the frequency scale


def test_planted_wrong_closed_forms_are_caught_by_both_referees():
    est = verify.instance("oue", 1.0, 10**4, 50, 0)
    for ref in ("certificate", "CLARABEL"):
        assert verify.check_equivalence(est, normalize.norm_mul, "cls", referee=ref).verdict == "fails"
        # Norm-Sub is not the weighted MLE when p + q != 1 (OUE) ...
        assert verify.check_equivalence(est, normalize.norm_sub, "weighted-mle", referee=ref).verdict == "fails"
    # ... and is when p + q = 1 (SUE: gamma = 1)
    est = verify.instance("sue", 1.0, 10**4, 50, 0)
    assert verify.check_equivalence(est, normalize.norm_sub, "weighted-mle").verdict == "holds"


def test_certificate_bound_is_rigorous_on_a_known_projection():
    # min ||f - y||^2 on the simplex, y = (0.7, 0.5, -0.2): f* = (0.6, 0.4, 0)
    est = _ToyEstimate(np.array([0.7, 0.5, -0.2]))
    c = verify.certificate_metrics(est, np.array([0.6, 0.4, 0.0]), "cls")
    # L = J + λ(Σf − 1): 2(f_v − y_v) + λ = 0 on the support gives λ = 0.2
    assert c["max_abs_error_bound"] < 1e-15 and math.isclose(c["multiplier_refined"], 0.2)
    for f in ([0.5, 0.5, 0.0], [0.62, 0.4, 0.0], [0.6, 0.38, 0.02]):
        err = float(np.max(np.abs(np.array(f) - [0.6, 0.4, 0.0])))
        assert verify.certificate_metrics(est, np.array(f), "cls")["max_abs_error_bound"] >= err


class _ToyEstimate:
    def __init__(self, y):
        self.f_tilde, self.d = y, y.shape[0]


# -- referee failures, verdicts, exit codes ----------------------------------------------------------------
def test_a_referee_failure_is_not_a_failed_claim(monkeypatch):
    from ldpopt.problems import Problem

    def broken(self, *a, **k):
        raise RuntimeError("solver crashed")

    monkeypatch.setattr(Problem, "solve", broken)
    est = verify.instance("oue", 1.0, 10**4, 30, 0)
    r = verify.check_equivalence(est, normalize.norm_sub, "cls", referee="OSQP")
    assert r.verdict == "not refereed" and "solver crashed" in r.why
    df = pd.DataFrame([r.as_row()])
    assert verify.report.exit_code(df) == 0 and len(verify.failures(df)) == 0
    assert verify.report.exit_code(df, require_referee=True) == verify.report.EXIT_NOT_REFEREED
    text = verify.report.render_text(df)
    assert "Not refereed" in text and "solver crashed" in text and "FAIL" not in text


def test_verdict_follows_the_rows_own_numbers():
    """inversions = 0 against tolerance 0 holds (it was printed as failing)."""
    row = ClaimResult("order:power", "s", "monte-carlo", "grr", 1.0, 10, 16, 0, "order_violations", "pairs",
                      0, "<=", 0.0, True)
    assert row.verdict == "holds"
    assert ClaimResult("c", "s", "monte-carlo", None, None, None, None, None, "m", "", 1e-3, "<=", 0.0,
                       True).verdict == "fails"
    assert verify.decide(float("nan"), "<=", 1.0) == "fails"
    with pytest.raises(ValueError, match="must say why"):
        ClaimResult("c", "s", "k", None, None, None, None, None, "m", "", 0, "<=", 0, True, verdict="not refereed")


def test_monte_carlo_rows_are_consistent_and_the_order_rows_hold():
    rows = montecarlo.mc_rows("grr", 1.0, 10_000, 16, 60, 8, 0)
    for r in rows:
        if r.verdict != "not refereed":
            assert r.verdict == verify.decide(r.value, r.op, r.tolerance), r.claim
        assert (r.oracle, r.epsilon, r.n, r.d) == ("grr", 1.0, 10_000, 16) and r.metric and r.reps
    by = {r.claim: r for r in rows}
    assert by["order:power"].verdict == "holds" and by["order:power"].value == 0
    assert {r.claim for r in rows} == set(montecarlo.claim_ids("grr"))


def test_zero_variance_at_large_epsilon_gives_a_finite_z():
    """At eps = 20 GRR's f~ barely varies: the SE floor (rounding, count lattice / reps) is used and
    reported, z stays finite and unbiasedness holds; Lemma 4 with nothing observable is not refereed."""
    by = {r.claim: r for r in montecarlo.mc_rows("grr", 20.0, 10_000, 16, 100, 5, 0)}
    for c in ("base-unbiased", "norm-unbiased"):
        assert by[c].verdict == "holds" and by[c].value < 1.0, by[c].value
        assert by[c].metrics["values_with_se_at_floor"] > 0 and by[c].metrics["se_floor_max"] > 0
    assert by["lemma4:zero-value-positive-bias:norm-sub"].verdict == "not refereed"


def test_se_floor_on_constant_outputs():
    x = np.full((50, 4), 0.1) + np.array([0, 1, 2, 3]) * 1e-3
    st = montecarlo._bias_stats(x, x[0] * (1 + 1e-16))
    assert np.all(np.abs(st["bias"]) / st["se"] <= 0.5)


def test_norm_hyb_theta_respects_its_whole_domain_edge_case():
    """d = 2: Norm-Cut often keeps every value; Norm-Hyb then applies Norm-Sub to all (its documented
    edge case), so those repetitions are counted, not compared."""
    by = {r.claim: r for r in montecarlo.mc_rows("oue", 1.0, 1000, 2, 200, 5, 0)}
    r = by["norm-hyb(theta):keeps-norm-cut-values"]
    assert r.metrics["reps_whole_domain_kept"] > 0
    assert r.verdict == "holds" and r.value == 0.0


# -- the grid at the requested d, JSON, summary, CLI entry points -------------------------------------------
def test_requested_d_is_used_by_every_claim_or_said_why():
    df = verify.run(oracles=["oue"], epsilons=[1.0], ns=[10**5], ds=[42_178], solver="none")
    assert set(df["d"]) == {42_178}
    eq = df[df["kind"] == "equivalence"]
    assert set(eq["claim"]) == set(verify.EQUIVALENCES) and set(eq["verdict"]) == {"holds"}
    assert set(eq["referee"]) == {"certificate"}
    mc = df[df["referee"] == "monte-carlo"]
    assert len(mc) and set(mc["verdict"]) == {"not refereed"} and mc["why"].str.contains("--mc-d").all()
    assert verify.report.exit_code(df) == 0


def test_json_keeps_full_precision():
    row = ClaimResult("c", "s", "finding", "grr", 1.0, 10, 4, 0, "m", "frequency", 6.25e-14, "<=", 1e-9, None,
                      metrics={"tiny": 6.25e-14, "inf": math.inf})
    doc = json.loads(verify.report.render_json(pd.DataFrame([row.as_row()])))
    assert doc["rows"][0]["value"] == 6.25e-14 and doc["rows"][0]["metrics"]["tiny"] == 6.25e-14
    assert doc["rows"][0]["metrics"]["inf"] == "inf"


def test_summary_names_metrics_and_keeps_every_failing_setting():
    rows = [ClaimResult("c", "s", "monte-carlo", "grr", 1.0, 10, d, 0, "abs_sum_bias", "frequency", 1.0, "<=", 0.5,
                        True) for d in range(2, 40)]
    s = verify.summary(pd.DataFrame([r.as_row() for r in rows]))
    assert list(s["metric"]) == ["abs_sum_bias"] and list(s["unit"]) == ["frequency"]
    assert s["fails"].iloc[0] == 38 and s["failing_settings"].iloc[0].count("grr") == 38
    text = verify.report.render_text(pd.DataFrame([r.as_row() for r in rows]))
    assert text.count("must be <= 0.5") == 38


def _parser():
    from ldpopt.cli import build_parser

    ap = build_parser()
    return next(a for a in ap._subparsers._group_actions if a.dest == "command").choices["verify"]


def test_help_says_what_is_checked_and_the_exit_codes():
    h = _parser().format_help()
    for word in ("certificate", "not refereed", "Exit codes", "Monte-Carlo", "1/(10 d)", "--mc-d"):
        assert word in h
    with pytest.raises(SystemExit):
        _parser().parse_args(["--d", "1.5"])


def _main(argv):
    out = io.StringIO()
    with redirect_stdout(out):
        args = _parser().parse_args(argv)
        code = args.func(args)
    return code, out.getvalue()


def test_main_quick_json_exits_0():
    code, out = _main(["--quick", "--json"])
    doc = json.loads(out)
    assert code == 0 == doc["exit_code"] and doc["failures"] == []
    assert doc["findings"]["mle-apx-formula-arxiv"] == "holds"
    assert doc["findings"]["mle-apx-formula-ndss"] == "does not hold"
    for r in doc["rows"]:
        assert {"claim", "oracle", "epsilon", "n", "d", "seed", "metric", "unit", "value", "tolerance",
                "verdict", "referee"} <= set(r)


def test_main_exits_1_on_a_planted_wrong_closed_form(monkeypatch):
    # Norm-Sub's record planted with Norm-Mul's function: the claim it states (CLS) must fail
    planted = dataclasses.replace(registry.get("norm-sub"), func=normalize.norm_mul)
    monkeypatch.setitem(registry._METHODS, "norm-sub", planted)
    code, out = _main(["--quick", "--oracles", "oue", "--d", "30", "--no-mc"])
    assert code == 1
    tail = out.split("FAIL")[1]
    assert "norm-sub=cls [oue eps=1 n=10000 d=30 seed=0; certificate]" in tail


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="oracles"):
        verify.run(oracles=["nope"], quick=True)
    with pytest.raises(ValueError, match="d must be >= 2"):
        verify.run(ds=[1], quick=True)
    h = verify.instances.true_histogram(1000, 7, "half-zero")
    assert h.sum() == 1000 and np.all(h[4:] == 0)
    with pytest.raises(ValueError, match="kind"):
        verify.instances.true_histogram(10, 3, "uniform")


def test_an_unresolved_sign_is_not_a_failure():
    """SS at eps = 20, d = 64: the zero-value bias of Lemma 4 is ~1e-8, its 99.9 % interval contains 0
    with 600 repetitions: not refereed (with the interval), never fails. (At d = 16 SS's exact joint
    law leaves every zero-value output at exactly 0: the other not-refereed reason, tested below.)"""
    rows = [r for r in montecarlo.mc_rows("ss", 20.0, 10_000, 64, 600, 5, 0) if r.claim.startswith("lemma4")]
    assert rows and all(r.verdict in ("holds", "not refereed") for r in rows)
    assert any(r.verdict == "not refereed" and "contains 0" in r.why for r in rows)


def test_a_bias_no_repetition_resolves_is_not_refereed():
    rows = [r for r in montecarlo.mc_rows("ss", 20.0, 10_000, 16, 600, 5, 0) if r.claim.startswith("lemma4")]
    assert rows and all(r.verdict in ("holds", "not refereed") for r in rows)
    assert any(r.verdict == "not refereed" and "exactly 0 in all 600 repetitions" in r.why for r in rows)


def test_an_infeasible_referee_is_not_a_failed_claim(monkeypatch):
    """OSQP 'infeasible' on the simplex (issue 11) was listed as a claim that does not hold, exit 1."""
    from types import SimpleNamespace

    from ldpopt.problems import Problem

    monkeypatch.setattr(Problem, "solve", lambda self, *a, **k: SimpleNamespace(status="infeasible", f=None))
    est = verify.instance("oue", 6.0, 10**6, 100, 0)
    rows = [verify.check_equivalence(est, normalize.norm_sub, "cls", referee="OSQP"),
            verify.check_equivalence(est, normalize.norm_sub, "cls")]
    assert rows[0].verdict == "not refereed" and "OSQP:infeasible" in rows[0].why
    assert rows[1].verdict == "holds"
    df = pd.DataFrame([r.as_row() for r in rows])
    assert verify.report.exit_code(df) == 0
    text = verify.report.render_text(df)
    assert "Claims checked:" in text and "that FAIL" not in text and "OSQP:infeasible" in text


def test_printed_verdicts_agree_with_the_exit_code():
    """A finding that does not hold was printed 'fails' while the exit code stayed 0: now 'fails'
    appears exactly on the rows that set exit 1, and a finding's row says 'does not hold'."""
    finding = ClaimResult("f", "s", "finding", "grr", 1.0, 10, 4, 0, "m", "frequency", 1.0, "<=", 0.5, None)
    expected = ClaimResult("c", "s", "monte-carlo", "grr", 1.0, 10, 4, 0, "m", "frequency", 1.0, "<=", 0.5,
                           True)
    only_finding = pd.DataFrame([finding.as_row()])
    assert verify.report.exit_code(only_finding) == 0
    text = verify.report.render_text(only_finding)
    rows = [ln for ln in text.splitlines() if ln.startswith("  f | ")]
    assert len(rows) == 1 and rows[0].endswith("| does not hold"), rows
    doc = json.loads(verify.report.render_json(only_finding))
    assert [r["verdict"] for r in doc["rows"]] == ["does not hold"] and doc["summary"][0]["fails"] == 0
    both = pd.DataFrame([finding.as_row(), expected.as_row()])
    assert verify.report.exit_code(both) == 1
    rows = [ln for ln in verify.report.render_text(both).splitlines() if ln.endswith("| fails")]
    assert len(rows) == 1 and rows[0].startswith("  c | "), rows


def test_help_says_which_verdicts_set_which_exit_code():
    h = " ".join(_parser().format_help().split())
    assert "fails a claim expected to hold failed on this row: exit 1" in h
    assert "does not hold a finding" in h and "exit 3 with --require-referee" in h
