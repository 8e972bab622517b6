"""``ldpopt.plan`` (:func:`plan`): the expected error of every oracle and method before any data are collected, and the
number of users a target needs.

Closed forms where they exist (Base's and Norm's variance, exact from the oracle's p, q and covariance
at the prior's frequencies), a re-simulation from the prior where they do not (the oracle's exact-in-law
count sampler, the method applied, the loss of :func:`ldpopt.recommend.losses`): the machinery of
:func:`ldpopt.choose`, run on a prior instead of on a fit of collected data.

Notes: docs/notes/plan.md."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from . import oracles as _oracles
from ._validation import as_generator, check_delta, check_domain_size, check_epsilon
from .estimate import Estimate
from .privacy import central as _central
from .privacy.central import CentralNoise
from .privacy.statement import DEFAULT_DELTA  # re-exported: the δ a Gaussian-type mechanism is calibrated at by default
from .recommend import losses, records
from .uncertainty.analytic import line_of, query_variance_of
from .uncertainty.fit import population
from .uncertainty.queryspec import Query, parse_query, random_subsets
from .uncertainty.resample import apply_batch, draw_counts

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFAULT_DELTA", "DESIGN_OPTIONS", "REFINE_STEPS", "ROW_FAMILIES", "SAMPLE_P90", "SHAPES", "Plan", "calibrate_scale",
           "central_closed_form", "closed_form", "plan", "prior_histogram", "simulate"]

#: the named prior shapes :func:`prior_histogram` reads (a real dataset's name is also accepted)
SHAPES = ("uniform", "zipf:S", "beta:A,B", "tied:K")

#: the smallest and largest n the search for a target's n walks (2^(j/2) for j in this range)
_J_MIN, _J_MAX = 2, 80            # n from 2 to 2^40 ≈ 1.1e12
#: refinements of the target's n past the grid's interpolation: each simulates the candidate n itself
#: with ``n_repeats`` draws and moves the bracket, until the loss there is within 1 SE of the target
REFINE_STEPS = 6
#: measured by benchmarks/bench_plan.py (n = 10⁵, 7 oracles, ε 0.5–4, d 100 and 1000, 8 truths): the 90th
#: percentile of |predicted/simulated − 1| (for hh: |difference| of 1 − F1) when the prior is an add-one
#: smoothed public sample of 2,000 values of the truth, per method family and query kind; a plan from a
#: sample says it in each row's note
SAMPLE_P90 = {
    ("unbiased", "full"): 0.031, ("unbiased", "topk"): 0.14, ("unbiased", "subsets"): 0.097, ("unbiased", "hh"): 0.074,
    ("simplex", "full"): 0.22, ("simplex", "topk"): 0.35, ("simplex", "subsets"): 0.26, ("simplex", "hh"): 0.10,
    ("clipping", "full"): 0.16, ("clipping", "topk"): 0.38, ("clipping", "subsets"): 0.34, ("clipping", "hh"): 0.073,
    ("rescaling", "full"): 0.38, ("rescaling", "topk"): 0.60, ("rescaling", "subsets"): 0.38, ("rescaling", "hh"): 0.074,
}
_FAMILY = {"base": "unbiased", "norm": "unbiased", "norm-sub": "simplex", "mle-apx": "simplex", "norm-hyb": "simplex",
           "base-pos": "clipping", "base-cut": "clipping", "norm-mul": "rescaling", "norm-cut": "rescaling"}
#: a simulated row's note: the Monte-Carlo SE above this share of the estimate
_LOOSE_SE = 0.05
#: a target row's note: the local log-log slope of the loss in n farther than this from −1 (1/n scaling;
#: −2 for central noise at a fixed scale)
_LOOSE_SLOPE = 0.25


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _shape(spec: str, d: int) -> tuple[np.ndarray, str]:
    from . import datasets

    head, _, rest = spec.strip().lower().partition(":")
    try:
        if head in ("uniform", "flat") and not rest:
            return np.full(d, 1.0 / d), "uniform"
        if head == "zipf":
            s = float(rest) if rest else 1.5
            if not (np.isfinite(s) and s > 0):
                raise ValueError
            return datasets.zipf_probabilities(d, s), f"zipf:{s:g}"
        if head == "beta":
            a, b = (float(x) for x in rest.split(",")) if rest else (50.0, 2.0)
            if not (np.isfinite(a) and np.isfinite(b) and a > 0 and b > 0):
                raise ValueError
            return datasets.beta_probabilities(d, a, b), f"beta:{a:g},{b:g}"
        if head == "tied":
            k = int(rest)
            if not 1 <= k <= d:
                raise ValueError
            f = np.full(d, 0.5 / max(d - k, 1)) if k < d else np.zeros(d)
            f[:k] = 0.5 / k if k < d else 1.0 / d
            return f / f.sum(), f"tied:{k}"
    except ValueError:
        raise ValueError(f"prior {spec!r}: the shape's parameters are malformed or out of range (zipf:S with "
                         f"S > 0, beta:A,B with A, B > 0, tied:K with 1 <= K <= d)") from None
    names = datasets.available()
    real = set(names["name"][names["present"].astype(bool) & ~names["kind"].isin(["synthetic", "missing"])])
    key = spec.strip().lower().replace("_", "-")
    if key in real:
        counts = np.asarray(datasets.load(key).counts, dtype=np.float64)
        c = np.sort(counts)[::-1]
        how = f"dataset {key} (d = {c.size})"
        if c.size >= d:
            how += f", its {d} most frequent values renormalised" if c.size > d else ""
            c = c[:d]
        else:
            c = np.r_[c, np.zeros(d - c.size)]
            how += f", padded with {d - counts.size} values of frequency 0"
        return c / c.sum(), how
    raise ValueError(f"prior must be a histogram of length d, ('sample', values), one of {list(SHAPES)} or a "
                     f"real dataset's name ({sorted(real)}), got {spec!r}")


def prior_histogram(prior, d: int) -> tuple[np.ndarray, str]:
    """The prior's frequencies f (length d, summing to 1) and one phrase saying what they are.

    Parameters
    ----------
    prior : None, str, array_like or ("sample", values)
        None: uniform (the shape on which post-processing gains least: a conservative plan for the
        methods other than Base, whose full-domain MSE does not depend on the shape); a histogram of
        length d (counts or frequencies, >= 0, not all 0); ``"uniform"``; ``"zipf:S"`` (S > 0);
        ``"beta:A,B"`` (Beta(A, B) bucketised into d bins, arXiv App. C.1); ``"tied:K"`` (K values tied
        at the head holding half the mass, the rest spread evenly); a real dataset's name
        (:func:`ldpopt.datasets.available`: its d most frequent values renormalised, or padded with
        zeros where its domain is smaller than d); or ``("sample", values)``: a small public sample of
        values in [0, d), made a histogram with add-one (Laplace) smoothing, so a value the sample
        missed keeps a small mass.
    d : int
        Domain size, >= 2.

    Returns
    -------
    f : ndarray, shape (d,)
    how : str

    Raises
    ------
    ValueError
        If the prior is none of the above, its length is not d, or it has a negative, non-finite or
        all-zero entry.

    References
    ----------
    Add-one smoothing: Laplace's rule of succession (Manning, Raghavan & Schütze, *Introduction to
    Information Retrieval*, 2008, §11.3.2, Eq. 11.7).

    Examples
    --------
    >>> from ldpopt.planning import prior_histogram
    >>> f, how = prior_histogram("zipf:1.5", 4)
    >>> f.round(3), how
    (array([0.598, 0.212, 0.115, 0.075]), 'zipf:1.5')
    >>> prior_histogram(("sample", [0, 0, 1]), 3)[0]
    array([0.5       , 0.33333333, 0.16666667])
    """
    d = check_domain_size(d, "d")
    if prior is None:
        return np.full(d, 1.0 / d), "uniform (no prior given)"
    if isinstance(prior, str):
        return _shape(prior, d)
    if isinstance(prior, tuple) and len(prior) == 2 and isinstance(prior[0], str):
        if prior[0] != "sample":
            raise ValueError(f"prior: a tuple must be ('sample', values), got ({prior[0]!r}, ...)")
        v = np.asarray(prior[1])
        if v.ndim != 1 or v.size == 0 or v.dtype.kind not in "iu" or v.min() < 0 or v.max() >= d:
            raise ValueError(f"prior: a sample must be a non-empty 1-D array of integers in [0, {d})")
        c = np.bincount(v.astype(np.int64), minlength=d) + 1.0
        return c / c.sum(), f"a public sample of {v.size} values, add-one smoothed"
    try:
        h = np.asarray(prior, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"prior must be a histogram, a shape name or ('sample', values), got "
                         f"{type(prior).__name__}") from None
    if h.ndim != 1 or h.shape[0] != d:
        raise ValueError(f"prior: a histogram must have length d = {d}, got shape {h.shape}")
    if not np.all(np.isfinite(h)) or np.any(h < 0) or h.sum() <= 0:
        raise ValueError("prior: a histogram must be finite, >= 0 and not all 0")
    return h / h.sum(), "the given histogram"


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Real):
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    x = float(n)
    if not math.isfinite(x) or x <= 0 or not x.is_integer():
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if x > 2.0 ** 53:  # past it, user counts are not exact in float64 and n·f leaves int64's range
        raise ValueError(f"n must be at most 2^53 = {2 ** 53:,} (counts exact in float64), got {n!r}")
    return int(x)


def _check_oracles(names, epsilon: float, d: int) -> list:
    if names is None:
        names = _oracles.available()
    elif isinstance(names, str):
        names = [names]
    out = []
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"oracles must be registry names, got {name!r}")
        cls = _oracles.oracle_class(name)
        if cls.longitudinal:
            raise ValueError(f"oracles: {name!r} is longitudinal (several rounds of the same users); plan one-shot "
                             f"oracles")
        orc = _oracles.get(name, epsilon, d)
        if not orc.p - orc.q > 0:  # ε so small that p and q are one float: no estimator exists
            raise ValueError(f"epsilon = {epsilon:g} is too small for oracle {name!r} at d = {d}: p and q are equal "
                             f"in float64, so nothing can be estimated (a larger epsilon)")
        out.append(orc)
    if not out:
        raise ValueError("oracles must name at least one oracle")
    return out


def _check_queries(queries, d: int) -> list[Query]:
    import scipy.sparse as sp

    if queries is None or isinstance(queries, (str, Query, np.ndarray)) or sp.issparse(queries):
        queries = [queries]
    qs: list[Query] = []
    for spec in queries:
        matrix = isinstance(spec, np.ndarray) or sp.issparse(spec) or (isinstance(spec, Query) and spec.kind == "given")
        if not (isinstance(spec, (str, Query)) or spec is None or matrix):
            raise ValueError(f"queries must be strings ('full', 'topk:K', 'hh:PHI', 'subsets:SIZE[:COUNT]') or "
                             f"one 0-1 query matrix (queries × d), got {type(spec).__name__}")
        q = parse_query(spec)
        if q.kind == "given":
            if any(x.kind == "given" for x in qs):
                raise ValueError("queries: at most one query matrix (its rows are the queries)")
            try:
                q = Query("given", subsets=_given_matrix(q, d))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"queries: a query matrix must be 0-1 with d = {d} columns ({exc})") from None
        if q.kind == "topk" and q.k > d:
            raise ValueError(f"queries: topk:{q.k} needs K <= d = {d}")
        if q.kind == "subsets" and q.size > d:
            raise ValueError(f"queries: subsets:{q.size} needs SIZE <= d = {d}")
        qs.append(q)
    if not qs:
        raise ValueError("queries must name at least one query")
    return list({str(q): q for q in qs}.values())


def _check_target(target) -> float | None:
    if target is None:
        return None
    if isinstance(target, bool) or not isinstance(target, numbers.Real):
        raise ValueError(f"target must be a finite number > 0, got {target!r}")
    t = float(target)
    if not (math.isfinite(t) and t > 0):
        raise ValueError(f"target must be a finite number > 0, got {target!r}")
    return t


# -- closed forms ------------------------------------------------------------------------------------

def closed_form(oracle, method: str, query, f, n: int) -> float | None:
    r"""The exact expected loss of Base or Norm on ``query`` at true frequencies ``f`` and n users, or None
    where no closed form is known (another method, a heavy-hitter query, or Norm and subset queries for
    an oracle whose count covariance is not of the pair form).

    Both methods are unbiased, so the expected MSE is the mean variance of the answers: Base per value
    :math:`\mathrm{Var}(\tilde f_v) = (q(1-q) + f_v(p-q)(1-p-q))/(n(p-q)^2)` (arXiv Eq. 2); Norm and subset answers from the
    exact covariance of :mod:`ldpopt.uncertainty.analytic`; for ``subsets:S`` the expectation over
    uniform S-subsets; for a query matrix (given subsets) the mean over its rows (docs/notes/plan.md).

    A source that states the exact covariance matrix C of its f̃ at frequencies f, ``covariance(f, n)``
    (a designed mechanism: :class:`ldpopt.design.DesignedOracle`), is asked that instead: Base's
    answers :math:`w^T \tilde f` have variance :math:`w^T C w`, Norm's :math:`w^T P C P w` with
    :math:`P = I - 1 1^T/d` (Norm adds :math:`(1 - 1^T \tilde f)/d` to every value); a uniform S-subset's
    expectation is :math:`(S/d)\,\mathrm{tr}\,C + S(S-1)/(d(d-1))\,(1^T C 1 - \mathrm{tr}\,C)`.

    Parameters
    ----------
    oracle : NoiseSource
        A frequency oracle, a central mechanism at its scale (:class:`ldpopt.privacy.central.CentralNoise`)
        or any source of noisy counts (:class:`ldpopt.noise.NoiseSource`): its covariance is asked.
    method : str
        ``"base"`` or ``"norm"`` (anything else returns None).
    query : str or Query
        "full", "topk:K", "subsets:S[:C]", or a Query of given subsets (a query matrix, each row one
        linear query; the MSE metric; "hh:PHI" returns None).
    f : array_like, shape (d,)
        True frequencies.
    n : int
        Users.

    Returns
    -------
    float or None

    References
    ----------
    Wang et al., "Locally Differentially Private Frequency Estimation with Consistency", arXiv 1905.08320,
    §2 Eq. 2 (variance) and §4.3 (subset queries); NDSS 2020, §IV (Norm).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles
    >>> from ldpopt.planning import closed_form
    >>> o = oracles.get("oue", 1.0, 4)
    >>> f = np.array([0.4, 0.3, 0.2, 0.1])
    >>> round(closed_form(o, "base", "full", f, 1000), 6) == round(float(o.variance(f, 1000).mean()), 6)
    True
    >>> closed_form(o, "norm-sub", "full", f, 1000) is None
    True
    """
    q = parse_query(query)
    if method not in ("base", "norm") or q.kind == "hh" or q.metric != "mse":
        return None
    f = np.asarray(f, dtype=np.float64)
    d = f.shape[0]
    U = _given_matrix(q, d) if q.kind == "given" else None
    # the variances are uncertainty.analytic's (one place), asked of the source's covariance
    cov = oracle.count_covariance(n, d)
    if cov.moments is not None:   # a general channel (a designed strategy): its whole covariance matrix
        return _matrix_closed_form(cov.matrix(f), method, q, f, U)
    try:
        if q.kind == "subsets":   # Var = α(k) + β(k)·F_A for any k-subset A; E F_A = (k/d) Σf
            S = np.zeros((1, d))
            S[0, :q.size] = 1.0
            alpha, beta = line_of(cov, d, method, S, oracle.name)
            return float(alpha[0] + beta[0] * q.size / d * f.sum())
        v = query_variance_of(cov, d, method, f, U, oracle.name)
    except ValueError:   # the count covariance is not of the pair form: no closed form for this query
        return None
    if q.kind == "topk":
        v = v[np.argsort(-f, kind="stable")[:q.k]]
    return float(v.mean())


def _given_matrix(q: Query, d: int):
    """The CSR query matrix of given subsets (:func:`ldpopt.queries.query_matrix`)."""
    from .queries import query_matrix

    return query_matrix(q.subsets, d)


def _matrix_closed_form(C: np.ndarray, method: str, q: Query, f: np.ndarray, U) -> float:
    """:func:`closed_form` from the whole covariance C of f̃ (Base), P C P for Norm."""
    d = C.shape[0]
    if method == "norm":
        C = C - C.mean(axis=0)[None, :]
        C = C - C.mean(axis=1)[:, None]
    if q.kind == "subsets":
        tr, tot, s = float(np.trace(C)), float(C.sum()), q.size
        return s / d * tr + s * (s - 1) / (d * (d - 1)) * (tot - tr)
    if U is not None:
        return float(np.asarray(U.multiply(U @ C).sum(axis=1)).ravel().mean())
    v = np.diag(C)
    if q.kind == "topk":
        v = v[np.argsort(-f, kind="stable")[:q.k]]
    return float(v.mean())


# -- central noise -----------------------------------------------------------------------------------

def _check_delta(mech, delta) -> float:
    """δ for ``mech`` (None: 0 for a pure mechanism, :data:`DEFAULT_DELTA` for a Gaussian one): the record's own."""
    return mech.check_delta(delta)


