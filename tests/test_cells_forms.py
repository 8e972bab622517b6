"""Every released cell carries its uncertainty in every output form, with the same numbers.

Generated inputs (seeded): flat histograms under random oracles, central Laplace and Gaussian noise;
random marginal sets under CALM-style collection and central noise. Checked: the table's columns from
``Uncertainty.cells``, ``histogram_cells``, the Polars / DuckDB tables of ``to_engine``, and the files of
``ldpopt postprocess --ci`` and ``ldpopt aggregate --method --ci`` are the same numbers; the linear
consistency of marginals against an independent dense KKT solve, its exact SE against the independent
multinomial / Bernoulli covariance of the raw estimate; the bootstrap SE against the exact SE where
both apply (a linear release bootstrapped). Cost: about 10 s of CPU.
"""

from __future__ import annotations

import contextlib
import functools
import warnings

import numpy as np
import pandas as pd
import pytest
from _cli import main_in_process

from ldpopt import Estimate, cli, multi, oracles
from ldpopt.aggregate.frames import to_engine
from ldpopt.aggregate.shards import write_shard
from ldpopt.hierarchy import Tree, tree_cells
from ldpopt.uncertainty import intervals
from ldpopt.uncertainty.cells import COLUMNS, histogram_cells

SEEDS = range(4)


@pytest.fixture(autouse=True)
def one_parser(monkeypatch):
    monkeypatch.setattr(cli, "build_parser", functools.cache(cli.build_parser))


def _flat(seed: int) -> Estimate:
    """A random flat estimate: a random oracle or central mechanism, d, n, ε and histogram."""
    g = np.random.default_rng(seed)
    d = int(g.integers(3, 30))
    counts = g.multinomial(int(g.integers(2_000, 50_000)), g.dirichlet(np.full(d, 0.5)))
    kind = ["grr", "oue", "laplace", "gaussian"][seed % 4]
    if kind in ("grr", "oue"):
        return oracles.get(kind, float(g.uniform(0.5, 3.0)), d).simulate(counts, rng=seed)
    scale = float(g.uniform(2.0, 50.0))
    noisy = counts + (g.laplace(0, scale, d) if kind == "laplace" else g.normal(0, scale, d))
    return Estimate.from_central(noisy, kind, scale, n=int(counts.sum()))


@pytest.mark.parametrize("seed", SEEDS)
def test_flat_cells_same_numbers_in_every_form(seed):
    est = _flat(seed)
    method = "norm-sub" if seed % 2 else "base"
    with _quiet():
        r = intervals(est, method, 0.9, n_resamples=40, rng=seed)
        hist = histogram_cells(est, method, 0.9, n_resamples=40, rng=seed)
    tab = r.cells()
    assert tab.columns.tolist() == list(COLUMNS)
    pd.testing.assert_frame_equal(tab, hist)
    # the table is the result's own numbers, and the correction is (value - raw) / sigma_v
    np.testing.assert_array_equal(tab["estimate"], r.values)
    np.testing.assert_array_equal(tab["ci_low"], r.lo)
    sig = np.sqrt(est.sigma2_v)
    np.testing.assert_allclose(tab["correction_sigma"], (r.values - est.f_tilde) / sig, rtol=1e-12)
    np.testing.assert_array_equal(tab["flagged"], np.abs(r.values - est.f_tilde) > np.maximum(7 * sig, 1 / est.n))
    pl = pytest.importorskip("polars")
    out = to_engine(tab, like=pl.DataFrame({"x": [1]}))
    assert out.columns == ["cell", *COLUMNS]
    np.testing.assert_array_equal(out["se"].to_numpy(), tab["se"].to_numpy())
    duck = r.cells(engine="duckdb").df()
    np.testing.assert_array_equal(duck["ci_high"].to_numpy(), tab["ci_high"].to_numpy())
    np.testing.assert_array_equal(duck["flagged"].to_numpy(), tab["flagged"].to_numpy())


