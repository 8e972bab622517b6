"""The layers of DESIGN.md hold: every import in ``ldpopt/`` (module level or inside a function, read
with ``ast`` by :func:`test_import_graph.import_graph`) goes from a layer to a layer strictly below
it, never up and never sideways between two folders of one layer; within one folder any import that
closes no circle is allowed (``test_import_graph.py``).

:data:`LAYERS` is DESIGN.md's diagram as data, bottom (0) to top; :data:`PLACED` puts a few modules
on another layer than their folder, each with its reason. A new folder or top-level module must be
placed here (the test names it), so the diagram cannot fall behind the code.
"""

from __future__ import annotations

from test_import_graph import import_graph

#: folder or top-level module of ldpopt → layer (DESIGN.md, "The layers")
LAYERS = {
    # the foundation: Estimate and the private helpers every layer uses; ldpopt/__init__.py as a
    # target (``from .. import __version__``; its lazy attributes import nothing at import time)
    "__init__": 0,
    **dict.fromkeys(("estimate", "_validation", "_secure", "_table", "_extras", "_atomic", "_malloc", "_userfunc", "_deprecated"), 0),
    "kernels": 1,        # fused CPU/CUDA aggregation kernels
    **dict.fromkeys(("oracles", "queries", "datasets"), 2),
    **dict.fromkeys(("methods", "aggregate"), 3),
    **dict.fromkeys(("problems", "uncertainty", "pooling", "numeric", "audit"), 4),
    **dict.fromkeys(("verify", "hierarchy", "multi", "recommend", "robust", "sketches", "heavy"), 5),
    **dict.fromkeys(("testing", "interop"), 6),
    "experiments": 7,
    **dict.fromkeys(("cli", "report"), 8),
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
