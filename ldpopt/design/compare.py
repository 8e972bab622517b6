"""Before collecting: the expected workload error of designed mechanisms beside every built-in oracle
(the designs' exact covariance; the built-ins' raw estimates through their exact pair covariance).

Notes: docs/notes/design.md, "ldpopt.design.compare"."""

from __future__ import annotations

import numpy as np

from .._validation import check_n
from . import workloads as _w

__all__ = ["compare"]


def compare(workload, f, n: int, epsilon: float, designs=(), builtins=None) -> list[dict]:
    """Rank mechanisms by the workload's expected mean squared error per query at frequencies ``f``
    and ``n`` users (the raw estimates: a designed oracle's reconstruction, a built-in's f̃).

    Parameters
    ----------
    workload : array_like (queries, d)
        The query matrix.
    f : array_like (d,)
        A prior or the expected frequencies (non-negative, summing to 1).
    n : int
        Users.
    epsilon : float
        ε of the built-ins.
    designs : iterable of DesignedOracle or Design
        Designed mechanisms (their own ε).
    builtins : iterable of str, optional
        Registry names (default every pure one-shot oracle, ``oracles.available()``).

    Returns
    -------
    list of dict
        One row per mechanism, best first: ``mechanism``, ``epsilon``, ``mse`` (None for an oracle
        whose count covariance is not analytic, last).

    Raises
    ------
    ValueError
        If the workload, f or n is malformed, or a design's d differs from the workload's.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import design
    >>> W = design.workloads.all_ranges(8)
    >>> D = design.design("ranges", 1.0, d=8, iterations=60, init="random", rng=0)
    >>> rows = design.compare(W, np.full(8, 1 / 8), 1000, 1.0, designs=[D])
    >>> rows[0]["mechanism"]
    'designed'
    """
    from .. import oracles
    from ..estimate import Estimate
    from ..uncertainty.analytic import query_variance

    W = _w.as_workload(workload)
    d = W.shape[1]
    fv = np.asarray(f, dtype=np.float64)
    if fv.shape != (d,) or not np.all(np.isfinite(fv)) or np.any(fv < 0) or abs(fv.sum() - 1) > 1e-9:
        raise ValueError(f"f must be {d} non-negative frequencies summing to 1")
    n = check_n(n, "n")
    rows = []
    for D in designs:
        o = D.oracle() if hasattr(D, "oracle") else D
        if o.d != d:
            raise ValueError(f"designs: a design has d = {o.d}, the workload d = {d}")
        rows.append({"mechanism": "designed", "epsilon": o.epsilon, "mse": o.workload_error(W, fv, n) / W.shape[0]})
    for name in (oracles.available() if builtins is None else builtins):
        o = oracles.get(name, epsilon, d)
        est = Estimate.from_frequencies(fv, n, o.epsilon, o.p, o.q, oracle=o.name,
                                        **{**o.params(), **o.structural_params()})
        try:
            mse = float(np.mean(query_variance(est, "base", fv, W)))
        except ValueError:
            mse = None
        rows.append({"mechanism": name, "epsilon": o.epsilon, "mse": mse})
    return sorted(rows, key=lambda r: (r["mse"] is None, r["mse"] if r["mse"] is not None else 0.0))
