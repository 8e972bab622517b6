"""Exact joint law of Subset Selection's support counts (the SS fast path): per-user work only where
it is cheaper than a histogram.

Notes: docs/notes/python.md, "ldpopt.oracles.subset_counts"."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["sample_subset_counts"]

_LOG_2_OVER_TAU = math.log(2.0 / 1e-40)
# a split is done per user when count·_PER_USER_COST <= window width (a hypergeometric draw costs
# about as much as this many cells of the windowed multinomial)
_PER_USER_COST = 4
# when a level's users are this few, every split is done per user (no multinomial set-up cost)
_PER_USER_TOTAL = 4096
# cells (rows × window) of one multinomial batch, users of one per-user piece, and the floor of the
# pinned merge buffer: the transient memory of a batch is about 20 arrays of this many 8-byte cells
_BATCH_CELLS = 1 << 19


def _window(ngood, nbad, nsample):
    """Support [lo, hi] of Hypergeometric(ngood + nbad, ngood, nsample) cut to mean ± δ (module
    notes): returns (wlo, width)."""
    N = ngood + nbad
    lo = np.maximum(0, nsample - nbad)
    hi = np.minimum(nsample, ngood)
    m = np.minimum(np.minimum(nsample, N - nsample), np.minimum(ngood, nbad))
    delta = np.ceil(np.sqrt(m * (_LOG_2_OVER_TAU / 2.0))).astype(np.int64) + 1
    mean = (nsample * ngood) // np.maximum(N, 1)
    wlo = np.maximum(lo, mean - delta)
    whi = np.minimum(hi, mean + delta + 1)
    return wlo, whi - wlo + 1


def _pmf_rows(ngood, nbad, nsample, wlo, width, W):
    """(rows, W) pmf of each row's hypergeometric on wlo … wlo + width − 1 (zero beyond), normalised
    on that window, by products of the ratios p(t+1)/p(t) = (K−t)(n−t)/((t+1)(N−K−n+t+1)) taken
    outward from the row's mode.

    Only multiplications and divisions (correctly rounded in IEEE 754) make the table, so it is the
    same to the last bit on every CPU; numpy's ``exp``/``log`` dispatch to SIMD implementations whose
    last bit depends on the CPU (AVX-512 against AVX2), and a last-bit change of a multinomial's
    probabilities changes a few of its draws. The pmf is log-concave, so the ratios fall with t and
    the mode is where they cross 1; every product runs away from the mode, so it can underflow (a
    probability below 1e−308, which is 0 for the sampler) but never overflow, however far the window
    reaches. Inside a window every ratio is finite and positive (t + 1 > n − (N − K), t < min(n, K))."""
    rows = wlo.size
    t = wlo[:, None] + np.arange(W - 1, dtype=np.int64)[None, :]
    K, n = ngood[:, None], nsample[:, None]
    up = ((K - t) * (n - t)).astype(np.float64)            # p(t+1)/p(t) = up/down
    down = ((t + 1) * (nbad[:, None] - n + t + 1)).astype(np.float64)
    inside = np.arange(1, W)[None, :] < width[:, None]      # ratio j links window cells j and j + 1
    rising = inside & (up > down)                           # p(t+1) > p(t): below the mode
    with np.errstate(divide="ignore", invalid="ignore"):
        fwd = np.where(inside & ~rising, up / down, 1.0)    # ratios above the mode: ≤ 1
        bwd = np.where(rising, down / up, 1.0)              # inverse ratios below it: < 1
    p = np.empty((rows, W))
    p[:, 0] = 1.0
    np.cumprod(fwd, axis=1, out=p[:, 1:])                   # p[j] / p[mode] for j > mode
    below = np.ones((rows, W))
    np.cumprod(bwd[:, ::-1], axis=1, out=below[:, -2::-1])  # p[j] / p[mode] for j < mode (1 elsewhere)
    p *= below
    p[np.arange(W)[None, :] >= width[:, None]] = 0.0
    return p / p.sum(axis=1, keepdims=True)


def _multinomial_chunks(gen, ngood, nbad, nsample, count):
    """For rows i: the histogram of L ~ Hypergeometric(ngood_i + nbad_i, ngood_i, nsample_i) over
    count_i users, restricted to the window of the module notes. Yields (row, L, users) once per
    multinomial batch, in draw order, so that the caller can merge each batch before the next."""
    # rows share few distinct (ngood, nbad, nsample): one pmf per distinct triple
    base = int(max(ngood.max(), nbad.max(), nsample.max())) + 1
    if base ** 3 < 1 << 62:  # one int64 key per triple: a fast 1-D sort
        _, first, inv = np.unique((ngood * base + nbad) * base + nsample, return_index=True, return_inverse=True)
        trip = np.stack((ngood[first], nbad[first], nsample[first]))
    else:
        trip, inv = np.unique(np.stack((ngood, nbad, nsample)), axis=1, return_inverse=True)
        inv = inv.ravel()
    wlo_t, width_t = _window(trip[0], trip[1], trip[2])
    bucket = np.ceil(np.log2(width_t)).astype(np.int64)[inv]  # rows by window width, powers of 2
    for b in np.unique(bucket):
        rows_b = np.flatnonzero(bucket == b)
        W = int(width_t[inv[rows_b]].max())
        step = max(1, _BATCH_CELLS // W)
        for r0 in range(0, rows_b.size, step):
            rows = rows_b[r0:r0 + step]
            ut, back = np.unique(inv[rows], return_inverse=True)
            table = _pmf_rows(trip[0, ut], trip[1, ut], trip[2, ut], wlo_t[ut], width_t[ut], W)
            hist = gen.multinomial(count[rows], table[back])
            r_idx, col = np.nonzero(hist)
            yield rows[r_idx], wlo_t[inv[rows[r_idx]]] + col, hist[r_idx, col].astype(np.int64)


def _multinomial_splits(gen, ngood, nbad, nsample, count):
    """All of ``_multinomial_chunks`` at once: (row, L, users)."""
    parts = list(_multinomial_chunks(gen, ngood, nbad, nsample, count))
    if not parts:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e
    return tuple(np.concatenate(a) for a in zip(*parts))


def _split_chunks(gen, ngood, nbad, nsample, count):
    """Histogram of L ~ Hypergeometric(ngood + nbad, ngood, nsample) over ``count`` users for every
    row, per user or by windowed multinomial: yields (row, L, users) pieces, rows possibly repeated,
    each of at most about _BATCH_CELLS entries. The draws are those of one hypergeometric call over
    all per-user rows followed by the multinomial batches (a Generator's array draws consume its
    stream element by element, so cutting the per-user call into pieces draws the same numbers)."""
    _wlo, width = _window(ngood, nbad, nsample)
    per_user = count * _PER_USER_COST <= width
    if int(count.sum()) <= _PER_USER_TOTAL:
        per_user[:] = True
    pu = np.flatnonzero(per_user)
    ends = np.cumsum(count[pu])
    r0 = 0
    while r0 < pu.size:  # pieces of whole rows, about _BATCH_CELLS users each
        r1 = max(r0 + 1, int(np.searchsorted(ends, (ends[r0 - 1] if r0 else 0) + _BATCH_CELLS, "right")))
        row_u = np.repeat(pu[r0:r1], count[pu[r0:r1]])
        L_u = gen.hypergeometric(ngood[row_u], nbad[row_u], nsample[row_u]).astype(np.int64)
        yield row_u, L_u, np.ones(row_u.size, dtype=np.int64)
        r0 = r1
    mu = np.flatnonzero(~per_user)
    if mu.size:
        for row, L, c in _multinomial_chunks(gen, ngood[mu], nbad[mu], nsample[mu], count[mu]):
            yield mu[row], L, c


class _PinnedMerge:
    """Pinned entries (x, need, users) merged on equal (x, need) as they arrive: pieces are buffered
    and folded into the merged state whenever the buffer outgrows it (and a floor), so the memory is
    a small multiple of the merged state rather than of everything a level's splits produce."""

    def __init__(self, k):
        self._span = k + 1  # need ≤ k − 1 < span
        self._key, self._c = np.zeros(0, np.int64), np.zeros(0, np.int64)
        self._buf, self._nbuf = [], 0

    def add(self, x, j, c):
        self._buf.append((x * self._span + j, c))
        self._nbuf += x.size
        if self._nbuf > max(self._key.size, _BATCH_CELLS):
            self._fold()

    def _fold(self):
        keys = np.concatenate([self._key] + [b[0] for b in self._buf])
        c = np.concatenate([self._c] + [b[1] for b in self._buf])
        self._buf, self._nbuf = [], 0
        self._key, inv = np.unique(keys, return_inverse=True)
        self._c = np.bincount(inv, weights=c, minlength=self._key.size).astype(np.int64)

    def result(self):
        """(x, need, users), sorted by (x, need)."""
        self._fold()
        return self._key // self._span, self._key % self._span, self._c


