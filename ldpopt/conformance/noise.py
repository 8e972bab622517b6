"""``check_mechanism``: the properties every source of noisy counts must have (:class:`ldpopt.noise.NoiseSource`).

Notes: docs/extending.md, "A noise source of your own".
"""

from __future__ import annotations

import math

import numpy as np

from ..estimate import Estimate
from ..noise import AdditiveNoise, NoiseSource

__all__ = ["MECHANISM_CHECKS", "check_mechanism"]

#: the checks, in the order run
MECHANISM_CHECKS = ("interface", "covariance", "law", "likelihood", "privacy")


class _Skip(Exception):
    """The check does not apply to this source (the reason)."""


def _fail(source, check: str, msg: str) -> AssertionError:
    return AssertionError(f"noise source {source.name!r} fails {check}: {msg}")


def _z_bound(alpha: float, k: int) -> float:
    from scipy.stats import norm

    return float(norm.isf(alpha / (2 * k)))


def _truth(d: int, n: int) -> np.ndarray:
    w = np.arange(d, 0, -1, dtype=np.float64)
    c = np.floor(n * w / w.sum()).astype(np.int64)
    c[0] += n - int(c.sum())
    return c


def _check_interface(src: NoiseSource, d: int, n: int, reps: int, gen, alpha: float) -> None:
    tc = _truth(d, n)
    C = np.asarray(src.sample_counts_batch(tc, 3, gen))
    if C.shape != (3, d) or not np.all(np.isfinite(C)):
        raise _fail(src, "interface", f"sample_counts_batch gave shape {C.shape} (want (3, {d})), finite values")
    est = Estimate.from_source(C[0], src, n=n)
    if est.noise is not src or est.oracle != src.name:
        raise _fail(src, "interface", "Estimate.from_source does not carry the source and its name")
    for flag in ("support_counts", "additive", "total_known"):
        if not isinstance(getattr(src, flag), bool):
            raise _fail(src, "interface", f"{flag} must be True or False, got {getattr(src, flag)!r}")
    if src.likelihood not in (None, "multinomial", "binomial", "laplace", "gaussian"):
        raise _fail(src, "interface", f"likelihood must be None, 'multinomial', 'binomial', 'laplace' or 'gaussian', "
                                      f"got {src.likelihood!r}")
    if src.variance_decay not in (1, 2):
        raise _fail(src, "interface", f"variance_decay must be 1 or 2, got {src.variance_decay!r}")
    c1, c2 = src.count_covariance(n, d), src.count_covariance(2 * n, d)
    f = tc / n
    ratio = float(np.mean(c1.variance(f)) / np.mean(c2.variance(f)))
    if not math.isclose(ratio, 2.0 ** src.variance_decay, rel_tol=1e-9):
        raise _fail(src, "interface", f"variance_decay = {src.variance_decay} but the variance falls by {ratio:.6g} "
                                      f"from n to 2n")
    if src.additive and (c1.B != 0 or c1.pair is None or c1.pair[1] != 0 or c1.kappa * c1.A != 0):
        raise _fail(src, "interface", "additive noise must have one variance in every cell, independent of the truth")


def _check_covariance(src: NoiseSource, d: int, n: int, reps: int, gen, alpha: float) -> None:
    # the stated mean (unbiased: f) and covariance of f̃ against the sampler's, entry by entry (z-scores of
    # the sample mean and of each covariance entry, Bonferroni at alpha)
    tc = _truth(d, n)
    f = tc / n
    est = Estimate.from_source(np.asarray(src.sample_counts_batch(tc, 1, gen))[0], src, n=n)
    C = np.asarray(src.sample_counts_batch(tc, reps, gen), dtype=np.float64)
    F = (C / n - est.q) / (est.p - est.q)
    cov = src.count_covariance(n, d)
    want = cov.matrix(f)
    sd = np.sqrt(np.diag(want))
    zm = np.abs(F.mean(axis=0) - f) / (sd / math.sqrt(reps))
    xc = F - f
    j, k = np.triu_indices(d) if cov.pair is not None or cov.moments is not None else (np.arange(d), np.arange(d))
    prod = xc[:, j] * xc[:, k]
    se = prod.std(axis=0, ddof=1) / math.sqrt(reps)
    zc = np.abs(prod.mean(axis=0) - want[j, k]) / np.where(se > 0, se, np.inf)
    bound = _z_bound(alpha, zm.size + zc.size)
    if np.max(zm) > bound:
        v = int(np.argmax(zm))
        raise _fail(src, "covariance", f"f̃ is biased at value {v}: mean {F[:, v].mean():.6g}, truth {f[v]:.6g} "
                                       f"(z = {zm[v]:.1f} > {bound:.1f})")
    if np.max(zc) > bound:
        i = int(np.argmax(zc))
        raise _fail(src, "covariance", f"Cov(f̃_{j[i]}, f̃_{k[i]}) stated {want[j[i], k[i]]:.6g}, sampled "
                                       f"{prod[:, i].mean():.6g} (z = {zc[i]:.1f} > {bound:.1f})")