def calibrate_scale(mechanism: str, epsilon, delta=None, relation: str = "add-remove") -> float:
    """The smallest noise scale (b or σ, in counts) at which the central mechanism gives a histogram
    (ε, δ)-DP under ``relation``: the root in s of the record's own ``epsilon(s, delta, relation)`` = ε
    (a bracket by doubling from 1, Brent's method inside it, then stepped up until the record's ε is <=
    the asked ε).

    The record's ε is decreasing in its scale, so the root is the smallest scale that meets ε at δ.
    For the Laplace mechanisms at δ = 0 it is Δ₁/ε; for the Gaussian ones it inverts Balle & Wang's exact
    curve (or the discrete Gaussian's exact hockey-stick sum) through the record; no formula is
    restated here.

    Parameters
    ----------
    mechanism : str
        A name of :data:`ldpopt.privacy.central.MECHANISMS`.
    epsilon : float
        ε > 0.
    delta : float, optional
        δ in [0, 1) (> 0 for the Gaussian ones). None: 0 for the pure mechanisms, :data:`DEFAULT_DELTA`
        for the Gaussian ones (``Estimate.from_central``'s defaults). A δ > 0 for a Laplace mechanism
        calibrates on its exact profile (add-remove), a scale a hair below Δ₁/ε.
    relation : str, default "add-remove"
        :data:`ldpopt.privacy.central.RELATIONS`.

    Returns
    -------
    float
        The scale s with ``get(mechanism).epsilon(s, delta, relation)`` <= ε, within a relative 1e-12
        of the root.

    Raises
    ------
    ValueError
        An unknown mechanism or relation, ε not finite and > 0, δ out of range, or a scale beyond what
        the record computes (the discrete Gaussian's δ is exact up to σ = 10⁴).

    References
    ----------
    Dwork, McSherry, Nissim & Smith (TCC 2006): b = Δ₁/ε; Balle & Wang (ICML 2018), Theorem 8 and
    Algorithm 1 (calibrating σ by the exact curve, here by root-finding on the record); Canonne, Kamath &
    Steinke (NeurIPS 2020), Theorem 7 (the discrete Gaussian). Brent (1973), *Algorithms for
    Minimization without Derivatives*, ch. 4.

    Examples
    --------
    >>> from ldpopt.planning import calibrate_scale
    >>> round(calibrate_scale("laplace", 0.5), 9), round(calibrate_scale("laplace", 0.5, relation="replace"), 9)
    (2.0, 4.0)
    >>> round(calibrate_scale("gaussian", 1.0, 1e-6), 4)
    4.2247
    """
    from scipy import optimize

    mech = _central.get(mechanism)
    try:
        eps = check_epsilon(epsilon, "epsilon")
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    dl = _check_delta(mech, delta)
    _central.sensitivity(relation)

    def eps_of(s: float) -> float:
        try:
            return mech.epsilon(s, dl, relation)
        except ValueError:
            raise ValueError(f"epsilon = {eps:g} at delta = {dl:g} needs a {mech.name} scale beyond {s:.4g}, past "
                             f"what its exact delta is computed for: a larger epsilon or delta") from None

    def met(s: float) -> bool:
        # ε(s) <= ε ⟺ δ(ε; s) <= δ (the record's δ(ε) is decreasing in ε): for the Gaussian ones one δ costs
        # what one step of their ε's own root-finding costs, so the bracket asks δ
        if mech.pure:
            return eps_of(s) <= eps
        try:
            return mech.delta(eps, s, relation) <= dl
        except ValueError:
            eps_of(s)   # the record's refusal, said as ε's
            raise

    lo = hi = 1.0
    if not met(1.0):
        while not met(hi):
            lo, hi = hi, hi * 2.0
    else:
        while met(lo):
            if lo < 1e-12:
                raise ValueError(f"epsilon = {eps:g} is met by every {mech.name} scale down to 1e-12")
            lo, hi = lo / 2.0, lo
    cap = 4.0 * eps + 1.0   # ε(s) may be inf at the small end: Brent's method needs finite values

    def g(x: float) -> float:
        return min(eps_of(x), cap) - eps

    while g(hi) > 0.0:   # δ and ε disagreeing at their root-finding's precision
        lo, hi = hi, hi * (1.0 + 1e-9)
    if g(hi) == 0.0:
        return float(hi)
    s = float(optimize.brentq(g, lo, hi, xtol=1e-14 * hi, rtol=1e-14))
    for k in range(60):
        if eps_of(s) <= eps:
            break
        s *= 1.0 + 2.0**k * 1e-15
    return float(min(s, hi))


