"""Conformance checks for items of ldpopt, as scikit-learn's ``check_estimator``: what every item of a
kind must satisfy, run by the test suite over every built-in and by users over their own.

Notes: docs/notes/extending.md, "ldpopt.testing"."""

from __future__ import annotations

import numpy as np

from .conformance.noise import check_mechanism
from .conformance.oracles import OracleReport, check_oracle

__all__ = ["CheckFailed", "OracleReport", "check_constraint", "check_mechanism", "check_method", "check_objective",
           "check_oracle", "estimates_for_checks"]

#: the setting grid of :func:`estimates_for_checks`: oracle, ε, d (n = 2,000 users)
GRID = (("grr", 0.5, 6), ("grr", 2.0, 30), ("oue", 1.0, 12), ("olh", 2.0, 8), ("oue", 4.0, 40))
SUM_TOL = 1e-9
BATCH_TOL = 1e-12


class CheckFailed(AssertionError):
    """An item failed one of the conformance checks of this module (the message names the item and
    the check).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import Estimate, methods
    >>> from ldpopt.testing import CheckFailed, check_method
    >>> @methods.register("clip-only", description="max(f~, 0)", non_negative="yes", sums_to_one="yes",
    ...                   order_preserving="weak", complexity="O(d)", reference="none")
    ... def clip_only(est):  # claims to sum to one, does not
    ...     return np.maximum(est.f_tilde, 0.0)
    >>> est = Estimate.from_frequencies([0.6, 0.3, -0.1], 1000, epsilon=1.0, p=0.6, q=0.2)
    >>> try:
    ...     check_method("clip-only", [est])
    ... except CheckFailed as exc:
    ...     print(str(exc).split(" [")[0])
    check_method('clip-only'): sums_to_one
    >>> methods.unregister("clip-only")
    """



def check_objective(objective, estimates=None, *, checks=None) -> dict[str, int]:
    """Run the conformance checks every objective must pass (:mod:`ldpopt.conformance.problems`).

    Its value against cvxpy's value of its ``build``, its gradient and per-value derivatives against
    finite differences, its per-value minimiser against bisection, the structured solver's answer
    against Clarabel's, and the certificate accepting that answer and refusing a planted point.

    Parameters
    ----------
    objective : str, Objective or callable
        A registered name (``"cls"``), an :class:`ldpopt.problems.Objective`, or a cvxpy callable
        ``(f, estimate) -> expression`` as :class:`ldpopt.problems.Problem` takes it.
    estimates : list of Estimate, optional
        Where to check it; default the first three of :func:`estimates_for_checks` (d ≤ 12).
    checks : sequence of str, optional
        A subset of :data:`ldpopt.conformance.problems.OBJECTIVE_CHECKS`; default all.

    Returns
    -------
    dict of str to int
        The number of cases each check ran (0: the objective does not declare what it checks).

    Raises
    ------
    CheckFailed
        A check failed (the message names the objective, the check and the estimate).
    ValueError
        ``checks`` names an unknown check.

    Examples
    --------
    >>> from ldpopt.testing import check_objective
    >>> done = check_objective("cls", checks=["value", "gradient"])
    >>> sorted(done), done["value"] > 0
    (['gradient', 'value'], True)
    """
    from .conformance.problems import check_objective as run

    return run(objective, estimates_for_checks()[:3] if estimates is None else estimates, checks=checks,
               error=CheckFailed)


def check_constraint(constraint, estimates=None, *, checks=None) -> dict[str, int]:
    """Run the conformance checks every constraint must pass (:mod:`ldpopt.conformance.problems`).

    Its residuals and g(f) against cvxpy's own at points in and out of the set, its Jacobian against
    finite differences, its compiled rows through the structured solver against Clarabel, and the
    feasibility pre-check against Clarabel on a feasible and an infeasible instance.

    Parameters
    ----------
    constraint : Constraint or callable
        An :class:`ldpopt.problems.Constraint`, or a callable ``(f, estimate) -> constraint(s)`` as
        :class:`ldpopt.problems.Problem` takes it.
    estimates : list of Estimate, optional
        Where to check it; default the first three of :func:`estimates_for_checks`.
    checks : sequence of str, optional
        A subset of :data:`ldpopt.conformance.problems.CONSTRAINT_CHECKS`; default all.

    Returns
    -------
    dict of str to int
        The number of cases each check ran (0: the constraint does not declare what it checks).

    Raises
    ------
    CheckFailed
        A check failed (the message names the constraint, the check and the estimate).
    ValueError
        ``checks`` names an unknown check.

    Examples
    --------
    >>> from ldpopt.problems import SubsetSum
    >>> from ldpopt.testing import check_constraint
    >>> done = check_constraint(SubsetSum([0, 1], 0.3), checks=["rows", "jacobian"])
    >>> done["rows"] > 0 and done["jacobian"] > 0
    True
    """
    from .conformance.problems import check_constraint as run

    return run(constraint, estimates_for_checks()[:3] if estimates is None else estimates, checks=checks,
               error=CheckFailed)


