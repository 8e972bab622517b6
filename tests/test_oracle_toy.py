"""A new pure oracle is one file: the extending guide's example oracle (docs/), written to a
temporary module outside the package, registered with ``ldpopt.oracles.register``, reaches every
feature the built-ins reach.

The toy is "half-ε randomized response" (a k-RR variant that spends only ε/2: GRR's mechanism at
ε/2, so it is ε-LDP with room to spare): report the true value w.p. p = e^{ε/2}/(e^{ε/2} + d − 1),
else a uniform other value. It declares one-value reports (``report_form = "value"``: GRR's
maximal gain attack and detectors apply) and the multinomial likelihood, and writes its own shard
column. Every reference below is computed independently of the code under test (the toy's own
formulas, numpy histograms, the conformance suite's enumerations).
"""

from __future__ import annotations

import importlib.util
import math
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ldpopt import methods, oracles, postprocess

_DOCS = Path(__file__).resolve().parents[1] / "docs"
_MARK = '"""Half-ε randomized response'


def _doc_example() -> str:
    """The oracle example of the extending guide: the ```python block that starts with its docstring."""
    for name in ("extending.md",):
        path = _DOCS / name
        if path.exists() and _MARK in path.read_text():
            text = path.read_text()
            start = text.index(_MARK)
            return text[start:text.index("```", start)]
    raise AssertionError("the oracle example of the extending guide is missing")


