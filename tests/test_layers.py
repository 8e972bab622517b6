"""The layers of DESIGN.md hold: every import in ``ldpopt/`` (module level or inside a function, read
with ``ast`` by :func:`test_import_graph.import_graph`) goes from a layer to a layer strictly below
it, never up and never sideways between two folders of one layer; within one folder any import that
closes no circle is allowed (``test_import_graph.py``).

:data:`LAYERS` is DESIGN.md's diagram as data, bottom (0) to top; :data:`PLACED` puts a few modules
on another layer than their folder, each with its reason. A new folder or top-level module must be
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
                     "_deprecated", "_blas", "_fsum"), 0),
    "kernels": 1,        # fused CPU/CUDA aggregation kernels
    **dict.fromkeys(("oracles", "queries", "datasets"), 2),
    **dict.fromkeys(("methods", "aggregate"), 3),
    **dict.fromkeys(("problems", "uncertainty", "pooling", "numeric", "audit"), 4),
    **dict.fromkeys(("verify", "hierarchy", "multi", "keyvalue", "robust", "sketches", "heavy"),
                   5),
    "recommend": 5.5,    # choose ranks per-round and across-round methods of longitudinal data (multi.rounds)
    **dict.fromkeys(("testing", "interop"), 6),
    "experiments": 7,
    **dict.fromkeys(("cli", "report"), 8),
    "__main__": 9,  # `python -m ldpopt`: the command, one floor above cli/
    "examples": 9,       # the shipped example files (a user's view: they may import anything)
    "_public": 9,        # the list of public names the API reference and the docstring test read
}

#: modules placed on another layer than their folder's, with the reason
PLACED = {
    # the closed forms on any array namespace (numpy or CuPy) are checked against methods/ and
    # problems/ and reuse their scalar pieces; nothing below them imports them
    "kernels.xp": 4.5, "kernels.xp_check": 4.5, "kernels.xp_cut": 4.5, "kernels.xp_mle": 4.5,
    # the oracle conformance suite round-trips shards (aggregate/): it sits just under testing.py, kept beside the
    # oracles it checks
    "oracles.conformance": 5.5,
    # the same for the objective and constraint conformance suite: it checks items through Problem
    # (problems/'s public API), a client of problems/ kept beside the items it checks
    "problems.conformance": 5.5,
}

FOUNDATION = 0


def _item(module: str) -> str:
    parts = module.split(".")[1:]
    return parts[0] if parts else "__init__"


def _layer(module: str) -> float:
    rel = module.split(".", 1)[1] if "." in module else ""
    if rel in PLACED:
        return PLACED[rel]
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
#: import inside problems/ goes to a lower floor, or stays in its own sub-folder on its own floor
PROBLEMS = "ldpopt.problems"
PROBLEMS_LAYERS = {
    **dict.fromkeys(("errors", "progress", "_moved"), 0),  # the exceptions, solve's clock, the old paths
    "registry": 2,        # register_objective / register_constraint (checks an item against objectives.base)
    "objectives": 3,
    "constraints": 4,
    "solvers.structured": 5,  # the structured solver's algorithms (dual, simplex, grouped, blocks, chain, tree)
    "check": 6,
    "solvers": 8,
    "problem": 9,
}
#: modules on another floor than their folder's, with the reason
PROBLEMS_PLACED = {
    "objectives.base": 1,  # the objective protocol, below the registry that checks items against it
    "solution": 7,  # the answer every solver returns; it holds the check's verdict
    # the structured solver's entry point certifies its answer with check/'s certificate
    "solvers.structured.solver": 8, "solvers.structured": 8,
    # a user's declared separable objective evaluates once per distinct count (solvers.structured.grouped)
    "objectives.user_separable": 5.5,
}


def _problems_floor(module: str) -> float:
    rel = module[len(PROBLEMS) + 1:]
    if rel in PROBLEMS_PLACED:
        return PROBLEMS_PLACED[rel]
    parts = rel.split(".")
    for k in (".".join(parts[:2]), parts[0]):
        if k in PROBLEMS_LAYERS:
            return PROBLEMS_LAYERS[k]
    raise KeyError(f"place {module} in PROBLEMS_LAYERS (and DESIGN.md)")


def _in_problems(module: str) -> bool:
    """A module of problems/ on problems/'s layer (one PLACED above it, the conformance suite, is a client)."""
    return module.startswith(PROBLEMS + ".") and _layer(module) == LAYERS["problems"]


def problems_graph() -> dict:
    """The imports between modules of problems/ (the package's own __init__ left out: it re-exports)."""
    return {a: {b for b in deps if _in_problems(b)} for a, deps in import_graph().items() if _in_problems(a)}


def test_problems_imports_go_down():
    bad = []
    for a, deps in problems_graph().items():
        for b in deps:
            same_folder = a.split(".")[2] == b.split(".")[2]
            if _problems_floor(b) < _problems_floor(a) or (same_folder and _problems_floor(a) == _problems_floor(b)):
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
        assert f"{PROBLEMS}.objectives.separable (floor 3) imports {PROBLEMS}.check.verdict (floor 6)" in str(exc)
    else:
        raise AssertionError("an upward import inside problems/ passed the check")


#: the longest chain of imports between modules of problems/ (function-level imports count, an import
#: inside ``if TYPE_CHECKING:`` does not: it never runs; the package's own __init__ left out): DESIGN.md's
#: bound, 8. Today's chains of 8: problem → user_forms → policy → objectives.smooth → builtins →
#: likelihood_terms → separable → objectives.base, and problem → sqp / ipm / attempts → check.verdict →
#: certificate → structured.structure → tree → dual → progress (each edge a call at run time)
PROBLEMS_DEPTH = 8


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
