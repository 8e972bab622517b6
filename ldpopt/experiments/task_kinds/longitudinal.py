"""Task kind ``longitudinal``: per-round post-processing against post-processing across rounds, on a
longitudinal (memoised) oracle.

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.longitudinal`.
"""

from __future__ import annotations

import numpy as np

from ...multi.rounds import rounds_problem
from ...oracles.longitudinal import longitudinal_oracle
from ..registry import kind
from ..toolkit import dataset_of, method_names, outputs, params

__all__ = ["ACROSS", "longitudinal"]

#: the across-rounds methods a config may name beside registered per-round methods: label → coupling,
#: and whether the change penalty ``params.smooth`` applies (:func:`ldpopt.multi.rounds.rounds_problem`)
ACROSS = {"rounds:shared": ("shared", False), "rounds:independent": ("independent", False),
          "rounds:shared+smooth": ("shared", True)}


def _setting(task):
    """(oracle, τ, λ) of a task, every parameter checked before any work."""
    p = params(task)
    tau = p.get("tau", 5)
    if isinstance(tau, bool) or not isinstance(tau, int) or tau < 2:
        raise ValueError(f"params.tau (rounds) must be an integer >= 2, got {tau!r}")
    ratio = p.get("eps1_ratio", 0.5)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio < 1:
        raise ValueError(f"params.eps1_ratio (ε₁ / ε∞) must be a number in (0, 1), got {ratio!r}")
    lam = p.get("smooth", 10.0)
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not np.isfinite(lam) or lam < 0:
        raise ValueError(f"params.smooth (λ of rounds:shared+smooth) must be a finite number >= 0, got {lam!r}")
    try:
        oracle = longitudinal_oracle(task.oracle, task.epsilon, dataset_of(task).d, eps_1=task.epsilon * float(ratio))
    except ValueError as e:
        raise ValueError(f"oracle {task.oracle!r} of a longitudinal config: {e}") from None
    return oracle, tau, float(lam)


def _scores(F, f, high) -> dict[str, float]:
    """Mean over rounds of ‖f_t − f‖², overall and summed over each band's values."""
    sq = (np.asarray(F, dtype=np.float64).reshape(len(F), -1) - f[None, :]) ** 2
    return {"mse": float(sq.sum(axis=1).mean()), "mse_high": float(sq[:, high].sum(axis=1).mean()),
            "mse_low": float(sq[:, ~high].sum(axis=1).mean())}


@kind("longitudinal", registry_methods=tuple(ACROSS))
def longitudinal(task) -> list[dict]:
    """One repetition: the dataset's n users keep their value for τ rounds and report through the
    task's longitudinal oracle (its real clients: one memo per user, re-randomised each round) at
    ε∞ = the task's ε, ε₁ = ε∞ · ``params.eps1_ratio``. Per-round methods post-process each round's
    estimate alone; ``rounds:*`` solve :func:`ldpopt.multi.rounds.rounds_problem` once on all rounds
    (status ``certified`` when ldpopt's checks passed). Rows: metrics ``mse``, ``mse_high`` (values
    with f_v ≥ 1/d) and ``mse_low`` (f_v < 1/d), each the mean over rounds of the squared error summed
    over the band's values."""
    oracle, tau, lam = _setting(task)
    names = method_names(task)
    ds = dataset_of(task)
    f = ds.counts / ds.n
    high = f >= 1.0 / ds.d
    rng = task.rng()
    values = np.repeat(np.arange(ds.d), ds.counts)
    clients = oracle.clients(ds.n, rng)
    ests = [oracle.estimate(oracle.aggregate(clients.report(values, rng)), ds.n) for _ in range(tau)]
    per_round = [outputs(e, [m for m in names if m not in ACROSS], params(task).get("method_params")) for e in ests]
    rows = []
    for m in names:
        status = ""
        if m in ACROSS:
            coupling, smoothed = ACROSS[m]
            sol = rounds_problem(ests, oracle, coupling=coupling, smooth=lam if smoothed else 0.0).solve()
            status = "certified" if sol.checks is not None and sol.checks.passed else str(sol.status)
            F = sol.f.reshape(tau, ds.d)
        else:
            F = np.stack([r[m] for r in per_round])
        rows += [{"method": m, "metric": k, "value": v, "status": status, "tau": tau,
                  "eps_1": oracle.eps_1, "n_users": ds.n} for k, v in _scores(F, f, high).items()]
    return rows
