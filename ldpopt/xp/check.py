"""ldpopt's check of a simplex-type closed form on an array namespace (numpy or CuPy, the same code):
the numbers and the verdict of ``ldpopt.problems.check.verdict.check_solution`` for the problem
{min J(f) : f ≥ 0, Σ f = 1} — J = ‖f − f̃‖² (``"cls"``: Norm-Sub / CLS, arXiv §3.5, Appendix B) or
the weighted MLE of arXiv Eq. 13 (``"weighted-mle"``: MLE-Apx, §3.4) — at a point f on the device,
with the multipliers recovered from f (a closed form has no solver to give them). Equal to the CPU
check within 1e-12, with the same verdict (``tests/test_xp_check.py``).

Notes: docs/notes/devices.md, "ldpopt.xp.check"."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..problems.objectives.separable import WeightedMLESep
from .forms import _module_of

__all__ = ["Cls", "DeviceChecks", "WeightedMLE", "check_simplex"]

_EPS = 2.0 ** -52
STATIONARITY_TOL, GAP_TOL = 1e-5, 1e-6  # ldpopt.problems.check.verdict' tolerances (the same constants)


class Cls:
    """h_v(x) = (x − f̃_v)²: the per-value terms of ``"cls"`` (``objectives.separable.Quadratic``)."""

    def __init__(self, f_tilde):
        self.m = f_tilde
        self.xp = _module_of(f_tilde)

    def value(self, f):
        return (f - self.m) ** 2

    def d1(self, f):
        return 2.0 * (f - self.m)

    grad = d1  # the objective's gradient (LeastSquares.gradient): the same formula

    def d1_scale(self, f):
        return 2.0 * (self.xp.abs(f) + self.xp.abs(self.m))

    def d2(self, f):
        return self.xp.full(f.shape, 2.0)

    def mu(self, l, u):
        return self.xp.full(self.m.shape, 2.0)

    def interior(self, t):
        return self.m - t / 2.0


class WeightedMLE(WeightedMLESep):
    """h_v(x) = (a_v − Bx)²/(s + Cx), a = c/n − q, B = p − q, s = q(1 − q), C = (p − q)(1 − p − q):
    arXiv Eq. 13. The per-value terms are ``objectives.separable.WeightedMLESep``'s own (elementwise
    arithmetic, so they run on either namespace), built from the counts instead of an Estimate; the
    gradient for the stationarity check in ``objectives.WeightedMLE.gradient``'s form."""

    def __init__(self, counts, n: int, p: float, q: float):
        self.xp = _module_of(counts)
        self.p, self.q = float(p), float(q)
        self.a = counts / n - q
        self.B, self.s, self.C = p - q, q * (1.0 - q), (p - q) * (1.0 - p - q)
        self._counts = counts

    def grad(self, f):
        r = self.a - self.B * f
        w = self.s + self.C * f
        return (-2.0 * self.B * r * w - self.C * r**2) / w**2

    def interior(self, t):
        return self._interior(t, 0.0, 1.0, None)


def _argmin(h, t: float, total: float):
    """x_v(t) = argmin_{[0, total]} h_v(x) + t·x (``Separable.argmin`` with l = 0, u = total)."""
    xp = h.xp
    zero = xp.zeros_like(h.m if isinstance(h, Cls) else h.a)
    at_l = ~(h.d1(zero) + t < 0)
    at_u = ~at_l & (h.d1(zero + total) + t <= 0)
    mid = xp.clip(h.interior(t), 0.0, total)
    return xp.where(at_l, 0.0, xp.where(at_u, total, mid))


def _argmin_rounding(h, f, x, t: float, total: float):
    """``certificate.argmin_rounding``: 8ε(|f| + |x| + s/h'') where x is inner or within
    rounding of a kink, plus the argmin's residual 2|h'(x) + t|/h''(x) where inner, 0 elsewhere (inf
    where not finite)."""
    xp = h.xp
    s = h.d1_scale(x) + abs(t)
    inner = (x > 0) & (x < total)
    g = xp.abs(h.d1(x) + t)
    near = ~inner & (g <= 8 * _EPS * s)
    h2 = h.d2(x)
    e = xp.where(inner | near, 8 * _EPS * (xp.abs(f) + xp.abs(x) + s / h2), 0.0) + xp.where(inner, 2.0 * g / h2, 0.0)
    return xp.where(xp.isfinite(e), e, math.inf)


