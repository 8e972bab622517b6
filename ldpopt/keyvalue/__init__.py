"""Key–value data under LDP: PrivKV, PCKV-UE and PCKV-GRR, their papers' estimators, and consistent
key–value estimation as a checked ldpopt Problem (docs/keyvalue.md).

* data: :class:`KVData` (users' key–value sets), :func:`power_law`, :func:`ratings_like` (a
  synthetic stand-in for a rating set);
* collection (real client path ``perturb``/``collect`` and a fast path ``sample_counts`` exact in
  law; the exact ε of a report by enumeration, :func:`epsilon`): :func:`pckv_ue`, :func:`pckv_grr`
  (:class:`PCKV`), :func:`privkv` (:class:`PrivKV`);
* estimation: each protocol's ``estimate`` (the paper's), and :func:`solve_consistent` /
  :func:`consistent_problem` (frequencies and means jointly consistent, certified).
"""

from .consistent import consistent_problem, solve_consistent
from .data import KVData, power_law, ratings_like
from .exact import epsilon
from .pckv import PCKV, pckv_grr, pckv_ue
from .privkv import PrivKV, privkv
from .protocol import KVEstimate

__all__ = [
    "PCKV",
    "KVData",
    "KVEstimate",
    "PrivKV",
    "consistent_problem",
    "epsilon",
    "pckv_grr",
    "pckv_ue",
    "power_law",
    "privkv",
    "ratings_like",
    "solve_consistent",
]
