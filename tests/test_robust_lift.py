"""The common-lift recovery (ldpopt.robust.lift): its suspects are the attacked values under the maximal
gain attack and nothing on genuine data; its closed form is its Problem (ldpopt's check) and an
independent cvxpy projection; it beats LDPRecover and RSN on MSE and target gain under MGA; its
argument errors; ``postprocess --robust lift`` is the API."""

from __future__ import annotations

import json

import cvxpy as cp
import numpy as np
import pytest

from _cli import ldpopt
from ldpopt.robust.lift import lift_target
from ldpopt import oracles, robust

D, N, BETA = 256, 200_000, 0.05
TARGETS = [17, 60, 99, 130, 171, 200, 222, 250]


def _zipf(d=D, n=N, seed=0):
    w = np.arange(1, d + 1) ** -1.5
    return np.random.default_rng(seed).multinomial(n, w / w.sum())


def _est(name, attack="mga", seed=1, beta=BETA, eps=1.0):
    return robust.poisoned_estimate(oracles.get(name, epsilon=eps, d=D), _zipf(), attack, TARGETS, beta, seed)


@pytest.mark.parametrize("name", ["grr", "oue", "olh"])
@pytest.mark.parametrize("seed", [1, 2])
def test_suspects_are_the_targets_under_mga(name, seed):
    # at ε = 0.5 no genuine value of this population sits at the attack's level (at ε = 1 under OLH
    # value 1 does and joins the suspects: the limit docs/poisoning.md states)
    np.testing.assert_array_equal(robust.lift_suspects(_est(name, seed=seed, eps=0.5), BETA), TARGETS)


@pytest.mark.parametrize("name", ["grr", "oue", "olh"])
def test_no_suspects_without_output_poisoning(name):
    # genuine reports only (β = 0 users faked, the recovery told β = 0.05), and input poisoning
    for seed in (3, 4, 5):
        assert robust.lift_suspects(_est(name, seed=seed, beta=0.0), BETA).size == 0
        assert robust.lift_suspects(_est(name, "input", seed=seed), BETA).size == 0


@pytest.mark.parametrize("name,attack", [("grr", "mga"), ("oue", "mga"), ("olh", "input")])
def test_closed_form_is_its_problem_and_a_cvxpy_projection(name, attack):
    est = _est(name, attack)
    closed = robust.lift(est, BETA)
    sol = robust.recover(est, "lift", beta=BETA)
    assert sol.status == "optimal" and sol.checks.max_violation <= 1e-9
    np.testing.assert_allclose(closed, sol.f, atol=1e-8)
    t = lift_target(est, BETA)
    f = cp.Variable(D)
    cp.Problem(cp.Minimize(D ** 2 * cp.sum_squares(f - t)), [f >= 0, cp.sum(f) == 1]).solve(solver="CLARABEL")
    np.testing.assert_allclose(closed, f.value, atol=1e-5)


def test_target_without_suspects_is_ldprecover():
    # no suspects: (f̃ − βy₀)/(1 − β), whose projection is LDPRecover's (input poisoning is left alone)
    est = _est("oue", "input")
    assert robust.lift_suspects(est, BETA).size == 0
    np.testing.assert_allclose(robust.lift(est, BETA), robust.ldprecover(est, BETA), atol=1e-12)


@pytest.mark.parametrize("name", ["grr", "oue", "olh"])
def test_beats_ldprecover_and_rsn_under_mga(name):
    est = _est(name)
    f = _zipf() / N
    out = {"lift": robust.lift(est, BETA), "ldprecover": robust.ldprecover(est, BETA), "rsn": robust.rsn(est)}
    mse = {k: ((v - f) ** 2).mean() for k, v in out.items()}
    gain = {k: abs(v[TARGETS].sum() - f[TARGETS].sum()) for k, v in out.items()}
    assert mse["lift"] < min(mse["ldprecover"], mse["rsn"])
    assert gain["lift"] < 0.2 * min(gain["ldprecover"], gain["rsn"])


def test_lift_arguments_are_named():
    est = _est("oue")
    with pytest.raises(ValueError, match="z"):
        robust.lift_suspects(est, BETA, z=-1)
    with pytest.raises(ValueError, match="min_size"):
        robust.lift_suspects(est, BETA, min_size=1)
    with pytest.raises(ValueError, match="beta"):
        robust.lift(est, 1.5)
    with pytest.raises(ValueError, match="suspects"):
        robust.lift(est, BETA, [D])
    with pytest.raises(ValueError, match="beta"):
        robust.recover(est, "lift")


def test_cli_robust_lift_is_the_api(tmp_path):
    est = _est("oue")
    path = tmp_path / "counts.csv"
    path.write_text("value,count\n" + "".join(f"{v},{int(c)}\n" for v, c in enumerate(est.counts)))
    proc = ldpopt("postprocess", "--counts", path, "--oracle", "oue", "--epsilon", 1, "--n", est.n,
                  "--method", "base", "--robust", "lift", "--beta", BETA, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    np.testing.assert_allclose(doc["data"]["robust_lift"], robust.lift(est, BETA), atol=1e-12)
    assert doc["metadata"]["robust"]["suspects"] == [str(t) for t in TARGETS]
