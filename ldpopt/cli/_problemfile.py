"""The ``--problem`` file of ``ldpopt solve``: an objective and constraints in TOML or JSON.

Notes: docs/notes/cli.md, "ldpopt.cli._problemfile"."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..problems.constraints.base import Constraint
from ..problems.registry import FileEntry
from ._args import InputError
from ._problemtypes import RETIRED, USER_FUNCTION, constraint_kinds, objective_docs

__all__ = ["ProblemSpec", "read_example", "read_problem"]

_TOP = {"objective", "solver", "constraints", "modules"}


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
                 objective_ref: str | None = None, types: list | None = None):
        self.path, self.objective, self.objective_name, self.solver = path, objective, objective_name, solver
        self.entries, self._where = entries, where
        self._types = types or []  # per entry: its registered class, or a Constraint object named by FILE.py:NAME
        self.modules: list[str] = []  # the files of ``modules`` (imported when the file was read)
        self._objective_ref = objective_ref  # the objective's "FILE.py:NAME" when it names a function
        #: the objective's parameters, for the record of a run (the file's params; an object's held values)
        self.objective_params: dict = {}

    def error(self, k: int | None, key: str | None, text: str, sub: str = "") -> InputError:
        return self._where.error(k, key, text, sub)

    def files(self) -> list[tuple[str, Path]]:
        """``(what, path)`` of every file the problem file names (a ``matrix_file``, a ``FILE.py`` of a
        user function), resolved next to it as they are read: inputs an output must not replace."""
        refs = [("objective", self._objective_ref)] if self._objective_ref else []
        refs += [("modules", m) for m in self.modules]
        for k, e in enumerate(self.entries or []):
            for key in ("matrix_file", "function", "type"):
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
            item: Any = self._types[k]
            if isinstance(item, Constraint):  # a Constraint object named by FILE.py:NAME
                out.append(item)
                continue
            kind = item.file_kind

            def at(key, x, shape="list", *, k=k, kind=kind):  # bound (it is called within this iteration only)
                try:
                    return _named(x, key, shape, labels, table.d, key in {v.position for v in kind.values})
                except InputError as exc:  # "[j]: ..." → the location constraints[k].key[j]
                    sub, _, text = str(exc).partition(": ") if str(exc).startswith("[") else ("", "", str(exc))
                    raise self.error(k, key, text, sub) from None
            try:
                named = [_spelled(e, fam, at) for fam in kind.values]
                def where(key: str, k: int = k) -> str:
                    return f"--problem {self.path}: {self._where(k, key)}"

                entry = FileEntry(e, table.d, named, self.path.parent, where, InputError)
                out.extend(item.from_file(entry))
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


def _spelled(e: dict, family, at):
    """The rows under whichever spelling of a value-key family the entry uses (None: neither)."""
    if family.label in e:
        return at(family.label, e[family.label], family.shape)
    if family.position in e:
        return at(family.position, e[family.position], family.shape)
    return None


def _objective(doc: dict, where: _Where, base: Path):
    """(objective for Problem, its name) from the file's ``objective`` (required): a name an objective
    is registered under, a function, or a registered Objective class (made with ``params``) or object."""
    names = list(objective_docs())
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
        return obj.lower(), obj.lower(), {}
    else:
        raise where.error(None, "objective", f"objective must be one of {names}, or {USER_FUNCTION}, got {obj!r}")
    from .._userfunc import load_attribute, load_function
    from ..problems import Objective

    at = f"--problem {where.path}: {where(None, 'objective')}"
    item = load_attribute(ref, base, at, InputError) if isinstance(ref, str) else None
    if isinstance(item, Objective):
        if params:
            raise InputError(f"{at}: {ref} is an Objective object: it takes no params (name its class instead)")
        return item, item.name, _held(item, None)
    if isinstance(item, type) and issubclass(item, Objective):
        obj = _made(item, params, ref, at)
        return obj, obj.name, _held(obj, params)
    func = load_function(ref, params, base, at, error=InputError)
    return func, func.__name__, dict(params or {})


def _held(obj, params) -> dict:
    """The parameters an objective object holds, for the record of a run: its public attributes that
    are plain values (numbers, text, booleans, None; what its constructor stored), with the file's
    ``params`` over them."""
    held = {k: v for k, v in vars(obj).items()
            if not k.startswith("_") and (v is None or isinstance(v, (bool, int, float, str)))}
    return {**held, **(params or {})}


def _made(cls, params, ref: str, at: str):
    """``cls(**params)``, any failure one line naming the file's key (the user's exception chained)."""
    if params is not None and not isinstance(params, dict):
        raise InputError(f"{at}: params must be a table/object of keyword arguments, got {params!r}")
    try:
        return cls(**(params or {}))
    except Exception as exc:  # the user's code
        raise InputError(f"{at}: {ref}({', '.join(f'{k}={v!r}' for k, v in (params or {}).items())}) raised "
                         f"{type(exc).__name__}: {exc}") from exc


def _modules(doc: dict, where: _Where, base: Path) -> None:
    """Import the files under ``modules`` (their registrations take effect)."""
    mods = doc.get("modules", [])
    if not isinstance(mods, list) or not all(isinstance(m, str) for m in mods):
        raise where.error(None, "modules", f"modules must be a list of file names (FILE.py) or module names, got "
                                           f"{mods!r}")
    from .._userfunc import load_module

    for m in mods:
        load_module(m, base, f"--problem {where.path}: {where(None, 'modules')}", InputError)


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
    def unique(pairs):  # TOML refuses a key given twice in a table; JSON's reader keeps the last
        keys = [k for k, _ in pairs]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise InputError(f"--problem {path}: the key {twice[0]!r} is given twice in one object; give it once")
        return dict(pairs)

    def finite(constant):  # NaN, Infinity: Python's reader accepts them, JSON has no such number
        raise InputError(f"--problem {path}: holds the non-finite number {constant}; give a finite number")

    try:
        doc = json.loads(text, object_pairs_hook=unique, parse_constant=finite) if text.strip() else {}
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
    if entries is not None and not isinstance(entries, list):
        raise where.error(None, "constraints", "constraints must be a list of tables ([[constraints]]), got "
                                               f"{type(entries).__name__}")
    _modules(doc, where, path.parent)
    types = [_check_entry(k, e, where, path.parent) for k, e in enumerate(entries or [])]
    obj, name, params = _objective(doc, where, path.parent)
    ref = doc["objective"].get("function") if isinstance(doc["objective"], dict) else doc["objective"]
    spec = ProblemSpec(path, obj, name, solver, entries, where, ref if isinstance(ref, str) and ":" in ref else None,
                       types)
    spec.objective_params = params
    spec.modules = list(doc.get("modules", []))
    return spec


def _entry_type(k: int, e: dict, where: _Where, base: Path):
    """The registered class an entry's ``type`` names, or a Constraint object (``type = "FILE.py:NAME"``)."""
    from .._userfunc import is_reference, load_attribute
    from ..problems.registry import constraint_type

    kinds = constraint_kinds()
    t = e["type"]
    if isinstance(t, str) and t in kinds:
        return constraint_type(t)
    if not is_reference(t):
        raise where.error(k, "type", f"unknown type {t!r} (one of {sorted(kinds)}, or {USER_FUNCTION})")
    at = f"--problem {where.path}: {where(k, 'type')}"
    item = load_attribute(t, base, at, InputError)
    if isinstance(item, Constraint):
        return item
    if isinstance(item, type) and issubclass(item, Constraint) and item.file_kind is not None:
        return item
    what = f"the class {item.__name__}" if isinstance(item, type) else f"a {type(item).__name__}"
    raise InputError(f"{at}: {t} is {what}, not a Constraint object or a Constraint class with file_kind and "
                     "from_file (ldpopt.problems.register_constraint)")


