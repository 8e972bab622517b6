"""Evidence of an attack in a frequency estimate: is it further from every genuine histogram than
honest sampling noise explains?

A cluster of equal estimates (what :mod:`.lift` and :mod:`.guarded` look for) is no evidence by
itself: two genuinely tied popular values make one. What a genuine histogram g ≥ 0 cannot make is
(a) a total support Σ_v C_v further from the genuine reports' mean support size than their
spread explains, and (b) more negative
mass than sampling noise explains. Fake users that lift some values either change the support (a) or, where
the total is fixed (GRR), push the other values down (b). Two z-tests, Bonferroni-combined into one
p-value; :func:`~.guarded.guarded_lift` with β estimated acts only
when that p-value is below its false-alarm rate.

Choices (no paper states this test):

* (a) uses the oracle's genuine support-size law (``oracle.support_size_pmf()``); where the oracle
  states none, or the law is a point mass (GRR, subset selection: the total is fixed), (a) is left
  out and (b) alone decides.
* (b): S = Σ_v max(−f̃_v/σ₀, 0)², σ₀ the standard deviation of an estimate at f = 0. Its mean and
  variance under the null are those of independent normals f̃_v ~ N(ĝ_v, σ_v²), ĝ the simplex
  projection of f̃ (Norm-Sub) and σ_v² the oracle's variance at ĝ_v. A value whose genuine frequency
  is positive but projected to 0 has a smaller term than the null says: the test is conservative
  there. The Poisson lower tail of a small count is lighter than the normal one: conservative too.
* (b) is one-sided (only more negative mass is evidence); (a) two-sided: fewer supports than genuine
  reports make is as impossible as more (MGA's padded OUE reports support fewer values than the
  honest mean).
"""

from __future__ import annotations

import math

import numpy as np

from ..estimate import check_estimate
from ..methods.normalize import project_simplex

__all__ = ["attack_evidence"]


def _truncated_moments(m: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E[Y² 1{Y<0}] and E[Y⁴ 1{Y<0}] for Y ~ N(m, r²) (truncated normal moments)."""
    from scipy.special import ndtr

    c = -m / r
    Phi = ndtr(c)
    phi = np.exp(-0.5 * c * c) / math.sqrt(2.0 * math.pi)
    M = [Phi, -phi, Phi - c * phi, -(c * c + 2.0) * phi, 3.0 * Phi - (c ** 3 + 3.0 * c) * phi]
    second = m * m * M[0] + 2 * m * r * M[1] + r * r * M[2]
    fourth = (m ** 4 * M[0] + 4 * m ** 3 * r * M[1] + 6 * m * m * r * r * M[2] + 4 * m * r ** 3 * M[3]
              + r ** 4 * M[4])
    return second, fourth


def attack_evidence(estimate, oracle=None) -> dict:
    """The two tests of the module notes on ``estimate``.

    Parameters
    ----------
    estimate : Estimate
        The (possibly poisoned) estimate.
    oracle : FrequencyOracle, optional
        Its oracle (default: rebuilt from the estimate, ``FrequencyOracle.from_estimate``).

    Returns
    -------
    dict
        ``z_total`` (None where the total is fixed or its law unknown), ``z_negative``, ``p_value``
        (the smaller normal p-value, two-sided for ``z_total``, times the number of tests, at most 1).

    Raises
    ------
    ValueError
        A bad estimate.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> grr = oracles.get("grr", epsilon=2.0, d=128)
    >>> genuine = (10_000 * 0.5 ** np.arange(128)).astype(int) + 20
    >>> clean = grr.simulate(genuine, rng=0)
    >>> robust.attack_evidence(clean)["p_value"] > 0.01
    True
    >>> attacked = robust.poisoned_estimate(grr, genuine, "mga", targets=[60, 61, 62], beta=0.05, rng=0)
    >>> robust.attack_evidence(attacked)["p_value"] < 1e-6
    True
    """
    from scipy.special import ndtr

    est = check_estimate(estimate)
    if oracle is None:
        from ..uncertainty.resample import oracle_of

        oracle = oracle_of(est)
    n, d, p, q = est.n, est.d, est.p, est.q
    g = project_simplex(est.f_tilde)
    var_g = np.asarray(oracle.variance(g, n), dtype=np.float64)
    var_0 = float(np.asarray(oracle.variance(np.zeros(d), n), dtype=np.float64).max())
    sd0 = math.sqrt(var_0)
    m, r = g / sd0, np.sqrt(np.maximum(var_g, 1e-300)) / sd0
    second, fourth = _truncated_moments(m, r)
    S = float(np.sum(np.maximum(-est.f_tilde / sd0, 0.0) ** 2))
    var_S = float(np.sum(np.maximum(fourth - second ** 2, 0.0)))
    z_neg = (S - float(second.sum())) / math.sqrt(max(var_S, 1e-300))
    z_tot = None
    try:
        pmf = np.asarray(oracle.support_size_pmf(), dtype=np.float64)
    except (ValueError, NotImplementedError, AttributeError):
        pmf = None
    if pmf is not None and pmf.size == d + 1 and np.isfinite(pmf).all():
        s = np.arange(d + 1)
        mu = float(pmf @ s)
        var = float(pmf @ (s - mu) ** 2)
        if var > 1e-12:
            total = float(est.f_tilde.sum()) * (p - q) * n + d * q * n  # Σ_v C_v
            z_tot = (total - n * mu) / math.sqrt(n * var)
    ps = [float(ndtr(-z_neg))] + ([2.0 * float(ndtr(-abs(z_tot)))] if z_tot is not None else [])
    p_value = min(1.0, len(ps) * min(ps))
    return {"z_total": z_tot, "z_negative": float(z_neg), "p_value": p_value}
