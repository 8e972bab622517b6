"""Clarabel stopped where it stalls (:mod:`ldpopt.problems.solvers.stall`): the rule on made-up
progress, Clarabel's own test at its iteration limit, the call against cvxpy's on generated families,
and the chain on a family that stalls."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from problem_strategies import clarabel_at_ldpopts_options

from ldpopt.problems.solvers.stall import (
    STALL_FACTOR,
    STALL_START,
    STALL_WINDOW,
    StallWatch,
    solve_clarabel,
    stalled,
    stopped_status,
)


def _first_stop(ms) -> int | None:
    best: list[float] = []
    for k, m in enumerate(ms):
        best.append(min(m, best[-1]) if best else m)
        if stalled(best, m):
            return k
    return None


def test_a_solve_that_keeps_converging_is_never_stopped():
    """Progress measures falling by the factor over the window, or a little faster, or reaching 1
    after a plateau shorter than the window: no stop. A slow but steady fall (2× every 14 iterations)
    goes on for all 200; a plateau before the start is not read."""
    steady = [1e6 * STALL_FACTOR ** (-k / (STALL_WINDOW - 1)) for k in range(200)]
    assert _first_stop(steady) is None
    converged = [1e8 * 0.75**k for k in range(STALL_START + 5)]  # at ~0.5 by the start's last iterations
    converged += [0.5] * 30  # flat at m ≤ 1: Clarabel stops there itself, the watch never does
    assert converged[STALL_START] > 1 and _first_stop(converged) is None
    assert _first_stop([max(m, 1.5) for m in converged]) is not None  # the same flat run above 1 is stopped
    short_plateau = [1e9 / 2**k for k in range(62)] + [1e9 / 2**61] * (STALL_WINDOW - 2) + [1e9 / 2 ** (61 + k) for k in range(40)]
    assert _first_stop(short_plateau) is None
    early_plateau = [1e5] * (STALL_START - 5) + [1e5 / 4**k for k in range(20)]
    assert _first_stop(early_plateau) is None


def test_a_plateau_is_stopped_from_the_start_where_the_window_shows_no_halving():
    """m falls to ~50 by iteration 19 and then creeps (−1 % an iteration): stopped at the start
    (iteration 60), not before, where the least m has not halved over the window; a plateau that
    begins at iteration 70 is stopped where the window over it ends."""
    ms = [1e6 / 1.7**k for k in range(20)]
    ms += [ms[-1] * 0.99**j for j in range(1, 100)]
    assert _first_stop(ms) == STALL_START
    assert _first_stop(ms[:STALL_START]) is None  # never before the start
    late = [1e8 / 1.2**k for k in range(70)]
    late += [late[-1] * 0.999**j for j in range(1, 60)]
    k = _first_stop(late)
    assert k is not None and 70 < k <= 69 + STALL_WINDOW
    assert min(late[: k + 1]) > min(late[: k + 1 - STALL_WINDOW]) / STALL_FACTOR  # the rule, read off the sequence


def _info(k, res_primal, res_dual=1e-12, gap_abs=1e-12, gap_rel=1e-13, ktratio=1e-3):
    return SimpleNamespace(iterations=k, res_primal=res_primal, res_dual=res_dual, gap_abs=gap_abs,
                           gap_rel=gap_rel, ktratio=ktratio, cost_primal=1.0 + 1e-3 * 0.5**k, cost_dual=1.0)


def test_the_watch_reads_clarabels_test_and_keeps_the_last_residuals():
    """The watch's measure is Clarabel's convergence test scaled by its tolerances (the worst of the
    two residuals and the better of the two gaps), so a primal residual stuck at 5e-5 against 1e-10
    stops it; a NaN residual counts as no progress."""
    settings = SimpleNamespace(tol_feas=1e-10, tol_gap_abs=1e-10, tol_gap_rel=1e-10)
    watch = StallWatch(settings)
    k = next(k for k in range(100) if watch(_info(k, 5e-5 * 0.995**k)))  # Clarabel stops at the first True
    assert k == STALL_START and watch.stopped_at == STALL_START
    assert watch.last["res_primal"] == pytest.approx(5e-5 * 0.995**STALL_START)
    nan = StallWatch(settings)  # residuals that turn NaN after 70 iterations of progress
    k = next(k for k in range(200) if nan(_info(k, 1.0 * 0.7**k if k < 70 else float("nan"))))
    assert k == 68 + STALL_WINDOW  # the least m at 68 is within 2x of the last finite one (0.7 an iteration)
    fine = StallWatch(settings)
    assert not any(fine(_info(k, 1e-3 * 0.9**k, gap_abs=1e-3 * 0.9**k)) for k in range(150))


def test_a_stop_reads_as_clarabels_iteration_limit_would():
    """``AlmostSolved`` only where both residuals and a gap are below the reduced tolerances (strictly)
    and κ/τ ≤ 1, as Clarabel decides at its limit; else ``MaxIterations``."""
    red = SimpleNamespace(reduced_tol_feas=1e-4, reduced_tol_gap_abs=5e-5, reduced_tol_gap_rel=5e-5)
    near = {"res_primal": 5e-5, "res_dual": 1e-9, "gap_abs": 1.0, "gap_rel": 1e-9, "ktratio": 1e-3}
    assert stopped_status(near, red) == "AlmostSolved"
    assert stopped_status({**near, "res_primal": 1e-4}, red) == "MaxIterations"  # not strictly below
    assert stopped_status({**near, "gap_rel": 1e-4}, red) == "MaxIterations"  # neither gap
    assert stopped_status({**near, "ktratio": 2.0}, red) == "MaxIterations"


def _compiled_families(n: int, d: int = 40, both_forms: bool = False):
    """(seed, Clarabel, its data, ldpopt's options) of the grammar's families at ``d`` from ``n`` seeds
    of a fixed generator (:func:`problem_strategies.clarabel_at_ldpopts_options`), those ldpopt
    compiles for cvxpy. ``both_forms``: a family whose callable the chain gets as written (unit 1,
    K = 1) in ldpopt's unit with the measured K too (``multiplier="auto"``, as a recognised callable
    or a given multiplier is solved; there Clarabel stalls more often)."""
    from problem_strategies import draw_family

    for seed in np.random.default_rng(31).choice(10**6, size=n, replace=False):
        fam = draw_family(int(seed), d)
        seen = set()
        for multiplier in ((None, "auto") if both_forms else (None,)):
            try:
                prob = fam.ldpopt_problem(multiplier=multiplier)
                if (prob.scale, prob.multiplier) in seen:  # the same form: a recognised callable
                    continue
                seen.add((prob.scale, prob.multiplier))
                compiled = clarabel_at_ldpopts_options(fam, multiplier)
            except Exception:  # noqa: BLE001 - a family ldpopt does not compile for cvxpy: not these tests'
                compiled = None
            if compiled is not None:
                yield (int(seed), *compiled)


def test_on_generated_families_a_solve_clarabel_finishes_is_cvxpys_to_the_bit():
    """Families drawn from the grammar (d = 40, seeds from a fixed generator): wherever Clarabel
    reaches ``Solved`` through cvxpy's own call, the call with the watch takes the same iterations to
    the same x, z and s bits (the same matrices, cones and settings), unstopped."""
    solved = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed, solver, data, opts in _compiled_families(30):
            plain = solver.solve_via_data(data, False, False, opts)
            if str(plain.status) != "Solved":
                continue
            mine = solve_clarabel(solver, data, False, opts)
            solved += 1
            assert mine.stalled_at is None and mine.status == "Solved" and mine.iterations == plain.iterations, seed
            for key in ("x", "z", "s"):
                assert np.array_equal(np.asarray(getattr(mine, key)), np.asarray(getattr(plain, key))), (seed, key)
    assert solved >= 15, solved


def test_a_family_that_stalls_is_stopped_and_the_chain_goes_on_as_after_the_limit(monkeypatch):
    """A grammar family on which Clarabel at ldpopt's tolerances creeps to its limit of 100 iterations
    and says ``AlmostSolved`` (:func:`problem_strategies.creeping_family`: which family does depends
    on the machine): stopped in the worker's child at the first iteration where its progress
    stalled, read ``optimal_inaccurate`` as the limit would have been; its entry in
    ``Solution.attempts`` says where it was stopped. Where the iterate it stopped at passes
    Clarabel's own test for ``Solved`` at its default tolerances and no constraint is curved, that point
    is the answer (:func:`~ldpopt.problems.solvers.routes.solved_where_stopped`); with that rule
    switched off, or a curved constraint, the chain's next Clarabel attempt answers, as after the
    limit: at Clarabel's own tolerances, or in your objective's units where the point it stopped at is
    off the constraints (``routes.clarabel_retries``). A Clarabel the caller configured
    (``max_iter``, or its own options) is not stopped so."""
    from problem_strategies import creeping_family

    from ldpopt.problems.progress import SolveContext
    from ldpopt.problems.solvers import routes
    from ldpopt.problems.solvers.attempts import STOP_SOLVED, _solve_collect, clarabel_configured
    from ldpopt.problems.solvers.policy import CLARABEL_RETRY_NAME, CLARABEL_UNITS_NAME

    fam, solver, data, opts, full = creeping_family()
    mine = solve_clarabel(solver, data, False, opts)
    assert mine.status == "AlmostSolved" and mine.stalled_at == mine.iterations < full.iterations
    prob = fam.ldpopt_problem(multiplier="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = _solve_collect(prob, "CLARABEL", False, opts, 60.0, stall=True)  # in the worker's child
        assert out["status"] == "optimal_inaccurate" and out["stats"]["stalled_at"] == mine.stalled_at
        assert out["stats"]["num_iters"] == mine.iterations
        read = fam.ldpopt_problem(multiplier="auto").solve()
        monkeypatch.setattr(routes, "solved_where_stopped", lambda *a: False)
        sol = prob.solve()
    if read.attempts[0].get(STOP_SOLVED) and len(read.attempts) == 1:  # read at Clarabel's own tolerances
        assert [a["status"] for a in read.attempts] == [read.status] and read.status in ("optimal", "optimal_unverified")
        assert "routes.solved_where_stopped" in read.message and read.attempts[0]["stopped"] == sol.attempts[0]["stopped"]
    else:
        assert read.status == sol.status and np.array_equal(read.f, sol.f)
    assert sol.status in ("optimal", "optimal_unverified") and [a["status"] for a in sol.attempts] == [
        "optimal_inaccurate", sol.status] and sol.attempts[1]["solver"] in (CLARABEL_RETRY_NAME, CLARABEL_UNITS_NAME)
    # the attempts list says which attempt ldpopt stopped, and where
    assert sol.attempts[0]["stopped"].startswith(f"at iteration {mine.stalled_at},") and "stopped" not in sol.attempts[1]
    assert not clarabel_configured(prob, SolveContext())
    assert clarabel_configured(prob, SolveContext.make(None, False, False, {"max_iter": 100}, problem=prob))
    assert clarabel_configured(prob, SolveContext.make(None, False, False, {"CLARABEL": {"tol_feas": 1e-9}}, problem=prob))


def test_the_watch_records_where_the_retrys_tolerances_were_first_met_and_stops_only_when_asked():
    """``meets`` reads Clarabel's ``Solved`` test at the given tolerances (both residuals, either
    gap); the watch records the first iteration that meets the retry's tolerances, whatever comes
    after it, and with ``stop=False`` records without ever stopping a plateau."""
    from ldpopt.problems.solvers.policy import CLARABEL_RETRY
    from ldpopt.problems.solvers.stall import meets

    tol = dict(CLARABEL_RETRY)
    assert meets(_info(0, 1e-9, res_dual=1e-9, gap_abs=1.0, gap_rel=1e-9), tol)  # the relative gap alone
    assert meets(_info(0, 1e-9, res_dual=1e-9, gap_abs=1e-9, gap_rel=1.0), tol)  # the absolute gap alone
    assert not meets(_info(0, 2e-8), tol)
    assert not meets(_info(0, 1e-9, res_dual=2e-8), tol)
    assert not meets(_info(0, 1e-9, gap_abs=2e-8, gap_rel=2e-8), tol)
    settings = SimpleNamespace(tol_feas=1e-10, tol_gap_abs=1e-10, tol_gap_rel=1e-10)
    watch = StallWatch(settings, stop=False, retry=tol)
    residuals = [1e-3 * 0.5**k for k in range(20)] + [5e-9 * 1.1**k for k in range(200)]  # met at 14, then creeps up
    assert not any(watch(_info(k, r)) for k, r in enumerate(residuals))
    assert watch.retry_met_at == next(k for k, r in enumerate(residuals) if r <= 1e-8) and watch.stopped_at is None
    never = StallWatch(settings, stop=True, retry=tol)
    k = next(k for k in range(200) if never(_info(k, 5e-5 * 0.995**k)))
    assert k == STALL_START and never.retry_met_at is None


def test_on_generated_families_the_retry_ends_where_the_watch_says_it_would():
    """Families drawn from the grammar (d = 40, seeds from a fixed generator), Clarabel at ldpopt's
    options with the watch as the chain runs it: wherever it stops short of ``Solved``, Clarabel at the
    retry's tolerances (``policy.CLARABEL_RETRY``) on the same data ends ``Solved`` at exactly the
    iteration the watch recorded; where the watch recorded none, it does not end ``Solved``, and
    where the watch stopped the first solve it stops no later — what the chain's skip of the retry
    rests on (:func:`ldpopt.problems.solvers.routes.retry_retraces`)."""
    from ldpopt.problems.solvers.policy import CLARABEL_RETRY

    met = never = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed, solver, data, opts in _compiled_families(250):
            first = solve_clarabel(solver, data, False, opts, True, CLARABEL_RETRY)
            assert first.watched
            if first.status == "Solved":
                continue
            again = solve_clarabel(solver, data, False, {**opts, **CLARABEL_RETRY}, True, None)
            if first.retry_met_at is None:
                never += 1
                assert again.status != "Solved", (seed, again.status)
                # where the watch stopped it, the retry (its stall stop the same progress scaled by a
                # constant) stops no later; where Clarabel itself stopped it short, the retry may run
                # a few iterations on (seed 692694, as written: 15 → 17, AlmostSolved both)
                assert first.stalled_at is None or again.iterations <= first.iterations, (seed, again.iterations)
            else:
                met += 1
                assert again.status == "Solved" and again.iterations == first.retry_met_at, (seed, again.status)
    assert never >= 2 and met >= 5, (never, met)


#: grammar families (seed, d) on which Clarabel at ldpopt's options stops ``AlmostSolved`` within the
#: constraints without meeting its own default tolerances, on the CPUs measured (which family does
#: depends on the machine's floating point, as for :data:`problem_strategies.CREEPING`)
NEVER_MET = ((725813, 100), (254799, 100), (1072, 100), (4078, 1000))


def test_the_chain_skips_a_retry_that_would_retrace_the_first_attempt(monkeypatch):
    """On the first of :data:`NEVER_MET` where the chain's first Clarabel attempt stops short of its
    tolerances within the constraints and its record says none of its iterates met the retry's
    (``default_tolerances_met_at`` None): the retry at Clarabel's own tolerances is not run, and
    forced to run (the rule switched off) it ends with the first attempt's status, and the chain
    with the same status and f."""
    from problem_strategies import draw_family

    from ldpopt.problems.solvers import routes
    from ldpopt.problems.solvers.attempts import RETRY_MET
    from ldpopt.problems.solvers.policy import CLARABEL_RETRY_NAME

    real, seen = routes.retry_retraces, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed, d in NEVER_MET:
            fam = draw_family(seed, d)
            monkeypatch.setattr(routes, "retry_retraces", real)
            sol = fam.ldpopt_problem(multiplier="auto").solve(progress=False)
            first = sol.attempts[0]
            monkeypatch.setattr(routes, "retry_retraces", lambda sol: False)
            forced = fam.ldpopt_problem(multiplier="auto").solve(progress=False)
            names = [a["solver"] for a in forced.attempts]
            if first.get(RETRY_MET, 0) is None and names[:2] == ["CLARABEL", CLARABEL_RETRY_NAME]:
                break
            seen.append(f"{seed} at d = {d}: {first['status']}, {RETRY_MET} {first.get(RETRY_MET)}, forced {names}")
        else:
            raise AssertionError("no candidate stops short within the constraints without meeting the retry's "
                                 "tolerances here: " + "; ".join(seen))
    assert CLARABEL_RETRY_NAME not in [a["solver"] for a in sol.attempts]
    if len(sol.attempts) == 1:  # the first attempt's point is the answer: its message says why no retry ran
        assert "it would retrace the same iterates (routes.retry_retraces)" in sol.message
    assert forced.attempts[1]["status"] == forced.attempts[0]["status"] == first["status"]
    assert forced.status == sol.status and np.array_equal(forced.f, sol.f)


def test_on_generated_families_a_stopped_iterate_said_solved_passes_clarabels_own_test():
    """Families drawn from the grammar (d = 100, seeds from a fixed generator): wherever Clarabel with
    the watch ends short of ``Solved`` (stopped by the watch, or by itself), the same data solved
    again without the watch (under an iteration limit at the watch's stop, where it stopped it)
    returns the same x to the bit, and where the watch says the returned iterate passes Clarabel's
    test for ``Solved`` at the retry's tolerances (``stop_solved``), Clarabel's own final residuals
    and objective values of that run pass it too (both residuals and a gap, absolute or relative,
    below 1e-8; its κ/τ is not in the answer): what
    :func:`~ldpopt.problems.solvers.routes.solved_where_stopped` reads. Where it ends ``Solved``,
    nothing is said."""
    from ldpopt.problems.solvers.policy import CLARABEL_RETRY

    said = short = by_watch = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed, solver, data, opts in _compiled_families(250, d=100, both_forms=True):
            first = solve_clarabel(solver, data, False, opts, True, CLARABEL_RETRY)
            if first.status == "Solved":
                assert first.stop_solved is None
                continue
            short += 1
            by_watch += first.stalled_at is not None
            limit = {} if first.stalled_at is None else {"max_iter": first.stalled_at}
            again = solver.solve_via_data(data, False, False, {**opts, **limit})
            assert again.iterations == first.iterations and np.array_equal(np.asarray(again.x), first.x), seed
            p, q = again.obj_val, again.obj_val_dual
            gap = abs(p - q)
            passes = (again.r_prim < CLARABEL_RETRY["tol_feas"] and again.r_dual < CLARABEL_RETRY["tol_feas"]
                      and (gap < CLARABEL_RETRY["tol_gap_abs"]
                           or gap / max(1.0, min(abs(p), abs(q))) < CLARABEL_RETRY["tol_gap_rel"]))
            assert first.stop_solved is not None, seed
            if first.stop_solved:
                said += 1
                assert passes, (seed, again.r_prim, again.r_dual, gap)
    # (as written the chain's Clarabel stalls less: 3 stops by the watch of 41 short here, 4 of 58 on 400 seeds)
    assert by_watch >= 2 and short > by_watch and said >= 2, (short, by_watch, said)


def test_solved_is_clarabels_whole_test_strict_and_with_its_ktratio():
    """:func:`~ldpopt.problems.solvers.stall.solved` is Clarabel's ``Solved`` test as it writes it:
    each comparison strict (a value at the tolerance fails, where :func:`meets` passes it), and
    κ/τ ≤ 1 asked (where :func:`meets` leaves it out)."""
    from ldpopt.problems.solvers.policy import CLARABEL_RETRY
    from ldpopt.problems.solvers.stall import meets, solved

    tol = dict(CLARABEL_RETRY)
    base = {"res_primal": 1e-9, "res_dual": 1e-9, "gap_abs": 1.0, "gap_rel": 1e-9, "ktratio": 1e-3}
    assert solved(base, tol)
    assert solved({**base, "gap_abs": 1e-9, "gap_rel": 1.0}, tol)
    assert solved({**base, "ktratio": 1.0}, tol) and not solved({**base, "ktratio": 1.0 + 1e-12}, tol)
    at = {**base, "res_primal": 1e-8}
    assert meets(SimpleNamespace(**at), tol) and not solved(at, tol)
    assert not solved({**base, "res_dual": 2e-8}, tol) and not solved({**base, "gap_rel": 1e-8}, tol)
    assert meets(SimpleNamespace(**{**base, "ktratio": 5.0}), tol) and not solved({**base, "ktratio": 5.0}, tol)


def test_the_returned_iterate_is_found_among_the_last_two_by_its_costs_and_residuals():
    """:meth:`~ldpopt.problems.solvers.stall.StallWatch.returned_solved` judges the iterate whose costs
    and residuals Clarabel's answer carries: the last one the callback saw, or the one before (where
    Clarabel restored it after insufficient progress); an answer matching neither is not said to pass."""
    from ldpopt.problems.solvers.policy import CLARABEL_RETRY

    settings = SimpleNamespace(tol_feas=1e-10, tol_gap_abs=1e-10, tol_gap_rel=1e-10)
    watch = StallWatch(settings, stop=False, retry=dict(CLARABEL_RETRY))
    before, last = _info(30, 1e-9), _info(31, 5e-8)  # the one before passes at 1e-8, the last does not
    for info in (_info(29, 1e-3), before, last):
        watch(info)

    def answer(info):
        return SimpleNamespace(obj_val=info.cost_primal, obj_val_dual=info.cost_dual, r_prim=info.res_primal,
                               r_dual=info.res_dual)

    assert watch.returned_solved(answer(before)) is True
    assert watch.returned_solved(answer(last)) is False
    assert watch.returned_solved(answer(_info(29, 1e-3))) is False  # older than the last two: not kept
    assert watch.returned_solved(SimpleNamespace(obj_val=float("nan"), obj_val_dual=1.0, r_prim=0.0, r_dual=0.0)) is False
    assert StallWatch(settings, stop=False).returned_solved(answer(before)) is None  # no retry: nothing said


#: grammar families (seed, d) whose kinked objective leaves Clarabel's first attempt short of its
#: tolerances at an iterate that passes them at 1e-8, with affine constraints only, on the CPUs
#: measured (which family does depends on the machine's floating point)
SOLVED_SHORT = ((1021, 100), (4070, 1000))


def test_the_chain_reads_a_returned_iterate_at_clarabels_own_tolerances_instead_of_the_retry(monkeypatch):
    """On the first of :data:`SOLVED_SHORT` where it happens here: Clarabel's first attempt stops short
    of ``Solved`` at an iterate that passes Clarabel's test at its own default tolerances, its point
    passes ldpopt's check, and no constraint is curved — the chain ends on it, one attempt, its status
    what Clarabel's ``Solved`` earns (``optimal_unverified``: a kinked objective), its message saying
    why. With that reading switched off, the retry at those tolerances runs and ends with the same
    status."""
    from problem_strategies import draw_family

    from ldpopt.problems.solvers import routes
    from ldpopt.problems.solvers.attempts import STOP_SOLVED
    from ldpopt.problems.solvers.policy import CLARABEL_RETRY_NAME

    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed, d in SOLVED_SHORT:
            fam = draw_family(seed, d)
            sol = fam.ldpopt_problem().solve(progress=False)
            if len(sol.attempts) == 1 and sol.attempts[0].get(STOP_SOLVED) is True:
                break
            seen.append(f"{seed} at d = {d}: {[(a['solver'], a['status'], a.get(STOP_SOLVED)) for a in sol.attempts]}")
        else:
            raise AssertionError("no candidate ends on its first attempt read at Clarabel's tolerances here: "
                                 + "; ".join(seen))
        monkeypatch.setattr(routes, "solved_where_stopped", lambda *a: False)
        retried = fam.ldpopt_problem().solve(progress=False)
    assert sol.status == "optimal_unverified" and "routes.solved_where_stopped" in sol.message
    assert [a["solver"] for a in retried.attempts] == ["CLARABEL", CLARABEL_RETRY_NAME]
    assert retried.attempts[0]["status"] == "optimal_inaccurate" and retried.status == sol.status