TOY = _doc_example()


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy module, loaded from a temporary file outside the package (registering HalfRR); the
    registration is removed afterwards."""
    path = tmp_path_factory.mktemp("user") / "half_rr.py"
    path.write_text(TOY)
    spec = importlib.util.spec_from_file_location("user_half_rr", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["user_half_rr"] = module
    spec.loader.exec_module(module)
    yield module.HalfRR
    oracles._REGISTRY.pop("half-rr", None)
    sys.modules.pop("user_half_rr", None)


def _p(eps, d):
    return math.exp(eps / 2) / (math.exp(eps / 2) + d - 1)


def test_registered_and_built_by_get(toy):
    o = oracles.get("HALF-RR", 1.0, 8)
    assert isinstance(o, toy) and "half-rr" in oracles.available()
    assert o.p == pytest.approx(_p(1.0, 8), rel=1e-15) and o.label == "HALF-RR"
    with pytest.raises(ValueError, match="already registered"):
        oracles.register(type("Other", (toy,), {"name": "grr"}))
    with pytest.raises(ValueError, match="lower-case"):
        oracles.register(type("Upper", (toy,), {"name": "Half-RR"}))
    with pytest.raises(TypeError, match="FrequencyOracle subclass"):
        oracles.register(int)
    with pytest.raises(ValueError, match="oracle must be one of"):
        oracles.get("no-such-oracle", 1.0, 4)


def test_conformance_suite_passes(toy):
    from ldpopt.conformance.oracles import check_oracle

    report = check_oracle(toy(1.0, 5))
    assert {"epsilon", "joint_law", "variance", "shards", "interface"} <= set(report.passed)
    assert "kernel" in report.skipped or "kernel" in report.passed


def test_simulation_fast_and_real_paths_and_the_estimate(toy):
    o = toy(2.0, 6)
    tc = np.array([400, 300, 200, 100, 0, 0])
    for exact in (False, True):
        est = o.simulate(tc, np.random.default_rng(1), exact=exact)
        assert est.oracle == "half-rr" and est.n == 1000 and est.counts.sum() == 1000  # one value per report
        p, q = _p(2.0, 6), (1 - _p(2.0, 6)) / 5
        np.testing.assert_allclose(est.f_tilde, (est.counts / 1000 - q) / (p - q), rtol=1e-12)
        assert np.abs(est.f_tilde - tc / 1000).max() < 6 * math.sqrt(o.variance(tc / 1000, 1000).max())


def test_every_post_processing_method_takes_its_estimate(toy):
    o = toy(2.0, 6)
    est = o.simulate(np.array([400, 300, 200, 100, 0, 0]), np.random.default_rng(2))
    names = list(methods.available().index)
    assert len(names) > 5
    for name in names:
        f = np.asarray(postprocess(est.as_ordered() if methods.get(name).needs_order else est, name), dtype=np.float64)
        assert f.shape == (6,) and np.all(np.isfinite(f)), name
    em_f = np.asarray(postprocess(est, "em"))  # EM chose the multinomial likelihood the toy declares
    assert np.all(em_f >= 0) and em_f.sum() == pytest.approx(1.0, abs=1e-9)
    from ldpopt.methods.em import likelihood_for

    assert likelihood_for(est) == "multinomial"


def test_aggregate_numpy_path_writes_and_reads_its_own_shards(toy, tmp_path):
    import pyarrow.parquet as pq

    from ldpopt.aggregate.dask import aggregate_shards
    from ldpopt.aggregate.shards import read_oracle, write_shard

    o = toy(1.0, 7)
    gen = np.random.default_rng(3)
    reports = [o.perturb(gen.integers(0, 7, size=500), gen) for _ in range(3)]
    for i, r in enumerate(reports):
        write_shard(tmp_path / f"s{i}.parquet", o, r, row_group_rows=128)
    assert pq.read_schema(tmp_path / "s0.parquet").names == ["y"]
    assert isinstance(read_oracle(tmp_path / "s0.parquet"), toy)
    total = aggregate_shards(tmp_path, scheduler="synchronous", device="numpy", progress=False)
    want = np.bincount(np.concatenate(reports), minlength=7)
    assert total.n == 1500 and np.array_equal(total.counts, want)


def test_maximal_gain_attack_of_its_report_form(toy):
    from ldpopt import robust

    o = toy(1.0, 10)
    t = [2, 5]
    reports = robust.craft_reports(o, "mga", t, 300, np.random.default_rng(4))
    assert set(np.unique(reports)) <= set(t)  # every fake report is a target
    counts = robust.fake_counts(o, "mga", t, 300, np.random.default_rng(5))
    assert counts.sum() == 300 and counts[t].sum() == 300
    assert robust.attacks.mean_target_support(o, "mga", t) == 1.0
    p, q = o.p, o.q
    assert robust.expected_gain(o, "mga", t, 0.1, 0.0) == pytest.approx(0.1 * (1 - 2 * q) / (p - q), rel=1e-12)
    assert robust.genuine_size_pmf(o)[1] == 1.0 and robust.support_sizes(o, reports).tolist() == [1] * 300


def test_a_quick_experiment_runs_with_it(toy, tmp_path):
    from ldpopt.experiments import run

    cfg = tmp_path / "toy_full_domain.toml"
    cfg.write_text(textwrap.dedent('''
        name = "toy_full_domain"
        kind = "full-domain"
        datasets = [{name = "zipf", n = 5000, d = 32, rng = 1}]
        oracles = ["half-rr", "grr"]
        epsilons = [2.0]
        methods = ["base", "norm-sub"]
        repetitions = 2
        seed = 7
    '''))
    table = run(cfg, out=tmp_path / "out", progress=False)
    assert set(table.oracle) == {"half-rr", "grr"} and set(table.method) == {"base", "norm-sub"}
    mse = table[table.metric == "mse"].groupby(["oracle", "method"])["value"].mean()
    # Base is unbiased: its MSE is the mean of Eq. 2 over the domain, at least Eq. 7's q(1 − q)/(n(p − q)²)
    p = _p(2.0, 32)
    q = (1 - p) / 31
    eq7 = q * (1 - q) / (5000 * (p - q) ** 2)
    assert 0.5 * eq7 <= mse["half-rr", "base"] <= 2 * eq7
    # half the budget: the toy's error is well above GRR's at the same ε, and Norm-Sub lowers it
    assert mse["half-rr", "base"] > 2 * mse["grr", "base"]
    assert mse["half-rr", "norm-sub"] < mse["half-rr", "base"]


def test_without_a_report_form_the_detectors_are_generic_and_the_attack_is_refused(toy):
    from ldpopt import robust

    Formless = type("Formless", (toy,), {"name": "formless-rr", "report_form": None})
    o = Formless(1.0, 6)
    reports = o.perturb(np.arange(60) % 6, np.random.default_rng(6))
    assert robust.support_sizes(o, reports).tolist() == [1] * 60  # from support_matrix
    np.testing.assert_array_equal(robust.suspect_scores(o, reports, [1, 4]), np.isin(reports, [1, 4]).astype(int))
    with pytest.raises(ValueError, match="no maximal gain attack for oracle 'formless-rr'"):
        robust.fake_counts(o, "mga", [1], 10, np.random.default_rng(7))
    with pytest.raises(ValueError, match="adaptive pattern attack .* not for oracle 'formless-rr'"):
        robust.craft_reports(o, "apa", [1], 10, np.random.default_rng(7))
