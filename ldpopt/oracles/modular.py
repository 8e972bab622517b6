"""Modular Subset Selection (Arcolezi, AAAI 2026, arXiv 2511.11569): a user reports a random
modulus index j and her value's residue mod m_j through Subset Selection; the server decodes the
residue-class frequencies by a variance-weighted least squares.

Notes: docs/notes/design.md, "ldpopt.oracles.modular"."""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import lsmr

from .._validation import as_generator, check_values
from ..estimate import Estimate
from ..noise import CountCovariance, ReportMoments
from .base import FrequencyOracle
from .subset import SS

__all__ = ["MSS", "default_moduli", "mss_decode"]

#: the largest d whose dense decoder (d × Σm) the oracle builds; beyond it use :func:`mss_decode`
MAX_DENSE_D = 4096
#: a block whose C(m, k)·m is at most this draws its subsets by enumeration (else SS's fast path)
_ENUM_CELLS = 1 << 14


def default_moduli(d: int, num: int = 3) -> tuple[int, ...]:
    """``num`` pairwise-coprime moduli from ⌈d/2⌉ up, each the next integer coprime with those taken
    (a choice: the paper's moduli selection was not available here; measured, moduli with Σm_j near d
    make the least squares ill-conditioned and the MSE many times SS's, docs/results/mss.md).

    Parameters
    ----------
    d : int
        Domain size, >= 2.
    num : int
        ℓ, the number of moduli, >= 2.

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> from ldpopt.oracles.modular import default_moduli
    >>> default_moduli(100, 3)
    (50, 51, 53)
    """
    if isinstance(num, bool) or not isinstance(num, numbers.Integral) or num < 2:
        raise ValueError(f"num must be an integer >= 2, got {num!r}")
    out: list[int] = []
    m = max(2, math.ceil(d / 2))
    while len(out) < num or sum(x - 1 for x in out) + 1 < d:  # a few candidates, not a loop over data
        if all(math.gcd(m, x) == 1 for x in out):
            out.append(m)
        m += 1
    return tuple(out)


def _check_moduli(moduli, d: int) -> tuple[int, ...]:
    try:
        ms = tuple(int(m) for m in moduli)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"moduli must be a sequence of integers >= 2, got {moduli!r}") from exc
    if len(ms) < 2 or any(m < 2 for m in ms) or any(float(a) != float(b) for a, b in zip(ms, moduli, strict=True)):
        raise ValueError(f"moduli must be at least two integers >= 2, got {moduli!r}")
    for i, a in enumerate(ms):
        for b in ms[i + 1:]:
            if math.gcd(a, b) != 1:
                raise ValueError(f"moduli must be pairwise coprime; gcd({a}, {b}) = {math.gcd(a, b)}")
    if sum(m - 1 for m in ms) + 1 < d:
        raise ValueError(f"moduli must satisfy Σ(m_j − 1) + 1 >= d = {d} (else the residue classes cannot "
                         f"identify every frequency), got {sum(m - 1 for m in ms) + 1}")
    return ms


def _design(moduli: tuple[int, ...], d: int) -> sp.csr_matrix:
    """A (Σm × d): row (j, a) holds the values v < d with v ≡ a (mod m_j)."""
    v = np.arange(d)
    offsets = np.cumsum((0,) + moduli[:-1])
    rows = np.concatenate([o + v % m for o, m in zip(offsets, moduli, strict=True)])
    cols = np.tile(v, len(moduli))
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(sum(moduli), d))


