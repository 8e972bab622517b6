"""Infeasible linear constraints (built-in, and a user's affine rows), decided exactly — the cheap steps
before any solver runs, the costly ones only where a route's answer does not prove the set non-empty
("When it runs", below) — and explained.

Notes: docs/notes/problems.md, "ldpopt.problems.constraints.feasibility".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from math import lcm

import numpy as np
import scipy.sparse as sp

from ..progress import affine_cache, past
from .chain_substitution import ChainSubstitution
from .exact_lp import ExactSystem, exact_group_sums
from .exact_point import exact_point, point_ok, verified_point
from .farkas import aggregate, dense_phase_one, interval_candidates, phase_one, refined_phase_one, same_columns, verify
from .nested_sums import NestedSums

__all__ = ["DEFERRED", "DEFER_MIN_VALUES", "MAX_EXACT", "MAX_LP", "SMALL_POINT_D", "Decision", "Infeasibility",
           "affine_rows", "bound_sides", "decide", "find_infeasibility", "linear_system", "one_value_rows",
           "per_value_bounds", "point_feasible", "solver_infeasibility"]

#: most rows (and aggregated variables) the pre-check takes: what fits in memory, not a budget
MAX_LP = 10**7
#: largest aggregated system (variables or rows) decided in rational arithmetic (:mod:`.exact_lp`)
MAX_EXACT = 200


@dataclass
class Infeasibility:
    """A verified Farkas certificate: the conflicting constraints (``names``, in the problem's
    order), the row multipliers y per constraint name (``rows``: a number for a one-row constraint,
    else one per row in the constraint's row order), for each bound constraint the
    number of values whose bound enters (``bounds``), and ``margin`` = min_box (Aᵀy)ᵀf − yᵀb > 0
    (rounded to float from the exact value), ``source`` ``"ldpopt"`` or the solver's name."""

    names: list
    rows: dict = field(default_factory=dict)
    bounds: dict = field(default_factory=dict)
    margin: float = float("nan")
    source: str = "ldpopt"
    #: the margin is within the rounding of the data as given (e.g. decimal totals that sum to 1 + 2⁻⁵⁴)
    at_rounding: bool = False
    #: "linear" (a Farkas certificate of the linear constraints) or "non-affine" (a user's norm or cone
    #: constraints against the linear set, proved by :func:`ldpopt.problems.check.conflict.verified_conflict`:
    #: ``margin`` is then a lower bound on their smallest weighted violation, the user's units)
    kind: str = "linear"

    @property
    def verified(self) -> bool:
        """Whether ldpopt's own check proved this conflict (``source == "ldpopt"``); a solver's
        certificate (another source) is not."""
        return self.source == "ldpopt"

    def summary(self) -> str:
        if self.source != "ldpopt":
            return f"the constraints {self.names} have non-zero multipliers in {self.source}'s certificate"
        if self.kind == "non-affine":
            return (f"the constraints {self.names} conflict: over the linear ones, the weighted violation of the "
                    f"non-affine ones is at least {self.margin:.3g} (a Frank-Wolfe bound at the phase one's point, "
                    "its linear part verified in exact arithmetic)")
        text = (f"the constraints {self.names} conflict (Farkas certificate verified in exact arithmetic, "
                f"margin {self.margin:.3g})")
        if self.at_rounding:
            text += (": the margin is within the float64 rounding of the numbers given (totals typed in "
                     "decimal, e.g. 0.1 + 0.1 + 0.8 = 1 + 2^-54 in binary): no point meets them exactly; leave "
                     "out a total the others imply, or give totals that are exact in binary")
        return text

    def to_dict(self) -> dict:
        return {"conflicting": list(self.names), "row_multipliers": self.rows, "bound_values": self.bounds,
                "margin": self.margin, "source": self.source}


def owned_system(problem):
    """(lo, up, lo_owner, up_owner, A (csr, rows ≤ or =), b, ineq, row_owner, names, complete): the
    built-in linear constraints of ``problem`` (owners index ``names``, -1 where no bound);
    ``complete``: no constraint was left out (too large, or a user's non-affine row). Within a solve,
    built once and kept in the solve's cache (``SolveContext.affine_cache``, as :func:`affine_rows`),
    keyed on the values of the cvxpy Parameters of every constraint read from cvxpy (a user's): the pre-check, the deferred
    proof from the answer and ldpopt's check (:func:`linear_system`) share one system, its numpy
    arrays read-only. Outside a solve (no cache): built afresh."""
    cache = affine_cache(problem)
    if cache is None:
        return _owned_system(problem)
    from .base import Constraint

    # a constraint that states its pieces holds numbers; one read from cvxpy may hold Parameters
    key = ("owned_system", tuple(_parameter_token(problem, c) if type(c).linear_pieces is Constraint.linear_pieces
                                 else (id(c),) for c in problem.constraints))
    got = cache.get(key)
    if got is None:
        got = _owned_system(problem)
        for arr in got[:4] + got[5:8]:
            arr.flags.writeable = False
        cache[key] = got
    return got


def one_value_rows(M, rhs) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(index i_k, coefficient a_k, r_k/a_k) of each row a_k·f_{i_k} of ``M`` against its right side
    r_k, where every row holds one value times a power of two and every quotient is exact; None where
    a row is not of that form. A power of two only moves the exponent, so r/a is exact unless it
    under- or overflowed, which r/a·a ≠ r catches.

    Parameters
    ----------
    M : scipy sparse matrix (m × d)
        The rows.
    rhs : array_like (m,)
        Their right sides.

    Returns
    -------
    tuple of ndarray or None

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from ldpopt.problems.constraints.feasibility import one_value_rows
    >>> i, a, v = one_value_rows(sp.csr_matrix(np.array([[0, 4.0], [-0.5, 0]])), np.array([1.0, -0.25]))
    >>> i.tolist(), a.tolist(), v.tolist()
    ([1, 0], [4.0, -0.5], [0.25, 0.5])
    >>> one_value_rows(sp.csr_matrix(np.array([[3.0, 0]])), np.array([1.0])) is None
    True
    """
    M = sp.csr_matrix(M, dtype=np.float64, copy=True)
    M.sum_duplicates()
    M.eliminate_zeros()
    rhs = np.broadcast_to(np.asarray(rhs, dtype=np.float64), (M.shape[0],))
    if M.shape[0] == 0 or not np.all(np.diff(M.indptr) == 1):
        return None
    a, idx = M.data, M.indices.astype(np.int64)
    mant, _ = np.frexp(np.abs(a))
    if not np.all(mant == 0.5):
        return None
    with np.errstate(all="ignore"):
        vals = rhs / a
        if not (np.all(np.isfinite(vals)) and np.all(vals * a == rhs)):
            return None
    return idx, a, vals


def bound_sides(a: np.ndarray, equality: bool) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower): which rows a_k·f_{i_k} (≤ r_k, or = r_k where ``equality``) bound their value
    from above and which from below — above where a_k > 0, below where a_k < 0, both sides for an
    equality. The one statement of that rule for every reader of one-value rows (the bounds, the
    closed form's bounds and its multipliers).

    Parameters
    ----------
    a : ndarray (m,)
        The rows' coefficients (none 0).
    equality : bool
        Whether the rows are equalities (else ≤).

    Returns
    -------
    tuple of two boolean ndarrays (m,)

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.problems.constraints.feasibility import bound_sides
    >>> [s.tolist() for s in bound_sides(np.array([2.0, -0.5]), False)]
    [[True, False], [False, True]]
    >>> [s.tolist() for s in bound_sides(np.array([2.0, -0.5]), True)]
    [[True, True], [True, True]]
    """
    if equality:
        both = np.ones(a.shape, dtype=bool)
        return both, both.copy()
    return a > 0, a < 0


def per_value_bounds(M, rhs, le: bool) -> list | None:
    """A user's rows M f (≤ if ``le``, else =) rhs as per-value bounds, where every row is one value
    times a power of two, a·f_i (≤ or =) r (:func:`one_value_rows`): f_i ≤ r/a (a > 0) or f_i ≥ r/a
    (a < 0), both for =, the tightest per value — the same set, stated as ``[(which, indices,
    values)]`` ("lower" / "upper"); None where a row is not of that form (the rows are then kept as
    rows). All or none: a constraint's rows stay together, so that an infeasibility certificate names
    each constraint by its rows' multipliers or by its bounds. Written ``‖f − c‖∞ ≤ r``,
    ``f[idx] <= v`` or ``(f − g)[idx] >= v``, each row bounds one value, and the exact decision and the
    proof from an answer read them as bounds: a box, not 2d rows.

    Parameters
    ----------
    M : scipy sparse matrix (m × d)
        The rows.
    rhs : array_like (m,)
        Their right sides.
    le : bool
        Whether the rows are ≤ (else =).

    Returns
    -------
    list of tuple or None

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from ldpopt.problems.constraints.feasibility import per_value_bounds
    >>> M = sp.csr_matrix(np.array([[1.0, 0, 0], [0, -2.0, 0]]))
    >>> [(w, i.tolist(), v.tolist()) for w, i, v in per_value_bounds(M, np.array([0.5, -0.25]), True)]
    [('upper', [0], [0.5]), ('lower', [1], [0.125])]
    >>> per_value_bounds(sp.csr_matrix(np.array([[3.0, 0, 0]])), np.array([1.0]), True) is None
    True
    """
    got = one_value_rows(M, rhs)
    if got is None:
        return None
    idx, a, vals = got
    out = []
    for which, sel in zip(("upper", "lower"), bound_sides(a, not le)):
        if np.any(sel):
            # one bound per value, the tightest of its rows (an index array may repeat a value)
            i, v = idx[sel], vals[sel]
            order = np.lexsort((v if which == "upper" else -v, i))
            first = np.r_[True, i[order][1:] != i[order][:-1]]
            out.append((which, i[order][first], v[order][first]))
    return out


def _parameter_token(problem, c) -> tuple:
    """The values of the cvxpy Parameters in the built constraints of ``c`` (a cache key's part)."""
    token = []
    for name, (owner, _) in problem.owners.items():
        if owner is c:
            for par in problem.named_constraints[name].parameters():
                val = par.value
                token.append((par.id, None if val is None else np.asarray(val, dtype=np.float64).tobytes()))
    return id(c), tuple(token)


def _owned_system(problem):
    """:func:`owned_system`, built."""
    d = problem.estimate.d
    names = problem.constraint_names
    key = {(id(c), j): i for i, (c, j) in enumerate(problem.owners[n] for n in names)}
    lo, up = np.full(d, -np.inf), np.full(d, np.inf)
    lo_own, up_own = np.full(d, -1), np.full(d, -1)
    rows, b, ineq, own = [], [], [], []
    complete = True

    def bound(which, vals, idx, i):
        arr, who = (lo, lo_own) if which == "lower" else (up, up_own)
        if idx is None:  # every value: boolean masks, no index array of length d
            vals = np.broadcast_to(np.asarray(vals, float), (d,))
            tighter = vals > arr if which == "lower" else vals < arr
            arr[tighter], who[tighter] = vals[tighter], i
            return
        vals = np.broadcast_to(np.asarray(vals, float), idx.shape)
        tighter = vals > arr[idx] if which == "lower" else vals < arr[idx]
        arr[idx[tighter]], who[idx[tighter]] = vals[tighter], i

    def row(M, rhs, le, i):
        rows.append(sp.csr_matrix(M))
        b.extend(np.broadcast_to(np.asarray(rhs, float), (M.shape[0],)).tolist())
        ineq.extend([le] * M.shape[0])
        own.extend([i] * M.shape[0])

    for c in problem.constraints:
        i0 = key.get((id(c), 0))
        if i0 is None:
            continue
        given = c.linear_pieces(d, MAX_LP)  # the item states its bounds and rows
        if given is not None:
            pieces, whole = given
            complete = complete and whole
            for piece in pieces:
                if piece[0] == "bound":
                    _, which, vals, idx, j = piece
                    bound(which, vals, idx, key[(id(c), j)])
                else:
                    _, M, rhs, le, j = piece
                    row(M, rhs, le, key[(id(c), j)])
            continue
        # a user callable or a registered type that states none: its affine rows as cvxpy builds
        # them (a non-affine row is left out, and the system is then not complete)
        affine = affine_rows(problem, c)
        complete = complete and len(affine) == sum(1 for n in names if problem.owners[n][0] is c)
        for j, (M, rhs, le) in affine:
            if M.shape[0] > MAX_LP:
                complete = False
                continue
            as_bounds = per_value_bounds(M, rhs, le)
            if as_bounds is None:
                row(M, rhs, le, key[(id(c), j)])
                continue
            for which, idx, vals in as_bounds:
                bound(which, vals, idx, key[(id(c), j)])
    A = sp.vstack(rows, format="csr") if rows else sp.csr_matrix((0, d))
    return (lo, up, lo_own, up_own, A, np.asarray(b, float), np.asarray(ineq, bool), np.asarray(own, int), names,
            complete)


def linear_system(problem):
    """(lo, up, A, b, ineq, complete) of the constraints of ``problem`` that are linear (the built-ins
    and a user callable's affine rows, as :func:`decide` reads them): bounds lo ≤ f ≤ up, rows A f
    (≤ where ``ineq``, else =) b; ``complete`` False when some constraint is not among them."""
    lo, up, _, _, A, b, ineq, _, _, complete = owned_system(problem)
    return lo, up, A, b, ineq, complete


def affine_rows(problem, c) -> list:
    """:func:`_affine_rows` of the user constraint ``c`` of ``problem``, read once per solve: kept in
    the solve's cache (:func:`~ldpopt.problems.progress.affine_cache`: its context's, made afresh by
    each ``solve()``), keyed on ``c`` and
    the values of the cvxpy Parameters its built constraints hold, so the exact pre-check, ldpopt's
    check (the Jacobian and the projection of :mod:`ldpopt.problems.check.verdict`) share one cvxpy
    Jacobian per constraint. Outside a solve (no cache): read afresh."""
    cache = affine_cache(problem)
    if cache is None:
        return _affine_rows(c, problem.estimate)
    key = _parameter_token(problem, c)
    got = cache.get(key)
    if got is None:
        got = cache[key] = _affine_rows(c, problem.estimate)
    return got


def _affine_rows(c, estimate) -> list:
    """[(j, A, b, is_inequality)] for the cvxpy constraints a user callable builds that are affine:
    ``lhs <= rhs`` as A f ≤ b, ``lhs == rhs`` as A f = b, with A and b read from the callable on a fresh
    length-d variable (cvxpy's Jacobian of lhs − rhs, constant for an affine expression, and its value
    at 0): the coefficients as the user wrote them, not rescaled by ``Problem``'s unit. A non-affine
    constraint, or a callable that fails here, is left out (its error surfaces where it did before)."""
    import cvxpy as cp

    from ..objectives.polyhedral import affine_tree
    from ..objectives.recognise import cvxpy_grad, set_value

    d = estimate.d
    fv = cp.Variable(d)
    try:
        pairs = c.build(fv, estimate)
    except Exception:  # noqa: BLE001 - the user's code: Problem's own build reports it
        return []
    out = []
    set_value(fv, np.zeros(d))
    for j, (_, con) in enumerate(pairs):
        le = isinstance(con, cp.constraints.Inequality)
        if not (le or isinstance(con, cp.constraints.Equality)) or not affine_tree(con.expr):
            continue
        M = _constant_times(con.expr, fv)
        try:
            if M is None:
                jac = cvxpy_grad(con.expr, {}).get(fv)  # cvxpy's grad, the same bits (.recognise.cvxpy_grad)
                M = None if jac is None else sp.csr_matrix(jac).T.tocsr()
            b0 = np.atleast_1d(np.asarray(con.expr.value, float)).ravel(order="F")
        except Exception:  # noqa: BLE001 - a parameter without a value, ...: this row is left out
            M, b0 = None, np.zeros(0)
        if M is None or not np.all(np.isfinite(b0)) or M.shape[0] != b0.size:
            continue
        M.eliminate_zeros()
        out.append((j, (M, -b0, le)))
    return out


def _constant_times(expr, fv):
    """The rows C (csr, float64) when ``expr`` is C @ fv plus terms without a variable, C a constant
    matrix (m × d) or vector (d,) of real numbers — the rows as a user writes them, ``A @ f <= b`` —,
    or Σ fv, Σ fv[a:b:c] (a row of ones), else None (cvxpy's Jacobian is then read). cvxpy's Jacobian of C @ fv is C itself, copied: the
    same numbers without building it (20 dense rows at d = 10⁴: 20 ms of cvxpy's canonicalisation)."""
    import cvxpy as cp
    from cvxpy.atoms.affine.add_expr import AddExpression
    from cvxpy.atoms.affine.binary_operators import MulExpression
    from cvxpy.atoms.affine.index import index
    from cvxpy.atoms.affine.sum import Sum

    terms = list(expr.args) if type(expr) is AddExpression else [expr]
    with_var = [t for t in terms if t.variables()]
    if len(with_var) != 1:
        return None
    t = with_var[0]
    d = fv.size
    if type(t) is Sum and t.axis is None:  # Σ f or Σ f[a:b:c]: ones on those values
        arg = t.args[0]
        if arg is fv:
            return sp.csr_matrix(np.ones((1, d)))
        if (type(arg) is index and arg.args[0] is fv and len(arg.key) == 1 and isinstance(arg.key[0], slice)
                and fv.ndim == 1):
            key = arg.key[0]  # as cvxpy normalised it; a negative step's stop -1 is not Python's: left out
            lo_, hi_, step = key.start, key.stop, 1 if key.step is None else key.step
            if not (isinstance(lo_, (int, np.integer)) and isinstance(hi_, (int, np.integer)) and step >= 1
                    and 0 <= lo_ < hi_ <= d):
                return None
            at = np.arange(int(lo_), int(hi_), int(step))
            return sp.csr_matrix((np.ones(at.size), at, [0, at.size]), shape=(1, d))
        return None
    if type(t) is not MulExpression or t.args[1] is not fv or type(t.args[0]) is not cp.Constant:
        return None
    C = t.args[0].value
    if sp.issparse(C):
        C = sp.csr_matrix(C)
        ok = C.dtype.kind in "fiub" and C.ndim == 2 and C.shape[1] == d and C.shape[0] == expr.size
        return sp.csr_matrix(C, dtype=np.float64, copy=True) if ok else None
    C = np.asarray(C)
    if C.dtype.kind not in "fiub" or expr.ndim > 1:
        return None
    if C.ndim == 1 and C.shape == (d,) and expr.size == 1:
        C = C[None, :]
    if C.ndim != 2 or C.shape != (expr.size, d):
        return None
    C = C.astype(np.float64)
    if np.all(C != 0):  # dense rows: the csr arrays directly (no search for the non-zeros)
        m = C.shape[0]
        return sp.csr_matrix((C.ravel(), np.tile(np.arange(d), m), np.arange(m + 1) * d), shape=(m, d))
    return sp.csr_matrix(C)


def named_certificate(got, names, own, lo_own, up_own) -> Infeasibility:
    """The :class:`Infeasibility` of a phase-one answer ``got`` = (margin, c, y, thin) on the system of
    :func:`owned_system`: each constraint named with its rows' multipliers and its bounds' count."""
    margin, c, y, thin = got
    rows = {}  # every row of a constraint with a non-zero multiplier, in its row order
    for i in np.unique(own[y != 0]):
        yi = y[own == i].tolist()
        rows[names[i]] = yi[0] if len(yi) == 1 else yi
    bounds: dict[str, int] = {}  # constraint name -> how many of its bounds have a multiplier
    for sel, who in ((c > 0, lo_own), (c < 0, up_own)):
        ks, counts = np.unique(who[sel.astype(bool)], return_counts=True)
        for k, n in zip(ks, counts):
            bounds[names[int(k)]] = bounds.get(names[int(k)], 0) + int(n)
    used = set(rows) | set(bounds)
    return Infeasibility([n for n in names if n in used], rows, bounds, margin, at_rounding=bool(thin))


@dataclass
class Decision:
    """The exact pre-check's answer on the built-in linear constraints (with a user's affine rows):
    ``feasible`` True (a point verified in exact arithmetic, or the closed form of the family), False
    (``certificate`` verified exactly) or None (not decided: no candidate verified, module docstring); ``how`` names the step that decided (module docstring);
    ``complete`` whether every constraint of the problem took part (no user non-affine row, nothing
    left out for size), so that True is the whole problem's feasibility."""

    feasible: bool | None
    certificate: Infeasibility | None = None
    how: str = ""
    complete: bool = False


def find_infeasibility(problem) -> Infeasibility | None:
    """A verified certificate that the built-in linear constraints of ``problem`` have no common
    point, or None (feasible, or not decided here: module docstring)."""
    return decide(problem).certificate


def one_total_feasible(constraints) -> bool:
    """Whether ``constraints`` are only f ≥ 0 and Σ f = t with one common t (≥ 0 where f ≥ 0 is
    stated), as each states it (:meth:`Constraint.simplex_parts`, the structured solver's fast path
    asks the same): the default family, feasible in closed form without building a row."""
    parts = [c.simplex_parts() for c in constraints]
    if not parts or any(p is None for p in parts):
        return False
    flat = [q for p in parts for q in p]
    totals = {float(q[2]) for q in flat if q[0] == "sum"}
    nonneg = any(q[0] == "nonnegative" for q in flat)
    return len(totals) <= 1 and (not nonneg or all(t >= 0 for t in totals))


#: ``Decision.how`` of :func:`decide` with ``defer=True`` when only its costly steps are left
DEFERRED = "deferred: the cheap steps did not decide"
#: with ``defer=True``, an aggregated system of at most this many values is still decided in full
#: (its dense vertex and rational simplex take ~1 ms): only larger ones are deferred
DEFER_MIN_VALUES = 16


def decide(problem, deadline: float | None = None, defer: bool = False, system=None) -> Decision:
    """Decide the built-in linear constraints of ``problem`` (and a user callable's affine rows)
    exactly: the steps of the module docstring (each call decides afresh: a user's rows may read
    Parameters). ``deadline`` (a ``time.perf_counter()`` reading; None: none): checked between the
    steps (the system built, the uniform point, each LP), :class:`~ldpopt.problems.progress.CheckTimedOut`
    once it has passed — the decision is then not made, and nothing is claimed. ``defer``: stop
    after the cheap steps (closed form, bounds, the uniform and part-wise uniform points, the
    interval certificates) with ``Decision(None, how=DEFERRED)`` where they do not decide — the
    caller then tries a route's point first (:func:`point_feasible`) and calls again without it.
    ``system``: :func:`owned_system`'s tuple when the caller has it."""
    if one_total_feasible(problem.constraints):
        return Decision(True, how="closed form", complete=True)
    past(deadline, "the exact pre-check")
    lo, up, lo_own, up_own, A, b, ineq, own, names, complete = system if system is not None else owned_system(problem)
    past(deadline, "the exact pre-check")
    return _decide_system(lo, up, lo_own, up_own, A, b, ineq, own, names, complete, deadline=deadline, defer=defer)


#: up to this d, :func:`point_feasible` tries the returned point at tolerance 0 before 1e-9
SMALL_POINT_D = 300


def point_feasible(system, f, deadline: float | None = None) -> bool:
    """Whether the float point ``f`` (frequency units; a route's answer) proves the linear system of
    :func:`owned_system` non-empty: made exact on its active set and checked against every row and
    bound in exact arithmetic (:func:`.exact_point.exact_point`, at tolerances 0 and 1e-9 for
    "on a bound" and "tight", 0 first up to d = :data:`SMALL_POINT_D`). True is a proof (no Farkas
    certificate exists then, so the deferred steps of :func:`decide` could only say feasible); False
    claims nothing."""
    lo, up, _, _, A, b, ineq, _, _, _ = system
    f = np.asarray(f, dtype=np.float64)
    if f.shape != lo.shape or not np.all(np.isfinite(f)):
        return False
    # the floating-point proof first (:func:`.exact_point.verified_point`: rigorous error bounds, no
    # rational arithmetic; 0.4 ms where the rational repair took 6.5 at d = 100, 2 ms where it took 31
    # at 10⁴), then the rational repair, where that bound is inconclusive. The order only sets the
    # cost (each try is a proof or nothing), measured on the simplex with 20 dense user rows: 0 first
    # at d = 100 (7 ms, 1e-9 took 15: five more tight rows to solve), 1e-9 first at d = 1,000 (20 ms
    # against 38) and 10⁴ (26 ms, where 0 took 290 ms and failed)
    for tol in (1e-9, 0.0):
        past(deadline, "the exact pre-check")
        if verified_point(A, b, ineq, lo, up, f, tol):
            return True
    for tol in ((0.0, 1e-9) if f.size <= SMALL_POINT_D else (1e-9, 0.0)):
        past(deadline, "the exact pre-check")
        if exact_point(A, b, ineq, lo, up, f, tol) is not None:
            return True
    return False


def _proves(A, b, ineq, lo, up, x, tol: float) -> bool:
    """Whether the float point x proves the system non-empty: :func:`.exact_point.verified_point`
    (floating point, rigorous bounds), else :func:`.exact_point.exact_point` (rational repair)."""
    return verified_point(A, b, ineq, lo, up, x, tol) or exact_point(A, b, ineq, lo, up, x, tol) is not None


def _decide_system(lo, up, lo_own, up_own, A, b, ineq, own, names, complete, relax: bool = True,
                   deadline: float | None = None, defer: bool = False) -> Decision:
    """:func:`decide` on the system of :func:`owned_system`; ``relax``: before the large-system steps, the
    system without its two-value steps (chains, Monotone pairs) is decided on its own when that
    leaves other rows, and its certificate, if any, is the answer (a conflict among subset totals
    that the order rows take no part in: the relaxed system aggregates to a few values and is
    decided exactly, where the phase-one LP over thousands of pair rows may see nothing at 1e-16).
    Only an infeasible relaxation is taken: its multipliers, 0 on the steps, certify the whole; the
    relaxation gets the cheap steps only (interval, uniform point, the aggregated exact system),
    never the large-system ones (``relax=False`` stops there with None)."""
    clash = np.flatnonzero(lo > up)  # exact: two bounds on one value disagree
    if clash.size:
        i = clash[0]
        who = sorted({int(lo_own[i]), int(up_own[i])})
        return Decision(False, Infeasibility([names[k] for k in who], {}, {names[k]: 1 for k in who},
                                             float(lo[i] - up[i])), "bounds", complete)
    if A.shape[0] == 0:
        return Decision(True, how="bounds", complete=complete)
    if A.shape[0] > MAX_LP:
        return Decision(None, how="too many rows")
    # the part-wise uniform point first, on the system as given: subset totals that partition some
    # values (a SubsetSum ==, a user's row over a subset) with the simplex are decided here in O(d)
    parts = _parts(A, b, ineq)
    if parts is not None and A.nnz <= MAX_PARTS_NNZ and _parts_point_ok(A, b, ineq, lo, up, parts):
        return Decision(True, how="uniform point on each part, checked exactly", complete=complete)
    if _uniform_ok(A, b, ineq, lo, up):
        return Decision(True, how="uniform point, checked exactly", complete=complete)
    past(deadline, "the exact pre-check")
    Ag, lo_g, up_g, inv = aggregate(A, lo, up)
    small = Ag.shape[1] <= MAX_LP  # screen on the aggregated columns (float sums: a screen only)
    for y in interval_candidates(*((Ag, b, ineq, own, lo_g, up_g) if small else (A, b, ineq, own, lo, up))):
        got = verify(y, A, b, ineq, lo, up)  # the listed families, exactly, on the data as given
        if got is not None:
            return Decision(False, named_certificate(got, names, own, lo_own, up_own), "interval", complete)
    if A.shape[0] == 1 and A.indptr[1] == A.shape[1] and np.all(A.data == 1.0):
        return Decision(True, how="interval", complete=complete)  # Σ f = t and bounds: Σl ≤ t ≤ Σu is the question
    if not small:
        return Decision(None, how="too many values after aggregation")
    # deferred with no part-wise point, the aggregated system has nothing cheap to try (its first step
    # returns at once): the exact comparison of the columns is not made
    nothing_cheap = defer and Ag.shape[1] > DEFER_MIN_VALUES and parts is None
    small_exact = (not nothing_cheap and Ag.shape[1] <= MAX_EXACT and A.shape[0] <= MAX_EXACT
                   and same_columns(A, Ag, inv))
    if small_exact:
        got = _decide_aggregated(Ag, inv, A, b, ineq, lo, up, lo_g, up_g, names, own, lo_own, up_own, complete,
                                 parts, defer and Ag.shape[1] > DEFER_MIN_VALUES, deadline)
        if got.feasible is not None:
            return got
    if defer:  # the costly steps (LPs, exact repairs, the relaxation) are left to the caller's second call
        return Decision(None, how=DEFERRED, complete=complete)
    steps = _two_value_steps(A, b, ineq)
    if relax and np.any(steps) and not np.all(steps):
        keep = ~steps
        got = _decide_system(lo, up, lo_own, up_own, A[keep], b[keep], ineq[keep], own[keep], names, complete,
                             relax=False, deadline=deadline)
        if got.feasible is False:
            return got
    if not relax:  # a relaxation is decided only where it is cheap (aggregated, interval, uniform)
        return Decision(None, how="relaxation left to the large-system steps")
    past(deadline, "the exact pre-check")
    return _decide_large(A, b, ineq, lo, up, names, own, lo_own, up_own, complete, deadline)


def _left(deadline: float | None) -> float | None:
    """Seconds to ``deadline`` (None: none), for HiGHS's own time limit inside a pre-check step."""
    import time

    return None if deadline is None else deadline - time.perf_counter()


def _two_value_steps(A, b, ineq) -> np.ndarray:
    """Which rows are a·f_i − a·f_j ≤ 0 (a Monotone chain's or pair's step)."""
    nnz = np.diff(A.indptr)
    out = ineq & (nnz == 2) & (b == 0)
    k = np.flatnonzero(out)
    out[k] = A.data[A.indptr[k]] == -A.data[A.indptr[k] + 1]
    return out


def _certified(y, A, b, ineq, lo, up, names, own, lo_own, up_own, complete, how) -> Decision | None:
    """The infeasible Decision when y (snapped to small-denominator rationals, rounded to 2⁻²⁰ of its
    largest entry, or as it is) verifies exactly. A y whose float margin is below −10⁻⁶ of its size
    is no certificate and is not sent to the exact test (O(nnz) Python integers: seconds for 201
    dense rows at d = 42,178); the screen only rejects, so every claim is still the exact test's."""
    if y is None or not np.all(np.isfinite(y)) or not np.any(y):
        return None
    yc = np.where(ineq & (y < 0), 0.0, y)
    c = np.asarray(A.T @ yc).ravel()
    bound = np.where(c > 0, np.where(np.isfinite(lo), lo, 0.0), np.where(c < 0, np.where(np.isfinite(up), up, 0.0), 0.0))
    size = float(np.abs(c) @ np.abs(bound) + np.abs(yc) @ np.abs(b))
    if float(c @ bound - yc @ b) < -1e-6 * size:
        return None
    scale = float(np.max(np.abs(y)))
    for cand in (_snapped(y / scale), np.round(y / scale * 2.0**20) / 2.0**20, y):  # the cleanest first
        got = None if cand is None else verify(cand, A, b, ineq, lo, up)
        if got is not None:
            return Decision(False, named_certificate(got, names, own, lo_own, up_own), how, complete)
    return None


def _snapped(y):
    """y (largest entry ±1) as the integers Y = L·y rounded, for the least common denominator L of
    small-denominator fractions near a spread of its entries (``Fraction.limit_denominator``, at
    most 10⁶), when every entry of L·y is within 10⁻⁶ of an integer; else None. A vertex of the
    dual of a phase-one LP is rational; a certificate whose exact multipliers are i/2000 (a chain
    over d = 2,000 values) is off by float rounding in every entry, which a 1e-16 margin cannot
    absorb, and exact again after this (a Farkas certificate may be scaled by any L > 0)."""
    vals = np.unique(y[y != 0])
    L = 1
    for v in vals[np.linspace(0, vals.size - 1, min(vals.size, 24)).astype(int)].tolist():
        L = lcm(L, Fraction(v).limit_denominator(10**6).denominator)
        if L > 2**40:
            return None
    Y = np.round(y * L)
    return Y if np.max(np.abs(y * L - Y)) <= 1e-6 else None


def _uniform_ok(A, b, ineq, lo, up) -> bool:
    """Whether the uniform point meets every row and bound exactly: f = t/d, t the total of the rows
    Σ f = t (one t, every entry 1, every value); failing that, f = t/n on the n free values, t the
    total of the rows Σ_free f = t (every free value and no other), and each value that nested sums
    define (:class:`.nested_sums.NestedSums`, a Hierarchy's or a range tree's f_p = Σ f_children, a
    one-child node's f_p = f_c included) its exact sum of the free values. Simplex with a Monotone
    chain, the problem every solve of it decides first, and a range tree (the leaves at 1/n, each
    node its leaves' count over n) need no LP. Screened in float first (a row missed by more than
    rounding), so a conflicting system pays O(nnz) floats; the check is
    :func:`.exact_point.point_ok` on the system as given, so a True is a proof and a False claims
    nothing."""
    m, d = A.shape
    nnz = np.diff(A.indptr)
    row_of = np.repeat(np.arange(m), nnz)
    # f = t/d first (a Σ f row over every value: f_a = f_b rows hold there too), then over the free values
    for over_free in (False, True):
        sub = None
        if over_free:  # the nested sums read only when f = t/d did not hold, and when a row may be one
            if not np.any(~ineq & (b == 0) & (nnz >= 2)):  # (a nested sum is an = row with b = 0)
                break
            sub = NestedSums(A, b, ineq, two_value=True)
            if not sub.active:
                break
        free = np.ones(d, bool) if sub is None else ~sub.defined
        n = int(np.count_nonzero(free))
        off = np.bincount(row_of, weights=(A.data != 1.0) | ~free[A.indices], minlength=m)
        full = np.flatnonzero(~ineq & (nnz == n) & (off == 0))
        if not full.size or np.unique(b[full]).size != 1:
            continue
        t = Fraction(float(b[full[0]])) / n
        comp = (~free).astype(np.int64)  # block 0: the free values, at t; block 1: the defined ones
        x = np.where(free, float(t), 0.0)
        if sub is not None:
            x = sub.propagate(x)
        if _screen(A, b, ineq, lo, up, x) and point_ok(A, b, ineq, lo, up, np.zeros(d), comp, {0: t}, nested=sub):
            return True
    return False


def _screen(A, b, ineq, lo, up, x) -> bool:
    """Whether x meets every bound and row in float up to 10⁻⁹ of the data's scale: the screen before
    an exact check (it only rejects; a pass decides nothing)."""
    Ax = A @ x
    slack = 1e-9 * (abs(A) @ np.abs(x) + np.abs(b)) + 1e-300
    if np.any(x < lo - slack.max()) or np.any(x > up + slack.max()):
        return False
    return not np.any(np.where(ineq, Ax - b > slack, np.abs(Ax - b) > slack))


#: most parts of the part-wise uniform point (:func:`_parts`; its exact check compares one Fraction
#: per part with the bounds of the part's values)
MAX_PARTS = 64
#: largest system (non-zeros of A) on which that point is checked over the values themselves (exact
#: integer products per non-zero); a system that aggregates to a few values is checked aggregated
MAX_PARTS_NNZ = 200_000


def _parts(A, b, ineq):
    """(part of each value, each part's total as a Fraction, each part's size, which rows hold there
    by construction) of the part-wise
    uniform point, a feasible point of the common case with no LP: the parts are the supports of the
    = rows whose entries are all 1 and which share no value with another such row (PartitionTotals'
    groups, the marginals of :mod:`ldpopt.multi`), each at its b_k, and the values outside them, at
    t − Σ those b_k, t the total of the Σ f = t rows (one t). Each value is then its part's total
    over its part's size: a consistent set of marginals (every marginal at total 1, the shared
    sub-marginals' rows between them) holds exactly there. None without one such t or without such
    a row (the point is then f = t/d, :func:`_uniform_ok`), with more than :data:`MAX_PARTS` parts,
    or when no value is left outside the rows and their totals do not add to t."""
    m, d = A.shape
    nnz = np.diff(A.indptr)
    row_of = np.repeat(np.arange(m), nnz)
    ones = ~ineq & (nnz > 0) & (np.bincount(row_of, weights=A.data != 1.0, minlength=m) == 0)
    full = np.flatnonzero(ones & (nnz == d))
    if not full.size or np.unique(b[full]).size != 1:
        return None
    ind = ones & (nnz < d)
    sel = ind[row_of]
    cover = np.bincount(A.indices[sel], minlength=d)
    shared = np.bincount(row_of[sel], weights=cover[A.indices[sel]] > 1, minlength=m) > 0
    rows = np.flatnonzero(ind & ~shared)
    if not rows.size or rows.size + 1 > MAX_PARTS:
        return None
    comp = np.full(d, rows.size, dtype=np.int64)
    chosen = np.isin(row_of, rows)
    comp[A.indices[chosen]] = np.searchsorted(rows, row_of[chosen])
    sizes = np.bincount(comp, minlength=rows.size + 1)
    totals = [Fraction(v) for v in b[rows].tolist()]
    rest = Fraction(float(b[full[0]])) - sum(totals, Fraction(0))
    if sizes[-1] == 0 and rest != 0:
        return None
    # rows that hold at that point by construction: each part's row (distinct values: a repeated one
    # would be counted twice in ``cover`` and make the row shared) sums n·T/n = T, and a Σ f = t row
    # over every value once (its indices strictly increasing, nnz = d) sums the parts' totals, t
    held = np.zeros(m, bool)
    held[rows] = True
    for k in full.tolist():
        held[k] = bool(np.all(np.diff(A.indices[A.indptr[k]:A.indptr[k + 1]]) > 0))
    return comp, totals + [rest], sizes, held


def _parts_point_ok(A, b, ineq, lo, up, parts) -> bool:
    """Whether the part-wise uniform point of :func:`_parts` meets every row and bound exactly: the
    bounds per part (one Fraction against its values' tightest bounds), the rows that do not hold by
    construction (:func:`_parts`' ``held``) by :func:`.exact_point.point_ok`, screened in float first
    (none: a partition of subset totals with the simplex is decided in O(d), no integer row sums)."""
    comp, totals, sizes, held = parts
    fracs = {g: T / int(n) for g, (T, n) in enumerate(zip(totals, sizes.tolist())) if n}
    if np.all(held):
        G = len(totals)
        lo_g, up_g = np.full(G, -np.inf), np.full(G, np.inf)
        np.maximum.at(lo_g, comp, lo)
        np.minimum.at(up_g, comp, up)
        return all((not np.isfinite(lo_g[g]) or z >= Fraction(float(lo_g[g])))
                   and (not np.isfinite(up_g[g]) or z <= Fraction(float(up_g[g]))) for g, z in fracs.items())
    x = np.array([float(fracs.get(g, 0)) for g in range(len(totals))])[comp]
    if not _screen(A, b, ineq, lo, up, x):
        return False
    rest = ~held
    return point_ok(A[rest], b[rest], ineq[rest], lo, up, np.zeros(A.shape[1]), comp, fracs)


#: most = rows of the least-squares candidate of :func:`_interior_candidate` (a dense Gram matrix)
MAX_INTERIOR_ROWS = 1000


def _interior_candidate(A, b, ineq, lo, up):
    """A float point for the common feasible case that needs no LP: the center c (t/d for the Σ f = t
    row where there is one, else 0; clipped into the bounds) moved onto the = rows by least squares,
    x = c + A_eᵀ z with (A_e A_eᵀ) z = b_e − A_e c (at most :data:`MAX_INTERIOR_ROWS` = rows), taken
    only when it meets every bound and every ≤ row with float room (10⁻⁹ of the data's scale) —
    a dense LinearEquality with a solution well inside the simplex. A search only: the caller makes
    it exact on its = rows and checks it exactly (:func:`.exact_point.exact_point`), so a thin
    conflict among the = rows is never taken as feasible; None when the screen fails."""
    eq = np.flatnonzero(~ineq)
    if not eq.size or eq.size > MAX_INTERIOR_ROWS:
        return None
    d = A.shape[1]
    nnz = np.diff(A.indptr)
    full = [k for k in eq[nnz[eq] == d].tolist() if np.all(A.data[A.indptr[k]:A.indptr[k + 1]] == 1.0)]
    c = np.clip(np.full(d, float(b[full[0]]) / d if full else 0.0), lo, up)
    # the correction on a spread of K values only (a fixed one, l = u, never moves): the rest stay
    # at the centre, one common number, which keeps the exact check to one integer sum per entry
    K = min(d, max(4096, 64 * eq.size))
    moves = np.zeros(d)
    moves[np.linspace(0, d - 1, K).astype(np.int64)] = 1.0
    moves[lo == up] = 0.0
    Ae = A[eq] @ sp.diags(moves)
    z = np.linalg.lstsq((Ae @ Ae.T).toarray(), b[eq] - A[eq] @ c, rcond=None)[0]
    x = c + Ae.T @ z
    room = 1e-9 * max(1.0, float(np.max(np.abs(x), initial=0.0)))
    inside = (x - lo >= room) & (up - x >= room)
    if not np.all(np.isfinite(x)) or not np.all(inside | (lo == up)):
        return None
    if np.any(ineq) and np.any(A[ineq] @ x - b[ineq] > -room):
        return None
    return x


def _decide_large(A, b, ineq, lo, up, names, own, lo_own, up_own, complete,
                  deadline: float | None = None) -> Decision:
    """The verified-LP steps on the system as given, at any size (module docstring), chains
    substituted out of every LP: the phase-one LP's duals, its point made exact on its active set
    (:func:`.exact_point.exact_point`), up to three steps of iterative refinement
    (:func:`.farkas.refined_phase_one`) for a conflict or a feasible set thinner than HiGHS's
    tolerances, then the duals of its two tightened forms; every candidate is checked exactly, the
    first that verifies decides (the refinement first: one LP where the tightened forms are two)."""
    x_in = _interior_candidate(A, b, ineq, lo, up)
    if x_in is not None and _proves(A, b, ineq, lo, up, x_in, 0.0):
        return Decision(True, how="interior point of the = rows, made exact", complete=complete)
    past(deadline, "the exact pre-check")
    sub = ChainSubstitution(A, b, ineq, lo, up)
    As, bs, ins, los, ups = sub.system()
    past(deadline, "the exact pre-check")
    y0, g0 = phase_one(As, bs, ins, los, ups, _left(deadline))
    x0 = sub.point(g0)
    got = _certified(sub.duals(y0), A, b, ineq, lo, up, names, own, lo_own, up_own, complete, "phase-one LP")
    if got is not None:
        return got
    if x0 is None:
        return Decision(None, how="HiGHS failed on the phase-one LP")
    for tol in (0.0, 1e-12, 1e-9, 1e-7):  # HiGHS's point first: a feasible system needs no more LPs
        if _proves(A, b, ineq, lo, up, x0, tol):
            return Decision(True, how="phase-one LP point, made exact on its active set", complete=complete)
    x = x0
    for _ in range(3):  # each step brings the point ~1e7 closer; a conflict shows in the first
        past(deadline, "the exact pre-check")
        y1, x1 = refined_phase_one(A, b, ineq, lo, up, x, sub, _left(deadline))
        got = _certified(y1, A, b, ineq, lo, up, names, own, lo_own, up_own, complete, "refined phase-one LP")
        if got is not None:
            return got
        if x1 is None:
            break
        for tol in (0.0, 1e-15, 1e-12, 1e-9):
            if _proves(A, b, ineq, lo, up, x1, tol):
                return Decision(True, how="refined phase-one LP point, made exact on its active set",
                                complete=complete)
        x = x1
    for tighter in (True, False):
        past(deadline, "the exact pre-check")
        At, bt, it, lt, ut = _tightened(As, bs, ins, los, ups, tighter)
        y = phase_one(At, bt, it, lt, ut, _left(deadline))[0]
        got = _certified(sub.duals(y), A, b, ineq, lo, up, names, own, lo_own, up_own, complete, "phase-one LP")
        if got is not None:
            return got
    return Decision(None, how="neither a certificate nor a point verified exactly")


def _decide_aggregated(Ag, inv, A, b, ineq, lo, up, lo_g, up_g, names, own, lo_own, up_own, complete,
                       parts=None, defer: bool = False, deadline: float | None = None) -> Decision:
    """The steps on the aggregated system (at most :data:`MAX_EXACT` variables and rows, every
    group's columns equal): the part-wise uniform point (``parts``, :func:`_parts`), HiGHS's duals
    and repaired point, then the rational simplex (``defer``: the first step only). ``deadline``:
    HiGHS's time limit, and no LP starts past it (:class:`~..progress.CheckTimedOut`)."""
    if defer and parts is None:  # nothing cheap to try (the exact system's Fractions cost ~9 ms at 20 × 100)
        return Decision(None, how=DEFERRED, complete=complete)
    exact = ExactSystem(Ag.toarray(), b, ineq, exact_group_sums(lo, inv, Ag.shape[1]),
                        exact_group_sums(up, inv, Ag.shape[1]))
    if parts is not None:  # each aggregated value lies in one part (the parts' rows are rows of A)
        comp, totals, sizes, _ = parts
        G = Ag.shape[1]
        rep = np.zeros(G, dtype=np.int64)
        rep[inv[::-1]] = np.arange(inv.size)[::-1]
        part, count = comp[rep].tolist(), np.bincount(inv, minlength=G).tolist()
        if exact.point_ok([totals[p] * n / int(sizes[p]) for p, n in zip(part, count)]):
            return Decision(True, how="uniform point on each part, checked exactly", complete=complete)
    if defer:
        return Decision(None, how=DEFERRED, complete=complete)
    x = dense_phase_one(Ag, b, ineq, lo_g, up_g)  # a vertex without HiGHS's set-up; a proof once exact
    if x is not None:
        for tol in (1e-12, 1e-9):
            point = exact.repair(x, tol)
            if point is not None and exact.point_ok(point):
                return Decision(True, how="dense simplex vertex, repaired exactly", complete=complete)
    def lp(args):
        past(deadline, "the exact feasibility decision")
        return phase_one(*args, _left(deadline))

    lps = (lambda: lp((Ag, b, ineq, lo_g, up_g)), lambda: lp(_tightened(Ag, b, ineq, lo_g, up_g, True)),
           lambda: lp(_tightened(Ag, b, ineq, lo_g, up_g)))
    for y, x in (run() for run in lps):  # one LP at a time: the first decides a feasible system alone
        found = _certified(y, A, b, ineq, lo, up, names, own, lo_own, up_own, complete, "phase-one LP")
        if found is not None:
            return found
        if x is not None:
            for tol in (1e-12, 1e-9, 1e-6):
                point = exact.repair(x, tol)
                if point is not None and exact.point_ok(point):
                    return Decision(True, how="phase-one LP point, repaired exactly", complete=complete)
    got = exact.simplex()
    if got is None:
        return Decision(None, how="aggregated system too large for the rational simplex")
    verdict, z = got
    if verdict == "feasible":
        assert exact.point_ok(z)  # the simplex's own vertex: a failure here is a bug, not a verdict
        return Decision(True, how="rational simplex", complete=complete)
    margin = exact.farkas_margin(z)
    if margin is None:  # not a certificate after all: claim nothing
        return Decision(None, how="rational simplex certificate did not verify")
    c_g = exact.coefficients(z)
    c = np.sign(np.array([float(v) for v in c_g]))[inv]
    y = np.array([float(v) if v else 0.0 for v in z])
    size = sum((abs(cj) * abs(bd) for cj, bd in zip(c_g, (exact.lo[j] if cj > 0 else exact.up[j]
                                                           for j, cj in enumerate(c_g))) if cj), Fraction(0))
    size += sum((abs(v) * abs(bk) for v, bk in zip(z, exact.b)), Fraction(0))
    thin = margin <= size * Fraction(A.shape[1], 2**53)
    return Decision(False, named_certificate((float(margin), c, y, thin), names, own, lo_own, up_own),
                    "rational simplex", complete)


def _tightened(Ag, b, ineq, lo_g, up_g, relative: bool = False):
    """The aggregated system with every ≤ row and every finite bound tightened by δ = 1e-6 of the
    data's scale (``relative``: by 1e-6 of each number's own size, so that a homogeneous row — a
    Monotone chain's f_a − f_b ≤ 0 — and a zero bound stay as they are: a uniform δ on a chain of
    d − 1 steps alone asks for a spread of d·δ, which at d = 2,048 conflicts with Σ f = 1 by itself
    and hides the conflict sought): a conflict thinner than HiGHS's tolerances (1e-7) is at least δ
    wide there, so the phase-one LP sees it and its duals are a candidate — then checked exactly on
    the data as given (:func:`.farkas.verify`); on a feasible set the tightened LP may conflict, but
    no such y passes."""
    fin = np.concatenate([b, lo_g[np.isfinite(lo_g)], up_g[np.isfinite(up_g)]])
    delta = 1e-6 * max(1.0, float(np.max(np.abs(fin), initial=0.0)))
    with np.errstate(invalid="ignore"):
        d_lo, d_up, d_b = ((1e-6 * np.abs(lo_g), 1e-6 * np.abs(up_g), 1e-6 * np.abs(b)) if relative
                           else (delta, delta, delta))
        lo_t, up_t = lo_g + d_lo, up_g - d_up
    cross = lo_t > up_t
    mid = 0.5 * (lo_g + up_g)
    lo_t, up_t = np.where(cross, mid, lo_t), np.where(cross, mid, up_t)
    return Ag, np.where(ineq, b - d_b, b), ineq, lo_t, up_t


def solver_infeasibility(named: dict, solver: str) -> Infeasibility | None:
    """The constraints with non-zero multipliers in a solver's certificate of infeasibility (cvxpy
    leaves it in the constraints' ``dual_value`` after an ``"infeasible"`` status, for the solvers
    that give one: Clarabel, OSQP, SCS; not PIQP). Not verified here (it may involve user
    constraints); "non-zero" is relative, |y| > 1e-9·max|y| (a choice: the solvers' certificates
    are float iterates). An interior-point certificate (Clarabel's) is dense and may name more
    constraints than conflict; None when the solver left no multipliers."""
    ys = {}
    for k, con in named.items():
        dv = getattr(con, "dual_value", None)
        if isinstance(dv, (list, tuple)):  # a cone's multiplier, one part per argument (SOC, ...)
            dv = None if any(p is None for p in dv) else np.concatenate(
                [np.ravel(np.asarray(p, dtype=np.float64), order="F") for p in dv])
        if dv is not None:
            ys[k] = np.atleast_1d(np.asarray(dv, dtype=np.float64))
    top = max((float(np.max(np.abs(v))) for v in ys.values() if v.size), default=0.0)
    if not (np.isfinite(top) and top > 0):
        return None
    rows, bounds = {}, {}
    for k, v in ys.items():
        nz = np.abs(v) > 1e-9 * top
        if not np.any(nz):
            continue
        if v.size == 1:
            rows[k] = float(v[0] / top)
        else:
            bounds[k] = int(np.count_nonzero(nz))
    used = set(rows) | set(bounds)
    return Infeasibility([k for k in named if k in used], rows, bounds, source=solver)
