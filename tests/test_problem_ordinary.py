"""What users expect on ordinary problems: NaN or inf in their data and a second cvxpy Variable are
refused at ``Problem(...)`` in one line naming the part; a constant objective and an LP end
``optimal`` with the value certified and say the point is one optimum of many."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.problems import Problem, Simplex


def _est(d, rng):
    counts = rng.multinomial(3000, rng.dirichlet(np.ones(d)))
    return Estimate.from_counts(counts, n=3000, epsilon=1.0, p=0.5, q=0.5 / (d - 1))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("seed", range(12))
def test_nan_or_inf_in_the_users_data_is_refused_at_construction(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 30))
    est = _est(d, rng)
    bad = float(rng.choice([np.nan, np.inf, -np.inf]))
    c = rng.uniform(0.0, 1.0, d)
    c[rng.integers(d)] = bad
    where = ["objective", "inequality", "equality"][seed % 3]
    if where == "objective":
        kind = seed % 2
        kw = {"objective": (lambda f, e: cp.sum_squares(f - c)) if kind else (lambda f, e: c @ f + cp.sum_squares(f))}
        name = "objective"
    elif where == "inequality":
        kw = {"constraints": [Simplex(), lambda f, e: c @ f <= 0.5]}
        name = "constraint 'user'"
    else:
        kw = {"constraints": [Simplex(), lambda f, e: c @ f == 0.5]}
        name = "constraint 'user'"
    with pytest.raises(ValueError, match=f"^{name}: its data hold") as info:
        Problem(est, **kw)
    assert "\n" not in str(info.value)


def test_an_inf_bound_is_refused_as_box_refuses_it():
    rng = np.random.default_rng(1)
    est = _est(6, rng)
    up = np.full(6, np.inf)
    with pytest.raises(ValueError, match="^constraint 'user': its data hold NaN or inf"):
        Problem(est, "cls", [Simplex(), lambda f, e: f <= up])


@pytest.mark.parametrize("where", ["objective", "constraint"])
def test_a_second_variable_is_refused_at_construction_naming_it(where):
    rng = np.random.default_rng(2)
    d = 8
    est = _est(d, rng)
    y = cp.Variable(d, name="slack_y")
    kw = ({"objective": lambda f, e: cp.sum_squares(f - e.f_tilde) + cp.sum_squares(y)} if where == "objective"
          else {"constraints": [Simplex(), lambda f, e: f <= y]})
    with pytest.raises(ValueError, match="slack_y"):
        Problem(est, **kw)


@pytest.mark.parametrize("seed", range(6))
def test_a_constant_objective_is_optimal_with_its_value_and_one_of_many(seed):
    rng = np.random.default_rng(10 + seed)
    d = int(rng.integers(3, 40))
    est = _est(d, rng)
    k = float(rng.uniform(-5, 5))
    obj = [lambda f, e: cp.Constant(0.0) * cp.sum(f) + k, lambda f, e: 0 * cp.sum_squares(f) + k][seed % 2]
    cons = [Simplex()] + ([lambda f, e: f[0] <= 0.3] if seed % 3 == 0 else [])
    sol = _quiet(Problem(est, obj, cons).solve, progress=False)
    assert sol.status == "optimal", sol.message
    assert abs(sol.optimal_value - k) <= 1e-9 * max(1, abs(k))
    assert sol.not_unique.startswith("the optimum need not be unique")
    assert np.all(sol.f >= -1e-9) and abs(sol.f.sum() - 1) <= 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_an_lp_is_optimal_with_its_value_and_one_of_many(seed):
    rng = np.random.default_rng(20 + seed)
    d = int(rng.integers(3, 40))
    est = _est(d, rng)
    c = rng.uniform(-1, 1, d)
    if seed % 2:
        c[rng.integers(d)] = c.min()  # ties: the optimum is a face, not a vertex
    sol = _quiet(Problem(est, lambda f, e: c @ f, [Simplex()]).solve, progress=False)
    assert sol.status == "optimal", sol.message
    assert abs(sol.optimal_value - c.min()) <= 1e-7  # min of c·f on the simplex: the smallest c_v
    assert sol.not_unique.startswith("the optimum need not be unique")


@pytest.mark.parametrize("seed", range(8))
def test_an_infinite_parameter_value_is_refused_at_construction_and_at_solve(seed):
    # cvxpy refuses NaN in a Parameter itself, but takes ±inf: ldpopt refuses it, naming the Parameter,
    # when Problem(...) is built with it and when it is set afterwards (read at each solve)
    rng = np.random.default_rng(40 + seed)
    d = int(rng.integers(3, 25))
    est = _est(d, rng)
    P = cp.Parameter(d, name=f"prior_{seed}")
    P.value = rng.dirichlet(np.ones(d))
    in_objective = seed % 2 == 0
    kw = ({"objective": lambda f, e: cp.sum_squares(f - P)} if in_objective
          else {"constraints": [Simplex(), lambda f, e: f <= P + 0.5]})
    bad = P.value.copy()
    bad[rng.integers(d)] = float(rng.choice([np.inf, -np.inf]))
    prob = _quiet(Problem, est, **kw)
    assert _quiet(prob.solve, progress=False).status == "optimal"  # finite values: solved
    P.value = bad
    with pytest.raises(ValueError, match=f"^solve\\(\\): the cvxpy Parameter 'prior_{seed}' holds NaN or inf") as info:
        _quiet(prob.solve, progress=False)
    assert "\n" not in str(info.value)
    where = "objective" if in_objective else "constraint 'user'"
    with pytest.raises(ValueError, match=f"^{where}: the cvxpy Parameter 'prior_{seed}' holds NaN or inf"):
        _quiet(Problem, est, **kw)