def central_closed_form(mechanism: str, scale, method: str, query, d: int, n: int, delta=None,
                        relation: str = "add-remove") -> float | None:
    r"""The exact expected loss of Base or Norm on ``query`` when a histogram of n users over d values
    receives central noise of ``scale`` in every count (n known), or None for any other method or a
    heavy-hitter query.

    The noise is the only randomness and does not depend on the truth: Base's f̃ = c̃/n has
    :math:`\mathrm{Cov} = (V/n^2) I`, Norm's :math:`\mathrm{Cov} = (V/n^2)(I - 1 1^T/d)`, V the record's per-count variance, both unbiased
    (:mod:`ldpopt.uncertainty.analytic`'s central line, asked here of an estimate built by
    ``Estimate.from_central``). A query on a k-subset has Base variance :math:`kV/n^2` and Norm :math:`k(1 - k/d)V/n^2`,
    the same for every subset, so the expectation over uniform subsets is that value; every row is
    exactly :math:`∝ 1/n^2` at a fixed scale (docs/notes/plan.md).

    Parameters
    ----------
    mechanism : str
        A name of :data:`ldpopt.privacy.central.MECHANISMS`.
    scale : float
        b or σ in counts, > 0.
    method : str
        ``"base"`` or ``"norm"`` (anything else returns None).
    query : str or Query
        "full", "topk:K", "subsets:S[:C]" (the MSE metric; "hh:PHI" returns None).
    d, n : int
        Domain size (>= 2) and users (>= 1).
    delta, relation
        The statement of the estimate the variance is asked of (as :func:`calibrate_scale`); the loss
        does not depend on them, but ``Estimate.from_central`` refuses a scale whose ε is 0 there.

    Returns
    -------
    float or None

    References
    ----------
    Wang et al., arXiv 1905.08320, §2 Eq. 2 with p = 1, q = 0 (the oracle term vanishes; the noise's
    variance is the whole variance); NDSS 2020, §IV (Norm).

    Examples
    --------
    >>> from ldpopt.planning import central_closed_form
    >>> round(central_closed_form("laplace", 2.0, "base", "full", 10, 1000), 15)   # 2b²/n²
    8e-06
    >>> round(central_closed_form("laplace", 2.0, "norm", "subsets:5", 10, 1000) / 8e-06, 12)   # k(1 − k/d)
    2.5
    """
    q = parse_query(query)
    mech = _central.get(mechanism)
    d, n = check_domain_size(d, "d"), _check_n(n)
    src = CentralNoise(mech, scale, relation=relation, delta=_check_delta(mech, delta))
    src.estimate_fields(np.zeros(d), n)   # refuses a scale whose ε is 0 at this δ
    return closed_form(src, method, q, np.full(d, 1.0 / d), n)


