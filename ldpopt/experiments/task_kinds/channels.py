r"""Task kind ``channels``: the two-round memoised channels of longitudinal collection, estimated
three ways, against the one-round oracle at the same total ε (
:mod:`ldpopt.oracles.channel`).

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.channels`.
"""

from __future__ import annotations

import numpy as np

from ...methods.channel_inverse import invert
from ...methods.channel_mle import channel_mle
from ...methods.normalize import project_simplex
from ...oracles.channel import Channel, memoised_grr, memoised_unary
from ...queries import mse
from ..registry import kind
from ..toolkit import dataset_of, params

__all__ = ["ESTIMATORS", "FAMILIES", "channels", "designs"]

#: the config's ``methods`` (any subset, in any order)
ESTIMATORS = ("inverse", "inverse-normsub", "mle")
#: the task's ``oracle``: a memoised family
FAMILIES = ("grr", "sue", "oue")


def _one_round(oracle: str, epsilon: float, d: int) -> Channel:
    if oracle == "grr":
        return Channel.grr(epsilon, d)
    from ...oracles.unary import OUE, SUE

    o = (SUE if oracle == "sue" else OUE)(epsilon, d)
    return Channel.support(o.p, o.q, d, name=f"{oracle}(eps={epsilon:g})")


def designs(task, d: int) -> list[tuple[str, float, Channel]]:
    """[(design label, ε_report or nan, one report's channel)]: one-round first, then each ratio."""
    if task.oracle not in FAMILIES:
        raise ValueError(f"oracle of a channels config must be one of {list(FAMILIES)}, got {task.oracle!r}")
    ratios = params(task).get("report_ratios")
    if not ratios:
        raise ValueError("params.report_ratios must list ε_report / ε_memo ratios (> 0), e.g. [0.5, 1, 2]")
    ratios = [float(r) for r in ratios]
    if any(not (np.isfinite(r) and r > 0) for r in ratios):
        raise ValueError(f"params.report_ratios must be finite and > 0, got {ratios}")
    eps = float(task.epsilon)
    out = [("one-round", float("nan"), _one_round(task.oracle, eps, d))]
    for r in ratios:
        ch = (memoised_grr(eps, r * eps, d) if task.oracle == "grr"
              else memoised_unary(eps, r * eps, d, kind=task.oracle))
        out.append((f"memo r={r:g}", r * eps, ch))
    return out


@kind("channels")
def channels(task) -> list[dict]:
    want = set(task.methods)
    if not want or want - set(ESTIMATORS):
        raise ValueError(f"methods of a channels config must be among {list(ESTIMATORS)}, got {sorted(want)}")
    ds = dataset_of(task)
    rng = task.rng()
    f = ds.frequencies
    rows = []
    for design, eps_rep, ch in designs(task, ds.d):
        counts = ch.sample_counts(ds.counts, rng)
        extra = {"design": design, "eps_report": eps_rep, "eps_one_report": ch.epsilon}

        def row(est, metric, value, design=design, extra=extra):
            rows.append({"method": f"{design}:{est}", "metric": metric, "value": float(value),
                         "estimator": est, **extra})

        if want & {"inverse", "inverse-normsub"}:
            inv = invert(ch, counts)
            if "inverse" in want:
                row("inverse", "mse", mse(inv.f, f))
                row("inverse", "analytic-mse", np.mean(inv.variance(f)))
            if "inverse-normsub" in want:
                row("inverse-normsub", "mse", mse(project_simplex(inv.f), f))
        if "mle" in want:
            row("mle", "mse", mse(channel_mle((ch, counts), tol=1e-10).f, f))
    return rows
