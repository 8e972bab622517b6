"""Local hashing: OLH and BLH (Wang et al. arXiv §2.4; Wang et al., USENIX Security 2017, §4.4).

A user with value v draws a hash function H: D → [g] from a family, hashes, and reports
⟨H, GRR_{ε,g}(H(v))⟩. The report ⟨H, r⟩ supports the set Y = {u ∈ D : H(u) = r}.

The hash family (the design choice the papers leave open)
---------------------------------------------------------
The papers ask for a family under which each H(v) is uniform on [g] and independent across v (a
fully random hash), which no small seeded family is. ldpopt uses an *exact finite* family whose p and
q are computed exactly, so f̃ = (c/n − q)/(p − q) stays exactly unbiased with the Eq. 2 variance:

    H_{a,b}(v) = ⌊ g · ((a·v + b) mod P) / P ⌋,   a ∈ [1, P), b ∈ [0, P) uniform,

with P the smallest prime ≥ max(d, g) (P < 2^31, so every int64 product stays below 2^62).

* For v ≠ v' in [0, d) (so v − v' ≢ 0 mod P), (a, b) ↦ (a·v + b, a·v' + b) mod P is a bijection
  from [1, P) × [0, P) onto the ordered pairs of *distinct* elements of Z_P. Hence the collision
  probability is exactly c = Σ_j m_j (m_j − 1) / (P (P − 1)), where m_j = ⌈(j+1)P/g⌉ − ⌈jP/g⌉ is
  the number of y ∈ Z_P with ⌊g y / P⌋ = j (each m_j is ⌊P/g⌋ or ⌈P/g⌉).
* p = Pr[r = H(v)] = p' = e^ε/(e^ε + g − 1), GRR_g's keep probability, whatever H(v)'s marginal
  (which is m_j/P, not exactly uniform because g ∤ P).
* q = Pr[r = H(v')] for v' ≠ v = c·p' + (1 − c)(1 − p')/(g − 1): if H(v') = H(v) the report hits
  it w.p. p'; otherwise H(v') is one of the g − 1 values GRR_g moves to, each w.p. (1 − p')/(g − 1).
  c is slightly *below* the idealised 1/g here, so q is slightly below the paper's q = 1/g.
* Privacy: given H, the report is GRR_g(H(v)), and H is drawn independently of v, so
  Pr[⟨H, r⟩ | v] / Pr[⟨H, r⟩ | v'] ≤ p'/((1 − p')/(g − 1)) = e^ε exactly (tight).

Why the ⌊g·y/P⌋ range reduction rather than ``y mod g``: it makes each report's support, in the
coordinates x = a·v mod P, a cyclic *interval* of Z_P. Aggregation can then group users by a and count,
for every x at once, how many intervals cover x with a difference array and a cumulative sum: exact
integer work O(n + U·(P + d)) for U distinct values of a, instead of the O(n·d) hash evaluations of
the naive aggregator. When users are few compared with P (U·(P + d) > n·⌈P/g⌉), the aggregator
instead enumerates each report's ≤ ⌈P/g⌉ supported values directly (v = a⁻¹(y − b) mod P over the
interval of y), O(n·P/g). Both are exact and are checked against a naive per-user evaluation in the
tests.

The default g = round(e^ε + 1) (Wang et al. 2017, §4.4: the variance, as a continuous function of g,
is minimised at g = e^ε + 1), at least 2, and capped at 2^30 so P fits the integer arithmetic
(it only matters for ε > 20.8; any g ≥ 2 is ε-LDP).

Paper note: arXiv §2.4 prints OLH's p as (e^ε − 1)/(e^ε + g − 1); the probability that the report
supports the user's own value is GRR_g's keep probability e^ε/(e^ε + g − 1) (as in Wang et al. 2017,
§4.4; the printed value does not even give p = 1/2 at the paper's own g = e^ε + 1), which is what is
implemented and what test_olh_exact_distribution_privacy_and_p_q checks by enumeration.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import _check_int, as_generator, check_values
from .base import FrequencyOracle

__all__ = ["BLH", "OLH", "smallest_prime_at_least"]

#: largest g (default or given): keeps P < 2^31 so a·v, g·y < 2^62 in int64
G_MAX = 1 << 30
_P_MAX = (1 << 31) - 1
# work budget (cells) of one block of the aggregator, ~64 MB of int64
_BLOCK_CELLS = 1 << 23
# output-distribution enumeration limit: d × |Y| cells
_ENUM_CELLS = 1 << 22


def _is_prime(m: int) -> bool:
    """Deterministic Miller–Rabin, exact for m < 3,215,031,751 (bases 2, 3, 5, 7)."""
    if m < 2:
        return False
    for sp in (2, 3, 5, 7, 11, 13):
        if m % sp == 0:
            return m == sp
    dd, s = m - 1, 0
    while dd % 2 == 0:
        dd //= 2
        s += 1
    for base in (2, 3, 5, 7):
        x = pow(base, dd, m)
        if x in (1, m - 1):
            continue
        for _ in range(s - 1):
            x = x * x % m
            if x == m - 1:
                break
        else:
            return False
    return True


def smallest_prime_at_least(m: int) -> int:
    """The smallest prime ≥ m (m < 2^31)."""
    m = max(2, int(m))
    while not _is_prime(m):
        m += 1
    return m


def _modinv(a: np.ndarray, P: int) -> np.ndarray:
    """a^(P−2) mod P (Fermat inverse), vectorised square-and-multiply over the bits of P − 2."""
    result = np.ones_like(a)
    base = a % P
    e = P - 2
    while e:
        if e & 1:
            result = result * base % P
        base = base * base % P
        e >>= 1
    return result


class OLH(FrequencyOracle):
    """Optimized Local Hashing (arXiv §2.4; Wang et al. 2017 §4.4) with the exact affine-mod-prime
    hash family described in the module docstring.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size (values 0 … d−1), d ≥ 2 and the prime P ≥ max(d, g) below 2^31.
    g : int, optional
        Hash range; default round(e^ε + 1), at least 2, capped at 2^30. Must be an integer in
        [2, 2^30].

    Reports
    -------
    ``perturb`` returns an (n, 3) int64 array whose rows are (a, b, r): the user's hash function
    H_{a,b} and the randomised hash value r ∈ [0, g).

    ``sample_counts`` draws c_v = Binomial(n_v, p) + Binomial(n − n_v, q) independently over v. Each
    c_v's marginal is exact (a sum of independent per-user Bernoulli(p) or Bernoulli(q) indicators).
    The *joint* law is that of a fully random hash family (given H(v) and r, the events H(v') = r are
    then iid over v' ≠ v); under the concrete affine family the events are only pairwise-uniform, so
    the counts of different values are (weakly) dependent in the real protocol. Hence
    ``sample_counts_exact = False``.
    """

    name = "olh"
    sample_counts_exact = False

    def __init__(self, epsilon: float, d: int, g: int | None = None):
        super().__init__(epsilon, d)
        if g is None:
            # round(e^ε + 1) without overflowing for large ε
            g = G_MAX if self.epsilon > math.log(G_MAX) else max(2, int(round(math.exp(self.epsilon) + 1)))
            g = min(g, G_MAX)
        else:
            g = _check_int(g, "g", 2)
            if g > G_MAX:
                raise ValueError(f"g must be an integer in [2, 2^30], got {g}")
        self.g = int(g)
        if self.d >= _P_MAX:
            raise ValueError(f"d must be < 2^31 − 1 for the hash family (prime P >= d), got {self.d}")
        self.P = smallest_prime_at_least(max(self.d, self.g))
        # L_j = ⌈jP/g⌉: y ∈ Z_P hashes to j iff L_j <= y < L_{j+1}; only two interval lengths occur
        k, rem = divmod(self.P, self.g)
        self._m_small, self._m_large = k, k + 1
        # exact collision probability of two distinct inputs
        pairs = rem * (k + 1) * k + (self.g - rem) * k * (k - 1)
        self.collision = pairs / (self.P * (self.P - 1))

    # -- probabilities ---------------------------------------------------------------------------
    @property
    def _keep(self) -> float:
        """GRR_g keep probability p' = e^ε/(e^ε + g − 1), written to avoid overflow at ε = 50."""
        return 1.0 / (1.0 + (self.g - 1) * math.exp(-self.epsilon))

    @property
    def _move_each(self) -> float:
        """(1 − p')/(g − 1) = 1/(e^ε + g − 1), computed without cancellation."""
        return math.exp(-self.epsilon) / (1.0 + (self.g - 1) * math.exp(-self.epsilon))

    @property
    def p(self) -> float:
        return self._keep

    @property
    def q(self) -> float:
        c = self.collision
        return c * self._keep + (1.0 - c) * self._move_each

    def params(self) -> dict[str, Any]:
        return {"g": self.g,
                "hash_family": f"H(v) = floor(g*((a*v + b) mod P)/P), a in [1,P), b in [0,P), P={self.P}"}

    def chunk_size(self) -> int:
        # reports are 3 int64 per user whatever d is; big chunks amortise the O(U·(P + d)) aggregation
        return 1 << 21

    # -- hashing helpers ---------------------------------------------------------------------------
    def _interval_start(self, r: np.ndarray) -> np.ndarray:
        """L_r = ⌈rP/g⌉ (r·P < 2^61)."""
        return (r * self.P + self.g - 1) // self.g

    def hash(self, a, b, v) -> np.ndarray:
        """H_{a,b}(v) = ⌊g·((a·v + b) mod P)/P⌋, broadcasting over int64 arrays."""
        y = (np.asarray(a, dtype=np.int64) * np.asarray(v, dtype=np.int64) + np.asarray(b, dtype=np.int64)) % self.P
        return y * self.g // self.P

    # -- the real protocol -----------------------------------------------------------------------
    def perturb(self, values, rng) -> np.ndarray:
        """Each user draws (a, b) uniformly (their own hash function) and reports (a, b, GRR_g(H(v)))."""
        v = check_values(values, self.d, "values")
        gen = as_generator(rng)
        m = v.shape[0]
        a = gen.integers(1, self.P, size=m, dtype=np.int64)
        b = gen.integers(0, self.P, size=m, dtype=np.int64)
        h = self.hash(a, b, v)
        keep = gen.random(m) < self._keep
        other = gen.integers(0, self.g - 1, size=m, dtype=np.int64)
        other += other >= h
        return np.stack((a, b, np.where(keep, h, other)), axis=1)

    def _check_reports(self, reports) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        arr = np.asarray(reports)
        if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] == 0:
            raise ValueError(f"reports must be a non-empty (n, 3) integer array of (a, b, r), got shape {arr.shape}")
        if arr.dtype.kind not in "iu":
            raise ValueError(f"reports must be integers, got dtype {arr.dtype}")
        arr = arr.astype(np.int64, copy=False)
        a, b, r = arr[:, 0], arr[:, 1], arr[:, 2]
        for col, lo, hi, what in ((a, 1, self.P, "a"), (b, 0, self.P, "b"), (r, 0, self.g, "r")):
            if np.any(col < lo) or np.any(col >= hi):
                raise ValueError(f"reports column {what} must lie in [{lo}, {hi})")
        return a, b, r

    def aggregate(self, reports) -> np.ndarray:
        """Support counts c_v = #{i : H_i(v) = r_i}, exactly, by the cheaper of two exact methods
        (see the module docstring): grouping by a (O(n + U(P + d))) or enumerating supports
        (O(n·⌈P/g⌉))."""
        a, b, r = self._check_reports(reports)
        n = a.shape[0]
        cost_group = min(n, self.P - 1) * (self.P + self.d) * 2 + n
        cost_enum = n * (self._m_large if self.P % self.g else self._m_small)
        if cost_group <= cost_enum:
            return self._aggregate_grouped(a, b, r)
        return self._aggregate_enumerate(a, b, r)

    def _aggregate_grouped(self, a, b, r) -> np.ndarray:
        """Group users by a. With x = a·v mod P, user i supports v iff (x + b_i) mod P ∈ [L_r, L_{r+1}),
        i.e. x lies in the cyclic interval [s_i, s_i + m_i) with s_i = (L_r − b_i) mod P. A difference
        array over x (one per distinct a) and a cumulative sum give, for every x, how many of that
        group's reports cover it; then c_v = Σ_a cover_a[a·v mod P]."""
        P, d = self.P, self.d
        L = self._interval_start(r)
        length = self._interval_start(r + 1) - L
        s = (L - b) % P
        e = s + length  # exclusive end, may pass P (wraps)
        order = np.argsort(a, kind="stable")
        a_sorted = a[order]
        ua, first = np.unique(a_sorted, return_index=True)
        bounds = np.append(first, a_sorted.shape[0])
        # a·v < P²: 32-bit products and remainders are ~2× faster when they fit
        small = P * P < (1 << 32)
        vs = np.arange(d, dtype=np.uint32 if small else np.int64)
        ua_t = ua.astype(vs.dtype)
        counts = np.zeros(d, dtype=np.int64)
        width = P + 1
        block = max(1, _BLOCK_CELLS // max(width, d))
        for g0 in range(0, ua.shape[0], block):  # blocks of distinct a, bounded memory
            g1 = min(ua.shape[0], g0 + block)
            sel = order[bounds[g0]:bounds[g1]]
            # local group index of each selected user
            grp = np.repeat(np.arange(g1 - g0, dtype=np.int64), np.diff(bounds[g0:g1 + 1]))
            base = grp * width
            ss, ee = s[sel], e[sel]
            wrap = ee > P
            plus = np.concatenate((base + ss, base[wrap]))
            minus = np.concatenate((base + np.minimum(ee, P), base[wrap] + (ee[wrap] - P)))
            size = (g1 - g0) * width
            diff = np.bincount(plus, minlength=size) - np.bincount(minus, minlength=size)
            # a group's cover count is at most its number of users (< 2^31 per aggregate call)
            cover = np.cumsum(diff.reshape(g1 - g0, width)[:, :P], axis=1, dtype=np.int32)
            x = np.multiply.outer(ua_t[g0:g1], vs)
            np.remainder(x, vs.dtype.type(P), out=x)
            x += (np.arange(g1 - g0, dtype=x.dtype) * P)[:, None]  # flat index into cover (< 2^23)
            counts += cover.ravel().take(x).sum(axis=0, dtype=np.int64)
        return counts

    def _aggregate_enumerate(self, a, b, r) -> np.ndarray:
        """Each report supports v = a⁻¹(y − b) mod P for y in its interval [L_r, L_{r+1}) (at most
        ⌈P/g⌉ values of y), kept when v < d. Enumerated in blocks of users; one bincount per block."""
        P, d = self.P, self.d
        M = self._m_large if P % self.g else self._m_small
        L = self._interval_start(r)
        length = self._interval_start(r + 1) - L
        ainv = _modinv(a, P)
        c0 = ainv * ((L - b) % P) % P
        ks = np.arange(M, dtype=np.int64)
        counts = np.zeros(d + 1, dtype=np.int64)
        step = max(1, _BLOCK_CELLS // M)
        for u0 in range(0, a.shape[0], step):
            u1 = min(a.shape[0], u0 + step)
            v = (c0[u0:u1, None] + ks[None, :] * ainv[u0:u1, None]) % P
            # out-of-interval y (k >= length) and v >= d go to the overflow bin d
            v[(ks[None, :] >= length[u0:u1, None]) | (v >= d)] = d
            counts += np.bincount(v.ravel(), minlength=d + 1)
        return counts[:d]

    def aggregate_naive(self, reports) -> np.ndarray:
        """Reference aggregator: evaluate H_i(v) for every user i and value v (O(n·d)); for tests."""
        a, b, r = self._check_reports(reports)
        vs = np.arange(self.d, dtype=np.int64)
        return (self.hash(a[:, None], b[:, None], vs[None, :]) == r[:, None]).sum(axis=0).astype(np.int64)

    # -- the fast path ---------------------------------------------------------------------------
    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """c_v = Binomial(n_v, p) + Binomial(n − n_v, q), independently over v: exact marginals,
        joint law of a fully random hash family (see the class docstring). O(d)."""
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        n = int(tc.sum())
        return (gen.binomial(tc, self.p) + gen.binomial(n - tc, self.q)).astype(np.int64)

    # -- exact output distribution -----------------------------------------------------------------
    def output_index(self, reports) -> np.ndarray:
        """Column of ``output_distribution`` for each report: ((a − 1)·P + b)·g + r."""
        a, b, r = self._check_reports(reports)
        return ((a - 1) * self.P + b) * self.g + r

    def output_distribution(self) -> np.ndarray:
        """Pr[(a, b, r) | v] = 1/(P(P−1)) · (p' if r = H_{a,b}(v) else (1 − p')/(g − 1)), enumerated
        over all (P − 1)·P·g outputs (column order of :meth:`output_index`)."""
        P, g, d = self.P, self.g, self.d
        cols = (P - 1) * P * g
        if d * cols > _ENUM_CELLS:
            raise ValueError(f"output space too large to enumerate: d·(P−1)·P·g = {d * cols} > {_ENUM_CELLS} "
                             f"(d={d}, g={g}, P={P}); use a smaller d or g")
        w = 1.0 / (P * (P - 1))
        return np.where(self.support_matrix(), self._keep * w, self._move_each * w)

    def support_matrix(self, reports=None) -> np.ndarray:
        """Per-report support, bool (m, d): report (a, b, r) supports v iff H_{a,b}(v) = r.

        Called without ``reports``: the enumeration (d, |Y|) over every output column y = (a, b, r),
        same column order and size limit as :meth:`output_distribution`."""
        if reports is not None:
            a, b, r = self._check_reports(reports)
            return self.hash(a[:, None], b[:, None], np.arange(self.d, dtype=np.int64)[None, :]) == r[:, None]
        P, g, d = self.P, self.g, self.d
        if d * (P - 1) * P * g > _ENUM_CELLS:
            raise ValueError(f"output space too large to enumerate: d·(P−1)·P·g = {d * (P - 1) * P * g} > {_ENUM_CELLS}")
        a, b = np.meshgrid(np.arange(1, P, dtype=np.int64), np.arange(P, dtype=np.int64), indexing="ij")
        h = self.hash(a.ravel()[None, :], b.ravel()[None, :], np.arange(d, dtype=np.int64)[:, None])
        return (h[:, :, None] == np.arange(g)[None, None, :]).reshape(d, -1)


class BLH(OLH):
    """Binary Local Hashing: OLH with g = 2 (arXiv §2.4 "Random Matrix Projection … local hash with g
    fixed at 2"; Wang et al. 2017 §4.4). Same exact hash family, p = e^ε/(e^ε + 1)."""

    name = "blh"

    def __init__(self, epsilon: float, d: int):
        super().__init__(epsilon, d, g=2)