def _argmin_bound(h, f, lam: float, total: float, newton: int = 5):
    """(bound, rounding, λ'): ``certificate.argmin_bound`` with no rows (module notes)."""
    xp = h.xp
    x = _argmin(h, lam, total)
    err = float(xp.sum(x)) - total
    tol = 4 * _EPS * max(abs(total), 1e-300)
    for _ in range(newton):  # ≤ 5 scalar Newton steps on Σ x(λ) = total
        if not abs(err) > tol:
            break
        inner = (x > 0) & (x < total)
        w = 1.0 / h.d2(x)
        slope = float(xp.sum(xp.where(inner & xp.isfinite(w), w, 0.0)))
        if not (math.isfinite(slope) and slope > 0):
            break
        lam_new = lam + err / slope
        x_new = _argmin(h, lam_new, total)
        err_new = float(xp.sum(x_new)) - total
        if not abs(err_new) < abs(err):
            break
        lam, x, err = lam_new, x_new, err_new
    bound = float(xp.max(xp.abs(f - x))) + abs(err)
    e = _argmin_rounding(h, f, x, lam, total)
    return bound, float(xp.sum(e) + xp.max(e)), lam


@dataclass
class DeviceChecks:
    """The numbers of ``ldpopt.problems.check.verdict.Checks`` for the simplex problem (module notes),
    as host floats, and the multipliers recovered from f (on f's namespace)."""

    violations: dict
    aggregate_violation: float
    stationarity: float
    dual_infeasibility: float
    gap: float
    error_bound: float
    distance_linf: float
    distance_rounding: float
    passed: bool
    failed: list = field(default_factory=list)
    duals: dict = field(default_factory=dict)


def check_simplex(f, terms, total: float = 1.0) -> DeviceChecks:
    """ldpopt's check of ``f`` for {min J : f ≥ 0, Σ f = 1}, J given by its per-value ``terms``
    (:class:`Cls` or :class:`WeightedMLE` on f's namespace); see the module notes."""
    xp = _module_of(f)
    d = f.shape[0]
    tol_v, acc = 1e-6 / d, 1e-2 / d
    failed = []
    if not bool(xp.all(xp.isfinite(f))):
        return DeviceChecks({}, math.inf, math.inf, math.inf, math.inf, math.inf, math.inf, math.inf,
                            False, ["no finite point returned"])
    s_f = float(xp.sum(f))
    neg = max(0.0, -float(xp.min(f)))
    viol = {"nonnegative": neg, "sum": abs(s_f - total)}
    for name, v in viol.items():
        if not v <= tol_v:
            failed.append(f"constraint residual {v:.1e} > {tol_v:.1e} ({name})")
    agg = float(xp.sum(xp.maximum(-f, 0.0))) + abs(s_f - total)
    # multipliers recovered from f (recover_multipliers, no rows)
    d1 = terms.d1(f)
    inner = (f > 4 * _EPS * max(abs(total), 1.0)) & xp.isfinite(d1)
    k = int(xp.count_nonzero(inner))
    if k:
        lam = -float(xp.sum(xp.where(inner, d1, 0.0))) / k
    else:  # every value at 0: the end of the interval −h'(f_v) ≤ λ moved inside it
        a = float(xp.max(-d1))
        lam = a + 1e-6 * (1.0 + abs(a))
    del inner  # (the vectors no later step reads are freed as soon as they are spent: at d = 10⁸
    # each is 800 MB)
    y = xp.where(f <= 0, d1 + lam, 0.0)
    del d1
    # checks.check_solution: stationarity, dual infeasibility, gap on the objective's gradient
    grad = terms.grad(f)
    move = float(xp.max(xp.abs(terms.grad(f + 1.0 / d) - grad)))
    scale = max(float(xp.max(xp.abs(grad))), move, 2.2250738585072014e-308)
    stat = float(xp.max(xp.abs(grad - y + lam))) / scale
    per = move if move > 0 else float(xp.mean(xp.abs(grad)))
    del grad
    lag = float(xp.sum(y * -f)) + lam * (s_f - total)
    dual_inf = max(0.0, -float(xp.min(y))) / scale
    gap = abs(lag) / max(per * float(xp.sum(xp.abs(f))), 2.2250738585072014e-308)
    if not dual_inf <= STATIONARITY_TOL:
        failed.append(f"dual infeasibility {dual_inf:.1e} > {STATIONARITY_TOL:.0e}")
    dist, rnd = _distance(terms, f, lam, total, s_f, neg)
    bound = dist + rnd
    if not bound <= acc:  # the argmin bound is linear in the error: it decides alone
        failed.append(f"KKT not certified: stationarity {stat:.1e}, duality gap {gap:.1e}, "
                      f"error bound {bound:.1e} > {acc:.1e}")
    return DeviceChecks(viol, agg, stat, dual_inf, gap, bound, dist, rnd, not failed, failed,
                        {"nonnegative": y, "sum": lam})


