"""Euler–Maclaurin sums for the long windows of the Bayesian engine (:mod:`ldpopt.methods.bayes.engine`),
also used by the batched-s sums of ``exponent_grid`` and the prior sums of ``exponent_fit``.

Notes: docs/notes/python.md, "ldpopt.methods.bayes.euler_maclaurin"."""

from __future__ import annotations

import numpy as np

EM_PANEL = 1.0  # uniform panels of width EM_PANEL·√v (0.5 earlier: same accuracy, measured)
# B_2p / (2p)! for p = 1..4, and the 24-point Gauss–Legendre rule: shared with the power-law prior
# sums of :mod:`ldpopt.methods.bayes` (same Euler–Maclaurin scheme)
EM_BERNOULLI = (1.0 / 12.0, -1.0 / 720.0, 1.0 / 30240.0, -1.0 / 1209600.0)
GL24_X, GL24_W = np.polynomial.legendre.leggauss(24)
_ORDER = 8  # Taylor coefficients 0..7 at the endpoints (derivatives up to f⁽⁷⁾)
_FACT = np.cumprod(np.r_[1.0, np.arange(1.0, _ORDER)])  # r! for r = 0..7: f⁽ʳ⁾ = r! · coefficient


def _moment_sums(e: np.ndarray, k: np.ndarray, logk: np.ndarray, name: str) -> np.ndarray:
    """Row sums Σ e·μ_m(k) for the moment multipliers of ``MOMENTS`` (e, k, logk: same shape)."""
    if name == "z":
        return e.sum(axis=1)
    if name == "k":
        return (e * k).sum(axis=1)
    if name == "k2":
        return (e * k * k).sum(axis=1)
    if name == "l1":
        return (e * logk).sum(axis=1)
    if name == "l2":
        return (e * logk * logk).sum(axis=1)
    raise ValueError(f"unknown moment {name!r}")  # pragma: no cover - internal


def _mu_series(name: str, t0: np.ndarray) -> np.ndarray:
    """Taylor coefficients (in h) of μ_m(t0 + h), shape (len(t0), _ORDER)."""
    out = np.zeros((t0.shape[0], _ORDER))
    if name == "z":
        out[:, 0] = 1.0
    elif name == "k":
        out[:, 0], out[:, 1] = t0, 1.0
    elif name == "k2":
        out[:, 0], out[:, 1], out[:, 2] = t0 * t0, 2.0 * t0, 1.0
    elif name in ("l1", "l2"):
        j = np.arange(1, _ORDER)
        out[:, 0] = np.log(t0)
        out[:, 1:] = ((-1.0) ** (j + 1) / j)[None, :] / t0[:, None] ** j[None, :]
        if name == "l2":
            out = _series_mul(out, out)
    else:  # pragma: no cover - internal
        raise ValueError(f"unknown moment {name!r}")
    return out


def _series_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a)
    for i in range(_ORDER):  # 8 × 8 coefficient loop, vectorised over points
        out[:, i:] += a[:, [i]] * b[:, : _ORDER - i]
    return out


def _endpoint_series(t0, c, v, kr, prior, shift) -> np.ndarray:
    """Taylor coefficients of exp(r(t0 + h) − shift), r(t) = −(t − k_ref)(t + k_ref − 2c)/(2v) + λ(t)."""
    m = t0.shape[0]
    a = np.zeros((m, _ORDER))
    a[:, 0] = prior.rel_phi(c, v, kr, t0, np.log(t0)) - shift
    a[:, 1] = -(t0 - c) / v
    a[:, 2] = -0.5 / v
    if prior.kind == "power-law" and prior.s != 0.0:
        j = np.arange(1, _ORDER)
        # −s log(t0 + h) = −s log t0 − s Σ_j (−1)^{j+1} (h/t0)^j / j
        a[:, 1:] += -prior.s * ((-1.0) ** (j + 1) / j)[None, :] / t0[:, None] ** j[None, :]
    e = np.zeros((m, _ORDER))
    e[:, 0] = np.exp(a[:, 0])
    for k in range(1, _ORDER):  # exp of a power series: k e_k = Σ_i i a_i e_{k−i}
        i = np.arange(1, k + 1)
        e[:, k] = (i[None, :] * a[:, 1:k + 1] * e[:, k - i]).sum(axis=1) / k
    return e


