"""The Square Wave (SW) mechanism for a numerical value in [0, 1] and its discretised channel.

Notes: docs/notes/python.md, "ldpopt.numeric.square_wave"."""

from __future__ import annotations

import numpy as np

from .._validation import as_generator, check_domain_size, check_epsilon

__all__ = ["SquareWave", "sw_half_width"]


def sw_half_width(epsilon: float) -> float:
    """:math:`b = (ε e^ε - e^ε + 1) / (2 e^ε (e^ε - 1 - ε))` (Li et al. SIGMOD 2020, §4).

    The half-width that maximises the mutual information between value and report; formed with
    ``expm1`` so that it stays accurate as ε → 0 (limit 1/2).

    Parameters
    ----------
    epsilon : float
        The privacy budget, > 0.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``epsilon`` not finite and positive.

    Examples
    --------
    >>> from ldpopt.numeric import sw_half_width
    >>> round(sw_half_width(1.0), 6), round(sw_half_width(1e-4), 4)
    (0.256083, 0.5)
    """
    eps = check_epsilon(epsilon)
    em1 = np.expm1(eps)
    # numerator εe^ε − (e^ε − 1) and denominator e^ε − 1 − ε, both O(ε²) for small ε
    num = eps * np.exp(eps) - em1
    den = 2.0 * np.exp(eps) * (em1 - eps)
    return float(num / den)


