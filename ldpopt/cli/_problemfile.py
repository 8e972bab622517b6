"""The ``--problem`` file of ``ldpopt solve``: an objective and constraints in TOML or JSON.

::

    objective = "cls"            # required: a built-in name, or "FILE.py:NAME" / "MODULE:NAME"
    solver = "CLARABEL"          # optional: a cvxpy solver name or a list (default: ldpopt's chain)

    [[constraints]]
    type = "simplex"             # f >= 0, sum f = 1 (the default when there is no constraints list)

    [[constraints]]
    type = "subset_sum"
    labels = ["a", "b"]          # the counts file's value column as read; or positions = [0, 1]
    value = 0.3
    sense = "=="                 # optional: "==", "<=", ">="

The types, their keys and the objectives are listed once, in :mod:`._problemtypes` (``ldpopt solve
--help`` prints that list). Values are named by ``labels`` (integers are matched against the labels
as read, not taken as rows) or by ``positions`` (0-based rows), never by a bare ``indices``: with
integer labels in any row order a bare integer could mean either (:mod:`._problemtypes`).

A user objective: ``objective = "my_variants.py:kl_to_prior"``, or with keyword parameters an
``[objective]`` table with ``function`` and ``params`` (an inline table or ``[objective.params]``;
JSON: ``"objective": {"function": ..., "params": {...}}``); a user constraint:
``type = "function"``, ``function = ...``, ``params = {...}`` (:mod:`ldpopt._userfunc`).

Every error is one line naming the file and the key: for TOML with the key's line, for JSON with its
path (``constraints[2].labels``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ._args import InputError
from ._problemtypes import CONSTRAINTS, OBJECTIVES, RETIRED, USER_FUNCTION

__all__ = ["ProblemSpec", "read_problem"]

_TOP = {"objective", "solver", "constraints"}


class _Where:
    """Where a key is: ``constraints[k].key (line N)`` in TOML (the key's own line, else its entry's
    header), ``constraints[k].key`` in JSON."""

    def __init__(self, path: Path, text: str | None):
        self.path = path
        self.lines = text.splitlines() if text is not None else None
        self.heads = ([i for i, s in enumerate(self.lines) if re.match(r"\s*\[\[\s*constraints\s*\]\]", s)]
                      if self.lines is not None else [])

    def _line(self, k, key) -> int | None:
        if self.lines is None:
            return None
        if k is None:  # a top-level key: before the first table, or its own [key] / [key.sub] table
            end = next((i for i, s in enumerate(self.lines) if re.match(r"\s*\[", s)), len(self.lines))
            lo, hi = 0, end
            for i, s in enumerate(self.lines):
                if key and re.match(rf"\s*\[\s*{re.escape(key)}\s*[.\]]", s):
                    return i + 1
        else:
            if k >= len(self.heads):
                return None
            lo = self.heads[k]
            hi = self.heads[k + 1] if k + 1 < len(self.heads) else len(self.lines)
        if key:
            pat = re.compile(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=")
            for i in range(lo, hi):
                if pat.match(self.lines[i]):
                    return i + 1
        return lo + 1 if k is not None else None

    def __call__(self, k: int | None, key: str | None = None, sub: str = "") -> str:
        name = ("" if k is None else f"constraints[{k}]") + (("." if k is not None else "") + key if key else "")
        line = self._line(k, key)
        return f"{name}{sub} (line {line})" if line is not None else name + sub

    def error(self, k, key, text, sub: str = "") -> InputError:
        at = self(k, key, sub)
        return InputError(f"--problem {self.path}: {at + ': ' if at else ''}{text}")


class ProblemSpec:
    """What a problem file says: ``objective`` (a built-in name or a user callable), ``objective_name``,
    ``solver`` (None, a name or a list) and ``build(table)`` → the constraint objects for a counts
    table (None: the default simplex). ``error(k, key, text)``: an InputError naming the key."""

    def __init__(self, path: Path, objective, objective_name: str, solver, entries, where: _Where,
                 objective_ref: str | None = None):
        self.path, self.objective, self.objective_name, self.solver = path, objective, objective_name, solver
        self.entries, self._where = entries, where
        self._objective_ref = objective_ref  # the objective's "FILE.py:NAME" when it names a function

    def error(self, k: int | None, key: str | None, text: str, sub: str = "") -> InputError:
        return self._where.error(k, key, text, sub)

    def files(self) -> list[tuple[str, Path]]:
        """``(what, path)`` of every file the problem file names (a ``matrix_file``, a ``FILE.py`` of a
        user function), resolved next to it as they are read: inputs an output must not replace."""
        refs = [("objective", self._objective_ref)] if self._objective_ref else []
        for k, e in enumerate(self.entries or []):
            for key in ("matrix_file", "function"):
                if isinstance(e.get(key), str):
                    refs.append((self._where(k, key), e[key]))
        out = []
        for what, ref in refs:
            target = ref.split(":")[0] if ref.count(":") == 1 else ref
            if target.endswith((".py", ".npz", ".npy")):
                path = Path(target)
                out.append((f"--problem {self.path}: {what}", path if path.is_absolute() else self.path.parent / path))
        return out

    def build(self, table) -> list | None:
        if self.entries is None:
            return None
        labels = {str(v): i for i, v in enumerate(table.values)}
        out = []
        for k, e in enumerate(self.entries):
            def at(key, x, shape="list", *, e=e, k=k):  # e, k bound (it is called within this iteration only)
                try:
                    return _named(x, key, shape, labels, table.d, key in {v.position for v in CONSTRAINTS[
                        e["type"]].values})
                except InputError as exc:  # "[j]: ..." → the location constraints[k].key[j]
                    sub, _, text = str(exc).partition(": ") if str(exc).startswith("[") else ("", "", str(exc))
                    raise self.error(k, key, text, sub) from None
            try:
                out.extend(_constraint(e, table.d, at, self.path.parent,
                                       lambda key, k=k: f"--problem {self.path}: {self._where(k, key)}"))
            except InputError as exc:
                if str(exc).startswith("--problem"):
                    raise
                raise self.error(k, None, f"{e['type']}: {exc}") from exc
            except (ValueError, TypeError) as exc:
                raise self.error(k, None, f"{e['type']}: {exc}") from exc
        return out


def _one(items, key: str, labels: dict, d: int, positions: bool) -> int:
    """One value reference → its row: a label (string or integer, matched as read) or a position."""
    if positions:
        if not isinstance(items, int) or isinstance(items, bool):
            raise InputError(f"must be a 0-based integer row, got {items!r} (name labels under a label key)")
        if not 0 <= items < d:
            raise InputError(f"position {items} is out of range [0, {d})")
        return items
    if isinstance(items, bool) or not isinstance(items, (str, int)):
        raise InputError(f"must be a label (a string, or an integer label as written in the counts file), "
                         f"got {items!r}")
    if str(items) not in labels:
        raise InputError(f"label {items!r} is not a value of the counts file")
    return labels[str(items)]


def _list(x, key: str, labels: dict, d: int, positions: bool) -> np.ndarray:
    if not isinstance(x, list):
        raise InputError(f"must be a list, got {x!r}")
    if not x:
        raise InputError("must name at least one value (an empty list)")
    out = []
    seen: dict[int, int] = {}
    for j, item in enumerate(x):
        try:
            v = _one(item, key, labels, d, positions)
        except InputError as exc:
            raise InputError(f"[{j}]: {exc}") from None
        if v in seen:
            raise InputError(f"[{j}]: {item!r} repeats entry [{seen[v]}] (a value may be named once)")
        seen[v] = j
        out.append(v)
    return np.asarray(out, dtype=np.int64)


def _named(x, key: str, shape: str, labels: dict, d: int, positions: bool):
    """The value references under ``key`` (its shape from :mod:`._problemtypes`) → rows."""
    if shape == "list":
        return _list(x, key, labels, d, positions)
    if shape == "pairs":
        if not isinstance(x, list) or not all(isinstance(p, list) and len(p) == 2 for p in x):
            raise InputError(f"must be a list of [a, b] pairs, got {x!r}")
        return [(_one(a, key, labels, d, positions), _one(b, key, labels, d, positions)) for a, b in x]
    if shape == "parent":
        if not isinstance(x, list) or not x or not all(isinstance(g, list) and len(g) == 2 for g in x):
            raise InputError(f"must be a non-empty list of [parent, [children...]] pairs, got {x!r}")
        return [(_one(p, key, labels, d, positions), _list(c, key, labels, d, positions)) for p, c in x]
    if not isinstance(x, dict) or not x:  # "table"
        raise InputError(f"must be a non-empty table/object keyed by group name, got {x!r}")
    out = {}
    for name, v in x.items():
        try:
            out[name] = _list(v, key, labels, d, positions)
        except InputError as exc:
            raise InputError(f"[{name!r}]{str(exc) if str(exc).startswith('[') else ': ' + str(exc)}") from None
    return out


def _number(x, key: str, allow_list: bool = False):
    ok = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
    if ok(x):
        return float(x)
    if allow_list and isinstance(x, list) and x and all(ok(v) for v in x):
        return np.asarray(x, dtype=np.float64)
    raise InputError(f"{key} must be a number{' or a list of numbers' if allow_list else ''}, got {x!r}")


def _spelled(e: dict, family, at):
    """The rows under whichever spelling of a value-key family the entry uses (None: neither)."""
    if family.label in e:
        return at(family.label, e[family.label], family.shape)
    if family.position in e:
        return at(family.position, e[family.position], family.shape)
    return None


def _linear(e: dict, d: int, base: Path):
    """A ``linear`` entry → :class:`~ldpopt.problems.LinearEquality` (its matrix inline or from a file)."""
    from ..problems import LinearEquality
    if ("matrix" in e) == ("matrix_file" in e):
        raise InputError("linear needs exactly one of matrix (rows inline) and matrix_file (a .npz or .npy file)")
    if "matrix" in e:
        rows = e["matrix"]
        if (not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for r in rows for v in r)):
            raise InputError(f"matrix must be a non-empty list of rows of numbers, got {rows!r}")
        bad = [i for i, r in enumerate(rows) if len(r) != d]
        if bad:
            raise InputError(f"matrix row {bad[0]} has {len(rows[bad[0]])} entries; every row needs one per row "
                             f"of the counts file (d = {d})")
        A = np.asarray(rows, dtype=np.float64)
    else:
        A = _matrix_file(e["matrix_file"], base)
        if A.shape[1] != d:
            raise InputError(f"matrix_file {e['matrix_file']!r} has {A.shape[1]} columns; it needs one per row of "
                             f"the counts file (d = {d})")
    rhs = _number(e.get("rhs", 0.0), "rhs", True)
    if isinstance(rhs, np.ndarray) and rhs.shape[0] != A.shape[0]:
        raise InputError(f"rhs has {rhs.shape[0]} entries for {A.shape[0]} matrix rows: give one number, or one per row")
    return LinearEquality(A, rhs, name=e.get("name"))


def _matrix_file(name, base: Path):
    import scipy.sparse as sp

    if not isinstance(name, str) or not name.endswith((".npz", ".npy")):
        raise InputError(f"matrix_file must name a .npz (scipy.sparse.save_npz) or .npy file, got {name!r}")
    path = base / name
    if not path.is_file():
        raise InputError(f"matrix_file {name!r}: no such file next to the problem file ({path})")
    try:
        A = sp.load_npz(path) if name.endswith(".npz") else np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"matrix_file {name!r} could not be read ({exc})") from None
    if np.ndim(A) != 2:
        raise InputError(f"matrix_file {name!r} must hold a 2-D matrix, got shape {np.shape(A)}")
    return A


def _constraint(e: dict, d: int, at, base: Path, where) -> list:
    from ..problems import (
        Box,
        Fixed,
        Hierarchy,
        Monotone,
        NonNegative,
        PartitionTotals,
        Simplex,
        SubsetSum,
        SumTo,
        range_tree,
    )

    kind = e["type"]
    named = [_spelled(e, fam, at) for fam in CONSTRAINTS[kind].values]
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
        return [SubsetSum(named[0], _number(e["value"], "value"), e.get("sense", "=="))]
    if kind == "fixed":
        freq = _number(e["frequency"], "frequency", True)
        if isinstance(freq, np.ndarray) and freq.shape[0] != named[0].shape[0]:
            raise InputError(f"frequency has {freq.shape[0]} entries for {named[0].shape[0]} named values: give "
                             "one number for all, or one per value")
        return [Fixed(named[0], freq)]
    if kind == "monotone":
        pairs = None if named[1] is None else (np.asarray(named[1], dtype=np.int64).reshape(-1, 2))
        return [Monotone(e.get("direction", "nonincreasing"), order=named[0], pairs=pairs)]
    if kind == "hierarchy":
        if named[0] is not None:
            if "branching" in e or "leaves" in e:
                raise InputError("hierarchy takes label_groups/position_groups, or branching and leaves, not both")
            _check_tree(named[0])
            return [Hierarchy(named[0])]
        missing = [k for k in ("branching", "leaves") if k not in e]
        if missing:
            raise InputError(f"hierarchy needs label_groups/position_groups, or branching and leaves (missing "
                             f"{missing[0]!r})")
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
        totals = e["totals"]
        if not isinstance(totals, dict):
            raise InputError(f"totals must be a table/object keyed by group name, got {totals!r}")
        return [PartitionTotals(named[0], {k: _number(v, f"totals.{k}") for k, v in totals.items()}, d=d)]
    if kind == "linear":
        return [_linear(e, d, base)]
    if kind == "function":
        from .._userfunc import load_function
        from ..problems import UserConstraint

        func = load_function(e["function"], e.get("params"), base, where("function"), error=InputError)
        return [UserConstraint(func, name=e.get("name"))]
    raise AssertionError(kind)


def _check_tree(groups) -> None:
    """A hierarchy's ``(parent, children)`` groups (0-based rows) must form a tree or a forest: each
    row the parent of one group at most, the child of one parent at most, and never its own ancestor.
    :class:`~ldpopt.problems.Hierarchy` takes any groups (each is one equality f[parent] = Σ
    f[children]); a problem file that repeats a parent, gives a row two parents or closes a cycle
    describes no tree, and solving it would answer a question nobody asked, so it is refused here."""
    parent_of: dict[int, int] = {}  # row → its parent
    parents: set[int] = set()
    for k, (parent, children) in enumerate(groups):
        if parent in parents:
            raise InputError(f"groups[{k}]: row {parent} is already the parent of an earlier group (a tree lists "
                             f"each parent once, with all its children)")
        parents.add(parent)
        for child in children.tolist():
            if child in parent_of:
                raise InputError(f"groups[{k}]: row {child} is already a child of row {parent_of[child]} (in a tree "
                                 f"each row has one parent)")
            parent_of[child] = parent
    done: set = set()
    for start in parent_of:  # each row has one parent: a cycle is a walk up that meets itself
        walk, v = set(), start
        while v in parent_of and v not in done:
            if v in walk:
                raise InputError(f"groups: row {v} is its own ancestor (the groups close a cycle, not a tree)")
            walk.add(v)
            v = parent_of[v]
        done |= walk


def _objective(doc: dict, where: _Where, base: Path):
    """(objective for Problem, its name) from the file's ``objective`` (required)."""
    names = list(OBJECTIVES)
    if "objective" not in doc:
        raise where.error(None, None, f"missing key 'objective' (one of {names}, or {USER_FUNCTION})")
    obj = doc["objective"]
    if isinstance(obj, dict):
        bad = sorted(set(obj) - {"function", "params"})
        if bad or "function" not in obj:
            raise where.error(None, "objective", f"an objective table has the keys function (required) and params, "
                                                 f"got {sorted(obj)}")
        ref, params = obj["function"], obj.get("params")
    elif isinstance(obj, str) and ":" in obj:
        ref, params = obj, None
    elif isinstance(obj, str) and obj.lower() in names:
        return obj.lower(), obj.lower()
    else:
        raise where.error(None, "objective", f"objective must be one of {names}, or {USER_FUNCTION}, got {obj!r}")
    from .._userfunc import load_function

    func = load_function(ref, params, base, f"--problem {where.path}: {where(None, 'objective')}",
                         error=InputError)
    return func, func.__name__


