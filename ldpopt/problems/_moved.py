"""The module paths of ``ldpopt.problems`` before it was grouped by idea, kept working for one release.

``import ldpopt.problems.checks`` (or ``from ldpopt.problems.order import Monotone``) finds the module
at its new path, emits a :class:`DeprecationWarning` naming that path and returns a module holding the
same objects. :data:`MOVED` is the one list; nothing inside ldpopt imports an old path.
"""

from __future__ import annotations

import importlib
import sys
import types

from .. import _deprecated

_P = "ldpopt.problems"

#: old module path → new module path
MOVED = {f"{_P}.{old}": f"{_P}.{new}" for old, new in {
    "objective_base": "objectives.base",
    "structured.separable": "objectives.separable",
    "structured.user_separable": "objectives.user_separable",
    "likelihood_terms": "objectives.likelihood_terms",
    "smooth": "objectives.smooth",
    "recognise": "objectives.recognise",
    "order": "constraints.order",
    "partition": "constraints.partition",
    "ranges": "constraints.ranges",
    "jacobians": "constraints.jacobians",
    "feasibility": "constraints.feasibility",
    "farkas": "constraints.farkas",
    "exact_lp": "constraints.exact_lp",
    "checks": "check.verdict",
    "objective_check": "check.verdict",
    "kkt_bound": "check.verdict",
    "constraint_terms": "check.verdict",
    "check.objective_check": "check.verdict",
    "check.kkt_bound": "check.verdict",
    "check.constraint_terms": "check.verdict",
    "certificate": "check.certificate",
    "certificate_support": "check.certificate",
    "certificate_blocks": "check.certificate",
    "certificate_multipliers": "check.certificate",
    "nonsmooth": "check.certificate",
    "check.nonsmooth": "check.certificate",
    "structured": "solvers.structured",
    "structured.dual": "dual.dual",
    "structured.simplex": "dual.simplex",
    "structured.grouped": "dual.grouped",
    "structured.blocks": "dual.blocks",
    "structured.chain": "dual.chain",
    "structured.tree": "dual.tree",
    "structured.structure": "dual.structure",
    "structured.multipliers": "dual.multipliers",
    "structured.solver": "solvers.structured.solver",
    "solvers.structured.structure": "dual.structure",
    "solvers.structured.dual": "dual.dual",
    "solvers.structured.simplex": "dual.simplex",
    "solvers.structured.grouped": "dual.grouped",
    "solvers.structured.blocks": "dual.blocks",
    "solvers.structured.chain": "dual.chain",
    "solvers.structured.tree": "dual.tree",
    "solvers.structured.multipliers": "dual.multipliers",
    "solvers.structured.row_groups": "dual.row_groups",
    "sqp": "solvers.sqp",
    "ipm": "solvers.ipm",
    "policy": "solvers.policy",
    "attempts": "solvers.attempts",
    "isolate": "solvers.isolate",
    "phase_one": "solvers.phase_one",
    "user_forms": "solvers.user_forms",
}.items()}

class _Package(types.ModuleType):
    """``ldpopt.problems`` itself: importing an old path does not replace a package name (the function
    ``certificate``) by the old module of the same name, as the import system would."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and f"{_P}.{name}" in MOVED and name in vars(self):
            return
        super().__setattr__(name, value)


def install() -> None:
    """Make the old paths importable (:func:`ldpopt._deprecated.install`, once) and keep the package's
    own names from being replaced by old modules of the same name."""
    sys.modules[_P].__class__ = _Package
    _deprecated.install(MOVED)
    # the conformance suite moved one floor up, beside the oracles' (ldpopt.conformance.problems)
    _deprecated.install({f"{_P}.conformance": "ldpopt.conformance.problems"})


def old_module(name: str) -> types.ModuleType:
    """``ldpopt.problems.<name>`` for an old module name (attribute access on the package)."""
    full = f"{_P}.{name}"
    if full not in MOVED:
        raise AttributeError(f"module {_P!r} has no attribute {name!r}")
    return importlib.import_module(full)
