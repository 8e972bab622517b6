r"""Monte-Carlo claims: bias, variance and order statements (NDSS Lemmas 1–4, arXiv §3.1–§3.6).

Details: docs/experiments.md, section `ldpopt.verify.montecarlo`.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.stats import norm as _normal

from .. import oracles as _oracles
from .. import queries
from .._validation import as_generator
from ..estimate import Estimate
from ..methods import bayes, normalize, registry
from .instances import true_histogram
from .result import ClaimResult, not_refereed
from .tolerances import U, se_floor

_ALPHA = 1e-3
_Z_RATIO = 3.2905  # two-sided 99.9 %


def _applies(m: str) -> bool:
    """The Monte Carlo truths are categorical histograms: a method assuming an ordered domain
    (``needs_order``: the Wiener filters) does not apply to them."""
    return not registry.get(m).needs_order


def _mc_fast() -> list[str]:
    """The methods run in every repetition: every registered method but the fitted ones (and those
    assuming an ordered domain)."""
    return [m for m in registry.names() if registry.get(m).family != "fitted" and _applies(m)]


def _mc_slow() -> list[str]:
    """The fitted methods (Power's prior): run in the first ``slow_reps`` repetitions, their fitted
    parameter ``s`` fixed after the first (docs/experiments.md)."""
    return registry.names("fitted")


def _normalised() -> list[str]:
    """Lemma 2's methods: those that sum to one (Table 1 "yes"), each computed one way only."""
    return [m for m in registry.names(variants=False) if registry.get(m).sums_to_one == "yes" and _applies(m)]


def _nonneg_normalised() -> list[str]:
    """Lemma 4's methods: non-negative and summing to one."""
    return [m for m in _normalised() if registry.get(m).non_negative == "yes"]


def _almost_normalised() -> list[str]:
    """Methods whose sum is one "almost" (Table 1): Lemma 2 reported as a finding."""
    return [m for m in registry.names(variants=False) if registry.get(m).sums_to_one == "almost" and _applies(m)]

_INDEPENDENT_COUNTS = {"oue", "sue"}


def claim_ids(oracle: str) -> list[str]:
    """The ids :func:`mc_rows` produces for ``oracle`` (for rows that cannot be run)."""
    var = "norm-variance=(d-1)/d" + ("" if oracle in _INDEPENDENT_COUNTS else ":dependent-counts")
    return (["base-unbiased", "norm-unbiased", var, "lemma1:base-pos-positive-bias",
             "lemma1:base-pos-positive-bias:per-value"]
            + [f"lemma2:bias-sum-zero:{m}" for m in _normalised() + _almost_normalised()]
            + [f"lemma4:zero-value-positive-bias:{m}" for m in _nonneg_normalised()]
            + ["base-pos=post-pos:single", "post-pos:non-additive", "norm-hyb(theta):keeps-norm-cut-values",
               "norm-hyb(theta)=norm-cut"] + [f"order:{m}" for m in _mc_fast() + _mc_slow()]
            + ["order:norm-hyb:counterexample", "order:paper-all-methods"])


def is_finding(claim: str) -> bool:
    """True for the Monte-Carlo ids reported either way (``expected`` None)."""
    if claim.startswith("order:") and claim[6:] in _mc_fast() + _mc_slow():
        return registry.get(claim[6:]).order_preserving == "no"
    if claim.startswith("lemma2:bias-sum-zero:") and claim[21:] in _almost_normalised():
        return True
    return claim in ("norm-variance=(d-1)/d:dependent-counts",
                     "post-pos:non-additive", "norm-hyb(theta)=norm-cut", "order:paper-all-methods")


def _simulate_outputs(oracle, epsilon, n, d, reps, slow_reps, seed):
    o = _oracles.get(oracle, epsilon, d)
    tc = true_histogram(n, d, "half-zero")
    gen = as_generator(seed)
    fast, slow = _mc_fast(), _mc_slow()
    out = {m: np.empty((reps, d)) for m in fast}
    out.update({m: np.empty((min(slow_reps, reps), d)) for m in slow})
    extra = {"f_tilde": np.empty((reps, d)), "hyb_theta": np.full((reps, d), np.nan),
             "hyb_whole_domain": np.zeros(reps, bool), "postpos_single": np.empty((reps, d)),
             "postpos_nonadditive": np.zeros(reps, bool)}
    half = np.arange(d) < d // 2
    s_fixed = None
    for r in range(reps):  # a loop over repetitions (each vectorised over the domain)
        est = o.simulate(tc, gen)
        ft = est.f_tilde
        extra["f_tilde"][r] = ft
        for m in fast:
            out[m][r] = registry.postprocess(est, m)
        if r < slow_reps:
            if s_fixed is None:
                s_fixed = bayes.fit_power_law(est)
            for m in slow:  # the fitted prior's exponent fixed: a fixed function of f̃ (docs/experiments.md)
                src = registry.get(m).derived_from
                if src is not None and src[0] in slow[:slow.index(m)]:  # PowerNS from this repetition's Power
                    out[m][r] = src[1](out[src[0]][r])
                    continue
                fixed = {"s": s_fixed} if "s" in registry.parameters(m) else {}
                out[m][r] = registry.postprocess(est, m, **fixed)
        # Norm-Hyb with Norm-Cut's θ: keep the set Norm-Cut keeps (k = its size, tie-closed)
        kept = out["norm-cut"][r] > 0
        if kept.any():
            extra["hyb_theta"][r] = normalize.norm_hyb(est, k=int(kept.sum()))
            extra["hyb_whole_domain"][r] = bool(kept.all())
        answers = queries.answer(ft, [np.array([v]) for v in range(d)])
        extra["postpos_single"][r] = queries.post_pos(answers)
        a, b, ab = queries.post_pos(queries.answer(ft, [half, ~half, np.ones(d, bool)]))
        extra["postpos_nonadditive"][r] = not np.isclose(a + b, ab, rtol=0, atol=1e-15)
    return o, tc / tc.sum(), out, extra, s_fixed


def _bias_stats(x: np.ndarray, f: np.ndarray, lattice: float = 0.0) -> dict:
    """Per-value bias and its standard error, floored at the rounding of the mean and, when the
    outputs live on a lattice of spacing δ (f̃ moves in steps of 1/(n(p − q)) as a count moves by
    one), at δ/r: a mean of r repetitions cannot resolve a bias carried by an event rarer than one
    in r (at ε = 20 GRR's counts almost never move, f̃ is then the same in every repetition and
    its unbiasedness rests on events of probability ~e^-ε)."""
    r = x.shape[0]
    bias = x.mean(axis=0) - f
    se_raw = x.std(axis=0, ddof=1) / math.sqrt(r)
    floor = np.maximum(np.maximum(se_floor(x), 8.0 * U * np.abs(f)), lattice / r)
    return {"bias": bias, "se": np.maximum(se_raw, floor), "floored": int(np.sum(se_raw < floor)),
            "se_floor_max": float(np.max(floor)), "reps": r}


def mc_rows(oracle: str, epsilon: float, n: int, d: int, reps: int, slow_reps: int, seed: int) -> list[ClaimResult]:
    """Every Monte-Carlo claim on one setting (see docs/experiments.md)."""
    t0 = time.perf_counter()
    o, f, out, extra, s_fixed = _simulate_outputs(oracle, epsilon, n, d, reps, slow_reps, seed)
    sim_seconds = time.perf_counter() - t0
    zc = float(_normal.ppf(1 - _ALPHA / (2 * d)))
    inst = dict(oracle=oracle, epsilon=float(epsilon), n=int(n), d=int(d), seed=int(seed))
    z_basis = f"Bonferroni normal quantile, family alpha = {_ALPHA:g} over d = {d} values; SE floored at 8u max|x|"
    lattice_basis = z_basis + " and at the count lattice 1/(n (p - q)) / reps"
    rows: list[ClaimResult] = []

    def add(claim, statement, kind, metric, unit, value, op, tol, expected, m, basis, note="", r=reps):
        rows.append(ClaimResult(claim, statement, kind, **inst, metric=metric, unit=unit, value=value, op=op,
                                tolerance=tol, expected=expected, referee="monte-carlo", tolerance_basis=basis,
                                reps=r, metrics=m, note=note))

    def skip(claim, statement, why, r=reps, metric="-", unit="", value=math.nan, op="<=", m=None, basis=""):
        rows.append(not_refereed(why, claim=claim, statement=statement, kind="monte-carlo", **inst, metric=metric,
                                 unit=unit, value=value, op=op, expected=True, referee="monte-carlo", reps=r,
                                 metrics=m or {}, tolerance_basis=basis))

    def positive(claim, statement, metric, lo, hi, m, basis, r=reps):
        """A sign claim: holds when the interval is above 0, fails when it is below, and is not refereed
        when it contains 0 (the repetitions do not resolve the sign; that is no evidence against it)."""
        m = {**m, "ci_lo": lo, "ci_hi": hi}
        if lo > 0 or hi < 0:
            add(claim, statement, "monte-carlo", metric, "frequency", lo, ">", 0.0, True, m, basis, r=r)
        else:
            skip(claim, statement, f"the interval [{lo:.3g}, {hi:.3g}] contains 0: {r} repetitions do not resolve "
                 "the sign (raise reps)", r=r, metric=metric, unit="frequency", value=lo, op=">", m=m, basis=basis)

    for meth, src in (("base", "f~ is unbiased (arXiv §2.2; NDSS §IV 'Base has no bias')"),
                      ("norm", "Norm is unbiased (NDSS Lemma 3)")):
        st = _bias_stats(out[meth], f, lattice=1.0 / (n * (o.p - o.q)))
        z = float(np.max(np.abs(st["bias"]) / st["se"]))
        add(f"{meth}-unbiased", src, "monte-carlo", "max_abs_z", "standard errors", z, "<=", zc, True,
            {"max_abs_bias": float(np.max(np.abs(st["bias"]))), "max_se": float(np.max(st["se"])),
             "values_with_se_at_floor": st["floored"], "se_floor_max": st["se_floor_max"]}, lattice_basis)

    # Norm's variance is (d-1)/d of Base's (summed over the domain; exact when the counts are independent)
    tb = np.sum((out["base"] - f) ** 2, axis=1)
    tn = np.sum((out["norm"] - f) ** 2, axis=1)
    ratio = float(tn.mean() / tb.mean())
    se = max(float(np.std(tn - ratio * tb, ddof=1) / math.sqrt(reps) / tb.mean()), 8.0 * U * ratio * d)
    target = (d - 1) / d
    sum_sd = float(np.std(extra["f_tilde"].sum(axis=1)))
    indep = oracle in _INDEPENDENT_COUNTS
    add("norm-variance=(d-1)/d" + ("" if indep else ":dependent-counts"),
        "Var(Norm) = (d-1)/d * Var(Base), summed over the domain (NDSS §IV-B; exact for independent counts: "
        "OUE, SUE)" + ("" if indep else " - finding for an oracle with dependent counts"),
        "monte-carlo" if indep else "finding", "abs_z_of_ratio_minus_(d-1)/d", "standard errors",
        abs(ratio - target) / se, "<=", _Z_RATIO, True if indep else None,
        {"variance_ratio": ratio, "target": target, "se": se, "sd_sum_f_tilde": sum_sd,
         "base_total_var_mc": float(tb.mean()), "base_total_var_eq2": float(np.sum(o.variance(f, n)))},
        "normal 99.9 % (z = 3.29); SE by the delta method, floored at 8u d ratio",
        note="sum f~ = 1 exactly for this oracle, so Norm = Base and the ratio is 1" if sum_sd < 1e-12 else "")

    # Lemma 1: Base-Pos's bias is E[max(-f~, 0)] (Base unbiased): the paired max(-f~, 0) >= 0 estimates it
    neg_part = np.maximum(-extra["f_tilde"], 0.0)
    st = _bias_stats(neg_part, np.zeros(d))
    tot = neg_part.sum(axis=1)
    tot_half = _Z_RATIO * float(tot.std(ddof=1)) / math.sqrt(reps)
    tot_lo, tot_hi = float(tot.mean()) - tot_half, float(tot.mean()) + tot_half
    sig = np.sqrt(o.variance(f, n))
    pred = sig * _normal.pdf(f / sig) - f * _normal.cdf(-f / sig)  # E[(N(f, σ_v))⁻]
    l1 = "Base-Pos introduces positive bias to all values (NDSS Lemma 1)"
    positive("lemma1:base-pos-positive-bias", l1 + " - total over the domain", "total_bias_ci_lo", tot_lo, tot_hi,
             {"total_bias": float(tot.mean()), "total_bias_gaussian_prediction": float(pred.sum())},
             "lower end of the 99.9 % interval of the total bias must be > 0")
    resolvable = (extra["f_tilde"] < 0).sum(axis=0) >= 30
    if resolvable.any():
        lower = (st["bias"] - zc * st["se"])[resolvable]
        upper = (st["bias"] + zc * st["se"])[resolvable]
        positive("lemma1:base-pos-positive-bias:per-value", l1 + " - each value with >= 30 negative f~",
                 "min_lower_ci_where_resolvable", float(np.min(lower)), float(np.min(upper)),
                 {"values_resolvable": int(resolvable.sum()), "min_bias": float(st["bias"].min())}, z_basis)
    else:
        skip("lemma1:base-pos-positive-bias:per-value", l1, "no value had >= 30 negative f~ in the repetitions "
             "(a normal interval is unreliable for so skewed a variable)")

    # Lemma 2: normalised methods' biases sum to zero: Σ_v x_v = 1 in every repetition, to rounding
    for meth in _normalised() + _almost_normalised():
        st = _bias_stats(out[meth], f)
        total = float(st["bias"].sum())
        tol = 16.0 * U * d * max(1.0, float(np.max(np.abs(out[meth]))))
        m = {"values_with_significant_bias": int(np.sum(np.abs(st["bias"]) > zc * st["se"])),
             "sum_bias": total}
        if registry.get(meth).sums_to_one == "almost":
            add(f"lemma2:bias-sum-zero:{meth}", f"{registry.get(meth).label}'s biases sum to zero - finding: it sums "
                "to one only 'almost' (arXiv Table 1), so Lemma 2 does not apply", "finding", "abs_sum_bias", "frequency",
                abs(total), "<=", tol, None, m, "float64 rounding of two sums of d values: 16 u d max|x|",
                r=st["reps"])
            continue
        add(f"lemma2:bias-sum-zero:{meth}", f"{meth}: biases over the whole domain sum to 0 (NDSS Lemma 2)",
            "monte-carlo", "abs_sum_bias", "frequency", abs(total), "<=", tol, True, m,
            "float64 rounding of two sums of d values: 16 u d max|x|", r=st["reps"])

    # Lemma 4: non-negative normalised methods have positive bias where f_v = 0
    zero = f == 0
    for meth in _nonneg_normalised():
        x = out[meth][:, zero].mean(axis=1)  # per-repetition mean over the zero-frequency values
        if not np.any(x != 0):
            skip(f"lemma4:zero-value-positive-bias:{meth}", f"{meth}: positive bias at values with f_v = 0 "
                 "(NDSS Lemma 4)", f"every output at the {int(zero.sum())} zero-frequency values was exactly 0 in "
                 f"all {x.shape[0]} repetitions: a positive bias, if any, is below what they resolve (raise reps "
                 "or lower epsilon)", r=x.shape[0])
            continue
        half = _Z_RATIO * float(x.std(ddof=1)) / math.sqrt(x.shape[0])
        positive(f"lemma4:zero-value-positive-bias:{meth}", f"{meth}: positive bias at values with f_v = 0 "
                 "(NDSS Lemma 4)", "ci_lo_mean_bias_at_zeros", float(x.mean()) - half, float(x.mean()) + half,
                 {"mean_bias_at_zeros": float(x.mean()), "zero_values": int(zero.sum())},
                 "lower end of the 99.9 % interval must be > 0", r=x.shape[0])

    # Base-Pos = Post-Pos on single values; Post-Pos is not additive (NDSS §IV-A)
    diff = float(np.max(np.abs(extra["postpos_single"] - out["base-pos"])))
    add("base-pos=post-pos:single", "Post-Pos equals Base-Pos on single-value queries (NDSS §IV-A)",
        "monte-carlo", "max_abs_diff", "frequency", diff, "<=", 0.0, True, {}, "exact: the same max(x, 0)")
    frac = float(extra["postpos_nonadditive"].mean())
    add("post-pos:non-additive", "Post-Pos answers for disjoint A, B need not add up to A u B (NDSS §IV-A) - "
        "fraction of repetitions where they do not", "finding", "fraction_non_additive", "fraction", frac, ">",
        0.0, None, {}, "any repetition")

    # Norm-Hyb with θ in place of T is Norm-Cut (arXiv §3.3). Norm-Hyb's documented edge case: when the
    # kept set is the whole domain and sums to ≠ 1 it applies Norm-Sub to every value (normalize.norm_hyb),
    # so those repetitions are outside the claim and are counted, not compared.
    applicable = ~np.isnan(extra["hyb_theta"][:, 0]) & ~extra["hyb_whole_domain"]
    hyb_st = "Norm-Hyb with Norm-Cut's theta in place of T leaves the values Norm-Cut keeps unchanged (arXiv §3.3)"
    m_hyb = {"reps_whole_domain_kept": int(extra["hyb_whole_domain"].sum()),
             "reps_nothing_kept": int(np.isnan(extra["hyb_theta"][:, 0]).sum())}
    if applicable.any():
        hyb, cut = extra["hyb_theta"][applicable], out["norm-cut"][applicable]
        kept = cut > 0
        top_diff = float(np.max(np.abs(np.where(kept, hyb - cut, 0.0))))
        add("norm-hyb(theta):keeps-norm-cut-values", hyb_st, "monte-carlo", "max_abs_diff_on_kept", "frequency",
            top_diff, "<=", 0.0, True, m_hyb, "exact: kept values are copied", r=int(applicable.sum()))
        l1n = np.sum(np.abs(hyb - cut), axis=1)
        shortfall = 1.0 - cut.sum(axis=1)
        add("norm-hyb(theta)=norm-cut", "'if one uses theta as in Norm-Cut instead of T, Norm-Hyb becomes "
            "equivalent to Norm-Cut' (arXiv §3.3) - finding: they differ by Norm-Cut's shortfall 1 - sum, which "
            "Norm-Hyb spreads over the values below theta", "finding", "fraction_equal", "fraction",
            float(np.mean(l1n <= 1e-12)), ">=", 1.0, None,
            {**m_hyb, "max_l1_diff": float(l1n.max()), "mean_shortfall": float(shortfall.mean()),
             "max_abs_l1_minus_shortfall": float(np.max(np.abs(l1n - shortfall)))},
            "every repetition", r=int(applicable.sum()))
    else:
        for cid in ("norm-hyb(theta):keeps-norm-cut-values", "norm-hyb(theta)=norm-cut"):
            skip(cid, hyb_st, f"no repetition is in the claim's scope: Norm-Cut kept every value in "
                 f"{m_hyb['reps_whole_domain_kept']} (Norm-Hyb's documented edge case: Norm-Sub on all) and "
                 f"nothing in {m_hyb['reps_nothing_kept']}")

    _order_rows(out, extra["f_tilde"], reps, add)

    for row in rows:
        row.seconds = sim_seconds / len(rows)
        row.metrics.setdefault("power_s", s_fixed)
    return rows


def _order_rows(out, ft, reps, add):
    """Order preservation per method against the registry's claim (arXiv §3.6 / Table 1)."""
    paper_ok = []
    for meth in _mc_fast() + _mc_slow():
        info = registry.get(meth)
        x = out[meth]
        r = x.shape[0]
        order = np.argsort(ft[:r], axis=1, kind="stable")
        fs = np.take_along_axis(ft[:r], order, axis=1)
        xs = np.take_along_axis(x, order, axis=1)
        strict = np.diff(fs, axis=1) > 0
        dx = np.diff(xs, axis=1)
        inversions = int(np.sum(strict & (dx < 0)))
        ties = int(np.sum(strict & (dx == 0)))
        claim = info.order_preserving
        m = {"registry": claim, "inversions": inversions, "ties_created": ties, "pairs": int(strict.sum())}
        text = {"yes": "f~_a < f~_b => f'_a < f'_b (violations: inversions + ties created)",
                "weak": "f~_a < f~_b => f'_a <= f'_b (violations: inversions)",
                "no": "not order preserving - finding: inversions seen"}[claim]
        if claim == "no":
            add(f"order:{meth}", f"{meth}: order preservation as the registry states ('no': {text})", "finding",
                "inversions", "pairs", inversions, ">", 0, None, m, "any inversion", note=info.notes, r=r)
        else:
            value = inversions + (ties if claim == "yes" else 0)
            add(f"order:{meth}", f"{meth}: order preservation as the registry states ('{claim}': {text})",
                "monte-carlo", "order_violations", "pairs", value, "<=", 0, True, m, "exact: none allowed",
                note=info.notes if claim != "yes" else "", r=r)
        paper_ok.append((meth, inversions == 0 and ties == 0))
    ce = Estimate.from_frequencies([0.3, 0.29, -0.5, -0.5], n=10**6, epsilon=1.0, p=0.75, q=0.25)
    out_ce = normalize.norm_hyb(ce, k=1)
    add("order:norm-hyb:counterexample", "Norm-Hyb is not order preserving: f~ = (0.3, 0.29, -0.5, -0.5), only "
        "0.3 kept, gives (0.3, 0.7, 0, 0) (registry note)", "monte-carlo", "f'_1 - f'_0", "frequency",
        float(out_ce[1] - out_ce[0]), ">", 0.0, True, {"output": out_ce.tolist()}, "exact: an inversion", r=1)
    failing = [mth for mth, ok in paper_ok if not ok]
    add("order:paper-all-methods", "'all of the methods preserve the frequency order, f'_1 <= f'_2 iff "
        "f~_1 <= f~_2' (arXiv §3.6) - finding; methods where it fails here: " + (", ".join(failing) or "none"),
        "finding", "methods_failing", "methods", len(failing), "<=", 0, None, {"failing": failing},
        "none allowed")
