"""The layers of DESIGN.md hold: every import in ``ldpopt/`` (module level or inside a function, read
with ``ast`` by :func:`test_import_graph.import_graph`) goes from a layer to a layer strictly below
it, never up and never sideways between two folders of one layer; within one folder any import that
closes no circle is allowed (``test_import_graph.py``).

:data:`LAYERS` is DESIGN.md's diagram as data, bottom (0) to top; every module sits on its folder's
layer (no exception). A new folder or top-level module must be
placed here (the test names it), so the diagram cannot fall behind the code.
"""

from __future__ import annotations

import functools

from test_import_graph import import_graph

import_graph = functools.lru_cache(maxsize=None)(import_graph)  # read the package once per process

#: folder or top-level module of ldpopt → layer (DESIGN.md, "The layers")
LAYERS = {
    # the foundation: Estimate and the private helpers every layer uses; ldpopt/__init__.py as a
    # target (``from .. import __version__``; its lazy attributes import nothing at import time)
    "__init__": 0,
    **dict.fromkeys(("estimate", "_validation", "_secure", "_table", "_extras", "_atomic", "_malloc", "_userfunc", "_provenance",
                     "_deprecated", "_blas", "_fsum", "privacy", "noise"), 0),
    "kernels": 1,        # fused CPU/CUDA aggregation kernels
    **dict.fromkeys(("oracles", "queries", "datasets"), 2),
    **dict.fromkeys(("methods", "aggregate"), 3),
    **dict.fromkeys(("problems", "uncertainty", "pooling", "numeric", "audit"), 4),
    # the closed forms on any array namespace (numpy or CuPy): checked against methods/ and problems/
    # and reusing their scalar pieces; nothing below them imports them
    "xp": 4.5,
    **dict.fromkeys(("verify", "hierarchy", "multi", "keyvalue", "robust", "sketches", "heavy", "design"),
                   5),
    "recommend": 5.5,    # choose ranks per-round and across-round methods of longitudinal data (multi.rounds)
    "planning": 5.75,        # plan: expected error before collection, reusing recommend's losses and candidate sets
    "conformance": 5.9,  # the conformance suites behind testing.py (oracles round-trip shards, objectives use Problem)
    **dict.fromkeys(("testing", "interop"), 6),
    "experiments": 7,
    **dict.fromkeys(("cli", "report"), 8),
    "__main__": 9,  # `python -m ldpopt`: the command, one floor above cli/
    "examples": 9,       # the shipped example files (a user's view: they may import anything)
    "_public": 9,        # the list of public names the API reference and the docstring test read
}

FOUNDATION = 0


def _item(module: str) -> str:
    parts = module.split(".")[1:]
    return parts[0] if parts else "__init__"


def _layer(module: str) -> float:
    return LAYERS[_item(module)]


def test_every_folder_is_placed():
    items = {_item(m) for m in import_graph()}
    assert not items - set(LAYERS), f"place these in LAYERS (and DESIGN.md's diagram): {sorted(items - set(LAYERS))}"


def test_no_import_goes_up_or_sideways():
    bad = []
    for a, deps in import_graph().items():
        if _item(a) in ("__init__",):  # ldpopt/__init__.py: the lazy attributes of every layer
            continue
        for b in deps:
            if _item(b) == _item(a) and _layer(a) == _layer(b):
                continue  # within one folder
            if _layer(a) == _layer(b) == FOUNDATION:
                continue  # the foundation's helpers: any order without a circle
            if not _layer(b) < _layer(a):
                bad.append(f"{a} (layer {_layer(a)}) imports {b} (layer {_layer(b)})")
    assert not bad, "imports that go up or sideways:\n" + "\n".join(sorted(bad))


def test_the_check_catches_an_upward_import(monkeypatch):
    import test_layers as me

    graph = {"ldpopt.oracles.grr": {"ldpopt.problems.problem"}, "ldpopt.problems.problem": set()}
    monkeypatch.setattr(me, "import_graph", lambda: graph)
    try:
        test_no_import_goes_up_or_sideways()
    except AssertionError as exc:
        assert "ldpopt.oracles.grr (layer 2) imports ldpopt.problems.problem (layer 4)" in str(exc)
    else:
        raise AssertionError("an upward import passed the layering check")


#: inside problems/ (DESIGN.md, "problems/"): sub-folder or top-level module → floor, bottom (0) up; an
#: import inside problems/ goes to a lower floor, or stays in its own sub-folder. One floor per folder,
#: no module placed apart from its folder: items → dual → check → solvers → Problem
PROBLEMS = "ldpopt.problems"
PROBLEMS_LAYERS = {
    # the leaves: the exceptions, solve's clock and context, the answer every solver returns (it
    # names the verdict for annotations only), the old paths
    **dict.fromkeys(("errors", "progress", "solution", "_moved", "worker"), 0),
    "registry": 1,        # register_objective / register_constraint (reads an item by what it has)
    "objectives": 2,      # the objective protocol, the built-ins, their separable and grouped forms
    "constraints": 3,
    "dual": 4,            # the compiled rows (structure) and the dual method's algorithms
    "check": 5,           # the verdict and the certificate, on dual/'s compiled rows
    "solvers": 6,         # every route, the structured solver's entry point included
    "problem": 7,
}


