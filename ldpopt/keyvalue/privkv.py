"""PrivKV (Ye, Hu, Meng, Zheng, IEEE S&P 2019): one sampled key, its presence bit by randomised
response and its value by the value perturbation primitive, with the paper's estimators.

Notes: docs/notes/keyvalue.md, "ldpopt.keyvalue.privkv"."""

from __future__ import annotations

import numpy as np

from .._validation import as_generator
from .data import KVData
from .pckv import _check
from .protocol import KVEstimate, KVProtocol, PairEstimate

__all__ = ["PrivKV", "privkv"]


def _lookup(data: KVData, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Whether each user holds her sampled key j, and its value (0 if not): sorted pair codes."""
    d = data.d
    code = data.users * d + data.keys
    order = np.argsort(code, kind="stable")
    code = code[order]
    q = np.arange(data.n) * d + j
    pos = np.minimum(np.searchsorted(code, q), max(code.size - 1, 0))
    present = (code[pos] == q) if code.size else np.zeros(data.n, dtype=bool)
    v = np.where(present, data.values[order][pos] if code.size else 0.0, 0.0)
    return present, v


class PrivKV(KVProtocol):
    """PrivKV, one round (module notes).

    Parameters
    ----------
    epsilon : float
        The per-user budget ε (ε/2 on the key bit, ε/2 on the value), > 0.
    d : int
        Keys, ≥ 2.

    Examples
    --------
    >>> from ldpopt import keyvalue as kv
    >>> data = kv.power_law(20_000, 10, rng=0)
    >>> proto = kv.privkv(4.0, 10)
    >>> est = proto.estimate(proto.sample_counts(data, rng=1), data.n)
    >>> bool(abs(est.freq[0] - data.frequencies()[0]) < 0.05)
    True
    """

    name = "PrivKV"

    def __init__(self, epsilon: float, d: int):
        _check(epsilon, d, 1)
        self.epsilon, self.d = float(epsilon), int(d)
        h = np.exp(self.epsilon / 2)
        self.p1 = self.p2 = h / (h + 1.0)
        # the affine system of .protocol on the population of users who sampled j
        self.alpha = self.p1 * self.p2 - (1 - self.p1) / 2
        self.beta = self.p1 * (1 - self.p2) - (1 - self.p1) / 2
        self.null = (1 - self.p1) / 2

    def __repr__(self) -> str:
        return f"PrivKV(epsilon={self.epsilon}, d={self.d})"

    def perturb(self, keys, values, rng=None):
        """One user's report ⟨j, y⟩, y ∈ {−1, 0, 1} (the real client path).

        Parameters
        ----------
        keys, values : array_like
            The user's distinct keys (0..d−1) and values in [−1, 1].
        rng : seed, Generator or None

        Returns
        -------
        tuple (j, y)

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> j, y = kv.privkv(2.0, 5).perturb([1, 3], [0.5, -0.5], rng=0)
        >>> 0 <= j < 5 and y in (-1, 0, 1)
        True
        """
        rng = as_generator(rng)
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if keys.shape != values.shape or (keys.size and (keys.min() < 0 or keys.max() >= self.d)) \
                or np.any(np.abs(values) > 1):
            raise ValueError("keys must lie in 0..d-1 and values in [-1, 1], one value per key")
        j = int(rng.integers(self.d))
        hit = np.flatnonzero(keys == j)
        v = float(values[hit[0]]) if hit.size else 0.0
        x = 1 if rng.random() < (1 + v) / 2 else -1
        bit = int(rng.random() < self.p1) if hit.size else int(rng.random() >= self.p1)
        return j, bit * (x if rng.random() < self.p2 else -x)

    def perturb_users(self, data: KVData, rng=None) -> np.ndarray:
        """Every user's report ⟨j, y⟩ at once: :meth:`perturb`'s law, vectorised (no loop over users).

        Parameters
        ----------
        data : KVData
            With ``data.d == self.d``.
        rng : seed, Generator or None

        Returns
        -------
        ndarray (n, 2) of int64
            Rows (j, y), y ∈ {−1, 0, 1}.

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> r = kv.privkv(1.0, 5).perturb_users(kv.power_law(1000, 5, rng=0), rng=1)
        >>> r.shape, bool(set(r[:, 1].tolist()) <= {-1, 0, 1})
        ((1000, 2), True)
        """
        if not isinstance(data, KVData) or data.d != self.d:
            raise ValueError(f"data must be a KVData over d={self.d} keys")
        rng = as_generator(rng)
        n = data.n
        j = rng.integers(self.d, size=n)
        present, v = _lookup(data, j)
        x = np.where(rng.random(n) < (1 + v) / 2, 1, -1)
        u = rng.random(n)
        bit = np.where(present, u < self.p1, u >= self.p1)
        out = np.empty((n, 2), dtype=np.int64)
        out[:, 0] = j
        out[:, 1] = bit * np.where(rng.random(n) < self.p2, x, -x)
        return out

    def log_prob(self, reports, keys, values) -> np.ndarray:
        """ln P(report | the user's set) of each row of :meth:`perturb_users` (from
        :meth:`report_distribution`).

        Parameters
        ----------
        reports : ndarray (n, 2)
        keys, values : array_like
            One user's set.

        Returns
        -------
        ndarray (n,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import keyvalue as kv
        >>> p = kv.privkv(1.0, 2)
        >>> bool(np.allclose(np.exp(p.log_prob(np.array(p.outputs()), [1], [0.5])), p.report_distribution([1], [0.5])))
        True
        """
        r = np.asarray(reports, dtype=np.int64)
        law = self.report_distribution(keys, values)
        return np.log(law[3 * r[:, 0] + np.where(r[:, 1] == 1, 0, np.where(r[:, 1] == -1, 1, 2))])

    def aggregate(self, reports) -> np.ndarray:
        """The counts of a list of reports from :meth:`perturb`.

        Parameters
        ----------
        reports : list
            Reports ⟨j, y⟩.

        Returns
        -------
        ndarray (3, d)
            Reports y = +1, y = −1, and all reports, per sampled key.

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> kv.privkv(1.0, 2).aggregate([(0, 1), (0, 0), (1, -1)]).tolist()
        [[1, 0], [0, 1], [2, 1]]
        """
        r = np.asarray(reports, dtype=np.int64).reshape(-1, 2)
        out = np.zeros((3, self.d), dtype=np.int64)
        out[0] = np.bincount(r[r[:, 1] == 1, 0], minlength=self.d)
        out[1] = np.bincount(r[r[:, 1] == -1, 0], minlength=self.d)
        out[2] = np.bincount(r[:, 0], minlength=self.d)
        return out

    def sample_counts(self, data: KVData, rng=None) -> np.ndarray:
        """The counts of :meth:`collect`, exact in joint law, no loop over users: sampled keys and
        membership vectorised (sorted pair codes), then binomial draws per cell.

        Parameters
        ----------
        data : KVData
            With ``data.d == self.d``.
        rng : seed, Generator or None

        Returns
        -------
        ndarray (3, d)

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> int(kv.privkv(1.0, 5).sample_counts(kv.power_law(1000, 5, rng=0), rng=1)[2].sum())
        1000
        """
        if not isinstance(data, KVData) or data.d != self.d:
            raise ValueError(f"data must be a KVData over d={self.d} keys")
        rng = as_generator(rng)
        d = self.d
        j = rng.integers(d, size=data.n)
        present, v = _lookup(data, j)
        minus = rng.random(data.n) >= (1 + v) / 2
        hp = np.bincount(j[present & ~minus], minlength=d)
        hm = np.bincount(j[present & minus], minlength=d)
        nj = np.bincount(j, minlength=d)
        out = np.zeros((3, d), dtype=np.int64)
        bp, bm = rng.binomial(hp, self.p1), rng.binomial(hm, self.p1)
        sp, sm = rng.binomial(bp, self.p2), rng.binomial(bm, self.p2)
        fake = rng.binomial(nj - hp - hm, 1 - self.p1)
        fp = rng.binomial(fake, 0.5)
        out[0] = sp + (bm - sm) + fp
        out[1] = sm + (bp - sp) + (fake - fp)
        out[2] = nj
        return out

    def outputs(self) -> list:
        """Every possible report ⟨j, y⟩.

        Returns
        -------
        list

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> kv.privkv(1.0, 2).outputs()
        [(0, 1), (0, -1), (0, 0), (1, 1), (1, -1), (1, 0)]
        """
        return [(j, y) for j in range(self.d) for y in (1, -1, 0)]

    def report_distribution(self, keys, values) -> np.ndarray:
        """P(report | the user's set) for every report of :meth:`outputs`, in that order.

        Parameters
        ----------
        keys, values : array_like
            The user's keys and values.

        Returns
        -------
        ndarray (3d,)

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> round(float(kv.privkv(1.0, 3).report_distribution([1], [0.2]).sum()), 12)
        1.0
        """
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        P = np.empty((self.d, 3))
        P[:, 0] = P[:, 1] = (1 - self.p1) / 2
        P[:, 2] = self.p1
        xp = (1 + values) / 2
        up = xp * self.p2 + (1 - xp) * (1 - self.p2)
        P[keys, 0] = self.p1 * up
        P[keys, 1] = self.p1 * (1 - up)
        P[keys, 2] = 1 - self.p1
        return (P / self.d).reshape(-1)

    def _counts(self, counts):
        c = np.asarray(counts, dtype=np.float64)
        if c.shape != (3, self.d):
            raise ValueError(f"counts must have shape (3, d) = (3, {self.d}), got {c.shape}")
        return c

    def estimate(self, counts, n: int | None = None) -> KVEstimate:
        """The paper's estimators (§IV-C; the module notes), keys never sampled: f̂ = 0, m̂ = 0.

        Parameters
        ----------
        counts : ndarray (3, d)
        n : int or None
            Unused (the populations are in ``counts``); accepted for a common call.

        Returns
        -------
        KVEstimate

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> data = kv.power_law(50_000, 5, rng=0)
        >>> proto = kv.privkv(4.0, 5)
        >>> est = proto.estimate(proto.sample_counts(data, rng=1))
        >>> bool(abs(est.freq[0] - data.frequencies()[0]) < 0.05)
        True
        """
        c = self._counts(counts)
        n1, n2, nj = c
        N = n1 + n2
        with np.errstate(invalid="ignore", divide="ignore"):
            f = np.where(nj > 0, (self.p1 - 1 + N / np.maximum(nj, 1)) / (2 * self.p1 - 1), 0.0)
            a = np.clip(((self.p2 - 1) * N + n1) / (2 * self.p2 - 1), 0, N)
            b = np.clip(((self.p2 - 1) * N + n2) / (2 * self.p2 - 1), 0, N)
            m = np.where(N > 0, np.clip((a - b) / np.maximum(N, 1), -1, 1), 0.0)
        return KVEstimate(f, m, self.name)

    def pairs(self, counts, n: int | None = None) -> PairEstimate:
        """Unbiased shares of holders with x = ±1 among the users who sampled each key (the
        affine system of :mod:`.protocol`), ``rest`` = 1 − plus − minus, with plug-in variances.

        See ``KVProtocol.pairs``.

        Parameters
        ----------
        counts : ndarray (3, d)
        n : int or None
            Unused (the populations are in ``counts``).

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> proto = kv.privkv(2.0, 4)
        >>> pe = proto.pairs(proto.sample_counts(kv.power_law(5000, 4, rng=0), rng=1))
        >>> bool(abs(pe.plus + pe.minus + pe.rest - 1).max() < 1e-12)
        True
        """
        c = self._counts(counts)
        P = np.maximum(c[2], 1.0)
        hp, hm = self._solve(c[0], c[1], P)
        vp, vm = self._var(c[0], c[1], P)
        # the non-holders' share: (n_j − Ĥ⁺ − Ĥ⁻)/n_j; its variance from N = n1 + n2 alone, at the plug-in
        # π = N/n_j clipped to [1 − p1, p1], the range a "holds" report's probability p1·h + (1 − p1)(1 − h)
        # takes over h ∈ [0, 1]: a key whose sampled users all reported holding it (N = n_j, common when
        # few sampled it) had variance 0 there, so the consistent problem weighted its share by 1e300
        # and no solver could answer it (10⁴ power-law keys, 10⁵ users: every route failed, measured)
        pi = np.clip((c[0] + c[1]) / P, 1 - self.p1, self.p1)
        vr = pi * (1 - pi) / P / (2 * self.p1 - 1) ** 2
        return PairEstimate(hp / P, hm / P, vp / P ** 2, vm / P ** 2, 1 - (hp + hm) / P, vr, 1)


def privkv(epsilon: float, d: int) -> PrivKV:
    """PrivKV (:class:`PrivKV`).

    Parameters
    ----------
    epsilon : float
        ε, > 0.
    d : int
        Keys, ≥ 2.

    Returns
    -------
    PrivKV

    Examples
    --------
    >>> from ldpopt import keyvalue as kv
    >>> kv.privkv(1.0, 10)
    PrivKV(epsilon=1.0, d=10)
    """
    return PrivKV(epsilon, d)