def _check_entry(k: int, e, where: _Where, base: Path):
    """The keys of one ``[[constraints]]`` entry against its type's :class:`~ldpopt.problems.registry.Kind`;
    the type (:func:`_entry_type`)."""
    if not isinstance(e, dict):
        raise where.error(k, None, f"must be a table/object with a type, got {e!r}")
    if "type" not in e:
        raise where.error(k, None, f"missing key 'type' (one of {sorted(constraint_kinds())})")
    item: Any = _entry_type(k, e, where, base)
    if isinstance(item, Constraint):
        bad = sorted(set(e) - {"type"})
        if bad:
            raise where.error(k, bad[0], f"{e['type']} names a Constraint object: it takes no other keys, got {bad[0]!r}")
        return item
    kind = item.file_kind
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
    return item


def read_example(kind, d: int = 6) -> list:
    """The constraints the problem-file example of the registered constraint type ``kind``
    (its ``file_example``) states, read by this reader over a counts table of ``d`` values labelled
    v0, v1, …: how a test (or a user) checks that a type's file keys and constructor read back."""
    import tempfile
    from types import SimpleNamespace

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "problem.json"
        path.write_text(json.dumps({"objective": "cls", "constraints": [kind.file_example]}), encoding="utf-8")
        return read_problem(path).build(SimpleNamespace(d=d, values=[f"v{i}" for i in range(d)])) or []
