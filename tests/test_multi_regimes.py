"""Laws with higher-order interactions (ldpopt.multi.log_linear, dirichlet_joint) and the
``multi-regimes`` kind: a pairwise law is recovered by maximum entropy from its 2-way marginals and
a 3-way interaction is not; CALM's steps equal the weighted optimum exactly when non-negativity does
not bind; the quick run of ``ext_multi_regimes`` and its figure."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import multi
from ldpopt.experiments.claims import verdicts as C
from ldpopt.experiments import run
from ldpopt.experiments.figures.draw import plot


def _maxent_gap(joint: np.ndarray) -> float:
    """Largest |law − max-ent table of the law's exact 2-way marginals| over cells."""
    k = joint.ndim
    attrs = multi.all_k_way(k, 2)
    ms = multi.MarginalSet(joint.shape, attrs)
    f = np.concatenate([joint.sum(axis=tuple(j for j in range(k) if j not in a)).ravel() for a in attrs])
    table = multi.maxent(ms, f)
    return float(np.max(np.abs(table.marginal(tuple(range(k))) - joint.ravel())))


def test_pairwise_law_is_its_maxent_table_and_a_threeway_one_is_not():
    pairwise = multi.log_linear(1000, 4, domains=(2, 3, 2, 2), threeway=0.0, rng=3)
    assert _maxent_gap(pairwise.meta["joint"]) < 1e-8
    threeway = multi.log_linear(1000, 4, domains=(2, 3, 2, 2), threeway=1.0, rng=3)
    assert _maxent_gap(threeway.meta["joint"]) > 1e-2
    dirichlet = multi.dirichlet_joint(1000, 4, alpha=1.0, rng=3)
    assert _maxent_gap(dirichlet.meta["joint"]) > 1e-2
    for data in (pairwise, threeway, dirichlet):
        assert data.n == 1000 and abs(data.meta["joint"].sum() - 1) < 1e-12


def test_threeway_terms_are_pure_interactions():
    """With only 3-way terms (pairwise = 0) on 3 binary attributes the law is ∝ exp(c·s₀s₁s₂): every
    2-way marginal is uniform, while the law itself is not."""
    joint = multi.log_linear(10, 3, pairwise=0.0, threeway=1.5, rng=0).meta["joint"]
    for axis in range(3):
        np.testing.assert_allclose(joint.sum(axis=axis), 0.25, atol=1e-12)
    assert np.ptp(joint) > 0.05


@pytest.mark.parametrize("call, match", [
    (lambda: multi.log_linear(100, 4, threeway=-1.0, rng=0), "threeway"),
    (lambda: multi.log_linear(100, 4, pairwise=float("nan"), rng=0), "pairwise"),
    (lambda: multi.log_linear(100, 2, rng=0), "k must be"),
    (lambda: multi.dirichlet_joint(100, 3, alpha=0.0, rng=0), "alpha"),
    (lambda: multi.dirichlet_joint(100, 3, domains=(2, 2), rng=0), "domains"),
])
def test_bad_arguments_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_ext_multi_regimes_quick(tmp_path):
    t = run("ext_multi_regimes", quick=True, out=tmp_path, progress=False)
    assert (t[t.method.str.endswith(":weighted") & (t.metric != "fw-gap")].status == "optimal").all()
    floor = t[t.method == "maxent-of-truth"].groupby("dataset").value.max()
    assert floor["loglin-3way-0"] < 0.01 < floor["loglin-3way-1"]  # no model error on the pairwise law
    # CALM's alternating projections reach the weighted optimum when no bound is active
    slack = t[(t.method == "2way:calm") & (t.metric == "calm-linf") & ~t.binds]
    assert len(slack) and (slack.value < 1e-8).all()
    # the constrained MLE (GRR) and the rest report on every task
    assert set(t.method) == {"2way:weighted", "3way:weighted", "maxent-of-truth", "2way:calm", "2way:cls",
                             "2way:pgm", "2way:likelihood"}
    paths = plot(tmp_path / "ext_multi_regimes-quick", out=tmp_path / "fig")
    assert [p.name for p in paths] == ["ext_multi_regimes_grr.png"] and paths[0].stat().st_size > 10_000
    # the claim rows read this table: the pairwise-law rows get numbers (a quick run decides nothing)
    got = {c["id"]: c for c in C.claims(tmp_path, paper="multi", quick=True)}
    assert set(got) == {1, 2, 3, 4, 5} and not got[1]["decided"]
    assert any("loglin-3way-0 | grr | eps=0.5 | 2way:weighted/3way:weighted tv3" in k for k in got[1]["numbers"])
    assert any(k.endswith("binds=0 | 2way:calm/2way:weighted tv2") for k in got[4]["numbers"])


def test_claim_rows_encode_their_regime():
    """Claim 4 (CALM = optimum) is checked only where non-negativity is slack; claim 1 (reconstruction as
    good as collecting) fails when a pairwise law's ratio at ε = 0.5 is above 1."""
    row4 = next(r for r in C.rows("multi") if r["id"] == 4)
    key = "ext_multi_regimes | retail-top6 | grr | eps=0.5 | binds={} | {}"
    ok = {key.format(0, "2way:calm/2way:weighted tv2"): 1.0, key.format(0, "2way:calm calm-linf"): 1e-12,
          key.format(1, "2way:calm/2way:weighted tv2"): 0.97, key.format(1, "2way:calm calm-linf"): 0.02}
    assert C.verdict(row4, ok) == row4["verdict"]
    bad = {**ok, key.format(0, "2way:calm/2way:weighted tv2"): 0.98}
    assert C.verdict(row4, bad).startswith("check failed: 2way:calm/2way:weighted tv2 (binds=0)")
    row1 = next(r for r in C.rows("multi") if r["id"] == 1)
    nums = {f"ext_multi_regimes | chain-k6 | oue | eps={e} | 2way:weighted/3way:weighted tv3": v
            for e, v in (("0.5", 0.9), ("1", 1.0), ("2", 1.0), ("4", 1.1))}
    assert C.verdict(row1, nums) == row1["verdict"]
    nums["ext_multi_regimes | chain-k6 | oue | eps=0.5 | 2way:weighted/3way:weighted tv3"] = 1.2
    assert C.verdict(row1, nums).startswith("check failed")
