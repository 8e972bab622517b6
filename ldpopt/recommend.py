"""``ldpopt.choose``: pick the post-processing method for *this* estimate and *this* query.

NDSS 2020 §V-D (Fig. 9) made general: fit a plausible truth f̂ from the estimate, re-simulate the
oracle on it, apply every candidate method, score each on the user's query against f̂, rank.

Notes: docs/notes/uncertainty.md, "ldpopt.recommend"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import methods as _methods
from ._validation import as_generator
from .estimate import check_estimate
from .uncertainty.fit import plausible_truth, population, sparse_truth
from .uncertainty.queryspec import Query, parse_query, random_subsets
from .uncertainty.resample import apply_batch, draw_counts, oracle_of

if TYPE_CHECKING:  # pandas is imported where the table is built: `import ldpopt` stays light
    import pandas as pd

__all__ = ["Choice", "candidates", "choose", "losses", "records", "tiebreak"]

#: the candidate sets by name, asked of the method registry: the closed forms; every method that is not
#: another's answer computed another way (``variant_of``: the paper's MLE-Apx loop, Calibrate = Power)
_SETS = {"closed-form": lambda: _methods.names("closed-form", variants=False),
         "extended": lambda: _methods.names(variants=False)}


#: seconds before ``choose(progress=True)`` shows its bar (a quick run prints nothing)
PROGRESS_DELAY = 2.0


def __getattr__(name: str):
    """``CLOSED_FORM`` and ``EXTENDED``, the candidate sets of earlier releases (for a domain not declared
    ordered), derived from the registry."""
    if name in ("CLOSED_FORM", "EXTENDED"):
        return tuple(candidates("closed-form" if name == "CLOSED_FORM" else "extended"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, eq=False)
class Choice:
    """The ranking: ``table`` (DataFrame indexed by method: loss, se, p_best, tiebreak, worst, rank), ``best``,
    the query, the number of repetitions and ``how``. Returned by :func:`choose`.

    Parameters
    ----------
    best : str
        Name of the top-ranked method.
    table : pandas.DataFrame
        One row per candidate, sorted by rank. ``loss``, ``se``, ``p_best``, ``tiebreak``: over the
        re-simulations from the Norm-Sub fit; ``worst``: :func:`worst_regret` over the fits re-simulated
        (the Norm-Sub fit, and the sparse fit where the estimate is consistent with it), the rank's key.
    query : Query
        The parsed query.
    n_repeats : int
        Repetitions scored (across rounds: per world, the repeated draws included).
    how : str
        One sentence: fit, draws and score.
    truth : ndarray, optional
        The fitted plausible truth f̂ (across rounds: the mean of the rounds' truths).
    drift : dict, optional
        Across rounds only: the drift statistic (:func:`ldpopt.multi.drift.rounds_drift`: ``excess``,
        ``se``, ``z``, ``status`` "none" / "unclear" / "drift", ``weight``, ``change``), ``worlds``, the
        number of distinct plausible worlds re-simulated, and ``sparse``, whether the last of them is
        the sparse world (:func:`ldpopt.multi.drift.sparse_support`).
    cannot_tell : bool, default False
        Across rounds only: no candidate is within :data:`TELL_RATIO` of the best in every plausible
        world (by the upper bound of its re-simulation error); ``best`` is then the safe choice, the
        smallest worst ratio over the worlds (``table["worst"]``), and a warning says so.
    world_losses : ndarray, optional
        Across rounds only: the re-simulated losses behind the table, shape (methods in the table's
        index order, worlds, repetitions); world 0 is the fitted drift.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 50, rng=0)
    >>> c = ldpopt.choose(est, "full", methods=["base", "norm-sub"], n_repeats=5)
    >>> c.best, list(c.table.columns)
    ('norm-sub', ['loss', 'se', 'p_best', 'tiebreak', 'worst', 'rank'])
    """

    best: str
    table: pd.DataFrame
    query: Query
    n_repeats: int
    how: str
    truth: np.ndarray | None = field(repr=False, default=None)
    drift: dict | None = field(repr=False, default=None)
    cannot_tell: bool = False
    world_losses: np.ndarray | None = field(repr=False, default=None)

    def __str__(self) -> str:
        return (f"query {self.query}; best: {self.best}\n{self.table.to_string(float_format=lambda x: f'{x:.4g}')}"
                f"\n({self.how})")


def win_shares(L: np.ndarray) -> np.ndarray:
    """``p_best`` of the methods whose losses over R repetitions are the rows of ``L`` (m, R): the mean
    over repetitions of 1/k for each of the k methods with the repetition's smallest loss, 0 for the
    others; a repetition in which no loss is a number is won by none (then the shares sum below 1).

    Parameters
    ----------
    L : array_like, shape (m, R)
        Losses; NaN or inf for a failed run.

    Returns
    -------
    ndarray, shape (m,)

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.recommend import win_shares
    >>> win_shares(np.array([[1.0, 2.0, 0.5], [1.0, 1.0, 0.7]]))
    array([0.5, 0.5])
    """
    L = np.asarray(L, dtype=float)
    finite = np.isfinite(L)
    low = np.where(finite, L, np.inf).min(axis=0, keepdims=True)
    won = finite & (L == low)
    k = won.sum(axis=0, keepdims=True)
    return np.divide(won, k, out=np.zeros_like(L), where=k > 0).mean(axis=1)


#: the reference ``choose`` keeps unless a candidate beats it clearly (doing nothing special)
REFERENCE = "norm-sub"
#: "clearly": the paired mean loss difference to the reference below −Z_CLEAR of its standard errors, in
#: at least one world re-simulated (with the smaller worst regret over all of them)
Z_CLEAR = 2.0


#: across rounds: a pick whose worst ratio to the best over the plausible drifts may exceed this (by its
#: upper bound, :func:`_worst_upper`) is flagged ``Choice.cannot_tell``
TELL_RATIO = 1.2
#: across rounds: where the pick's worst ratio is within TELL_RATIO and only its upper bound is not, the
#: re-simulations are repeated (R more in every world) up to this many times R in all
TELL_DRAWS = 3


def _worst_upper(L: np.ndarray, z: float = Z_CLEAR) -> np.ndarray:
    """Each candidate's worst ratio to the best over the worlds, at the upper end of its re-simulation
    error: in each world, the ratio of mean losses to the world's best times exp(z·se), se the paired
    (common draws) delta-method standard error of the log ratio; the largest over the worlds. ``L`` is
    (methods, worlds, R) losses of MSE or MAE; 1 for the world's best itself."""
    M = L.mean(axis=2)  # (m, w)
    b = M.argmin(axis=0)  # the best per world
    Lb, Mb = L[b, np.arange(L.shape[1])], M[b, np.arange(L.shape[1])]  # (w, R), (w,)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = L / M[:, :, None] - (Lb / Mb[:, None])[None]
        se = x.std(axis=2, ddof=1) / np.sqrt(L.shape[2])
        ratio = np.where(M == Mb, 1.0, M / Mb)
    up = np.where(np.isfinite(ratio), ratio * np.exp(z * np.nan_to_num(se)), np.inf)
    return up.max(axis=1)


