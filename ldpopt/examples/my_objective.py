"""An objective of your own: a robust weighted least squares, the pseudo-Huber loss of the raw
estimate's standardised residuals (docs/extending.md).

Notes: docs/notes/extending.md, "ldpopt.examples.my_objective".
"""

import cvxpy as cp
import numpy as np

from ldpopt.problems import BuiltObjective, Objective, register_objective
from ldpopt.problems.objectives.separable import Separable

DELTA = 2.0  # in standard deviations


def standard_deviations(estimate):
    """s_v: the standard deviation of f~_v (Wang et al. Eq. 2) at max(f~_v, 0)."""
    p, q, n = estimate.p, estimate.q, estimate.n
    var = (q * (1 - q) + np.maximum(estimate.f_tilde, 0.0) * (p - q) * (1 - p - q)) / (n * (p - q) ** 2)
    return np.sqrt(np.maximum(var, 1e-300))


class RobustWLSTerms(Separable):
    """The per-value terms h_v, h_v', h_v'' and the argmin the structured solver evaluates."""

    name = "robust-wls"

    def __init__(self, centre, s, delta):
        self.m, self.s, self.delta = np.asarray(centre, float), np.asarray(s, float), float(delta)

    def _w(self, f):
        return (f - self.m) / (self.delta * self.s)

    def value(self, f):
        return self.delta**2 * (np.sqrt(1.0 + self._w(f) ** 2) - 1.0)

    def d1(self, f):
        return (f - self.m) / self.s**2 / np.sqrt(1.0 + self._w(f) ** 2)

    def d2(self, f):
        return (1.0 + self._w(f) ** 2) ** -1.5 / self.s**2

    def _interior(self, t, l, u, idx):
        # the root of h'(f) = -t (only asked where it lies inside (l, u), so |r| < 1 there)
        t, m, s = (t, self.m, self.s) if idx is None else (t[idx], self.m[idx], self.s[idx])
        r = -t * s / self.delta
        return m + self.delta * s * r / np.sqrt(1.0 - r**2)


@register_objective
class RobustWLS(Objective):
    """J(f) = sum_v delta^2 (sqrt(1 + ((f_v - f~_v) / (delta s_v))^2) - 1) (the module docstring)."""

    name = "robust-wls"
    file_doc = "pseudo-Huber loss of the standardised residuals (f - f~)/s, delta standard deviations"
    scaled = False      # build() receives f itself (scale 1): J is already O(1) per value
    lazy_build = True   # build() cannot fail: Problem may defer it

    def __init__(self, delta: float = DELTA):
        if not (isinstance(delta, (int, float)) and np.isfinite(delta) and delta > 0):
            raise ValueError(f"delta must be a finite number > 0, got {delta!r}")
        self.delta = float(delta)

    def build(self, f, x, scale, estimate):
        d, s = self.delta, standard_deviations(estimate)
        # delta^2 (sqrt(1 + w^2) - 1) = (delta / s) ||(delta s, z)||_2 - delta^2: the same J, DCP for cvxpy
        norms = cp.norm(cp.vstack([d * s, f - estimate.f_tilde]), 2, axis=0)
        return BuiltObjective(cp.sum(cp.multiply(d / s, norms)) - estimate.d * d * d)

    def per_value(self, estimate):
        return RobustWLSTerms(estimate.f_tilde, standard_deviations(estimate), self.delta)
