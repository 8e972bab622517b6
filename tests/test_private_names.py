"""A leading underscore means private to its package: no module of ``ldpopt/`` imports a private
module or name from outside the package that holds it (DESIGN.md, "Private names").

The package that holds a private item: for a private module ``a/b/_m.py``, ``a.b``; for a private
name ``_f`` defined in module ``a/b/m.py``, ``a.b`` too (any module of ``a.b`` and of its sub-packages
may use it). Read with ``ast``, every ``from … import …`` at module level or inside a function.
Tests and benchmarks are outside every package; they may reach the private names of the code they
test or time (the exception DESIGN.md states).
"""

from __future__ import annotations

import ast
from pathlib import Path

import ldpopt

ROOT = Path(ldpopt.__file__).resolve().parent


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def crossings(root: Path = ROOT) -> list[tuple[str, str]]:
    """(importing module, private item) for every import of a private item from outside its package."""
    out = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("ldpopt"):
                continue
            for alias in node.names:
                full = target.split(".") + [alias.name]
                first = next((i for i, p in enumerate(full) if _private(p)), None)
                if first is None:
                    continue
                owner = full[:first]
                is_module = (root.parent.joinpath(*full[: first + 1]).with_suffix(".py").exists()
                             or root.parent.joinpath(*full[: first + 1]).is_dir())
                if not is_module and root.parent.joinpath(*owner).with_suffix(".py").exists():
                    owner = owner[:-1]  # a private name inside module owner[-1]: its package holds it
                holder = ".".join(owner)
                if not (package == holder or package.startswith(holder + ".")):
                    out.append((module, ".".join(full)))
    return sorted(out)


def test_no_private_item_is_imported_across_packages():
    bad = crossings()
    assert not bad, "private items imported from outside their package:\n" + "\n".join(f"{a} imports {b}" for a, b in bad)


def test_the_check_sees_a_crossing(tmp_path):
    pkg = tmp_path / "ldpopt"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    for f in ("__init__.py", "a/__init__.py", "b/__init__.py"):
        (pkg / f).write_text("")
    (pkg / "a" / "m.py").write_text("def _f():\n    pass\n")
    (pkg / "a" / "_p.py").write_text("")
    (pkg / "a" / "n.py").write_text("from .m import _f\nfrom . import _p\n")          # inside a/: allowed
    (pkg / "b" / "k.py").write_text("def g():\n    from ..a.m import _f\n    from ..a import _p\n")
    assert crossings(pkg) == [("ldpopt.b.k", "ldpopt.a._p"), ("ldpopt.b.k", "ldpopt.a.m._f")]
