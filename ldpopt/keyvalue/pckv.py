"""PCKV-UE and PCKV-GRR (Gu, Li, Cheng, Xiong, Cao, USENIX Security 2020): padding-and-sampling,
discretisation and correlated key–value perturbation, with the paper's calibrated estimators.

Notes: docs/notes/keyvalue.md, "ldpopt.keyvalue.pckv"."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

from .._validation import as_generator
from .data import KVData
from .protocol import KVEstimate, KVProtocol, PairEstimate

__all__ = ["PCKV", "PaddingWarning", "pckv_grr", "pckv_ue", "sample_cells"]


class PaddingWarning(UserWarning):
    """Users hold more keys than PCKV's padding length ℓ: each of their keys is sampled with probability
    1/|S| < 1/ℓ, while both estimators (the paper's and the consistent one) scale the shares by ℓ, so the
    frequencies come out low by ℓ/|S| for those users, and each key's mean is its holders' values
    weighted by 1/max(|S|, ℓ) (users with more keys count less), not their plain mean. Neither can be
    corrected: the reports carry no set size, and populations with the same weighted sums but
    different plain means give the same report law (docs/keyvalue.md, "The padding length ℓ").

    Examples
    --------
    >>> import warnings
    >>> from ldpopt import keyvalue as kv
    >>> data = kv.power_law(100, 6, items=3, rng=0)           # every user holds 3 keys
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     _ = kv.pckv_grr(1.0, 6, ell=2).check_padding(data)
    >>> w[0].category is kv.PaddingWarning
    True
    """


def _check(epsilon, d, ell):
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)) \
            or not np.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    if isinstance(ell, bool) or not isinstance(ell, (int, np.integer)) or ell < 1:
        raise ValueError(f"ell must be an integer >= 1, got {ell!r}")


def _sample_pairs(data: KVData, ell: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Padding-and-sampling for every user (§4.2): each user's pair drawn uniformly from her set padded
    to max(|S|, ℓ) with dummy keys d..d+ℓ−1 (value 0). Returns (key, value) per user."""
    s = data.sizes
    L = np.maximum(s, ell)
    idx = np.floor(rng.random(data.n) * L).astype(np.int64)
    real = idx < s
    pos = data.offsets[:-1][real] + idx[real]
    key = np.empty(data.n, dtype=np.int64)
    val = np.zeros(data.n)
    key[real] = data.keys[pos]
    val[real] = data.values[pos]
    key[~real] = data.d + rng.integers(ell, size=int((~real).sum()))
    return key, val


def sample_cells(data: KVData, ell: int, rng) -> np.ndarray:
    """Padding-and-sampling and discretisation for all users at once (vectorised, exact in law).

    Returns the cell counts, shape (2, d + ℓ): row 0 the users whose sampled pair is ⟨k, +1⟩,
    row 1 ⟨k, −1⟩ (dummy keys take x uniform: their value is 0).
    """
    key, val = _sample_pairs(data, ell, rng)
    minus = rng.random(data.n) >= (1 + val) / 2
    K = data.d + ell
    return np.bincount(key + K * minus, minlength=2 * K).reshape(2, K)


class PCKV(KVProtocol):
    r"""PCKV-UE (``kind="ue"``) or PCKV-GRR (``kind="grr"``) of the module notes.

    Parameters
    ----------
    epsilon : float
        The per-user privacy budget ε, > 0.
    d : int
        Keys, ≥ 2.
    ell : int, default 1
        The padding length ℓ, ≥ 1.
    kind : {"ue", "grr"}

    Notes
    -----
    The frequencies are unbiased only for users holding at most ℓ keys: a user with |S| > ℓ keys has
    each sampled w.p. 1/|S|, and :math:`f_k = ℓ·(\text{share})` counts her for ℓ/|S| (4 keys at ℓ = 2: half).
    :meth:`sample_counts` and :meth:`collect` raise a :class:`PaddingWarning` naming ℓ when the data
    hold such users; the server alone cannot tell (the reports carry no set size).

    Examples
    --------
    >>> from ldpopt import keyvalue as kv
    >>> data = kv.power_law(20_000, 10, rng=0)
    >>> proto = kv.pckv_grr(2.0, 10)
    >>> est = proto.estimate(proto.sample_counts(data, rng=1), data.n)
    >>> bool(abs(est.freq[0] - data.frequencies()[0]) < 0.05)
    True
    """

    def __init__(self, epsilon: float, d: int, ell: int = 1, kind: str = "ue"):
        _check(epsilon, d, ell)
        if kind not in ("ue", "grr"):
            raise ValueError(f"kind must be 'ue' or 'grr', got {kind!r}")
        self.epsilon, self.d, self.ell, self.kind = float(epsilon), int(d), int(ell), kind
        self.K = self.d + self.ell
        e = np.exp(self.epsilon)
        if kind == "ue":
            self.a, self.b, self.p = 0.5, 2.0 / (e + 3.0), e / (e + 1.0)
        else:
            t = self.ell * (e - 1.0)
            self.a = (t + 2.0) / (t + 2.0 * self.K)
            self.b = (1.0 - self.a) / (self.K - 1)
            self.p = (t + 1.0) / (t + 2.0)
        self.alpha = self.a * self.p - self.b / 2
        self.beta = self.a * (1 - self.p) - self.b / 2
        self.null = self.b / 2
        self.name = f"PCKV-{kind.upper()}"

    def __repr__(self) -> str:
        return f"{self.name}(epsilon={self.epsilon}, d={self.d}, ell={self.ell})"

    @property
    def exact_epsilon(self) -> float:
        r"""The exact ε of one report (what :func:`~ldpopt.keyvalue.exact.epsilon` enumerates).

        PCKV-GRR: ε at every ℓ (its a and p are calibrated with ℓ). PCKV-UE:
        :math:`\ln(1 + (\min(d, ℓ)/ℓ)(e^ε − 1))` — ε when ℓ ≤ d, less when ℓ > d. Derivation: a report's law
        is :math:`\mathrm{base}(y)·\sum_\text{cells} w(k, x)·g(y_k, x)` with :math:`g = ap/(b/2)` for :math:`y_k = x` and :math:`a(1 − p)/(b/2) =
        (1 − a)/(1 − b)` for :math:`y_k = −x` or 0 (equal at a = 1/2, :math:`b = 2/(e^ε + 3)`), a ratio :math:`e^ε`; a dummy
        cell's g averages to at least the smaller value. The largest ratio puts every key of one set
        at g's large value and of another at its small one; a user holds at most min(d, ℓ) real cells
        of mass 1/ℓ each, the rest (ℓ − d)/ℓ on dummies at the small value in both, so the ratio is
        :math:`(m e^ε + ℓ − m)/ℓ` with m = min(d, ℓ) (the sampling's amplification, which the paper's ε
        does not take when ℓ > d).

        Returns
        -------
        float

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> kv.pckv_ue(1.0, 4, ell=2).exact_epsilon, round(kv.pckv_ue(1.0, 2, ell=3).exact_epsilon, 3)
        (1.0, 0.763)
        """
        if self.kind == "grr" or self.ell <= self.d:
            return self.epsilon
        return float(math.log1p(self.d / self.ell * math.expm1(self.epsilon)))

    def check_padding(self, data: KVData) -> int:
        """Warn (:class:`PaddingWarning`, naming ℓ) when users of ``data`` hold more keys than ℓ.

        Parameters
        ----------
        data : KVData

        Returns
        -------
        int
            The users holding more than ℓ keys.

        Examples
        --------
        >>> import warnings
        >>> from ldpopt import keyvalue as kv
        >>> data = kv.power_law(100, 6, items=3, rng=0)
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     kv.pckv_ue(1.0, 6, ell=2).check_padding(data), "ell = 2" in str(w[0].message)
        (100, True)
        """
        sizes = data.sizes
        over = int((sizes > self.ell).sum())
        if over:
            warnings.warn(f"{over} of {data.n} users hold more keys than ell = {self.ell} (up to {int(sizes.max())}): "
                          f"each of their keys is sampled w.p. 1/|S| < 1/ell, so {self.name}'s frequencies come out "
                          f"low by ell/|S| for them and its means are weighted by 1/max(|S|, ell) (users with more "
                          f"keys count less; no estimator can undo either: the reports carry no set size); choose "
                          f"ell >= the set sizes", PaddingWarning, stacklevel=3)
        return over

    def collect(self, data, rng=None) -> np.ndarray:
        """:meth:`KVProtocol.collect` (the real client path), after :meth:`check_padding`.

        Returns
        -------
        ndarray (2, K)

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> data = kv.power_law(2_000, 6, rng=0)
        >>> proto = kv.pckv_grr(2.0, 6)
        >>> bool(proto.collect(data, rng=1).sum() == data.n)    # one report per user
        True
        """
        if not isinstance(data, KVData) or data.d != self.d:
            raise ValueError(f"data must be a KVData over d={self.d} keys")
        self.check_padding(data)
        return super().collect(data, rng)

    # -- the real client path -------------------------------------------------------------
    def perturb(self, keys, values, rng=None):
        """One user's report from their set (the real client path, §4.2–4.4).

        Parameters
        ----------
        keys, values : array_like
            The user's distinct keys (0..d−1) and values in [−1, 1].
        rng : seed, Generator or None

        Returns
        -------
        ndarray (K,) of int8 in {−1, 0, 1} for UE; tuple (key, value ±1) for GRR.

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> k, y = kv.pckv_grr(2.0, 5).perturb([1, 3], [0.5, -0.5], rng=0)
        >>> 0 <= k < 6 and y in (-1, 1)
        True
        """
        rng = as_generator(rng)
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if keys.shape != values.shape or (keys.size and (keys.min() < 0 or keys.max() >= self.d)) \
                or np.any(np.abs(values) > 1):
            raise ValueError("keys must lie in 0..d-1 and values in [-1, 1], one value per key")
        L = max(keys.size, self.ell)
        j = int(rng.integers(L))
        k, v = (int(keys[j]), float(values[j])) if j < keys.size else (self.d + int(rng.integers(self.ell)), 0.0)
        x = 1 if rng.random() < (1 + v) / 2 else -1
        if self.kind == "grr":
            if rng.random() < self.a:
                return k, x if rng.random() < self.p else -x
            other = int(rng.integers(self.K - 1))
            return other + (other >= k), 1 if rng.random() < 0.5 else -1
        u = rng.random(self.K)
        y = np.where(u < self.b / 2, 1, np.where(u < self.b, -1, 0)).astype(np.int8)
        w = rng.random()
        y[k] = x if w < self.a * self.p else (-x if w < self.a else 0)
        return y

    def perturb_users(self, data: KVData, rng=None) -> np.ndarray:
        """Every user's report at once: :meth:`perturb`'s law, vectorised (no loop over users or keys).

        Each user's pair is padded-and-sampled (§4.2), discretised to x = ±1 (§4.3) and perturbed
        (§4.4) with her own draws, as :meth:`perturb` does one user; the rows are the reports the
        server receives (``tests/test_keyvalue_clients.py`` holds their law to :meth:`report_distribution`).

        Parameters
        ----------
        data : KVData
            With ``data.d == self.d``.
        rng : seed, Generator or None

        Returns
        -------
        ndarray
            GRR: (n, 2) int64 rows (key, value ±1); UE: (n, K) int8 rows in {−1, 0, 1}.

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> data = kv.power_law(1000, 5, rng=0)
        >>> r = kv.pckv_grr(1.0, 5).perturb_users(data, rng=1)
        >>> r.shape, bool(set(r[:, 1].tolist()) <= {-1, 1})
        ((1000, 2), True)
        """
        if not isinstance(data, KVData) or data.d != self.d:
            raise ValueError(f"data must be a KVData over d={self.d} keys")
        rng = as_generator(rng)
        n = data.n
        key, val = _sample_pairs(data, self.ell, rng)
        x = np.where(rng.random(n) < (1 + val) / 2, 1, -1).astype(np.int64)
        if self.kind == "grr":
            keep = rng.random(n) < self.a
            same = rng.random(n) < self.p
            other = rng.integers(self.K - 1, size=n)
            other += other >= key
            coin = np.where(rng.random(n) < 0.5, 1, -1)
            out = np.empty((n, 2), dtype=np.int64)
            out[:, 0] = np.where(keep, key, other)
            out[:, 1] = np.where(keep, np.where(same, x, -x), coin)
            return out
        u = rng.random((n, self.K))
        y = np.where(u < self.b / 2, 1, np.where(u < self.b, -1, 0)).astype(np.int8)
        w = rng.random(n)
        y[np.arange(n), key] = np.where(w < self.a * self.p, x, np.where(w < self.a, -x, 0))
        return y

    def log_prob(self, reports, keys, values) -> np.ndarray:
        """ln P(report | the user's set) of each report row (:meth:`perturb_users`' rows), in closed form.

        Parameters
        ----------
        reports : ndarray
            Rows of :meth:`perturb_users`.
        keys, values : array_like
            One user's set.

        Returns
        -------
        ndarray (n,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import keyvalue as kv
        >>> p = kv.pckv_ue(1.0, 2)
        >>> ys = np.array(p.outputs())
        >>> bool(np.allclose(np.exp(p.log_prob(ys, [0], [0.5])), p.report_distribution([0], [0.5])))
        True
        """
        w = self.cell_law(keys, values)
        r = np.asarray(reports, dtype=np.int64)
        if self.kind == "grr":
            law = self.report_distribution(keys, values)
            return np.log(law[(r[:, 1] < 0) * self.K + r[:, 0]])
        # P(y) = Π_k q0(y_k) · Σ_{k, x} w(k, x) g(y_k, x)/q0(y_k) (report_distribution's form)
        q0 = np.array([self.b / 2, 1 - self.b, self.b / 2])         # y = −1, 0, +1
        ap, am, z = self.a * self.p, self.a * (1 - self.p), 1 - self.a
        h_plus = np.array([am, z, ap]) / q0                            # x = +1
        h_minus = np.array([ap, z, am]) / q0                           # x = −1
        i = r + 1
        mix = h_plus[i] @ w[0] + h_minus[i] @ w[1]
        return np.log(q0[i]).sum(axis=1) + np.log(mix)

    def aggregate(self, reports) -> np.ndarray:
        """The counts of a list of reports from :meth:`perturb`.

        Parameters
        ----------
        reports : list
            Reports of :meth:`perturb`.

        Returns
        -------
        ndarray (2, K)
            Reports supporting ⟨k, +1⟩ (row 0) and ⟨k, −1⟩ (row 1), dummy keys last.

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> kv.pckv_grr(1.0, 2).aggregate([(0, 1), (0, -1), (2, 1)]).tolist()
        [[1, 0, 1], [1, 0, 0]]
        """
        out = np.zeros((2, self.K), dtype=np.int64)
        if self.kind == "grr":
            r = np.asarray(reports, dtype=np.int64).reshape(-1, 2)
            np.add.at(out, ((r[:, 1] < 0).astype(np.int64), r[:, 0]), 1)
            return out
        Y = np.asarray(reports).reshape(-1, self.K)
        out[0] = (Y == 1).sum(axis=0)
        out[1] = (Y == -1).sum(axis=0)
        return out

    # -- the fast path --------------------------------------------------------------------
    def sample_counts(self, data: KVData, rng=None) -> np.ndarray:
        """The counts of :meth:`collect`, exact in joint law, with no loop over users: the sampled
        cells (:func:`sample_cells`), then per cell binomial/multinomial draws of the perturbation.

        Parameters
        ----------
        data : KVData
            With ``data.d == self.d``.
        rng : seed, Generator or None

        Returns
        -------
        ndarray (2, K) of int64

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> data = kv.power_law(1000, 5, rng=0)
        >>> int(kv.pckv_grr(1.0, 5, ell=2).sample_counts(data, rng=1).sum())
        1000
        """
        if not isinstance(data, KVData) or data.d != self.d:
            raise ValueError(f"data must be a KVData over d={self.d} keys")
        self.check_padding(data)
        rng = as_generator(rng)
        c = sample_cells(data, self.ell, rng)
        n, K = data.n, self.K
        out = np.zeros((2, K), dtype=np.int64)
        if self.kind == "grr":
            kept = rng.binomial(c, self.a)
            same = rng.binomial(kept, self.p)
            out[0] += same[0] + kept[1] - same[1]
            out[1] += same[1] + kept[0] - same[0]
            moved = (c - kept).sum(axis=0)
            src = np.repeat(np.arange(K), moved)
            dst = (src + rng.integers(1, K, size=src.size)) % K
            tot = np.bincount(dst, minlength=K)
            plus = rng.binomial(tot, 0.5)
            out[0] += plus
            out[1] += tot - plus
            return out
        ap, am, z = self.a * self.p, self.a * (1 - self.p), 1 - self.a
        hp = rng.multinomial(c[0], [ap, am, z])
        hm = rng.multinomial(c[1], [am, ap, z])
        o = rng.multinomial(n - c.sum(axis=0), [self.b / 2, self.b / 2, 1 - self.b])
        out[0] = hp[:, 0] + hm[:, 0] + o[:, 0]
        out[1] = hp[:, 1] + hm[:, 1] + o[:, 1]
        return out

    # -- the exact law of one report --------------------------------------------------------
    def cell_law(self, keys, values) -> np.ndarray:
        """The law of one user's sampled pair after padding-and-sampling and discretisation.

        Parameters
        ----------
        keys, values : array_like
            The user's keys and values.

        Returns
        -------
        ndarray (2, K)
            P(sampled key k, x = +1) in row 0, x = −1 in row 1.

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> kv.pckv_ue(1.0, 2, ell=2).cell_law([0], [1.0]).tolist()
        [[0.5, 0.0, 0.125, 0.125], [0.0, 0.0, 0.125, 0.125]]
        """
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        L = max(keys.size, self.ell)
        w = np.zeros((2, self.K))
        w[0, keys] += (1 + values) / 2 / L
        w[1, keys] += (1 - values) / 2 / L
        w[:, self.d:] += (L - keys.size) / L / self.ell / 2
        return w

    def outputs(self) -> list:
        """Every possible report (GRR: 2K pairs; UE: :math:`3^K` vectors — K ≤ 10 only).

        Returns
        -------
        list

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> len(kv.pckv_grr(1.0, 3).outputs()), len(kv.pckv_ue(1.0, 3).outputs())
        (8, 81)
        """
        if self.kind == "grr":
            return [(k, x) for x in (1, -1) for k in range(self.K)]
        if self.K > 10:
            raise ValueError(f"enumerating UE reports needs d + ell <= 10, got {self.K}")
        return [np.array(y, dtype=np.int8) for y in itertools.product((-1, 0, 1), repeat=self.K)]

    def report_distribution(self, keys, values) -> np.ndarray:
        """P(report | the user's set) for every report of :meth:`outputs`, in that order.

        Parameters
        ----------
        keys, values : array_like
            The user's keys and values.

        Returns
        -------
        ndarray

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> round(float(kv.pckv_ue(1.0, 3).report_distribution([0, 2], [0.5, -1.0]).sum()), 12)
        1.0
        """
        w = self.cell_law(keys, values)
        if self.kind == "grr":
            T_same = np.array([[self.a * self.p, self.a * (1 - self.p)],
                               [self.a * (1 - self.p), self.a * self.p]])
            wk = w.sum(axis=0)
            P = self.b / 2 * (1 - wk)[None, :] + T_same @ w
            return P.reshape(-1)
        Y = np.array(self.outputs())
        q0 = np.select([Y == 1, Y == -1], [self.b / 2, self.b / 2], 1 - self.b)
        base = q0.prod(axis=1)
        out = np.zeros(Y.shape[0])
        for xi, xv in enumerate((1, -1)):  # two values of x, not a loop over users or keys' data
            own = np.select([Y == xv, Y == -xv], [self.a * self.p, self.a * (1 - self.p)], 1 - self.a)
            out += base * ((own / q0) @ w[xi])
        return out

    # -- the server ---------------------------------------------------------------------------
    def estimate(self, counts, n: int) -> KVEstimate:
        """The paper's estimator (§4.5, Eqs. 13–15, with its clipping; the module notes).

        Parameters
        ----------
        counts : ndarray (2, K)
        n : int
            The number of users.

        Returns
        -------
        KVEstimate

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> data = kv.power_law(50_000, 5, rng=0)
        >>> proto = kv.pckv_ue(3.0, 5)
        >>> est = proto.estimate(proto.sample_counts(data, rng=1), data.n)
        >>> bool(abs(est.mean[0] - data.means()[0]) < 0.1)
        True
        """
        c = self._counts(counts, n)
        n1, n2 = c[0, :self.d], c[1, :self.d]
        f = np.clip(self.ell * ((n1 + n2) / n - self.b) / (self.a - self.b), 1.0 / n, 1.0)
        N = n * f / self.ell
        hp, hm = self._solve(n1, n2, n)
        hp = np.minimum(np.maximum(hp, 1.0), N)
        hm = np.minimum(np.maximum(hm, 1.0), N)
        return KVEstimate(f, (hp - hm) / N, self.name)

    def _counts(self, counts, n):
        c = np.asarray(counts, dtype=np.float64)
        if c.shape != (2, self.K):
            raise ValueError(f"counts must have shape (2, d + ell) = (2, {self.K}), got {c.shape}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be an integer >= 1, got {n!r}")
        return c

    def pairs(self, counts, n: int) -> PairEstimate:
        r"""Unbiased shares Ĥ⁺/n, Ĥ⁻/n per key and the dummies' share, with plug-in variances;
        :math:`f_k = ℓ(\text{plus} + \text{minus})`; the total of the shares and the dummies' is 1 in expectation.

        See ``KVProtocol.pairs``.

        Parameters
        ----------
        counts : ndarray (2, K)
        n : int
            Users.

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> data = kv.power_law(20_000, 4, rng=0)
        >>> proto = kv.pckv_grr(2.0, 4)
        >>> pe = proto.pairs(proto.sample_counts(data, rng=1), data.n)
        >>> round(float(pe.plus.sum() + pe.minus.sum() + pe.rest.sum()), 9)
        1.0
        """
        c = self._counts(counts, n)
        hp, hm = self._solve(c[0], c[1], float(n))
        vp, vm = self._var(c[0], c[1], float(n))
        # the dummies' share: Σ over dummy keys of (Ĥ⁺ + Ĥ⁻)/n = Σ ((n1 + n2)/n − b)/(a − b)
        tot = (c[0] + c[1])[self.d:]
        pi = np.clip(tot / n, self.b, 1.0)
        rest = float(((tot / n - self.b) / (self.a - self.b)).sum())
        var_rest = float((pi * (1 - pi) / n).sum() / (self.a - self.b) ** 2)
        return PairEstimate(hp[:self.d] / n, hm[:self.d] / n, vp[:self.d] / n ** 2, vm[:self.d] / n ** 2,
                            np.array([rest]), np.array([var_rest]), self.ell)


def pckv_ue(epsilon: float, d: int, ell: int = 1) -> PCKV:
    """PCKV-UE (:class:`PCKV`, ``kind="ue"``).

    Parameters
    ----------
    epsilon : float
        ε, > 0.
    d : int
        Keys, ≥ 2.
    ell : int, default 1
        The padding length ℓ.

    Returns
    -------
    PCKV

    Examples
    --------
    >>> from ldpopt import keyvalue as kv
    >>> kv.pckv_ue(1.0, 10, ell=2)
    PCKV-UE(epsilon=1.0, d=10, ell=2)
    """
    return PCKV(epsilon, d, ell, "ue")


def pckv_grr(epsilon: float, d: int, ell: int = 1) -> PCKV:
    """PCKV-GRR (:class:`PCKV`, ``kind="grr"``).

    Parameters
    ----------
    epsilon : float
        ε, > 0.
    d : int
        Keys, ≥ 2.
    ell : int, default 1
        The padding length ℓ.

    Returns
    -------
    PCKV

    Examples
    --------
    >>> from ldpopt import keyvalue as kv
    >>> kv.pckv_grr(1.0, 10, ell=2)
    PCKV-GRR(epsilon=1.0, d=10, ell=2)
    """
    return PCKV(epsilon, d, ell, "grr")
