"""Poisoned reports: attacks on the oracles' report paths (:mod:`.attacks`, :mod:`.attack_counts`).

>>> from ldpopt import oracles, robust
>>> oue = oracles.get("oue", epsilon=1.0, d=64)
>>> est = robust.poisoned_estimate(oue, [100] * 64, "mga", targets=[3, 7], beta=0.05, rng=0)
>>> est.meta["fake_users"]
337
"""

from .attack_counts import best_bucket_pmf, fake_counts, poisoned_estimate
from .attacks import ATTACKS, craft_reports, expected_gain, fake_user_count, mean_target_support

__all__ = ["ATTACKS", "best_bucket_pmf", "craft_reports", "expected_gain", "fake_counts", "fake_user_count",
           "mean_target_support", "poisoned_estimate"]
from .recover import METHODS, ldprecover, recover, recovery_problem, rsn, rsn_threshold
from .recover import ldprecover_target as recover_target

__all__ += ["METHODS", "recover_target", "ldprecover", "recover", "recovery_problem", "rsn", "rsn_threshold"]
from .detect import genuine_size_pmf, roc, size_test, suspect_scores, suspects, support_sizes

__all__ += ["genuine_size_pmf", "roc", "size_test", "suspect_scores", "suspects", "support_sizes"]
