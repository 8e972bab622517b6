"""Exact feasibility of a small linear system, by Fourier–Motzkin elimination in rational arithmetic
(not the package's code: no LP, no Farkas multipliers, no aggregation).

A system is a list of rows (a, b, sense) over d values, a a list of d numbers, sense "==" or "<=",
every number converted with ``fractions.Fraction`` (exact for floats). Equalities are used first to
substitute a variable away (Gaussian elimination); the inequalities that remain are combined
pairwise, one variable at a time (Schrijver, *Theory of Linear and Integer Programming*, §12.2).
The system is feasible iff no row 0 ≤ b with b < 0 (or 0 = b with b ≠ 0) appears. Duplicate rows,
after scaling each to a leading coefficient of ±1, are dropped, and the variable that makes the
fewest new rows goes first; a system that would grow past a row limit is left undecided (None).

:func:`random_system` draws mixed built-in constraints (the same constraint both as ldpopt objects
and as rows written out here by hand) with margins 10^-k on either side of feasibility;
:func:`random_nested_system` small range trees and partial orders the same way (margins 10^-13 …
10^-17); :func:`planted_nested_system` large ones whose answer is derived by hand (no reference run).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def _norm(a, b):
    for x in a:
        if x != 0:
            s = abs(x)
            return tuple(v / s for v in a), b / s
    return tuple(a), b


def feasible(rows, d: int, limit: int = 20_000) -> bool | None:
    """Whether the rows have a common point; None when an elimination step would exceed ``limit``
    rows (Fourier–Motzkin may grow doubly exponentially: the caller skips such a system)."""
    eqs = [([Fraction(x) for x in a], Fraction(b)) for a, b, s in rows if s == "=="]
    ins = [([Fraction(x) for x in a], Fraction(b)) for a, b, s in rows if s == "<="]
    while eqs:  # substitute a variable of one equality into every other row
        a, b = eqs.pop()
        j = next((j for j, x in enumerate(a) if x != 0), None)
        if j is None:
            if b != 0:
                return False
            continue

        def sub(r, a=a, b=b, j=j):
            ra, rb = r
            k = ra[j] / a[j]
            return [x - k * y for x, y in zip(ra, a)], rb - k * b

        eqs = [sub(r) for r in eqs]
        ins = [sub(r) for r in ins]
    left = set(range(d))
    while left:
        seen, uniq = set(), []
        for a, b in ins:
            key = _norm(a, b)
            if key not in seen:
                seen.add(key)
                uniq.append((a, b))
        ins = uniq
        # the variable whose elimination makes the fewest new rows first
        j = min(left, key=lambda j: sum(a[j] > 0 for a, _ in ins) * sum(a[j] < 0 for a, _ in ins))
        left.discard(j)
        pos = [(a, b) for a, b in ins if a[j] > 0]
        neg = [(a, b) for a, b in ins if a[j] < 0]
        rest = [(a, b) for a, b in ins if a[j] == 0]
        if len(rest) + len(pos) * len(neg) > limit:
            return None
        for a, b in pos:
            for c, e in neg:
                p, q = -c[j], a[j]  # p·(a, b) + q·(c, e) has 0 at j, p, q > 0
                rest.append(([p * x + q * y for x, y in zip(a, c)], p * b + q * e))
        ins = rest
        if any(all(x == 0 for x in a) and b < 0 for a, b in ins):
            return False
    return all(b >= 0 for a, b in ins)


def random_system(rng, d: int):
    """(constraints for ldpopt, rows for :func:`feasible`): the simplex or a SumTo, then 1–4 of
    Box, Fixed, SubsetSum (==, <=, >=), Monotone (chain or pairs), PartitionTotals, LinearEquality,
    Hierarchy, with one total placed 10^-k (k in 1..15) inside or outside of what the others allow."""
    from ldpopt.problems import (
        Box,
        Fixed,
        Hierarchy,
        LinearEquality,
        Monotone,
        NonNegative,
        PartitionTotals,
        Simplex,
        SubsetSum,
        SumTo,
    )

    cons, rows = [], []
    unit = [[1.0 if i == v else 0.0 for i in range(d)] for v in range(d)]
    if rng.random() < 0.7:
        cons.append(Simplex())
        total = 1.0
    else:
        total = float(rng.choice([0.5, 1.0, 2.0]))
        cons += [NonNegative(), SumTo(total)]
    rows.append(([1.0] * d, total, "=="))
    rows += [([-x for x in unit[v]], 0.0, "<=") for v in range(d)]
    margin = float(rng.choice([-1.0, 1.0])) * 10.0 ** -int(rng.integers(1, 16))
    for _ in range(int(rng.integers(1, 5))):
        kind = int(rng.integers(8))
        idx = np.sort(rng.choice(d, int(rng.integers(1, d + 1)), replace=False))
        ind = [1.0 if v in set(idx.tolist()) else 0.0 for v in range(d)]
        share = total * idx.size / d
        if kind == 0:  # a subset total at the uniform point's share, moved by the margin
            sense = ["==", "<=", ">="][int(rng.integers(3))]
            value = share + (margin if sense != "<=" else -margin) * (1 if rng.random() < 0.5 else idx.size)
            cons.append(SubsetSum(idx, value, sense))
            if sense == ">=":
                rows.append(([-x for x in ind], -value, "<="))
            else:
                rows.append((ind, value, sense))
        elif kind == 1:  # box bounds around the uniform point's value
            lower = rng.random() < 0.5
            v = total / d + (margin if lower else -margin)
            cons.append(Box(lower=v) if lower else Box(upper=v))
            rows += [((list(unit[i]) if not lower else [-x for x in unit[i]]), (v if not lower else -v), "<=")
                     for i in range(d)]
        elif kind == 2:
            v = float(np.round(rng.uniform(0, 2 * total / d), 3))
            cons.append(Fixed(idx[:1], v))
            rows.append((unit[int(idx[0])], v, "=="))
        elif kind == 3:  # a chain or a partial order
            direction = ["nonincreasing", "nondecreasing"][int(rng.integers(2))]
            sign = 1.0 if direction == "nonincreasing" else -1.0
            if idx.size >= 2 and rng.random() < 0.5:
                order = rng.permutation(idx)
                cons.append(Monotone(direction, order=order.tolist()))
                pairs = list(zip(order[:-1].tolist(), order[1:].tolist()))
            else:
                a, b = rng.choice(d, 2, replace=False)
                pairs = [(int(a), int(b))]
                cons.append(Monotone(direction, pairs=pairs))
            for a, b in pairs:  # row: sign·(e_b − e_a) ≤ 0
                rows.append(([sign * (unit[b][i] - unit[a][i]) for i in range(d)], 0.0, "<="))
        elif kind == 4 and idx.size >= 2:
            cut = int(rng.integers(1, idx.size))
            ga, gb = idx[:cut], idx[cut:]
            ta = total * ga.size / d + margin
            tb = float(np.round(rng.uniform(0, total), 2))
            cons.append(PartitionTotals({"a": ga, "b": gb}, {"a": ta, "b": tb}))
            rows.append(([1.0 if v in set(ga.tolist()) else 0.0 for v in range(d)], ta, "=="))
            rows.append(([1.0 if v in set(gb.tolist()) else 0.0 for v in range(d)], tb, "=="))
        elif kind == 5:  # a dense row with float coefficients
            w = np.round(rng.uniform(-1, 1, d), 3)
            rhs = float(w.sum() * total / d) + margin
            cons.append(LinearEquality(w[None, :], rhs))
            rows.append((w.tolist(), rhs, "=="))
        elif kind == 6 and idx.size >= 3:
            parent, children = int(idx[0]), idx[1:]
            cons.append(Hierarchy([(parent, children)]))
            rows.append(([(1.0 if v == parent else 0.0) - (1.0 if v in set(children.tolist()) else 0.0)
                          for v in range(d)], 0.0, "=="))
        else:  # a subset upper bound against a lower bound elsewhere
            value = share + margin
            cons.append(SubsetSum(idx, value, "<="))
            rows.append((ind, value, "<="))
    return cons, rows


def random_nested_system(rng, kind: str):
    """(constraints for ldpopt, rows for :func:`feasible`, d): ``kind`` "tree" — a range tree over
    3–6 leaves (branching 2 or 3: f ≥ 0, the leaves sum to 1, every node the sum of its children)
    with 1–3 subset totals over random node sets —, or "pairs" — the simplex over d = 3–7 values with
    a random partial order (Monotone pairs along a random permutation) and 1–2 subset totals or a
    float row. Each total is met with equality at a planted point (dyadic, so its totals are exact)
    and then moved by a margin ±10^-k, k in 13..17; half the systems also get a range's total ≥ its
    planted total + the margin and the rest's ≥ its own (empty for a positive margin). Some moves
    empty the set, some do not: the reference decides. The rows are written out here by hand from
    the definitions."""
    from ldpopt.problems import LinearEquality, Monotone, Simplex, SubsetSum, range_tree

    k = int(rng.integers(13, 18))
    rows = []
    if kind == "tree":
        L = int(rng.integers(3, 7))
        tree = range_tree(L, int(rng.integers(2, 4)))
        d = tree.size
        leaves = np.round(rng.dirichlet(np.ones(L)) * 2**20) / 2**20
        leaves[-1] = 1.0 - leaves[:-1].sum()  # exact: multiples of 2^-20
        point = tree.node_totals(leaves)
        cons = tree.constraints()
        rows.append(([1.0 if v < L else 0.0 for v in range(d)], 1.0, "=="))
        rows += [([-1.0 if i == v else 0.0 for i in range(d)], 0.0, "<=") for v in range(d)]
        for p in range(L, d):  # node p = Σ of the nodes whose parent is p
            rows.append(([1.0 if v == p else (-1.0 if tree.parent[v] == p else 0.0) for v in range(d)], 0.0, "=="))
    else:
        d = int(rng.integers(3, 8))
        perm = rng.permutation(d)
        n = int(rng.integers(1, d + 2))
        i, j = np.sort(rng.integers(0, d, (n, 2)), axis=1).T
        pairs = np.unique(np.c_[perm[i], perm[j]][i != j], axis=0)
        if not pairs.size:
            pairs = np.array([[perm[0], perm[1]]])
        point = np.zeros(d)
        point[perm] = np.sort(np.round(rng.dirichlet(np.ones(d)) * 2**20))[::-1] / 2**20  # nonincreasing along perm
        point[perm[-1]] += 1.0 - point.sum()
        point[perm] = np.sort(point[perm])[::-1]
        cons = [Simplex(), Monotone(pairs=pairs)]
        rows.append(([1.0] * d, 1.0, "=="))
        rows += [([-1.0 if i_ == v else 0.0 for i_ in range(d)], 0.0, "<=") for v in range(d)]
        for a, b in pairs.tolist():  # f_a ≥ f_b: f_b − f_a ≤ 0
            rows.append(([1.0 if v == b else (-1.0 if v == a else 0.0) for v in range(d)], 0.0, "<="))
    m = float(rng.choice([-1.0, 1.0])) * 10.0**-k
    if rng.random() < 0.5:  # a range's total and the rest's, both ≥ their planted totals: empty iff m > 0
        n_leaves = tree.d if kind == "tree" else d
        a = int(rng.integers(0, n_leaves - 1))
        c = int(rng.integers(a, n_leaves - 1))
        inside = tree.cover(a, c) if kind == "tree" else perm[a:c + 1]
        values = range(tree.d) if kind == "tree" else perm.tolist()
        rest = np.array([v for i_, v in enumerate(values) if not a <= i_ <= c])
        for S, mm in ((np.sort(inside), m), (np.sort(rest), 0.0)):
            value = float(point[S].sum()) + mm
            cons.append(SubsetSum(S, value, ">="))
            rows.append(([-1.0 if v in set(S.tolist()) else 0.0 for v in range(d)], -value, "<="))
    for _ in range(int(rng.integers(0 if len(cons) > 3 else 1, 4 if kind == "tree" else 3))):
        m = float(rng.choice([-1.0, 1.0])) * 10.0**-k
        if kind == "pairs" and rng.random() < 0.4:  # a float row w·f = w·point + m
            w = np.round(rng.uniform(-1, 1, d), 3)
            rhs = float(np.sum([Fraction(x) * Fraction(y) for x, y in zip(w, point)])) + m
            cons.append(LinearEquality(w[None, :], rhs))
            rows.append((w.tolist(), rhs, "=="))
            continue
        S = np.sort(rng.choice(d, int(rng.integers(1, d)), replace=False))
        sense = ["==", "<=", ">="][int(rng.integers(3))]
        value = float(point[S].sum()) + (m if sense != "<=" else -m)
        cons.append(SubsetSum(S, value, sense))
        ind = [1.0 if v in set(S.tolist()) else 0.0 for v in range(d)]
        rows.append(([-x for x in ind], -value, "<=") if sense == ">=" else (ind, value, sense))
    return cons, rows, d


def planted_nested_system(rng, kind: str, size: int, margin: float):
    """(constraints, truth) at any size, the truth derived by hand: ``kind`` "tree" (a range tree over
    ``size`` leaves, branching 2–4) or "pairs" (the simplex over ``size`` values with a random
    partial order: pairs a before b along a random permutation, nonincreasing). A planted point
    (dyadic, a fifth of its values 0, nonincreasing along the permutation for "pairs") meets 2–5
    random subset totals (==, or ≤ / ≥ loosened by |margin|), and two more pin it: a range's total
    ≥ its planted total + ``margin`` and the rest's ≥ its planted total. The two sets partition the
    domain (the leaves, for a tree), so the set is empty iff the two totals as given sum to more
    than 1 in exact arithmetic (``truth`` False), and else the planted point meets everything."""
    from ldpopt.problems import Monotone, Simplex, SubsetSum, range_tree

    w = rng.dirichlet(np.ones(size)) * (rng.random(size) > 0.2)
    w = np.round(w / w.sum() * 2**30) / 2**30
    if kind == "tree":
        tree = range_tree(size, int(rng.integers(2, 5)))
        w[-1] = 1.0 - w[:-1].sum()  # exact: multiples of 2^-30, and ≥ 0 after the rounding above
        point, cons, order, n = tree.node_totals(w), tree.constraints(), np.arange(size), tree.size
        first = tree.cover
    else:
        order = rng.permutation(size)
        point = np.zeros(size)
        point[order] = np.sort(w)[::-1]
        point[order[0]] += 1.0 - point.sum()
        i = rng.integers(0, size, 3 * size)
        j = np.minimum(i + 1 + rng.integers(0, 40, 3 * size), size - 1)
        keep = i < j
        cons, n = [Simplex(), Monotone(pairs=np.c_[order[i[keep]], order[j[keep]]])], size

        def first(a, c):
            return order[a:c + 1]
    for _ in range(int(rng.integers(2, 6))):
        S = np.unique(rng.choice(n, int(rng.integers(1, n)), replace=False))
        sense = ["==", "<=", ">="][int(rng.integers(3))]
        total = float(np.sum([Fraction(v) for v in point[S]]))
        cons.append(SubsetSum(S, total + {"==": 0.0, "<=": abs(margin), ">=": -abs(margin)}[sense], sense))
    a = int(rng.integers(0, size - 1))
    c = int(rng.integers(a, size - 1))
    inside = np.sort(first(a, c))
    rest = np.sort(np.setdiff1d(order, order[a:c + 1]))
    t1 = float(np.sum([Fraction(v) for v in point[inside]])) + margin
    t2 = float(np.sum([Fraction(v) for v in point[rest]]))
    cons += [SubsetSum(inside, t1, ">="), SubsetSum(rest, t2, ">=")]
    return cons, Fraction(t1) + Fraction(t2) <= 1
