"""experiments/claims/wang.toml through ldpopt/experiments/claims/verdicts.py: the numbers behind
REPRODUCTION.md's Wang claims, recomputed from saved results tables. Synthetic tables with planted values (written like runner.collect:
results.parquet + meta.json) must give back the planted ratios, sums and ranks; absent configs give
``missing`` entries; and quick runs of three configs give finite numbers."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from ldpopt.experiments import run
from ldpopt.experiments.claims import verdicts as C
from ldpopt.experiments.claims.format import fmt


class cw:  # the configs the claims read, and the engine called for the Wang rows
    ND4, ND5, ND7, ND10, ND13 = ("wang_ndss_fig4_full_domain", "wang_ndss_fig5_benefit", "wang_ndss_fig7_set_value",
                                 "wang_ndss_fig10_top_k", "wang_ndss_fig1_3_bias_variance")
    ARX1, ARX3, ARX4 = "wang_arxiv_fig1_full_domain", "wang_arxiv_fig3_set_value", "wang_arxiv_fig4_fixed_sets"
    fmt = staticmethod(fmt)

    @staticmethod
    def claims(root, **kw):
        return C.claims(root, paper="wang", **kw)

    @staticmethod
    def summary_markdown(root, **kw):
        return C.summary_markdown(root, paper="wang", **kw)

FD_METHODS = ["base", "base-pos", "post-pos", "norm", "norm-mul", "norm-sub", "mle-apx", "base-cut",
              "norm-cut", "power", "power-ns"]


def _write(root, name, rows, config=None):
    """A results folder as runner.collect writes it (results.parquet + meta.json)."""
    df = pd.DataFrame(rows)
    df.insert(0, "experiment", name)
    folder = root / name
    folder.mkdir(parents=True)
    df.to_parquet(folder / "results.parquet", index=False)
    meta = {"config": {"name": name, "datasets": [], **(config or {})}, "quick": False,
            "tasks": int(df.groupby(["dataset", "oracle", "epsilon", "rep"]).ngroups), "rows": len(df)}
    (folder / "meta.json").write_text(json.dumps(meta))
    return df


def _scale(ds, orc, eps):
    return {"zipf": 1.0, "emoji": 3.0}[ds] * {"olh": 1.0, "grr": 7.0}[orc] / eps


# planted per-method MSE factors (ratios between methods are these ratios exactly)
PLANT = {"base": 10.0, "base-pos": 5.5, "post-pos": 5.5, "norm": 9.99, "norm-mul": 40.0,
         "norm-sub": 1.25, "mle-apx": 1.3, "base-cut": 1.1, "norm-cut": 2.0, "power": 0.9, "power-ns": 0.8}


def _full_domain_rows(methods=FD_METHODS, slow_reps=1):
    rows = []
    for ds, orc, eps, rep in itertools.product(["zipf", "emoji"], ["olh", "grr"], [0.5, 2.0], [0, 1]):
        for m in methods:
            if m in ("power", "power-ns") and rep >= slow_reps:
                continue
            # ±10 % around the planted mean, symmetric over the two repetitions
            noise = 1.1 if rep == 0 else 0.9
            if m in ("power", "power-ns"):
                noise = 1.0
            v = PLANT[m] * _scale(ds, orc, eps)
            rows.append(dict(dataset=ds, oracle=orc, epsilon=eps, rep=rep, method=m, metric="mse", value=v * noise))
            rows.append(dict(dataset=ds, oracle=orc, epsilon=eps, rep=rep, method=m, metric="mae", value=math.sqrt(v)))
    return rows


def test_full_domain_ratios_recovered(tmp_path):
    _write(tmp_path, cw.ND4, _full_domain_rows())
    out = {c["id"]: c for c in cw.claims(tmp_path, ids={1, 2, 3, 4, 6, 7})}
    key = "wang_ndss_fig4_full_domain | zipf | olh | eps=0.5 | "
    assert out[3]["numbers"][key + "base/norm-sub mse"] == pytest.approx(10.0 / 1.25, rel=1e-12)
    assert out[1]["numbers"][key + "norm/base mse"] == pytest.approx(0.999, rel=1e-12)
    assert out[2]["numbers"][key + "base-pos/base mse"] == pytest.approx(0.55, rel=1e-12)
    assert out[6]["numbers"][key + "mle-apx/norm-sub mse"] == pytest.approx(1.04, rel=1e-12)
    # claim 4 is Emoji only; claim 3 Zipf only
    assert all("| emoji |" in k for k in out[4]["numbers"])
    assert all("| zipf |" in k for k in out[3]["numbers"])
    assert out[4]["numbers"]["wang_ndss_fig4_full_domain | emoji | grr | eps=2 | base/norm-sub mse"] == pytest.approx(8.0)
    # planted PowerNS lowest everywhere; PowerNS/Base-Cut = 0.8/1.1
    assert out[7]["numbers"]["wang_ndss_fig4_full_domain | emoji | grr | lowest-mse method [eps=0.5,2]"] == ["power-ns"] * 2
    assert out[7]["numbers"][key + "power-ns/base-cut mse"] == pytest.approx(0.8 / 1.1)
    # repetitions per method: Power/PowerNS planted on rep 0 only
    assert out[3]["reps"][cw.ND4]["base"] == 2 and out[3]["reps"][cw.ND4]["power-ns"] == 1
    # the text quotes the planted ratio at 3 significant digits
    assert "zipf OLH 8.00" in out[3]["text"]
    # arXiv Fig. 1 absent: an extra config, reported but not fatal
    assert out[3]["missing_extra"] == [cw.ARX1] and "missing" not in out[3]


def test_extra_config_adds_labelled_entries(tmp_path):
    _write(tmp_path, cw.ND4, _full_domain_rows())
    rows = [r for r in _full_domain_rows() if r["dataset"] == "zipf"]
    for r in rows:
        r["dataset"] = "ipums-us-cities" if r["oracle"] == "grr" else "zipf"
    _write(tmp_path, cw.ARX1, rows)
    c3 = cw.claims(tmp_path, ids={3})[0]
    assert cw.ARX1 in c3["config"] and "missing_extra" not in c3
    assert c3["numbers"]["wang_arxiv_fig1_full_domain | ipums-us-cities | grr | eps=2 | base/norm-sub mse"] == pytest.approx(8.0)
    c31 = cw.claims(tmp_path, ids={31})[0]
    assert c31["numbers"]["wang_arxiv_fig1_full_domain | zipf | olh | eps=0.5 | norm-cut/norm-sub mse"] == pytest.approx(1.6)
    assert c31["numbers"]["wang_arxiv_fig1_full_domain | zipf | olh | eps=2 | power/norm-sub mse"] == pytest.approx(0.72)


def test_bias_sums_and_variances_recovered(tmp_path):
    # d = 4 values, n = 1000 users, two blocks of 50 runs; per method a planted bias b_v and
    # error second moment b_v² + s²_v, so bias = b, variance = s² R/(R−1) exactly
    d, n, runs = 4, 1000, 50
    f = np.array([0.4, 0.3, 0.2, 0.1])
    bias = {"base": np.array([1e-3, -2e-3, 0.5e-3, 0.0]), "norm": np.array([1e-3, -1e-3, 0.5e-3, -0.5e-3]),
            "base-pos": np.array([0.0, 0.0, 1e-3, 4e-3])}
    s2 = {"base": np.array([4e-6, 4e-6, 4e-6, 4e-6]), "norm": np.array([3e-6] * 4), "base-pos": np.array([1e-6, 1e-6, 2e-6, 3e-6])}
    rows = []
    for rep in range(2):
        base = dict(dataset="zipf", oracle="olh", epsilon=1.0, rep=rep, runs=runs, n_users=n)
        for v in range(d):
            rows.append({**base, "method": "truth", "metric": "f", "value": f[v], "v": v})
            for m in bias:
                rows.append({**base, "method": m, "metric": "sum", "value": runs * bias[m][v], "v": v})
                rows.append({**base, "method": m, "metric": "sumsq", "value": runs * (bias[m][v] ** 2 + s2[m][v]), "v": v})
    _write(tmp_path, cw.ND13, rows)
    out = {c["id"]: c for c in cw.claims(tmp_path, ids={8, 9, 10})}
    R = 2 * runs
    pre = "wang_ndss_fig1_3_bias_variance | zipf | olh | "
    for m in bias:
        assert out[9]["numbers"][pre + f"{m} | bias sum (counts)"] == pytest.approx(n * bias[m].sum(), abs=1e-9)
        var = s2[m] * R / (R - 1)
        assert out[10]["numbers"][pre + f"{m} mean Var/n (counts)"] == pytest.approx(n * var.mean(), rel=1e-9)
    assert out[9]["numbers"][pre + "base | SE of bias sum (counts, independent values)"] == pytest.approx(
        n * math.sqrt((s2["base"] * R / (R - 1)).sum() / R), rel=1e-9)
    z = np.abs(bias["base"]) / np.sqrt(s2["base"] * R / (R - 1) / R)
    assert out[8]["numbers"][pre + "base | max_v |bias|/SE"] == pytest.approx(z.max(), rel=1e-9)
    assert out[8]["numbers"][pre + "base | values with |bias|/SE > 5"] == float((z > 5).sum())
    # top-5 / lowest-500 of a 4-value domain: all values, so both equal the mean
    assert out[10]["numbers"][pre + "norm/base Var"] == pytest.approx(0.75, rel=1e-9)
    assert out[10]["numbers"][pre + "(d-1)/d"] == 0.75
    assert out[9]["reps"][cw.ND13]["base"] == R


def test_benefit_power_ns_nprime(tmp_path):
    planted = {200000: 20.0, 1000000: 10.0}
    rows = []
    for rep, (nn, r) in itertools.product(range(3), planted.items()):
        for m, val in (("power-ns", r * (1 + 0.1 * (rep - 1))), ("base", 1.0), ("norm-sub", 5.0),
                       ("mle-apx", 4.0), ("base-cut", 8.0), ("norm", 1.0), ("norm-mul", 0.25)):
            rows.append(dict(dataset="zipf", oracle="olh", epsilon=1.0, rep=rep, method=m, metric="ratio",
                             value=val, n_users=nn))
    _write(tmp_path, cw.ND5, rows)
    out = {c["id"]: c for c in cw.claims(tmp_path, ids={28, 29, 30})}
    pre = "wang_ndss_fig5_benefit | zipf | olh | eps=1 | "
    for nn, r in planted.items():
        assert out[30]["numbers"][pre + f"n={nn} | power-ns n'/n"] == pytest.approx(r, rel=1e-12)
        assert out[30]["numbers"][pre + f"n={nn} | power-ns users saved (1 - n/n')"] == pytest.approx(1 - 1 / r)
        assert out[29]["numbers"][pre + f"n={nn} | norm-mul n'/n"] == 0.25
    assert out[30]["numbers"]["wang_ndss_fig5_benefit | zipf | olh | eps=1 | largest n'/n method [n=200000,1000000]"] \
        == ["power-ns", "power-ns"]


def test_fixed_sets_mean_ranks(tmp_path):
    # planted order: at ε = 0.5 Norm-Sub < MLE-Apx < Base; at ε = 1 MLE-Apx < Norm-Sub < Base
    vals = {0.5: {"norm-sub": 1.0, "mle-apx": 2.0, "base": 3.0}, 1.0: {"norm-sub": 2.0, "mle-apx": 1.0, "base": 3.0}}
    rows = [dict(dataset="ipums-us-cities", oracle="oue", epsilon=e, rep=rep, method=m, metric="mse", value=v,
                 query_set="state", rho=2.0)
            for e, mv in vals.items() for m, v in mv.items() for rep in range(2)]
    _write(tmp_path, cw.ARX4, rows)
    c = cw.claims(tmp_path, ids={32})[0]
    pre = "wang_arxiv_fig4_fixed_sets | ipums-us-cities | oue | set=state | "
    assert c["numbers"][pre + "norm-sub mean rank over eps"] == 1.5
    assert c["numbers"][pre + "mle-apx mean rank over eps"] == 1.5
    assert c["numbers"][pre + "base mean rank over eps"] == 3.0
    ranked = [k for k, v in c["numbers"].items() if "mean rank" in k and math.isfinite(v)]
    assert len(ranked) == 3  # the three methods of the table, no other


def test_missing_configs(tmp_path):
    out = cw.claims(tmp_path)
    assert [c["id"] for c in out] == list(range(1, 33))
    by = {c["id"]: c for c in out}
    assert by[3]["missing"] == [cw.ND4] and "numbers" not in by[3]
    assert by[9]["missing"] == [cw.ND13]
    assert by[31]["missing"] == [cw.ARX1]
    md = cw.summary_markdown(tmp_path)
    assert md.count("\n") == 34 and "`wang_ndss_fig4_full_domain` (missing)" in md


def test_fmt_three_significant_digits():
    assert cw.fmt(17.281) == "17.3"
    assert cw.fmt(0.99901) == "0.999"
    assert cw.fmt(710627.4) == "711,000"
    assert cw.fmt(-671.4) == "-671"
    assert cw.fmt(4.7123e-5) == "4.71e-5"
    assert cw.fmt(float("nan")) == "n/a"


@pytest.fixture(scope="module")
def quick_root(tmp_path_factory):
    out = tmp_path_factory.mktemp("claims_quick")
    for name in (cw.ND4, cw.ND5, cw.ND10):
        run(name, quick=True, out=out, progress=False)
    return out


def test_quick_runs_give_finite_numbers(quick_root):
    out = {c["id"]: c for c in cw.claims(quick_root, quick=True)}
    # claims resting on the three quick tables are measured, the others missing
    for cid in (1, 2, 3, 5, 6, 7, 15, 16, 17, 28, 29, 30):
        assert "missing" not in out[cid], cid
    assert "missing" in out[9] and "missing" in out[31]
    # quick NDSS Fig. 4 runs PowerNS on rep 0 (slow_reps = 1): its cells are finite
    need = {1: "norm/base mse", 3: "base/norm-sub mse", 6: "mle-apx/norm-sub mse", 7: "power-ns/base-cut mse",
            15: "norm-sub/base mse", 16: "base-cut/base mse", 28: "base n'/n"}
    for cid, q in need.items():
        vals = [v for k, v in out[cid]["numbers"].items() if k.endswith(q)]
        assert vals and all(math.isfinite(v) for v in vals), (cid, q)
    assert out[7]["reps"][cw.ND4]["power-ns"] == 1 and out[7]["reps"][cw.ND4]["base"] == 2
    # the quick Fig. 5 / Fig. 10 runs have no Power: reported as n/a, not as a crash
    assert all(math.isnan(v) for k, v in out[30]["numbers"].items() if "power-ns n'/n" in k)
    # n'/n of Base is ≈ 1 by construction (analytic vs empirical MSE of the same estimate)
    base = [v for k, v in out[28]["numbers"].items() if k.endswith("base n'/n")]
    assert all(0.5 < v < 2 for v in base)


def test_quick_verdicts_are_not_decided_and_name_the_repetitions_they_need(quick_root):
    import tomllib

    from ldpopt.experiments.config import DATA_DIR

    def full_reps(name):  # read from the config file itself, not through load_config
        return tomllib.loads((DATA_DIR / "configs" / f"{name}.toml").read_text())["repetitions"]

    measured = [c for c in cw.claims(quick_root, quick=True) if "missing" not in c]
    assert len(measured) >= 12
    for c in measured:
        row = next(r for r in C.rows("wang") if r["id"] == c["id"])
        need = max(full_reps(n) for n in row["configs"])
        assert c["needs_reps"] == need and c["decided"] is False
        assert c["verdict"].startswith(f"not decided at quick size (needs ≥ {need} repetitions, ran 2); "), c
        assert "check failed" not in c["verdict"]
    # what the checks give at quick size follows: held, or the check that misses
    said = {c["id"]: c["verdict"].split("); ", 1)[1] for c in measured}
    assert set(said.values()) <= {"its checks hold at this size"} | {v for v in said.values()
                                                                      if v.startswith("a check at this size: ")}
    text = cw.summary_markdown(quick_root, quick=True)
    assert text.startswith("Quick run: its tables are too small to decide a claim") and "check failed" not in text
    # the full tables decide: the same row's own wording or a failed check, never "not decided"
    assert all(c.get("decided", True) for c in cw.claims(quick_root, quick=False))
    row = {**next(r for r in C.rows("wang") if r["id"] == 1), "needs_reps": 100}  # a row may say what it needs
    assert C.required_reps(row) == 100 and C.quick_verdict(row, {}).startswith("not decided at quick size (needs ≥ 100")
    with pytest.raises(ValueError, match="needs_reps must be an integer >= 1"):
        C.required_reps({**row, "needs_reps": 0})


def test_set_value_monotonicity_skips_methods_a_config_lacks(tmp_path):
    """Claim 23: a method absent from a config (NDSS sets have no Norm-Hyb) is not counted as a
    failed step; a planted decrease is."""
    def rows(methods, dip=None):
        out = []
        for rho, rep in itertools.product(range(1, 11), [0, 1]):
            for m in methods:
                v = float(rho) * PLANT.get(m, 1.0)
                if dip == m and rho == 5:
                    v = 3.5 * PLANT[m]          # MSE(5) < MSE(4): one step 4 → 5 without an increase
                out.append(dict(dataset="zipf", oracle="olh", epsilon=1.0, rep=rep, method=m, rho=rho,
                                metric="mse", value=v))
        return out

    _write(tmp_path, cw.ARX3, rows(["base", "norm-sub", "norm-hyb"]))
    _write(tmp_path, cw.ND7, rows(["base", "norm-sub"], dip="base"))
    nums = cw.claims(tmp_path, ids={23})[0]["numbers"]
    assert nums[f"{cw.ARX3} | steps rho->next rho (non-Power methods)"] == 27
    assert nums[f"{cw.ARX3} | steps without an increase"] == 0
    assert nums[f"{cw.ND7} | steps rho->next rho (non-Power methods)"] == 18   # Norm-Hyb not counted
    assert nums[f"{cw.ND7} | steps without an increase (list)"] == ["zipf OLH Base ρ 4→5"]


def test_reproduction_tables_are_the_claim_rows(tmp_path):
    """REPRODUCTION.md's two claims tables are exactly what `ldpopt experiment claims --reproduction` writes
    from experiments/claims/*.toml (the prose around them kept); a file without them is an error."""
    from pathlib import Path

    from ldpopt.cli import main

    path = Path(__file__).resolve().parents[1] / "REPRODUCTION.md"
    text = path.read_text(encoding="utf-8")
    assert C.reproduction(text) == text
    assert [r["id"] for r in C.rows("wang")] == list(range(1, 33)) and [r["id"] for r in C.rows("jia")] == list(range(1, 10))
    copy = tmp_path / "R.md"
    copy.write_text(text.replace("| 1 | Base performs very close to Norm", "| 1 | edited"), encoding="utf-8")
    assert main(["experiment", "claims", "--reproduction", str(copy), "--write"]) == 0
    assert copy.read_text(encoding="utf-8") == text
    with pytest.raises(ValueError, match="no claims table"):
        C.reproduction("# nothing here\n")


def test_verdict_is_the_rows_wording_only_when_its_checks_hold(tmp_path):
    """Claim 1's checks (Norm/Base within 1 % for OLH and OUE): planted 0.999 passes for OLH; a table
    without OUE has no numbers for the second check, and a planted 1.5 fails the first."""
    row = next(r for r in C.rows("wang") if r["id"] == 1)
    key = "wang_ndss_fig4_full_domain | zipf | {} | eps=1 | norm/base mse"
    assert C.verdict(row, {key.format("olh"): 0.999, key.format("oue"): 1.0}) == row["verdict"] == "agree"
    assert C.verdict(row, {key.format("olh"): 0.999}).startswith("check failed: norm/base mse (| oue |)")
    failed = C.verdict(row, {key.format("olh"): 1.5, key.format("oue"): 1.0})
    assert failed.startswith("check failed: norm/base mse (| olh |) in [0.990, 1.01]: 1 of 1 not, e.g. 1.50")
    # a list check: every ε's lowest-MSE method must be PowerNS (claim 7)
    row7 = next(r for r in C.rows("wang") if r["id"] == 7)
    nums = {"wang_ndss_fig4_full_domain | zipf | olh | lowest-mse method [eps=0.5,2]": ["power-ns", "norm-cut"],
            "wang_ndss_fig4_full_domain | zipf | olh | eps=1 | power-ns/base-cut mse": 0.7}
    assert "lowest-mse method (zipf | olh) = power-ns: 1 of 2 not, e.g. norm-cut" in C.verdict(row7, nums)
    nums["wang_ndss_fig4_full_domain | zipf | olh | lowest-mse method [eps=0.5,2]"] = ["power-ns"] * 2
    assert C.verdict(row7, nums) == row7["verdict"]


def test_at_level_selects_on_an_unordered_categorical_level():
    """A named value on a categorical level (dataset) needs no order; min/max on a numeric one."""
    import pandas as pd

    from ldpopt.experiments.claims.table import at_level

    idx = pd.MultiIndex.from_arrays([pd.Categorical(["zipf", "emoji", "zipf"]), [0.5, 1.0, 2.0]],
                                    names=["dataset", "epsilon"])
    s = pd.Series([1.0, 2.0, 3.0], index=idx)
    out, v = at_level(s, "dataset", "zipf")
    assert v == "zipf" and list(out) == [1.0, 3.0] and list(out.index) == [0.5, 2.0]
    out, v = at_level(s, "epsilon", "max")
    assert v == 2.0 and list(out) == [3.0]


def test_method_groups_are_asked_of_the_method_records():
    """The groups a claim row names come from each method's record (Table 1's sum-to-one column),
    and equal arXiv §4.3's grouping of the twelve methods of the figures."""
    from ldpopt import methods
    from ldpopt.experiments.claims.table import GROUPS, METHODS

    assert set(GROUPS["non-norm"]) == {"base", "base-pos", "post-pos", "base-cut", "power"}
    assert set(GROUPS["norm-based"]) == {"norm", "norm-mul", "norm-sub", "mle-apx", "norm-cut", "norm-hyb", "power-ns"}
    assert set(GROUPS["non-norm"]) | set(GROUPS["norm-based"]) == set(METHODS) and len(METHODS) == 12
    assert all(methods.get(m).sums_to_one == "no" for m in GROUPS["non-norm"] if m != "post-pos")
