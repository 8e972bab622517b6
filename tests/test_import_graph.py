"""The package's import graph has no circle: every import statement (at module level or inside a
function), read with ``ast`` without importing anything, is an edge from the importing module to
the module it names; a strongly connected component of more than one module is a circle. An import
inside an ``if TYPE_CHECKING:`` block is no edge: it never runs (it names a type for annotations
only, which ``from __future__ import annotations`` leaves unevaluated)."""

import ast
import pathlib

import ldpopt

ROOT = pathlib.Path(ldpopt.__file__).parent

# Edges allowed to close a circle: none.
ALLOWED: set = set()


def _modules(root: pathlib.Path) -> dict:
    out = {}
    for p in root.rglob("*.py"):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _type_checking(node) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:`` (a block that never runs)."""
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _run_time_nodes(tree, at_import: bool = False):
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` blocks (their ``else`` runs);
    with ``at_import``, also except function bodies (what runs when the module is imported)."""
    todo = [tree]
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, ast.If) and _type_checking(n):
            todo.extend(n.orelse)
            continue
        if at_import and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(n))


def import_graph(root: pathlib.Path = ROOT, at_import: bool = False) -> dict:
    """module → the package modules it imports (``from .x import y`` names ``x.y`` when that is a
    module, else ``x``); with ``at_import``, only the imports that run when the module is imported
    (none inside a function)."""
    mods = _modules(root)
    graph = {}
    for m, p in mods.items():
        pkg = m.split(".") if p.name == "__init__.py" else m.split(".")[:-1]
        deps = set()
        for n in _run_time_nodes(ast.parse(p.read_text(encoding="utf-8")), at_import):
            if isinstance(n, ast.ImportFrom):
                head = pkg[:len(pkg) - n.level + 1] if n.level else []
                base = ".".join(head + ([n.module] if n.module else []))
                deps.update(base + "." + a.name if base + "." + a.name in mods else base for a in n.names)
            elif isinstance(n, ast.Import):
                deps.update(a.name for a in n.names)
        graph[m] = {x for x in deps if x in mods and x != m and (m, x) not in ALLOWED}
    return graph


def circles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_type_checking_imports_are_no_edge(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import b\nelse:\n    from . import c\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n")
    (pkg / "c.py").write_text("")
    assert import_graph(pkg)["pkg.a"] == {"pkg.c"} and import_graph(pkg)["pkg.b"] == {"pkg.a"}


def test_circles_finds_a_planted_circle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(g) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_relative_and_function_level_imports():
    g = import_graph()
    assert "ldpopt.estimate" in g["ldpopt.problems.problem"]          # from ..estimate import (module level)
    assert "ldpopt.problems.dual.structure" in g["ldpopt.problems.problem"]  # from .dual.structure import (in a function)


def test_the_package_has_no_import_circle():
    assert circles(import_graph()) == []
