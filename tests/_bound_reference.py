"""High-precision references for the error-bound property (not the package's code): random small problems
(d = 2–8) of four objective kinds and their optima to ~30 digits with mpmath, from the float data as given.

Kinds (each with the simplex, or the simplex and one SubsetSum ``==`` on a random proper subset S):

* ``builtin``: ``"cls"``, h_v(x) = (x − f̃_v)²;
* ``recognised``: a cvxpy callable CLS + λ·Σ kl_div(f, p), CLS + λ·Σ rel_entr(p, f) or CLS − c·Σ log f;
* ``declared``: the same three as a :class:`~ldpopt.problems.SeparableObjective` (numpy h, h', h'');
* ``smooth``: CLS + w·Σ (f_{v+1} − f_v)² (a quadratic: one sparse QP) or that plus λ·Σ kl_div(f, p)
  (the Newton route).

References. Separable kinds: the feasible set is a product of blocks (S with mass b, the rest with
1 − b), so f* = x(ν_k) per block with x_v(ν) = argmin_{x ≥ 0} h_v(x) + ν x in closed form — cls:
max(f̃ − ν/2, 0); rel_entr and log: the positive root of 2x² + (ν − 2f̃)x − a = 0 (a = λp or c); kl:
(λ/2)·W((2/λ)·exp((2f̃ − ν + λ log p)/λ)), W Lambert's — and ν_k the root of Σ_k x(ν) = mass, found
by bisection in float and then Newton in mpmath (dx/dν = −1/h'' on the positive values), checked to
|Σ x − mass| < 1e-25. Smooth kinds: the KKT system (stationarity on the positive values, Σ f = 1, the
subset row) solved in mpmath — for the quadratic one exactly (one linear solve on the support of the
float answer, then every sign condition checked; all 2^d supports when that check fails), for the one
with KL by Newton from the float answer (every f_v > 0: kl's h' → −∞ at 0) to a residual < 1e-25.
"""

from __future__ import annotations

import itertools

import cvxpy as cp
import mpmath as mp
import numpy as np

from ldpopt.estimate import Estimate
from ldpopt.problems import SeparableObjective, Simplex, SubsetSum

mp.mp.dps = 40
KINDS = ("builtin", "recognised", "declared", "smooth")
SEPARABLE = ("kl", "rel_entr", "log")


def make_case(kind: str, rng) -> dict:
    """A random case: d, the estimate (noisy counts, so some values sit at 0), the family's weights,
    the constraints (S, b) or None."""
    d = int(rng.integers(2, 9))
    n = int(rng.choice([30, 300, 3000]))
    eps = float(rng.uniform(0.5, 4.0))
    p_, q_ = np.exp(eps) / (np.exp(eps) + d - 1), 1.0 / (np.exp(eps) + d - 1)
    counts = rng.multinomial(n, q_ + (p_ - q_) * rng.dirichlet(np.full(d, 0.5))).astype(float)
    est = Estimate.from_counts(counts, n, eps, p_, q_)
    sub = None
    if rng.random() < 0.5:
        k = int(rng.integers(1, d))
        sub = (np.sort(rng.choice(d, k, replace=False)), float(np.round(rng.uniform(0.05, 0.95), 3)))
    fam = {"builtin": "cls", "smooth": str(rng.choice(["quadratic", "kl_smooth"]))}.get(kind) or str(rng.choice(SEPARABLE))
    return {"kind": kind, "family": fam, "d": d, "est": est, "sub": sub,
            "lam": float(10.0 ** rng.uniform(-4, 1)), "w": float(10.0 ** rng.uniform(-2, 1)),
            "p": rng.dirichlet(np.ones(d))}


def constraints(case) -> list:
    if case["sub"] is None:
        return [Simplex()]
    return [Simplex(), SubsetSum(case["sub"][0], case["sub"][1])]


