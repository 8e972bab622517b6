"""Issue 11 item 4: Clarabel's weighted MLE on GRR counts can stop inaccurate; a Solution is never a
false "optimal". Reference: MLE-Apx (Wang et al. Appendix A), the closed form of the weighted MLE
on the simplex, independent of every solver."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.methods.mle import mle_apx
from ldpopt.problems import Problem
from ldpopt.problems.check.verdict import accuracy_tol


@pytest.mark.parametrize("d,eps", [(500, 1.0), (2000, 4.0)])
def test_grr_weighted_mle_is_never_a_false_optimal(d, eps):
    rng = np.random.default_rng(d)
    w = 1.0 / np.arange(1, d + 1) ** 1.3
    est = oracles.get("grr", eps, d).simulate(rng.multinomial(10**6, w / w.sum()), rng)
    ref = mle_apx(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = Problem(est, "weighted-mle").solve()
        clarabel = Problem(est, "weighted-mle").solve(solver="CLARABEL")
    # the default route: the structured solver, certified, equal to the closed form
    assert default.solver == "LDPOPT-STRUCTURED" and default.status == "optimal"
    assert np.max(np.abs(default.f - ref)) <= 1e-12
    # Clarabel alone: whatever it says, "optimal" only when within ldpopt's accuracy tolerance
    if clarabel.status == "optimal":
        assert np.max(np.abs(clarabel.f - ref)) <= accuracy_tol(d)
    else:
        assert not clarabel.success and clarabel.message
