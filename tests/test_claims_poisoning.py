"""experiments/claims/poisoning.toml: every row measured from the quick ext_poisoning_stress run, its
table in REPRODUCTION.md, and its checks deciding the verdict on planted tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ldpopt.experiments.claims import verdicts as C


@pytest.fixture(scope="module")
def quick_root(tmp_path_factory):
    from ldpopt.experiments.runner import run

    root = tmp_path_factory.mktemp("claims_poisoning")
    run("ext_poisoning_stress", quick=True, out=root, progress=False)
    return root


def test_every_row_is_measured_on_the_quick_run(quick_root):
    got = C.claims(quick_root, paper="poisoning", quick=True)
    assert [c["id"] for c in got] == [r["id"] for r in C.rows("poisoning")]
    for c in got:
        assert "missing" not in c, c
        assert c["numbers"] and all(np.isfinite(v) for k, v in c["numbers"].items() if isinstance(v, float)), c
        assert c["needs_reps"] == 12 and "12" in c["verdict"]   # a quick run decides nothing


def _planted(tmp_path, lift_over_norm: float):
    """A saved table where, under no attack, the lift told 4β has lift_over_norm × Norm-Sub's MSE."""
    rows = []
    for rep in range(12):
        for meth, v in (("norm-sub", 1e-5), ("lift:high", lift_over_norm * 1e-5)):
            rows.append({"dataset": "zipf", "oracle": "oue", "epsilon": 1.0, "rep": rep, "method": meth,
                         "metric": "mse", "value": v, "attack": "none", "beta": 0.05})
    d = tmp_path / f"p{lift_over_norm:g}" / "ext_poisoning_stress"
    d.mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(d / "results.parquet")
    return d.parent


@pytest.mark.parametrize("ratio, holds", [(400.0, True), (2.0, False)])
def test_no_attack_check_decides_the_verdict(tmp_path, ratio, holds):
    row = next(r for r in C.rows("poisoning") if r["id"] == 4)
    got = next(c for c in C.claims(_planted(tmp_path, ratio), paper="poisoning", ids={4}))
    assert got["numbers"]["ext_poisoning_stress | max lift(4β)/norm-sub mse, no attack"] == pytest.approx(ratio)
    assert (got["verdict"] == row["verdict"]) is holds