def objective(case):
    """What ``Problem`` is given for the case."""
    kind, fam, lam, p, w = case["kind"], case["family"], case["lam"], case["p"], case["w"]
    if kind == "builtin":
        return "cls"
    if kind == "smooth":
        if fam == "quadratic":
            return lambda f, e: cp.sum_squares(f - e.f_tilde) + w * cp.sum_squares(f[1:] - f[:-1])
        return lambda f, e: (cp.sum_squares(f - e.f_tilde) + lam * cp.sum(cp.kl_div(f, p))
                             + w * cp.sum_squares(f[1:] - f[:-1]))
    if kind == "recognised":
        return {"kl": lambda f, e: cp.sum_squares(f - e.f_tilde) + lam * cp.sum(cp.kl_div(f, p)),
                "rel_entr": lambda f, e: cp.sum_squares(f - e.f_tilde) + lam * cp.sum(cp.rel_entr(p, f)),
                "log": lambda f, e: cp.sum_squares(f - e.f_tilde) - lam * cp.sum(cp.log(f))}[fam]
    ft = case["est"].f_tilde
    expr = objective({**case, "kind": "recognised"})  # the same J for the cvxpy side, as a user would give it
    with np.errstate(all="ignore"):
        if fam == "kl":
            h = lambda f, e: (f - ft) ** 2 + lam * (f * np.log(f / p) - f + p)
            dh = lambda f, e: 2 * (f - ft) + lam * np.log(f / p)
            d2h = lambda f, e: 2 + lam / f
        else:
            a = lam * p if fam == "rel_entr" else np.full(case["d"], lam)
            h = lambda f, e: (f - ft) ** 2 - a * np.log(f)  # rel_entr(p, f) up to a constant
            dh = lambda f, e: 2 * (f - ft) - a / f
            d2h = lambda f, e: 2 + a / (f * f)
    return SeparableObjective(h, dh, d2h, name=fam, curvature=lambda l, u, e: np.full(np.shape(l), 2.0),
                              cvxpy_expr=expr)


# -- the references ------------------------------------------------------------------------------------
def _x(case, nu, v):
    """x_v(ν) = argmin_{x ≥ 0} h_v(x) + ν x, mpmath (module docstring)."""
    ft = mp.mpf(float(case["est"].f_tilde[v]))
    fam = case["family"]
    if fam == "cls":
        return max(ft - nu / 2, mp.mpf(0))
    lam = mp.mpf(case["lam"])
    if fam == "kl":
        pv = mp.mpf(float(case["p"][v]))
        arg = (2 * ft - nu + lam * mp.log(pv)) / lam
        return lam / 2 * mp.lambertw(2 / lam * mp.exp(arg)).real
    a = lam * mp.mpf(float(case["p"][v])) if fam == "rel_entr" else lam
    b = nu - 2 * ft
    return (-b + mp.sqrt(b * b + 8 * a)) / 4 if b < 0 else 2 * a / (b + mp.sqrt(b * b + 8 * a))


def _h2(case, x, v):
    fam = case["family"]
    lam = mp.mpf(case["lam"])
    if fam == "cls":
        return mp.mpf(2)
    if fam == "kl":
        return 2 + lam / x
    a = lam * mp.mpf(float(case["p"][v])) if fam == "rel_entr" else lam
    return 2 + a / (x * x)


