"""The module paths of ``ldpopt.problems`` before its folders still import, for one release: each
emits a DeprecationWarning naming its new path and holds the very objects of the new module; and no
code of the repository imports an old path."""

from __future__ import annotations

import ast
import importlib
import json
import pathlib
import sys
import warnings

import pytest

import ldpopt.problems
from ldpopt.problems._moved import MOVED

ROOT = pathlib.Path(ldpopt.__file__).parent.parent


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_warns_and_gives_the_same_objects(old):
    new = importlib.import_module(MOVED[old])
    for name in [m for m in sys.modules if m == old or m.startswith(old + ".")]:
        del sys.modules[name]
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated .*; use {MOVED[old]} instead"):
        mod = importlib.import_module(old)
    assert mod is not new and mod.__name__ == old
    public = [n for n in vars(new) if not n.startswith("__")]
    assert public, f"{MOVED[old]} has no names"
    assert all(getattr(mod, n) is getattr(new, n) for n in public)


def _forget(*old):
    for name in old:
        sys.modules.pop(name, None)
        if isinstance(vars(ldpopt.problems).get(name.rsplit(".", 1)[1]), type(sys)):
            del vars(ldpopt.problems)[name.rsplit(".", 1)[1]]


def test_old_names_from_the_package():
    _forget("ldpopt.problems.order", "ldpopt.problems.structured.separable", "ldpopt.problems.checks",
            "ldpopt.problems.certificate")
    with pytest.warns(DeprecationWarning, match="ldpopt.problems.order is deprecated .*; use ldpopt.problems.constraints.order instead"):
        from ldpopt.problems.order import Monotone
    assert Monotone is ldpopt.problems.Monotone
    with pytest.warns(DeprecationWarning, match="ldpopt.problems.structured.separable is deprecated"):
        from ldpopt.problems.structured.separable import Quadratic
    from ldpopt.problems.objectives.separable import Quadratic as new
    assert Quadratic is new
    with pytest.warns(DeprecationWarning, match="ldpopt.problems.checks is deprecated .*; use ldpopt.problems.check.verdict instead"):
        assert ldpopt.problems.checks.Checks is ldpopt.problems.Checks
    # an old path named as a function of the package does not replace the function
    with pytest.warns(DeprecationWarning, match="ldpopt.problems.certificate is deprecated"):
        from ldpopt.problems.certificate import certificate
    assert certificate is ldpopt.problems.certificate and callable(ldpopt.problems.certificate)
    with pytest.raises(AttributeError, match="no_such_module"):
        ldpopt.problems.no_such_module  # noqa: B018
    # the names of the former modules constraints.py and objectives.py: their folders re-export them, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from ldpopt.problems.constraints import Simplex
        from ldpopt.problems.objectives import LeastSquares, make_objective
    assert Simplex is ldpopt.problems.Simplex and callable(make_objective) and LeastSquares.name == "cls"


def _source(path: pathlib.Path) -> str:
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def _imports(path: pathlib.Path):
    for n in ast.walk(ast.parse(_source(path))):
        if isinstance(n, ast.ImportFrom) and n.module and not n.level:
            yield n.module
            for a in n.names:  # a module imported by name (not a function of that name, as certificate)
                full = f"{n.module}.{a.name}"
                if full in MOVED and isinstance(getattr(sys.modules.get(n.module), "__dict__", {}).get(a.name), (type(sys), type(None))):
                    yield full
        elif isinstance(n, ast.Import):
            yield from (a.name for a in n.names)


def test_nothing_in_the_repository_imports_an_old_path():
    files = [p for d in ("ldpopt", "tests", "benchmarks", "docs", "notebooks") for p in (ROOT / d).rglob("*")
             if p.suffix in (".py", ".ipynb") and "ldpopt.problems" in p.read_text(encoding="utf-8")]
    bad = sorted({f"{p.relative_to(ROOT)}: {m}" for p in files for m in _imports(p) if m in MOVED and p.name != "test_problems_moved.py"})
    assert not bad, "old module paths imported:\n" + "\n".join(bad)
