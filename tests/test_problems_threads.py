"""Two threads solving one ``Problem`` at once: each call gets the answer a sequential solve with its
own settings gets, keeps its own per-solve facts (time limit, affine-row cache, feasibility decision)
in its own ``SolveContext``, and leaves the Problem as it found it."""

from __future__ import annotations

import re
import threading
import warnings

import cvxpy as cp
import numpy as np
import pytest
from conftest import solve_contexts

from ldpopt import oracles
from ldpopt.problems import Problem, Simplex, SolverWarning
from ldpopt.problems.constraints.feasibility import DEFER_MIN_VALUES

#: each thread's time limit (None: none): a limited solve runs its foreign solvers in the worker
LIMITS = (None, 60.0)
#: solves per thread, one after the other (the threads' solves interleave)
ROUNDS = 2


def _est(d: int, seed: int):
    rng = np.random.default_rng(seed)
    o = oracles.get("oue", 1.0, d)
    return o.estimate(o.sample_counts(rng.multinomial(20_000, rng.dirichlet(np.ones(d))), rng=rng), 20_000)


def _problems(seed: int) -> dict:
    """Generated problems: dense user rows with room (a user cvxpy constraint whose affine rows the
    solve caches), the same rows with an equality block (d > DEFER_MIN_VALUES: the exact feasibility
    decision is deferred to the returned point), and a user norm ball (not affine: no rows cached,
    the phase one deferred)."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(DEFER_MIN_VALUES + 8, 48))
    est = _est(d, seed)
    A = rng.random((5, d))
    p = rng.dirichlet(np.ones(d))
    b = A @ p
    centre = np.full(d, 1.0 / d)
    radius = 1.5 * float(np.linalg.norm(p - centre)) + 1e-3
    return {
        "rows": Problem(est, "cls", [Simplex(), lambda f, e: A @ f <= b + 0.01]),
        "deferred": Problem(est, "cls", [Simplex(), lambda f, e: A[:3] @ f <= b[:3], lambda f, e: A[3:] @ f == b[3:]]),
        "ball": Problem(est, "cls", [Simplex(), lambda f, e: cp.norm(f - centre, 2) <= radius]),
    }


def _solve(P, limit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverWarning)
        return P.solve(time_limit=limit, progress=False)


def _same(a, b) -> None:
    assert (a.status, a.solver) == (b.status, b.solver)
    assert [(x["solver"], x["status"]) for x in a.attempts] == [(x["solver"], x["status"]) for x in b.attempts]
    assert np.allclose(a.f, b.f, rtol=0, atol=1e-12), float(np.max(np.abs(a.f - b.f)))
    assert a.duals.keys() == b.duals.keys()


def _state(P) -> dict:
    """What the Problem holds: its attributes (by identity) and the facts it derived from its data."""
    return {"attrs": {k: id(v) for k, v in vars(P).items()}, "derived": {k: id(v) for k, v in P._derived.items()},
            "names": list(P.constraint_names), "route": P.objective_route}


@pytest.mark.filterwarnings("ignore::ldpopt.problems.SolverWarning")  # (catch_warnings is per process)
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kind", ["rows", "deferred", "ball"])
def test_two_threads_solve_one_problem_as_sequential_solves_do(kind, seed):
    P = _problems(seed)[kind]
    with solve_contexts() as seq_ctx:
        ref = [_solve(P, limit) for limit in LIMITS]  # sequential, each with its thread's limit
    # (the ball is not affine: the KKT test takes its gradient at f with the solver's multiplier)
    assert all(r.status == "optimal" for r in ref), [(r.status, r.message) for r in ref]
    before = _state(P)
    out: dict = {}
    barrier = threading.Barrier(len(LIMITS))

    def run(i, limit):
        barrier.wait()
        out[i] = [_solve(P, limit) for _ in range(ROUNDS)]

    with solve_contexts() as made:
        threads = [threading.Thread(target=run, args=(i, lim)) for i, lim in enumerate(LIMITS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert sorted(out) == list(range(len(LIMITS)))
    for i in range(len(LIMITS)):
        for got in out[i]:
            _same(got, ref[i])
    # each call had its own context: its own limit, cache and decision; the Problem none of them
    assert sorted((c.clock.limit or 0.0) for c in made) == sorted((lim or 0.0) for lim in LIMITS * ROUNDS)
    assert len({id(c) for c in made}) == len(made) and len({id(c.affine_cache) for c in made}) == len(made)
    if kind in ("rows", "deferred"):  # the user rows were read once per solve, into that solve's cache
        assert all(c.affine_cache for c in made) and all(c.affine_cache for c in seq_ctx)
    if kind == "deferred":  # decided from each call's own returned point
        assert all(c.settle_due for c in made)
        assert all(c.feasibility is not None and c.feasibility.feasible is True for c in made)
    assert _state(P) == before
    for gone in ("_affine_cache", "_feasibility", "_phase_one", "_set_feasibility", "_solving"):
        assert not hasattr(P, gone)


# ---- no module outside problem.py reads or writes a Problem's private attributes

_HOLDERS = {"problem", "prob"}
#: the text of a possible use (the modules without one are not parsed)
_CANDIDATE = re.compile(r"\b(problem|prob)\s*\.\s*_|attr\(\s*(problem|prob)\b")


def _private_uses(source: str) -> list[str]:
    """``problem._x`` / ``prob._x`` / ``self.problem._x`` and ``getattr(problem, "_x", ...)`` /
    ``setattr(...)`` in ``source``: a Problem's private attribute used from outside it."""
    import ast

    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            v = node.value
            if (isinstance(v, ast.Name) and v.id in _HOLDERS) or (isinstance(v, ast.Attribute) and v.attr in _HOLDERS):
                out.append(f"{node.lineno}: .{node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr")
              and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in _HOLDERS
              and isinstance(node.args[1], ast.Constant) and str(node.args[1].value).startswith("_")):
            out.append(f"{node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
    return out


def test_no_module_outside_problem_py_touches_a_problems_private_attributes():
    from pathlib import Path

    import ldpopt

    root = Path(ldpopt.__file__).resolve().parent
    texts = {p: p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py")) if p != root / "problems" / "problem.py"}
    bad = {str(p.relative_to(root)): got for p, text in texts.items()
           if _CANDIDATE.search(text) and (got := _private_uses(text))}  # (parsed where a use may be)
    assert not bad, bad


def test_the_private_use_check_sees_each_form():
    src = ("def f(problem, self):\n    problem._named\n    self.problem._owners = 1\n    getattr(prob, '_x', None)\n"
           "    problem.owners\n    other._named\n")
    assert _private_uses(src) == ["2: ._named", "3: ._owners", "4: getattr(..., '_x')"]
    assert all(_CANDIDATE.search(line) for line in src.splitlines()[1:4])
    assert not _CANDIDATE.search("problem.owners\nother._named")  # (a prefilter: the parse decides)
