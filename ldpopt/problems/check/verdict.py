"""ldpopt's own check of a returned solution, in frequency units (never the solver's word).
Notes: docs/problems.md, "ldpopt.problems.check.verdict".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..objectives.builtins import UserObjective
from .constraint_terms import _gap_terms, _jacobian_t_y, aggregate_violation, constraint_violations, set_feasibility
from .kkt_bound import curvature, error_bound, residual_bound
from .objective_check import absorb_at_zero, bound_rounding, gradient_function, l1_terms, near_zero_allowance, probe

__all__ = ["GAP_TOL", "STATIONARITY_TOL", "Checks", "accuracy_tol", "check_solution", "violation_tol"]

STATIONARITY_TOL = 1e-5
GAP_TOL = 1e-6
NEWTON_TOL = 1e-2  # user objectives: a residual whose Newton step is ≤ this × accuracy_tol is stationary


def accuracy_tol(d: int) -> float:
    """Tolerance on the certified bound of ‖f − f*‖: 1e-2 × the mean frequency 1/d (a point off by
    1/(10d) has a bound ≥ 1/(10d) and fails).

    Parameters
    ----------
    d : int
        The domain size.

    Returns
    -------
    float

    Examples
    --------
    >>> from ldpopt.problems.check.verdict import accuracy_tol
    >>> accuracy_tol(4)
    0.0025
    """
    return 1e-2 / d


def violation_tol(d: int) -> float:
    """Constraint-violation tolerance in frequency units: 1e-6 × the mean frequency 1/d.

    Parameters
    ----------
    d : int
        The domain size.

    Returns
    -------
    float

    Examples
    --------
    >>> from ldpopt.problems.check.verdict import violation_tol
    >>> violation_tol(4)
    2.5e-07
    """
    return 1e-6 / d


@dataclass
class Checks:
    """What ldpopt checked about a returned f (see module docstring). ``failed`` holds one text
    per failed check, e.g. ``"constraint residual 7.0e-04 > 1.0e-09 (nonnegative)"``.

    Made by :func:`check_solution`; each parameter is an attribute of the same name.

    Parameters
    ----------
    max_violation : float
        The largest constraint residual, frequency units (NaN: no point).
    violations : dict
        Constraint name → residual.
    aggregate_violation : float or None
        ℓ1 over the built-in constraints (module docstring).
    stationarity, stationarity_step, dual_infeasibility, gap : float or None
        The KKT residuals; None when not run (``not_run`` says why).
    error_bound : float or None
        The certified bound on ‖f − f*‖∞, where the objective's curvature gives one.
    tolerance : dict
        The tolerance each check used.
    passed : bool
        Every check run passed.
    failed : list of str
        One text per failed check.
    not_run : dict
        Check → why it was not run.
    certificate : Certificate or None
        The certificate, when it applies.
    not_unique : str
        The set of optima in words when J is flat in some values; else empty.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> checks = ldpopt.Problem(est).solve().checks
    >>> checks.passed, checks.failed, checks.max_violation <= checks.tolerance["violation"]
    (True, [], True)
    """

    max_violation: float = np.nan
    violations: dict = field(default_factory=dict)
    aggregate_violation: float | None = None  # ℓ1 over the built-in constraints (module docstring)
    stationarity: float | None = None
    #: a user objective whose relative residual fails: max_v |r_v|/c_v over those values, the change
    #: of f_v that would zero it (frequency units; c_v the measured curvature, :mod:`.objective_check`)
    stationarity_step: float | None = None
    dual_infeasibility: float | None = None
    gap: float | None = None
    error_bound: float | None = None
    tolerance: dict = field(default_factory=dict)
    passed: bool = False
    failed: list = field(default_factory=list)
    not_run: dict = field(default_factory=dict)
    certificate: object = None   # the :class:`~ldpopt.problems.check.certificate.Certificate`, when it applies
    #                              (a :class:`~ldpopt.problems.check.nonsmooth.KinkCertificate` for kinks)
    not_unique: str = ""         # set when J is flat in some values: the set of optima (certificate)

    @property
    def certified(self) -> bool:
        """Passed with stationarity and gap actually run (a full KKT certificate).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> ldpopt.Problem(est).solve().checks.certified
        True
        """
        return self.passed and self.stationarity is not None and self.gap is not None

    def summary(self) -> str:
        """The checks in one line: violation, stationarity, gap, the error bound, passed or what failed.

        Returns
        -------
        str

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> text = ldpopt.Problem(est).solve().checks.summary()
        >>> text.startswith("violation"), text.endswith("(passed)")
        (True, True)
        """
        parts = [f"violation {self.max_violation:.1e}"]
        if self.stationarity is not None:
            parts.append(f"stationarity {self.stationarity:.1e}" + (
                "" if self.stationarity_step is None else f" (Newton step {self.stationarity_step:.1e} in f)"))
        if self.gap is not None:
            parts.append(f"gap {self.gap:.1e}")
        if self.error_bound is not None:
            parts.append(f"|f - f*| <= {self.error_bound:.1e}")
        return (", ".join(parts) + (" (passed)" if self.passed else f" (failed: {'; '.join(self.failed)})")
                + (f"; {self.not_unique}" if self.not_unique else ""))


def _move_scale(gfun, f: np.ndarray, grad: np.ndarray) -> float:
    """max_v |∇J(f + 1/d)_v − ∇J(f)_v|: how much the gradient moves when f moves by the frequency
    scale 1/d (the built-ins are separable). ∇J(f) alone can vanish at an interior optimum (GRR's
    f̃ already sums to 1), which would make any residual look large."""
    with np.errstate(all="ignore"):
        moved = gfun(f + 1.0 / f.shape[0]) - grad
        return float(np.max(np.abs(moved), where=np.isfinite(moved), initial=0.0))


def _certificate(problem, f: np.ndarray, duals: dict, given=None):
    """:func:`ldpopt.problems.certificate.certificate` of f, with the solver's multipliers and with
    multipliers recovered from f (both give valid bounds: the smaller ``distance_linf`` is kept);
    None when the objective or a constraint is outside its class (user objectives/constraints).

    ``given``: the certificate the structured solver already computed for this (f, duals) on the
    same problem (:func:`~.structured.solve_structured`; its feas_tol is its own). It *is* the first
    of the two — the same function of the same numbers — whenever its primal violation is within
    both tolerances (then no distance turns NaN at either), so it is taken with ``feas_tol`` set to
    ``violation_tol``; otherwise it is recomputed. The second (recovered multipliers) is skipped
    when the first already resolves f* to its own rounding level (``distance_linf ≤
    distance_rounding``): a smaller bound cannot change ``error_bound`` by more than that level."""
    import dataclasses

    from ..objectives.separable import NotApplicable
    from ..solvers.structured.structure import compiled_for
    from .certificate import certificate

    tol = violation_tol(problem.estimate.d)
    found = []
    if given is not None and given.multipliers is duals and given.primal_violation <= min(given.feas_tol, tol):
        found.append(dataclasses.replace(given, feas_tol=tol))
        if not (found[0].distance_linf > found[0].distance_rounding):  # resolved (NaN: recompute)
            return found[0]
    for mult in ((None,) if found else (duals, None)):
        try:
            found.append(certificate(problem.objective, compiled_for(problem), problem.estimate, f, mult,
                                     feas_tol=tol))
        except NotApplicable:
            return None
        except (ValueError, TypeError):  # the solver's duals lack a multiplier the certificate reads
            continue
    if not found:
        return None
    return min(found, key=lambda c: c.distance_linf if np.isfinite(c.distance_linf) else np.inf)


def check_solution(problem, f: np.ndarray, duals: dict | None, certificate=None) -> Checks:
    """ldpopt's own check of (f, duals) for ``problem`` (a :class:`~ldpopt.problems.Problem`).
    ``certificate``: the structured solver's certificate of this (f, duals), reused where it is the
    same computation (:func:`_certificate`).

    Parameters
    ----------
    problem : Problem
        The problem f claims to solve.
    f : ndarray (d,)
        The point (frequency units).
    duals : dict or None
        ``Solution.duals``-style multipliers; None: only the checks that need none run.
    certificate : Certificate or None, default None
        The structured solver's certificate of this (f, duals), reused.

    Returns
    -------
    Checks

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems.check.verdict import check_solution
    >>> prob = ldpopt.Problem(est)
    >>> sol = prob.solve()
    >>> check_solution(prob, sol.f, sol.duals).passed, check_solution(prob, np.array([0.7, 0.3, 0.0, 0.0]), sol.duals).passed
    (True, False)
    """
    d = problem.estimate.d
    tol_v = violation_tol(d)
    ch = Checks(tolerance={"violation": tol_v, "aggregate_violation": tol_v, "stationarity": STATIONARITY_TOL, "gap": GAP_TOL,
                           "error_bound": accuracy_tol(d)})
    if f is None or not np.all(np.isfinite(f)):
        ch.failed.append("no finite point returned")
        ch.not_run.update(violation="no point", stationarity="no point", gap="no point")
        return ch
    ch.violations = constraint_violations(problem, f)
    ch.max_violation = max(ch.violations.values(), default=0.0)
    for name, v in ch.violations.items():
        if not v <= tol_v:
            ch.failed.append(f"constraint residual {v:.1e} > {tol_v:.1e} ({name})")
    known, why = set_feasibility(problem)
    if known is False:
        ch.failed.append(f"the constraints admit no point: {why}")
    ch.aggregate_violation = aggregate_violation(problem, f)
    if known is not True and ch.aggregate_violation is not None and not ch.aggregate_violation <= tol_v:
        ch.failed.append(f"aggregate constraint residual {ch.aggregate_violation:.1e} > {tol_v:.1e} (l1 over the "
                         "built-in constraints: negative mass, |sum - total|, ...)")
    kinks = _check_kinks(ch, problem, f, duals) if getattr(problem.objective, "kinks", None) else None
    if kinks is True:  # a recognised objective with kinks, certified by its duality gap
        ch.passed = not ch.failed
        return ch
    gfun, no_grad = gradient_function(problem)
    if not duals or any(v is None for v in duals.values()):
        ch.not_run.update(stationarity="the solver returned no duals", gap="the solver returned no duals")
    elif gfun is None and not problem.objective.absolute_deviations:
        ch.not_run.update(stationarity=no_grad, gap=no_grad)
    else:
        jty, why = _jacobian_t_y(problem, f, duals)
        if jty is None:
            ch.not_run.update(stationarity=why, gap=why)
        elif gfun is None:  # l1: the subgradient check and the exact LP gap
            _check_l1(ch, problem, f, duals, jty)
        else:
            _check_smooth(ch, problem, f, duals, jty, gfun, certificate)
    if kinks:  # the kink certificate ran but did not reach the tolerance: the generic check decided
        ch.not_run["kink certificate"] = kinks
    ch.passed = not ch.failed
    return ch


def _check_kinks(ch: Checks, problem, f, duals):
    """An objective with kinks (:mod:`.nonsmooth`): the duality gap with fitted subgradients, and the
    ‖f − f*‖∞ bound from it. True when that bound is within ``accuracy_tol`` (stationarity, gap and
    bound set on ``ch``); else the reason (a text) or None when the certificate does not apply — then
    the generic check runs as for any cvxpy callable. The gap bounds J(f) − J* from above only, so it
    certifies and never refutes: a bound above the tolerance leaves the decision to that check."""
    from .nonsmooth import kink_certificate

    cert = kink_certificate(problem, f, duals, violation_tol(problem.estimate.d))
    if cert is None:
        return None
    d = problem.estimate.d
    if not (np.isfinite(cert.distance_linf) and cert.distance_linf <= accuracy_tol(d)):
        return (f"gap {cert.gap:.1e}, bound {cert.distance_linf:.1e} > {accuracy_tol(d):.1e}"
                + ("" if np.isfinite(cert.distance_linf) else f" ({cert.note})"))
    ch.stationarity = cert.stationarity  # the fitted subgradients' residual (reported; the bound decides)
    ch.gap = cert.gap / max(abs(cert.primal_value), np.finfo(float).tiny)
    ch.dual_infeasibility = 0.0  # the subgradients are clipped into their sets, the multipliers' signs
    ch.certificate = cert        # are the certificate's own
    ch.error_bound = cert.distance_linf
    return True


def _check_smooth(ch: Checks, problem, f, duals, jty, gfun, certificate) -> None:
    """Stationarity, gap and error bound of a smooth objective (module docstring)."""
    d = problem.estimate.d
    obj = problem.objective
    with np.errstate(all="ignore"):
        grad = np.asarray(gfun(f), dtype=np.float64)
    if not np.all(np.isfinite(grad)):
        why = f"no finite gradient of objective {obj.name!r} at f (a point outside its domain)"
        ch.not_run.update(stationarity=why, gap=why)
        return
    move = _move_scale(gfun, f, grad)
    scale = max(float(np.max(np.abs(grad))), move, np.finfo(float).tiny)
    r = grad + jty
    ch.stationarity = float(np.max(np.abs(r))) / scale
    lag, dual_inf = _gap_terms(problem, f, duals)
    if ch.stationarity > STATIONARITY_TOL and near_zero_allowance(obj):
        r, lag = absorb_at_zero(problem, f, duals, r, lag, np.abs(r) > STATIONARITY_TOL * scale)
        ch.stationarity = float(np.max(np.abs(r))) / scale
    if ch.stationarity > STATIONARITY_TOL and near_zero_allowance(obj):
        where = np.abs(r) > STATIONARITY_TOL * scale
        kink, newton = probe(gfun, f, r, where, violation_tol(d))
        if kink.any():
            why = (f"objective {obj.name!r} is not differentiable at f ({int(kink.sum())} values within "
                   f"{violation_tol(d):.0e} of a kink): a residual there may be the choice of subgradient")
            ch.stationarity = None
            ch.not_run.update(stationarity=why, gap=why)
            return
        ch.tolerance["stationarity_step"] = NEWTON_TOL * accuracy_tol(d)
        ch.stationarity_step = float(np.max(newton))
    ch.dual_infeasibility = dual_inf / scale
    # J changes by ~ move·‖f‖₁ when all of f moves by 1/d: the gap in those units (|J| itself
    # carries the noise energy, ~dσ², and would let a 1e-3 error pass when σ is large)
    # (a linear objective has move = 0: there, what moving f by 1/d costs is the mean |∇J|·‖f‖₁)
    per = move if move > 0 else float(np.mean(np.abs(grad)))
    with np.errstate(over="ignore"):
        ch.gap = abs(lag) / max(per * float(np.sum(np.abs(f))), np.finfo(float).tiny)
    if not ch.dual_infeasibility <= STATIONARITY_TOL:
        ch.failed.append(f"dual infeasibility {ch.dual_infeasibility:.1e} > {STATIONARITY_TOL:.0e}")
    cert = _certificate(problem, f, duals, certificate)
    linear = False
    if cert is not None:  # built-in separable objective, built-in constraints: the one certificate
        ch.certificate = cert
        linear = bool(np.isfinite(cert.distance_argmin))
        if np.isfinite(cert.distance_linf):  # the bound plus its own float64 rounding level
            ch.error_bound = float(cert.distance_linf) + float(np.nan_to_num(cert.distance_rounding))
        else:
            ch.not_run["error_bound"] = cert.note
        if cert.flat_values and np.isfinite(cert.distance_nonflat) and not (
                ch.error_bound is not None and ch.error_bound <= accuracy_tol(d)):
            # no unique optimum: f is one when the bound on the other values holds (certificate)
            ch.error_bound = float(cert.distance_nonflat)
            ch.not_unique = (f"no unique optimum: J is flat in {cert.flat_values} value(s) (no reports: "
                             "any feasible split of their mass is optimal); every optimum agrees with f "
                             f"to {ch.error_bound:.1e} on the other values")
            ch.not_run.pop("error_bound", None)
            linear = False
    elif isinstance(obj, UserObjective) and not hasattr(obj, "curvature_floor"):
        ch.not_run["error_bound"] = ("a cvxpy objective declares no curvature: no distance bound (a "
                                     "SeparableObjective with its second derivative gives one)")
    else:  # user constraints: the bound from the solver's multipliers (below)
        mu = curvature(obj, gfun, f, problem.estimate)
        if mu > 0:
            jf = float(np.sum(jty * f))
            terms = float(np.sum(np.abs(jty * f))) + abs(lag - jf) + abs(lag)
            eb = error_bound(problem, f, duals, r, lag, mu)
            if eb is None:
                ch.not_run["error_bound"] = ("f is off its constraints beyond rounding and no feasible point near "
                                             "it is known (a non-linear user constraint, or a projection on the "
                                             "rows that leaves a bound): no distance bound")
            else:
                ch.error_bound = eb + bound_rounding(grad, jty, terms, mu, f, residual_bound)
        else:
            ch.not_run["error_bound"] = "J is not strongly convex at f (zero curvature somewhere)"
            ch.not_unique = _flat_set(obj, f)
    stationary = ch.stationarity <= STATIONARITY_TOL or (
        ch.stationarity_step is not None and ch.stationarity_step <= NEWTON_TOL * accuracy_tol(d))
    kkt_ok = stationary and ch.gap <= GAP_TOL
    bound_ok = ch.error_bound is not None and ch.error_bound <= accuracy_tol(d)
    if linear:
        # the certificate's argmin bound is linear in the error (tight): it decides alone. Small
        # relative KKT residuals let a point 3x outside accuracy_tol pass (binomial, d = 42,178)
        kkt_ok = False
    if not (kkt_ok or bound_ok):
        _fail_kkt(ch, accuracy_tol(d))


def _flat_set(obj, f) -> str:
    """The set of optima in words, for an objective with zero curvature at f: which values are flat
    where the objective is recognised (a separable J's optima agree on every strictly convex value —
    J is linear along the segment between two optima — so they differ only on the flat ones)."""
    form = getattr(obj, "form", None)
    head = "the optimum need not be unique: the objective value is certified (stationarity and gap), f is one optimum"
    if form is None:
        return head + "; J has zero curvature at f in some direction"
    with np.errstate(all="ignore"):
        flat = np.flatnonzero(~(form.d2(f) > 0))
    shown = ", ".join(map(str, flat[:8])) + (", ..." if flat.size > 8 else "")
    if form.quads:
        return head + f"; the per-value part is flat in {flat.size} values ({shown}), the quadratic forms may cover them"
    return head + (f"; J is flat (linear) in {flat.size} values ({shown}): optima may differ on these (and on a "
                   "value at the edge of a linear piece), they agree with f where J is strictly convex around it")


def _fail_kkt(ch: Checks, tol_bound: float) -> None:
    assert ch.stationarity is not None and ch.gap is not None  # called once both have run
    step = "" if ch.stationarity_step is None else f" (Newton step {ch.stationarity_step:.1e} in f)"
    why = [f"stationarity {ch.stationarity:.1e}" + (" > " if ch.stationarity > STATIONARITY_TOL else " <= ")
           + f"{STATIONARITY_TOL:.0e}" + step, f"duality gap {ch.gap:.1e}"
           + (" > " if ch.gap > GAP_TOL else " <= ") + f"{GAP_TOL:.0e}"]
    if ch.error_bound is not None:
        why.append(f"error bound {ch.error_bound:.1e} > {tol_bound:.1e}")
    ch.failed.append("KKT not certified: " + ", ".join(why))


def _check_l1(ch: Checks, problem, f, duals, jty) -> None:
    """``l1``: subgradient stationarity and the exact LP gap (:mod:`.objective_check`)."""
    d = problem.estimate.d
    ch.stationarity, ch.gap, ch.dual_infeasibility = l1_terms(problem, f, duals, jty, violation_tol(d))
    ch.not_run["error_bound"] = "l1 is an LP, not strongly convex: its optimum need not be unique (no distance bound)"
    off = int(np.count_nonzero(np.abs(f - problem.estimate.f_tilde) > violation_tol(d)))
    ch.not_unique = (f"the optimum need not be unique: J is linear off its kinks f_v = f̃_v ({off} values off them); "
                     "the objective value is certified (exact LP gap), f is one optimum")
    if not ch.dual_infeasibility <= STATIONARITY_TOL:
        ch.failed.append(f"dual infeasibility {ch.dual_infeasibility:.1e} > {STATIONARITY_TOL:.0e}")
    if not (ch.stationarity <= STATIONARITY_TOL and ch.gap <= GAP_TOL):
        _fail_kkt(ch, accuracy_tol(d))
