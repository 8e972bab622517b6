"""Unary-encoding frequency oracles: OUE and SUE, basic RAPPOR (Wang et al. arXiv §2.3).

Notes: docs/notes/python.md, "ldpopt.oracles.unary"."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import kernels
from .._validation import as_generator, check_values
from .base import IndependentSupports, ReportColumn

__all__ = ["OUE", "SUE"]

# Bits per chunk of users on the real path (2 MiB of packed reports): large enough that numpy call
# overhead is negligible, small enough that the working set stays in cache.
_UNARY_CHUNK_BITS = 1 << 24
# Rows of packed reports aggregated at once (bounds aggregate's temporaries to ~2x this block).
_AGG_BLOCK_BYTES = 1 << 23
# Stop the bit-sliced row reduction when the rows left hold this many bytes and unpack them (below
# this, numpy call overhead costs more than unpacking).
_AGG_STOP_BYTES = 1 << 12
# Largest d for which output_distribution enumerates the 2^d bit vectors.
_MAX_ENUM_D = 16


# -- exact, fast Bernoulli(q) bit generation -------------------------------------------------------
def _alias_table(prob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker/Vose alias table for ``prob`` (N outcomes): (threshold in [0, 1], alias index).

    Outcome = J if U < threshold[J] else alias[J], with J uniform on N columns and U uniform on [0, 1).
    The bookkeeping is done in exact integer arithmetic (each float prob is a dyadic rational), so the
    only rounding is one correctly rounded division per threshold: the table reproduces ``prob``
    (normalised) to ~1e-16 absolute, where float bookkeeping accumulates ~1e-13 in the large cells.
    A one-off O(N) loop (N = 65536), cached per q by :func:`_bernoulli_tables`.
    """
    n = prob.shape[0]
    ratios = [float(x).as_integer_ratio() for x in prob]
    shift = max(den for _, den in ratios).bit_length() - 1  # every den is a power of two
    # masses as integers on a common scale; a column holds `cap` = (total mass)/n units, scaled by n
    mass = [num << (shift - (den.bit_length() - 1)) for num, den in ratios]
    cap = sum(mass)
    scaled = [a * n for a in mass]
    threshold = [1.0] * n
    alias = list(range(n))
    small = [i for i, s in enumerate(scaled) if s < cap]
    large = [i for i, s in enumerate(scaled) if s >= cap]
    while small and large:
        s = small.pop()
        g = large[-1]
        threshold[s] = scaled[s] / cap  # int / int: correctly rounded
        alias[s] = g
        scaled[g] -= cap - scaled[s]
        if scaled[g] < cap:
            large.pop()
            small.append(g)
    # exact arithmetic leaves no residue: both lists end with columns of exactly `cap` (threshold 1)
    return np.array(threshold, dtype=np.float64), np.array(alias, dtype=np.int64)


