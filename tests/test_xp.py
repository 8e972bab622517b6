"""The closed forms on an array namespace (ldpopt.xp.forms) equal ldpopt.methods within 1e-12 on
the numpy namespace (the CuPy namespace is the same code; its test is skipped without a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import methods, oracles
from ldpopt.xp import forms as xp


def _estimates():
    out = []
    for seed, (name, eps, d, n) in enumerate([("grr", 1.0, 50, 10**4), ("oue", 0.5, 1000, 10**5),
                                              ("olh", 2.0, 20000, 10**6), ("hr", 4.0, 3, 100)]):
        orc = oracles.get(name, eps, d)
        gen = np.random.default_rng(seed)
        tc = gen.multinomial(n, gen.dirichlet(np.full(d, 0.3)))
        out.append(orc.simulate(tc, gen))
    return out


@pytest.mark.parametrize("est", _estimates(), ids=lambda e: f"{e.meta.get('oracle')}-{e.d}")
def test_closed_forms_on_the_numpy_namespace_equal_the_methods(est):
    f = est.f_tilde
    pairs = [(xp.norm(f), methods.get("norm").func(est)), (xp.norm_mul(f), methods.get("norm-mul").func(est)),
             (xp.base_pos(f), methods.get("base-pos").func(est)), (xp.norm_sub(f), methods.get("norm-sub").func(est))]
    pairs.append((xp.mle_apx(est.counts.astype(float), est.n, est.p, est.q), methods.get("mle-apx").func(est)))
    for alpha in (2.0, 0.05):
        t = xp.cut_threshold(est.d, est.n, est.p, est.q, alpha)
        pairs.append((xp.base_cut(f, t), methods.get("base-cut").func(est, alpha=alpha)))
    for got, want in pairs:
        assert got.shape == want.shape and np.max(np.abs(got - want)) <= 1e-12
    assert abs(xp.norm_sub(f).sum() - 1.0) < 1e-9 and xp.norm_sub(f).min() >= 0


def test_norm_sub_edge_cases_equal_project_simplex():
    from ldpopt.methods.normalize import project_simplex

    for f, total in [(np.array([0.3, 0.3, -0.1]), 1.0), (np.array([5.0, 5.0, 1.0]), 1e-300),
                     (np.array([0.2, 0.1]), 0.0), (np.full(7, -1.0), 2.0)]:
        assert np.max(np.abs(xp.norm_sub(f, total) - project_simplex(f, total))) <= 1e-12, (f, total)


def test_namespace_names_the_device_and_the_extra():
    assert xp.namespace("numpy") is np and xp.namespace("cpu") is np
    with pytest.raises(ValueError, match="device must be"):
        xp.namespace("gpu")
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"ldpopt\[gpu\]"):
            xp.namespace("cuda")


@pytest.mark.gpu
def test_closed_forms_on_cupy_equal_numpy():
    cupy = pytest.importorskip("cupy", reason="needs CuPy and a CUDA GPU (the 'gpu' extra)")
    est = _estimates()[2]
    f = est.f_tilde
    for fn in (xp.norm, xp.norm_mul, xp.base_pos, xp.norm_sub):
        assert np.max(np.abs(cupy.asnumpy(fn(cupy.asarray(f))) - fn(f))) <= 1e-12


@pytest.mark.gpu
def test_cuts_and_mles_on_cupy_equal_numpy():
    cupy = pytest.importorskip("cupy", reason="needs CuPy and a CUDA GPU (the 'gpu' extra)")
    from ldpopt.xp import cut as xp_cut
    from ldpopt.xp import mle as xp_mle

    for est in _grr_and_binomial():
        f, c = est.f_tilde, est.counts
        t = xp.cut_threshold(est.d, est.n, est.p, est.q)
        pairs = [(xp_cut.norm_cut(cupy.asarray(f), est.p, est.q), xp_cut.norm_cut(f, est.p, est.q)),
                 (xp_cut.norm_hyb(cupy.asarray(f), est.p, est.q, threshold=t), xp_cut.norm_hyb(f, est.p, est.q, threshold=t))]
        if est.oracle == "grr":
            pairs.append((xp_mle.grr_mle(cupy.asarray(c), est.p, est.q), xp_mle.grr_mle(c, est.p, est.q)))
        else:
            pairs.append((xp_mle.binomial_mle(cupy.asarray(c), est.n, est.p, est.q),
                          xp_mle.binomial_mle(c, est.n, est.p, est.q)))
        for got, want in pairs:
            assert np.max(np.abs(cupy.asnumpy(got) - want)) <= 1e-12


# -- Norm-Cut, Norm-Hyb, the exact GRR MLE and the binomial EM ---------------------------------------
def _grr_and_binomial():
    """GRR estimates (the multinomial MLE) and unary/hash ones (the binomial), a near-uniform and a
    peaked case each, d from 3 to 20,000."""
    out = []
    for seed, (name, eps, d, n, conc) in enumerate([("grr", 1.0, 50, 10**4, 0.3), ("grr", 4.0, 3, 100, 5.0),
                                                    ("grr", 0.5, 20000, 10**6, 0.1), ("oue", 0.5, 1000, 10**5, 0.3),
                                                    ("olh", 2.0, 20000, 10**6, 0.1), ("sue", 4.0, 5, 50, 5.0)]):
        gen = np.random.default_rng(100 + seed)
        out.append(oracles.get(name, eps, d).simulate(gen.multinomial(n, gen.dirichlet(np.full(d, conc))), gen))
    return out


@pytest.mark.parametrize("est", _estimates() + _grr_and_binomial(), ids=lambda e: f"{e.meta.get('oracle')}-{e.d}")
def test_norm_cut_and_norm_hyb_on_the_numpy_namespace_equal_the_methods(est):
    from ldpopt.xp import cut as xp_cut

    f = est.f_tilde
    pairs = [(xp_cut.norm_cut(f, est.p, est.q), methods.get("norm-cut").func(est))]
    for alpha in (2.0, 0.05, est.d / 2):
        t = xp.cut_threshold(est.d, est.n, est.p, est.q, alpha)
        pairs.append((xp_cut.norm_hyb(f, est.p, est.q, threshold=t), methods.get("norm-hyb").func(est, alpha=alpha)))
    for k in sorted({1, min(3, est.d), est.d}):
        pairs.append((xp_cut.norm_hyb(f, est.p, est.q, k=k), methods.get("norm-hyb").func(est, k=k)))
    for got, want in pairs:
        assert got.shape == want.shape and np.max(np.abs(got - want)) <= 1e-12


def test_norm_cut_and_hyb_cases_at_the_limits():
    """Hand-made f̃ where the decisions sit at their limits: a positive part summing to exactly 1 (GRR
    with every estimate positive: kept whole), max f̃ > 1 (everything cut), a kept sum above 1 with a
    tie at the cut (kept or cut together), and every value kept with a leftover."""
    from ldpopt import Estimate
    from ldpopt.xp import cut as xp_cut

    p, q = 0.5, 0.25  # any valid pair: the rounding bound only scales with them
    cases = [np.array([0.5, 0.25, 0.25]), np.array([1.5, -0.2, -0.3]), np.array([0.6, 0.3, 0.3, -0.2]),
             np.array([0.45, 0.45, 0.3, -0.2]), np.array([0.4, 0.3, 0.2])]
    for f in cases:
        est = Estimate.from_frequencies(f, n=1000, epsilon=1.0, p=p, q=q)
        assert np.array_equal(xp_cut.norm_cut(f, p, q), methods.get("norm-cut").func(est)), f
        for k in range(1, f.shape[0] + 1):
            assert np.max(np.abs(xp_cut.norm_hyb(f, p, q, k=k) - methods.get("norm-hyb").func(est, k=k))) <= 1e-12


def test_decisive_sum_falls_back_to_fsum_at_a_near_tie():
    """Summed naively these 0.1s give 0.9999999999999999; math.fsum gives 1.0: against the limit 1 the
    device sum is not decisive, so the helper returns fsum's value; far from every limit it returns
    the namespace's own sum."""
    import math

    from ldpopt.xp.cut import decisive_sum

    x = np.full(10, 0.1)
    assert decisive_sum(x, (1.0,)) == math.fsum(x) == 1.0
    assert decisive_sum(x, (5.0,)) == float(np.sum(x))


@pytest.mark.parametrize("est", _grr_and_binomial(), ids=lambda e: f"{e.meta.get('oracle')}-{e.d}")
def test_exact_mles_on_the_numpy_namespace_equal_em(est):
    from ldpopt.xp import mle as xp_mle

    want = methods.get("em").func(est)
    if est.oracle == "grr":
        got = xp_mle.grr_mle(est.counts, est.p, est.q)
    else:
        got = xp_mle.binomial_mle(est.counts, est.n, est.p, est.q)
    assert got.shape == want.shape and np.max(np.abs(got - want)) <= 1e-12
    assert got.min() >= 0 and abs(got.sum() - 1.0) < 1e-12


def test_exact_mle_errors_name_the_problem():
    from ldpopt.xp import cut as xp_cut
    from ldpopt.xp import mle as xp_mle

    with pytest.raises(ValueError, match="counts must not all be zero"):
        xp_mle.grr_mle(np.zeros(4), 0.5, 0.1)
    with pytest.raises(ValueError, match="threshold or k"):
        xp_cut.norm_hyb(np.zeros(3), 0.5, 0.25)
    with pytest.raises(ValueError, match="k must satisfy"):
        xp_cut.norm_hyb(np.zeros(3), 0.5, 0.25, k=4)
