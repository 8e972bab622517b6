"""The module paths of ``ldpopt.problems`` before it was grouped by idea, kept working for one release.

``import ldpopt.problems.checks`` (or ``from ldpopt.problems.order import Monotone``) finds the module
at its new path, emits a :class:`DeprecationWarning` naming that path and returns a module holding the
same objects. :data:`MOVED` is the one list; nothing inside ldpopt imports an old path.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

from .._deprecated import warn_moved

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
    "structured.dual": "solvers.structured.dual",
    "structured.simplex": "solvers.structured.simplex",
    "structured.grouped": "solvers.structured.grouped",
    "structured.blocks": "solvers.structured.blocks",
    "structured.chain": "solvers.structured.chain",
    "structured.tree": "solvers.structured.tree",
    "structured.structure": "solvers.structured.structure",
    "structured.multipliers": "solvers.structured.multipliers",
    "structured.solver": "solvers.structured.solver",
    "sqp": "solvers.sqp",
    "ipm": "solvers.ipm",
    "policy": "solvers.policy",
    "attempts": "solvers.attempts",
    "isolate": "solvers.isolate",
    "phase_one": "solvers.phase_one",
    "user_forms": "solvers.user_forms",
}.items()}

_OWN = ("__name__", "__spec__", "__loader__", "__package__", "__path__", "__file__", "__cached__")


def _caller_level() -> int:
    """The stack level of the first frame outside the import machinery and this module."""
    frame: types.FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                 or frame.f_code.co_filename == __file__):
        frame, level = frame.f_back, level + 1
    return level


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path of :data:`MOVED` and loads it as the new module's objects."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self,
                                               is_package=any(k.startswith(fullname + ".") for k in MOVED))

    def create_module(self, spec):
        return None  # the default module; exec_module fills it

    def exec_module(self, module: types.ModuleType) -> None:
        new = MOVED[module.__name__]
        warn_moved(module.__name__, new, stacklevel=_caller_level())
        target = importlib.import_module(new)
        module.__dict__.update({k: v for k, v in vars(target).items() if k not in _OWN})


class _Package(types.ModuleType):
    """``ldpopt.problems`` itself: importing an old path does not replace a package name (the function
    ``certificate``) by the old module of the same name, as the import system would."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and f"{_P}.{name}" in MOVED and name in vars(self):
            return
        super().__setattr__(name, value)


def install() -> None:
    """Put the finder of old paths on ``sys.meta_path`` (once)."""
    sys.modules[_P].__class__ = _Package
    if not any(isinstance(f, _OldPaths) for f in sys.meta_path):
        sys.meta_path.append(_OldPaths())


def old_module(name: str) -> types.ModuleType:
    """``ldpopt.problems.<name>`` for an old module name (attribute access on the package)."""
    full = f"{_P}.{name}"
    if full not in MOVED:
        raise AttributeError(f"module {_P!r} has no attribute {name!r}")
    return importlib.import_module(full)
