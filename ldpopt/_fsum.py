"""The correctly rounded sum of a float64 array (the value :func:`math.fsum` returns) in a few
vectorised passes, for the constraint residuals of a fully nonzero f at d = 10⁶ (``math.fsum`` needs
a list of Python floats: ~90 ms there, most of a check's time).

Each finite value is split without error into two integers on its own binary exponent,
v = m·2^e (``np.frexp``, ½ ≤ |m| < 1), m·2²⁷ = hi + lo·2⁻²⁶ with hi = trunc(m·2²⁷) (|hi| < 2²⁷) and lo
an integer (|lo| < 2²⁶): v = hi·2^(e−27) + lo·2^(e−53), both terms exact doubles (for a subnormal v
too: every bit of each term is a bit of v). The integers are summed per exponent by ``np.bincount``
— exact, the running sums staying below 2⁵³ for up to 2²⁶ values per pass — and the per-exponent
totals are carried into a few exact doubles (:func:`_exact_parts`). Their exact sum is the exact sum
of v, and ``math.fsum`` of those few numbers rounds it correctly, as ``math.fsum`` of v does: the
same float (round half to even). Non-finite values, values beyond 2⁹⁶⁰ (a
per-exponent total could overflow) and short arrays go to ``math.fsum`` itself (its NaN, ±inf,
``ValueError`` on inf − inf and ``OverflowError`` as before).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["fsum"]

#: values per ``bincount`` pass: |hi| < 2²⁷, so a running sum of this many stays below 2⁵³ (exact)
CHUNK = 1 << 26
#: largest binary exponent taken here (|v| < 2⁹⁶⁰): a per-exponent total, ≤ CHUNK·2^e, stays finite
MAX_EXP = 960
#: below this many nonzero values ``math.fsum`` on them is as fast (measured: both ~35 µs at 300
#: values spanning 1e-300..1; ``math.fsum`` 300 µs at 2,000, this 42 µs)
SMALL = 256


def fsum(v) -> float:
    """``math.fsum`` of the entries of ``v`` (any shape, as float64): the exact sum correctly rounded
    to the nearest double (ties to even), computed by exact per-exponent integer sums (module
    docstring). Zeros contribute nothing and are skipped on the short path.

    Parameters
    ----------
    v : array_like
        The values (converted to float64).

    Returns
    -------
    float
        The same float as ``math.fsum(v)``; NaN, ±inf and the errors of ``math.fsum`` (inf − inf:
        ``ValueError``; an intermediate overflow: ``OverflowError``) as it gives them.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt._fsum import fsum
    >>> v = np.r_[1.0, 1e-16 * np.ones(10_000), -1.0]
    >>> fsum(v) == 1e-12, float(np.sum(v)) == 1e-12
    (True, False)
    """
    v = np.asarray(v, dtype=np.float64).ravel()
    if np.count_nonzero(v) < SMALL:
        return math.fsum(v[v != 0].tolist())
    m, e = np.frexp(v)  # zeros: m = 0, e = 0 (they add 0 to the bin of exponent 0)
    with np.errstate(invalid="ignore"):  # inf − inf in the check below: NaN, sent to math.fsum
        finite = math.isfinite(float(np.sum(m)))  # frexp keeps NaN and ±inf in m
    if not finite or int(e.max()) > MAX_EXP:
        return math.fsum(v[v != 0].tolist())
    a = np.multiply(m, 2.0**27, out=m)  # in place: fresh 8 MB arrays cost their page faults at d = 10⁶
    hi = np.trunc(a)
    lo = np.multiply(np.subtract(a, hi, out=a), 2.0**26, out=a)  # a − hi: the 26 fractional bits of a, exactly
    emin = int(e.min())
    k = np.subtract(e, emin, out=e)
    nb = int(k.max()) + 1
    parts = [_exact_parts(np.bincount(k[s:s + CHUNK], weights=hi[s:s + CHUNK], minlength=nb),
                          np.bincount(k[s:s + CHUNK], weights=lo[s:s + CHUNK], minlength=nb), emin)
             for s in range(0, v.size, CHUNK)]
    out = np.concatenate(parts)
    return math.fsum(out[out != 0].tolist())


def _exact_parts(H, L, emin: int) -> np.ndarray:
    """A few doubles whose exact sum is Σ_j H_j·2^(e_j−27) + L_j·2^(e_j−53), e_j = emin + j (H, L:
    integer-valued, |H| < 2⁵³, |L| < 2⁵²). As integers on one grid of binary positions (L_j at
    position j, H_j at j + 26, unit 2^(emin−53)): D (|D| < 2⁵⁴) split as D mod 2²⁷ + 2²⁷·⌊D/2²⁷⌋, the
    second part moved 27 positions up (|digit| < 2²⁸ then), and 24 consecutive positions packed into
    one integer below 2⁵², which times its power of two is an exact double (in the subnormal range
    too: every term there is a multiple of 2⁻¹⁰⁷⁴). ~2,100 per-exponent totals of a wide-ranging f
    (1e-300 to 1) become ~90 parts: ``math.fsum`` of the totals themselves took ~1 ms."""
    nb = H.shape[0]
    W = 24
    size = -(-(nb + 26 + 27) // W) * W
    D = np.zeros(size, np.int64)
    D[:nb] += L.astype(np.int64)
    D[26:26 + nb] += H.astype(np.int64)
    A = D & ((1 << 27) - 1)
    A[27:] += (D >> 27)[:-27]
    V = A.reshape(-1, W) @ (np.int64(1) << np.arange(W, dtype=np.int64))
    return np.ldexp(V.astype(np.float64), emin - 53 + W * np.arange(V.shape[0]))