# -- the re-simulation -------------------------------------------------------------------------------

def _evaluate(oracle, f, n: int, queries: list[Query], recs: list, R: int, gen) -> dict:
    """{(method, query string): (mean loss, SE, losses)} over R re-simulations of n users drawn from f;
    methods that do not apply are left out (their reason under (method, None))."""
    pop = population(f, n)
    truth = pop / n
    C = draw_counts(oracle, pop, R, gen)
    est = Estimate.from_source(C[0], oracle, n=n)
    F = (C / n - est.q) / (est.p - est.q)
    Us = {str(q): [random_subsets(gen, f.shape[0], q.size, q.count) for _ in range(R)]
          for q in queries if q.kind == "subsets"}
    out: dict = {}
    for r in recs:
        why = r.why_not(est)
        if why is not None:
            out[(r.name, None)] = why
            continue
        o = apply_batch(est, r, F, counts=C)
        for q in queries:
            if q.kind == "subsets":
                L = np.array([losses(q, o[i:i + 1], truth, Us[str(q)][i])[0] for i in range(R)])
            elif q.kind == "given":   # the query matrix (CSR, checked by _check_queries)
                L = losses(q, o, truth, q.subsets)
            else:
                L = losses(q, o, truth)
            out[(r.name, str(q))] = (float(L.mean()), float(L.std(ddof=1) / math.sqrt(R)), L)
    return out


def simulate(d, n, epsilon, prior=None, queries=("full",), *, oracles=None, methods=None, n_repeats: int = 20,
             rng=0, ordered: bool = False, mechanism=None, delta=None, relation=None, design=None) -> pd.DataFrame:
    """The simulated expected loss of every oracle × method × query: R draws of the support counts of n
    users from the prior (each oracle's exact-in-law sampler), every method applied, the loss averaged,
    with its standard error. What :func:`plan` calls where no closed form exists, and what a prediction
    is checked against.

    Parameters
    ----------
    d, n, epsilon, prior, queries, oracles, methods, ordered, mechanism, delta, relation, design
        As :func:`plan` (a central mechanism's rows: fresh noise of the calibrated scale on the prior's
        exact counts, every method simulated, Base and Norm included; a designed mechanism's rows: its
        count sampler, on the queries it is planned for).
    n_repeats : int, default 20
        Draws R (>= 2).
    rng : int or Generator, default 0
        Seed.

    Returns
    -------
    pandas.DataFrame
        Columns ``oracle``, ``method``, ``query``, ``metric``, ``mse`` (the query's loss), ``se``.

    References
    ----------
    NDSS 2020 §V-D (re-simulation from a plausible truth), here from a prior.

    Examples
    --------
    >>> from ldpopt.planning import simulate
    >>> t = simulate(16, 5000, 1.0, "zipf:1.5", oracles=["grr"], methods=["base", "norm-sub"], n_repeats=4)
    >>> list(t.columns), len(t)
    (['oracle', 'method', 'query', 'metric', 'mse', 'se'], 2)
    """
    ctx, families = _checked(d, n, epsilon, prior, queries, oracles, methods, None, n_repeats, rng, ordered,
                             mechanism, delta, relation, design)
    import pandas as pd

    sources = (list(ctx.oracles) if None in families else []) + [
        CentralNoise(ctx.central[k][0], ctx.central[k][1], relation=ctx.relation, delta=ctx.central[k][2])
        for k in families if k is not None]
    rows = []
    for c in [_Candidate(o.name, o) for o in sources] + ctx.designed:
        res = _evaluate(c.source, ctx.f, ctx.n, ctx.queries_of(c), ctx.recs, ctx.R,
                        as_generator(ctx.seed_for(c.key, -1)))
        for (m, qs), v in res.items():
            if qs is not None:
                rows.append({"oracle": c.label, "method": m, "query": qs, "metric": _metric(qs), "mse": v[0],
                             "se": v[1]})
    return pd.DataFrame(rows, columns=["oracle", "method", "query", "metric", "mse", "se"])


def _metric(qs: str) -> str:
    if qs == str(Query("given")):   # a query matrix's rows: the mean squared error over them
        return "MSE"
    q = parse_query(qs)
    return "1-F1" if q.kind == "hh" else q.metric.upper()


@dataclass
class _Context:
    d: int
    n: int
    epsilon: float
    f: np.ndarray
    prior_how: str
    queries: list
    oracles: list
    recs: list
    target: float | None
    R: int
    seed: int
    R_search: int
    from_sample: bool = False
    memo: dict = field(default_factory=dict)
    #: the central mechanisms planned: name → (record, scale, δ), calibrated before any work
    central: dict = field(default_factory=dict)
    relation: str = "add-remove"
    #: (oracle, method, reason) of the methods refused without a simulation
    skipped: set = field(default_factory=set)
    #: the designed mechanisms planned (:func:`_designed`), built before any simulation
    designed: list = field(default_factory=list)
    #: the designs ``plan`` made, by query
    designs: dict = field(default_factory=dict)

    def seed_for(self, oracle: str, j: int) -> np.random.Generator:
        """A generator per (oracle, grid point): the same draws whichever row asks (memoised search)."""
        key = [self.seed, j + 1] + [ord(c) for c in oracle]
        return np.random.default_rng(np.random.SeedSequence(key))

    def at(self, cand: _Candidate, j: int) -> dict:
        """The memoised evaluation of a candidate at n = round(2^(j/2))."""
        key = (cand.key, j)
        if key not in self.memo:
            self.memo[key] = _evaluate(cand.source, self.f, _grid_n(j), self.queries_of(cand), self.recs,
                                       self.R_search, self.seed_for(cand.key, j))
        return self.memo[key]

    def at_n(self, cand: _Candidate, n: int) -> dict:
        """The memoised evaluation of a candidate at any n (the search's refinements), its own seed."""
        key = (cand.key, f"n={n}")
        if key not in self.memo:
            gen = np.random.default_rng(np.random.SeedSequence([self.seed, 0, n] + [ord(c) for c in cand.key]))
            self.memo[key] = _evaluate(cand.source, self.f, n, self.queries_of(cand), self.recs, self.R_search, gen)
        return self.memo[key]

    def queries_of(self, cand: _Candidate) -> list:
        """The queries a candidate is planned for (a mechanism designed for one query: that one)."""
        return self.queries if cand.queries is None else list(cand.queries)


