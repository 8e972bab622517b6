"""The multipliers of a compiled :class:`~.structure.Structure` in :class:`~ldpopt.problems.Solution`
``duals`` form and back: the bound multipliers from the stationarity residual, the dict the
solver returns (names and signs of :mod:`ldpopt.problems.constraints.base`), and (λ, y) or the bound
multipliers read from such a dict."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .structure import Structure  # annotations only


__all__ = ["bound_multipliers", "bounds_from_dict", "duals_dict", "free_values", "multipliers_from_dict"]


def free_values(st: Structure):
    """l < u per value, or True when every bound is one constant pair with l < u (the plain
    simplex's broadcast bounds: no pass over the domain)."""
    if st.l.strides == (0,) and st.u.strides == (0,) and st.d and st.l[0] < st.u[0]:
        return True
    return st.l < st.u


def bound_multipliers(st: Structure, f, r):
    """Bound multipliers from the per-value stationarity residual r = h'(f) + t (so that
    r − y^lo + y^up = 0): y^lo = r where f is at its lower bound, y^up = −r at the upper bound."""
    return _bounds(st, f, r)[:2]


def _bounds(st: Structure, f, r):
    """(y^lo, y^up, whether any value is at its upper bound) of :func:`bound_multipliers`."""
    free = free_values(st)
    at_l = (f <= st.l) if free is True else (f <= st.l) & free
    at_u = (f >= st.u) if free is True else (f >= st.u) & free
    at_u &= ~at_l
    up = bool(at_u.any())
    return np.where(at_l, r, 0.0), (np.where(at_u, -r, 0.0) if up else np.zeros(st.d)), up


def duals_dict(st: Structure, f, lam, y, r) -> dict:
    """Multipliers in :class:`~ldpopt.problems.Solution` ``duals`` form (names and signs of
    :mod:`ldpopt.problems.constraints.base`). A bound shared by several constraints goes to the first
    whose bound is the binding one; the implied upper bound has no constraint of its own (its
    multiplier is nonzero only at a vertex f = total·e_v, and is reported under ``"<sum>.implied"``).
    A source that binds everywhere (the only lower bound, e.g. the simplex's f ≥ 0) gets y^lo
    itself, not a masked copy: the same numbers."""
    ylo, yup, up = _bounds(st, f, r)
    out: dict[str, float | np.ndarray] = {}
    # None: nothing taken yet; True: every value; else the values taken (a bool mask)
    taken: dict[str, bool | np.ndarray | None] = {"lower": None, "upper": None}
    for name, spec in st.duals.items():
        kind = spec[0]
        if kind == "sum":
            out[name] = float(lam)
        elif kind == "row":
            sl, vector = spec[1], spec[2] is False
            v = np.asarray(y[sl], float)
            # stored "≥" rows were negated: the dual of b − a f ≤ 0 is the same y ≥ 0
            out[name] = v.copy() if vector else float(v[0])
        elif kind == "fixed":
            out[name] = -np.asarray(r[spec[1]], float)  # f_v − value = 0: r + y = 0
        elif kind in ("lower", "upper"):
            ref, yb, tk = (st.l, ylo, taken["lower"]) if kind == "lower" else (st.u, yup, taken["upper"])
            if tk is True:
                out[name] = np.zeros(st.d)
                continue
            mine = None if spec[1] is ref else np.broadcast_to(spec[1], (st.d,)) == ref  # None: all values
            if tk is not None:
                mine = ~tk if mine is None else mine & ~tk
            if mine is None or mine.all():
                out[name], taken[kind] = yb, True
            else:
                out[name] = np.where(mine, yb, 0.0)
                taken[kind] = mine if tk is None else tk | mine
    if up:
        assert st.implied_upper is not None  # compile_constraints sets it
        imp = st.implied_upper & (yup != 0)
        if imp.any():
            out[st.sum_name + ".implied"] = np.where(st.implied_upper, yup, 0.0)
    return out


def multipliers_from_dict(st: Structure, duals: dict):
    """(λ, y) of the rows from a ``duals`` dict (missing entries: ValueError naming them)."""
    y = np.zeros(st.m)
    lam = 0.0 if st.sum_free else None  # a tree has no Σ f = total row
    for name, spec in st.duals.items():
        if spec[0] == "sum":
            if name not in duals or duals[name] is None:
                raise ValueError(f"multipliers must contain {name!r} (the Σ f = total multiplier)")
            lam = float(np.asarray(duals[name], float))
        elif spec[0] == "row":
            if name not in duals or duals[name] is None:
                raise ValueError(f"multipliers must contain {name!r}")
            v = np.atleast_1d(np.asarray(duals[name], float))
            if v.shape[0] != spec[1].stop - spec[1].start:
                raise ValueError(f"multipliers[{name!r}] must have {spec[1].stop - spec[1].start} entries, got {v.shape[0]}")
            y[spec[1]] = v
    return lam, y


def bounds_from_dict(st: Structure, duals: dict):
    """(y^lo, y^up): the bound multipliers of ``duals`` summed per side. A side with one source is
    that source itself (a read-only view, not 0 + y: the same values, no pass over the domain)."""
    lo: list[np.ndarray] = []
    up: list[np.ndarray] = []
    for name, spec in st.duals.items():
        if spec[0] in ("lower", "upper") and duals.get(name) is not None:
            (lo if spec[0] == "lower" else up).append(np.broadcast_to(np.asarray(duals[name], float), (st.d,)))
    if duals.get(st.sum_name + ".implied") is not None:
        up.append(np.asarray(duals[st.sum_name + ".implied"], float))
    return tuple(vs[0] if len(vs) == 1 else sum(vs, np.zeros(st.d)) for vs in (lo, up))
