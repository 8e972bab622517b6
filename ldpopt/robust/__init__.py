"""Poisoned reports: attacks on the oracles' report paths (:mod:`.attacks`, :mod:`.attack_counts`),
detection (:mod:`.detect`), recovery as checked problems (:mod:`.recover`, :mod:`.lift`, :mod:`.guarded`), attacks with a chosen
support profile and the adaptive attacker against the lift (:mod:`.profile`, :mod:`.evasion`), the
search for the attack that hurts the default most (:mod:`.adversary`) and
the range an attack could move each estimate (:mod:`ldpopt.uncertainty.attack`); docs/poisoning.md.

>>> from ldpopt import oracles, robust
>>> oue = oracles.get("oue", epsilon=1.0, d=64)
>>> est = robust.poisoned_estimate(oue, [100] * 64, "mga", targets=[3, 7], beta=0.05, rng=0)
>>> est.meta["fake_users"]
337
>>> robust.recover(est, "mixture", beta=0.05, suspects=[3, 7]).status
'optimal'
"""

from .. import _deprecated
from ..uncertainty.attack import attack_interval, attack_shift
from .adversary import search_attack, search_counts
from .attack_counts import best_bucket_pmf, fake_counts, poisoned_estimate
from .attacks import craft_reports, expected_gain, fake_user_count
from .detect import genuine_size_pmf, roc, size_test, support_sizes, suspect_scores, suspects
from .evasion import evasive_shape
from .evidence import attack_evidence
from .guarded import estimate_beta, explained_beta, guarded_lift
from .lift import lift_suspects
from .profile import profile_counts, profile_rates, split_shape
from .recover import METHODS, ldprecover, lift, recover, rsn
from .ties import tie_estimate

__all__ = [
           "METHODS",
           "attack_evidence",
           "attack_interval",
           "attack_shift",
           "best_bucket_pmf",
           "craft_reports",
           "estimate_beta",
           "evasive_shape",
           "expected_gain",
           "explained_beta",
           "fake_counts",
           "fake_user_count",
           "genuine_size_pmf",
           "guarded_lift",
           "ldprecover",
           "lift",
           "lift_suspects",
           "poisoned_estimate",
           "profile_counts",
           "profile_rates",
           "recover",
           "roc",
           "rsn",
           "search_attack",
           "search_counts",
           "size_test",
           "split_shape",
           "support_sizes",
           "suspect_scores",
           "suspects",
           "tie_estimate",
]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "ATTACKS": "ldpopt.robust.attacks",
    "describe_attack": "ldpopt.robust.adversary",
    "lift_target": "ldpopt.robust.lift",
    "mean_target_support": "ldpopt.robust.attacks",
    "mixture_offset": "ldpopt.robust.recover",
    "recover_target": "ldpopt.robust.recover:ldprecover_target",
    "recovery_problem": "ldpopt.robust.recover",
    "rsn_threshold": "ldpopt.robust.recover",
    "tie_fake_users": "ldpopt.robust.ties",
})
