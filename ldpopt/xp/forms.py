"""Closed-form post-processing on an array namespace: the same code on numpy arrays (the host) or on
CuPy arrays (a GPU), so that counts aggregated on the device are post-processed there without a
copy. Each function equals its ``ldpopt.methods`` counterpart on the numpy namespace to within 1e-12
(``tests/test_xp.py``): Norm, Norm-Mul, Base-Pos, Base-Cut (Wang et al. arXiv §3.1–§3.3),
Norm-Sub (the Euclidean projection onto the simplex, arXiv §3.5 / Appendix B) and MLE-Apx (§3.4).

Notes: docs/notes/devices.md, "ldpopt.xp.forms"."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["base_cut", "base_pos", "cut_threshold", "mle_apx", "namespace", "norm", "norm_mul", "norm_sub"]


def namespace(device: str = "numpy"):
    """The array module of ``device``: numpy for "numpy"/"cpu", CuPy for "cuda" (the 'gpu' extra)."""
    if device in ("numpy", "cpu"):
        return np
    if device == "cuda":
        from .._extras import require

        return require("cupy", "gpu", "closed forms on the GPU (device='cuda')")
    raise ValueError(f"device must be 'numpy', 'cpu' or 'cuda', got {device!r}")


def _module_of(x):
    """numpy or CuPy, whichever owns the array ``x``."""
    return namespace("cuda") if type(x).__module__.split(".")[0] == "cupy" else np


def norm(f):
    """Norm (arXiv §3.2): f + (1 − Σf)/d."""
    xp = _module_of(f)
    return f + (1.0 - xp.sum(f)) / f.shape[0]


def norm_mul(f):
    """Norm-Mul (arXiv §3.3): max(f, 0)/Σ max(f, 0); the uniform 1/d when no entry is positive (the
    choice of ``ldpopt.methods.norm_mul``)."""
    xp = _module_of(f)
    pos = xp.maximum(f, 0.0)
    s = float(xp.sum(pos))
    return pos / s if s > 0.0 else xp.full(f.shape[0], 1.0 / f.shape[0])


def base_pos(f):
    """Base-Pos (arXiv §3.1): max(f, 0)."""
    return _module_of(f).maximum(f, 0.0)


def cut_threshold(d: int, n: int, p: float, q: float, alpha: float = 2.0) -> float:
    """T = Φ⁻¹(1 − α/d)·σ with σ = √(q(1 − q))/(√n (p − q)) (arXiv Eq. 7, 9), a host scalar."""
    from scipy.special import ndtri

    return float(ndtri(1.0 - alpha / d) * math.sqrt(q * (1.0 - q)) / (math.sqrt(n) * (p - q)))


def base_cut(f, threshold: float):
    """Base-Cut (arXiv §3.1): f where f ≥ max(T, 0), else 0 (``ldpopt.methods.base_cut``'s choices)."""
    xp = _module_of(f)
    return xp.where(f >= max(threshold, 0.0), f, 0.0)


def norm_sub(f, total: float = 1.0):
    """Norm-Sub: the projection of f onto {x ≥ 0, Σx = total}, max(f − τ, 0) with τ from the sorted
    values: ρ = the largest k with u_k > (Σ_{j≤k} u_j − total)/k (u sorted decreasingly), τ = that
    ratio at ρ. When total is below the rounding unit of max(f) the mass goes to the maximisers,
    equally (as ``ldpopt.methods.project_simplex``)."""
    xp = _module_of(f)
    d = f.shape[0]
    if total == 0.0:
        return xp.zeros(d)
    u = xp.sort(f)[::-1]
    ratio = (xp.cumsum(u) - total) / xp.arange(1, d + 1, dtype=f.dtype)
    rho = int(xp.count_nonzero(u > ratio)) - 1  # the condition holds exactly on a prefix
    tau = ratio[max(rho, 0)]
    out = xp.where(f > tau, f - tau, 0.0)
    if not bool(xp.any(out > 0)):
        top = f == xp.max(f)
        out = xp.where(top, total / int(xp.count_nonzero(top)), 0.0)
    return out


def mle_apx(counts, n: int, p: float, q: float):
    """MLE-Apx (arXiv §3.4, Eq. 13–14; ``ldpopt.methods.mle``'s exact KKT solution) by the sort path:
    with a = c/n − q sorted decreasingly, the top-k set gives x_k = (Σ_{j≤k} a_j − B)/(p(1 − p) +
    (k − 1)s) (B = p − q, s = q(1 − q)); the support is the longest prefix with a_k > s·x_k, and f is
    Eq. 14 on it in ``ldpopt.methods.mle.f_on_support``'s cancellation-free form,
    f_v = (K_v + (s/B)(k t_v − Σ t))/Σ K, t = r − max r, K = (1 − r)pq + r(1 − p)(1 − q), r = c/n."""
    xp = _module_of(counts)
    d = counts.shape[0]
    B, s = p - q, q * (1.0 - q)
    r = counts / n
    a = r - q
    u = xp.sort(a)[::-1]
    x = (xp.cumsum(u) - B) / (p * (1.0 - p) + xp.arange(d, dtype=xp.float64) * s)
    rho = max(int(xp.count_nonzero(u > s * x)) - 1, 0)
    sup = a > s * float(x[rho])
    if not bool(xp.any(sup)):  # x rounded past a_max/s: the support holds the largest a
        sup = a == xp.max(a)
    k = int(xp.count_nonzero(sup))
    t = xp.where(sup, r - xp.max(xp.where(sup, r, -xp.inf)), 0.0)
    kap = xp.where(sup, (1.0 - r) * (p * q) + r * ((1.0 - p) * (1.0 - q)), 0.0)
    f = (kap + (s / B) * (k * t - xp.sum(t))) / xp.sum(kap)
    return xp.where(sup, xp.maximum(f, 0.0), 0.0)
