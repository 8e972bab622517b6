"""Objectives of the post-processing problems: what is minimised over the frequency vector f.
Notes: docs/notes/problems.md, "ldpopt.problems.objectives.builtins".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cvxpy as cp
import numpy as np
from scipy.special import xlogy

from ..._validation import check_float_array
from ...estimate import Estimate
from ..registry import available_objectives, objective_factory, register_objective
from .base import BuiltObjective, Objective, UserObjective

__all__ = [
    "L1",
    "Binomial",
    "BuiltObjective",
    "CentralMLE",
    "LeastSquares",
    "Multinomial",
    "Objective",
    "Posterior",
    "UserObjective",
    "WeightedMLE",
    "WeightedMLENaive",
    "available",
    "make_objective",
]


@register_objective
class LeastSquares(Objective):
    r"""CLS, Wang et al. §3.5: :math:`J(f) = \lVert f - \tilde f \rVert_2^2` (the squared norm; same minimiser as the paper's
    :math:`\lVert f - \tilde f \rVert_2`, and the form Appendix B differentiates). A QP (solver chain: :mod:`.policy`).

    Scaled form: :math:`\sum (x − \tilde f/σ)^2 = J/σ^2`.

    Parameters
    ----------
    (none)
        Made with no arguments (``Problem`` makes it from its name).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, "cls").solve()
    >>> sol.status, sol.f.round(4)
    ('optimal', array([0.7662, 0.2338, 0.    , 0.    ]))
    """

    name = "cls"
    file_doc = "constrained least squares ||f - f~||^2"
    lazy_build = True

    def build(self, f, x, scale, estimate):
        return BuiltObjective(cp.sum_squares(x - estimate.f_tilde / scale), multiplier=1.0 / scale**2)

    def per_value(self, estimate):
        from .separable import Quadratic

        return Quadratic(estimate.f_tilde, 1.0, "cls")


def _wmle_coefficients(estimate: Estimate):
    p, q = estimate.p, estimate.q
    a = q * (1.0 - q)  # variance numerator at f_v = 0 (Eq. 2)
    e = (p - q) * (1.0 - p - q)  # its slope in f_v
    return p, q, a, e


@register_objective
class WeightedMLE(Objective):
    r"""Exact weighted MLE, Wang et al. §3.4 Eq. 13, with the value-dependent variance of Eq. 2:

    .. math::

        J(f) = Σ_v (c_v/n - q - (p - q) f_v)^2 / (q(1 - q) + (p - q)(1 - p - q) f_v).

    Formulation (accurate at d = 42,178, see ``tests/test_problems_wmle.py``): with x = f/σ,
    x̃ = f̃/σ and β = σ(p − q)(1 − p − q)/(q(1 − q)), each term is :math:`(\tilde x_v - x_v)^2/(n(1 + β x_v))`; so
    :math:`n J = Σ_v t_v` with the per-element rotated second-order cone :math:`(\tilde x_v - x_v)^2 ≤ t_v (1 + β x_v)`,
    written as :math:`\lVert (2(\tilde x_v - x_v), t_v - y_v) \rVert_2 ≤ t_v + y_v`, :math:`y_v = 1 + β x_v` (one vectorised cvxpy
    ``SOC`` with ``axis=0``). Every quantity the solver sees is O(1). A cone program.

    The cone also imposes the domain :math:`y_v ≥ 0` (variance ≥ 0), which the simplex implies anyway.
    Needs q(1 − q) > 0 (:meth:`check` raises ``ValueError`` otherwise).

    Parameters
    ----------
    (none)
        Made with no arguments (``Problem`` makes it from its name).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, "weighted-mle").solve()
    >>> sol.status, sol.f.round(4)
    ('optimal', array([0.7426, 0.2574, 0.    , 0.    ]))
    """

    name = "weighted-mle"
    file_doc = "Gaussian-approximation MLE, weights 1/sigma_v^2"
    frequency_floor = False
    lazy_build = True
    #: under noise added to exact counts (``estimate.noise.additive``) σ_v² is one constant, so Eq. 13
    #: is CLS (:meth:`resolve`); a subclass whose formulation refuses such noise sets this False
    central_is_cls = True

    def check(self, estimate):
        if estimate.noise.additive:
            return  # one variance in every cell: Eq. 13 is CLS (:meth:`resolve`)
        _, q, a, _ = _wmle_coefficients(estimate)
        if not a > 0:
            raise ValueError(f"objective={self.name!r} needs q(1 - q) > 0 (a positive variance at "
                             f"f_v = 0), got q = {q!r}")

    def build(self, f, x, scale, estimate):
        if self.central_is_cls and estimate.noise.additive:
            return LeastSquares().build(f, x, scale, estimate)   # constant σ_v²: CLS (:meth:`resolve`)
        p, q, a, e = _wmle_coefficients(estimate)
        gamma = a / ((p - q) ** 2 * scale**2)  # = n when scale = σ
        beta = e * scale / a
        t = cp.Variable(estimate.d, name="t_wmle")
        r = estimate.f_tilde / scale - x
        y = 1.0 + beta * x
        cone = cp.SOC(t + y, cp.vstack([2.0 * r, t - y]), axis=0)
        return BuiltObjective(cp.sum(t), multiplier=gamma, constraints=[cone])

    def per_value(self, estimate):
        """Eq. 13 per value (also the naive formulation's: the same J).

        Parameters
        ----------
        estimate : Estimate
            The raw estimate.

        Returns
        -------
        WeightedMLESep
            h_v and its derivatives (:mod:`.separable`).

        Raises
        ------
        ValueError
            q(1 − q) = 0 (:meth:`check`).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> from ldpopt.problems.objectives.builtins import WeightedMLE
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> type(WeightedMLE().per_value(est)).__name__
        'WeightedMLESep'
        """
        from .separable import WeightedMLESep

        self.check(estimate)
        if estimate.noise.additive:
            return LeastSquares().per_value(estimate)
        return WeightedMLESep(estimate)

    def resolve(self, estimate):
        r"""CLS for a central-noise estimate (Eq. 13 with the constant variance :math:`σ_v^2 = \mathrm{Var}(\text{noise})/n^2`
        weighs every term alike, so its minimiser is CLS's), else itself.

        See ``Objective.resolve``.

        Parameters
        ----------
        estimate : Estimate
            The raw estimate.

        Examples
        --------
        >>> import ldpopt
        >>> from ldpopt.problems.objectives.builtins import WeightedMLE
        >>> WeightedMLE().resolve(ldpopt.Estimate.from_central([60, 41], "laplace", 3.0, n=100))
        LeastSquares()
        """
        if self.central_is_cls and estimate.noise.additive:
            return LeastSquares()
        return self


@register_objective
class WeightedMLENaive(WeightedMLE):
    """CAUTIONARY EXAMPLE — do not use for results. Same J as :class:`WeightedMLE`, a DCP-valid but
    numerically poor formulation, kept so the test suite can show that it fails.

    With r = A − B f and s = C + E f affine (A = c/n − q, B = p − q, C = q(1 − q),
    E = (p − q)(1 − p − q)), :math:`r^2/s = α^2/s - 2αβ + β^2 s` with β = B/E, α = A + BC/E. That turns each
    quadratic-over-linear term into ``inv_pos`` plus a linear term, in raw f units, without
    rescaling. The two large pieces cancel to leave a tiny J (~0.04 against pieces ~d), so the
    solver's relative tolerances are spent on the cancelling parts: at d = 42,178 (OUE, ε = 1) it
    reports ``optimal`` with f off by ~0.03 per coordinate and ~1.6 in L1.

    Parameters
    ----------
    (none)
        Made with no arguments (``Problem`` makes it from its name).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems.objectives.builtins import WeightedMLE, WeightedMLENaive
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> f = np.full(4, 0.25)
    >>> bool(np.isclose(WeightedMLENaive().value(f, est), WeightedMLE().value(f, est)))   # the same J
    True
    """

    name = "weighted-mle-naive"
    file_doc = "the same with the variance evaluated at f (cautionary)"
    scaled = False
    lazy_build = False  # built at once, like any formulation the structured solver does not own
    central_is_cls = False  # refuses central noise (:meth:`check`): no CLS stand-in

    def check(self, estimate):
        _refuse_central(self.name, estimate)
        super().check(estimate)
        _, _, _, e = _wmle_coefficients(estimate)
        if e == 0:
            raise ValueError(f"objective={self.name!r} needs (p - q)(1 - p - q) != 0")

    def build(self, f, x, scale, estimate):
        p, q, c0, e = _wmle_coefficients(estimate)
        a0 = estimate.counts / estimate.n - q
        b0 = p - q
        beta = b0 / e
        alpha = a0 + b0 * c0 / e
        s = c0 + e * f
        expr = cp.sum(cp.multiply(alpha**2, cp.inv_pos(s))) + beta**2 * cp.sum(s) - 2.0 * beta * float(alpha.sum())
        return BuiltObjective(expr, multiplier=1.0)


def _refuse_central(name: str, estimate) -> None:
    # the likelihoods of support counts (multinomial, binomial) and Eq. 13's variance are a frequency
    # oracle's; a central-noise histogram has neither: one line saying what applies instead
    if not estimate.noise.support_counts:
        raise ValueError(f"objective={name!r} is the likelihood of a frequency oracle's support counts; an "
                         f"estimate of noise added to exact counts ({estimate.oracle}) has none: use 'central-mle' "
                         f"(the noise's exact likelihood), 'cls' or 'weighted-mle'")


class _Likelihood(Objective):
    # Clarabel's own 1e-8 defaults: on exponential cones its iterates stall near a 1e-9 gap, so
    # 1e-10 ends "AlmostSolved" (measured); the KKT residuals at 1e-8 are still <= 1e-7 relative.
    solver_options: Mapping[str, Mapping[str, Any]] = {
        "CLARABEL": {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8}}
    lazy_build = True
    #: the likelihood's per-value terms: binomial (True) or multinomial (False)
    _binomial = False

    def check(self, estimate):
        _refuse_central(self.name, estimate)

    def likelihood_terms(self, estimate):
        from .likelihood_terms import LikelihoodTerms

        return LikelihoodTerms(estimate, binomial=self._binomial)


@register_objective
class Multinomial(_Likelihood):
    r"""GRR's exact likelihood (each report is one value, so c ~ Multinomial(n, π)):

    .. math::

        J(f) = -(1/n) Σ_v c_v \log π_v, \quad π_v = q + (p - q) f_v

    (negative log-likelihood per user; maximising :math:`Σ c_v \log π_v`). Under :math:`Σ f = 1`, :math:`Σ π = 1` exactly for
    GRR (p + (d − 1)q = 1). Only values with :math:`c_v > 0` enter the sum.

    Scaled form: :math:`Σ_{c_v>0} \mathrm{rel\_entr}(c_v, n π_v) = n J + Σ c \log c - (Σ c) \log n`, an exponential-cone
    problem whose optimal value is the KL-type deviance, ≈ d/2, not n·log d.
    Requires :math:`Σ c_v = n` (the counts of a single-value-report oracle).

    Solving: below d = ``policy.SQP_MIN_D`` (300) as this exponential-cone program (Clarabel → SCS);
    from there on ``Problem.solve()`` uses the sequential-QP route (:mod:`.sqp`: damped Newton over
    diagonal QPs on the same constraints, per-value derivatives in :mod:`.likelihood_terms`),
    because Clarabel fails the cones from d ≈ 1,000 (measured) — the Solution's message says so.

    Parameters
    ----------
    (none)
        Made with no arguments (``Problem`` makes it from its name).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, "multinomial").solve()
    >>> sol.status, sol.f.round(4)
    ('optimal', array([0.7278, 0.2722, 0.    , 0.    ]))
    """

    name = "multinomial"
    file_doc = "exact likelihood of GRR counts"

    def check(self, estimate):
        _refuse_central(self.name, estimate)
        total = float(np.sum(estimate.counts))
        if not np.isclose(total, estimate.n, rtol=1e-9, atol=1e-6):
            raise ValueError(f"objective='multinomial' is the likelihood of single-value reports (GRR): "
                             f"counts must sum to n = {estimate.n}, got {total:g}; use 'binomial' for "
                             "set-valued reports (OUE, OLH, ...)")

    def build(self, f, x, scale, estimate):
        c = estimate.counts
        n = estimate.n
        pos = np.flatnonzero(c > 0)
        mu = n * estimate.q + n * (estimate.p - estimate.q) * f[pos]
        expr = cp.sum(cp.rel_entr(c[pos], mu))
        offset = float(np.sum(xlogy(c, c)) - c.sum() * np.log(n))
        return BuiltObjective(expr, multiplier=float(n), offset=offset)

    def per_value(self, estimate):
        from .separable import MultinomialSep

        self.check(estimate)
        return MultinomialSep(estimate)


@register_objective
class Binomial(_Likelihood):
    r"""Per-bit composite likelihood for unary / hash oracles (each value's support count is
    :math:`c_v \sim \mathrm{Binomial}(n, π_v)`, the values treated as independent):

    .. math::

        J(f) = -(1/n) Σ_v [c_v \log π_v + (n - c_v) \log(1 - π_v)], \quad π_v = q + (p - q) f_v.

    Scaled form: :math:`Σ_v \mathrm{rel\_entr}(c_v, nπ_v) + \mathrm{rel\_entr}(n - c_v, n(1 - π_v)) = n J + \mathrm{const}`: the binomial
    deviance, O(1) per value. Exponential cones.

    Solving: below d = ``policy.SQP_MIN_D`` (300) as this exponential-cone program (Clarabel → SCS);
    from there on ``Problem.solve()`` uses the sequential-QP route (:mod:`.sqp`), because Clarabel
    fails the cones from d ≈ 500 (measured) — the Solution's message says so. On the simplex every
    term is finite at :math:`f_v = 0` (:math:`π_v = q > 0`), so values driven to 0 need no clipping.

    Parameters
    ----------
    (none)
        Made with no arguments (``Problem`` makes it from its name).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("oue", 1.0, 4).estimate(np.array([50_000, 40_000, 20_000, 10_000]), 100_000)
    >>> sol = ldpopt.Problem(est, "binomial").solve()
    >>> sol.status, sol.f.round(4)
    ('optimal', array([0.7033, 0.2967, 0.    , 0.    ]))
    """

    name = "binomial"
    file_doc = "exact per-bit likelihood (unary encodings)"
    _binomial = True

    def build(self, f, x, scale, estimate):
        c = estimate.counts
        n = estimate.n
        p, q = estimate.p, estimate.q
        pos = np.flatnonzero(c > 0)
        neg = np.flatnonzero(c < n)
        # rel_entr(k, m) = k·(−log(m/k)): written with the ratio m/k ≈ 1 inside the log so the
        # exponential cones see O(1) numbers rather than counts ~n
        ratio_pos = (n * q + n * (p - q) * f[pos]) / c[pos]
        ratio_neg = (n * (1 - q) - n * (p - q) * f[neg]) / (n - c[neg])
        expr = -(c[pos] @ cp.log(ratio_pos)) - ((n - c[neg]) @ cp.log(ratio_neg))
        offset = float(np.sum(xlogy(c, c)) + np.sum(xlogy(n - c, n - c)) - estimate.d * n * np.log(n))
        return BuiltObjective(expr, multiplier=float(n), offset=offset)

    def per_value(self, estimate):
        from .separable import BinomialSep

        return BinomialSep(estimate)


@register_objective
class L1(Objective):
    r"""Least absolute deviations, :math:`J(f) = \lVert f - \tilde f \rVert_1` (the L1 variant of Lee et al., cited by Wang et al.
    beside CLS). An LP (a QP for the chain). Scaled form :math:`Σ |x - \tilde f/σ| = J/σ`. Not smooth: no gradient;
    its KKT conditions use the subgradient sign(f − f̃) ∈ [−1, 1].

    Parameters
    ----------
    (none)
        Made with no arguments (``Problem`` makes it from its name).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, "l1").solve()
    >>> sol.status, sol.f.round(4) + 0.0
    ('optimal', array([0.7285, 0.2715, 0.    , 0.    ]))
   
    >>> sol.not_unique != ""   # J is linear off its kinks: f is one optimum
    True
    """

    name = "l1"
    file_doc = "least absolute deviations ||f - f~||_1"
    absolute_deviations = True

    def build(self, f, x, scale, estimate):
        return BuiltObjective(cp.norm1(x - estimate.f_tilde / scale), multiplier=1.0 / scale)

    def value(self, f, estimate):
        return float(np.sum(np.abs(np.asarray(f, float) - estimate.f_tilde)))


#: the noise likelihood families (``NoiseSource.likelihood``) → the objective their −log likelihood is
_NOISE_FORMS = {"laplace": "l1", "gaussian": "cls"}


def _central_form(estimate) -> str:
    """``"l1"`` or ``"cls"``: which objective the noise's log-likelihood is, as its source declares
    (``estimate.noise.likelihood``: Laplace-type or Gaussian-type)."""
    form = _NOISE_FORMS.get(estimate.noise.likelihood or "")
    if form is None:
        raise ValueError(f"objective='central-mle' needs noise added to exact counts whose likelihood is Laplace- or "
                         f"Gaussian-type (Estimate.from_central), got oracle {estimate.oracle!r} "
                         f"(likelihood {estimate.noise.likelihood!r})")
    return form


@register_objective
class CentralMLE(Objective):
    r"""The exact likelihood of a central-noise histogram: maximise :math:`Σ_v \log P(Z = \tilde c_v - n f_v)` over the
    constraint set, Z the mechanism's noise (continuous relaxation: :math:`n f_v` is real, so the discrete
    mechanisms' log pmf is taken at real arguments through its closed form).

    For Laplace and discrete Laplace, −log P(Z = k) = |k|/b + const, so the problem is
    :math:`\min Σ_v |\tilde c_v - n f_v| = n \lVert f - \tilde f \rVert_1`: objective ``"l1"``. For the Gaussian and discrete Gaussian,
    :math:`-\log P = k^2/(2σ^2)` + const: objective ``"cls"``. The form is what the noise source declares
    (``estimate.noise.likelihood``, :meth:`resolve`), never its name; ``Problem`` then solves and
    certifies that objective.

    Parameters
    ----------
    (none)
        Made with no arguments (``Problem`` makes it from its name).

    References
    ----------
    Ghosh, Roughgarden & Sundararajan (STOC 2009) and Canonne, Kamath & Steinke (NeurIPS 2020) for the
    laws; the relaxation to real :math:`n f_v` is ldpopt's (the papers release counts, not a fit).

    Examples
    --------
    >>> import ldpopt
    >>> est = ldpopt.Estimate.from_central([503, -2, 251, 249], "discrete-laplace", 2.0, n=1000)
    >>> sol = ldpopt.Problem(est, "central-mle").solve()
    >>> sol.status, float(sol.f.sum().round(9)), bool(sol.f.min() >= 0)
    ('optimal', 1.0, True)
    """

    name = "central-mle"
    file_doc = "exact likelihood of a central-noise histogram (l1 or cls)"
    lazy_build = True

    def check(self, estimate):
        _central_form(estimate)

    def resolve(self, estimate):
        """``L1()`` or ``LeastSquares()``, the objective the noise's likelihood is for ``estimate``.

        See ``Objective.resolve``.

        Parameters
        ----------
        estimate : Estimate
            A central-noise estimate.

        Examples
        --------
        >>> import ldpopt
        >>> from ldpopt.problems.objectives.builtins import CentralMLE
        >>> CentralMLE().resolve(ldpopt.Estimate.from_central([60, 41], "discrete-gaussian", 3.0, n=100))
        LeastSquares()
        """
        return L1() if _central_form(estimate) == "l1" else LeastSquares()

    def build(self, f, x, scale, estimate):
        return self.resolve(estimate).build(f, x, scale, estimate)

    def per_value(self, estimate):
        return self.resolve(estimate).per_value(estimate)

    def value(self, f, estimate):
        return self.resolve(estimate).value(f, estimate)


@register_objective
class Posterior(Objective):
    r"""Project a posterior mean m onto the constraint set (NDSS 2020 PowerNS; Jia & Gong's Calibrate):

    .. math::

        J(f) = Σ_v (f_v - m_v)^2 / \mathrm{var}_v

    (``variance`` given), or :math:`J(f) = Σ_v (f_v - m_v)^2` (``variance=None``; PowerNS's Euclidean projection).

    ``mean``: length-d posterior mean (e.g. Power's Eq. 10 output). ``variance``: length-d (or scalar)
    posterior variance, every entry > 0. A QP. Scaled: :math:`Σ w_v (x_v - m_v/s)^2` with :math:`w = \bar v/\mathrm{var}`
    (:math:`\bar v` the mean variance; :math:`K = \bar v/s^2`) or w = 1 (:math:`K = 1/s^2`).

    Parameters
    ----------
    mean : array_like (d,)
        The posterior mean m.
    variance : float, array_like (d,) or None, default None
        The posterior variance, every entry > 0; None: unweighted.

    Raises
    ------
    ValueError
        ``mean`` missing, a variance ≤ 0 or not finite; at :meth:`check`, ``mean`` not of length d.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, "posterior", mean=[0.5, 0.3, 0.3, -0.1]).solve()
    >>> sol.status, sol.f.round(4)
    ('optimal', array([0.4667, 0.2667, 0.2667, 0.    ]))
    """

    name = "posterior"
    uses_mean = True
    lazy_build = True

    def __init__(self, mean, variance=None):
        if mean is None:
            raise ValueError("objective='posterior' needs mean= (the posterior mean to project)")
        self.mean = check_float_array(mean, "mean", min_length=2)
        if variance is None:
            self.variance = None
        else:
            v = np.asarray(variance, dtype=np.float64) if np.ndim(variance) else np.full(
                self.mean.shape[0], float(variance))
            v = check_float_array(v, "variance", length=self.mean.shape[0])
            if np.any(v <= 0):
                bad = int(np.flatnonzero(v <= 0)[0])
                raise ValueError(f"variance must be > 0 everywhere; entry {bad} is {v[bad]!r}")
            self.variance = v

    @classmethod
    def example(cls, estimate):
        r"""The estimate's f̃ clipped at 0 and normalised as the mean, the Eq. 7 variance :math:`σ^2` plus
        :math:`\tilde f^2` as the weights (an instance for the conformance checks).

        Parameters
        ----------
        estimate : Estimate
            The raw estimate.

        Returns
        -------
        Posterior

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> from ldpopt.problems.objectives.builtins import Posterior
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> obj = Posterior.example(est)
        >>> obj, round(float(obj.mean.sum()), 6)
        (Posterior(mean=<4>, weighted=True), 1.0)
        """
        m = np.maximum(estimate.f_tilde, 0.0) + 1.0 / estimate.d
        return cls(m / m.sum(), float(estimate.sigma) ** 2 + estimate.f_tilde**2)

    def check(self, estimate):
        if self.mean.shape[0] != estimate.d:
            raise ValueError(f"mean must have length d = {estimate.d}, got {self.mean.shape[0]}")

    def build(self, f, x, scale, estimate):
        r = x - self.mean / scale
        if self.variance is None:
            return BuiltObjective(cp.sum_squares(r), multiplier=1.0 / scale**2)
        # weights relative to the mean variance, so the Hessian is O(1) whatever the units of
        # ``variance`` (σ² ~ 1e-12 at n = 1e9 made w ~ 1e3 and the QP ill-scaled)
        vbar = float(np.mean(self.variance))
        w = np.sqrt(vbar / self.variance)
        return BuiltObjective(cp.sum_squares(cp.multiply(w, r)), multiplier=vbar / scale**2)

    def per_value(self, estimate):
        from .separable import Quadratic

        return Quadratic(self.mean, 1.0 if self.variance is None else 1.0 / self.variance, "posterior")

    def __repr__(self):
        return f"Posterior(mean=<{self.mean.shape[0]}>, weighted={self.variance is not None})"


def available() -> list[str]:
    """Names accepted by ``Problem(objective=...)``: the built-ins and every registered objective
    (:func:`~.registry.register_objective`).

    Returns
    -------
    list of str
        Sorted.

    Examples
    --------
    >>> from ldpopt.problems.objectives.builtins import available
    >>> {"cls", "weighted-mle", "l1"} <= set(available())
    True
    """
    return available_objectives()


def make_objective(objective, mean=None, variance=None) -> Objective:
    """Turn ``objective`` (a name, an :class:`Objective` or a callable) into an :class:`Objective`.

    Parameters
    ----------
    objective : str, Objective or callable
        A name of :func:`available`, an instance (returned as is), or ``func(f, estimate)`` (a
        :class:`UserObjective`).
    mean, variance : array_like or None, default None
        For ``"posterior"`` (and registered objectives with ``uses_mean``) only.

    Returns
    -------
    Objective

    Raises
    ------
    ValueError
        An unknown name, a registered class that needs arguments, or ``mean``/``variance`` given to
        an objective that does not use them.
    TypeError
        ``objective`` is none of the three.

    Examples
    --------
    >>> import cvxpy as cp
    >>> from ldpopt.problems.objectives.builtins import make_objective
    >>> make_objective("cls"), make_objective(lambda f, e: cp.sum_squares(f - e.f_tilde))
    (LeastSquares(), UserObjective('user'))
    """
    if isinstance(objective, Objective):
        obj = objective
    elif isinstance(objective, str):
        item = objective_factory(objective.lower())
        if item is None:
            raise ValueError(f"objective must be one of {available()} or a callable, got {objective!r}")
        if isinstance(item, Objective):
            obj = item
        elif item.uses_mean:
            obj = item(mean, variance)
        else:
            try:
                obj = item()
            except TypeError as exc:  # a registered class whose constructor needs arguments
                raise ValueError(f"objective {objective!r} cannot be made from its name alone ({exc}): pass "
                                 f"an instance, {item.__name__}(...)") from exc
    elif callable(objective):
        obj = UserObjective(objective)
    else:
        raise TypeError(f"objective must be a name, an Objective or a callable, got {type(objective).__name__}")
    if not obj.uses_mean and (mean is not None or variance is not None):
        raise ValueError(f"mean= and variance= are only used by objective='posterior', got objective={obj.name!r}")
    return obj
