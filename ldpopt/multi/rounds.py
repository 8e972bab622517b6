r"""Post-processing across rounds: τ per-round estimates of the same users made consistent *jointly*, as
one ldpopt :class:`~ldpopt.problems.Problem` over the stacked vector x = (f_1, …, f_τ) ∈ ℝ^{τd}
(x[t·d + v] = f_t(v), round-major), stated as :mod:`.problem` states consistent marginals.

Notes: docs/notes/multi.md, "ldpopt.multi.rounds"."""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate
from ..problems import NonNegative, PartitionTotals, Problem, SmoothObjective, SumTo

__all__ = ["ACROSS", "COUPLINGS", "check_rounds", "rounds_covariance", "rounds_problem"]

COUPLINGS = ("shared", "independent")

#: the across-rounds candidates of :func:`rank_rounds`: name → (coupling, λ)
ACROSS = {"rounds-shared": ("shared", 0.0), "rounds-independent": ("independent", 0.0),
          "rounds-shared-smooth": ("shared", 10.0)}


def check_rounds(estimates, oracle) -> list:
    """The per-round estimates of one longitudinal collection, checked before any work.

    Parameters
    ----------
    estimates : list of Estimate
        One estimate per round (at least two), of the same users.
    oracle : LongitudinalOracle
        The oracle that collected them.

    Returns
    -------
    list of Estimate
        ``estimates`` as a list.

    Raises
    ------
    TypeError
        ``oracle`` is not a longitudinal oracle.
    ValueError
        Fewer than two estimates, a domain size other than the oracle's, or different ``n``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.longitudinal import LGRR
    >>> from ldpopt.multi.rounds import check_rounds
    >>> o = LGRR(epsilon=2.0, d=3, eps_1=1.0)
    >>> one_round = o.simulate(np.array([30, 30, 30]), np.random.default_rng(0))
    >>> check_rounds([one_round], o)
    Traceback (most recent call last):
    ...
    ValueError: estimates must be a list of >= 2 Estimate objects (one per round), got 1 item(s)
    """
    from ..oracles.longitudinal import LongitudinalOracle

    if not isinstance(oracle, LongitudinalOracle):
        raise TypeError(f"oracle must be a LongitudinalOracle, got {type(oracle).__name__}")
    ests = list(estimates) if not isinstance(estimates, Estimate) else [estimates]
    if len(ests) < 2 or not all(isinstance(e, Estimate) for e in ests):
        raise ValueError(f"estimates must be a list of >= 2 Estimate objects (one per round), got {len(ests)} item(s)")
    if any(e.d != oracle.d for e in ests) or len({e.n for e in ests}) != 1:
        raise ValueError(f"estimates must all have the oracle's d = {oracle.d} and one n (the same users each round)")
    return ests


def rounds_covariance(estimates, oracle, at=None) -> tuple[np.ndarray, np.ndarray]:
    r"""(a, b), each (d,): value v's τ estimates have covariance :math:`a_v I + b_v 1 1^T` (module notes, the
    memo shared by the rounds), at :math:`n_v = n \cdot \mathrm{clip}(\mathrm{mean}_t \tilde f_t(v), 0, 1)`.

    Parameters
    ----------
    estimates : list of Estimate
        The per-round estimates (same users, the oracle's d).
    oracle : LongitudinalOracle
        The oracle that produced them.
    at : array_like of shape (d,), optional
        The frequencies at which to evaluate it instead of the rounds' mean (clipped to [0, 1]; e.g.
        zeros: the covariance of a value nobody holds).

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
    ests = check_rounds(estimates, oracle)
    n = ests[0].n
    if at is None:
        f = np.mean([e.f_tilde for e in ests], axis=0)
    else:
        f = np.asarray(at, dtype=float)
        if f.shape not in ((), (oracle.d,)) or not np.isfinite(f).all():
            raise ValueError(f"at must be a finite number or a finite array of shape ({oracle.d},)")
        f = np.broadcast_to(f, (oracle.d,))
    fbar = np.clip(f, 0.0, 1.0)
    total = oracle.variance(fbar, n)
    nv = n * fbar
    b = (oracle.p2 - oracle.q2) ** 2 * oracle.memo_support_variance(nv, n)  # the memo the rounds share
    b = b / (n * (oracle.p - oracle.q)) ** 2
    return total - b, b


def rounds_problem(estimates, oracle, coupling: str = "shared", smooth: float = 0.0) -> Problem:
    """The across-rounds consistency problem (module notes) as one :class:`Problem` on :math:`ℝ^{τd}`.

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
    ests = check_rounds(estimates, oracle)
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

