"""Shared pieces of the peer-format readers: report validation and the local-hashing support count."""

from __future__ import annotations

import numpy as np

from ._xxh32 import hash_values

__all__ = ["as_bit_matrix", "as_int_array", "clip_renormalise", "grr_partial", "lh_support_counts", "peer_g", "ue_partial"]

# (users × values) hash evaluations per block: bounded memory, cache-sized temporaries
_BLOCK_CELLS = 1 << 18


def as_int_array(reports, name: str, ndim: int, low: int, high: int, width: int | None = None) -> np.ndarray:
    """``reports`` (a list of ints / tuples / arrays, or an array) as int64 with values in [low, high)."""
    try:
        arr = np.asarray(reports)
    except ValueError as exc:  # ragged lists
        raise ValueError(f"{name}: reports of unequal length ({exc})") from None
    if arr.size == 0:
        return np.zeros((0,) * ndim if width is None else (0, width), dtype=np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name}: reports must be whole numbers")
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"{name}: reports must be integers, got dtype {arr.dtype}")
    if arr.ndim != ndim or (width is not None and arr.shape[1] != width):
        want = "(n,)" if ndim == 1 else f"(n, {width if width is not None else 'w'})"
        raise ValueError(f"{name}: reports must have shape {want}, got {arr.shape}")
    arr = arr.astype(np.int64)
    if arr.min() < low or arr.max() >= high:
        raise ValueError(f"{name}: report entries must lie in [{low}, {high}); found "
                         f"{arr.min() if arr.min() < low else arr.max()}")
    return arr


def as_bit_matrix(reports, name: str, d: int) -> np.ndarray:
    """Unary-encoding reports (one 0/1 vector of length d per user, int or float) as uint8 (n, d)."""
    arr = as_int_array(reports, name, 2, 0, 2, width=d)
    return arr.astype(np.uint8)


def lh_support_counts(y, seeds, d: int, g: int, values=None) -> np.ndarray:
    """c_v = #{i : xxh32(str(v), seed_i) % g == y_i}, v = 0..d−1 (or v in ``values``, d of them): the
    support count both peers' local-hashing aggregators compute with a Python double loop, here in
    (users × values) blocks."""
    values = np.arange(d, dtype=np.int64) if values is None else np.asarray(values, dtype=np.int64)
    d = values.shape[0]
    counts = np.zeros(d, dtype=np.int64)
    step = max(1, _BLOCK_CELLS // max(d, 1))
    for u0 in range(0, y.shape[0], step):
        h = hash_values(seeds[u0:u0 + step], values, g)
        counts += np.add.reduce(h == y[u0:u0 + step, None], axis=0, dtype=np.int64)
    return counts


def peer_g(epsilon: float, g: int | None, optimal: bool) -> int:
    """The hash range both peers use: ``int(round(exp(ε))) + 1`` for optimal LH, else ``g``
    (pure-ldp's default 2, multi-freq-ldpy's non-optimal 2). Note: ldpopt's own default
    ``round(e^ε + 1)`` is the same number except where e^ε is within float rounding of a half-integer."""
    import math

    if optimal:
        return round(math.exp(epsilon)) + 1
    if g is None or isinstance(g, bool) or int(g) != g or g < 2:
        raise ValueError(f"g must be an integer >= 2, got {g!r}")
    return int(g)


def grr_partial(reports, epsilon: float, d: int, name: str):
    """0-based value reports of a GRR client → a GRR Partial (counts = bincount)."""
    from .. import oracles
    from ..aggregate import Partial

    orc = oracles.get("grr", epsilon, d)
    r = as_int_array(reports, name, 1, 0, orc.d)
    return Partial.from_counts(orc, np.bincount(r, minlength=orc.d), r.shape[0])


def ue_partial(reports, epsilon: float, d: int, oracle: str, name: str):
    """0/1 report vectors of a unary-encoding client → an ``oracle`` ("oue"/"sue") Partial (column sums)."""
    from .. import oracles
    from ..aggregate import Partial

    orc = oracles.get(oracle, epsilon, d)
    bits = as_bit_matrix(reports, name, orc.d)
    return Partial.from_counts(orc, bits.sum(axis=0, dtype=np.int64), bits.shape[0])


def clip_renormalise(f_tilde) -> np.ndarray:
    """multi-freq-ldpy's ``*_Aggregator_MI`` post-processing: max(f̃, 0) renormalised to sum 1 (left at
    0 when every entry is clipped)."""
    c = np.clip(np.asarray(f_tilde, dtype=np.float64), 0.0, None)
    total = c.sum()
    return c / total if total > 0 else c