def mss_decode(block_counts, block_n, moduli, epsilon: float, d: int, atol: float = 1e-12,
               maxiter: int | None = None):
    """The server's decoder as the paper states it: per block j, Subset Selection's unbiased residue
    frequencies g_j = (C_j/n_j − q_j)/(p_j − q_j) from its n_j reports, then
    min_f Σ_j ‖A_j f − g_j‖²/σ_j² by LSMR (Fong and Saunders 2011) on the sparse design matrix,
    σ_j² = q_j(1 − q_j)/(n_j(p_j − q_j)²) (SS's variance at f → 0).

    Parameters
    ----------
    block_counts : sequence of array_like
        C_j, the residue support counts of block j (length m_j).
    block_n : sequence of int
        n_j, the reports of block j (a block with none is left out).
    moduli : sequence of int
        The moduli.
    epsilon : float
        ε.
    d : int
        Domain size.
    atol : float
        LSMR's tolerances (atol = btol).
    maxiter : int, optional
        LSMR's iteration cap (default 10·d).

    Returns
    -------
    (ndarray (d,), float)
        The estimate and the solve's seconds.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.modular import MSS, mss_decode
    >>> o = MSS(2.0, 10, moduli=(3, 4, 5))
    >>> C, nb = o.block_counts(o.perturb(np.repeat(np.arange(10), 300), rng=0))
    >>> f, secs = mss_decode(C, nb, o.moduli, 2.0, 10)
    >>> f.shape, bool(abs(f.sum() - 1) < 0.1)
    ((10,), True)
    """
    ms = _check_moduli(moduli, d)
    A = _design(ms, d)
    offsets = np.cumsum((0,) + ms[:-1])
    g, w, keep = [], [], []
    for j, m in enumerate(ms):  # ℓ blocks
        nj = int(block_n[j])
        if nj <= 0:
            continue
        ss = SS(epsilon, m)
        gj = (np.asarray(block_counts[j], dtype=np.float64) / nj - ss.q) / (ss.p - ss.q)
        g.append(gj)
        w.append(np.full(m, np.sqrt(nj * (ss.p - ss.q) ** 2 / (ss.q * (1 - ss.q)))))
        keep.append(np.arange(offsets[j], offsets[j] + m))
    rows = np.concatenate(keep)
    sw = np.concatenate(w)
    t0 = time.perf_counter()
    M = sp.diags(sw) @ A[rows]
    f = lsmr(M, sw * np.concatenate(g), atol=atol, btol=atol, maxiter=10 * d if maxiter is None else int(maxiter))[0]
    return f, time.perf_counter() - t0


class _MSSMoments(ReportMoments):
    r"""The report moments of MSS (module notes): a report (j, Y) contributes
    :math:`x = H_j 1_Y - h_0`; Subset Selection's :math:`E[1_Y 1_Y^T \mid r]` holds p, q on the diagonal
    and :math:`t_1 = p(k - 1)/(m - 1)` (a pair with r), :math:`t_0` (any other pair) off it, so with
    :math:`h = H_j^T w`, :math:`S = \sum h`, :math:`S_2 = \sum h^2`:
    :math:`E[(h^T 1_Y)^2 \mid r] = q S_2 + (p - q) h_r^2 + t_0((S - h_r)^2 - S_2 + h_r^2) + 2 t_1 h_r (S - h_r)`."""

    def __init__(self, oracle: MSS):
        self.d = oracle.d
        self._H, self._h0, self._ell = oracle._H, oracle._h0, oracle.ell
        self._blocks = []
        for j, (m, ss) in enumerate(zip(oracle.moduli, oracle._ss, strict=True)):  # ℓ blocks
            k, p = ss.k, ss.p
            t1 = p * (k - 1) / (m - 1)
            t0 = (p * (k - 1) * (k - 2) + (1 - p) * k * (k - 1)) / ((m - 1) * (m - 2)) if m > 2 else 0.0
            self._blocks.append((int(oracle._offsets[j]), m, float(p), float(ss.q), t0, t1))

    def query_moments(self, W=None) -> np.ndarray:
        W = np.eye(self.d) if W is None else np.asarray(W, dtype=np.float64)
        c0 = W @ self._h0  # (k,)
        out = np.zeros((W.shape[0], self.d))
        for off, m, p, q, t0, t1 in self._blocks:  # ℓ blocks
            h = W @ self._H[:, off:off + m]  # (k, m)
            S, S2 = h.sum(axis=1, keepdims=True), (h * h).sum(axis=1, keepdims=True)
            hr = h[:, np.arange(self.d) % m]  # (k, d): h at each value's residue
            sq = q * S2 + (p - q) * hr**2 + t0 * ((S - hr) ** 2 - S2 + hr**2) + 2 * t1 * hr * (S - hr)
            lin = q * S + (p - q) * hr
            out += (sq - 2 * c0[:, None] * lin) / self._ell
        return out + (c0**2)[:, None]

    def second_moment(self, f) -> np.ndarray:
        f = np.asarray(f, dtype=np.float64)
        h0 = self._h0
        M = f.sum() * np.outer(h0, h0)
        for off, m, p, q, t0, t1 in self._blocks:  # ℓ blocks
            H = self._H[:, off:off + m]
            g = np.bincount(np.arange(self.d) % m, weights=f, minlength=m)  # residue-class masses
            G, H1, Hg = g.sum(), H.sum(axis=1), H @ g
            Mbar = ((q - t0) * G * (H @ H.T) + t0 * G * np.outer(H1, H1) + (p - q + 2 * t0 - 2 * t1) * (H * g) @ H.T
                    + (t1 - t0) * (np.outer(Hg, H1) + np.outer(H1, Hg)))
            pi = q * G * H1 + (p - q) * Hg
            M += (Mbar - np.outer(pi, h0) - np.outer(h0, pi)) / self._ell
        return M


