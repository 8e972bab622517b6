r"""RAPPOR as a frequency oracle (Erlingsson, Pihur & Korolova, "RAPPOR: Randomized Aggregatable
Privacy-Preserving Ordinal Response", CCS 2014, §3 the client and its privacy, §4 the decoding; we
could not check equation numbers, the paper is not in the papers folder).

Notes: docs/notes/sketches.md, "ldpopt.oracles.rappor"."""

from __future__ import annotations

import math
from typing import Any, ClassVar, Self

import numpy as np

from .._validation import _check_int, as_generator, check_n, check_values
from .base import FrequencyOracle, ReportColumn
from .channel import Channel, compose
from .cms import check_grouped_bits, family_keys, family_params, grouped_column_sums
from .hashing import keyed_hash

__all__ = ["RAPPOR"]

_ENUM_CELLS = 1 << 22


def _probability(x, name: str) -> float:
    x = float(x)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {x!r}")
    return x


class RAPPOR(FrequencyOracle):
    r"""RAPPOR's Bloom-filter oracle (module notes).

    Parameters
    ----------
    epsilon : float
        :math:`ε_\infty` of the permanent response; sets :math:`f = 2/(1 + e^{ε/(2h)})`.
    d : int
        Candidate domain size (values 0 … d−1), d ≥ 2.
    num_bits, num_hashes, cohorts : int
        T bits per filter (≥ 2), h hashes per cohort (≥ 1), C cohorts (≥ 1).
    inst_p, inst_q : float
        The instantaneous response's Pr[S = 1 | B' = 0] and Pr[S = 1 | B' = 1], inst_p < inst_q.
    hash_seed : int
        Seed of the fixed hash family.
    positions : array_like of int, shape (C, h, d), optional
        Another implementation's hash family as its table pos[c, i, v] (then ``cohorts`` and
        ``num_hashes`` default to its shape).
    permanent : {"symmetric", "one-sided"}, default "symmetric"
        The paper's permanent response, or pure-ldp 1.2.0's one-sided one (module notes).

    Raises
    ------
    ValueError
        If an argument is out of range, ``inst_p >= inst_q``, ``positions`` is not an integer
        (C, h, d) table in [0, num_bits) agreeing with ``cohorts``/``num_hashes``, or ``permanent`` is
        not one of the two kinds.

    Notes
    -----
    Reports: ``perturb`` returns a tuple (cohort, bits): cohort int64 (n,), bits bool (n, T).

    References
    ----------
    Erlingsson, Pihur & Korolova, "RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal
    Response", CCS 2014, §3 (client, privacy) and §4 (decoding).

    Examples
    --------
    >>> from ldpopt import oracles
    >>> r = oracles.RAPPOR(epsilon=2.0, d=8, num_bits=16, cohorts=4)
    >>> round(r.f, 4), round(r.p, 4), round(r.q, 4), r.pure
    (0.7551, 0.6556, 0.6018, False)
    >>> r.simulate([4000, 3000, 1000, 800, 600, 400, 150, 50], rng=0).f_tilde.round(2)
    array([ 0.3 ,  0.26,  0.07,  0.22,  0.01,  0.07, -0.08,  0.05])
    """

    name = "rappor"
    kernel_devices = ("cpu", "cuda")
    pure = False
    structural: ClassVar[tuple[str, ...]] = ("num_bits", "num_hashes", "cohorts", "inst_p", "inst_q", "hash_seed", "permanent")

    def __init__(self, epsilon: float, d: int, num_bits: int = 128, num_hashes: int | None = None,
                 cohorts: int | None = None, inst_p: float = 0.5, inst_q: float = 0.75, hash_seed: int = 0,
                 positions=None, permanent: str = "symmetric"):
        super().__init__(epsilon, d)
        self.num_bits = _check_int(num_bits, "num_bits", 2)
        self._positions = None
        if positions is not None:  # another implementation's family, as its table pos[c, i, v]
            P = np.asarray(positions)
            if P.ndim != 3 or P.shape[2] != self.d or P.dtype.kind not in "iu" or min(P.shape) < 1:
                raise ValueError(f"positions must be an integer (cohorts, num_hashes, d = {self.d}) table, got shape {P.shape}")
            if np.any(P < 0) or np.any(P >= self.num_bits):
                raise ValueError(f"positions must lie in [0, num_bits = {self.num_bits})")
            for name, given, have in (("cohorts", cohorts, P.shape[0]), ("num_hashes", num_hashes, P.shape[1])):
                if given is not None and int(given) != have:
                    raise ValueError(f"{name} = {given} disagrees with the positions table's {have}")
            cohorts, num_hashes = P.shape[0], P.shape[1]
            self._positions = P.astype(np.int64)
            self._positions.setflags(write=False)
        #: the family is another implementation's table, not the one ``hash_seed`` draws
        self.family_given = positions is not None
        self.num_hashes = _check_int(2 if num_hashes is None else num_hashes, "num_hashes", 1)
        self.cohorts = _check_int(8 if cohorts is None else cohorts, "cohorts", 1)
        self.inst_p = _probability(inst_p, "inst_p")
        self.inst_q = _probability(inst_q, "inst_q")
        if not self.inst_p < self.inst_q:
            raise ValueError(f"inst_p must be < inst_q, got inst_p={self.inst_p}, inst_q={self.inst_q}")
        if permanent not in ("symmetric", "one-sided"):
            raise ValueError(f"permanent must be 'symmetric' (the paper's) or 'one-sided' (pure-ldp 1.2.0's client), got {permanent!r}")
        self.permanent_kind = permanent
        self.hash_seed = _check_int(hash_seed, "hash_seed", 0)
        self._set_f(2.0 / (1.0 + math.exp(self.epsilon / (2 * self.num_hashes))))

    def _set_f(self, f: float) -> None:
        """The permanent response's f and the channels built from it."""
        self.f = f
        half = self.f / 2
        if self.permanent_kind == "symmetric":
            self.permanent = Channel([[1 - half, half], [half, 1 - half]], name=f"permanent(f={self.f:.6g})")
        else:  # a set bit stays set; an unset bit is set w.p. f/2 (columns: B = 0, B = 1)
            self.permanent = Channel([[1 - half, 0.0], [half, 1.0]], name=f"one-sided permanent(f={self.f:.6g})")
        self.instantaneous = Channel([[1 - self.inst_p, 1 - self.inst_q], [self.inst_p, self.inst_q]],
                                     name=f"instantaneous(p={self.inst_p:g},q={self.inst_q:g})")
        self.bit_channel = compose(self.instantaneous, self.permanent)  # one report's bit given B

    @classmethod
    def from_f(cls, f: float, d: int, num_hashes: int | None = None, **params) -> Self:
        r"""Build from the permanent-response probability f ∈ (0, 1) (:math:`ε_\infty = 2h \ln((1 − f/2)/(f/2))`; h from
        ``num_hashes``, else from a ``positions`` table, else 2).

        Parameters
        ----------
        f : float
            Permanent-response probability, in (0, 1).
        d : int
            Domain size, >= 2.
        num_hashes : int, optional
            h (default: from ``positions`` if given, else 2).
        **params
            Other constructor parameters.

        Returns
        -------
        RAPPOR

        Raises
        ------
        ValueError
            If ``f`` is not in (0, 1) or a parameter is out of range.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR.from_f(0.5, d=4)
        >>> r.f, round(r.epsilon, 4)  # 2h ln(3), h = 2
        (0.5, 4.3944)
        """
        f = float(f)
        if not 0.0 < f < 1.0:
            raise ValueError(f"f must lie in (0, 1), got {f!r}")
        if num_hashes is None:
            P = params.get("positions")
            num_hashes = np.shape(P)[1] if P is not None and np.ndim(P) == 3 else 2
        h = _check_int(num_hashes, "num_hashes", 1)
        out = cls(2 * h * math.log((1 - f / 2) / (f / 2)), d, num_hashes=h, **params)
        out._set_f(f)  # f itself, not its round trip through ε (which may differ in the last bit)
        return out

    # -- probabilities ---------------------------------------------------------------------------
    @property
    def p_star(self) -> float:
        r""":math:`\Pr[S_t = 1 \mid B_t = 0] = \tfrac12 f(p + q) + (1 − f)p`.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> round(r.p_star, 4)
        0.5944
        """
        return float(self.bit_channel.blocks[0, 1, 0])

    @property
    def q_star(self) -> float:
        r""":math:`\Pr[S_t = 1 \mid B_t = 1] = \tfrac12 f(p + q) + (1 − f)q`.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> round(r.q_star, 4)
        0.6556
        """
        return float(self.bit_channel.blocks[0, 1, 1])

    @property
    def p(self) -> float:
        return self.q_star

    @property
    def q(self) -> float:
        beta = 1.0 - (1.0 - 1.0 / self.num_bits) ** self.num_hashes
        return self.p_star + (self.q_star - self.p_star) * beta

    @property
    def epsilon_inf(self) -> float:
        r"""The paper's :math:`ε_\infty = 2h \ln((1 − f/2)/(f/2))` (equals ``epsilon``).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> round(r.epsilon_inf, 4)
        2.0
        """
        return 2 * self.num_hashes * math.log((1 - self.f / 2) / (self.f / 2))

    @property
    def epsilon_one(self) -> float:
        r"""The paper's one-report :math:`ε_1 = h \ln(q^*(1 − p^*)/(p^*(1 − q^*)))` (:math:`\infty` when p* = 0 or q* = 1).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> round(r.epsilon_one, 4)
        0.5234
        """
        ps, qs = self.p_star, self.q_star
        if ps <= 0.0 or qs >= 1.0:
            return math.inf
        return self.num_hashes * math.log(qs * (1 - ps) / (ps * (1 - qs)))

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"num_bits": self.num_bits, "num_hashes": self.num_hashes, "cohorts": self.cohorts,
               "inst_p": self.inst_p, "inst_q": self.inst_q, "hash_seed": self.hash_seed}
        if self.permanent_kind != "symmetric":  # (a given positions table is not a param)
            out["permanent"] = self.permanent_kind
        return out

    def chunk_size(self) -> int:
        return max(1, (1 << 24) // self.num_bits)

    def structural_params(self) -> dict[str, Any]:
        """``params()``; with another implementation's positions table, its SHA-1 in place of ``hash_seed``.

        See ``FrequencyOracle.structural_params``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> sorted(r.structural_params())
        ['cohorts', 'hash_seed', 'inst_p', 'inst_q', 'num_bits', 'num_hashes']
        """
        return family_params(self.params(), self.positions if self.family_given else None)

    @property
    def count_scale(self) -> int:
        """The support counts are multiples of 1/h: h.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> r.count_scale  # h
        2
        """
        return int(self.num_hashes)

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``cohort: int64``, ``bits: fixed_size_binary(⌈T/8⌉)``: the cohort and the T report bits,
        packed as OUE's (``perturb`` returns them unpacked; the shard packs them).

        See ``FrequencyOracle.report_columns``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> r.report_columns()
        (ReportColumn(name='cohort', kind='int64', size=0, bits=0), ReportColumn(name='bits', kind='bytes', size=1, bits=4))
        """
        return (ReportColumn("cohort", "int64"), ReportColumn("bits", "bytes", (self.num_bits + 7) // 8, bits=self.num_bits))


    # -- the family ------------------------------------------------------------------------------
    @property
    def positions(self) -> np.ndarray:
        """Bit positions pos[c, i, v] of value v's i-th hash in cohort c, int64 (C, h, d).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> r.positions.shape  # (C, h, d)
        (2, 2, 4)
        """
        if self._positions is None:
            C, h = self.cohorts, self.num_hashes
            keys = family_keys(self.hash_seed, C * h).reshape(C, h, 1)
            pos = keyed_hash(keys, np.arange(self.d, dtype=np.int64)[None, None, :], self.num_bits)
            pos.setflags(write=False)
            self._positions = pos
        return self._positions

    def bloom(self) -> np.ndarray:
        """Bloom filters as bool (C, T, d): bit t of value v's filter in cohort c.

        Returns
        -------
        ndarray of bool, shape (C, T, d)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> r.bloom().shape  # (C, T, d)
        (2, 4, 4)
        """
        C, _h, d = self.positions.shape
        B = np.zeros((C, self.num_bits, d), dtype=bool)
        B[np.arange(C)[:, None, None], self.positions, np.arange(d)[None, None, :]] = True
        return B

    def design_matrix(self) -> np.ndarray:
        """:math:`X[(c, t), v] = 1[t ∈ B_{c,v}]`, float (C·T, d): the paper's regression design (§4).

        Returns
        -------
        ndarray, shape (C·T, d)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> r.design_matrix().shape  # (C·T, d)
        (8, 4)
        """
        return self.bloom().reshape(self.cohorts * self.num_bits, self.d).astype(np.float64)

    def _multiplicity(self) -> np.ndarray:
        """M[c, t, v] = #{i : pos[c, i, v] = t} (a value's hashes may collide), float (C, T, d)."""
        C, _h, d = self.positions.shape
        M = np.zeros((C, self.num_bits, d))
        np.add.at(M, (np.arange(C)[:, None, None], self.positions, np.arange(d)[None, None, :]), 1.0)
        return M

    # -- the real protocol -----------------------------------------------------------------------
    def memoise(self, values, rng) -> tuple[np.ndarray, np.ndarray]:
        """Steps 1-2: each user's cohort and permanent response B' (bool (n, T)).

        Parameters
        ----------
        values : array_like of int, shape (n,)
            The users' values in [0, d).
        rng : int, numpy.random.Generator or "secure"

        Returns
        -------
        tuple of ndarray
            ``(cohort, B')``: int64 (n,) and bool (n, T).

        Raises
        ------
        ValueError
            If a value is outside [0, d).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> cohort, Bp = r.memoise([0, 3, 3], rng=0)
        >>> cohort.shape, Bp.shape
        ((3,), (3, 4))
        """
        v = check_values(values, self.d, "values")
        gen = as_generator(rng)
        n: int = v.shape[0]  # an int, so the checker types the draws as arrays
        c = gen.integers(0, self.cohorts, size=n, dtype=np.int64)
        B = np.zeros((n, self.num_bits), dtype=np.int64)
        B[np.arange(n)[:, None], self.positions[c, :, v]] = 1
        return c, self.permanent.perturb(B.ravel(), gen).reshape(n, self.num_bits).astype(bool)

    def report(self, memo, rng) -> tuple[np.ndarray, np.ndarray]:
        """Step 3: an instantaneous report from memoised (cohort, B').

        Parameters
        ----------
        memo : tuple of ndarray
            ``(cohort, B')`` from :meth:`memoise`.
        rng : int, numpy.random.Generator or "secure"

        Returns
        -------
        tuple of ndarray
            ``(cohort, S)``: int64 (n,) and bool (n, T).

        Raises
        ------
        ValueError
            If ``memo`` is malformed.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> memo = r.memoise([0, 3, 3], rng=0)
        >>> cohort, S = r.report(memo, rng=1)
        >>> S.shape, S.dtype
        ((3, 4), dtype('bool'))
        """
        c, Bp = self._check_reports(memo)
        S = self.instantaneous.perturb(Bp.ravel().astype(np.int64), as_generator(rng))
        return c, S.reshape(Bp.shape).astype(bool)

    def perturb(self, values, rng) -> tuple[np.ndarray, np.ndarray]:
        gen = as_generator(rng)
        return self.report(self.memoise(values, gen), gen)

    def _check_reports(self, reports) -> tuple[np.ndarray, np.ndarray]:
        return check_grouped_bits(reports, "cohort", self.cohorts, self.num_bits, "RAPPOR.perturb", kinds="biuf")

    def sketch(self, reports, device=None) -> tuple[np.ndarray, np.ndarray]:
        """(Y, N): Y[c, t] = #{reports of cohort c with bit t set} (int64 (C, T)), N[c] the cohort
        sizes (``device``: who counts the bits, :mod:`ldpopt.kernels`).

        Parameters
        ----------
        reports : tuple of ndarray
            ``(cohort, bits)`` as :meth:`perturb` returns them.
        device : {None, "auto", "numpy", "cpu", "cuda"}, default None

        Returns
        -------
        tuple of ndarray
            ``(Y, N)``: int64 (C, T) and (C,).

        Raises
        ------
        ValueError
            If the reports are malformed.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> Y, N = r.sketch(r.perturb([0, 1, 2, 3] * 25, rng=0))
        >>> Y.shape, int(N.sum())
        ((2, 4), 100)
        """
        c, bits = self._check_reports(reports)
        return grouped_column_sums(c, bits, self.cohorts, device)

    def counts_from_sketch(self, Y, N=None) -> np.ndarray:
        r"""Support counts :math:`c_v = \sum_c (1/h) \sum_i Y[c, \mathrm{pos}_{c,i}(v)]` (float, multiples of 1/h).

        Parameters
        ----------
        Y : array_like, shape (C, T)
            Bit counts per cohort.
        N : array_like, shape (C,), optional
            Cohort sizes (not used by the formula; accepted so that ``counts_from_sketch(*sketch)`` works).

        Returns
        -------
        ndarray of float, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> Y, N = r.sketch(r.perturb([0, 1, 2, 3] * 25, rng=0))
        >>> r.counts_from_sketch(Y, N)
        array([64.5, 60. , 61.5, 68. ])
        """
        Y = np.asarray(Y, dtype=np.float64)
        C = np.arange(self.cohorts)[:, None, None]
        return Y[C, self.positions].sum(axis=(0, 1)) / self.num_hashes

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Support counts (float, multiples of 1/h; module notes) through the bit counts
        (``device`` as in :meth:`sketch`).

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.
        device : {None, "auto", "numpy", "cpu", "cuda"}, default None
            Who counts (:meth:`FrequencyOracle.aggregate`).

        Returns
        -------
        ndarray of float, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> r.aggregate(r.perturb([0, 1, 2, 3] * 25, rng=0))
        array([64.5, 60. , 61.5, 68. ])
        """
        return self.counts_from_sketch(*self.sketch(reports, device))

    def support_matrix(self, reports=None) -> np.ndarray:
        """Per-report support as a float (m, d) array of fractions of v's h positions set (not bool:
        RAPPOR's support of a value is fractional, module notes).

        Parameters
        ----------
        reports : tuple of ndarray, optional
            ``(cohort, bits)``; None: :meth:`output_supports`.

        Returns
        -------
        ndarray of float, shape (m, d)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> r.support_matrix(r.perturb([0, 3], rng=0))
        array([[0. , 0.5, 1. , 0. ],
               [0. , 0.5, 1. , 0. ]])
        """
        if reports is None:
            return self.output_supports()
        c, bits = self._check_reports(reports)
        pos = self.positions[c]  # (m, h, d)
        return bits[np.arange(c.shape[0])[:, None, None], pos].mean(axis=1)

    # -- the fast path ---------------------------------------------------------------------------
    def sample_sketch(self, true_counts, rng) -> tuple[np.ndarray, np.ndarray]:
        """(Y, N) drawn from their exact joint law (module notes).

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            True histogram :math:`n_v ≥ 0`, at least one user.
        rng : int, numpy.random.Generator or "secure"

        Returns
        -------
        tuple of ndarray
            ``(Y, N)``: int64 (C, T) and (C,).

        Raises
        ------
        ValueError
            If ``true_counts`` is not a non-negative integer vector of length d with a positive sum.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> Y, N = r.sample_sketch([40, 30, 20, 10], rng=0)
        >>> Y.shape, int(N.sum())
        ((2, 4), 100)
        """
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        C = self.cohorts
        nvc = gen.multinomial(tc, np.full(C, 1.0 / C))  # (d, C)
        A = np.einsum("ctv,vc->ct", self.bloom().astype(np.int64), nvc)
        N = nvc.sum(axis=0).astype(np.int64)
        Y = gen.binomial(A, self.q_star) + gen.binomial(N[:, None] - A, self.p_star)
        return Y.astype(np.int64), N

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        tc = self._check_true_counts(true_counts)
        return self.counts_from_sketch(*self.sample_sketch(tc, rng))

    # -- variance and bias for the family held -------------------------------------------------------
    def _moments(self, f, ps: float | None = None, qs: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-user mean and variance of the support statistic U_v, mixed over x ~ f (module doc), for
        bits set w.p. ``ps`` off the filter and ``qs`` on it (default: one report's p*, q*)."""
        f = np.asarray(f, dtype=np.float64)
        if f.shape != (self.d,) or not np.all(np.isfinite(f)) or np.any(f < 0):
            raise ValueError(f"f must be {self.d} finite non-negative frequencies, got shape {f.shape}")
        ps = self.p_star if ps is None else ps
        qs = self.q_star if qs is None else qs
        h = self.num_hashes
        Bl = self.bloom().astype(np.float64)  # (C, T, x)
        M = self._multiplicity()  # (C, T, v)
        C = self.cohorts
        # G[c, v, x] = Σ_t M[c,t,v] Bl[c,t,x] = #{i : pos_{c,i}(v) ∈ B_{c,x}}
        G = np.einsum("ctv,ctx->cvx", M, Bl)
        mean_cx = ps + (qs - ps) / h * G  # E[U_v | c, x]
        M2 = M * M
        # Σ_x f_x E_c Var[U_v | c, x]: the bits are independent given (c, x), each π(1 − π)
        var_in = (f.sum() * ps * (1 - ps) * M2.sum(axis=1).mean(axis=0)
                  + (qs * (1 - qs) - ps * (1 - ps)) * np.einsum("ctv,ctx,x->v", M2, Bl, f) / C) / h ** 2
        mu = mean_cx.mean(axis=0)  # (v, x)
        var_between = ((mean_cx ** 2).mean(axis=0) - mu ** 2) @ f  # Σ_x f_x Var_c E[U_v | c, x]
        return mu @ f, var_in + var_between

    def bias_given_hashes(self, f) -> np.ndarray:
        r""":math:`E[\tilde f_v \mid \text{family}] − f_v` at true frequencies f, exact for the family held.

        Parameters
        ----------
        f : array_like, shape (d,)
            True frequencies, finite and >= 0.

        Returns
        -------
        ndarray, shape (d,)

        Raises
        ------
        ValueError
            If ``f`` is not d finite non-negative numbers.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> r.bias_given_hashes([0.4, 0.3, 0.2, 0.1]).round(4)
        array([ 0.0667,  0.0333, -0.3111,  0.1889])
        """
        mean, _ = self._moments(f)
        return (mean - self.q * np.sum(f)) / (self.p - self.q) - np.asarray(f, dtype=np.float64)

    def variance_given_hashes(self, f, n: int) -> np.ndarray:
        r""":math:`\mathrm{Var}[\tilde f_v \mid \text{family}]` at true frequencies f with n users, exact for the family held.

        Parameters
        ----------
        f : array_like, shape (d,)
            True frequencies, finite and >= 0.
        n : int
            Number of users, >= 1.

        Returns
        -------
        ndarray, shape (d,)

        Raises
        ------
        ValueError
            If ``f`` is not d finite non-negative numbers or ``n`` < 1.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> r.variance_given_hashes([0.4, 0.3, 0.2, 0.1], n=1000).round(4)
        array([0.1454, 0.0976, 0.0992, 0.1463])
        """
        n = check_n(n, "n")
        _, var = self._moments(f)
        return var / (n * (self.p - self.q) ** 2)

    # -- privacy ---------------------------------------------------------------------------------
    def _pair_bits(self) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`\mathrm{only}[c, v, v'] = |B_{c,v} \setminus B_{c,v'}|` for every cohort and ordered pair (O(C·T·d²))."""
        Bl = self.bloom().astype(np.float64)
        inter = np.einsum("ctv,ctw->cvw", Bl, Bl)
        size = Bl.sum(axis=1)  # (C, d)
        return size[:, :, None] - inter, size[:, None, :] - inter

    def exact_epsilon_inf(self) -> float:
        r"""max over cohorts and value pairs of :math:`|B_v \mathbin{Δ} B_{v'}| \ln((1 − f/2)/(f/2))` (family held); :math:`\infty` for the
        one-sided permanent response when two filters differ (a reported 0 rules out a set bit).

        Returns
        -------
        float

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> round(r.exact_epsilon_inf(), 4), round(r.epsilon, 4)
        (2.0, 2.0)
        """
        a, b = self._pair_bits()
        if self.permanent_kind == "one-sided":
            return math.inf if float((a + b).max()) > 0 else 0.0
        return float((a + b).max()) * math.log((1 - self.f / 2) / (self.f / 2))

    def exact_epsilon_one(self) -> float:
        """One report's exact ε for the family held (module notes).

        Returns
        -------
        float

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> round(r.exact_epsilon_one(), 4)
        0.5234
        """
        ps, qs = self.p_star, self.q_star
        up = math.log(qs / ps) if ps > 0 else math.inf  # p* = 0 or q* = 1: a bit rules a value out
        down = math.log((1 - ps) / (1 - qs)) if qs < 1 else math.inf
        return self._pair_epsilon(up, down)

    def _pair_epsilon(self, up: float, down: float) -> float:
        r"""max over cohorts and value pairs (v, v') of :math:`|B_v \setminus B_{v'}|·\mathrm{up} + |B_{v'} \setminus B_v|·\mathrm{down}`: the exact ε of
        an output made of independent bits given (cohort, filter), when a bit in :math:`B_v` only moves the
        log-ratio by at most ``up`` and one in :math:`B_{v'}` only by at most ``down``."""
        a, b = self._pair_bits()
        with np.errstate(invalid="ignore"):  # an infinite up or down on a pair without such bits
            eps = np.where(a > 0, a * up, 0.0) + np.where(b > 0, b * down, 0.0)
        return float(eps.max())

    # -- exact output distribution ---------------------------------------------------------------------
    def _outputs(self) -> tuple[np.ndarray, np.ndarray]:
        outputs = self.cohorts << self.num_bits
        if self.d * outputs > _ENUM_CELLS:
            raise ValueError(f"output space too large to enumerate: d·C·2^T = {self.d * outputs} > {_ENUM_CELLS}")
        masks = np.arange(1 << self.num_bits)
        bits = ((masks[:, None] >> np.arange(self.num_bits)[None, :]) & 1).astype(bool)
        return np.repeat(np.arange(self.cohorts), 1 << self.num_bits), np.tile(bits, (self.cohorts, 1))

    def output_distribution(self) -> np.ndarray:
        r"""Exact Pr[(c, S) | v] of one report, shape :math:`(d, C·2^T)`, column :math:`c·2^T + \mathrm{mask}` (tiny T only).

        See ``FrequencyOracle.output_distribution``.

        Returns
        -------
        ndarray, shape :math:`(d, C·2^T)`

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> P = r.output_distribution()
        >>> P.shape, P.sum(axis=1).round(12)
        ((4, 32), array([1., 1., 1., 1.]))
        """
        c, bits = self._outputs()
        inB = self.bloom()[c].transpose(2, 0, 1)  # (d, |Y|, T)
        pr1 = np.where(inB, self.q_star, self.p_star)
        return np.where(bits[None], pr1, 1 - pr1).prod(axis=2) / self.cohorts

    def output_supports(self) -> np.ndarray:
        """S(y) for every output column of :meth:`output_distribution`, float (d, |Y|).

        Returns
        -------
        ndarray of float, shape (d, |Y|)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> r = oracles.RAPPOR(2.0, 4, num_bits=4, cohorts=2)
        >>> r.output_supports().shape
        (4, 32)
        """
        return self.support_matrix(self._outputs()).T

