"""The large-d route of ``ldpopt verify`` (issue 11 item 4: d = 10⁷ in seconds, no solver): above the
solver limit every equivalence is decided by the certificate alone (no cvxpy solve), and the work it
saves — one simulation, one EM and one Power per instance, the compiled simplex and the separable's
lower-bound terms shared between certificates, the true histogram rounded in O(d) — changes no number.

References: a monkeypatched ``cvxpy.Problem.solve`` that raises (any solve on the route fails the
test); uncached recomputation (fresh instance, fresh separable, fresh certificate) for every cached
path; the stable-argsort largest-remainder rounding for the O(d) one.
"""

from __future__ import annotations

import json
import sys

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import verify
from ldpopt.methods import bayes, em, mle, normalize
from ldpopt.problems.check.certificate import certificate, certify, recover_multipliers
from ldpopt.problems.objectives.builtins import make_objective
from ldpopt.problems.objectives.separable import separable_for
from ldpopt.problems.dual.structure import compile_constraints
from ldpopt.verify import equivalences as claims
from ldpopt.verify import instances


def _no_solve(monkeypatch):
    # a cvxpy solve in this process, or its compilation for a solver run in the worker's child (the
    # compilation stays here: what a patch in this process can see)
    def boom(self, *args, **kwargs):
        raise RuntimeError("cvxpy solve on the certificate-only route")

    monkeypatch.setattr(cp.Problem, "solve", boom)
    monkeypatch.setattr(cp.Problem, "get_problem_data", boom)


def test_above_the_solver_limit_every_equivalence_is_refereed_by_the_certificate_without_cvxpy(monkeypatch):
    """d = 5000 > SOLVER_MAX_D takes the d = 10⁷ route (default solver options): no cvxpy solve at all."""
    _no_solve(monkeypatch)
    d = verify.instances.SOLVER_MAX_D + 3000
    df = verify.run(oracles=["oue", "grr"], epsilons=[1.0], ns=[10**4], ds=[d], seeds=[0], mc_n=10**4)
    eq = df[df["kind"] == "equivalence"]
    assert set(eq["referee"]) == {"certificate"} and set(eq["verdict"]) == {"holds"}
    assert len(eq) == 2 * len(verify.EQUIVALENCES) and set(df["d"]) == {d}
    # the Monte-Carlo claims cannot run there and say why, at the d asked for
    mc = df[df["referee"] == "monte-carlo"]
    assert len(mc) and set(mc["verdict"]) == {"not refereed"} and mc["why"].str.contains(f"asked d = {d}").all()
    assert verify.report.exit_code(df) == 0


def test_the_patch_bites_where_a_solver_referee_runs(monkeypatch):
    """Control for the test above: at small d the same patch turns the solver rows into 'not refereed'."""
    _no_solve(monkeypatch)
    df = verify.run(oracles=["oue"], epsilons=[1.0], ns=[10**4], ds=[50], seeds=[0], mc=False)
    solver_rows = df[(df["kind"] == "equivalence") & (df["referee"] != "certificate")]
    assert len(solver_rows) and set(solver_rows["verdict"]) == {"not refereed"}
    assert solver_rows["why"].str.contains("certificate-only route").all()


def test_shared_instances_and_outputs_change_no_row():
    """run() reuses the n = ns[0] instance and its closed-form outputs in the 'CLS ≈ MLE' rows and one
    separable per objective across certificates; every number equals a fresh, uncached computation."""
    d, n, eps = 6000, 10**4, 2.0
    df = verify.run(oracles=["olh"], epsilons=[eps], ns=[n], ds=[d], seeds=[0], mc=False)
    est = verify.instance("olh", eps, n, d, 0)
    fresh = claims.distance_rows(est, 0)[0]
    row = df[df["claim"] == "cls~mle"].iloc[0]
    assert row["value"] == fresh.value
    assert json.loads(row["metrics"])["l1_cls_exact_mle"] == fresh.metrics["l1_cls_exact_mle"]
    for claim, closed, objective in (("norm-sub=cls", normalize.norm_sub, "cls"),
                                     ("mle-apx=weighted-mle", mle.mle_apx, "weighted-mle"),
                                     ("mle-apx-paper=weighted-mle", mle.mle_apx_paper, "weighted-mle"),
                                     ("em=likelihood", em.em, em.likelihood_for(est))):
        cert = certificate(objective, None, est, closed(est))  # fresh separable, structure, multipliers
        got = df[(df["claim"] == claim) & (df["referee"] == "certificate")].iloc[0]
        assert got["value"] == cert.distance_linf and got["tolerance"] == cert.distance_rounding, claim
        m = json.loads(got["metrics"])
        assert m["gap"] == cert.gap and m["primal_violation"] == cert.primal_violation


