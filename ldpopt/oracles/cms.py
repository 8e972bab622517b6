r"""Apple's Count Mean Sketch (CMS) as a frequency oracle (Apple's Differential Privacy Team,
"Learning with Privacy at Scale", 2017: the client and server algorithms of §3 — Algorithms 1-4 as
we read them; we could not check the paper's equation numbers, the papers folder does not hold it).

Notes: docs/notes/sketches.md, "ldpopt.oracles.cms"."""

from __future__ import annotations

import abc
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import kernels
from .._validation import _check_int, as_generator, check_n, check_values
from .base import FrequencyOracle, ReportColumn
from .hashing import keyed_hash
from .unary import column_counts

if TYPE_CHECKING:  # scipy is imported where the collision matrix is built: `import ldpopt` stays light
    import scipy.sparse as sp

__all__ = ["CMS", "SketchOracle", "check_grouped_bits", "family_keys", "grouped_column_sums"]

# output-distribution enumeration limit: d × |Y| cells
_ENUM_CELLS = 1 << 22


def grouped_column_sums(groups: np.ndarray, bits: np.ndarray, size: int, device=None) -> tuple[np.ndarray, np.ndarray]:
    r"""(S, N): :math:`S[g, t] = \sum_{i : \mathrm{groups}_i = g} \mathrm{bits}[i, t]` (int64 (size, columns)) and N[g] the group
    sizes, for groups already checked to lie in [0, size). On ``device="cpu"`` (:mod:`ldpopt.kernels`;
    ``"auto"`` picks it for large inputs when Numba is installed) one fused pass adds each row's bytes
    into its group's counters (:func:`ldpopt.kernels.sketch.grouped_bit_sums`). On ``"numpy"``, the
    reference: the 0/1 rows are packed (8 bits a byte), sorted by group once (a stable radix sort of
    ≤ 16-bit keys), and the unary oracles' column count
    (:func:`ldpopt.oracles.unary.column_counts`) runs once per group (a hash function or a cohort,
    never a user). The same counts either way (``tests/test_kernels_sketch.py``)."""
    groups = np.asarray(groups)
    cols = bits.shape[1]
    dev = kernels.resolve(device, groups.shape[0] * cols)
    if dev == "cuda":
        raise ValueError("device: the sketches' bit counts run on 'numpy' or 'cpu', not 'cuda'")
    if dev == "cpu":
        from ..kernels.sketch import grouped_bit_sums

        S, N, bad = grouped_bit_sums(groups, bits, size)
        if bad:
            raise ValueError(f"groups must lie in [0, {size}); {bad} do not")
        return S, N
    N = np.bincount(groups, minlength=size).astype(np.int64)
    bounds = np.concatenate(([0], np.cumsum(N)))
    keys = groups.astype(np.uint16) if size <= 1 << 16 else groups
    packed = np.take(np.packbits(bits, axis=1), np.argsort(keys, kind="stable"), axis=0)
    S = np.zeros((size, cols), dtype=np.int64)
    for g in np.flatnonzero(N):  # one column count per group
        S[g] = column_counts(packed[bounds[g]: bounds[g + 1]], cols)
    return S, N


def check_grouped_bits(reports, group: str, size: int, columns: int, source: str, kinds: str = "biu"):
    """``reports`` = (group index, 0/1 bits) as ``source`` returns them — CMS's (j, bits), RAPPOR's
    (cohort, bits) — checked: group indices a non-empty 1-D integer array in [0, size), bits a 0/1
    array (dtype kinds ``kinds``) of shape (reports, columns). Returns (int64 groups, bool bits)."""
    if not isinstance(reports, tuple) or len(reports) != 2:
        raise ValueError(f"reports must be a tuple ({group}, bits) as returned by {source}")
    g, bits = np.asarray(reports[0]), np.asarray(reports[1])
    if g.ndim != 1 or g.shape[0] == 0 or g.dtype.kind not in "iu" or np.any(g < 0) or np.any(g >= size):
        raise ValueError(f"reports: {group} must be a non-empty 1-D integer array in [0, {size})")
    if (bits.shape != (g.shape[0], columns) or bits.dtype.kind not in kinds
            or (bits.dtype != bool and np.any((bits != 0) & (bits != 1)))):
        raise ValueError(f"reports: bits must be a 0/1 array of shape ({g.shape[0]}, {columns})")
    return g.astype(np.int64), bits.astype(bool, copy=False)


