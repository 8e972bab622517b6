"""Wiener deconvolution of an ordered domain: DW, IIW, AMRP and DW on the simplex (Fang, Chen, Liu, Gao,
"LDP Frequency Estimation Based on Convolution Framework", IEEE S&P 2023).

Notes: docs/notes/python.md, "ldpopt.methods.wiener"."""

from __future__ import annotations

import numbers

import numpy as np

from ..estimate import Estimate
from ..estimate import check_estimate as _check_estimate
from .normalize import _project_rows, project_simplex
from .registry import ProblemStatement, register

__all__ = ["amrp", "dw", "dw_simplex", "iiw", "noise_power", "transfer"]

_REFERENCE = "Fang, Chen, Liu, Gao, IEEE S&P 2023 (convolution framework, §IV-§V); code SEUNICK/LDP"


def _ordered(estimate) -> Estimate:
    est = _check_estimate(estimate)
    if not est.ordered:
        raise ValueError("estimate: the Wiener methods assume an ordered domain; declare one with "
                         "ordered=True (Estimate.as_ordered) if the values' index order is meaningful")
    return est


def _count(value, name: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return int(value)


def transfer(estimate: Estimate) -> np.ndarray:
    """The real FFT of the transfer vector h = (p, q, …, q): H_0 = p + (d − 1)q, H_k = p − q.

    Parameters
    ----------
    estimate : Estimate

    Returns
    -------
    ndarray, shape (d // 2 + 1,)

    Examples
    --------
    >>> from ldpopt import Estimate
    >>> from ldpopt.methods.wiener import transfer
    >>> transfer(Estimate.from_frequencies([0.5, 0.3, 0.2, 0.0], 100, epsilon=1.0, p=0.6, q=0.2)).round(3)
    array([1.2, 0.4, 0.4])
    """
    est = _check_estimate(estimate)
    H = np.full(est.d // 2 + 1, est.p - est.q)
    H[0] = est.p + (est.d - 1) * est.q
    return H


def noise_power(estimate: Estimate) -> float:
    """P_n = Σ_v Var(g_v) of the support fractions g = c/n at a distribution (Σ f = 1): the noise
    power of every Fourier coefficient of g (the authors' ``get_est_noise_psd``), plus the oracle's
    ``extra_variance`` on the same scale.

    Parameters
    ----------
    estimate : Estimate

    Returns
    -------
    float
        d (p − q)² Var(f̃_v at f = 1/d) = (d q(1 − q) + (p − q)(1 − p − q)) / n (+ extra).

    Examples
    --------
    >>> from ldpopt import Estimate
    >>> from ldpopt.methods.wiener import noise_power
    >>> est = Estimate.from_frequencies([0.5, 0.3, 0.2, 0.0], 100, epsilon=1.0, p=0.6, q=0.2)
    >>> round(noise_power(est) * 100, 6)  # 4 * 0.16 + 0.4 * 0.2
    0.72
    """
    est = _check_estimate(estimate)
    return float(est.d * (est.p - est.q) ** 2 * est.variance(1.0 / est.d))


def _spectra(est: Estimate, C: np.ndarray):
    """(G, H, P_n) for count rows C (B, d): G = rfft(C/n) per row."""
    return np.fft.rfft(C / est.n, axis=-1), transfer(est), noise_power(est)


def _filter(G: np.ndarray, H: np.ndarray, S: np.ndarray, Pn: float) -> np.ndarray:
    """The Wiener filter's output conj(H) S G / (|H|² S + P_n); 0 where S = 0 (the prior puts no
    power there)."""
    # written as H G / (|H|² + P_n/S): the same number, with no product S·G to overflow at extreme ε;
    # where P_n/S overflows (S ≪ P_n) the gain's limit 0 is exact, so that overflow is not a warning
    with np.errstate(over="ignore", divide="ignore"):
        ratio = np.divide(Pn, S, out=np.full(np.shape(S), np.inf), where=S > 0)
        den = H * H + ratio
        return np.where((S > 0) & np.isfinite(den), H * G / np.where(np.isfinite(den) & (den > 0), den, 1.0), 0.0)


def _dw_rows(est: Estimate, C: np.ndarray) -> np.ndarray:
    G, H, Pn = _spectra(est, C)
    S = (G * G.conj()).real / (H * H)
    return np.fft.irfft(_filter(G, H, S, Pn), n=est.d, axis=-1)


def _iiw_rows(est: Estimate, C: np.ndarray, iterations: int) -> np.ndarray:
    G, H, Pn = _spectra(est, C)
    S = (G * G.conj()).real / (H * H)
    F = _filter(G, H, S, Pn)
    for _ in range(iterations - 1):  # over filters, not over values: each step is O(d) vectorised
        post_var = np.where(S > 0, Pn * S / np.where(H * H * S + Pn > 0, H * H * S + Pn, 1.0), 0.0)
        S = (F * F.conj()).real + post_var
        F = _filter(G, H, S, Pn)
    return np.fft.irfft(F, n=est.d, axis=-1)


def _amrp_rows(est: Estimate, C: np.ndarray, permutations: int, rng) -> np.ndarray:
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    total = _dw_rows(est, C)
    for _ in range(permutations - 1):  # over orderings; each DW is one batched FFT
        perm = gen.permutation(est.d)
        back = np.empty_like(perm)
        back[perm] = np.arange(est.d)
        total += _dw_rows(est, C[..., perm])[..., back]
    return total / permutations


def _counts_of(est: Estimate, F: np.ndarray) -> np.ndarray:
    return est.n * (est.q + (est.p - est.q) * np.asarray(F, dtype=np.float64))


def _check_rng(rng):
    if rng is None or isinstance(rng, bool):
        raise ValueError(f"rng must be an int seed or a numpy Generator (the method is deterministic "
                         f"for a seed), got {rng!r}")
    if not isinstance(rng, (numbers.Integral, np.random.Generator)):
        raise ValueError(f"rng must be an int seed or a numpy Generator, got {type(rng).__name__}")
    return rng


@register(
    "dw",
    description="Direct Wiener filter of the deconvolved estimate (plug-in stationary Gaussian prior)",
    non_negative="no", sums_to_one="no", order_preserving="no",
    complexity="O(d log d)",
    reference=_REFERENCE + " (DW)",
    notes="Shrinks every Fourier coefficient by $|G_k|^2/(|G_k|^2 + P_n)$: a smoother, so negative values "
          r"and order changes are possible; $\sum f = 1/(1 + P_n)$ for GRR (the DC term shrinks too).",
    label="DW", family="closed-form", needs_order=True,
    batched=lambda estimate, F: _dw_rows(_ordered(estimate), _counts_of(estimate, F)),
)
def dw(estimate: Estimate) -> np.ndarray:
    """DW (Fang et al. S&P 2023, the direct Wiener filter; the authors' ``direct_wiener`` with
    ``f0=None``): the posterior mean under the stationary Gaussian prior with the raw estimate's
    periodogram as its spectrum (module notes). Needs ``estimate.ordered``.
    """
    est = _ordered(estimate)
    return _dw_rows(est, np.asarray(est.counts, dtype=np.float64))


@register(
    "iiw",
    param_examples={"iterations": 3},
    description="Improved iterative Wiener filter: re-estimate the prior spectrum from the filtered output",
    non_negative="no", sums_to_one="no", order_preserving="no",
    complexity="O(T d log d), T = iterations",
    reference=_REFERENCE + " (IIW)",
    notes="As DW; each step sets the prior spectrum to the posterior second moment |F̂|² + S·N/(S + N).",
    label="IIW", family="closed-form", needs_order=True,
    batched=lambda estimate, F, iterations=5: _iiw_rows(_ordered(estimate), _counts_of(estimate, F),
                                                        _count(iterations, "iterations", 1)),
)
def iiw(estimate: Estimate, iterations: int = 5) -> np.ndarray:
    """IIW (Fang et al. S&P 2023; the authors' ``improved_iterative_wiener`` with ``f0=None``).

    Parameters
    ----------
    iterations : int, default 5
        Filters in all, >= 1 (1 is DW); the authors' ``iter_time``.
    """
    est = _ordered(estimate)
    return _iiw_rows(est, np.asarray(est.counts, dtype=np.float64), _count(iterations, "iterations", 1))


@register(
    "amrp",
    param_examples={"permutations": 3, "rng": 1},
    description="Average of DW over the declared order and random reorderings of the domain",
    non_negative="no", sums_to_one="no", order_preserving="no",
    complexity="O(T d log d), T = permutations",
    reference=_REFERENCE + " (AMRP)",
    notes="As DW; the random orderings come from rng (seeded: deterministic).",
    label="AMRP", family="closed-form", needs_order=True,
    batched=lambda estimate, F, permutations=10, rng=0: _amrp_rows(
        _ordered(estimate), _counts_of(estimate, F), _count(permutations, "permutations", 1), _check_rng(rng)),
)
def amrp(estimate: Estimate, permutations: int = 10, rng=0) -> np.ndarray:
    """AMRP (Fang et al. S&P 2023; the authors' ``average_multiple_random_permuted``).

    Parameters
    ----------
    permutations : int, default 10
        Orderings averaged, >= 1 (the declared one plus ``permutations − 1`` random ones); the
        authors' ``map_time``.
    rng : int or numpy.random.Generator, default 0
        Source of the random orderings (a seed makes the method deterministic).
    """
    est = _ordered(estimate)
    return _amrp_rows(est, np.asarray(est.counts, dtype=np.float64), _count(permutations, "permutations", 1),
                      _check_rng(rng))


def _dw_simplex_instance(est: Estimate) -> dict:
    """DW-simplex's problem on ``est``: the Euclidean projection of DW's output onto the simplex."""
    mean = dw(est)
    return {"objective": "posterior", "mean": mean, "closed": project_simplex(mean, 1.0)}


@register(
    "dw-simplex",
    description="DW, then the Euclidean projection onto the probability simplex (consistent)",
    non_negative="yes", sums_to_one="yes", order_preserving="no",
    complexity="O(d log d) + expected O(d)",
    reference=_REFERENCE + " (DW); Wang et al. arXiv §3.3 (Norm-Sub)",
    notes=r"Consistent: $f ≥ 0$, $\sum f = 1$. Order as DW (a smoother).",
    label="DW-simplex", family="closed-form", needs_order=True,
    derived_from=("dw", lambda f_dw: project_simplex(f_dw, 1.0)),
    batched=lambda estimate, F: _project_rows(_dw_rows(_ordered(estimate), _counts_of(estimate, F))),
    problem=ProblemStatement("posterior", "DW-simplex is the Euclidean projection of DW's posterior mean onto the "
                             "simplex (Fang et al. S&P 2023 DW, then Norm-Sub)", _dw_simplex_instance),
)
def dw_simplex(estimate: Estimate) -> np.ndarray:
    """DW followed by Norm-Sub (:func:`~ldpopt.methods.normalize.project_simplex`): the consistent
    Wiener estimate (non-negative, sums to one)."""
    return project_simplex(dw(estimate), 1.0)
