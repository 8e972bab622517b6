r"""The equivalence claims, declared as data, and the two referees that decide them.

Details: docs/experiments.md, section `ldpopt.verify.equivalences`.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..estimate import Estimate
from ..methods import em as _em
from ..methods import mle, normalize
from ..methods.bayes import POWER_FIT_MAX_D, POWER_S_FIXED  # noqa: F401  (re-exported)
from .certificate_referee import certificate_metrics
from .instances import setting
from .result import ClaimResult, not_refereed
from .tolerances import (
    _SCS_OPTS,
    KKT_TOL,
    _gradient_scale,
    _hessian_diag,
    _solver_tolerance,
    resolution,
    simplex_kkt,
    solver_distance_bound,
)


def equivalences(methods=None) -> dict[str, dict]:
    """The equivalence claims, asked of the method registry: one per method with a problem statement
    (:class:`ldpopt.methods.ProblemStatement`), claim id ``"<method>=<problem>"`` → its statement,
    the method's record and the statement. ``methods``: only these (names, records, callables,
    ``FILE.py:NAME``; a method without a problem statement is a ``ValueError``), default every
    registered method that has one."""
    from .. import methods as _methods

    if methods is None:
        infos = [_methods.get(m) for m in _methods.names()]
        infos = [i for i in infos if i.problem is not None]
    else:
        infos = [_methods.resolve(m, where="methods") for m in methods]
        bare = [i.name for i in infos if i.problem is None]
        if bare:
            raise ValueError(f"methods: {bare[0]!r} states no problem (register it with problem=...), so "
                             "there is no equivalence to check")
    return {f"{i.name}={p.name}": dict(statement=p.statement, method=i, problem=p, closed=i.func)
            for i in infos if (p := i.problem) is not None}  # (every one has a problem here)


#: the built-in equivalence claims when this module was imported (:func:`equivalences` is the live
#: list, with the user's registered methods): kept for callers of earlier releases
EQUIVALENCES: dict[str, dict] = equivalences()


def _solve(problem, solver: str):
    opts = dict(_SCS_OPTS) if solver == "SCS" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return problem.solve(solver=solver, progress=False, **opts)  # a referee: no progress lines in the report


def _memo(memo: dict | None, key, fn):
    """``fn()``, computed once per instance when the runner passes its ``memo`` (keyed by the closed
    form's own function, so a planted replacement in :data:`EQUIVALENCES` is never served a cached
    output of the original). At d = 10⁷ EM costs ~5 s CPU and was run three times per instance."""
    if memo is None:
        return fn()
    if key not in memo:
        memo[key] = fn()
    return memo[key]


def _referee_chain(build, solver, fallback):
    """Solve a fresh problem from ``build()`` with ``solver``, then each of ``fallback``, until one
    ends ``optimal`` (by ldpopt's own check). Returns (problem, solution or None, "name:status -> …").
    A referee failure is recorded, never raised: it makes a row "not refereed", not a failed claim."""
    tried = []
    for name in (solver, *fallback):
        try:
            problem = build()
            sol = _solve(problem, name)
        except Exception as exc:  # noqa: BLE001 - a referee failure is recorded, never raised
            tried.append(f"{name}:error {type(exc).__name__}: {exc}"[:160])
            continue
        tried.append(f"{name}:{sol.status}")
        if sol.status == "optimal":
            return problem, sol, " -> ".join(tried)
    return None, None, " -> ".join(tried)


def _certificate_row(est, f_c, objective, mean, closed_tol, base, constraints=None) -> ClaimResult:
    from ..problems.solvers.structured import NotApplicable

    name = objective if isinstance(objective, str) else getattr(objective, "name", str(objective))
    try:
        cert = certificate_metrics(est, f_c, objective, mean, constraints, closed_tol)
    except NotApplicable as exc:
        return not_refereed(f"no certificate for objective {name!r} with these constraints ({exc}); "
                            "use a solver referee", referee="certificate", **base)
    tol, res = cert["tolerance"], resolution(est.d)
    basis = cert.pop("tolerance_basis")
    if not tol <= res and not cert["max_abs_error_bound"] > tol:  # a bound above tol decides: fails
        return not_refereed(f"the certificate's rounding bound {tol:.3g} exceeds the frequency resolution "
                            f"1/(10 d) = {res:.3g}", referee="certificate", value=cert["max_abs_error_bound"],
                            tolerance=tol, tolerance_basis=basis, metrics=cert, **base)
    return ClaimResult(referee="certificate", value=cert["max_abs_error_bound"], tolerance=tol,
                       tolerance_basis=basis, metrics=cert, **base)


def _solver_row(est, f_c, objective, mean, solver, fallback, base) -> ClaimResult:
    from ..problems import Problem
    from ..problems.objectives.builtins import make_objective

    obj = make_objective(objective, mean=mean)
    problem, sol, referee = _referee_chain(lambda: Problem(est, obj), solver, fallback)
    if sol is None:
        return not_refereed(f"referee did not solve: {referee}", referee=referee, **base)
    used = sol.solver or solver
    g = obj.gradient(f_c, est)
    kkt = simplex_kkt(g, f_c, scale=_gradient_scale(obj, est))
    j_c, j_s = obj.value(f_c, est), obj.value(sol.f, est)
    a, r, _ = _solver_tolerance(used, obj)
    k_mult = float(getattr(problem, "multiplier", 1.0))
    lam = kkt["multiplier"]
    # the solver's point may violate the constraints by its feasibility tolerance and so sit below J*
    infeas = abs(lam) * abs(float(np.sum(sol.f)) - 1.0) + float(np.max(np.abs(g - lam))) * float(
        np.sum(np.maximum(-sol.f, 0.0)))
    tol_j = 10.0 * (a + r * abs(float(problem.cvxpy_problem.value))) / k_mult + infeas
    hess = _hessian_diag(obj, f_c, est)
    pos = hess[np.isfinite(hess) & (hess > 0)]
    mu = float(np.min(pos)) if pos.size else 0.0
    tol_f = solver_distance_bound(tol_j, j_s - j_c, mu)
    value = float(np.max(np.abs(f_c - sol.f)))
    m = {"objective_closed": j_c, "objective_solver": j_s, "objective_gap": j_c - j_s, "objective_tol": tol_j,
         "strong_convexity": mu, "solver_tol_abs": a, "solver_tol_rel": r, "solve_time": sol.solve_time,
         "iterations": sol.iterations, **kkt}
    basis = (f"{used} stopping gap abs {a:g} + rel {r:g}: sqrt(2 (10 gap/K + infeasibility + max(J_s - J_C, 0))"
             " / mu)")
    res = resolution(est.d)
    if not tol_f <= res and not value > tol_f + res:  # |f_C − f*| ≥ value − tol_f > res decides: fails
        return not_refereed(f"{used}'s accuracy bound {tol_f:.3g} exceeds the frequency resolution 1/(10 d) = "
                            f"{res:.3g}", referee=referee, value=value, tolerance=tol_f, tolerance_basis=basis,
                            metrics=m, **base)
    if not tol_f <= res:
        tol_f, basis = tol_f + res, basis + " + the frequency resolution 1/(10 d) (the solver's own bound exceeds it)"
    return ClaimResult(referee=referee, value=value, tolerance=tol_f, tolerance_basis=basis, metrics=m, **base)


def _describe(constraints) -> str:
    items = constraints if isinstance(constraints, (list, tuple)) else [constraints]
    return "[" + ", ".join(f"{type(c).__name__}({c.name})" if getattr(c, "name", None)
                           else str(getattr(c, "__name__", type(c).__name__)) for c in items) + "]"


def _solver_row_constrained(est, f_c, objective, mean, constraints, solver, fallback, closed_tol, base) -> ClaimResult:
    from ..problems import Problem

    _, sol, referee = _referee_chain(lambda: Problem(est, objective, constraints, mean=mean), solver, fallback)
    if sol is None:
        return not_refereed(f"referee did not solve: {referee}", referee=referee, **base)
    bound = sol.checks.error_bound if sol.checks is not None else None
    value = float(np.max(np.abs(f_c - sol.f)))
    m = {"solver_error_bound": bound, "solve_time": sol.solve_time, "iterations": sol.iterations,
         "solver_checks": sol.checks.summary() if sol.checks is not None else ""}
    if bound is None:
        return not_refereed(f"{sol.solver} returned no certified distance bound ({sol.checks.not_run})",
                            referee=referee, value=value, metrics=m, **base)
    tol = float(bound) + float(closed_tol)
    basis = f"{sol.solver}'s certified bound on max|f_solver - f*| (ldpopt's check)" + (
        f" + closed form's stated accuracy {closed_tol:g}" if closed_tol else "")
    if not tol <= resolution(est.d) and not value > tol + resolution(est.d):
        return not_refereed(f"{sol.solver}'s certified bound {tol:.3g} exceeds the frequency resolution 1/(10 d) = "
                            f"{resolution(est.d):.3g}", referee=referee, value=value, tolerance=tol,
                            tolerance_basis=basis, metrics=m, **base)
    if not tol <= resolution(est.d):
        tol, basis = tol + resolution(est.d), basis + " + the frequency resolution 1/(10 d) (the bound exceeds it)"
    return ClaimResult(referee=referee, value=value, tolerance=tol, tolerance_basis=basis, metrics=m, **base)


def check_equivalence(estimate: Estimate, closed: Callable | np.ndarray, objective, *, referee: str = "certificate",
                      fallback: tuple = (), mean=None, claim: str = "custom", statement: str = "",
                      seed: int | None = None, expected: bool | None = True, closed_tol: float = 0.0,
                      constraints=None) -> ClaimResult:
    r"""Check that ``closed`` (a function of the estimate, or its output) solves ``objective`` under
    ``constraints`` (None: the simplex; else a list as for :class:`~ldpopt.problems.Problem`, e.g.
    ``[Simplex(), SubsetSum(S, 0.3)]`` — a user's own variant); ``referee`` is ``"certificate"`` (any
    d; built-in constraints) or a cvxpy solver name (small d; any constraints). ``closed_tol``: the
    closed form's own stated accuracy, added to the tolerance.

    With ``constraints`` the solver row's tolerance is the solver point's own certified distance to
    the optimum (``Solution.checks.error_bound``, from :mod:`ldpopt.problems.check.certificate` for
    built-in constraints), so the row holds when :math:`\max |f_C - f_{\mathrm{solver}}|` is within it; a solve that is
    not ``optimal`` or carries no bound (or one above 1/(10 d)) is ``not refereed``.

    Parameters
    ----------
    estimate : Estimate
        The instance.
    closed : callable or ndarray
        The closed form (called on the estimate) or its output.
    objective
        The objective it should minimise (a registered name such as ``"cls"`` or an objective).
    referee : str, default "certificate"
        ``"certificate"`` or a cvxpy solver name (keyword-only, as all that follow).
    fallback : tuple, default ()
        Solvers to try when ``referee`` fails.
    mean : array_like, optional
        The objective's mean, where it takes one.
    claim, statement : str
        The row's id and words.
    seed : int, optional
        Recorded in the row.
    expected : bool or None, default True
        True for a claim that should hold, None for a finding.
    closed_tol : float, default 0.0
        The closed form's stated accuracy.
    constraints : list, optional
        The feasible set (default the simplex).

    Returns
    -------
    ClaimResult

    Examples
    --------
    >>> from ldpopt import verify
    >>> est = verify.instance("grr", 1.0, 1000, 8, seed=0)
    >>> from ldpopt.methods.normalize import norm_sub
    >>> row = verify.check_equivalence(est, norm_sub, "cls", claim="norm-sub=cls")
    >>> row.verdict, bool(row.value <= row.tolerance)
    ('holds', True)
    """
    t0 = time.perf_counter()
    est = estimate
    f_c = np.asarray(closed(est) if callable(closed) else closed, dtype=np.float64)
    cert_path = referee.lower() == "certificate"
    base = dict(claim=claim, statement=statement, kind="equivalence", **setting(est, seed), expected=expected,
                metric="max_abs_error_bound" if cert_path else "max_abs_diff_to_solver", unit="frequency", op="<=")
    if constraints is not None:
        base["statement"] = (statement or f"closed form solves {objective!r}") + f" under {_describe(constraints)}"
    if cert_path:
        row = _certificate_row(est, f_c, objective, mean, closed_tol, base, constraints)
    elif constraints is not None or referee.upper() == "SQP":
        row = _solver_row_constrained(est, f_c, objective, mean, constraints, referee.upper(),
                                      tuple(s.upper() for s in fallback), closed_tol, base)
    else:
        row = _solver_row(est, f_c, objective, mean, referee.upper(), tuple(s.upper() for s in fallback), base)
    row.seconds = time.perf_counter() - t0
    return row


def equivalence_rows(est: Estimate, seed: int, solvers: list[str], solver_max_d: int,
                     likelihood_max_d: int, memo: dict | None = None, methods=None) -> list[ClaimResult]:
    """Every claim of :func:`equivalences` (``methods``: those methods' only) on ``est``: the
    certificate row, then one row per solver referee where d allows (the likelihoods only at
    d ≤ ``likelihood_max_d``). ``memo``: the runner's per-instance store of closed-form outputs
    (shared with the findings' rows), keyed by the method's function."""
    rows = []
    for claim, spec in equivalences(methods).items():
        info, problem = spec["method"], spec["problem"]
        # a method assuming an ordered domain (DW-simplex) states the same identity with its problem on
        # any estimate: the claim is checked on the estimate declared ordered
        e = est.as_ordered() if info.needs_order and not est.ordered else est
        inst = problem.build(e)
        objective, mean, extra = inst["objective"], inst.get("mean"), dict(inst.get("extra", {}))
        statement = spec["statement"] + (f" [{objective}]" if objective != problem.name else "")
        if inst.get("closed") is not None:  # the statement computed the method's answer already
            f_c = np.asarray(inst["closed"], dtype=np.float64)
        else:
            f_c = np.asarray(_memo(memo, info.func, lambda i=info, e=e: _methods_call(e, i)), dtype=np.float64)
        likelihood = objective in ("multinomial", "binomial")
        limit = likelihood_max_d if likelihood else solver_max_d
        # OSQP is a QP solver: it referees the QPs only (CLS, the posterior projection)
        refs = [sv for sv in solvers if e.d <= limit and (sv != "OSQP" or objective in ("cls", "posterior"))]
        if likelihood and likelihood_max_d < e.d <= solver_max_d and solvers:
            # conic solvers fail the likelihoods here: ldpopt's sequential-QP route referees
            refs = ["SQP"]
        for ref in ["certificate"] + refs:
            fb = ("SCS",) if (ref != "certificate" and objective in ("multinomial", "binomial")) else ()
            r = check_equivalence(e, f_c, objective, referee=ref, fallback=fb, mean=mean, claim=claim,
                                  statement=statement, seed=seed, constraints=inst.get("constraints"))
            r.metrics.update(extra)
            rows.append(r)
    return rows


def _methods_call(est, info):
    from .. import methods as _methods

    return _methods.postprocess(est, info)


# -- MLE-Apx printed formulas ------------------------------------------------------------------------
_FORMULAS = {
    "mle-apx-formula-arxiv": (mle.mle_apx_formula_arxiv, "arXiv Eq. 14 as printed"),
    "mle-apx-formula-ndss": (mle.mle_apx_formula_ndss, "NDSS 2020 Eq. 12 / App. B Eq. 14 as printed"),
}


def check_mle_formulas(estimate: Estimate, seed: int | None = None, memo: dict | None = None) -> list[ClaimResult]:
    """Findings: does each printed MLE-Apx formula, evaluated on the optimal support (that of
    :func:`ldpopt.methods.mle.mle_apx`), solve Eq. 13? Decided by the certificate (its bound on
    max |f − f*| against its rounding tolerance); ``metrics`` also carry the sum error and
    max |f_formula − f_exact|.

    Wang et al. arXiv Eq. 14 and NDSS 2020 Eq. 12 / App. B Eq. 14, as printed, against Eq. 13.

    Parameters
    ----------
    estimate : Estimate
        The instance.
    seed : int, optional
        Recorded in the rows.
    memo : dict, optional
        A cache shared between calls on the same estimate.

    Returns
    -------
    list of ClaimResult
        One finding per printed formula.

    Examples
    --------
    >>> from ldpopt import verify
    >>> est = verify.instance("grr", 1.0, 1000, 8, seed=0)
    >>> [(row.claim, row.verdict) for row in verify.equivalences.check_mle_formulas(est)]
    [('mle-apx-formula-arxiv', 'holds'), ('mle-apx-formula-ndss', 'fails')]
    """
    est = estimate
    exact = _memo(memo, mle.mle_apx, lambda: mle.mle_apx(est))
    support = exact > 0
    out = []
    for claim, (fn, label) in _FORMULAS.items():
        t0 = time.perf_counter()
        f = fn(est, support)
        r = check_equivalence(est, f, "weighted-mle", claim=claim, expected=None, seed=seed,
                              statement=f"{label}, on the optimal support, solves Eq. 13 (its minimiser on the simplex)")
        r.kind = "finding"
        r.metrics.update({"sum_error": abs(float(np.sum(f)) - 1.0), "support_size": int(support.sum()),
                          "max_abs_diff_to_exact": float(np.max(np.abs(f - exact))), "p_plus_q": est.p + est.q})
        r.seconds = time.perf_counter() - t0
        out.append(r)
    return out




def distance_rows(est: Estimate, seed: int, memo: dict | None = None) -> list[ClaimResult]:
    """Finding 'CLS ≈ MLE' (arXiv §3.4 'Norm-Sub and MLE-Apx give very close results, as γ ~ 1'):
    L1 distance Norm-Sub – MLE-Apx ≤ 10 % of Norm-Sub's own L1 error."""
    from .instances import true_histogram

    t0 = time.perf_counter()
    ns = _memo(memo, normalize.norm_sub, lambda: normalize.norm_sub(est))
    ma = _memo(memo, mle.mle_apx, lambda: mle.mle_apx(est))
    tc = true_histogram(est.n, est.d)  # cached (instances.true_histogram)
    f = tc / tc.sum()
    l1 = float(np.sum(np.abs(ns - ma)))
    err_ns, err_ma = float(np.sum(np.abs(ns - f))), float(np.sum(np.abs(ma - f)))
    m: dict[str, Any] = {"l1_cls_mle": l1, "linf_cls_mle": float(np.max(np.abs(ns - ma))), "l1_err_cls": err_ns,
         "l1_err_mle": err_ma, "mse_cls": float(np.mean((ns - f) ** 2)), "mse_mle": float(np.mean((ma - f) ** 2))}
    try:
        e = _memo(memo, _em.em, lambda: _em.em(est))
        m["l1_cls_exact_mle"] = float(np.sum(np.abs(ns - e)))
        m["mse_exact_mle"] = float(np.mean((e - f) ** 2))
    except Exception as exc:  # noqa: BLE001 - report, never hide
        m["exact_mle_error"] = str(exc)
    ratio = l1 / err_ns if err_ns > 0 else np.inf
    return [ClaimResult("cls~mle", "CLS (Norm-Sub) is close to the weighted MLE (MLE-Apx): L1 distance "
                        "<= 10% of Norm-Sub's own L1 error (arXiv §3.4, 'very close results, as gamma ~ 1')",
                        "finding", **setting(est, seed), metric="l1_distance / l1_error_of_norm_sub", unit="ratio",
                        value=ratio, op="<=", tolerance=0.1, expected=None, referee="exact",
                        tolerance_basis="the finding's own threshold (10 %)", metrics=m,
                        seconds=time.perf_counter() - t0)]


__all__ = ["EQUIVALENCES", "KKT_TOL", "check_equivalence", "check_mle_formulas", "distance_rows", "equivalence_rows",
           "equivalences"]
