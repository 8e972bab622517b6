"""A problem's constraints as linear rows over its variable by cvxpy's compilation, and multipliers on
those rows back to the problem's named constraints by cvxpy's inversion of it: the rows of any
constraint a user writes, for ldpopt's own solvers of them (the interior point, :mod:`.ipm`; the
direct QP route, :mod:`.direct_qp`)."""

from __future__ import annotations

from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ..check.cones import dual_array

__all__ = ["AffineRows", "compile_rows", "named_duals"]


def compile_rows(problem):
    """(A_E, b_E, A_I, b_I, cvxpy problem, chain, inverse data) of the problem's constraints in the
    solver's variable x, or (None, why) when they are not linear rows over x alone. The objective is
    Σ x, there only to keep every value a variable of the compilation: a linear one compiles in 2.1 ms
    where ½‖x‖² took 3.4 (d = 100, the simplex; its quadratic coefficients were extracted for nothing)."""
    x = problem.x
    prob = cp.Problem(cp.Minimize(cp.sum(x)), list(problem.named_constraints.values()))
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
    out = {}
    with problem.cvxpy_lock:  # unpacked into the problem's own cvxpy objects, read at once (threads)
        prob.unpack_results(raw, chain, inv)
        for name, con in problem.named_constraints.items():
            dv = dual_array(con)
            if dv is None:
                out[name] = None
            else:
                dv = dv * m
                out[name] = float(dv) if dv.ndim == 0 else dv
    return out


def _simplex_rows(owner, k, equality, shape, d, s_f):
    """(rows in x, right-hand side) of the k-th constraint of a simplex-family built-in
    (``Constraint.simplex_parts``: f ≥ 0 built as ``f >= 0``, g = −s x; Σ f = total built as
    ``cp.sum(f) == total``, g = s 1ᵀx − total) — the Jacobian cvxpy's ``grad`` gives, −s·I and s·1ᵀ,
    without differentiating its expression (~1 ms at d = 100) — or None for anything else (a subclass
    included: its ``build`` may state other rows)."""
    from ..constraints.base import NonNegative, Simplex, SumTo

    if type(owner) not in (Simplex, NonNegative, SumTo):
        return None
    part = next((p for p in (owner.simplex_parts() or ()) if p[1] == k), None)
    if part is None:
        return None
    if part[0] == "nonnegative" and not equality and shape == (d,):
        return sp.csr_array((np.full(d, -s_f), np.arange(d), np.arange(d + 1)), shape=(d, d)), np.zeros(d)
    if part[0] == "sum" and equality and shape == ():
        return (sp.csr_array((np.full(d, s_f), np.arange(d), np.array([0, d])), shape=(1, d)),
                np.array([float(part[2])]))
    return None


class AffineRows:
    """The constraints' rows read one by one from their own expressions, without a cvxpy compilation:
    each named constraint an ``==`` or ``<=`` of an affine expression g(x) of the problem's variable
    alone, its rows J x (=, ≤) −g(0) with J cvxpy's Jacobian by :func:`~..objectives.recognise.cvxpy_grad`
    (the same bits as cvxpy's ``grad``), or for a user's constraint the rows the exact pre-check read
    in f (:func:`~..constraints.feasibility.affine_rows`, this solve's cache) times the unit s. The multiplier of a constraint is the solver's z on its
    rows times m, in the constraint's shape (column-major, as cvxpy's ``dual_value``): the KKT
    ∇φ + Jᵀz = 0 in x is ∇J + (∂g/∂f)ᵀ(m z) = 0 in f, the stationarity ldpopt's check reads, and what
    cvxpy's inversion gives (:func:`.cvxpy_rows.named_duals`). Compiling the constraints through
    cvxpy's chain cost 3.4–4.4 ms at d = 100 and 9 ms at d = 1,000 with 20 dense user rows."""

    def __init__(self, problem, parts):
        self.problem = problem
        self.parts = parts  # [(name, equality, shape, M (csr, rows in x), rhs)]
        eq = [p for p in parts if p[1]]
        ineq = [p for p in parts if not p[1]]
        d = problem.estimate.d
        stack = lambda ps: (sp.vstack([p[3] for p in ps], format="csr") if ps else sp.csr_array((0, d)),
                            np.concatenate([p[4] for p in ps]) if ps else np.zeros(0))
        self.A_E, self.b_E = stack(eq)
        self.A_I, self.b_I = stack(ineq)
        self.order = eq + ineq

    @classmethod
    def read(cls, problem):
        """The rows, or None where a constraint is not ``==``/``<=`` of an affine expression of x alone."""
        import cvxpy as cp

        from ..constraints.base import UserConstraint
        from ..constraints.feasibility import affine_rows
        from ..objectives.recognise import cvxpy_grad, set_value

        x, d = problem.x, problem.estimate.d
        parts = []
        with problem.cvxpy_lock:  # x is set to 0 to read the rows (threads: one at a time)
            saved = x.value
            try:
                set_value(x, np.zeros(d))
                for name, con in problem.named_constraints.items():
                    if type(con) not in (cp.constraints.Inequality, cp.constraints.Equality):
                        return None
                    g = con.expr
                    if not g.is_affine() or [v.id for v in g.variables()] != [x.id]:
                        return None
                    equality = isinstance(con, cp.constraints.Equality)
                    owner, k = problem.owners[name]
                    if (got := _simplex_rows(owner, k, equality, con.shape, d, problem.scale)) is not None:
                        parts.append((name, equality, con.shape, *got))
                        continue
                    if isinstance(owner, UserConstraint):  # the rows the pre-check read (f units), if it did
                        got = next((r for j, r in affine_rows(problem, owner) if j == k), None)
                        if got is not None and got[0].shape == (con.size, d) and got[2] != equality:
                            parts.append((name, equality, con.shape, sp.csr_array(got[0]) * problem.scale,
                                          np.asarray(got[1], dtype=np.float64)))
                            continue
                    g0 = np.atleast_1d(np.asarray(g.value, dtype=np.float64)).ravel(order="F")
                    jac = cvxpy_grad(g, {}).get(x)
                    if jac is None or not np.all(np.isfinite(g0)):
                        return None
                    M = sp.csr_array(jac).T.tocsr() if sp.issparse(jac) else sp.csr_array(np.atleast_2d(np.asarray(jac)).T)
                    if M.shape != (g0.size, d):
                        return None
                    parts.append((name, equality, con.shape, M, -g0))
            except Exception:  # noqa: BLE001 - anything cvxpy cannot differentiate here: its compilation instead
                return None
            finally:
                set_value(x, saved)
        return cls(problem, parts)

    def answer(self, x, z, s, m):
        """(f, named duals) from the solver's x and z (the equalities' rows first, then the inequalities')."""
        duals, at = {}, 0
        for name, _, shape, M, _ in self.order:
            k = M.shape[0]
            v = m * np.asarray(z[at:at + k], dtype=np.float64)
            at += k
            duals[name] = float(v[0]) if shape == () else v.reshape(shape, order="F")
        return x * self.problem.scale, duals
