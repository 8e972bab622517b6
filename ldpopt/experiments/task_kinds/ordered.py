"""Task kind ``ordered``: post-processing an estimate whose domain is ordered — the Wiener filters of
Fang et al. (IEEE S&P 2023: DW, IIW, AMRP), DW-simplex and empirical-Bayes shrinkage beside Norm-Sub,
the smoothness-penalised CLS and EMS — MSE over the whole domain and per frequency band.

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.ordered`; the benchmark measuring
the same methods (and conformance with the authors' code): benchmarks/bench_ordered.py.
"""

from __future__ import annotations

import time

import numpy as np

from ... import methods as _methods
from .. import toolkit
from ..registry import kind

__all__ = ["BANDS", "EXTRA", "LAMBDAS", "bands", "ems_grr", "ordered", "ordered_dataset", "pen_cls", "sure_lambda"]

#: the frequency bands rows are reported for, besides the whole domain (:func:`bands`)
BANDS = ("head", "mid", "tail")
#: the kind's methods that are not registered post-processing methods
EXTRA = ("pen-cls", "ems")
#: the grid of λ :func:`sure_lambda` chooses from
LAMBDAS = np.logspace(-3, 7, 41)
_OWN_KEYS = ("first", "shuffle")


def ordered_dataset(spec):
    """The dataset a config names: any :func:`ldpopt.experiments.toolkit.load_dataset` spec, plus two
    keys of this kind: ``first = K`` keeps values 0…K−1 (in the dataset's order; e.g. FIMI retail's
    first 256 item ids), ``shuffle = SEED`` puts the values in a fixed random order (a categorical
    domain read as ordered: the order carries no information). Returns the counts (int64)."""
    if isinstance(spec, str):
        return np.asarray(toolkit.load_dataset(spec).counts, dtype=np.int64)
    kw = dict(spec)
    own = {k: kw.pop(k) for k in _OWN_KEYS if k in kw}
    base = toolkit.load_dataset(tuple(sorted(kw.items())))
    counts = np.asarray(base.counts, dtype=np.int64)
    if "first" in own:
        k = own["first"]
        if not isinstance(k, int) or not 2 <= k <= counts.size:
            raise ValueError(f"dataset {kw['name']!r}: first must be an int in [2, {counts.size}], got {k!r}")
        counts = counts[:k]
    if "shuffle" in own:
        counts = counts[np.random.default_rng(own["shuffle"]).permutation(counts.size)]
    if counts.sum() < 1:
        raise ValueError(f"dataset {kw['name']!r}: no users left in the values kept")
    return counts


def bands(f: np.ndarray) -> dict:
    """Indices of the bands by the true frequency: ``head`` the top 10 % of the values (at least 1),
    ``mid`` the next 40 % (to d/2), ``tail`` the rest; ties broken by index (stable sort)."""
    order = np.argsort(-f, kind="stable")
    d = f.size
    k1, k2 = max(1, d // 10), max(2, d // 2)
    return {"head": order[:k1], "mid": order[k1:k2], "tail": order[k2:]}


def sure_lambda(est) -> float:
    """λ of the smoothness-penalised CLS: the minimiser over :data:`LAMBDAS` of Stein's unbiased
    risk of the unconstrained smoother (I + λD₁ᵀD₁)⁻¹f̃, computed in the DCT-II basis that
    diagonalises D₁ᵀD₁ (eigenvalues 2 − 2cos(πk/d)), with σ̄² = Var(f̃_v) at f = 1/d (the paper
    gives no rule for λ: this is ours)."""
    from scipy.fft import dct

    d = est.d
    c = dct(est.f_tilde, norm="ortho")
    mu = 2.0 - 2.0 * np.cos(np.pi * np.arange(d) / d)
    s2 = float(est.variance(1.0 / d))
    shrink = 1.0 / (1.0 + LAMBDAS[:, None] * mu[None, :])
    risk = np.sum(((1 - shrink) * c) ** 2, axis=1) + 2 * s2 * shrink.sum(axis=1) - d * s2
    return float(LAMBDAS[int(np.argmin(risk))])


def pen_cls(est) -> tuple[np.ndarray, dict]:
    """The smoothness-penalised CLS: argmin ‖f − f̃‖² + λ‖D₁f‖² over the simplex (λ by
    :func:`sure_lambda`), solved and certified by :class:`ldpopt.Problem`; RuntimeError when the
    solution is not certified optimal. Returns (f, {"lam": λ})."""
    import cvxpy as cp

    from ... import Problem
    from ...problems import Simplex

    lam = sure_lambda(est)
    sol = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + lam * cp.sum_squares(cp.diff(f)),
                  [Simplex()]).solve(progress=False)
    if sol.status != "optimal":
        raise RuntimeError(f"penalised CLS not certified: {sol.status} {sol.message}")
    return sol.f, {"lam": lam}


def ems_grr(est) -> np.ndarray:
    """EMS (:func:`ldpopt.numeric.ems`) on the estimate's support counts with the GRR channel
    (p on the diagonal, q elsewhere): the only oracle whose reports are one value each."""
    from ...numeric import ems

    K = np.full((est.d, est.d), est.q) + (est.p - est.q) * np.eye(est.d)
    return ems(est.counts, K).f


def _method_names(task) -> list[str]:
    """The config's methods; ``"all"`` is every registered method, those assuming an order included
    (this kind's estimates declare their domain ordered), and :data:`EXTRA`."""
    names = list(task.methods)
    if names == ["all"]:
        return list(_methods.names()) + list(EXTRA)
    return toolkit.method_names(task)


@kind("ordered", own_data=True, registry_methods=EXTRA, oracle_params=True)
def ordered(task) -> list[dict]:
    """One estimate (the task's oracle and ε on the dataset's counts, declared ordered), every method
    on it, rows ``mse`` (whole domain) and ``mse-head`` / ``mse-mid`` / ``mse-tail`` (mean of (f' − f)²
    over the band's values) and ``seconds`` per method."""
    names = _method_names(task)
    if "ems" in names and task.oracle != "grr":
        raise ValueError(f"method 'ems' of an ordered config needs oracle 'grr' (its channel), got {task.oracle!r}")
    counts = ordered_dataset(task.dataset)
    f = counts / counts.sum()
    est = toolkit.simulate(task, counts, counts.size, task.rng()).as_ordered()
    mp = toolkit.params(task).get("method_params") or {}
    B = bands(f)
    rows = []
    for m in names:
        t0 = time.perf_counter()
        if m == "pen-cls":
            out = pen_cls(est)[0]
        elif m == "ems":
            out = ems_grr(est)
        else:
            out = _methods.postprocess(est, m, **mp.get(m, {}))
        secs = time.perf_counter() - t0
        sq = (np.asarray(out, dtype=np.float64) - f) ** 2
        rows.append({"method": m, "metric": "mse", "value": float(sq.mean())})
        rows += [{"method": m, "metric": f"mse-{b}", "value": float(sq[idx].mean())} for b, idx in B.items()]
        rows.append({"method": m, "metric": "seconds", "value": secs})
    return [{**r, "d": int(f.size), "n_users": int(counts.sum())} for r in rows]