def _grid_n(j: int) -> int:
    return max(1, round(2 ** (j / 2)))


def _context(d, n, epsilon, prior, queries, oracles, methods, target, n_repeats, rng, ordered) -> _Context:
    """Every argument checked, in order, before any work."""
    d = check_domain_size(d, "d")
    n = _check_n(n)
    try:
        epsilon = check_epsilon(epsilon, "epsilon")
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    f, how = prior_histogram(prior, d)
    qs = _check_queries(queries, d)
    orcs = _check_oracles(oracles, epsilon, d)
    recs = records(methods, ordered=ordered)
    unordered = [r.name for r in recs if r.needs_order and not ordered]
    if unordered:
        raise ValueError(f"methods: {unordered} assume an ordered domain; pass ordered=True or leave them out")
    tgt = _check_target(target)
    if isinstance(n_repeats, bool) or not _is_int(n_repeats) or n_repeats < 2:
        raise ValueError(f"n_repeats must be an integer >= 2, got {n_repeats!r}")
    if _is_int(rng):
        seed = int(rng)
    else:
        seed = int(as_generator(rng).integers(2**63))
    return _Context(d, n, epsilon, f, how, qs, orcs, recs, tgt, int(n_repeats), seed,
                    int(n_repeats), from_sample=how.startswith("a public sample"))


# -- the target's n ------------------------------------------------------------------------------------

def _n_for_target(ctx: _Context, oracle: _Candidate, method: str, qs: str, start_n: float,
                  power: int = 1) -> tuple[float, float, str]:
    """(n, its SE, note) meeting ``ctx.target``: on the grid :math:`n = 2^{j/2}`, a bracket from ``start_n`` by
    doubling steps, a bisection on j, then a log-log interpolation between the two neighbouring grid
    points that bracket the target (docs/notes/plan.md). ``power``: the loss's expected decay, 1/n^power
    (1 local, 2 central noise at a fixed scale); the note says where the local slope is far from it."""
    t = ctx.target
    assert t is not None

    def loss(j):
        v = ctx.at(oracle, j).get((method, qs))
        return (np.inf, 0.0) if v is None else v[:2]

    j = int(min(max(round(2 * math.log2(max(start_n, 2.0))), _J_MIN), _J_MAX))
    step = 1
    if loss(j)[0] <= t:  # met at the start: bracket downwards, steps doubling
        while True:
            if j == _J_MIN:
                return float(_grid_n(j)), 0.0, f"met already at n = {_grid_n(j)}"
            jj = max(j - step, _J_MIN)
            if loss(jj)[0] > t:
                lo, hi = jj, j
                break
            j, step = jj, 2 * step
    else:  # not met: bracket upwards
        while True:
            if j == _J_MAX:
                return math.nan, math.nan, f"not met for n <= {_grid_n(_J_MAX):.3g}"
            jj = min(j + step, _J_MAX)
            if loss(jj)[0] <= t:
                lo, hi = j, jj
                break
            j, step = jj, 2 * step
    while hi - lo > 1:  # bisection on log n, on the grid
        mid = (lo + hi) // 2
        if loss(mid)[0] > t:
            lo = mid
        else:
            hi = mid
    (m_lo, _), (m_hi, se_hi) = loss(lo), loss(hi)
    n_lo, n_hi = _grid_n(lo), _grid_n(hi)
    if not (m_hi > 0 and np.isfinite(m_lo)):
        return float(n_hi), 0.0, "the grid point meeting the target (loss 0 there)"
    slope = (math.log(m_hi) - math.log(m_lo)) / (math.log(n_hi) - math.log(n_lo))
    # the SE of n: the loss's relative SE at the n returned over the grid's slope (two points √2 apart; a
    # refined bracket's slope is mostly noise)
    grid_slope = slope if slope < 0 else -float(power)
    nstar, se = float(n_hi), n_hi * (se_hi / m_hi) / abs(grid_slope)
    # refine: simulate the interpolated n itself (n_repeats draws), keep the bracket [n_lo, n_hi] around
    # the target with what it measured, until the loss there is within 1 SE of the target
    for _ in range(REFINE_STEPS):
        if not slope < 0:  # a flat or rising stretch (noise): the grid point that met the target
            break
        ln = math.log(n_lo) + (math.log(t) - math.log(m_lo)) / slope
        cand = math.ceil(min(max(math.exp(ln), n_lo), n_hi))
        if cand in (n_lo, n_hi):
            break
        v = ctx.at_n(oracle, cand).get((method, qs))
        if v is None or not v[0] > 0:
            break
        m_c, se_c = v[:2]
        if abs(m_c - t) <= se_c:  # met within its SE: this n, with the SE of n it implies
            nstar, se = float(cand), cand * (se_c / m_c) / abs(grid_slope)
            break
        if m_c > t:
            n_lo, m_lo = cand, m_c
        else:
            n_hi, m_hi = cand, m_c
            nstar, se = float(cand), cand * (se_c / m_c) / abs(grid_slope)
        slope = (math.log(m_hi) - math.log(m_lo)) / (math.log(n_hi) - math.log(n_lo))
    note = ""
    if abs(slope + power) > _LOOSE_SLOPE:
        note = (f"loss ∝ n^{slope:.2f} near the target, not 1/n{'²' if power == 2 else ''}: scaling the loss at "
                f"one n to another would be loose here")
    return nstar, se, note


# -- the rows ----------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Candidate:
    """A source planned under a label (a built-in: its name; a designed mechanism: its own), for
    ``queries`` (None: every planned query), its rows carrying ``columns``; ``how``: what an exact row
    says; ``note``: what every row of it says."""

    label: str
    source: Any
    queries: tuple | None = None
    columns: dict = field(default_factory=dict)
    how: str = "exact"
    note: str = ""
    #: what its simulations are memoised and seeded under (unique among the candidates)
    key: str = ""

    def __post_init__(self):
        if not self.key:
            object.__setattr__(self, "key", self.label)


def _rows(ctx: _Context, sources, extra: dict) -> list[dict]:
    """Every source × method × query: the closed form (:func:`closed_form`, the source's covariance)
    where it exists, the re-simulation for the rest; the exact rows' loss ∝ 1/n^k, k the source's
    ``variance_decay``; ``extra``: the columns every row carries (scale, delta); ``family`` is the model
    of the source's privacy statement. ``sources``: sources (planned under their names) or
    :class:`_Candidate`."""
    rows = []
    j_n = None  # the given n is evaluated exactly there (not on the grid)
    for c in sources:
        c = c if isinstance(c, _Candidate) else _Candidate(c.name, c)
        o, label = c.source, c.label
        power = o.variance_decay
        law = "1/n" if power == 1 else f"1/n^{power}".replace("^2", "²")
        cols = {"family": o.privacy_statement()["model"], **extra, **c.columns}
        sim = None
        for r in ctx.recs:
            if any(s[:2] == (label, r.name) for s in ctx.skipped):
                continue
            for q in ctx.queries_of(c):
                qs = str(q)
                exact = closed_form(o, r.name, q, ctx.f, ctx.n)
                row = {**cols, "oracle": label, "method": r.name, "query": qs, "metric": _metric(qs)}
                if exact is not None:
                    row.update(expected_mse=exact, se=0.0, how=c.how, note=c.note)
                else:
                    if sim is None:
                        key = (c.key, j_n)
                        if key not in ctx.memo:
                            ctx.memo[key] = _evaluate(o, ctx.f, ctx.n, ctx.queries_of(c), ctx.recs, ctx.R,
                                                      ctx.seed_for(c.key, -1))
                        sim = ctx.memo[key]
                    if (r.name, None) in sim:
                        break  # the method does not apply to this oracle: no rows (Plan.skipped)
                    mean, se, _ = sim[(r.name, qs)]
                    note = (f"SE {se / mean:.0%} of the estimate: more n_repeats" if mean > 0 and se > _LOOSE_SE * mean
                            else "")
                    note = "; ".join(x for x in (c.note, note) if x)
                    row.update(expected_mse=mean, se=se, how=f"simulated (R = {ctx.R})", note=note)
                sampled = (_FAMILY.get(r.name), q.kind)
                if ctx.from_sample and sampled in SAMPLE_P90 and power == 1:
                    v = SAMPLE_P90[sampled]
                    bound = f"{v:g} in 1 − F1" if q.kind == "hh" else f"{v:.0%}"
                    said = f"prior from a sample: off by up to {bound} (90th percentile, bench_plan)"
                    row["note"] = "; ".join(x for x in (row["note"], said) if x)
                if ctx.target is not None:
                    if exact is not None:  # unbiased: exactly ∝ 1/n^power
                        row.update(n_target=float(math.ceil(ctx.n * (exact / ctx.target) ** (1.0 / power))),
                                   n_target_se=0.0, n_target_how=f"exact (∝ {law})")
                    else:
                        # start where the loss at the given n, scaled as 1/n^power, meets the target
                        start = (ctx.n if q.kind == "hh" or mean <= 0
                                 else ctx.n * (mean / ctx.target) ** (1.0 / power))
                        ns, nse, note = _n_for_target(ctx, c, r.name, qs, start, power)
                        row.update(n_target=float(math.ceil(ns)) if np.isfinite(ns) else ns, n_target_se=nse,
                                   n_target_how=f"estimated (R = {ctx.R_search} per n simulated)")
                        if note:
                            row["note"] = "; ".join(x for x in (row["note"], note) if x)
                rows.append(row)
    return rows


