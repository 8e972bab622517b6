"""Expected-linear-time search for the support of a simplex-type projection.

Notes: docs/notes/python.md, "ldpopt.methods.threshold"."""

from __future__ import annotations

import numpy as np

__all__ = ["top_support"]

SMALL = 2048      # below this many undecided values, sort and scan (cheaper than more passes)
SAMPLE = 63       # pivot = median of this many values drawn from C
FIRST = 16384     # at most this many sampled values for the first pivot (d/32 below that)


def _first_pivot(y: np.ndarray, theta, rng) -> float:
    """A value of ``y`` likely just below θ*, from a random sample of it: the sample's own scan,
    with every sampled value standing for d/m values, ranks the support as about j values of the
    sample; the pivot is the sample's (4j + 16)-th largest value, a few times further down. Only
    speed depends on this guess (a pivot inside the support is handled like any other)."""
    d = y.shape[0]
    m = min(d, FIRST, max(256, d // 32))
    u = np.sort(y[rng.integers(0, d, m)])[::-1]
    w = d / m
    hits = np.flatnonzero(u > theta(w * np.cumsum(u), w * np.arange(1, m + 1, dtype=np.float64)))
    j = int(hits[-1]) + 1 if hits.size else 1
    return float(u[min(m - 1, 4 * j + 16)])


def top_support(y: np.ndarray, theta) -> tuple[float, int, np.ndarray | None]:
    """(ΣT, |T|, pool) for the support T ⊆ ``y`` (module notes); ``theta(S, k)`` works on floats
    and on arrays. ``pool`` is the index array of a subset of ``y`` containing T (the values ≥ the
    first pivot, usually a few thousand), or None for "all of y": the callers polish and write
    their output from it without another pass over y. Returns (0.0, 0, pool) if no top set
    qualifies (only by rounding: the callers fall back)."""
    st, kt = 0.0, 0
    c, pool = y, None
    rng = np.random.default_rng(0x5EED)
    if c.shape[0] > SMALL:
        # First step on the whole input, by indices: one compare pass, the rest on the few values.
        piv = _first_pivot(c, theta, rng)
        idx = np.flatnonzero(c >= piv)
        top = c[idx]
        s, k = float(np.sum(top)), top.shape[0]
        th = theta(s, k)
        if piv > th:                           # ρ in the support (a bad guess): so is all of c ≥ ρ
            st, kt = s, k
            rest = c[c < piv]
            lo = theta(st + float(np.sum(rest)), kt + rest.shape[0])  # Michelot: top ∪ C ⊇ support
            c = rest[rest > lo]
        else:                                  # ρ out: T ⊇ support, θ(T) ≥ ρ is a lower bound
            pool = idx
            c = top[top > th]
    while c.shape[0] > SMALL:
        sample = c[rng.integers(0, c.shape[0], SAMPLE)]
        piv = float(np.partition(sample, SAMPLE // 2)[SAMPLE // 2])
        ge = c >= piv
        top = c[ge]
        s, k = st + float(np.sum(top)), kt + top.shape[0]
        th = theta(s, k)
        if piv > th:
            st, kt = s, k
            rest = c[~ge]
            lo = theta(st + float(np.sum(rest)), kt + rest.shape[0])
            c = rest[rest > lo]
        else:
            c = top[top > th]
    if c.shape[0] == 0:
        return (st, kt, pool) if kt else (0.0, 0, pool)
    u = np.sort(c)[::-1]
    css = st + np.cumsum(u)
    k = kt + np.arange(1, u.shape[0] + 1, dtype=np.float64)
    hits = np.flatnonzero(u > theta(css, k))
    if hits.size:
        j = int(hits[-1])
        return float(css[j]), int(k[j]), pool
    return (st, kt, pool) if kt else (0.0, 0, pool)
