"""The prefix levels of PEM or TreeHist made consistent as one tree: a :class:`~ldpopt.problems.Problem`
with a :class:`~ldpopt.problems.Hierarchy` constraint, solved by the structured solver's tree pass
(:mod:`ldpopt.problems.dual.tree`) and checked by ldpopt's check like every Solution.

Notes: docs/notes/sketches.md, "ldpopt.heavy.consistency"."""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate
from .result import HeavyHitters
from .rounds import top_indices

__all__ = ["consistent", "level_tree"]


def level_tree(result: HeavyHitters):
    """(mean, variance, groups, root, offsets): the tree of the module notes over the levels of
    ``result`` — node values and variances in level order then the root, the Hierarchy's
    ``(parent, children)`` pairs, the root's index, each level's first node."""
    levels = result.levels
    if not levels or result.protocol not in ("pem", "treehist"):
        raise ValueError(f"result must come from pem or treehist (a prefix tree of levels), got {result.protocol!r}")
    if not levels[0].full:
        raise ValueError("the first level must estimate the whole prefix space")
    sizes = np.array([lv.candidates.size for lv in levels])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    root = int(offsets[-1])
    mean = np.concatenate([lv.f_tilde for lv in levels] + [[1.0]])
    var = np.concatenate([np.full(lv.candidates.size, lv.sigma2) for lv in levels] + [[min(lv.sigma2 for lv in levels)]])
    groups = [(root, np.arange(sizes[0], dtype=np.int64))]
    for i in range(len(levels) - 1):
        kept = np.sort(levels[i].kept)
        block = sizes[i + 1] // kept.size
        starts = offsets[i + 1] + block * np.arange(kept.size)
        groups += [(int(offsets[i] + j), np.arange(s, s + block, dtype=np.int64)) for j, s in zip(kept, starts)]
    return mean, var, groups, root, offsets


def consistent(result: HeavyHitters, k: int | None = None, solver=None):
    """(consistent result, Solution): the levels of ``result`` made consistent (module notes); the
    items are the top-``k`` (default: as many as ``result`` found) of the consistent last level."""
    import warnings

    from ..problems import Fixed, Hierarchy, NonNegative, Problem, SimplexDroppedWarning

    mean, var, groups, root, offsets = level_tree(result)
    # the Estimate only carries the domain to the Problem: p, q chosen so every f̃ is a possible value
    big = 1.0 + float(np.max(np.abs(mean)))
    delta = 1.0 / (8.0 * big)
    est = Estimate.from_frequencies(mean, result.levels[0].estimate.n, result.epsilon, 0.5 + delta, 0.5 - delta,
                                    oracle="heavy-hitter levels")
    with warnings.catch_warnings():  # the levels each sum to 1: no Σ f row is intended (the tree's root is 1)
        warnings.simplefilter("ignore", SimplexDroppedWarning)
        prob = Problem(est, "posterior", [NonNegative(), Fixed([root], [1.0]), Hierarchy(groups)], mean=mean,
                       variance=var, scale=float(np.sqrt(np.min(var))))
    sol = prob.solve(solver)
    last = result.levels[-1]
    f_last = np.asarray(sol.f)[offsets[-2]: offsets[-1]]
    want = result.items.size if k is None else int(k)
    pick = top_indices(f_last, want)
    out = result.with_frequencies(last.candidates[pick], f_last[pick], consistency=sol.status)
    return out, sol