def _tiers(q: Query, names: list, L3: np.ndarray, worst: np.ndarray) -> np.ndarray:
    """0 for the candidates ranked above :data:`REFERENCE`: a smaller ``worst`` regret than the
    reference's and a mean loss below the reference's by more than :data:`Z_CLEAR` standard errors of
    the paired difference (the same re-simulations) in at least one world; 1 for the reference; 2 for
    the rest (all 1 when the reference is not a candidate or the query is ``hh``, whose coarse loss is
    ordered by its ties' secondary score). ``L3`` is (methods, worlds, R).

    Choice: a win inside the noise of R re-simulations is no evidence, and must not displace the method
    that is never much worse; a clear win in one world with the smaller worst regret over all of them
    is (on AOL, GRR ε = 2, Norm-Mul beats Norm-Sub 2.5× in the Norm-Sub world and loses 1.3× in the
    sparse one: requiring a clear win in every world kept Norm-Sub, 24× the best real MSE)."""
    tier = np.ones(len(names), dtype=int)
    if q.kind == "hh" or REFERENCE not in names:
        return tier
    i = names.index(REFERENCE)
    D = L3 - L3[i]
    R = D.shape[2]
    with np.errstate(invalid="ignore"):
        upper = D.mean(axis=2) + Z_CLEAR * D.std(axis=2, ddof=1) / np.sqrt(R)
    tier[:] = 2
    tier[np.any(upper < 0, axis=1) & (worst < worst[i])] = 0
    tier[i] = 1
    return tier


