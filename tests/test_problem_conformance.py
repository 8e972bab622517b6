"""check_objective and check_constraint over every registered objective and constraint type (found
in the registries, not listed here), and each check catching a fault planted in an otherwise
correct item."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from ldpopt.cli._problemfile import read_example as example_constraints
from ldpopt.estimate import simulate_central
from ldpopt.problems import Constraint, SubsetSum, registry
from ldpopt.problems.solvers.structured import NotApplicable
from ldpopt.problems.objectives.builtins import LeastSquares
from ldpopt.problems.objectives.separable import Quadratic
from ldpopt.problems.registry import Kind
from ldpopt.testing import CheckFailed, check_constraint, check_objective, estimates_for_checks

ESTIMATES = estimates_for_checks()[:3]   # d = 6, 30, 12
# the same histograms released with central noise (Estimate.from_central): what 'central-mle' accepts,
# and where the oracles' likelihoods refuse
CENTRAL = [simulate_central(np.round(e.f_tilde.clip(0) * e.n).astype(np.int64), mech, scale, rng=i, n_known=known)
           for i, (e, (mech, scale, known)) in enumerate(zip(ESTIMATES, [("laplace", 3.0, True),
                                                                          ("discrete-gaussian", 5.0, False),
                                                                          ("discrete-laplace", 2.0, True)]))]
SMALL = [ESTIMATES[0]]                   # d = 6: the problem-file examples' domain


@pytest.mark.parametrize("name", registry.available_objectives())
def test_every_registered_objective_conforms(name):
    done = check_objective(name, ESTIMATES + CENTRAL)
    assert done["value"] > 0
    obj = registry.objective_factory(name).example(ESTIMATES[0])
    first = next(e for e in ESTIMATES + CENTRAL if _accepts(obj, e))
    if obj.per_value(first) is not None:  # a smooth separable objective: every check ran
        assert min(done.values()) > 0, done


def _accepts(obj, est) -> bool:
    try:
        obj.check(est)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("kind", list(registry.constraint_types().values()), ids=lambda k: k.file_type)
def test_every_registered_constraint_type_conforms(kind):
    made = example_constraints(kind)
    assert made
    for con in made:
        done = check_constraint(con, SMALL)
        assert done["rows"] > 0 and done["feasibility"] > 0, done
        if type(con).jacobian_t is not Constraint.jacobian_t:  # it declares its Jacobian
            assert done["jacobian"] > 0
        if type(con).compile_into is not Constraint.compile_into:  # it declares its compiled rows
            assert done["structured"] > 0


# -- planted faults: each check catches one broken piece of a correct item ----------------------------

def _cls_with(**overrides):
    """LeastSquares with some methods replaced (a planted fault)."""
    return type("Planted", (LeastSquares,), overrides)()


def _shifted(est):
    """CLS's per-value form with its largest centre moved by 0.3: another problem than the built one."""
    return Quadratic(est.f_tilde + 0.3 * (np.arange(est.d) == np.argmax(est.f_tilde)), 1.0, "planted")


#: CLS's J and ∇J written out, so a planted per-value form is the only piece off the built problem
#: (value and gradient default to the per-value form's sums otherwise)
_BUILT_J = {"value": lambda self, f, est: float(np.sum((f - est.f_tilde) ** 2)),
            "gradient": lambda self, f, est: 2.0 * (f - est.f_tilde)}


def _quadratic_with(**overrides):
    return type("PlantedQuadratic", (Quadratic,), overrides)