def _local_rows(ctx: _Context) -> list[dict]:
    """The LDP rows: every oracle × method × query (closed forms first, the re-simulation for the rest)."""
    return _rows(ctx, ctx.oracles, {})


def _central_family(name: str) -> Callable[[_Context], list[dict]]:
    """The row family of one central mechanism: its scale calibrated from (ε, δ, relation), Base and Norm
    exact (:func:`central_closed_form`), the other methods re-simulated with fresh noise on the prior's
    exact counts; a method whose record refuses central noise gives no row (``Plan.skipped``)."""

    def rows(ctx: _Context) -> list[dict]:
        mech, scale, delta = ctx.central.get(name) or _central_entry(name, ctx.epsilon, None, ctx.relation)
        src = CentralNoise(mech, scale, relation=ctx.relation, delta=delta)
        template = Estimate.from_source(population(ctx.f, ctx.n), src, n=ctx.n)
        for r in ctx.recs:
            why = r.why_not(template)
            if why is not None:
                ctx.skipped.add((src.name, r.name, why))
        return _rows(ctx, [src], {"scale": scale, "delta": delta})

    rows.__name__ = rows.__qualname__ = f"central_rows_{name.replace('-', '_')}"
    return rows


def _central_entry(name: str, epsilon: float, delta, relation: str) -> tuple:
    mech = _central.get(name)
    return mech, calibrate_scale(name, epsilon, delta, relation), _check_delta(mech, delta)


#: the keyword arguments of :func:`ldpopt.design.design` a plan's ``design`` dict may set
DESIGN_OPTIONS = ("iterations", "rows", "max_bits", "tol", "init", "rng")


def _check_design(design, d: int, epsilon: float) -> tuple[dict | None, list]:
    """(the options of a design per query, or None; the given designed mechanisms as (label, oracle,
    seconds)), checked before any work."""
    if design is None or design is False:
        return None, []
    if design is True:
        return {}, []
    if isinstance(design, dict):
        bad = sorted(str(k) for k in design if k not in DESIGN_OPTIONS)
        if bad:
            raise ValueError(f"design: unknown options {bad} (ldpopt.design.design's: {list(DESIGN_OPTIONS)})")
        return dict(design), []
    items = list(design) if isinstance(design, (list, tuple)) else [design]
    out: list = []
    for i, it in enumerate(items, 1):
        o = it.oracle() if callable(getattr(it, "oracle", None)) else it
        if not (callable(getattr(o, "covariance", None)) and callable(getattr(o, "sample_counts_batch", None))):
            raise ValueError(f"design must be True, a dict of ldpopt.design.design's options, a Design, a designed "
                             f"oracle or a list of these, got {type(it).__name__}")
        if o.d != d:
            raise ValueError(f"design: a designed mechanism has d = {o.d}, the plan d = {d}")
        if not math.isclose(o.epsilon, epsilon, rel_tol=1e-12):
            raise ValueError(f"design: a designed mechanism is at epsilon = {o.epsilon:g}, the plan at "
                             f"epsilon = {epsilon:g} (compare at one epsilon)")
        label = f"designed:{getattr(it, 'workload', i)}"
        if any(x[0] == label for x in out):
            label = f"{label}#{i}"
        out.append((label, o, float(getattr(it, "seconds", math.nan))))
    if not out:
        raise ValueError("design: an empty list names no designed mechanism")
    return None, out


def _designed(ctx: _Context, options: dict | None, given: list) -> None:
    """The designed candidates in ``ctx.designed``: each given mechanism on every query, and with
    ``options`` a strategy designed for each planned query's workload (``ctx.designs``), built here,
    before any simulation."""
    for label, o, seconds in given:
        ctx.designed.append(_Candidate(label, o, columns={"design_s": seconds}, how="exact (its channel)"))
    if options is None:
        return
    from .design import workloads as _w
    from .design.optimize import design as _design

    for q in ctx.queries:
        qs = str(q)
        if q.kind == "hh":
            why = f"{qs} is scored by F1, not by a linear query's squared error: no workload to design for"
            ctx.skipped.add(("designed", "every method", why))
            continue
        if q.kind == "full":
            workload: object = "identity"
        elif q.kind == "topk":   # the K values plan's topk:K scores: the prior's K largest, stably sorted
            workload = _w.top_k(ctx.f, q.k)
        elif q.kind == "subsets":
            workload = _w.random_subset(ctx.d, q.size)
        else:   # the given query matrix
            workload = q.subsets.toarray()
        try:
            D = _design(workload, ctx.epsilon, d=ctx.d, **options)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"design: {exc}") from None
        ctx.designs[qs] = D
        note = (f"designed for {qs}: {D.iterations} steps from {D.start}, stationarity {D.stationarity:.2g}, "
                f"{D.rows} outputs")
        ctx.designed.append(_Candidate("designed", D.oracle(), queries=(q,), columns={"design_s": D.seconds},
                                       how="exact (its channel)", note=note, key=f"designed[{qs}]"))


#: the row families a plan draws from, by ``mechanism``: None → the local (LDP) oracles; each central
#: mechanism's name (:data:`ldpopt.privacy.central.MECHANISMS`) → its central-noise rows. A family is a
#: function of the checked context returning rows with the same columns (``family`` naming the model)
ROW_FAMILIES: dict[str | None, Callable[[_Context], list[dict]]] = {
    None: _local_rows, **{name: _central_family(name) for name in _central.MECHANISMS}}


