"""Working-set screening for large domains: solve the dual on the values that can leave their lower
bound, check the rest in one pass, grow the set until the check passes.

Why: at d = 10⁶ the optimal support of a frequency vector is typically a few hundred to a few
thousand values (the rest sit at 0), and every Newton step on the multipliers would otherwise touch
all d values. With the rows' and the sum's multipliers (λ, y) the KKT conditions of a value v
outside the working set W hold with f_v = l_v exactly when h_v'(l_v) + t_v ≥ 0, t = λ1 + Aᵀy
(:mod:`.separable`); so after solving the problem restricted to W (the others fixed at l, their mass
moved to the right-hand sides) one vectorised pass over the domain either certifies the full
solution or names the values to add. It terminates: W grows strictly each round and is bounded by d.

Initial W: the K values with the largest −h_v'(l_v) (those that leave l first as the multipliers
fall) plus, for every row, its 64 such values (so that every row can reach its total), and every
value whose upper bound is not the implied one (a Box/upper value may sit at u).
"""

from __future__ import annotations

import numpy as np

from ..progress import out_of_time
from .dual import _d1, solve_multipliers
from .structure import Structure

__all__ = ["solve_screened"]

_MIN_D = 20_000  # below this the full solve is as fast


def _top(score, k):
    if k >= score.shape[0]:
        return np.arange(score.shape[0])
    return np.argpartition(-score, k - 1)[:k]


def solve_screened(sep, st: Structure, max_rounds: int = 30, max_iter: int = 50):
    """Same contract as :func:`.dual.solve_multipliers` (f, λ, y, info)."""
    d = st.d
    probe = sep.restrict(np.arange(2)) if hasattr(sep, "restrict") else None
    if d < _MIN_D or probe is None:
        return solve_multipliers(sep, st, max_iter=max_iter)
    d1l = _d1(sep, st.l)
    score = np.where(np.isnan(d1l), np.inf, -d1l)
    var = st.l < st.u
    score = np.where(var, score, -np.inf)  # fixed values never need to be in W
    k = min(d, max(4096, 8 * st.m))
    inW = np.zeros(d, bool)
    inW[_top(score, k)] = True
    inW[~st.implied_upper & var & np.isfinite(st.u)] = True
    A = st.A.tocsc() if st.m else None
    for r in range(st.m):
        cols = st.A.indices[st.A.indptr[r]:st.A.indptr[r + 1]]
        inW[cols[_top(score[cols], min(64, cols.size))]] = True
    inW &= var
    info = {"lambda_iterations": 0, "newton_iterations": 0, "line_search_failures": 0, "rounds": 0,
            "working_set": 0}
    lam = None
    AT = st.A.T.tocsr() if st.m else None
    for rnd in range(1, max_rounds + 1):
        W = np.flatnonzero(inW)
        out = ~inW
        f_out = st.l[out]
        sub = Structure(W.size, st.l[W], st.u[W], st.total - float(np.sum(f_out)),
                        A[:, W].tocsr() if st.m else st.A[:, :0],
                        st.b - (A[:, out] @ f_out if st.m else 0.0), st.ineq, st.sum_name, {},
                        st.implied_upper[W])
        fW, lam, y, inf = solve_multipliers(sep.restrict(W), sub, max_iter=max_iter, lam0=lam)
        for key in ("lambda_iterations", "newton_iterations", "line_search_failures"):
            info[key] += inf[key]
        info["rounds"], info["working_set"] = rnd, int(W.size)
        t = lam + (AT @ y if st.m else 0.0)
        with np.errstate(invalid="ignore"):
            viol = out & var & (d1l + t < 0)  # would leave l at these multipliers
        if not viol.any() or out_of_time():  # (solve(time_limit=...): the point so far)
            f = st.l.copy()
            f[W] = fW
            return f, lam, y, info
        idx = np.flatnonzero(viol)
        # add the violators and as many again of the next candidates (by how far they are inside)
        inW[idx] = True
        slack = np.where(out & var & ~viol, d1l + t, np.inf)
        extra = min(idx.size + 1024, int(np.sum(np.isfinite(slack))))
        if extra:
            inW[_top(-slack, extra)] = True
    # no convergence of the screening: the full solve
    f, lam, y, inf = solve_multipliers(sep, st, max_iter=max_iter, lam0=lam)
    info.update({k: info[k] + inf[k] for k in ("lambda_iterations", "newton_iterations", "line_search_failures")})
    return f, lam, y, info