def _block(case, idx, mass, nu0: float | None = None):
    """{v: f*_v} on the values ``idx`` whose mass is ``mass``; ``nu0``: a float estimate of ν (a
    bracket of ±1e-6 around it, widened until it brackets, instead of 120 bisections from ±1e4)."""
    mass = mp.mpf(mass)
    total = lambda nu: mp.fsum(_x(case, nu, v) for v in idx)
    if nu0 is None:
        lo, hi, steps = mp.mpf(-1e4), mp.mpf(1e4), 120
    else:
        width = mp.mpf(1e-6) * (1 + abs(nu0))
        lo, hi, steps = mp.mpf(nu0) - width, mp.mpf(nu0) + width, 0
        while not (total(lo) > mass > total(hi)):
            width *= 16
            lo, hi = mp.mpf(nu0) - width, mp.mpf(nu0) + width
    for _ in range(steps):  # bisection (Σ x decreasing in ν) to a Newton start
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if total(mid) > mass else (lo, mid)
    nu = (lo + hi) / 2
    for _ in range(60):
        xs = [_x(case, nu, v) for v in idx]
        r = mp.fsum(xs) - mass
        if abs(r) < mp.mpf(10) ** -32:
            break
        slope = -mp.fsum(1 / _h2(case, x, v) for x, v in zip(xs, idx) if x > 0)
        step = nu - r / slope if slope != 0 else (lo + hi) / 2
        if r > 0:
            lo = nu
        else:
            hi = nu
        nu = step if lo < step < hi else (lo + hi) / 2
    xs = [_x(case, nu, v) for v in idx]
    assert abs(mp.fsum(xs) - mass) < mp.mpf(10) ** -25, "reference did not converge"
    return dict(zip(idx, xs))


def _rows(case):
    d = case["d"]
    rows, rhs = [[1] * d], [mp.mpf(1)]
    if case["sub"] is not None:
        S, b = case["sub"]
        rows.append([1 if v in set(S.tolist()) else 0 for v in range(d)])
        rhs.append(mp.mpf(b))
    return rows, rhs


def _smooth_grad_hess(case, f):
    d, w = case["d"], mp.mpf(case["w"])
    ft = [mp.mpf(float(x)) for x in case["est"].f_tilde]
    g = [2 * (f[v] - ft[v]) for v in range(d)]
    H = mp.matrix(d, d)
    for v in range(d):
        H[v, v] = 2
    for v in range(d - 1):  # w (f_{v+1} − f_v)²
        diff = f[v + 1] - f[v]
        g[v] -= 2 * w * diff
        g[v + 1] += 2 * w * diff
        H[v, v] += 2 * w
        H[v + 1, v + 1] += 2 * w
        H[v, v + 1] -= 2 * w
        H[v + 1, v] -= 2 * w
    if case["family"] == "kl_smooth":
        lam = mp.mpf(case["lam"])
        for v in range(d):
            pv = mp.mpf(float(case["p"][v]))
            g[v] += lam * mp.log(f[v] / pv)
            H[v, v] += lam / f[v]
    return g, H


def _kkt_on_support(case, support):
    """Quadratic kind: the KKT point with f = 0 off ``support`` (one linear solve), or None when a sign
    condition fails."""
    d = case["d"]
    rows, rhs = _rows(case)
    F = list(support)
    m = len(rows)
    if any(all(r[v] == 0 for v in F) for r in rows):
        return None
    z = [mp.mpf(0)] * d
    g0, H = _smooth_grad_hess(case, z)  # ∇J(f) = H f + g0 (quadratic)
    n = len(F) + m
    K, rhs_v = mp.matrix(n, n), mp.matrix(n, 1)
    for i, v in enumerate(F):
        for j, u in enumerate(F):
            K[i, j] = H[v, u]
        for k in range(m):
            K[i, len(F) + k] = rows[k][v]
            K[len(F) + k, i] = rows[k][v]
        rhs_v[i] = -g0[v]
    for k in range(m):
        rhs_v[len(F) + k] = rhs[k]
    try:
        sol = mp.lu_solve(K, rhs_v)
    except ZeroDivisionError:
        return None
    f = [mp.mpf(0)] * d
    for i, v in enumerate(F):
        f[v] = sol[i]
    nu = [sol[len(F) + k] for k in range(m)]
    if any(f[v] < 0 for v in F):
        return None
    g, _ = _smooth_grad_hess(case, f)
    for v in range(d):
        if v not in F and g[v] + sum(nu[k] * rows[k][v] for k in range(m)) < -mp.mpf(10) ** -30:
            return None
    return f


