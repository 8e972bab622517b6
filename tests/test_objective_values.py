"""A cvxpy expression's compiled value (``objectives.base.compiled_value``) against cvxpy's own
``.value``: the same bits at every point, on every sub-expression of families drawn from the grammar
(objectives and constraints, every data shape), with Parameters read at the call."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from conftest import examples

from ldpopt.problems.objectives.base import NotCompiled, compiled_value


def _cvxpy_value(expr, x, v):
    x.value = v
    return expr.value


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


@pytest.mark.parametrize("seed", range(0, examples(120), 30))
def test_the_compiled_value_is_cvxpys_value_bit_for_bit_on_the_grammar(seed):
    """Every sub-expression holding the variable, of 30 grammar families (objective and constraint
    sides), at points of the simplex, scaled as ldpopt's solver variable, and outside it (negative
    entries: NaN or inf where cvxpy gives them)."""
    from problem_strategies import draw_family

    rng = np.random.default_rng(seed)
    checked = 0
    for s in range(seed, seed + 30):
        d = int(rng.choice([7, 12, 30]))
        fam = draw_family(s, d)
        x = cp.Variable(d)
        scale = float(rng.choice([1.0, 0.01, 300.0]))
        f = scale * x
        roots = [fam.objective(f, np.asarray(fam.est.f_tilde, float))]
        roots += [c.expr if hasattr(c, "expr") else c.args[0] for c in fam.constraints(f)]
        points = [rng.dirichlet(np.full(d, 0.5)) / scale, rng.standard_normal(d) / scale, np.zeros(d)]
        stack = list(roots)
        while stack:
            node = stack.pop()
            stack.extend(node.args)
            if not node.variables():
                continue
            value = compiled_value(node, x)
            for v in points:
                with np.errstate(all="ignore"):
                    want = _cvxpy_value(node, x, v)
                    got = value(v)
                assert _same(got, want), (fam.text, node)
                checked += 1
    assert checked >= 300, checked


def test_a_parameter_is_read_at_the_call_not_at_compilation():
    x = cp.Variable(4)
    w = cp.Parameter(nonneg=True, value=1.0)
    c = cp.Parameter(4, value=np.arange(4.0))
    expr = w * cp.sum_squares(x - c) + cp.norm_inf(cp.cumsum(x))
    value = compiled_value(expr, x)
    v = np.array([0.5, -1.0, 2.0, 0.25])
    for wv, cv in ((1.0, np.arange(4.0)), (3.5, np.ones(4)), (0.0, -np.arange(4.0))):
        w.value, c.value = wv, cv
        assert _same(value(v), _cvxpy_value(expr, x, v))


def test_what_it_cannot_read_is_refused_before_any_point():
    x, y = cp.Variable(3), cp.Variable(3)
    with pytest.raises(NotCompiled, match="another variable"):
        compiled_value(cp.sum_squares(x) + cp.sum(y), x)
    p = cp.Parameter(3)
    with pytest.raises(NotCompiled, match="has no value"):
        compiled_value(cp.sum(cp.multiply(p, x)), x)


def test_a_matrix_variable_is_read_in_its_shape():
    X = cp.Variable((3, 2))
    expr = cp.sum(cp.abs(X @ np.array([1.0, -2.0]))) + cp.lambda_max(X[:2, :2] + X[:2, :2].T)
    value = compiled_value(expr, X)
    v = np.random.default_rng(3).standard_normal((3, 2))
    assert _same(value(v), _cvxpy_value(expr, X, v))
    assert _same(value(v.ravel(order="F")), _cvxpy_value(expr, X, v))
