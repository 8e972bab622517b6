"""Smoke test of the "methods", "solvers" and "bayes" benches (``--quick``: tiny d, in-process).

No timing is asserted (speed targets live in the benchmarks, not in tests). What is checked: the
result files are written, every solve reports ``optimal`` and its distance to the closed form is
within the tolerance ``ldpopt.verify`` derives from the solver's stopping tolerances, every method's
output is finite, the simplex methods sum to 1, and the fast Power/Calibrate agree with the O(n·d)
references on the subset to 1e-10 relative (both are exact sums in float64; observed ~1e-14).
"""

from __future__ import annotations

import json

import pytest

import ldpopt
from _benchmarks import bench_module


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    assert bench_module("run").main(["--quick", "--only", "methods,solvers,bayes", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("bench", ["methods", "solvers", "bayes"])
def test_files_written(results, bench):
    """Each bench wrote NAME.json with the keys of the harness contract; the command repeats it."""
    doc = json.loads((results / f"{bench}.json").read_text())
    assert doc["command"] == f"python benchmarks/bench_{bench}.py --quick"
    assert doc["quick"] is True and doc["date"][:4].isdigit() and doc["machine"]["cores"] >= 1


def test_solvers_agree_with_closed_forms(results):
    rows = json.loads((results / "solvers.json").read_text())["rows"]
    assert {(r["objective"], r["solver"]) for r in rows} >= {("cls", "OSQP"), ("cls", "CLARABEL"),
                                                             ("weighted-mle", "CLARABEL")}
    for r in rows:
        assert r["status"] == "optimal", r
        assert r["max_abs_diff"] <= r["tol_f"], r


SIMPLEX = {"norm", "norm-sub", "norm-mul", "norm-hyb", "mle-apx", "mle-apx-paper", "mle-apx[brentq]", "em",
           "power-ns"}


def test_methods_outputs_and_references(results):
    sizes = json.loads((results / "methods.json").read_text())["sizes"]
    assert len(sizes) == 2
    for e in sizes:
        names = {r["method"] for r in e["rows"]}
        assert {"norm-sub", "mle-apx", "power", "power-ns", "calibrate", "em"} <= names
        for r in e["rows"]:
            if "finite" in r:
                assert r["finite"], r
                # a method that may leave negatives says so (MethodInfo.non_negative)
                assert r["min"] >= -1e-12 or ldpopt.methods.get(r["method"]).non_negative != "yes", r
            if r["method"] in SIMPLEX:
                assert abs(r["sum_minus_1"]) <= 1e-9, r
        for name, ref in e["reference"].items():
            assert ref["max_rel_diff"] <= 1e-10, (name, ref)


def test_bayes_long_windows_agree_with_plain_sums(results):
    """The Euler–Maclaurin path (new) and the plain windowed sums (old) give the same numbers, and
    the GRR case really takes the long-window path (σn ≥ 1000)."""
    doc = json.loads((results / "bayes.json").read_text())
    assert any(r["oracle"] == "grr" and r["S"] >= 1000 for r in doc["rows"])
    for r in doc["rows"]:
        assert r["sums_maxrel"] <= 1e-13 and r["power_maxrel"] <= 1e-9, r
    assert doc["gauss"]["maxrel"] <= 1e-6