def estimates_for_checks(seed: int = 0, n: int = 2_000) -> list:
    """One random estimate per setting of :data:`GRID`: a Zipf-like histogram with a few zero
    frequencies (where the closed forms' clipping acts), simulated on the oracle's exact fast path.

    Parameters
    ----------
    seed : int, default 0
        Seed of the histograms and the draws.
    n : int, default 2000
        Users per estimate.

    Returns
    -------
    list of Estimate
        One per setting of :data:`GRID`.

    Examples
    --------
    >>> from ldpopt.testing import estimates_for_checks
    >>> [(e.oracle, e.d, e.n) for e in estimates_for_checks()]
    [('grr', 6, 2000), ('grr', 30, 2000), ('oue', 12, 2000), ('olh', 8, 2000), ('oue', 40, 2000)]
    """
    from . import oracles

    gen = np.random.default_rng(seed)
    out = []
    for name, eps, d in GRID:
        w = gen.permutation(1.0 / np.arange(1, d + 1) ** 1.1)
        w[gen.choice(d, size=max(1, d // 4), replace=False)] = 0.0
        counts = gen.multinomial(n, w / w.sum())
        out.append(oracles.get(name, epsilon=eps, d=d).simulate(counts, gen))
    return out


def _off_domain(estimates) -> list:
    """Estimates some methods do not apply to: an oracle no method knows by name (GRR's p, q), and a
    noiseless report (p = 1, q = 0)."""
    from .estimate import Estimate

    e = estimates[0]
    return [Estimate.from_counts(e.counts, e.n, e.epsilon, e.p, e.q, oracle="a-new-oracle"),
            Estimate.from_counts(np.asarray(e.counts, float), e.n, 50.0, 1.0, 0.0, oracle="grr")]


def _fail(info, check: str, est, text: str):
    where = f"{est.oracle} eps={est.epsilon:g} d={est.d} n={est.n}"
    raise CheckFailed(f"check_method({info.name!r}): {check} [{where}]: {text}")


def check_method(method, estimates=None, *, params=None) -> dict[str, int]:
    """Run the conformance checks of a post-processing method (module notes) on ``estimates``
    (default :func:`estimates_for_checks`); ``params``: keyword arguments for the method.

    Parameters
    ----------
    method : str, MethodInfo, callable or "FILE.py:NAME"
        What :func:`ldpopt.methods.resolve` accepts.
    estimates : sequence of Estimate, optional
        Default :func:`estimates_for_checks`.
    params : dict, optional
        Keyword arguments for the method.

    Returns
    -------
    dict of str to int
        Per check, the number of estimates it ran on (0: not declared).

    Raises
    ------
    CheckFailed
        If a check fails (the message names the method, the check and the estimate).
    ValueError
        If the method is unknown, or a plain function returns something that is not a frequency
        vector of length d.

    Examples
    --------
    >>> from ldpopt import testing
    >>> done = testing.check_method("norm-sub", testing.estimates_for_checks()[:2])
    >>> done["sums_to_one"], done["problem"]
    (2, 2)
    """
    from . import methods
    from .uncertainty.fit import plausible_truth, population
    from .uncertainty.resample import draw_counts, oracle_of, resample_estimates

    info = methods.resolve(method)
    params = dict(params or {})
    ests = estimates_for_checks() if estimates is None else list(estimates)
    done = dict.fromkeys(("output", "deterministic", "non_negative", "sums_to_one", "problem", "batched",
                          "applies", "derived", "pivot_scale", "analytic"), 0)
    for est in ests:
        if info.why_not(est, **params) is not None:
            continue
        f = methods.postprocess(est, info, **params)
        if not isinstance(f, np.ndarray) or f.dtype != np.float64 or f.shape != (est.d,):
            _fail(info, "output", est, f"expected a float64 array of shape ({est.d},), got "
                                       f"{getattr(f, 'dtype', type(f).__name__)} {np.shape(f)}")
        if not np.all(np.isfinite(f)):
            _fail(info, "output", est, "non-finite values")
        done["output"] += 1
        if not np.array_equal(f, methods.postprocess(est, info, **params)):
            _fail(info, "deterministic", est, "a second call on the same estimate gave a different output")
        done["deterministic"] += 1
        if info.non_negative == "yes":
            if np.any(f < 0):
                _fail(info, "non_negative", est, f"declared non-negative, min f = {f.min():.3g}")
            done["non_negative"] += 1
        if info.sums_to_one == "yes":
            if abs(float(np.sum(f)) - 1.0) > SUM_TOL:
                _fail(info, "sums_to_one", est, f"declared to sum to one, Σf − 1 = {float(np.sum(f)) - 1:.3g}")
            done["sums_to_one"] += 1
        if info.problem is not None and not params:
            _check_problem(info, est, f)
            done["problem"] += 1
        if info.batched is not None:
            C = draw_counts(oracle_of(est), population(plausible_truth(est), est.n), 3,
                            np.random.default_rng(est.d))
            F = (C / est.n - est.q) / (est.p - est.q)
            rows = info.batched(est, F, **params)
            ones = np.stack([methods.postprocess(e, info, **params) for e in resample_estimates(est, C)])
            if np.shape(rows) != F.shape or not np.allclose(rows, ones, rtol=0.0, atol=BATCH_TOL):
                _fail(info, "batched", est, "the batched form differs from the one-at-a-time form by "
                                            f"{np.max(np.abs(np.asarray(rows) - ones)):.3g}")
            done["batched"] += 1
        if info.derived_from is not None:
            source, g = info.derived_from
            other = g(methods.postprocess(est, source, **params))
            if not np.allclose(other, f, rtol=0.0, atol=BATCH_TOL):
                _fail(info, "derived", est, f"{source!r}'s output, derived, differs by {np.max(np.abs(other - f)):.3g}")
            done["derived"] += 1
        if info.pivot_scale is not None:
            F = np.stack([est.f_tilde, -np.abs(est.f_tilde)])  # the second row has no positive mass
            s = np.asarray(info.pivot_scale(F), dtype=np.float64)
            if s.shape != (2,) or not np.all(np.isfinite(s) & (s > 0)) \
                    or not np.isclose(float(info.pivot_scale(est.f_tilde)), s[0], rtol=1e-14):
                _fail(info, "pivot_scale", est, f"expected a finite positive scale per row, got {s!r}")
            done["pivot_scale"] += 1
        if info.analytic:
            _check_analytic(info, est, f)
            done["analytic"] += 1
    if ests and not done["output"]:
        raise CheckFailed(f"check_method({info.name!r}): the method applies to none of the estimates")
    if info.applies is not None:
        for est in _off_domain(ests):
            why = info.why_not(est, **params)
            if why is None:
                continue
            try:
                methods.postprocess(est, info, **params)
            except ValueError as exc:
                if "\n" in str(exc):
                    _fail(info, "applies", est, f"the error is not one line: {exc!r}")
            else:
                _fail(info, "applies", est, f"declared not to apply ({why}) but returned an output")
            try:
                info.func(est, **params)  # the method itself, not only postprocess's check, refuses
            except ValueError:
                pass
            else:
                _fail(info, "applies", est, f"declared not to apply ({why}); the function itself returned")
            done["applies"] += 1
    return done


def _check_problem(info, est, f) -> None:
    """The certificate decides whether ``f`` solves the problem the method states on ``est``."""
    from .verify.equivalences import check_equivalence

    inst = info.problem.build(est)
    row = check_equivalence(est, f, inst["objective"], referee="certificate", mean=inst.get("mean"),
                            constraints=inst.get("constraints"), claim=f"{info.name}={info.problem.name}",
                            statement=info.problem.statement)
    if row.verdict != "holds":
        _fail(info, "problem", est, f"the certificate does not confirm {info.problem.name!r} "
                                    f"({row.verdict}: bound {row.value:.3g} vs tolerance {row.tolerance:.3g}"
                                    f"{'; ' + row.why if row.why else ''})")


def _check_analytic(info, est, f) -> None:
    from .uncertainty.analytic import analytic, supports_analytic

    if not supports_analytic(est, info):
        _fail(info, "analytic", est, "declared a linear form, but uncertainty.analytic has none for it")
    r = analytic(est, info, 0.9)
    if not (np.all(np.isfinite(r.se)) and np.allclose(r.values, f, rtol=0, atol=1e-12)
            and np.all(r.lo <= r.values + 1e-12) and np.all(r.values <= r.hi + 1e-12)):
        _fail(info, "analytic", est, "the analytic interval is not finite around the method's output")
