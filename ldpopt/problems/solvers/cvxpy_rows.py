"""A problem's constraints as linear rows over its variable by cvxpy's compilation, and multipliers on
those rows back to the problem's named constraints by cvxpy's inversion of it: the rows of any
constraint a user writes, for ldpopt's own solvers of them (the interior point, :mod:`.ipm`; the
direct QP route, :mod:`.direct_qp`)."""

from __future__ import annotations

from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

__all__ = ["compile_rows", "named_duals"]


def compile_rows(problem):
    """(A_E, b_E, A_I, b_I, cvxpy problem, chain, inverse data) of the problem's constraints in the
    solver's variable x, or (None, why) when they are not linear rows over x alone. The objective is
    Σ x, there only to keep every value a variable of the compilation: a linear one compiles in 2.1 ms
    where ½‖x‖² took 3.4 (d = 100, the simplex; its quadratic coefficients were extracted for nothing)."""
    x = problem.x
    prob = cp.Problem(cp.Minimize(cp.sum(x)), list(problem._named.values()))
    try:
        data, chain, inv = prob.get_problem_data("CLARABEL", verbose=False, solver_opts={})
    except (cp.error.SolverError, cp.error.DCPError, ValueError) as exc:
        return None, f"cvxpy could not compile the constraints: {exc}"
    dims = data["dims"]
    other = (dims.exp, len(dims.soc), len(dims.psd), len(dims.p3d), len(getattr(dims, "pnd", []) or []))
    if any(other):
        return None, "a constraint is not linear (cones besides equalities and inequalities)"
    d = x.size
    offset = next((i.var_offsets[x.id] for i in inv if hasattr(i, "var_offsets") and x.id in i.var_offsets), None)
    if offset != 0 or data["c"].shape[0] != d:
        return None, "the compiled constraints have variables besides f"
    A = sp.csr_array(data["A"])
    m_e = dims.zero
    return (A[:m_e], np.asarray(data["b"][:m_e], float), A[m_e:], np.asarray(data["b"][m_e:], float),
            prob, chain, inv), ""


def named_duals(prob, chain, inv, x, y, z, s, m, problem):
    """The multipliers of the problem's own constraints, by cvxpy's inversion of its compilation
    (the layout Clarabel's answer has: x, then z = (y, z)), times m (φ = J/m)."""
    raw = SimpleNamespace(x=x, z=np.concatenate([y, z]), s=np.concatenate([np.zeros(y.size), s]),
                          status="Solved", solve_time=0.0, iterations=0, obj_val=0.0)
    prob.unpack_results(raw, chain, inv)
    out = {}
    for name, con in problem._named.items():
        dv = con.dual_value
        if dv is None:
            out[name] = None
        else:
            dv = np.asarray(dv, dtype=np.float64) * m
            out[name] = float(dv) if dv.ndim == 0 else dv
    return out