def _smooth(case, f_float):
    d = case["d"]
    if case["family"] == "quadratic":
        guess = tuple(v for v in range(d) if f_float[v] > 1e-9)
        f = _kkt_on_support(case, guess) if guess else None
        if f is None:
            for k in range(1, d + 1):
                for supp in itertools.combinations(range(d), k):
                    f = _kkt_on_support(case, supp)
                    if f is not None:
                        return f
            raise AssertionError("no support satisfies the KKT conditions")
        return f
    rows, rhs = _rows(case)
    m = len(rows)
    u = [mp.log(mp.mpf(max(float(x), 1e-30))) for x in f_float]  # Newton in u = log f: f > 0 throughout
    f = [mp.exp(x) for x in u]
    g, _ = _smooth_grad_hess(case, f)
    nu = [-mp.fsum(g) / d] + [mp.mpf(0)] * (m - 1)

    def residual(f, nu):
        g, H = _smooth_grad_hess(case, f)
        res = mp.matrix(d + m, 1)
        for v in range(d):
            res[v] = g[v] + sum(nu[k] * rows[k][v] for k in range(m))
        for k in range(m):
            res[d + k] = mp.fsum(rows[k][v] * f[v] for v in range(d)) - rhs[k]
        return res, H

    res, H = residual(f, nu)
    for _ in range(200):
        norm = max(abs(x) for x in res)
        if norm < mp.mpf(10) ** -32:
            return f
        K = mp.matrix(d + m, d + m)
        for v in range(d):
            for w_ in range(d):
                K[v, w_] = H[v, w_] * f[w_]
            for k in range(m):
                K[v, d + k] = rows[k][v]
                K[d + k, v] = rows[k][v] * f[v]
        with mp.workdps(160):  # 1/f_v spans many decades when a value is tiny
            step = mp.lu_solve(K, -res)
        t = mp.mpf(1)
        while True:  # backtracking on the residual's max norm
            u_t = [u[v] + t * step[v] for v in range(d)]
            f_t = [mp.exp(x) for x in u_t]
            nu_t = [nu[k] + t * step[d + k] for k in range(m)]
            res_t, H_t = residual(f_t, nu_t)
            if max(abs(x) for x in res_t) < (1 - t / 4) * norm or t < mp.mpf(2) ** -30:
                break
            t /= 2
        u, f, nu, res, H = u_t, f_t, nu_t, res_t, H_t
    raise AssertionError("Newton reference did not converge")


def reference(case, f_float) -> list:
    """The optimum to ~30 digits (list of mpf); ``f_float`` (ldpopt's answer) only picks the smooth
    quadratic's support guess and the smooth KKT Newton's start, never the answer."""
    if case["kind"] == "smooth":
        return _smooth(case, f_float)
    d = case["d"]
    if case["sub"] is None:
        got = _block(case, list(range(d)), 1)
    else:
        S, b = case["sub"]
        rest = [v for v in range(d) if v not in set(S.tolist())]
        got = {**_block(case, S.tolist(), b), **_block(case, rest, 1 - mp.mpf(b))}
    return [got[v] for v in range(d)]


def distance(f, ref) -> float:
    """max_v |f_v − f*_v| in mpmath (f's floats taken exactly), rounded up to a float."""
    top = max(abs(mp.mpf(float(a)) - b) for a, b in zip(f, ref))
    return float(top) * (1 + 2.0**-52)


