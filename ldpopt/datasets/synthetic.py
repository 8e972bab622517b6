"""Synthetic datasets of Wang et al.: Zipf (arXiv §4 "Datasets", NDSS §VI-A) and Beta (arXiv App. C.1).

Both are seeded (``rng``: int seed or ``numpy.random.Generator``) and vectorised.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import as_generator, check_domain_size, check_n
from ._dataset import Dataset

__all__ = ["beta", "beta_probabilities", "zipf", "zipf_probabilities"]


def _check_real(x, name: str, *, positive: bool) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    v = float(x)
    if not np.isfinite(v) or (v <= 0 if positive else v < 0):
        raise ValueError(f"{name} must be finite and {'> 0' if positive else '>= 0'}, got {x!r}")
    return v


def zipf_probabilities(d: int = 1024, s: float = 1.5) -> np.ndarray:
    """Truncated Zipf law on 0..d−1: :math:`P(v) = (v+1)^{-s} / Σ_{k=1}^{d} k^{-s}`.

    The distribution the Zipf dataset of Wang et al. (arXiv §4, NDSS 2020 §VI-A) draws from.

    Parameters
    ----------
    d : int, default 1024
        Domain size, at least 2.
    s : float, default 1.5
        Exponent, finite and ``>= 0`` (0 gives the uniform law).

    Returns
    -------
    ndarray of float64, shape (d,)
        The probabilities, decreasing, summing to 1.

    Raises
    ------
    TypeError
        ``s`` is not a real number.
    ValueError
        ``d`` is not a valid domain size, or ``s`` is negative or not finite.

    Examples
    --------
    >>> from ldpopt.datasets import zipf_probabilities
    >>> zipf_probabilities(4).round(3)
    array([0.598, 0.212, 0.115, 0.075])
    """
    d = check_domain_size(d)
    s = _check_real(s, "s", positive=False)
    w = np.arange(1, d + 1, dtype=np.float64) ** (-s)
    return w / w.sum()


def zipf(n: int = 10**6, d: int = 1024, s: float = 1.5, *, rng) -> Dataset:
    """Synthetic Zipf dataset: ``n`` users, ``d`` values, exponent ``s`` (defaults of arXiv Table 2).

    arXiv §4 / NDSS §VI-A: "Synthetic Zipf's distribution with 1024 values and 1 million reports. We
    use s = 1.5." The paper does not say how the reports are drawn. The authors' released code
    (``vvv214/LDP_Protocols``, ``post-process/post_processing.py``, ``generate``) draws each user's
    value as ``np.random.zipf(s) − 1`` and redraws until it lies in ``[0, d)``: i.i.d. draws from the
    Zipf law truncated to ranks 1..d. We draw the histogram of those n i.i.d. values directly,
    ``counts ~ Multinomial(n, p)`` with ``p`` from :func:`zipf_probabilities` — the same distribution
    in O(d) instead of O(n) rejection loops. Value 0 is the most likely (rank 1); values with no
    draw keep count 0 and stay in the domain, so ``d`` is always the requested ``d``.

    Parameters
    ----------
    n : int, default 10**6
        Number of users, at least 1.
    d : int, default 1024
        Domain size, at least 2.
    s : float, default 1.5
        Zipf exponent, ``>= 0``.
    rng : int or numpy.random.Generator
        Seed or generator (keyword-only, required).

    Returns
    -------
    Dataset
        Named ``"zipf"``, labels ``0..d−1``; ``meta`` holds ``s`` and the probabilities.

    Raises
    ------
    ValueError
        ``n``, ``d`` or ``s`` out of range (see :func:`zipf_probabilities`).

    Examples
    --------
    >>> from ldpopt.datasets import zipf
    >>> ds = zipf(1000, 8, rng=0)
    >>> ds
    Dataset(name='zipf', n=1000, d=8, groups=None)
    >>> ds.counts
    array([498, 192, 105,  75,  49,  35,  32,  14])
    """
    n = check_n(n)
    p = zipf_probabilities(d, s)
    gen = as_generator(rng)
    counts = gen.multinomial(n, p).astype(np.int64)
    return Dataset(
        name="zipf",
        counts=counts,
        labels=np.arange(p.shape[0], dtype=np.int64),
        source=(
            f"synthetic truncated Zipf, s={s}, d={p.shape[0]}, n={n}: counts ~ Multinomial(n, p_v ∝ (v+1)^-s) "
            "(Wang et al. arXiv §4 / NDSS §VI-A)"
        ),
        meta={"generator": "zipf", "s": float(s), "probabilities": p},
    )


def beta_probabilities(d: int = 400, a: float = 50.0, b: float = 2.0) -> np.ndarray:
    """Bucket probabilities of ``floor(d·X)``, X ~ Beta(a, b): :math:`P(v) = I_{(v+1)/d}(a,b) - I_{v/d}(a,b)`.

    The expected histogram of the Beta dataset of Wang et al. (arXiv App. C.1) divided by n;
    ``I`` is the regularised incomplete beta function (``scipy.special.betainc``).

    Parameters
    ----------
    d : int, default 400
        Number of buckets, at least 2.
    a, b : float, default 50.0 and 2.0
        Beta shape parameters, finite and ``> 0``.

    Returns
    -------
    ndarray of float64, shape (d,)
        The bucket probabilities, summing to 1.

    Raises
    ------
    TypeError
        ``a`` or ``b`` is not a real number.
    ValueError
        ``d`` is not a valid domain size, or ``a``/``b`` is not finite and positive.

    Examples
    --------
    >>> from ldpopt.datasets import beta_probabilities
    >>> beta_probabilities(4, 2.0, 2.0).round(4)
    array([0.1562, 0.3438, 0.3438, 0.1562])
    """
    from scipy.special import betainc

    d = check_domain_size(d)
    a = _check_real(a, "a", positive=True)
    b = _check_real(b, "b", positive=True)
    cdf = betainc(a, b, np.arange(d + 1, dtype=np.float64) / d)
    return np.diff(cdf)


def beta(n: int = 10**5, d: int = 400, a: float = 50.0, b: float = 2.0, *, rng) -> Dataset:
    """Synthetic bucketised Beta(a, b) dataset (arXiv App. C.1, Table 2: Beta(50, 2), n = 100K, d = 400).

    Follows App. C.1 literally: "The beta distribution is continuous, so we bucketize the samples
    (multiply each sample by 400 and then take the integer)": ``n`` samples X ~ Beta(a, b), user value
    ``floor(d·X)``. Where the paper is silent: a sample equal to 1.0 (probability zero in exact
    arithmetic, possible only by floating-point rounding) would give ``d``, so it goes to the last
    bucket ``d−1``; empty buckets keep count 0 (with a = 50, b = 2 almost all mass lies above 0.8, so
    most of the 400 buckets are empty — as in the paper's Fig. 6). The expected histogram is
    ``n · beta_probabilities(d, a, b)``.

    Parameters
    ----------
    n : int, default 10**5
        Number of users (samples), at least 1.
    d : int, default 400
        Number of buckets, at least 2.
    a, b : float, default 50.0 and 2.0
        Beta shape parameters, ``> 0``.
    rng : int or numpy.random.Generator
        Seed or generator (keyword-only, required).

    Returns
    -------
    Dataset
        Named ``"beta"``, labels ``0..d−1``; ``meta`` holds ``a`` and ``b``.

    Raises
    ------
    TypeError
        ``a`` or ``b`` is not a real number.
    ValueError
        ``n``, ``d``, ``a`` or ``b`` out of range.

    Examples
    --------
    >>> from ldpopt.datasets import beta
    >>> beta(1000, 10, rng=0).counts
    array([  0,   0,   0,   0,   0,   0,   0,   0,  27, 973])
    """
    n = check_n(n)
    d = check_domain_size(d)
    a = _check_real(a, "a", positive=True)
    b = _check_real(b, "b", positive=True)
    gen = as_generator(rng)
    x = gen.beta(a, b, size=n)
    v = np.minimum((x * d).astype(np.int64), d - 1)
    counts = np.bincount(v, minlength=d).astype(np.int64)
    return Dataset(
        name="beta",
        counts=counts,
        labels=np.arange(d, dtype=np.int64),
        source=f"synthetic Beta({a:g}, {b:g}) bucketised as floor({d}·x), n={n} (Wang et al. arXiv App. C.1)",
        meta={"generator": "beta", "a": a, "b": b},
    )
