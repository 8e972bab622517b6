"""The oracle conformance suite (``ldpopt.conformance.oracles.check_oracle``) over every registered
oracle, and each of its checks shown to catch a planted fault.

Every oracle is checked at d = 5 (ε = 1), the sketch oracles with a small family (k = 4 hashes into
m = 8 buckets; RAPPOR 8 bits in 2 cohorts) so that their outputs enumerate; 2,000 draws per path,
family-wise false-alarm rate 1e-4 per statistical check, fixed seed.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import kernels, oracles
from ldpopt.oracles import GRR, OUE, SS
from ldpopt.conformance.oracles import CHECKS, check_oracle

# constructor parameters small enough to enumerate a sketch's outputs (every other oracle: its defaults)
_SMALL = {"k": 4, "m": 8, "num_bits": 8, "cohorts": 2}


def _small(name: str):
    cls = oracles.oracle_class(name)
    params = {k: v for k, v in _SMALL.items() if k in cls.structural}
    return oracles.get(name, 1.0, 5, **params)


@pytest.mark.parametrize("name", oracles.available(sketches=True, longitudinal=True))
def test_every_registered_oracle_conforms(name):
    oracle = _small(name)
    report = check_oracle(oracle)
    # the kernel check asks the oracle whether it counts with the kernels (dBitFlipPM: numpy only)
    kernel = kernels.numba_available() and "cpu" in oracle.kernel_devices
    want = set(CHECKS) - ({"kernel"} if not kernel else set())
    assert set(report.passed) == want, report.skipped


# -- each check catches a planted fault ---------------------------------------------------------------
class _WrongQ(GRR):
    """Claims a q 10 % too high: its p/q no longer describe its reports."""

    name = "wrong-q-grr"

    @property
    def q(self):
        return 1.1 * super().q


class _IndependentGRR(GRR):
    """A fast path with GRR's per-value marginals but independent counts (Σ c = n lost)."""

    name = "independent-grr"

    def sample_counts(self, true_counts, rng):
        tc = self._check_true_counts(true_counts)
        return rng.binomial(tc, self.p) + rng.binomial(tc.sum() - tc, self.q)

    def sample_counts_batch(self, true_counts, size, rng):
        return np.stack([self.sample_counts(true_counts, rng) for _ in range(size)])


class _LeakyOUE(OUE):
    """Its output distribution puts the own bit's probability at 0.99: ε is exceeded."""

    name = "leaky-oue"

    def output_distribution(self):
        d = self.d
        bits = ((np.arange(1 << d)[:, None] >> np.arange(d)) & 1).astype(bool)
        own = np.where(bits, 0.99, 0.01)
        other = np.where(bits, self.q, 1 - self.q)
        P = np.empty((d, 1 << d))
        for v in range(d):
            P[v] = own[:, v] * np.prod(np.delete(other, v, axis=1), axis=1)
        return P


class _HalfVariance(SS):
    """States half its variance."""

    name = "half-variance-ss"

    def variance(self, f, n):
        return 0.5 * super().variance(f, n)


class _BadKernel(GRR):
    """Its device="cpu" counts are off by one on value 0."""

    name = "bad-kernel-grr"

    def aggregate(self, reports, device=None):
        c = super().aggregate(reports, device="numpy")
        if device == "cpu":
            c[0] += 1
        return c


class _BadShard(OUE):
    """Reads its shard's bits back reversed per byte."""

    name = "bad-shard-oue"

    def reports_from_columns(self, columns):
        return np.ascontiguousarray(columns[0][:, ::-1])


class _BadBatch(GRR):
    """A batched fast path whose rows are one draw repeated (no variance between the rows)."""

    name = "bad-batch-grr"

    def sample_counts_batch(self, true_counts, size, rng):
        return np.repeat(self.sample_counts(true_counts, rng)[None], size, axis=0)


class _ShiftedSupports(GRR):
    """States that output y supports value y + 1: its supports do not match its p and q."""

    name = "shifted-supports-grr"

    def output_supports(self):
        return np.roll(np.eye(self.d, dtype=bool), 1, axis=1)


@pytest.mark.parametrize("oracle, check, message", [
    (_WrongQ(1.0, 5), "epsilon", "not a probability distribution"),
    (_ShiftedSupports(1.0, 5), "epsilon", "not p .v = x. and q"),
    (_LeakyOUE(1.0, 5), "epsilon", "max log"),
    (_IndependentGRR(1.0, 5), "joint_law", "fast path vs the enumerated law"),
    (_BadBatch(1.0, 5), "joint_law", "sample_counts_batch"),
    (_HalfVariance(1.0, 5), "variance", "Monte-Carlo Var"),
    (_BadShard(1.0, 9), "shards", "read back"),
])
def test_each_check_catches_a_planted_fault(oracle, check, message):
    with pytest.raises(AssertionError, match=f"{type(oracle).__name__}.*fails {check}: .*{message}"):
        check_oracle(oracle, checks=[check])
    check_oracle(oracles.get(type(oracle).__mro__[1].name, oracle.epsilon, oracle.d), checks=[check])  # the sound one passes


@pytest.mark.skipif(not kernels.numba_available(), reason="the kernel check needs Numba")
def test_the_kernel_check_catches_counts_that_differ():
    with pytest.raises(AssertionError, match="fails kernel: aggregate.device='cpu'. differs"):
        check_oracle(_BadKernel(1.0, 5), checks=["kernel"])


def test_a_missing_capability_is_skipped_with_its_reason():
    big = oracles.get("oue", 1.0, 40)  # 2^40 outputs: no enumeration
    report = check_oracle(big, checks=["epsilon"])
    assert report.passed == [] and "too large" in report.skipped["epsilon"]


@pytest.mark.parametrize("kwargs, message", [
    ({"checks": ["joint-law"]}, "checks must be among"),
    ({"reps": 50}, "reps must be an integer >= 200"),
    ({"alpha": 0.0}, "alpha must lie in"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        check_oracle(oracles.get("grr", 1.0, 5), **kwargs)
    with pytest.raises(TypeError, match="oracle must be a FrequencyOracle"):
        check_oracle("grr")