def _distance(h, f, lam: float, total: float, s_f: float, neg: float) -> tuple[float, float]:
    """(distance_linf, distance_rounding) of ``certificate._certify_full`` for the simplex: the
    argmin bound or √(2·gap/μ), whichever resolves f* better."""
    xp = h.xp
    d = f.shape[0]
    inner = (f > 0) & (f < total)
    terms = xp.where(inner, xp.abs(lam) / h.d2(f), 0.0)
    feas_tol = max(max(1e-9 / d, 1e-14) * max(total, 1.0),
                   4 * _EPS * (float(xp.sum(xp.abs(f))) + float(xp.sum(xp.where(xp.isfinite(terms), terms, 0.0)))))
    del inner, terms
    viol = max(neg, abs(s_f - total))
    fz = _argmin(h, lam, total)
    hv, hz = h.value(f), h.value(fz)
    diff = f != fz
    e = xp.where(diff, (hv - hz) + lam * (f - fz), 0.0)
    lin = lam * (s_f - total)
    gap = float(xp.sum(e)) - lin
    floor = 16 * _EPS * (float(xp.sum(xp.where(diff, xp.abs(hv), 0.0)))
                         + float(xp.sum(xp.where(diff, xp.abs(lam * f), 0.0))) + abs(lin))
    del hv, hz, diff, e
    mu = h.mu(0.0, total)
    gb = max(gap, floor)
    off = neg > 0 or abs(s_f - total) > 2 * d * _EPS * (float(xp.sum(xp.abs(f))) + abs(total))
    dl = math.nan if viol > feas_tol else float(xp.max(xp.sqrt(2.0 * gb / mu)))
    drnd = float(xp.max(xp.sqrt(8.0 * floor / mu)))
    e_pt = _argmin_rounding(h, f, fz, lam, total)
    del fz
    drnd = max(drnd, float(xp.sum(e_pt) + xp.max(e_pt)))
    del e_pt
    if off and not viol > feas_tol:  # as certificate._certify_full: a point off Σ f = total
        # (within feas_tol): the gap at the feasible f̂ = max(f, 0)·total/Σ max(f, 0) against the same
        # dual value, plus ‖f − f̂‖∞ (certificate.feasible_near_blocks on the plain simplex)
        fp = xp.maximum(f, 0.0)
        have = float(xp.sum(fp))
        fh = fp * (total / have) if have > 0 else xp.full(d, total / d)
        fz = _argmin(h, lam, total)
        hh, hz = h.value(fh), h.value(fz)
        dh = fh != fz
        eh = xp.where(dh, (hh - hz) + lam * (fh - fz), 0.0)
        lin_h = lam * (float(xp.sum(fh)) - total)
        floor_h = 16 * _EPS * (float(xp.sum(xp.where(dh, xp.abs(hh), 0.0)))
                               + float(xp.sum(xp.where(dh, xp.abs(lam * fh), 0.0))) + abs(lin_h))
        gap_h = max(float(xp.sum(eh)) - lin_h, floor_h)
        dl = float(xp.max(xp.sqrt(2.0 * gap_h / mu))) + float(xp.max(xp.abs(f - fh)))
        del fp, fh, fz, hh, hz, dh, eh
    da, arnd, _ = _argmin_bound(h, f, lam, total)
    drnd = max(drnd, arnd)

    def resolved(b, r):
        return max(b, r) if math.isfinite(b) else math.inf

    return (da, arnd) if resolved(da, arnd) <= resolved(dl, drnd) else (dl, drnd)