def _parse(path: Path):
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise InputError(f"--problem {path}: name the file .toml or .json")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"--problem {path}: not UTF-8 text: {exc}") from None
    if suffix == ".toml":
        import tomllib

        try:
            return tomllib.loads(text), _Where(path, text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"--problem {path}: invalid TOML: {exc}") from None
        except RecursionError:
            raise InputError(f"--problem {path}: arrays or tables nested too deeply to be a problem file") from None
    try:
        doc = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise InputError(f"--problem {path}: invalid JSON at line {exc.lineno}, column {exc.colno}: "
                         f"{exc.msg}") from None
    except RecursionError:
        raise InputError(f"--problem {path}: arrays or objects nested too deeply to be a problem file") from None
    if not isinstance(doc, dict):
        raise InputError(f"--problem {path}: the top level must be an object, got {type(doc).__name__}")
    return doc, _Where(path, None)


def read_problem(path) -> ProblemSpec:
    """Parse and check a problem file (TOML by suffix ``.toml``, JSON by ``.json``)."""
    from ._io import input_file

    path = input_file(path, "--problem")  # a folder, a pipe or a device is named as such
    doc, where = _parse(path)
    unknown = sorted(set(doc) - _TOP)
    if unknown:
        raise where.error(None, unknown[0], f"unknown key {unknown[0]!r} (known: {sorted(_TOP)})")
    solver = doc.get("solver")
    if solver is not None and not (isinstance(solver, str) or (
            isinstance(solver, list) and solver and all(isinstance(s, str) for s in solver))):
        raise where.error(None, "solver", f"solver must be a solver name or a list of names, got {solver!r}")
    entries = doc.get("constraints")
    if entries is not None:
        if not isinstance(entries, list):
            raise where.error(None, "constraints", "constraints must be a list of tables ([[constraints]]), got "
                                                   f"{type(entries).__name__}")
        for k, e in enumerate(entries):
            _check_entry(k, e, where)
    obj, name = _objective(doc, where, path.parent)
    ref = doc["objective"].get("function") if isinstance(doc["objective"], dict) else doc["objective"]
    return ProblemSpec(path, obj, name, solver, entries, where, ref if isinstance(ref, str) and ":" in ref else None)


