"""Consistent marginals as one ldpopt :class:`~ldpopt.problems.Problem` over the concatenated vector.

Notes: docs/notes/multi.md, "ldpopt.multi.problem"."""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate
from ..problems import LinearEquality, NonNegative, PartitionTotals, Problem, Simplex, SumTo
from .marginals import MarginalEstimates

__all__ = ["OBJECTIVES", "certify", "consistency_constraints", "consistency_problem"]

OBJECTIVES = ("cls", "weighted", "likelihood")


def consistency_constraints(marginals) -> list:
    """The constraint list of the module notes for a :class:`~.marginals.MarginalSet`.

    Parameters
    ----------
    marginals : MarginalSet
        The layout.

    Returns
    -------
    list
        ``[Simplex()]`` for one marginal; else NonNegative, SumTo(m), PartitionTotals and (when
        marginals share attributes) the ``"shared"`` LinearEquality. The constraint objects are made
        once per marginal set and shared by every list returned for it (:meth:`MarginalSet.derived`:
        they depend on the layout alone; the 219 groups of the 3-way marginals over 12 binary
        attributes took 4 ms to state, a tenth of the whole solve); the list is new each call.

    Examples
    --------
    >>> from ldpopt.multi import MarginalSet, consistency_constraints
    >>> [type(c).__name__ for c in consistency_constraints(MarginalSet((2, 3, 2), [(0, 1), (1, 2)]))]
    ['NonNegative', 'SumTo', 'PartitionTotals', 'LinearEquality']
    """
    return list(marginals.derived("consistency", _consistency_constraints))


def _consistency_constraints(marginals) -> tuple:
    """The constraints of :func:`consistency_constraints`, made (once per marginal set)."""
    if marginals.m == 1:
        return (Simplex(),)
    groups = marginals.totals_groups()
    first = {k: groups[k] for k in list(groups)[:-1]}
    cons = [NonNegative(), SumTo(float(marginals.m)), PartitionTotals(first, {k: 1.0 for k in first})]
    A = marginals.agreement()
    if A.shape[0]:
        cons.append(LinearEquality(A, name="shared"))
    return tuple(cons)


def _vector_estimate(est: MarginalEstimates) -> Estimate:
    """An :class:`Estimate` whose f̃ is the concatenated f̃_i (what ``cls`` and ``weighted`` read).
    Its p, q: the marginals' own when they share them; otherwise ones under which every f̃ entry
    implies counts in [0, n] and p ≤ 1 (q = s·max(−min f̃, 0), p = q + s, s = 1/(max(−min f̃, 0) + max(max f̃, 1))),
    used only through the solver's unit, which is passed explicitly (:func:`_scale`)."""
    f = est.f_tilde
    pq = {(e.p, e.q) for e in est.estimates}
    if len(pq) == 1:
        p, q = pq.pop()
    else:
        lo, hi = float(f.min()), float(f.max())
        s = 1.0 / ((max(-lo, 0.0) + max(hi, 1.0)) * (1 + 1e-12))
        q = s * max(-lo, 0.0)
        p = q + s
    return Estimate.from_frequencies(f, est.n, est.epsilon, p, q, oracle="marginals", protocol=est.protocol)


def _scale(est: MarginalEstimates) -> float:
    """The solver's unit, :func:`ldpopt.problems.objectives.base.unit` (as ``default_scale``) of σ the
    root-mean of the marginals' σ_i² (Eq. 7) and d the vector's length."""
    from ..problems.objectives.base import unit

    return unit(float(np.sqrt(np.mean(est.sigma2))), est.marginals.size)


def consistency_problem(est: MarginalEstimates, objective: str = "cls") -> Problem:
    """The consistency problem of ``est`` (module notes) as an ldpopt :class:`Problem`.

    The consistent-marginals goal of CALM (Zhang et al. CCS 2018) and PriView (Qardaji et al.
    SIGMOD 2014 §4.3), closest to f̃ in the sense of ``objective``.

    Parameters
    ----------
    est : MarginalEstimates
        The unbiased estimates.
    objective : {"cls", "weighted", "likelihood"}, default "cls"
        See the module notes; ``"likelihood"`` needs GRR reports with one (p, q).

    Returns
    -------
    Problem

    Raises
    ------
    TypeError
        ``est`` is not a MarginalEstimates.
    ValueError
        ``objective`` unknown, or ``"likelihood"`` without GRR reports of one (p, q).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
    >>> sol = multi.consistency_problem(est).solve()
    >>> sol.status, sol.f[:4].round(3)
    ('optimal', array([0.235, 0.091, 0.172, 0.502]))
    """
    if not isinstance(est, MarginalEstimates):
        raise TypeError(f"est must be an ldpopt.multi.MarginalEstimates, got {type(est).__name__}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    cons = consistency_constraints(est.marginals)
    if objective == "likelihood":
        pq = {(e.p, e.q) for e in est.estimates}
        if any(e.oracle != "grr" for e in est.estimates) or len(pq) != 1:
            raise ValueError("objective='likelihood' needs GRR reports with one (p, q) for every marginal "
                             "(the same oracle on marginals of equal size); use 'weighted' otherwise")
        p, q = pq.pop()
        counts = np.concatenate([e.counts for e in est.estimates])
        vec = Estimate.from_counts(counts, round(float(counts.sum())), est.epsilon, p, q, oracle="grr")
        return Problem(vec, "multinomial", cons)
    vec = _vector_estimate(est)
    if objective == "cls":
        return Problem(vec, "cls", cons, scale=_scale(est))
    return Problem(vec, "posterior", cons, mean=vec.f_tilde, variance=est.sigma2, scale=_scale(est))


def certify(est: MarginalEstimates, f, objective: str = "weighted"):
    r"""ldpopt's solver-free certificate (:func:`ldpopt.problems.certificate`) of a point ``f`` — e.g.
    :func:`~.calm_consistency.calm_consistency`'s — for the consistency problem of ``est``: its
    feasibility, duality gap and a bound on :math:`\lVert f - f^* \rVert_∞` (multipliers recovered from f).

    Parameters
    ----------
    est : MarginalEstimates
        The unbiased estimates.
    f : array_like, shape (marginals.size,)
        The point to certify.
    objective : {"cls", "weighted", "likelihood"}, default "weighted"
        As in :func:`consistency_problem`.

    Returns
    -------
    Certificate
        :func:`ldpopt.problems.certificate`'s result.

    Raises
    ------
    ValueError
        ``f`` of the wrong length, or a bad ``objective``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> data = multi.chain_network(5000, 3, rng=0)
    >>> est = multi.calm(data.domains, 1.0).simulate(data, rng=0)
    >>> cert = multi.certify(est, multi.calm_consistency(est).f)
    >>> bool(cert.primal_violation < 1e-9), bool(cert.distance_linf < 0.01)
    (True, True)
    """
    from ..problems import certificate

    pr = consistency_problem(est, objective)
    f = np.asarray(f, dtype=np.float64)
    if f.shape != (est.marginals.size,):
        raise ValueError(f"f must have length {est.marginals.size}, got shape {f.shape}")
    return certificate(pr.objective, pr.constraints, pr.estimate, f)
