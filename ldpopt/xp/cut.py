"""Norm-Cut and Norm-Hyb (Wang et al. arXiv §3.3; NDSS 2020 §IV-B, §V-E) on an array namespace (numpy
or CuPy, the same code), equal to ``ldpopt.methods.norm_cut`` / ``norm_hyb`` (their rules and choices,
stated in :mod:`ldpopt.methods.normalize`) to within 1e-12 (``tests/test_xp.py``).

Notes: docs/notes/devices.md, "ldpopt.xp.cut"."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from .forms import _module_of, norm_sub

__all__ = ["decisive_sum", "norm_cut", "norm_hyb"]

_U = 2.0 ** -53  # unit roundoff of float64


def _host(x) -> np.ndarray:
    """A numpy copy of a numpy or CuPy array (CuPy: ``.get()``)."""
    return x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else np.asarray(x)


def decisive_sum(x, limits) -> float:
    """A sum of ``x`` that compares with every limit in ``limits`` as ``math.fsum(x)`` does (module
    docstring): the namespace's sum when no limit is within its error bound, else ``math.fsum``."""
    xp = _module_of(x)
    s = float(xp.sum(x))
    err = 1.01 * x.shape[0] * _U * float(xp.sum(xp.abs(x)))
    # 2 ulps of slack on each side: fsum rounds Σ to the nearest double, which may land on the limit
    if all(abs(s - lim) > err + 4 * _U * abs(lim) for lim in limits):
        return s
    return math.fsum(_host(x))


def _bound(values, p: float, q: float) -> float:
    """``ldpopt.methods.normalize.rounding_bound`` of ``values`` for an oracle with (p, q)."""
    from ..methods.normalize import rounding_bound

    return rounding_bound(SimpleNamespace(p=p, q=q), values)  # type: ignore[arg-type]  # reads .p, .q only


def _tie_closed_threshold(desc, limit: float, strict: bool) -> float:
    """The smallest value θ of ``desc`` (sorted decreasingly, positive) such that the values ≥ θ sum
    to ≤ ``limit`` (``strict``: < limit), tie groups whole; ``inf`` when there is none (as
    ``ldpopt.methods.normalize._tie_closed_top_threshold``)."""
    xp = _module_of(desc)
    m = desc.shape[0]
    if m == 0:
        return math.inf
    cs = xp.cumsum(desc)
    ends = xp.concatenate([desc[:-1] > desc[1:], xp.ones(1, dtype=bool)])  # the last of a tie group
    ok = ends & ((cs < limit) if strict else (cs <= limit))
    # the sums grow along the (positive) sorted values, so the admissible ends form a prefix
    k = int(xp.count_nonzero(ok))
    return float(desc[int(xp.flatnonzero(ok)[k - 1])]) if k else math.inf


def norm_cut(f, p: float, q: float):
    """Norm-Cut (arXiv §3.3) of f̃ = ``f`` from an oracle with probabilities (p, q): max(f, 0) when
    its sum is ≤ 1 (to f̃'s rounding), else f where f ≥ θ, 0 below, θ the tie-closed cut of the
    positive estimates at 1 (``ldpopt.methods.norm_cut``'s rules)."""
    xp = _module_of(f)
    pos = xp.maximum(f, 0.0)
    tol = _bound(pos, p, q)
    if decisive_sum(pos, (1.0 + tol,)) <= 1.0 + tol:
        return pos
    top = xp.sort(f[f > 0])[::-1]
    theta = _tie_closed_threshold(top, 1.0 + tol + top.shape[0] * _U, strict=False)
    return xp.where(f >= theta, f, 0.0)


def norm_hyb(f, p: float, q: float, threshold: float | None = None, k: int | None = None):
    """Norm-Hyb (arXiv §3.3): the estimates ≥ T (and > 0) kept, the others projected onto the
    simplex of mass 1 − (their sum); ``ldpopt.methods.norm_hyb``'s rules for a kept sum above 1,
    for ties and for a leftover within rounding of 0.

    ``threshold``: T, e.g. :func:`ldpopt.xp.forms.cut_threshold` (Eq. 9, a host scalar); or ``k``:
    keep the k largest (T = the k-th highest estimate, NDSS §V-E; found by the sort the cut needs
    anyway, where ``ldpopt.methods`` partitions). Give exactly one."""
    xp = _module_of(f)
    d = f.shape[0]
    if (threshold is None) == (k is None):
        raise ValueError("give threshold or k, exactly one")
    if k is not None:
        if not 1 <= int(k) <= d:
            raise ValueError(f"k must satisfy 1 <= k <= d = {d}, got {k!r}")
        t = float(xp.sort(f)[d - int(k)])
    elif threshold is not None:
        t = float(threshold)
    keep = (f >= t) & (f > 0)
    kept = f[keep]
    tol = _bound(kept, p, q)
    s = decisive_sum(kept, (1.0 + tol, 1.0 - tol))
    if s > 1.0 + tol:
        top = xp.sort(kept)[::-1]
        theta = _tie_closed_threshold(top, 1.0 - tol - top.shape[0] * _U, strict=True)
        keep = f >= theta
        kept = f[keep]
        s = decisive_sum(kept, (1.0 + tol, 1.0 - tol))
    left = 1.0 - s if abs(1.0 - s) > tol else 0.0
    if bool(xp.all(keep)):
        return f.copy() if left == 0.0 else norm_sub(f, 1.0)
    out = f.copy()
    out[~keep] = norm_sub(f[~keep], max(left, 0.0))
    return out
