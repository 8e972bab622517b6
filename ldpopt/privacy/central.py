"""Central noise on histogram counts: the four mechanisms deployments add to exact counts (Laplace,
discrete Laplace, Gaussian, discrete Gaussian), each with its exact per-count variance, its law, a
sampler, and the central (ε, δ) it gives a histogram under a named neighbouring relation.

One record per mechanism (:class:`Mechanism`), found by name in :data:`MECHANISMS` (:func:`get`);
every feature (``Estimate.from_central``, the planner, the privacy statement) asks the record, never
tests the name.

Notes: docs/notes/privacy.md, section ``ldpopt.privacy.central``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._validation import as_generator, check_delta
from ..noise import AdditiveNoise, register_resolver
from . import DEFAULT_DELTA

__all__ = ["EXACT_MAX_SCALE", "MECHANISMS", "RELATIONS", "CentralNoise", "Mechanism", "exact_scale", "get", "sensitivity"]

#: The neighbouring relations of a histogram of one value per user, with the L1 and L2 sensitivity of
#: the count vector: ``add-remove`` (one user's report added or removed: one count moves by 1) and
#: ``replace`` (one user's value changed: two counts move by 1 each).
RELATIONS: dict[str, tuple[float, float]] = {"add-remove": (1.0, 1.0), "replace": (2.0, math.sqrt(2.0))}


def sensitivity(relation: str, contributions: int = 1) -> tuple[float, float]:
    r"""The (L1, L2) sensitivity of a count vector under ``relation`` (:data:`RELATIONS`) when each
    user's record is counted in ``contributions`` cells (a hierarchy's noisy levels: once per level),
    each moved by 1: :math:`(c Δ_1, \sqrt{c} Δ_2)`.

    Parameters
    ----------
    relation : str
        ``"add-remove"`` or ``"replace"``.
    contributions : int, default 1
        Cells one record is counted in (>= 1): 1 for a histogram of one value per user.

    Returns
    -------
    tuple of float
        (Δ₁, Δ₂).

    Raises
    ------
    ValueError
        If ``relation`` is not one of :data:`RELATIONS`.

    Examples
    --------
    >>> from ldpopt.privacy.central import sensitivity
    >>> sensitivity("replace")
    (2.0, 1.4142135623730951)
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {sorted(RELATIONS)}, got {relation!r}")
    c = check_contributions(contributions)
    l1, l2 = RELATIONS[relation]
    return (l1, l2) if c == 1 else (c * l1, math.sqrt(c) * l2)


def check_contributions(contributions, name: str = "contributions") -> int:
    """``contributions`` as an int after checking it is an integer >= 1 (one-line error naming it)."""
    if isinstance(contributions, bool) or not isinstance(contributions, numbers.Integral) or contributions < 1:
        raise ValueError(f"{name} must be an integer >= 1 (cells one user's record is counted in), "
                         f"got {contributions!r}")
    return int(contributions)


def check_scale(scale, name: str = "scale") -> float:
    """``scale`` as a float after checking it is a finite real number > 0 (one-line error naming it)."""
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(scale).__name__}")
    value = float(scale)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {scale!r}")
    return value


# -- the discrete laws: exact sums over a support wide enough that the rest is below 1e-300 --------

def _dlap_ratio(b: float) -> float:
    return math.exp(-1.0 / b)


def _dgauss_support(sigma: float) -> np.ndarray:
    # exp(-k²/(2σ²)) < 1e-320 for |k| > 38.6σ; the +2 keeps σ < 1 wide enough
    half = math.ceil(38.6 * sigma) + 2
    return np.arange(-half, half + 1, dtype=np.float64)


def _dgauss_weights(sigma: float) -> tuple[np.ndarray, np.ndarray]:
    k = _dgauss_support(sigma)
    w = np.exp(-(k * k) / (2.0 * sigma * sigma))
    return k, w / math.fsum(w)


def _dgauss_variance(sigma: float) -> float:
    if sigma > 1e5:   # the support would hold > 8e6 points; Σ k² N(k) equals σ² to far below 1 ulp there
        return sigma * sigma
    k, p = _dgauss_weights(sigma)
    return math.fsum(p * k * k)


def _dlap_variance(b: float) -> float:
    r = _dlap_ratio(b)
    return 2.0 * r / (1.0 - r) ** 2


def _dlap_logpmf(k: np.ndarray, b: float) -> np.ndarray:
    r = _dlap_ratio(b)
    return np.log1p(-r) - np.log1p(r) - np.abs(k) / b


def _dgauss_logpmf(k: np.ndarray, sigma: float) -> np.ndarray:
    if sigma > 1e5:
        log_norm = 0.5 * math.log(2 * math.pi * sigma * sigma)
    else:
        k0 = _dgauss_support(sigma)
        log_norm = float(np.log(math.fsum(np.exp(-(k0 * k0) / (2.0 * sigma * sigma)))))
    return -(k * k) / (2.0 * sigma * sigma) - log_norm


def _sample_dlap(b: float, size: int, rng: np.random.Generator) -> np.ndarray:
    # the difference of two geometric variables of success probability 1 − e^{−1/b} (Inusah & Kozubowski)
    p = -math.expm1(-1.0 / b)
    return (rng.geometric(p, size) - rng.geometric(p, size)).astype(np.float64)


