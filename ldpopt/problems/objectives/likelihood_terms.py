"""Per-value terms of the exact likelihoods (binomial, multinomial), for the sequential-QP route.
Notes: docs/notes/problems.md, "ldpopt.problems.objectives.likelihood_terms".
"""

from __future__ import annotations

import numpy as np

__all__ = ["LikelihoodTerms", "terms_for"]


class LikelihoodTerms:
    """Value change, gradient, diagonal Hessian (the structured solver's per-value h_v', h_v'':
    :mod:`.separable`) and domain of a separable exact likelihood."""

    def __init__(self, estimate, binomial: bool):
        from .separable import BinomialSep, MultinomialSep

        self.c = np.asarray(estimate.counts, dtype=np.float64)
        self.n = float(estimate.n)
        self.q = float(estimate.q)
        self.a = float(estimate.p) - float(estimate.q)
        self.binomial = binomial
        self.pos = self.c > 0  # log π term present
        self.neg = (self.n - self.c > 0) if binomial else np.zeros(self.c.shape[0], bool)  # log(1 − π)
        self._sep = (BinomialSep if binomial else MultinomialSep)(estimate)

    def pi(self, f: np.ndarray) -> np.ndarray:
        return self.q + self.a * f

    def gradient(self, f: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._sep.d1(f)

    def hessian(self, f: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._sep.d2(f)

    def in_domain(self, f: np.ndarray) -> bool:
        pi = self.pi(f)
        return bool(np.all(pi[self.pos] > 0) and np.all(pi[self.neg] < 1))

    def change(self, f: np.ndarray, delta: np.ndarray) -> float:
        """J(f + δ) − J(f), +inf when f + δ leaves the domain (f must be inside it)."""
        pi = self.pi(f)
        dpi = self.a * delta
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(self.pos, dpi / np.where(self.pos, pi, 1.0), 0.0)
            if np.any(rel <= -1.0):
                return np.inf
            total = -np.sum(self.c[self.pos] * np.log1p(rel[self.pos]))
            if self.binomial:
                rel1 = np.where(self.neg, -dpi / np.where(self.neg, 1.0 - pi, 1.0), 0.0)
                if np.any(rel1 <= -1.0):
                    return np.inf
                total -= np.sum((self.n - self.c[self.neg]) * np.log1p(rel1[self.neg]))
        total /= self.n
        return float(total) if np.isfinite(total) else np.inf

    def domain_bounds(self, f: np.ndarray, fraction: float):
        """Per-value bounds keeping the QP step a fraction of the way from f to the domain's edge:
        π ≥ (1 − fraction)·π(f) where c > 0 and 1 − π ≥ (1 − fraction)·(1 − π(f)) where c < n.
        Returns (indices, lower, upper) in f units with ±inf where a side is free."""
        pi = self.pi(f)
        lo_pi = np.where(self.pos, (1.0 - fraction) * pi, -np.inf)
        hi_pi = np.where(self.neg, 1.0 - (1.0 - fraction) * (1.0 - pi), np.inf)
        if self.a > 0:
            lo, hi = (lo_pi - self.q) / self.a, (hi_pi - self.q) / self.a
        else:
            lo, hi = (hi_pi - self.q) / self.a, (lo_pi - self.q) / self.a
        return lo, hi


def terms_for(objective, estimate) -> LikelihoodTerms | None:
    """The per-value terms of an exact likelihood (what the objective's ``likelihood_terms`` gives),
    None for any other objective."""
    get = getattr(objective, "likelihood_terms", None)
    return get(estimate) if callable(get) else None
