"""The shuffle model: the central (ε, δ) of n users' ε₀-LDP reports after a trusted shuffler
permutes them, by two accountants of Feldman, McMillan & Talwar (FOCS 2021, "Hiding among the
clones"): their closed form (Theorem 3.1) and their numerical bound (the hockey-stick divergence of
the two-point reduction of Theorem 3.2, computed exactly here, with a search over ε).

Both are upper bounds valid for *any* ε₀-LDP randomiser (GRR, OUE, OLH, ...): they use nothing of
the randomiser but ε₀. The neighbouring relation is ``replace`` (one user's value changed), as in the
paper. Shuffling is post-processing of the reports, so ε₀ itself always holds: a bound above ε₀ is
clamped to ε₀ and the result says so.

Notes: docs/notes/privacy.md, section ``ldpopt.privacy.shuffle``.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from .._validation import check_epsilon, check_n

__all__ = ["METHODS", "REFERENCE", "ShuffleBound", "closed_form_applies", "hockey_stick", "shuffled"]

#: the paper both accountants come from
REFERENCE = ("Feldman, McMillan & Talwar, Hiding among the clones: a simple and nearly optimal analysis "
             "of privacy amplification by shuffling, FOCS 2021 (arXiv:2012.12803)")

#: method name → (accountant name written into a privacy statement, the bound's name)
METHODS: dict[str, tuple[str, str]] = {
    "numerical": ("fmt-numerical", "FMT 2021 numerical bound (Thm 3.2 reduction, exact hockey-stick sum)"),
    "closed-form": ("fmt-closed", "FMT 2021 closed form (Thm 3.1)"),
}

# above this ε₀, e^{ε₀} overflows a double; n·e^{−ε₀} clones is then below 1e-280: ε₀ is returned
_EPS0_MAX = 700.0

# clone counts summed one by one up to this many; past it, blocks (an upper bound: D_c falls with c)
_EXACT_CLONES = 1 << 16
_EXACT_CLONES_MAX = 1 << 20
_BLOCKS = 1 << 12
_BLOCK_WIDTH = 1e-6

# the search over ε stops at a bracket this narrow relative to ε (absolute below ε = 1e-3)
_XTOL = 1e-7


@dataclass(frozen=True)
class ShuffleBound:
    """The central (ε, δ) of n shuffled ε₀-LDP reports, with how it was obtained (what
    :func:`shuffled` returns; its fields are its constructor's parameters).

    Parameters
    ----------
    epsilon : float
        Central ε (≤ ``epsilon0``).
    delta : float
        Central δ.
    epsilon0 : float
        Local ε₀ of each report.
    n : int
        Number of users (reports shuffled together).
    method : str
        ``"numerical"`` or ``"closed-form"``.
    accountant : str
        ``"fmt-numerical"`` or ``"fmt-closed"`` (what ``meta["privacy"]["accountant"]`` records).
    name : str
        The bound's name, for display.
    reference : str
        The paper.
    clamped : bool
        True when the bound gave no amplification (above ε₀, or the closed form's condition
        ε₀ ≤ log(n / (16 log(4/δ))) fails) and ε = ε₀ is returned instead.

    Examples
    --------
    >>> from ldpopt.privacy.shuffle import shuffled
    >>> b = shuffled(2.0, 10**5, 1e-6)
    >>> round(b.epsilon, 4), b.accountant, b.clamped
    (0.045, 'fmt-numerical', False)
    """

    epsilon: float
    delta: float
    epsilon0: float
    n: int
    method: str
    accountant: str
    name: str
    reference: str
    clamped: bool

    def as_privacy(self) -> dict:
        """The ``meta["privacy"]`` dict of a shuffled estimate (plain JSON values).

        Returns
        -------
        dict
            ``{"model": "shuffled", "relation": "replace", "epsilon0", "n", "epsilon", "delta",
            "accountant", "clamped"}``.

        Examples
        --------
        >>> from ldpopt.privacy.shuffle import shuffled
        >>> shuffled(1.0, 10**6, 1e-6).as_privacy()["accountant"]
        'fmt-numerical'
        """
        return {"model": "shuffled", "relation": "replace", "epsilon0": self.epsilon0, "n": self.n,
                "epsilon": self.epsilon, "delta": self.delta, "accountant": self.accountant,
                "clamped": self.clamped}

    def __str__(self) -> str:
        clamp = " (no amplification: ε = ε₀)" if self.clamped else ""
        return (f"shuffled among n = {self.n}: central (ε = {self.epsilon:.4g}, δ = {self.delta:.3g}) "
                f"from ε₀ = {self.epsilon0:.4g} per report (replace) [{self.name}]{clamp}")


def _check_delta(delta) -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise TypeError(f"delta must be a real number, got {type(delta).__name__}")
    value = float(delta)
    if not (0.0 < value < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    return value


def closed_form_applies(epsilon0: float, n: int, delta: float) -> bool:
    """Whether FMT 2021 Theorem 3.1's condition holds, in its stricter written form
    ε₀ ≤ log(n / (16 log(4/δ))) (the authors' code's; the arXiv text has log(2/δ)).

    Parameters
    ----------
    epsilon0 : float
        Local ε₀ > 0.
    n : int
        Number of users, >= 1.
    delta : float
        Central δ in (0, 1).

    Returns
    -------
    bool

    References
    ----------
    Feldman, McMillan & Talwar, FOCS 2021, Theorem 3.1 (its hypothesis).

    Examples
    --------
    >>> from ldpopt.privacy.shuffle import closed_form_applies
    >>> closed_form_applies(1.0, 10**4, 1e-6), closed_form_applies(4.0, 10**4, 1e-6)
    (True, False)
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    n = check_n(n, "n")
    delta = _check_delta(delta)
    return epsilon0 <= math.log(n / (16.0 * math.log(4.0 / delta)))


def _closed_form(epsilon0: float, n: int, delta: float) -> float:
    # Theorem 3.1 in the authors' own published form (github.com/apple/ml-shuffling-amplification,
    # closedformanalysis): with a = 8 √(e^ε₀ log(4/δ)) / √n, c = 8 e^ε₀ / n and ε′ = log(1 + a + c),
    # ε ≤ log(1 + (1 − e^{−ε₀}) / (1 + e^{−ε₀−ε′}) · (a + c)). The arXiv text's factor (e^ε₀ − 1)/(e^ε₀ + 1)
    # is smaller; the larger one holds whichever of the two the theorem proves, so it is the one stated.
    e0 = math.exp(epsilon0)
    a = 8.0 * math.sqrt(e0 * math.log(4.0 / delta)) / math.sqrt(n)
    c = 8.0 * e0 / n
    eps_prime = math.log1p(a + c)
    return math.log1p(-math.expm1(-epsilon0) / (1.0 + math.exp(-epsilon0 - eps_prime)) * (a + c))


def hockey_stick(epsilon: float, epsilon0: float, n: int, tail: float = 1e-12) -> float:
    r"""δ(ε) of FMT 2021's two-point reduction, an upper bound on the shuffled mechanism's δ at ε.

    Theorem 3.2 reduces n shuffled ε₀-LDP reports to the pair P = (A + Δ, C − A + 1 − Δ),
    Q = (A + 1 − Δ, C − A + Δ), with :math:`C \sim \mathrm{Bin}(n − 1, e^{−ε_0})` (the clones), A ~ Bin(C, 1/2) and
    :math:`Δ \sim \mathrm{Bern}(e^{ε_0}/(e^{ε_0} + 1))`. C is seen (the two coordinates sum to C + 1), so
    :math:`δ(ε) = \sum_c P(C = c) · D_c(ε)`, :math:`D_c` the hockey-stick divergence of the first coordinates given c.
    Their likelihood ratio falls with k, so :math:`D_c` is the mass below one cut-off k*:
    :math:`D_c = (α - e^ε (1 - α)) b_c(k^*) - (e^ε - 1) B_c(k^* - 1)`, with :math:`b_c, B_c` the pmf and cdf of
    Bin(c, 1/2), :math:`α = e^{ε_0}/(e^{ε_0} + 1)` and :math:`k^* = ⌊(c + 1)/(1 + x^*)⌋`, :math:`x^* = (e^{ε+ε_0} − 1)/(e^{ε_0} − e^ε)`.
    The pair is symmetric (k ↦ c + 1 − k swaps P and Q), so :math:`D(P \Vert Q) = D(Q \Vert P)`.

    Computed exactly for every c in C's central range (vectorised with scipy.stats.binom) when it
    holds at most 2¹⁶ counts (or 2²⁰ where blocks would be coarse); a wider range (n ≳ 10⁸) is cut
    into 64 to 2¹² blocks, each at most 10⁻⁶·c wide and charged the :math:`D_c` of its smallest c (:math:`D_c` falls with c: one more clone is post-processing), so the time does not
    grow with n. The mass of C outside the range (at most 2·``tail``) is added whole (:math:`D_c ≤ 1`): the
    result stays an upper bound. Computed in ratios to :math:`e^{ε_0}`: no overflow at any ε₀ ≤ 700.

    Parameters
    ----------
    epsilon : float
        Central ε >= 0.
    epsilon0 : float
        Local ε₀ > 0.
    n : int
        Number of users, >= 1.
    tail : float, default 1e-12
        Mass of C left out at each end (added to δ).

    Returns
    -------
    float
        δ(ε), 0 at ε >= ε₀.

    References
    ----------
    Feldman, McMillan & Talwar, FOCS 2021, Theorem 3.2 and Appendix E (their numerical method,
    which brackets the same sum over c in steps; here every c is summed exactly).

    Examples
    --------
    >>> from ldpopt.privacy.shuffle import hockey_stick
    >>> 0 < hockey_stick(0.1, 1.0, 10**4) < hockey_stick(0.05, 1.0, 10**4) < 1
    True
    """
    if epsilon >= epsilon0:
        return 0.0
    p_clone = math.exp(-epsilon0)
    cs, weight, outside = _clone_law(epsilon0, n, tail)
    # in ratios to e^{ε₀}, so nothing overflows at any ε < ε₀ <= 700
    alpha = 1.0 / (1.0 + p_clone)
    a1 = -math.expm1(epsilon - epsilon0) * alpha  # = (e^ε₀ − e^ε)/(e^ε₀ + 1) > 0
    x_star = (math.exp(epsilon) - p_clone) / -math.expm1(epsilon - epsilon0)  # (e^{ε+ε₀} − 1)/(e^ε₀ − e^ε)
    kstar = np.floor((cs + 1.0) / (1.0 + x_star))
    d_c = a1 * stats.binom.pmf(kstar, cs, 0.5) - math.expm1(epsilon) * stats.binom.cdf(kstar - 1, cs, 0.5)
    d_c = np.clip(d_c, 0.0, 1.0)
    return float(np.dot(weight, d_c)) + outside


@functools.lru_cache(maxsize=64)
def _clone_law(epsilon0: float, n: int, tail: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The clone counts summed over, their probabilities (per block past :data:`_EXACT_CLONES`: the
    block's first count carries the block's mass) and the mass left out (added whole to δ)."""
    p_clone = math.exp(-epsilon0)
    lam = (n - 1) * p_clone
    if n <= 1 or lam < tail:  # C = 0 but with probability at most E[C] = λ (Markov), added whole
        return np.zeros(1), np.ones(1), float(lam)
    lo = int(stats.binom.ppf(tail, n - 1, p_clone))
    hi = int(stats.binom.isf(tail, n - 1, p_clone))
    lo, hi = max(lo, 0), min(hi + 1, n - 1)
    width = hi + 1 - lo
    needed = math.ceil(width / (_BLOCK_WIDTH * max(lo, 1)))  # blocks at most _BLOCK_WIDTH·c wide
    if width <= _EXACT_CLONES or (needed > _BLOCKS and width <= _EXACT_CLONES_MAX):
        cs = np.arange(lo, hi + 1, dtype=np.float64)
        weight = stats.binom.pmf(cs, n - 1, p_clone)
    else:
        # D_c falls with c (c + 1 clones are c clones and one more Bern(½) added to both coordinates:
        # post-processing), so each block of clone counts is charged the D of its smallest c: an upper
        # bound. Blocks at most _BLOCK_WIDTH·c wide (D_c ∝ c^{-1/2} moves by half that across one),
        # 64 to _BLOCKS of them: fewer as n grows, where each cdf of Bin(c, ½) costs most
        edges = np.unique(np.linspace(lo, hi + 1, int(min(_BLOCKS, max(64, needed))) + 1).round())
        cs = edges[:-1]
        weight = np.diff(stats.binom.cdf(edges - 1, n - 1, p_clone))
    outside = float(stats.binom.cdf(lo - 1, n - 1, p_clone) + stats.binom.sf(hi, n - 1, p_clone))
    cs.flags.writeable = False
    weight.flags.writeable = False
    return cs, weight, outside


def _numerical(epsilon0: float, n: int, delta: float) -> float:
    tail = min(delta * 1e-4, 1e-12)
    hi = epsilon0
    if closed_form_applies(epsilon0, n, delta):
        hi = min(hi, _closed_form(epsilon0, n, delta))
        if hockey_stick(hi, epsilon0, n, tail) > delta:  # the closed form is an upper bound: never here
            hi = epsilon0
    # the bracket's lower end: 1e-3·hi first (Bin(c, 1/2)'s cdf at its centre, where ε = 0 puts the
    # cut-off, is scipy's slowest case: seconds at n = 1e8), 0 only when that end already satisfies δ
    lo = 1e-3 * hi
    if hockey_stick(lo, epsilon0, n, tail) <= delta:
        if hockey_stick(0.0, epsilon0, n, tail) <= delta:
            return 0.0
        hi, lo = lo, 0.0
    if hockey_stick(hi, epsilon0, n, tail) >= delta:  # δ(hi) = δ exactly: hi is the answer
        return hi
    # Brent's method on δ(ε)/δ − 1 (decreasing, continuous), then the upper end of its bracket,
    # checked: the value returned always satisfies δ(ε) <= δ
    root = optimize.brentq(lambda e: hockey_stick(e, epsilon0, n, tail) / delta - 1.0, lo, hi,
                           xtol=_XTOL * max(hi, 1e-3), rtol=_XTOL, maxiter=200)
    eps = min(root + 2 * _XTOL * max(root, 1e-3), hi)
    while hockey_stick(eps, epsilon0, n, tail) > delta:  # never seen; kept so the bound stays valid
        eps = min(eps + _XTOL * max(hi, 1e-3) * 16, hi)
    return eps


def shuffled(epsilon0, n, delta, method: str = "numerical") -> ShuffleBound:
    r"""The central (ε, δ) of n users each running an ε₀-LDP randomiser, their reports shuffled.

    Parameters
    ----------
    epsilon0 : float
        Local ε₀ of each report, > 0.
    n : int
        Number of users whose reports are shuffled together, >= 1.
    delta : float
        Central δ, in (0, 1).
    method : {"numerical", "closed-form"}, default "numerical"
        ``"closed-form"``: FMT 2021 Theorem 3.1,
        :math:`ε = \log(1 + (e^{ε_0} - 1)/(e^{ε_0} + 1) \cdot (8 \sqrt{e^{ε_0} \log(4/δ)} / \sqrt{n} + 8 e^{ε_0}/n))`,
        valid for :math:`ε_0 ≤ \log(n / (16 \log(4/δ)))`; outside that regime ε = ε₀ is returned (clamped).
        ``"numerical"``: the smallest ε whose reduction δ(ε) (:func:`hockey_stick`) is ≤ δ, found
        by Brent's method to 1e-7 relative and rounded up (the ε returned is checked to satisfy it); valid for any ε₀
        and never looser than the closed form.

    Returns
    -------
    ShuffleBound
        ε ≤ ε₀ always (shuffling is post-processing of ε₀-LDP reports): a bound above ε₀ is
        clamped, with ``clamped = True``.

    Raises
    ------
    ValueError
        ``epsilon0`` not > 0, ``n`` not an integer >= 1, ``delta`` not in (0, 1), or an unknown
        ``method`` (the message names the argument).
    TypeError
        ``epsilon0`` or ``delta`` not a real number.

    References
    ----------
    Feldman, McMillan & Talwar, *Hiding among the clones*, FOCS 2021 (arXiv:2012.12803):
    Theorem 3.1 (closed form), Theorem 3.2 and Appendix E (numerical bound). Where the paper's
    numerical method brackets the sum over c in steps of the clone count, every c is summed here,
    so the result lies inside their bracket (the cross-check in benchmarks/bench_shuffle.py).

    Examples
    --------
    >>> from ldpopt.privacy.shuffle import shuffled
    >>> tight, closed = shuffled(4.0, 10**5, 1e-6), shuffled(4.0, 10**5, 1e-6, method="closed-form")
    >>> round(tight.epsilon, 3), round(closed.epsilon, 3)
    (0.17, 0.538)
    >>> print(shuffled(1.0, 10**6, 1e-6))
    shuffled among n = 1000000: central (ε = 0.004335, δ = 1e-06) from ε₀ = 1 per report (replace) [FMT 2021 numerical bound (Thm 3.2 reduction, exact hockey-stick sum)]
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    n = check_n(n, "n")
    delta = _check_delta(delta)
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    accountant, name = METHODS[method]
    if epsilon0 > _EPS0_MAX:  # e^{ε₀} overflows; the expected clones n·e^{−ε₀} < 1e-280: no amplification
        eps = math.inf
    elif method == "closed-form":
        eps = _closed_form(epsilon0, n, delta) if closed_form_applies(epsilon0, n, delta) else math.inf
    else:
        eps = _numerical(epsilon0, n, delta)
    clamped = not eps < epsilon0
    return ShuffleBound(epsilon=float(min(eps, epsilon0)), delta=delta, epsilon0=epsilon0, n=n, method=method,
                        accountant=accountant, name=name, reference=REFERENCE, clamped=clamped)
