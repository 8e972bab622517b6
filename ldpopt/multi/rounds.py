r"""Post-processing across rounds: τ per-round estimates of the same users made consistent *jointly*, as
one ldpopt :class:`~ldpopt.problems.Problem` over the stacked vector x = (f_1, …, f_τ) ∈ ℝ^{τd}
(x[t·d + v] = f_t(v), round-major), stated as :mod:`.problem` states consistent marginals.

Constraints: every round on its simplex (``NonNegative``, ``SumTo(τ)`` and ``PartitionTotals`` for rounds
0 … τ − 2; the last round's total follows). Objective (a :class:`~ldpopt.problems.SmoothObjective`,
convex quadratic, certified by ldpopt's check with a ‖x − x*‖∞ bound from its curvature floor):

    J(x) = Σ_v (x_v − f̃_v)ᵀ Σ_v⁻¹ (x_v − f̃_v) + λ Σ_{t<τ} Σ_v (f_{t+1}(v) − f_t(v))² ,

x_v ∈ ℝ^τ value v's trajectory. ``coupling``:

* ``"shared"`` — Σ_v is the exact covariance of value v's τ estimates when the users keep their value
  and their permanent response (memo) is shared by every round (module docstring of
  :mod:`ldpopt.oracles.longitudinal`): compound symmetry Σ_v = a_v I + b_v 11ᵀ, with
  b_v = (p₂ − q₂)² [n_v p₁(1 − p₁) + (n − n_v) q₁(1 − q₁)] / (n(p − q))² the memo's share (a report's
  indicator is p₂ or q₂ given the memo) and a_v + b_v the per-round variance of Eq. 2;
* ``"independent"`` — Σ_v = (a_v + b_v) I: each round weighted by its own variance, as if the rounds
  were independent.

``smooth`` = λ ≥ 0 penalises change between rounds (λ = 0: only the shared term couples the rounds).
*Choices where no paper speaks*: n_v is evaluated at n·clip(mean_t f̃_t(v), 0, 1) (the variances depend
on the unknown f, as Eq. 2's do); the covariances between different values within a round (GRR's
−q², zero for the unary encodings) are left out, so for L-GRR the objective is a per-value weighting; the
objective is divided by the largest diagonal weight (a unit of order 1 for the solver; it changes
nothing at the optimum).
"""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate
from ..problems import NonNegative, PartitionTotals, Problem, SmoothObjective, SumTo

__all__ = ["ACROSS", "COUPLINGS", "rank_rounds", "rounds_covariance", "rounds_problem"]

COUPLINGS = ("shared", "independent")

#: the across-rounds candidates of :func:`rank_rounds`: name → (coupling, λ)
ACROSS = {"rounds-shared": ("shared", 0.0), "rounds-independent": ("independent", 0.0),
          "rounds-shared-smooth": ("shared", 10.0)}


def _check(estimates, oracle):
    from ..oracles.longitudinal import LongitudinalOracle

    if not isinstance(oracle, LongitudinalOracle):
        raise TypeError(f"oracle must be a LongitudinalOracle, got {type(oracle).__name__}")
    ests = list(estimates) if not isinstance(estimates, Estimate) else [estimates]
    if len(ests) < 2 or not all(isinstance(e, Estimate) for e in ests):
        raise ValueError(f"estimates must be a list of >= 2 Estimate objects (one per round), got {len(ests)} item(s)")
    if any(e.d != oracle.d for e in ests) or len({e.n for e in ests}) != 1:
        raise ValueError(f"estimates must all have the oracle's d = {oracle.d} and one n (the same users each round)")
    return ests


def rounds_covariance(estimates, oracle) -> tuple[np.ndarray, np.ndarray]:
    """(a, b), each (d,): value v's τ estimates have covariance a_v I + b_v 11ᵀ (module docstring, the
    memo shared by the rounds), at n_v = n·clip(mean_t f̃_t(v), 0, 1).

    Parameters
    ----------
    estimates : list of Estimate
        The per-round estimates (same users, the oracle's d).
    oracle : LongitudinalOracle
        The oracle that produced them.

    Returns
    -------
    tuple of ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.longitudinal import LOSUE
    >>> from ldpopt.multi.rounds import rounds_covariance
    >>> o = LOSUE(4.0, 4, eps_1=1.0)
    >>> tc = np.array([400, 300, 200, 100])
    >>> ests = [o.estimate(tc * o.p + (1000 - tc) * o.q, 1000)] * 2  # f̃ = f = tc / n
    >>> a, b = rounds_covariance(ests, o)
    >>> bool(np.allclose(a + b, o.variance(tc / 1000, 1000))), bool(np.all(b > 0))
    (True, True)
    """
    ests = _check(estimates, oracle)
    n = ests[0].n
    fbar = np.clip(np.mean([e.f_tilde for e in ests], axis=0), 0.0, 1.0)
    total = oracle.variance(fbar, n)
    nv = n * fbar
    b = (oracle.p2 - oracle.q2) ** 2 * (nv * oracle.p1 * (1 - oracle.p1) + (n - nv) * oracle.q1 * (1 - oracle.q1))
    b = b / (n * (oracle.p - oracle.q)) ** 2
    return total - b, b