def _noise_support(src: AdditiveNoise) -> np.ndarray:
    # the integers holding all but ~1e-17 of a discrete noise's mass (by its stated variance, Chebyshev
    # far out, then trimmed by the pmf itself)
    half = math.ceil(20 * math.sqrt(src.noise_variance()) + 50)
    return np.arange(-half, half + 1, dtype=np.float64)


def _check_law(src: NoiseSource, d: int, n: int, reps: int, gen, alpha: float) -> None:
    # the sampler against the stated density: a chi-square test on the discrete support (cells of
    # expected count >= 5, the tails pooled), a Kolmogorov–Smirnov test against the integrated density
    from scipy import integrate, stats

    if not isinstance(src, AdditiveNoise):
        raise _Skip("the law of support counts is check_oracle's (enumerated output distribution)")
    m = 50 * reps
    z = np.asarray(src.noise_sample(m, gen), dtype=np.float64)
    if src.discrete:
        if not np.array_equal(z, np.round(z)):
            raise _fail(src, "law", "a discrete source drew a non-integer")
        k = _noise_support(src)
        pmf = np.exp(src.noise_logpdf(k))
        expect = m * pmf
        keep = expect >= 5
        lo, hi = k[keep][0], k[keep][-1]
        inside = (z >= lo) & (z <= hi)
        hist = np.bincount((z[inside] - lo).astype(np.int64), minlength=int(hi - lo) + 1)
        obs = np.append(hist[(k[keep] - lo).astype(np.int64)], np.sum(~inside)).astype(np.float64)
        exp = np.append(expect[keep], max(m - expect[keep].sum(), 1e-300))
        stat = float(np.sum((obs - exp) ** 2 / exp))
        pval = float(stats.chi2.sf(stat, obs.size - 1))
        if pval < alpha:
            raise _fail(src, "law", f"the sampler's draws do not follow the stated pmf (chi-square p = {pval:.2g})")
        return
    sd = math.sqrt(src.noise_variance())

    def cdf(x: float) -> float:
        val, _ = integrate.quad(lambda t: math.exp(float(src.noise_logpdf(np.array([t]))[0])), -40 * sd, x,
                                limit=200, points=[0.0] if -40 * sd < 0.0 < x else None)
        return val

    qs = np.quantile(z, np.linspace(0.01, 0.99, 41))
    emp = np.linspace(0.01, 0.99, 41)
    gap = max(abs(cdf(float(x)) - e) for x, e in zip(qs, emp))
    bound = 1.36 * 1.5 / math.sqrt(m) + 2.0 / m   # KS at ≈ alpha 0.01 widened for the quantile grid
    if gap > max(bound, 5e-3):
        raise _fail(src, "law", f"the sampler's quantiles leave the stated density's CDF by {gap:.3g}")


def _check_likelihood(src: NoiseSource, d: int, n: int, reps: int, gen, alpha: float) -> None:
    # the stated law is normalised, and log_likelihood of counts is the sum of the noise's log density
    from scipy import integrate

    if not isinstance(src, AdditiveNoise):
        try:
            src.log_likelihood(_truth(d, n), _truth(d, n))
        except ValueError as exc:
            raise _Skip(str(exc)) from None
        raise _Skip("the normalisation of a support-count likelihood is check_oracle's")
    if src.discrete:
        k = _noise_support(src)
        total = math.fsum(np.exp(src.noise_logpdf(k)))
    else:
        sd = math.sqrt(src.noise_variance())
        total, _ = integrate.quad(lambda t: math.exp(float(src.noise_logpdf(np.array([t]))[0])), -60 * sd, 60 * sd,
                                  limit=400, points=[0.0])
    if not abs(total - 1.0) <= 1e-6:
        raise _fail(src, "likelihood", f"the noise's density sums to {total:.9g}, not 1")
    tc = _truth(d, n)
    c = np.asarray(src.sample_counts_batch(tc, 1, gen))[0]
    want = math.fsum(src.noise_logpdf(c - tc))
    got = src.log_likelihood(c, tc)
    if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9):
        raise _fail(src, "likelihood", f"log_likelihood {got!r} is not the sum of the noise's log density {want!r}")


