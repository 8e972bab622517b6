"""Dependencies as declared: every third-party import in ``ldpopt`` is a core dependency or, for a
package of an extra, guarded (``ldpopt._extras.require`` naming that extra, an ``ImportError``
handler, or an ``importlib.util.find_spec`` test); Dask is core (``ldpopt aggregate``'s default
scheduler needs it), pinned as in requirements.lock; the README lists every extra."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# distributions whose import name is not the distribution name with - as _
MODULE_OF = {"scikit-learn": "sklearn", "dask[distributed]": "dask", "pyarrow": "pyarrow", "cupy-cuda12x": "cupy"}
# installed with an extra's packages, not declared by it
TRANSITIVE: dict[str, str] = {}


def _dist(spec: str) -> str:
    return re.split(r"[<>=!~;\s]", spec, maxsplit=1)[0].lower()


def _modules(specs) -> set[str]:
    out = set()
    for spec in specs:
        dist = _dist(spec)
        out.add(MODULE_OF.get(dist, re.sub(r"\[.*\]", "", dist).replace("-", "_")))
        if dist == "dask[distributed]":
            out.add("distributed")
    return out


CORE = _modules(PYPROJECT["dependencies"]) | {"PIL"}  # Pillow: a dependency of matplotlib
EXTRA_OF = {m: extra for extra, specs in PYPROJECT["optional-dependencies"].items() for m in _modules(specs)}
EXTRA_OF.update(TRANSITIVE)


def _guarded(node, parents, top: str) -> bool:
    """An ImportError handler, a find_spec(top) test, or a require(top, ...) earlier in the function."""
    child = node
    for anc in reversed(parents):
        if isinstance(anc, ast.Try) and child in anc.body:
            for h in anc.handlers:
                names = {getattr(t, "id", None) for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])}
                if names & {"ImportError", "ModuleNotFoundError"}:
                    return True
        if isinstance(anc, ast.If) and child in anc.body and f"find_spec({top!r})" in ast.unparse(anc.test):
            return True
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
            before = anc.body[:anc.body.index(child)] if child in anc.body else []
            for stmt in before:
                for call in ast.walk(stmt):
                    if (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "require"
                            and ast.literal_eval(call.args[0]).split(".")[0] == top):
                        return True
        child = anc
    return False


def _walk(tree):
    stack = [(tree, [])]
    while stack:
        node, parents = stack.pop()
        yield node, parents
        for ch in ast.iter_child_nodes(node):
            stack.append((ch, parents + [node]))


def _imports():
    for path in sorted((ROOT / "ldpopt").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node, parents in _walk(tree):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                tops = [node.module.split(".")[0]]
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "require"
                  and path.name != "_extras.py"):
                yield path, node, parents, "require", ast.literal_eval(node.args[0]).split(".")[0]
                continue
            else:
                continue
            for top in tops:
                if top not in sys.stdlib_module_names and top != "ldpopt" and top != "__future__":
                    yield path, node, parents, "import", top


def test_every_third_party_import_is_core_or_guarded_by_its_extra():
    bad = []
    for path, node, parents, kind, top in _imports():
        where = f"{path.relative_to(ROOT)}:{node.lineno}"
        if kind == "require":
            extra = ast.literal_eval(node.args[1])
            want = None if top in CORE else EXTRA_OF.get(top, "<undeclared>")
            if extra != want:
                bad.append(f"{where}: require({top!r}, {extra!r}) but the package is in {want or 'core'}")
        elif top in CORE:
            continue
        elif top not in EXTRA_OF:
            bad.append(f"{where}: imports {top!r}, which no dependency list declares")
        elif not _guarded(node, parents, top):
            bad.append(f"{where}: imports {top!r} (extra {EXTRA_OF[top]!r}) without a guard")
    assert not bad, "\n".join(bad)


def _lock() -> dict[str, str]:
    return {name.lower().replace("_", "-"): version for name, version in
            (line.split("==") for line in (ROOT / "requirements.lock").read_text().splitlines()
             if "==" in line and not line.startswith("#"))}


def test_dask_is_core_and_its_range_admits_the_locked_release():
    from packaging.requirements import Requirement

    assert {"dask", "distributed"} <= CORE
    lock = _lock()
    spec = Requirement(next(s for s in PYPROJECT["dependencies"] if s.startswith("dask")))
    assert spec.extras == {"distributed"} and lock["dask"] == lock["distributed"], spec
    assert spec.specifier.contains(lock["dask"]) and not any(s.operator == "==" for s in spec.specifier), spec


def test_runtime_dependencies_are_ranges_that_admit_the_lock():
    """An index resolves ``pip install ldpopt`` against these: ranges, never exact pins (those live in
    requirements.lock, which `make` installs), and each admits the locked version."""
    from packaging.requirements import Requirement

    lock = _lock()
    for text in PYPROJECT["dependencies"]:
        req = Requirement(text)
        assert not any(s.operator in ("==", "===") for s in req.specifier), f"{text}: an exact pin (requirements.lock pins)"
        name = req.name.lower().replace("_", "-")
        assert name in lock and req.specifier.contains(lock[name]), (text, lock.get(name))


def test_readme_lists_every_extra_with_what_needs_it():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Optional extras", 1)[1].split("\n## ", 1)[0]
    for extra in PYPROJECT["optional-dependencies"]:
        line = next((ln for ln in section.splitlines() if f"`{extra}`" in ln), None)
        assert line is not None and len(line) > 40, (extra, section)
    assert "parallel" not in section


def test_require_names_the_extra_and_the_checkout_install():
    import pytest

    from ldpopt._extras import require

    with pytest.raises(ImportError, match=r"pip install 'ldpopt\[peers\]' \(in a checkout: pip install '\.\[peers\]'\)"):
        require("no_such_package_ldpopt_test", "peers", "x")
    with pytest.raises(ImportError, match="reinstall ldpopt"):
        require("no_such_package_ldpopt_test", None, "x")