@pytest.mark.parametrize("check, obj", [
    ("value", _cls_with(value=lambda self, f, est: 1.01 * LeastSquares.value(self, f, est))),
    ("gradient", _cls_with(gradient=lambda self, f, est: 1.01 * LeastSquares.gradient(self, f, est))),
    ("per_value", _cls_with(per_value=lambda self, est: _quadratic_with(
        d2=lambda s, f: 1.1 * Quadratic.d2(s, f))(est.f_tilde, 1.0, "planted"))),
    ("argmin", _cls_with(per_value=lambda self, est: _quadratic_with(
        _interior=lambda s, t, l, u, idx: Quadratic._interior(s, t, l, u, idx) + 1e-3)(est.f_tilde, 1.0, "planted"))),
    ("curvature", _cls_with(per_value=lambda self, est: _quadratic_with(
        mu=lambda s, l, u: 2.0 * Quadratic.mu(s, l, u))(est.f_tilde, 1.0, "planted"))),
    ("structured", _cls_with(per_value=lambda self, est: _shifted(est), **_BUILT_J)),
    ("certificate", _cls_with(per_value=lambda self, est: _shifted(est), **_BUILT_J)),
])
def test_each_objective_check_catches_a_planted_fault(check, obj):
    assert check_objective(LeastSquares(), SMALL, checks=[check])[check] > 0  # the correct item passes
    with pytest.raises(CheckFailed, match=rf"check_objective\('cls'\): {check} "):
        check_objective(obj, SMALL, checks=[check])


class _ShiftedBuild(SubsetSum):
    """States Σ = value + 0.2 to cvxpy while its value (read by the pre-check) says value."""

    def build(self, f, estimate):
        return [(self.name, sum(f[i] for i in self.indices) == self.value + 0.2)]


class _ShiftedRows(SubsetSum):
    def compile_into(self, rows, keys, d):
        SubsetSum(self.indices, self.value + 0.1, self.sense).compile_into(rows, keys, d)


class _BadFileExample(SubsetSum):
    file_type = "planted-subset-sum"
    file_kind = Kind("a subset sum whose file example lacks its value", ("value",), (), SubsetSum.file_kind.values)
    file_example: ClassVar[dict] = {"type": "planted-subset-sum", "positions": [0, 1]}


@pytest.fixture
def planted_file_type():
    registry.register_constraint(_BadFileExample)
    yield _BadFileExample([0, 1], 0.3)
    registry.unregister("constraint", _BadFileExample.file_type)


@pytest.mark.parametrize("check, con", [
    ("rows", type("Planted", (SubsetSum,), {"residuals": lambda self, f, est: [0.0]})([0, 1], 0.3)),
    ("rows", type("Planted", (SubsetSum,), {"g": lambda self, k, f, d: (np.array([0.5]), True)})([0, 1], 0.3)),
    ("jacobian", type("Planted", (SubsetSum,), {
        "jacobian_t": lambda self, k, y, d: -SubsetSum.jacobian_t(self, k, y, d)})([0, 1], 0.3)),
    ("structured", _ShiftedRows([0, 1], 0.3)),
    ("feasibility", _ShiftedBuild([0, 1], 0.3)),
])
def test_each_constraint_check_catches_a_planted_fault(check, con):
    assert check_constraint(SubsetSum([0, 1], 0.3), SMALL, checks=[check])[check] > 0
    with pytest.raises(CheckFailed, match=rf"check_constraint\(.*\): {check} "):
        check_constraint(con, SMALL, checks=[check])


def test_a_file_example_that_does_not_read_is_refused(planted_file_type):
    from ldpopt.cli._args import InputError

    kind = type(planted_file_type)
    with pytest.raises(InputError, match=r"needs key 'value'"):
        example_constraints(kind)


def test_checks_are_named_and_not_applicable_is_reported():
    with pytest.raises(ValueError, match="checks must name some of"):
        check_objective("cls", SMALL, checks=["nonsense"])
    # l1 has no per-value form: those checks count 0, the structured solver refuses it
    done = check_objective("l1", SMALL)
    assert done["value"] > 0 and done["per_value"] == done["structured"] == 0
    with pytest.raises(NotApplicable):
        from ldpopt.problems.solvers.structured import solve_structured
        solve_structured(SMALL[0], "l1")