def _sample_dgauss(sigma: float, size: int, rng: np.random.Generator) -> np.ndarray:
    # Canonne, Kamath & Steinke (NeurIPS 2020), Algorithm 3: a discrete Laplace of scale t = ⌊σ⌋ + 1
    # accepted with probability exp(−(|Y| − σ²/t)² / (2σ²)); expected < 2 rounds, vectorised per round
    t = math.floor(sigma) + 1.0
    out = np.empty(size, dtype=np.float64)
    filled = 0
    while filled < size:
        want = max(16, int(1.25 * (size - filled)) + 16)
        y = _sample_dlap(t, want, rng)
        accept = rng.random(want) < np.exp(-((np.abs(y) - sigma * sigma / t) ** 2) / (2.0 * sigma * sigma))
        got = y[accept][: size - filled]
        out[filled: filled + got.size] = got
        filled += got.size
    return out


# -- exact integer samplers for release (Canonne, Kamath & Steinke, NeurIPS 2020, Algorithms 1–3) ---
# Every probability is a ratio of integers and every draw is a uniform integer: no floating point.
# numpy int64 arrays while every quantity provably stays below 2**62; Python ints (object arrays) for
# the draws whose quantities could exceed it. Loops run over rounds (of a rejection, of a run of
# successes), each over the entries still undecided, never over the counts.

_I64_SAFE = 2**62

#: the largest scale (b or σ) the exact samplers take: past it the noise's numerator leaves int64
EXACT_MAX_SCALE = 2**52


def exact_scale(scale, name: str = "scale") -> Fraction:
    """``scale`` as the exact rational the release samplers use: a ``Fraction`` or an int as given, a
    float as its own exact binary value ``Fraction(x)`` (0.1 is 3602879701896397/2⁵⁵), so the noise's
    law, and the privacy stated for it, are those of that exact value. One-line error if it is not a
    finite real in (0, 2⁵²] or a fraction's numerator reaches 2⁶².

    Parameters
    ----------
    scale : float, int or Fraction
        b or σ, in counts.
    name : str, default "scale"
        The argument's name in the error message.

    Returns
    -------
    Fraction

    Raises
    ------
    ValueError
        If ``scale`` is not finite, not > 0, above 2⁵², or a fraction with a numerator >= 2⁶².

    Examples
    --------
    >>> from ldpopt.privacy.central import exact_scale
    >>> exact_scale(2.5), exact_scale(0.1).denominator == 2**55
    (Fraction(5, 2), True)
    """
    check_scale(scale, name)
    if isinstance(scale, Fraction):
        value = scale
    elif isinstance(scale, numbers.Integral):
        value = Fraction(int(scale))
    else:
        value = Fraction(float(scale))
    if value > EXACT_MAX_SCALE or value.numerator >= _I64_SAFE:
        raise ValueError(f"{name} must be <= 2**52 with a numerator below 2**62 for exact integer noise, got {scale!r}")
    return value


def _fits(*bounds: int) -> bool:
    return all(abs(int(b)) < _I64_SAFE for b in bounds)


