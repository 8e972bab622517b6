"""Clarabel's conic data written straight from cvxpy's stuffed tensor: the same arrays, bit for bit,
without cvxpy's restructuring product.

cvxpy's ``ConicSolver.apply`` reorders the stuffed program's rows into the solver's cone convention
by multiplying its tensor by a block-diagonal restructuring matrix, then reduces the product into
``A`` and ``b``. That matrix is a signed permutation of the rows, so for a program without
Parameters :class:`Clarabel` writes each entry once at its new row, with its sign; anything else
goes to cvxpy's own ``apply``. :class:`CompiledProblem` is the ``cvxpy.Problem`` ldpopt builds:
cvxpy's, its solving chain's Clarabel replaced by :class:`Clarabel` (same name, options, solve and
inversion); every other solver's chain and cvxpy's cache of the compiled program are cvxpy's.

Derivation and measurements: docs/notes/problems.md, "ldpopt.problems.solvers.conic_format";
``benchmarks/bench_conic_format.py``.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from cvxpy import settings as s
from cvxpy.constraints import PSD, SOC, ExpCone, NonNeg, PowCone3D, PowConeND, Zero
from cvxpy.constraints.psd import SvecPSD
from cvxpy.cvxcore.python import canonInterface
from cvxpy.reductions.dcp2cone.cone_matrix_stuffing import ParamConeProg
from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL

__all__ = ["Clarabel", "CompiledProblem", "restructured_rows"]


def restructured_rows(constraints, exp_cone_order) -> tuple[np.ndarray, np.ndarray] | None:
    """(the new row of each stuffed row, its sign): cvxpy's restructuring of the cone program's rows
    (``ConicSolver.format_constraints``) as a signed permutation, the constraints' rows in their
    order. A ``Zero`` constraint's rows are negated (cvxpy's ``A x + b == 0`` becomes the solver's
    ``b - A x`` in the zero cone, after the solver's own sign flip); ``NonNeg`` and the PSD forms
    keep their rows; a second-order cone with k cones of dimension 1 + x puts cone c's ``t`` at
    c·(x + 1) and its ``X`` entries after it; an exponential cone (in ``exp_cone_order``) and a
    3-d power cone interleave their three arguments. None where a constraint is of another type
    (a ``PowConeND``: cvxpy formats it).

    Parameters
    ----------
    constraints : list
        The cone program's constraints (``ParamConeProg.constraints``), in order.
    exp_cone_order : list of int
        The solver's order of the exponential cone's arguments (``EXP_CONE_ORDER``).

    Returns
    -------
    (ndarray of int64, ndarray of float64) or None

    Examples
    --------
    >>> import cvxpy as cp
    >>> from ldpopt.problems.solvers.conic_format import restructured_rows
    >>> x = cp.Variable(2)
    >>> perm, sign = restructured_rows([cp.constraints.Zero(x), cp.constraints.SOC(x[0], x)], [0, 1, 2])
    >>> perm.tolist(), sign.tolist()
    ([0, 1, 2, 3, 4], [-1.0, -1.0, 1.0, 1.0, 1.0])
    """
    perms, signs, at = [], [], 0
    for con in constraints:
        kind = type(con)
        size = sum(arg.size for arg in con.args)
        if kind in (Zero, NonNeg, PSD, SvecPSD):
            perms.append(at + np.arange(size, dtype=np.int64))
            signs.append(np.full(size, -1.0 if kind is Zero else 1.0))
        elif kind is SOC:
            if con.axis != 0:
                return None
            k = con.args[0].size
            width = con.args[1].shape[0] if con.args[1].shape else 1
            starts = np.arange(k, dtype=np.int64) * (width + 1)
            xs = (starts[:, None] + 1 + np.arange(width, dtype=np.int64)[None, :]).ravel()
            perms.append(at + np.concatenate([starts, xs]))
            signs.append(np.ones(size))
        elif kind is ExpCone or kind is PowCone3D:
            order = exp_cone_order if kind is ExpCone else (0, 1, 2)
            k = con.args[0].size
            base = np.arange(k, dtype=np.int64) * 3
            perms.append(at + np.concatenate([base + order[a] for a in range(3)]))
            signs.append(np.ones(size))
        else:
            return None
        at += size
    if not perms:
        return np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(perms), np.concatenate(signs)


def _plain(problem: ParamConeProg) -> bool:
    """Whether ``problem`` is one this module formats: not formatted yet, no Parameter, no bounds
    on the variable, no cone of a solver's own (cvxpy's ``dir_cones``)."""
    return (not problem.formatted and not problem.total_param_size and problem.lb_tensor is None
            and problem.ub_tensor is None and problem.lower_bounds is None and problem.upper_bounds is None
            and not problem.dir_cones)


class Clarabel(CLARABEL):
    """cvxpy's Clarabel interface, its ``apply`` writing the conic data straight from the stuffed
    tensor where the program has no Parameter (module docstring); cvxpy's own ``apply`` otherwise.
    Name, options, solve and inversion are cvxpy's."""

    def apply(self, problem):
        """``(data, inverse data)`` as ``ConicSolver.apply`` returns them, with ``data["param_prog"]``
        the formatted program (cvxpy caches it for the next compilation of the same problem)."""
        got = restructured_rows(problem.constraints, self.EXP_CONE_ORDER) if _plain(problem) else None
        if got is None:
            return super().apply(problem)
        perm, sign = got
        n, m = problem.x.size, problem.constr_size
        tensor = problem.A.tocoo()
        tensor.sum_duplicates()
        flat = tensor.row.astype(np.int64)
        row, col = flat % m, flat // m
        new_row, value = perm[row], tensor.data * sign[row]
        keep = value != 0
        new_row, col, value = new_row[keep], col[keep], value[keep]
        M = sp.csc_array((value, (new_row, col)), shape=(m, n + 1))
        M.sum_duplicates()
        end = M.indptr[n]
        A = sp.csc_array((-M.data[:end], M.indices[:end], M.indptr[:n + 1]), shape=(m, n))
        b = np.zeros(m)
        b[M.indices[end:]] = M.data[end:]
        formatted = ParamConeProg(
            problem.q, problem.x,
            sp.coo_array((value, (new_row + m * col, np.zeros_like(col))), shape=(m * (n + 1), 1)),
            problem.variables, problem.var_id_to_col, problem.constraints, problem.parameters,
            problem.param_id_to_col, P=problem.P, formatted=True, dir_cones=problem.dir_cones)
        groups = formatted.constr_map
        data = {s.PARAM_PROB: formatted, self.DIMS: formatted.cone_dims}
        inverse = {self.VAR_ID: problem.x.id, self.DIMS: formatted.cone_dims,
                   self.EQ_CONSTR: groups[Zero],
                   self.NEQ_CONSTR: groups[NonNeg] + groups[SOC] + groups.get(PSD, []) + groups.get(SvecPSD, [])
                   + groups[ExpCone] + groups[PowCone3D] + groups[PowConeND]}
        q, offset = canonInterface.get_matrix_from_tensor(problem.q, None, n, with_offset=True)
        if problem.P is not None:
            problem.reduced_P.cache(False)
            data[s.P], _ = problem.reduced_P.get_matrix_from_tensor(None, with_offset=False)
        data[s.C] = q.toarray().flatten()
        inverse[s.OFFSET] = offset
        data[s.A] = A
        data[s.B] = b
        data[s.LOWER_BOUNDS] = None
        data[s.UPPER_BOUNDS] = None
        return data, inverse


class CompiledProblem(cp.Problem):
    """The ``cvxpy.Problem`` ldpopt builds: cvxpy's, its solving chain's Clarabel replaced by
    :class:`Clarabel` (module docstring). Everything else, the chain's choice and cvxpy's cache of
    the compiled program included, is cvxpy's."""

    def _construct_chain(self, *args, **kwargs):
        chain = super()._construct_chain(*args, **kwargs)
        if type(chain.solver) is CLARABEL:
            ours = Clarabel()
            ours.__dict__.update(chain.solver.__dict__)
            chain.reductions[-1] = ours
            chain.solver = ours
        return chain