def sample_subset_counts(gen: np.random.Generator, d: int, k: int, lam: float, tc: np.ndarray) -> np.ndarray:
    """Support counts of SS(ε, d, k) for histogram ``tc``, exact in joint law (module notes).

    Tree: level ℓ has nodes 0 … 2^ℓ − 1; node i has children 2i (the first ⌊s/2⌋ values) and 2i + 1
    (the rest); nodes of size ≤ 1 are leaves (a size-0 child carries no need). Each piece of a level's
    splits is merged into the next level's histograms as soon as it is drawn (a dense table for the
    plain (node, need) entries, ``_PinnedMerge`` for the pinned ones), so no level holds all its
    pieces at once; the merged histograms, hence the draws and the counts, are those of merging
    everything at the end of the level."""
    n = int(tc.sum())
    m = gen.binomial(tc, lam).astype(np.int64)
    counts = m.copy()
    lo, size = np.zeros(1, np.int64), np.full(1, d, np.int64)  # nodes of the current level
    # plain entries: node, need, users
    p_node, p_j, p_c = np.zeros(1, np.int64), np.full(1, k, np.int64), np.full(1, n - int(m.sum()), np.int64)
    # pinned entries: value x, need (besides x), users; x's node at this level is x_node[x]
    x_node = np.zeros(d, np.int64)
    q_x = np.flatnonzero(m > 0) if k > 1 else np.zeros(0, np.int64)
    q_j, q_c = np.full(q_x.size, k - 1, np.int64), m[q_x]
    while True:
        keep = (p_j > 0) & (p_c > 0)
        p_node, p_j, p_c = p_node[keep], p_j[keep], p_c[keep]
        leaf = size[p_node] == 1  # need is 1 there
        counts += np.bincount(lo[p_node[leaf]], weights=p_c[leaf], minlength=d).astype(np.int64)
        p_node, p_j, p_c = p_node[~leaf], p_j[~leaf], p_c[~leaf]
        keep = (q_j > 0) & (q_c > 0)  # need > 0 implies size >= 2
        q_x, q_j, q_c = q_x[keep], q_j[keep], q_c[keep]
        if not (p_node.size or q_x.size):
            return counts
        s1 = size // 2
        # next level's nodes; plain (node, need) merged in a dense table, key range ≤ nodes·(max size + 1) ≈ 2d
        lo_next = np.stack((lo, lo + s1), axis=1).ravel()
        size_next = np.stack((s1, size - s1), axis=1).ravel()
        span = int(size_next.max()) + 1
        tot = np.zeros(size_next.size * span)

        def add_plain(node, j, c, span=span, tot=tot):
            t = np.bincount(node * span + j, weights=c)
            tot[:t.size] += t

        # plain splits: children 2i, 2i + 1 with needs L, j − L
        for row, L, c in _split_chunks(gen, s1[p_node], size[p_node] - s1[p_node], p_j, p_c):
            add_plain(2 * p_node[row], L, c)
            add_plain(2 * p_node[row] + 1, p_j[row] - L, c)
        # pinned splits: x's own child offers one value fewer; the other child's part is plain
        q_node = x_node[q_x]
        left = q_x < lo[q_node] + s1[q_node]
        pinned = _PinnedMerge(k)
        for row, L, c in _split_chunks(gen, s1[q_node] - left, size[q_node] - s1[q_node] - ~left, q_j, q_c):
            lft = left[row]
            add_plain(2 * q_node[row] + lft, np.where(lft, q_j[row] - L, L), c)  # the child without x
            pinned.add(q_x[row], np.where(lft, L, q_j[row] - L), c)
        q_x, q_j, q_c = pinned.result()
        x_node = 2 * x_node + (np.arange(d) >= lo[x_node] + s1[x_node])
        lo, size = lo_next, size_next
        key = np.flatnonzero(tot)
        p_node, p_j, p_c = key // span, key % span, tot[key].astype(np.int64)