def rounds_problem(estimates, oracle, coupling: str = "shared", smooth: float = 0.0) -> Problem:
    """The across-rounds consistency problem (module docstring) as one :class:`Problem` on ℝ^{τd}.

    Parameters
    ----------
    estimates : list of Estimate
        τ ≥ 2 per-round estimates of the same n users (``oracle.estimate`` of each round's counts).
    oracle : LongitudinalOracle
        The oracle of the rounds (its p₁, q₁, p₂, q₂ give the shared term).
    coupling : {"shared", "independent"}, default "shared"
        The covariance of the rounds the objective weights by.
    smooth : float, default 0.0
        λ ≥ 0, the penalty on change between consecutive rounds.

    Returns
    -------
    Problem
        ``solve()`` returns the stacked x; ``x.reshape(τ, d)`` gives the rounds.

    Raises
    ------
    ValueError
        ``coupling`` unknown, ``smooth`` negative or not finite, or the estimates malformed.
    TypeError
        ``oracle`` not a longitudinal oracle.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.longitudinal import LOSUE
    >>> from ldpopt.multi.rounds import rounds_problem
    >>> o = LOSUE(4.0, 5, eps_1=1.0)
    >>> cl, gen = o.clients(2000, 0), np.random.default_rng(0)
    >>> v = np.minimum(gen.geometric(0.4, 2000) - 1, 4)
    >>> ests = [o.estimate(o.aggregate(cl.report(v, gen)), 2000) for _ in range(3)]
    >>> sol = rounds_problem(ests, o, smooth=1.0).solve()
    >>> sol.status, sol.f.reshape(3, 5).sum(axis=1).round(9).tolist()
    ('optimal', [1.0, 1.0, 1.0])
    """
    ests = _check(estimates, oracle)
    if coupling not in COUPLINGS:
        raise ValueError(f"coupling must be one of {COUPLINGS}, got {coupling!r}")
    if isinstance(smooth, bool) or not isinstance(smooth, (int, float, np.floating)) or not np.isfinite(smooth) \
            or smooth < 0:
        raise ValueError(f"smooth must be a finite number >= 0, got {smooth!r}")
    import scipy.sparse as sp

    tau, d, n = len(ests), oracle.d, ests[0].n
    a, b = rounds_covariance(ests, oracle)
    if coupling == "independent":
        a, b = a + b, np.zeros_like(b)
    # Σ_v⁻¹ = (1/a_v)(I − c_v 11ᵀ), c_v = b_v/(a_v + τ b_v) (Sherman–Morrison), as one sparse (τd, τd) matrix
    c = b / (a + tau * b)
    eye_t = sp.identity(tau, format="csr")
    ones_t = sp.csr_matrix(np.ones((tau, tau)))
    W = sp.kron(eye_t, sp.diags(1.0 / a)) - sp.kron(ones_t, sp.diags(c / a))
    D = sp.diags([-np.ones(tau - 1), np.ones(tau - 1)], [0, 1], shape=(tau - 1, tau))  # differences of rounds
    L = sp.kron(D.T @ D, sp.identity(d))
    unit = float(np.max(1.0 / a))
    HW = ((2.0 / unit) * W).tocsr()  # J is scaled by 1/unit; λ is on the f scale
    HL = (2.0 * smooth * L).tocsr()
    H = (HW + HL).tocsr()
    target = np.concatenate([e.f_tilde for e in ests])
    # λ_min(Σ_v⁻¹) = 1/(a_v + τ b_v); the penalty's Hessian is PSD, so 2·min_v that / unit bounds ∇²J below
    floor = 2.0 * float(np.min(1.0 / (a + tau * b))) / unit

    def value(x, e):
        r = x - target
        return 0.5 * float(r @ (HW @ r)) + 0.5 * float(x @ (HL @ x))

    def gradient(x, e):
        return HW @ (x - target) + HL @ x

    def hessian(x, e):
        return H

    def cvxpy_expr(x, e):
        import cvxpy as cp

        Dk = sp.kron(D, sp.identity(d)).toarray()  # the round-to-round differences, (τ−1)d × τd
        return 0.5 * cp.quad_form(x - target, cp.psd_wrap(HW.toarray())) + smooth * cp.sum_squares(Dk @ x)

    objective = SmoothObjective(value, gradient, hessian, cvxpy_expr, name=f"rounds-{coupling}",
                                curvature_floor=lambda x, e: floor)
    p, q = ests[0].p, ests[0].q
    vec = Estimate.from_frequencies(target, n, ests[0].epsilon, p, q, oracle=oracle.name)
    groups = {f"round{t}": np.arange(t * d, (t + 1) * d) for t in range(tau - 1)}
    cons = [NonNegative(), SumTo(float(tau)), PartitionTotals(groups, {k: 1.0 for k in groups})]
    return Problem(vec, objective, cons)


