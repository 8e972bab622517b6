"""What a ``ldpopt solve --problem`` file may say: objectives and constraint types with their keys,
read from the problems' registries (:mod:`ldpopt.problems.registry`: each objective's ``file_doc``,
each constraint type's ``file_kind``), so a registered item of the user's own is listed beside the
built-ins. ``ldpopt solve --help`` is generated from it (:func:`help_text`), the parser
(:mod:`._problemfile`) checks files against it, and ``tests/test_cli_solve_file.py`` checks that the
command-line page (docs/cli.md) lists the same built-in names, so the three cannot drift apart.

Notes: docs/notes/cli.md, "ldpopt.cli._problemtypes"."""

from __future__ import annotations

import textwrap

from ..problems.registry import Kind, ValueKey, constraint_types, file_objectives

__all__ = ["RETIRED", "USER_FUNCTION", "Kind", "ValueKey", "constraint_kinds", "help_text", "objective_docs"]

#: how a file names a function or a registered item of the user's own
USER_FUNCTION = "FILE.py:NAME (relative to the problem file's folder) or MODULE:NAME"


def objective_docs() -> dict[str, str]:
    """name → one line for every objective a problem file may name (``Objective.file_doc``; not
    ``posterior``, which needs arrays a file does not carry)."""
    return file_objectives()


def constraint_kinds() -> dict[str, Kind]:
    """type → :class:`Kind` for every registered constraint type, in registration order."""
    return {name: cls.file_kind for name, cls in constraint_types().items()}


#: keys of earlier files that named values without saying how → the two spellings to use instead
RETIRED = {"indices": ("labels", "positions"), "order": ("labels", "positions"),
           "pairs": ("label_pairs", "position_pairs"), "groups": ("label_groups", "position_groups")}


def help_text() -> str:
    """The problem-file part of ``ldpopt solve --help``."""
    objectives, kinds = objective_docs(), constraint_kinds()
    w = max(map(len, list(objectives) + list(kinds))) + 2
    lines = ["problem file (TOML or JSON):",
             '  objective = "cls"            # required: a built-in name below, or FILE.py:NAME / MODULE:NAME',
             ("  # a user objective with keyword arguments (JSON: \"objective\": {\"function\": ..., "
              "\"params\": {...}}):"),
             '  #   [objective]',
             '  #   function = "my_variants.py:kl_to_prior"',
             '  #   params = { weight = 1e-4 }',
             '  solver = "CLARABEL"          # optional (--solver overrides; default: ldpopt\'s chain)',
             "  [[constraints]]              # none: the simplex; a list replaces it",
             '  type = "subset_sum"',
             '  labels = ["a", "b"]          # or positions = [0, 1]',
             "  value = 0.3",
             "",
             "objectives:"]
    def item(name, doc):
        return textwrap.wrap(doc, 100, initial_indent=f"  {name.ljust(w)}", subsequent_indent=" " * (w + 2))

    for n, doc in [*objectives.items(), ("FILE.py:NAME", ("your function(f, estimate, **params) -> convex cvxpy "
                                                           "expression, or a registered Objective class or "
                                                           "object"))]:
        lines += item(n, doc)
    lines += ["", "constraint types (type = ...):"]
    for n, k in kinds.items():
        lines += item(n, k.doc)
    lines += item("FILE.py:NAME", "a registered Constraint class of your own (its keys) or object")
    lines += ["", ("values are named by labels = [...] (the counts file's value column as read; integer labels "
                   "too)"), "or positions = [...] (0-based rows of the counts file), never by a bare indices = [...]."]
    return "\n".join(lines)
