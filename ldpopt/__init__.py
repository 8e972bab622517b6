"""ldpopt: post-processing of LDP frequency estimates, closed forms verified against cvxpy.

Every public name loads on first use (PEP 562 module ``__getattr__``): ``import ldpopt`` imports
nothing but this file, so ``ldpopt --version`` and ``--help`` load neither numpy nor scipy; the
closed forms (``methods``, ``oracles``, ``Estimate``, ``postprocess``) load numpy (scipy only inside
the functions that need it), and everything that needs cvxpy (``problems``, ``Problem``,
``Solution``, ``verify``, ...) loads it when first touched, so ``ldpopt postprocess`` with a closed
form never imports cvxpy. ``benchmarks/bench_startup.py`` measures the start-up times.
"""

import importlib

#: PEP 440: "X.Y.Z" on the commit that releases it (CHANGELOG.md's top dated section), "X.Y.Z.devN"
#: between releases, X.Y.Z the next one; ``ldpopt --version`` adds the git commit where it can read it
__version__ = "0.3.0.dev0"

#: every public subpackage and module, an attribute of ``ldpopt`` loaded on first access (as scipy's
#: submodules are); ``cli`` and ``report`` are the command line and ``make run``, not a library API
SUBMODULES = ("aggregate", "audit", "conformance", "datasets", "design", "estimate", "experiments", "heavy", "hierarchy", "interop",
              "kernels", "keyvalue", "methods", "multi", "noise", "numeric", "oracles", "planning", "pooling", "privacy", "problems", "queries",
              "recommend", "robust", "sketches", "testing", "uncertainty", "verify", "xp")

# name -> (submodule, attribute or None for the submodule itself), imported on first access
_LAZY = {
    **{name: (name, None) for name in SUBMODULES},
    "Estimate": ("estimate", "Estimate"),
    "postprocess": ("methods", "postprocess"),
    "choose": ("recommend", "choose"),
    "plan": ("planning", "plan"),
    "Problem": ("problems", "Problem"),
}

# names exported here before the surface was cut to what a user calls (they stay in ldpopt.problems):
# one release, with a DeprecationWarning
_UNEXPORTED = {name: "ldpopt.problems" for name in ("Solution", "SolverError", "SolverWarning")}

__all__ = [
    "Estimate",
    "Problem",
    "__version__",
    "choose",
    "datasets",
    "methods",
    "oracles",
    "plan",
    "postprocess",
    "problems",
    "uncertainty",
]


def __getattr__(name):
    if name in _UNEXPORTED:
        from ._deprecated import unexported

        return unexported(__name__, _UNEXPORTED, stacklevel=3)(name)
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'ldpopt' has no attribute {name!r}") from None
    mod = importlib.import_module(f".{module}", __name__)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