def family_keys(seed: int, count: int) -> np.ndarray:
    """``count`` 64-bit keys (int64 bit patterns) of a fixed keyed-hash family, drawn from ``seed``."""
    gen = np.random.default_rng(seed)
    return gen.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=count, dtype=np.int64, endpoint=True)


def family_params(params: dict[str, Any], table) -> dict[str, Any]:
    """A sketch oracle's structural parameters: ``params`` as they are, or, when its hash family is
    another implementation's ``table``, with ``hash_seed`` replaced by the table's SHA-1
    (``family_sha1``, of its int64 bytes)."""
    import hashlib

    items = dict(params)
    if table is not None:
        items.pop("hash_seed", None)
        items["family_sha1"] = hashlib.sha1(np.ascontiguousarray(table, np.int64).tobytes()).hexdigest()
    return items


class SketchOracle(FrequencyOracle):
    """Shared part of CMS and HCMS: k fixed hash functions into m buckets (module notes)."""

    pure = False
    structural = ("k", "m", "hash_seed")
    kernel_devices = ("cpu", "cuda")
    k_default = 64
    m_default = 1024

    def __init__(self, epsilon: float, d: int, k: int | None = None, m: int | None = None, hash_seed: int = 0,
                 buckets=None):
        super().__init__(epsilon, d)
        self.m = _check_int(self.m_default if m is None else m, "m", 2)
        self.hash_seed = _check_int(hash_seed, "hash_seed", 0)
        self._buckets: np.ndarray | None = None
        self._flat: np.ndarray | None = None  # l·m + h_l(v), flattened (_gather)
        if buckets is not None:  # another implementation's family, as its (k, d) table h_l(v)
            b = np.asarray(buckets)
            if b.ndim != 2 or b.shape[1] != self.d or b.shape[0] < 1 or b.dtype.kind not in "iu":
                raise ValueError(f"buckets must be an integer (k, d = {self.d}) table of h_l(v), got shape {b.shape}")
            if np.any(b < 0) or np.any(b >= self.m):
                raise ValueError(f"buckets must lie in [0, m = {self.m})")
            if k is not None and int(k) != b.shape[0]:
                raise ValueError(f"k = {k} disagrees with the {b.shape[0]} rows of buckets")
            k = b.shape[0]
            self._buckets = b.astype(np.int64)
            self._buckets.setflags(write=False)
        #: the family is another implementation's table, not the one ``hash_seed`` draws
        self.family_given = buckets is not None
        self.k = _check_int(self.k_default if k is None else k, "k", 1)

    # -- the family ------------------------------------------------------------------------------
    @property
    def buckets(self) -> np.ndarray:
        """:math:`h_l(v)` for every hash l and value v, int64 (k, d) (computed once, read-only)."""
        if self._buckets is None:
            keys = family_keys(self.hash_seed, self.k)
            b = keyed_hash(keys[:, None], np.arange(self.d, dtype=np.int64)[None, :], self.m)
            b.setflags(write=False)
            self._buckets = b
        return self._buckets

    def _gather(self, T: np.ndarray) -> np.ndarray:
        r""":math:`\sum_l T[l, h_l(v)]` for every v: one ``take`` over the flattened (k, m) table with the family's
        flat indices :math:`l·m + h_l(v)`, computed once (4× faster than the 2-D fancy index at k = 64, d = 1000)."""
        if self._flat is None:
            flat = (self.buckets + (np.arange(self.k, dtype=np.int64) * self.m)[:, None]).ravel()
            flat.setflags(write=False)
            self._flat = flat
        return np.take(np.ascontiguousarray(T).ravel(), self._flat).reshape(self.k, self.d).sum(axis=0)

    def params(self) -> dict[str, Any]:
        return {"k": self.k, "m": self.m, "hash_seed": self.hash_seed}  # (a given buckets table is not a param)

    def structural_params(self) -> dict[str, Any]:
        """``params()``; with another implementation's table, its SHA-1 (``family_sha1``) in place of
        ``hash_seed``."""
        return family_params(self.params(), self.buckets if self.family_given else None)

    def chunk_size(self) -> int:
        return max(1, (1 << 24) // self.m)

    # -- collisions --------------------------------------------------------------------------------
    def collision_matrix(self) -> sp.csr_matrix:
        """a_{xv} = (1/k)·#{l : h_l(x) = h_l(v)} as a sparse symmetric (d, d) matrix (diagonal 1)."""
        import scipy.sparse as sp

        d, k, m = self.d, self.k, self.m
        cols = (np.arange(k)[:, None] * m + self.buckets).T.ravel()
        B = sp.csr_matrix((np.ones(d * k), (np.repeat(np.arange(d), k), cols)), shape=(d, k * m))
        return (B @ B.T).tocsr() / k

    def bias_given_hashes(self, f) -> np.ndarray:
        """E[f̃ | family] − f at true frequencies f (module notes), exact for the family held."""
        f = self._check_f(f)
        A = self.collision_matrix()
        r = self.m / (self.m - 1)
        return r * (A @ f - f.sum() / self.m) - f

    def _check_f(self, f) -> np.ndarray:
        f = np.asarray(f, dtype=np.float64)
        if f.shape != (self.d,) or not np.all(np.isfinite(f)) or np.any(f < 0):
            raise ValueError(f"f must be {self.d} finite non-negative frequencies, got shape {f.shape}")
        return f

    def _per_user_second_moment(self, A: sp.csr_matrix, f: np.ndarray) -> np.ndarray:
        r""":math:`\sum_x f_x \mathrm{Var}[X_x(v) \mid \text{family}]` for every v (subclass: CMS or HCMS's per-user variance)."""
        raise NotImplementedError

    def variance_given_hashes(self, f, n: int) -> np.ndarray:
        """Var[f̃_v | family] at true frequencies f with n users, exact for the family held."""
        n = check_n(n, "n")
        f = self._check_f(f)
        r = self.m / (self.m - 1)
        return r * r * self._per_user_second_moment(self.collision_matrix(), f) / n

    def _expected_second_moment(self, f: np.ndarray) -> np.ndarray:
        r"""E over the family of :math:`\sum_x f_x \mathrm{Var}[X_x(v) \mid \text{family}]` (subclass)."""
        raise NotImplementedError

    def variance(self, f, n: int) -> np.ndarray:
        r""":math:`\mathrm{Var}[\tilde f_v]` over the random family (module notes), frequency units: the expected
        conditional variance plus the collisions' bias variance."""
        n = check_n(n, "n")
        f = self._check_f(f)
        r = self.m / (self.m - 1)
        return r * r / n * self._expected_second_moment(f) + self.collision_variance(f)

    def mse_given_hashes(self, f, n: int) -> np.ndarray:
        """E[(f̃_v − f_v)² | family] = variance + bias² for the family held."""
        return self.variance_given_hashes(f, n) + self.bias_given_hashes(f) ** 2

    def collision_variance(self, f) -> np.ndarray:
        r"""The family's share of :math:`\mathrm{Var}[\tilde f_v]`: Var over the family of the collision bias,
        :math:`\sum_{x≠v} f_x^2 / (k(m − 1))` (module notes); does not shrink with n."""
        f = self._check_f(f)
        return ((f * f).sum() - f * f) / (self.k * (self.m - 1))

    # -- the fast path ---------------------------------------------------------------------------
    def _row_buckets(self, tc: np.ndarray, gen) -> tuple[np.ndarray, np.ndarray]:
        """A (k, m): users of row l whose value hashes to bucket t, and N (k,) the row sizes, for
        users with histogram tc who each pick a row uniformly (one multinomial per value)."""
        k, m = self.k, self.m
        nvj = gen.multinomial(tc, np.full(k, 1.0 / k))  # (d, k)
        idx = (np.arange(k)[:, None] * m + self.buckets).ravel()
        A = np.bincount(idx, weights=nvj.T.ravel(), minlength=k * m).reshape(k, m)
        return np.rint(A).astype(np.int64), nvj.sum(axis=0).astype(np.int64)

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        tc = self._check_true_counts(true_counts)
        return self.counts_from_sketch(*self.sample_sketch(tc, rng))

    @abc.abstractmethod
    def sample_sketch(self, true_counts, rng) -> tuple[np.ndarray, np.ndarray]:
        """(sketch, N): the aggregated sketch and the row sizes, drawn from their exact joint law."""

    @abc.abstractmethod
    def counts_from_sketch(self, sketch, N) -> np.ndarray:
        """Support counts :math:`c_v` (int64, length d) from a sketch and its row sizes ``N``."""

    # -- privacy ---------------------------------------------------------------------------------
    def exact_epsilon(self) -> float:
        """ε of the mechanism with the family held: ``epsilon`` if some :math:`h_l` separates two values,
        else 0 (every report then has the same law under every value)."""
        separated = bool(np.any(self.buckets.max(axis=1) != self.buckets.min(axis=1)))
        return self.epsilon if separated else 0.0

    def _check_enumerable(self, outputs: int) -> None:
        if self.d * outputs > _ENUM_CELLS:
            raise ValueError(f"output space too large to enumerate: d·|Y| = {self.d * outputs} > {_ENUM_CELLS}; "
                             f"use a smaller m or k")


class CMS(SketchOracle):
    """Apple's Count Mean Sketch (module notes).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0 (each coordinate flipped w.p. :math:`1/(1 + e^{ε/2})`).
    d : int
        Domain size (values 0 … d−1), d ≥ 2.
    k, m : int, optional
        Number of hash functions (≥ 1, default 64) and buckets (≥ 2, default 1024).
    hash_seed : int
        Seed of the fixed hash family (clients and server must use the same).
    buckets : int array (k, d), optional
        Another implementation's family as its table :math:`h_l(v)` (e.g. a peer library's hashes); replaces
        the keyed family (k is then its number of rows).

    Notes
    -----
    Reports: ``perturb`` returns a tuple (j, bits): j int64 (n,) the hash index, bits bool (n, m)
    the coordinates of ṽ that are +1. Apple's Differential Privacy Team, "Learning with Privacy at
    Scale", 2017 (module notes).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.cms import CMS
    >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
    >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
    >>> sketch.aggregate(reports)
    array([50, 41, 34, 38, 29, 32, 30, 32])
    """

    name = "cms"

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``j: int64``, ``bits: fixed_size_binary(⌈m/8⌉)``: the hash index j ∈ [0, k) and the m bits
        [ṽ = +1], packed as OUE's (``perturb`` returns them unpacked; the shard packs them).

        See ``FrequencyOracle.report_columns``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> [column.name for column in sketch.report_columns()]
        ['j', 'bits']
        """
        return (ReportColumn("j", "int64"), ReportColumn("bits", "bytes", (self.m + 7) // 8, bits=self.m))

    @property
    def _keep(self) -> float:
        return 1.0 / (1.0 + math.exp(-self.epsilon / 2))

    @property
    def p(self) -> float:
        """Pr[a report supports its own value] = :math:`1/(1 + e^{−ε/2})` (the pure view, module notes).

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> round(sketch.p, 4)
        0.7311
        """
        return self._keep

    @property
    def q(self) -> float:
        """Pr[a report supports another value] over the family: (1 − p) + (2p − 1)/m.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> round(sketch.q, 4)
        0.2978
        """
        return (1.0 - self._keep) + (2.0 * self._keep - 1.0) / self.m

    @property
    def c_epsilon(self) -> float:
        """Apple's :math:`c_ε = (e^{ε/2} + 1)/(e^{ε/2} − 1)`.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> round(sketch.c_epsilon, 4)
        2.164
        """
        return 1.0 / math.tanh(self.epsilon / 4)

    # -- the real protocol -----------------------------------------------------------------------
    def perturb(self, values, rng) -> tuple[np.ndarray, np.ndarray]:
        """Each user's report: a uniform hash index j and the one-hot of :math:`h_j(v)` as ±1 with every
        coordinate flipped w.p. :math:`1/(1 + e^{ε/2})`.

        Parameters
        ----------
        values : array_like of int
            Users' values in [0, d).
        rng : int, numpy.random.Generator or "secure"
            The randomness.

        Returns
        -------
        j : ndarray of int64, shape (n,)
        bits : ndarray of bool, shape (n, m)
            The coordinates that are +1.

        Raises
        ------
        ValueError
            Values out of range.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> reports[0].shape, reports[1].shape
        ((100,), (100, 16))
        """
        v = check_values(values, self.d, "values")
        gen = as_generator(rng)
        n: int = v.shape[0]  # an int, so the checker types the draws as arrays
        j = gen.integers(0, self.k, size=n, dtype=np.int64)
        bits = gen.random((n, self.m)) < (1.0 - self._keep)
        bits[np.arange(n), self.buckets[j, v]] = gen.random(n) < self._keep
        return j, bits

    def _check_reports(self, reports) -> tuple[np.ndarray, np.ndarray]:
        return check_grouped_bits(reports, "j", self.k, self.m, "CMS.perturb", kinds="biu")

    def sketch(self, reports, device=None) -> tuple[np.ndarray, np.ndarray]:
        """(S, N): S[l, t] = #{reports with j = l and bit t set}, N[l] = #{reports with j = l}
        (``device``: who counts the bits, as in ``aggregate``).

        Parameters
        ----------
        reports : tuple of ndarray
            (j, bits).
        device : str, optional
            "numpy", "cpu", "cuda" or None/"auto".

        Returns
        -------
        S : ndarray of int64, shape (k, m)
        N : ndarray of int64, shape (k,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> S, N = sketch.sketch(reports)
        >>> S.shape, N
        ((4, 16), array([19, 25, 33, 23]))
        """
        j, bits = self._check_reports(reports)
        return grouped_column_sums(j, bits, self.k, device)

    def counts_from_sketch(self, S, N=None) -> np.ndarray:
        r"""Support counts :math:`c_v = \sum_l S[l, h_l(v)]` (int64, length d).

        Parameters
        ----------
        S : array_like, shape (k, m)
            The sketch.
        N : array_like, optional
            Not used (the signature of :meth:`HCMS.counts_from_sketch`).

        Returns
        -------
        ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            ``S`` of the wrong shape.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> sketch.counts_from_sketch(*sketch.sketch(reports))
        array([50, 41, 34, 38, 29, 32, 30, 32])
        """
        S = np.asarray(S)
        if S.shape != (self.k, self.m):
            raise ValueError(f"S must have shape (k, m) = ({self.k}, {self.m}), got {S.shape}")
        return self._gather(S).astype(np.int64)

    def sketch_matrix(self, S, N) -> np.ndarray:
        r"""Apple's sketch matrix :math:`M[l, t] = \sum_{j_i = l} k(c_ε/2·\tilde v_i[t] + 1/2)` from (S, N) (ṽ = 2b − 1).

        Parameters
        ----------
        S : array_like, shape (k, m)
            The sketch.
        N : array_like, shape (k,)
            Reports per hash index.

        Returns
        -------
        ndarray of float64, shape (k, m)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> sketch.sketch_matrix(*sketch.sketch(reports)).shape
        (4, 16)
        """
        c = self.c_epsilon
        S, N = np.asarray(S, dtype=np.float64), np.asarray(N, dtype=np.float64)[:, None]
        return self.k * (c * S + (1.0 - c) / 2.0 * N)

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Support counts from the reports through the sketch (``device``: who counts the sketch's
        bits — "numpy", "cpu" or "auto", :mod:`ldpopt.kernels`; the same counts on each).

        Parameters
        ----------
        reports : tuple of ndarray
            (j, bits).
        device : str, optional
            As above.

        Returns
        -------
        ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            Malformed reports.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> sketch.aggregate(reports)
        array([50, 41, 34, 38, 29, 32, 30, 32])
        """
        return self.counts_from_sketch(*self.sketch(reports, device))

    def support_matrix(self, reports=None) -> np.ndarray:
        """Which values each report supports: bit :math:`h_j(v)` of the report is +1 (bool (n, d)); with no
        reports, :meth:`output_supports`.

        Parameters
        ----------
        reports : tuple of ndarray, optional
            (j, bits).

        Returns
        -------
        ndarray of bool

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> bool((sketch.support_matrix(reports).sum(axis=0) == sketch.aggregate(reports)).all())
        True
        """
        if reports is None:
            return self.output_supports()
        j, bits = self._check_reports(reports)
        return bits[np.arange(j.shape[0])[:, None], self.buckets[j]]

    # -- the fast path ---------------------------------------------------------------------------
    def sample_sketch(self, true_counts, rng) -> tuple[np.ndarray, np.ndarray]:
        """(S, N) drawn from their exact joint law (module notes).

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            Users per value.
        rng : int or numpy.random.Generator
            The randomness.

        Returns
        -------
        S : ndarray of int64, shape (k, m)
        N : ndarray of int64, shape (k,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.cms import CMS
        >>> sketch = CMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> S, N = sketch.sample_sketch([40, 30, 10, 10, 5, 3, 2, 0], rng=0)
        >>> S.shape, int(N.sum())
        ((4, 16), 100)
        """
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        A, N = self._row_buckets(tc, gen)
        S = gen.binomial(A, self._keep) + gen.binomial(N[:, None] - A, 1.0 - self._keep)
        return S.astype(np.int64), N

    # -- variance ----------------------------------------------------------------------------------
    def _per_user_second_moment(self, A, f):
        c = self.c_epsilon
        a2 = A.multiply(A)
        # Σ_x f_x a_xv (1 − a_xv) = (A f − A∘A f)_v; the diagonal (a = 1) contributes 0
        return (c * c - 1.0) / 4.0 * f.sum() + (A @ f - a2 @ f)

    def _expected_second_moment(self, f):
        c, m, k = self.c_epsilon, self.m, self.k
        tot = f.sum()
        return (c * c - 1) / 4 * tot + (1 / m) * (1 - 1 / m) * (1 - 1 / k) * (tot - f)

    # -- exact output distribution -------------------------------------------------------------------
    def _outputs(self) -> tuple[np.ndarray, np.ndarray]:
        r"""Every output (j, bits) in the column order :math:`j·2^m + \mathrm{mask}` (bit t of mask = coordinate t)."""
        self._check_enumerable(self.k * (1 << self.m))
        masks = np.arange(1 << self.m)
        bits = ((masks[:, None] >> np.arange(self.m)[None, :]) & 1).astype(bool)  # (2^m, m)
        return np.repeat(np.arange(self.k), 1 << self.m), np.tile(bits, (self.k, 1))

    def output_distribution(self) -> np.ndarray:
        r"""Exact Pr[(j, bits) | v], shape :math:`(d, k·2^m)`, column :math:`j·2^m + \mathrm{mask}` (tiny k, m only).

        Returns
        -------
        ndarray, shape :math:`(d, k·2^m)`

        Raises
        ------
        ValueError
            Too many outputs to enumerate.

        Examples
        --------
        >>> from ldpopt.oracles.cms import CMS
        >>> P = CMS(2.0, 3, k=2, m=2).output_distribution()
        >>> P.shape, P.sum(axis=1).round(12)
        ((3, 8), array([1., 1., 1.]))
        """
        j, bits = self._outputs()
        onehot = np.arange(self.m)[None, None, :] == self.buckets[j].T[:, :, None]  # (d, |Y|, m)
        agree = onehot == bits[None, :, :]
        keep = self._keep
        return np.exp(np.log(np.where(agree, keep, 1 - keep)).sum(axis=2)) / self.k

    def output_supports(self) -> np.ndarray:
        """S(y) for every output column of :meth:`output_distribution`, bool (d, |Y|).

        Returns
        -------
        ndarray of bool, shape :math:`(d, k·2^m)`

        Examples
        --------
        >>> from ldpopt.oracles.cms import CMS
        >>> CMS(2.0, 3, k=2, m=2).output_supports().shape
        (3, 8)
        """
        j, bits = self._outputs()
        return bits[np.arange(j.shape[0])[None, :], self.buckets[j].T]