def _check_privacy(src: NoiseSource, d: int, n: int, reps: int, gen, alpha: float) -> None:
    # the statement reads, and for discrete noise on counts (one count moved by 1: add-remove, one cell)
    # the stated (ε, δ) holds against the exact pmf: δ ≥ Σ_k max(0, P(k) − e^ε P(k − 1)), both directions
    from ..privacy.statement import PrivacyStatement

    record = src.privacy_statement()
    try:
        st = PrivacyStatement.from_dict(record)
    except ValueError as exc:
        raise _fail(src, "privacy", f"the statement does not read: {exc}") from None
    if not isinstance(src, AdditiveNoise) or not src.discrete:
        raise _Skip("the exact ratio is checked for discrete noise added to counts")
    if st.relation != "add-remove" or record.get("contributions", 1) != 1:
        raise _Skip("the exact ratio is checked for one count moved by 1 (add-remove, one cell)")
    k = _noise_support(src)
    p = np.exp(src.noise_logpdf(k))
    shifted = np.concatenate([[0.0], p[:-1]])   # P(k − 1)
    eps = st.epsilon
    delta = max(math.fsum(np.maximum(p - math.exp(eps) * shifted, 0.0)),
                math.fsum(np.maximum(shifted - math.exp(eps) * p, 0.0)))
    if delta > st.delta * (1 + 1e-9) + 1e-15:
        raise _fail(src, "privacy", f"stated (ε = {eps:.6g}, δ = {st.delta:.3g}) but the exact pmf needs "
                                    f"δ = {delta:.3g} at that ε")


_CHECKS = {"interface": _check_interface, "covariance": _check_covariance, "law": _check_law,
           "likelihood": _check_likelihood, "privacy": _check_privacy}


def check_mechanism(source, checks=None, *, d: int = 4, n: int = 1000, reps: int = 4000, alpha: float = 1e-4,
                    seed: int = 0) -> dict[str, str]:
    """Check a source of noisy counts against the noise protocol: its members answer (``interface``:
    shapes, flags, the estimate it makes, its variance's decay in n), its stated covariance against its
    sampler's (``covariance``: mean and every covariance entry of f̃, z-tests), its sampler against its
    stated law (``law``: chi-square on the support, or the CDF), its likelihood (``likelihood``:
    normalised, the sum of the noise's log density) and its privacy statement (``privacy``: readable;
    for discrete noise the exact (ε, δ) of one count moved, from the pmf).

    Parameters
    ----------
    source : NoiseSource
        A frequency oracle, a central mechanism at its scale, or one of your own
        (:class:`ldpopt.noise.AdditiveNoise` subclass: docs/extending.md).
    checks : iterable of str, optional
        Names from :data:`MECHANISM_CHECKS` (default: all).
    d, n : int
        The histogram the draws are made from (d values, n users).
    reps : int
        Draws for the statistical checks (>= 200).
    alpha : float
        False-alarm rate of each statistical check, in (0, 0.5).
    seed : int
        Seed of the draws: a given source passes or fails deterministically.

    Returns
    -------
    dict of str to str
        Each check's name → "passed" or why it was skipped.

    Raises
    ------
    AssertionError
        Naming the source and the property that fails.
    TypeError
        ``source`` is not a NoiseSource.
    ValueError
        A check name unknown, or an argument out of range.

    Examples
    --------
    >>> from ldpopt.privacy.central import CentralNoise
    >>> from ldpopt.testing import check_mechanism
    >>> check_mechanism(CentralNoise("discrete-laplace", 2.0), reps=400)["privacy"]
    'passed'
    """
    if not isinstance(source, NoiseSource):
        raise TypeError(f"source must be a NoiseSource (ldpopt.noise), got {type(source).__name__}")
    names = list(MECHANISM_CHECKS) if checks is None else list(checks)
    for c in names:
        if c not in _CHECKS:
            raise ValueError(f"checks must be among {list(MECHANISM_CHECKS)}, got {c!r}")
    for name, value, low in (("d", d, 2), ("n", n, 1), ("reps", reps, 200)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if not 0.0 < float(alpha) < 0.5:
        raise ValueError(f"alpha must lie in (0, 0.5), got {alpha!r}")
    out: dict[str, str] = {}
    for i, c in enumerate(names):
        gen = np.random.default_rng([int(seed), i])
        try:
            _CHECKS[c](source, d, n, reps, gen, float(alpha))
        except _Skip as why:
            out[c] = f"skipped: {why}"
        else:
            out[c] = "passed"
    return out