def test_power_ns_is_the_projection_of_the_power_mean_the_claim_reuses():
    """equivalence_rows projects the Power mean it already computed instead of calling power_ns (which
    would run Power again): the same array, bit for bit, as bayes.power_ns."""
    est = verify.instance("oue", 1.0, 10**5, 3000, 0)
    mean = bayes.power(est, s=1.1)
    np.testing.assert_array_equal(normalize.project_simplex(mean, 1.0), bayes.power_ns(est, s=1.1))


def test_certificate_with_a_shared_separable_and_no_multipliers_matches_the_full_certificate():
    """One separable certifies several points (its lower-bound terms computed once); with_multipliers=False
    leaves the numbers unchanged."""
    est = verify.instance("sue", 1.0, 10**4, 20_000, 1)
    sep = separable_for(make_objective("weighted-mle"), est)
    st = compile_constraints(None, est.d)
    fields = ("distance_linf", "distance_rounding", "gap", "gap_floor", "primal_violation", "dual_violation",
              "complementarity", "stationarity", "relative_gap", "primal_value", "dual_value")
    for f in (mle.mle_apx(est), mle.mle_apx_paper(est), mle.mle_apx(est) * (1 + 1e-6)):
        lam, y = recover_multipliers(sep, st, f)
        fast = certify(sep, st, f, lam, y, None, None, with_multipliers=False)
        ref = certificate("weighted-mle", None, est, f)
        for k in fields:
            a, b = getattr(fast, k), getattr(ref, k)
            assert a == b or (np.isnan(a) and np.isnan(b)), k
        assert fast.multipliers == {} and set(ref.multipliers)
    assert sep._at_lower[0] is st


@pytest.mark.parametrize("seed", range(5))
def test_o_d_rounding_equals_the_stable_sort(seed):
    """Largest-remainder rounding by a partition: the same counts as +1 on the stable argsort of
    −remainder (ties to the smaller index), including many exact ties."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        d = int(rng.integers(1, 400))
        w = rng.random(d) if rng.random() < 0.5 else np.round(rng.random(d) * 3) + 1.0
        n = int(rng.integers(1, 10**6))
        x = n * w / w.sum()
        ref = np.floor(x).astype(np.int64)
        short = n - int(ref.sum())
        ref[np.argsort(-(x - ref), kind="stable")[:short]] += 1
        got = instances._round_counts(w, n)
        np.testing.assert_array_equal(got, ref)
        assert got.sum() == n


_FAULTS = """
import resource, sys
import numpy as np
from ldpopt._malloc import keep_freed_memory
on = sys.argv[1] == "1" and keep_freed_memory()
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    a = np.empty(4 * 10**6); a[:] = 1.0; b = a * 2.0; del a, b
print(int(on), resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc mallopt")
def test_keep_freed_memory_stops_the_page_faults_of_repeated_large_temporaries():
    """Each 32 MB temporary is a fresh mmap (faulted in page by page) unless freed blocks are kept: measured in
    a child process (the setting is process-wide), the same loop with and without it."""
    import os
    import subprocess
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    out = {}
    for flag in ("0", "1"):
        res = subprocess.run([sys.executable, "-c", _FAULTS, flag], capture_output=True, text=True, env=env,
                             check=True)
        on, faults = map(int, res.stdout.split())
        out[flag] = (on, faults)
    assert out["1"][0] == 1, "mallopt did not take effect on Linux"
    assert out["0"][1] > 5000  # 40 fresh 32 MB mappings (fewer faults than pages with huge pages)
    assert out["1"][1] < out["0"][1] / 5