@dataclass(frozen=True, eq=False)
class Plan:
    """A collection's plan: ``table`` (one row per oracle × method × query, ranked per query), the prior
    used, the inputs and one sentence ``how``. Returned by :func:`plan`.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``family``, ``oracle``, ``method``, ``query``, ``metric``, ``expected_mse`` (the query's
        expected loss: MSE, or 1 − F1 for ``hh``), ``se`` (0 where exact), ``how``, ``note`` (where the
        prediction is loose), ``rank`` (within the query); with a target also ``n_target``,
        ``n_target_se``, ``n_target_how``; with a central mechanism also ``scale`` and ``delta`` (NaN on
        the local rows; ``family`` is ``"local"`` or ``"central"``, the model); with designed mechanisms
        also ``design_s``, a design's seconds (NaN on the other rows).
    prior : ndarray
        The prior's frequencies.
    prior_how : str
        What the prior is.
    d, n : int
    epsilon : float
    target : float or None
    skipped : list of tuple
        (oracle, method, reason) of the methods that do not apply to an oracle.
    how : str
    central : dict
        Per central mechanism planned: its calibrated ``scale`` (``scale_name`` b or sigma), ``delta`` and
        ``relation`` (empty for a local plan).
    designs : dict
        The strategies ``plan(..., design=True)`` designed, by query string
        (:class:`ldpopt.design.Design`; ``designs[q].oracle()`` collects with one); empty otherwise.

    Examples
    --------
    >>> import ldpopt
    >>> p = ldpopt.plan(64, 10_000, 1.0, "zipf:1.5", oracles=["oue"], methods=["base", "norm-sub"], n_repeats=4)
    >>> p.best("full")
    ('oue', 'norm-sub')
    """

    table: pd.DataFrame
    prior: np.ndarray = field(repr=False)
    prior_how: str
    d: int
    n: int
    epsilon: float
    target: float | None
    skipped: list
    how: str
    central: dict = field(default_factory=dict)
    designs: dict = field(default_factory=dict)

    def best(self, query: str = "full") -> tuple[str, str]:
        """(oracle, method) of the smallest expected loss on ``query``.

        Parameters
        ----------
        query : str
            One of the planned queries.

        Returns
        -------
        tuple of str

        Raises
        ------
        ValueError
            If the query was not planned.

        Examples
        --------
        >>> import ldpopt
        >>> ldpopt.plan(16, 1000, 1.0, oracles=["grr"], methods=["base"]).best()
        ('grr', 'base')
        """
        qs = str(parse_query(query))
        t = self.table[self.table["query"] == qs]
        if t.empty:
            raise ValueError(f"query {query!r} was not planned (planned: {sorted(set(self.table['query']))})")
        row = t.iloc[0]
        return str(row["oracle"]), str(row["method"])

    def __str__(self) -> str:
        cols = [c for c in ("rank", "query", "family", "oracle", "method", "scale", "expected_mse", "se", "how",
                            "design_s", "n_target", "n_target_se", "note")
                if c in self.table.columns and (c not in ("family", "scale") or self.central)]
        fmt = {"expected_mse": "{:.4g}".format, "se": "{:.2g}".format, "n_target": "{:.4g}".format,
               "n_target_se": "{:.2g}".format, "scale": "{:.4g}".format, "design_s": "{:.2g}".format}
        head = (f"plan: d = {self.d}, n = {self.n:,}, ε = {self.epsilon:g}, prior {self.prior_how}"
                + (f", target {self.target:g}" if self.target is not None else ""))
        return f"{head}\n{self.table[cols].to_string(index=False, formatters=fmt, na_rep='')}\n({self.how})"


def _checked(d, n, epsilon, prior, queries, oracles, methods, target, n_repeats, rng, ordered, mechanism, delta,
             relation, design=None) -> tuple[_Context, list]:
    """The checked context and row families of :func:`plan` and :func:`simulate`: every argument checked and
    every central scale calibrated (or refused) before any simulation."""
    families = _check_mechanisms(mechanism)
    central = [k for k in families if k is not None]
    if not central:
        for name, value in (("delta", delta), ("relation", relation)):
            if value is not None:
                raise ValueError(f"{name} applies to a central mechanism only; pass mechanism= (e.g. 'gaussian') "
                                 f"or leave {name} out")
    if None not in families and oracles is not None:
        raise ValueError("oracles applies to the local rows only; add 'local' to mechanism or leave oracles out")
    rel = "add-remove" if relation is None else relation
    if central:
        if not isinstance(rel, str) or rel not in _central.RELATIONS:
            raise ValueError(f"relation must be one of {sorted(_central.RELATIONS)}, got {relation!r}")
        if delta is not None:
            check_delta(delta)
    ctx = _context(d, n, epsilon, prior, queries, oracles, methods, target, n_repeats, rng, ordered)
    ctx.relation = rel
    options, given = _check_design(design, ctx.d, ctx.epsilon)
    if (options is not None or given) and None not in families:
        raise ValueError("design applies to the local rows (a designed mechanism is an LDP oracle); add 'local' to "
                         "mechanism or leave design out")
    for name in central:   # every scale calibrated (and refused) before any simulation
        ctx.central[name] = _central_entry(name, ctx.epsilon, delta, rel)
    _designed(ctx, options, given)
    return ctx, families


def _check_mechanisms(mechanism) -> list:
    """The row families named by ``mechanism``, in order, without repeats (None for the local oracles)."""
    def bad():
        return ValueError(f"mechanism must be None or 'local' (the local oracles), 'all' (every central mechanism), "
                          f"one of {sorted(k for k in ROW_FAMILIES if k is not None)} or a list of these, "
                          f"got {mechanism!r}")

    items = [mechanism] if mechanism is None or isinstance(mechanism, str) else mechanism
    try:
        items = list(items)
    except TypeError:
        raise bad() from None
    out: list = []
    for m in items:
        if m is None or m == "local":
            keys: list = [None]
        elif m == "all":
            keys = list(_central.MECHANISMS)
        elif isinstance(m, str) and m in ROW_FAMILIES:
            keys = [m]
        else:
            raise bad()
        out += [k for k in keys if k not in out]
    if not out:
        raise bad()
    return out