@contextlib.contextmanager
def _quiet():
    """FallbackWarning (a clipping method's Base intervals) is expected here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_query_results_refuse_a_cell_table():
    est = _flat(1)
    with _quiet():
        r = intervals(est, "base", query=[[0, 1]])
    with pytest.raises(ValueError, match="not one value per cell"):
        r.cells()


def test_cli_files_carry_the_same_table(tmp_path):
    """``postprocess --ci`` and ``aggregate --method --ci`` (the DuckDB engine's output) write the
    table's columns with the API's numbers."""
    g = np.random.default_rng(7)
    d = 6
    orc = oracles.get("oue", 1.5, d)
    values = g.choice(d, size=3_000, p=g.dirichlet(np.ones(d)))
    shards = tmp_path / "shards"
    shards.mkdir()
    write_shard(shards / "part-0.parquet", orc, orc.perturb(values, rng=1), run="r", part=0)
    agg = tmp_path / "agg.csv"
    p = main_in_process("aggregate", shards, "--engine", "duckdb", "--method", "norm-sub", "--ci", "0.9",
                        "--resamples", 30, "--seed", 2, "--out", agg, "--no-progress")
    assert p.returncode == 0, p.stderr
    assert "corrections flagged" in p.stderr
    a = pd.read_csv(agg)
    counts = tmp_path / "counts.csv"
    a[["value", "count"]].to_csv(counts, index=False)
    post = tmp_path / "post.csv"
    p = main_in_process("postprocess", "--counts", counts, "--oracle", "oue", "--epsilon", 1.5, "--n", 3000,
                        "--method", "norm-sub", "--ci", "0.9", "--resamples", 30, "--seed", 2, "--out", post)
    assert p.returncode == 0, p.stderr
    b = pd.read_csv(post)
    est = orc.estimate(a["count"].to_numpy(np.float64), 3000)
    with _quiet():
        tab = intervals(est, "norm-sub", 0.9, n_resamples=30, rng=2).cells()
    for frame in (a, b):
        for col in ("se", "ci_low", "ci_high", "correction_sigma"):
            np.testing.assert_allclose(frame[f"norm-sub_{col}"], tab[col], rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(frame["norm-sub_flagged"], tab["flagged"].astype(int))
    one = main_in_process("aggregate", shards, "--engine", "duckdb", "--ci", "0.9", "--out", tmp_path / "x.csv")
    assert one.returncode == 2 and "--ci" in one.stderr


# --- marginals -----------------------------------------------------------------------------------

def _marginal(seed: int, central: str | None = None):
    g = np.random.default_rng(100 + seed)
    k = int(g.integers(3, 5))
    data = multi.chain_network(int(g.integers(5_000, 20_000)), k, rng=seed)
    attrs = multi.all_k_way(k, 2)[: int(g.integers(2, len(multi.all_k_way(k, 2)) + 1))]
    if central is None:
        oracle = ["grr", "oue"][seed % 2]
        return data, None, multi.calm(data.domains, float(g.uniform(1.0, 3.0)), attrs=attrs, oracle=oracle).simulate(
            data, rng=seed)
    ms = multi.MarginalSet(data.domains, attrs)
    scale = float(g.uniform(5.0, 40.0))
    ests = []
    for a in ms.attrs:
        c = data.marginal(a) * data.n
        noisy = c + (g.laplace(0, scale, c.size) if central == "laplace" else g.normal(0, scale, c.size))
        ests.append(Estimate.from_central(noisy, central, scale, n=data.n))
    var = 2 * scale**2 if central == "laplace" else scale**2                  # the mechanism's own variance
    return data, var / data.n**2, multi.MarginalEstimates(ms, tuple(ests), "central", 1.0, 1.0, data.n)


def _independent_cov(e: Estimate, noise_var, n: int) -> np.ndarray:
    """Cov of f̃ − f from the mechanism's own law (not ldpopt's formulas): given the group's users, GRR
    counts a sum over users of one-hot reports drawn from the channel's column of the user's value
    (Σ_v n_v (diag(P_v) − P_v P_vᵀ)), OUE bits independent Bernoulli (p at the value, q elsewhere),
    central noise independent of the mechanism's variance; n_v at the plug-in clip(f̃). A group of
    n_i < n users adds the multivariate hypergeometric covariance of its own marginal."""
    f = np.clip(e.f_tilde, 0.0, 1.0)
    scale = 1.0 / (e.n * (e.p - e.q)) ** 2
    if e.oracle == "grr":
        P = np.full((e.d, e.d), e.q) + np.eye(e.d) * (e.p - e.q)         # column v: the law of v's report
        cov = scale * sum(e.n * f[v] * (np.diag(P[:, v]) - np.outer(P[:, v], P[:, v])) for v in range(e.d))
    elif e.oracle == "oue":
        n_v = e.n * f
        cov = scale * np.diag(n_v * e.p * (1 - e.p) + (e.n - n_v) * e.q * (1 - e.q))
    else:
        return np.eye(e.d) * noise_var
    g = f / f.sum()
    return cov + (n - e.n) / ((n - 1) * e.n) * (np.diag(g) - np.outer(g, g))


def _kkt_map(est) -> tuple[np.ndarray, np.ndarray]:
    """x̂ = K f̃ + k by solving the equality-constrained weighted least squares' KKT system, column by
    column (dense, least squares for the redundant rows)."""
    ms = est.marginals
    N = ms.size
    rows = [ms.agreement().toarray()]
    b = [np.zeros(rows[0].shape[0])]
    for i in range(ms.m):
        r = np.zeros(N)
        r[ms.block(i)] = 1.0
        rows.append(r[None])
        b.append(np.ones(1))
    M, bb = np.vstack(rows), np.concatenate(b)
    W = np.diag(est.sigma2.min() / est.sigma2)          # the weights up to a constant: a well-scaled system
    KKT = np.block([[W, M.T], [M, np.zeros((M.shape[0], M.shape[0]))]])
    rhs = np.vstack([np.hstack([W, np.zeros((N, 1))]), np.hstack([np.zeros((M.shape[0], N)), bb[:, None]])])
    sol = np.linalg.lstsq(KKT, rhs, rcond=None)[0][:N]
    return sol[:, :N], sol[:, N]


@pytest.mark.parametrize("seed,central", [(0, None), (1, None), (2, "laplace"), (3, "gaussian")])
def test_marginal_linear_cells_exact_against_an_independent_dense_computation(seed, central):
    _data, noise_var, est = _marginal(seed, central)
    tab = multi.marginal_cells(est, level=0.9)
    assert tab.columns.tolist() == list(COLUMNS)
    K, k = _kkt_map(est)
    np.testing.assert_allclose(tab["estimate"], K @ est.f_tilde + k, atol=1e-10)
    np.testing.assert_allclose(multi.linear_consistency(est), K @ est.f_tilde + k, atol=1e-10)
    ms = est.marginals
    C = np.zeros((ms.size, ms.size))
    for i, e in enumerate(est.estimates):
        C[ms.block(i), ms.block(i)] = _independent_cov(e, noise_var, est.n)
    np.testing.assert_allclose(tab["se"], np.sqrt(np.diag(K @ C @ K.T)), rtol=1e-8)
    np.testing.assert_allclose(tab["ci_high"] - tab["ci_low"], 2 * 1.6448536269514722 * tab["se"], rtol=1e-9)
    sig = np.sqrt(np.diag(C))
    np.testing.assert_allclose(tab["correction_sigma"], (tab["estimate"] - est.f_tilde) / sig, rtol=1e-8)
    # engines: same numbers, the index as leading columns
    pl = pytest.importorskip("polars")
    out = multi.marginal_cells(est, level=0.9, engine="polars")
    assert out.columns[:2] == ["marginal", "cell"]
    np.testing.assert_array_equal(out["se"].to_numpy(), tab["se"].to_numpy())
    assert isinstance(out, pl.DataFrame)


@pytest.mark.parametrize("seed", [0, 1])
def test_marginal_bootstrap_se_matches_the_exact_se_of_a_linear_release(seed):
    _data, _, est = _marginal(seed)
    exact = multi.marginal_cells(est)
    boot = multi.marginal_cells(est, multi.linear_consistency, n_resamples=400, rng=seed, hull=False)
    np.testing.assert_allclose(boot["estimate"], exact["estimate"], atol=1e-12)
    ratio = boot["se"].to_numpy() / exact["se"].to_numpy()
    # B = 400: the SD's relative sampling error is about 1/sqrt(2B) = 3.5 %; the bootstrap's world is
    # the release (clipped at 0), the exact SE's truth the plug-in clip(f̃): a few per cent more
    assert np.median(np.abs(ratio - 1)) < 0.06 and np.all(np.abs(ratio - 1) < 0.3), ratio


def test_marginal_calm_cells_bootstrap_and_refusals():
    data, _, est = _marginal(1)
    t = multi.marginal_cells(est, "calm", n_resamples=30, rng=0)
    assert (t["ci_low"] >= 0).all() and (t["ci_high"] <= 1).all()
    np.testing.assert_allclose(t["estimate"], multi.calm_consistency(est).f)
    ex = multi.marginal_cells(est)
    assert (t["ci_low"] <= np.clip(ex["ci_low"], 0, 1) + 1e-15).all()          # the hull holds the exact one
    with pytest.raises(ValueError, match="post must be"):
        multi.marginal_cells(est, "norm-sub")
    with pytest.raises(TypeError, match="MarginalEstimates"):
        multi.marginal_cells(est.estimates[0])
    spl = multi.spl(data.domains, 1.0).simulate(data, rng=0)
    with pytest.raises(ValueError, match="not independent"):
        multi.marginal_cells(spl)


def test_tree_cells_in_engines_same_numbers():
    g = np.random.default_rng(5)
    parent = np.r_[-1, np.zeros(4, int), np.repeat(np.arange(1, 5), 3)]
    tree = Tree(parent)
    leaves = g.integers(0, 200, tree.leaves.size).astype(float)
    truth = np.zeros(tree.size)
    truth[tree.leaves] = leaves
    y = tree.node_totals(truth) + g.normal(0, 3.0, tree.size)
    for post in ("gls", "gls-clip-round"):
        tab = tree_cells(tree, y, 9.0, post, n_resamples=30, rng=1)
        duck = tree_cells(tree, y, 9.0, post, n_resamples=30, rng=1, engine="duckdb").df()
        assert duck.columns.tolist()[1:7] == list(COLUMNS)
        np.testing.assert_array_equal(duck["se"].to_numpy(), tab["se"].to_numpy())
        np.testing.assert_array_equal(duck["ci_low"].to_numpy(), tab["ci_low"].to_numpy())


def test_multi_cli_file_carries_the_marginal_table(tmp_path):
    """``ldpopt multi --post linear --ci``: the file's columns are ``marginal_cells``' numbers for the
    same collection; calm's bootstrap columns hold the release; SPL is refused in one line."""
    from ldpopt.cli.multi import read_tuples

    g = np.random.default_rng(11)
    n = 4_000
    a = g.integers(0, 3, n)
    pd.DataFrame({"A": a, "B": (a + (g.random(n) < 0.3)) % 3, "C": g.integers(0, 2, n)}).to_csv(
        tmp_path / "t.csv", index=False)
    out = tmp_path / "m.csv"
    p = main_in_process("multi", "--tuples", tmp_path / "t.csv", "--epsilon", 2, "--post", "linear", "--ci", "0.9",
                        "--seed", 4, "--out", out)
    assert p.returncode == 0, p.stderr
    assert "corrections flagged" in p.stderr
    got = pd.read_csv(out)
    data, _ = read_tuples(tmp_path / "t.csv")
    est = multi.calm(data.domains, 2.0, way=2, oracle="oue").simulate(data, 4)
    tab = multi.marginal_cells(est, "linear", 0.9)
    np.testing.assert_allclose(got["f"], tab["estimate"], rtol=1e-12)
    for col in ("se", "ci_low", "ci_high", "correction_sigma"):
        np.testing.assert_allclose(got[col], tab[col], rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(got["flagged"], tab["flagged"].astype(int))
    p = main_in_process("multi", "--tuples", tmp_path / "t.csv", "--epsilon", 2, "--post", "calm", "--ci", "0.9",
                        "--resamples", 20, "--out", tmp_path / "c.csv")
    assert p.returncode == 0, p.stderr
    c = pd.read_csv(tmp_path / "c.csv")
    assert ((c["ci_low"] <= c["f"] + 1e-9) & (c["f"] <= c["ci_high"] + 1e-9)).all()     # calm stops at -1e-12
    bad = main_in_process("multi", "--tuples", tmp_path / "t.csv", "--epsilon", 2, "--protocol", "spl", "--ci", "0.9")
    assert bad.returncode == 2 and "not independent" in bad.stderr