@lru_cache(maxsize=32)
def _bernoulli_tables(q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Alias tables for 16 iid Bernoulli(q) bits: (⌊256·threshold⌋ as uint8, fractional part, alias).

    ``threshold`` is split as 256·threshold = F + frac with F ≤ 255 (a threshold of exactly 1 gives
    F = 255, frac = 1, which accepts every U, as it should).
    """
    s = np.arange(1 << 16, dtype=np.uint16)
    w = np.bitwise_count(s).astype(np.float64)
    # log-space so that tiny q (ε = 50: q ≈ 2e-22) underflows gracefully instead of giving 0 * inf
    log_q = np.log(q)
    log_1mq = np.log1p(-q)
    prob = np.exp(w * log_q + (16.0 - w) * log_1mq)
    threshold, alias = _alias_table(prob / prob.sum())
    scaled = threshold * 256.0  # exact: multiplication by a power of two
    f = np.minimum(np.floor(scaled), 255.0)
    frac = scaled - f
    f8 = f.astype(np.uint8)
    alias16 = alias.astype(np.uint16)
    for a in (f8, frac, alias16):
        a.setflags(write=False)
    return f8, frac, alias16


def _bernoulli_bytes(q: float, nbytes: int, gen: np.random.Generator) -> np.ndarray:
    """``nbytes`` bytes whose 8·nbytes bits are iid Bernoulli(q) (exact to double precision)."""
    f8, frac, alias16 = _bernoulli_tables(float(q))
    nsym = (nbytes + 1) // 2
    # 3 random bytes per 16-bit symbol: 2 choose the alias column J, 1 is the coarse uniform U8
    raw = gen.bit_generator.random_raw((3 * nsym + 7) // 8).view(np.uint8)
    col = raw[: 2 * nsym].view(np.uint16)
    u8 = raw[2 * nsym: 3 * nsym]
    thr = f8.take(col)
    out = alias16.take(col)
    # where U8 < F the uniform U = (U8 + V)/256 is below the threshold whatever V is: keep column J
    keep = u8 < thr
    mask = np.negative(keep.view(np.int8).astype(np.int16)).view(np.uint16)  # 0 or 0xFFFF
    out ^= (col ^ out) & mask
    # U8 == F: the fractional part decides; refine with a uniform double V (1/256 of the symbols)
    tie = np.flatnonzero(u8 == thr)
    if tie.size:
        jt = col[tie]
        accept = gen.random(tie.size) < frac[jt]
        out[tie] = np.where(accept, jt, alias16[jt])
    return out.view(np.uint8)[:nbytes]


# -- column counts of packed bit matrices --------------------------------------------------------
def _add_planes(a: list[np.ndarray], b: list[np.ndarray]) -> list[np.ndarray]:
    """Ripple-carry sum of two bit-sliced numbers (lists of planes, least significant first, all of
    one shape); the lists may have different lengths."""
    if len(a) < len(b):
        a, b = b, a
    out: list[np.ndarray] = []
    carry = None
    for i, ai in enumerate(a):
        bi = b[i] if i < len(b) else None
        if bi is None:
            if carry is None:
                out.extend(a[i:])
                return out
            out.append(ai ^ carry)
            carry = ai & carry
        elif carry is None:
            out.append(ai ^ bi)
            carry = ai & bi
        else:
            t = ai ^ bi
            out.append(t ^ carry)
            carry = (ai & bi) | (t & carry)
    if carry is not None:  # None only when both numbers have no planes (their sum has none)
        out.append(carry)
    return out


def _column_counts_block(packed: np.ndarray) -> np.ndarray:
    """Number of set bits in each of the 8·B bit columns of a (m, B) uint8 array (m ≥ 1).

    The two halves of the rows are added with bit-sliced ripple-carry adders: a count is held as
    planes (plane i = bit i of the count, for 8·B columns at once), so each level halves the rows and
    adds one plane; ~7 byte operations per input byte in total. An odd last row is added into a
    one-row accumulator the same way. The reduction stops when the rows left span ≤ _AGG_STOP_BYTES
    (numpy call overhead would dominate); only those are unpacked.
    """
    nb = packed.shape[1]
    stop = max(1, _AGG_STOP_BYTES // nb)
    planes = [packed]
    acc: list[np.ndarray] = []  # one-row bit-sliced accumulator for odd rows
    rows = packed.shape[0]
    while rows > stop:
        if rows % 2:
            acc = _add_planes(acc, [pl[rows - 1: rows] for pl in planes])
            rows -= 1
        h = rows // 2
        planes = _add_planes([pl[:h] for pl in planes], [pl[h:rows] for pl in planes])
        rows = h
    counts = np.zeros(8 * nb, dtype=np.int64)
    for group in (planes, acc):
        for i, pl in enumerate(group):
            counts += np.unpackbits(pl[:rows] if group is planes else pl, axis=1).sum(
                axis=0, dtype=np.int64) << i
    return counts


def column_counts(packed: np.ndarray, d: int) -> np.ndarray:
    """Number of set bits in each of the first ``d`` bit columns of a packed (m, ⌈d/8⌉) uint8 array,
    processed in blocks of rows so memory stays bounded. Padding bits beyond d are ignored."""
    m, nb = packed.shape
    step = max(1, _AGG_BLOCK_BYTES // max(nb, 1))
    counts = np.zeros(8 * nb, dtype=np.int64)
    for start in range(0, m, step):
        counts += _column_counts_block(packed[start: start + step])
    return counts[:d]


# -- the oracles ---------------------------------------------------------------------------------
class _UnaryEncoding(IndependentSupports):
    """Shared machinery of OUE and SUE: one-hot encoding, bit i kept/set independently.

    Subclasses define p, q and their complements 1 − p, 1 − q (computed without cancellation).
    """

    report_form = "unary"
    kernel_devices = ("cpu", "cuda")

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``bits: fixed_size_binary(⌈d/8⌉)``: the packed perturbed one-hot vector, as ``perturb``
        returns it (np.packbits order, padding bits 0)."""
        return (ReportColumn("bits", "bytes", self.nbytes),)

    @property
    def _one_minus_p(self) -> float:
        raise NotImplementedError

    @property
    def _one_minus_q(self) -> float:
        raise NotImplementedError

    @property
    def nbytes(self) -> int:
        """Bytes per packed report, ⌈d/8⌉."""
        return (self.d + 7) // 8

    def chunk_size(self) -> int:
        """Users per chunk on the real path: 2^24 bits (2 MiB of packed reports) per chunk."""
        return max(1, _UNARY_CHUNK_BITS // self.d)

    def perturb(self, values, rng) -> np.ndarray:
        """Client side: packed perturbed one-hot vectors, shape (m, ⌈d/8⌉), uint8 (np.packbits order).

        Bit u ≠ v is 1 w.p. q, bit v is 1 w.p. p, all independent (arXiv §2.3).
        """
        v = check_values(values, self.d)
        gen = as_generator(rng)
        m: int = v.shape[0]  # an int, so the checker types gen.random(m) as an array
        nb = self.nbytes
        flat = _bernoulli_bytes(self.q, m * nb, gen)
        # own bit: overwrite with an independent Bernoulli(p)
        own = gen.random(m) < self.p
        idx = np.arange(m, dtype=np.int64) * nb + (v >> 3)
        bit = (np.uint8(0x80) >> (v & 7).astype(np.uint8)).astype(np.uint8)
        flat[idx] = (flat[idx] & ~bit) | (bit * own.astype(np.uint8))
        reports = flat.reshape(m, nb)
        if self.d % 8:
            reports[:, -1] &= np.uint8((0xFF << (8 - self.d % 8)) & 0xFF)  # zero the padding bits
        return reports

    def _check_reports(self, reports) -> np.ndarray:
        if not isinstance(reports, np.ndarray) or reports.dtype != np.uint8:
            raise TypeError("reports must be a uint8 numpy array of packed bits (as returned by perturb)")
        if reports.ndim != 2 or reports.shape[1] != self.nbytes or reports.shape[0] < 1:
            raise ValueError(f"reports must have shape (m >= 1, {self.nbytes}) for d = {self.d}, "
                             f"got {reports.shape}")
        return reports

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Server side: :math:`c_v` = number of reports with bit v set (int64, length d); ``device``: see
        the base class (``"numpy"``: :func:`column_counts`)."""
        r = self._check_reports(reports)
        dev = kernels.resolve(device, r.size)
        if dev == "numpy":
            return column_counts(np.ascontiguousarray(r), self.d)
        return kernels.column_counts(r, self.d, dev)

    def support_matrix(self, reports) -> np.ndarray:
        """(m, d) bool: the unpacked bits (report i supports v iff bit v is set)."""
        return np.unpackbits(self._check_reports(reports), axis=1, count=self.d).astype(bool)

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        r"""Exact in distribution: the bits of different users and of different positions are
        independent, so :math:`c_v = \mathrm{Binomial}(n_v, p) + \mathrm{Binomial}(n − n_v, q)`, independently across v.
        O(d), no per-user work."""
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        n = int(tc.sum())
        return gen.binomial(tc, self.p) + gen.binomial(n - tc, self.q)

    def output_distribution(self) -> np.ndarray:
        r"""Exact Pr[Ψ(v) = Y], shape :math:`(d, 2^d)`; column j is the set {u : bit u of j is 1}
        (:math:`j = \sum_{u∈Y} 2^u`). Only for d ≤ 16."""
        if self.d > _MAX_ENUM_D:
            raise ValueError(f"d = {self.d} is too large to enumerate the 2^d outputs of "
                             f"{self.name.upper()} (max d = {_MAX_ENUM_D})")
        d = self.d
        bits = ((np.arange(1 << d)[:, None] >> np.arange(d)) & 1).astype(bool)  # (2^d, d)
        other = np.where(bits, self.q, self._one_minus_q)  # factor of a non-own bit
        own = np.where(bits, self.p, self._one_minus_p)
        # Pr[v, y] = own[y, v] · Π_{u≠v} other[y, u]; the product over u ≠ v without division:
        # prefix and suffix products
        ones = np.ones((1 << d, 1))
        prefix = np.cumprod(np.hstack([ones, other[:, :-1]]), axis=1)
        suffix = np.cumprod(np.hstack([ones, other[:, :0:-1]]), axis=1)[:, ::-1]
        return (own * prefix * suffix).T

    def output_supports(self) -> np.ndarray:
        """Output j supports the set {u : bit u of j is 1}, shape (d, 2^d)."""
        return ((np.arange(1 << self.d)[None, :] >> np.arange(self.d)[:, None]) & 1).astype(bool)


class OUE(_UnaryEncoding):
    """Optimized Unary Encoding (Wang et al. arXiv §2.3; Wang et al. USENIX Security 2017):
    p = 1/2, :math:`q = 1/(e^ε + 1)`; :math:`p(1−q)/((1−p)q) = e^ε` exactly, Var Eq. 6 = :math:`(4e^ε/(e^ε−1)^2 + f_v)/n`.

    Reports: packed bit vectors (see module notes). ``sample_counts`` is exact (independent bits).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, finite and > 0.
    d : int
        Domain size, >= 2.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``d`` is out of range.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> o = oracles.OUE(epsilon=1.0, d=8)
    >>> round(o.p, 4), round(o.q, 4)
    (0.5, 0.2689)
    >>> o.simulate([4000, 3000, 1000, 800, 600, 400, 150, 50], rng=0).f_tilde.round(2)
    array([0.43, 0.32, 0.08, 0.09, 0.04, 0.09, 0.02, 0.02])
    """

    name = "oue"

    @property
    def p(self) -> float:
        return 0.5

    @property
    def _one_minus_p(self) -> float:
        return 0.5

    @property
    def q(self) -> float:
        # 1/(e^ε + 1) = e^−ε/(1 + e^−ε): no overflow at large ε
        e = np.exp(-self.epsilon)
        return float(e / (1.0 + e))

    @property
    def _one_minus_q(self) -> float:
        return float(1.0 / (1.0 + np.exp(-self.epsilon)))


class SUE(_UnaryEncoding):
    """Symmetric Unary Encoding = basic RAPPOR (Erlingsson et al. 2014; Wang et al. arXiv §2.3):
    every bit of the one-hot vector is flipped w.p. :math:`1/(e^{ε/2} + 1)`, so :math:`p = e^{ε/2}/(e^{ε/2} + 1)` and
    :math:`q = 1/(e^{ε/2} + 1)`. Two one-hot vectors differ in two bits, each contributing :math:`e^{ε/2}`, so the
    privacy ratio is :math:`e^ε` exactly.

    Reports: packed bit vectors (see module notes). ``sample_counts`` is exact (independent bits).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, finite and > 0.
    d : int
        Domain size, >= 2.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``d`` is out of range.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> o = oracles.SUE(epsilon=1.0, d=8)
    >>> round(o.p, 4), round(o.q, 4)
    (0.6225, 0.3775)
    >>> o.simulate([4000, 3000, 1000, 800, 600, 400, 150, 50], rng=0).f_tilde.round(2)
    array([0.4 , 0.32, 0.08, 0.09, 0.04, 0.08, 0.02, 0.02])
    """

    name = "sue"

    @property
    def p(self) -> float:
        return float(1.0 / (1.0 + np.exp(-self.epsilon / 2)))

    @property
    def _one_minus_p(self) -> float:
        return self.q

    @property
    def q(self) -> float:
        e = np.exp(-self.epsilon / 2)
        return float(e / (1.0 + e))

    @property
    def _one_minus_q(self) -> float:
        return self.p
