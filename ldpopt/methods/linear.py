"""A linear method's form, f' = f̃ + θ(1 − Σf̃)/d·1, and the exact variance of its answers that the
form implies under any noise source's count covariance.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.analytic"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..noise import CountCovariance

__all__ = ["Centring"]


@dataclass(frozen=True)
class Centring:
    """The affine map f' = f̃ + θ(1 − Σf̃)/d·1 = M f̃ + θ/d·1 with M = I − θ11ᵀ/d: θ = 0 is Base
    (arXiv §3.1), θ = 1 is Norm (§3.2, NDSS Lemma 3: unbiased, sums to one). A method declaring its
    form (``methods.register(..., linear=Centring(θ))``) gets exact analytic intervals: the
    variance of a query row u is that of wᵀf̃ with w = Mᵀu = u − θ(Σu/d)·1.

    With the source's count covariance (:class:`ldpopt.noise.CountCovariance`: Var f̃_v = κ(A + B f_v)
    + e, Cov(f̃_u, f̃_v) = κ(a + b(f_u + f_v))) and g = A − a + (B − 2b)f,

        Var(wᵀf̃) = κ(Σ w_v² g_v + a(Σw)² + 2b(Σw)(Σ w_v f_v)) + e Σ w_v²,

    with Σw = (1 − θ)Σu: the pair terms vanish for Norm. Where the source states no pair (a, b) only
    Base's single values have an exact variance (the diagonal).

    Parameters
    ----------
    theta : float
        θ in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.methods.linear import Centring
    >>> Centring(1.0).apply(np.array([0.5, 0.3, 0.4]))      # Norm: δ = (1 − 1.2)/3 added to each
    array([0.43333333, 0.23333333, 0.33333333])
    """

    theta: float

    def __post_init__(self):
        if not (isinstance(self.theta, (int, float)) and 0.0 <= float(self.theta) <= 1.0):
            raise ValueError(f"theta must be a number in [0, 1], got {self.theta!r}")

    def apply(self, f_tilde) -> np.ndarray:
        """The form's output on f̃ (each row of a 2-D array is one estimate).

        Parameters
        ----------
        f_tilde : array_like, shape (d,) or (B, d)

        Returns
        -------
        ndarray, the same shape

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.methods.linear import Centring
        >>> Centring(0.0).apply(np.array([0.5, -0.1])).tolist()
        [0.5, -0.1]
        """
        F = np.asarray(f_tilde, dtype=np.float64)
        return F + self.theta * ((1.0 - F.sum(axis=-1)) / F.shape[-1])[..., None] if F.ndim > 1 \
            else F + self.theta * (1.0 - F.sum()) / F.size

    def exact_without_pair(self, per_value: bool) -> bool:
        """Whether the variance is exact from the per-value variances alone (no pair terms): only
        the identity's (θ = 0) single values.

        Parameters
        ----------
        per_value : bool
            The answers are the single values (no query rows).

        Returns
        -------
        bool

        Examples
        --------
        >>> from ldpopt.methods.linear import Centring
        >>> Centring(0.0).exact_without_pair(True), Centring(1.0).exact_without_pair(True)
        (True, False)
        """
        return self.theta == 0.0 and per_value

    def query_variance(self, cov: CountCovariance, d: int, f, U=None, name: str = "") -> np.ndarray:
        """Exact Var of the answers to the query rows of ``U`` (m × d, sparse or dense; None = every
        single value) when the true frequencies are ``f`` (None: zeros, for a source whose variance
        does not depend on them).

        Parameters
        ----------
        cov : CountCovariance
            The source's ``count_covariance(n, d)``.
        d : int
        f : array_like (d,) or None
        U : matrix or None
        name : str
            The source, for the error.

        Returns
        -------
        ndarray, shape (m,) or (d,)

        Raises
        ------
        ValueError
            The source states no pair terms and the answers need them.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> from ldpopt.methods.linear import Centring
        >>> grr = oracles.get("grr", 1.0, 4)
        >>> v = Centring(0.0).query_variance(grr.count_covariance(1000, 4), 4, np.full(4, 0.25))
        >>> bool(np.allclose(v, grr.variance(0.25, 1000)))
        True
        """
        f = np.zeros(d) if f is None else np.asarray(f, dtype=np.float64)
        if cov.moments is not None:   # a general channel: Var(wᵀf̃) = Σ_v C[k, v] f_v + e Σw²
            W = self._weights(U, d)
            return self._coefficients(cov, W) @ f + cov.e * np.sum(W * W, axis=1)
        th, kap = float(self.theta), cov.kappa
        s = cov.A + f * cov.B
        U, U2, k, sq = _rows(U, d)
        ind = self._independent(cov, d, k, sq)
        if cov.pair is None:
            self._need_pair(U, name)
            return kap * s + ind
        a, b = cov.pair
        g = s - a - 2 * b * f
        usq_g, ug, uf = (g, g, f) if U is None else (np.asarray(U2 @ g).ravel(), np.asarray(U @ g).ravel(),
                                                   np.asarray(U @ f).ravel())
        m = k / d
        w2g = usq_g - 2 * th * m * ug + th**2 * m**2 * g.sum()
        sw = (1.0 - th) * k
        swf = uf - th * m * f.sum()
        return kap * (w2g + a * sw**2 + 2 * b * sw * swf) + ind

    def line(self, cov: CountCovariance, d: int, U=None, name: str = "", shape=None) -> tuple[np.ndarray, np.ndarray]:
        r"""(α, β) with Var = α + β·F exactly, F the true answer of each 0-1 query row of ``U`` (None =
        every single value), for true frequencies summing to one: Σw_v² f_v = θ²m² + (1 − 2θm)F on a
        row of k ones, m = k/d.

        A general channel (``cov.moments``) has :math:`\mathrm{Var} = \sum_v C_v f_v`, which depends on
        the truth beyond F: writing :math:`f = F a + (1 - F) b` with a, b the truth's shape inside and
        outside the row (each summing to one), :math:`\alpha = C \cdot b` and :math:`\beta = C \cdot a - \alpha`,
        a and b taken from ``shape`` (the plug-in truth; uniform where it has no mass). Exact when the
        shape is; for a pair-form source C is constant inside and outside a row, and the line is the
        one above whatever the shape.

        Parameters
        ----------
        cov : CountCovariance
        d : int
        U : 0-1 matrix or None
        name : str
        shape : array_like (d,), optional
            A general channel's plug-in truth (required then).

        Returns
        -------
        (ndarray, ndarray)

        Raises
        ------
        ValueError
            The source states no pair terms and the answers need them.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> from ldpopt.methods.linear import Centring
        >>> c = oracles.get("oue", 1.0, 5).count_covariance(1000, 5)
        >>> alpha, beta = Centring(1.0).line(c, 5)
        >>> f = np.array([0.4, 0.3, 0.1, 0.1, 0.1])
        >>> bool(np.allclose(alpha + beta * f, Centring(1.0).query_variance(c, 5, f)))
        True
        """
        if cov.moments is not None:
            return self._general_line(cov, d, U, name, shape)
        th, kap = float(self.theta), cov.kappa
        U, _, k, sq = _rows(U, d)
        ind = self._independent(cov, d, k, sq)
        if cov.pair is None:
            self._need_pair(U, name)
            return np.full(d, kap * cov.A) + ind, np.full(d, kap * cov.B)
        a, b = cov.pair
        A0, B0 = cov.A - a, cov.B - 2 * b
        m = k / d
        w2 = k * (1 - th * m) ** 2 + (d - k) * th**2 * m**2
        alpha = kap * (A0 * w2 + B0 * th**2 * m**2 + a * (1 - th) ** 2 * k**2 - 2 * b * (1 - th) * k * th * m) + ind
        beta = kap * (B0 * (1 - 2 * th * m) + 2 * b * (1 - th) * k)
        return alpha, beta

    def _weights(self, U, d: int) -> np.ndarray:
        # the rows w = Mᵀu = u − θ(Σu/d)1 (dense); None: the single values, I − θ11ᵀ/d
        th = float(self.theta)
        if U is None:
            return np.eye(d) - th / d
        import scipy.sparse as sp

        Ud = U.toarray() if sp.issparse(U) else np.asarray(U, dtype=np.float64)
        return Ud - th * Ud.sum(axis=1, keepdims=True) / d

    def _coefficients(self, cov: CountCovariance, W: np.ndarray) -> np.ndarray:
        # C[k, v] = (E[(w_kᵀx)² | v] − w_kv²)/n: Var(w_kᵀ f̃) = Σ_v C[k, v] f_v (a general channel)
        assert cov.moments is not None
        return (cov.moments.query_moments(W) - W * W) / cov.n

    def _general_line(self, cov: CountCovariance, d: int, U, name: str, shape) -> tuple[np.ndarray, np.ndarray]:
        if shape is None:
            raise ValueError(f"oracle {name!r}: a general channel's variance line needs the plug-in truth (shape)")
        import scipy.sparse as sp

        W = self._weights(U, d)
        C = self._coefficients(cov, W)
        inside = np.eye(d, dtype=bool) if U is None else \
            (np.asarray(U.toarray() if sp.issparse(U) else U) != 0)
        s = np.clip(np.asarray(shape, dtype=np.float64), 0.0, None)

        def part(mask):
            w = np.where(mask, s[None, :], 0.0)
            tot = w.sum(axis=1, keepdims=True)
            w = np.where(tot > 0, w, mask.astype(np.float64))
            tot = w.sum(axis=1, keepdims=True)
            return np.divide(w, tot, out=np.zeros_like(w), where=tot > 0)

        a, b = part(inside), part(~inside)
        ind = cov.e * np.sum(W * W, axis=1)
        alpha = np.sum(C * b, axis=1)
        return alpha + ind, np.sum(C * a, axis=1) - alpha

    def _independent(self, cov: CountCovariance, d: int, k: np.ndarray, sq: np.ndarray) -> np.ndarray:
        # e Σw² for rows of sum k and squared norm sq: noise added independently to every count
        th = float(self.theta)
        return cov.e * (sq - 2 * th * (k / d) * k + th**2 * (k / d) ** 2 * d)

    def _need_pair(self, U, name: str) -> None:
        if not self.exact_without_pair(U is None):
            raise ValueError(f"oracle {name!r}: the count covariance is not analytic here; use the bootstrap")


def _rows(U, d: int):
    """(U as CSR, U∘U, row sums k, row squared norms) of query rows; None: the single values."""
    if U is None:
        return None, None, np.ones(d), np.ones(d)
    import scipy.sparse as sp  # only for query rows: a per-value call loads no scipy

    U = sp.csr_matrix(U, dtype=np.float64)
    U2 = U.multiply(U)
    return U, U2, np.asarray(U.sum(axis=1)).ravel(), np.asarray(U2.sum(axis=1)).ravel()