def _window_k(x: np.ndarray, b: float) -> np.ndarray:
    """Second antiderivative of the window 1{|u| ≤ b}: K(x) = ∫_{−∞}^x ∫_{−∞}^y 1{|u| ≤ b} du dy."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x <= -b, 0.0, np.where(x <= b, 0.5 * (x + b) ** 2, 2.0 * b * b + 2.0 * b * (x - b)))


class SquareWave:
    """Square Wave randomiser on [0, 1] at privacy level ``epsilon`` (Li et al. SIGMOD 2020, §4).

    Attributes ``epsilon``, ``b`` (half-width), ``p``, ``q`` (densities inside / outside the window).

    Parameters
    ----------
    epsilon : float
        The privacy budget, > 0; :math:`p/q = e^ε`.

    Raises
    ------
    ValueError
        ``epsilon`` not finite and positive.

    Examples
    --------
    >>> from ldpopt.numeric import SquareWave
    >>> sw = SquareWave(1.0)
    >>> sw, round(sw.p, 4), round(sw.q, 4)
    (SquareWave(epsilon=1, b=0.256083), 1.1363, 0.418)
    """

    def __init__(self, epsilon: float):
        self.epsilon = check_epsilon(epsilon)
        self.b = sw_half_width(self.epsilon)
        z = 2.0 * self.b * np.exp(self.epsilon) + 1.0
        self.p = float(np.exp(self.epsilon) / z)
        self.q = float(1.0 / z)

    def __repr__(self):
        return f"SquareWave(epsilon={self.epsilon:g}, b={self.b:.6g})"

    @property
    def output_range(self) -> tuple[float, float]:
        """The reports' range [−b, 1 + b].

        Examples
        --------
        >>> from ldpopt.numeric import SquareWave
        >>> sw = SquareWave(1.0)
        >>> tuple(round(x, 4) for x in sw.output_range)
        (-0.2561, 1.2561)
        """
        return (-self.b, 1.0 + self.b)

    # -- the client --------------------------------------------------------------------------------
    def perturb(self, values, rng) -> np.ndarray:
        """One report per value, vectorised: with probability 2bp the report is uniform on the window
        [v − b, v + b], otherwise uniform on the rest of [−b, 1 + b] (length 1), drawn as u ∈ [0, 1)
        mapped past the window (u < v → u − b, else u + b).

        Parameters
        ----------
        values : array_like, shape (n,)
            Users' values in [0, 1], non-empty.
        rng : int, numpy.random.Generator or "secure"
            The randomness.

        Returns
        -------
        ndarray, shape (n,)
            One report in [−b, 1 + b] per value.

        Raises
        ------
        ValueError
            ``values`` empty, not 1-D, not finite, or outside [0, 1].

        Examples
        --------
        >>> from ldpopt.numeric import SquareWave
        >>> sw = SquareWave(1.0)
        >>> reports = sw.perturb([0.1, 0.5, 0.9], rng=0)
        >>> reports.shape, bool(((reports >= -sw.b) & (reports <= 1 + sw.b)).all())
        ((3,), True)
        """
        v = np.asarray(values, dtype=np.float64)
        if v.ndim != 1 or v.size == 0:
            raise ValueError(f"values must be a non-empty 1-D array, got shape {v.shape}")
        if not np.all(np.isfinite(v)) or v.min() < 0.0 or v.max() > 1.0:
            raise ValueError("values must be finite and lie in [0, 1] (rescale the column first)")
        gen = as_generator(rng)
        inside = gen.random(v.size) < 2.0 * self.b * self.p
        u = gen.random(v.size)
        near = v + self.b * (2.0 * u - 1.0)
        far = np.where(u < v, u - self.b, u + self.b)
        return np.where(inside, near, far)

    def density(self, report, value) -> np.ndarray:
        r""":math:`M_v(\tilde v)`: p inside the window, q outside it on [−b, 1 + b], 0 off the output range.

        Parameters
        ----------
        report : array_like
            Reports ṽ.
        value : array_like
            Values v (broadcast against ``report``).

        Returns
        -------
        ndarray
            The density of each report given its value.

        Examples
        --------
        >>> from ldpopt.numeric import SquareWave
        >>> sw = SquareWave(1.0)
        >>> sw.density([0.5, 0.5, -0.6], [0.5, 0.0, 0.5]).round(4)
        array([1.1363, 0.418 , 0.    ])
        """
        r, v = np.broadcast_arrays(np.asarray(report, float), np.asarray(value, float))
        lo, hi = self.output_range
        dens = np.where(np.abs(r - v) <= self.b, self.p, self.q)
        return np.where((r >= lo) & (r <= hi), dens, 0.0)

    # -- the aggregator ----------------------------------------------------------------------------
    def output_edges(self, d_out: int) -> np.ndarray:
        """Edges of the d̃ equal output bins of [−b, 1 + b].

        Parameters
        ----------
        d_out : int
            Number of output bins d̃, at least 2.

        Returns
        -------
        ndarray, shape (``d_out`` + 1,)

        Raises
        ------
        ValueError
            ``d_out`` not a valid domain size.

        Examples
        --------
        >>> from ldpopt.numeric import SquareWave
        >>> sw = SquareWave(1.0)
        >>> sw.output_edges(4).round(3)
        array([-0.256,  0.122,  0.5  ,  0.878,  1.256])
        """
        d_out = check_domain_size(d_out, "d_out")
        return np.linspace(-self.b, 1.0 + self.b, d_out + 1)

    def bin_reports(self, reports, d_out: int) -> np.ndarray:
        """Counts of the reports in the d̃ equal bins of [−b, 1 + b] (int64, length d̃).

        Parameters
        ----------
        reports : array_like, shape (n,)
            SW reports in [−b, 1 + b].
        d_out : int
            Number of output bins d̃.

        Returns
        -------
        ndarray of int64, shape (``d_out``,)

        Raises
        ------
        ValueError
            Reports not 1-D, not finite or outside [−b, 1 + b]; a bad ``d_out``.

        Examples
        --------
        >>> from ldpopt.numeric import SquareWave
        >>> sw = SquareWave(1.0)
        >>> int(sw.bin_reports(sw.perturb([0.1, 0.5, 0.9] * 100, rng=0), 8).sum())
        300
        """
        r = np.asarray(reports, dtype=np.float64)
        lo, hi = self.output_range
        if r.ndim != 1 or not np.all(np.isfinite(r)) or r.min() < lo - 1e-12 or r.max() > hi + 1e-12:
            raise ValueError(f"reports must be a 1-D array of SW outputs in [{lo:.6g}, {hi:.6g}]")
        d_out = check_domain_size(d_out, "d_out")
        j = np.clip(((r - lo) / (hi - lo) * d_out).astype(np.int64), 0, d_out - 1)
        return np.bincount(j, minlength=d_out).astype(np.int64)

    def channel(self, d: int, d_out: int | None = None) -> np.ndarray:
        """K (d̃ × d): K[j, i] = P(report in output bin j | value uniform on input bin i), exact.

        P(ṽ ∈ [a, c] | v) = q (c − a) + (p − q)·|[a, c] ∩ [v − b, v + b]|, and the average of the
        overlap over v uniform on [l, r] is (K(c − l) − K(c − r) − K(a − l) + K(a − r)) / (r − l)
        with K the window's second antiderivative. Columns sum to 1 (to rounding).

        Parameters
        ----------
        d : int
            Number of equal input bins of [0, 1].
        d_out : int, optional
            Number of output bins (default ``d``).

        Returns
        -------
        ndarray, shape (``d_out``, d)

        Raises
        ------
        ValueError
            ``d`` or ``d_out`` not a valid domain size.

        Examples
        --------
        >>> from ldpopt.numeric import SquareWave
        >>> sw = SquareWave(1.0)
        >>> K = sw.channel(8, 16)
        >>> K.shape, bool(abs(K.sum(axis=0) - 1).max() < 1e-12)
        ((16, 8), True)
        """
        d = check_domain_size(d)
        d_out = d if d_out is None else check_domain_size(d_out, "d_out")
        e_in = np.linspace(0.0, 1.0, d + 1)
        e_out = self.output_edges(d_out)
        a, c = e_out[:-1, None], e_out[1:, None]
        l, r = e_in[None, :-1], e_in[None, 1:]
        k = _window_k
        overlap = (k(c - l, self.b) - k(c - r, self.b) - k(a - l, self.b) + k(a - r, self.b)) / (r - l)
        return self.q * (c - a) + (self.p - self.q) * overlap
