"""ldpopt.plan with designed mechanisms: the designed rows' exact expected error against the channel's
covariance computed here independently (and against the real client's collections), a query matrix's
exact rows against an independent covariance, the candidates planned, and the refusals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ldpopt
from ldpopt import design
from ldpopt.design import workloads

FAST_DESIGN = {"iterations": 8, "init": "random"}


def _independent_cov(Q: np.ndarray, f: np.ndarray, n: int) -> np.ndarray:
    """Cov of the unbiased least-squares reconstruction from the channel alone: V by a weighted
    pseudo-inverse (not ldpopt's Cholesky route), each user's output multinomial given her value."""
    P = Q / Q.sum(axis=0)[None, :]
    w = 1.0 / np.sqrt(P.sum(axis=1))
    V = np.linalg.pinv(P * w[:, None]) * w[None, :]           # (PᵀD⁻¹P)⁻¹PᵀD⁻¹
    assert np.allclose(V @ P, np.eye(P.shape[1]), atol=1e-8)
    pi = P @ f
    return (V @ np.diag(pi) @ V.T - np.diag(f)) / n          # Σ_v f_v·(V diag(P_v) Vᵀ − e_v e_vᵀ)/n


def _mean_query_var(C: np.ndarray, U: np.ndarray) -> float:
    return float(np.mean([u @ C @ u for u in U]))


def _cases(count: int):
    """Seeded random settings over the input space: d, ε, n, a random prior with ties and zeros."""
    gen = np.random.default_rng(72)
    for _ in range(count):
        d = int(gen.integers(4, 9))
        f = gen.integers(0, 6, size=d).astype(float)
        f[gen.integers(d)] += 1.0
        yield d, float(gen.choice([0.5, 1.0, 2.0, 4.0])), int(gen.integers(10**3, 10**6)), f / f.sum(), gen


@pytest.mark.parametrize("case", range(5))
def test_designed_rows_equal_the_channels_covariance_computed_independently(case):
    d, eps, n, f, gen = list(_cases(case + 1))[case]
    k, s = int(gen.integers(1, d + 1)), int(gen.integers(1, d + 1))
    U = (gen.random((int(gen.integers(1, 6)), d)) < 0.5).astype(float)
    U[0, 0] = 1.0
    p = ldpopt.plan(d, n, eps, f, queries=["full", f"topk:{k}", f"subsets:{s}", U], oracles=["grr"],
                    methods=["base", "norm"], design=FAST_DESIGN)
    P = np.eye(d) - 1.0 / d
    top = np.argsort(-f, kind="stable")[:k]
    subsets = np.array([[float(v in c) for v in range(d)] for c in itertools.combinations(range(d), s)])
    rows = {"full": np.eye(d), f"topk:{k}": np.eye(d)[top], f"subsets:{s}:100": subsets, "given subsets": U}
    for qs, Uq in rows.items():
        C = _independent_cov(np.asarray(p.designs[qs].strategy), f, n)
        t = p.table[(p.table["query"] == qs) & (p.table["oracle"] == "designed")].set_index("method")
        assert set(t["how"]) == {"exact (its channel)"} and (t["se"] == 0).all()
        np.testing.assert_allclose(t.loc["base", "expected_mse"], _mean_query_var(C, Uq), rtol=1e-7, atol=1e-15)
        np.testing.assert_allclose(t.loc["norm", "expected_mse"], _mean_query_var(P @ C @ P, Uq), rtol=1e-7,
                                   atol=1e-15)
        assert (t["design_s"] > 0).all()
    assert set(p.designs) == set(rows)
    # the built-ins' rows carry no design time
    assert p.table.loc[p.table["oracle"] == "grr", "design_s"].isna().all()


def test_designed_range_row_is_what_the_real_client_collects():
    """The plan's exact range MSE of a designed mechanism against 600 collections through its real
    client (perturb, count, reconstruct), within 4 SE."""
    d, eps, n = 6, 1.0, 400
    f = np.array([0.3, 0.25, 0.2, 0.1, 0.1, 0.05])
    W = workloads.all_ranges(d)
    p = ldpopt.plan(d, n, eps, f, queries=[W], oracles=["oue"], methods=["base"], design=FAST_DESIGN)
    D = p.designs["given subsets"]
    o = D.oracle()
    values = np.repeat(np.arange(d), (f * n).astype(int))
    gen = np.random.default_rng(5)
    P = np.asarray(D.strategy) / np.asarray(D.strategy).sum(axis=0)
    w = 1.0 / np.sqrt(P.sum(axis=1))
    V = np.linalg.pinv(P * w[:, None]) * w[None, :]
    loss = np.array([np.mean((W @ (V @ o.output_counts(o.perturb(values, gen)) / n) - W @ f) ** 2)
                     for _ in range(600)])  # 600 collections, each vectorised over its users
    row = p.table[p.table["oracle"] == "designed"].iloc[0]
    assert abs(row["expected_mse"] - loss.mean()) < 4 * loss.std(ddof=1) / np.sqrt(loss.size)


def test_a_query_matrix_is_exact_for_a_builtin_against_its_categorical_covariance():
    gen = np.random.default_rng(3)
    for _ in range(4):
        d, eps, n = int(gen.integers(3, 12)), float(gen.uniform(0.3, 4)), int(gen.integers(100, 10**6))
        f = gen.dirichlet(np.ones(d))
        U = (gen.random((int(gen.integers(1, 8)), d)) < 0.4).astype(float)
        U[:, int(gen.integers(d))] = 1.0
        grr = ldpopt.oracles.get("grr", eps, d)
        P = grr.q + (grr.p - grr.q) * np.eye(d)                 # GRR's channel, P[y, v]
        # each user's value fixed: her output one categorical draw from P[:, v]
        C = (np.diag(P @ f) - P @ np.diag(f) @ P.T) / (n * (grr.p - grr.q) ** 2)
        p = ldpopt.plan(d, n, eps, f, queries=U, oracles=["grr"], methods=["base"])
        np.testing.assert_allclose(p.table["expected_mse"].iloc[0], _mean_query_var(C, U), rtol=1e-9, atol=1e-15)
        assert p.table["query"].iloc[0] == "given subsets" and p.table["metric"].iloc[0] == "MSE"


def test_given_designs_are_candidates_on_every_query_and_targets_scale_as_one_over_n():
    d, eps = 8, 1.0
    D = design.design("ranges", eps, d=d, **FAST_DESIGN)
    p = ldpopt.plan(d, 10**4, eps, "zipf:1.5", queries=["full", workloads.all_ranges(d)], oracles=["oue"],
                    methods=["base", "norm-sub"], design=[D, D.oracle()], target=1e-5, n_repeats=4)
    labels = set(p.table["oracle"])
    assert {"designed:ranges", "designed:2"} <= labels
    for qs in ("full", "given subsets"):
        t = p.table[(p.table["query"] == qs) & (p.table["method"] == "base")].set_index("oracle")
        assert t.loc["designed:ranges", "expected_mse"] == pytest.approx(t.loc["designed:2", "expected_mse"])
        assert t.loc["designed:ranges", "n_target"] == np.ceil(10**4 * t.loc["designed:ranges", "expected_mse"] / 1e-5)
    assert p.table.loc[p.table["oracle"] == "designed:ranges", "design_s"].eq(D.seconds).all()
    assert p.table.loc[p.table["oracle"] == "designed:2", "design_s"].isna().all()
    # designed for ranges, it beats OUE on ranges at the same ε
    t = p.table[(p.table["query"] == "given subsets") & (p.table["method"] == "base")].set_index("oracle")
    assert t.loc["designed:ranges", "expected_mse"] < t.loc["oue", "expected_mse"]


def test_heavy_hitters_get_no_design_and_simulate_agrees_with_plan():
    p = ldpopt.plan(6, 5000, 2.0, "zipf:1.5", queries=["hh:0.2", "topk:2"], oracles=["grr"],
                    methods=["base", "norm-sub"], design=FAST_DESIGN, n_repeats=4)
    assert any(s[0] == "designed" and "hh:0.2" in s[2] for s in p.skipped)
    assert set(p.table.loc[p.table["oracle"] == "designed", "query"]) == {"topk:2"}
    sim = ldpopt.planning.simulate(6, 5000, 2.0, "zipf:1.5", queries=["hh:0.2", "topk:2"], oracles=["grr"],
                                   methods=["base", "norm-sub"], design=FAST_DESIGN, n_repeats=4)
    a = p.table[(p.table["oracle"] == "designed") & (p.table["method"] == "norm-sub")]["expected_mse"].item()
    b = sim[(sim["oracle"] == "designed") & (sim["method"] == "norm-sub")]["mse"].item()
    assert a == b   # the same seeded draws


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"design": {"nosuch": 1}}, "design: unknown options"),
    ({"design": {"iterations": 0}}, "design: iterations must be"),
    ({"design": "yes"}, "design must be True"),
    ({"design": []}, "design: an empty list"),
    ({"design": "d5"}, "design: a designed mechanism has d = 5"),
    ({"design": "eps2"}, "design: a designed mechanism is at epsilon = 2"),
    ({"design": True, "mechanism": "laplace"}, "design applies to the local rows"),
    ({"queries": [np.ones((2, 8)), np.eye(8)]}, "queries: at most one query matrix"),
    ({"queries": [np.full((2, 8), 0.5)]}, "queries: a query matrix must be 0-1"),
    ({"queries": [np.ones((2, 7))]}, "queries: a query matrix must be 0-1 with d = 8"),
    ({"queries": [3]}, "queries must be strings"),
])
def test_bad_design_inputs_are_one_line_errors_before_any_work(kwargs, match, monkeypatch):
    import ldpopt.planning as mod

    if kwargs.get("design") == "d5":
        kwargs["design"] = design.design("prefixes", 1.0, d=5, iterations=2, init="grr")
    elif kwargs.get("design") == "eps2":
        kwargs["design"] = design.design("prefixes", 2.0, d=8, iterations=2, init="grr")
    calls = []
    monkeypatch.setattr(mod, "_evaluate", lambda *a, **k: calls.append(1))
    with pytest.raises(ValueError, match=match) as info:
        ldpopt.plan(8, 1000, 1.0, **kwargs)
    assert "\n" not in str(info.value)
    assert not calls
