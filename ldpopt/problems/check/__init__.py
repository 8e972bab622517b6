"""ldpopt's check of a solution: the verdict with its constraint side, objective side, status rule and
KKT-residual bound (:mod:`.verdict`), and the solver-free certificate, the duality gap of objectives
with kinks included (:mod:`.certificate`)."""

import importlib

__all__ = ["verdict"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