def em_nodes(a, b, v: float):
    """(a, b as float, nodes t, weights w) of the Euler–Maclaurin integral over [a, b] per point, shape
    (m, panels·24): 24-point Gauss–Legendre on panels of width ≤ min(t/2, EM_PANEL·√v) (geometric from
    a, then uniform; padding panels have weight 0). Shared with the batched-s sums of ``exponent_grid``."""
    m = a.shape[0]
    af, bf = a.astype(np.float64), b.astype(np.float64)
    sv = float(np.sqrt(v))
    step = EM_PANEL * sv
    # geometric edges a·1.5^j while the panel t/2 is shorter than √v/2, then uniform steps of √v/2
    n_geo = np.ceil(np.log(np.maximum(sv / af, 1.0)) / np.log(1.5)).astype(np.int64)
    g_end = np.minimum(af * 1.5 ** n_geo, bf)
    n_uni = np.ceil(np.maximum(bf - g_end, 0.0) / step).astype(np.int64)
    P = int((n_geo + n_uni).max())
    j = np.arange(P + 1, dtype=np.float64)[None, :]
    geo = af[:, None] * 1.5 ** np.minimum(j, n_geo[:, None])
    uni = g_end[:, None] + step * np.maximum(j - n_geo[:, None], 0.0)
    edges = np.minimum(np.where(j <= n_geo[:, None], geo, uni), bf[:, None])
    left, right = edges[:, :-1], edges[:, 1:]
    half = 0.5 * (right - left)                         # 0 on padding panels: no weight
    t = (0.5 * (left + right))[:, :, None] + half[:, :, None] * GL24_X[None, None, :]
    w = half[:, :, None] * GL24_W[None, None, :]
    return af, bf, t.reshape(m, -1), w.reshape(m, -1)


def _em_tail_logsums(c, v, kr, a, b, prior, moments) -> np.ndarray:
    """log Σ_{k=a..b} μ_m(k) e^{r(k)} by Euler–Maclaurin (module doc, "Long windows"); a ≥ EM_START.

    Σ_{k=a..b} f(k) = ∫_a^b f + (f(a) + f(b))/2 + Σ_{p=1..4} B_2p/(2p)! (f⁽²ᵖ⁻¹⁾(b) − f⁽²ᵖ⁻¹⁾(a)) + R,
    the integral by 24-point Gauss–Legendre on panels of width ≤ min(t/2, √v/2) (geometric from a,
    then uniform), the derivatives from Taylor series at the endpoints.
    """
    m = c.shape[0]
    af, bf, t, w = em_nodes(a, b, v)
    logt = np.log(t)
    r = prior.rel_phi(c[:, None], v, kr[:, None], t, logt)
    ends = np.stack([af, bf], axis=1)
    r_end = prior.rel_phi(c[:, None], v, kr[:, None], ends, np.log(ends))
    shift = np.maximum(np.where(w > 0, r, -np.inf).max(axis=1), r_end.max(axis=1))
    ew = np.exp(r - shift[:, None]) * w
    ser_a = _endpoint_series(af, c, v, kr, prior, shift)
    ser_b = _endpoint_series(bf, c, v, kr, prior, shift)
    out = np.empty((m, len(moments)))
    for jm, name in enumerate(moments):
        integral = _moment_sums(ew, t, logt, name)
        fa = _series_mul(ser_a, _mu_series(name, af)) * _FACT   # f⁽ʳ⁾(a), r = 0..7
        fb = _series_mul(ser_b, _mu_series(name, bf)) * _FACT
        tot = integral + 0.5 * (fa[:, 0] + fb[:, 0])
        for p, bern in enumerate(EM_BERNOULLI, start=1):
            tot = tot + bern * (fb[:, 2 * p - 1] - fa[:, 2 * p - 1])
        with np.errstate(divide="ignore"):
            out[:, jm] = np.log(tot) + shift
    return out
