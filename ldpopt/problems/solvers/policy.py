"""Which solvers ``Problem.solve()`` tries, and in which order.

Notes: docs/notes/problems.md, "ldpopt.problems.solvers.policy".
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .isolate import fork_available

__all__ = [
    "CLARABEL_MAX_ITER",
    "CLARABEL_MAX_ITER_MAX_D",
    "CLARABEL_OWN_UNIT_NAME",
    "CLARABEL_RETRY",
    "CLARABEL_RETRY_NAME",
    "CLARABEL_UNITS",
    "CLARABEL_UNITS_NAME",
    "CONE_CHAIN",
    "DEFAULT_SOLVER_OPTIONS",
    "DIRECT_CLARABEL_MAX_D",
    "DIRECT_QP_OPTIONS",
    "HUBER_QP_OPTIONS",
    "KINK_QP_OPTIONS",
    "LIKELIHOOD_CHAIN",
    "NORM_DIRECT_MAX_D",
    "QP_CHAIN",
    "QP_CHAIN_SMALL",
    "QP_OPTIONS",
    "QP_SMALL_D",
    "SCS_TIGHT",
    "SIZE_OPTIONS",
    "SMOOTH_QP_SMALL_D",
    "SQP_MIN_D",
    "builtin_quadratic",
    "default_chain",
    "direct_qp_options",
    "direct_qp_scale",
    "direct_qp_solver",
    "fallback_budget",
    "installed_solvers",
    "is_likelihood",
    "qp_form",
    "size_options",
    "small_user_qp",
    "sqp_applies",
    "uses_sqp",
]

#: Clarabel's iteration limit in ldpopt's chain up to ``CLARABEL_MAX_ITER_MAX_D`` values (its own
#: default is 200, kept past it; :func:`size_options`): at 1e-10 Clarabel sometimes stalls at its
#: reduced tolerances and runs to the limit before saying ``AlmostSolved``, while at these sizes the
#: answers it reaches in full take far fewer iterations; at d = 10⁴ one took 170. The counts and the
#: CPU saved, per d, are in docs/problems.md ("Clarabel's attempts in the chain stop after"). A
#: caller's ``max_iter`` replaces it. Within it, a solve whose progress has stalled stops sooner
#: (:mod:`.stall`).
CLARABEL_MAX_ITER = 100
#: the largest d at which the chain's Clarabel runs under ``CLARABEL_MAX_ITER``
CLARABEL_MAX_ITER_MAX_D = 1_000
#: Options ldpopt passes to a solver unless the caller overrides them (``solve(**solver_options)``).
#: Tighter than cvxpy's defaults, because the papers' comparisons (closed form vs solver) need
#: 1e-9-level agreement. Clarabel at its own 1e-8 instead, on 40 grammar families at d = 10³: the same
#: CPU in all, most calls faster, but 9 answers lost their standing (3 ``optimal`` no longer
#: certified, 6 ending ``inaccurate``; benchmarks/results/random_families_summary.md). OSQP 1.x spells
#: polishing ``polishing`` (0.6 used ``polish``).
DEFAULT_SOLVER_OPTIONS: dict[str, dict] = {
    "OSQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "polishing": True, "max_iter": 200_000},
    "CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10},
    "PIQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "eps_duality_gap_abs": 1e-10, "eps_duality_gap_rel": 1e-10},
}
#: options over ``DEFAULT_SOLVER_OPTIONS`` that hold up to a size: solver → (largest d, options)
SIZE_OPTIONS: dict[str, tuple[int, dict]] = {"CLARABEL": (CLARABEL_MAX_ITER_MAX_D, {"max_iter": CLARABEL_MAX_ITER})}


def size_options(name: str, d: int) -> dict:
    """The options of solver ``name`` at size d over ``DEFAULT_SOLVER_OPTIONS`` (:data:`SIZE_OPTIONS`):
    Clarabel's iteration limit :data:`CLARABEL_MAX_ITER` up to :data:`CLARABEL_MAX_ITER_MAX_D`
    values, nothing past it nor for the other solvers.

    Parameters
    ----------
    name : str
        The solver, as cvxpy names it.
    d : int
        The domain size.

    Returns
    -------
    dict

    Examples
    --------
    >>> from ldpopt.problems.solvers.policy import size_options
    >>> size_options("CLARABEL", 100), size_options("CLARABEL", 10_000), size_options("PIQP", 100)
    ({'max_iter': 100}, {}, {})
    """
    top, opts = SIZE_OPTIONS.get(name, (-1, {}))
    return dict(opts) if d <= top else {}


QP_CHAIN = ("PIQP", "CLARABEL", "OSQP")
#: a QP with polyhedral terms whose objective is not a built-in, up to ``QP_SMALL_D`` values (module docstring)
QP_CHAIN_SMALL = ("CLARABEL", "PIQP", "OSQP")
#: up to this d a user QP with polyhedral terms goes to :data:`QP_CHAIN_SMALL` (measured crossover
#: with PIQP between 10³ and 3·10³: module docstring)
QP_SMALL_D = 1000
#: where ``fork`` is missing (no child process to run PIQP in), up to this d the direct QP route
#: (:func:`direct_qp_solver`) takes Clarabel in this process, past it PIQP in this process
DIRECT_CLARABEL_MAX_D = 1000
#: up to this d a smooth user QP goes to :data:`QP_CHAIN` (PIQP first), past it to the Newton route
#: (measured crossover with ldpopt's interior point between 10⁴ and 3·10⁴: module docstring)
SMOOTH_QP_SMALL_D = 10_000
CONE_CHAIN = ("CLARABEL", "SCS")
#: Clarabel's own default tolerances (``clarabel.DefaultSettings``: gaps and feasibility 1e-8): the
#: chain's one retry when Clarabel at ``DEFAULT_SOLVER_OPTIONS``' 1e-10 stops without an answer
#: (``optimal_inaccurate``, its iteration limit) at a point within the constraints, before any
#: first-order solver — ldpopt's check decides its point, as any (after an error or a point off the
#: constraints the chain goes to ``CLARABEL_UNITS`` at once: ``routes.clarabel_retries``). Measured
#: on the seven grammar families at d = 100 where Clarabel at 1e-10 gave no answer
#: (benchmarks/results/clarabel_retry_{before,after}.md): three answered by the retry (one
#: ``optimal``, two ``optimal_unverified`` where they were ``optimal_inaccurate`` or SCS's), three
#: failing at 1e-8 too (SCS as before, ~10-30 ms more)
CLARABEL_RETRY = {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8}
#: the retry's name in ``Solution.attempts``
CLARABEL_RETRY_NAME = "CLARABEL at its default tolerances"
#: your objective's own unit (the solver's variable f itself, ``Problem.rescaled``): the unit of the
#: chain's first Clarabel attempt where the callable's unit is ldpopt's choice (``routes.first_unit``:
#: as plain cvxpy hands it over), and otherwise of the chain's second Clarabel retry, in the other
#: unit — both at ``DEFAULT_SOLVER_OPTIONS`` (at Clarabel's 1e-8 its point misses the check's 1e-6/d
#: in frequency units). That retry, in ldpopt's unit after yours or in yours after ldpopt's, runs
#: where the retry above gave no answer that passed ldpopt's check, or where Clarabel's first attempt
#: failed, stopped off the constraints (no retry at 1e-8 then) or returned a point the check refuted,
#: before any first-order solver; ldpopt's check of the problem as posed decides its point.
#: Clarabel's path depends on the unit of its variable: measured in
#: benchmarks/results/random_families_summary.md, "Clarabel in your objective's units" and "Clarabel
#: as written first"
CLARABEL_UNITS = 1.0
#: the second retry's name in ``Solution.attempts``
CLARABEL_UNITS_NAME = "CLARABEL in your objective's units"
#: the second retry's name where Clarabel first ran in your objective's units (``routes.first_unit``):
#: then the retry is in ldpopt's (``Problem.scale``, the measured K)
CLARABEL_OWN_UNIT_NAME = "CLARABEL in ldpopt's unit"
#: up to this d a quadratic plus 2-norms of affine arguments (:class:`.user_forms.NormUserObjective`) goes
#: to Clarabel's own interface first (:func:`direct_qp_solver`): faster than the chain's Clarabel at every d
#: measured, 10² to 10⁵ (module docstring); past 10⁵ nothing was measured, so the chain as before
NORM_DIRECT_MAX_D = 100_000

#: SCS at its defaults (eps 1e-4) fails ldpopt's frequency-unit check at any d; as a fallback it
#: runs tightened (the tolerance ``ldpopt.verify`` uses for it)
SCS_TIGHT = {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000}
#: PIQP in sqp's Newton QPs, tighter than ``DEFAULT_SOLVER_OPTIONS``: at 1e-10 an interior point leaves values whose
#: optimum is 0 with a ~0 multiplier at :math:`x \sim \sqrt{\text{gap}}` (36 values at :math:`3 \cdot 10^{-7} = d^{-1}/75` at d = 42,178, binomial,
#: measured); at these settings the same solve is as fast and within 4e-12 of the exact MLE
#: (a smooth objective's Newton QP has its own chain and options: ``smooth.SmoothTerms``)
QP_OPTIONS = {"PIQP": {"eps_abs": 1e-12, "eps_rel": 1e-12, "eps_duality_gap_abs": 1e-14,
                       "eps_duality_gap_rel": 1e-14}}
#: from this d on, exact likelihoods go to the sequential-QP route (see the module docstring)
SQP_MIN_D = 300
#: the direct QP route's options per solver (:func:`direct_qp_solver`), over ldpopt's defaults: PIQP at
#: ``QP_OPTIONS``' tolerances — at the 1e-10 defaults CLS + 1e-3·TV on the simplex at d = 10⁴ ended
#: ``optimal_unverified`` (the kinks' certificate did not close), at these ``optimal`` in 138 ms (measured)
DIRECT_QP_OPTIONS = {"PIQP": QP_OPTIONS["PIQP"]}
#: the direct QP route's PIQP options for an objective with a Huber term: at ``QP_OPTIONS``' tolerances
#: PIQP ran to its iteration limit on :math:`\sum \operatorname{huber}(f − \tilde f, 1/d)` + a SubsetSum from d = 10³ (J flat in 889
#: of 1,000 values: a degenerate optimum); at residuals of 1e-10 it ended ``optimal`` and ldpopt's check
#: passed it (7–20 ms at d = 10³, 90–110 ms at 10⁴), and the gap at 1e-13 keeps J within 1e-14 of
#: Clarabel's at 1e-10 (at a 1e-10 gap it was 3e-12 off; measured)
HUBER_QP_OPTIONS = {"PIQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "eps_duality_gap_abs": 1e-13,
                             "eps_duality_gap_rel": 1e-13}}
#: the direct QP route's PIQP options for an objective with polyhedral terms (|·|, max) up to
#: ``QP_SMALL_D`` values: at 1e-10 residuals and gap ldpopt's kink certificate closes with the solver's
#: own kink multipliers (at f moved onto its kinks where they dominate the gap: :func:`~ldpopt.problems.
#: check.certificate.kink_certificate`), bounds 6.5e-8 / 6.0e-7 / 7.1e-7 / 5.7e-7 against the
#: tolerance 1e-5 on CLS + 1e-1 / 1e-3 / 1e-2·TV and CLS + 1e-3·pinball at d = 10³, where
#: ``QP_OPTIONS``' tighter gap cost PIQP 50 iterations instead of 26 on CLS + 1e-1·TV (whole call
#: 27.5 → 19.3 ms, min of 7; ``bench_offgrid.py``'s problems, measured in x = f/``Problem.scale``;
#: on f itself, :func:`direct_qp_scale`, 21 against 19). Past it ``QP_OPTIONS``': at
#: d = 10⁴ these left CLS + 1e-3·pinball ``optimal`` with no distance bound (the kink certificate
#: 's bound above 1e-6; the generic check passed it), at 10⁵ the same at a 1e-10 gap
KINK_QP_OPTIONS = {"PIQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "eps_duality_gap_abs": 1e-10,
                            "eps_duality_gap_rel": 1e-10}}


def qp_form(form) -> bool:
    """Whether a recognised objective is a QP the direct route writes (:mod:`.direct_qp`): every
    per-value term a square or a Huber loss (one argument), besides its quadratic forms and
    polyhedral terms, and no geometric mean.

    Parameters
    ----------
    form : Recognised or None
        The objective's recognised form.

    Returns
    -------
    bool

    Examples
    --------
    >>> from ldpopt.problems.solvers.policy import qp_form
    >>> qp_form(None)
    False
    """
    terms = getattr(form, "terms", None)
    return terms is not None and not getattr(form, "geo", None) and all(
        (t.kind == "power" and t.param == 2.0) or (t.kind == "huber" and len(t.args) == 1) for t in terms)


def direct_qp_options(problem, solver: str) -> dict | None:
    """The direct QP route's options for ``solver`` on ``problem`` (over ldpopt's defaults):
    :data:`HUBER_QP_OPTIONS` where the recognised objective has a Huber term, :data:`KINK_QP_OPTIONS`
    where it has polyhedral terms and at most ``QP_SMALL_D`` values or no curvature at all (a linear J,
    an LP: at ``DIRECT_QP_OPTIONS``' 1e-14 gap PIQP ran c·f over the simplex and a box to its iteration
    limit at d = 10⁴, 2.4 s, where at 1e-10 it took 10 iterations), else :data:`DIRECT_QP_OPTIONS`.

    Parameters
    ----------
    problem : Problem
        The problem (its recognised objective's ``form``).
    solver : str
        ``"PIQP"`` or ``"CLARABEL"``.

    Returns
    -------
    dict or None
        The solver's options, or None where the route sets none for it.

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems.solvers.policy import direct_qp_options
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> hub = ldpopt.Problem(est, lambda f, e: cp.sum(cp.huber(f - e.f_tilde, 0.01)))
    >>> direct_qp_options(hub, "PIQP")["eps_abs"], direct_qp_options(hub, "CLARABEL")
    (1e-10, None)
    """
    form = getattr(problem.objective, "form", None)
    if any(t.kind == "huber" for t in getattr(form, "terms", ())):
        return HUBER_QP_OPTIONS.get(solver)
    if getattr(form, "kinks", None) and problem.estimate.d <= QP_SMALL_D:
        return KINK_QP_OPTIONS.get(solver)
    if form is not None and not getattr(form, "terms", None) and not getattr(form, "quads", None):
        return KINK_QP_OPTIONS.get(solver)  # a linear J (an LP): no curvature for the tight gap to resolve
    return DIRECT_QP_OPTIONS.get(solver)
#: a first-order fallback's own time limit after an interior-point solver returned a point (within the
#: solve's limit where it has one): this many times the solve's time so far, and at least
#: FALLBACK_MIN_S seconds (:func:`fallback_budget`)
FALLBACK_FACTOR = 1.0
FALLBACK_MIN_S = 0.25


def fallback_budget(elapsed: float) -> float:
    r"""The seconds a first-order solver (SCS, OSQP) gets as the chain's fallback once an
    interior-point solver has been tried and its point, if any, did not pass ldpopt's check (a
    failed one too: SCS at 1e-9 after Clarabel's ``solver_error`` ran 600 s on a generated family at
    d = 10³, ``bench_random_families.py``, where plain cvxpy's calls took well under a second):
    ``max(FALLBACK_MIN_S, FALLBACK_FACTOR · elapsed)``, and no more than the solve's ``time_limit``
    leaves. Where the budget runs out
    the attempt ends ``user_limit`` and the chain's best checked point stands. A choice, from the
    cases measured: in none did the fallback's point pass where the interior point's had failed,
    and it cost 2.2 s after Clarabel's 8 ms (CLS on the simplex with a ball touching it, d = 100),
    250 s after Clarabel's 0.4 s (an energy bound :math:`Σ f^2 ≤ (1 + 10^{-11})/d`, d = 10⁴: SCS's point 2e-7 off
    the simplex where Clarabel's was 8e-10 off the bound), 4.8 s after 3.3 s (CLS + :math:`10^{-2} \lVert f - p \rVert_2` at
    d = 10⁵, before that class had its own route) and 9 s after 5 s (CLS − 1e-3·geo_mean(f), d = 100);
    where it did pass, it took 0.06 s (Clarabel stopped at 3 iterations, an energy bound, d = 400).
    So the fallback costs at most about the time already spent (the call at most ~2× plain cvxpy's
    failed one): on the route grid's generated cone classes at d = 10⁴, with three times the time so
    far and 1 s at least, ldpopt took 1.6–4.4 s where plain Clarabel's equally failed call took
    0.35–1.0 s. Under a
    time limit too: a user's limit bounds the call, it is not a wish to spend it (CLS + 10⁻³·KL in a
    ball at d = 10⁴ with ``time_limit=30``: SCS ran the 29 s left after Clarabel's 0.84 s, to no
    better point).

    Parameters
    ----------
    elapsed : float
        Seconds the solve has run so far.

    Returns
    -------
    float

    Examples
    --------
    >>> from ldpopt.problems.solvers.policy import fallback_budget
    >>> fallback_budget(0.008), fallback_budget(0.5)
    (0.25, 0.5)
    """
    return max(FALLBACK_MIN_S, FALLBACK_FACTOR * float(elapsed))


#: the exact likelihoods below SQP_MIN_D ("SQP" is ldpopt's route, not a cvxpy solver)
LIKELIHOOD_CHAIN = ("CLARABEL", "SQP", "SCS")


def is_likelihood(problem) -> bool:
    """Whether ``problem``'s objective is a built-in exact likelihood (binomial, multinomial).

    Parameters
    ----------
    problem : Problem
        The problem (its objective, estimate and constraints).

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems.solvers.policy import is_likelihood
    >>> is_likelihood(ldpopt.Problem(est, "multinomial")), is_likelihood(ldpopt.Problem(est, "cls"))
    (True, False)
    """
    from ..objectives.likelihood_terms import terms_for

    return terms_for(problem.objective, problem.estimate) is not None


def sqp_applies(problem) -> bool:
    """Whether the sequential-QP route can solve ``problem``: a built-in exact likelihood or a smooth
    objective (:func:`.sqp.newton_terms`).

    Parameters
    ----------
    problem : Problem
        The problem (its objective, estimate and constraints).

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems.solvers.policy import sqp_applies
    >>> sqp_applies(ldpopt.Problem(est, "multinomial")), sqp_applies(ldpopt.Problem(est, "l1"))
    (True, False)
    """
    from ..objectives.likelihood_terms import terms_for
    from ..objectives.smooth import smooth_terms

    return (terms_for(problem.objective, problem.estimate) or
            smooth_terms(problem.objective, problem.estimate)) is not None


def uses_sqp(problem) -> bool:
    """Whether ``Problem.solve()`` (no solver named) takes the sequential-QP route directly: the exact
    likelihoods at d ≥ ``SQP_MIN_D``, a smooth non-separable objective at any d — unless a user
    constraint is not affine (:func:`.check.conflict.non_affine`: the Newton route's QPs carry the
    cone to Clarabel one by one):
    then the chain, whose Clarabel takes the cone natively. Measured on the route grid's generated
    class CLS + 10⁻³·KL in a ball touching the simplex: the sequential QP stalled (``inaccurate``)
    after 0.15 / 0.38 s at d = 10² / 10³ and ran to the 30 s limit at 10⁴, where plain Clarabel ended
    in 0.04 / 0.11 / 0.9 s.

    Parameters
    ----------
    problem : Problem
        The problem (its objective, estimate and constraints).

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems.solvers.policy import uses_sqp
    >>> uses_sqp(ldpopt.Problem(est, "multinomial"))   # d = 4 < SQP_MIN_D: the cone chain first
    False
    """
    from ..check.conflict import non_affine

    if is_likelihood(problem):
        return problem.estimate.d >= SQP_MIN_D
    return sqp_applies(problem) and not small_user_qp(problem) and not non_affine(problem)


def small_user_qp(problem) -> bool:
    """Whether ``problem`` is a small QP whose objective is not a built-in and has a cvxpy expression:
    at most ``SMOOTH_QP_SMALL_D`` values for an objective the Newton route takes, at most
    ``QP_SMALL_D`` for any other (polyhedral terms, not recognised) — the cvxpy chain before any
    Newton route: :data:`QP_CHAIN_SMALL` up to ``QP_SMALL_D``, :data:`QP_CHAIN` past it (module
    docstring).

    Parameters
    ----------
    problem : Problem
        The problem (its objective, estimate and constraints).

    Returns
    -------
    bool

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems.solvers.policy import small_user_qp
    >>> smooth = lambda f, e: cp.sum_squares(f - e.f_tilde) + cp.sum_squares(f[1:] - f[:-1])
    >>> small_user_qp(ldpopt.Problem(est, smooth)), small_user_qp(ldpopt.Problem(est, "cls"))
    (True, False)
    """
    if problem.estimate.d > (SMOOTH_QP_SMALL_D if _smooth(problem) else QP_SMALL_D) or _low_rank(problem):
        return False
    return _user_qp(problem)


class _SeparableQuadratic:
    """A built-in objective whose per-value form is a quadratic (``per_value(estimate).quadratic``:
    cls, J = Σ w_v (f_v − m_v)²), as :func:`_assemble` reads a recognised form: its Hessian diag(h″)
    and gradient h′, no polyhedral, Huber or quadratic-form terms."""

    terms: tuple = ()
    kinks: tuple = ()
    quads: tuple = ()

    def __init__(self, sep, d: int):
        self.sep, self.d = sep, d

    def hessian(self, f):
        return sp.diags_array(np.asarray(self.sep.d2(np.asarray(f, float)), float), format="csr")

    def gradient(self, f):
        return np.asarray(self.sep.d1(np.asarray(f, float)), float)


def builtin_quadratic(problem):
    """The :class:`_SeparableQuadratic` of ``problem``'s objective where it is a built-in whose
    per-value form says it is a quadratic, else None (a user's objective carries its own ``form``):
    what lets the direct QP route (:func:`direct_qp_solver`) take ``"cls"`` with a user's rows, where
    the structured route does not apply. Measured (CLS + 20 dense user rows ``A f <= 1.02·A f̃⁺``,
    CPU of the whole call including the child): the cvxpy chain's PIQP, forked per call, took 95 ms
    at d = 10³ and 465 ms at 10⁴ where the same objective written as a cvxpy callable took the direct
    route in 40 and 314 ms (plain cvxpy + PIQP: 31 and 250 ms).

    Parameters
    ----------
    problem : Problem
        The problem (its objective and estimate).

    Returns
    -------
    _SeparableQuadratic or None

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems.solvers.policy import builtin_quadratic
    >>> builtin_quadratic(ldpopt.Problem(est, "cls")) is not None, builtin_quadratic(ldpopt.Problem(est, "weighted-mle"))
    (True, None)
    """
    obj = problem.objective
    if getattr(obj, "form", None) is not None or getattr(obj, "conic_form", None) is not None:
        return None
    per_value = getattr(obj, "per_value", None)
    try:
        sep = per_value(problem.estimate) if per_value is not None else None
    except Exception:  # noqa: BLE001 - no per-value form for this estimate: not this route
        return None
    return _SeparableQuadratic(sep, problem.estimate.d) if getattr(sep, "quadratic", False) else None


def _low_rank(problem) -> bool:
    """A recognised objective with a low-rank quadratic form (``Recognised.low_rank``: AᵀA would be
    dense): the Newton route's interior point keeps it a factor, O(d·k); the direct QP route's P and
    the chain's compiled QP would hold AᵀA (measured, CLS + 10‖Uᵀ(f − p)‖², U d × 3, on the simplex:
    PIQP-DIRECT 180 s wall and 0.97 GB at d = 3,000)."""
    return bool(getattr(getattr(problem.objective, "form", None), "low_rank", None))


def _user_qp(problem) -> bool:
    """A user objective (a cvxpy callable or a declared form) with a cvxpy expression, and a QP."""
    from ..objectives.base import UserObjective
    from ..objectives.smooth import SmoothObjective
    from ..objectives.user_separable import SeparableObjective

    obj = problem.objective
    users = (UserObjective, SeparableObjective, SmoothObjective)  # a cvxpy callable or a declared form
    if not isinstance(obj, users) or getattr(obj, "cvxpy_expr", True) is None:
        return False
    if getattr(getattr(obj, "form", None), "geo", None):  # a geometric mean is no QP (and its cvxpy
        return False                                      # side costs seconds to build: not built to ask)
    return bool(problem.cvxpy_problem.is_qp())


def direct_qp_solver(problem, time_limited: bool = False) -> str | None:
    """The solver ``Problem.solve()`` hands ``problem`` to through its own interface first
    (:mod:`.direct_qp`), or None: a user QP of at most ``SMOOTH_QP_SMALL_D`` values (any number with
    polyhedral terms and no Huber term: :func:`_polyhedral`) whose objective was recognised as a
    quadratic plus polyhedral terms (its ``form``, :mod:`.user_forms`); one recognised as a quadratic
    plus 2-norms (its ``conic_form``): Clarabel (a second-order cone, which PIQP has not) up to
    ``NORM_DIRECT_MAX_D`` values. Each runs in a child of the worker process (:mod:`.isolate`: killed at
    a limit, a crash ending it and not the process), so a time limit does not change the solver: PIQP
    at :func:`direct_qp_options`, with or without one (PIQP has no time limit of its own; killed at the
    limit, it leaves no point, where Clarabel's own limit would have returned its last iterate; a
    limit as long as the solve's a few times over had cost a limited call Clarabel's slower
    answer: grammar families at d = 10⁴, ``sum_squares(f - ft); norm(f - f0, 'inf') <= 0.001`` 142 ms
    where plain cvxpy + PIQP took 102). The chain follows where the answer does not pass ldpopt's
    check. Where ``fork`` is missing, Clarabel in this process up to ``DIRECT_CLARABEL_MAX_D`` values,
    past it PIQP in this process without a limit, and under one Clarabel, with polyhedral terms only up
    to ``QP_SMALL_D`` values (past it Clarabel's answer fails ldpopt's check, as on the chain: module
    docstring). Measured with PIQP in a child and Clarabel in this process
    (``benchmarks/bench_offgrid.py``'s problems, whole call, CPU including the child, min of 5
    interleaved, shared 2-core machine; PIQP-DIRECT / CLARABEL-DIRECT): CLS + 1e-3·TV 6.5 / 7.7 ms at
    d = 10², 8.5 / 19.9 at 10³; pinball 5.7 / 6.5, 6.2 / 16.7, 64 / 149 at 10⁴; CLS + smoothness
    5.0 / 5.2, 5.6 / 11.0, 30 / 70; CLS + 20 user rows 6.8 / 8.2, 19.8 / 33.9, 175 / 327. With a child
    forked per call, PIQP had cost more than Clarabel up to 10³ (CLS + 1e-3·TV 50 / 33 ms at 10²,
    68 / 72 at 10³, measured before the pre-check's and the check's costs were cut). Measured before, with PIQP in this
    process (CPU of Problem construction and the route alone, min of 3–5, the route
    grid's problems): PIQP 6.3 / 10.2 / 35 ms against Clarabel's 6.5 / 14 / 72 ms for CLS +
    smoothness on the simplex at d = 10² / 10³ / 10⁴, and 11 / 19 / 138 ms against 13 / 27 ms /
    unverified for CLS + total variation, with error bounds 30–100× tighter; the whole call against
    cvxpy's in the route grid's ``smooth`` and ``nonsmooth`` classes (BENCHMARKS.md).

    Parameters
    ----------
    problem : Problem
        The problem (its objective, estimate and constraints).
    time_limited : bool, default False
        Whether the solve has a time limit (read only where ``fork`` is missing: PIQP would then run in
        this process, without one).

    Returns
    -------
    str or None

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems.solvers.policy import direct_qp_solver
    >>> smooth = lambda f, e: cp.sum_squares(f - e.f_tilde) + cp.sum_squares(f[1:] - f[:-1])
    >>> kl = lambda f, e: cp.sum_squares(f - e.f_tilde) + cp.sum(cp.kl_div(f, np.full(4, 0.25)))
    >>> direct_qp_solver(ldpopt.Problem(est, smooth)), direct_qp_solver(ldpopt.Problem(est, kl))
    ('PIQP', None)
    >>> ldpopt.Problem(est, smooth).solve().solver   # in a child of the worker process
    'PIQP-DIRECT'
    >>> norm2 = lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-2 * cp.norm(f - 0.25, 2)
    >>> direct_qp_solver(ldpopt.Problem(est, norm2))   # a second-order cone: Clarabel
    'CLARABEL'
    """
    if getattr(problem.objective, "conic_form", None) is not None:  # 2-norms: Clarabel (cones), measured
        return "CLARABEL" if problem.estimate.d <= NORM_DIRECT_MAX_D else None
    if builtin_quadratic(problem) is not None:  # cls where the structured route did not apply (a user's rows)
        if problem.estimate.d > SMOOTH_QP_SMALL_D or not fork_available():
            return None
        return "PIQP"
    form = getattr(problem.objective, "form", None)
    large = problem.estimate.d > SMOOTH_QP_SMALL_D and not _polyhedral(form)
    if not qp_form(form) or large or _low_rank(problem) or not _user_qp(problem):
        return None
    if fork_available():  # in a child, killed at a limit
        return "PIQP"
    if problem.estimate.d <= DIRECT_CLARABEL_MAX_D:
        return "CLARABEL"
    if not time_limited:
        return "PIQP"
    return "CLARABEL" if _smooth(problem) or problem.estimate.d <= QP_SMALL_D else None


def _polyhedral(form) -> bool:
    """A recognised objective with polyhedral terms (|·|, max) and no Huber term: the direct QP route
    takes it at any d (:func:`direct_qp_solver`). Measured (``bench_offgrid.py``'s problems at
    d = 10⁵, CPU of the whole call including the child, min of 2 interleaved, shared 2-core machine):
    CLS + 1e-3·TV on the simplex 2.72 s on the direct route in x = f/``Problem.scale`` (``QP_OPTIONS``,
    33 iterations), 1.88 s on f itself (:func:`direct_qp_scale`, 31 iterations), against plain cvxpy
    + PIQP's 2.26 s at its defaults and 2.35–2.44 s at 1e-10 — the cvxpy chain's PIQP had
    taken 3.1 s and ended ``optimal_unverified`` (its answer's kink certificate needs the solver's kink
    multipliers); CLS + 1e-3·pinball 1.56 s against the chain's 2.35 s and plain PIQP's 1.71 s; at
    d = 10⁴ 0.131 / 0.102 s against plain PIQP's 0.157 / 0.139 s (min of 3)."""
    return bool(getattr(form, "kinks", None)) and not any(t.kind == "huber" for t in getattr(form, "terms", ()))


def direct_qp_scale(problem, solver: str) -> float | None:
    """The variable the direct QP route hands PIQP, x = f/s: s = 1 (f itself, J over its mean
    curvature) where every polyhedral term of the recognised objective couples values (each row of
    its A has two or more entries: total variation, a max of differences) and there is no Huber
    term; else 1/d where ``Problem.scale`` is σ > 1/d, the mean frequency (small n or ε, or estimates
    far below 0); else None (``Problem.scale``, the interior-point route's, as for every other QP).

    With s = σ ≫ 1/d the values of x = f/σ lie far below PIQP's absolute tolerances' unit: measured on
    the grammar's families that take PIQP's direct route with σ > 1/d (``tests/problem_strategies.py``,
    seeds 1000–1299 at d = 10², 4000–4299 at 10³, 5000–5149 at 10⁴; 43 families, the least CPU of two
    calls each, children included), s = σ left `sum_squares(f - ft) + 0.01*sum_squares(diff(f[2::3]))`
    (σ = 6,325, d = 10⁴) `inaccurate` after 278 ms (PIQP's duality gap 2.8e-4 relative), which s = 1/d
    answers `optimal` in 43 ms; `sum_squares(f - ft) + 0.1*max(f)` (10³) 124 → 12 ms, one attempt
    where four ran; `sum_squares(f - ft) + norm_inf(f)` (10⁴) `optimal_unverified` → `optimal`; the other 40
    the same status, their CPU within the noise. On CLS with a tenth of the estimates at −10², −10⁴
    or −10⁵ (d = 30–1,000, 80 draws each, one call each): with a smoothness term x = f/σ left 12
    `inaccurate` and x = f·d none, with 0.1·max(f) 74 short of `optimal` against none
    (``tests/test_direct_qp.py``: PIQP can still stop at its iteration limit in x = f·d, rarely).
    Measured
    (PIQP in this process, ``bench_offgrid.py``'s problems, iterations and CPU, scale / 1): CLS +
    1e-3·TV 33 / 31 iterations, 2.68 / 1.75 s at d = 10⁵, 18 / 22 and 109 / 94 ms at 10⁴, 12 / 14 and
    6.3 / 5.8 ms at 10³; CLS + 1e-1·TV 26 / 19, 14.1 / 7.6 ms; CLS + 1e-2·TV 17 / 17, 9.4 / 6.9 ms
    at 10³ — every answer certified, bounds within 3× of each other. Not for per-value terms: CLS +
    1e-3·pinball (A diagonal) ran PIQP to its 250-iteration limit at 10⁵ with s = 1 (24 iterations,
    1.4 s scaled), and CLS + 20 dense user rows failed ldpopt's check at 10³.

    Parameters
    ----------
    problem : Problem
        The problem (its objective's ``form``).
    solver : str
        The direct route's solver (only ``"PIQP"`` gets a unit of its own).

    Returns
    -------
    float or None

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems.solvers.policy import direct_qp_scale
    >>> tv = lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.norm1(f[1:] - f[:-1])
    >>> l1 = lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.norm1(f - e.f_tilde)
    >>> direct_qp_scale(ldpopt.Problem(est, tv), "PIQP"), direct_qp_scale(ldpopt.Problem(est, l1), "PIQP")
    (1.0, None)
    """
    if solver != "PIQP":
        return None
    form = getattr(problem.objective, "form", None)
    if _polyhedral(form) and all(_couples(A) for _, _, A, _ in getattr(form, "kinks", ())):
        return 1.0
    mean = 1.0 / problem.estimate.d
    return mean if problem.scale > mean else None


def _couples(A) -> bool:
    """Whether every row of A has two or more entries (:func:`direct_qp_scale`)."""
    counts = np.diff(sp.csr_array(A).indptr)
    return bool(counts.size) and int(counts.min()) >= 2


def installed_solvers() -> list[str]:
    """The cvxpy solvers installed, as cvxpy found them once at its import (the list its own solver
    resolution reads). ``cvxpy.installed_solvers()`` searches for every solver's module again on each
    call, 1.5 ms at this pin — paid per solver of the chain, per solve, before this.

    Returns
    -------
    list of str

    Examples
    --------
    >>> from ldpopt.problems.solvers.policy import installed_solvers
    >>> {"CLARABEL", "PIQP", "OSQP", "SCS"} <= set(installed_solvers())
    True
    """
    from cvxpy.reductions.solvers.defines import INSTALLED_SOLVERS

    return INSTALLED_SOLVERS


def _smooth(problem) -> bool:
    """A user objective the Newton route takes (:func:`sqp_applies`; no polyhedral terms): its QPs go
    to the cvxpy chain first up to ``SMOOTH_QP_SMALL_D``, any other user QP up to ``QP_SMALL_D``
    (module docstring)."""
    return sqp_applies(problem)


def default_chain(problem) -> tuple[str, ...]:
    """The documented chain for ``problem``'s class (QP or cone program).

    QP: :data:`QP_CHAIN`; an exact likelihood: :data:`LIKELIHOOD_CHAIN`; any other cone program,
    exponential cones at any d included: :data:`CONE_CHAIN` (Clarabel first: past d = 10⁴ it
    answered grammar families where SCS ran to the time limit; docs/notes/problems.md,
    "ldpopt.problems.solvers.policy").

    Parameters
    ----------
    problem : Problem
        The problem (its objective, estimate and constraints).

    Returns
    -------
    tuple of str
        Solver names in order (``Problem.solve`` skips the ones not installed).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems.solvers.policy import default_chain
    >>> default_chain(ldpopt.Problem(est, "cls")), default_chain(ldpopt.Problem(est, "weighted-mle"))
    (('PIQP', 'CLARABEL', 'OSQP'), ('CLARABEL', 'SCS'))
    """
    if problem.cvxpy_problem.is_qp():
        return QP_CHAIN_SMALL if small_user_qp(problem) and problem.estimate.d <= QP_SMALL_D else QP_CHAIN
    if is_likelihood(problem):
        return LIKELIHOOD_CHAIN
    return CONE_CHAIN