class MSS(FrequencyOracle):
    """Modular Subset Selection: report (j, SS_j(v mod m_j)), j uniform over ℓ pairwise-coprime moduli.

    The estimate is linear in the residue counts: with n/ℓ expected reports a block (a choice that
    keeps it linear and unbiased; :func:`mss_decode` is the paper's decoder with the actual n_j),
    f̂ = B D⁻¹(ℓC/n − q), B = (AᵀWA)⁻¹AᵀW the block-variance-weighted least squares and D the blocks'
    p_j − q_j. Support counts are *soft*, as :class:`ldpopt.design.DesignedOracle`'s: a report supports
    v by q + (p − q)h_v with h its unbiased contribution, so (c/n − q)/(p − q) = f̂ and every method
    takes the estimate (module notes). The dense B limits the oracle to d ≤ 4,096.

    Parameters
    ----------
    epsilon : float
        ε > 0 (each block's Subset Selection runs at ε with its optimal subset size).
    d : int
        Domain size, 2 ≤ d ≤ 4,096.
    moduli : sequence of int, optional
        Pairwise coprime, each ≥ 2, Σ(m_j − 1) + 1 ≥ d; default :func:`default_moduli` (ℓ = 3 from ⌈d/2⌉).

    Raises
    ------
    ValueError
        On a bad ε, d or moduli, or moduli whose residue classes do not identify every frequency.

    References
    ----------
    Arcolezi, *Private Frequency Estimation via Residue Number Systems*, AAAI 2026 (arXiv 2511.11569).

    Examples
    --------
    >>> from ldpopt.oracles.modular import MSS
    >>> o = MSS(1.0, 100)
    >>> o.moduli
    (50, 51, 53)
    >>> est = o.simulate([5000] * 50 + [1000] * 50, rng=0)
    >>> est.n, round(float(est.f_tilde[:50].sum()), 1)
    (300000, 0.8)
    """

    name: ClassVar[str] = "mss"
    label = "MSS"
    pure: ClassVar[bool] = False
    structural: ClassVar[tuple[str, ...]] = ("moduli",)

    def __init__(self, epsilon: float, d: int, moduli=None):
        super().__init__(epsilon, d)
        if self.d > MAX_DENSE_D:
            raise ValueError(f"d must be <= {MAX_DENSE_D} for the MSS oracle (its dense decoder); decode "
                             f"larger domains with mss_decode, got d = {self.d}")
        self.moduli = _check_moduli(default_moduli(self.d) if moduli is None else moduli, self.d)
        self.ell = len(self.moduli)
        self._ss = [SS(self.epsilon, m) for m in self.moduli]
        self._offsets = np.cumsum((0,) + self.moduli[:-1])
        A = _design(self.moduli, self.d).toarray()
        pq = np.concatenate([np.full(m, s.p - s.q) for m, s in zip(self.moduli, self._ss, strict=True)])
        qv = np.concatenate([np.full(m, s.q) for m, s in zip(self.moduli, self._ss, strict=True)])
        w = pq ** 2 / (qv * (1 - qv))  # inverse per-entry variance of a block's estimate, per report
        N = (A * w[:, None]).T @ A
        try:
            L = np.linalg.cholesky(N)
        except np.linalg.LinAlgError:
            raise ValueError(f"moduli {self.moduli}: the residue classes do not identify every frequency "
                             f"for d = {self.d}") from None
        B = np.linalg.solve(L.T, np.linalg.solve(L, (A * w[:, None]).T))  # (AᵀWA)⁻¹AᵀW, d × Σm
        self._H = self.ell * B / pq[None, :]  # a report's contribution per residue row
        self._h0 = B @ (qv / pq)
        lo = hi = None
        for j, m in enumerate(self.moduli):  # ℓ blocks: the extreme contributions of a subset of size k_j
            Hj = np.sort(self._H[:, self._offsets[j]:self._offsets[j] + m], axis=1)
            k = self._ss[j].k
            a, b = Hj[:, :k].sum(axis=1) - self._h0, Hj[:, -k:].sum(axis=1) - self._h0
            lo = a if lo is None else np.minimum(lo, a)
            hi = b if hi is None else np.maximum(hi, b)
        assert lo is not None and hi is not None
        self._s = 1.0 / float(hi.max() - lo.min())
        self._q = -float(lo.min()) * self._s
        self._width = max(s.k for s in self._ss)
        self._moments = _MSSMoments(self)

    @property
    def p(self) -> float:
        """The soft support's p (class notes).

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> o = MSS(1.0, 10, moduli=(3, 4, 5))
        >>> bool(0 <= o.q < o.p <= 1)
        True
        """
        return self._q + self._s

    @property
    def q(self) -> float:
        """The soft support's q (class notes).

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> bool(MSS(1.0, 10, moduli=(3, 4, 5)).q >= 0)
        True
        """
        return self._q

    @property
    def bits(self) -> int:
        """Bits a report needs: ⌈log₂ ℓ⌉ + max_j ⌈log₂ C(m_j, k_j)⌉ (the index and the subset's rank).

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> MSS(4.0, 10, moduli=(3, 4, 5)).bits  # k_j = 1: one residue
        5
        """
        return math.ceil(math.log2(self.ell)) + max(math.ceil(math.log2(math.comb(m, s.k)))
                                                    for m, s in zip(self.moduli, self._ss, strict=True))

    def params(self) -> dict[str, Any]:
        """The moduli.

        Returns
        -------
        dict

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> MSS(1.0, 10, moduli=(3, 4, 5)).params()
        {'moduli': (3, 4, 5)}
        """
        return {"moduli": self.moduli}

    # -- variance -----------------------------------------------------------------------------------
    def count_covariance(self, n: int, d: int) -> CountCovariance:
        """The exact covariance of f̂ from its reports' moments (module notes; no pair form: κ, A, B
        are NaN). The blocks' report counts are multinomial, which the moments include.

        See ``NoiseSource.count_covariance``.

        Parameters
        ----------
        n : int
            Users, >= 1.
        d : int
            The oracle's domain size.

        Returns
        -------
        CountCovariance

        Raises
        ------
        ValueError
            If n is not an integer >= 1 or d is not the oracle's.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.modular import MSS
        >>> c = MSS(1.0, 10, moduli=(3, 4, 5)).count_covariance(1000, 10)
        >>> bool(np.all(c.variance(np.full(10, 0.1)) > 0)), c.pair
        (True, None)
        """
        return CountCovariance.of_moments(self._moments, n, d, "the reports' exact moments")

    def variance(self, f, n: int) -> np.ndarray:
        """Exact Var of each f̂_v (:meth:`count_covariance`'s), f broadcast to (d,).

        Parameters
        ----------
        f : float or array_like
        n : int

        Returns
        -------
        ndarray (d,)

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> MSS(1.0, 10, moduli=(3, 4, 5)).variance(0.1, 1000).shape
        (10,)
        """
        return self.count_covariance(n, self.d).variance(f)

    def estimate(self, counts, n: int, **meta) -> Estimate:
        """The estimate of soft support counts, carrying this oracle as its noise source (its exact
        covariance, :meth:`count_covariance`).

        See ``FrequencyOracle.estimate``.

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> o = MSS(1.0, 10, moduli=(3, 4, 5))
        >>> o.simulate([10] * 10, rng=0).noise is o
        True
        """
        return replace(super().estimate(counts, n, **meta), noise_source=self)

    # -- client -------------------------------------------------------------------------------------
    def perturb(self, values, rng) -> tuple[np.ndarray, np.ndarray]:
        """Client side: (j (n,), subset (n, max_j k_j) of residues, −1 padded), j uniform.

        Parameters
        ----------
        values : array_like of int
            Values in [0, d).
        rng : int, Generator or "secure"

        Returns
        -------
        tuple of ndarray

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> j, sub = MSS(1.0, 10, moduli=(3, 4, 5)).perturb([0, 5, 9], rng=0)
        >>> j.shape, sub.shape
        ((3,), (3, 1))
        """
        v = check_values(values, self.d)
        gen = as_generator(rng)
        j = np.asarray(gen.integers(0, self.ell, v.shape[0]), dtype=np.int64)
        sub = np.full((v.shape[0], self._width), -1, dtype=np.int64)
        for b, (m, ss) in enumerate(zip(self.moduli, self._ss, strict=True)):  # ℓ blocks
            idx = np.flatnonzero(j == b)
            if idx.size:
                sub[idx, :ss.k] = ss.perturb(v[idx] % m, gen)
        return j, sub

    def _check_reports(self, reports) -> tuple[np.ndarray, np.ndarray]:
        if not (isinstance(reports, tuple) and len(reports) == 2):
            raise ValueError("reports must be the (j, subset) pair perturb returns")
        j, sub = np.asarray(reports[0]), np.asarray(reports[1])
        if j.ndim != 1 or sub.shape != (j.shape[0], self._width) or np.any(j < 0) or np.any(j >= self.ell):
            raise ValueError(f"reports must be j (n,) in [0, {self.ell}) and subsets (n, {self._width})")
        return j.astype(np.int64), sub.astype(np.int64)

    def block_counts(self, reports) -> tuple[list[np.ndarray], np.ndarray]:
        """Per block: the residue support counts C_j and the number of reports n_j.

        Parameters
        ----------
        reports : tuple
            What :meth:`perturb` returned.

        Returns
        -------
        (list of ndarray, ndarray (ℓ,))

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> o = MSS(1.0, 10, moduli=(3, 4, 5))
        >>> C, nb = o.block_counts(o.perturb([0, 1, 2, 3], rng=0))
        >>> int(nb.sum()), [c.shape[0] for c in C]
        (4, [3, 4, 5])
        """
        j, sub = self._check_reports(reports)
        flat = self._stacked(j, sub)
        return np.split(flat, self._offsets[1:]), np.bincount(j, minlength=self.ell)

    def _stacked(self, j: np.ndarray, sub: np.ndarray) -> np.ndarray:
        rows = (self._offsets[j][:, None] + sub)[sub >= 0]
        return np.bincount(rows, minlength=int(sum(self.moduli))).astype(np.float64)

    def _soft(self, C: np.ndarray, n: int) -> np.ndarray:
        f = self._H @ C / n - self._h0
        return np.clip(n * self._q + self._s * n * f, 0.0, n)

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Soft support counts (float, (d,)): n q + (p − q) n f̂ (class notes).

        Parameters
        ----------
        reports : tuple
            What :meth:`perturb` returned.
        device : None
            Ignored (numpy).

        Returns
        -------
        ndarray (d,)

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> o = MSS(1.0, 10, moduli=(3, 4, 5))
        >>> o.aggregate(o.perturb([0, 1, 2, 3], rng=0)).shape
        (10,)
        """
        j, sub = self._check_reports(reports)
        return self._soft(self._stacked(j, sub), j.shape[0])

    def support_matrix(self, reports) -> np.ndarray:
        """Each report's soft support (reports × d).

        Parameters
        ----------
        reports : tuple
            What :meth:`perturb` returned.

        Returns
        -------
        ndarray (reports, d)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.modular import MSS
        >>> o = MSS(1.0, 10, moduli=(3, 4, 5))
        >>> r = o.perturb([0, 1, 2, 3], rng=0)
        >>> bool(np.allclose(o.support_matrix(r).sum(axis=0), o.aggregate(r)))
        True
        """
        j, sub = self._check_reports(reports)
        rows = np.where(sub >= 0, self._offsets[j][:, None] + sub, 0)
        contrib = np.where((sub >= 0)[:, :, None], self._H.T[rows], 0.0).sum(axis=1) - self._h0[None, :]
        return np.clip(self._q + self._s * contrib, 0.0, 1.0)

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """Fast path, exact in joint law: each value's users split over the blocks by one multinomial,
        each block's residue histogram through Subset Selection's exact fast path.

        Parameters
        ----------
        true_counts : array_like of int (d,)
        rng : int or Generator

        Returns
        -------
        ndarray (d,)

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> o = MSS(1.0, 10, moduli=(3, 4, 5))
        >>> o.sample_counts([10] * 10, rng=0).shape
        (10,)
        """
        tc = self._check_true_counts(true_counts).astype(np.int64)
        gen = as_generator(rng)
        split = gen.multinomial(tc, np.full(self.ell, 1.0 / self.ell))  # (d, ℓ)
        v = np.arange(self.d)
        parts: list[np.ndarray] = []
        for b, (m, ss) in enumerate(zip(self.moduli, self._ss, strict=True)):  # ℓ blocks
            r = np.bincount(v % m, weights=split[:, b], minlength=m).astype(np.int64)
            if not r.sum():
                parts.append(np.zeros(m))
            elif math.comb(m, ss.k) * m <= _ENUM_CELLS:  # few subsets: one multinomial per residue over them
                sets = ss.subsets()
                y = gen.multinomial(r, ss.output_distribution()).sum(axis=0)
                parts.append(np.bincount(sets.ravel(), weights=np.repeat(y, ss.k), minlength=m))
            else:
                parts.append(ss.sample_counts(r, gen).astype(np.float64))
        return self._soft(np.concatenate(parts), int(tc.sum()))

    # -- enumeration (small d) -------------------------------------------------------------------------
    def _outputs(self):
        cols_P, cols_S = [], []
        v = np.arange(self.d)
        for b, (m, ss) in enumerate(zip(self.moduli, self._ss, strict=True)):  # ℓ blocks
            P = ss.output_distribution()[v % m] / self.ell  # (d, C(m, k))
            sets = ss.subsets()
            contrib = self._H[:, self._offsets[b] + sets].sum(axis=2) - self._h0[:, None]
            cols_P.append(P)
            cols_S.append(np.clip(self._q + self._s * contrib, 0.0, 1.0))
        return np.hstack(cols_P), np.hstack(cols_S)

    def output_distribution(self) -> np.ndarray:
        """Pr[(j, Y) | v], (d, Σ_j C(m_j, k_j)), blocks in order, each in SS's subset order.

        Returns
        -------
        ndarray

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> P = MSS(1.0, 10, moduli=(3, 4, 5)).output_distribution()
        >>> P.shape, bool(abs(P.sum(axis=1) - 1).max() < 1e-12)
        ((10, 12), True)
        """
        return self._outputs()[0]

    def output_supports(self) -> np.ndarray:
        """The soft supports of every output, in :meth:`output_distribution`'s order.

        Returns
        -------
        ndarray

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.modular import MSS
        >>> o = MSS(1.0, 10, moduli=(3, 4, 5))
        >>> P, S = o.output_distribution(), o.output_supports()
        >>> bool(np.allclose(P @ S.T, np.where(np.eye(10, dtype=bool), o.p, o.q)))
        True
        """
        return self._outputs()[1]

    def channel_blocks(self) -> np.ndarray:
        """The whole channel, (1, outputs, d) (small d).

        Returns
        -------
        ndarray

        Examples
        --------
        >>> from ldpopt.oracles.modular import MSS
        >>> MSS(1.0, 10, moduli=(3, 4, 5)).channel_blocks().shape
        (1, 12, 10)
        """
        return self.output_distribution().T[None]