def _bernoulli(num: np.ndarray, den: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # Bernoulli(num/den) per entry, 0 <= num <= den: a uniform integer below den compared with num
    # (int64), or (Python ints) a uniform binary fraction compared with num/den's binary expansion,
    # one bit per round, decided at the first bit where they differ (2 rounds expected)
    if num.size == 0:
        return np.zeros(0, dtype=bool)
    if num.dtype != object and den.dtype != object:
        return rng.integers(0, den) < num
    out = np.zeros(num.size, dtype=bool)
    idx = np.arange(num.size)
    r, d = num.astype(object), den.astype(object)
    while idx.size:
        r = r * 2
        bit = (r >= d).astype(bool)
        r = np.where(bit, r - d, r)
        u = rng.integers(0, 2, idx.size).astype(bool)
        decided = u != bit
        out[idx[decided]] = bit[decided]
        keep = ~decided
        idx, r, d = idx[keep], r[keep], d[keep]
    return out


def _bern_exp_unit(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # Algorithm 1, γ = a/b in [0, 1]: draw A_k ~ Bernoulli(γ/k), k = 1, 2, ... until one is 0; accept
    # when that k is odd (P = Σ (−γ)^j/j! = e^{−γ}). k is common to the entries still running.
    out = np.zeros(a.size, dtype=bool)
    idx = np.arange(a.size)
    k = 1
    while idx.size:
        aa, bb = a[idx], b[idx]
        if bb.dtype != object and not _fits(int(bb.max()) * k):
            aa, bb = aa.astype(object), bb.astype(object)
        go = _bernoulli(aa, bb * k, rng)
        out[idx[~go]] = k % 2 == 1
        idx = idx[go]
        k += 1
    return out


def _ones(size: int) -> np.ndarray:
    return np.ones(size, dtype=np.int64)


def _bern_exp(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # Algorithm 1, any γ = a/b >= 0: ⌊γ⌋ Bernoulli(e^{−1}) draws all 1, then Bernoulli(e^{−(γ − ⌊γ⌋)});
    # the run of e^{−1} draws stops at the first 0 (about 1.6 rounds), however large ⌊γ⌋ is
    whole = a // b
    frac = a - whole * b
    alive = np.ones(a.size, dtype=bool)
    idx = np.flatnonzero((whole > 0).astype(bool))
    done = 0
    while idx.size:
        ok = _bern_exp_unit(_ones(idx.size), _ones(idx.size), rng)
        alive[idx[~ok]] = False
        done += 1
        idx = idx[ok]
        idx = idx[(whole[idx] > done).astype(bool)]
    idx = np.flatnonzero(alive)
    alive[idx] = _bern_exp_unit(frac[idx], b[idx], rng)
    return alive


def _e1_run(size: int, rng: np.random.Generator) -> np.ndarray:
    # how many Bernoulli(e^{−1}) draws come out 1 before the first 0: Geometric(1 − e^{−1}) on {0, 1, ...}
    v = np.zeros(size, dtype=np.int64)
    idx = np.arange(size)
    while idx.size:
        ok = _bern_exp_unit(_ones(idx.size), _ones(idx.size), rng)
        idx = idx[ok]
        v[idx] += 1
    return v


def _exact_dlap(scale: Fraction, size: int, rng: np.random.Generator) -> np.ndarray:
    # Algorithm 2, scale t/s (pmf ∝ e^{−|z| s/t}): U uniform on {0..t−1} kept with probability
    # e^{−U/t}; V ~ Geometric(1 − e^{−1}); Y = ⌊(U + tV)/s⌋; a fair sign, −0 rejected
    t, s = scale.numerator, scale.denominator
    out = np.zeros(size, dtype=np.int64)
    left = size
    while left:
        u = rng.integers(0, t, left)
        u = u[_bern_exp_unit(u, np.full(left, t, dtype=np.int64), rng)]
        v = _e1_run(u.size, rng)
        if _fits(t * (int(v.max(initial=0)) + 1), s):
            y = (u + t * v) // s
        else:   # a tiny scale's denominator, or a long run: Python ints
            y = (u.astype(object) + t * v.astype(object)) // s
        neg = rng.integers(0, 2, u.size).astype(bool)
        zero = (y == 0).astype(bool)
        z = np.where(neg, -y, y)[~(neg & zero)][:left]
        out[size - left: size - left + z.size] = z.astype(np.int64)
        left -= z.size
    return out


def _exact_dgauss(sigma: Fraction, size: int, rng: np.random.Generator) -> np.ndarray:
    # Algorithm 3, σ = p/q: Y ~ discrete Laplace of scale t = ⌊σ⌋ + 1, kept with probability
    # exp(−(|Y| − σ²/t)²/(2σ²)) = exp(−(|Y|tq² − p²)² / (2t²q²p²)) (fewer than 2 rounds expected)
    p, q = sigma.numerator, sigma.denominator
    t = p // q + 1
    den = 2 * t * t * q * q * p * p
    out = np.zeros(size, dtype=np.int64)
    left = size
    while left:
        y = _exact_dlap(Fraction(t), left, rng)
        ay = np.abs(y)
        top = int(ay.max(initial=0)) * t * q * q + p * p
        if _fits(top * top, den, t * q * q):
            base = ay * (t * q * q) - p * p
            dens = np.full(left, den, dtype=np.int64)
        else:
            base = ay.astype(object) * (t * q * q) - p * p
            dens = np.full(left, den, dtype=object)
        z = y[_bern_exp(base * base, dens, rng)][:left]
        out[size - left: size - left + z.size] = z
        left -= z.size
    return out


# -- (ε, δ) of each mechanism on a histogram ---------------------------------------------------------

def _gaussian_log_delta(epsilon: float, sigma: float, l2: float) -> float:
    # Balle & Wang (ICML 2018), Theorem 8: δ(ε) = Φ(a − c) − e^ε Φ(−a − c), a = Δ₂/(2σ), c = εσ/Δ₂, in
    # log space (log Φ is exact deep in the tails), so no ε and no σ overflows or is capped
    a = l2 / (2.0 * sigma)
    c = epsilon * sigma / l2
    from scipy import special  # here: an estimate asks this module for its noise source without scipy

    la = float(special.log_ndtr(a - c))
    lb = epsilon + float(special.log_ndtr(-a - c))
    if not lb < la:
        return -math.inf
    return la + math.log(-math.expm1(lb - la))


def _gaussian_delta(epsilon: float, sigma: float, l2: float) -> float:
    return math.exp(_gaussian_log_delta(epsilon, sigma, l2))


#: the largest support of the m-fold self-convolution the discrete Gaussian's exact δ sums over
_DGAUSS_MAX_SUPPORT = 20_000_000


def _dgauss_delta(epsilon: float, sigma: float, l1: float) -> float:
    # the exact hockey-stick divergence Σ_t P(t) (1 − e^{ε − L(t)})₊ of the privacy loss L, Z discrete
    # Gaussian (Canonne, Kamath & Steinke, NeurIPS 2020, Theorem 7 and its proof). m = Δ₁ counts each
    # moved by 1 (add-remove: m = 1; replace: 2; a record counted in c cells: c or 2c): each moved count
    # adds (1 − 2x_i)/(2σ²) at its own x_i ~ Z (a count moved down: −x_i, the same law), so
    # L = (m − 2S)/(2σ²) at S = Σ x_i, whose law is Z's pmf convolved m times with itself (exact sums
    # for m = 1, FFT past 4096 points).
    if sigma > 1e4:
        raise ValueError(f"scale must be <= 1e4 for the discrete Gaussian's exact delta, got {sigma!r}")
    m = round(l1)
    k, p = _dgauss_weights(sigma)
    if m * p.size > _DGAUSS_MAX_SUPPORT:
        raise ValueError(f"scale × contributions too large for the discrete Gaussian's exact delta: a support of "
                         f"{m * p.size} points (at most {_DGAUSS_MAX_SUPPORT})")
    if m > 1:
        base = p
        for _ in range(m - 1):
            if p.size > 4096:
                from scipy import signal

                p = signal.fftconvolve(p, base)
            else:
                p = np.convolve(p, base)
            p = np.clip(p, 0.0, None)
        k = np.arange(p.size, dtype=np.float64) - (p.size - 1) / 2
    loss = (m - 2.0 * k) / (2.0 * sigma * sigma)
    live = loss > epsilon
    if not live.any():
        return 0.0
    return max(0.0, math.fsum(p[live] * -np.expm1(epsilon - loss[live])))


#: the search for ε stops doubling here (a double's range): past it, ε = inf is stated
_EPS_SEARCH_MAX = 1e300


def _epsilon_for_delta(delta_of: Callable[[float], float], delta: float,
                       log_delta_of: Callable[[float], float] | None = None) -> float:
    # the smallest ε with δ(ε) <= δ (δ(ε) decreasing): a doubling bracket with no cap below a double's
    # range, Brent's method on log δ where the mechanism gives it (no underflow at large ε), and the
    # answer moved up until it satisfies δ(ε) <= δ, so it is never below the true ε
    f = log_delta_of if log_delta_of is not None else delta_of
    target = math.log(delta) if log_delta_of is not None else delta
    if f(0.0) <= target:
        return 0.0
    hi = 1.0
    while f(hi) > target:
        hi *= 2.0
        if hi > _EPS_SEARCH_MAX:
            return math.inf
    lo = hi / 2.0 if hi > 1.0 else 0.0
    from scipy import optimize

    root = float(optimize.brentq(lambda e: f(e) - target, lo, hi, xtol=1e-12, rtol=1e-12))
    step = 4e-12 * max(root, 1.0)
    eps = min(root + step, hi)
    while f(eps) > target and eps < hi:
        step *= 2.0
        eps = min(root + step, hi)
    return eps


@dataclass(frozen=True)
class Mechanism:
    r"""One central noise mechanism on integer counts (a record: features ask it, never its name).

    Parameters
    ----------
    name : str
        The name ``Estimate.from_central`` and the CLI's ``--central NAME:SCALE`` take.
    scale_name : str
        What ``scale`` is: ``"b"`` (Laplace's and discrete Laplace's scale, in counts) or ``"sigma"``.
    discrete : bool
        Whether the noise is integer-valued (its law is a pmf: :meth:`logpmf` is exact).
    pure : bool
        Whether it gives pure ε-DP (δ = 0 at every scale).
    reference : str
        The paper the mechanism and its privacy profile come from.
    simulation_only : str
        Empty for a sampler fit to release data (:meth:`release`); else the one-line reason it is for
        simulation only (the continuous ones: floating-point noise, Mironov 2012).
    _exact_sample : callable or None
        The exact integer sampler :meth:`release` draws from (a ``Fraction`` scale, a size, a
        Generator), None for a simulation-only mechanism.
    likelihood : str
        The family of its log density: ``"laplace"`` (linear in |k|) or ``"gaussian"`` (quadratic in k),
        what a likelihood fit of noisy counts minimises (``NoiseSource.likelihood``).
    _sum_tail : callable or None
        ``(t, d, scale)`` → an upper bound on :math:`P(|\sum \text{ of } d \text{ draws}| ≥ t)` (Chernoff, from the log-MGF).

    Examples
    --------
    >>> from ldpopt.privacy import central
    >>> m = central.get("discrete-laplace")
    >>> round(m.variance(2.0), 4), m.epsilon(2.0), m.discrete
    (7.8354, 0.5, True)
    """

    name: str
    scale_name: str
    discrete: bool
    pure: bool
    _variance: Callable[[float], float]
    _logpdf: Callable[[np.ndarray, float], np.ndarray]
    _sample: Callable[[float, int, np.random.Generator], np.ndarray]
    reference: str
    simulation_only: str = ""
    _exact_sample: Callable[[Fraction, int, np.random.Generator], np.ndarray] | None = None
    likelihood: str = ""
    _sum_tail: Callable[[float, int, float], float] | None = None

    def check_delta(self, delta) -> float:
        """The δ this mechanism's ε is stated at: None gives 0 for a pure mechanism and 10⁻⁶
        (:data:`ldpopt.privacy.DEFAULT_DELTA`) for a Gaussian one; a given δ is checked (in [0, 1), > 0 for
        a Gaussian one: its ε at δ = 0 is infinite).

        Parameters
        ----------
        delta : float or None

        Returns
        -------
        float

        Raises
        ------
        ValueError
            δ out of range, or 0 for a Gaussian mechanism.

        Examples
        --------
        >>> from ldpopt.privacy import central
        >>> central.get("laplace").check_delta(None), central.get("gaussian").check_delta(None)
        (0.0, 1e-06)
        """
        if delta is None:
            return 0.0 if self.pure else DEFAULT_DELTA
        value = check_delta(delta)
        if not self.pure and value == 0.0:
            raise ValueError(f"delta must be > 0 for mechanism {self.name!r} (its epsilon at delta = 0 is infinite)")
        return float(value)

    @property
    def release_safe(self) -> bool:
        """Whether :meth:`release` may add this noise to counts that are published (integer noise).

        Examples
        --------
        >>> from ldpopt.privacy import central
        >>> central.get("discrete-gaussian").release_safe, central.get("gaussian").release_safe
        (True, False)
        """
        return not self.simulation_only

    def release(self, counts, scale, rng="secure") -> np.ndarray:
        """Noisy counts fit to publish: integer counts plus this mechanism's integer noise, drawn from a
        cryptographically secure stream by default. Refused for a simulation-only mechanism.

        The noise is sampled exactly (Canonne, Kamath & Steinke, NeurIPS 2020, Algorithms 1–3): every
        probability is a ratio of integers, every draw a uniform integer, so the law is the discrete
        Laplace's or discrete Gaussian's exactly, with no floating-point error. The scale is taken as
        the exact rational :func:`exact_scale` gives (a float's own binary value), and the privacy
        stated for it holds for that value. :meth:`sample` is the fast double-precision sampler for
        simulation, not this one.

        Parameters
        ----------
        counts : array_like of int
            Exact counts (integers).
        scale : float, int or Fraction
            b or σ, in (0, 2⁵²] (:func:`exact_scale`).
        rng : int, Generator or "secure", default "secure"
            The random source (a seed only for tests: a release wants "secure").

        Returns
        -------
        ndarray of int64, the shape of ``counts``

        Raises
        ------
        ValueError
            If the mechanism is simulation-only (its reason), ``counts`` are not integers, or the
            scale is outside (0, 2⁵²].

        Examples
        --------
        >>> from ldpopt.privacy import central
        >>> central.get("discrete-laplace").release([10, 20], 2.0, rng=0).dtype
        dtype('int64')
        """
        if self.simulation_only or self._exact_sample is None:
            raise ValueError(f"mechanism {self.name!r} is for simulation only: {self.simulation_only}")
        c = np.asarray(counts)
        if c.dtype.kind not in "iu" and not (c.dtype.kind == "f" and np.all(np.isfinite(c)) and np.all(c == np.round(c))):
            raise ValueError("counts must be integers")
        exact = exact_scale(scale)
        noise = self._exact_sample(exact, int(c.size), as_generator(rng))
        return c.astype(np.int64) + noise.reshape(c.shape)

    def variance(self, scale) -> float:
        """The exact variance of one noise draw, in counts² (Laplace :math:`2b^2`; discrete Laplace
        :math:`2e^{-1/b}/(1 - e^{-1/b})^2`; Gaussian :math:`σ^2`; discrete Gaussian :math:`Σ k^2 N(k)`, just below :math:`σ^2`).

        Parameters
        ----------
        scale : float
            b or σ, in counts, > 0.

        Returns
        -------
        float

        Examples
        --------
        >>> from ldpopt.privacy import central
        >>> central.get("laplace").variance(3.0)
        18.0
        """
        return float(self._variance(check_scale(scale)))

    def logpdf(self, k, scale) -> np.ndarray:
        """Log density (continuous mechanisms) or log pmf (discrete ones: ``k`` integers) of the noise
        at ``k``: the likelihood of noisy counts given true counts is this at (noisy − true).

        Parameters
        ----------
        k : array_like
            Noise values.
        scale : float
            b or σ, > 0.

        Returns
        -------
        ndarray

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.privacy import central
        >>> round(float(np.exp(central.get("discrete-gaussian").logpdf(np.arange(-40, 41), 3.0)).sum()), 12)
        1.0
        """
        return self._logpdf(np.asarray(k, dtype=np.float64), check_scale(scale))

    def sample(self, size: int, scale, rng=None) -> np.ndarray:
        """``size`` independent noise draws (float64; integers for the discrete mechanisms), for
        simulation: the discrete ones compute their probabilities in double precision (fast, the law
        good to about 2⁻⁵² relative); :meth:`release` is the exact integer sampler for publishing.

        Parameters
        ----------
        size : int
            How many draws (>= 0).
        scale : float
            b or σ, > 0.
        rng : int, Generator or "secure", optional
            The random source (``ldpopt._validation.as_generator``).

        Returns
        -------
        ndarray, shape (size,)

        Examples
        --------
        >>> from ldpopt.privacy import central
        >>> central.get("discrete-laplace").sample(3, 2.0, rng=0).dtype
        dtype('float64')
        """
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0:
            raise ValueError(f"size must be an integer >= 0, got {size!r}")
        return self._sample(check_scale(scale), int(size), as_generator(rng))

    def delta(self, epsilon, scale, relation: str = "add-remove", contributions: int = 1) -> float:
        """The smallest δ for which adding this noise to every count of a histogram is (ε, δ)-DP
        under ``relation``, exact for every mechanism: 0 for the Laplace mechanisms at ε ≥ Δ₁/b (their
        profile below it for one count moved), Balle & Wang's curve for the Gaussian (it depends on Δ₂
        only), the hockey-stick sum of the discrete Gaussian's privacy loss (σ ≤ 10⁴).

        Parameters
        ----------
        epsilon : float
            ε ≥ 0.
        scale : float
            b or σ, > 0.
        relation : str
            ``"add-remove"`` or ``"replace"`` (:data:`RELATIONS`).
        contributions : int, default 1
            Cells one user's record is counted in, each moved by 1 (:func:`sensitivity`).

        Returns
        -------
        float

        Examples
        --------
        >>> from ldpopt.privacy import central
        >>> f"{central.get('gaussian').delta(1.0, 4.0):.3e}"
        '2.924e-06'
        """
        if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not float(epsilon) >= 0:
            raise ValueError(f"epsilon must be a real number >= 0, got {epsilon!r}")
        s = check_scale(scale)
        l1, l2 = sensitivity(relation, contributions)
        eps = float(epsilon)
        if self.pure:
            # the privacy-loss of a Laplace-type mechanism is bounded by Δ₁/b: δ is 0 at ε ≥ Δ₁/b; below
            # it, the exact δ(ε) of the loss distribution
            return _laplace_delta(eps, s, l1, self.discrete)
        if self.discrete:
            return _dgauss_delta(eps, s, l1)
        return _gaussian_delta(eps, s, l2)

    def epsilon(self, scale, delta: float = 0.0, relation: str = "add-remove", contributions: int = 1) -> float:
        """The smallest ε with (ε, δ)-DP for this noise on a histogram under ``relation``: Δ₁/b for the
        Laplace mechanisms at δ = 0 (δ > 0: the inverse of their exact profile for one count moved,
        Δ₁/b for two: that profile is not computed), the inverse of
        :meth:`delta` for the Gaussian ones (``inf`` at δ = 0).

        Parameters
        ----------
        scale : float
            b or σ, > 0.
        delta : float
            δ in [0, 1).
        relation : str
            ``"add-remove"`` or ``"replace"``.
        contributions : int, default 1
            Cells one user's record is counted in, each moved by 1 (:func:`sensitivity`).

        Returns
        -------
        float

        Examples
        --------
        >>> from ldpopt.privacy import central
        >>> round(central.get("gaussian").epsilon(4.0, 1e-6), 4)
        1.0607
        """
        delta = check_delta(delta)
        s = check_scale(scale)
        l1, _ = sensitivity(relation, contributions)
        if self.pure and (delta == 0 or l1 != 1.0):
            return l1 / s   # more than one count moved: the profile below Δ₁/b is not computed, Δ₁/b holds at every δ
        if not self.pure and delta == 0:
            return math.inf
        if not self.pure and not self.discrete:  # the Gaussian: Balle & Wang's curve in log space
            _, l2 = sensitivity(relation, contributions)
            return _epsilon_for_delta(lambda e: self.delta(e, s, relation, contributions), float(delta),
                                      lambda e: _gaussian_log_delta(e, s, l2))
        return _epsilon_for_delta(lambda e: self.delta(e, s, relation, contributions), float(delta))


def _laplace_delta(epsilon: float, b: float, l1: float, discrete: bool) -> float:
    # the privacy loss of (discrete) Laplace noise is at most Δ₁/b: δ = 0 at ε ≥ Δ₁/b. Below it, the
    # exact profile for one count moved by 1 (add-remove): 1 − e^{(ε − 1/b)/2} for Laplace (Balle et al.,
    # "Privacy profiles", NeurIPS 2018, §3) and (1 − e^{ε − 1/b})/(1 + e^{−1/b}) for the discrete Laplace,
    # whose loss takes only the values ±1/b (P(loss = 1/b) = P(x ≤ 0) = 1/(1 + e^{−1/b})). More than one
    # count moved (replace, or a record counted in several cells) below Δ₁/b is not stated here: a
    # ValueError says so.
    if epsilon >= l1 / b:
        return 0.0
    if l1 != 1.0:
        raise ValueError(f"epsilon must be >= {l1 / b!r} (= Δ₁/b, Δ₁ = {l1:g} counts moved) for a Laplace delta, "
                         f"got {epsilon!r}")
    if discrete:
        return float(-math.expm1(epsilon - 1.0 / b) / (1.0 + math.exp(-1.0 / b)))
    return float(-math.expm1((epsilon - 1.0 / b) / 2.0))


def _gauss_sum_tail(t: float, d: int, sigma: float) -> float:
    # Chernoff's optimum for d σ-sub-Gaussian draws (the discrete Gaussian is σ-sub-Gaussian: Canonne,
    # Kamath & Steinke, NeurIPS 2020, Cor. 9): 2 exp(−t²/(2dσ²))
    return float(min(1.0, 2.0 * np.exp(-t * t / (2.0 * d * sigma * sigma))))


def _chernoff(t: float, d: int, lam: np.ndarray, log_mgf: np.ndarray) -> float:
    # 2·min_λ exp(−λt + d·K(λ)) over a grid of λ: any λ gives a valid bound, so the grid's minimum is one
    exponent = -lam * t + d * log_mgf
    best = np.nanmin(exponent) if np.isfinite(exponent).any() else 0.0
    return float(min(1.0, 2.0 * np.exp(min(best, 0.0))))


def _laplace_sum_tail(t: float, d: int, b: float) -> float:
    # Laplace(b)'s log-MGF −log(1 − b²λ²), λ < 1/b
    lam = np.linspace(0.0, 1.0 / b, 4002)[1:-1]
    return _chernoff(t, d, lam, -np.log1p(-(b * lam) ** 2))


def _dlap_sum_tail(t: float, d: int, b: float) -> float:
    # the discrete Laplace's log-MGF, r = e^(−1/b): 2 log(1 − r) − log(1 − r e^λ) − log(1 − r e^−λ), λ < 1/b
    lam = np.linspace(0.0, 1.0 / b, 4002)[1:-1]
    r = np.exp(-1.0 / b)
    with np.errstate(over="ignore", invalid="ignore"):
        log_mgf = 2.0 * np.log1p(-r) - np.log1p(-r * np.exp(lam)) - np.log1p(-r * np.exp(-lam))
    return _chernoff(t, d, lam, log_mgf)


def _laplace_logpdf(k: np.ndarray, b: float) -> np.ndarray:
    return -np.abs(k) / b - math.log(2.0 * b)


def _gauss_logpdf(k: np.ndarray, sigma: float) -> np.ndarray:
    return -(k * k) / (2.0 * sigma * sigma) - 0.5 * math.log(2.0 * math.pi * sigma * sigma)


_FLOAT_NOISE = ("floating-point noise (numpy's {0}): its low bits can reveal the count (Mironov, CCS 2012); "
                "release with {1}")

#: The mechanisms by name.
MECHANISMS: dict[str, Mechanism] = {
    m.name: m for m in (
        Mechanism("laplace", "b", False, True, lambda b: 2.0 * b * b, _laplace_logpdf,
                  lambda b, size, rng: rng.laplace(0.0, b, size),
                  "Dwork, McSherry, Nissim & Smith (TCC 2006)", _FLOAT_NOISE.format("laplace", "discrete-laplace"),
                  likelihood="laplace", _sum_tail=_laplace_sum_tail),
        Mechanism("discrete-laplace", "b", True, True, _dlap_variance, _dlap_logpmf, _sample_dlap,
                  "Ghosh, Roughgarden & Sundararajan (STOC 2009); Canonne, Kamath & Steinke (NeurIPS 2020)",
                  _exact_sample=_exact_dlap, likelihood="laplace",
                  _sum_tail=_dlap_sum_tail),
        Mechanism("gaussian", "sigma", False, False, lambda s: s * s, _gauss_logpdf,
                  lambda s, size, rng: rng.normal(0.0, s, size),
                  "Balle & Wang (ICML 2018), Theorem 8", _FLOAT_NOISE.format("normal", "discrete-gaussian"),
                  likelihood="gaussian", _sum_tail=_gauss_sum_tail),
        Mechanism("discrete-gaussian", "sigma", True, False, _dgauss_variance, _dgauss_logpmf, _sample_dgauss,
                  "Canonne, Kamath & Steinke (NeurIPS 2020)", _exact_sample=_exact_dgauss,
                  likelihood="gaussian", _sum_tail=_gauss_sum_tail),
    )
}


def get(name: str) -> Mechanism:
    """The central mechanism called ``name`` (:data:`MECHANISMS`).

    Parameters
    ----------
    name : str
        ``"laplace"``, ``"discrete-laplace"``, ``"gaussian"`` or ``"discrete-gaussian"``.

    Returns
    -------
    Mechanism

    Raises
    ------
    ValueError
        If no mechanism has that name.

    Examples
    --------
    >>> from ldpopt.privacy import central
    >>> central.get("gaussian").scale_name
    'sigma'
    """
    if not isinstance(name, str) or name not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {sorted(MECHANISMS)}, got {name!r}")
    return MECHANISMS[name]


class CentralNoise(AdditiveNoise):
    """A central mechanism at one scale on a histogram: the noise source of ``Estimate.from_central``
    (:class:`ldpopt.noise.AdditiveNoise`: its law, sampler, exact variance, likelihood family and the
    (ε, δ) it gives under ``relation``).

    Parameters
    ----------
    mechanism : str or Mechanism
        A name of :data:`MECHANISMS` or its record.
    scale : float
        b or σ, in counts, > 0.
    relation : str, default "add-remove"
        The neighbouring relation (:data:`RELATIONS`).
    delta : float, optional
        The δ the ε is stated at. None: 0 for the pure mechanisms, 1e-6 for the Gaussian ones.
    contributions : int, default 1
        Cells one user's record is counted in (:func:`sensitivity`).
    n_known : bool, default True
        Whether n is a known total.

    Raises
    ------
    ValueError
        An argument out of range (the message names it), δ = 0 for a Gaussian one.

    Examples
    --------
    >>> from ldpopt.privacy.central import CentralNoise
    >>> src = CentralNoise("discrete-laplace", 2.0)
    >>> src.name, round(src.noise_variance(), 4), src.privacy_statement()["epsilon"]
    ('central:discrete-laplace', 7.8354, 0.5)
    """

    def __init__(self, mechanism, scale, relation: str = "add-remove", delta=None, contributions: int = 1,
                 n_known: bool = True):
        mech = mechanism if isinstance(mechanism, Mechanism) else get(mechanism)
        self.mechanism = mech
        self.scale = check_scale(scale, "scale")
        self.contributions = check_contributions(contributions)
        sensitivity(relation, self.contributions)
        self.relation = relation
        self.delta = mech.check_delta(delta)
        self.total_known = bool(n_known)
        self.name = f"central:{mech.name}"  # type: ignore[misc]  # an instance's own name
        self.discrete = mech.discrete   # type: ignore[misc]  # per instance: the record says
        self.likelihood = mech.likelihood   # type: ignore[misc]
        self._statement: dict | None = None

    @classmethod
    def from_record(cls, privacy: dict) -> CentralNoise:
        """The source a ``meta["privacy"]`` record of model "central" states.

        Parameters
        ----------
        privacy : dict
            The record (``Estimate.from_central`` writes it).

        Returns
        -------
        CentralNoise

        Examples
        --------
        >>> from ldpopt.privacy.central import CentralNoise
        >>> CentralNoise.from_record({"model": "central", "mechanism": "gaussian", "scale": 3.0,
        ...                           "delta": 1e-6, "relation": "add-remove"}).scale
        3.0
        """
        return cls(privacy["mechanism"], float(privacy["scale"]), privacy.get("relation", "add-remove"),
                   privacy.get("delta"), privacy.get("contributions", 1), privacy.get("n_known", True))

    def noise_variance(self) -> float:
        return self.mechanism.variance(self.scale)

    def noise_logpdf(self, k) -> np.ndarray:
        return self.mechanism.logpdf(k, self.scale)

    def noise_sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return self.mechanism.sample(size, self.scale, rng)

    def sum_tail(self, t: float, d: int) -> float:
        """An upper bound on :math:`P(|Z_1 + … + Z_d| ≥ t)` for d independent draws (Chernoff's, from the
        mechanism's log-MGF; 1 at t ≤ 0).

        See ``AdditiveNoise.sum_tail``.

        Parameters
        ----------
        t : float
            The deviation.
        d : int
            Draws summed.

        Examples
        --------
        >>> from ldpopt.privacy.central import CentralNoise
        >>> round(CentralNoise("gaussian", 2.0).sum_tail(8.0, 4), 6)   # 2 exp(−t²/(2dσ²)) = 2/e²
        0.270671
        """
        if t <= 0:
            return 1.0
        assert self.mechanism._sum_tail is not None
        return self.mechanism._sum_tail(float(t), int(d), self.scale)

    def privacy_statement(self) -> dict:
        if self._statement is not None:
            return dict(self._statement)
        eps = self.mechanism.epsilon(self.scale, delta=self.delta, relation=self.relation,
                                     contributions=self.contributions)
        out = {"model": "central", "relation": self.relation, "mechanism": self.mechanism.name, "scale": self.scale,
               "epsilon": float(eps), "delta": self.delta, "n_known": self.total_known}
        if self.contributions > 1:
            out["contributions"] = self.contributions
        self._statement = out
        return dict(out)

    def estimate_fields(self, counts, n) -> dict:
        """What ``Estimate.from_source`` builds (:class:`~ldpopt.noise.AdditiveNoise`), after refusing a
        scale whose ε is 0 or infinite at this δ.

        Parameters
        ----------
        counts : ndarray, shape (d,)
        n : int or None

        Returns
        -------
        dict

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.privacy.central import CentralNoise
        >>> CentralNoise("laplace", 2.0).estimate_fields(np.array([60.5, 39.5]), None)["n"]
        100
        """
        eps = self.privacy_statement()["epsilon"]
        if not (math.isfinite(eps) and eps > 0):
            raise ValueError(f"scale = {self.scale!r} gives epsilon = {eps!r} at delta = {self.delta!r}: an estimate "
                             f"needs a finite epsilon > 0 (pass a smaller scale or a larger delta)")
        return super().estimate_fields(counts, n)

    def __repr__(self) -> str:
        return f"CentralNoise({self.mechanism.name!r}, {self.scale!r}, relation={self.relation!r}, delta={self.delta!r})"


def _resolve(estimate) -> CentralNoise | None:
    # an estimate whose meta records a central mechanism of this module (Estimate.from_central)
    privacy = estimate.meta.get("privacy")
    if isinstance(privacy, dict) and privacy.get("model") == "central" and privacy.get("mechanism") in MECHANISMS:
        return CentralNoise.from_record(privacy)
    return None


register_resolver(_resolve)
