"""The memoised-channels experiment (kind "channels", ext_channels) runs --quick, its numbers agree
with the theory, and the figure draws exactly the table's means."""

import numpy as np
import pytest

from ldpopt.experiments import run
from ldpopt.experiments.config import load_config
from ldpopt.experiments.figures.draw import plot
from ldpopt.experiments.figures.channels import curves
from ldpopt.experiments.task_kinds.channels import ESTIMATORS, designs


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("channels")
    return out, run("ext_channels", quick=True, out=out, progress=False)


def test_channels_quick_numbers(quick):
    _, t = quick
    cfg = load_config("ext_channels", quick=True)
    ratios = cfg.params["report_ratios"]
    mse = t[t.metric == "mse"]
    assert set(mse.design) == {"one-round"} | {f"memo r={r:g}" for r in ratios}
    assert set(mse.estimator) == set(ESTIMATORS)
    assert (mse.value > 0).all() and np.isfinite(mse.value).all()
    # one report's exact ε never exceeds the memo's (post-processing), and equals it for one round
    assert (t.eps_one_report <= t.epsilon + 1e-9).all()
    one = t[t.design == "one-round"]
    assert np.allclose(one.eps_one_report, one.epsilon)
    cell = ["dataset", "oracle", "epsilon", "design"]
    m = mse.groupby(cell + ["estimator"]).value.mean().unstack()
    # the inversion's simulated MSE matches its exact variance: per cell within a band (3 runs × 32
    # values), and their geometric mean over all cells within 15 %
    an = t[t.metric == "analytic-mse"].groupby(cell).value.mean()
    ratio = m["inverse"] / an
    assert ratio.between(0.6, 1.6).all(), ratio
    assert abs(np.exp(np.log(ratio).mean()) - 1) < 0.15, ratio
    # the MLE on the simplex beats the unbiased (unconstrained) inversion in every cell
    assert (m["mle"] <= m["inverse"]).all()
    # a second round of noise costs one report accuracy. Exactly (the inversion's variance): each
    # memoised design is worse than one round at the same total ε, less so as the report's ε grows;
    # simulated: the MLE under the noisiest split is worse than the one-round MLE
    a = an.unstack("design")
    memo = [f"memo r={r:g}" for r in sorted(ratios)]
    for c in memo:
        assert (a[c] > a["one-round"]).all()
    for lo, hi in zip(memo, memo[1:]):
        assert (a[lo] > a[hi]).all()
    mle = m["mle"].unstack("design")
    assert (mle[memo[0]] > mle["one-round"]).all()

def test_channels_figure_draws_the_table_means(quick, tmp_path):
    out, t = quick
    s = curves(t)
    means = t[t.metric == "mse"].groupby(["dataset", "oracle", "method", "epsilon"]).value.mean()
    got = s.set_index(["dataset", "oracle", "method", "epsilon"])["mean"]
    assert len(got) == len(means)
    assert np.allclose(got.loc[means.index].to_numpy(), means.to_numpy(), rtol=1e-12, atol=0)
    paths = plot(out / "ext_channels-quick", out=tmp_path / "fig")
    assert paths and all(p.exists() and p.stat().st_size > 10_000 for p in paths)


def test_channels_params_are_checked():
    class T:
        oracle, epsilon, params = "sue", 1.0, (("report_ratios", (0.5, -1.0)),)

    with pytest.raises(ValueError, match="report_ratios must be finite and > 0"):
        designs(T, 8)

    class U(T):
        oracle = "olh"

    with pytest.raises(ValueError, match="oracle of a channels config must be one of"):
        designs(U, 8)
