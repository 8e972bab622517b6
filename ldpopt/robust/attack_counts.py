"""The support counts of fake reports without crafting them (exact in law), and poisoned estimates.

:func:`fake_counts` draws the column sums of m fake reports of :mod:`.attacks` directly, at a cost
independent of m·d for most oracles, with the joint law of ``oracle.aggregate(craft_reports(...))``
(tests/test_robust_attacks.py compares means and covariances of both paths):

* input poisoning: the fake users run the honest client, so their counts are
  ``oracle.sample_counts`` of a Multinomial(m, uniform on T) histogram (the oracle's own exact path);
* GRR: a Multinomial(m, uniform on T) on the targets;
* OUE / SUE: m on every target; on the d − r others the column sums of m uniform l-subsets, drawn
  exactly by Subset Selection's sampler (``_subset_counts.sample_subset_counts`` with λ = 0);
* OLH / BLH, under the random-function law that ``OLH.sample_counts`` also assumes: a key's hashes
  of the r targets are r iid uniform buckets, so the best bucket size K* among C keys has
  Pr[K* ≤ k] = Pr[M ≤ k]^C with Pr[M ≤ k] = r!·g^−r·[x^r](Σ_{j≤k} x^j/j!)^g (balls in bins); the
  bucket rule does not look at target labels, so given K* = k the supported targets are a uniform
  k-subset of T; the key's hashes of non-targets are independent of its target hashes, so each
  non-target is supported with probability 1/g independently: Binomial(m, 1/g) each;
* HR: a Multinomial(m, uniform on the best outputs) histogram times their supports;
* SS: uniform subsets, as for OUE, on T (r ≥ k) or on the non-targets (r < k);
* APA (OUE/SUE): :func:`.apa.apa_counts`.
"""

from __future__ import annotations

import numpy as np

from .._validation import _check_int, as_generator
from ..estimate import Estimate
from ..oracles.base import FrequencyOracle
from ..oracles.hashing import OLH
from ..oracles.subset import SS
from ._draws import _subset_sums, best_bucket_pmf
from .attacks import (
    DEFAULT_CANDIDATES,
    check_attack,
    check_targets,
    craft_reports,
    fake_user_count,
    hr_best_outputs,
    padding_ones,
)

__all__ = ["best_bucket_pmf", "fake_counts", "poisoned_estimate"]

def fake_counts(oracle: FrequencyOracle, attack: str, targets, m: int, rng,
                candidates: int = DEFAULT_CANDIDATES) -> np.ndarray:
    """Support counts (int64, length d) of m fake users' reports, exact in law (module docstring)."""
    attack = check_attack(attack)
    t = check_targets(targets, oracle.d)
    m = _check_int(m, "m", 0)
    gen = as_generator(rng)
    d, r, name = oracle.d, t.size, oracle.name
    out = np.zeros(d, dtype=np.int64)
    if m == 0:
        return out
    others = np.setdiff1d(np.arange(d, dtype=np.int64), t)
    if attack == "apa":
        from .apa import apa_counts
        return apa_counts(oracle, t, m, gen)
    if attack == "input":
        hist = np.zeros(d, dtype=np.int64)
        hist[t] = gen.multinomial(m, np.full(r, 1.0 / r))
        return oracle.sample_counts(hist, gen)
    if name == "grr":
        out[t] = gen.multinomial(m, np.full(r, 1.0 / r))
    elif name in ("oue", "sue"):
        out[t] = m
        out[others] = _subset_sums(gen, others.size, min(padding_ones(oracle, r), others.size), m)
    elif name in ("olh", "blh"):
        assert isinstance(oracle, OLH)  # BLH is an OLH
        per_k = gen.multinomial(m, best_bucket_pmf(r, oracle.g, _check_int(candidates, "candidates", 1)))
        for size in np.flatnonzero(per_k):  # reports supporting `size` targets
            out[t] += _subset_sums(gen, r, int(size), int(per_k[size]))
        out[others] = gen.binomial(m, 1.0 / oracle.g, size=others.size)
    elif name == "hr":
        best, _ = hr_best_outputs(oracle, t)
        hist = gen.multinomial(m, np.full(best.size, 1.0 / best.size))
        out = hist @ oracle.support_matrix(best).astype(np.int64)
    elif name == "ss":
        assert isinstance(oracle, SS)
        k = oracle.k
        if r >= k:
            out[t] = _subset_sums(gen, r, k, m)
        else:
            out[t] = m
            out[others] = _subset_sums(gen, others.size, k - r, m)
    else:
        raise ValueError(f"no maximal gain attack for oracle {name!r}")
    return out


def poisoned_estimate(oracle: FrequencyOracle, true_counts, attack: str, targets, beta: float, rng,
                      exact: bool = False, candidates: int = DEFAULT_CANDIDATES) -> Estimate:
    """The oracle's estimate from n genuine users (histogram ``true_counts``) plus m =
    round(βn/(1 − β)) fake users running ``attack`` on ``targets``; N = n + m users in all.

    ``exact=True`` runs the real paths (``oracle.simulate(..., exact=True)`` for the genuine users,
    :func:`~.attacks.craft_reports` then ``oracle.aggregate`` for the fake ones); ``exact=False`` the
    fast paths (``oracle.sample_counts`` and :func:`fake_counts`), the same law. ``Estimate.meta``
    records the attack, β, m and T.
    """
    gen = as_generator(rng)
    tc = oracle._check_true_counts(true_counts)
    n = int(tc.sum())
    m = fake_user_count(n, beta)
    t = check_targets(targets, oracle.d)
    if exact:
        genuine = oracle.simulate(tc, gen, exact=True).counts.astype(np.int64)
        fake = (oracle.aggregate(craft_reports(oracle, attack, t, m, gen, candidates)) if m
                else np.zeros(oracle.d, dtype=np.int64))
    else:
        genuine = oracle.sample_counts(tc, gen)
        fake = fake_counts(oracle, attack, t, m, gen, candidates)
    return oracle.estimate(genuine + fake, n + m, attack=check_attack(attack), beta=float(beta),
                           fake_users=m, targets=t.tolist())
