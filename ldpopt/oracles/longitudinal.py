r"""Longitudinal (memoised) frequency oracles: the same users report over τ rounds (Erlingsson,
Pihur & Korolova, CCS 2014 §3; Arcolezi et al., arXiv:2111.04636, §3).

Notes: docs/notes/longitudinal.md, "ldpopt.oracles.longitudinal"."""

from __future__ import annotations

import math
from typing import ClassVar, Self

import numpy as np

from .._validation import _check_int, as_generator, check_domain_size, check_epsilon, check_values
from .base import FrequencyOracle, ReportColumn
from .channel import Channel
from .grr import GRR
from .hashing import OLH
from .horizon import HorizonEpsilon, check_relation, pattern_epsilon
from .rappor import RAPPOR
from .unary import _UnaryEncoding

__all__ = [
    "LGRR",
    "LOLOHA",
    "LOSUE",
    "LOUE",
    "LRAPPOR",
    "LSOUE",
    "LSUE",
    "DBitFlipPM",
    "LongitudinalClients",
    "LongitudinalOracle",
    "longitudinal_oracle",
]

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (Steele, Lea & Flood 2014), elementwise on uint64 (wrapping)."""
    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & _M64
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _M64
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _M64
        return x ^ (x >> np.uint64(31))


def memo_uniforms(secret: np.ndarray, values: np.ndarray, cols: int) -> np.ndarray:
    """(m, cols) uniforms in [0, 1) that are a deterministic function of (secret_i, value_i, column):
    the randomness of a memo (the same user and value give the same memo every round)."""
    with np.errstate(over="ignore"):
        key = _splitmix64(secret ^ _splitmix64(values.astype(np.uint64) + np.uint64(0x5BD1E995)))
        x = _splitmix64(key[:, None] ^ (np.arange(cols, dtype=np.uint64)[None, :] * np.uint64(0xD6E8FEB86659FD93)))
    return (x >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def _solve_increasing(fun, target: float, lo: float, hi: float) -> float:
    """The root of an increasing ``fun`` on (lo, hi) at ``target`` (bisection to machine precision)."""
    from scipy.optimize import brentq

    return float(brentq(lambda x: fun(x) - target, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500))


class LongitudinalOracle(FrequencyOracle):
    r"""Mixin of the memoised oracles: PRR (p₁, q₁) with :math:`ε_\infty` = ``epsilon``, IRR (p₂, q₂) with one report
    ε₁-LDP; one round's report is the pure oracle with the composed (p, q) (module notes).

    ``epsilon`` is :math:`ε_\infty`, the bound on what any number of reports of one value reveal; ``eps_1`` (< :math:`ε_\infty`)
    is one report's exact ε."""

    structural: ClassVar[tuple[str, ...]] = ("eps_1",)
    longitudinal: ClassVar[bool] = True
    p1: float
    q1: float
    p2: float
    q2: float
    eps_1: float

    def _init_longitudinal(self, epsilon: float, d: int, eps_1: float | None) -> None:
        self.epsilon, self.eps_1 = _check_eps_pair(epsilon, eps_1)
        self.d = check_domain_size(d, "d")
        self.p1, self.q1 = self._prr()
        self.p2, self.q2 = self._solve_irr()

    def params(self) -> dict:
        return {"eps_1": self.eps_1}

    # -- what each oracle states: its two rounds ------------------------------------------------
    def _prr(self) -> tuple[float, float]:
        r"""(p₁, q₁) of the memo at :math:`ε_\infty`."""
        raise NotImplementedError

    def _solve_irr(self) -> tuple[float, float]:
        """(p₂, q₂) of the instantaneous response, so that one report is ε₁-LDP."""
        raise NotImplementedError

    def _memo(self, secret: np.ndarray, v: np.ndarray, public: np.ndarray) -> np.ndarray:
        """The memos of users (secret, v), a deterministic function of both (vectorised); ``public``
        seeds what the reports show (hash keys, cohorts), drawn independently of ``secret``."""
        raise NotImplementedError

    def _irr(self, memo: np.ndarray, gen: np.random.Generator):
        """One round's reports from the memos (vectorised)."""
        raise NotImplementedError

    # -- the pure oracle of one round -----------------------------------------------------------
    @property
    def p(self) -> float:
        return self.p1 * self.p2 + (1.0 - self.p1) * self.q2

    @property
    def q(self) -> float:
        return self.q1 * self.p2 + (1.0 - self.q1) * self.q2

    @property
    def _one_minus_p(self) -> float:
        return 1.0 - self.p

    @property
    def _one_minus_q(self) -> float:
        return 1.0 - self.q

    @property
    def memo_other(self) -> float:
        """Pr[a user's memo supports a value u that is not hers]: q₁ (LOLOHA: 1/g, its hash being random).

        Examples
        --------
        >>> from ldpopt.oracles import LGRR, LOLOHA
        >>> o = LGRR(2.0, 4)
        >>> o.memo_other == o.q1, LOLOHA(2.0, 16, g=4).memo_other
        (True, 0.25)
        """
        return self.q1

    def memo_support_variance(self, nv: np.ndarray, n: int) -> np.ndarray:
        """Σ over the n users (n_v of them holding v) of Var[her memo's support of v], (d,): the term the
        rounds share (each round's count of v has covariance (p₂ − q₂)² times it with another round's).

        Parameters
        ----------
        nv : ndarray, shape (d,)
            Users per value (may be fractional: a plug-in).
        n : int
            Users.

        Returns
        -------
        ndarray, shape (d,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles import LGRR
        >>> o = LGRR(2.0, 3)
        >>> v = o.memo_support_variance(np.array([10.0, 0.0, 0.0]), 10)  # everyone holds value 0
        >>> bool(np.isclose(v[0], 10 * o.p1 * (1 - o.p1))), bool(np.isclose(v[1], 10 * o.q1 * (1 - o.q1)))
        (True, True)
        """
        m = self.memo_other
        return nv * self.p1 * (1 - self.p1) + (n - nv) * m * (1 - m)

    # -- accounting ----------------------------------------------------------------------------
    def epsilon_first(self) -> float:
        """ε of one report, from the composed (p, q) (equals ``eps_1`` by construction).

        Returns
        -------
        float

        Examples
        --------
        >>> from ldpopt.oracles import LGRR, LOLOHA, LOSUE
        >>> [round(o.epsilon_first(), 12) for o in (LGRR(4.0, 4, eps_1=1.0), LOSUE(4.0, 4, eps_1=1.0),
        ...                                         LOLOHA(4.0, 16, eps_1=1.0, g=3))]
        [1.0, 1.0, 1.0]
        """
        raise NotImplementedError

    def epsilon_rounds(self, tau: int) -> float:
        r"""Exact ε of a user's τ reports of one constant value (closed form, module notes).

        Parameters
        ----------
        tau : int
            Rounds reported, >= 1.

        Returns
        -------
        float
            ε(τ): ``eps_1`` at τ = 1, increasing to :math:`ε_\infty` (``epsilon``) as τ grows.

        Examples
        --------
        >>> from ldpopt.oracles import LGRR
        >>> o = LGRR(4.0, 4, eps_1=1.0)
        >>> round(o.epsilon_rounds(1), 12), round(o.epsilon_rounds(2), 4)
        (1.0, 1.966)
        >>> o.epsilon_rounds(2) < o.epsilon_rounds(10) < o.epsilon
        True
        """
        raise NotImplementedError

    def rounds_channel(self, tau: int) -> Channel:
        """The exact law of a user's τ reports of one value, as a :class:`Channel` (enumeration; small
        d and τ only): rows the joint outputs :math:`(y_1, …, y_τ)`, y₁ most significant, columns the values.

        Parameters
        ----------
        tau : int
            Rounds, >= 1.

        Returns
        -------
        Channel
            Its ``epsilon`` is :meth:`epsilon_rounds` (τ), the check the tests make.

        Raises
        ------
        ValueError
            If the joint outputs are too many to enumerate.

        Examples
        --------
        >>> from ldpopt.oracles import LGRR
        >>> o = LGRR(4.0, 4, eps_1=1.0)
        >>> ch = o.rounds_channel(2)
        >>> ch.matrix.shape, abs(ch.epsilon - o.epsilon_rounds(2)) < 1e-9
        ((16, 4), True)
        """
        raise NotImplementedError

    def epsilon_horizon(self, tau: int, distinct_values: int = 1, relation: str = "any") -> HorizonEpsilon:
        r"""The whole-horizon ε of a user who reports τ rounds and holds at most ``distinct_values`` distinct
        values over them, under the neighbouring relation ``relation`` (:mod:`ldpopt.oracles.horizon`).

        ``"any"`` (default, the usual relation: any two value sequences): ε(τ) (:meth:`epsilon_rounds`)
        when the user holds one value; else ε₁ + (τ − 1)·ε_IRR, the chain rule over rounds (the first
        round is one report, every later one the instantaneous response of a memo whose posterior the
        two sequences may move anywhere; ε_IRR is that response's own ε over any two memos). When the
        user may change value, her reports reveal *when* — which rounds share a memo — and that leak
        grows with τ: it is not bounded by :math:`ε_\infty` per distinct value.

        ``"memo-pattern"`` (which rounds share a memo is public: when the value changed and to which
        earlier value it returned): the memos are independent, so the charges add — the largest
        Σ ε(n_j) over at most ``distinct_values`` memos serving n₁ + … + n_j = τ rounds, at most
        ``distinct_values``·:math:`ε_\infty` (exact for L-GRR and the L-UE family by enumeration at d, τ ≤ 3; L-RAPPOR's sums
        the paper's bound per memo).

        Parameters
        ----------
        tau : int
            Rounds reported, >= 1.
        distinct_values : int
            The most distinct values the user holds, 1 ≤ it ≤ min(τ, d).
        relation : {"any", "memo-pattern"}
            The neighbouring relation (default "any").

        Returns
        -------
        HorizonEpsilon
            A float that names its relation (``.relation``).

        Examples
        --------
        >>> from ldpopt.oracles import LGRR
        >>> o = LGRR(2.0, 8, eps_1=0.5)
        >>> o.epsilon_horizon(10) == o.epsilon_rounds(10)  # one value: both relations agree
        True
        >>> round(o.epsilon_horizon(200, distinct_values=3, relation="memo-pattern"), 9)  # ≤ ε∞ per memo
        6.0
        >>> e = o.epsilon_horizon(200, distinct_values=3)  # any two sequences: the pattern leaks
        >>> e.relation, e > 6.0
        ('any', True)
        """
        return _epsilon_horizon(self, tau, distinct_values, relation)

    def privacy(self, tau: int, distinct_values: int = 1, relation: str = "any") -> dict:
        """The ``meta["privacy"]`` dict of an estimate from a user's τ memoised rounds: ε₁ per report
        (``eps_1``) and the whole horizon's ε, :meth:`epsilon_horizon` (τ,
        ``distinct_values``, ``relation``), for :meth:`ldpopt.Estimate.with_privacy` (printed by
        :class:`ldpopt.privacy.statement.PrivacyStatement`).

        Parameters
        ----------
        tau : int
            Rounds reported, >= 1.
        distinct_values : int, default 1
            The most distinct values the user holds over them.
        relation : {"any", "memo-pattern"}, default "any"
            The neighbouring relation over value sequences (:mod:`ldpopt.oracles.horizon`).

        Returns
        -------
        dict
            ``{"model": "local", "relation": "replace", "epsilon": ε₁, "rounds": τ, "composition":
            "memoised: ...", "epsilon_total": ε over the horizon, "horizon": relation,
            "distinct_values": k}``.

        Examples
        --------
        >>> from ldpopt.oracles import LGRR
        >>> o = LGRR(2.0, 8, eps_1=0.5)
        >>> rec = o.privacy(10)
        >>> rec["epsilon"], rec["epsilon_total"] == o.epsilon_rounds(10)
        (0.5, True)
        """
        eps = self.epsilon_horizon(tau, distinct_values, relation)
        return {"model": "local", "relation": "replace", "epsilon": float(self.eps_1), "rounds": int(tau),
                "composition": "memoised: the oracle's whole-horizon ε", "epsilon_total": float(eps),
                "horizon": eps.relation, "distinct_values": int(distinct_values)}

    # -- what the horizon accounting and its enumeration ask each oracle --------------------------
    def _memo_law(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(state probabilities (S,), law (S, Y^n, d)): n reports of one memo given the public state and
        the value, y₁ most significant (:func:`~ldpopt.oracles.horizon.horizon_law`)."""
        raise NotImplementedError

    def _memo_keys(self) -> np.ndarray:
        """(S, d): the memo value v uses in public state s (the value itself unless stated otherwise)."""
        return np.arange(self.d)[None, :]

    def _memos(self, distinct_values: int) -> int:
        """The most memos a user holding ``distinct_values`` distinct values uses."""
        return int(distinct_values)

    def _irr_epsilon(self) -> float:
        """ε of one instantaneous response over any two memos (the chain rule's per-round charge)."""
        raise NotImplementedError

    def sample_rounds(self, true_counts, tau: int, rng) -> np.ndarray:
        """Exact in joint law over rounds: the support counts (τ, d) of τ rounds of the users of
        ``true_counts`` keeping their value and their memo, without per-user work — the memos'
        aggregate first (its law is the PRR's), then each round given the memos, independently.

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            The true histogram.
        tau : int
            Rounds, >= 1.
        rng : int, numpy.random.Generator or "secure"

        Returns
        -------
        ndarray of int64, shape (τ, d)

        Examples
        --------
        >>> from ldpopt.oracles import LOSUE
        >>> C = LOSUE(2.0, 4).sample_rounds([50, 30, 15, 5], 3, rng=0)
        >>> C.shape, C.dtype
        ((3, 4), dtype('int64'))
        """
        tc = self._check_true_counts(true_counts)
        tau = _check_tau(tau)
        return self._sample_rounds(tc, tau, as_generator(rng))

    def _sample_rounds(self, tc: np.ndarray, tau: int, gen: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def clients(self, n: int, rng) -> LongitudinalClients:
        """``n`` users with a permanent state each (:class:`LongitudinalClients`).

        Parameters
        ----------
        n : int
            Number of users, >= 1.
        rng : int, numpy.random.Generator or "secure"
            Draws the users' secrets.

        Returns
        -------
        LongitudinalClients

        Examples
        --------
        >>> from ldpopt.oracles import LGRR
        >>> users = LGRR(2.0, 4).clients(3, rng=0)
        >>> bool((users.memo([0, 1, 2]) == users.memo([0, 1, 2])).all())  # the memo is permanent
        True
        """
        return LongitudinalClients(self, n, rng)


#: ε₁ / ε∞ when ``eps_1`` is not given: one report spends half the memo's budget. Every longitudinal
#: oracle reaches it at every ε∞ (the OUE instantaneous responses reach ε₁ up to about 2ε∞/3 as ε∞ → 0,
#: more above; the symmetric ones up to ε∞), so the registry builds each with ε alone.
EPS1_RATIO = 0.5


def _check_eps_pair(epsilon, eps_1) -> tuple[float, float]:
    r"""(:math:`ε_\infty`, ε₁) checked: ε₁ defaults to :data:`EPS1_RATIO`·:math:`ε_\infty` and must be < :math:`ε_\infty`."""
    epsilon = check_epsilon(epsilon, "epsilon")
    eps_1 = EPS1_RATIO * epsilon if eps_1 is None else check_epsilon(eps_1, "eps_1")
    if not eps_1 < epsilon:
        raise ValueError(f"eps_1 must be < epsilon (one report reveals less than the memo), "
                         f"got eps_1 = {eps_1!r} and epsilon = {epsilon!r}")
    return epsilon, eps_1


def _check_tau(tau) -> int:
    if isinstance(tau, bool) or not isinstance(tau, (int, np.integer)) or tau < 1:
        raise ValueError(f"tau must be an integer >= 1 (rounds), got {tau!r}")
    return int(tau)


def _epsilon_horizon(oracle, tau, distinct_values, relation) -> HorizonEpsilon:
    """:meth:`LongitudinalOracle.epsilon_horizon` for any memoised oracle (``_memos``, ``_irr_epsilon``,
    ``epsilon_rounds``); the derivations are :mod:`ldpopt.oracles.horizon`'s."""
    tau = _check_tau(tau)
    if isinstance(distinct_values, bool) or not isinstance(distinct_values, (int, np.integer)) \
            or not 1 <= distinct_values <= min(tau, oracle.d):
        raise ValueError(f"distinct_values must be an integer in [1, min(tau, d)] = [1, {min(tau, oracle.d)}], "
                         f"got {distinct_values!r}")
    relation = check_relation(relation)
    k = int(distinct_values)
    if k == 1:
        return HorizonEpsilon(oracle.epsilon_rounds(tau), relation)
    if relation == "any":
        return HorizonEpsilon(oracle.epsilon_rounds(1) + (tau - 1) * oracle._irr_epsilon(), relation)
    memos = min(oracle._memos(k), tau)
    if memos * tau <= _DP_STEPS:
        return HorizonEpsilon(pattern_epsilon(oracle.epsilon_rounds, tau, memos), relation)
    # too long for the exact composition: Σ ε(n_j) ≤ j·ε(τ − j + 1), ε increasing
    return HorizonEpsilon(max(j * oracle.epsilon_rounds(tau - j + 1) for j in range(1, memos + 1)), relation)


#: Above memos·τ of this, the memo-pattern bound is j·ε(τ − j + 1) rather than the exact composition.
_DP_STEPS = 50_000


def _bitwise_memo_law(r: np.ndarray, p2: float, q2: float, n: int) -> np.ndarray:
    """n reports of a memo of independent bits: r (S, T, d) = Pr[memo bit t = 1 | state s, value v], each
    round bit t reported 1 w.p. p₂ if the memo bit is 1, q₂ if 0. Returns (S, (2^T)^n, d), each round's
    output the T bits (bit 0 most significant), round 1 most significant (enumeration only)."""
    R = _tau_fold(np.array([[1 - q2, 1 - p2], [q2, p2]]), n)  # (2^n, 2): a bit's n reports given its memo bit
    b = R[:, 0][None, None, :, None] * (1 - r[:, :, None, :]) + R[:, 1][None, None, :, None] * r[:, :, None, :]
    S, T, d = r.shape
    J = b[:, 0]  # (S, 2^n, d): bit 0's rounds
    for t in range(1, T):  # bits (enumeration only)
        J = (J[:, :, None, :] * b[:, t][:, None, :, :]).reshape(S, -1, d)
    # axes (bit, round) -> (round, bit)
    J = J.reshape((S,) + (2,) * (T * n) + (d,))
    order = [1 + t * n + i for i in range(n) for t in range(T)]
    return J.transpose([0, *order, T * n + 1]).reshape(S, -1, d)


def _bit_up_down(p1: float, q1: float, p2: float, q2: float, tau: int) -> tuple[float, float]:
    """A memoised bit (memo 1 w.p. p₁ if the bit is the user's, q₁ if not; each round 1 w.p. p₂ if the memo
    is 1, q₂ if 0) over τ rounds: the largest log-ratio of its τ reports' laws towards "the user's bit"
    (all ones) and away from it (all zeros), log((p₁A + 1 − p₁)/(q₁A + 1 − q₁)) and
    log((q₁B + 1 − q₁)/(p₁B + 1 − p₁)), A = (p₂/q₂)^τ, B = ((1 − p₂)/(1 − q₂))^τ (in logs)."""
    la = tau * math.log(p2 / q2)  # log A
    lb = tau * math.log((1 - p2) / (1 - q2))  # log B (≤ 0)
    up = np.logaddexp(math.log(p1) + la, math.log(1 - p1)) - np.logaddexp(math.log(q1) + la, math.log(1 - q1))
    down = np.logaddexp(math.log(q1) + lb, math.log(1 - q1)) - np.logaddexp(math.log(p1) + lb, math.log(1 - p1))
    return float(up), float(down)


def _tau_fold(P2: np.ndarray, tau: int) -> np.ndarray:
    """Π_t P2[y_t, m] over τ independent reports of the memo m: (k^τ, k), y₁ most significant."""
    M = P2
    for _ in range(tau - 1):  # τ rounds (small, enumeration only)
        M = (M[:, None, :] * P2[None, :, :]).reshape(-1, P2.shape[1])
    return M


class LGRR(LongitudinalOracle, GRR):
    r"""L-GRR: GRR(:math:`ε_\infty`) memo, then GRR(ε₂) per round, ε₂ solved so one report is ε₁-LDP (Arcolezi et al.
    arXiv:2111.04636 §3.1; the library's closed form for p₂).

    Parameters
    ----------
    epsilon : float
        :math:`ε_\infty` of the memo, > 0.
    d : int
        Domain size, >= 2.
    eps_1 : float, optional
        ε of one report, 0 < eps_1 < epsilon (default ``EPS1_RATIO``·epsilon = epsilon/2).

    Examples
    --------
    >>> from ldpopt.oracles.longitudinal import LGRR
    >>> o = LGRR(4.0, 4, eps_1=1.0)
    >>> round(o.epsilon_first(), 12), round(o.epsilon_rounds(1), 12)
    (1.0, 1.0)
    >>> o.epsilon_rounds(3) < o.epsilon_rounds(30) < 4.0
    True
    """

    name = "l-grr"
    label = "L-GRR"

    def __init__(self, epsilon: float, d: int, eps_1: float | None = None):
        self._init_longitudinal(epsilon, d, eps_1)

    def _prr(self) -> tuple[float, float]:
        p1 = 1.0 / (1.0 + (self.d - 1) * math.exp(-self.epsilon))
        return p1, (1.0 - p1) / (self.d - 1)

    def _solve_irr(self) -> tuple[float, float]:
        d, p1, q1 = self.d, self.p1, self.q1

        def eps_of(e2):
            p2 = 1.0 / (1.0 + (d - 1) * math.exp(-e2))
            q2 = (1.0 - p2) / (d - 1)
            return math.log((p1 * p2 + (1 - p1) * q2) / (q1 * p2 + (1 - q1) * q2))

        e2 = _solve_increasing(eps_of, self.eps_1, 1e-12, 60.0)
        p2 = 1.0 / (1.0 + (d - 1) * math.exp(-e2))
        return p2, (1.0 - p2) / (d - 1)

    def epsilon_first(self) -> float:
        return float(math.log(self.p / self.q))

    def epsilon_rounds(self, tau: int) -> float:
        tau = _check_tau(tau)
        p1, q1, d = self.p1, self.q1, self.d
        log_rho_tau = tau * math.log(self.p2 / self.q2)
        # log((p₁ρ^τ + (d−1)q₁)/(q₁ρ^τ + p₁ + (d−2)q₁)), in logs so large τ does not overflow
        num = np.logaddexp(math.log(p1) + log_rho_tau, math.log((d - 1) * q1))
        den = np.logaddexp(math.log(q1) + log_rho_tau, math.log(p1 + (d - 2) * q1))
        return float(min(num - den, self.epsilon))  # the min only absorbs rounding at large τ

    def rounds_channel(self, tau: int) -> Channel:
        tau = _check_tau(tau)
        if self.d ** tau > 1 << 16:
            raise ValueError(f"d^tau = {self.d}^{tau} joint outputs, too many to enumerate (max 65536)")
        P1 = Channel.grr(self.epsilon, self.d).blocks[0]
        P2 = np.full((self.d, self.d), self.q2)
        np.fill_diagonal(P2, self.p2)
        return Channel(_tau_fold(P2, tau) @ P1, name=f"{self.label}x{tau}")

    def _memo_law(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        return np.ones(1), self.rounds_channel(n).matrix[None]

    def _irr_epsilon(self) -> float:
        return float(math.log(self.p2 / self.q2))

    def perturb(self, values, rng) -> np.ndarray:
        """One round of fresh users: the memo (PRR) then one IRR, vectorised (real two-stage path;
        :meth:`clients` keeps the memos over rounds).

        Parameters
        ----------
        values : array_like of int, shape (m,)
            The users' true values in [0, d).
        rng : int, numpy.random.Generator or "secure"
            Draws the users' secrets and the round's randomness.

        Returns
        -------
        ndarray of int64, shape (m,)
            The reported values.

        Examples
        --------
        >>> from ldpopt.oracles import LGRR
        >>> o = LGRR(2.0, 4)
        >>> r = o.perturb([0, 1, 2, 3], rng=0)
        >>> r.shape, int(o.aggregate(r).sum())
        ((4,), 4)
        """
        return LongitudinalClients(self, check_values(values, self.d).shape[0], rng).report(values, rng)

    def _sample_rounds(self, tc: np.ndarray, tau: int, gen: np.random.Generator) -> np.ndarray:
        # memo histogram: GRR(ε∞) of the values (kept w.p. p₁ − q₁, else uniform); then per round GRR(ε₂)
        # of the memo histogram the same way (GRR.sample_counts's decomposition, arXiv Eq. 1)
        n = int(tc.sum())
        kept = gen.binomial(tc, self.p1 - self.q1)
        memo = kept + gen.multinomial(n - int(kept.sum()), np.full(self.d, 1.0 / self.d))
        kept2 = gen.binomial(memo, self.p2 - self.q2, size=(tau, self.d))
        rest = n - kept2.sum(axis=1)
        return (kept2 + gen.multinomial(rest, np.full(self.d, 1.0 / self.d))).astype(np.int64)

    def _memo(self, secret: np.ndarray, v: np.ndarray, public: np.ndarray) -> np.ndarray:
        u = memo_uniforms(secret, v, 2)
        other = np.floor(u[:, 1] * (self.d - 1)).astype(np.int64)
        other += other >= v
        return np.where(u[:, 0] < self.p1, v, other)

    def _irr(self, memo: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        keep = gen.random(memo.shape[0]) < self.p2
        other = gen.integers(0, self.d - 1, size=memo.shape[0])
        other += other >= memo
        return np.where(keep, memo, other)


_UE_PRR = {"sue": lambda e: (1.0 / (1.0 + math.exp(-e / 2)), 1.0 / (1.0 + math.exp(e / 2))),
           "oue": lambda e: (0.5, 1.0 / (1.0 + math.exp(e)))}


class _LongitudinalUnary(LongitudinalOracle, _UnaryEncoding):
    """The L-UE family: a unary-encoded memo (bits with p₁, q₁), each bit of it through a binary IRR
    (p₂, q₂) every round; reports are packed bits as OUE's. ``prr``/``irr`` ∈ {"sue", "oue"} name the
    rounds' encodings (the IRR's symmetric p₂ = 1 − q₂, or OUE's p₂ = 1/2)."""

    prr: str
    irr: str

    def __init__(self, epsilon: float, d: int, eps_1: float | None = None):
        self._init_longitudinal(epsilon, d, eps_1)

    def _prr(self) -> tuple[float, float]:
        return _UE_PRR[self.prr](self.epsilon)

    def _irr_pq(self, x: float) -> tuple[float, float]:
        # x ∈ (0, 1) parametrises the IRR: symmetric p₂ = 1 − q₂ = 1/2 + x/2; OUE p₂ = 1/2, q₂ = (1 − x)/2
        return (0.5 + 0.5 * x, 0.5 - 0.5 * x) if self.irr == "sue" else (0.5, 0.5 - 0.5 * x)

    def _solve_irr(self) -> tuple[float, float]:
        p1, q1 = self.p1, self.q1

        def eps_of(x):
            p2, q2 = self._irr_pq(x)
            p, q = p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2
            return math.log(p * (1 - q) / (q * (1 - p)))

        if not self.eps_1 < eps_of(1.0 - 1e-15):
            raise ValueError(f"eps_1 = {self.eps_1!r} cannot be reached by {self.label}'s instantaneous "
                             f"response at epsilon = {self.epsilon!r}; choose a smaller eps_1")
        return self._irr_pq(_solve_increasing(eps_of, self.eps_1, 1e-15, 1.0 - 1e-15))

    def epsilon_first(self) -> float:
        p, q = self.p, self.q
        return float(math.log(p * (1 - q) / (q * (1 - p))))

    def epsilon_rounds(self, tau: int) -> float:
        up, down = _bit_up_down(self.p1, self.q1, self.p2, self.q2, _check_tau(tau))
        return float(min(up + down, self.epsilon))  # the min only absorbs rounding at large τ

    def rounds_channel(self, tau: int) -> Channel:
        tau = _check_tau(tau)
        R = _tau_fold(np.array([[1 - self.q2, 1 - self.p2], [self.q2, self.p2]]), tau)  # (2^τ, 2), memo bit x
        perm = Channel.support(self.p1, self.q1, self.d)
        from .channel import compose

        return compose(Channel(R, name=f"irr^{tau}"), perm)

    def _memo_law(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        r = np.where(np.eye(self.d, dtype=bool), self.p1, self.q1)[None]  # bit t of value v's memo
        return np.ones(1), _bitwise_memo_law(r, self.p2, self.q2, n)

    def _irr_epsilon(self) -> float:
        return float(self.d * max(math.log(self.p2 / self.q2), math.log((1 - self.q2) / (1 - self.p2))))

    def perturb(self, values, rng) -> np.ndarray:
        """One round of fresh users: the memo (PRR) then one IRR, vectorised (real two-stage path)."""
        return LongitudinalClients(self, check_values(values, self.d).shape[0], rng).report(values, rng)

    def _sample_rounds(self, tc: np.ndarray, tau: int, gen: np.random.Generator) -> np.ndarray:
        # bit u of the memo is 1 for Binomial(n_u, p₁) + Binomial(n − n_u, q₁) users (bits independent);
        # each round, bit u reports 1 for Binomial(M_u, p₂) + Binomial(n − M_u, q₂) of them
        n = int(tc.sum())
        M = gen.binomial(tc, self.p1) + gen.binomial(n - tc, self.q1)
        return (gen.binomial(M, self.p2, size=(tau, self.d))
                + gen.binomial(n - M, self.q2, size=(tau, self.d))).astype(np.int64)

    def _memo(self, secret: np.ndarray, v: np.ndarray, public: np.ndarray) -> np.ndarray:
        u = memo_uniforms(secret, v, self.d)
        own = np.arange(self.d)[None, :] == v[:, None]
        return u < np.where(own, self.p1, self.q1)

    def _irr(self, memo: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        bits = gen.random(memo.shape) < np.where(memo, self.p2, self.q2)
        return np.packbits(bits, axis=1)


class LSUE(_LongitudinalUnary):
    r"""L-SUE (basic one-hash RAPPOR's memoised path: symmetric flips in both rounds; Erlingsson et al.
    CCS 2014 §3; Arcolezi et al. arXiv:2111.04636).

    Parameters
    ----------
    epsilon : float
        :math:`ε_\infty` of the memo, > 0.
    d : int
        Domain size, >= 2.
    eps_1 : float, optional
        ε of one report, 0 < eps_1 < epsilon (default ``EPS1_RATIO``·epsilon = epsilon/2).

    Examples
    --------
    >>> from ldpopt.oracles.longitudinal import LSUE
    >>> o = LSUE(4.0, 4, eps_1=1.0)
    >>> round(o.epsilon_first(), 12), o.epsilon_rounds(50) < 4.0
    (1.0, True)
    """

    name = "l-sue"
    label = "L-SUE"
    prr, irr = "sue", "sue"


class LSOUE(_LongitudinalUnary):
    r"""L-SOUE: SUE memo, OUE instantaneous response (Arcolezi et al. arXiv:2111.04636).

    Parameters
    ----------
    epsilon : float
        :math:`ε_\infty` of the memo, > 0.
    d : int
        Domain size, >= 2.
    eps_1 : float, optional
        ε of one report, 0 < eps_1 < epsilon (default ``EPS1_RATIO``·epsilon = epsilon/2).

    Examples
    --------
    >>> from ldpopt.oracles.longitudinal import LSOUE
    >>> o = LSOUE(4.0, 4, eps_1=1.0)
    >>> o.p2, round(o.epsilon_first(), 12)  # the OUE instantaneous response keeps a 1 w.p. 1/2
    (0.5, 1.0)
    """

    name = "l-soue"
    label = "L-SOUE"
    prr, irr = "sue", "oue"


class LOUE(_LongitudinalUnary):
    r"""L-OUE: OUE memo, OUE instantaneous response (Arcolezi et al. arXiv:2111.04636).

    Parameters
    ----------
    epsilon : float
        :math:`ε_\infty` of the memo, > 0.
    d : int
        Domain size, >= 2.
    eps_1 : float, optional
        ε of one report, 0 < eps_1 < epsilon (default ``EPS1_RATIO``·epsilon = epsilon/2).

    Examples
    --------
    >>> from ldpopt.oracles.longitudinal import LOUE
    >>> o = LOUE(4.0, 4, eps_1=1.0)
    >>> o.p1, o.p2, round(o.epsilon_first(), 12)  # OUE in both rounds: a 1 kept w.p. 1/2
    (0.5, 0.5, 1.0)
    """

    name = "l-oue"
    label = "L-OUE"
    prr, irr = "oue", "oue"


class LOSUE(_LongitudinalUnary):
    r"""L-OSUE: OUE memo, symmetric instantaneous response (Arcolezi et al. arXiv:2111.04636; their
    recommended L-UE).

    Parameters
    ----------
    epsilon : float
        :math:`ε_\infty` of the memo, > 0.
    d : int
        Domain size, >= 2.
    eps_1 : float, optional
        ε of one report, 0 < eps_1 < epsilon (default ``EPS1_RATIO``·epsilon = epsilon/2).

    Examples
    --------
    >>> from ldpopt.oracles.longitudinal import LOSUE
    >>> o = LOSUE(4.0, 4, eps_1=1.0)
    >>> o.p1, round(o.p2 + o.q2, 12), round(o.epsilon_first(), 12)  # symmetric IRR: p₂ + q₂ = 1
    (0.5, 1.0, 1.0)
    """

    name = "l-osue"
    label = "L-OSUE"
    prr, irr = "oue", "sue"


def _grr_pq(epsilon: float, k: int) -> tuple[float, float]:
    """GRR's (keep, each other) on k outputs at ε."""
    p = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    return p, (1.0 - p) / (k - 1)


def _lgrr_irr(p1: float, q1: float, k: int, eps_1: float) -> tuple[float, float]:
    """(p₂, q₂) of GRR on k outputs after a GRR(p₁, q₁) memo, so that one report is exactly eps_1-LDP."""
    def eps_of(e2):
        p2, q2 = _grr_pq(e2, k)
        return math.log((p1 * p2 + (1 - p1) * q2) / (q1 * p2 + (1 - q1) * q2))

    return _grr_pq(_solve_increasing(eps_of, eps_1, 1e-12, 60.0), k)


def _lgrr_rounds(p1: float, q1: float, p2: float, q2: float, k: int, tau: int) -> float:
    """ε of τ reports of one value for GRR(p₁, q₁) then GRR(p₂, q₂) on k outputs (module notes)."""
    log_rho_tau = tau * math.log(p2 / q2)
    num = np.logaddexp(math.log(p1) + log_rho_tau, math.log((k - 1) * q1))
    den = np.logaddexp(math.log(q1) + log_rho_tau, math.log(p1 + (k - 2) * q1))
    return float(num - den)


class LOLOHA(LongitudinalOracle, OLH):
    r"""LOLOHA: each user draws her hash H: D → [g] once (a 64-bit key, OLH's keyed hash), memoises
    GRR_g(:math:`ε_\infty`) of H(v) — one memo per *hashed* value — and reports (key, GRR_g(ε₂)(memo)) every round,
    ε₂ solved so one report is exactly ε₁-LDP (Arcolezi, Pinzón, Palamidessi & Gambs, "Frequency
    estimation of evolving data under local differential privacy", EDBT 2023, §4; ``hharcolezi/LOLOHA``).

    One report supports {u : H(u) = r}: p = p₁p₂ + (1 − p₁)q₂ (L-GRR on [g]), q = 1/g (OLH's random-function
    argument). A value's τ reports reveal L-GRR on [g]'s ε(τ) (the key is independent of v); a user
    who holds k distinct values has at most min(k, g) memos, so when the pattern of her hashed values
    is public (``relation="memo-pattern"``) the horizon charge is at most min(k, g)·:math:`ε_\infty` (LOLOHA's
    reduction by up to k/g against L-GRR's k·:math:`ε_\infty`); between any two sequences the hash's collisions
    reveal that pattern, and :meth:`epsilon_horizon` charges the chain rule over rounds.

    Parameters
    ----------
    epsilon : float
        :math:`ε_\infty` of the memo, > 0.
    d : int
        Domain size, >= 2.
    eps_1 : float, optional
        ε of one report, 0 < eps_1 < epsilon (default ``EPS1_RATIO``·epsilon = epsilon/2).
    g : int
        Hash range, >= 2 (default 2: BiLOLOHA; the paper's optimal g is not derived here).

    Examples
    --------
    >>> from ldpopt.oracles.longitudinal import LOLOHA
    >>> o = LOLOHA(2.0, 16, eps_1=0.5, g=2)
    >>> round(o.epsilon_first(), 12), o.q
    (0.5, 0.5)
    >>> round(o.epsilon_horizon(200, distinct_values=5, relation="memo-pattern"), 9)  # two memos (g = 2)
    4.0
    """

    name = "loloha"
    label = "LOLOHA"
    structural = ("g", "eps_1")

    def __init__(self, epsilon: float, d: int, eps_1: float | None = None, g: int = 2):
        OLH.__init__(self, epsilon, d, g=g)
        self._init_longitudinal(epsilon, d, eps_1)

    def params(self) -> dict:
        return {**OLH.params(self), "eps_1": self.eps_1}

    def _prr(self) -> tuple[float, float]:
        return _grr_pq(self.epsilon, self.g)

    def _solve_irr(self) -> tuple[float, float]:
        return _lgrr_irr(self.p1, self.q1, self.g, self.eps_1)

    @property
    def p(self) -> float:
        return self.p1 * self.p2 + (1.0 - self.p1) * self.q2

    @property
    def q(self) -> float:
        return 1.0 / self.g

    @property
    def _keep(self) -> float:
        return self.p

    @property
    def memo_other(self) -> float:
        return 1.0 / self.g

    @property
    def _move_each(self) -> float:
        return self.q1 * self.p2 + (1.0 - self.q1) * self.q2

    def epsilon_first(self) -> float:
        return float(math.log(self._keep / self._move_each))

    def epsilon_rounds(self, tau: int) -> float:
        tau = _check_tau(tau)
        return float(min(_lgrr_rounds(self.p1, self.q1, self.p2, self.q2, self.g, tau), self.epsilon))

    def _memos(self, distinct_values: int) -> int:
        return min(int(distinct_values), self.g)  # one memo per hashed value (EDBT 2023 §4)

    def rounds_channel(self, tau: int) -> Channel:
        """The exact law of :math:`(H, r_1, …, r_τ)` given v, over every function H: [d] → [g] (:math:`g^d` of them, each
        w.p. :math:`g^{-d}`) — tiny d and g only.

        See ``LongitudinalOracle.rounds_channel``.

        Returns
        -------
        Channel
            Rows :math:`(H, r_1, …, r_τ)`, H major, r₁ most significant; columns the values.

        Raises
        ------
        ValueError
            If :math:`g^d·g^τ` exceeds 65,536.

        Examples
        --------
        >>> from ldpopt.oracles import LOLOHA
        >>> o = LOLOHA(1.0, 3, eps_1=0.5, g=2)
        >>> ch = o.rounds_channel(2)
        >>> ch.matrix.shape, abs(ch.epsilon - o.epsilon_rounds(2)) < 1e-9
        ((32, 3), True)
        """
        tau = _check_tau(tau)
        g, d = self.g, self.d
        if g ** d * g ** tau > 1 << 16:
            raise ValueError(f"g^d·g^tau = {g ** d * g ** tau} joint outputs, too many to enumerate (max 65536)")
        funcs = np.stack(np.unravel_index(np.arange(g ** d), (g,) * d), axis=1)  # (g^d, d): H(v)
        P1 = np.full((g, g), self.q1)
        np.fill_diagonal(P1, self.p1)
        P2 = np.full((g, g), self.q2)
        np.fill_diagonal(P2, self.p2)
        law = _tau_fold(P2, tau) @ P1  # (g^τ, g): reports given the hashed value
        M = law[:, funcs].transpose(1, 0, 2).reshape(-1, d) / g ** d  # rows (H, r⃗), columns v
        return Channel(M, name=f"{self.label}x{tau}")

    def _hash_functions(self) -> np.ndarray:
        """Every H: [d] → [g], (g^d, d) (enumeration only: the user's hash modelled as a random function)."""
        if self.g ** self.d > 1 << 12:
            raise ValueError(f"g^d = {self.g}^{self.d} hash functions, too many to enumerate (max 4096)")
        return np.stack(np.unravel_index(np.arange(self.g ** self.d), (self.g,) * self.d), axis=1)

    def _memo_law(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        funcs = self._hash_functions()
        P1 = np.full((self.g, self.g), self.q1)
        np.fill_diagonal(P1, self.p1)
        P2 = np.full((self.g, self.g), self.q2)
        np.fill_diagonal(P2, self.p2)
        law = _tau_fold(P2, n) @ P1  # (g^n, g): n reports given the hashed value
        return np.full(len(funcs), 1.0 / len(funcs)), law[:, funcs].transpose(1, 0, 2)

    def _memo_keys(self) -> np.ndarray:
        return self._hash_functions()  # the memo is keyed by the hashed value

    def _irr_epsilon(self) -> float:
        return float(math.log(self.p2 / self.q2))

    def perturb(self, values, rng) -> np.ndarray:
        """One round of fresh users: key, memo of the hashed value, one IRR (real path), rows (key, r).

        Parameters
        ----------
        values : array_like of int, shape (m,)
            The users' true values in [0, d).
        rng : int, numpy.random.Generator or "secure"
            Draws the users' secrets (their hash keys) and the round's randomness.

        Returns
        -------
        ndarray of int64, shape (m, 2)
            Rows (hash key, reported hash value in [0, g)).

        Examples
        --------
        >>> from ldpopt.oracles import LOLOHA
        >>> o = LOLOHA(2.0, 16, g=4)
        >>> r = o.perturb([0, 5, 15], rng=0)
        >>> r.shape, bool(((r[:, 1] >= 0) & (r[:, 1] < 4)).all())
        ((3, 2), True)
        """
        return LongitudinalClients(self, check_values(values, self.d).shape[0], rng).report(values, rng)

    def _sample_rounds(self, tc: np.ndarray, tau: int, gen: np.random.Generator) -> np.ndarray:
        raise ValueError("LOLOHA's counts over rounds share each user's hash: no fast path over rounds here; "
                         "use clients(...).report for the rounds")

    def _memo(self, secret: np.ndarray, v: np.ndarray, public: np.ndarray):
        key = public.astype(np.int64)  # the reported key: public, so nothing private is derived from it
        h = self.hash(key, v)
        u = memo_uniforms(secret, h, 2)  # the memo is keyed by the hashed value, seeded by the secret
        other = np.floor(u[:, 1] * (self.g - 1)).astype(np.int64)
        other += other >= h
        return key, np.where(u[:, 0] < self.p1, h, other)

    def _irr(self, memo, gen: np.random.Generator) -> np.ndarray:
        key, m = memo
        keep = gen.random(m.shape[0]) < self.p2
        other = gen.integers(0, self.g - 1, size=m.shape[0])
        other += other >= m
        return np.stack((key, np.where(keep, m, other)), axis=1)


class DBitFlipPM(FrequencyOracle):
    r"""dBitFlipPM (Ding, Kulkarni & Yekhanin, "Collecting telemetry data privately", NeurIPS 2017, §3):
    each user samples ``bits`` distinct indices S of [d] once (permanent), and for her value v reports
    bit :math:`u ∈ S` as 1 w.p. :math:`e^{ε/2}/(e^{ε/2} + 1)` if u = v, else :math:`1/(e^{ε/2} + 1)`; the bits are memoised per
    value (permanent memoisation: a user who keeps her value sends the same report every round). Here
    the buckets are the d values themselves (Ding's b = d).

    A report (an int8 row of d entries: −1 not sampled, else the bit) supports the sampled indices with
    bit 1, so one round is a pure oracle with :math:`p = (\mathtt{bits}/d)·e^{ε/2}/(e^{ε/2} + 1)`, :math:`q = (\mathtt{bits}/d)/(e^{ε/2} + 1)`
    and f̃ = (c/n − q)/(p − q) (unbiased, Eq. 2 variance). Ding's own estimator divides by the observed
    number of users who sampled v instead of its mean n·bits/d (:meth:`ding_estimate`; also unbiased).
    ε of one report, and of any number of reports of one value: ε when bits ≥ 2 (two differing bits of
    ε/2), ε/2 when bits = 1 (exact by enumeration, ``output_distribution``).

    Parameters
    ----------
    epsilon : float
        ε, > 0.
    d : int
        Domain size, 2 ≤ d ≤ 4096.
    bits : int
        Indices sampled per user, 1 ≤ bits ≤ d (default 1: Ding's 1BitFlip).

    Examples
    --------
    >>> from ldpopt.oracles.longitudinal import DBitFlipPM
    >>> o = DBitFlipPM(2.0, 4, bits=2)
    >>> round(o.p, 4), round(o.q, 4)
    (0.3655, 0.1345)
    """

    name = "dbitflippm"
    label = "dBitFlipPM"
    longitudinal = True
    structural: ClassVar[tuple[str, ...]] = ("bits",)

    def __init__(self, epsilon: float, d: int, bits: int = 1):
        super().__init__(epsilon, d)
        if self.d > 4096:
            raise ValueError(f"d must be <= 4096 for dBitFlipPM's (m, d) reports, got {d}")
        if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not 1 <= bits <= self.d:
            raise ValueError(f"bits must be an integer in [1, d = {self.d}], got {bits!r}")
        self.bits = int(bits)
        self._pe = 1.0 / (1.0 + math.exp(-self.epsilon / 2))

    def params(self) -> dict:
        return {"bits": self.bits}

    @property
    def p(self) -> float:
        return self.bits / self.d * self._pe

    @property
    def q(self) -> float:
        return self.bits / self.d * (1.0 - self._pe)

    def epsilon_rounds(self, tau: int) -> float:
        """ε of τ reports of one value: the report is the same every round, so one report's ε (ε when
        bits ≥ 2, ε/2 when bits = 1).

        Parameters
        ----------
        tau : int
            Rounds reported, >= 1.

        Returns
        -------
        float

        Examples
        --------
        >>> from ldpopt.oracles import DBitFlipPM
        >>> DBitFlipPM(2.0, 4, bits=2).epsilon_rounds(10), DBitFlipPM(2.0, 4, bits=1).epsilon_rounds(10)
        (2.0, 1.0)
        """
        _check_tau(tau)
        return float(self.epsilon if self.bits >= 2 else self.epsilon / 2)

    def epsilon_horizon(self, tau: int, distinct_values: int = 1, relation: str = "any") -> HorizonEpsilon:
        """The whole-horizon ε of a user who reports τ rounds and holds at most ``distinct_values`` distinct
        values, under ``relation`` (:meth:`LongitudinalOracle.epsilon_horizon`, :mod:`ldpopt.oracles.horizon`).

        The bits are memoised per value and reported as they are, so a change of value shows whenever
        the new bits differ: between any two sequences (``"any"``) with more than one value the ε is
        infinite (a constant user never sends two different reports). With the pattern public
        (``"memo-pattern"``) each memo is one report: at most ``distinct_values``·ε (ε/2 for one bit).

        Parameters
        ----------
        tau : int
            Rounds reported, >= 1.
        distinct_values : int
            The most distinct values the user holds, 1 ≤ it ≤ min(τ, d).
        relation : {"any", "memo-pattern"}

        Returns
        -------
        HorizonEpsilon

        Examples
        --------
        >>> from ldpopt.oracles import DBitFlipPM
        >>> o = DBitFlipPM(2.0, 4, bits=2)
        >>> o.epsilon_horizon(5), o.epsilon_horizon(5, 2), o.epsilon_horizon(5, 2, relation="memo-pattern")
        (HorizonEpsilon(2.0, relation='any'), HorizonEpsilon(inf, relation='any'), HorizonEpsilon(4.0, relation='memo-pattern'))
        """
        return _epsilon_horizon(self, tau, distinct_values, relation)

    def _memos(self, distinct_values: int) -> int:
        return int(distinct_values)

    def _irr_epsilon(self) -> float:
        return math.inf  # no instantaneous response: the report is the memo

    def _subsets(self) -> np.ndarray:
        from itertools import combinations

        return np.array(list(combinations(range(self.d), self.bits)))

    def _memo_law(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        C = len(self._subsets())
        Y = 2 ** self.bits
        one = self.output_distribution().reshape(self.d, C, Y).transpose(1, 2, 0) * C  # (C, Y, d) given S
        law = np.zeros((C, Y ** n, self.d))
        law[:, np.arange(Y) * sum(Y ** i for i in range(n))] = one  # the same report every round
        return np.full(C, 1.0 / C), law

    def _memo_keys(self) -> np.ndarray:
        return np.arange(self.d)[None, :]

    def clients(self, n: int, rng) -> LongitudinalClients:
        """``n`` users with a permanent state each (sampled indices and memoised bits).

        Parameters
        ----------
        n : int
            Number of users, >= 1.
        rng : int, numpy.random.Generator or "secure"
            Draws the users' secrets.

        Returns
        -------
        LongitudinalClients

        Examples
        --------
        >>> from ldpopt.oracles import DBitFlipPM
        >>> users = DBitFlipPM(2.0, 4, bits=2).clients(3, rng=0)
        >>> a, b = users.report([0, 1, 2], rng=1), users.report([0, 1, 2], rng=2)
        >>> bool((a == b).all())  # permanent memoisation: the same report every round
        True
        """
        return LongitudinalClients(self, n, rng)

    def _memo(self, secret: np.ndarray, v: np.ndarray, public: np.ndarray) -> np.ndarray:
        m = secret.shape[0]
        # the sampled indices show in the report (the -1 entries): drawn from the public seed
        order = np.argsort(memo_uniforms(public, np.zeros(m, dtype=np.int64), self.d), axis=1)[:, :self.bits]
        sampled = np.zeros((m, self.d), dtype=bool)
        np.put_along_axis(sampled, order, True, axis=1)
        u = memo_uniforms(secret, v + 1, self.d)  # the bits, memoised per value
        own = np.arange(self.d)[None, :] == v[:, None]
        bit = u < np.where(own, self._pe, 1.0 - self._pe)
        return np.where(sampled, bit.astype(np.int8), np.int8(-1))

    def _irr(self, memo: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        return memo  # permanent memoisation: the memo is the report

    def perturb(self, values, rng) -> np.ndarray:
        return LongitudinalClients(self, check_values(values, self.d).shape[0], rng).report(values, rng)

    def _check_reports(self, reports) -> np.ndarray:
        r = np.asarray(reports)
        if r.ndim != 2 or r.shape[1] != self.d or r.shape[0] < 1 or not np.all((r >= -1) & (r <= 1)):
            raise ValueError(f"reports must be an (m >= 1, d = {self.d}) array of -1/0/1 (as perturb returns)")
        return r

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``report: fixed_size_binary(d)``: the report row, entry + 1 per byte (0 not sampled, 1 or 2 the bit).

        See ``FrequencyOracle.report_columns``.

        Examples
        --------
        >>> from ldpopt.oracles import DBitFlipPM
        >>> DBitFlipPM(2.0, 4).report_columns()
        (ReportColumn(name='report', kind='bytes', size=4, bits=0),)
        """
        return (ReportColumn("report", "bytes", self.d),)

    def reports_to_columns(self, reports) -> list[np.ndarray]:
        return [(self._check_reports(reports) + 1).astype(np.uint8)]

    def reports_from_columns(self, columns) -> np.ndarray:
        return columns[0].astype(np.int8) - 1

    def aggregate(self, reports, device=None) -> np.ndarray:
        """:math:`c_v` = number of reports that sampled v with bit 1, counted with numpy (dBitFlipPM has no
        kernel: ``kernel_devices`` is empty).

        Parameters
        ----------
        reports : array_like, shape (m, d)
            What :meth:`perturb` returned: −1 not sampled, else the bit.
        device : {None, "auto", "numpy"}, default None
            Who counts: numpy, whatever the choice; "cpu" or "cuda" is refused (no kernel).

        Returns
        -------
        ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            If the reports are not an (m, d) array of −1/0/1, or ``device`` asks for a kernel.

        Examples
        --------
        >>> from ldpopt.oracles import DBitFlipPM
        >>> DBitFlipPM(2.0, 4, bits=2).aggregate([[1, 0, -1, -1], [-1, 1, 1, -1]])
        array([1, 1, 1, 0])
        """
        if device not in (None, "auto", "numpy"):
            raise ValueError(f"device must be None, 'auto' or 'numpy' for dBitFlipPM (it has no 'cpu' or "
                             f"'cuda' kernel and counts with numpy), got {device!r}")
        return (self._check_reports(reports) == 1).sum(axis=0).astype(np.int64)

    def support_matrix(self, reports) -> np.ndarray:
        return self._check_reports(reports) == 1

    def ding_estimate(self, reports) -> np.ndarray:
        r"""Ding et al.'s estimate (§3): :math:`(d/(n·\mathtt{bits})) \sum_{i : v ∈ S_i} (b_{iv}(e^{ε/2} + 1) − 1)/(e^{ε/2} − 1)`.

        Parameters
        ----------
        reports : array_like, shape (n, d)
            What :meth:`perturb` returned.

        Returns
        -------
        ndarray of float, shape (d,)
            The estimated frequencies (unbiased, not projected).

        Examples
        --------
        >>> import math
        >>> from ldpopt.oracles import DBitFlipPM
        >>> est = DBitFlipPM(2.0, 4, bits=2).ding_estimate([[1, 0, -1, -1], [-1, 1, 1, -1]])
        >>> e = math.e  # e^{ε/2}; v = 0: one report sampled it, with bit 1
        >>> bool(abs(est[0] - 4 / (2 * 2) * (e + 1 - 1) / (e - 1)) < 1e-12), float(est[3])
        (True, 0.0)
        """
        r = self._check_reports(reports)
        e = math.exp(self.epsilon / 2)
        c, s = (r == 1).sum(axis=0), (r >= 0).sum(axis=0)
        return self.d / (r.shape[0] * self.bits) * (c * (e + 1) - s) / (e - 1)

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """Exact in law through the real path (vectorised over users, O(n·d)): the sampled indices are
        without replacement, so the counts of different values are dependent.

        See ``FrequencyOracle.sample_counts``.

        Returns
        -------
        ndarray of int64, shape (d,)

        Examples
        --------
        >>> from ldpopt.oracles import DBitFlipPM
        >>> c = DBitFlipPM(2.0, 4, bits=2).sample_counts([50, 30, 15, 5], rng=0)
        >>> c.shape, bool(c.sum() <= 2 * 100)  # each user reports at most ``bits`` ones
        ((4,), True)
        """
        tc = self._check_true_counts(true_counts)
        return self.aggregate(self.perturb(np.repeat(np.arange(self.d), tc), rng))

    def output_distribution(self) -> np.ndarray:
        r"""Exact Pr[(S, bits on S) | v], shape :math:`(d, C(d, \mathtt{bits})·2^\mathtt{bits})`, outputs in :meth:`output_supports`'s order.

        Returns
        -------
        ndarray, shape :math:`(d, C(d, \mathtt{bits})·2^\mathtt{bits})`

        Raises
        ------
        ValueError
            If there are more than 65,536 outputs.

        Examples
        --------
        >>> from ldpopt.oracles import DBitFlipPM
        >>> P = DBitFlipPM(2.0, 4, bits=2).output_distribution()
        >>> P.shape, P.sum(axis=1).round(12)  # C(4, 2)·2² outputs
        ((4, 24), array([1., 1., 1., 1.]))
        """
        from itertools import combinations

        if math.comb(self.d, self.bits) * 2 ** self.bits > 1 << 16:
            raise ValueError("too many outputs to enumerate (max 65536)")
        subsets = np.array(list(combinations(range(self.d), self.bits)))  # (C, bits)
        patt = ((np.arange(2 ** self.bits)[:, None] >> np.arange(self.bits)) & 1).astype(bool)  # (2^b, bits)
        own = subsets[:, None, :, None] == np.arange(self.d)[None, None, None, :]  # (C, 1, bits, d)
        pu = np.where(own, self._pe, 1.0 - self._pe)
        prob = np.where(patt[None, :, :, None], pu, 1.0 - pu).prod(axis=2) / len(subsets)  # (C, 2^b, d)
        return prob.reshape(-1, self.d).T

    def output_supports(self) -> np.ndarray:
        from itertools import combinations

        subsets = np.array(list(combinations(range(self.d), self.bits)))
        patt = ((np.arange(2 ** self.bits)[:, None] >> np.arange(self.bits)) & 1).astype(bool)
        S = np.zeros((len(subsets), 2 ** self.bits, self.d), dtype=bool)
        for j in range(self.bits):  # bits positions (≤ a few), vectorised over subsets and patterns
            S[np.arange(len(subsets))[:, None], np.arange(2 ** self.bits)[None, :], subsets[:, j][:, None]] = patt[:, j][None, :]
        return S.reshape(-1, self.d).T


class LRAPPOR(LongitudinalOracle, RAPPOR):
    r"""RAPPOR's memoised path with a Bloom filter of h hashes (Erlingsson, Pihur & Korolova, CCS 2014 §3):
    the user's cohort is fixed at enrolment, her permanent response B' (each bit of her value's filter
    flipped to a fair coin w.p. f) is memoised per value, and every round she sends an instantaneous
    response of B' (bit 1 w.p. inst_q if B'_t = 1, inst_p if 0). Each round is one-shot
    :class:`~ldpopt.oracles.rappor.RAPPOR` in law, so it is aggregated and decoded as RAPPOR is (its
    support counts, or the §4 regression on its sketch, :mod:`ldpopt.sketches`).

    Each bit is L-SUE's bit at (:math:`ε_\infty/h`, ε₁/h): PRR (p₁, q₁) = (1 − f/2, f/2), IRR (p₂, q₂) = (inst_q, inst_p).
    *Choice* (the paper fixes p, q instead): the IRR is symmetric, inst_p = 1 − inst_q, solved so that the
    paper's one-report :math:`ε_1 = h \ln(q^*(1 − p^*)/(p^*(1 − q^*)))` equals ``eps_1``; :math:`ε_\infty = 2h \ln((1 − f/2)/(f/2))` =
    ``epsilon``. :meth:`epsilon_rounds` is the paper's bound over τ reports, h·(up + down) of one bit
    (exact when a cohort holds two disjoint filters of h bits each); :meth:`exact_epsilon_rounds` is exact
    for the family held (checked against :meth:`rounds_channel`'s enumeration).

    Parameters
    ----------
    epsilon : float
        :math:`ε_\infty` of the memo, > 0.
    d : int
        Domain size, >= 2.
    eps_1 : float, optional
        The paper's ε₁ of one report, 0 < eps_1 < epsilon (default epsilon/2).
    num_bits, num_hashes, cohorts, hash_seed, positions
        As :class:`~ldpopt.oracles.rappor.RAPPOR`'s (defaults 128 bits, h = 2, 8 cohorts).

    Examples
    --------
    >>> from ldpopt.oracles.longitudinal import LRAPPOR
    >>> o = LRAPPOR(4.0, 8, eps_1=1.0, num_bits=16, num_hashes=2, cohorts=2)
    >>> round(o.epsilon_inf, 12), round(o.epsilon_one, 12), round(o.epsilon_rounds(1), 12)
    (4.0, 1.0, 1.0)
    >>> o.exact_epsilon_rounds(5) <= o.epsilon_rounds(5) < 4.0
    True
    """

    name = "l-rappor"
    label = "L-RAPPOR"
    pure = False
    structural: ClassVar[tuple[str, ...]] = ("num_bits", "num_hashes", "cohorts", "hash_seed", "eps_1")

    def __init__(self, epsilon: float, d: int, eps_1: float | None = None, num_bits: int = 128,
                 num_hashes: int | None = None, cohorts: int | None = None, hash_seed: int = 0, positions=None):
        epsilon, eps_1 = _check_eps_pair(epsilon, eps_1)
        h = np.shape(positions)[1] if num_hashes is None and positions is not None and np.ndim(positions) == 3 \
            else (2 if num_hashes is None else num_hashes)
        h = _check_int(h, "num_hashes", 1)
        bit = LSUE(epsilon / h, 2, eps_1=eps_1 / h)  # one bit of the filter: L-SUE's bit at (ε∞/h, ε₁/h)
        RAPPOR.__init__(self, epsilon, d, num_bits=num_bits, num_hashes=h, cohorts=cohorts, inst_p=bit.q2,
                        inst_q=bit.p2, hash_seed=hash_seed, positions=positions)
        self._bit = bit
        self._init_longitudinal(epsilon, d, eps_1)

    def params(self) -> dict:
        return {"num_bits": self.num_bits, "num_hashes": self.num_hashes, "cohorts": self.cohorts,
                "hash_seed": self.hash_seed, "eps_1": self.eps_1}

    @classmethod
    def from_f(cls, f: float, d: int, num_hashes: int | None = None, **params) -> Self:
        """Build from the permanent-response probability f (RAPPOR.from_f; ``eps_1`` in ``params``), the
        memo's (p₁, q₁) = (1 − f/2, f/2) from f itself.

        Parameters
        ----------
        f : float
            RAPPOR's permanent-response probability, 0 < f < 1.
        d : int
            Domain size, >= 2.
        num_hashes : int, optional
            h (default: from ``positions`` if given, else 2).
        **params
            ``eps_1`` and the other constructor arguments.

        Returns
        -------
        LRAPPOR

        Examples
        --------
        >>> from ldpopt.oracles import LRAPPOR
        >>> o = LRAPPOR.from_f(0.5, 8, eps_1=1.0, num_bits=16, num_hashes=2, cohorts=2)
        >>> o.p1, o.q1
        (0.75, 0.25)
        """
        out = super().from_f(f, d, num_hashes=num_hashes, **params)
        out.p1, out.q1 = out._prr()
        return out

    def _prr(self) -> tuple[float, float]:
        return 1.0 - self.f / 2, self.f / 2

    def _solve_irr(self) -> tuple[float, float]:
        return self.inst_q, self.inst_p

    # one round is RAPPOR's report: its (p, q), not the composed unary ones
    p = RAPPOR.p
    q = RAPPOR.q

    def memo_support_variance(self, nv: np.ndarray, n: int) -> np.ndarray:
        """The sum over users of Var[her memo's support of v] (the mean of B' over v's h positions, mixed over
        the cohorts: :meth:`RAPPOR._moments` with the memo's bit probabilities).

        See ``LongitudinalOracle.memo_support_variance``.

        Parameters
        ----------
        nv : ndarray, shape (d,)
            Users per value (may be fractional: a plug-in).
        n : int
            Users; unused here (``nv`` already counts them), kept for the base's signature.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles import LRAPPOR
        >>> o = LRAPPOR(4.0, 8, eps_1=1.0, num_bits=16, num_hashes=2, cohorts=2)
        >>> v = o.memo_support_variance(np.array([5.0, 3, 2, 0, 0, 0, 0, 0]), 10)
        >>> v.shape, bool((v > 0).all())
        ((8,), True)
        """
        return self._moments(np.asarray(nv, dtype=np.float64), ps=self.q1, qs=self.p1)[1]

    def epsilon_first(self) -> float:
        return float(self.epsilon_one)

    def epsilon_rounds(self, tau: int) -> float:
        r"""The paper's bound on ε of a user's τ reports of one constant value: h·(up + down) of one memoised
        bit (exact when a cohort holds two disjoint filters; :meth:`exact_epsilon_rounds` for the family held).

        See ``LongitudinalOracle.epsilon_rounds``.

        Returns
        -------
        float
            At most ``epsilon`` (:math:`ε_\infty`); ``eps_1`` at τ = 1.

        Examples
        --------
        >>> from ldpopt.oracles import LRAPPOR
        >>> o = LRAPPOR(4.0, 8, eps_1=1.0, num_bits=16, num_hashes=2, cohorts=2)
        >>> round(o.epsilon_rounds(1), 12), o.exact_epsilon_rounds(5) <= o.epsilon_rounds(5) < 4.0
        (1.0, True)
        """
        up, down = _bit_up_down(self.p1, self.q1, self.p2, self.q2, _check_tau(tau))
        return float(min(self.num_hashes * (up + down), self.epsilon))  # the min absorbs rounding at large τ

    def exact_epsilon_rounds(self, tau: int) -> float:
        r"""ε of τ reports of one value for the family held: max over cohorts and value pairs of
        :math:`|B_v \setminus B_{v'}|·\mathrm{up}(τ) + |B_{v'} \setminus B_v|·\mathrm{down}(τ)` (the bits are independent given cohort and value).

        Parameters
        ----------
        tau : int
            Rounds reported, >= 1.

        Returns
        -------
        float

        Examples
        --------
        >>> from ldpopt.oracles import LRAPPOR
        >>> o = LRAPPOR(4.0, 4, eps_1=1.0, num_bits=4, num_hashes=2, cohorts=2)
        >>> abs(o.exact_epsilon_rounds(2) - o.rounds_channel(2).epsilon) < 1e-9
        True
        """
        return self._pair_epsilon(*_bit_up_down(self.p1, self.q1, self.p2, self.q2, _check_tau(tau)))

    def rounds_channel(self, tau: int) -> Channel:
        r"""The exact law of :math:`(\text{cohort}, S_1, …, S_τ)` given v, rows cohort-major then bit 0's τ reports most
        significant (tiny T and τ only).

        See ``LongitudinalOracle.rounds_channel``.

        Returns
        -------
        Channel

        Raises
        ------
        ValueError
            If :math:`\mathtt{cohorts}·2^{τ·\mathtt{num\_bits}}` exceeds :math:`2^{20}`.

        Examples
        --------
        >>> from ldpopt.oracles import LRAPPOR
        >>> o = LRAPPOR(4.0, 4, eps_1=1.0, num_bits=4, num_hashes=2, cohorts=2)
        >>> o.rounds_channel(2).matrix.shape  # 2 cohorts · 2^(2·4) outputs
        (512, 4)
        """
        tau = _check_tau(tau)
        if self.cohorts * 2 ** (tau * self.num_bits) > 1 << 20:
            raise ValueError(f"cohorts·2^(tau·num_bits) = {self.cohorts}·2^{tau * self.num_bits} joint outputs, "
                             f"too many to enumerate (max 2^20)")
        R = _tau_fold(self.instantaneous.blocks[0], tau) @ self.permanent.blocks[0]  # (2^τ, 2): given B_t
        B = self.bloom().astype(np.int64)  # (C, T, d)
        laws = []
        for c in range(self.cohorts):  # cohorts and bits: enumeration only
            M = np.ones((1, self.d))
            for t in range(self.num_bits):
                M = (M[:, None, :] * R[:, B[c, t]][None, :, :]).reshape(-1, self.d)
            laws.append(M / self.cohorts)
        return Channel(np.concatenate(laws), name=f"{self.label}x{tau}")

    def _memo_law(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        r = np.where(self.bloom(), self.p1, self.q1)  # (C, T, d): the memo's bit probabilities per cohort
        return np.full(self.cohorts, 1.0 / self.cohorts), _bitwise_memo_law(r, self.p2, self.q2, n)

    def _irr_epsilon(self) -> float:
        return float(self.num_bits * max(math.log(self.p2 / self.q2), math.log((1 - self.q2) / (1 - self.p2))))

    def _sample_rounds(self, tc: np.ndarray, tau: int, gen: np.random.Generator) -> np.ndarray:
        # users split over cohorts; A[c, t] = users of cohort c whose filter has bit t; the memo's set bits
        # M[c, t] = Bin(A, p₁) + Bin(N_c − A, q₁) (bits independent given cohort and value); each round
        # Y[c, t] = Bin(M, p₂) + Bin(N_c − M, q₂) given the memos (RAPPOR.sample_sketch's decomposition, twice)
        C = self.cohorts
        nvc = gen.multinomial(tc, np.full(C, 1.0 / C))  # (d, C)
        A = np.einsum("ctv,vc->ct", self.bloom().astype(np.int64), nvc)
        N = nvc.sum(axis=0).astype(np.int64)[:, None]
        M = gen.binomial(A, self.p1) + gen.binomial(N - A, self.q1)
        Y = gen.binomial(M, self.p2, size=(tau, *M.shape)) + gen.binomial(N - M, self.q2, size=(tau, *M.shape))
        return Y[:, np.arange(C)[:, None, None], self.positions].sum(axis=(1, 2)) / self.num_hashes

    def _memo(self, secret: np.ndarray, v: np.ndarray, public: np.ndarray):
        cohort = (_splitmix64(public ^ np.uint64(0xC0407)) % np.uint64(self.cohorts)).astype(np.int64)  # reported
        u = memo_uniforms(secret, v, self.num_bits)
        return cohort, u < np.where(self.bloom()[cohort, :, v], self.p1, self.q1)

    def _irr(self, memo, gen: np.random.Generator):
        return RAPPOR.report(self, memo, gen)

    def perturb(self, values, rng):
        """One round of fresh users: cohort, memo, one instantaneous response (real path), rows (cohort, bits).

        Parameters
        ----------
        values : array_like of int, shape (m,)
            The users' true values in [0, d).
        rng : int, numpy.random.Generator or "secure"
            Draws the users' secrets (their cohorts and memos) and the round's randomness.

        Returns
        -------
        tuple of ndarray
            The cohorts, int64 (m,), and the reported bits, bool (m, num_bits).

        Examples
        --------
        >>> from ldpopt.oracles import LRAPPOR
        >>> o = LRAPPOR(4.0, 8, num_bits=16, cohorts=2)
        >>> cohort, bits = o.perturb([0, 1, 7], rng=0)
        >>> cohort.shape, bits.shape
        ((3,), (3, 16))
        """
        return LongitudinalClients(self, check_values(values, self.d).shape[0], rng).report(values, rng)


_BY_NAME = {c.name: c for c in (LGRR, LSUE, LSOUE, LOUE, LOSUE, LOLOHA, LRAPPOR)}


def longitudinal_oracle(name: str, epsilon: float, d: int, eps_1: float | None = None, **params) -> LongitudinalOracle:
    r"""The longitudinal oracle ``name`` ("l-grr", "l-sue", "l-soue", "l-oue", "l-osue", "loloha", "l-rappor";
    ``params``: LOLOHA's ``g``, L-RAPPOR's filter), ``eps_1`` defaulting to :math:`ε_\infty`/2.

    Examples
    --------
    >>> from ldpopt.oracles.longitudinal import longitudinal_oracle
    >>> longitudinal_oracle("l-osue", 2.0, 8, eps_1=0.5).label
    'L-OSUE'
    """
    cls = _BY_NAME.get(name)
    if cls is None:
        raise ValueError(f"name must be one of {sorted(_BY_NAME)}, got {name!r}")
    return cls(epsilon, d, eps_1=eps_1, **params)


class LongitudinalClients:
    """``n`` users of a longitudinal oracle, each with a permanent state (a 64-bit secret): her memo of
    value v is a deterministic function of (secret, v), so a user who reports the same value in many
    rounds re-randomises the same memo (RAPPOR §3), and one who changes value gets a new memo.

    What the reports show of the state (LOLOHA's hash key, L-RAPPOR's cohort, dBitFlipPM's sampled
    buckets) comes from a second, independent 64-bit draw, ``public``: the secret is never reported
    and nothing reported is a function of it, so a reader of the reports cannot recompute a memo.

    Parameters
    ----------
    oracle : LongitudinalOracle
    n : int
        Number of users, >= 1.
    rng : int, numpy.random.Generator or "secure"
        Draws the secrets.
    """

    def __init__(self, oracle: LongitudinalOracle | DBitFlipPM, n: int, rng):
        if not isinstance(oracle, (LongitudinalOracle, DBitFlipPM)):
            raise TypeError(f"oracle must be a longitudinal oracle, got {type(oracle).__name__}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be an integer >= 1, got {n!r}")
        self.oracle = oracle
        self.n = int(n)
        gen = as_generator(rng)
        self.secret = gen.integers(0, np.iinfo(np.int64).max, size=self.n, dtype=np.int64).astype(np.uint64)
        #: the seed of what the reports show (hash keys, cohorts, sampled buckets): independent of ``secret``
        self.public = gen.integers(0, np.iinfo(np.int64).max, size=self.n, dtype=np.int64).astype(np.uint64)

    def memo(self, values) -> np.ndarray:
        """The users' permanent responses for ``values`` (one value per user, length n)."""
        v = check_values(values, self.oracle.d)
        if v.shape[0] != self.n:
            raise ValueError(f"values must hold one value per user (n = {self.n}), got {v.shape[0]}")
        return self.oracle._memo(self.secret, v, self.public)

    def report(self, values, rng):
        """One round: every user's IRR of her memo of her current value (vectorised over users)."""
        return self.oracle._irr(self.memo(values), as_generator(rng))

    def rounds(self, values, rng) -> np.ndarray:
        """τ rounds: ``values`` of shape (τ, n) (a constant value: the same row repeated); returns the
        per-round support counts, int64 (τ, d)."""
        V = np.asarray(values)
        if V.ndim != 2 or V.shape[1] != self.n:
            raise ValueError(f"values must have shape (tau, n = {self.n}), got {V.shape}")
        gen = as_generator(rng)
        return np.stack([self.oracle.aggregate(self.report(row, gen)) for row in V])  # a loop over rounds
