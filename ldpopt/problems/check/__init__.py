"""ldpopt's check of a solution: the verdict (:mod:`.verdict`), the objective side and the status rule
(:mod:`.objective_check`), the constraint side (:mod:`.constraint_terms`), the solver-free certificate
(:mod:`.certificate`), the KKT-residual bound (:mod:`.kkt_bound`) and the duality gap of non-smooth
objectives (:mod:`.nonsmooth`)."""

import importlib

__all__ = ["verdict"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
