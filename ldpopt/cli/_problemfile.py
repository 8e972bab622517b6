"""The ``--problem`` file of ``ldpopt solve``: an objective and constraints in TOML or JSON.

::

    objective = "cls"            # a built-in objective name (ldpopt.problems.available_objectives())
    solver = "CLARABEL"          # optional: a cvxpy solver name or a list (default: ldpopt's chain)

    [[constraints]]
    type = "simplex"             # f >= 0, sum f = 1 (the default when there is no constraints list)

    [[constraints]]
    type = "subset_sum"
    indices = ["a", "b"]         # labels (the counts file's value column) or 0-based positions
    value = 0.3
    sense = "=="                 # optional: "==", "<=", ">="

A value is named either way: integers are 0-based positions in the counts table (with ``--d`` the
values themselves), strings are labels from its ``value`` column. Types and their keys:

``simplex``; ``nonnegative``; ``sum`` (``total``, default 1); ``box`` (``lower``, ``upper``: a number
or one per value); ``subset_sum`` (``indices``, ``value``, ``sense``); ``fixed`` (``indices``,
``frequency``: a number or one per index); ``monotone`` (``direction`` "nonincreasing" (default) or
"nondecreasing", and ``order`` (a chain) or ``pairs`` ([[a, b], …], a before b), default the
table's order); ``hierarchy`` (``branching`` and ``leaves``: the counts are the nodes of a range
tree over ``leaves`` ordered values, leaves first (:func:`ldpopt.problems.range_tree`), and the
constraint set is f ≥ 0, the leaves sum to 1, every node = Σ its children; or ``groups`` =
[[parent, [children…]], …] for an explicit tree); ``partition`` (``groups`` = {name = [values…]},
``totals`` = {name = total}: disjoint groups with known totals).

Every error names the file, the key and, for TOML, the line of the ``[[constraints]]`` entry.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ._args import InputError

__all__ = ["ProblemSpec", "read_problem"]

_KEYS = {
    "simplex": ({"type"}, set()),
    "nonnegative": ({"type"}, set()),
    "sum": ({"type"}, {"total"}),
    "box": ({"type"}, {"lower", "upper"}),
    "subset_sum": ({"type", "indices", "value"}, {"sense"}),
    "fixed": ({"type", "indices", "frequency"}, set()),
    "monotone": ({"type"}, {"direction", "order", "pairs"}),
    "hierarchy": ({"type"}, {"branching", "leaves", "groups"}),
    "partition": ({"type", "groups", "totals"}, set()),
}
_TOP = {"objective", "solver", "constraints"}


class ProblemSpec:
    """What a problem file says: ``objective`` (name), ``solver`` (None, a name or a list) and
    ``build(table)`` → the constraint objects for a counts table (None: the default simplex)."""

    def __init__(self, path: Path, objective: str, solver, entries, where):
        self.path, self.objective, self.solver = path, objective, solver
        self.entries, self._where = entries, where

    def error(self, k: int | None, text: str) -> InputError:
        at = "" if k is None else f"constraints[{k}]{self._where(k)}: "
        return InputError(f"--problem {self.path}: {at}{text}")

    def build(self, table) -> list | None:
        if self.entries is None:
            return None
        from ..problems.constraints import Hierarchy

        pos = {str(v): i for i, v in enumerate(table.values)}
        out = []
        for k, e in enumerate(self.entries):
            try:
                out.extend(_constraint(e, table.d, lambda key, x: _positions(x, key, pos, table.d), Hierarchy))
            except (ValueError, TypeError) as exc:  # InputError included
                raise self.error(k, f"{e['type']}: {exc}") from None
        return out


def _positions(x, key: str, pos: dict, d: int) -> np.ndarray:
    """A list of labels (strings) or 0-based positions (integers) → int64 positions."""
    items = x if isinstance(x, list) else [x]
    out = []
    for j, item in enumerate(items):
        if isinstance(item, str):
            if item not in pos:
                raise InputError(f"{key}[{j}]: label {item!r} is not a value of the counts file")
            out.append(pos[item])
        elif isinstance(item, int) and not isinstance(item, bool):
            if not 0 <= item < d:
                raise InputError(f"{key}[{j}]: position {item} is out of range [0, {d})")
            out.append(item)
        else:
            raise InputError(f"{key}[{j}] must be a label (string) or a 0-based position (integer), got {item!r}")
    return np.asarray(out, dtype=np.int64)


def _number(x, key: str, allow_list: bool = False):
    ok = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
    if ok(x):
        return float(x)
    if allow_list and isinstance(x, list) and x and all(ok(v) for v in x):
        return np.asarray(x, dtype=np.float64)
    raise InputError(f"{key} must be a number{' or a list of numbers' if allow_list else ''}, got {x!r}")


def _constraint(e: dict, d: int, at, Hierarchy) -> list:
    from ..problems import (Box, Fixed, Monotone, NonNegative, PartitionTotals, Simplex, SubsetSum, SumTo,
                            range_tree)

    kind = e["type"]
    if kind == "simplex":
        return [Simplex()]
    if kind == "nonnegative":
        return [NonNegative()]
    if kind == "sum":
        return [SumTo(_number(e.get("total", 1.0), "total"))]
    if kind == "box":
        if "lower" not in e and "upper" not in e:
            raise InputError("box needs lower or upper (or both)")
        lo, hi = (_number(e[k], k, True) if k in e else None for k in ("lower", "upper"))
        for k, b in (("lower", lo), ("upper", hi)):
            if isinstance(b, np.ndarray) and b.shape[0] != d:
                raise InputError(f"{k} must be a number or have one entry per value (d = {d}), got {b.shape[0]}")
        return [Box(lo, hi)]
    if kind == "subset_sum":
        return [SubsetSum(at("indices", e["indices"]), _number(e["value"], "value"), e.get("sense", "=="))]
    if kind == "fixed":
        return [Fixed(at("indices", e["indices"]), _number(e["frequency"], "frequency", True))]
    if kind == "monotone":
        order = at("order", e["order"]) if "order" in e else None
        pairs = None
        if "pairs" in e:
            if not isinstance(e["pairs"], list) or not all(isinstance(p, list) and len(p) == 2 for p in e["pairs"]):
                raise InputError(f"pairs must be a list of [a, b] pairs, got {e['pairs']!r}")
            pairs = np.stack([at(f"pairs[{j}]", p) for j, p in enumerate(e["pairs"])]) if e["pairs"] else []
        return [Monotone(e.get("direction", "nonincreasing"), order=order, pairs=pairs)]
    if kind == "hierarchy":
        if "groups" in e:
            if "branching" in e or "leaves" in e:
                raise InputError("hierarchy takes groups, or branching and leaves, not both")
            g = e["groups"]
            if not isinstance(g, list) or not all(isinstance(x, list) and len(x) == 2 for x in g):
                raise InputError(f"groups must be a list of [parent, [children...]] pairs, got {g!r}")
            return [Hierarchy([(int(at(f"groups[{j}][0]", p)[0]), at(f"groups[{j}][1]", c))
                               for j, (p, c) in enumerate(g)])]
        missing = [k for k in ("branching", "leaves") if k not in e]
        if missing:
            raise InputError(f"hierarchy needs groups, or branching and leaves (missing {missing[0]!r})")
        for k in ("branching", "leaves"):
            if not isinstance(e[k], int) or isinstance(e[k], bool):
                raise InputError(f"{k} must be an integer, got {e[k]!r}")
        tree = range_tree(e["leaves"], e["branching"])
        if tree.size != d:
            raise InputError(f"a range tree over leaves = {e['leaves']} with branching = {e['branching']} has "
                             f"{tree.size} nodes, but the counts file has d = {d} values (one count per node, "
                             f"leaves first)")
        return tree.constraints()
    if kind == "partition":
        groups, totals = e["groups"], e["totals"]
        for k, v in (("groups", groups), ("totals", totals)):
            if not isinstance(v, dict):
                raise InputError(f"{k} must be a table/object keyed by group name, got {v!r}")
        return [PartitionTotals({k: at(f"groups.{k}", v) for k, v in groups.items()},
                                {k: _number(v, f"totals.{k}") for k, v in totals.items()}, d=d)]
    raise AssertionError(kind)


def _toml_lines(text: str):
    """Line (1-based) of each ``[[constraints]]`` header, in order."""
    return [i + 1 for i, line in enumerate(text.splitlines()) if re.match(r"\s*\[\[\s*constraints\s*\]\]", line)]


def read_problem(path) -> ProblemSpec:
    """Parse and check a problem file (TOML by suffix ``.toml``, JSON by ``.json``)."""
    from ..problems import available_objectives

    path = Path(path)
    if not path.is_file():
        raise InputError(f"--problem: no such file: {path}")
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise InputError(f"--problem {path}: name the file .toml or .json")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"--problem {path}: not UTF-8 text: {exc}") from None
    lines = []
    if suffix == ".toml":
        import tomllib

        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"--problem {path}: invalid TOML: {exc}") from None
        lines = _toml_lines(text)
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"--problem {path}: invalid JSON at line {exc.lineno}, column {exc.colno}: "
                             f"{exc.msg}") from None
        if not isinstance(doc, dict):
            raise InputError(f"--problem {path}: the top level must be an object, got {type(doc).__name__}")

    def where(k):
        return f" (line {lines[k]})" if k < len(lines) else ""

    unknown = sorted(set(doc) - _TOP)
    if unknown:
        raise InputError(f"--problem {path}: unknown key {unknown[0]!r} (known: {sorted(_TOP)})")
    obj = doc.get("objective", "cls")
    if not isinstance(obj, str) or obj.lower() not in available_objectives() or obj.lower() == "posterior":
        names = [n for n in available_objectives() if n != "posterior"]
        raise InputError(f"--problem {path}: objective must be one of {names}, got {obj!r}")
    solver = doc.get("solver")
    if solver is not None and not (isinstance(solver, str) or (
            isinstance(solver, list) and solver and all(isinstance(s, str) for s in solver))):
        raise InputError(f"--problem {path}: solver must be a solver name or a list of names, got {solver!r}")
    entries = doc.get("constraints")
    if entries is not None:
        if not isinstance(entries, list):
            raise InputError(f"--problem {path}: constraints must be a list of tables ([[constraints]]), "
                             f"got {type(entries).__name__}")
        for k, e in enumerate(entries):
            at = f"--problem {path}: constraints[{k}]{where(k)}"
            if not isinstance(e, dict):
                raise InputError(f"{at}: must be a table/object with a type, got {e!r}")
            if "type" not in e:
                raise InputError(f"{at}: missing key 'type' (one of {sorted(_KEYS)})")
            if e["type"] not in _KEYS:
                raise InputError(f"{at}: unknown type {e['type']!r} (one of {sorted(_KEYS)})")
            required, optional = _KEYS[e["type"]]
            missing = sorted(required - set(e))
            if missing:
                raise InputError(f"{at}: {e['type']} needs key {missing[0]!r}")
            bad = sorted(set(e) - required - optional)
            if bad:
                raise InputError(f"{at}: unknown key {bad[0]!r} for {e['type']} (known: {sorted(required | optional)})")
    return ProblemSpec(path, obj.lower(), solver, entries, where)
