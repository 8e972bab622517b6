"""The closed forms on an array namespace (ldpopt.kernels.xp) equal ldpopt.methods within 1e-12 on
the numpy namespace (the CuPy namespace is the same code; its test is skipped without a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import methods, oracles
from ldpopt.kernels import xp


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