def worst_regret(q: Query, M: np.ndarray) -> np.ndarray:
    """Each method's worst regret over the re-simulated worlds, from the mean losses ``M`` (methods,
    worlds): the largest over the worlds of loss ÷ that world's smallest loss (MSE, MAE: scale-free, so
    worlds of different noise weigh alike), or loss − that world's smallest loss for ``hh`` (1 − F1 is
    already on a fixed scale and is often 0). A loss that is not a number has regret inf; in a world
    whose best loss is 0, a method at 0 has ratio 1 and one above it inf.

    Parameters
    ----------
    q : Query
    M : array_like, shape (m, w)

    Returns
    -------
    ndarray, shape (m,)
        1 (MSE, MAE) or 0 (hh) for a method that is best in every world.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.recommend import worst_regret
    >>> from ldpopt.uncertainty import parse_query
    >>> worst_regret(parse_query("full"), np.array([[1.0, 4.0], [2.0, 2.0], [4.0, 1.0]]))
    array([4., 2., 4.])
    """
    M = np.where(np.isfinite(M), np.asarray(M, dtype=float), np.inf)
    best = M.min(axis=0, keepdims=True)
    if q.kind == "hh":
        R = M - best
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            R = np.where(best > 0, M / np.where(best > 0, best, 1.0), np.where(M == best, 1.0, np.inf))
    return np.where(np.isfinite(R), R, np.inf).max(axis=1)


def losses(q: Query, F: np.ndarray, truth: np.ndarray, U=None) -> np.ndarray:
    """Loss of every row of F (R, d) against ``truth`` (d,) for query ``q`` (lower is better).

    Parameters
    ----------
    q : Query
        The parsed query (:func:`ldpopt.uncertainty.parse_query`).
    F : ndarray, shape (R, d)
        A method's outputs over the repetitions.
    truth : ndarray, shape (d,)
        The fitted truth.
    U : matrix, optional
        The subset matrix of a subset query.

    Returns
    -------
    ndarray, shape (R,)
        MSE or MAE (``q.metric``); 1 − F1 for ``hh``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.recommend import losses
    >>> from ldpopt.uncertainty import parse_query
    >>> F = np.array([[0.5, 0.3, 0.2], [0.6, 0.2, 0.2]])
    >>> losses(parse_query("full"), F, np.array([0.5, 0.25, 0.25])).round(4)
    array([0.0017, 0.005 ])
    >>> losses(parse_query("hh:0.25"), F, np.array([0.5, 0.25, 0.25]))
    array([0.2, 0.5])
    """
    if q.kind == "hh":
        pred = F >= q.threshold
        real = truth >= q.threshold
        tp = (pred & real).sum(axis=1)
        denom = pred.sum(axis=1) + real.sum()
        f1 = np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 1.0)
        return 1.0 - f1
    if q.kind == "topk":
        idx = np.argsort(-truth, kind="stable")[:q.k]
        err = F[:, idx] - truth[idx]
    elif U is not None:
        err = np.asarray((U @ F.T).T) - np.asarray(U @ truth).ravel()
    else:
        err = F - truth
    return np.mean(err**2, axis=1) if q.metric == "mse" else np.mean(np.abs(err), axis=1)


def tiebreak(q: Query, F: np.ndarray, truth: np.ndarray, sigma: float) -> float:
    """Secondary score (lower is better) ordering methods of exactly equal mean loss (module
    docstring): for ``hh`` the smoothed 1 − F1, each output's membership :math:`1[F ≥ φ]` replaced by
    Φ((F − φ)/σ) (σ of Eq. 7: the noise scale at which the fitted world itself is uncertain), so a
    method whose classification holds by a wider margin scores lower; for every other query the
    full-domain MSE against the fitted truth.

    Parameters
    ----------
    q : Query
        The parsed query.
    F : ndarray, shape (R, d)
        A method's outputs over the repetitions.
    truth : ndarray, shape (d,)
        The fitted truth.
    sigma : float
        σ of Eq. 7.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.recommend import tiebreak
    >>> from ldpopt.uncertainty import parse_query
    >>> F = np.array([[0.5, 0.3, 0.2], [0.6, 0.2, 0.2]])
    >>> round(tiebreak(parse_query("hh:0.25"), F, np.array([0.5, 0.25, 0.25]), sigma=0.05), 4)
    0.2949
    """
    if q.kind != "hh":
        return float(np.mean((F - truth) ** 2))
    from scipy.special import ndtr

    soft = ndtr((F - q.threshold) / max(sigma, 1e-300))
    real = truth >= q.threshold
    tp = soft[:, real].sum(axis=1)
    denom = soft.sum(axis=1) + real.sum()
    return float(np.mean(1.0 - np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1.0), 1.0)))


