"""Hypothesis strategies for generated post-processing problems (importable by tests and benchmarks):
objective families × constraint families × data shapes × margins, and the "plant" that moves a
route's answer by a chosen distance while keeping Σ f = 1.

* objectives (:data:`OBJECTIVES`): ``cls``, ``weighted-mle``, a user CLS + 1e-3·KL to the uniform
  prior (recognised as separable: the structured route), a user CLS + w·Σ (f_{v+1} − f_v)² (a
  quadratic: the direct QP), the same + 1e-3·KL (smooth: the interior point), the exact
  ``multinomial`` likelihood (sequential QP by name) and a user cvxpy CLS + 0.1·‖f − f̃‖₂ (a quadratic
  plus a 2-norm: Clarabel's own interface with a second-order cone, then the cvxpy chain); outside :data:`OBJECTIVES` (drawn only where named), ``user-geomean``,
  CLS − 1e-2·geo_mean(f, weights 1, 2, 3, …) (a rank-1 Hessian part: the interior point);
* constraints (:data:`CONSTRAINTS`, each with the simplex): none more, SubsetSum ``==`` / ``>=``,
  Monotone (nonincreasing), Fixed, a user affine row Σ_S f ≤ b, a user norm ball
  ‖f − c‖₂ ≤ t + slack (c = u + (t/√d)·1, u uniform: ‖u − c‖₂ = t exactly in reals, so the ball
  meets the simplex iff slack ≥ 0, and its smallest violation over the simplex is −slack), a user
  energy bound Σ f² ≤ (1 + rel)/d (min over the simplex 1/d: empty iff rel < 0);
* data shapes (:data:`SHAPES`): plain counts, ties (few distinct counts), zeros (half the counts 0),
  a flat head (the top values equal);
* margins (:data:`MARGINS`): ``feasible``, ``thin`` (non-empty by 1e-15 … 1e-8 in the constraint's
  own units, or exactly on the boundary) and ``empty`` (by 1e-13 … 0.5).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
from hypothesis import strategies as st

OBJECTIVES = ("cls", "weighted-mle", "user-cls-kl", "user-smooth", "user-smooth-kl", "multinomial", "user-cvxpy")
CONSTRAINTS = ("simplex", "subset==", "subset>=", "monotone", "fixed", "user-affine", "user-ball", "user-energy")
LINEAR = ("simplex", "subset==", "subset>=", "monotone", "fixed", "user-affine")
CONES = ("user-ball", "user-energy")
SHAPES = ("plain", "ties", "zeros", "flat-head")
MARGINS = ("feasible", "thin", "empty")
THIN = (0.0, 1e-15, 1e-12, 1e-10, 1e-8)
EMPTY = (1e-13, 1e-10, 1e-6, 1e-3, 0.5)


@dataclass
class Case:
    """One generated problem: what :class:`~ldpopt.problems.Problem` takes, and what it is."""

    objective: str
    constraint: str
    shape: str
    margin: str
    d: int
    seed: int
    slack: float = 0.0            # the thin slack or the empty margin, in the constraint's own units
    est: object = None
    cons: list = field(default_factory=list)
    solver: str | None = None     # the route asked for by name (SQP for the likelihood), else None
    feasible: bool | None = None  # known from the construction (None: not decided by it)

    def problem(self):
        from ldpopt.problems import Problem

        return Problem(self.est, objective_for(self.objective, self.est), self.cons)

    def __repr__(self) -> str:
        return (f"Case({self.objective}, {self.constraint}, {self.shape}, {self.margin}, d={self.d}, seed={self.seed}, "
                f"slack={self.slack:g})")


def estimate(shape: str, d: int, rng, grr: bool = False):
    """An estimate of ``shape``: OUE counts (GRR's, each ≥ 1, for ``grr``) of a Dirichlet truth."""
    from ldpopt import Estimate

    eps = float(rng.choice([0.5, 1.0, 2.0, 4.0]))
    n = int(rng.choice([1000, 10**5]))
    w = rng.dirichlet(np.full(d, 0.5))
    if shape == "flat-head":
        k = max(2, d // 5)
        top = np.argsort(-w)[:k]
        w[top] = w[top].mean()
    elif shape == "zeros":
        w[rng.permutation(d)[: d // 2]] = 0.0
        w /= w.sum()
    if grr:
        e = np.exp(eps)
        p, q = e / (e + d - 1), 1.0 / (e + d - 1)
        c = 1 + rng.multinomial(n, p * w + q * (1 - w))
        if shape == "ties":
            c = 1 + rng.choice(np.unique(c)[:3], d)
        return Estimate.from_counts(c, int(c.sum()), eps, p, q, oracle="grr")
    p, q = 0.5, 1.0 / (np.exp(eps) + 1.0)
    tc = rng.multinomial(n, w)
    c = rng.binomial(tc, p) + rng.binomial(n - tc, q)
    if shape == "ties":
        c = rng.choice(np.unique(c)[:3], d)
    if shape == "zeros":
        c[w == 0] = 0
    return Estimate.from_counts(c, n, eps, p, q, oracle="oue")


def objective_for(name: str, est):
    """The ``objective`` argument of family ``name`` (a name or a cvxpy callable)."""
    d = est.d
    prior = np.full(d, 1.0 / d)
    if name in ("cls", "weighted-mle", "multinomial"):
        return name
    if name == "user-cls-kl":
        return lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.sum(cp.kl_div(f, prior))
    if name == "user-smooth":
        return lambda f, e: cp.sum_squares(f - e.f_tilde) + 0.5 * cp.sum_squares(cp.diff(f))
    if name == "user-smooth-kl":
        return lambda f, e: (cp.sum_squares(f - e.f_tilde) + 0.5 * cp.sum_squares(cp.diff(f))
                             + 1e-3 * cp.sum(cp.kl_div(f, prior)))
    if name == "user-geomean":  # a weighted geometric mean (weights 1, 2, 3, 1, 2, 3, ...): the interior point
        return lambda f, e: cp.sum_squares(f - e.f_tilde) - 1e-2 * cp.geo_mean(f, 1 + np.arange(d) % 3)
    if name == "user-cvxpy":
        return lambda f, e: cp.sum_squares(f - e.f_tilde) + 0.1 * cp.norm(f - e.f_tilde, 2)
    raise ValueError(f"objective family: unknown {name!r}")


def constraints_for(name: str, margin: str, d: int, rng, slack: float):
    """(constraints, feasible): the family ``name`` with the simplex, at ``margin`` (``slack``: the
    thin slack or the empty margin); ``feasible`` as the construction makes it."""
    from ldpopt.problems import Fixed, Monotone, Simplex, SubsetSum

    cons = [Simplex()]
    k = int(rng.integers(1, max(2, d // 2)))
    S = np.sort(rng.permutation(d)[:k])
    b = float(np.round(rng.uniform(0.05, 0.95), 6))
    thin_b = 1.0 - slack if slack > 0 else 1.0  # Σ_S f near its largest value 1
    if name == "simplex":
        return cons, True
    if name in ("subset==", "subset>="):
        sense = name[6:]
        val = {"feasible": b, "thin": thin_b, "empty": 1.0 + slack}[margin]
        return cons + [SubsetSum(S, val, sense)], margin != "empty"
    if name == "monotone":  # never empty with the simplex (the uniform point)
        return cons + [Monotone()], True
    if name == "fixed":
        vals = np.full(k, b / k)
        if margin == "thin":
            vals = np.full(k, thin_b / k)
        elif margin == "empty":
            vals = np.full(k, (1.0 + max(slack, 1e-12)) / k)
        return cons + [Fixed(S, vals)], None if margin != "feasible" else True  # (1 ± x)/k rounds
    if name == "user-affine":
        val = {"feasible": b, "thin": slack, "empty": -slack}[margin]
        return cons + [lambda f, e, S=S, val=val: {"mine": cp.sum(f[S]) <= val}], margin != "empty"
    if name == "user-ball":
        t = 0.01
        c = np.full(d, 1.0 / d) + t / np.sqrt(d)
        eps = {"feasible": 0.5 * t, "thin": slack, "empty": -slack * t}[margin]
        return cons + [lambda f, e, c=c, r=t + eps: {"ball": cp.norm(f - c, 2) <= r}], margin != "empty"
    if name == "user-energy":
        rel = {"feasible": 0.5, "thin": slack * d, "empty": -min(slack, 0.5)}[margin]
        return cons + [lambda f, e, r=(1.0 + rel) / d: {"energy": cp.sum_squares(f) <= r}], margin != "empty"
    raise ValueError(f"constraint family: unknown {name!r}")


@st.composite
def cases(draw, objectives=OBJECTIVES, constraints=CONSTRAINTS, shapes=SHAPES, margins=MARGINS,
          d_min: int = 10, d_max: int = 200) -> Case:
    """A generated :class:`Case` (the families to draw from, and the range of d)."""
    obj = draw(st.sampled_from(objectives))
    con = draw(st.sampled_from(constraints))
    shape = draw(st.sampled_from(shapes))
    margin = draw(st.sampled_from(margins)) if con != "simplex" and con != "monotone" else "feasible"
    d = draw(st.integers(d_min, d_max))
    seed = draw(st.integers(0, 2**31 - 1))
    slack = draw(st.sampled_from(THIN if margin == "thin" else EMPTY)) if margin != "feasible" else 0.0
    rng = np.random.default_rng(seed)
    est = estimate(shape, d, rng, grr=obj == "multinomial")
    cons, feas = constraints_for(con, margin, d, rng, slack)
    return Case(obj, con, shape, margin, d, seed, slack, est, cons, "SQP" if obj == "multinomial" else None, feas)


def plant(f: np.ndarray, delta: float, problem=None) -> np.ndarray:
    """f with ``delta`` of mass moved from its largest value to another value, Σ f kept: to one whose
    constraint membership is the same (same column in every linear row, so the plant stays feasible)
    where ``problem`` shows one, preferring the smallest such value; else the smallest value."""
    g = np.array(f, dtype=np.float64, copy=True)
    j = int(np.argmax(g))
    cand = np.ones(g.shape[0], bool)
    if problem is not None:
        from ldpopt.problems.constraints.feasibility import linear_system

        _, _, A, _, _, _ = linear_system(problem)
        A = A.tocsc()
        col = A[:, j].toarray().ravel()
        cand = np.array([np.array_equal(A[:, v].toarray().ravel(), col) for v in range(g.shape[0])])
    cand[j] = False
    if not cand.any():
        cand = np.ones(g.shape[0], bool)
        cand[j] = False
    i = int(np.flatnonzero(cand)[np.argmin(g[cand])])
    step = min(delta, g[j])  # (the largest value is ≥ 1/d ≥ delta here)
    g[j] -= step
    g[i] += step
    return g