def plan(d, n, epsilon, prior=None, queries=("full",), *, target=None, oracles=None, methods=None,
         n_repeats: int = 20, rng=0, ordered: bool = False, mechanism=None, delta=None, relation=None,
         design=None) -> Plan:
    """Plan a collection: the expected error of every oracle × post-processing method × query before any
    data exist, and, with ``target``, the smallest n that meets it.

    Base and Norm (unbiased, linear) get their exact expected MSE from the oracle's variance and
    covariance at the prior's frequencies (:func:`closed_form`; exactly ∝ 1/n, so the target's n is a
    ratio). Every other method, and heavy-hitter queries, get a re-simulation: R draws of the support
    counts of n users drawn from the prior (exact in law), the method applied, the loss of
    :func:`ldpopt.recommend.losses` averaged, with its standard error; the target's n is searched on
    the grid :math:`n = 2^{j/2}`, memoised, and interpolated log-log between the bracketing points (stated as
    estimated, with its SE; the note says where the loss is not ∝ 1/n, so that scaling one n to
    another would be loose).

    Parameters
    ----------
    d : int
        Domain size, >= 2.
    n : int
        Users (an integral float such as 1e6 is accepted), >= 1.
    epsilon : float
        ε > 0.
    prior : see :func:`prior_histogram`
        The assumed distribution of the values (None: uniform).
    queries : str, query matrix or sequence of them, default ("full",)
        "full", "topk:K", "hh:PHI", "subsets:SIZE[:COUNT]" (:func:`ldpopt.uncertainty.parse_query`), and
        at most one 0-1 query matrix (queries × d, dense or sparse; e.g. every range,
        ``ldpopt.design.workloads.all_ranges(d)``), scored by the mean squared error over its rows and
        shown as ``"given subsets"``.
    target : float, optional
        The loss to meet (> 0): adds ``n_target`` per row.
    oracles : sequence of str, optional
        Registry names (default :func:`ldpopt.oracles.available`: the pure one-shot oracles).
    methods : None, "closed-form", "extended", "all" or a sequence of names
        As :func:`ldpopt.recommend.records` (default the closed forms). A method that does not apply to
        an oracle gives no row (``Plan.skipped`` says why).
    n_repeats : int, default 20
        Draws R per simulated evaluation (>= 2).
    rng : int or Generator, default 0
        Seed.
    ordered : bool, default False
        The domain is ordered (lets the Wiener filters be candidates).
    mechanism : None, str or sequence of str
        The row families (:data:`ROW_FAMILIES`): None or ``"local"``, the local oracles; a central
        mechanism's name (``"laplace"``, ``"discrete-laplace"``, ``"gaussian"``,
        ``"discrete-gaussian"``): a curator adds that noise to the exact counts, its scale calibrated
        to (ε, δ) by :func:`calibrate_scale`; ``"all"``: the four; a list: those families side by side
        in one ranked table (e.g. ``("local", "gaussian")``). A central row's ``oracle`` is
        ``"central:<name>"``, its ``family`` ``"central"``, with its ``scale`` and ``delta``; Base and Norm
        are exact (:func:`central_closed_form`, :math:`∝ 1/n^2` at a fixed scale), the other methods that apply to
        central estimates are re-simulated; MLE-Apx and the others whose records refuse central noise
        give no row (``Plan.skipped``).
    delta : float, optional
        The δ the central mechanisms are calibrated at, in [0, 1), > 0 for the Gaussian ones. None: 0
        for the Laplace ones (pure ε-DP), :data:`DEFAULT_DELTA` for the Gaussian ones. Only with a
        central mechanism.
    relation : str, optional
        The neighbouring relation of the central guarantee, ``"add-remove"`` (default) or ``"replace"``
        (:data:`ldpopt.privacy.central.RELATIONS`). Only with a central mechanism. The local rows'
        guarantee is per report (ε-LDP), so a central row and a local row at the same ε protect
        differently: the table compares their errors, not their guarantees.
    design : None, True, dict, Design, designed oracle or a list of these
        Designed mechanisms as candidates beside the oracles (McKenna et al.'s LDP matrix mechanism,
        :mod:`ldpopt.design`). True: for each planned query, a strategy designed at (ε, d) for its
        workload by :func:`ldpopt.design.design` — ``full``: every value; ``topk:K``: the prior's K
        largest values (:func:`ldpopt.design.workloads.top_k`, the values the query scores);
        ``subsets:S``: one uniform S-subset (:func:`ldpopt.design.workloads.random_subset`); a query
        matrix: its rows; none for ``hh:PHI`` (``Plan.skipped``) — each planned on its own query only,
        as oracle ``"designed"``, the designs in ``Plan.designs``. A dict: the same with these options of
        :func:`ldpopt.design.design` (:data:`DESIGN_OPTIONS`: iterations, rows, max_bits, tol, init,
        rng). A :class:`ldpopt.design.Design` or a designed oracle (anything stating ``covariance(f, n)``
        and a count sampler), or a list: those mechanisms on every query, as ``"designed:<workload>"``.
        Base and Norm of a designed mechanism are exact from its channel (:func:`closed_form`), the
        other methods re-simulated; the rows' ``design_s`` is the design's seconds (NaN where the
        mechanism came designed without them, and on the other rows).

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        A bad argument, named, before any work: d < 2, n <= 0, ε <= 0, a prior not of length d, an
        unknown query, oracle or method, more than one query matrix or one not 0-1 with d columns,
        target <= 0, n_repeats < 2, an unknown mechanism, δ out of range or 0 for a Gaussian mechanism,
        δ, a relation or oracles given without the family that reads them, a design option unknown or
        refused by the designer, a designed mechanism of another d or ε, or design without the local
        rows.

    References
    ----------
    Wang et al., arXiv 1905.08320, §2 Eq. 2 (the oracles' variance); NDSS 2020 (Wang, Lopuhaä-Zwakenberg,
    Li, Skoric, Li), §V-D (choosing a method by re-simulation), here run on a prior before collection.
    Central noise: Dwork et al. (TCC 2006), Balle & Wang (ICML 2018), Canonne, Kamath & Steinke (NeurIPS
    2020) (:mod:`ldpopt.privacy.central`). Designed mechanisms: McKenna, Maity, Mazumdar and Miklau,
    PVLDB 13(11), 2020.

    Examples
    --------
    >>> import ldpopt
    >>> p = ldpopt.plan(100, 1e5, 1.0, "zipf:1.5", oracles=["grr", "oue"], methods=["base"], target=1e-5)
    >>> [(r.oracle, f"{r.expected_mse:.3g}", int(r.n_target)) for r in p.table.itertuples()]
    [('oue', '3.69e-05', 369270), ('grr', '0.000347', 3468331)]
    >>> p = ldpopt.plan(100, 1e5, 1.0, mechanism=("local", "gaussian"), oracles=["oue"], methods=["base"])
    >>> [(r.oracle, f"{r.expected_mse:.3g}", f"{r.scale:.3g}") for r in p.table.itertuples()]
    [('central:gaussian', '1.78e-09', '4.22'), ('oue', '3.69e-05', 'nan')]
    >>> p = ldpopt.plan(8, 1e4, 1.0, "zipf:1.5", queries="topk:2", oracles=["oue"], methods=["base"],
    ...                 design={"iterations": 30})
    >>> p.best("topk:2"), p.designs["topk:2"].oracle().ldp_check.verified
    (('designed', 'base'), True)
    """
    ctx, families = _checked(d, n, epsilon, prior, queries, oracles, methods, target, n_repeats, rng, ordered,
                             mechanism, delta, relation, design)
    central = [k for k in families if k is not None]
    rel = ctx.relation
    import pandas as pd

    rows = [row for k in families for row in ROW_FAMILIES[k](ctx)] + _rows(ctx, ctx.designed, {})
    skipped = sorted({(o, m, why) for (o, j), res in ctx.memo.items() for (m, qs), why in res.items()
                      if qs is None} | ctx.skipped)
    if not rows:
        raise ValueError(f"methods: none of {[r.name for r in ctx.recs]} applies to the planned families "
                         f"({skipped[0][2] if skipped else 'no rows'})")
    table = pd.DataFrame(rows)
    for col in (("scale", "delta") if central else ()) + (("design_s",) if ctx.designed else ()):
        if col not in table.columns:
            table[col] = np.nan
        table[col] = table[col].astype(np.float64)
    order = {str(q): i for i, q in enumerate(ctx.queries)}
    table["_q"] = table["query"].map(order)
    table = table.sort_values(["_q", "expected_mse", "se"], kind="stable").drop(columns="_q")
    table["rank"] = table.groupby("query", sort=False).cumcount() + 1
    table = table.reset_index(drop=True)
    how = (f"exact rows: Base's and Norm's variance at the prior (unbiased, ∝ 1/n); simulated rows: {ctx.R} draws "
           f"of n users from the prior, exact in law, ± SE; the prediction holds for a population like the prior "
           f"(docs/plan.md: how far off it is when the prior is a small sample)")
    if central:
        said = ", ".join(f"{m.name} {m.scale_name} = {sc:.4g} at δ = {dl:g}" for m, sc, dl in ctx.central.values())
        how += (f"; central rows: noise on the exact counts, scale calibrated to ε = {ctx.epsilon:g} ({rel}): "
                f"{said}; exact rows ∝ 1/n² at that scale, n known")
    if ctx.designed:
        how += ("; designed rows: an ε-LDP strategy designed for the query (McKenna et al.'s LDP matrix mechanism, "
                "ldpopt.design), exact from its channel's covariance, its design seconds in design_s")
    mechs = {k: {"scale": sc, "scale_name": m.scale_name, "delta": dl, "relation": rel}
             for k, (m, sc, dl) in ctx.central.items()}
    return Plan(table=table, prior=ctx.f, prior_how=ctx.prior_how, d=ctx.d, n=ctx.n, epsilon=ctx.epsilon,
                target=ctx.target, skipped=skipped, how=how, central=mechs, designs=dict(ctx.designs))
