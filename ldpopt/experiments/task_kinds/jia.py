"""Task kinds for Jia & Gong, *Calibrate* (INFOCOM 2019), §III-B and §IV.

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.jia`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from scipy.stats import norm

from ... import methods as _methods
from ..registry import kind
from ..toolkit import load_dataset, method_names, params, simulate

__all__ = [
    "JIA_METHODS",
    "NOISE_EDGES",
    "eq14_variance",
    "hh_confusion",
    "method_spec",
    "noise_rows",
    "significance_threshold",
]

BETA = 0.05  # Eq. 22: "we set β = 0.05 as suggested by prior work"

# label -> (registered method, params). OUE-Zero is Base-Cut with α = β = 0.05 (Eq. 22).
JIA_METHODS: dict[str, tuple[str, dict]] = {
    "base": ("base", {}),
    "zero": ("base-cut", {"alpha": BETA}),
    "calibrate": ("calibrate", {"prior": "power-law", "fit": "mle"}),
    "calibrate-mv": ("calibrate", {"prior": "power-law", "fit": "mean-variance"}),
    "calibrate-gauss": ("calibrate", {"prior": "gaussian", "fit": "mle"}),
    # §IV-B: "further resetting the frequencies smaller than the significance threshold in
    # OUE-Calibrate has a negligible impact on the estimation errors"
    "calibrate-zero": ("calibrate", {"prior": "power-law", "fit": "mle", "_then_cut": True}),
}

# standardised noise z = s / √Var(Eq. 14): 0.25-wide bins on [-6, 6] (plus two open tail bins)
NOISE_EDGES = np.concatenate(([-np.inf], np.arange(-6.0, 6.0001, 0.25), [np.inf]))
_QUANTILES = (0.001, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 0.999)




def _labels(task, prm: dict, over: dict | None) -> list[str]:
    """Method labels of a task; with ``params.slow_reps = k`` the slow (Bayesian) ones run on
    repetitions 0..k−1 only (their rows are simply absent for later repetitions)."""
    labels = method_names(task)
    k = prm.get("slow_reps")
    if k is None or task.rep < int(k):
        return labels
    slow = set(_methods.names("fitted"))
    return [lb for lb in labels if method_spec(lb, over)[0] not in slow]


def method_spec(label: str, overrides: dict | None = None) -> tuple[str, dict]:
    """(registered method name, parameters) of a method label (see docs/experiments.md)."""
    if overrides and label in overrides:
        spec = dict(overrides[label])
        if "method" not in spec:
            raise ValueError(f"params.method_specs.{label} must name a 'method'")
        name = spec.pop("method")
        return name, spec
    if label in JIA_METHODS:
        name, spec = JIA_METHODS[label]
        return name, dict(spec)
    return label, {}


def eq14_variance(est) -> float:
    """Var(s_i) = n q*(1 − q*)/(p* − q*)² (Jia & Gong Eq. 14), count scale."""
    return est.n * est.q * (1.0 - est.q) / (est.p - est.q) ** 2


def significance_threshold(est, beta: float = BETA) -> float:
    """Φ⁻¹(1 − β/d)·√Var (Jia & Gong Eq. 22), count scale, with Var of Eq. 14.

    Equals n × :func:`ldpopt.methods.baseline.cut_threshold` (α = β), so OUE-Zero (Base-Cut, α = β)
    zeroes exactly the estimates below it.
    """
    return float(ndtri(1.0 - beta / est.d) * np.sqrt(eq14_variance(est)))


def _apply(est, label: str, overrides: dict | None, cache: dict | None = None) -> np.ndarray:
    """A method's output on the count scale (f'·n); ``cache`` (per task) shares one Calibrate run
    between "calibrate" and "calibrate-zero"."""
    name, spec = method_spec(label, overrides)
    then_cut = bool(spec.pop("_then_cut", False))
    key = (name, tuple(sorted(spec.items())))
    if cache is not None and key in cache:
        f = cache[key]
    else:
        f = _methods.postprocess(est, name, **spec) * est.n
        if cache is not None:
            cache[key] = f
    if then_cut:  # the Eq. 22 cut applied after the method (kept at ≥ T, as Base-Cut does)
        f = np.where(f >= significance_threshold(est), f, 0.0)
    return f


# -- noise-distribution -------------------------------------------------------------------------
def noise_rows(noise: np.ndarray, var_pred: float, extra_var: float | None = None) -> list[dict]:
    """Tidy rows describing one trial's noise vector against N(0, var_pred) (Eq. 13–14).

    Scalars: predicted/fitted mean and variance (the fitted Gaussian is the sample mean and the 1/d
    sample variance, i.e. its maximum-likelihood fit, as in the paper's "fitted Gaussian"), the
    mean's z-score against its standard error √(var_pred/d), skewness, excess kurtosis, the
    Kolmogorov–Smirnov distance to the predicted Gaussian; standardised quantiles; and a histogram
    of z = s/√var_pred on :data:`NOISE_EDGES` as a density (bin rows carry ``bin_lo``/``bin_hi``).
    """
    d = noise.shape[0]
    sd = np.sqrt(var_pred)
    mean = float(noise.mean())
    var = float(noise.var())
    c = noise - mean
    skew = float(np.mean(c ** 3) / var ** 1.5) if var > 0 else float("nan")
    kurt = float(np.mean(c ** 4) / var ** 2 - 3.0) if var > 0 else float("nan")
    z = np.sort(noise / sd)
    cdf = norm.cdf(z)
    ks = float(max(np.max(np.arange(1, d + 1) / d - cdf), np.max(cdf - np.arange(d) / d)))
    rows = [
        {"metric": "predicted_mean", "value": 0.0},
        {"metric": "predicted_var", "value": float(var_pred)},
        {"metric": "fitted_mean", "value": mean},
        {"metric": "fitted_var", "value": var},
        {"metric": "var_ratio", "value": var / var_pred},
        {"metric": "mean_z", "value": mean / np.sqrt(var_pred / d)},
        {"metric": "skewness", "value": skew},
        {"metric": "excess_kurtosis", "value": kurt},
        {"metric": "ks_distance", "value": ks},
    ]
    if extra_var is not None:
        rows.append({"metric": "exact_pooled_var", "value": float(extra_var)})
    for qq, v in zip(_QUANTILES, np.quantile(z, _QUANTILES)):
        rows.append({"metric": "z_quantile", "q": float(qq), "value": float(v),
                     "predicted": float(ndtri(qq))})
    hist, _ = np.histogram(z, bins=NOISE_EDGES)
    widths = np.diff(NOISE_EDGES)
    for lo, hi, h, w in zip(NOISE_EDGES[:-1], NOISE_EDGES[1:], hist, widths):
        dens = h / d / w if np.isfinite(w) else h / d  # open tail bins: a probability
        rows.append({"metric": "z_hist", "bin_lo": float(lo), "bin_hi": float(hi), "value": float(dens),
                     "predicted": float((norm.cdf(hi) - norm.cdf(lo)) / (w if np.isfinite(w) else 1.0))})
    return rows


@kind("noise-distribution", oracle_params=True)
def noise_distribution(task) -> list[dict]:
    """Jia & Gong §III-B / Fig. 4: the noise s_i = f̂_i − f_i (counts) of one trial vs N(0, Eq. 14).

    ``method`` is ``"noise"`` on every row. Eq. 14 drops the f-dependent term of the exact per-item
    variance; ``exact_pooled_var`` is the exact mean_i Var(s_i) (Wang et al. Eq. 2 averaged over
    items), so the two can be told apart (for OUE they differ by Σ_i f_i(p−q)(1−p−q)/(d(p−q)²), tiny
    when n/d is small relative to Var).
    """
    ds = load_dataset(task.dataset)
    est = simulate(task, ds.counts, ds.d, task.rng())
    noise = est.f_tilde * est.n - ds.counts
    exact = float(np.mean(est.variance(ds.counts / est.n)) * est.n ** 2)
    rows = noise_rows(noise, eq14_variance(est), exact)
    for r in rows:
        r["method"] = "noise"
    return rows


# -- estimation-error -----------------------------------------------------------------------------
@kind("estimation-error", oracle_params=True)
def estimation_error(task) -> list[dict]:
    """Jia & Gong Eq. 5 / Fig. 7: estimation error (1/d) Σ_i (f'_i − f_i)², counts.

    Rows: ``mse`` (count scale, Eq. 5 before the average over runs), ``mse_freq`` (= mse/n², the
    frequency scale the rest of ldpopt uses) and ``mean_error`` ((1/d) Σ (f'_i − f_i), a bias
    diagnostic: Calibrate shrinks, OUE-Zero truncates).
    """
    ds = load_dataset(task.dataset)
    est = simulate(task, ds.counts, ds.d, task.rng())
    prm = params(task)
    over = prm.get("method_specs")
    f = ds.counts.astype(np.float64)
    rows: list[dict] = []
    cache: dict[tuple, np.ndarray] = {}  # _apply's shared method outputs
    for label in _labels(task, prm, over):
        err = _apply(est, label, over, cache) - f
        mse = float(np.mean(err ** 2))
        rows.append({"method": label, "metric": "mse", "value": mse})
        rows.append({"method": label, "metric": "mse_freq", "value": mse / est.n ** 2})
        rows.append({"method": label, "metric": "mean_error", "value": float(np.mean(err))})
    return rows


# -- heavy-hitters --------------------------------------------------------------------------------
def hh_confusion(true_counts, est_counts, threshold: float) -> tuple[int, int, int]:
    """(TP, FP, FN) of Jia & Gong §II-C at ``threshold`` (counts).

    TP: true > T and estimate > T; FP: true ≤ T and estimate > T; FN: true > T and estimate ≤ T.
    The paper says "larger"/"smaller" and is silent on ties; an item exactly at T counts as not
    heavy, on both sides (strict ">" everywhere).
    """
    t = np.asarray(true_counts) > threshold
    e = np.asarray(est_counts) > threshold
    return int(np.sum(t & e)), int(np.sum(~t & e)), int(np.sum(t & ~e))


def _prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Eq. 6–8. 0/0 is NaN (no item estimated heavy → precision undefined; no true heavy hitter →
    recall undefined); the F-score is 0 when precision + recall = 0 (both defined)."""
    prec = tp / (tp + fp) if tp + fp else float("nan")
    rec = tp / (tp + fn) if tp + fn else float("nan")
    if np.isnan(prec) or np.isnan(rec):
        f1 = float("nan")
    else:
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return prec, rec, f1


@kind("heavy-hitters", oracle_params=True)
def heavy_hitters(task) -> list[dict]:
    """Jia & Gong Eq. 6–8 / Fig. 5, 6 (vs threshold at ε = 4) and Fig. 8, 9 (vs ε at the
    significance threshold).

    ``params.threshold_ratios`` (default ``[1.0]``): thresholds as multiples of the significance
    threshold of Eq. 22 (β = 0.05, Var of Eq. 14) of this task's oracle, ε and n — Fig. 8/9 use ratio
    1 ("the threshold is chosen as the corresponding significance threshold for each privacy
    budget"); Fig. 5/6 sweep absolute thresholds around it (the paper's x-axis values are not in the
    text, and a ratio transfers to a stand-in dataset of another n). ``params.thresholds`` adds
    absolute count thresholds. Rows: precision, recall, f_score, tp, fp, fn, n_true (true heavy
    hitters) with columns ``threshold`` (counts) and ``threshold_ratio`` (NaN for absolute ones).
    """
    ds = load_dataset(task.dataset)
    est = simulate(task, ds.counts, ds.d, task.rng())
    prm = params(task)
    over = prm.get("method_specs")
    t_sig = significance_threshold(est)
    ths = [(float(r) * t_sig, float(r)) for r in prm.get("threshold_ratios", [1.0])]
    ths += [(float(t), float("nan")) for t in prm.get("thresholds", [])]
    f = ds.counts
    rows: list[dict] = []
    cache: dict[tuple, np.ndarray] = {}  # _apply's shared method outputs
    for label in _labels(task, prm, over):
        fp_counts = _apply(est, label, over, cache)
        for t, ratio in ths:
            tp, fp, fn = hh_confusion(f, fp_counts, t)
            prec, rec, f1 = _prf(tp, fp, fn)
            base = {"method": label, "threshold": t, "threshold_ratio": ratio}
            for m, v in (("precision", prec), ("recall", rec), ("f_score", f1), ("tp", tp), ("fp", fp),
                         ("fn", fn), ("n_true", tp + fn)):
                rows.append({**base, "metric": m, "value": float(v)})
    return rows