def candidates(methods=None, *, ordered: bool = False) -> list[str]:
    """Names of the candidates (:func:`records`).

    Parameters
    ----------
    methods : None, str or sequence, default None
        As :func:`records`.
    ordered : bool, default False
        As :func:`records`.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        As :func:`records`.

    Examples
    --------
    >>> from ldpopt.recommend import candidates
    >>> candidates()
    ['base', 'base-pos', 'base-cut', 'norm', 'norm-mul', 'norm-cut', 'norm-sub', 'norm-hyb', 'mle-apx']
    >>> candidates("extended")[-3:]
    ['em', 'power', 'power-ns']
    >>> [m for m in candidates(ordered=True) if m not in candidates()]
    ['dw', 'iiw', 'amrp', 'dw-simplex']
    """
    return [r.name for r in records(methods, ordered=ordered)]


def records(methods=None, *, ordered: bool = False) -> list:
    """The candidates' method records: None or "closed-form" → the registered closed forms,
    "extended" → every registered method that is not a variant of another, "all" → every registered
    method, else the given methods (names, records, callables or ``FILE.py:NAME``, resolved by
    :func:`ldpopt.methods.resolve`). A named set holds the methods that assume an ordered domain
    (the record's ``needs_order``: the Wiener filters) only when ``ordered`` is True.

    Parameters
    ----------
    methods : None, str or sequence, default None
        As above.
    ordered : bool, default False
        The estimate's domain is declared ordered (:attr:`ldpopt.Estimate.ordered`).

    Returns
    -------
    list of MethodInfo
        Without duplicates, in the order given.

    Raises
    ------
    ValueError
        If a string is not one of the sets nor a method, a method is unknown, or the list is empty.

    Examples
    --------
    >>> from ldpopt.recommend import records
    >>> [r.label for r in records(["norm-sub", "base", "norm-sub"])]
    ['Norm-Sub', 'Base']
    """
    if methods is None:
        methods = "closed-form"
    if isinstance(methods, str) and not _methods.registry._is_file_reference(methods):
        if methods == "all":
            return [r for r in map(_methods.get, _methods.names()) if ordered or not r.needs_order]
        if methods in _SETS:
            return [r for r in map(_methods.get, _SETS[methods]()) if ordered or not r.needs_order]
        raise ValueError(f"methods must be 'closed-form', 'extended', 'all' or a list of methods, "
                         f"got {methods!r}")
    if isinstance(methods, str) or callable(methods) or isinstance(methods, _methods.MethodInfo):
        methods = [methods]
    recs = list({r.name: r for r in (_methods.resolve(m, where="methods") for m in methods)}.values())
    if not recs:
        raise ValueError("methods must name at least one method")
    return recs


def _check_repeats(r) -> int:
    if isinstance(r, bool) or int(r) != r or int(r) < 2:
        raise ValueError(f"n_repeats must be an integer >= 2, got {r!r}")
    return int(r)


