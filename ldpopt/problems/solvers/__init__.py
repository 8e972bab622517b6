"""The solvers: ldpopt's structured dual solver (:mod:`.structured`), Newton/SQP (:mod:`.sqp`), the
interior point (:mod:`.ipm`), and the cvxpy chain (:mod:`.policy`: which solvers in which order;
:mod:`.attempts`: one run made into a checked Solution; :mod:`.isolate`: a solve in a child process),
the phase one of a user's constraints (:mod:`.phase_one`) and the route of a user's objective
(:mod:`.user_forms`)."""

import importlib

__all__ = ["policy"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
