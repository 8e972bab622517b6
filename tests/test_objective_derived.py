"""An objective is its cvxpy form plus its per-value form: ``value`` and ``gradient`` default to
Σ_v h_v(f_v) + offset and h_v'(f_v). Over every registered objective with a per-value form (asked of
the registry), on generated estimates and points: the defaults are those sums, they equal J written
directly from the papers' formulas (the numpy copies the built-ins carried) to ~1e-15 relative, and
an objective without a per-value form still refuses or writes its own."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import xlogy

from conftest import examples
import ldpopt
from ldpopt.problems import Objective
from ldpopt.problems.registry import available_objectives, objective_factory


def _pi(f, e):
    return e.q + (e.p - e.q) * f


def _wmle(f, e):
    p, q = e.p, e.q
    r = e.counts / e.n - q - (p - q) * f
    s = q * (1 - q) + (p - q) * (1 - p - q) * f
    return float(np.sum(r**2 / s)), (-2.0 * (p - q) * r * s - (p - q) * (1 - p - q) * r**2) / s**2


# J and ∇J as the papers write them (Wang et al. §3.4-3.5 Eq. 13; the exact likelihoods; a posterior
# projection), independent of the per-value classes; keyed by the registered name
REFERENCE = {
    "cls": lambda f, e, o: (float(np.sum((f - e.f_tilde) ** 2)), 2.0 * (f - e.f_tilde)),
    "weighted-mle": lambda f, e, o: _wmle(f, e),
    "weighted-mle-naive": lambda f, e, o: _wmle(f, e),
    "multinomial": lambda f, e, o: (float(-np.sum(xlogy(e.counts, _pi(f, e))) / e.n),
                                    -(e.p - e.q) * e.counts / (e.n * _pi(f, e))),
    "binomial": lambda f, e, o: (float(-(np.sum(xlogy(e.counts, _pi(f, e)))
                                         + np.sum(xlogy(e.n - e.counts, 1.0 - _pi(f, e)))) / e.n),
                                 -(e.p - e.q) * (e.counts / _pi(f, e) - (e.n - e.counts) / (1.0 - _pi(f, e))) / e.n),
    "posterior": lambda f, e, o: (float(np.sum((f - o.mean) ** 2 / o.variance)), 2.0 * (f - o.mean) / o.variance),
}


def _instances(est):
    for name in available_objectives():
        item = objective_factory(name)
        obj = item.example(est) if isinstance(item, type) else item
        try:
            obj.check(est)
        except ValueError:
            continue
        yield name, obj


def test_every_reference_names_a_registered_objective():
    assert set(REFERENCE) <= set(available_objectives())


@settings(max_examples=examples(20), deadline=None)
@given(st.sampled_from(["grr", "oue", "olh"]), st.integers(3, 300), st.floats(0.3, 4.0), st.integers(0, 2**16))
def test_value_and_gradient_are_the_per_value_sums(oracle, d, eps, seed):
    rng = np.random.default_rng(seed)
    t = rng.dirichlet(np.full(d, 0.3))
    est = ldpopt.oracles.get(oracle, eps, d).simulate((t * 20_000).astype(int) + rng.integers(0, 3, d), seed)
    points = [rng.dirichlet(np.ones(d)), np.full(d, 1.0 / d), np.maximum(est.f_tilde, 0.0) + 1e-3]
    checked = 0
    for name, obj in _instances(est):
        sep = obj.per_value(est)
        if sep is None:
            continue
        for f in points:
            value, grad = obj.value(f, est), obj.gradient(f, est)
            assert value == float(np.sum(sep.value(f))) + sep.offset
            np.testing.assert_array_equal(grad, sep.d1(f))
            if name in REFERENCE:
                want, want_grad = REFERENCE[name](f, est, obj)
                assert value == pytest.approx(want, rel=4e-15, abs=1e-300), name
                scale = float(np.max(np.abs(want_grad)))
                assert float(np.max(np.abs(grad - want_grad))) <= 4e-15 * scale, name
        checked += 1
    assert checked >= 1


def test_without_a_per_value_form_value_and_gradient_refuse():
    class Linear(Objective):
        name = "linear-toy"

        def build(self, f, x, scale, estimate):
            raise NotImplementedError

    est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    with pytest.raises(NotImplementedError, match="has no numpy value"):
        Linear().value(np.full(4, 0.25), est)
    with pytest.raises(NotImplementedError, match="has no gradient"):
        Linear().gradient(np.full(4, 0.25), est)
    # l1 has no per-value form and writes its own value (no gradient: not smooth)
    l1 = objective_factory("l1")()
    assert l1.value(np.full(4, 0.25), est) == pytest.approx(float(np.sum(np.abs(0.25 - est.f_tilde))), rel=1e-15)
    with pytest.raises(NotImplementedError):
        l1.gradient(np.full(4, 0.25), est)