def _check_entry(k: int, e, where: _Where) -> None:
    """The keys of one ``[[constraints]]`` entry against :data:`._problemtypes.CONSTRAINTS`."""
    if not isinstance(e, dict):
        raise where.error(k, None, f"must be a table/object with a type, got {e!r}")
    if "type" not in e:
        raise where.error(k, None, f"missing key 'type' (one of {sorted(CONSTRAINTS)})")
    if e["type"] not in CONSTRAINTS:
        raise where.error(k, "type", f"unknown type {e['type']!r} (one of {sorted(CONSTRAINTS)})")
    kind = CONSTRAINTS[e["type"]]
    known = kind.keys()  # Kind.keys(): the set of keys this constraint type takes (a Kind is no mapping)
    for key in e:
        if key in RETIRED and key not in known:
            lab, pos = RETIRED[key]
            raise where.error(k, key, f"{key!r} does not say whether it names labels or rows: write {lab} = [...] "
                                      f"(the counts file's value column as read) or {pos} = [...] (0-based rows)")
    missing = sorted(set(kind.required) - set(e))
    if missing:
        raise where.error(k, None, f"{e['type']} needs key {missing[0]!r}")
    for fam in kind.values:
        if fam.label in e and fam.position in e:
            raise where.error(k, fam.position, f"give {fam.label} or {fam.position}, not both")
        if fam.required and fam.label not in e and fam.position not in e:
            raise where.error(k, None, f"{e['type']} needs key {fam.label!r} or {fam.position!r}")
    bad = sorted(set(e) - known)
    if bad:
        raise where.error(k, bad[0], f"unknown key {bad[0]!r} for {e['type']} (known: {sorted(known)})")
