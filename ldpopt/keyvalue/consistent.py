"""Consistent key–value estimation as one ldpopt :class:`~ldpopt.problems.Problem` with its certificate.

Notes: docs/notes/keyvalue.md, "ldpopt.keyvalue.consistent"."""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate
from ..problems import Certificate, NonNegative, PartitionTotals, Problem, Simplex, Solution, SumTo, certificate
from .pckv import PCKV
from .privkv import PrivKV
from .protocol import KVEstimate, PairEstimate

__all__ = ["ConsistentKV", "consistent_problem", "solve_consistent"]


def _vector(z: np.ndarray, var: np.ndarray, n: int, epsilon: float, protocol: str) -> Estimate:
    """An Estimate carrying ẑ (the problem reads f̃ = ẑ, d and n); p, q chosen so every entry implies
    counts in [0, n] (the solver's unit is passed explicitly)."""
    lo, hi = float(z.min()), float(z.max())
    s = 1.0 / ((max(-lo, 0.0) + max(hi, 1.0)) * (1 + 1e-12))
    q = s * max(-lo, 0.0)
    return Estimate.from_frequencies(z, n, epsilon, q + s, q, oracle="keyvalue", protocol=protocol)


def consistent_problem(protocol, counts, n: int) -> tuple[Problem, PairEstimate]:
    """The consistent problem of the module notes for ``protocol``'s ``counts``.

    Parameters
    ----------
    protocol : PCKV or PrivKV
    counts : ndarray
        Its aggregate (``collect`` or ``sample_counts``).
    n : int
        Users.

    Returns
    -------
    (Problem, PairEstimate)
        The problem over :math:`z = (h^+, h^-, r)` and the unbiased shares it was built from.

    Raises
    ------
    TypeError
        ``protocol`` is not a PCKV or PrivKV.

    Examples
    --------
    >>> from ldpopt import keyvalue as kv
    >>> data = kv.power_law(5000, 6, rng=0)
    >>> proto = kv.pckv_ue(1.0, 6)
    >>> problem, pe = kv.consistent_problem(proto, proto.sample_counts(data, rng=1), data.n)
    >>> problem.solve().status, problem.estimate.d
    ('optimal', 13)
    """
    if not isinstance(protocol, (PCKV, PrivKV)):
        raise TypeError(f"protocol must be a PCKV or PrivKV, got {type(protocol).__name__}")
    pe = protocol.pairs(counts, n)
    d = protocol.d
    z = np.concatenate([pe.plus, pe.minus, pe.rest])
    var = np.maximum(np.concatenate([pe.var_plus, pe.var_minus, pe.var_rest]), 1e-300)
    if isinstance(protocol, PCKV):
        cons: list = [Simplex()]
    else:
        # the last key's total follows from Σ z = d (the structured solver's form, as in multi/)
        groups = {f"key{k}": np.array([k, d + k, 2 * d + k]) for k in range(d - 1)}
        cons = [NonNegative(), SumTo(float(d)), PartitionTotals(groups, dict.fromkeys(groups, 1.0))]
    scale = max(float(np.sqrt(np.mean(var))), 1.0 / z.size)
    est = _vector(z, var, int(n), protocol.epsilon, protocol.name)
    return Problem(est, "posterior", cons, mean=z, variance=var, scale=scale), pe


class ConsistentKV(KVEstimate):
    """A :class:`~.protocol.KVEstimate` from the consistent problem, with the solution and certificate."""

    solution: Solution
    certificate: Certificate

    def __init__(self, freq, mean, method, solution, certificate):
        super().__init__(freq, mean, method)
        object.__setattr__(self, "solution", solution)
        object.__setattr__(self, "certificate", certificate)


def solve_consistent(protocol, counts, n: int, solver=None) -> ConsistentKV:
    """Solve :func:`consistent_problem` and map z back to (f, m): :math:`f = ℓ(h^+ + h^-)`, :math:`m = (h^+ - h^-)/(h^+ + h^-)`
    (m = 0 where f = 0: no information; a choice), with ldpopt's certificate of the solution.

    Parameters
    ----------
    protocol : PCKV or PrivKV
    counts : ndarray
    n : int
    solver : str or None
        As for :meth:`Problem.solve` (None: ldpopt's structured solver; "CLARABEL": the referee).

    Returns
    -------
    ConsistentKV
        Frequencies, means, ``solution`` (the Problem's) and ``certificate``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import keyvalue as kv
    >>> data = kv.power_law(5000, 6, rng=0)
    >>> proto = kv.pckv_grr(1.0, 6)
    >>> res = kv.solve_consistent(proto, proto.sample_counts(data, rng=1), data.n)
    >>> bool(res.freq.min() >= 0), bool(np.abs(res.mean).max() <= 1), bool(res.certificate.relative_gap < 1e-9)
    (True, True, True)
    """
    pr, pe = consistent_problem(protocol, counts, n)
    sol = pr.solve(solver)
    cert = certificate(pr.objective, pr.constraints, pr.estimate, sol.f)
    d = protocol.d
    hp, hm = np.maximum(sol.f[:d], 0), np.maximum(sol.f[d:2 * d], 0)
    tot = hp + hm
    m = np.divide(hp - hm, tot, out=np.zeros(d), where=tot > 0)
    return ConsistentKV(pe.ell * tot, np.clip(m, -1, 1), f"{protocol.name}+consistent", sol, cert)