def choose(estimate, query="full", *, methods=None, n_repeats: int = 20, metric: str | None = None,
           rng=0, params=None, progress: bool = False, longitudinal=None) -> Choice:
    """Rank post-processing ``methods`` for ``estimate`` on ``query`` (module notes).

    With ``longitudinal`` (a longitudinal oracle, :mod:`ldpopt.oracles.longitudinal`), ``estimate`` is
    the list of τ per-round estimates of the same users, and the candidates are the per-round methods
    and the across-rounds problems (:func:`rank_rounds`).

    Parameters
    ----------
    query : str, Query or subsets
        "full", "topk:K", "hh:PHI", "subsets:SIZE[:COUNT]", or given subsets (see
        :func:`ldpopt.uncertainty.parse_query`).
    methods : "closed-form" (default), "extended", "all", or a sequence of methods
        Candidates (:func:`records`): names, records, plain callables ``f(estimate)`` or
        ``"FILE.py:NAME"``. The named sets hold the ordered-domain methods (the Wiener filters)
        only when ``estimate.ordered``.
    metric : "mse" or "mae" (not for hh, which is scored by F1)
        The loss (default "mse").
    params : dict method -> keyword arguments
        Keyword parameters of each method, by name.
    progress : bool, default False
        A bar on stderr counting the candidates scored, once the run has taken 2 s (the
        command line's ``choose``; a large ``n_repeats`` takes minutes).
    longitudinal : LongitudinalOracle or None, default None
        The oracle of τ rounds; ``estimate`` is then the list of the rounds' estimates ("full" query only).
    estimate : Estimate
        The raw estimate.
    n_repeats : int, default 20
        Repetitions R (>= 2).
    rng : int, Generator or "secure", default 0
        Seed of the re-simulation.

    Returns
    -------
    Choice

    Raises
    ------
    ValueError
        If the query, ``methods``, ``metric`` or ``n_repeats`` is not accepted.
    TypeError
        If ``estimate`` is not an :class:`~ldpopt.Estimate`.

    References
    ----------
    NDSS 2020 §V-D (Fig. 9), made general (module notes).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 50, rng=0)
    >>> c = ldpopt.choose(est, "topk:2", n_repeats=5)
    >>> c.best, list(c.table.index[:3])
    ('norm-sub', ['norm-sub', 'mle-apx', 'norm'])
    """
    if longitudinal is not None:
        return rank_rounds(estimate, longitudinal, query=query, methods=methods, n_repeats=_check_repeats(n_repeats),
                           metric=metric, rng=rng)
    est = check_estimate(estimate)
    q = parse_query(query, metric)
    R = _check_repeats(n_repeats)
    recs = records(methods, ordered=est.ordered)
    unordered = [r.name for r in recs if r.needs_order and not est.ordered]
    if unordered:
        raise ValueError(f"methods: {unordered} assume an ordered domain; declare one with ordered=True "
                         f"(Estimate.as_ordered) or leave them out")
    if methods is None or isinstance(methods, str) and methods in ("closed-form", "extended", "all"):
        # a named set holds the methods that apply to this estimate (their records' ``applies``: e.g.
        # MLE-Apx and EM refuse central noise); a method the caller names is run, and refuses itself
        recs = [r for r in recs if r.why_not(est, **(params or {}).get(r.name, {})) is None]
    names = [r.name for r in recs]
    if q.kind == "topk" and q.k > est.d:
        raise ValueError(f"query topk:{q.k}: K must be <= d = {est.d}")
    gen = as_generator(rng)
    U = None
    if q.kind == "subsets":
        U = random_subsets(gen, est.d, q.size, q.count)
    elif q.kind == "given":
        from .queries import query_matrix

        U = query_matrix(q.subsets, est.d)
    # the worlds re-simulated: the Norm-Sub fit (NDSS §V-D), and the sparse fit where the estimate allows
    # it (all the mass on the values above the noise, :func:`sparse_truth`); the first world's draws come
    # first, so with one world the ranking is the one-fit procedure's, draw for draw
    fits = [plausible_truth(est)]
    sparse = sparse_truth(est)
    if sparse is not None and not np.allclose(sparse, fits[0], rtol=0, atol=1e-12):  # else the same world
        fits.append(sparse)
    else:
        sparse = None
    worlds = []
    for f in fits:
        pop = population(f, est.n)
        C = draw_counts(oracle_of(est), pop, R, gen)
        worlds.append((pop / est.n, C, (C / est.n - est.q) / (est.p - est.q)))
    truth = worlds[0][0]
    params = params or {}
    scored = recs
    if progress:
        import sys

        from tqdm import tqdm

        scored = tqdm(recs, desc="choose", unit="method", file=sys.stderr, delay=PROGRESS_DELAY, leave=False)
    Ls, tie = [], []
    for r in scored:
        per = []
        for j, (t, C, F) in enumerate(worlds):
            o = apply_batch(est, r, F, counts=C, **params.get(r.name, {}))
            per.append(losses(q, o, t, U))
            if j == 0:
                tie.append(tiebreak(q, o, t, est.sigma))
        Ls.append(per)
    L3 = np.array(Ls)  # (methods, worlds, R)
    L = L3[:, 0]
    import pandas as pd

    table = pd.DataFrame({"loss": L.mean(axis=1), "se": L.std(axis=1, ddof=1) / np.sqrt(R),
                          "p_best": win_shares(L), "tiebreak": np.array(tie), "worst": worst_regret(q, L3.mean(axis=2))},
                         index=pd.Index(names, name="method"))
    # rank: first the candidates that beat the reference (Norm-Sub) clearly in every world, then the
    # reference, then the rest (_tiers; MSE and MAE queries with Norm-Sub a candidate); within a tier
    # the smallest worst regret over the worlds (with one world: the order of the mean loss); exact
    # ties in the mean loss (typical for hh: several methods find the fitted heavy set in every
    # repetition, 1 − F1 = 0): higher p_best, then the lower secondary score, then the order of the
    # candidates
    table["_tier"] = _tiers(q, names, L3, table["worst"].to_numpy())
    table = table.sort_values(["_tier", "worst", "loss", "p_best", "tiebreak"],
                              ascending=[True, True, True, False, True], kind="stable").drop(columns="_tier")
    table["rank"] = np.arange(1, len(table) + 1)
    loss_name = "1 - F1" if q.kind == "hh" else q.metric.upper()
    regret = "loss − the world's best loss" if q.kind == "hh" else "loss ÷ the world's best loss"
    second = (f"; also {R} from the sparse fit (all the mass on the {int((sparse > 0).sum())} values above "
              f"Base-Cut's threshold, consistent with the estimate): ranked by the worst over the two fits of "
              f"{regret}" if sparse is not None else "")
    kept = (f"; {REFERENCE} ranked above every candidate that does not beat it by {Z_CLEAR:g} paired SEs in a fit "
            f"with a smaller worst regret"
            if q.kind != "hh" and REFERENCE in names and len(names) > 1 else "")
    how = (f"NDSS §V-D procedure: Norm-Sub fit of the estimate as truth, {R} joint-exact re-simulations "
           f"of the {est.oracle} counts (common to all methods), loss = {loss_name}{second}{kept}; loss, se, p_best: "
           f"the Norm-Sub fit's; se over repetitions; "
           f"p_best = share of the repetitions a method had the smallest loss, a tie split equally (sums to 1)")
    return Choice(best=str(table.index[0]), table=table, query=q, n_repeats=R, how=how, truth=truth)


