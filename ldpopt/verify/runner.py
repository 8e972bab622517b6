"""The grid: which instances every claim runs on, honouring the requested d and n, and a row saying
why wherever a claim cannot run at the requested size."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import oracles as _oracles
from .equivalences import check_mle_formulas, distance_rows, equivalence_rows, equivalences
from .instances import LIKELIHOOD_MAX_D, MC_MAX_D, SOLVER_MAX_D, instance
from .montecarlo import claim_ids, is_finding, mc_rows
from .result import ClaimResult, not_refereed

# oracles=None: every registered pure oracle (``ldpopt.oracles.available()``, at run time)
_DEFAULTS = dict(oracles=None, epsilons=[0.5, 2.0, 8.0],
                 ns=[10_000, 1_000_000], ds=[10, 1000], seeds=[0], mc_ds=[16], mc_n=10_000, mc_reps=600,
                 mc_slow_reps=60, distance_ds=[10, 1000, 100_000])
_QUICK = dict(oracles=["grr", "oue", "olh"], epsilons=[1.0], ns=[10_000], ds=[10, 200], seeds=[0], mc_ds=[16],
              mc_n=10_000, mc_reps=150, mc_slow_reps=15, distance_ds=[10, 200])


def run(oracles=None, epsilons=None, ns=None, ds=None, seeds=None, solver=None, quick: bool = False,
        mc: bool = True, mc_ds=None, mc_n=None, solver_max_d: int | None = None,
        progress: Callable[[str], None] | None = None, methods=None):
    """Run every claim over the grid; return a pandas DataFrame (one row per claim × instance × referee).

    Equivalences and the MLE-Apx formula findings: oracles × epsilons × ds × seeds at n = ns[0],
    refereed by the certificate at every d, and by ``solver`` (default Clarabel; OSQP too for
    Norm-Sub = CLS outside ``quick``; ``"none"`` for none) at d ≤ ``solver_max_d`` (default
    2000; the likelihoods by Clarabel at d ≤ 200, by ldpopt's sequential-QP route above). 'CLS ≈ MLE': oracles × epsilons × ns × ds. Monte-Carlo: oracles ×
    epsilons[0] × seeds at each of ``mc_ds`` (default: the requested ds, else 16) with n = ``mc_n``
    (default 10⁴); a requested d above 2000 gives ``not refereed`` rows that say why. ``methods``:
    the equivalence rows of these methods only (names, records, callables, ``FILE.py:NAME``; each
    must state its problem), default every registered method that states one.

    Parameters
    ----------
    oracles, epsilons, ns, ds, seeds : sequence, optional
        The grid (defaults: every registered oracle and the full or ``quick`` grid).
    solver : str, optional
        The cvxpy referee (default Clarabel; ``"none"`` for none).
    quick : bool, default False
        The small grid.
    mc : bool, default True
        Run the Monte-Carlo claims.
    mc_ds : sequence of int, optional
        Domain sizes of the Monte-Carlo claims.
    mc_n : int, optional
        Users of the Monte-Carlo claims (default 10⁴).
    solver_max_d : int, optional
        Largest d the solver referees (default 2000).
    progress : callable, optional
        Called with a line of text per step.
    methods : sequence, optional
        The methods whose equivalence rows run.

    Returns
    -------
    pandas.DataFrame
        One row per claim × instance × referee (:meth:`ClaimResult.as_row`).

    Raises
    ------
    ValueError
        An empty grid list, a d below 2, an unknown oracle or method.

    Examples
    --------
    >>> from ldpopt import verify
    >>> rows = verify.run(oracles=["grr"], epsilons=[1.0], ns=[1000], ds=[8], seeds=[0], solver="none",
    ...                   mc=False, quick=True, methods=["norm-sub"])
    >>> rows[["claim", "verdict", "referee"]].values.tolist()[:2]
    [['norm-sub=cls', 'holds', 'certificate'], ['mle-apx-formula-arxiv', 'holds', 'certificate']]
    """
    import pandas as pd

    cfg: dict[str, Any] = dict(_QUICK if quick else _DEFAULTS)
    for opt, val in (("oracles", oracles), ("epsilons", epsilons), ("ns", ns), ("ds", ds), ("seeds", seeds),
                     ("mc_ds", mc_ds)):
        if val is not None:
            val = list(val)
            if not val:
                raise ValueError(f"{opt} must not be empty")
            cfg[opt] = val
    if ds is not None:
        cfg["distance_ds"] = sorted(set(cfg["ds"]))
        if mc_ds is None:
            cfg["mc_ds"] = sorted(set(cfg["ds"]))
    if mc_n is not None:
        cfg["mc_n"] = int(mc_n)
    for opt in ("ds", "mc_ds", "ns"):
        for v in cfg[opt]:
            if int(v) < (2 if opt != "ns" else 1):
                raise ValueError(f"{opt.rstrip('s') if opt != 'mc_ds' else 'mc_d'} must be >= 2, got {v}")
    if cfg["oracles"] is None:
        cfg["oracles"] = _oracles.available()
    for name in cfg["oracles"]:
        if name not in _oracles.available():
            raise ValueError(f"oracles must be among {_oracles.available()}, got {name!r}")
    if solver is None:
        solvers = ["CLARABEL"] if quick else ["OSQP", "CLARABEL"]
    elif str(solver).lower() == "none":
        solvers = []
    else:
        solvers = [str(solver).upper()]
    if methods is not None:
        methods = list(equivalences(methods).values())  # checked before any work
        methods = [spec["method"] for spec in methods]
    smax = SOLVER_MAX_D if solver_max_d is None else int(solver_max_d)
    say = progress or (lambda msg: None)
    rows: list[ClaimResult] = []
    n0 = int(cfg["ns"][0])
    for oracle in cfg["oracles"]:
        for eps in cfg["epsilons"]:
            # the n = ns[0] instances and their closed-form outputs, reused by the 'CLS ≈ MLE' rows on the
            # same (n, d, seed) (at d = 10⁷ a simulation costs ~1.5 s CPU and EM ~5 s)
            shared: dict[tuple, tuple] = {}
            for d in cfg["ds"]:
                for seed in cfg["seeds"]:
                    say(f"equivalences {oracle} eps={eps} d={d} n={n0} seed={seed}")
                    key = (n0, int(d), int(seed))
                    if key not in shared:
                        shared[key] = (instance(oracle, float(eps), *key), {})
                    est, memo = shared[key]
                    # OSQP is slow on large CLS (minutes at d = 1e5): Clarabel only above d = 2000
                    sv = [s for s in solvers if not (s == "OSQP" and int(d) > 2000)]
                    rows += equivalence_rows(est, int(seed), sv, smax, min(smax, LIKELIHOOD_MAX_D), memo,
                                             methods=methods)
                    rows += check_mle_formulas(est, int(seed), memo)
            for n in cfg["ns"]:
                for d in cfg["distance_ds"]:
                    for seed in cfg["seeds"]:
                        key = (int(n), int(d), int(seed))
                        est, memo = shared.pop(key, None) or (instance(oracle, float(eps), *key), {})
                        rows += distance_rows(est, int(seed), memo)
        if mc:
            eps0 = float(cfg["epsilons"][0])
            for d in cfg["mc_ds"]:
                for seed in cfg["seeds"]:
                    if int(d) > MC_MAX_D:
                        rows += _mc_too_large(oracle, eps0, cfg["mc_n"], int(d), int(seed))
                        continue
                    say(f"monte-carlo {oracle} eps={eps0} d={d} n={cfg['mc_n']} seed={seed}")
                    rows += mc_rows(oracle, eps0, int(cfg["mc_n"]), int(d), cfg["mc_reps"], cfg["mc_slow_reps"],
                                    int(seed))
    _release()
    return pd.DataFrame([r.as_row() for r in rows])


def _release() -> None:
    """Drop the per-run caches of large-d arrays (the last estimate's separables, the compiled simplex)."""
    from .certificate_referee import release
    from .instances import _weights

    release()
    _weights.cache_clear()


def _mc_too_large(oracle, eps, n, d, seed) -> list[ClaimResult]:
    why = (f"Monte-Carlo claims run at d <= {MC_MAX_D} (they keep repetitions x d outputs of 14 methods and "
           f"run every method each repetition); asked d = {d}: choose a smaller one with --mc-d")
    statement = f"(Monte-Carlo claim; not run at d = {d}: run it at d <= {MC_MAX_D} with --mc-d)"
    return [not_refereed(why, claim=cid, statement=statement,
                         kind="monte-carlo", oracle=oracle, epsilon=eps, n=int(n), d=d, seed=seed, metric="-",
                         unit="", op="<=", expected=None if is_finding(cid) else True, referee="monte-carlo")
            for cid in claim_ids(oracle)]
