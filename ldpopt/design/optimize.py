"""The LDP matrix mechanism's strategy, designed by projected gradient descent (McKenna, Maity,
Mazumdar and Miklau, PVLDB 13(11), 2020): an m × d channel Q minimising the workload's expected
squared error after the unbiased least-squares reconstruction.

Notes: docs/notes/design.md, "ldpopt.design.optimize"."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from .._blas import one_thread
from .._validation import as_generator, check_domain_size, check_epsilon
from . import workloads as _w
from .linalg import _inverse_information, reconstruction
from .oracle import DesignedOracle

__all__ = ["Design", "design", "objective", "per_value_error", "project_columns"]

#: the design targets ε·(1 − MARGIN): the float rounding of the projection and of the column sums
#: (≈ m·2⁻⁵³ relative) then stays far inside e^ε, which the exact check proves
MARGIN = 1e-9
#: rows whose lower bound z falls below this are dropped (as the authors' code does)
_DROP = 1e-10


@dataclass(frozen=True)
class Design:
    r"""A designed strategy and the evidence about it (what :func:`design` returns).

    Parameters
    ----------
    strategy : ndarray (m, d)
        Q[y, v] = Pr[output y | value v]; every column a distribution, every row within :math:`e^ε`.
    epsilon : float
        The privacy budget the strategy satisfies (proved by :func:`ldpopt.design.verify_ldp`).
    gram : ndarray (d, d)
        :math:`W^T W` of the workload.
    workload : str
        The workload's name (or "matrix").
    objective : float
        McKenna et al.'s average-case objective, per user: :math:`\mathrm{tr}[(Q^T D^{-1} Q)^{-1} W^T W]/d - \mathrm{tr}(W^T W)/d` with
        D = diag(Q1) — the mean over values u of :attr:`per_value` (the workload's total squared
        error for n users of frequencies f is :math:`f^T` ``per_value`` / n).
    per_value : ndarray (d,)
        :math:`z_u`, the workload's total variance contributed by one user of value u.
    start : str
        The starting point the strategy descends from: "random", a built-in's name or "matrix".
    stationarity : float
        :math:`\lVert Q - Π(Q - t∇) \rVert_F / (t \lVert ∇ \rVert_F)` at the last step t (0 at a stationary point of the
        projected step for the final row bounds; 1 when the whole step is feasible).
    iterations : int
        Accepted gradient steps.
    seconds : float
        Wall time of the design.
    history : list of float
        The objective after each accepted step.

    Examples
    --------
    >>> from ldpopt import design
    >>> D = design.design("ranges", 1.0, d=6, iterations=20, init="random", rng=0)
    >>> D.workload, D.strategy.shape[1], D.objective <= D.history[0]
    ('ranges', 6, True)
    """

    strategy: np.ndarray
    epsilon: float
    gram: np.ndarray
    workload: str
    objective: float
    per_value: np.ndarray
    stationarity: float
    start: str
    iterations: int
    seconds: float
    history: list = field(default_factory=list, repr=False)

    @property
    def worst(self) -> float:
        r"""Worst-case variance over values, :math:`\max_u z_u` (McKenna et al.'s data-independent worst case).

        Examples
        --------
        >>> from ldpopt import design
        >>> D = design.design("prefixes", 1.0, d=4, iterations=5, init="grr")
        >>> bool(D.worst >= D.objective)
        True
        """
        return float(self.per_value.max())

    @property
    def rows(self) -> int:
        """m, the number of outputs (a report costs ⌈log₂ m⌉ bits).

        Examples
        --------
        >>> from ldpopt import design
        >>> design.design("prefixes", 1.0, d=4, iterations=5, init="grr").rows
        4
        """
        return int(self.strategy.shape[0])

    def oracle(self):
        """The :class:`~ldpopt.design.DesignedOracle` of this strategy (its ε proved exactly first).

        Returns
        -------
        DesignedOracle

        Examples
        --------
        >>> from ldpopt import design
        >>> o = design.design("ranges", 2.0, d=4, iterations=5, init="grr").oracle()
        >>> o.ldp_check.verified, o.d
        (True, 4)
        """
        return DesignedOracle(self.strategy, self.epsilon)

    def __repr__(self) -> str:
        return (f"Design(workload={self.workload!r}, d={self.strategy.shape[1]}, m={self.rows}, "
                f"epsilon={self.epsilon:g}, objective={self.objective:.6g}, iterations={self.iterations})")


# -- the objective ------------------------------------------------------------------------------------
def _value(X: np.ndarray, G: np.ndarray) -> float:
    d = G.shape[0]
    return float((np.sum(X * G) - np.trace(G)) / d)


def _gradient(Q: np.ndarray, X: np.ndarray, G: np.ndarray) -> np.ndarray:
    """∂/∂Q of tr(X G)/d, X = (QᵀD⁻¹Q)⁻¹, D = diag(Q1): with R = D⁻¹Q and B = XGX,
    −(2RB − diag(RBRᵀ)1ᵀ)/d (docs/notes/design.md)."""
    d = G.shape[0]
    R = Q / Q.sum(axis=1)[:, None]
    RB = R @ (X @ G @ X)
    return -(2.0 * RB - np.sum(RB * R, axis=1)[:, None]) / d


def per_value_error(Q, gram) -> np.ndarray:
    """:math:`z_u = Σ_y Q_{yu} V_{:y}^T G V_{:y} - G_{uu}`: the workload's total variance from one user
    of value u (McKenna et al. §4; the authors' code's "magic vector"), V :func:`reconstruction`.

    Parameters
    ----------
    Q : array_like (m, d)
        The strategy.
    gram : array_like (d, d)
        :math:`W^T W`.

    Returns
    -------
    ndarray (d,)

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.design import per_value_error
    >>> Q = np.array([[0.75, 0.25], [0.25, 0.75]])  # binary randomised response, ε = log 3
    >>> per_value_error(Q, np.eye(2)).round(4)  # 2 × e^ε/(e^ε − 1)²
    array([1.5, 1.5])
    """
    Q = np.asarray(Q, dtype=np.float64)
    G = np.asarray(gram, dtype=np.float64)
    V = reconstruction(Q)
    h = np.einsum("vy,vy->y", V, G @ V)  # diag(VᵀGV), with the product on BLAS
    return Q.T @ h - np.diag(G)


def objective(Q, gram) -> float:
    r"""McKenna et al.'s average-case objective: :math:`\mathrm{tr}[(Q^T D^{-1} Q)^{-1} G]/d - \mathrm{tr}(G)/d`, the mean of
    :func:`per_value_error` over the values.

    Parameters
    ----------
    Q : array_like (m, d)
        The strategy.
    gram : array_like (d, d)
        :math:`W^T W`.

    Returns
    -------
    float
        +inf when :math:`Q^T D^{-1} Q` is singular.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.design import objective
    >>> round(objective(np.array([[0.75, 0.25], [0.25, 0.75]]), np.eye(2)), 4)
    1.5
    """
    Q = np.asarray(Q, dtype=np.float64)
    X = _inverse_information(Q)
    return float("inf") if X is None else _value(X, np.asarray(gram, dtype=np.float64))


# -- the feasible set -----------------------------------------------------------------------------------
def project_columns(R, lo, hi) -> np.ndarray:
    r"""Euclidean projection of every column of R onto :math:`\{q : lo ≤ q ≤ hi, Σ q = 1\}` (the bounded simplex;
    McKenna et al. §5), vectorised over columns: bisection on the shift λ of clip(r + λ, lo, hi),
    then the exact λ on the final free set.

    Parameters
    ----------
    R : array_like (m, d)
        Columns to project.
    lo, hi : array_like (m,)
        Bounds per row, with :math:`Σ lo ≤ 1 ≤ Σ hi` and :math:`lo ≤ hi`.

    Returns
    -------
    ndarray (m, d)

    Raises
    ------
    ValueError
        If the bounds admit no distribution.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.design import project_columns
    >>> P = project_columns(np.array([[2.0], [0.0]]), np.array([0.2, 0.2]), np.array([0.6, 0.6]))
    >>> P.ravel().round(12).tolist()
    [0.6, 0.4]
    """
    R = np.asarray(R, dtype=np.float64)
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    if lo.sum() > 1 + 1e-12 or hi.sum() < 1 - 1e-12 or np.any(lo > hi):
        raise ValueError(f"bounds admit no distribution: Σlo = {lo.sum()!r}, Σhi = {hi.sum()!r}")
    a = np.min(lo[:, None] - R, axis=0)  # every entry at lo: Σ = Σlo ≤ 1
    b = np.max(hi[:, None] - R, axis=0)  # every entry at hi: Σ = Σhi ≥ 1
    buf = np.empty_like(R)
    for _ in range(60):  # a fixed number of halvings of the bracket, vectorised over columns
        mid = (a + b) / 2
        # clip(R + mid, lo, hi) in place (the same numbers, without np.clip's temporaries)
        np.add(R, mid, out=buf)
        np.maximum(buf, lo[:, None], out=buf)
        np.minimum(buf, hi[:, None], out=buf)
        s = buf.sum(axis=0)
        below = s < 1.0
        a = np.where(below, mid, a)
        b = np.where(below, b, mid)
    lam = (a + b) / 2
    # exact shift on the free set of the final bracket: Σ_free (r + λ) = 1 − Σ_clamped bound
    Y = R + lam
    low, high = Y <= lo[:, None], Y >= hi[:, None]
    free = ~(low | high)
    nfree = free.sum(axis=0)
    rest = 1.0 - (np.where(low, lo[:, None], 0.0) + np.where(high, hi[:, None], 0.0)).sum(axis=0)
    exact = (rest - np.where(free, R, 0.0).sum(axis=0)) / np.maximum(nfree, 1)
    lam = np.where(nfree > 0, exact, lam)
    return np.clip(R + lam, lo[:, None], hi[:, None])


def _feasible_z(z: np.ndarray, growth: float) -> np.ndarray:
    """Scale the row bounds into Σz ≤ 1 ≤ e^ε·Σz (the paper is silent on a step leaving it: the
    authors' code shrinks the step until it stays; a scale is cheaper and keeps the direction)."""
    t = z.sum()
    if t > 1.0:
        return z / t
    if growth * t < 1.0:
        return z / (growth * t) * (1 + 1e-12)
    return z


def _initial(m: int, d: int, growth: float, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The authors' random start: uniform entries projected with every row's bound halfway between
    1/(m e^ε) and 1/m."""
    z = np.full(m, (1.0 / (m * growth) + 1.0 / m) / 2)
    return project_columns(gen.random((m, d)), z, growth * z), z


def _resolve(workload, d) -> tuple[np.ndarray, str, int]:
    """(WᵀW, name, d) of a named workload or a matrix."""
    if isinstance(workload, str):
        if d is None:
            raise ValueError(f"d is required with a named workload ({workload!r})")
        d = check_domain_size(d, "d")
        grams = {"identity": lambda: np.eye(d), "prefixes": lambda: _w.prefixes(d).T @ _w.prefixes(d),
                 "ranges": lambda: _w.range_gram(d)}
        if workload not in grams:
            raise ValueError(f"workload must be one of {sorted(grams)} or a query matrix, got {workload!r}")
        return grams[workload](), workload, d
    W = _w.as_workload(workload, d)
    return W.T @ W, "matrix", W.shape[1]


def design(workload, epsilon: float, d: int | None = None, *, rows: int | None = None,
           max_bits: float | None = None, iterations: int = 300, tol: float = 1e-7, init=None,
           rng=0) -> Design:
    r"""Design an ε-LDP strategy for a workload (McKenna et al., PVLDB 13(11) 2020, Alg. 1).

    Minimises the average-case objective (:func:`objective`) over strategies Q (m × d) with
    :math:`z_r ≤ Q[r, v] ≤ e^ε z_r` and every column a distribution, by their alternating projected gradient:
    a step on Q projected column by column onto the bounded simplex (:func:`project_columns`), and a
    step on the row bounds z by the gradient through the entries at a bound; rows whose bound
    vanishes are dropped. Choices where the paper is silent: the step is accepted only if the
    objective decreases (halved otherwise, grown by 1.25 after an accepted step) instead of the
    authors' fixed halving every 50 steps; z is rescaled into :math:`\sum z ≤ 1 ≤ e^ε \sum z`; the design targets
    ε(1 − 10⁻⁹) so that float rounding cannot cross :math:`e^ε` (:func:`ldpopt.design.verify_ldp` proves it).
    The problem is not convex (no certified bound): the evidence is the final
    :attr:`Design.stationarity` and the objective's history.

    Parameters
    ----------
    workload : str or array_like
        "identity", "prefixes", "ranges" (with ``d``), or a query matrix (queries × d), e.g.
        :func:`ldpopt.design.workloads.marginals`.
    epsilon : float
        Privacy budget ε > 0.
    d : int, optional
        Domain size (required with a named workload).
    rows : int, optional
        m, the number of outputs (default 4d, the paper's recommendation).
    max_bits : float, optional
        A bits-per-report budget: :math:`m ≤ 2^{\mathtt{max\_bits}}`.
    iterations : int
        Most gradient steps (>= 1).
    tol : float
        Stop when the objective improves by less than this fraction over 20 steps.
    init : str, array_like (m, d) or list of them, optional
        Starting points: "random" (the authors' start: uniform entries projected), "builtins" (GRR and
        every built-in pure oracle whose outputs enumerate in at most max(8d, 256) columns), a
        built-in oracle's name (its channel, e.g. "grr", or "hr" with its :math:`2^{\lceil \log_2 (d+1) \rceil}`
        outputs: one start instead of every built-in's, the cheap choice at large d), a strategy
        matrix; each is descended and the best kept. A start other than "random" keeps its own
        number of outputs: ``rows`` sizes the random start only (refused where there is none), and
        ``max_bits`` drops the default's built-in channels with more outputs than it allows (refused
        for a start you name). Default: "random" and "builtins", so the design is never worse than
        those channels at ε(1 − 10⁻⁹) (those within the budget).
    rng : int or Generator
        Seed of the random start.

    Returns
    -------
    Design

    Raises
    ------
    ValueError
        On an unknown workload, d < 2, a bad ε, rows < 2, max_bits allowing fewer than 2 outputs,
        iterations < 1, tol not in [0, 1), an ``init`` that is not a strategy, or a built-in name
        whose channel does not enumerate at this d.

    Examples
    --------
    >>> from ldpopt import design
    >>> D = design.design("prefixes", 1.0, d=8, iterations=50, init="random", rng=0)
    >>> D.rows, D.objective < D.history[0], D.oracle().ldp_check.verified
    (32, True, True)
    """
    epsilon = check_epsilon(epsilon, "epsilon")
    G, name, d = _resolve(workload, d)
    rows_given = rows is not None
    if rows is None:
        rows = 4 * d
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 2:
        raise ValueError(f"rows must be an integer >= 2, got {rows!r}")
    if max_bits is not None:
        if isinstance(max_bits, bool) or not isinstance(max_bits, (int, float, np.number)) or not max_bits >= 1:
            raise ValueError(f"max_bits must be a number >= 1 (at least two outputs), got {max_bits!r}")
        rows = min(int(rows), int(2 ** float(max_bits)))
        if rows < d:
            raise ValueError(f"max_bits = {max_bits!r} allows {rows} outputs, fewer than d = {d}: no strategy with "
                             "fewer outputs than values estimates every value")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
    if not 0.0 <= float(tol) < 1.0:
        raise ValueError(f"tol must lie in [0, 1), got {tol!r}")
    growth = float(np.exp(epsilon * (1 - MARGIN)))
    starts = _sized(_starts(init, d, growth), init, rows_given, max_bits, int(rows))
    gen = as_generator(rng)
    start = time.perf_counter()
    with one_thread(d):
        runs = [_run(G, name, d, epsilon, int(rows), int(iterations), float(tol), Q0, label, gen)
                for label, Q0 in starts]  # a few starting points, not a loop over data
    best = min(runs, key=lambda r: r.objective)
    return replace(best, seconds=time.perf_counter() - start)


def _grr(d: int, growth: float) -> np.ndarray:
    return (np.eye(d) * (growth - 1.0) + 1.0) / (growth + d - 1.0)


#: a built-in oracle's channel is a starting point when it has at most this many outputs (or 8d)
_MAX_START_OUTPUTS = 256


def _builtin_channel(name: str, d: int, growth: float, max_outputs: int | None = None) -> np.ndarray:
    """The channel (outputs × d) of the built-in pure oracle ``name`` at ε(1 − MARGIN), its never-seen
    outputs dropped; ValueError when its outputs do not enumerate (or exceed ``max_outputs``) or it
    cannot estimate every value."""
    from .. import oracles

    eps = float(np.log(growth))
    try:
        P = np.asarray(oracles.get(name, eps, d).output_distribution(), dtype=np.float64)
    except (ValueError, NotImplementedError, MemoryError) as e:
        raise ValueError(f"init: {name}'s channel cannot be enumerated at d = {d} ({e})") from None
    if max_outputs is not None and P.shape[1] > max_outputs:
        raise ValueError(f"init: {name}'s channel has {P.shape[1]} outputs, more than {max_outputs}")
    Q0 = P.T[P.T.max(axis=1) > 0]
    if _inverse_information(Q0) is None:
        raise ValueError(f"init: {name}'s channel cannot estimate every value (QᵀD⁻¹Q is singular)")
    return Q0


def _builtin_starts(d: int, growth: float) -> list[tuple[str, np.ndarray | None]]:
    """The channels of the built-in pure oracles whose outputs enumerate in at most max(8d, 256)
    columns (GRR always; SS, RWS, OUE, HR at small d; GRR and HR at d = 1,024), at ε(1 − MARGIN)."""
    from .. import oracles

    out: list[tuple[str, np.ndarray | None]] = [("grr", _grr(d, growth))]
    for name in oracles.available():  # ~10 registered oracles
        if name == "grr":
            continue
        try:
            out.append((name, _builtin_channel(name, d, growth, max(8 * d, _MAX_START_OUTPUTS))))
        except ValueError:
            continue
    return out


def _starts(init, d: int, growth: float) -> list[tuple[str, np.ndarray | None]]:
    """The starting points: None → the authors' random start and the built-ins' channels (so a design is
    never worse than those: every step decreases the objective); "random", "grr", "builtins", a
    built-in oracle's name (its channel, e.g. "hr"), a matrix, or a list of them."""
    from .. import oracles

    items = ["random", "builtins"] if init is None else (list(init) if isinstance(init, (list, tuple)) else [init])
    out: list[tuple[str, np.ndarray | None]] = []
    for it in items:
        if isinstance(it, str):
            if it == "builtins":
                out += _builtin_starts(d, growth)
            elif it in ("random", "grr"):
                out.append((it, None if it == "random" else _grr(d, growth)))
            elif it in oracles.available():
                out.append((it, _builtin_channel(it, d, growth)))
            else:
                raise ValueError(f"init must be 'random', 'builtins', a built-in oracle's name ({', '.join(oracles.available())}), "
                                 f"a strategy matrix or a list of them, got {it!r}")
            continue
        Q0 = np.array(it, dtype=np.float64)
        if Q0.ndim != 2 or Q0.shape[1] != d or Q0.shape[0] < 2 or not np.all(np.isfinite(Q0)) or np.any(Q0 < 0):
            raise ValueError(f"init must be a non-negative finite (m, {d}) strategy with m >= 2, got shape {Q0.shape}")
        Q0 = Q0[Q0.max(axis=1) > 0]
        if _inverse_information(Q0) is None:
            raise ValueError("init: the starting strategy cannot estimate every value (QᵀD⁻¹Q is singular)")
        out.append(("matrix", Q0))
    if not out:
        raise ValueError("init must name at least one starting point")
    return out


def _sized(starts, init, rows_given: bool, max_bits, rows: int):
    r"""The starts that ``rows`` and ``max_bits`` allow. ``rows`` sizes the random start only: given
    with no random start, it is refused (it would be ignored). A ``max_bits`` budget drops the
    built-ins' channels with more than :math:`2^{\mathtt{max\_bits}}` outputs where ``init`` is the
    default, and refuses a start the caller named that has more."""
    if rows_given and all(Q0 is not None for _, Q0 in starts):
        raise ValueError(f"rows sizes the random start only, and init={init!r} has none (each start keeps "
                         "its own number of outputs): drop rows or add 'random' to init")
    if max_bits is None:
        return starts
    kept = [(label, Q0) for label, Q0 in starts if Q0 is None or Q0.shape[0] <= rows]
    if init is not None and len(kept) < len(starts):
        label, Q0 = next((lb, q) for lb, q in starts if q is not None and q.shape[0] > rows)
        raise ValueError(f"max_bits = {max_bits!r} allows {rows} outputs, and the start {label!r} has {Q0.shape[0]}")
    return kept


def _run(G, name, d, epsilon, rows, iterations, tol, Q0, label, gen) -> Design:
    eps_d = epsilon * (1 - MARGIN)
    growth = float(np.exp(eps_d))
    if Q0 is None:
        Q, z = _initial(int(rows), d, growth, gen)
    else:
        z = _feasible_z(np.maximum(Q0.max(axis=1) / growth, Q0.min(axis=1)), growth)
        Q = project_columns(Q0, z, growth * z)
    X = _inverse_information(Q)
    if X is None:
        raise ValueError("init: the projected starting strategy cannot estimate every value")
    f = _value(X, G)
    history = [f]
    g = _gradient(Q, X, G)
    gamma = 0.1 * np.linalg.norm(Q) / max(float(np.linalg.norm(g)), 1e-300)
    c = 1.0 / (d * growth)
    accepted = 0
    for _ in range(int(iterations)):
        hi = growth * z
        # the gradient in the columns' tangent space (Σ_y ΔQ[y, v] = 0): the part the projection keeps
        g = g - g.mean(axis=0)[None, :]
        dz = (g * (Q <= z[:, None] * (1 + 1e-12))).sum(axis=1) + growth * (g * (Q >= hi[:, None] * (1 - 1e-12))).sum(axis=1)
        moved = False
        while gamma > 1e-9 * np.linalg.norm(Q) / max(float(np.linalg.norm(g)), 1e-300):
            # the joint step on (Q, z), else the step on Q alone with the bounds held
            for zn in (_feasible_z(np.clip(z - c * gamma * dz, 0.0, 1.0), growth), z):
                keep = zn > _DROP
                zk = _feasible_z(zn[keep], growth)
                Qn = project_columns((Q - gamma * g)[keep], zk, growth * zk)
                Xn = _inverse_information(Qn)
                fn = float("inf") if Xn is None else _value(Xn, G)
                if fn < f:
                    Q, z, X, f = Qn, zk, Xn, fn
                    moved = True
                    break
            if moved:
                gamma *= 1.25
                break
            gamma /= 2
        if not moved:
            break
        accepted += 1
        history.append(f)
        assert X is not None  # an accepted step has a finite objective
        g = _gradient(Q, X, G)
        if len(history) > 20 and history[-21] - f <= tol * abs(history[-21]):
            break
    t = gamma / 1.25 if accepted else gamma
    step = Q - project_columns(Q - t * g, z, growth * z)
    stationarity = float(np.linalg.norm(step)) / max(float(t * np.linalg.norm(g)), 1e-300)
    Q.setflags(write=False)
    return Design(strategy=Q, epsilon=epsilon, gram=G, workload=name, objective=f,
                  per_value=per_value_error(Q, G), start=label,
                  stationarity=stationarity, iterations=accepted, seconds=0.0,
                  history=history)
