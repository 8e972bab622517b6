"""CALM's post-processing: consistency between marginals, then non-negativity, iterated.

Notes: docs/notes/multi.md, "ldpopt.multi.calm_consistency"."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..methods.normalize import project_simplex
from .marginals import MarginalEstimates, MarginalSet

__all__ = ["ConsistentMarginals", "calm_consistency", "consistency_step", "disagreement"]


@dataclass(frozen=True, eq=False)
class ConsistentMarginals:
    """The result of :func:`calm_consistency`: ``f`` (the concatenated marginals), ``rounds``,
    ``max_negative`` (largest :math:`-f_v`, 0 if none), ``max_disagreement`` (largest :math:`|A f|` over the shared
    rows and :math:`|Σ f_i - 1|`), ``converged`` and ``cpu_time`` (seconds, ``time.process_time``).

    Parameters
    ----------
    f : ndarray
        The concatenated marginals.
    marginals : MarginalSet
        Their layout.
    rounds : int
        Non-negativity rounds run.
    max_negative : float
        Largest :math:`−f_v`, 0 if none.
    max_disagreement : float
        Largest :math:`|A f|` and :math:`|Σ f_i - 1|`.
    converged : bool
        Whether no cell is below −tol.
    cpu_time : float
        Seconds of CPU.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
    >>> res = multi.calm_consistency(est)
    >>> res.converged, res.max_negative
    (True, 0.0)
    """

    f: np.ndarray
    marginals: MarginalSet
    rounds: int
    max_negative: float
    max_disagreement: float
    converged: bool
    cpu_time: float

    def split(self) -> list[np.ndarray]:
        """``f`` cut into one array per marginal (:meth:`MarginalSet.split`).

        Returns
        -------
        list of ndarray

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import multi
        >>> data = multi.chain_network(5000, 3, rng=0)
        >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
        >>> multi.calm_consistency(est).split()[0].round(3)
        array([0.235, 0.091, 0.172, 0.502])
        """
        return self.marginals.split(self.f)


def _plan(ms: MarginalSet, var: np.ndarray):
    """Per shared set S: (size of S, [(owner block, projection, r_i, w_i normalised)])."""
    out = []
    for s, owners in ms.shared():
        ssize = int(np.prod([ms.domains[j] for j in s]))
        r = np.array([ms.sizes[i] / ssize for i in owners])
        w = 1.0 / (var[owners] * r)
        w /= w.sum()
        out.append((ssize, [(ms.block(i), ms.projection(i, s), ri, wi) for i, ri, wi in zip(owners, r, w)]))
    return out


def consistency_step(f: np.ndarray, plan) -> np.ndarray:
    """Step 1 of the module notes on the concatenated vector f (a new array)."""
    f = f.copy()
    for ssize, owners in plan:  # one pass per shared set, vectorised over its cells
        proj = [np.bincount(p, weights=f[b], minlength=ssize) for b, p, _, _ in owners]
        target = sum(w * t for (_, _, _, w), t in zip(owners, proj))
        for (b, p, r, _), t in zip(owners, proj):
            f[b] += (target - t)[p] / r
    return f


def disagreement(f: np.ndarray, ms: MarginalSet) -> float:
    """max over shared rows |A f| and over marginals |Σ f_i − 1|."""
    A = ms.agreement()
    rows = float(np.max(np.abs(A @ f))) if A.shape[0] else 0.0
    return max(rows, max(abs(float(np.sum(x)) - 1.0) for x in ms.split(f)))


def calm_consistency(est: MarginalEstimates, max_rounds: int = 1000, tol: float = 1e-12) -> ConsistentMarginals:
    """CALM's consistency and non-negativity steps on ``est``, iterated (module notes).

    Zhang, Wang, Li, He & Chen, CALM, CCS 2018, §4, with PriView's consistency step (Qardaji, Yang &
    Li, SIGMOD 2014, §4.3). Each marginal's totals are set to one first (a choice).

    Parameters
    ----------
    est : MarginalEstimates
        The unbiased estimates.
    max_rounds : int, default 1000
        Most rounds of non-negativity then consistency.
    tol : float, default 1e-12
        Stop once no cell is below −tol after a consistency step.

    Returns
    -------
    ConsistentMarginals

    Raises
    ------
    TypeError
        ``est`` is not a MarginalEstimates.
    ValueError
        ``max_rounds < 1`` or ``tol`` negative or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
    >>> res = multi.calm_consistency(est)
    >>> res.rounds, bool(res.max_disagreement < 1e-9)
    (0, True)
    """
    if not isinstance(est, MarginalEstimates):
        raise TypeError(f"est must be an ldpopt.multi.MarginalEstimates, got {type(est).__name__}")
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
        raise ValueError(f"max_rounds must be an integer >= 1, got {max_rounds!r}")
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be finite and >= 0, got {tol!r}")
    c0 = time.process_time()
    ms = est.marginals
    var = np.array([e.sigma2 for e in est.estimates])
    plan = _plan(ms, var)
    blocks = [ms.block(i) for i in range(ms.m)]
    f = est.f_tilde.copy()
    for b in blocks:  # totals to one first, so that step 1 keeps them (a choice; CALM is silent)
        f[b] = f[b] + (1.0 - float(np.sum(f[b]))) / (b.stop - b.start)
    f = consistency_step(f, plan)
    rounds, converged = 0, False
    while rounds < max_rounds:
        if float(np.min(f)) >= -tol:
            converged = True
            break
        for b in blocks:
            f[b] = project_simplex(f[b], 1.0)
        f = consistency_step(f, plan)
        rounds += 1
    neg = max(0.0, -float(np.min(f)))
    return ConsistentMarginals(f, ms, rounds, neg, disagreement(f, ms), converged, time.process_time() - c0)