def run_cases(kind: str, n_cases: int, seed: int) -> dict:
    """Solve ``n_cases`` random cases of ``kind`` with ``Problem.solve()`` and compare every reported
    bound with the true distance: {"cases", "bounds", "below", "statuses", "worst": (ratio, case index),
    "failures": [(index, family, distance, bound)]}."""
    import collections
    import warnings

    from ldpopt.problems import Problem, SolverWarning

    warnings.simplefilter("ignore", RuntimeWarning)  # the declared objectives' numpy at the domain's edge
    rng = np.random.default_rng(seed)
    out = {"cases": 0, "bounds": 0, "below": 0, "statuses": collections.Counter(), "worst": (0.0, -1), "failures": []}
    for i in range(n_cases):
        case = make_case(kind, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SolverWarning)
            sol = Problem(case["est"], objective(case), constraints(case)).solve()
        out["cases"] += 1
        out["statuses"][sol.status] += 1
        bound = None if sol.checks is None else sol.checks.error_bound
        if bound is None or not np.all(np.isfinite(sol.f)):
            continue
        dist = distance(sol.f, reference(case, sol.f))
        out["bounds"] += 1
        if dist > bound:
            out["below"] += 1
            out["failures"].append((i, case["family"], dist, bound))
        if bound > 0 and dist / bound > out["worst"][0]:
            out["worst"] = (dist / bound, i)
    out["statuses"] = dict(out["statuses"])
    return out


def user_constraints(case) -> list:
    """The same feasible set with the subset row written as a user's cvxpy row (or, without a
    subset, a user row f_0 ≥ 0 that the simplex already implies): the bound then comes from the
    route's multipliers and :mod:`ldpopt.problems.check.verdict`'s error bound, which must not take f as feasible."""
    if case["sub"] is None:
        return [Simplex(), lambda f, e: f[0] >= 0]
    idx, b = case["sub"]
    return [Simplex(), lambda f, e: cp.sum(f[idx]) == b]


def run_off_cases(kind: str, n_cases: int, seed: int, user_rows: bool = False) -> dict:
    """Like :func:`run_cases`, and each answer is also moved off its rows on purpose: f + s·δ·w with
    w ≥ 0 summing to 1 (so Σ f and the subset sum move by up to δ, and values at 0 go below it when
    s = −1), δ = 10^U(−10, −8), then checked again (``check_solution`` with the solve's multipliers).
    ``user_rows``: the subset row given as a user's cvxpy row (:func:`user_constraints`). Counts the
    bounds reported on the moved points (``moved_bounds``), those below the true distance
    (``below``: solved or moved) and the moved points whose bound was refused (``moved_refused``)."""
    import collections
    import warnings

    from ldpopt.problems import Problem, SolverWarning
    from ldpopt.problems.check.verdict import check_solution

    warnings.simplefilter("ignore", RuntimeWarning)
    rng = np.random.default_rng(seed)
    out = {"cases": 0, "bounds": 0, "moved_bounds": 0, "moved_refused": 0, "below": 0,
           "statuses": collections.Counter(), "worst": (0.0, -1), "failures": []}
    for i in range(n_cases):
        case = make_case(kind, rng)
        delta = 10.0 ** rng.uniform(-10, -8)
        sign = float(rng.choice([-1.0, 1.0]))
        w = rng.dirichlet(np.ones(case["d"]))
        cons = user_constraints(case) if user_rows else constraints(case)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SolverWarning)
            P = Problem(case["est"], objective(case), cons)
            sol = P.solve()
        out["cases"] += 1
        out["statuses"][sol.status] += 1
        if not np.all(np.isfinite(sol.f)):
            continue
        ref = reference(case, sol.f)
        moved = sol.f + sign * delta * w
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ch = check_solution(P, moved, sol.duals) if sol.duals else None
        for f, checks, tag in ((sol.f, sol.checks, "solved"), (moved, ch, "moved")):
            bound = None if checks is None else checks.error_bound
            if bound is None:
                out["moved_refused"] += tag == "moved"
                continue
            dist = distance(f, ref)
            out["bounds"] += tag == "solved"
            out["moved_bounds"] += tag == "moved"
            if dist > bound:
                out["below"] += 1
                out["failures"].append((i, tag, case["family"], dist, bound))
            if bound > 0 and dist / bound > out["worst"][0]:
                out["worst"] = (dist / bound, i)
    out["statuses"] = dict(out["statuses"])
    return out