def rank_rounds(estimates, oracle, query="full", methods=None, n_repeats: int = 20, metric: str | None = None,
                rng=0):
    """``ldpopt.choose`` for τ rounds of a longitudinal oracle: NDSS 2020 §V-D's procedure with the rounds'
    joint law. Fit: Norm-Sub of the rounds' mean f̃ as the truth when the rounds show no drift (the users
    keep their value, the setting the oracle's memo is designed for), an integer population of the same n;
    R re-simulations of the τ rounds' counts, exact in joint law (``oracle.sample_rounds``: the memo shared
    by the rounds). With drift (:func:`ldpopt.multi.drift.rounds_drift`: consecutive rounds' change beyond
    their noise, z ≥ 2), per-round truths shrunk toward the mean, drawn by
    :func:`ldpopt.multi.drift.sample_drift_rounds` and each round scored against its own truth; a
    UserWarning when the drift is unclear (2 ≤ z < 3). The same is done in the worlds of the least and
    the most drift the rounds cannot rule out (:func:`ldpopt.multi.drift.plausible_weights`: the
    rounds' deviation from their mean beyond the noise, ∓ 2 SE), where they differ from the fitted one,
    and in the sparse world where the rounds are consistent with it (the fitted drift with all the mass
    on the values above the noise, :func:`ldpopt.multi.drift.sparse_support`: the Norm-Sub fit turns the
    noise of the values nobody holds into mass, a world that favours Norm-Sub over Norm-Hyb).
    Every candidate is scored in each world: the per-round ``methods`` (default the closed forms)
    applied round by round, and the across-rounds problems (:data:`ldpopt.multi.rounds.ACROSS`); loss:
    the mean over rounds of the full-domain MSE (or MAE) against the world's truth.

    The pick is the *safe choice*: the candidate whose worst ratio to the world's best loss over the
    worlds (``table["worst"]``) is smallest, ties by the fitted world's loss. ``Choice.cannot_tell``
    (and a UserWarning) when that worst ratio, at the upper end of its re-simulation error
    (``table["worst_upper"]``: the ratio times exp(2 paired SEs of its log) in each world), exceeds
    :data:`TELL_RATIO` = 1.2: the rounds cannot say which candidate is within 1.2× of the best
    (docs/longitudinal.md). Where the worst ratio itself is within 1.2 and only its upper bound is not,
    R more re-simulations of every world are drawn, up to :data:`TELL_DRAWS` × R in all, before the
    flag is decided (the first R are the draws without this step).

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

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.longitudinal import LOSUE
    >>> from ldpopt.recommend import rank_rounds
    >>> o = LOSUE(4.0, 4, eps_1=1.0)
    >>> tc = np.array([400, 300, 200, 100])
    >>> ests = [o.estimate(tc * o.p + (1000 - tc) * o.q, 1000)] * 3
    >>> choice = rank_rounds(ests, o, methods=["norm-sub"], n_repeats=2)
    >>> "norm-sub" in choice.table.index and choice.best in choice.table.index
    True
    """
    import pandas as pd

    from .multi.drift import (
        Z_DRIFT,
        Z_PLAUSIBLE,
        Z_UNCLEAR,
        drift_rounds,
        plausible_weights,
        rounds_drift,
        sample_drift_rounds,
        sparse_support,
    )
    from .multi.rounds import ACROSS, check_rounds, rounds_covariance, rounds_problem

    ests = check_rounds(estimates, oracle)
    q = parse_query(query, metric)
    if q.kind != "full":
        raise ValueError(f"query must be 'full' for a longitudinal choice, got {query!r}")
    names = [r.name for r in records(methods)]
    tau, n, d = len(ests), ests[0].n, oracle.d
    drift = rounds_drift(ests, oracle)
    # the worlds re-simulated: the fitted drift first (its draws are the one-world procedure's, draw for
    # draw), then the least and the most drift the rounds cannot rule out, each where it differs from
    # the worlds before it
    worlds = [drift_rounds(ests, w) for w in (drift["weight"], *plausible_weights(ests, drift))]
    # and, where the rounds are consistent with it, the sparse world: the fitted drift with all the mass
    # on the values above the noise (the Norm-Sub fit turns the noise of the values nobody holds into
    # mass, a world that favours Norm-Sub); last, so the worlds before it are drawn as without it
    support = sparse_support(ests, oracle)
    if support is not None:
        worlds.append(drift_rounds(ests, drift["weight"], support=support))
    gen = as_generator(rng)
    all_names = names + list(ACROSS)
    world_pops: list = []
    sparse = False  # the sparse world is re-simulated (the last one)
    for i, g in enumerate(worlds):
        pops = np.stack([population(gt, n) for gt in g])  # τ rounds
        if all(not np.array_equal(pops, p) for p in world_pops):
            world_pops.append(pops)
            sparse = i == 3
    def simulate(R: int) -> np.ndarray:
        """(methods, worlds, R) losses of R more re-simulations of every world, drawn world by world."""
        out = np.empty((len(all_names), len(world_pops), R))
        for j, pops in enumerate(world_pops):
            truths = pops / n

            def loss(F, truths=truths):
                err = np.asarray(F).reshape(tau, d) - truths
                return float(np.mean(err ** 2 if q.metric == "mse" else np.abs(err)))

            constant = bool((pops == pops[0]).all())
            for r in range(R):  # R re-simulations (each solves the across-rounds problems once)
                C = oracle.sample_rounds(pops[0], tau, gen) if constant else sample_drift_rounds(oracle, pops, gen)
                sim = [oracle.estimate(c, n) for c in C]
                for i, m in enumerate(names):
                    out[i, j, r] = loss([_methods.postprocess(e, m) for e in sim])
                for k, (coupling, lam) in enumerate(ACROSS.values()):
                    out[len(names) + k, j, r] = loss(rounds_problem(sim, oracle, coupling=coupling,
                                                                    smooth=lam).solve().f)
        return out

    L = simulate(n_repeats)
    # more re-simulations only where the answer hangs on their error: the safe choice's worst ratio is
    # within TELL_RATIO but its upper bound is not; at most TELL_DRAWS × R in all (the first R are the
    # draws without this step, draw for draw)
    while L.shape[2] < TELL_DRAWS * n_repeats:
        M = L.mean(axis=2)
        worst = worst_regret(q, M)
        pick = int(np.lexsort((M[:, 0], worst))[0])
        if worst[pick] > TELL_RATIO or _worst_upper(L)[pick] <= TELL_RATIO:
            break
        L = np.concatenate([L, simulate(n_repeats)], axis=2)
    R_all = L.shape[2]
    truth = world_pops[0].mean(axis=0) / n
    worst = worst_regret(q, L.mean(axis=2))
    upper = _worst_upper(L)
    L0 = L[:, 0]
    table = pd.DataFrame({"loss": L0.mean(axis=1), "se": L0.std(axis=1, ddof=1) / np.sqrt(R_all),
                          "p_best": win_shares(L0), "tiebreak": np.zeros(len(all_names)), "worst": worst,
                          "worst_upper": upper}, index=pd.Index(all_names, name="method"))
    # the safe choice: the smallest worst ratio to the best over the plausible drifts; ties by the
    # fitted world's loss, then its win share
    table = table.sort_values(["worst", "loss", "p_best"], ascending=[True, True, False], kind="stable")
    table["rank"] = np.arange(1, len(table) + 1)
    best = str(table.index[0])
    cannot_tell = bool(table["worst_upper"].iloc[0] > TELL_RATIO)
    drift = {**drift, "worlds": len(world_pops), "sparse": sparse}
    import warnings

    if drift["status"] == "unclear":
        warnings.warn(f"choose: cannot tell whether the {tau} rounds drift (z = {drift['z']:.2f} between "
                      f"{Z_UNCLEAR:g} and {Z_DRIFT:g}); the re-simulation uses the shrunken per-round truths "
                      f"(weight {drift['weight']:.2f}); Choice.drift has the statistic", UserWarning, stacklevel=3)
    if cannot_tell:
        warnings.warn(f"choose: cannot tell which candidate is best: over the {len(world_pops)} drifts these "
                      f"{tau} rounds cannot rule out, no candidate is within {TELL_RATIO:g}x of the best in every "
                      f"one; returning the safe choice {best} (worst ratio {table['worst'].iloc[0]:.2f}, upper "
                      f"bound {table['worst_upper'].iloc[0]:.2f}); Choice.cannot_tell is True", UserWarning,
                      stacklevel=3)
    a, b = rounds_covariance(ests, oracle)
    share = float(np.mean(b / (a + b)))
    more = (f" per world ({n_repeats}, then more while only the re-simulation error put the pick's worst ratio "
            f"beyond {TELL_RATIO:g})" if R_all > n_repeats else " per world")
    fit = ("Norm-Sub fit of the rounds' mean estimate as truth (users keep their value)" if drift["weight"] == 0.0
           else f"per-round truths shrunk toward the rounds' mean (weight {drift['weight']:.2f}; users change value "
                f"the fewest ways that make them, a new memo each)")
    if len(world_pops) > 1:
        fit += (f"; also the least and the most drift the rounds cannot rule out (deviation from the rounds' "
                f"mean ∓ {Z_PLAUSIBLE:g} SE){' and the sparse world (the mass on the values above the noise)' if sparse else ''}"
                f": {len(world_pops) - 1} more worlds; ranked by the worst over the "
                f"worlds of loss ÷ the world's best loss (the safe choice)")
    if cannot_tell:
        fit += (f"; cannot tell: the safe choice's worst ratio may exceed {TELL_RATIO:g} (upper bound "
                f"{table['worst_upper'].iloc[0]:.2f})")
    how = (f"NDSS §V-D procedure over {tau} rounds of {oracle.label}: drift {drift['status']} (z = {drift['z']:.2f}: "
           f"consecutive rounds' change beyond their noise); {fit}, {R_all} re-simulations{more} of the {tau} "
           f"rounds exact in joint law (one memo per user and value), loss = {q.metric.upper()} averaged over "
           f"rounds against each round's truth. Reasons: "
           f"the memo carries {share:.0%} of each round's variance (averaged over values), which no "
           f"post-processing across rounds can remove; privacy: one report ε₁ = {oracle.epsilon_first():.3g}, "
           f"{tau} reports of one value ε = {oracle.epsilon_rounds(tau):.3g}, any number ε∞ = {oracle.epsilon:.3g}")
    return Choice(best=best, table=table, query=q, n_repeats=R_all, how=how, truth=truth,
                  drift=drift, cannot_tell=cannot_tell,
                  world_losses=L[[all_names.index(m) for m in table.index]])
