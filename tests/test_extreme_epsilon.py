"""Every registered method at any finite ε > 0: a finite output with the properties the registry
promises (Table 1), or a ``ValueError`` naming the method and ε. ε ≥ 710 once ended in an
``IndexError`` in the Bayesian engine (S = σn underflows to 0, and 1/(2S²) to inf), and at ε ≈ 709
EM overflowed on a subnormal q."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ldpopt import Estimate, methods, oracles
from ldpopt.methods import registry

from _cli import ldpopt, main_in_process, one_line_error

EPSILONS = (1e-3, 50.0, 709.0, 710.0, 1e6, 1e300)
F = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.1, 0.05, 0.0])
N = 1000
# the only refusals allowed, with the display name their message must carry: MLE-Apx's Eq. 13
# variance is 0 at q = 0 (OUE beyond ε ≈ 745) or p = 1 (GRR from ε ≈ 37 in float64)
REFUSES = {"mle-apx": "MLE-Apx", "mle-apx-paper": "MLE-Apx"}


def _estimate(oracle: str, eps: float) -> Estimate:
    o = oracles.get(oracle, eps, F.shape[0])
    return Estimate.from_counts(np.round(N * (o.q + (o.p - o.q) * F)), n=N, epsilon=eps, p=o.p, q=o.q,
                                oracle=oracle)


@pytest.mark.parametrize("oracle", ["oue", "grr", "sue"])
@pytest.mark.parametrize("eps", EPSILONS)
def test_every_method_works_or_names_itself_and_epsilon(oracle, eps):
    est = _estimate(oracle, eps)
    for name in sorted(registry._METHODS):
        info = registry.get(name)
        with warnings.catch_warnings():
            # numpy's overflow/invalid warnings are errors; the methods' own warnings (an MLE of s
            # at its bound, at ε = 1e-3) are messages to the user and stay warnings
            warnings.filterwarnings("error", message=".*encountered in", category=RuntimeWarning)
            try:
                f = methods.postprocess(est.as_ordered() if methods.get(name).needs_order else est, name)
            except ValueError as e:
                assert name in REFUSES, (name, eps, e)
                assert REFUSES[name] in str(e) and f"epsilon={eps!r}" in str(e), str(e)
                continue
        assert f.shape == F.shape and np.all(np.isfinite(f)), (name, eps, f)
        if info.non_negative == "yes":
            assert f.min() >= 0.0, (name, eps, f)
        if info.sums_to_one == "yes":
            assert abs(f.sum() - 1.0) <= 1e-9, (name, eps, f.sum())


@pytest.mark.parametrize("eps", [1e6, 1e300])
def test_power_at_vanishing_noise_is_the_nearest_support_count(eps):
    """S → 0: the posterior is a point mass at the support count nearest f̃·n (clipped to [1, n])."""
    est = _estimate("oue", eps)
    x = est.f_tilde * est.n
    ref = np.clip(np.rint(x), 1, est.n) / est.n
    for name in ("power", "calibrate"):
        np.testing.assert_allclose(methods.postprocess(est, name, s=1.5), ref, rtol=1e-14, atol=0)


def test_cli_extreme_epsilon(tmp_path):
    """The command line refuses, before any method runs, an ε at which the oracle's q underflows to 0
    (no estimator's variance is defined there; ``verify`` refuses it too): one line naming --epsilon,
    for every method. An ε just below that point runs. The Python API keeps answering at such ε
    (the tests above)."""
    counts = tmp_path / "c.csv"
    counts.write_text("value,count\n" + "".join(f"{v},{c}\n" for v, c in enumerate([300, 200, 150, 0])))
    args = ["postprocess", "--counts", counts, "--oracle", "oue", "--n", "650"]
    for method in ("power", "mle-apx"):
        line = one_line_error(main_in_process(*args, "--epsilon", "1e6", "--method", method))  # in this process
        assert line.startswith("ldpopt postprocess: error: --epsilon 1e+06: too large for oracle oue"), line
        assert "q = 0.0" in line, line
    ok = ldpopt(*args, "--epsilon", "50", "--method", "power")  # the real command: its stderr as the user sees it
    assert ok.returncode == 0, ok.stderr
    assert "Warning" not in ok.stderr and "Traceback" not in ok.stderr, ok.stderr
