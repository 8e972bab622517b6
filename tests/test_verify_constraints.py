"""``check_equivalence(..., constraints=[...])`` referees a closed form for a user's own constraint
variant (issue 11 item 4): the certificate at any d, a solver at small d.

Reference: CLS under the simplex plus one SubsetSum equality Σ_S f = a decouples into two scaled
simplex projections (values in S onto {f ≥ 0, Σ = a}, the rest onto {f ≥ 0, Σ = 1 − a}; projecting y
onto {x ≥ 0, Σ x = a} is a·proj_simplex(y/a)). A plausible wrong closed form — Norm-Sub, then each
part rescaled to its total — is planted and must be caught by both referees.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import verify
from ldpopt.methods.normalize import norm_sub, project_simplex
from ldpopt.problems import Simplex, SubsetSum

S, A = np.arange(10), 0.3
CONS = [Simplex(), SubsetSum(S, A)]


def _mask(d):
    m = np.zeros(d, bool)
    m[S] = True
    return m


def right(est):
    m, f = _mask(est.d), np.empty(est.d)
    f[m] = A * project_simplex(est.f_tilde[m] / A)
    f[~m] = (1 - A) * project_simplex(est.f_tilde[~m] / (1 - A))
    return f


def wrong(est):
    m, f = _mask(est.d), norm_sub(est)
    f[m] *= A / f[m].sum()
    f[~m] *= (1 - A) / f[~m].sum()
    return f


@pytest.mark.parametrize("d,referees", [(200, ("certificate", "CLARABEL")), (42_178, ("certificate",))])
def test_subset_sum_variant_right_holds_and_wrong_is_caught(d, referees):
    est = verify.instance("oue", 1.0, 10**6, d, 0)
    for ref in referees:
        ok = verify.check_equivalence(est, right, "cls", constraints=CONS, referee=ref, claim="variant")
        assert ok.verdict == "holds", (ref, ok.value, ok.tolerance, ok.why)
        assert ok.value <= ok.tolerance <= verify.tolerances.resolution(d)
        assert "SubsetSum" in ok.statement
        bad = verify.check_equivalence(est, wrong, "cls", constraints=CONS, referee=ref, claim="planted")
        assert bad.verdict == "fails" and bad.value > 100 * verify.tolerances.resolution(d), (ref, bad.value)


def test_variant_off_by_a_tenth_of_the_frequency_scale_is_caught_at_42178():
    d = 42_178
    est = verify.instance("oue", 1.0, 10**6, d, 0)
    f = right(est)
    top = np.argsort(np.where(_mask(d), -np.inf, f))[-2:]  # two values outside S: both sums kept
    f[top[0]] += 1 / (10 * d)
    f[top[1]] -= 1 / (10 * d)
    r = verify.check_equivalence(est, f, "cls", constraints=CONS)
    assert r.verdict == "fails" and r.value >= 1 / (10 * d) * (1 - 1e-9)


def test_user_callable_constraint_has_no_certificate_but_a_solver_referee():
    est = verify.instance("oue", 1.0, 10**5, 50, 1)

    def sums(f, e):
        return f[0] + f[1] == 0.2

    cons = [Simplex(), sums]
    ref = lambda e: right_for(e, [0, 1], 0.2)  # noqa: E731
    r = verify.check_equivalence(est, ref, "cls", constraints=cons)
    assert r.verdict == "not refereed" and "no certificate" in r.why
    r = verify.check_equivalence(est, ref, "cls", constraints=cons, referee="CLARABEL")
    assert r.verdict == "holds" and r.value <= r.tolerance <= verify.tolerances.resolution(est.d), r.why
    bad = verify.check_equivalence(est, norm_sub, "cls", constraints=cons, referee="CLARABEL")
    assert bad.verdict == "fails"


def right_for(est, idx, a):
    m = np.zeros(est.d, bool)
    m[idx] = True
    f = np.empty(est.d)
    f[m] = a * project_simplex(est.f_tilde[m] / a)
    f[~m] = (1 - a) * project_simplex(est.f_tilde[~m] / (1 - a))
    return f


# -- the likelihood claim (EM = exact likelihood) at any d -----------------------------------------------
def test_likelihood_claim_is_refereed_above_the_conic_limit_by_sqp():
    """d = 1000 > LIKELIHOOD_MAX_D: the solver row is ldpopt's sequential-QP route (Clarabel fails
    the binomial there), not a silently smaller d; a planted wrong EM output fails it."""
    from ldpopt.methods import em
    from ldpopt.verify.equivalences import equivalence_rows

    est = verify.instance("oue", 1.0, 10**6, 1000, 0)
    rows = [r for r in equivalence_rows(est, 0, ["CLARABEL"], 2000, verify.LIKELIHOOD_MAX_D)
            if r.claim == "em=likelihood"]
    assert [r.referee.split(":")[0] for r in rows] == ["certificate", "SQP"]
    assert all(r.verdict == "holds" and r.d == 1000 for r in rows), [(r.referee, r.value, r.tolerance) for r in rows]
    f = em.em(est)
    top = np.argsort(f)[-2:]
    f[top[0]] += 1 / (10 * est.d)
    f[top[1]] -= 1 / (10 * est.d)
    for ref in ("certificate", "SQP"):
        assert verify.check_equivalence(est, f, "binomial", referee=ref).verdict == "fails"


def test_likelihood_claim_runs_at_42178_by_the_certificate():
    from ldpopt.verify.equivalences import equivalence_rows

    est = verify.instance("grr", 2.0, 10**6, 42_178, 0)
    rows = [r for r in equivalence_rows(est, 0, [], 2000, verify.LIKELIHOOD_MAX_D) if r.claim == "em=likelihood"]
    assert len(rows) == 1 and rows[0].d == 42_178 and rows[0].referee == "certificate"
    assert rows[0].verdict == "holds" and rows[0].tolerance <= verify.tolerances.resolution(42_178)