def _problems_floor(module: str) -> float:
    folder = module[len(PROBLEMS) + 1:].split(".")[0]
    if folder not in PROBLEMS_LAYERS:
        raise KeyError(f"place {module} in PROBLEMS_LAYERS (and DESIGN.md)")
    return PROBLEMS_LAYERS[folder]


def _in_problems(module: str) -> bool:
    """A module of problems/."""
    return module.startswith(PROBLEMS + ".")


def problems_graph() -> dict:
    """The imports between modules of problems/ (the package's own __init__ left out: it re-exports)."""
    return {a: {b for b in deps if _in_problems(b)} for a, deps in import_graph().items() if _in_problems(a)}


def test_problems_imports_go_down():
    bad = []
    for a, deps in problems_graph().items():
        for b in deps:
            if _problems_floor(b) < _problems_floor(a) or a.split(".")[2] == b.split(".")[2]:
                continue
            bad.append(f"{a} (floor {_problems_floor(a)}) imports {b} (floor {_problems_floor(b)})")
    assert not bad, "imports inside problems/ that go up or sideways:\n" + "\n".join(sorted(bad))


def test_the_problems_check_catches_an_upward_import(monkeypatch):
    import test_layers as me

    graph = {f"{PROBLEMS}.objectives.separable": {f"{PROBLEMS}.check.verdict"}, f"{PROBLEMS}.check.verdict": set()}
    monkeypatch.setattr(me, "problems_graph", lambda: graph)
    try:
        test_problems_imports_go_down()
    except AssertionError as exc:
        assert f"{PROBLEMS}.objectives.separable (floor 2) imports {PROBLEMS}.check.verdict (floor 5)" in str(exc)
    else:
        raise AssertionError("an upward import inside problems/ passed the check")


#: the longest chain of imports between modules of problems/ (function-level imports count, an import
#: inside ``if TYPE_CHECKING:`` does not: it never runs; the package's own __init__ left out): DESIGN.md's
#: bound, 9. Today's chain of 9: problem → solvers.routes → direct_qp → check.verdict →
#: objectives.smooth → builtins → likelihood_terms → separable → objectives.base (the solve's routes a
#: module of their own between Problem and the solvers: one floor more than when problem.py held
#: them); through the check, 8: problem → routes → attempts → check.verdict → certificate →
#: dual.structure → tree → dual.dual (each edge a call at run time)
PROBLEMS_DEPTH = 9


def longest_chain(graph: dict) -> list:
    """The longest import chain of an acyclic ``graph`` (module → modules it imports), top first."""
    memo: dict = {}

    def chain(m):
        if m not in memo:
            memo[m] = [m] + max((chain(d) for d in graph.get(m, ())), key=len, default=[])
        return memo[m]

    return max((chain(m) for m in graph), key=len, default=[])


def test_problems_import_depth():
    assert len(longest_chain({"a": {"b", "c"}, "b": {"c"}, "c": set()})) == 3  # the counter itself
    chain = longest_chain(problems_graph())
    assert len(chain) <= PROBLEMS_DEPTH, f"{len(chain)} floors: " + " → ".join(m[len(PROBLEMS) + 1:] for m in chain)


def _with_packages(graph: dict) -> dict:
    """``graph`` (module → modules it imports at import time) with the packages each import runs
    first: importing ``a.b.c`` runs ``a`` and ``a.b`` (not the importer's own packages: those are
    already under way)."""
    out = {m: set(d) for m, d in graph.items()}
    for m, deps in graph.items():
        for x in deps:
            parts = x.split(".")
            out[m].update(p for p in (".".join(parts[:i]) for i in range(1, len(parts)))
                          if p in graph and not m.startswith(p + "."))
    return out


def _reaches(graph: dict, starts, b: str) -> bool:
    seen, todo = set(), list(starts)
    while todo:
        v = todo.pop()
        if v == b:
            return True
        if v not in seen:
            seen.add(v)
            todo.extend(graph.get(v, ()))
    return False


def hidden_loops(at_import: dict, every: dict) -> list:
    """The imports inside problems/ written in a function that would close a loop at import time if
    written at module level: b imported by a in a function, while importing b (with its packages)
    already imports a."""
    out, now = [], _with_packages(at_import)
    for a in sorted(m for m in every if m.startswith(PROBLEMS + ".")):
        for b in sorted(every[a] - at_import.get(a, set())):
            hoisted = _with_packages({**at_import, a: at_import.get(a, set()) | {b}})
            if b.startswith(PROBLEMS + ".") and _reaches(hoisted, hoisted[a] - now.get(a, set()), a):
                out.append(f"{a} imports {b} inside a function")
    return out


def test_no_import_in_a_function_avoids_a_loop():
    """An import of problems/ written inside a function would hold at module level too: the floors,
    not a late import, keep the graph free of loops at import time."""
    top = import_graph(at_import=True)
    bad = hidden_loops(top, import_graph())
    assert not bad, "imports in a function that dodge a loop:\n" + "\n".join(bad)
    # the check itself: package x's __init__ imports x.a, which imports y, which imports x.b late
    x, y = f"{PROBLEMS}.x", f"{PROBLEMS}.y"
    planted_top = {x: {f"{x}.a"}, f"{x}.a": {y}, y: set(), f"{x}.b": set()}
    assert hidden_loops(planted_top, {**planted_top, y: {f"{x}.b"}}) == [f"{y} imports {x}.b inside a function"]
    assert hidden_loops(planted_top, {**planted_top, f"{x}.b": {y}}) == []  # no loop: it could be at the top
