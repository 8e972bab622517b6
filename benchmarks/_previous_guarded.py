"""The guarded lift as shipped before its evidence test's null law was computed for the data in hand
and before the lift was held to the evidence (a normal approximation of the negative-mass sum; β̂
from the cluster alone once the test fires): the "before" column of bench_attacker.py."""

from __future__ import annotations

import math

import numpy as np

from ldpopt.methods.normalize import project_simplex
from ldpopt.robust.attacks import mixture_offset
from ldpopt.robust.guarded import estimate_beta
from ldpopt.robust.lift import lift_suspects


def _truncated_moments(m, r):
    from scipy.special import ndtr

    c = -m / r
    Phi = ndtr(c)
    phi = np.exp(-0.5 * c * c) / math.sqrt(2.0 * math.pi)
    M = [Phi, -phi, Phi - c * phi, -(c * c + 2.0) * phi, 3.0 * Phi - (c ** 3 + 3.0 * c) * phi]
    second = m * m * M[0] + 2 * m * r * M[1] + r * r * M[2]
    fourth = (m ** 4 * M[0] + 4 * m ** 3 * r * M[1] + 6 * m * m * r * r * M[2] + 4 * m * r ** 3 * M[3]
              + r ** 4 * M[4])
    return second, fourth


def previous_evidence(est, oracle) -> float:
    from scipy.special import ndtr

    n, d, p, q = est.n, est.d, est.p, est.q
    g = project_simplex(est.f_tilde)
    var_g = np.asarray(oracle.variance(g, n), dtype=np.float64)
    sd0 = math.sqrt(float(np.asarray(oracle.variance(np.zeros(d), n), dtype=np.float64).max()))
    m, r = g / sd0, np.sqrt(np.maximum(var_g, 1e-300)) / sd0
    second, fourth = _truncated_moments(m, r)
    S = float(np.sum(np.maximum(-est.f_tilde / sd0, 0.0) ** 2))
    z_neg = (S - float(second.sum())) / math.sqrt(max(float(np.sum(np.maximum(fourth - second ** 2, 0.0))), 1e-300))
    ps = [float(ndtr(-z_neg))]
    try:
        pmf = np.asarray(oracle.support_size_pmf(), dtype=np.float64)
    except (ValueError, NotImplementedError, AttributeError):
        pmf = None
    if pmf is not None and pmf.size == d + 1:
        s = np.arange(d + 1)
        mu = float(pmf @ s)
        var = float(pmf @ (s - mu) ** 2)
        if var > 1e-12:
            total = float(est.f_tilde.sum()) * (p - q) * n + d * q * n
            ps.append(2.0 * float(ndtr(-abs((total - n * mu) / math.sqrt(n * var)))))
    return min(1.0, len(ps) * min(ps))


def previous_guarded_lift(est, oracle, alpha: float = 1e-4) -> np.ndarray:
    if previous_evidence(est, oracle) >= alpha:
        return project_simplex(est.f_tilde)
    b = estimate_beta(est, oracle, min_size=2)
    s = lift_suspects(est, b, min_size=2) if b > 0 else np.zeros(0, dtype=np.int64)
    t = (est.f_tilde - b * mixture_offset(est, b, s)) / (1.0 - b)
    if s.size:
        floor = (est.f_tilde[s] - b * (1.0 - est.q) / (est.p - est.q)) / (1.0 - b)
        t[s] = np.maximum(floor, 1.0 / est.d)
    return project_simplex(t)
