"""The one list of what a ``ldpopt solve --problem`` file may say: objectives and constraint types
with their keys. ``ldpopt solve --help`` is generated from it (:func:`help_text`), the parser
(:mod:`._problemfile`) checks files against it, and ``tests/test_cli_solve_file.py`` checks that the
command-line page (docs/cli.md) lists the same names, so the three cannot drift apart.

Values are named in a way that cannot be mistaken (a choice: a counts file's labels may themselves be
integers, in any row order, so a bare integer could mean either): a key that names values comes in
two spellings, ``labels``/``label_…`` (matched against the counts file's value column as read, integers
included) and ``positions``/``position_…`` (0-based rows of the counts file). The older one-spelling
keys (``indices``, ``order``, ``pairs``, ``groups``) are refused, naming the key and the line.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

__all__ = ["CONSTRAINTS", "OBJECTIVES", "RETIRED", "USER_FUNCTION", "ValueKey", "help_text"]

#: built-in objectives (``ldpopt.problems.available_objectives()`` less ``posterior``, which needs
#: arrays a file does not carry) → one line each
OBJECTIVES = {
    "cls": "constrained least squares ||f - f~||^2",
    "weighted-mle": "Gaussian-approximation MLE, weights 1/sigma_v^2",
    "weighted-mle-naive": "the same with the variance evaluated at f (cautionary)",
    "multinomial": "exact likelihood of GRR counts",
    "binomial": "exact per-bit likelihood (unary encodings)",
    "l1": "least absolute deviations ||f - f~||_1",
}

#: how a file names a function of the user's own (objective, or a constraint of type "function")
USER_FUNCTION = "FILE.py:NAME (relative to the problem file's folder) or MODULE:NAME"


@dataclass(frozen=True)
class ValueKey:
    """A key naming values, in its two spellings: ``labels`` or ``positions`` (shape ``list``,
    ``pairs`` ([[a, b], …]), ``parent`` ([[parent, [children…]], …]) or ``table`` ({name = [values…]}))."""

    label: str
    position: str
    shape: str
    required: bool


@dataclass(frozen=True)
class Kind:
    doc: str
    required: tuple = ()
    optional: tuple = ()
    values: tuple = ()   # ValueKey families (at most one spelling of each)

    def keys(self) -> set:
        out = {"type", *self.required, *self.optional}
        for v in self.values:
            out |= {v.label, v.position}
        return out


_LIST = ValueKey("labels", "positions", "list", True)
CONSTRAINTS = {
    "simplex": Kind("f >= 0, sum f = 1 (the default when the file has no constraints list)"),
    "nonnegative": Kind("f >= 0"),
    "sum": Kind("sum f = total (default 1)", optional=("total",)),
    "box": Kind("lower <= f <= upper (a number, or one per value)", optional=("lower", "upper")),
    "subset_sum": Kind("sum of the named values (sense: ==, <=, >=) value", ("value",), ("sense",), (_LIST,)),
    "fixed": Kind("the named values = frequency (a number, or one per named value)", ("frequency",), (),
                  (_LIST,)),
    "monotone": Kind("f ordered along a chain (labels | positions) or pairs a before b "
                     "(label_pairs | position_pairs); direction nonincreasing (default) or nondecreasing; "
                     "default chain: the table's order", (), ("direction",),
                     (ValueKey("labels", "positions", "list", False),
                      ValueKey("label_pairs", "position_pairs", "pairs", False))),
    "partition": Kind("disjoint groups with known totals: label_groups | position_groups = {name = [values]}, "
                      "totals = {name = total}", ("totals",), (),
                      (ValueKey("label_groups", "position_groups", "table", True),)),
    "hierarchy": Kind("the counts are range-tree nodes, leaves first: branching and leaves; or "
                      "label_groups | position_groups = [[parent, [children]], ...]",
                      (), ("branching", "leaves"), (ValueKey("label_groups", "position_groups", "parent", False),)),
    "linear": Kind("A f = rhs, general equality rows (e.g. marginals that must agree): matrix = [[...], ...] "
                   "(one row per equation, one column per row of the counts file) or matrix_file = \"A.npz\" "
                   "(scipy.sparse.save_npz, or a numpy .npy; relative to the problem file's folder); rhs a number "
                   "or one per row (default 0)", (), ("matrix", "matrix_file", "rhs", "name")),
    "function": Kind(f"a function of your own, {USER_FUNCTION}: function(f, estimate, **params) -> cvxpy "
                     "constraint(s)", ("function",), ("params", "name")),
}

#: keys of earlier files that named values without saying how → the two spellings to use instead
RETIRED = {"indices": ("labels", "positions"), "order": ("labels", "positions"),
           "pairs": ("label_pairs", "position_pairs"), "groups": ("label_groups", "position_groups")}


def help_text() -> str:
    """The problem-file part of ``ldpopt solve --help``."""
    w = max(map(len, list(OBJECTIVES) + list(CONSTRAINTS))) + 2
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

    for n, doc in [*OBJECTIVES.items(), ("FILE.py:NAME", ("your function(f, estimate, **params) -> convex cvxpy "
                                                          "expression"))]:
        lines += item(n, doc)
    lines += ["", "constraint types (type = ...):"]
    for n, k in CONSTRAINTS.items():
        lines += item(n, k.doc)
    lines += ["", ("values are named by labels = [...] (the counts file's value column as read; integer labels "
                   "too)"), "or positions = [...] (0-based rows of the counts file), never by a bare indices = [...]."]
    return "\n".join(lines)