def rank_rounds(estimates, oracle, query="full", methods=None, n_repeats: int = 20, metric: str | None = None,
                rng=0):
    """``ldpopt.choose`` for τ rounds of a longitudinal oracle: NDSS 2020 §V-D's procedure with the rounds'
    joint law. Fit: Norm-Sub of the rounds' mean f̃ as the truth (*choice*: the users keep their value,
    the setting the oracle's memo is designed for), an integer population of the same n; R re-simulations
    of the τ rounds' counts, exact in joint law (``oracle.sample_rounds``: the memo shared by the rounds);
    every candidate on each: the per-round ``methods`` (default the closed forms) applied round by round,
    and the across-rounds problems :data:`ACROSS`; loss: the mean over rounds of the full-domain MSE (or
    MAE) against the truth.

    Parameters
    ----------
    estimates : list of Estimate
        The τ ≥ 2 per-round estimates.
    oracle : LongitudinalOracle
        Their oracle.
    query : "full"
        Only the full-domain query is scored across rounds.
    methods : "closed-form", "extended", "all" or a sequence of method names, optional
        The per-round candidates (as ``ldpopt.choose``).
    n_repeats : int
        Re-simulations R (>= 2).
    metric : "mse" or "mae", optional
    rng : int, Generator or "secure"

    Returns
    -------
    Choice
        Its ``how`` gives the reasons: the procedure, the memo's share of each round's variance, and the
        ε of one report, of the τ reports and of the memo.

    Raises
    ------
    ValueError
        A query other than "full", or malformed estimates.
    """
    import pandas as pd

    from .. import methods as _methods
    from .._validation import as_generator
    from ..recommend import Choice, records, win_shares
    from ..uncertainty.fit import population
    from ..uncertainty.queryspec import parse_query

    ests = _check(estimates, oracle)
    q = parse_query(query, metric)
    if q.kind != "full":
        raise ValueError(f"query must be 'full' for a longitudinal choice, got {query!r}")
    names = [r.name for r in records(methods)]
    tau, n, d = len(ests), ests[0].n, oracle.d
    mean_est = Estimate.from_frequencies(np.mean([e.f_tilde for e in ests], axis=0), n, ests[0].epsilon,
                                         ests[0].p, ests[0].q, oracle=oracle.name)
    pop = population(_methods.postprocess(mean_est, "norm-sub"), n)
    truth = pop / n
    gen = as_generator(rng)
    all_names = names + list(ACROSS)
    L = np.empty((len(all_names), n_repeats))

    def loss(F):
        err = np.asarray(F).reshape(tau, d) - truth[None, :]
        return float(np.mean(err ** 2 if q.metric == "mse" else np.abs(err)))

    for r in range(n_repeats):  # R re-simulations (each solves the across-rounds problems once)
        C = oracle.sample_rounds(pop, tau, gen)
        sim = [oracle.estimate(c, n) for c in C]
        for i, m in enumerate(names):
            L[i, r] = loss([_methods.postprocess(e, m) for e in sim])
        for j, (coupling, lam) in enumerate(ACROSS.values()):
            L[len(names) + j, r] = loss(rounds_problem(sim, oracle, coupling=coupling, smooth=lam).solve().f)
    table = pd.DataFrame({"loss": L.mean(axis=1), "se": L.std(axis=1, ddof=1) / np.sqrt(n_repeats),
                          "p_best": win_shares(L), "tiebreak": np.zeros(len(all_names))},
                         index=pd.Index(all_names, name="method"))
    table = table.sort_values(["loss", "p_best"], ascending=[True, False], kind="stable")
    table["rank"] = np.arange(1, len(table) + 1)
    a, b = rounds_covariance(ests, oracle)
    share = float(np.mean(b / (a + b)))
    how = (f"NDSS §V-D procedure over {tau} rounds of {oracle.label}: Norm-Sub fit of the rounds' mean estimate "
           f"as truth (users keep their value), {n_repeats} re-simulations of the {tau} rounds exact in joint law "
           f"(one memo per user shared by the rounds), loss = {q.metric.upper()} averaged over rounds. Reasons: "
           f"the memo carries {share:.0%} of each round's variance (averaged over values), which no "
           f"post-processing across rounds can remove; privacy: one report ε₁ = {oracle.epsilon_first():.3g}, "
           f"{tau} reports of one value ε = {oracle.epsilon_rounds(tau):.3g}, any number ε∞ = {oracle.epsilon:.3g}")
    return Choice(best=str(table.index[0]), table=table, query=q, n_repeats=n_repeats, how=how, truth=truth)
